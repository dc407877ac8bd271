"""What an index holds per record is kept compact (docs/performance.md, memory): records
hold their text once, the vector cache's float32 vectors stay in its file once the index
has them, and keyword postings keep no per-posting weights; none of it changes an answer."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vecbook
from conftest import FakeEmbedder
from vecbook.index import KeywordIndex
from vecbook.vector_cache import VectorCache

NOTES = {"notes.txt": "Date: 2024-01-02\nAuthor: ana\nBoiler repair booked for monday\n---\n"
                      "Author: ana\nTags: home, 修理\nالمرجل يعمل الآن 🔥 after the repair\n---\n"
                      "Author: ben\nCafé receipts: crème brûlée and 咖啡"}


def test_a_record_keeps_its_text_once_and_gives_back_every_field_as_given() -> None:
    content = "Author: ana\nالمرجل يعمل 🔥 咖啡 café"
    record = vecbook.Record(text="المرجل يعمل 🔥 咖啡 café", file_path="a/b.txt", line_number=3, end_line=4,
                            metadata={"Author": "ana"}, id="a/b.txt:3", citation="a/b.txt:3-4", content=content)
    assert type(record._text) is int  # the text is the end of the content: held as an offset
    assert (record.text, record.id, record.citation) == ("المرجل يعمل 🔥 咖啡 café", "a/b.txt:3", "a/b.txt:3-4")
    other = vecbook.Record("not in the content", "x.txt", None, None, {}, source="db", id="row-1", citation="db#1",
                           content="something else")
    assert (other.text, other.id, other.citation, other.line_number) == ("not in the content", "row-1", "db#1", None)
    assert record.replace(id="a/b.txt:3~2").id == "a/b.txt:3~2" and record.replace(id="x").text == record.text
    assert pickle.loads(pickle.dumps(record)) == record != other
    with pytest.raises(AttributeError):
        record.text = "changed"  # type: ignore[misc]


def test_one_metadata_value_is_read_without_the_whole_metadata() -> None:
    record = vecbook.Record(text="مرحبا 🔥", file_path="chat.txt", line_number=1, end_line=2,
                            metadata={"participants": ["José", "王小明"], "message_count": 2})
    assert record.metadata_value("participants") == ["José", "王小明"] == record.metadata["participants"]
    assert record.metadata_value("thread") is None and record.metadata_value("thread", "main") == "main"


def test_records_share_the_strings_of_repeated_metadata(write_files: Any) -> None:
    book = vecbook.VecBook(write_files(NOTES), keyword_only=True, cache_directory=False)
    first, second, _ = book._snapshot.records
    assert first.metadata["Author"] is second.metadata["Author"]
    assert list(first.metadata)[1] is list(second.metadata)[0]  # the key "Author"
    assert second.metadata["Tags"] == ["home", "修理"]


def test_keyword_scores_are_made_from_counts_as_the_weights_gave_them() -> None:
    documents = [["boiler", "repair", "repair"], ["café", "咖啡"], ["repair"], ["🔥", "boiler"] * 40]
    index = KeywordIndex(documents)
    assert index.tf.dtype == np.uint16 and not hasattr(index, "terms")
    expected = np.zeros(len(documents))
    for term in ("repair", "boiler"):
        tid = index.vocabulary.ids[term]
        part = slice(index.indptr[tid], index.indptr[tid + 1])
        expected[index.doc_ids[part]] += index.weights[part]
    assert np.array_equal(index.scores(["repair", "boiler"]), expected)
    assert index.term_counts.terms.tolist() == np.repeat(np.arange(index.n_terms), np.diff(index.indptr)).tolist()


def test_a_warm_start_leaves_the_cached_vectors_in_the_file(write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    cold = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    warm = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert warm.stats()["last_update"]["from_cache"] == 3
    held = warm._caches._vectors.entries
    assert len(held) == 3 and held.matrix.shape == (3, 0)  # keys only
    assert np.array_equal(warm._snapshot.vectors.vectors, cold._snapshot.vectors.vectors)
    for query in ("boiler repair", "咖啡", "🔥"):
        assert [h.id for h in warm.search(query, mode="hybrid")] == [h.id for h in cold.search(query, mode="hybrid")]


def test_a_released_cache_reads_a_wanted_vector_from_its_file_again(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "model|x|4|float32")
    vectors = {VectorCache.key(text): np.arange(4, dtype=np.float32) + i for i, text in enumerate(["a", "é", "🔥"])}
    cache.save(vectors)
    assert cache.entries.matrix.shape == (3, 0)  # saved: the file holds the vectors
    found = cache.vectors_of([VectorCache.key("🔥"), VectorCache.key("missing"), VectorCache.key("a")])
    assert sorted(found) == sorted([VectorCache.key("🔥"), VectorCache.key("a")])
    assert np.array_equal(found.take([VectorCache.key("a"), VectorCache.key("🔥")]), [[0, 1, 2, 3], [2, 3, 4, 5]])
    cache.release_vectors()
    assert cache.vectors_of([VectorCache.key("x")]).rows == {}


def test_an_edited_file_reuses_the_windows_of_its_unchanged_records(write_files: Any, tmp_path: Path) -> None:
    root = write_files(NOTES)
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=False)
    before = {r.id: h for r, h in zip(book._snapshot.records, book._snapshot.vectors.keys)}
    (root / "notes.txt").write_text(NOTES["notes.txt"] + "\n---\nA new note about the 🔥 boiler", encoding="utf-8")
    stats = book.reindex()
    assert stats["last_update"]["embedded"] == 1 and stats["last_update"]["reused"] == 3
    after = dict(zip((r.id for r in book._snapshot.records), book._snapshot.vectors.keys))
    assert all(after[key] == value for key, value in before.items())
    assert [h.id for h in book.search("boiler", mode="semantic", max_results=4)]


TEXTS = {"a.txt": "Author: ana\nالمرجل يعمل الآن 🔥 after the boiler repair\n---\nTags: 修理\n咖啡 and crème brûlée",
         "b.txt": "Date: 2024-05-01\nA note about the garden shed, written long ago.\n---\nAnother about the roof."}


def settled(root: Path) -> Path:
    """Files dated a minute back: the keyword cache stores only sources settled before the read."""
    import os
    import time

    for path in root.rglob("*.txt"):
        os.utime(path, (time.time() - 60, time.time() - 60))
    return root


def test_a_warm_start_reads_record_texts_back_from_the_keyword_cache(write_files: Any, tmp_path: Path) -> None:
    root, cache = settled(write_files(TEXTS)), tmp_path / "cache"
    cold = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    warm = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    records = warm._snapshot.records
    assert records and all(type(r._content) is int for r in records)  # no text held
    assert records == cold._snapshot.records  # every field, the content read back, as read from the files
    assert [r.text for r in records][0] == "المرجل يعمل الآن 🔥 after the boiler repair"
    for query, mode in (("boiler 🔥", "hybrid"), ("咖啡", "keyword"), ("garden shed", "semantic")):
        assert [h.to_dict() for h in warm.search(query, mode=mode)] == [h.to_dict() for h in cold.search(query, mode=mode)]
    assert warm.get("b.txt:1", context=1).to_dict() == cold.get("b.txt:1", context=1).to_dict()
    assert pickle.loads(pickle.dumps(records[1])).content == records[1].content  # travels as text


def test_a_first_build_lets_go_of_its_texts_once_the_keyword_cache_holds_them(write_files: Any,
                                                                               tmp_path: Path) -> None:
    root = settled(write_files(TEXTS))
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "cache")
    records = book._snapshot.records
    assert all(r.stored_in is not None for r in records)  # the save's file holds them now
    assert records == vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=False)._snapshot.records
    none = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=False)
    assert all(r.stored_in is None for r in none._snapshot.records)  # no cache folder: texts are held


def test_texts_read_back_survive_a_later_save_replacing_the_file(write_files: Any, tmp_path: Path) -> None:
    root, cache = settled(write_files(TEXTS)), tmp_path / "cache"
    vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    warm = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    before = {r.id: r.content for r in warm._snapshot.records}
    (root / "b.txt").write_text("Date: 2024-06-01\nThe shed roof leaks. 屋顶漏水\n", encoding="utf-8")
    settled(root)
    warm.reindex()
    warm.close()  # the keyword cache is written again (replaced by a rename)
    (next(cache.glob("keywords-*.vbk"))).unlink()  # and even deleted: the records' file stays readable
    assert {r.id: r.content for r in warm._snapshot.records if r.file_path == "a.txt"} == \
        {key: value for key, value in before.items() if key.startswith("a.txt")}
    assert warm.search("屋顶漏水", mode="keyword")[0].text == "The shed roof leaks. 屋顶漏水"


def test_on_windows_restored_records_hold_their_texts(write_files: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.keyword_cache, "READ_TEXTS_BACK", False)  # a file held open cannot be replaced there
    root, cache = settled(write_files(TEXTS)), tmp_path / "cache"
    cold = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    warm = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert all(r.stored_in is None for r in cold._snapshot.records + warm._snapshot.records)
    assert warm._snapshot.records == cold._snapshot.records


def test_cached_keys_are_found_by_bisection_without_a_dict_of_every_key() -> None:
    from vecbook.key_rows import KeyRows

    keys = [VectorCache.key(text) for text in ["a", "é", "🔥", "修理", "a"]]  # "a" twice: either row
    rows = KeyRows(b"".join(keys))
    found = rows.rows_of([keys[2], VectorCache.key("absent"), keys[0], keys[3]]).tolist()
    assert found[0] == 2 and found[1] == -1 and found[2] in (0, 4) and found[3] == 3
    assert keys[1] in rows and VectorCache.key("absent") not in rows and rows[keys[3]] == 3
    assert list(rows) == keys and len(rows) == 5
    # Keys whose first 8 bytes agree are told apart by the rest.
    twins = [b"\x01" * 8 + b"\x02" * 8, b"\x01" * 8 + b"\x03" * 8]
    assert KeyRows(b"".join(twins)).rows_of([twins[1], twins[0], b"\x01" * 8 + b"\x04" * 8]).tolist() == [1, 0, -1]


MANY = {f"part{p}.txt": "\n---\n".join(f"Author: ana\nNote {p}-{i}: the boiler 修理 café 🔥 number {p * 7 + i}"
                                        + (" and a longer tail of words" * (i % 4)) for i in range(6))
        for p in range(4)}
MANY["dupes.txt"] = "Same text twice\n---\nSame text twice\n---\nA third, longer note: שלום 東京"


class RecordingEmbedder(FakeEmbedder):
    """FakeEmbedder that keeps each batch of texts it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def encode(self, texts: Any) -> Any:
        self.batches.append(list(texts))
        return super().encode(texts)


