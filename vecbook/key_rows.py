"""Rows of 16-byte keys (the hashes of texts the vector cache and index are keyed by), found
by bisection of their first 8 bytes sorted once (``KeyRows``): a dict of a million keys took
~100 MB and ~1 s to make."""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

import numpy as np

KEY_BYTES = 16
# ``overlap_after`` works an update's overlap out from the earlier one's when at most this many
# rows came or went (more: the whole overlap, a few numpy passes over every key, is as quick).
CHANGED_ROWS_LIMIT = 100_000


class KeyRows(Mapping[bytes, int]):
    """Key -> row of a buffer of 16-byte keys, found by bisection of the keys' first 8 bytes,
    sorted once: a dict of a million keys took ~100 MB and ~1 s to make, for as long as the
    cache was open. Keys are hashes, so their first 8 bytes spread evenly; a key with the same
    first 8 bytes as another is told apart by the rest. ``rows_of`` looks up many at once."""

    def __init__(self, joined: bytes, order: np.ndarray | None = None, ordered: np.ndarray | None = None) -> None:
        """``order`` (the rows by their first 8 bytes) and ``ordered`` (those bytes in that order)
        when known (``carried``), else sorted here."""
        self.joined = joined
        count = len(joined) // KEY_BYTES
        whole = np.frombuffer(joined, dtype=">u8").reshape(count, KEY_BYTES // 8)
        self._order = np.argsort(whole[:, 0], kind="stable").astype(np.int64) if order is None else order
        self._sorted = whole[self._order, 0] if ordered is None else ordered
        self._whole = whole

    def carried(self, source: np.ndarray, joined: bytes) -> KeyRows:
        """The rows of ``joined``, whose row r holds this one's row ``source[r]`` (-1: a key of its
        own), ordered from this one's order in numpy passes rather than sorted again: an update
        of one note at a million windows sorted every key anew (~0.1-0.2 s on two laptop cores)
        to look up its own few. Sorted afresh when a row here is carried twice."""
        source = np.asarray(source, dtype=np.int64)
        whole = np.frombuffer(joined, dtype=">u8").reshape(len(joined) // KEY_BYTES, KEY_BYTES // 8)
        copied = np.flatnonzero(source >= 0)
        now = np.full(len(self._order), -1, dtype=np.int64)  # each row here: its row in ``joined``
        now[source[copied]] = copied  # (mostly in order: an update keeps the rows' order)
        if int(np.count_nonzero(now >= 0)) != len(copied):
            return KeyRows(joined)
        order = now[self._order]  # the carried rows in this one's key order, and the rows gone
        kept = order >= 0
        order, ordered = order[kept], self._sorted[kept]
        fresh = np.flatnonzero(source < 0)
        fresh = fresh[np.argsort(whole[fresh, 0], kind="stable")]
        at = np.searchsorted(ordered, whole[fresh, 0], side="right")  # equal first bytes: after the carried
        return KeyRows(joined, np.insert(order, at, fresh), np.insert(ordered, at, whole[fresh, 0]))

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
        return each_key(self.joined)

    def __len__(self) -> int:
        return len(self.joined) // KEY_BYTES


def overlap_after(earlier: tuple[int, int], old: KeyRows, new: KeyRows, source: np.ndarray,
                  other: KeyRows) -> tuple[int, int] | None:
    """``new.overlap(other)`` worked out from ``earlier`` (``old.overlap(other)``), where row r
    of ``new`` holds ``old``'s row ``source[r]`` (-1: a row of its own): only the keys of rows
    gone or new can count differently, so an update of one note at a million rows looks up a
    few keys rather than every one (~0.3 s on two laptop cores). None when too many rows came
    or went (``CHANGED_ROWS_LIMIT``)."""
    source = np.asarray(source, dtype=np.int64)
    referenced = np.zeros(len(old), dtype=bool)
    referenced[source[source >= 0]] = True
    gone, fresh = np.flatnonzero(~referenced), np.flatnonzero(source < 0)
    if len(gone) + len(fresh) > CHANGED_ROWS_LIMIT:
        return None
    keys = set(each_key(keys_at(old.joined, gone))) | set(each_key(keys_at(new.joined, fresh)))
    if not keys:
        return earlier
    wanted = b"".join(keys)
    was, now = old.rows_of(wanted) >= 0, new.rows_of(wanted) >= 0
    held = other.rows_of(wanted) >= 0 if len(other) else np.zeros(len(keys), dtype=bool)
    entries = earlier[0] + int(np.count_nonzero(now)) - int(np.count_nonzero(was))
    return entries, earlier[1] + int(np.count_nonzero(now & held)) - int(np.count_nonzero(was & held))


def each_key(joined: bytes) -> Iterator[bytes]:
    """The 16-byte keys of ``joined``, in order."""
    return (joined[i:i + KEY_BYTES] for i in range(0, len(joined), KEY_BYTES))


def keys_at(joined: bytes, rows: np.ndarray) -> bytes:
    """The 16-byte keys at ``rows`` of ``joined``, joined."""
    return np.frombuffer(joined, dtype=np.uint8).reshape(-1, KEY_BYTES)[rows].tobytes()
