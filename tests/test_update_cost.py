"""An update of one note costs work in proportion to the note, not to every record
(docs/performance.md, "A million records"): the updated index's sorted keys are carried over
from the previous index's order rather than sorted again, and the cache facts ``stats`` reports
are worked out from the previous update's by the keys that came or went; neither changes an
answer or a figure."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vecbook
from conftest import FakeEmbedder
from vecbook import key_rows
from vecbook.key_rows import KeyRows
from vecbook.vector_cache import VectorCache

key_rows_overlap = KeyRows.overlap


def random_keys(rng: random.Random, count: int) -> list[bytes]:
    """Keys of texts, with some exact repeats and some sharing their first 8 bytes."""
    keys = [VectorCache.key(f"text {rng.random()} 東京 🔥") for _ in range(count)]
    for _ in range(count // 10):
        keys[rng.randrange(count)] = keys[rng.randrange(count)]  # the same text twice
        twin = keys[rng.randrange(count)]
        keys[rng.randrange(count)] = twin[:8] + bytes(8)  # the same first 8 bytes, another key
    return keys


def updated(rng: random.Random, old: list[bytes], new_rows: int) -> tuple[list[bytes], np.ndarray]:
    """A later index's keys and each row's row in ``old`` (-1: new): rows gone, kept in order, new."""
    kept = [row for row in range(len(old)) if rng.random() > 0.2]
    source = kept + [-1] * new_rows
    rng.shuffle(source)
    fresh = iter(random_keys(rng, new_rows) if new_rows else [])
    keys = [old[row] if row >= 0 else next(fresh) for row in source]
    return keys, np.array(source, dtype=np.int64)


def same_lookups(carried: KeyRows, fresh: KeyRows, keys: list[bytes]) -> None:
    """Both find every key (a row holding it) and no absent one, in order of their first 8 bytes."""
    assert bool(np.all(np.diff(carried._sorted.astype(np.float64)) >= 0))
    assert sorted(carried._order.tolist()) == list(range(len(keys)))
    wanted = keys + [VectorCache.key("absent"), keys[0][:8] + b"\xff" * 8] if keys else []
    for rows in (carried.rows_of(wanted), fresh.rows_of(wanted)):
        assert [keys[row] if row >= 0 else None for row in rows.tolist()] == \
            [key if key in keys else None for key in wanted]


@pytest.mark.parametrize("seed", range(6))
def test_an_updated_indexs_sorted_keys_are_carried_from_the_previous_order(seed: int) -> None:
    rng = random.Random(seed)
    old = random_keys(rng, rng.choice([0, 1, 50, 400]))
    keys, source = updated(rng, old, rng.choice([0, 1, 30]))
    joined = b"".join(keys)
    carried = KeyRows(b"".join(old)).carried(source, joined)
    same_lookups(carried, KeyRows(joined), keys)
    assert carried.overlap(KeyRows(b"".join(old))) == KeyRows(joined).overlap(KeyRows(b"".join(old)))


def test_a_row_carried_twice_is_sorted_afresh() -> None:
    old = [VectorCache.key(text) for text in ("a", "é", "修理")]
    keys = [old[1], old[1], old[0], VectorCache.key("🔥")]
    carried = KeyRows(b"".join(old)).carried(np.array([1, 1, 0, -1]), b"".join(keys))
    same_lookups(carried, KeyRows(b"".join(keys)), keys)


@pytest.mark.parametrize("seed", range(6))
def test_an_updates_cache_overlap_is_worked_out_from_the_previous_one(seed: int) -> None:
    rng = random.Random(seed)
    old = random_keys(rng, 300)
    cached = KeyRows(b"".join(rng.sample(old, 120) + random_keys(rng, 40)))
    keys, source = updated(rng, old, rng.choice([0, 1, 25]))
    before = KeyRows(b"".join(old))
    now = before.carried(source, b"".join(keys))
    assert key_rows.overlap_after(before.overlap(cached), before, now, source, cached) == now.overlap(cached)
    assert key_rows.overlap_after(before.overlap(KeyRows(b"")), before, now, source, KeyRows(b"")) == \
        now.overlap(KeyRows(b""))


def test_an_update_past_the_changed_rows_limit_overlaps_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    old = random_keys(rng, 100)
    keys, source = updated(rng, old, 10)
    before = KeyRows(b"".join(old))
    monkeypatch.setattr(key_rows, "CHANGED_ROWS_LIMIT", 5)
    assert key_rows.overlap_after((0, 0), before, before.carried(source, b"".join(keys)), source, before) is None


NOTES = {"a.txt": "Boiler repair booked for monday\n---\nالمرجل يعمل الآن 🔥 after the repair\n---\n"
                  "Café receipts: crème brûlée and 咖啡",
         "b.txt": "Ferry timetable to the island\n---\nThe kayak club meets on Thursday\n---\nSame text twice",
         "c.txt": "Same text twice\n---\n東京 travel notes: the lighthouse by the harbour",
         # a passage longer than one model window: split, its windows looked up in the new index
         "d.txt": " ".join(f"word{number} 灯台" for number in range(700))}


class SplittingEmbedder(FakeEmbedder):
    """Windows of at most 300 characters: a longer passage is split (its windows are kept and
    looked up in the new index by the build, before the cache facts)."""

    def window_spans_many(self, texts: Any) -> list[tuple[list[tuple[int, int]], bool]]:
        return [([(start, min(start + 300, len(text))) for start in range(0, max(len(text), 1), 300)], False)
                for text in texts]

    def windows_many(self, texts: Any) -> list[tuple[list[str], bool]]:
        return [([text[a:b] for a, b in spans], capped)
                for text, (spans, capped) in zip(texts, self.window_spans_many(texts))]


def settled(root: Path) -> Path:
    """Files dated a minute back (the keyword cache keeps only sources settled before a read)."""
    for path in root.rglob("*.txt"):
        os.utime(path, (time.time() - 60, time.time() - 60))
    return root


def answers(book: vecbook.VecBook, query: str) -> list[tuple[str, str, float]]:
    return [(hit.id, hit.citation, round(hit.similarity_score, 6)) for mode in ("keyword", "semantic", "hybrid")
            for hit in book.search(query, mode=mode, max_results=5, dedupe=False)]


def test_edits_in_a_row_report_the_cache_facts_and_answers_of_a_fresh_start(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = settled(write_files(NOTES))
    book = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=tmp_path / "cache")
    book.stats()  # the first build's cache facts, worked out over every key
    assert len(book._builder.splits)
    cache = book._caches._vectors
    assert cache is not None
    overlaps, carried = [], []
    carry = KeyRows.carried
    monkeypatch.setattr(KeyRows, "carried", lambda *args: carried.append(1) or carry(*args))
    monkeypatch.setattr(KeyRows, "overlap", lambda self, other: overlaps.append(1) or (-1, -1))
    edits = [("a.txt", "a", "\n---\nA quokka fixed the lighthouse 灯台 with a blue umbrella ☂️"),
             ("a.txt", "a", "\n---\nThe quokka came back: مرحبا 🌂"),  # the same file again at once
             ("b.txt", "w", "Ferry timetable to the island\n---\nSame text twice")]  # a record gone
    for name, how, text in edits:
        with open(root / name, how, encoding="utf-8") as handle:
            handle.write(text)
        facts = book.reindex()["cache"]
        index = book._snapshot.vectors
        with monkeypatch.context() as unpatched:
            unpatched.setattr(KeyRows, "overlap", key_rows_overlap)
            expected = KeyRows(bytes(index.joined_keys)).overlap(cache.entries.rows)
        assert (facts["entries"], facts["reused"], facts["pruned"]) == \
            (expected[0], expected[1], len(cache.entries.rows) - expected[1])
        keys = index.keys
        assert [keys[row] for row in index.lookup.rows_of(keys).tolist()] == keys
    assert overlaps == [] and len(carried) == len(edits)  # each update's from the one before
    monkeypatch.undo()
    fresh = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=False)
    for query in ("quokka 灯台", "مرحبا", "same text twice", "ferry island", "咖啡"):
        updated_hits, fresh_hits = answers(book, query), answers(fresh, query)
        assert [hit[:2] for hit in updated_hits] == [hit[:2] for hit in fresh_hits]
        assert [hit[2] for hit in updated_hits] == pytest.approx([hit[2] for hit in fresh_hits], abs=1e-6)


def test_a_save_that_fails_after_edits_keeps_the_old_cache_readable_and_the_facts_right(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from vecbook.caches import write_put_off

    root, folder = settled(write_files(NOTES)), tmp_path / "cache"
    book = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=folder)
    book.stats()
    saved = {path.name: path.read_bytes() for path in folder.glob("vectors-*.vbc")}

    def full_disk(self: VectorCache, keep: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(VectorCache, "save", full_disk)
    caplog.set_level(logging.WARNING, logger="vecbook")
    for number, text in enumerate(["A quokka 灯台 ☂️", "مرحبا quokka again 🌂"]):
        with open(root / "a.txt", "a", encoding="utf-8") as handle:
            handle.write(f"\n---\n{text}")
        facts = book.reindex()["cache"]
        write_put_off()  # the update's put-off save runs now, and fails
        cache = book._caches._vectors
        assert cache is not None
        expected = KeyRows(bytes(book._snapshot.vectors.joined_keys)).overlap(cache.entries.rows)
        assert (facts["entries"], facts["reused"]) == expected and facts["embedded"] == number + 1
    assert "cannot write the vector cache" in caplog.text and "No space left on device" in caplog.text
    assert caplog.text.count("cannot write the vector cache") == 1  # two saves failed the same way: one WARN
    assert {path.name: path.read_bytes() for path in folder.glob("vectors-*.vbc")} == saved  # left as it was
    monkeypatch.undo()
    again = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=folder)
    assert "unusable" not in caplog.text
    assert again.stats()["last_update"]["embedded"] == 2  # the two notes; the rest from the old file
    fresh = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=False)
    for query in ("quokka 灯台", "مرحبا", "ferry island"):
        assert [hit[:2] for hit in answers(again, query)] == [hit[:2] for hit in answers(fresh, query)]
    book.close()
    again.close()


def test_an_updates_cache_write_waits_a_moment_for_the_searches_after_the_edit(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vecbook import caches

    monkeypatch.setattr(caches, "UPDATE_SETTLE_SECONDS", 0.5)
    root = settled(write_files(NOTES))
    book = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=tmp_path / "cache")
    book._caches._last_write -= 3600  # the last write an hour ago: no minute left to wait for
    writes: list[float] = []
    save = VectorCache.save
    monkeypatch.setattr(VectorCache, "save", lambda self, keep: writes.append(time.monotonic()) or save(self, keep))
    with open(root / "a.txt", "a", encoding="utf-8") as handle:
        handle.write("\n---\nA quokka fixed the lighthouse 灯台 ☂️")
    edited = time.monotonic()
    book.reindex()
    assert book.search("quokka 灯台", mode="hybrid")[0].text.startswith("A quokka") and writes == []
    deadline = time.monotonic() + 30
    while not writes and time.monotonic() < deadline:
        time.sleep(0.05)
    assert writes and writes[0] - edited >= 0.5  # written in the background once the moment passed
    book.close()


def test_a_start_works_its_cache_facts_out_after_its_save_and_the_first_edit_from_them(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    root, folder = settled(write_files(NOTES)), tmp_path / "cache"
    vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=folder).close()
    with open(root / "b.txt", "a", encoding="utf-8") as handle:
        handle.write("\n---\nA new line 東京 🔥")  # changed since: the restart saves in the background
    settled(root)
    overlaps: list[str] = []
    monkeypatch.setattr(KeyRows, "overlap",
                        lambda self, other: overlaps.append(threading.current_thread().name) or key_rows_overlap(self, other))
    book = vecbook.VecBook(root, embedder=SplittingEmbedder(), cache_directory=folder)
    assert threading.current_thread().name not in overlaps  # the start returned without them
    book._caches.wait()
    assert overlaps == ["vecbook-cache"]  # worked out once the save had ended
    with open(root / "a.txt", "a", encoding="utf-8") as handle:
        handle.write("\n---\nA quokka 灯台 ☂️")
    facts = book.reindex()["cache"]
    assert overlaps == ["vecbook-cache"]  # the edit's facts from the start's
    cache = book._caches._vectors
    assert cache is not None
    assert (facts["entries"], facts["reused"]) == \
        key_rows_overlap(KeyRows(bytes(book._snapshot.vectors.joined_keys)), cache.entries.rows)
    book.close()
