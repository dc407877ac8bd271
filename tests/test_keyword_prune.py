"""Keyword search's top k without scoring every passage (vecbook.keyword_prune): the records,
their order and their scores are exactly those of a full search, whatever the corpus, query,
filter mask, k, or an index layered by updates; snippets score their hits' passages alone. Where
every passage is scored (hybrid search), the top k is found among the passages above a cut,
without every record's best, with the same records, order and scores."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vecbook import keyword_prune, rank
from vecbook.index import KeywordIndex
from vecbook.keyword_prune import PassageScores, top_of_scores, top_records
from vecbook.rank import keyword_top
from vecbook.tokens import Vocabulary
from vecbook.vector_index import top_k

# Words of several scripts (CJK, accents, right-to-left, emoji), common ones first: a corpus
# draws them Zipf-like, so a query mixes words in most passages with rare ones.
WORDS = ["the", "rice", "咖啡", "café", "🔥", "שלום", "東京", "naïve", "مرحبا", "🙂", "quokka", "lighthouse",
         "umbrella", "kimchi", "outage", "budget", "ferry", "tax", "violin", "moss"]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(WORDS))]


def random_corpus(rng: random.Random, passages: int) -> tuple[list[list[str]], np.ndarray]:
    """Passages (some repeated word for word, so scores tie) and their records (1-3 passages each)."""
    pool = [rng.choices(WORDS, WEIGHTS, k=rng.randint(0, 12)) for _ in range(max(passages // 3, 1))]
    documents = [list(rng.choice(pool)) if rng.random() < 0.4 else rng.choices(WORDS, WEIGHTS, k=rng.randint(0, 12))
                 for _ in range(passages)]
    owners, record = [], 0
    while len(owners) < passages:
        owners.extend([record] * min(rng.randint(1, 3), passages - len(owners)))
        record += 1
    return documents, np.array(owners, dtype=np.int64)


def random_query(rng: random.Random) -> list[str]:
    """1-7 tokens, repeats and words no passage holds included."""
    return [rng.choice(WORDS + ["absent", "不在"]) for _ in range(rng.randint(1, 7))]


def full_top(index: KeywordIndex, tokens: list[str], k: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The top k of every record's best passage (the search before pruning), on keyword_top's scale."""
    best = index.record_scores(tokens)
    ids = np.flatnonzero((best > 0) & (True if mask is None else mask))
    top_ids, top_scores = top_k(ids, best[ids], k)
    bound = index.upper_bound(tokens)
    return top_ids, top_scores / (bound if bound > 0 else 1.0)


def assert_same_top(index: KeywordIndex, tokens: list[str], k: int, mask: np.ndarray | None) -> bool:
    """The pruned top k equals the full one bit for bit, as top_records gives it and as the path
    search takes (keyword_top) gives it; whether pruning answered. top_records runs once, inside
    keyword_top (a second run of its own was half this file's time), and its answer is kept."""
    answers: list[tuple[np.ndarray, np.ndarray] | None] = []

    def kept(*args: Any) -> tuple[np.ndarray, np.ndarray] | None:
        answers.append(top_records(*args))
        return answers[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rank, "top_records", kept)
        top_ids, top_scores, _ = keyword_top(index, tokens, k, mask, every=False)  # the path search takes
    if not answers:  # keyword_top asks no pruning where no query term is indexed: nor would it answer
        answers.append(top_records(index, tokens, k, mask))
    [pruned] = answers
    ids, scores = full_top(index, tokens, k, mask)
    if pruned is not None:
        np.testing.assert_array_equal(pruned[0], ids)
        np.testing.assert_array_equal(pruned[1] / index.upper_bound(tokens), scores)
    np.testing.assert_array_equal(top_ids, ids)
    np.testing.assert_array_equal(top_scores, scores)
    return pruned is not None


