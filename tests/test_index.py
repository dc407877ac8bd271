"""The indexes: BM25 postings equal rank-bm25's scores; FAISS top-k equals exact subset scoring."""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

import vecbook
from conftest import SAMPLES, FakeEmbedder
from vecbook.tokens import Analysis, Vocabulary, tokenize


def sample_corpus() -> list[list[str]]:
    records = []
    for path in sorted(SAMPLES.rglob("*.txt")):
        records += vecbook.parse_records(path.read_text(encoding="utf-8"), path.name)[0]
    return [vecbook.tokens.tokenize(r.content) for r in records]


QUERIES = ["rice kimchi", "the meeting about the outage outage", "Kahneman thinking fast", "zzz unknown",
           "a", "book book book", "budget holiday 2024", "work"]


@pytest.mark.parametrize("k1, b", [(1.5, 0.75), (1.2, 0.75), (0.9, 0.4)])
def test_keyword_scores_equal_rank_bm25(k1: float, b: float) -> None:
    corpus = sample_corpus()
    reference = BM25Okapi(corpus, k1=k1, b=b)
    index = vecbook.index.KeywordIndex(corpus, k1=k1, b=b, idf="okapi")
    for query in QUERIES:
        tokens = vecbook.tokens.tokenize(query)
        np.testing.assert_allclose(index.scores(tokens), reference.get_scores(tokens), rtol=1e-12, atol=1e-12)


def test_default_idf_is_rank_bm25_with_lucene_smoothed_idf() -> None:
    corpus = sample_corpus()
    reference = BM25Okapi(corpus, k1=1.2, b=0.75)
    n = len(corpus)
    reference.idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5))
                     for t, df in Counter(t for doc in corpus for t in set(doc)).items()}
    index = vecbook.index.KeywordIndex(corpus, k1=1.2, b=0.75)
    for query in QUERIES:
        tokens = vecbook.tokens.tokenize(query)
        np.testing.assert_allclose(index.scores(tokens), reference.get_scores(tokens), rtol=1e-12, atol=1e-12)


def test_scores_are_the_per_term_sums_and_records_their_best_passage_bit_for_bit() -> None:
    """The postings are summed in one bincount and records take a maximum by gather: the same
    additions in the same order, and the same maxima, as the straightforward loops."""
    corpus = sample_corpus()
    owners = np.arange(len(corpus)) * 2 // 3  # records of one passage and of two: 0, 0, 1, 2, 2, 3...
    index = vecbook.index.KeywordIndex(corpus, owners=owners)
    for query in QUERIES:
        tokens = vecbook.tokens.tokenize(query)
        expected = np.zeros(len(corpus))
        for term, repeat in Counter(tokens).items():
            tid = index._term(term)
            if tid is not None:
                start, end = index.indptr[tid], index.indptr[tid + 1]
                expected[index.doc_ids[start:end]] += repeat * index.weights[start:end]
        assert index.scores(tokens).tobytes() == expected.tobytes()
        starts = np.searchsorted(owners, np.arange(index.size))
        assert index.record_scores(tokens).tobytes() == np.maximum.reduceat(expected, starts).tobytes()


def test_a_word_in_half_the_documents_still_scores() -> None:
    corpus = [["kayak", "paddle"], ["grocery", "list"]]
    assert BM25Okapi(corpus).get_scores(["kayak"]).tolist() == [0.0, 0.0]  # rank-bm25 issue #39
    scores = vecbook.index.KeywordIndex(corpus).scores(["kayak"])
    assert scores[0] > 0 and scores[1] == 0


def test_keyword_scores_stay_below_the_upper_bound() -> None:
    corpus = sample_corpus()
    index = vecbook.index.KeywordIndex(corpus)
    for doc in corpus[:20]:
        tokens = doc[:5]
        assert index.scores(tokens).max() < index.upper_bound(tokens)


