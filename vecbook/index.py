"""Indexes: BM25 keyword scoring from numpy postings (over the terms of ``tokens``) and the
FAISS vector index whose records score by their best window: exhaustive, and past
APPROXIMATE_FROM windows searched through a partition of its rows (``partition``)."""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Sequence

import numpy as np

from .partition import Partition
from .tokens import Vocabulary
from .vector_cache import KeyRows

log = logging.getLogger("vecbook")


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
            indptr = np.searchsorted(terms, np.arange(self.n_terms + 1))
        self._build_postings(docs, indptr, tf)

    def _count_pairs(self, documents: Sequence[np.ndarray],
                     numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term, document, count) of every distinct pair in the documents ``numbers``, ordered by
        term, then document: the postings order, so no second sort is needed."""
        chosen = [documents[i] for i in numbers.tolist()]
        if not chosen:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        token_ids = np.concatenate([np.asarray(d, dtype=np.int64) for d in chosen])
        lengths = self.lengths[numbers]
        # Count pairs with one np.unique over term-major keys rather than a Counter per
        # document: 5x faster at 100k, and the sorted keys are already the postings order.
        width = max(self.n_passages, 1)
        keys, counts = np.unique(token_ids * width + np.repeat(numbers, lengths), return_counts=True)
        terms, docs = np.divmod(keys, width)
        return terms, docs, counts

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
        at = np.searchsorted(keys, fresh_terms * width + fresh_docs)
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
# Windows scored per block when scoring a filtered subset: 16k x 384 float32 is 25 MB.
SCORE_BLOCK = 16_384
# A search for k records first asks FAISS for k + 1 + k // SHALLOW_SHARE windows, and searches
# as deep as multi-window records could need only when those hold fewer than k records.
SHALLOW_SHARE = 2
# From this many windows on, a search scores the rows of the partition's nearest lists rather
# than every row (``Partition``): below it an exact scan of the float16 rows takes ~15 ms on a
# laptop core and grows with the rows; above it the partition scans ~20% of them, at a
# recall@10 against exact search of 0.988 on real vectors (bench/ann_recall.py). Until the
# partition is trained (in a background thread, seconds at a million rows) searches are exact.
APPROXIMATE_FROM = 250_000


class VectorIndex:
    """Exhaustive FAISS index over record windows, stored as float16; a record scores as its best window.

    ``cosine``: vectors are L2-normalised and the inner product is the cosine c;
    score = (1 + c) / 2. ``l2``: the squared distance d; score = 1 / (1 + d).
    Both lie in [0, 1] and rise with similarity. Below APPROXIMATE_FROM windows every
    vector is compared; from there on a search compares those of the partition's lists
    nearest the query (``partition``, trained in the background; exact until then), each
    with the same float16 arithmetic. float16 halves the memory a query reads, which is
    what a scan on a laptop waits for, and keeps 11 significant bits, more than the
    bfloat16 model output carries (8).
    """

    def __init__(self, vectors: np.ndarray | None, owners: np.ndarray, n_records: int, metric: str = "cosine",
                 spans: np.ndarray | None = None, keys: Sequence[bytes] = (),
                 placed: dict[str, tuple[list[Any], int, int]] | None = None, *,
                 fill: tuple[int, Callable[[np.ndarray], None]] | None = None,
                 carry: tuple[VectorIndex, np.ndarray] | None = None) -> None:
        """Rows are windows: ``owners`` gives each row's record, ``spans`` its (start, end)
        in the record's content, ``keys`` the hash of its text (for reuse by the next build),
        ``placed`` each source's (records list, first row, rows) where all its windows are rows.
        ``fill`` = (dimension, writer) replaces ``vectors`` (then None): the writer gets FAISS's float16
        storage for every row and writes it in place (rows kept from an earlier index are
        copied as they are, not decoded, normalised, encoded and copied again).
        ``carry`` = (the previous index, each row's row there or -1): its partition is carried
        over rather than trained again."""
        import faiss

        self.metric = metric
        # int32: 4 bytes a window less than int64 for each, 12 MB at a million windows.
        self.owners = np.asarray(owners, dtype=np.int32)  # window -> record, non-decreasing
        self.n_records = n_records
        self.spans = np.zeros((len(self.owners), 2), dtype=np.int32) if spans is None else \
            np.asarray(spans, dtype=np.int32)
        self.keys = list(keys)
        self.placed = placed or {}
        self._lookup: KeyRows | None = None  # see rows_of
        self.embedded = np.zeros(n_records, dtype=bool)
        self.embedded[self.owners] = True
        if fill is None:
            if vectors is None:
                raise TypeError("VectorIndex needs vectors or fill")
            codes = encode_vectors(vectors, metric)
            fill = (codes.shape[1], lambda rows: rows.__setitem__(slice(None), codes))
        dim, write = fill
        self.index = faiss.IndexScalarQuantizer(
            dim, faiss.ScalarQuantizer.QT_fp16,
            faiss.METRIC_INNER_PRODUCT if metric == "cosine" else faiss.METRIC_L2)
        self.vectors = np.zeros((0, dim), dtype=np.float16)
        if len(self.owners):
            # FAISS's own float16 codes, viewed: written in place, and scored exactly (subset
            # scoring) without a second copy.
            size = len(self.owners) * dim * 2
            self.index.codes.resize(size)
            self.index.ntotal = len(self.owners)
            self.vectors = faiss.rev_swig_ptr(self.index.codes.data(), size).view(np.float16).reshape(-1, dim)
            write(self.vectors)
        self.partition: Partition | None = None
        self._partitioning: threading.Thread | None = None
        if len(self.owners) >= APPROXIMATE_FROM:
            carried = carry[0].partition if carry is not None else None
            if carried is not None:
                self.partition = carried.carried(np.asarray(carry[1], dtype=np.int64), self.decode)  # type: ignore[index]
            if self.partition is None:
                self._partitioning = threading.Thread(target=self._partition_in_background, name="vecbook-partition",
                                                      daemon=True)
                self._partitioning.start()

    def decode(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of ``rows`` as FAISS decodes its float16 codes."""
        if not len(rows):
            return np.zeros((0, self.vectors.shape[1]), dtype=np.float32)
        return self.index.sa_decode(np.ascontiguousarray(self.vectors[rows]).view(np.uint8))

    def _partition_in_background(self) -> None:
        """Train the partition on this (daemon) thread with an OpenMP team of one: a search on
        another thread keeps the other cores, and is exact until the partition is set."""
        import faiss

        faiss.omp_set_num_threads(1)
        try:
            partition = Partition.train(len(self.owners), self.decode, self.metric)
        except Exception:  # noqa: BLE001 - searches stay exact: slower, never wrong
            log.exception("cannot partition the vector index; searches scan every vector")
            return
        self.partition = partition
        log.info("vector index: %d windows in %d lists, %d probed a query", len(self.owners), partition.lists,
                 partition.probes)

    def partition_now(self) -> Partition:
        """The partition, trained here if the background has not done it (tests, benchmarks)."""
        if self._partitioning is not None:
            self._partitioning.join()
        if self.partition is None:
            self.partition = Partition.train(len(self.owners), self.decode, self.metric)
        return self.partition

    def row_of(self, key: bytes) -> int | None:
        """The row holding the window whose text hashes to ``key`` (``rows_of`` one key)."""
        row = int(self.rows_of([key])[0])
        return None if row < 0 else row

    def rows_of(self, keys: Sequence[bytes]) -> np.ndarray:
        """The row holding each key's window (-1: none), found by bisection (``KeyRows``, made on
        first use): a dict of every key took ~100 MB and ~1 s at a million windows, made again
        by every update that looked one up."""
        if self._lookup is None:
            self._lookup = KeyRows(b"".join(self.keys))
        return self._lookup.rows_of(keys)

    @property
    def index_type(self) -> str:
        """The FAISS class and its storage, for ``stats``."""
        partition = self.partition
        if partition is None:
            return f"{type(self.index).__name__} (float16)"
        return f"{type(self.index).__name__} (float16), {partition.lists} lists, {partition.probes} probed a query"

    def _prepare(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).reshape(1, -1).copy()
        if self.metric == "cosine":
            q /= max(float(np.linalg.norm(q)), 1e-12)
        return q

    def _to_score(self, raw: np.ndarray) -> np.ndarray:
        if self.metric == "cosine":
            return np.clip((1.0 + raw) / 2.0, 0.0, 1.0)
        return 1.0 / (1.0 + np.maximum(raw, 0.0))

    def top(self, query: np.ndarray, k: int, mask: np.ndarray | None = None,
            probes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The k best records (indices, scores), restricted to ``mask`` when given. With a
        partition, among the rows of the ``probes`` lists nearest the query (its default when
        None; 0: every row, exact)."""
        n_windows = len(self.owners)
        if not n_windows or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        partition = self.partition if probes != 0 else None
        selected = None if mask is None else mask[self.owners]
        if partition is not None and (selected is None or int(selected.sum()) >= APPROXIMATE_FROM):
            return self._top_probed(query, k, partition, probes or partition.probes, selected)
        if mask is not None:
            return top_k(*self.scores_within(query, mask), k)
        # Extra windows of multi-window records are the only way one record can
        # take several of the top slots; searching that many more guarantees k
        # records. One window beyond shows whether equal scores run past the cut.
        depth = min(n_windows, k + n_windows - int(self.embedded.sum()) + 1)
        q = self._prepare(query)
        shallow = min(depth, k + 1 + k // SHALLOW_SHARE)
        if shallow < depth:
            # Most records have one window, so a few more than k windows usually hold k
            # records: then they are the k best, since every record left out scores at most
            # the last window found, below the k-th (the deeper search returns the same).
            # At 100k records, 151 windows against 851 saved ~0.5 ms of a 8-9 ms search.
            ids, scores, last = self._search_records(q, k, shallow)
            if len(ids) == k and last < scores[-1]:
                return ids, scores
        ids, scores, last = self._search_records(q, k, depth)
        if depth < n_windows and len(ids) == k and last >= scores[-1]:
            # Equal scores (duplicate records) straddle the search depth and FAISS
            # picked among them arbitrarily: score all, so top_k cuts by record order.
            return top_k(*self.scores_within(query, self.embedded), k)
        return ids, scores

    def _top_probed(self, query: np.ndarray, k: int, partition: Partition, probes: int,
                    selected: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``top`` among the rows of the lists nearest the query (and ``selected``, a filter's
        windows: the probes then grow as the filter narrows, so that about as many of its rows
        are scanned as an unfiltered search scans). The same depths as the exact search."""
        import faiss

        q = self._prepare(query)
        if selected is not None:
            probes = math.ceil(probes * len(selected) / max(int(selected.sum()), 1))
        rows = partition.probed(q[0], probes)
        if selected is not None:
            rows = rows[selected[rows]]
        if not len(rows):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        owners = self.owners[rows]
        records = 1 + int(np.count_nonzero(owners[1:] != owners[:-1]))
        depth = min(len(rows), k + len(rows) - records + 1)
        bitmap = np.zeros(len(self.owners), dtype=bool)
        bitmap[rows] = True
        bits = np.packbits(bitmap, bitorder="little")
        # The bitmap outlives the search: the selector only points at it.
        params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits)))
        shallow = min(depth, k + 1 + k // SHALLOW_SHARE)
        if shallow < depth:
            ids, scores, last = self._search_records(q, k, shallow, params)
            if len(ids) == k and last < scores[-1]:
                return ids, scores
        ids, scores, last = self._search_records(q, k, depth, params)
        if depth < len(rows) and len(ids) == k and last >= scores[-1]:
            return top_k(*self._score_windows(query, rows), k)  # ties past the depth: as in top
        return ids, scores

    def _search_records(self, q: np.ndarray, k: int, depth: int,
                        params: Any = None) -> tuple[np.ndarray, np.ndarray, float]:
        """The k best records among the ``depth`` best windows FAISS finds for the prepared
        query ``q`` (among the rows ``params`` selects), and the score of the last of those windows."""
        raw, windows = search_on_this_thread(self.index, q, depth, params)
        windows, raw = windows[0], raw[0]
        keep = windows >= 0
        scores_all = self._to_score(raw[keep])
        ids, scores = top_k(*_best_per_record(self.owners[windows[keep]], scores_all), k)
        return ids, scores, float(scores_all[-1]) if len(scores_all) else -np.inf

    def scores_within(self, query: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact scores of every embedded record where ``mask`` is true (same numbers as FAISS)."""
        return self._score_windows(query, np.flatnonzero(mask[self.owners]))

    def scores_of(self, query: np.ndarray, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``scores_within`` a mask of ``records`` (sorted, distinct), without the mask: their
        windows are found by bisection, not by a pass over every window's owner."""
        first = np.searchsorted(self.owners, records, "left")
        counts = np.searchsorted(self.owners, records, "right") - first
        ends = np.cumsum(counts)
        # Each record's run of windows first..first+count, in record order: the windows a
        # mask of these records selects, in the same order, so the scores are the same.
        windows = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) + np.repeat(first - ends + counts, counts)
        return self._score_windows(query, windows)

    def _score_windows(self, query: np.ndarray, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each record's best score among ``windows`` (ascending row numbers)."""
        if not len(windows):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        q = self._prepare(query)[0]
        raw = np.empty(len(windows), dtype=np.float32)
        for start in range(0, len(windows), SCORE_BLOCK):  # blocks bound the float32 copy
            part = slice(start, start + SCORE_BLOCK)
            block = self.decode(windows[part])  # decoded as FAISS decodes them (and as fast)
            raw[part] = block @ q if self.metric == "cosine" else ((block - q) ** 2).sum(axis=1)
        return _best_per_record(self.owners[windows], self._to_score(raw))


    def best_row(self, query: np.ndarray, record: int) -> int | None:
        """The row of ``record``'s best window for ``query`` (None: it has none), as ``best_rows``
        finds it; a record of one window (most) is not scored."""
        first, last = self.owners.searchsorted(record, "left"), self.owners.searchsorted(record, "right")
        if last - first == 1:
            return int(first)
        best = self.best_rows(query, [record]).get(record)
        return None if best is None else best[0]

    def best_rows(self, query: np.ndarray, records: Sequence[int]) -> dict[int, tuple[int, float]]:
        """For each of ``records``: its best window (row) and that window's score."""
        q = self._prepare(query)[0]
        best: dict[int, tuple[int, float]] = {}
        for record in records:
            # Rows are ordered by record, so a record's windows are one slice.
            first, last = np.searchsorted(self.owners, [record, record + 1])
            if last <= first:
                continue
            block = self.vectors[first:last].astype(np.float32)
            raw = block @ q if self.metric == "cosine" else ((block - q) ** 2).sum(axis=1)
            scores = self._to_score(raw)
            top = int(np.argmax(scores))
            best[record] = (int(first) + top, float(scores[top]))
        return best


def encode_vectors(vectors: np.ndarray, metric: str) -> np.ndarray:
    """The float16 rows FAISS stores for ``vectors`` (L2-normalised first for cosine)."""
    import faiss

    vectors = np.array(vectors, dtype=np.float32, order="C")  # a copy: the caller's array stays as it was
    if vectors.ndim != 2 or not len(vectors):
        return np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0), dtype=np.float16)
    if metric == "cosine":
        faiss.normalize_L2(vectors)  # normalise so inner product equals cosine
    encoder = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_fp16)
    return encoder.sa_encode(vectors).view(np.float16)


