"""Keyword index updates: an update keeps the postings it was built on and scores new and
edited passages from a delta beside them, deleted ones masked, with the BM25 statistics of the
passages now, so every score equals a build from scratch; compaction changes nothing a search sees."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecbook
import vecbook.keyword_counts as counts_module
from vecbook.index import KeywordIndex, LayeredCounts, TermCounts
from vecbook.tokens import Vocabulary

# Words of several scripts (CJK bigrams and a lone character, accents, right-to-left, emoji), as
# the tokenizer leaves them.
WORDS = ["咖啡", "東京", "café", "naïve", "שלום", "مرحبا", "🔥", "🙂", "quokka", "lighthouse", "umbrella", "rice",
         "kimchi", "outage", "budget", "the", "带伞", "雨伞", "伞"]
# One character alone (伞, 京) is looked for inside the bigrams too (vecbook.keyword_chars).
QUERIES = [["咖啡", "東京"], ["café", "🔥", "🔥"], ["שלום", "quokka"], ["rice", "kimchi", "outage", "the"],
           ["umbrella"], ["nowhere"], ["مرحبا", "naïve", "🙂", "budget", "lighthouse"], ["伞"], ["京", "rice", "伞"]]


def scores_agree(updated: KeywordIndex, fresh: KeywordIndex) -> None:
    for query in QUERIES:
        np.testing.assert_allclose(updated.scores(query), fresh.scores(query), rtol=0, atol=1e-9)
        assert updated.upper_bound(query) == pytest.approx(fresh.upper_bound(query), rel=0, abs=1e-9)


def edited(documents: list[list[str]], rng: random.Random) -> tuple[list[list[str]], np.ndarray]:
    """One random update of ``documents``: a passage added, edited, deleted or moved (a file
    renamed past others), with each passage's earlier number (-1: laid out anew)."""
    numbered = list(enumerate(documents))
    action = rng.choice(["add", "add", "edit", "delete", "move"]) if numbered else "add"
    at = rng.randrange(len(numbered)) if numbered else 0
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 7))]
    if action == "add":
        numbered.insert(rng.randint(0, len(numbered)), (-1, words))
    elif action == "edit":
        numbered[at] = (-1, words)
    elif action == "delete":
        del numbered[at]
    else:
        numbered.insert(rng.randint(0, len(numbered) - 1), numbered.pop(at))
    return [doc for _, doc in numbered], np.array([number for number, _ in numbered], dtype=np.int64)


def updated_index(previous: KeywordIndex, documents: list[list[str]], source: np.ndarray,
                  vocabulary: Vocabulary) -> KeywordIndex:
    """An update as the builder makes it: copied passages give only their length."""
    encoded = [vocabulary.encode(doc) if origin < 0 else None for doc, origin in zip(documents, source.tolist())]
    lengths = np.array([len(doc) for doc in documents], dtype=np.int64)
    return KeywordIndex(encoded, vocabulary=vocabulary, reuse=(previous.term_counts, source), lengths=lengths)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.sampled_from([0, 3, 10_000]))
def test_scores_equal_a_fresh_build_across_random_edits_adds_and_deletes(seed: int, steps: int, floor: int) -> None:
    rng = random.Random(seed)
    vocabulary = Vocabulary()
    documents = [[rng.choice(WORDS) for _ in range(rng.randint(0, 6))] for _ in range(rng.randint(0, 30))]
    index = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    # floor 10,000: never compacted; 3: compacted by the update whenever the delta passes 3 passages.
    changed = False  # a move back to its own place changes nothing: the counts stay as they were
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vecbook.index, "DELTA_PASSAGES", floor)
        for _ in range(steps):
            before = len(documents)
            documents, source = edited(documents, rng)
            changed |= len(source) != before or bool(np.any(source != np.arange(len(source))))
            index = updated_index(index, documents, source, vocabulary)
            fresh = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
            scores_agree(index, fresh)
    if floor == 10_000 and index.n_passages and changed:
        assert index.layered


