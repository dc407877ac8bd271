"""A large index's float16 rows are saved in the cache folder and mapped by a start over the
same rows, instead of reading the vector cache and encoding every vector again; a damaged or
stale file is reported and the rows are made as before (docs/freshness-and-caches.md)."""

from __future__ import annotations

import json
import logging
import os
import stat
import struct
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import vecbook
import vecbook.file_writes
import vecbook.rows_file
import vecbook.vector_index
import vecbook.vector_store
from vecbook.rows_file import ROWS_FORMAT, ROWS_MAGIC, RowsFile
from vecbook.vector_cache import VectorCache

from test_index import clustered_vectors
from test_index_scan import KEYS, ROWS


@pytest.fixture(autouse=True)
def approximate_from_400(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores from 400 windows on; their scans are never trained here (not what is tested)."""
    monkeypatch.setattr(vecbook.vector_index, "APPROXIMATE_FROM", 400)
    monkeypatch.setattr(vecbook.vector_index, "RESCORED", 30)
    monkeypatch.setattr(vecbook.vector_store.Scan, "trained", classmethod(lambda cls, *args: None))


def build(vectors: np.ndarray, saved: RowsFile, keys: list[bytes] = KEYS,
          encoded: list[int] | None = None) -> vecbook.index.VectorIndex:
    """An index of ``vectors`` whose rows are saved in (or mapped from) ``saved``; ``encoded``
    counts the rows made by encoding."""
    codes = vecbook.index.encode_vectors(vectors, "cosine")

    def write(rows: np.ndarray, start: int) -> None:
        if encoded is not None:
            encoded.append(len(rows))
        rows[:] = codes[start:start + len(rows)]

    return vecbook.index.VectorIndex(None, np.arange(len(vectors)), len(vectors), keys=keys,
                                     fill=(vectors.shape[1], write), saved_rows=saved)


def results(index: vecbook.index.VectorIndex, vectors: np.ndarray) -> list[tuple[list[int], list[float]]]:
    rng = np.random.default_rng(3)
    found = []
    for q in vectors[rng.integers(0, len(vectors), 20)] + 0.3 * rng.normal(size=(20, vectors.shape[1])):
        ids, scores = index.top(q.astype(np.float32), 10)
        found.append((ids.tolist(), scores.tolist()))
    return found


def mapped_from(array: np.ndarray) -> Any:
    """The object at the root of ``array``'s bases (an mmap for mapped rows)."""
    base: Any = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


def test_a_start_over_the_same_rows_maps_the_saved_rows_instead_of_encoding_them(tmp_path: Path) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    encoded: list[int] = []
    first = build(vectors, saved, encoded=encoded)
    assert sum(encoded) == ROWS and saved.path.exists()
    assert stat.S_IMODE(saved.path.stat().st_mode) == 0o600
    assert not first.store.rows.flags.writeable  # the saving index serves the file's copy too
    second = build(vectors, RowsFile(saved.path, "model|x"), encoded=encoded)
    assert sum(encoded) == ROWS  # nothing encoded: the rows are the file's
    rows = second.store.rows
    assert not rows.flags.writeable and np.array_equal(rows, first.store.rows)
    if vecbook.rows_file.MAP_ROWS:
        assert isinstance(mapped_from(rows), vecbook.rows_file.mmap.mmap)
    mine = results(second, vectors)
    assert mine == results(first, vectors)
    exact = [second.top(q, 10, exact=True)[0].tolist() for q in vectors[:5]]
    assert exact == [second.top(q, 10)[0].tolist() for q in vectors[:5]]


def test_a_first_build_writes_its_rows_into_the_file_a_block_at_a_time_never_holding_them_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered_vectors(ROWS)
    dimension = vectors.shape[1]
    monkeypatch.setattr(vecbook.rows_file, "WRITE_BYTES", 100 * 2 * dimension)  # 100 rows a block
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    encoded: list[int] = []
    index = build(vectors, saved, encoded=encoded)
    assert sum(encoded) == ROWS and max(encoded) == 100 < ROWS
    assert isinstance(mapped_from(index.store.rows), vecbook.rows_file.mmap.mmap) or not vecbook.rows_file.MAP_ROWS
    expected = vecbook.index.encode_vectors(vectors, "cosine")
    np.testing.assert_array_equal(index.store.rows, expected)
    # The file checks out (its digest is of what was written) and serves the next start as it is.
    again = saved.load(saved.key_for(b"".join(KEYS), "cosine", dimension), ROWS, dimension)
    assert again is not None and np.array_equal(again, expected)


def test_where_files_are_not_mapped_the_rows_are_read_and_the_file_can_be_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.rows_file, "MAP_ROWS", False)  # Windows: a mapped file cannot be replaced
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    encoded: list[int] = []
    first = build(vectors, saved, encoded=encoded)
    second = build(vectors, saved, encoded=encoded)
    assert sum(encoded) == ROWS and not isinstance(mapped_from(second.store.rows), vecbook.rows_file.mmap.mmap)
    assert np.array_equal(second.store.rows, first.store.rows) and results(second, vectors) == results(first, vectors)
    build(clustered_vectors(ROWS, seed=4), saved, keys=[VectorCache.key(f"other {row}") for row in range(ROWS)])
    assert saved.load(saved.key_for(b"".join(KEYS), "cosine", 32), ROWS, 32) is None  # replaced


