"""The vector cache keeps, beside the vectors, the windows of every passage longer than one
model window (docs/freshness-and-caches.md, vector cache): a warm start never runs the
tokenizer over text it embedded before, so a huge record costs a restart only the reading of
its vectors. Its files carry a format version: an older file is read and written anew, a newer
one is reported and rebuilt."""

from __future__ import annotations

import hashlib
import json
import logging
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vecbook
from vecbook import build
from vecbook.vector_cache import VectorCache
from vecbook.vector_files import (
    CACHE_FORMAT,
    CACHE_MAGIC,
    KeyedVectors,
    SplitPassages,
    StreamedVectors,
    read_cache_file,
    read_journal,
)

# A record of many passages (400 words each), each longer than one model window (254 tokens),
# in several scripts: the windows are cut by the model's tokenizer, in characters of each.
LINES = ["Day {n}: the boiler café needed 修理 again, المرجل يعمل الآن 🔥 and the garden budget grew",
         "Notes {n}: Straße, naïve crème brûlée, 東京の会議 at noon, שלום לכולם, and a long walk home",
         "Entry {n}: invoices, receipts, 咖啡 and tea, the roof repair estimate, emoji 🎉🌊 at the end"]
LONG = "\n".join(LINES[n % 3].format(n=n) for n in range(160))


def long_record_files() -> dict[str, str]:
    return {"long.txt": f"Title: a long journal\n{LONG}\n", "short.txt": "A short note about violins.\n"}


