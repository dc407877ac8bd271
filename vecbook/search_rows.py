"""The vector rows one search has decoded, kept for the rest of that search: a hybrid search
scores the quantized scan's candidates, then every window of the fused candidates (most of them
among the scan's), then the same windows again for the query moved towards its best hit, and
the windows of that hit. Each row is read from the index (``VectorIndex.decode``: through the
rows file, one read a row, for a store) once per search; a row asked again is the very float32
vector decoded the first time, so every score is the same as decoding it again would give.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

# Rows one search keeps at most (16,384 x 384 float32: 25 MB); rows past them are decoded each
# time they are asked for. A hybrid search at a million rows reads ~900.
HELD_ROWS = 16_384


class SearchRows:
    """A search's decoded rows: called with index rows (any order, repeats allowed), returns
    their float32 vectors, decoding (``decode``, given ascending distinct rows) only those not
    decoded before. One per search: not shared between threads."""

    def __init__(self, decode: Callable[[np.ndarray], np.ndarray], dimension: int) -> None:
        self._decode = decode
        self._dimension = dimension
        # Batches of rows decoded together: (ascending distinct rows, their vectors); a search makes a few.
        self._held: list[tuple[np.ndarray, np.ndarray]] = []
        self._count = 0
        self.decoded = 0  # rows decoded so far (tests and benches count them)

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of ``rows``, in their order (not to be written to: they are kept)."""
        rows = np.asarray(rows, dtype=np.int64)
        missing = np.ones(len(rows), dtype=bool)
        found = []  # (which of rows, held vectors, where they lie there) a batch at a time
        for held, vectors in self._held:
            at = np.minimum(np.searchsorted(held, rows), len(held) - 1)
            there = missing & (held[at] == rows)
            if there.all():
                return vectors[at]  # (most asks after the first: every row in one batch)
            if there.any():
                found.append((there, vectors, at))
                missing &= ~there
        wanted = np.unique(rows[missing])  # ascending, distinct: side-by-side rows are read together
        fresh = self._keep(wanted) if len(wanted) else np.zeros((0, self._dimension), dtype=np.float32)
        if not found and len(wanted) == len(rows) and bool((wanted == rows).all()):
            return fresh  # (the first ask, of ascending rows: nothing to gather)
        out = np.empty((len(rows), self._dimension), dtype=np.float32)
        for there, vectors, at in found:
            out[there] = vectors[at[there]]
        if len(wanted):
            out[missing] = fresh[np.searchsorted(wanted, rows[missing])]
        return out

    def _keep(self, wanted: np.ndarray) -> np.ndarray:
        """The decoded ``wanted`` rows (ascending, distinct), kept while the search holds fewer than HELD_ROWS."""
        fresh = self._decode(wanted)
        fresh.flags.writeable = False  # handed out as they are
        self.decoded += len(wanted)
        if self._count + len(wanted) <= HELD_ROWS:
            self._held.append((wanted, fresh))
            self._count += len(wanted)
        return fresh