def test_other_rows_another_model_or_another_metric_are_not_mapped(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    build(vectors, saved)
    caplog.set_level(logging.INFO, logger="vecbook")
    changed = [VectorCache.key("changed")] + KEYS[1:]
    assert saved.load(saved.key_for(b"".join(changed), "cosine", 32), ROWS, 32) is None
    assert RowsFile(saved.path, "model|y").load(RowsFile(saved.path, "model|y").key_for(b"".join(KEYS), "cosine", 32),
                                                ROWS, 32) is None
    assert saved.load(saved.key_for(b"".join(KEYS), "l2", 32), ROWS, 32) is None
    said = [r for r in caplog.records if "are of other rows; they are made from the vector cache" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO] * 3
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    size = struct.unpack("<I", data[len(ROWS_MAGIC):len(ROWS_MAGIC) + 4])[0]
    start = len(ROWS_MAGIC) + 4
    header = json.loads(data[start:start + size])
    if how == "flipped":
        data[-100] ^= 0x01
    elif how == "cut":
        data = data[:len(data) - 768]
    elif how == "header":
        data[start] = ord("x")
    elif how == "not rows":
        data[:4] = b"JUNK"
    elif how == "format":
        header["format"] = 7
        encoded = json.dumps(header).encode()
        assert len(encoded) == size  # the same length: the rows stay where they were
        data[start:start + size] = encoded
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("how", "message"), [
    ("flipped", "are unusable (its rows do not match their digest); they are made from the vector cache"),
    ("cut", "are unusable ("),
    ("header", "are unusable (Expecting value"),
    ("not rows", "are unusable (not a VecBook rows file)"),
    ("format", f"were made by another version (format 7; this is format {ROWS_FORMAT}); they are made from the "
               "vector cache"),
])
def test_a_damaged_rows_file_is_a_warning_and_the_rows_are_made_again_with_the_same_results(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, how: str, message: str) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    first = build(vectors, saved)
    expected = results(first, vectors)
    del first
    damage(saved.path, how)
    caplog.set_level(logging.INFO, logger="vecbook")
    encoded: list[int] = []
    again = build(vectors, saved, encoded=encoded)
    assert sum(encoded) == ROWS  # made from the vectors, as without a file
    said = [r.levelno for r in caplog.records if message in r.getMessage() and str(saved.path) in r.getMessage()]
    assert said == [logging.WARNING]
    assert results(again, vectors) == expected
    # Saved anew: the next start maps it.
    assert saved.load(saved.key_for(b"".join(KEYS), "cosine", 32), ROWS, 32) is not None


