"""Synthetic vectors for memory and latency benchmarks at sizes the model would take hours to
embed on two cores: the real model still cuts each text into windows (so keys, shapes and
cache files are those of real vectors), but ``encode`` returns a hashed bag of words instead
of running the model.

Each text's vector is the sum of a fixed random vector per word (sublinear in its count), plus
a little noise seeded by the text itself, normalised: the same text always gives the same
vector, different texts never the same one, and texts sharing words lie close, as a text
model's do (a query of a few words scores the records holding them highest). For memory,
latency and the approximate index's behaviour at scale; never for retrieval quality (the real
vectors' recall is bench/ann_recall.py's).
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

BUCKETS = 1 << 15  # words hash into this many fixed random vectors
NOISE = 0.3  # the text's own noise, against a unit-norm bag of words
WORD = re.compile(r"\w+")
_buckets: dict[str, int] = {}  # word -> bucket, remembered (hashing every word again took most of the time)


def synthetic_embedder(precision: str, models: Path) -> Any:
    """A ``vecbook.Embedder`` whose vectors are synthetic (see the module's docstring)."""
    import vecbook

    class SyntheticVectors(vecbook.Embedder):
        # Made here, not at the first encode: a warm start embeds nothing, and the first edit
        # would otherwise pay for it (half a second) in the update's time.
        table = np.random.default_rng(7).standard_normal((BUCKETS, 384)).astype(np.float32)

        @property
        def identity(self) -> str:
            return super().identity + "|synthetic-bag-of-words"

        def encode(self, texts: Any, threads: int | None = None, query: bool = False) -> np.ndarray:
            if self.table.shape[1] != self.dimension:
                self.table = np.random.default_rng(7).standard_normal((BUCKETS, self.dimension)).astype(np.float32)
            return bags_of_words(list(texts), self.table)

    return SyntheticVectors(precision=precision, model_cache=models)


def bags_of_words(texts: list[str], table: np.ndarray) -> np.ndarray:
    """The texts' synthetic vectors (one matrix product for the batch)."""
    rows, columns, weights = [], [], []
    for row, text in enumerate(texts):
        counts: dict[int, int] = {}
        for word in WORD.findall(text.lower()):
            bucket = _buckets.get(word)
            if bucket is None:
                digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=4).digest()
                bucket = _buckets[word] = int.from_bytes(digest, "little") % len(table)
            counts[bucket] = counts.get(bucket, 0) + 1
        rows += [row] * len(counts)
        columns += counts
        weights += [1.0 + math.log(c) for c in counts.values()]
    used, where = np.unique(np.asarray(columns, dtype=np.int64), return_inverse=True)
    bags = np.zeros((len(texts), len(used)), dtype=np.float32)
    np.add.at(bags, (np.asarray(rows, dtype=np.int64), where), np.asarray(weights, dtype=np.float32))
    vectors = bags @ table[used] if len(used) else np.zeros((len(texts), table.shape[1]), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    # The text's own noise: two of the table's rows picked by a hash of the text (one of 2^30 pairs).
    seeds = [int.from_bytes(hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
             for t in texts]
    first = np.array([h % len(table) for h in seeds], dtype=np.int64)
    second = np.array([(h >> 32) % len(table) for h in seeds], dtype=np.int64)
    noise = table[first] - table[second]
    vectors += NOISE * noise / np.maximum(np.linalg.norm(noise, axis=1, keepdims=True), 1e-12)
    return (vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)).astype(np.float32)
