"""Background indexing, keyword fallback while vectors are computed, and the opt-in vector cache."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

import vecbook


class SlowEmbedder(vecbook.Embedder):
    """The real model, held back until the test releases it, counting what it embeds."""

    def __init__(self, real: vecbook.Embedder) -> None:
        super().__init__(real.model_name)
        self._model, self._path, self.precision = real._model, real._path, real.precision
        self.release = threading.Event()
        self.embedded: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.release.wait(timeout=60)
        self.embedded.extend(texts)
        return super().encode(texts)

    def encode_query(self, text: str) -> np.ndarray:
        return vecbook.Embedder.encode(self, [text])[0]  # queries are never held back


class CountingEmbedder(SlowEmbedder):
    def __init__(self, real: vecbook.Embedder) -> None:
        super().__init__(real)
        self.release.set()


NOTES = {f"n{i}.txt": f"Topic: t{i}\nNote {i}: the ferry to the island leaves at {i} o'clock.\n" for i in range(6)}
NOTES["kayak.txt"] = "Bought a second-hand kayak and paddle for the summer.\n"


def test_keyword_search_works_while_vectors_are_computed(write_files: Any, embedder: vecbook.Embedder,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    slow = SlowEmbedder(embedder)
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=slow, background=True,
                           semantic_wait_seconds=0.2)
    assert book.stats()["state"] == "not started"
    book.start()
    hits = book.search("kayak", mode="keyword")
    assert hits[0].id == "kayak.txt:1"
    stats = book.stats()
    assert stats["state"] == "embedding" and stats["records_total"] == 7 and stats["records_embedded"] == 0
    started = time.monotonic()
    fallback = book.search("boat for paddling", mode="hybrid")
    assert time.monotonic() - started < 5
    assert "answering hybrid search from the keyword index" in caplog.text
    assert all(h.semantic_score is None for h in fallback)
    slow.release.set()
    assert book.wait_until_ready(timeout=60)
    stats = book.stats()
    assert stats["state"] == "ready" and stats["records_embedded"] == 7
    assert book.search("boat for paddling", mode="semantic")[0].id == "kayak.txt:1"


def test_semantic_search_waits_for_vectors_within_the_limit(write_files: Any, embedder: vecbook.Embedder) -> None:
    slow = SlowEmbedder(embedder)
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=slow, background=True,
                           semantic_wait_seconds=30)
    book.start()
    threading.Timer(0.5, slow.release.set).start()
    hits = book.search("boat for paddling", mode="semantic")
    assert hits[0].id == "kayak.txt:1" and hits[0].semantic_score is not None


def test_reindex_keeps_serving_the_old_index_until_the_new_one_is_complete(
        write_files: Any, embedder: vecbook.Embedder) -> None:
    root = write_files(NOTES)
    slow = SlowEmbedder(embedder)
    slow.release.set()
    book = vecbook.VecBook(data_directory=root, embedder=slow)
    slow.release.clear()
    (root / "new.txt").write_text("A note about violins.\n", encoding="utf-8")
    worker = threading.Thread(target=book.reindex)
    worker.start()
    time.sleep(0.5)
    during = book.search("boat for paddling", mode="semantic")
    assert during[0].semantic_score is not None and book.stats()["records"] == 7
    slow.release.set()
    worker.join()
    assert book.stats()["records"] == 8


# -- the vector cache --

def cached_book(root: Path, cache: Path, embedder: vecbook.Embedder) -> tuple[vecbook.VecBook, CountingEmbedder]:
    counting = CountingEmbedder(embedder)
    return vecbook.VecBook(data_directory=root, embedder=counting, cache_directory=cache), counting


def test_cache_is_off_by_default(write_files: Any, make_book: Any, tmp_path: Path) -> None:
    book = make_book(write_files(NOTES))
    assert book.stats()["cache"] is None
    assert not any(p.suffix == ".vbc" for p in tmp_path.rglob("*"))


def test_a_restart_embeds_only_new_or_changed_records(write_files: Any, embedder: vecbook.Embedder,
                                                      tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    book, counting = cached_book(root, cache, embedder)
    assert len(counting.embedded) == 7 and book.stats()["cache"]["embedded"] == 7
    (root / "kayak.txt").write_text("Bought a canoe instead.\n", encoding="utf-8")
    (root / "n0.txt").unlink()
    book, counting = cached_book(root, cache, embedder)
    assert counting.embedded == ["Bought a canoe instead."]
    assert book.stats()["cache"] == {"path": str(next(cache.glob("*.vbc"))), "entries": 6, "reused": 5,
                                     "embedded": 1, "pruned": 2}
    fresh = vecbook.VecBook(data_directory=root, embedder=embedder)
    for query in ("canoe", "ferry timetable"):
        cached, rebuilt = book.search(query, mode="semantic"), fresh.search(query, mode="semantic")
        assert [h.id for h in cached][:3] == [h.id for h in rebuilt][:3]
        # bf16 results shift by ~1e-4 with batch composition; cached vectors are the same model's output
        assert np.allclose([h.similarity_score for h in cached], [h.similarity_score for h in rebuilt], atol=2e-3)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "foreign"])
def test_a_corrupt_or_foreign_cache_is_reported_and_rebuilt(write_files: Any, embedder: vecbook.Embedder,
                                                            tmp_path: Path, damage: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    cached_book(root, cache, embedder)
    path = next(cache.glob("*.vbc"))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "garbage":
        path.write_bytes(os.urandom(4096))
    else:
        other = vecbook.embed.VectorCache(cache, "another-model|x|384|float32|254")
        other.path = path
        other.save({vecbook.embed.VectorCache.key("x"): np.zeros(384, dtype=np.float32)})
    caplog.set_level(logging.WARNING, logger="vecbook")
    book, counting = cached_book(root, cache, embedder)
    assert "is unusable" in caplog.text and "will be rebuilt" in caplog.text
    assert len(counting.embedded) == 7
    assert book.search("kayak", mode="semantic")[0].id == "kayak.txt:1"
    book, counting = cached_book(root, cache, embedder)
    assert counting.embedded == []  # the rebuilt file is good


def test_a_crash_while_writing_leaves_the_old_cache_intact(write_files: Any, embedder: vecbook.Embedder,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    cached_book(root, cache, embedder)
    before = {p.name: p.read_bytes() for p in cache.iterdir()}
    (root / "extra.txt").write_text("A new note about lighthouses.\n", encoding="utf-8")

    def crash(*_: Any) -> None:
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(vecbook.embed.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        cached_book(root, cache, embedder)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in cache.iterdir()} == before  # no temp file left behind
    book, counting = cached_book(root, cache, embedder)
    assert counting.embedded == ["A new note about lighthouses."]