def test_a_file_replaced_while_mapped_leaves_the_mapped_rows_as_they_were(tmp_path: Path) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    first = build(vectors, saved)
    before = np.array(first.store.rows)
    other = clustered_vectors(ROWS, seed=4)
    build(other, saved, keys=[VectorCache.key(f"other {row}") for row in range(ROWS)])  # rewrites the file
    assert np.array_equal(first.store.rows, before)  # the old file, still mapped
    assert not list(tmp_path.glob(".rows-*.tmp"))


def test_a_save_that_fails_midway_leaves_the_old_file_whole_and_serves_the_rows_it_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    build(vectors, saved)
    old = saved.path.read_bytes()

    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(vecbook.file_writes.os, "fsync", failing_fsync)
    caplog.set_level(logging.INFO, logger="vecbook")
    other = clustered_vectors(ROWS, seed=4)
    keys = [VectorCache.key(f"other {row}") for row in range(ROWS)]
    index = build(other, saved, keys=keys)
    assert saved.path.read_bytes() == old and not list(tmp_path.glob(".rows-*.tmp"))
    assert "could not save the vector rows to" in caplog.text and "No space left on device" in caplog.text
    assert index.store.rows.flags.writeable  # its own rows: the file is not theirs
    assert index.top(other[17], 1)[0].tolist() == [17]


def test_a_small_index_saves_no_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.vector_index, "APPROXIMATE_FROM", 200_000)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    index = build(clustered_vectors(500), saved, keys=KEYS[:500])
    assert index.store is None and not saved.path.exists()


# -- a book's warm start --

def counted_cache_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows read from the vector cache's files from here on (its float32 vectors)."""
    reads: list[int] = []
    real = vecbook.vector_files.FileRows.take

    def take(self: Any, rows: Any) -> np.ndarray:
        reads.append(len(rows))
        return real(self, rows)

    monkeypatch.setattr(vecbook.vector_files.FileRows, "take", take)
    return reads


def counted_encodings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows a build encodes to float16 from here on (from the vector cache or the model)."""
    encoded: list[int] = []
    real = vecbook.build.encode_vectors

    def encode(vectors: np.ndarray, metric: str) -> np.ndarray:
        encoded.append(len(vectors))
        return real(vectors, metric)

    monkeypatch.setattr(vecbook.build, "encode_vectors", encode)
    return encoded


def filtered(book: vecbook.VecBook) -> list[list[tuple[str, float]]]:
    """Hits of searches filtered by metadata, by file and by source."""
    searches = [("the boiler café", {"title": "a long journal"}), ("roof repair", {"file_path": "notes.txt"}),
                ("plumber", {"source": "chat"}), ("東京の会議", {"file_path__ne": "long.txt"})]
    return [[(hit.citation, round(hit.similarity_score, 6)) for hit in book.search(q, mode=mode, filters=f)]
            for q, f in searches for mode in ("semantic", "hybrid")]


@pytest.fixture()
def windowed(tmp_path: Path, embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """A book over test_keyword_cache's WINDOWED notes and CHAT (CJK, Hebrew, Arabic, emoji, a
    split passage, a chat of message pieces), its index a store from its first window on."""
    from test_keyword_cache import windowed_book, write_windowed

    monkeypatch.setattr(vecbook.vector_index, "APPROXIMATE_FROM", 1)
    write_windowed(tmp_path)
    return lambda cache: windowed_book(tmp_path, embedder, cache)


def test_a_warm_start_maps_the_rows_and_answers_as_a_cold_build(
        tmp_path: Path, windowed: Callable[..., vecbook.VecBook], monkeypatch: pytest.MonkeyPatch) -> None:
    from test_keyword_cache import assert_same_answers

    cache = tmp_path / "cache"
    first = windowed(cache)
    assert first._snapshot.vectors.store is not None
    first.close()
    files = list(cache.glob("rows-*.vbr"))
    assert len(files) == 1 and stat.S_IMODE(files[0].stat().st_mode) == 0o600
    reads = counted_cache_reads(monkeypatch)
    warm = windowed(cache)
    assert reads == []  # no vector read from the cache: the rows are the file's
    assert warm.stats()["last_update"]["embedded"] == 0
    if vecbook.rows_file.MAP_ROWS:
        assert isinstance(mapped_from(warm._snapshot.vectors.store.rows), vecbook.rows_file.mmap.mmap)
    cold = windowed(None)
    assert warm._snapshot.vectors.keys == cold._snapshot.vectors.keys
    assert_same_answers(warm, cold)
    assert filtered(warm) == filtered(cold) and all(filtered(warm))
    warm.close()


ADDED = "A new record: the lighthouse keeper's quokka 🦘 fixed the 灯台"


def edit_notes(tmp_path: Path) -> None:
    """Add a record (ADDED) to the windowed book's notes.txt, dated a minute back."""
    from test_keyword_cache import WINDOWED, settle

    (tmp_path / "notes" / "notes.txt").write_text(WINDOWED["notes.txt"] + "\n---\n" + ADDED, encoding="utf-8")
    settle(tmp_path / "notes" / "notes.txt")