def test_a_first_build_keeps_what_the_model_made_in_a_file_and_a_warm_start_gets_the_same_index(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vecbook import spill

    made: list[spill.MadeVectors] = []
    real_init = spill.MadeVectors.__init__

    def recording(self: spill.MadeVectors, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(spill.MadeVectors, "__init__", recording)
    root = write_files(MANY)
    held = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "held")
    assert not made[-1].spilled  # a few texts: no file
    monkeypatch.setattr(spill, "SPILL_FROM", 1)
    cold = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "cache")
    assert made[-1].spilled and made[-1]._file.fileno() >= 0 and len(made[-1]) == 26  # a temporary file, not a dict
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("vecbook-made-")]  # unnamed
    warm = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "cache")
    assert warm.stats()["last_update"]["from_cache"] == 26 and warm.stats()["last_update"]["embedded"] == 0
    for other in (held, warm):
        assert other._snapshot.vectors.keys == cold._snapshot.vectors.keys
        assert np.allclose(other._snapshot.vectors.decode(np.arange(27)), cold._snapshot.vectors.decode(np.arange(27)),
                           atol=1e-6, rtol=0)
    for query in ("boiler 修理", "שלום 東京", "🔥 longer tail"):
        assert [h.to_dict() for h in warm.search(query, mode="hybrid")] == \
            [h.to_dict() for h in cold.search(query, mode="hybrid")]


