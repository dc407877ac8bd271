"""The vector index: FAISS's float16 rows of every model window, a record scoring as its best
window; exhaustive, and past APPROXIMATE_FROM windows searched through a partition of its rows
(``partition``)."""

from __future__ import annotations

import logging
import math
import threading
from typing import Any, Callable, Sequence

import numpy as np

from .partition import Partition
from .vector_files import KeyRows

log = logging.getLogger("vecbook")

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
# Once trained, the partition's probes are raised until TUNE_QUERIES of the index's own rows find
# TUNE_RECALL of their 10 nearest other rows (``VectorIndex._tuned``).
TUNE_QUERIES = 64
TUNE_RECALL = 0.99
TUNE_SEED = 4321


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
            partition = self._tuned(Partition.train(len(self.owners), self.decode, self.metric))
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
            self.partition = self._tuned(Partition.train(len(self.owners), self.decode, self.metric))
        return self.partition

    def _tuned(self, partition: Partition) -> Partition:
        """``partition`` with its probes raised until a sample of the index's own rows, searched
        as queries, finds TUNE_RECALL of their exact 10 nearest other rows. Vectors that do not
        fall into clusters (as real text vectors do) need more of the lists probed; where the
        default already does, it stays (the floor that real queries were measured with)."""
        import faiss

        rows = len(self.owners)
        picks = np.sort(np.random.default_rng(TUNE_SEED).choice(rows, size=min(TUNE_QUERIES, rows), replace=False))
        queries = self.decode(picks)
        if self.metric == "cosine":
            queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        exact = [set(search_on_this_thread(self.index, q[None, :], 11)[1][0].tolist()) - {int(row)}
                 for q, row in zip(queries, picks.tolist())]
        probes = partition.probes
        while probes < partition.lists:
            found = []
            for q, row, truth in zip(queries, picks.tolist(), exact):
                probed = partition.probed(q, probes)
                bitmap = np.zeros(rows, dtype=bool)
                bitmap[probed] = True
                bits = np.packbits(bitmap, bitorder="little")
                params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits)))
                got = set(search_on_this_thread(self.index, q[None, :], 11, params)[1][0].tolist()) - {int(row)}
                found.append(len(got & truth) / max(len(truth), 1))
            if float(np.mean(found)) >= TUNE_RECALL:
                break
            probes = min(partition.lists, probes * 3 // 2 + 1)
        partition.probes = probes
        return partition

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
