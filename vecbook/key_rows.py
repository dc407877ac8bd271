"""Rows of 16-byte keys (the hashes of texts the vector cache and index are keyed by), found
by bisection of their first 8 bytes sorted once (``KeyRows``): a dict of a million keys took
~100 MB and ~1 s to make."""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

import numpy as np

KEY_BYTES = 16


class KeyRows(Mapping[bytes, int]):
    """Key -> row of a buffer of 16-byte keys, found by bisection of the keys' first 8 bytes,
    sorted once: a dict of a million keys took ~100 MB and ~1 s to make, for as long as the
    cache was open. Keys are hashes, so their first 8 bytes spread evenly; a key with the same
    first 8 bytes as another is told apart by the rest. ``rows_of`` looks up many at once."""

    def __init__(self, joined: bytes) -> None:
        self.joined = joined
        count = len(joined) // KEY_BYTES
        whole = np.frombuffer(joined, dtype=">u8").reshape(count, KEY_BYTES // 8)
        self._order = np.argsort(whole[:, 0], kind="stable").astype(np.int64)
        self._sorted = whole[self._order, 0]
        self._whole = whole

    def rows_of(self, keys: Sequence[bytes] | bytes) -> np.ndarray:
        """Each key's row (-1 where it has none); ``keys`` may be the 16-byte keys joined."""
        joined = keys if isinstance(keys, bytes) else b"".join(keys)
        count = len(joined) // KEY_BYTES
        if not count or not len(self._sorted):
            return np.full(count, -1, dtype=np.int64)
        return self._find(np.frombuffer(joined, dtype=">u8").reshape(count, KEY_BYTES // 8))

    def overlap(self, other: KeyRows) -> tuple[int, int]:
        """(how many distinct keys this holds, how many of those ``other`` holds), in numpy passes
        over the sorted keys: a dict of every key and a lookup of each took ~0.7 s at a million."""
        if not len(self._sorted):
            return 0, 0
        ordered = self._whole[self._order]
        same_start = self._sorted[1:] == self._sorted[:-1]
        if bool((same_start & (ordered[1:, 1] != ordered[:-1, 1])).any()):
            distinct = np.unique(ordered, axis=0)  # two keys share their first 8 bytes (never, in practice)
        else:  # equal keys lie next to each other
            distinct = ordered[np.concatenate([[True], ~same_start])]
        held = other._find(distinct) >= 0 if len(other._sorted) else np.zeros(0, dtype=bool)
        return len(distinct), int(np.count_nonzero(held))

    def _find(self, wanted: np.ndarray) -> np.ndarray:
        """``rows_of`` for keys as (n, 2) big-endian u8 halves."""
        at = np.minimum(np.searchsorted(self._sorted, wanted[:, 0]), len(self._sorted) - 1)
        rows = self._order[at]
        found = (self._whole[rows] == wanted).all(axis=1)
        result = np.where(found, rows, -1)
        # A first 8 bytes shared by other keys: look along the run of equal ones (never, in practice).
        for i in np.flatnonzero(~found & (self._sorted[at] == wanted[:, 0])).tolist():
            position = int(at[i])
            while position < len(self._sorted) and self._sorted[position] == wanted[i, 0]:
                row = int(self._order[position])
                if bool((self._whole[row] == wanted[i]).all()):
                    result[i] = row
                    break
                position += 1
        return result

    def __getitem__(self, key: bytes) -> int:
        row = int(self.rows_of([key])[0]) if len(key) == KEY_BYTES else -1
        if row < 0:
            raise KeyError(key)
        return row

    def __contains__(self, key: object) -> bool:
        return isinstance(key, bytes) and len(key) == KEY_BYTES and int(self.rows_of([key])[0]) >= 0

    def __iter__(self) -> Iterator[bytes]:
        joined = self.joined
        return (joined[i:i + KEY_BYTES] for i in range(0, len(joined), KEY_BYTES))

    def __len__(self) -> int:
        return len(self.joined) // KEY_BYTES