def test_what_the_model_made_is_found_by_key_without_a_table_of_python_objects(tmp_path: Path) -> None:
    """A first build's made vectors are looked up through their keys joined and sorted once: a
    dict of every key held ~140 MB to the end of a first build of a million records."""
    import hashlib
    import tracemalloc

    from vecbook import spill

    keys = [hashlib.blake2b(str(i).encode(), digest_size=16).digest() for i in range(100_000)]
    vectors = np.arange(len(keys) * 4, dtype=np.float32).reshape(-1, 4)
    made = spill.MadeVectors(len(keys), tmp_path)
    tracemalloc.start()
    try:
        for start in range(0, len(keys), 64):  # as a build adds them, EMBED_CHUNK at a time
            made.add(dict(zip(keys[start:start + 64], vectors[start:start + 64])))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert made.spilled and len(made) == len(keys)
    assert held < 4 * 2 ** 20  # the keys joined: 1.6 MB (a dict of them: 8 MB more)
    picked = [keys[i] for i in (99_999, 0, 512, 512)]
    assert np.array_equal(made.take(picked), vectors[[99_999, 0, 512, 512]])
    assert keys[7] in made and b"x" * 16 not in made and list(made)[:2] == keys[:2]
    assert made.rows_of(b"".join([keys[3], b"y" * 16])).tolist() == [3, -1]
    made.add({keys[3]: np.full(4, -1, dtype=np.float32)})  # the same text again keeps its first vector
    assert np.array_equal(made[keys[3]], vectors[3])
    with pytest.raises(KeyError):
        made.take([b"z" * 16])