def test_keyword_index_handles_empty_corpora_and_documents() -> None:
    assert vecbook.index.KeywordIndex([]).scores(["x"]).shape == (0,)
    index = vecbook.index.KeywordIndex([[], ["apple"], ["apple", "pear"]])
    scores = index.scores(["pear"])
    assert scores[0] == 0 and scores[1] == 0 and scores[2] > 0


def random_index(metric: str, windows_per_record: list[int], seed: int = 0) -> vecbook.index.VectorIndex:
    rng = np.random.default_rng(seed)
    owners = np.repeat(np.arange(len(windows_per_record)), windows_per_record)
    vectors = rng.normal(size=(len(owners), 16)).astype(np.float32)
    return vecbook.index.VectorIndex(vectors, owners, len(windows_per_record), metric)


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_faiss_top_k_equals_exact_scores_with_best_window_per_record(metric: str) -> None:
    windows = [1, 3, 1, 7, 2, 1, 1, 4, 1, 1] * 5
    index = random_index(metric, windows)
    query = np.random.default_rng(1).normal(size=16).astype(np.float32)
    everything = np.ones(len(windows), dtype=bool)
    exact_ids, exact_scores = index.scores_within(query, everything)
    order = np.argsort(-exact_scores, kind="stable")
    for k in (1, 5, 20, len(windows)):
        ids, scores = index.top(query, k)
        assert list(ids) == list(exact_ids[order][:k])
        np.testing.assert_allclose(scores, exact_scores[order][:k], rtol=1e-5)
        assert len(set(ids.tolist())) == len(ids)  # one entry per record
        assert np.all((scores >= 0) & (scores <= 1))


def test_a_record_whose_windows_crowd_the_first_found_still_leaves_k_records() -> None:
    """A long record close to the query fills the first windows FAISS finds, so the first
    (shallow) search holds fewer than k records and the search goes deeper."""
    rng = np.random.default_rng(5)
    query = rng.normal(size=16).astype(np.float32)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors[10:60] = query + 0.01 * rng.normal(size=(50, 16))  # record 10's 50 windows
    owners = np.concatenate([np.arange(10), np.full(50, 10), np.arange(11, 251)])
    index = vecbook.index.VectorIndex(vectors, owners, 251)
    exact_ids, exact_scores = index.scores_within(query, np.ones(251, dtype=bool))
    order = np.lexsort((exact_ids, -exact_scores))
    for k in (1, 2, 5, 20, 40):
        ids, scores = index.top(query, k)
        assert ids.tolist() == exact_ids[order][:k].tolist()
        np.testing.assert_allclose(scores, exact_scores[order][:k], rtol=1e-5)


def test_one_query_searches_on_the_calling_thread_and_keeps_its_team_size() -> None:
    import faiss

    index = random_index("cosine", [1, 2, 1, 3] * 50)
    query = index._prepare(np.random.default_rng(2).normal(size=16).astype(np.float32))
    before = faiss.omp_get_max_threads()
    raw, rows = vecbook.index.search_on_this_thread(index.index, query, 40)
    expected_raw, expected_rows = index.index.search(query, 40)
    assert rows.tolist() == expected_rows.tolist() and raw.tolist() == expected_raw.tolist()
    assert faiss.omp_get_max_threads() == before  # batch searches and indexing keep every core


def test_scores_of_records_and_best_row_equal_the_mask_and_every_window_paths() -> None:
    windows = [1, 3, 1, 7, 2, 1, 1, 4, 1, 1] * 5
    index = random_index("cosine", windows)
    query = np.random.default_rng(4).normal(size=16).astype(np.float32)
    for records in ([], [0], [1, 3, 4], [3], list(range(0, 50, 3)), list(range(50))):
        mask = np.zeros(len(windows), dtype=bool)
        mask[records] = True
        by_mask = index.scores_within(query, mask)
        by_records = index.scores_of(query, np.array(records, dtype=np.int64))
        assert by_records[0].tolist() == by_mask[0].tolist() and by_records[1].tolist() == by_mask[1].tolist()
    best = index.best_rows(query, range(len(windows)))
    assert {r: index.best_row(query, r) for r in range(len(windows))} == {r: row for r, (row, _) in best.items()}
    assert random_index("cosine", [1, 0, 2]).best_row(query, 1) is None  # a record without windows