def search_on_this_thread(index: object, queries: np.ndarray, k: int,
                          params: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``index.search(queries, k, params=params)`` with an OpenMP team of one: the calling thread scans alone.

    FAISS splits a search by query, so one query is scanned by one thread whatever the team
    size; but the search still opens a team of one thread per core and ends at a barrier
    that waits for every member. With the other core busy, the idle member waits for it:
    at 100k windows beside one busy process, a search took 15.8 ms against 9.5 ms alone
    (medians of 120 alternating; p95 28.0 against 17.6); on an idle machine they are equal.
    omp_set_num_threads sets the calling thread's own count, restored here, so other
    threads (and this one's later batch work) keep their teams.
    """
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        if params is None:
            return index.search(queries, k)  # type: ignore[attr-defined]
        return index.search(queries, k, params=params)  # type: ignore[attr-defined]
    finally:
        faiss.omp_set_num_threads(threads)


def _best_per_record(owners: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse window scores to one score per record: the best window's."""
    if not len(owners):
        return owners, scores
    order = np.lexsort((-scores, owners))
    owners, scores = owners[order], scores[order]
    first = np.concatenate([[True], owners[1:] != owners[:-1]])
    return owners[first], scores[first]


def top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k highest scores, best first; equal scores go by record order, so ties cut the same every time."""
    if len(ids) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]  # an O(n) cut, keeping every tie
        keep = scores >= kth
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order]