def test_the_windows_cut_for_every_record_are_held_packed(write_files: Any) -> None:
    """A first build cuts every record into model windows before it embeds: each record's
    windows and keys are held as one bytes object until they are laid out by source (lists of
    tuples, ints and keys took ~535 bytes a record, ~0.5 GB at a million)."""
    import tracemalloc

    from vecbook.vector_files import SplitPassages

    notes = "\n---\n".join(f"Note {i}: the boiler 修理 at שלום street, visit {i} 🔥" for i in range(3000))
    book = vecbook.VecBook(write_files({"notes.txt": notes}), embedder=FakeEmbedder(), cache_directory=False)
    records = book._snapshot.records
    todo = [(record, np.array([[0, len(record.content)]], dtype=np.int32)) for record in records]
    for record in records:
        record.content  # read back before counting: not what the windows hold
    tracemalloc.start()
    try:
        made, _, cut = book._builder._window(todo, lambda keys: np.zeros(len(keys), dtype=bool), [SplitPassages()])
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(made) == len(records) == 3000 and not cut
    assert held / len(records) < 250  # lists of tuples, ints and keys: ~420
    index = book._snapshot.vectors
    assert b"".join(packed[:16] for packed in made) == index.joined_keys  # the windows the index holds
    assert index.spans.tolist() == [[0, len(record.content)] for record in records]


def test_the_model_gets_each_distinct_text_once_shortest_first_in_chunks(write_files: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from vecbook import build

    monkeypatch.setattr(build, "EMBED_CHUNK", 4)
    embedder = RecordingEmbedder()
    book = vecbook.VecBook(write_files(MANY), embedder=embedder, cache_directory=False)
    texts = [text for batch in embedder.batches for text in batch]
    assert all(len(batch) <= 4 for batch in embedder.batches)
    assert sorted(texts) == sorted({r.content for r in book._snapshot.records})  # each text once
    assert [len(t) for t in texts] == sorted(len(t) for t in texts)
    assert book.stats()["last_update"]["embedded"] == 26 and book.stats()["records_embedded"] == 27
    assert book.search("Same text twice", mode="semantic", max_results=2, dedupe=False)[1].text == "Same text twice"


def test_a_one_file_update_reads_and_embeds_only_its_new_text_and_finds_it_by_keyword_and_meaning(
        write_files: Any, tmp_path: Path) -> None:
    root, embedder = settled(write_files(MANY)), RecordingEmbedder()
    book = vecbook.VecBook(root, embedder=embedder, cache_directory=tmp_path / "cache")
    embedder.batches.clear()
    with open(root / "part2.txt", "a", encoding="utf-8") as handle:
        handle.write("\n---\nA quokka fixed the lighthouse 灯台 with a blue umbrella ☂️")
    update = book.reindex()["last_update"]
    assert (update["files_read"], update["embedded"], update["records"]) == (1, 1, 28)
    assert embedder.batches == [["A quokka fixed the lighthouse 灯台 with a blue umbrella ☂️"]]
    assert book.stats()["cache"] == {"path": str(next((tmp_path / "cache").glob("*.vbc"))), "entries": 27,
                                     "reused": 26, "embedded": 1, "pruned": 0}
    assert book.search("quokka 灯台", mode="keyword")[0].text.startswith("A quokka")
    assert book.search("quokka lighthouse umbrella", mode="semantic")[0].text.startswith("A quokka")


def test_the_cache_stats_count_distinct_keys_and_those_the_cache_holds() -> None:
    from vecbook.key_rows import KeyRows

    def keys(*names: str) -> bytes:
        return b"".join(VectorCache.key(name) for name in names)

    live = KeyRows(keys("a", "é", "a", "🔥", "東京", "é"))
    assert live.overlap(KeyRows(keys("a", "🔥", "gone"))) == (4, 2)
    assert live.overlap(KeyRows(b"")) == (4, 0) and KeyRows(b"").overlap(live) == (0, 0)
    twins = KeyRows(b"\x01" * 8 + b"\x02" * 8 + b"\x01" * 8 + b"\x03" * 8 + b"\x01" * 8 + b"\x02" * 8)
    assert twins.overlap(KeyRows(b"\x01" * 8 + b"\x03" * 8)) == (2, 1)  # the same first 8 bytes, apart
