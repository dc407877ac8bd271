"""The vector index: the float16 rows of every model window, a record scoring as its best
window. Below APPROXIMATE_FROM windows a query compares every row (FAISS's exhaustive scan of
float16 rows); from there on it scans a product-quantized copy of the rows (``vector_store``)
and scores its best few hundred rows exactly, so every score it returns is exact. That copy is
made (or read back from the cache folder) in the background: until it is set, the index scores
every row exactly."""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

import numpy as np

from .key_rows import KEY_BYTES, KeyRows
from .rows_file import fill_rows, read_rows
from .search_rows import SearchRows
from .vector_files import joined_runs
from .vector_store import Scan, Store, candidates_for, grown

if TYPE_CHECKING:
    from .rows_file import RowsFile
    from .scan_file import ScanFile

log = logging.getLogger("vecbook")

# Windows scored per block when scoring a filtered subset: 16k x 384 float32 is 25 MB.
SCORE_BLOCK = 16_384
# A search for k records first asks FAISS for k + 1 + k // SHALLOW_SHARE windows, and searches
# as deep as multi-window records could need only when those hold fewer than k records.
SHALLOW_SHARE = 2
# From this many windows on, a search scans the quantized rows and scores exactly only the
# candidates they rank best (``vector_store``). Below it, FAISS's scan of every float16 row
# takes ~10 ms per 100,000 rows on a laptop core; above it, the quantized scan of a million rows
# takes ~20 ms with the rescoring, and finds the exact top 10 (bench/scale.py, bench/ann_recall.py).
APPROXIMATE_FROM = 200_000
# The quantized scan's best rows a search scores exactly, at least (``candidates_for``).
RESCORED = 512
# A filter that leaves at most this many windows is scored exactly (a few milliseconds),
# rather than through the scan, whose candidates it would mostly drop.
EXACT_SUBSET = 65_536
# An update adds its new rows to a delta beside the store and leaves removed rows unreferenced
# in it (no copy of a million rows for one note); once the delta and the unreferenced rows
# pass this share of the store (or MERGE_ROWS), the next build gathers every row into a new store.
MERGE_SHARE = 0.05
MERGE_ROWS = 20_000
ENCODE_BLOCK = 4096  # rows copied or encoded at a time when an index is made