def test_duplicate_records_tie_and_are_cut_by_record_order() -> None:
    """Forty identical messages ("ok") score the same; which ten come back must not depend on k or FAISS."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(200, 16)).astype(np.float32)
    duplicates = np.arange(30, 190, 4)  # 40 records, interleaved with others
    vectors[duplicates] = vectors[0]
    index = vecbook.index.VectorIndex(vectors, np.arange(200), 200)
    tied = sorted([0, *duplicates.tolist()])
    everything_but_one = np.arange(200) != 7
    for k in (1, 10, 41, 60):
        for mask in (None, everything_but_one):  # FAISS search, and exact scoring of a filtered subset
            ids, scores = index.top(vectors[0], k, mask)
            assert ids[:min(k, 41)].tolist() == tied[:min(k, 41)]
            assert np.all(np.diff(scores) <= 0)


def test_masked_top_k_returns_every_match_when_matches_are_rare() -> None:
    index = random_index("cosine", [1] * 5000)
    mask = np.zeros(5000, dtype=bool)
    mask[[17, 4242]] = True
    ids, _ = index.top(np.ones(16, dtype=np.float32), 10, mask)
    assert sorted(ids.tolist()) == [17, 4242]


def test_records_without_vectors_are_left_out_not_misattributed() -> None:
    owners = np.array([0, 2, 2])  # record 1 failed to embed
    vectors = np.eye(3, 4, dtype=np.float32)
    index = vecbook.index.VectorIndex(vectors, owners, 3)
    ids, _ = index.top(np.array([0, 1, 0, 0], dtype=np.float32), 3)
    assert sorted(ids.tolist()) == [0, 2] and not index.embedded[1]


def test_cosine_score_formula() -> None:
    index = vecbook.index.VectorIndex(np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32), np.arange(3), 3)
    ids, scores = index.top(np.array([2.0, 0.0], dtype=np.float32), 3)
    assert ids.tolist() == [0, 1, 2]
    np.testing.assert_allclose(scores, [1.0, 0.5, 0.0], atol=1e-6)


def test_tokenizer_lowercases_drops_stop_words_and_stems() -> None:
    assert vecbook.tokens.tokenize("The Runners were RUNNING to the café!") == ["runner", "were", "run", "cafe"]
    assert vecbook.tokens.tokenize("The Runners", stemming=False) == ["runners"]
    assert vecbook.tokens.tokenize("id_42 x-ray") == ["id", "42", "x", "rai"]


def test_query_vectors_are_cached_per_embedder_and_bounded() -> None:
    class Counting(vecbook.Embedder):
        calls = 0

        def encode(self, texts: Any, threads: int | None = None, query: bool = False) -> np.ndarray:
            Counting.calls += len(texts)
            return np.ones((len(texts), 4), dtype=np.float32)

    embedder = Counting("counting")
    first = embedder.encode_query("where is the boiler manual")
    assert embedder.encode_query("where is the boiler manual") is first and Counting.calls == 1
    with pytest.raises(ValueError):
        first[0] = 2.0  # shared between callers, so read-only
    for i in range(vecbook.embed.QUERY_CACHE_SIZE + 10):
        embedder.encode_query(f"question {i}")
    assert len(embedder._query_cache) == vecbook.embed.QUERY_CACHE_SIZE
    assert Counting("other").encode_query("where is the boiler manual") is not first  # not shared across models


@given(st.lists(st.text(alphabet=st.sampled_from(list("abcdeilnorstuyéß ÄIN.,'-0123456789\n")), max_size=60),
                max_size=8), st.booleans())
def test_vocabulary_encodes_text_as_tokenize_then_encode(texts: list[str], stemming: bool) -> None:
    """The one-lookup-per-word path gives the ids, and assigns them in the order, that
    tokenizing and then encoding would."""
    direct, fast = Vocabulary(), Vocabulary()
    for text in texts + texts:
        assert fast.encode_text(text, Analysis(stemming=stemming)).tolist() == \
               direct.encode(tokenize(text, stemming)).tolist()
    assert fast.ids == direct.ids


@given(st.text(alphabet=st.sampled_from(list("abzAZ09_-.,' \n\tKéß\u212a\u0130") + [chr(i) for i in range(32, 127)])))
def test_the_ascii_word_path_finds_the_words_the_unicode_pattern_finds(text: str) -> None:
    # U+212A (Kelvin) and U+0130 lower-case to ASCII-containing text: the path is chosen
    # on the lower-cased text, so it still agrees.
    assert vecbook.tokens.words_of(text) == vecbook.tokens.words(text.lower())


@given(st.lists(st.text(alphabet=st.sampled_from(list("abzAZ09_-.,' \n\tKéßΣσς\x00\u212a\u0130")
                                                + [chr(i) for i in range(32, 127)])), max_size=8),
       st.booleans())
def test_texts_tokenized_together_get_the_ids_each_text_alone_would(texts: list[str], stemming: bool) -> None:
    # Together: joined around a NUL, lower-cased once, cut by bytes.translate (ASCII) or the
    # Unicode pattern; a text holding a NUL sends all of them one by one.
    together, alone = Vocabulary(), Vocabulary()
    analysis = Analysis(stemming=stemming)
    assert [ids.tolist() for ids in together.encode_texts(texts, analysis)] == \
           [alone.encode_text(text, analysis).tolist() for text in texts]
    assert together.ids == alone.ids


def test_texts_tokenized_together_are_joined_a_few_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.tokens, "JOINED_CHARS", 20)  # forces several joins for these texts
    texts = ["Walrus tusks", "ivory and walruses", "", "Σίσυφος", "the end of it"] * 3
    together, alone = Vocabulary(), Vocabulary()
    assert [ids.tolist() for ids in together.encode_texts(texts)] == [alone.encode_text(t).tolist() for t in texts]
    assert together.ids == alone.ids


def keyword_index_equals(a: vecbook.index.KeywordIndex, b: vecbook.index.KeywordIndex) -> None:
    for name in ("doc_ids", "tf", "indptr", "lengths", "owners"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.idf, b.idf, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("idf", ["lucene", "okapi"])
@pytest.mark.parametrize("block", [1 << 22, 7])  # postings copied in one block, and in many
def test_an_updated_keyword_index_equals_one_built_from_scratch(idf: str, block: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.keyword_counts, "MERGE_BLOCK", block)
    vocabulary = vecbook.tokens.Vocabulary()
    corpus = [vocabulary.encode(doc) for doc in sample_corpus()]
    first = vecbook.index.KeywordIndex(corpus, idf=idf, vocabulary=vocabulary)
    # Edit passage 3, delete 5 and 6, add two at the end (one with a new term), move 0 behind 1.
    edited = vocabulary.encode(["rice", "kimchi", "brandnewterm"])
    order = [1, 0, 2, 3, 4] + list(range(7, len(corpus)))
    documents = [edited if i == 3 else corpus[i] for i in order]
    documents += [vocabulary.encode(["outage", "outage", "zebra"]), corpus[8]]
    source = np.array([-1 if i == 3 else i for i in order] + [-1, -1])
    for docs, src in ((documents, source), (documents[1:], source[1:])):  # moved, and in order
        owners = np.arange(len(docs)) // 2  # two passages a record
        updated = vecbook.index.KeywordIndex(docs, idf=idf, vocabulary=vocabulary, owners=owners,
                                             reuse=(first.term_counts, src))
        scratch = vecbook.index.KeywordIndex(docs, idf=idf, vocabulary=vocabulary, owners=owners)
        keyword_index_equals(updated, scratch)
        for query in QUERIES + ["brandnewterm zebra rice"]:
            tokens = vecbook.tokens.tokenize(query)
            np.testing.assert_array_equal(updated.scores(tokens), scratch.scores(tokens))


@pytest.mark.parametrize("block", [1, 5, 23])
def test_pairs_counted_a_block_of_tokens_at_a_time_give_the_same_index(block: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    vocabulary = vecbook.tokens.Vocabulary()
    corpus = [vocabulary.encode(doc) for doc in sample_corpus()] + [vocabulary.encode([]),
                                                                    vocabulary.encode(["咖啡", "café", "🔥", "café"])]
    whole = vecbook.index.KeywordIndex(corpus, vocabulary=vocabulary)
    monkeypatch.setattr(vecbook.index, "COUNT_BLOCK", block)
    blocked = vecbook.index.KeywordIndex(corpus, vocabulary=vocabulary)
    keyword_index_equals(blocked, whole)
    assert whole.indptr[-1] == sum(len(set(d.tolist())) for d in corpus)  # one posting a distinct term and passage


def test_incremental_builds_keep_the_keyword_index_equal_to_a_fresh_build(write_files: Any) -> None:
    files = {"a.txt": "apple pie\n---\nbanana split\n---\ncherry tart", "b.txt": "durian\n---\nelderberry wine"}
    root = write_files(files)
    config = vecbook.config.config_without_file(data_directory=root)
    builder = vecbook.build.Builder(config, FakeEmbedder())
    builder.keyword_snapshot(builder.read())
    for name, text in (("a.txt", "apple pie\n---\nbanana boat\n---\ncherry tart\n---\nfig roll"),
                       ("b.txt", "elderberry wine"), ("c.txt", "apple pie\n---\ngrape")):
        (root / name).write_text(text, encoding="utf-8")
        os.utime(root / name, (time.time() + 10, time.time() + 10))  # seen as changed within the second
        report = builder.read()
        updated = builder.keyword_snapshot(report).keywords
        passages = [r.content[a:b] for r in report.records for a, b in vecbook.records.split_passages(r.content)]
        tokens = builder.vocabulary.encode_texts(passages)  # every passage tokenized afresh
        assert all(builder.blocks[key].tokens is None for key, _ in report.blocks)  # counted, then let go
        fresh = vecbook.index.KeywordIndex(tokens,
                                           config.bm25_k1, config.bm25_b, vocabulary=builder.vocabulary,
                                           owners=updated.owners)
        keyword_index_equals(updated, fresh)


def test_a_word_whose_every_record_was_deleted_scores_as_in_a_fresh_build(write_files: Any, fake_book: Any) -> None:
    root = write_files({"a.txt": "Hotel near the old town, breakfast included.", "b.txt": "Hotel near the port."})
    book = fake_book(root, cache_directory=False)
    (root / "a.txt").unlink()
    book.reindex()
    # "breakfast" stays in the vocabulary (ids never change) but no passage holds it now: it
    # must not count in the score's upper bound, as it does not in a build that never saw it.
    for query in ("breakfast hotel", "breakfast"):
        updated = [h.to_dict() for h in book.search(query, mode="keyword")]
        assert updated == [h.to_dict() for h in fake_book(root, cache_directory=False).search(query, mode="keyword")]


def test_a_build_pauses_the_garbage_collector_and_restores_it_as_it_was(write_files: Any, fake_book: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    seen = []
    read = vecbook.build.Builder.read

    def recording_read(self: Any) -> Any:
        seen.append(gc.isenabled())
        return read(self)

    monkeypatch.setattr(vecbook.build.Builder, "read", recording_read)
    root = write_files({"a.txt": "Hotel near the old town."})
    was = gc.isenabled()
    try:
        gc.enable()
        fake_book(root, cache_directory=False)
        assert seen == [False] and gc.isenabled()
        gc.disable()  # a host that runs with the collector off keeps it off
        fake_book(root, cache_directory=False)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()


def test_overlapping_pauses_turn_the_collector_back_on_only_when_the_last_ends() -> None:
    import gc

    was = gc.isenabled()
    gc.enable()
    try:
        first, second = vecbook.exports.base.collector_paused(), vecbook.exports.base.collector_paused()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)  # two builds in threads need not end in order
        assert not gc.isenabled()
        second.__exit__(None, None, None)
        assert gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()


def test_a_build_that_fails_while_reading_turns_the_collector_back_on(write_files: Any, fake_book: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    root = write_files({"a.txt": "Hotel near the old town."})
    book = fake_book(root, cache_directory=False)

    def failing_read(self: Any) -> Any:
        raise OSError("disk gone")

    monkeypatch.setattr(vecbook.build.Builder, "read", failing_read)
    was = gc.isenabled()
    gc.enable()
    try:
        with pytest.raises(OSError):
            book.reindex()
        assert gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()


def clustered_vectors(rows: int, dim: int = 32, clusters: int = 40, seed: int = 9) -> np.ndarray:
    """Vectors in clusters, as a text model's are (topics), not spread evenly over the sphere."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    return (centres[rng.integers(0, clusters, rows)] + 0.35 * rng.normal(size=(rows, dim))).astype(np.float32)


