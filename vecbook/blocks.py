"""A source's records as the index lays them out (``Block``): passages, token counts and model
windows in a few arrays per source, and what a source read again takes over from its
previous block."""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import Iterator, Sequence, overload

import numpy as np

from .records import Record
from .key_rows import KEY_BYTES


class Keys(Sequence[bytes]):
    """Window keys (16-byte text hashes) held as one bytes object, read as a sequence of keys:
    a list of a million bytes objects took ~50 MB and a second to make on every warm start."""

    __slots__ = ("joined",)

    def __init__(self, joined: bytes = b"") -> None:
        if len(joined) % KEY_BYTES:
            raise ValueError("window keys are 16 bytes each")
        self.joined = joined

    def __len__(self) -> int:
        return len(self.joined) // KEY_BYTES

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> Keys: ...

    def __getitem__(self, index: int | slice) -> bytes | Keys:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                raise ValueError("window keys are sliced in order")
            return Keys(self.joined[start * KEY_BYTES:max(start, stop) * KEY_BYTES])
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.joined[index * KEY_BYTES:(index + 1) * KEY_BYTES]

    def __iter__(self) -> Iterator[bytes]:
        joined = self.joined
        return (joined[i:i + KEY_BYTES] for i in range(0, len(joined), KEY_BYTES))

    def at(self, windows: np.ndarray) -> bytes:
        """The keys of ``windows``, joined (all of them as they are, when that is every window)."""
        if len(windows) == len(self):
            return self.joined
        return np.frombuffer(self.joined, dtype=np.uint8).reshape(-1, KEY_BYTES)[windows].tobytes()

    def firsts(self, windows: np.ndarray) -> np.ndarray:
        """The first of ``windows`` (window numbers, ascending) holding each distinct key, in
        order: found by sorting the keys as numbers (a dict of a million took seconds and ~100 MB)."""
        if len(windows) < 2:
            return windows
        halves = np.frombuffer(self.joined, dtype=">u8").reshape(-1, 2)[windows]
        order = np.lexsort((halves[:, 1], halves[:, 0]))  # stable: each run of equal keys starts at its first
        ordered = halves[order]
        starts = np.concatenate([[True], (ordered[1:] != ordered[:-1]).any(axis=1)])
        return windows[np.sort(order[starts])]


@dataclass(frozen=True)
class Windows:
    """A block's model windows: each window's key, (start, end) in its record's content and
    passage number in its record, and windows per record; with the identity of the embedder
    that cut them (its tokenizer and window size decide where they fall). Set on a block in
    one assignment, so a save in another thread sees all of them or none."""

    keys: Keys
    counts: np.ndarray  # windows per record (int32)
    spans: np.ndarray  # (windows, 2) in the record's content (int32)
    passages: np.ndarray  # each window's passage number in its record (int32)
    identity: str


@dataclass
class Block:
    """One source's records as laid out for the index, in a few arrays rather than objects
    per record (a list of token arrays and a list of tuples per record took ~700 bytes a
    record, 700 MB at a million, for as long as the process ran). The next build carries an
    unchanged source's block (the same records list) whole, as slices of its arrays, so an
    update costs what changed rather than a pass over every record.

    The keyword tokens themselves are not kept: the keyword index's term counts are (and the
    next build copies those of every passage it keeps), so a block holds each passage's
    token count and, until the next keyword index has counted them, the token ids of the
    passages it laid out anew (``tokens``; None for a passage whose counts are copied)."""

    records: list[Record]
    counts: np.ndarray  # passages per record
    passages: np.ndarray  # (passages, 2): character ranges in each record's content (int32)
    lengths: np.ndarray  # keyword tokens per passage
    # Each passage's token ids while the next keyword index still has to count them (None for
    # one whose counts come from ``origin``); dropped once counted.
    tokens: list[np.ndarray | None] | None = None
    # For a source read again: each passage's number in the source's previous block (-1: laid
    # out anew), so its term counts, and its record's windows, are taken over from there.
    origin: np.ndarray | None = None
    previous: Block | None = None  # that previous block, held until its windows are taken over
    # Set once every passage is cut into model windows (``Builder._window_blocks``), or
    # restored from the keyword cache (checked against the embedder before use):
    windowed: Windows | None = None
    # When the read these records came from began (time.time_ns): a source written within its
    # timestamps' granularity of that moment may have changed unseen (see keyword_cache).
    read_ns: int = 0
    # (metadata keys, sources) where the caller knows them without looking at every record (a
    # restore from the keyword cache's columns); else they are derived from the records.
    facts: InitVar[tuple[frozenset[str], frozenset[str]] | None] = None
    # Derived from the records:
    metadata_keys: frozenset[str] = field(init=False, default=frozenset())  # casefolded, for unknown-key checks
    sources: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self, facts: tuple[frozenset[str], frozenset[str]] | None) -> None:
        if facts is not None:
            self.metadata_keys, self.sources = facts
            return
        self.metadata_keys = frozenset(k.casefold() for keys in {r.metadata_keys for r in self.records} for k in keys)
        self.sources = frozenset(r.source for r in self.records)

    @property
    def keys(self) -> Keys | None:
        """Each window's text hash (None until cut into windows)."""
        return self.windowed.keys if self.windowed is not None else None

    @property
    def windows(self) -> np.ndarray | None:
        """Windows per record."""
        return self.windowed.counts if self.windowed is not None else None

    @property
    def spans(self) -> np.ndarray | None:
        """(windows, 2): each window's range in its record's content."""
        return self.windowed.spans if self.windowed is not None else None

    @property
    def window_passages(self) -> np.ndarray | None:
        """Each window's passage number in its record."""
        return self.windowed.passages if self.windowed is not None else None

    @property
    def firsts(self) -> np.ndarray:
        """Each record's first passage in the block (and the end, last)."""
        return np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)


def reused_records(old: Block | None, records: Sequence[Record]) -> list[int]:
    """For each record, the record of ``old`` (the source's previous block) with the same text
    and message starts (``_layout_key``), each taken once (a second copy is laid out anew), or -1."""
    if old is None:
        return [-1] * len(records)
    known = {_layout_key(record): number for number, record in enumerate(old.records)}
    taken: set[int] = set()
    reused = []
    for record in records:
        number = known.get(_layout_key(record), -1)
        if number in taken:
            number = -1
        elif number >= 0:
            taken.add(number)
        reused.append(number)
    return reused


def _layout_key(record: Record) -> tuple[str, tuple[int, ...]]:
    """What a record's layout depends on: its content and, for a chat window, where its
    messages begin (its passages are message pieces)."""
    segments = record.segments
    return record.content, tuple(offset for offset, _, _ in segments) if len(segments) > 1 else ()


def taken_windows(block: Block) -> list[tuple[int, int] | None]:
    """For each record of ``block``: the range of its windows in its source's previous block,
    where it was taken over from one that has windows, else None (it is cut here)."""
    old = block.previous
    if old is None or block.origin is None or old.windowed is None:
        return [None] * len(block.records)
    old_passages, old_windows = old.firsts, np.concatenate([[0], np.cumsum(old.windows)])
    firsts = block.firsts
    taken: list[tuple[int, int] | None] = []
    for first, end in zip(firsts[:-1].tolist(), firsts[1:].tolist()):
        start = int(block.origin[first]) if end > first else -1
        if start < 0:
            taken.append(None)
            continue
        number = int(np.searchsorted(old_passages, start, "right")) - 1  # the record it was in the previous block
        taken.append((int(old_windows[number]), int(old_windows[number + 1])))
    return taken