@pytest.fixture
def every_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pruning answers however few postings a query reads and however many passages it scores,
    in small rounds (so several of them)."""
    monkeypatch.setattr(keyword_prune, "PRUNE_FROM", 0)
    monkeypatch.setattr(keyword_prune, "MAX_SHARE", float("inf"))
    monkeypatch.setattr(keyword_prune, "SEED_FACTOR", 1)
    monkeypatch.setattr(keyword_prune, "GROWTH", 2)


# 30 corpora of 6 queries each: 180 comparisons with the full scoring a run (the suite's slowest
# test at 60, 31 s on a loaded 2-core machine, against its 10-minute budget).
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 5, 10, 100, 10_000]), st.booleans(), st.booleans())
def test_the_pruned_top_k_is_the_full_top_k(seed: int, k: int, masked: bool, split: bool) -> None:
    rng = random.Random(seed)
    documents, owners = random_corpus(rng, rng.randint(1, 400))
    index = KeywordIndex(documents, owners=owners)
    mask = np.array([rng.random() < 0.5 for _ in range(index.size)]) if masked else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyword_prune, "PRUNE_FROM", 0)
        patch.setattr(keyword_prune, "MAX_SHARE", float("inf"))
        patch.setattr(keyword_prune, "SEED_FACTOR", rng.choice([1, 4]))
        patch.setattr(keyword_prune, "GROWTH", 2)
        patch.setattr(keyword_prune, "SPLIT_TERMS", 8 if split else 0)
        patch.setattr(keyword_prune, "FIRST_SCORED", rng.choice([1, 4]))
        for _ in range(6):
            query = random_query(rng)
            # Pruning answers every query holding an indexed word here (no share limit).
            assert assert_same_top(index, query, k, mask) == bool(index.postings_of(query))


def test_pruning_leaves_out_passages_and_still_finds_the_full_top(every_round: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    documents, owners = random_corpus(rng, 3000)
    index = KeywordIndex(documents, owners=owners)
    scored: list[int] = []
    records = keyword_prune._Scorer.records

    def counted(self: Any, passages: np.ndarray) -> Any:
        scored.append(len(passages))
        return records(self, passages)
    monkeypatch.setattr(keyword_prune._Scorer, "records", counted)
    query = ["the", "rice", "lighthouse", "咖啡", "🔥"]
    assert assert_same_top(index, query, 10, None)
    matching = int(np.count_nonzero(index.scores(query)))
    assert 0 < sum(scored) < matching / 2  # most matching passages were never scored
    assert len(scored) >= 2  # a first round found the cut, a later one the rest


def test_a_round_scores_only_the_passages_whose_own_bound_reaches_the_cut(every_round: None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(8)
    documents, owners = random_corpus(rng, 3000)
    index = KeywordIndex(documents, owners=owners)
    held, scored = [], []
    passages_of, records = keyword_prune._Scorer.passages_of, keyword_prune._Scorer.records
    monkeypatch.setattr(keyword_prune._Scorer, "passages_of", lambda self, chosen: held.append(
        found := passages_of(self, chosen)) or found)
    monkeypatch.setattr(keyword_prune._Scorer, "records", lambda self, passages: scored.append(
        len(passages)) or records(self, passages))
    monkeypatch.setattr(keyword_prune, "SEED_FACTOR", 64)  # a first round of many passages
    assert assert_same_top(index, ["the", "rice", "café", "🔥", "שלום"], 10, None)
    assert 0 < sum(scored) < sum(map(len, held)) / 2


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_a_passage_bound_is_never_below_its_score_and_is_its_score_when_its_mark_tells_each_term_is_held_once(
        seed: int, split: bool) -> None:
    rng = random.Random(seed)
    documents, owners = random_corpus(rng, rng.randint(1, 300))
    index = KeywordIndex(documents, owners=owners)
    query = random_query(rng)
    terms = index.sorted_postings(index.postings_of(query))
    if not terms:
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyword_prune, "SPLIT_TERMS", 8 if split else 0)  # without it a mark tells no counts
        scorer = keyword_prune._Scorer(index, terms)
    passages = np.arange(index.n_passages)
    bounds, scores = scorer.passage_bounds(passages), index.scores(query)
    assert np.all(bounds * (1 + keyword_prune.SLACK) >= scores)
    once = np.ones(index.n_passages, dtype=bool)  # each query term held at most once
    for term in terms:
        once[term.docs[term.tf > 1]] = False
    if split:
        np.testing.assert_allclose(bounds[once], scores[once], rtol=1e-12)
    for term in terms:  # the term's own bounds hold at each of its postings
        ratios = index.term_weights(term) / term.repeat / (term.idf * (index.k1 + 1))
        once_bound, more_bound, most = index.ratio_bounds(term)
        assert most == int(term.tf.max())
        assert np.all(ratios[term.tf == 1] <= once_bound * (1 + 1e-12))
        assert np.all(ratios[term.tf > 1] <= more_bound * (1 + 1e-12))


def test_ties_at_the_cut_go_by_record_order_as_in_a_full_search(every_round: None) -> None:
    documents = [["moss", "tax"]] * 30 + [["moss"]] * 30 + [["tax", "tax", "moss"]] * 5
    index = KeywordIndex(documents)
    for k in (1, 3, 5, 6, 20, 35, 64, 65, 100):
        assert assert_same_top(index, ["moss", "tax"], k, None)
        assert assert_same_top(index, ["tax", "moss", "moss"], k, np.arange(65) % 3 == 0)


def test_a_query_of_few_postings_is_scored_in_full() -> None:
    # Below PRUNE_FROM postings, scoring every one costs less than pruning's rounds.
    index = KeywordIndex([["rice", "tax"], ["rice"], ["tax", "moss"]] * 20)
    assert top_records(index, ["rice", "tax"], 3, None) is None
    assert assert_same_top(index, ["rice", "tax"], 3, None) is False


def test_k_past_the_matching_records_gives_every_match(every_round: None) -> None:
    index = KeywordIndex([["咖啡"], ["東京", "咖啡"], ["rice"], [], ["🔥", "咖啡"]], owners=np.array([0, 0, 1, 2, 3]))
    ids, _ = top_records(index, ["咖啡", "🔥"], 50, None)
    assert ids.tolist() == [3, 0]
    assert assert_same_top(index, ["咖啡", "🔥"], 50, np.array([True, False, True, True]))


def test_a_query_of_no_indexed_word_or_too_many_words_is_left_to_the_full_search(every_round: None) -> None:
    index = KeywordIndex([WORDS, WORDS[:3]])
    assert top_records(index, ["absent"], 10, None) is None
    assert top_records(index, WORDS[:keyword_prune.MAX_TERMS + 1], 10, None) is None
    assert assert_same_top(index, WORDS[:keyword_prune.MAX_TERMS + 1], 1, None) is False


def test_okapi_idf_below_zero_is_left_to_the_full_search(every_round: None) -> None:
    # rank-bm25's idf is negative for a word in most documents: no bound holds for it.
    index = KeywordIndex([["rice", "tax"], ["rice"], ["rice", "moss"]], idf="okapi")
    assert top_records(index, ["rice", "moss"], 2, None) is None
    assert assert_same_top(index, ["rice", "moss"], 2, None) is False


def test_a_layered_index_prunes_to_the_top_of_a_fresh_build(every_round: None) -> None:
    rng = random.Random(11)
    vocabulary = Vocabulary()
    documents, _ = random_corpus(rng, 600)
    index = KeywordIndex([vocabulary.encode(doc) for doc in documents], vocabulary=vocabulary)
    for step in range(25):
        numbered = list(enumerate(documents))
        at = rng.randrange(len(numbered))
        if step % 3 == 0:  # a passage moved past others: the main postings no longer ascend
            numbered.insert(rng.randrange(len(numbered)), numbered.pop(at))
        else:  # a passage edited: its postings go to the delta
            numbered[at] = (-1, rng.choices(WORDS, WEIGHTS, k=rng.randint(1, 9)))
        documents = [doc for _, doc in numbered]
        source = np.array([number for number, _ in numbered], dtype=np.int64)
        encoded = [vocabulary.encode(doc) if origin < 0 else None for doc, origin in zip(documents, source.tolist())]
        lengths = np.array([len(doc) for doc in documents], dtype=np.int64)
        index = KeywordIndex(encoded, vocabulary=vocabulary, reuse=(index.term_counts, source), lengths=lengths)
    assert index.layered
    fresh = KeywordIndex([vocabulary.encode(doc) for doc in documents], vocabulary=vocabulary)
    for _ in range(20):
        query = random_query(rng)
        assert assert_same_top(index, query, 10, None)
        np.testing.assert_array_equal(top_records(index, query, 10, None)[0], full_top(fresh, query, 10, None)[0])


def test_passage_scores_are_the_full_scores_bit_for_bit() -> None:
    rng = random.Random(3)
    documents, owners = random_corpus(rng, 300)
    index = KeywordIndex(documents, owners=owners)
    for _ in range(10):
        query = random_query(rng)
        lazy = PassageScores(index, query)
        full = index.scores(query)
        order = list(range(index.n_passages))
        rng.shuffle(order)
        assert [lazy[p] for p in order] == [float(full[p]) for p in order]


def test_keyword_search_does_not_score_every_passage(write_files: Any, make_book: Any, every_round: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"note {i}: the ferry to {'Tōkyō 東京' if i % 7 == 0 else 'the island'} left at {i} 🔥" for i in range(60)]
    book = make_book(write_files({"ferries.txt": "\n\n".join(lines)}), keyword_only=True)
    expected = book.search("ferry 東京", mode="keyword", max_results=5)
    monkeypatch.setattr(KeywordIndex, "scores", lambda self, tokens: pytest.fail("scored every passage"))
    again = book.search("ferry 東京", mode="keyword", max_results=5)
    assert [(h.citation, h.similarity_score, h.snippet) for h in again] == \
        [(h.citation, h.similarity_score, h.snippet) for h in expected]
    assert again[0].matched_terms and "東京" in again[0].snippet


# -- the top k among every passage's scores, from those above a cut (hybrid search) --

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 5, 10, 40]), st.booleans(), st.sampled_from([1, 2, 4]))
def test_the_top_k_of_the_passages_above_a_cut_is_the_full_top_k(seed: int, k: int, masked: bool, step: int) -> None:
    rng = random.Random(seed)
    documents, owners = random_corpus(rng, rng.randint(1, 600))
    index = KeywordIndex(documents, owners=owners)
    mask = np.array([rng.random() < 0.5 for _ in range(index.size)]) if masked else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyword_prune, "SAMPLE_STEP", step)
        patch.setattr(keyword_prune, "CUT_FACTOR", rng.choice([1, 2, 8]))
        for _ in range(6):
            query = random_query(rng)
            scores = index.scores(query)
            ids, best = full_top(index, query, k, mask)
            found = top_of_scores(index, scores, k, mask)
            if found is not None:
                np.testing.assert_array_equal(found[0], ids)
                np.testing.assert_array_equal(found[1] / index.upper_bound(query), best)
            # The path hybrid search takes, whether the cut answered or not.
            top_ids, top_scores, _ = keyword_top(index, query, k, mask, passage_scores=scores, every=False)
            np.testing.assert_array_equal(top_ids, ids)
            np.testing.assert_array_equal(top_scores, best)


def test_ties_among_the_passages_above_the_cut_go_by_record_order_as_in_a_full_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Passages repeated word for word tie; the records of 1-3 passages hold CJK, emoji, Hebrew.
    documents = [["moss", "東京"], ["🔥"], ["moss"], ["tax", "שלום", "moss"]] * 250
    owners = np.repeat(np.arange(400), [1, 2, 3, 4] * 100)
    index = KeywordIndex(documents, owners=owners)
    monkeypatch.setattr(keyword_prune, "SAMPLE_STEP", 3)  # (not 4: each sample would be the same passage)
    monkeypatch.setattr(keyword_prune, "CUT_FACTOR", 2)
    for query, k in ((["moss", "東京"], 10), (["שלום", "🔥"], 25), (["moss"], 7)):
        scores = index.scores(query)
        found = top_of_scores(index, scores, k, None)
        assert found is not None
        ids, best = full_top(index, query, k, None)
        np.testing.assert_array_equal(found[0], ids)
        np.testing.assert_array_equal(found[1] / index.upper_bound(query), best)
    # Fewer records above the cut than k (a filter keeping few of them): every record's best is taken.
    few = np.zeros(index.size, dtype=bool)
    few[[3, 200]] = True
    assert top_of_scores(index, index.scores(["moss"]), 5, few) is None
    # No passage scored: nothing to cut.
    assert top_of_scores(index, index.scores(["absent"]), 5, None) is None