def test_a_start_after_an_edit_keeps_the_saved_rows_and_puts_the_new_ones_beside_them(
        tmp_path: Path, windowed: Callable[..., vecbook.VecBook], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from test_keyword_cache import assert_same_answers

    cache = tmp_path / "cache"
    windowed(cache).close()
    (path,) = cache.glob("rows-*.vbr")
    written = path.read_bytes()
    edit_notes(tmp_path)
    caplog.set_level(logging.INFO, logger="vecbook")
    encoded = counted_encodings(monkeypatch)
    edited = windowed(cache)
    assert edited.stats()["last_update"]["files_read"] == 1
    store = edited._snapshot.vectors.store
    rows = len(store.rows)
    assert f"vector index: the saved rows {path} hold {rows} of {rows + 1} rows; 1 new beside them" in caplog.text
    assert encoded == [1] and len(edited._snapshot.vectors.delta) == 1  # only the new window is encoded
    if vecbook.rows_file.MAP_ROWS:
        assert isinstance(mapped_from(store.rows), vecbook.rows_file.mmap.mmap)
    assert path.read_bytes() == written  # nothing written: the file's rows serve as they are
    assert [h.text for h in edited.search("quokka lighthouse", mode="semantic", max_results=1)] == [ADDED]
    assert_same_answers(edited, windowed(None))
    edited.close()
    reads = counted_cache_reads(monkeypatch)
    again = windowed(cache)  # the new window's vector read from the vector cache, the rest mapped
    assert reads == [1] and [h.text for h in again.search("quokka lighthouse", mode="semantic", max_results=1)] == \
        [ADDED]
    assert_same_answers(again, windowed(None))


def mapped_kb(path: Path) -> int:
    """The kB of ``path``'s mappings this process holds resident (its Rss lines in /proc/self/smaps)."""
    resident, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:  # a mapping's first line
            inside = line.endswith(str(path))
        elif inside and line.startswith("Rss:"):
            resident += int(line.split()[1])
    return resident


@pytest.mark.skipif(not Path("/proc/self/smaps").exists() or not vecbook.rows_file.MAP_ROWS,
                    reason="Linux's /proc, mapped rows")
def test_a_cache_save_over_mapped_rows_leaves_their_pages_out_of_the_process(
        tmp_path: Path, windowed: Callable[..., vecbook.VecBook], monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    windowed(cache).close()
    (path,) = cache.glob("rows-*.vbr")
    edit_notes(tmp_path)
    saved: list[int] = []
    real = vecbook.caches.Caches._save_pending_vectors

    def save(self: Any) -> None:
        real(self)
        saved.append(mapped_kb(path))  # as the save ends, before anything else reads a row

    monkeypatch.setattr(vecbook.caches.Caches, "_save_pending_vectors", save)
    edited = windowed(cache)  # its new key: the vector cache is written, every row read
    edited._caches.wait()
    assert saved and saved[-1] == 0
    assert edited.search("quokka lighthouse", mode="semantic", max_results=1)
    edited.close()


def test_a_start_after_more_change_than_a_delta_holds_makes_and_saves_its_rows_anew(
        tmp_path: Path, windowed: Callable[..., vecbook.VecBook], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from test_keyword_cache import assert_same_answers

    cache = tmp_path / "cache"
    windowed(cache).close()
    monkeypatch.setattr(vecbook.vector_index, "MERGE_ROWS", 0)
    monkeypatch.setattr(vecbook.vector_index, "MERGE_SHARE", 0.0)
    edit_notes(tmp_path)
    caplog.set_level(logging.INFO, logger="vecbook")
    edited = windowed(cache)
    assert edited.stats()["last_update"]["files_read"] == 1
    assert "are of other rows; they are made from the vector cache" in caplog.text
    assert len(edited._snapshot.vectors.delta) == 0
    assert [h.text for h in edited.search("quokka lighthouse", mode="semantic", max_results=1)] == [ADDED]
    edited.close()
    reads = counted_cache_reads(monkeypatch)
    again = windowed(cache)  # the rows saved by the edited start: mapped
    assert reads == [] and [h.text for h in again.search("quokka lighthouse", mode="semantic", max_results=1)] == \
        [ADDED]
    assert_same_answers(again, windowed(None))


def test_a_damaged_rows_file_is_a_warning_and_a_warm_start_answers_as_a_cold_build(
        tmp_path: Path, windowed: Callable[..., vecbook.VecBook], caplog: pytest.LogCaptureFixture) -> None:
    from test_keyword_cache import assert_same_answers

    cache = tmp_path / "cache"
    windowed(cache).close()
    (path,) = cache.glob("rows-*.vbr")
    damage(path, "flipped")
    caplog.set_level(logging.INFO, logger="vecbook")
    warm = windowed(cache)
    assert [r.levelno for r in caplog.records if "are unusable (its rows do not match their digest)" in r.getMessage()] \
        == [logging.WARNING]
    assert_same_answers(warm, windowed(None))
    assert filtered(warm) == filtered(windowed(None))


def test_a_start_s_rows_are_found_among_the_saved_ones_in_place_or_by_lookup() -> None:
    from vecbook.key_rows import KeyRows
    from vecbook.vector_index import _rows_in

    keys = [bytes([i % 256, i // 256]) * 8 for i in range(1000)]
    stored = b"".join(keys)
    added = [bytes([7]) * 16, bytes([9]) * 16]
    # One source changed in the middle: rows 400-409 gone, two new ones in their place.
    joined = b"".join(keys[:400] + added + keys[410:])
    where = _rows_in(stored, joined, 50)
    assert where.tolist() == list(range(400)) + [-1, -1] + list(range(410, 1000))
    assert where.tolist() == KeyRows(stored).rows_of(joined).tolist()
    # Rows moved within the changed stretch are still found; a row moved from far away counts as new there.
    joined = b"".join(keys[:400] + [keys[405], keys[404]] + added + [keys[900]] + keys[410:])
    where = _rows_in(stored, joined, 50)
    assert where[400:405].tolist() == [405, 404, -1, -1, -1] and where[405:].tolist() == list(range(410, 1000))
    # More change than that: every key looked up, wherever it is.
    shuffled = b"".join(reversed(keys))
    assert _rows_in(stored, shuffled, 50).tolist() == list(range(999, -1, -1))
    assert _rows_in(stored, b"".join(keys[:10]), 50).tolist() == list(range(10))
    assert _rows_in(stored, b"", 50).tolist() == [] and _rows_in(b"", joined, 5000).tolist() == [-1] * (len(joined) // 16)


@pytest.mark.skipif(not Path("/proc/self/smaps").exists() or not vecbook.rows_file.MAP_ROWS,
                    reason="Linux's /proc, mapped rows")
def test_mapped_rows_in_few_runs_are_read_through_the_file_and_no_page_of_it_becomes_the_process_s_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    build(vectors, saved)
    index = build(vectors, RowsFile(saved.path, "model|x"))
    rows = index.store.rows
    assert isinstance(mapped_from(rows), vecbook.rows_file.mmap.mmap) and mapped_kb(saved.path) == 0
    picked = np.array([5, 0, ROWS - 1, 17, 5, -1])
    read = index.vectors[picked]  # a search's candidates and a hit's windows are read so
    scored = index._score_windows(vectors[0].astype(np.float32), np.array([0, 3, 9, ROWS - 1]))
    assert mapped_kb(saved.path) == 0
    copy = np.array(rows)  # every page, through the mapping
    np.testing.assert_array_equal(read, copy[picked])
    assert scored[0].tolist() == [0, 3, 9, ROWS - 1]
    with pytest.raises(IndexError, match=f"row {ROWS} is out of bounds for {ROWS} rows"):
        vecbook.rows_file.read_rows(rows, np.array([0, ROWS]))
    # Rows side by side (a record's windows, an exact scan's block) are one read, and map no page either.
    other = build(vectors, RowsFile(saved.path, "model|x"))
    before = mapped_kb(saved.path)
    sizes: list[int] = []
    preadv = os.preadv
    monkeypatch.setattr(os, "preadv", lambda handle, views, offset: sizes.append(sum(map(len, views)))
                        or preadv(handle, views, offset))
    runs = np.array([40, 41, 42, 43, 7, 100, 101, 3])
    np.testing.assert_array_equal(other.vectors[runs], copy[runs])
    assert sizes == [4 * rows.strides[0], rows.strides[0], 2 * rows.strides[0], rows.strides[0]]
    monkeypatch.setattr(vecbook.rows_file, "READ_ROWS_LIMIT", 3)
    block = np.arange(ROWS // 4, ROWS)
    np.testing.assert_array_equal(other.vectors[block], copy[block])
    assert sizes[4:] == [len(block) * rows.strides[0]] and mapped_kb(saved.path) == before
    monkeypatch.setattr(os, "preadv", preadv)
    # Rows in more runs than a read takes (a large filter's scattered subset) go through the mapping.
    other = build(vectors, RowsFile(saved.path, "model|x"))
    before = mapped_kb(saved.path)
    other.vectors[picked]
    assert mapped_kb(saved.path) > before


@pytest.mark.skipif(not Path("/proc/self/smaps").exists() or not vecbook.rows_file.MAP_ROWS,
                    reason="Linux's /proc, mapped rows")
def test_a_scan_s_training_reads_mapped_rows_through_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered_vectors(ROWS)
    saved = RowsFile(tmp_path / "rows-a.vbr", "model|x")
    build(vectors, saved)
    monkeypatch.setattr(vecbook.rows_file, "READ_ROWS_LIMIT", 64)
    seen: list[tuple[np.ndarray, int]] = []

    def trained(cls: type, rows: int, decode: Callable[[np.ndarray], np.ndarray], metric: str) -> None:
        # A training sample scattered over the rows (more runs than one read takes), then every row.
        seen.append((np.concatenate([decode(np.arange(0, rows, 3)), decode(np.arange(rows))]), mapped_kb(saved.path)))

    monkeypatch.setattr(vecbook.vector_store.Scan, "trained", classmethod(trained))
    index = build(vectors, RowsFile(saved.path, "model|x"))
    assert index.store.wait_for_scan(30)
    expected = vecbook.index.encode_vectors(vectors, "cosine").astype(np.float32)
    np.testing.assert_array_equal(seen[0][0], np.concatenate([expected[::3], expected]))
    assert seen[0][1] == 0  # no page of the file became the process's own
