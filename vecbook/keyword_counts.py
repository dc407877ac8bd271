"""A keyword index's term counts: the (term, passage, count) triples in postings order
(``TermCounts``), an update's counts kept as the counts it was built on plus a delta
(``LayeredCounts``), and their compaction into whole counts (``compacted``)."""

from __future__ import annotations

import threading
from typing import Iterator, Union

import numpy as np

from .tokens import Vocabulary

class TermCounts:
    """The (term, passage, count) triples of a keyword index, in postings order (by term, then
    passage), over ``vocabulary``'s ids: what a later index copies for unchanged passages.
    Idf and weights are not kept: they change with every build. The terms are held as each
    term's first posting (``indptr``), not one id per posting: 4 bytes a posting less, which
    at 100k records was 20 MB."""

    def __init__(self, vocabulary: Vocabulary, n_passages: int, terms: np.ndarray | None, doc_ids: np.ndarray,
                 tf: np.ndarray, indptr: np.ndarray | None = None) -> None:
        """``terms`` (non-decreasing, below ``len(vocabulary)``), or ``indptr`` in its place."""
        self.vocabulary = vocabulary
        self.n_passages = n_passages
        self.doc_ids = doc_ids
        self.tf = tf
        if indptr is None:
            terms = np.asarray(terms)
            if len(terms) and (bool(np.any(np.diff(terms) < 0)) or int(terms[0]) < 0):
                raise ValueError("term ids out of postings order")
            indptr = np.searchsorted(terms, np.arange(len(vocabulary) + 1))
            if len(terms) and int(terms[-1]) >= len(vocabulary):
                raise ValueError("term ids out of range")
        self.indptr = indptr

    @property
    def terms(self) -> np.ndarray:
        """Each posting's term id (int32), made on demand (a build and a cache save read it)."""
        return np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int32), np.diff(self.indptr))

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """The (passages, counts) of term ``tid`` (empty for a term past these counts' terms)."""
        if tid + 1 >= len(self.indptr):
            return self.doc_ids[:0], self.tf[:0]
        start, end = int(self.indptr[tid]), int(self.indptr[tid + 1])
        return self.doc_ids[start:end], self.tf[start:end]

    def gathered(self, tids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (passages, counts) of the terms ``tids`` together, each term's in turn, in one
        gather (terms past these counts' terms have none): a loop over the thousands of bigrams a
        common character is in cost a Python call each."""
        tids = np.asarray(tids, dtype=np.int64)
        tids = tids[tids + 1 < len(self.indptr)]
        first = self.indptr[tids]
        sizes = self.indptr[tids + 1] - first
        at = np.repeat(first - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
        return np.take(self.doc_ids, at), np.take(self.tf, at)


# The layers of an update's counts: (main counts, each main passage's number now or -1, delta counts).
Layers = tuple[TermCounts, np.ndarray, TermCounts]


class LayeredCounts:
    """An update's term counts as the counts it was built on (``main``, in their own passage
    numbers, shared and never copied), where each main passage is now (``placed``, -1: gone)
    and the counts of the passages laid out since (``delta``, numbered as now). Reads of
    ``doc_ids``, ``tf``, ``indptr`` or ``terms`` (the keyword cache's save, tests) compact the
    layers into whole counts once, and from then on every reader (searches too) uses those."""

    def __init__(self, main: TermCounts, placed: np.ndarray, delta: TermCounts) -> None:
        self.vocabulary = delta.vocabulary
        self.n_passages = delta.n_passages
        # One attribute, replaced in one assignment when compacted: a search reads it once.
        self.state: Layers | TermCounts = (main, placed, delta)
        self._lock = threading.Lock()

    def whole(self) -> TermCounts:
        """The counts compacted (made on first call, under a lock; the layers are let go)."""
        with self._lock:
            state = self.state
            if isinstance(state, tuple):
                state = self.state = compacted(*state)
            return state

    @property
    def doc_ids(self) -> np.ndarray:
        """Every posting's passage, of the compacted counts."""
        return self.whole().doc_ids

    @property
    def tf(self) -> np.ndarray:
        """Every posting's count, of the compacted counts."""
        return self.whole().tf

    @property
    def indptr(self) -> np.ndarray:
        """Each term's first posting, of the compacted counts."""
        return self.whole().indptr

    @property
    def terms(self) -> np.ndarray:
        """Each posting's term id, of the compacted counts."""
        return self.whole().terms


Counts = Union[TermCounts, LayeredCounts]


def compacted(main: TermCounts, placed: np.ndarray, delta: TermCounts) -> TermCounts:
    """Whole counts from layers: ``main``'s postings renumbered by ``placed`` (those of gone
    passages dropped) with ``delta``'s inserted where they belong. Kept passages that keep their
    order keep it within each term's postings, so the copy is a gather of their passages
    (renumbered, a block at a time) written straight to its place in the new arrays, beside the
    delta's pairs: beyond the new arrays only a block's temporaries are held (at a million
    records an array of every posting's term or sort key took 2 GB, copies of the whole
    postings ~900 MB)."""
    n_terms = len(delta.indptr) - 1
    old_indptr = np.concatenate([main.indptr, np.full(n_terms + 1 - len(main.indptr), main.indptr[-1],
                                                      dtype=np.int64)]).astype(np.int64)
    kept_order = placed[placed >= 0]
    if len(kept_order) > 1 and not bool(np.all(np.diff(kept_order) > 0)):  # passages moved past each other
        return _sorted_counts(main, placed, delta, n_terms)
    target = placed.astype(np.int32, copy=False)
    gone_per_term = np.zeros(n_terms, dtype=np.int64)
    for start, renumbered in _renumbered_blocks(main, target):
        gone = start + np.flatnonzero(renumbered < 0)
        if len(gone):
            gone_per_term += np.bincount(np.searchsorted(old_indptr, gone, "right") - 1, minlength=n_terms)
    kept_starts = np.concatenate([[0], np.cumsum(np.diff(old_indptr) - gone_per_term)])
    at = _delta_places(main, target, delta, old_indptr, kept_starts)
    total = int(kept_starts[-1]) + len(at)
    docs = np.empty(total, dtype=np.int32)
    tf = np.empty(total, dtype=np.result_type(main.tf.dtype, delta.tf.dtype))
    fresh = at + np.arange(len(at))  # where each delta pair lands
    docs[fresh], tf[fresh] = delta.doc_ids, delta.tf
    done = 0  # kept postings written so far
    for start, renumbered in _renumbered_blocks(main, target):
        kept = renumbered >= 0
        order = np.arange(done, done + int(kept.sum()))
        where = order + np.searchsorted(at, order, "right")  # past the delta pairs inserted before it
        docs[where], tf[where] = renumbered[kept], main.tf[start:start + MERGE_BLOCK][kept]
        done += len(order)
    indptr = np.concatenate([[0], np.cumsum(np.diff(kept_starts) + np.diff(delta.indptr))]).astype(np.int64)
    return TermCounts(delta.vocabulary, delta.n_passages, None, docs, narrowed(tf), indptr)


def _renumbered_blocks(main: TermCounts, target: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(first posting, its block's passages renumbered by ``target``, -1: gone), MERGE_BLOCK at a time."""
    for start in range(0, len(main.doc_ids), MERGE_BLOCK):
        yield start, target[main.doc_ids[start:start + MERGE_BLOCK]]


def _delta_places(main: TermCounts, target: np.ndarray, delta: TermCounts, old_indptr: np.ndarray,
                  kept_starts: np.ndarray) -> np.ndarray:
    """For each delta pair, the kept main postings that come before it (both ordered by term,
    then passage): a search in its term's renumbered postings only."""
    at = np.empty(len(delta.terms), dtype=np.int64)
    fresh_terms, fresh_docs = delta.terms, delta.doc_ids
    groups = np.flatnonzero(np.diff(fresh_terms, prepend=-1)).tolist() + [len(fresh_terms)]
    for first, end in zip(groups[:-1], groups[1:]):
        term = int(fresh_terms[first])
        olds = target[main.doc_ids[int(old_indptr[term]):int(old_indptr[term + 1])]]
        at[first:end] = kept_starts[term] + np.searchsorted(olds[olds >= 0], fresh_docs[first:end])
    return at


def _sorted_counts(main: TermCounts, placed: np.ndarray, delta: TermCounts, n_terms: int) -> TermCounts:
    """``compacted`` for kept passages out of their earlier order: every pair sorted."""
    docs = placed[main.doc_ids]
    kept = docs >= 0
    terms = np.concatenate([main.terms[kept], delta.terms]).astype(np.int64)
    docs = np.concatenate([docs[kept], delta.doc_ids]).astype(np.int64)
    tf = np.concatenate([main.tf[kept], delta.tf.astype(main.tf.dtype)])
    order = np.argsort(terms * max(delta.n_passages, 1) + docs, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(terms, minlength=n_terms))]).astype(np.int64)
    return TermCounts(delta.vocabulary, delta.n_passages, None, docs[order].astype(np.int32), narrowed(tf[order]),
                      indptr)


def padded(counts: TermCounts, n_terms: int) -> TermCounts:
    """``counts`` with an ``indptr`` over ``n_terms`` terms (the vocabulary grows between builds)."""
    if len(counts.indptr) >= n_terms + 1:
        return counts
    indptr = np.concatenate([counts.indptr, np.full(n_terms + 1 - len(counts.indptr), counts.indptr[-1])])
    return TermCounts(counts.vocabulary, counts.n_passages, None, counts.doc_ids, counts.tf, indptr.astype(np.int64))


def narrowed(tf: np.ndarray) -> np.ndarray:
    """Counts of a passage's term (at most its words) as uint16, but for freak texts."""
    return tf.astype(np.uint16 if not len(tf) or int(tf.max()) <= np.iinfo(np.uint16).max else np.int32,
                     copy=False)


# Postings renumbered at a time when an update copies them (4M: 16 MB of temporaries).
MERGE_BLOCK = 1 << 22