def recording_tokenizer(embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the embedder's tokenizer cuts into windows from here on."""
    seen: list[str] = []
    real = embedder.window_spans_many

    def window_spans_many(texts: Any) -> Any:
        seen.extend(texts)
        return real(texts)

    monkeypatch.setattr(embedder, "window_spans_many", window_spans_many)
    return seen


def test_a_warm_start_cuts_no_passage_it_embedded_before(write_files: Any, embedder: vecbook.Embedder,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(long_record_files()), tmp_path / "cache"
    cold = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    assert len(cold._builder.splits) >= 3  # the long record's passages are each several windows
    assert len(cold._snapshot.vectors.keys) > len(cold._builder.splits) + 1
    tokenized = recording_tokenizer(embedder, monkeypatch)
    warm = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    assert tokenized == []
    assert warm.stats()["last_update"]["embedded"] == 0
    assert warm._snapshot.vectors.keys == cold._snapshot.vectors.keys
    assert np.array_equal(warm._snapshot.vectors.spans, cold._snapshot.vectors.spans)
    for query in ("boiler repair 修理", "東京の会議", "المرجل 🔥"):
        assert [h.citation for h in warm.search(query, mode="semantic")] == \
            [h.citation for h in cold.search(query, mode="semantic")]


def test_an_edited_long_record_is_cut_again_only_where_it_changed(write_files: Any, embedder: vecbook.Embedder,
                                                                  tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(long_record_files()), tmp_path / "cache"
    book = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    before = {book._snapshot.records[0].content[a:b] for a, b in book._snapshot.passages.tolist()}
    tokenized = recording_tokenizer(embedder, monkeypatch)
    added = "\n".join(LINES[1].format(n=n) for n in range(1000, 1050))
    write_files({"long.txt": f"Title: a long journal\n{LONG}\n{added}\n"})  # appended to, as a log is
    book.reindex()
    content = next(r.content for r in book._snapshot.records if r.file_path == "long.txt")
    passages = [content[a:b] for a, b in book._snapshot.passages.tolist()[:len(book._snapshot.passages) - 1]]
    assert tokenized and set(tokenized) == set(passages) - before  # only the passages the edit made
    book.close()  # writes what the update put off
    tokenized.clear()
    restarted = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    assert tokenized == [] and restarted.stats()["last_update"]["embedded"] == 0


def test_a_record_past_its_window_bound_is_not_cut_past_it_at_a_warm_start(
        write_files: Any, embedder: vecbook.Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(build, "MAX_RECORD_WINDOWS", 7)
    root, cache = write_files(long_record_files()), tmp_path / "cache"
    caplog.set_level(logging.WARNING, logger="vecbook")
    cold = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    warned = [r.getMessage() for r in caplog.records if "MAX_RECORD_WINDOWS" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("long.txt:1-161: the record is longer than 7 model windows; "
                                                     "from line ")
    caplog.clear()
    tokenized = recording_tokenizer(embedder, monkeypatch)
    warm = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    assert tokenized == []  # neither the windows kept nor the tail past them
    assert [r.getMessage() for r in caplog.records if "MAX_RECORD_WINDOWS" in r.getMessage()] == warned
    assert warm._snapshot.vectors.keys == cold._snapshot.vectors.keys
    assert np.array_equal(warm._snapshot.vectors.spans, cold._snapshot.vectors.spans)


def rewritten_in_format_1(path: Path) -> None:
    """The cache file at ``path`` as a VecBook before split passages wrote it: keys and vectors."""
    data = path.read_bytes()
    (size,) = struct.unpack_from("<I", data, len(CACHE_MAGIC))
    header = json.loads(data[len(CACHE_MAGIC) + 4:len(CACHE_MAGIC) + 4 + size])
    start = len(CACHE_MAGIC) + 4 + size
    payload = data[start:start + header["count"] * (16 + 4 * header["dimension"])]
    old = json.dumps({"identity": header["identity"], "dimension": header["dimension"], "count": header["count"],
                      "sha256": hashlib.sha256(payload).hexdigest()}).encode()
    path.write_bytes(CACHE_MAGIC + struct.pack("<I", len(old)) + old + payload)


def test_a_cache_file_of_the_older_format_is_read_and_written_anew(write_files: Any, embedder: vecbook.Embedder,
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(long_record_files()), tmp_path / "cache"
    vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    path = next(cache.glob("vectors-*.vbc"))
    rewritten_in_format_1(path)
    assert read_cache_file(path, embedder.identity)[0].get("format") is None
    upgraded = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    assert upgraded.stats()["last_update"]["embedded"] == 0  # its vectors are used
    header, entries = read_cache_file(path, embedder.identity)
    entries.matrix.close()
    assert header["format"] == CACHE_FORMAT and len(entries.splits) == len(upgraded._builder.splits) >= 3
    tokenized = recording_tokenizer(embedder, monkeypatch)
    vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    assert tokenized == []


def cache_header(data: bytes) -> tuple[dict[str, Any], int]:
    """The JSON header of cache file bytes ``data``, and where its payload begins."""
    (size,) = struct.unpack_from("<I", data, len(CACHE_MAGIC))
    return json.loads(data[len(CACHE_MAGIC) + 4:len(CACHE_MAGIC) + 4 + size]), len(CACHE_MAGIC) + 4 + size


def rewritten_in_format_2(path: Path) -> None:
    """The cache file at ``path`` as format 2 wrote it: one SHA-256 of the whole payload."""
    data = path.read_bytes()
    header, start = cache_header(data)
    del header["vector_piece_sums"]
    old = json.dumps({**header, "format": 2, "sha256": hashlib.sha256(data[start:]).hexdigest()}).encode()
    path.write_bytes(CACHE_MAGIC + struct.pack("<I", len(old)) + old + data[start:])


def rewritten_in_format_3(path: Path) -> None:
    """The cache file at ``path`` as format 3 wrote it: the hash of the sums per MiB, not the sums."""
    from vecbook.file_writes import sums_digest

    data = path.read_bytes()
    header, start = cache_header(data)
    sums = bytes.fromhex(header.pop("vector_piece_sums"))
    old = json.dumps({**header, "format": 3, "vector_sums": sums_digest(sums)}).encode()
    path.write_bytes(CACHE_MAGIC + struct.pack("<I", len(old)) + old + data[start:])


@pytest.mark.parametrize("older", [2, 3])
def test_a_cache_file_of_format_2_or_3_is_read_and_written_anew_with_the_sums_of_each_mib(
        write_files: Any, tmp_path: Path, older: int) -> None:
    from conftest import FakeEmbedder

    root, cache = write_files(long_record_files()), tmp_path / "cache"
    vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    path = next(cache.glob("vectors-*.vbc"))
    {2: rewritten_in_format_2, 3: rewritten_in_format_3}[older](path)
    assert read_cache_file(path, FakeEmbedder().identity)[0]["format"] == older
    upgraded = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert upgraded.stats()["last_update"]["embedded"] == 0  # its vectors are used
    upgraded.close()
    header, entries = read_cache_file(path, FakeEmbedder().identity)
    entries.matrix.close()
    assert header["format"] == CACHE_FORMAT == 4 and "vector_piece_sums" in header and "vector_sums" not in header


def test_a_damaged_mib_of_vectors_costs_only_the_vectors_in_it(tmp_path: Path) -> None:
    from vecbook.file_writes import SUM_BYTES
    from vecbook.vector_files import write_cache_file

    dim, count = 384, 2500  # 1,536 bytes a vector: 682.7 vectors a MiB, four MiBs (the last short)
    rng = np.random.default_rng(7)
    vectors = {key(f"record {i} 東京 🎉"): rng.standard_normal(dim).astype(np.float32) for i in range(count)}
    path = tmp_path / "vectors.vbc"
    write_cache_file(path, "model", StreamedVectors.of(KeyedVectors.from_dict(vectors)))
    data = bytearray(path.read_bytes())
    header, start = cache_header(bytes(data))
    vectors_at = start + 16 * count
    data[vectors_at + SUM_BYTES + 5000] ^= 0x01  # one bit of the second MiB
    path.write_bytes(bytes(data))
    header, entries = read_cache_file(path, "model")
    # Rows 682 (it straddles the first two MiBs) to 1365 (it straddles the second and third).
    lost = [k for i, k in enumerate(vectors) if SUM_BYTES // (4 * dim) <= i <= (2 * SUM_BYTES - 1) // (4 * dim)]
    assert header["damaged_vectors"] == len(lost) == 684
    assert len(entries) == count - len(lost) and not any(k in entries for k in lost)
    kept = [k for k in vectors if k not in set(lost)]
    assert list(entries) == kept
    assert np.array_equal(entries.matrix.take(list(range(len(kept)))), np.stack([vectors[k] for k in kept]))
    entries.matrix.close()


def test_the_sound_vectors_of_a_damaged_cache_file_stay_its_own_beside_a_journal(tmp_path: Path) -> None:
    from vecbook.file_writes import SUM_BYTES

    identity, dim, count = "model|x|384|float32", 384, 1400  # the second MiB's rows are lost
    cache = VectorCache(tmp_path, identity)
    base = {key(f"note {i} Zürich 東京 🔥"): np.full(dim, i, dtype=np.float32) for i in range(count)}
    cache.save(base)
    journal = cache.new_journal()
    later = {key("خبر جديد"): np.full(dim, -1, dtype=np.float32)}
    cache.append(journal, StreamedVectors.of(KeyedVectors.from_dict(later)), 0)
    data = bytearray(cache.path.read_bytes())
    _, start = cache_header(bytes(data))
    data[start + 16 * count + SUM_BYTES + 100] ^= 0x01  # one bit of the second MiB
    cache.path.write_bytes(bytes(data))
    reopened = VectorCache(tmp_path, identity)
    reopened.load()
    kept = [k for k in [*base, *later] if k in reopened.entries.rows]
    assert len(kept) == count + 1 - 684 and key("خبر جديد") in kept
    # each key read back has its own vector, not a neighbour's that the lost rows shifted into place
    expected = [float(base[k][0]) if k in base else -1.0 for k in kept]
    assert reopened.vectors_of(kept).take(kept)[:, 0].tolist() == expected
    reopened.release_vectors()


@pytest.mark.parametrize("where", ["vectors", "keys", "splits"])
def test_a_damaged_cache_file_is_reported_and_rebuilt(write_files: Any, tmp_path: Path, where: str,
                                                      caplog: pytest.LogCaptureFixture,
                                                      request: pytest.FixtureRequest) -> None:
    from conftest import FakeEmbedder

    # The model's tokenizer cuts the long record into windows, so the file has split passages.
    embedder = request.getfixturevalue("embedder") if where == "splits" else FakeEmbedder()
    root, cache = write_files(long_record_files()), tmp_path / "cache"
    first = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    path = next(cache.glob("vectors-*.vbc"))
    data = bytearray(path.read_bytes())
    header, start = cache_header(bytes(data))
    keys = 16 * header["count"]
    # One byte of the payload changed: in the vectors (their sums), a key, a split passage's window.
    at = {"vectors": start + keys + 4 * header["dimension"] * header["count"] // 2, "keys": start + 5,
          "splits": len(data) - 3}[where]
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    caplog.set_level(logging.WARNING, logger="vecbook")
    rebuilt = vecbook.VecBook(root, embedder=embedder, cache_directory=cache)
    embedded = first.stats()["last_update"]["embedded"]
    assert where != "splits" or header["splits"] > 0, header
    if where == "vectors":  # all in one MiB here: each of them failed its checksum and is embedded again
        assert f"vector cache {path}: {embedded} of {embedded} vectors failed their checksum; those records are " \
            f"embedded again, the other 0 are used" in caplog.text
    else:
        assert f"vector cache {path} is unusable (checksum mismatch); it will be rebuilt" in caplog.text
    assert rebuilt.stats()["last_update"]["embedded"] == embedded > 1
    rebuilt.close()
    assert read_cache_file(path, embedder.identity)[0]["format"] == CACHE_FORMAT


def test_the_vector_sums_change_with_any_piece_and_not_with_how_blocks_are_cut() -> None:
    from vecbook.file_writes import SUM_BYTES, gathered_pieces, summed_digest

    vectors = np.random.default_rng(3).standard_normal((3 * SUM_BYTES // 32 + 7, 8)).astype("<f4")
    whole = summed_digest(gathered_pieces([vectors]))
    assert summed_digest(gathered_pieces([vectors[:1], vectors[1:1000], vectors[1000:]])) == whole
    changed = vectors.copy()
    changed[-1, -1] += 1  # in the last, short piece
    assert summed_digest(gathered_pieces([changed])) != whole
    mib = SUM_BYTES // 32  # rows per MiB
    swapped = np.concatenate([vectors[mib:2 * mib], vectors[:mib], vectors[2 * mib:]])  # two MiBs swapped
    assert summed_digest(gathered_pieces([swapped])) != whole


def test_a_cache_file_of_a_newer_format_is_reported_and_rebuilt(write_files: Any, tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    from conftest import FakeEmbedder

    root, cache = write_files(long_record_files()), tmp_path / "cache"
    first = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    path = next(cache.glob("vectors-*.vbc"))
    data = path.read_bytes()
    (size,) = struct.unpack_from("<I", data, len(CACHE_MAGIC))
    header = json.loads(data[len(CACHE_MAGIC) + 4:len(CACHE_MAGIC) + 4 + size])
    newer = json.dumps({**header, "format": CACHE_FORMAT + 1}).encode()
    path.write_bytes(CACHE_MAGIC + struct.pack("<I", len(newer)) + newer + data[len(CACHE_MAGIC) + 4 + size:])
    caplog.set_level(logging.WARNING, logger="vecbook")
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert f"vector cache {path} is unusable (written by a newer VecBook (format {CACHE_FORMAT + 1})); it will be " \
        "rebuilt" in caplog.text
    assert book.stats()["last_update"]["embedded"] == first.stats()["last_update"]["embedded"] > 1
    assert read_cache_file(path, FakeEmbedder().identity)[0]["format"] == CACHE_FORMAT


def key(text: str) -> bytes:
    return VectorCache.key(text)


def entry(name: str, windows: int, capped: bool = False) -> tuple[bytes, list[tuple[int, int]], list[bytes], bool]:
    return key(name), [(i * 10, i * 10 + 15) for i in range(windows)], [key(f"{name}/{i}") for i in range(windows)], capped


def test_split_passages_merge_keep_and_read_back_as_written() -> None:
    one = SplitPassages.of([entry("å 東京", 2), entry("b 🔥", 3, capped=True)])
    two = SplitPassages.of([entry("b 🔥", 3, capped=True), entry("c שלום", 4)])
    both = one.merged(two)
    assert len(both) == 3
    assert both.get(key("c שלום")) == ([[0, 15], [10, 25], [20, 35], [30, 45]], False,
                                       [key(f"c שלום/{i}") for i in range(4)])
    assert both.get(key("b 🔥"))[1] is True and both.get(key("missing")) is None
    kept = both.kept({key("b 🔥/0"), key("c שלום/0"), key("å 東京/1")})  # a passage lives by its first window
    assert sorted(kept.rows) == sorted([key("b 🔥"), key("c שלום")])
    assert kept.get(key("c שלום")) == both.get(key("c שלום"))
    data = b"".join(kept.parts())
    again = SplitPassages.parsed(data, len(kept), len(kept.spans))
    assert again.same_keys(kept) and again.get(key("b 🔥")) == kept.get(key("b 🔥"))
    with pytest.raises(ValueError, match="cut short"):
        SplitPassages.parsed(data[:-1], len(kept), len(kept.spans))


def test_vectors_of_a_cache_file_and_its_journal_read_as_one(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "model|x|4|float32")
    base = {key(t): np.full(4, i, dtype=np.float32) for i, t in enumerate(["a", "é", "🔥"])}
    cache.save(base)
    journal = cache.new_journal()
    later = {key("🔥"): np.full(4, 9, dtype=np.float32), key("東京"): np.full(4, 7, dtype=np.float32)}
    valid = cache.append(journal, StreamedVectors.of(KeyedVectors.from_dict(later)), 0)
    valid = cache.append(journal, StreamedVectors.of(KeyedVectors.from_dict({key("x"): np.ones(4, np.float32)})),
                         valid)
    with open(journal, "ab") as out:
        out.write(b"\x10\x00\x00\x00{\"count\": 1")  # a chunk a killed process did not finish
    reopened = VectorCache(tmp_path, "model|x|4|float32")
    reopened.load()
    assert len(reopened.entries) == 5 and reopened.journals == {journal} and reopened.needs_rewrite
    keys = [key("東京"), key("🔥"), key("a"), key("x")]
    # A key stored twice is the cache file's: the same text, the same model, the same vector.
    assert reopened.vectors_of(keys).take(keys)[:, 0].tolist() == [7, 2, 0, 1]
    chunks, problem = read_journal(journal, "model|x|4|float32")
    assert len(chunks) == 2 and problem == "a chunk cut short"
    for chunk in chunks:
        chunk.matrix.close()
    everything = list(reopened.entries.rows)
    reopened.save(dict(zip(everything, reopened.vectors_of(everything).take(everything))))
    assert not journal.exists() and not reopened.needs_rewrite  # taken into the cache file
    again = VectorCache(tmp_path, "model|x|4|float32")
    again.load()
    assert len(again.entries) == 5 and again.journals == set()
    again.release_vectors()


def test_an_append_after_a_torn_one_or_a_deleted_journal_leaves_it_readable(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "model|x|4|float32")
    journal = cache.new_journal()

    def chunk(text: str, value: float) -> StreamedVectors:
        return StreamedVectors.of(KeyedVectors.from_dict({key(text): np.full(4, value, dtype=np.float32)}))

    valid = cache.append(journal, chunk("ä", 1), 0)
    with open(journal, "ab") as out:
        out.write(b"\x40\x00\x00\x00{\"dimension\": 4, \"count\"")  # an append Ctrl-C cut midway
    valid = cache.append(journal, chunk("東京", 2), valid)  # written over what the cut one left
    chunks, problem = read_journal(journal, "model|x|4|float32")
    assert problem is None and [c.matrix.take([0])[0, 0] for c in chunks] == [1, 2]
    for part in chunks:
        part.matrix.close()
    journal.unlink()  # another process's save took it in
    cache.append(journal, chunk("🔥", 3), valid)
    chunks, problem = read_journal(journal, "model|x|4|float32")
    assert problem is None and [c.matrix.take([0])[0, 0] for c in chunks] == [3]
    chunks[0].matrix.close()


def test_an_unreadable_journal_is_reported_and_deleted_by_the_next_save(write_files: Any, tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    from conftest import FakeEmbedder

    root, cache = write_files({"notes.txt": "Ferry at noon 🌊\n---\nCafé receipts 東京\n"}), tmp_path / "cache"
    vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    name = next(cache.glob("vectors-*.vbc")).name
    journal = cache / name.replace(".vbc", ".0123456789ab.vbj")
    journal.write_bytes(b"not a journal at all")
    caplog.set_level(logging.WARNING, logger="vecbook")
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert f"vector cache journal {journal} is unusable (not a VecBook journal); it will be deleted" in caplog.text
    assert book.stats()["last_update"]["embedded"] == 0 and not journal.exists()


def test_a_build_that_embeds_fast_appends_to_its_journal_once_checkpoint_vectors_wait(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import FakeEmbedder

    monkeypatch.setattr(vecbook.caches, "CHECKPOINT_SECONDS", 3600.0)  # never by the clock here
    monkeypatch.setattr(vecbook.caches, "CHECKPOINT_VECTORS", 4)
    monkeypatch.setattr(build, "EMBED_CHUNK", 2)
    appended: list[int] = []
    append = VectorCache.append

    def counted(self: VectorCache, journal: Path, keep: Any, valid: int) -> int:
        appended.append(len(keep))
        return append(self, journal, keep, valid)

    monkeypatch.setattr(VectorCache, "append", counted)
    root = write_files({"notes.txt": "\n---\n".join(f"Note {n}: café 🌊 東京 שלום" for n in range(9))})
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "cache")
    assert appended[:2] == [4, 4]  # what waits is bounded, however little time passed
    assert book.search("Note 7 café", mode="semantic", max_results=1)[0].text.startswith("Note 7")


def test_a_journal_that_cannot_be_written_is_reported_once_and_the_build_saves_at_its_end(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from conftest import FakeEmbedder

    monkeypatch.setattr(vecbook.caches, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint after every chunk
    monkeypatch.setattr(build, "EMBED_CHUNK", 2)
    calls = []

    def full_disk(*_: Any) -> int:
        calls.append(1)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(VectorCache, "append", full_disk)
    root, cache = write_files({"notes.txt": "\n---\n".join(f"Note {n}: café 🌊 東京" for n in range(9))}), \
        tmp_path / "cache"
    caplog.set_level(logging.WARNING, logger="vecbook")
    vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    warned = [r.getMessage() for r in caplog.records if "journal" in r.getMessage()]
    assert len(calls) == 1 and len(warned) == 1
    assert warned[0].startswith("cannot write the vector cache journal ") and warned[0].endswith(
        "([Errno 28] No space left on device); what this build embeds is saved when it ends")
    restarted = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert restarted.stats()["last_update"]["embedded"] == 0


def test_window_keys_read_as_a_sequence_and_each_distinct_key_s_first_window_is_found() -> None:
    from vecbook.blocks import Keys

    # Keys that share their first 8 bytes, end in zero bytes, or repeat.
    names = [b"a" * 8 + b"b" * 8, b"a" * 8 + b"c" * 8, b"z" * 14 + b"\0\0", b"a" * 8 + b"b" * 8, b"\0" * 16,
             b"z" * 14 + b"\0\0", b"\0" * 16]
    keys = Keys(b"".join(names))
    assert list(keys) == names and len(keys) == 7 and keys[-1] == names[-1] and list(keys[2:4]) == names[2:4]
    assert keys.firsts(np.arange(7)).tolist() == [0, 1, 2, 4]
    assert keys.firsts(np.array([3, 5, 6])).tolist() == [3, 5, 6]
    assert keys.at(np.array([4, 1])) == names[4] + names[1] and keys.at(np.arange(7)) == keys.joined
    with pytest.raises(IndexError):
        keys[7]


def test_passages_are_cut_a_chunk_of_records_at_a_time_with_the_same_windows(
        write_files: Any, embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {**long_record_files(), "more.txt": f"A second long one\n{LONG[::-1]}\n---\nשלום 東京 🎉 short"}
    whole = vecbook.VecBook(write_files(files), embedder=embedder, cache_directory=False)
    calls: list[int] = []
    real = embedder.window_spans_many
    monkeypatch.setattr(embedder, "window_spans_many", lambda texts: calls.append(len(texts)) or real(texts))
    monkeypatch.setattr(build, "WINDOW_CHUNK", 1)
    chunked = vecbook.VecBook(write_files(files), embedder=embedder, cache_directory=False)
    assert len(calls) == len(chunked._snapshot.records) == 4  # one record's passages at a time
    for name in ("keys", "spans", "owners"):
        assert np.array_equal(np.asarray(getattr(chunked._snapshot.vectors, name)),
                              np.asarray(getattr(whole._snapshot.vectors, name))), name
    assert len(chunked._snapshot.vectors.keys) > 6  # the long records were cut into several windows


@pytest.mark.parametrize("busy, saved", [(2, True), (100, False)])
def test_on_windows_a_save_waits_for_a_reader_that_holds_the_cache_file_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy: int, saved: bool) -> None:
    """Windows refuses to rename over a file another process has open (a CLI search reading the
    cache while the MCP server saves it: WinError 5 or 32); such a reader lets go within moments,
    so the save tries again for a while before it fails (and is logged, the old file intact)."""
    import os

    from vecbook import file_writes

    target = tmp_path / "vectors.vbc"
    target.write_bytes(b"old")
    real, tries = os.replace, []

    def replace(source: Any, destination: Any) -> None:
        tries.append(1)
        if len(tries) <= busy:
            raise PermissionError(13, "The process cannot access the file because it is being used by another "
                                      "process", str(destination))
        real(source, destination)

    monkeypatch.setattr(file_writes, "WINDOWS", True)
    monkeypatch.setattr(file_writes.os, "replace", replace)
    monkeypatch.setattr(file_writes, "REPLACE_PAUSE_SECONDS", 0.001)
    if saved:
        file_writes.write_atomically(target, "vectors-", lambda out: out.write(b"new"))
        assert target.read_bytes() == b"new" and len(tries) == 3
    else:
        with pytest.raises(PermissionError):
            file_writes.write_atomically(target, "vectors-", lambda out: out.write(b"new"))
        assert target.read_bytes() == b"old" and len(tries) == file_writes.REPLACE_TRIES
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.vbc"]  # no temporary file left


def test_what_add_listed_is_deleted_with_the_caches_unused_for_as_long(tmp_path: Path) -> None:
    # told-*.json (vecbook add's list of problems) of a config never read since, and a write cut
    # short, stayed in the cache folder for good: the README says a cache file unused 60 days goes
    import os
    import time

    from vecbook.vector_cache import STALE_SCOPE_DAYS

    kept, told, cut = tmp_path / "told-1.json", tmp_path / "told-2.json", tmp_path / ".told-3.tmp"
    for path in (kept, told, cut):
        path.write_text("{}", encoding="utf-8")
    old = time.time() - STALE_SCOPE_DAYS * 86400 - 60
    os.utime(told, (old, old))
    os.utime(cut, (old, old))
    assert sorted(VectorCache(tmp_path, "model|x|4|float32").prune_stale_scopes()) == [cut, told]
    assert kept.exists()