class VectorIndex:
    """The index over record windows, stored as float16; a record scores as its best window.

    ``cosine``: vectors are L2-normalised and the inner product is the cosine c;
    score = (1 + c) / 2. ``l2``: the squared distance d; score = 1 / (1 + d).
    Both lie in [0, 1] and rise with similarity. Below APPROXIMATE_FROM windows every
    vector is compared (FAISS's ``IndexScalarQuantizer`` of float16 rows); from there on the
    rows live in a ``Store`` (and a small delta beside it), a query scans the store's
    quantized rows and scores the best candidates exactly from their float16 rows. float16
    halves the memory a query reads, and keeps 11 significant bits, more than the bfloat16
    model output carries (8).
    """

    def __init__(self, vectors: np.ndarray | None, owners: np.ndarray, n_records: int, metric: str = "cosine",
                 spans: np.ndarray | None = None, keys: Sequence[bytes] | bytes = (),
                 placed: dict[str, tuple[list[Any], int, int]] | None = None, *,
                 fill: tuple[int, Callable[[np.ndarray, int], None]] | None = None,
                 stored: tuple[Store, np.ndarray, np.ndarray] | None = None, scans: ScanFile | None = None,
                 saved_rows: RowsFile | None = None) -> None:
        """Rows are windows: ``owners`` gives each row's record, ``spans`` its (start, end)
        in the record's content, ``keys`` the hash of its text (for reuse by the next build:
        a list, or the 16-byte keys joined), ``placed`` each source's (records list, first row,
        rows) where all its windows are rows. ``fill`` = (dimension, writer) replaces ``vectors``
        (then None): the writer gets float16 storage for a block of rows and the first one's number
        and writes them in place (rows kept from an earlier index are copied as they are, not
        decoded, normalised, encoded and copied again). ``stored`` = (store, where, delta) gives the rows instead:
        row r is the store's row ``where[r]``, or the delta's row ``where[r] - len(store)``.
        ``scans``: where a new store's scan is saved, and read back when it holds these rows;
        ``saved_rows``: where a new store's float16 rows are saved, and mapped from when it holds
        these rows (``fill`` is then never called)."""
        self.metric = metric
        # int32: 4 bytes a window less than int64 for each, 4 MB at a million windows.
        self.owners = np.asarray(owners, dtype=np.int32)  # window -> record, non-decreasing
        self.n_records = n_records
        self.spans = np.zeros((len(self.owners), 2), dtype=np.int32) if spans is None else \
            np.asarray(spans, dtype=np.int32)
        # One buffer of 16-byte keys: a list of a million bytes objects took ~70 MB.
        self.joined_keys = keys if isinstance(keys, (bytes, bytearray)) else b"".join(keys)
        self.placed = placed or {}
        self._lookup: KeyRows | None = None  # see rows_of
        # (the previous index's sorted keys, each row's row there or -1): see ``updated``
        self._carried_from: tuple[KeyRows, np.ndarray] | None = None
        self.embedded = np.zeros(n_records, dtype=bool)
        self.embedded[self.owners] = True
        self.index: Any = None  # FAISS's exhaustive index (below APPROXIMATE_FROM)
        self.store: Store | None = None
        self.where = np.zeros(0, dtype=np.int64)
        self.delta = np.zeros((0, 0), dtype=np.float16)
        self._live = np.zeros(0, dtype=np.int32)  # store row -> index row (-1: no window of this index)
        if stored is not None:
            self._use_store(*stored)
            return
        if fill is None:
            if vectors is None:
                raise TypeError("VectorIndex needs vectors, fill or stored")
            codes = encode_vectors(vectors, metric)
            fill = (codes.shape[1], lambda rows, start: rows.__setitem__(slice(None), codes[start:start + len(rows)]))
        dim, write = fill
        if len(self.owners) >= APPROXIMATE_FROM:
            rows = self._store_rows(dim, write, saved_rows)
            self._use_store(Store.built(rows, self.joined_keys, metric, scans), np.arange(len(rows)),
                            np.zeros((0, dim), dtype=np.float16))
        else:
            self._exhaustive(dim, write)

    def _store_rows(self, dim: int, write: Callable[[np.ndarray, int], None], saved: RowsFile | None) -> np.ndarray:
        """A new store's float16 rows: mapped from ``saved`` when it holds these very rows (nothing
        is read from the vector cache or encoded: ~4 s of a warm start at a million rows), else
        written by ``write`` into it a block at a time and mapped (in memory where it cannot be)."""
        key = saved.key_for(self.joined_keys, self.metric, dim) if saved is not None else ""
        rows = saved.load(key, len(self.owners), dim) if saved is not None else None
        if rows is None and saved is not None:
            rows = saved.save_made(key, (len(self.owners), dim), write, bytes(self.joined_keys))
        if rows is None:
            rows = np.empty((len(self.owners), dim), dtype=np.float16)
            fill_rows(rows, write, ENCODE_BLOCK)
        return rows

    def _exhaustive(self, dim: int, write: Callable[[np.ndarray], None]) -> None:
        """Hold the rows in FAISS's exhaustive float16 index, written in place by ``write``."""
        import faiss

        self.index = faiss.IndexScalarQuantizer(
            dim, faiss.ScalarQuantizer.QT_fp16,
            faiss.METRIC_INNER_PRODUCT if self.metric == "cosine" else faiss.METRIC_L2)
        self.vectors: Any = np.zeros((0, dim), dtype=np.float16)
        if len(self.owners):
            # FAISS's own float16 codes, viewed: written in place, and scored exactly (subset
            # scoring) without a second copy.
            size = len(self.owners) * dim * 2
            self.index.codes.resize(size)
            self.index.ntotal = len(self.owners)
            self.vectors = faiss.rev_swig_ptr(self.index.codes.data(), size).view(np.float16).reshape(-1, dim)
            fill_rows(self.vectors, write, ENCODE_BLOCK)

    def _use_store(self, store: Store, where: np.ndarray, delta: np.ndarray) -> None:
        """Hold the rows as ``store``'s rows ``where`` (and ``delta``'s, numbered past the store's)."""
        self.store, self.where, self.delta = store, np.asarray(where, dtype=np.int64), delta
        live = np.full(len(store), -1, dtype=np.int32)
        in_store = self.where < len(store)
        live[self.where[in_store]] = np.flatnonzero(in_store)
        self._live = live
        self._delta_rows = np.flatnonzero(~in_store)  # the index rows held in the delta
        self.vectors = StoredRows(store, self.where, delta)

    @classmethod
    def updated(cls, previous: VectorIndex | None, owners: np.ndarray, n_records: int, metric: str,
                spans: np.ndarray, keys: Sequence[bytes] | bytes, placed: dict[str, tuple[list[Any], int, int]],
                dim: int, source: np.ndarray, fresh: Callable[[np.ndarray], np.ndarray],
                scans: ScanFile | None = None, saved_rows: RowsFile | None = None) -> VectorIndex:
        """The index of a build whose row r is ``previous``'s row ``source[r]`` (-1: a new row,
        whose float16 vector ``fresh(rows)`` gives). Past APPROXIMATE_FROM rows, on a previous
        index that holds a store, the store is kept: the new rows go to a delta beside it, the
        rows gone stay in it unreferenced, and only when both pass MERGE_SHARE of the store (or
        MERGE_ROWS) are the rows gathered into a new store (its scan made in the background, or
        read from ``scans``). A start (no ``previous``) keeps the store of ``saved_rows`` in the
        same way when the file holds rows of other keys within that share (``_saved_store``).
        Otherwise every row is copied (a new store's rows mapped from ``saved_rows`` when it
        holds exactly them, else saved there)."""
        source = np.asarray(source, dtype=np.int64)
        index = cls._updated(previous, owners, n_records, metric, spans, keys, placed, dim, source, fresh, scans,
                             saved_rows)
        if previous is not None and previous._lookup is not None and len(source) == len(index.owners):
            # The next lookup (an update's split passages, the cache facts stats reports) orders
            # these keys from the previous index's order rather than sorting them again.
            index._carried_from = (previous._lookup, source)
        return index

    @classmethod
    def _updated(cls, previous: VectorIndex | None, owners: np.ndarray, n_records: int, metric: str,
                 spans: np.ndarray, keys: Sequence[bytes] | bytes, placed: dict[str, tuple[list[Any], int, int]],
                 dim: int, source: np.ndarray, fresh: Callable[[np.ndarray], np.ndarray],
                 scans: ScanFile | None, saved_rows: RowsFile | None) -> VectorIndex:
        """``updated``'s index (its rows kept, carried or copied)."""
        if previous is None and saved_rows is not None and len(owners) >= APPROXIMATE_FROM:
            joined = bytes(keys) if isinstance(keys, (bytes, bytearray)) else b"".join(keys)
            kept = _saved_store(saved_rows, joined, metric, dim, fresh, scans)
            if kept is not None:
                return cls(None, owners, n_records, metric, spans, keys, placed, stored=kept)
        store = previous.store if previous is not None else None
        if store is not None and len(owners) >= APPROXIMATE_FROM and store.dimension == dim:
            assert previous is not None  # (the store is previous's)
            where, delta = previous._carried_rows(source, fresh, dim)
            unreferenced = len(store) - int(np.count_nonzero(where < len(store)))
            if len(delta) + unreferenced <= max(MERGE_ROWS, MERGE_SHARE * len(store)):
                return cls(None, owners, n_records, metric, spans, keys, placed, stored=(store, where, delta))
            log.info("vector index: %d new and %d unreferenced rows beside %d: gathering them into a new store",
                     len(delta), unreferenced, len(store))

        def write(rows: np.ndarray, start: int) -> None:
            picked = source[start:start + len(rows)]
            copied, new = np.flatnonzero(picked >= 0), np.flatnonzero(picked < 0)
            if len(copied):
                rows[copied] = previous.vectors[picked[copied]]  # type: ignore[union-attr]
            if len(new):
                rows[new] = fresh(new + start)

        return cls(None, owners, n_records, metric, spans, keys, placed, fill=(dim, write), scans=scans,
                   saved_rows=saved_rows)

    def _carried_rows(self, source: np.ndarray, fresh: Callable[[np.ndarray], np.ndarray],
                      dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(where, delta) of a build over this index's store: copied rows keep their store rows,
        copied delta rows and the new rows (``fresh``) make the new delta."""
        assert self.store is not None
        size = len(self.store)
        where = np.empty(len(source), dtype=np.int64)
        copied = source >= 0
        where[copied] = self.where[source[copied]]
        from_delta = np.flatnonzero(copied & (where >= size))
        new = np.flatnonzero(~copied)
        parts = [self.delta[where[from_delta] - size]] if len(from_delta) else []
        parts += [fresh(new[start:start + ENCODE_BLOCK]) for start in range(0, len(new), ENCODE_BLOCK)]
        where[from_delta] = size + np.arange(len(from_delta))
        where[new] = size + len(from_delta) + np.arange(len(new))
        delta = np.concatenate(parts).astype(np.float16, copy=False) if parts else np.zeros((0, dim), dtype=np.float16)
        return where, delta

    def decode(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of ``rows`` (as FAISS decodes its float16 codes: exactly)."""
        if not len(rows):
            return np.zeros((0, self.vectors.shape[1]), dtype=np.float32)
        if self.index is None:
            return self.vectors[rows].astype(np.float32)
        return self.index.sa_decode(np.ascontiguousarray(self.vectors[rows]).view(np.uint8))

    def search_rows(self) -> SearchRows:
        """A search's decoded rows (``SearchRows``): given to ``top``, ``scores_of`` and the
        feedback query, each row one search scores is read and decoded once."""
        return SearchRows(self.decode, int(self.vectors.shape[1]))

    @property
    def keys(self) -> list[bytes]:
        """Each row's 16-byte key (a list made on demand: tests and tools)."""
        joined = self.joined_keys
        return [bytes(joined[i:i + KEY_BYTES]) for i in range(0, len(joined), KEY_BYTES)]

    def keys_of(self, first: int, end: int) -> list[bytes]:
        """The keys of rows ``first`` to ``end``."""
        joined = self.joined_keys
        return [bytes(joined[i:i + KEY_BYTES]) for i in range(KEY_BYTES * first, KEY_BYTES * end, KEY_BYTES)]

    def row_of(self, key: bytes) -> int | None:
        """The row holding the window whose text hashes to ``key`` (``rows_of`` one key)."""
        row = int(self.rows_of([key])[0])
        return None if row < 0 else row

    def rows_of(self, keys: Sequence[bytes]) -> np.ndarray:
        """The row holding each key's window (-1: none), found by bisection (``KeyRows``, made on
        first use): a dict of every key took ~100 MB and ~1 s at a million windows, made again
        by every update that looked one up."""
        return self.lookup.rows_of(keys)

    @property
    def lookup(self) -> KeyRows:
        """The rows' keys, sorted for bisection (made on first use: from the previous index's,
        when an update made this one from it, see ``updated``)."""
        if self._lookup is None:
            carried, joined = self._carried_from, bytes(self.joined_keys)
            self._lookup = carried[0].carried(carried[1], joined) if carried is not None else KeyRows(joined)
        return self._lookup

    def carried_from(self, keep: bool) -> tuple[KeyRows, np.ndarray] | None:
        """(the previous index's sorted keys, each row's row there or -1) if an update made this
        index from one; let go now unless ``keep`` (the update's cache facts are worked out from
        them, and let them go then)."""
        carried = self._carried_from
        if not keep:
            self._carried_from = None
        return carried

    @property
    def index_type(self) -> str:
        """The FAISS class and its storage, for ``stats``."""
        if self.store is None:
            return f"{type(self.index).__name__} (float16)"
        scan = self.store.scan
        if scan is None:
            if self.store.scan_settled.is_set():
                return "float16 rows, scanned exactly"
            return "float16 rows, scanned exactly until their quantized scan is ready"
        return (f"{type(scan.index).__name__} ({scan.index.M} x 4 bits) over float16 rows, the best "
                f"{RESCORED} or more scored exactly")

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
            exact: bool = False, held: SearchRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The k best records (indices, scores), restricted to ``mask`` when given. Past
        APPROXIMATE_FROM windows the candidates come from the quantized scan (``exact``: from
        every row, as a slow reference), and the rows they are scored from are kept in ``held``
        (the search's ``search_rows``) when given."""
        n_windows = len(self.owners)
        if not n_windows or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if self.store is not None:
            selected = None if mask is None else mask[self.owners]
            scan = self.store.scan  # read once: the background thread sets it (once) at any moment
            if exact or scan is None or (selected is not None and int(selected.sum()) <= EXACT_SUBSET):
                # Until the scan is ready every row is scored: slower, as exact.
                return top_k(*self.scores_within(query, self.embedded if mask is None else mask), k)
            return self._top_scanned(query, k, selected, scan, held)
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

    def _top_scanned(self, query: np.ndarray, k: int, selected: np.ndarray | None,
                     scan: Scan, held: SearchRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``top`` over a store: the quantized scan's best rows (of this index: a store row no
        window of it holds is dropped), with every delta row, scored exactly; the candidates
        grow until they hold k records (of ``selected`` windows, a filter's: a filter that keeps
        a share of the windows asks the scan for that many times the candidates)."""
        store = self.store
        assert store is not None
        q = self._prepare(query)
        count = candidates_for(k, RESCORED)
        if selected is not None:
            count = math.ceil(count * len(selected) / max(int(selected.sum()), 1))
        # Store rows a scan saved over other rows lacks are scored exactly, as the delta is.
        unscanned = self._live[scan.uncovered] if len(scan.uncovered) else scan.uncovered
        extra = np.concatenate([self._delta_rows, unscanned[unscanned >= 0]]) if len(unscanned) else self._delta_rows
        while True:
            found = self._live[scan.search(q[0], count)]
            rows = np.concatenate([found[found >= 0], extra])
            if selected is not None:
                rows = rows[selected[rows]]
            rows.sort()
            ids, scores = top_k(*self._score_windows(query, rows, held), k)
            if len(ids) >= k or count >= len(store):
                return ids, scores
            count = grown(count, len(store))

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

    def scores_of(self, query: np.ndarray, records: np.ndarray,
                  held: SearchRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``scores_within`` a mask of ``records`` (sorted, distinct), without the mask: their
        windows are found by bisection, not by a pass over every window's owner. Their rows are
        taken from (and kept in) ``held`` when given."""
        first = self._bounds(records, "left")
        # Each record's run of windows, in record order: the windows a mask of these records
        # selects, in the same order, so the scores are the same.
        windows = joined_runs(first, self._bounds(records, "right") - first)
        return self._score_windows(query, windows, held)

    def _bounds(self, records: Sequence[int] | np.ndarray, side: Literal["left", "right"] = "left") -> np.ndarray:
        """Where ``records`` begin (or end, side "right") among the rows, by bisection of the
        owners with the values in the owners' own dtype: numpy casts the whole array to the
        values' type otherwise (int32 owners and an int64 or a Python int: ~0.5 ms a call at a
        million rows, 13 ms of a hybrid search's hits)."""
        return np.searchsorted(self.owners, np.asarray(records, dtype=self.owners.dtype), side).astype(np.int64)

    def _score_windows(self, query: np.ndarray, windows: np.ndarray,
                       held: SearchRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each record's best score among ``windows`` (ascending row numbers), their rows
        decoded by ``held`` when given (a search's rows read once), else read and decoded."""
        if not len(windows):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        q = self._prepare(query)[0]
        raw = np.empty(len(windows), dtype=np.float32)
        decode = self.decode if held is None else held
        for start in range(0, len(windows), SCORE_BLOCK):  # blocks bound the float32 copy
            part = slice(start, start + SCORE_BLOCK)
            block = decode(windows[part])  # decoded as FAISS decodes them (and as fast)
            raw[part] = block @ q if self.metric == "cosine" else ((block - q) ** 2).sum(axis=1)
        return _best_per_record(self.owners[windows], self._to_score(raw))

    def windows_of(self, record: int) -> np.ndarray:
        """The rows (windows) of ``record``, ascending; empty where it has no vector."""
        first, last = self._bounds([record, record + 1]).tolist()
        return np.arange(first, last, dtype=np.int64)

    def best_row(self, query: np.ndarray, record: int) -> int | None:
        """The row of ``record``'s best window for ``query`` (None: it has none), as ``best_rows``
        finds it; a record of one window (most) is not scored."""
        first, last = self._bounds([record, record + 1]).tolist()
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
            first, last = self._bounds([record, record + 1]).tolist()
            if last <= first:
                continue
            block = self.vectors[first:last].astype(np.float32)
            raw = block @ q if self.metric == "cosine" else ((block - q) ** 2).sum(axis=1)
            scores = self._to_score(raw)
            top = int(np.argmax(scores))
            best[record] = (int(first) + top, float(scores[top]))
        return best


class StoredRows:
    """An index's float16 rows read through its store and delta (row r: ``where[r]``), as an
    array of them would be indexed: by a row, a slice or an array of rows."""

    def __init__(self, store: Store, where: np.ndarray, delta: np.ndarray) -> None:
        self._store, self._where, self._delta = store, where, delta
        self.shape = (len(where), store.dimension)
        self.dtype = np.dtype(np.float16)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, picked: Any) -> np.ndarray:
        physical = self._where[picked]
        if np.ndim(physical) == 0:
            return self.take(np.array([physical]))[0]
        return self.take(physical)

    def take(self, physical: np.ndarray) -> np.ndarray:
        """The rows at store-or-delta positions ``physical``."""
        size = len(self._store)
        out = np.empty((len(physical), self.shape[1]), dtype=np.float16)
        in_store = physical < size
        if bool(in_store.all()):
            return read_rows(self._store.rows, physical) if len(physical) else out
        out[in_store] = read_rows(self._store.rows, physical[in_store])
        out[~in_store] = self._delta[physical[~in_store] - size]
        return out


def _saved_store(saved: RowsFile, joined: bytes, metric: str, dim: int, fresh: Callable[[np.ndarray], np.ndarray],
                 scans: ScanFile | None) -> tuple[Store, np.ndarray, np.ndarray] | None:
    """A start's (store, where, delta) over the rows ``saved`` holds, when they are of other
    rows than ``joined`` (a file edited since they were saved) and the rows they lack and those
    of theirs no longer used stay within MERGE_SHARE of them (or MERGE_ROWS), as an update's
    delta does: the file's rows are mapped where a row's key is there, the others (``fresh``)
    go to the delta, and the store's scan is the one saved for the file's rows. Nothing is
    written. None for no such file, the very same rows (mapped as they are, by ``__init__``),
    or more change than that share (the rows are made anew and saved)."""
    found = saved.keys(metric, dim)
    if found is None or found[0] == saved.key_for(joined, metric, dim):
        return None
    key, stored = found
    size = len(stored) // KEY_BYTES
    where = _rows_in(stored, joined, max(MERGE_ROWS, MERGE_SHARE * size))
    # A file row serves the first row with its key (a text in two windows): the others are new.
    held = np.flatnonzero(where >= 0)
    _, first = np.unique(where[held], return_index=True)
    repeated = np.ones(len(held), dtype=bool)
    repeated[first] = False
    where[held[repeated]] = -1
    new = np.flatnonzero(where < 0)
    if len(new) + size - len(first) > max(MERGE_ROWS, MERGE_SHARE * size):
        return None
    rows = saved.load(key, size, dim)
    if rows is None:
        return None
    log.info("vector index: the saved rows %s hold %d of %d rows; %d new beside them", saved.path, len(first),
             len(where), len(new))
    where[new] = size + np.arange(len(new))
    parts = [fresh(new[start:start + ENCODE_BLOCK]) for start in range(0, len(new), ENCODE_BLOCK)]
    delta = np.concatenate(parts).astype(np.float16, copy=False) if parts else np.zeros((0, dim), dtype=np.float16)
    return Store.built(rows, stored, metric, scans), where, delta


def _rows_in(stored: bytes, joined: bytes, changed: float) -> np.ndarray:
    """Each of the 16-byte keys ``joined``'s row among ``stored`` (-1: none). A start's rows come
    in the order of the saved ones but for the sources that changed: the rows both begin and
    end with are matched in place (one comparison of each, ~10 ms at a million), and only those
    between looked up (among the stored ones between) when they are at most ``changed`` rows; a
    key found only elsewhere then counts as new (its row goes to the delta). Otherwise every key
    is looked up (``KeyRows``: a sort of the stored keys and a bisection of each, ~1-3 s)."""
    old = np.frombuffer(stored, dtype="<u8").reshape(-1, KEY_BYTES // 8)
    new = np.frombuffer(joined, dtype="<u8").reshape(-1, KEY_BYTES // 8)
    both = min(len(old), len(new))
    differ = np.flatnonzero((old[:both] != new[:both]).any(axis=1))
    head = int(differ[0]) if len(differ) else both
    differ = np.flatnonzero((old[len(old) - both:][::-1] != new[len(new) - both:][::-1]).any(axis=1))
    tail = min(int(differ[0]) if len(differ) else both, both - head)
    if len(new) - head - tail > changed:
        return KeyRows(stored).rows_of(joined)
    where = np.full(len(new), -1, dtype=np.int64)
    where[:head] = np.arange(head)
    where[len(new) - tail:] = np.arange(len(old) - tail, len(old))
    if len(new) - head - tail and len(old) - head - tail:
        found = KeyRows(old[head:len(old) - tail].tobytes()).rows_of(new[head:len(new) - tail].tobytes())
        where[head:len(new) - tail] = np.where(found >= 0, found + head, -1)
    return where


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
