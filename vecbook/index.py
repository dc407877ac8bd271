"""Indexes: BM25 keyword scoring from numpy postings (over the terms of ``tokens``), and the
FAISS vector index (``vector_index``, whose names are also found here)."""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import Sequence

import numpy as np

from .tokens import Vocabulary
from .vector_index import (  # noqa: F401 - re-exported: the vector index lived here
    APPROXIMATE_FROM,
    VectorIndex,
    encode_vectors,
    search_on_this_thread,
    top_k,
)


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


class KeywordIndex:
    """BM25Okapi scores (rank-bm25's term weighting) answered from numpy postings.

    The documents are passages; ``owners`` maps each passage to its record
    (non-decreasing, at least one passage a record), and a record scores as its
    best passage. Without ``owners`` every document is a record of its own.

    rank-bm25's ``get_scores`` loops in Python over every document; here each
    term keeps a postings array of (document, precomputed weight), so a query
    costs one vectorised add per query term. With ``idf="okapi"`` the scores
    equal ``BM25Okapi.get_scores`` exactly (``tests/test_index.py`` checks it).

    The default ``idf="lucene"`` is log(1 + (N - n + 0.5) / (n + 0.5)), Lucene's
    and Wikipedia's smoothed form. rank-bm25's own idf is zero for a term in
    exactly half the documents and negative above that (rank_bm25 issues #39,
    #43), so in a folder of two notes a word found in one of them scores
    nothing. Everything else (k1, b, length normalisation) is BM25Okapi's.
    """

    def __init__(self, documents: Sequence[Sequence[str]] | Sequence[np.ndarray | None], k1: float = 1.5,
                 b: float = 0.75, epsilon: float = 0.25, idf: str = "lucene",
                 vocabulary: Vocabulary | None = None, owners: np.ndarray | None = None,
                 reuse: tuple[TermCounts, np.ndarray] | None = None, lengths: np.ndarray | None = None) -> None:
        """``documents`` are token lists, or token-id arrays of ``vocabulary`` (None for a passage
        whose counts ``reuse`` copies: then ``lengths`` gives every passage's token count).

        Args:
            reuse: (an earlier index's ``term_counts`` over the same ``vocabulary``, ``source``): passage
                p has the tokens of that index's passage ``source[p]`` (-1: new tokens), each earlier passage
                named at most once. Those passages' term counts are copied instead of recounted;
                the scores equal a build from scratch, since idf and lengths are recomputed.
        """
        self.k1, self.b, self.epsilon, self.idf_kind = k1, b, epsilon, idf
        if vocabulary is None:
            vocabulary = Vocabulary()
            documents = [vocabulary.encode(list(d)) for d in documents]
        self.vocabulary = vocabulary
        self.n_passages = len(documents)
        self.owners = np.arange(self.n_passages) if owners is None else np.asarray(owners, dtype=np.int64)
        self.size = int(self.owners[-1]) + 1 if len(self.owners) else 0  # records
        self._starts = np.searchsorted(self.owners, np.arange(self.size))  # each record's first passage
        self.lengths = np.asarray(lengths, dtype=np.int64) if lengths is not None else \
            np.fromiter(map(len, documents), dtype=np.int64, count=self.n_passages)
        self.n_terms = len(vocabulary)
        if reuse is not None and reuse[0].vocabulary is vocabulary:
            indptr, docs, tf = self._merged_postings(documents, *reuse)
        else:
            terms, docs, tf = self._count_pairs(documents, np.arange(self.n_passages, dtype=np.int64))
            indptr = np.concatenate([[0], np.cumsum(np.bincount(terms, minlength=self.n_terms))])
        self._build_postings(docs, indptr, tf)

    def _count_pairs(self, documents: Sequence[np.ndarray],
                     numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term, document, count) of every distinct pair in the documents ``numbers`` (ascending),
        ordered by term, then document: the postings order, so no second sort is needed. Counted
        COUNT_BLOCK tokens of documents at a time, each block's pairs placed by a counting sort
        on their terms: one np.unique over every token's int64 key held ~45 bytes a token at once
        (~1.7 GB for a first build of a million records)."""
        lengths = self.lengths[numbers]
        if not len(numbers) or not int(lengths.sum()):
            empty = np.zeros(0, dtype=np.int32)
            return empty, empty, empty
        width = max(self.n_passages, 1)
        ends = np.cumsum(lengths)
        cuts = np.unique(np.concatenate([[0], np.searchsorted(ends, np.arange(COUNT_BLOCK, int(ends[-1]), COUNT_BLOCK),
                                                              "right"), [len(numbers)]]))
        blocks = []  # each block's (per-term pair counts, documents, counts): its terms follow from the first
        for first, end in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            token_ids = np.concatenate([np.asarray(documents[i], dtype=np.int64) for i in numbers[first:end].tolist()])
            # Count pairs with one np.unique over term-major keys rather than a Counter per
            # document: 5x faster at 100k, and the sorted keys are the block's postings order.
            keys, counts = np.unique(token_ids * width + np.repeat(numbers[first:end], lengths[first:end]),
                                     return_counts=True)
            del token_ids
            terms, docs = np.divmod(keys, width)
            blocks.append((np.bincount(terms, minlength=self.n_terms), docs.astype(np.int32), counts.astype(np.int32)))
        # Blocks hold ascending documents, so each term's pairs go block after block.
        per_term = np.sum([here for here, _, _ in blocks], axis=0)
        out_terms = np.repeat(np.arange(self.n_terms, dtype=np.int32), per_term)
        placed = np.concatenate([[0], np.cumsum(per_term)])[:-1]  # each term's next free slot
        out_docs, out_counts = np.empty(len(out_terms), dtype=np.int32), np.empty(len(out_terms), dtype=np.int32)
        blocks.reverse()
        while blocks:  # each block let go once placed
            here, docs, counts = blocks.pop()
            terms = np.repeat(np.arange(self.n_terms), here)
            at = placed[terms] + np.arange(len(terms)) - (np.cumsum(here) - here)[terms]
            out_docs[at], out_counts[at] = docs, counts
            placed += here
        return out_terms, out_docs, out_counts

    def _merged_postings(self, documents: Sequence[np.ndarray | None], previous: TermCounts,
                         source: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, documents, counts) of every passage's postings, the copied passages' taken
        from ``previous`` and only the new passages counted. Copied passages that keep their
        order keep it within each term's postings, so the copy is a gather of their documents
        (renumbered, a block at a time) and the new pairs are inserted where they belong: no
        array of every posting's term or sort key is made (at a million records those were
        2 GB of temporaries for a one-note update)."""
        source = np.asarray(source, dtype=np.int64)
        old_indptr = np.concatenate([previous.indptr, np.full(self.n_terms + 1 - len(previous.indptr),
                                                              previous.indptr[-1], dtype=np.int64)])
        if len(source) == previous.n_passages and bool(np.all(source == np.arange(len(source)))):
            # Every passage as it was (a restart from the keyword cache): the counts as they are.
            return old_indptr, previous.doc_ids, previous.tf
        copied = np.flatnonzero(source >= 0)
        if len(copied) > 1 and not bool(np.all(np.diff(source[copied]) > 0)):  # passages moved past each other
            terms, docs, tf = self._merged_pairs(documents, previous, source)
            return np.searchsorted(terms, np.arange(self.n_terms + 1)), docs, tf
        target = np.full(previous.n_passages, -1, dtype=np.int32)  # earlier passage -> its new number
        target[source[copied]] = copied
        docs_parts, tf_parts, removed = [], [], []
        for start in range(0, len(previous.doc_ids), MERGE_BLOCK):
            renumbered = target[previous.doc_ids[start:start + MERGE_BLOCK]]
            kept = renumbered >= 0
            docs_parts.append(renumbered[kept])
            tf_parts.append(previous.tf[start:start + MERGE_BLOCK][kept])
            removed.append(start + np.flatnonzero(~kept))
        docs = np.concatenate(docs_parts) if docs_parts else np.zeros(0, dtype=np.int32)
        tf = np.concatenate(tf_parts) if tf_parts else np.zeros(0, dtype=previous.tf.dtype)
        gone = np.concatenate(removed) if removed else np.zeros(0, dtype=np.int64)
        kept_per_term = np.diff(old_indptr) - np.bincount(np.searchsorted(old_indptr, gone, "right") - 1,
                                                          minlength=self.n_terms)
        kept_starts = np.concatenate([[0], np.cumsum(kept_per_term)])
        fresh_terms, fresh_docs, fresh_tf = self._count_pairs(documents, np.flatnonzero(source < 0))
        # Where each new pair goes among its term's copied postings (both ordered by document).
        at = np.empty(len(fresh_terms), dtype=np.int64)
        groups = np.flatnonzero(np.diff(fresh_terms, prepend=-1)).tolist() + [len(fresh_terms)]
        for first, end in zip(groups[:-1], groups[1:]):
            term = int(fresh_terms[first])
            low, high = int(kept_starts[term]), int(kept_starts[term + 1])
            at[first:end] = low + np.searchsorted(docs[low:high], fresh_docs[first:end])
        indptr = np.concatenate([[0], np.cumsum(kept_per_term + np.bincount(fresh_terms, minlength=self.n_terms))])
        docs, tf = _interleave(at, (docs, fresh_docs.astype(np.int32)), (tf, fresh_tf.astype(tf.dtype)))
        return indptr, docs, tf

    def _merged_pairs(self, documents: Sequence[np.ndarray | None], previous: TermCounts,
                      source: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_count_pairs`` of all documents, with the copied passages' pairs taken from ``previous``
        and only the new passages counted, for copied passages out of their earlier order (a sort)."""
        target = np.full(previous.n_passages, -1, dtype=np.int64)  # earlier passage -> its new number
        copied = np.flatnonzero(source >= 0)
        target[source[copied]] = copied
        new_docs = target[previous.doc_ids]
        kept = new_docs >= 0
        terms, docs, tf = previous.terms[kept].astype(np.int64), new_docs[kept], previous.tf[kept]
        width = max(self.n_passages, 1)
        keys = terms * width + docs
        if len(copied) > 1 and not bool(np.all(np.diff(source[copied]) > 0)):  # passages moved past each other
            order = np.argsort(keys, kind="stable")
            keys, terms, docs, tf = keys[order], terms[order], docs[order], tf[order]
        fresh_terms, fresh_docs, fresh_tf = self._count_pairs(documents, np.flatnonzero(source < 0))
        # Where each new pair goes among the copied ones (both are in postings order).
        at = np.searchsorted(keys, fresh_terms.astype(np.int64) * width + fresh_docs)
        return _interleave(at, (terms, fresh_terms), (docs, fresh_docs), (tf, fresh_tf))

    def _build_postings(self, docs: np.ndarray, indptr: np.ndarray, tf: np.ndarray) -> None:
        """The postings (each term's documents and counts from ``indptr[term]``, by document) and
        what scoring them needs."""
        n_terms = self.n_terms
        lengths = self.lengths.astype(np.float64)
        avgdl = lengths.mean() if self.n_passages and lengths.sum() else 1.0
        df = np.diff(indptr).astype(np.float64)
        if self.idf_kind == "lucene":
            idf = np.log1p((self.n_passages - df + 0.5) / (df + 0.5))
        else:
            idf = np.log(self.n_passages - df + 0.5) - np.log(df + 0.5)
            # rank-bm25 floors negative idf (terms in over half the documents)
            # at epsilon times the mean idf.
            if n_terms:
                idf[idf < 0] = self.epsilon * idf.mean()
        self.idf = idf
        # Each passage's length normalisation; a posting's weight is made from it, its count
        # and its term's idf when a query reads the posting, rather than kept (8 bytes a
        # posting: 40 MB at 100k records); the same operations give the same numbers.
        self._norm = self.k1 * (1 - self.b + self.b * lengths / avgdl)
        self.doc_ids = docs.astype(np.int32, copy=False)
        # Counts of a passage's term (at most its words) fit 16 bits but for freak texts.
        self.tf = tf.astype(np.uint16 if not len(tf) or int(tf.max()) <= np.iinfo(np.uint16).max else np.int32,
                            copy=False)
        self.indptr = np.asarray(indptr, dtype=np.int64)

    def _weights(self, start: int, end: int, tid: int) -> np.ndarray:
        """The BM25 weights of the postings ``start:end`` (all of term ``tid``)."""
        # counts / (counts + norm) * (idf * (k1 + 1)) in place: two temporaries and four passes,
        # and np.take, which gathers faster than fancy indexing (0.34 -> 0.22 ms for a query's
        # terms at 100k records; the weights agree with rank-bm25's to 1e-12).
        counts = self.tf[start:end].astype(np.float64)
        denominator = np.take(self._norm, self.doc_ids[start:end])
        denominator += counts
        np.divide(counts, denominator, out=counts)
        counts *= self.idf[tid] * (self.k1 + 1)
        return counts

    @property
    def weights(self) -> np.ndarray:
        """Every posting's weight, in postings order (made on demand: tests and tools)."""
        parts = [self._weights(int(self.indptr[t]), int(self.indptr[t + 1]), t) for t in range(self.n_terms)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)

    @property
    def term_counts(self) -> TermCounts:
        """This index's term counts, for a later index's ``reuse``."""
        return TermCounts(self.vocabulary, self.n_passages, None, self.doc_ids, self.tf, self.indptr)

    def _term(self, term: str) -> int | None:
        """The term's id if some passage of this index holds it. The vocabulary only grows
        (ids stay valid across builds), so it also names terms added since this index was
        built and terms whose every passage has since been deleted: neither counts, as in an
        index built from scratch (a deleted term's idf would otherwise raise ``upper_bound``)."""
        tid = self.vocabulary.ids.get(term)
        return tid if tid is not None and tid < self.n_terms and self.indptr[tid + 1] > self.indptr[tid] else None

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document (passage) for the query tokens (0 where no token occurs)."""
        documents, weights = [], []
        for term, repeat in Counter(tokens).items():
            tid = self._term(term)
            if tid is None:
                continue
            start, end = self.indptr[tid], self.indptr[tid + 1]
            documents.append(self.doc_ids[start:end])
            term_weights = self._weights(start, end, tid)
            weights.append(term_weights if repeat == 1 else repeat * term_weights)
        if not documents:
            return np.zeros(self.n_passages, dtype=np.float64)
        # One bincount over the query's postings makes the same additions in the same order
        # (from zero, term by term) as adding each term's postings into a zeroed array, so the
        # sums are bit for bit the same, in half the time: at 100k passages 0.34 ms against
        # 0.67 ms (a fancy-indexed add gathers and scatters once per term).
        return np.bincount(np.concatenate(documents), weights=np.concatenate(weights), minlength=self.n_passages)

    def record_scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Each record's best passage score."""
        return self.best_per_record(self.scores(tokens))

    def best_per_record(self, scores: np.ndarray) -> np.ndarray:
        """Each record's best of its passages' ``scores`` (as ``scores`` returns them)."""
        if self.n_passages == self.size or not self.size:
            return scores
        # Each record's first passage, raised by its later ones: few records have more than
        # one, so this is a gather and a short maximum.at, against a reduceat over every
        # passage (at 100k: 0.11 ms against 0.49 ms; a maximum is exact either way).
        records = scores[self._starts]
        later = self._later_passages
        np.maximum.at(records, self.owners[later], scores[later])
        return records

    @cached_property
    def _later_passages(self) -> np.ndarray:
        """The passages that are not their record's first, found on first use."""
        later = np.ones(self.n_passages, dtype=bool)
        later[self._starts] = False
        return np.flatnonzero(later)

    def passages_of(self, record: int) -> range:
        """The passage numbers of one record."""
        end = self._starts[record + 1] if record + 1 < self.size else self.n_passages
        return range(int(self._starts[record]), int(end))

    def upper_bound(self, tokens: Sequence[str]) -> float:
        """A score no document can reach: each term's idf times (k1 + 1); used to map scores into [0, 1]."""
        bound = sum(repeat * self.idf[tid] for t, repeat in Counter(tokens).items()
                    if (tid := self._term(t)) is not None)
        return float(bound * (self.k1 + 1))


def _interleave(at: np.ndarray, *pairs: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
    """For each (old, new) pair: ``np.insert(old, at, new)`` with ``at`` non-decreasing; the
    positions are worked out once for all the pairs (three np.insert calls took ~0.1 s at 100k)."""
    total = len(pairs[0][0]) + len(at)
    placed = at + np.arange(len(at))  # where each new element lands
    old_slots = np.ones(total, dtype=bool)
    old_slots[placed] = False
    merged = []
    for old, new in pairs:
        out = np.empty(total, dtype=np.result_type(old, new))
        out[old_slots] = old
        out[placed] = new
        merged.append(out)
    return tuple(merged)


# Postings renumbered at a time when an update copies them (4M: 16 MB of temporaries).
MERGE_BLOCK = 1 << 22
# Tokens counted at a time (a document is never split): ~45 bytes of temporaries each, ~180 MB.
COUNT_BLOCK = 1 << 20