def test_a_passage_added_after_every_passage_was_deleted_is_scored_as_in_a_fresh_build() -> None:
    # Found by the random sequence: a layered index with no passage left, then one added.
    vocabulary = Vocabulary()
    documents = [["rice", "咖啡"], ["quokka", "🔥"], ["café"]]
    index = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    index = updated_index(index, [["rice", "咖啡"], ["café"]], np.array([0, 2]), vocabulary)
    index = updated_index(index, [], np.zeros(0, dtype=np.int64), vocabulary)
    documents = [["שלום", "café"]]
    index = updated_index(index, documents, np.array([-1]), vocabulary)
    scores_agree(index, KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary))
    assert index.scores(["café"]).tolist()[0] > 0


def test_an_update_keeps_the_main_postings_and_counts_only_the_new_passages() -> None:
    vocabulary = Vocabulary()
    documents = [["rice", "kimchi"], ["咖啡", "🔥"], ["outage", "the", "the"], ["quokka"]]
    first = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    main = first.term_counts
    # Passage 1 edited, 3 deleted, a new one added at the front.
    documents = [["東京", "café"], ["rice", "kimchi"], ["咖啡", "🙂"], ["outage", "the", "the"]]
    index = updated_index(first, documents, np.array([-1, 0, -1, 2]), vocabulary)
    counts = index.term_counts
    assert isinstance(counts, LayeredCounts) and isinstance(counts.state, tuple)
    kept, placed, delta = counts.state
    assert kept is main  # shared, not copied
    assert placed.tolist() == [1, -1, 3, -1]  # each earlier passage's number now (-1: gone)
    assert sorted(set(delta.doc_ids.tolist())) == [0, 2]  # only the passages laid out anew
    fresh = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    scores_agree(index, fresh)
    assert index.scores(["quokka"]).tolist() == [0.0] * 4  # the deleted passage is never scored


def test_a_one_character_query_on_an_update_gathers_its_bigrams_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A common character is in thousands of bigrams: read term by term over the layers, its first
    # query after any edit took 30 times as long as on whole counts (0.34 s against 11 ms at 100k records).
    vocabulary = Vocabulary()
    documents = [["带伞", "雨伞"], ["伞"], ["咖啡", "伞下"], ["rice"]]
    first = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    documents = [["雨伞", "伞"], ["带伞", "雨伞"], ["咖啡", "伞下"], ["rice"]]
    index = updated_index(first, documents, np.array([-1, 0, 2, 3]), vocabulary)
    assert index.layered
    fresh = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    expected = fresh.scores(["伞"])

    def one_term(*args: Any) -> None:
        raise AssertionError("a bigram's postings read one term at a time")

    monkeypatch.setattr(KeywordIndex, "_term_postings", one_term)
    np.testing.assert_array_equal(index.scores(["伞"]), expected)


def test_compaction_gives_the_same_scores_and_lets_the_layers_go() -> None:
    vocabulary = Vocabulary()
    rng = random.Random(7)
    documents = [[rng.choice(WORDS) for _ in range(5)] for _ in range(50)]
    index = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    for _ in range(10):
        documents, source = edited(documents, rng)
        index = updated_index(index, documents, source, vocabulary)
    assert index.layered
    before = [index.scores(query) for query in QUERIES]
    whole = index.term_counts.whole()  # what the keyword cache's background save does
    assert isinstance(whole, TermCounts) and not index.layered
    for query, scores in zip(QUERIES, before):
        np.testing.assert_array_equal(index.scores(query), scores)
    fresh = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    for name in ("doc_ids", "tf", "indptr"):
        np.testing.assert_array_equal(getattr(index, name), getattr(fresh, name), err_msg=name)
    # The next update builds on the compacted counts.
    documents, source = edited(documents, rng)
    scores_agree(updated_index(index, documents, source, vocabulary),
                 KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary))


