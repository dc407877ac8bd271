"""The quantized scan of a large index is made off the start path: searches are exact until the
background thread sets it, updates made meanwhile are kept, and a start over the same rows reads
it back from the cache folder instead of training it (docs/freshness-and-caches.md)."""

from __future__ import annotations

import json
import logging
import stat
import struct
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import vecbook
import vecbook.caches
import vecbook.scan_file
import vecbook.vector_index
import vecbook.vector_store
from vecbook.scan_file import SCAN_MAGIC, ScanFile
from vecbook.vector_cache import VectorCache

from test_index import clustered_vectors, scanned, updated

ROWS = 3000
KEYS = [VectorCache.key(f"window {row} · 修理 · café 🔥") for row in range(ROWS)]


@pytest.fixture(autouse=True)
def approximate_from_400(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores (and their background scans) from 400 windows on."""
    monkeypatch.setattr(vecbook.vector_index, "APPROXIMATE_FROM", 400)
    monkeypatch.setattr(vecbook.vector_index, "RESCORED", 30)


@pytest.fixture()
def held_training(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Training waits for the event the test sets (set at the end in any case)."""
    release = threading.Event()
    original = vecbook.vector_store.Scan.trained.__func__  # type: ignore[attr-defined]

    def trained(cls: Any, *args: Any) -> Any:
        assert release.wait(60)
        return original(cls, *args)

    monkeypatch.setattr(vecbook.vector_store.Scan, "trained", classmethod(trained))
    yield release
    release.set()


@pytest.fixture()
def trainings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The row counts of every scan trained (none read back from a file)."""
    calls: list[int] = []
    original = vecbook.vector_store.Scan.trained.__func__  # type: ignore[attr-defined]

    def trained(cls: Any, rows: int, *args: Any) -> Any:
        calls.append(rows)
        return original(cls, rows, *args)

    monkeypatch.setattr(vecbook.vector_store.Scan, "trained", classmethod(trained))
    return calls


def queries(vectors: np.ndarray, count: int = 30) -> np.ndarray:
    rng = np.random.default_rng(10)
    noise = rng.normal(size=(count, vectors.shape[1])).astype(np.float32)
    return vectors[rng.integers(0, len(vectors), count)] + 0.3 * noise


def test_searches_before_the_scan_is_ready_are_exact_and_the_scan_then_finds_the_same_top_hits(
        held_training: threading.Event) -> None:
    vectors = clustered_vectors(ROWS)
    index = vecbook.index.VectorIndex(vectors, np.arange(ROWS), ROWS)  # returns without training
    assert index.store is not None and index.store.scan is None and not index.store.wait_for_scan(0.05)
    assert index.index_type == "float16 rows, scanned exactly until their quantized scan is ready"
    before = [index.top(q, 10) for q in queries(vectors)]
    for q, (ids, scores) in zip(queries(vectors), before):
        exact_ids, exact_scores = index.top(q, 10, exact=True)
        assert ids.tolist() == exact_ids.tolist() and scores.tolist() == exact_scores.tolist()
    mask = np.arange(ROWS) % 3 == 0
    exact_filtered = vecbook.index.top_k(*index.scores_within(vectors[6], mask), 5)[0]
    assert index.top(vectors[6], 5, mask)[0].tolist() == exact_filtered.tolist()
    held_training.set()
    scanned(index)  # swapped in
    assert "PQFastScan" in index.index_type
    after = [index.top(q, 10) for q in queries(vectors)]
    assert np.mean([ids[:3].tolist() == again[:3].tolist() for (ids, _), (again, _) in zip(before, after)]) >= 0.95
    for row in (0, 17, ROWS - 1):
        assert index.top(vectors[row], 1)[0].tolist() == [row]


def test_an_update_made_while_the_scan_trains_is_kept_once_it_is_swapped_in(held_training: threading.Event) -> None:
    vectors = clustered_vectors(ROWS)
    first = vecbook.index.VectorIndex(vectors, np.arange(ROWS), ROWS)
    added = clustered_vectors(5, seed=12)
    # Rows 0-9 deleted, five new rows: the same store (in training), the new rows its delta.
    second = updated(first, np.concatenate([np.arange(10, ROWS), np.full(5, -1)]), added)
    assert second.store is first.store and first.store is not None and first.store.scan is None
    assert second.top(added[2], 1)[0].tolist() == [ROWS - 10 + 2]
    held_training.set()
    scanned(second)
    assert second.top(added[2], 1)[0].tolist() == [ROWS - 10 + 2]  # through the scan: the delta is scored
    assert second.top(vectors[5], 1)[0].tolist() != [5 - 10]  # a deleted row stays gone
    third = updated(second, np.concatenate([np.arange(ROWS - 5), np.full(1, -1)]), clustered_vectors(1, seed=14))
    assert third.store is first.store and third.top(added[2], 1)[0].tolist() == [ROWS - 10 + 2]


def test_a_store_replaced_before_its_scan_is_made_is_not_scanned(held_training: threading.Event,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    vectors = clustered_vectors(ROWS)
    first = vecbook.index.VectorIndex(vectors, np.arange(ROWS), ROWS)
    ref = weakref.ref(first.store)
    del first
    assert ref() is None  # nothing but the index held it: the queued job does not
    second = vecbook.index.VectorIndex(vectors[:1000], np.arange(1000), 1000)
    caplog.set_level(logging.INFO, logger="vecbook")
    held_training.set()
    scanned(second)
    assert vecbook.vector_store.wait_for_scans(30)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def build(vectors: np.ndarray, saved: ScanFile, keys: list[bytes] = KEYS) -> vecbook.index.VectorIndex:
    return vecbook.index.VectorIndex(vectors, np.arange(len(vectors)), len(vectors), keys=keys, scans=saved)


def test_a_start_over_the_same_rows_reads_the_saved_scan_instead_of_training(
        tmp_path: Path, trainings: list[int], caplog: pytest.LogCaptureFixture) -> None:
    vectors = clustered_vectors(ROWS)
    saved = ScanFile(tmp_path / "scan-a.vbs", "model|x")
    first = scanned(build(vectors, saved))
    assert trainings == [ROWS]
    saved_files(saved)  # written once set (after the swap, by the same thread)
    assert stat.S_IMODE(saved.path.stat().st_mode) == 0o600
    caplog.set_level(logging.INFO, logger="vecbook")
    second = scanned(build(vectors, ScanFile(saved.path, "model|x")))
    assert trainings == [ROWS]  # not trained again
    assert "read back" in caplog.text
    for q in queries(vectors):
        assert second.top(q, 10)[0].tolist() == first.top(q, 10)[0].tolist()


def saved_files(saved: ScanFile) -> None:
    """Wait for the background thread to write ``saved`` (it saves after setting the scan)."""
    assert vecbook.vector_store.wait_for_scans(30) and saved.path.exists()


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "flipped":
        data[-100] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "cut":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif how == "faiss":
        size = struct.unpack("<I", data[len(SCAN_MAGIC):len(SCAN_MAGIC) + 4])[0]
        start = len(SCAN_MAGIC) + 4
        header = json.loads(data[start:start + size])
        header["faiss"] = "0.0.1"
        encoded = json.dumps(header).encode()
        path.write_bytes(SCAN_MAGIC + struct.pack("<I", len(encoded)) + encoded + bytes(data[start + size:]))


@pytest.mark.parametrize(("how", "level", "message"), [
    ("flipped", logging.WARNING, "is unusable (its payload does not match its digest); it will be trained again"),
    ("cut", logging.WARNING, "is unusable ("),
    ("faiss", logging.WARNING, "was made by another version (format 2, FAISS 0.0.1; this is format 2"),
    ("other rows", logging.INFO, "is of other rows (600 of 3000 rows changed since); it will be trained again"),
])
def test_a_damaged_or_stale_saved_scan_is_ignored_and_trained_over(
        tmp_path: Path, trainings: list[int], caplog: pytest.LogCaptureFixture,
        how: str, level: int, message: str) -> None:
    vectors = clustered_vectors(ROWS)
    saved = ScanFile(tmp_path / "scan-a.vbs", "model|x")
    scanned(build(vectors, saved))
    saved_files(saved)
    keys = KEYS
    if how == "other rows":  # a tenth of the rows changed: past KEEP_SHARE
        keys = [VectorCache.key(f"changed {row}") for row in range(ROWS // 10)] + KEYS[ROWS // 10:]
    else:
        damage(saved.path, how)
    caplog.set_level(logging.INFO, logger="vecbook")
    again = scanned(build(vectors, saved, keys))
    assert trainings == [ROWS, ROWS]
    said = [r.levelno for r in caplog.records if message in r.getMessage() and str(saved.path) in r.getMessage()]
    assert said == [level]
    assert again.top(vectors[17], 1)[0].tolist() == [17]
    assert vecbook.vector_store.wait_for_scans(30)
    key = saved.key_for(b"".join(keys), "cosine", 32)
    assert ScanFile(saved.path, "model|x").load(key, ROWS) is not None  # saved anew, for the rows of now


def test_a_start_over_rows_edited_since_keeps_the_saved_scan_and_scores_the_changed_rows_exactly(
        tmp_path: Path, trainings: list[int], caplog: pytest.LogCaptureFixture) -> None:
    vectors = clustered_vectors(ROWS)
    saved = ScanFile(tmp_path / "scan-a.vbs", "model|x")
    scanned(build(vectors, saved))
    saved_files(saved)
    written = saved.path.read_bytes()
    # Rows 0-19 deleted, 40 new rows inserted in the middle, one text twice: 1.5% of the rows.
    fresh = clustered_vectors(40, seed=21)
    now = np.concatenate([vectors[20:1500], fresh, vectors[1500:], vectors[2999:]])
    keys = KEYS[20:1500] + [VectorCache.key(f"new {row} 咖啡") for row in range(40)] + KEYS[1500:] + KEYS[2999:]
    caplog.set_level(logging.INFO, logger="vecbook")
    again = scanned(build(now, ScanFile(saved.path, "model|x"), keys))
    assert trainings == [ROWS]  # kept, not trained
    assert again.store.scan.to_store is not None and len(again.store.scan.uncovered) == 41
    assert "41 rows changed since it was saved are scored exactly beside it" in caplog.text
    assert vecbook.vector_store.wait_for_scans(30) and saved.path.read_bytes() == written  # not saved again
    for row in (3, 1480, 1480 + 39):  # a new row, through the scan, finds itself first
        assert again.top(now[row], 1)[0].tolist() == [row]
    hits = [again.top(q, 10)[0].tolist() for q in queries(now, 60)]
    exact = [again.top(q, 10, exact=True)[0].tolist() for q in queries(now, 60)]
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(hits, exact)])
    assert recall >= 0.98


def test_a_book_saves_its_scan_in_the_cache_folder_and_the_next_start_reads_it(
        tmp_path: Path, fake_book: Callable[..., vecbook.VecBook], trainings: list[int]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    notes = "\n\n".join(f"# Note {n}\n\nthe boiler {n} café 修理 {n % 7}" for n in range(500))
    (data / "notes.md").write_text(notes, encoding="utf-8")
    cache = tmp_path / "cache"
    book = fake_book(data, cache_directory=cache)
    store = book._snapshot.vectors.store
    assert store is not None and store.wait_for_scan(60)
    assert vecbook.vector_store.wait_for_scans(30)
    files = list(cache.glob("scan-*.vbs"))
    assert len(files) == 1 and trainings == [len(store)]
    hits = book.search("boiler 42", mode="semantic")
    book.close()
    again = fake_book(data, cache_directory=cache)
    assert again._snapshot.vectors.store.wait_for_scan(60) and trainings == [len(store)]
    assert [h.id for h in again.search("boiler 42", mode="semantic")] == [h.id for h in hits]
    again.close()


def test_a_book_restarted_after_an_edit_keeps_its_saved_scan_and_finds_the_new_text(
        tmp_path: Path, fake_book: Callable[..., vecbook.VecBook], trainings: list[int]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for part in range(5):
        notes = "\n\n".join(f"# Note {n}\n\nthe boiler {n} café 修理 {n % 7}" for n in range(part * 100, part * 100 + 100))
        (data / f"notes{part}.md").write_text(notes, encoding="utf-8")
    cache = tmp_path / "cache"
    book = fake_book(data, cache_directory=cache)
    assert book._snapshot.vectors.store.wait_for_scan(60) and vecbook.vector_store.wait_for_scans(30)
    boiler = book.search("boiler 42", mode="semantic")[0].id
    book.close()
    saved = next(cache.glob("scan-*.vbs"))
    written = saved.read_bytes()
    with open(data / "notes2.md", "a", encoding="utf-8") as handle:
        handle.write("\n\n# A pangolin\n\nthe pangolin mended the windmill 🔥 with a red scarf\n")
    again = fake_book(data, cache_directory=cache)
    store = again._snapshot.vectors.store
    assert store.wait_for_scan(60) and vecbook.vector_store.wait_for_scans(30)
    assert len(trainings) == 1 and store.scan is not None  # the saved scan, not retrained
    assert saved.read_bytes() == written
    hits = again.search("the pangolin mended the windmill 🔥 with a red scarf", mode="semantic", max_results=3)
    assert "pangolin" in hits[0].text
    assert again.search("boiler 42", mode="semantic")[0].id == boiler
    again.close()


def trainings_and_saves(monkeypatch: pytest.MonkeyPatch, save: str) -> list[str]:
    """In order from here on: each scan trained, and where each call of ``Caches.<save>`` begins
    and ends (slowed by 0.5 s, time enough for a training that does not wait to begin)."""
    events: list[str] = []
    original_trained = vecbook.vector_store.Scan.trained.__func__  # type: ignore[attr-defined]
    original_save = getattr(vecbook.caches.Caches, save)

    def trained(cls: Any, *args: Any) -> Any:
        events.append("training")
        return original_trained(cls, *args)

    def slow_save(self: Any) -> None:
        events.append("save begins")
        time.sleep(0.5)
        original_save(self)
        events.append("save ends")

    monkeypatch.setattr(vecbook.vector_store.Scan, "trained", classmethod(trained))
    monkeypatch.setattr(vecbook.caches.Caches, save, slow_save)
    return events


def test_a_first_build_trains_its_scan_only_once_its_caches_are_saved(
        tmp_path: Path, fake_book: Callable[..., vecbook.VecBook], monkeypatch: pytest.MonkeyPatch) -> None:
    # At a million records the training's sample and codes beside the save were the build's peak.
    events = trainings_and_saves(monkeypatch, "save")
    data = tmp_path / "data"
    data.mkdir()
    (data / "notes.md").write_text("\n\n".join(f"# Note {n}\n\nthe boiler {n} café 修理 🔥" for n in range(500)),
                                   encoding="utf-8")
    book = fake_book(data, cache_directory=tmp_path / "cache")
    assert book._snapshot.vectors.store.wait_for_scan(60)
    assert events == ["save begins", "save ends", "training"]
    assert book._snapshot.vectors.store.scan is not None
    book.close()


def test_a_restart_that_saves_in_the_background_trains_its_scan_only_once_that_save_has_ended(
        tmp_path: Path, fake_book: Callable[..., vecbook.VecBook], monkeypatch: pytest.MonkeyPatch) -> None:
    from test_keyword_cache import settle

    data = tmp_path / "data"
    data.mkdir()
    (data / "notes.md").write_text("\n\n".join(f"# Note {n}\n\nthe boiler {n} café 修理 🔥" for n in range(500)),
                                   encoding="utf-8")
    (data / "other.md").write_text("# Other\n\nthe windmill", encoding="utf-8")
    settle(data / "notes.md", data / "other.md")
    cache = tmp_path / "cache"
    first = fake_book(data, cache_directory=cache)
    assert first._snapshot.vectors.store.wait_for_scan(60) and vecbook.vector_store.wait_for_scans(30)
    first.close()
    for saved in cache.glob("scan-*.vbs"):
        saved.unlink()  # the restart's store must train its scan
    (data / "other.md").write_text("# Other\n\nthe windmill and a pangolin 🦔", encoding="utf-8")
    settle(data / "other.md")
    events = trainings_and_saves(monkeypatch, "_save_pending_vectors")
    restarted = fake_book(data, cache_directory=cache)
    assert restarted.stats()["last_update"]["files_read"] == 1
    assert restarted._snapshot.vectors.store.wait_for_scan(60)
    assert events == ["save begins", "save ends", "training"]
    restarted.close()
