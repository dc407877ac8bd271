"""The suite's fake embedder gives the same vectors whatever way it computes them: tests tuned
on its rankings (which record comes first, what ties) rely on each vector, bit for bit."""

from __future__ import annotations

import hashlib

import numpy as np

from conftest import FakeEmbedder

TEXTS = [
    "", " ", "a", "The walrus and the carpenter walked on", "walrus walrus walrus",
    "naïve café, Ünïcode déjà vu", "東京タワーに行きました。日本語の文章", "שלום עולם", "مرحبا بالعالم",
    "party 🎉 emoji😀 ok 👍🏽", "x1y2 w1x0 2026-11-28 10:30 don't stop", "Mum ❤️: see you at 5pm",
    "A" * 3000, "one two three four five six seven eight nine ten " * 40,
]

# sha256 of the float32 bytes of encode(TEXTS), as the first fake embedder computed them.
PINNED = "e7c6bebdca1cda27b7ae31f8b834a1f46580b238699a65499af53754f54d0d30"


def test_the_fake_vectors_are_the_ones_the_tests_were_tuned_on() -> None:
    vectors = FakeEmbedder().encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), FakeEmbedder.DIM)
    assert hashlib.sha256(vectors.tobytes()).hexdigest() == PINNED


def test_a_text_gets_the_same_fake_vector_alone_in_a_batch_and_as_a_query_again_and_again() -> None:
    fake = FakeEmbedder()
    batch = fake.encode(TEXTS)
    for row, text in enumerate(TEXTS):
        for _ in range(2):  # a second time may come from memory: the same vector, a fresh array
            alone = fake.encode([text])
            assert np.array_equal(alone[0], batch[row]) and np.array_equal(fake.encode_query(text), batch[row])
            alone[0, 0] = 99.0
    assert fake.encode([]).shape == (0, FakeEmbedder.DIM)