def test_compaction_block_by_block_keeps_a_new_count_past_what_the_earlier_counts_type_holds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counts_module, "MERGE_BLOCK", 7)  # the main postings copied in many blocks
    vocabulary = Vocabulary()
    rng = random.Random(11)
    documents = [[rng.choice(WORDS) for _ in range(5)] for _ in range(60)]
    index = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    assert index.tf.dtype == np.uint16
    documents.insert(30, ["café"] * 70_000 + ["東京", "🔥"])  # a count past what uint16 holds
    source = np.array(list(range(30)) + [-1] + list(range(30, 60)), dtype=np.int64)
    del documents[50], documents[3]  # the higher first: both are numbers before either deletion
    source = np.delete(source, [3, 50])
    index = updated_index(index, documents, source, vocabulary)
    assert index.layered
    index.term_counts.whole()
    fresh = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    for name in ("doc_ids", "tf", "indptr"):
        np.testing.assert_array_equal(getattr(index, name), getattr(fresh, name), err_msg=name)
    scores_agree(index, fresh)


def test_an_update_past_the_delta_share_compacts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.index, "DELTA_PASSAGES", 0)
    monkeypatch.setattr(vecbook.index, "DELTA_SHARE", 0.25)
    vocabulary = Vocabulary()
    documents = [["rice"], ["kimchi"], ["咖啡"], ["🔥"], ["café"], ["the"], ["quokka"], ["東京"]]
    index = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary)
    one_new = updated_index(index, documents + [["umbrella"]], np.array(list(range(8)) + [-1]), vocabulary)
    assert one_new.layered  # 1 of 8 passages: under a quarter
    three_more = updated_index(one_new, documents[3:] + [["umbrella"], ["a"], ["b"]],
                               np.array(list(range(3, 9)) + [-1, -1]), vocabulary)
    assert not three_more.layered  # 3 deleted and 3 new passages: past a quarter of 8


def test_okapi_idf_is_never_layered() -> None:
    # rank-bm25's floor of negative idf is a mean over every term's idf: whole counts only.
    vocabulary = Vocabulary()
    documents = [["rice", "kimchi"], ["rice"], ["rice", "the"]]
    first = KeywordIndex([vocabulary.encode(d) for d in documents], vocabulary=vocabulary, idf="okapi")
    encoded = [None, None, None, vocabulary.encode(["kimchi", "🔥"])]
    index = KeywordIndex(encoded, vocabulary=vocabulary, idf="okapi", lengths=np.array([2, 1, 2, 2]),
                         reuse=(first.term_counts, np.array([0, 1, 2, -1])))
    fresh = KeywordIndex([vocabulary.encode(d) for d in documents + [["kimchi", "🔥"]]], vocabulary=vocabulary,
                         idf="okapi")
    assert not index.layered
    for query in (["rice"], ["kimchi", "🔥"]):
        np.testing.assert_array_equal(index.scores(query), fresh.scores(query))


def test_a_one_file_reindex_finds_the_new_text_and_never_a_deleted_record(write_files: Any, make_book: Any) -> None:
    files = {f"n{i}.txt": "\n---\n".join(f"note {i} item {j} harbour" for j in range(4)) for i in range(5)}
    files["journal.txt"] = "On Monday the tide was low\n---\nOn Tuesday 東京の咖啡 🔥 with a friend\n"
    root = write_files(files)
    # No cache folder: the keyword cache's background save would compact the postings.
    book = make_book(root, cache_directory=False)
    (root / "journal.txt").write_text("On Monday the tide was low\n---\nOn Wednesday a quokka repaired the "
                                      "lighthouse with a blue umbrella\n", encoding="utf-8")
    book.reindex()
    assert book._snapshot.keywords.layered  # the update kept the main postings
    assert book.search("quokka lighthouse umbrella", mode="keyword", max_results=1)[0].id == "journal.txt:3"
    assert any(h.id == "journal.txt:3" for h in book.search("a quokka repaired the lighthouse", mode="semantic"))
    for mode in ("keyword", "semantic", "hybrid"):
        assert not [h for h in book.search("東京 咖啡 🔥 Tuesday", mode=mode, max_results=50) if "Tuesday" in h.text]
    fresh = vecbook.VecBook(root, embedder=book.embedder, cache_directory=False)
    for query in ("harbour note 3", "quokka tide", "東京"):
        ours = book.search(query, mode="keyword", max_results=30)
        theirs = fresh.search(query, mode="keyword", max_results=30)
        assert [(h.id, round(h.similarity_score, 9)) for h in ours] == [(h.id, round(h.similarity_score, 9)) for h in theirs]
