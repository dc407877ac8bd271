"""The rows a large vector index searches: every window's float16 vector, held once, and a
product-quantized copy of them that a query scans in full (``Scan``) to find the candidates
whose float16 rows it then scores exactly.

A ``Store`` never changes once made: an update that adds windows keeps the store and puts the
new rows beside it (the index's delta), and an update that removes windows leaves their rows in
the store, unreferenced, until enough have come and gone that the index gathers its rows into a
new store (``VectorIndex``).
"""

from __future__ import annotations

import logging
import math
from typing import Any, Callable

import numpy as np

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


class Scan:
    """FAISS's 4-bit product quantizer with SIMD lookups (``IndexPQFastScan``) over a store's
    rows: an approximate score of every row in one pass over ~d/4 bytes a row, so that only its
    best few hundred rows are scored exactly."""

    def __init__(self, index: Any) -> None:
        self.index = index

    @classmethod
    def trained(cls, rows: int, decode: Callable[[np.ndarray], np.ndarray], metric: str) -> Scan | None:
        """A scan of ``rows`` rows (float32 from ``decode``), trained on a seeded sample; None for
        a dimension it cannot split (odd), where searches stay exact."""
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
        """The ``count`` rows the quantizer scores best for the prepared float32 ``query``, best
        first (FAISS scans on the calling thread: its other cores stay with other work)."""
        from .vector_index import search_on_this_thread

        count = min(count, len(self))
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        _, rows = search_on_this_thread(self.index, query.reshape(1, -1), count)
        rows = rows[0]
        return rows[rows >= 0]


def _subquantizers(dim: int) -> int | None:
    """How many sub-quantizers split ``dim``: DIMS_PER_SUBQUANTIZER dimensions each, or the
    nearest even divisor above that (FAISS's fast scan packs them in pairs)."""
    for parts in range(max(2, dim // DIMS_PER_SUBQUANTIZER), 1, -1):
        if dim % parts == 0 and parts % 2 == 0:
            return parts
    return None


class Store:
    """Float16 rows (``rows``), the 16-byte keys of their
    texts (``joined``) and their ``Scan``. Shared by every index made from it; never changed."""

    def __init__(self, rows: np.ndarray, joined: bytes, scan: Scan | None) -> None:
        self.rows = rows
        self.joined = joined
        self.scan = scan

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def dimension(self) -> int:
        return int(self.rows.shape[1])

    @classmethod
    def built(cls, rows: np.ndarray, joined: bytes, metric: str) -> Store:
        """A store of ``rows`` (float16, as the index keeps them), its scan trained here."""
        started = _now()
        scan = Scan.trained(len(rows), lambda picked: rows[picked].astype(np.float32), metric)
        log.info("vector index: %d rows quantized for scanning in %.1f s", len(rows), _now() - started)
        return cls(rows, joined, scan)


def candidates_for(k: int, rescored: int) -> int:
    """How many of the scan's best rows a search for ``k`` records scores exactly."""
    return max(rescored, 8 * k)


def grown(count: int, total: int) -> int:
    """The next, larger candidate count of a search whose candidates held too few records."""
    return min(total, max(2 * count, math.ceil(count * 1.5)))


def _now() -> float:
    import time

    return time.perf_counter()
