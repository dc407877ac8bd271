"""The rows a large vector index searches: every window's float16 vector, held once, and a
product-quantized copy of them that a query scans in full (``Scan``) to find the candidates
whose float16 rows it then scores exactly.

A ``Store``'s rows never change once made: an update that adds windows keeps the store and puts
the new rows beside it (the index's delta), and an update that removes windows leaves their rows
in the store, unreferenced, until enough have come and gone that the index gathers its rows into
a new store (``VectorIndex``).

A store is searched exactly (every float16 row) from the moment it is made: its scan is trained
(~40-55 s at a million rows on two laptop cores), or read back from the cache folder
(``scan_file``), by one background thread at low priority, and set on the store in one
assignment once whole, so no start or update waits for it and no search sees half of it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import mmap
import os
import queue
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from .rows_file import read_many

if TYPE_CHECKING:
    from .scan_file import ScanFile

log = logging.getLogger("vecbook")

# Rows a store's scan is trained on (sampled, seeded): 16 centroids per sub-quantizer want a few
# thousand points each; more only lengthens the training.
TRAIN_ROWS = 65_536
TRAIN_SEED = 1234  # the same rows train the same quantizer: a rebuilt store answers as before
# Rows decoded to float32 at a time while encoding (16k x 384 x 4 bytes: 25 MB).
ENCODE_BLOCK = 16_384
# Each sub-quantizer of the scan covers this many dimensions with 16 centroids (4 bits). On a
# million synthetic bag-of-words vectors (bench/synthetic.py, which spread over the sphere as
# text vectors do not, the hard case), rescoring the scan's 512 best rows found the exact top 10
# with recall 1.000 at 2 dimensions each, 0.9975 at 3 and 0.990 (1,024 rows) at 4; a scan of
# 2 dimensions each reads 96 bytes a row and took ~16-20 ms a query on one core.
DIMS_PER_SUBQUANTIZER = 2
# How long the background thread that makes scans waits for another store before it ends.
IDLE_SECONDS = 30.0


class Scan:
    """FAISS's 4-bit product quantizer with SIMD lookups (``IndexPQFastScan``) over a store's
    rows: an approximate score of every row in one pass over ~d/4 bytes a row, so that only its
    best few hundred rows are scored exactly."""

    def __init__(self, index: Any) -> None:
        self.index = index
        # A scan saved over other rows and matched to this store's (``scan_file``): each scan
        # row's store row (-1: its text is gone), and the store rows it lacks, sorted (a search
        # scores those exactly). None and none for a scan of the store's very rows.
        self.to_store: np.ndarray | None = None
        self.uncovered = np.zeros(0, dtype=np.int64)

    @classmethod
    def trained(cls, rows: int, decode: Callable[[np.ndarray], np.ndarray], metric: str) -> Scan | None:
        """A scan of ``rows`` rows (float32 from ``decode``), trained on a seeded sample; None for
        a dimension it cannot split (odd), where searches stay exact. ``decode`` raises
        ``StoreGone`` to stop it (the store it reads is no longer searched)."""
        import faiss

        if not rows:
            return None
        dim = decode(np.zeros(1, dtype=np.int64)).shape[1]
        parts = _subquantizers(dim)
        if parts is None:
            return None
        index = faiss.IndexPQFastScan(dim, parts, 4, faiss.METRIC_INNER_PRODUCT if metric == "cosine"
                                      else faiss.METRIC_L2)
        sample = np.sort(np.random.default_rng(TRAIN_SEED).choice(rows, size=min(rows, TRAIN_ROWS), replace=False))
        index.train(np.ascontiguousarray(decode(sample), dtype=np.float32))
        for start in range(0, rows, ENCODE_BLOCK):
            index.add(np.ascontiguousarray(decode(np.arange(start, min(start + ENCODE_BLOCK, rows))), dtype=np.float32))
        return cls(index)

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def search(self, query: np.ndarray, count: int) -> np.ndarray:
        """The store rows of the ``count`` rows the quantizer scores best for the prepared float32
        ``query``, best first (FAISS scans on the calling thread: its other cores stay with other
        work); rows whose text the store no longer holds are left out."""
        from .vector_index import search_on_this_thread

        count = min(count, len(self))
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        _, rows = search_on_this_thread(self.index, query.reshape(1, -1), count)
        rows = rows[0]
        rows = rows[rows >= 0]
        if self.to_store is None:
            return rows
        rows = self.to_store[rows]
        return rows[rows >= 0].astype(np.int64)


def _subquantizers(dim: int) -> int | None:
    """How many sub-quantizers split ``dim``: DIMS_PER_SUBQUANTIZER dimensions each, or the
    nearest even divisor above that (FAISS's fast scan packs them in pairs)."""
    for parts in range(max(2, dim // DIMS_PER_SUBQUANTIZER), 1, -1):
        if dim % parts == 0 and parts % 2 == 0:
            return parts
    return None


class StoreGone(Exception):
    """Raised to the scan being made for a store that nothing searches any more."""


class Store:
    """Float16 rows (``rows``), the 16-byte keys of their texts (``joined``) and their ``Scan``
    (None until the background thread has made it: searches are exact until then). Shared by
    every index made from it; its rows never change."""

    def __init__(self, rows: np.ndarray, joined: bytes, scan: Scan | None = None) -> None:
        self.rows = rows
        self.joined = joined
        self.scan = scan
        # Set once the background thread is done with this store (its scan set, or none to be had).
        self.scan_settled = threading.Event()
        if scan is not None:
            self.scan_settled.set()

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def dimension(self) -> int:
        return int(self.rows.shape[1])

    def drop_pages(self) -> None:
        """Take the pages of mapped rows (``rows_file``) out of this process: a cache save reads
        every row, ~770 MB at a million, that the process would otherwise count as its own for
        as long as it serves. They stay in the system's page cache, and a search that needs a
        row maps its page again. Nothing for rows held in memory."""
        base: Any = self.rows
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        mapped = base.obj if isinstance(base, memoryview) else base
        if isinstance(mapped, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            with contextlib.suppress(OSError, ValueError):  # a closed mapping, or a system without it
                mapped.madvise(mmap.MADV_DONTNEED)

    @classmethod
    def built(cls, rows: np.ndarray, joined: bytes, metric: str, saved: ScanFile | None = None) -> Store:
        """A store of ``rows`` (float16, as the index keeps them), searched exactly until its
        scan, read from ``saved`` when that holds one of these very rows or else trained, is
        set by the background thread."""
        store = cls(rows, joined)
        _QUANTIZER.submit(store, metric, saved)
        return store

    def wait_for_scan(self, timeout: float | None = None) -> bool:
        """Wait until the background thread is done with this store (its scan set, or none to
        be had); False when ``timeout`` passed first. Tools and tests: searches never wait."""
        return self.scan_settled.wait(timeout)

    def _settle(self, scan: Scan | None) -> None:
        self.scan = scan  # one assignment: a search sees no scan or the whole one
        self.scan_settled.set()


class _Quantizer:
    """The one background thread that makes stores' scans, oldest store first, at the lowest
    CPU priority and with one FAISS thread: a search keeps a core, and a start or an update
    never waits. A queued store holds no reference to it, so a store replaced before its turn
    (or during its training) is dropped, not trained."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[weakref.ref[Store], str, ScanFile | None]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._holds = 0  # builds under way that asked trainings to wait (``held``)
        self._unheld = threading.Condition()

    def submit(self, store: Store, metric: str, saved: ScanFile | None) -> None:
        """Queue ``store``'s scan, starting the thread if it ended (idle) or never started."""
        with self._lock:
            self._jobs.put((weakref.ref(store), metric, saved))
            if self._thread is None:
                # A daemon: a one-off search's process exits without waiting for a training.
                self._thread = threading.Thread(target=self._run, name="vecbook-scan", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        import faiss

        _lower_priority()
        faiss.omp_set_num_threads(1)  # this thread's own count: the training runs on it alone
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        self._thread = None
                        return
                continue
            try:
                _make_scan(*job)
            except StoreGone:
                log.info("vector index: the store being quantized was replaced; its scan was dropped")
            except Exception as exc:  # noqa: BLE001  (searches stay exact: nothing a user loses but speed)
                log.warning("vector index: quantizing the rows for scanning failed (%s: %s); searches scan "
                            "every row exactly", type(exc).__name__, exc)
                store = job[0]()
                if store is not None:
                    store._settle(None)
            finally:
                self._jobs.task_done()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """No scan is trained while this is held (a saved one is still read): a build holds it
        until its caches are saved, so that a first build's training does not add its sample
        and codes to the build's own peak of memory."""
        with self._unheld:
            self._holds += 1
        try:
            yield
        finally:
            with self._unheld:
                self._holds -= 1
                self._unheld.notify_all()

    def wait_unheld(self) -> None:
        """Return once no build holds the trainings back."""
        with self._unheld:
            self._unheld.wait_for(lambda: not self._holds)

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait until every queued store is done (its scan set and saved); False on ``timeout``."""
        done = self._jobs.all_tasks_done
        with done:
            return done.wait_for(lambda: not self._jobs.unfinished_tasks, timeout)


_QUANTIZER = _Quantizer()


def trainings_held() -> contextlib.AbstractContextManager[None]:
    """A context in which no scan is trained (``_Quantizer.held``)."""
    return _QUANTIZER.held()


def wait_for_scans(timeout: float | None = None) -> bool:
    """Wait until the background thread has made (and saved) the scan of every store given to
    it; False when ``timeout`` passed first. For tools, tests and an orderly exit."""
    return _QUANTIZER.wait_idle(timeout)


def _make_scan(ref: weakref.ref[Store], metric: str, saved: ScanFile | None) -> None:
    """Read ``ref``'s store's scan from ``saved``, or train it (and save it there), and set it."""
    store = ref()
    if store is None:
        return
    rows, joined, dimension = len(store), store.joined, store.dimension
    del store  # held only a block at a time below: a store replaced meanwhile is freed

    def decode(picked: np.ndarray) -> np.ndarray:
        current = ref()
        if current is None:
            raise StoreGone
        # Through the file: through the mapping, the training sample's 65,536 rows scattered
        # over a million mapped most of it into the process (~770 MB at a first build's end).
        return read_many(current.rows, picked).astype(np.float32)

    started = _now()
    # A saved scan of these rows, or of rows that differ little from them (``scan_file``).
    scan = saved.load_over(joined, metric, dimension) if saved is not None else None
    trained = scan is None
    if trained:
        _QUANTIZER.wait_unheld()
        started = _now()
        scan = Scan.trained(rows, decode, metric)
        log.info("vector index: %d rows quantized for scanning in %.1f s (in the background)", rows, _now() - started)
    else:
        log.info("vector index: the quantized scan of %d rows read back in %.1f s", len(scan), _now() - started)
    store = ref()
    if store is None:
        raise StoreGone
    store._settle(scan)
    del store
    if trained and scan is not None and saved is not None:
        saved.save(saved.key_for(joined, metric, dimension), scan, joined, metric, dimension)


def _lower_priority() -> None:
    """Give the calling thread the lowest CPU priority, where a thread has its own (Linux: its
    id is a process id to setpriority; elsewhere the call would name a process)."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass  # not allowed here: it runs at the normal priority


def candidates_for(k: int, rescored: int) -> int:
    """How many of the scan's best rows a search for ``k`` records scores exactly."""
    return max(rescored, 8 * k)


def grown(count: int, total: int) -> int:
    """The next, larger candidate count of a search whose candidates held too few records."""
    return min(total, max(2 * count, math.ceil(count * 1.5)))


def _now() -> float:
    import time

    return time.perf_counter()