@pytest.fixture()
def approximate_from_400(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quantized scans from 400 windows on, rescoring only 30 of its best rows, so small
    indexes exercise the approximate search."""
    monkeypatch.setattr(vecbook.vector_index, "APPROXIMATE_FROM", 400)
    monkeypatch.setattr(vecbook.vector_index, "RESCORED", 30)


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_a_large_index_scans_quantized_rows_and_scores_its_candidates_exactly(approximate_from_400: None,
                                                                              metric: str) -> None:
    vectors = clustered_vectors(3000)
    index = scanned(vecbook.index.VectorIndex(vectors, np.arange(3000), 3000, metric))
    assert index.store is not None and index.store.scan is not None and "PQFastScan" in index.index_type
    rng = np.random.default_rng(10)
    queries = vectors[rng.integers(0, 3000, 60)] + 0.3 * rng.normal(size=(60, 32)).astype(np.float32)  # near the topics
    found = []
    for query in queries:
        exact_ids, exact_scores = index.top(query, 10, exact=True)
        ids, scores = index.top(query, 10)
        found.append(len(set(ids.tolist()) & set(exact_ids.tolist())) / 10)
        # Every score returned is the record's exact score, whatever the scan ranked.
        every = dict(zip(*index.scores_within(query, np.ones(3000, dtype=bool))))
        np.testing.assert_allclose(scores, [every[i] for i in ids.tolist()], rtol=1e-6)
    assert np.mean(found) >= 0.95
    for row in (0, 17, 2999):  # a record's own vector finds it first
        assert index.top(vectors[row], 1)[0].tolist() == [row]


def scanned(index: vecbook.index.VectorIndex) -> vecbook.index.VectorIndex:
    """``index`` once the background thread has set its store's scan."""
    assert index.store is not None and index.store.wait_for_scan(60) and index.store.scan is not None
    return index


def test_a_small_index_is_searched_exactly_without_a_store() -> None:
    index = vecbook.index.VectorIndex(clustered_vectors(300), np.arange(300), 300)
    assert index.store is None and index.index_type == "IndexScalarQuantizer (float16)"


def test_a_filter_asks_the_scan_for_more_candidates_so_its_matches_are_still_found(approximate_from_400: None,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered_vectors(3000)
    index = scanned(vecbook.index.VectorIndex(vectors, np.arange(3000), 3000))
    monkeypatch.setattr(vecbook.vector_index, "EXACT_SUBSET", 10)  # the filters below go through the scan
    query = vectors[5] + 0.2
    for share in (0.02, 0.5):
        mask = np.random.default_rng(3).random(3000) < share
        ids, _ = index.top(query, 10, mask)
        exact_ids, _ = top_k_exact(index, query, mask)
        assert mask[ids].all() and len(set(ids.tolist()) & set(exact_ids.tolist())) >= 9


def top_k_exact(index: vecbook.index.VectorIndex, query: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return vecbook.index.top_k(*index.scores_within(query, mask), 10)


def updated(previous: vecbook.index.VectorIndex, source: np.ndarray, added: np.ndarray) -> vecbook.index.VectorIndex:
    """The next index over ``previous``'s rows ``source`` (-1: the next row of ``added``)."""
    encoded = vecbook.index.encode_vectors(added, "cosine")
    fresh = np.flatnonzero(source < 0)
    return vecbook.index.VectorIndex.updated(previous, np.arange(len(source)), len(source), "cosine", None, [], {},
                                             added.shape[1], source,
                                             lambda rows: encoded[np.searchsorted(fresh, rows)])


def test_an_update_keeps_the_store_and_puts_new_rows_beside_it_until_they_pass_a_share(
        approximate_from_400: None, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered_vectors(3000)
    first = scanned(vecbook.index.VectorIndex(vectors, np.arange(3000), 3000))
    added = clustered_vectors(5, seed=12)
    # The next index: rows 10.. of the first (rows 0-9 deleted), then five new rows.
    second = updated(first, np.concatenate([np.arange(10, 3000), np.full(5, -1)]), added)
    assert second.store is first.store  # nothing copied, nothing trained: the new rows are its delta
    assert len(second.delta) == 5 and len(second.vectors) == 2995
    assert second.top(added[2], 1)[0].tolist() == [2992]  # a new row is found
    assert second.top(vectors[5], 1)[0].tolist() != [5 - 10]  # a deleted row is not
    np.testing.assert_array_equal(second.vectors[:2990], first.vectors[10:])
    # Another update carries the delta's rows over, and still no new store.
    third = updated(second, np.concatenate([np.arange(2995), np.full(1, -1)]), clustered_vectors(1, seed=14))
    assert third.store is first.store and len(third.delta) == 6
    assert third.top(added[2], 1)[0].tolist() == [2992]
    # Past MERGE_ROWS new and unreferenced rows, the rows are gathered into a new store.
    monkeypatch.setattr(vecbook.vector_index, "MERGE_ROWS", 12)
    monkeypatch.setattr(vecbook.vector_index, "MERGE_SHARE", 0.0)
    fourth = scanned(updated(third, np.arange(2996), np.zeros((0, 32), dtype=np.float32)))
    assert fourth.store is not first.store and len(fourth.store) == 2996 and len(fourth.delta) == 0
    np.testing.assert_array_equal(fourth.vectors[:], third.vectors[:])
    assert fourth.top(added[2], 1)[0].tolist() == [2992]


def test_a_window_is_found_by_the_hash_of_its_text() -> None:
    texts = ["boiler", "café crème", "修理", "🔥", "boiler"]  # the same text twice: either row holds its vector
    keys = [vecbook.vector_cache.VectorCache.key(t) for t in texts]
    index = vecbook.index.VectorIndex(np.eye(5, 4, dtype=np.float32), np.arange(5), 5, keys=keys)
    assert [index.row_of(k) for k in keys[:4]] == [0, 1, 2, 3] and index.row_of(keys[4]) in (0, 4)
    assert index.row_of(vecbook.vector_cache.VectorCache.key("absent")) is None
    assert index.owners.dtype == np.int32 and index.spans.dtype == np.int32


def test_vectors_without_clusters_keep_their_recall_through_the_scan(approximate_from_400: None) -> None:
    """Rows spread evenly over the sphere (the hardest case for a quantizer, unlike a text
    model's topics) still find their exact nearest 10 through the scan and the rescoring."""
    rng = np.random.default_rng(21)
    vectors = rng.normal(size=(3000, 32)).astype(np.float32)
    index = scanned(vecbook.index.VectorIndex(vectors, np.arange(3000), 3000))
    queries = vectors[rng.integers(0, 3000, 40)] + 0.1 * rng.normal(size=(40, 32)).astype(np.float32)
    found = [len(set(index.top(q, 10)[0].tolist()) & set(index.top(q, 10, exact=True)[0].tolist())) / 10
             for q in queries]
    assert np.mean(found) >= 0.95
