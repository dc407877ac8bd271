"""The vector cache's files, and what they are read into.

A cache file holds one scope's vectors as a full save wrote them; a journal holds the vectors
a long build embedded since, appended a chunk at a time (checkpoints, and what an interrupted
build kept), until the next full save takes them in and deletes it. Both carry the windows of
the passages longer than one model window (``SplitPassages``), so a warm start never runs the
tokenizer over text it has embedded before.

Cache file (``.vbc``): ``CACHE_MAGIC``, a little-endian u32 and a JSON header (``format``,
``identity``, ``dimension``, ``count``, ``splits``, ``split_windows``, ``sha256``,
``vector_piece_sums``), then the payload. From format 3 on, ``sha256`` covers the payload's keys and
split passages, and the vectors are checked apart by their sums per MiB (``piece_sums``): format 4
keeps each MiB's sum (``vector_piece_sums``, hex), so a damaged MiB costs only the ~680 vectors in
it, which are embedded again; format 3 kept their hash (``vector_sums``), so any damage cost every
vector. Before, ``sha256`` covered the whole payload. A file without ``format`` is format 1, whose
payload ends after the vectors.
Journal (``.vbj``): ``JOURNAL_MAGIC``, a u32 and a JSON header (``format``, ``identity``,
``dimension``), then chunks, each a u32, a JSON header (``count``, ``splits``,
``split_windows``, ``sha256``) and a payload. A chunk cut short (a process killed while it
appended) ends the journal: what came before it is read.
Payload: the 16-byte text hashes, the float32 vectors, then the split passages' text hashes,
their window counts (u32), whether each was capped at the model's window limit (u8), their
windows as (start, end) character offsets in the passage (u32 pairs), and the windows' text
hashes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import threading
from pathlib import Path
from typing import Any, BinaryIO, Callable, Container, Iterator, Mapping, Sequence

import numpy as np

from .file_writes import SUM_BYTES, gathered_pieces, piece_sums, read_pieces, sums_digest, write_atomically
from .key_rows import KEY_BYTES, KeyRows, keys_at

CACHE_MAGIC = b"VECBOOK-CACHE-1\n"  # the family's mark; the header's ``format`` says which layout follows
JOURNAL_MAGIC = b"VECBOOK-JOURNAL\n"
# 1: keys and vectors; 2: and the windows of split passages; 3: the vectors checked by their sums per
# MiB, hashed; 4: the sums per MiB themselves, so that damage is placed
CACHE_FORMAT = 4
JOURNAL_FORMAT = 1
READ_BLOCK = 1 << 22  # bytes checksummed at a time when a file is read
# A split passage as a build finds it: its text's hash, its windows ((start, end) in the
# passage), their texts' hashes, and whether it was capped at the model's window limit.
SplitEntry = tuple[bytes, list[tuple[int, int]], list[bytes], bool]


class SplitPassages:
    """The model windows of passages longer than one window, by the hash of the passage's text:
    their (start, end) character offsets in the passage and the hashes of their texts, and
    whether the passage was capped at the model's window limit. A passage is in use while its
    first window's vector is. Held as a few arrays, not a Python object per passage; the
    key -> entry table is made on the first lookup. Never changed once made: ``merged`` and
    ``kept`` make new ones, so a save may write one while the next build looks up another."""

    def __init__(self, keys: bytes = b"", counts: np.ndarray | None = None, capped: np.ndarray | None = None,
                 spans: np.ndarray | None = None, window_keys: bytes = b"") -> None:
        self.keys, self.window_keys = keys, window_keys
        self.counts = np.zeros(0, dtype=np.uint32) if counts is None else counts.astype(np.uint32, copy=False)
        self.capped = np.zeros(0, dtype=bool) if capped is None else capped.astype(bool, copy=False)
        self.spans = np.zeros((0, 2), dtype=np.uint32) if spans is None else spans.astype(np.uint32, copy=False)
        n, windows = len(self.counts), len(self.spans)
        if len(keys) != KEY_BYTES * n or len(self.capped) != n or int(self.counts.sum()) != windows \
                or len(window_keys) != KEY_BYTES * windows:
            raise ValueError("its split passages do not agree")
        self.starts = np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)])
        self._rows: dict[bytes, int] | None = None
        self._lists: tuple[list[int], list[list[int]], list[bytes], list[bool]] | None = None

    @classmethod
    def of(cls, entries: Sequence[SplitEntry]) -> SplitPassages:
        """From (passage key, windows, their keys, capped) entries."""
        if not entries:
            return cls()
        spans = np.array([span for _, windows, _, _ in entries for span in windows], dtype=np.int64).reshape(-1, 2)
        return cls(b"".join(e[0] for e in entries), np.fromiter((len(e[1]) for e in entries), dtype=np.uint32,
                                                               count=len(entries)),
                   np.fromiter((e[3] for e in entries), dtype=bool, count=len(entries)), spans,
                   b"".join(key for e in entries for key in e[2]))

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def rows(self) -> dict[bytes, int]:
        """Passage key -> its entry (the first, if a key was stored twice)."""
        if self._rows is None:
            keys = _split_keys(self.keys)
            self._rows = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))
        return self._rows

    def get(self, key: bytes) -> tuple[list[list[int]], bool, list[bytes]] | None:
        """The windows of the passage whose text hashes to ``key`` ([start, end] in the passage),
        whether it was capped, and the hashes of the windows' texts."""
        row = self.rows.get(key)
        if row is None:
            return None
        lists = self._lists
        if lists is None:  # once: a warm start looks up every split passage
            lists = self._lists = (self.starts.tolist(), self.spans.tolist(), _split_keys(self.window_keys),
                                   self.capped.tolist())
        starts, spans, keys, capped = lists
        first, end = starts[row], starts[row + 1]
        return spans[first:end], capped[row], keys[first:end]

    def release(self) -> None:
        """Let go of the lookup tables ``rows`` and ``get`` made (they are made again if needed)."""
        self._rows = self._lists = None

    def merged(self, other: SplitPassages) -> SplitPassages:
        """These passages and ``other``'s, each key once."""
        if not len(other):
            return self
        if not len(self):
            return other
        both = SplitPassages(self.keys + other.keys, np.concatenate([self.counts, other.counts]),
                             np.concatenate([self.capped, other.capped]), np.concatenate([self.spans, other.spans]),
                             self.window_keys + other.window_keys)
        unique = np.fromiter(sorted(both.rows.values()), dtype=np.int64, count=len(both.rows))
        return both if len(unique) == len(both) else both._select(unique)

    def kept(self, live: Container[bytes] | Any) -> SplitPassages:
        """Only the passages whose first window's text hash is in ``live`` (a build's vectors:
        keys, or an index whose ``rows_of`` looks them up at once)."""
        if not len(self):
            return self
        if hasattr(live, "rows_of"):  # keys (KeyRows) or an index: one lookup of every first window
            keep = live.rows_of(keys_at(self.window_keys, self.starts[:-1])) >= 0
        else:
            firsts = (self.window_keys[i:i + KEY_BYTES] for i in (KEY_BYTES * self.starts[:-1]).tolist())
            keep = np.fromiter(map(live.__contains__, firsts), dtype=bool, count=len(self))
        return self if bool(keep.all()) else self._select(np.flatnonzero(keep))

    def _select(self, rows: np.ndarray) -> SplitPassages:
        """The entries at ``rows``, in that order."""
        counts = self.counts[rows].astype(np.int64)
        windows = joined_runs(self.starts[rows], counts)  # each selected entry's windows
        return SplitPassages(keys_at(self.keys, rows), counts, self.capped[rows], self.spans[windows],
                             keys_at(self.window_keys, windows))

    def same_keys(self, other: SplitPassages) -> bool:
        """Whether both hold the same passages (by key)."""
        return len(self) == len(other) and all(map(other.rows.__contains__, _split_keys(self.keys)))

    def parts(self) -> list[bytes]:
        """The payload's split sections, as written."""
        return [self.keys, self.counts.astype("<u4").tobytes(), self.capped.astype(np.uint8).tobytes(),
                self.spans.astype("<u4").tobytes(), self.window_keys]

    @classmethod
    def parsed(cls, data: bytes, passages: int, windows: int) -> SplitPassages:
        """From the payload's split sections (``parts``), checked."""
        sizes = split_bytes(passages, windows)
        if len(data) != sum(sizes):
            raise ValueError("its split passages are cut short")
        cuts = np.cumsum([0, *sizes]).tolist()
        part = [data[a:b] for a, b in zip(cuts, cuts[1:])]
        return cls(part[0], np.frombuffer(part[1], dtype="<u4"), np.frombuffer(part[2], dtype=np.uint8) != 0,
                   np.frombuffer(part[3], dtype="<u4").reshape(-1, 2), part[4])


def split_bytes(passages: int, windows: int) -> list[int]:
    """The sizes of the payload's split sections."""
    return [KEY_BYTES * passages, 4 * passages, passages, 8 * windows, KEY_BYTES * windows]


def joined_runs(first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The runs first[i], first[i] + 1, ... (counts[i] of them) one after the other, as int64."""
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(counts) - counts  # where each run begins in the result
    return np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(np.asarray(first, dtype=np.int64) - starts, counts)


class KeyedVectors(Mapping[bytes, np.ndarray]):
    """Vectors by the 16-byte key of their text, held as one buffer of keys and one float32
    matrix: reading, writing and gathering 100k of them are a few numpy passes rather than
    a Python object per vector (which held the interpreter for ~0.7 s in a background save,
    stalling the next update). The key -> row table is made on the first lookup. A cache read
    from its files holds the keys only, its vectors staying there (``FileRows``); ``splits``
    are the windows of its split passages."""

    def __init__(self, joined: bytes = b"", matrix: np.ndarray | FileRows | None = None,
                 rows: KeyRows | None = None, splits: SplitPassages | None = None) -> None:
        self.joined = joined
        self.matrix = np.zeros((0, 0), dtype=np.float32) if matrix is None else matrix
        if len(joined) != KEY_BYTES * len(self.matrix):
            raise ValueError(f"{len(joined) // KEY_BYTES} keys for {len(self.matrix)} vectors")
        self._rows = rows
        self.splits = splits if splits is not None else SplitPassages()

    @classmethod
    def from_dict(cls, vectors: dict[bytes, np.ndarray]) -> KeyedVectors:
        """From key -> vector (tests, a checkpoint's vectors)."""
        keys = list(vectors)
        dim = len(vectors[keys[0]]) if keys else 0
        matrix = np.asarray([vectors[k] for k in keys], dtype=np.float32).reshape(len(keys), dim)
        return cls(b"".join(keys), matrix)

    @property
    def rows(self) -> KeyRows:
        """Key -> row of ``matrix``."""
        if self._rows is None:
            self._rows = KeyRows(self.joined)
        return self._rows

    def __getitem__(self, key: bytes) -> np.ndarray:
        return self.matrix[self.rows[key]]

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.matrix)


class StreamedVectors:
    """Keys, and their float32 vectors made a block at a time (``blocks``, which can be called
    again and gives the same blocks): what a build's save writes without gathering a matrix
    of every vector first (150 MB at 100k records, beside the index holding them already)."""

    def __init__(self, joined: bytes, dimension: int, blocks: Callable[[], Iterator[np.ndarray]],
                 rows: KeyRows | None = None, splits: SplitPassages | None = None) -> None:
        self.joined = joined
        self.dimension = dimension
        self.blocks = blocks
        self.rows = rows
        self.splits = splits if splits is not None else SplitPassages()

    @classmethod
    def of(cls, keep: KeyedVectors) -> StreamedVectors:
        """``keep``'s vectors in one block."""
        matrix = np.ascontiguousarray(keep.matrix, dtype="<f4")
        return cls(keep.joined, matrix.shape[1] if len(keep) else 0, lambda: iter([matrix]), keep._rows, keep.splits)

    def __len__(self) -> int:
        return len(self.joined) // KEY_BYTES


class FileRows:
    """The float32 rows of cache files, read from them when asked for rather than held: a warm
    start encodes them into the index a block at a time, and never holds all of them at once
    (150 MB at 100k records, beside the index). Its rows are those of ``segments`` (file,
    offset, rows) one after the other: the cache file's, then each journal chunk's, picked by
    ``select`` where a key was stored twice. The files stay open until ``close`` (a save that
    replaces one meanwhile leaves this one readable, as POSIX keeps a renamed-over file)."""

    def __init__(self, segments: Sequence[tuple[BinaryIO, int, int]], dimension: int,
                 select: np.ndarray | None = None) -> None:
        self._segments = list(segments)  # held until close()
        self._lock = threading.Lock()  # seek and read are one step
        self._ends = np.cumsum([count for _, _, count in self._segments], dtype=np.int64)
        self._select = select
        self.shape = (len(select) if select is not None else int(self._ends[-1]) if len(self._ends) else 0, dimension)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, row: int) -> np.ndarray:
        return self.take([row])[0]

    def take(self, rows: Sequence[int]) -> np.ndarray:
        """The vectors of ``rows``, in that order; a run of consecutive rows in one segment is one read."""
        dim = self.shape[1]
        out = np.empty((len(rows), dim), dtype=np.float32)
        if not len(rows):
            return out
        stored = np.asarray(rows, dtype=np.int64)
        if self._select is not None:
            stored = self._select[stored]
        segment = np.searchsorted(self._ends, stored, side="right")
        # Where a run of consecutive rows of one segment begins (found by numpy, not row by row).
        starts = np.flatnonzero(np.concatenate([[True], (np.diff(stored) != 1) | (np.diff(segment) != 0)]))
        ends = np.append(starts[1:], len(rows))
        size = 4 * dim
        with self._lock:
            for start, end, first, part in zip(starts.tolist(), ends.tolist(), stored[starts].tolist(),
                                               segment[starts].tolist()):
                file, offset, count = self._segments[part]
                file.seek(offset + (first - (int(self._ends[part]) - count)) * size)
                data = file.read((end - start) * size)
                if len(data) != (end - start) * size:
                    raise ValueError("the cache file was cut short while in use")
                out[start:end] = np.frombuffer(data, dtype="<f4").reshape(end - start, dim)
        return out

    def close(self) -> None:
        for file in {id(file): file for file, _, _ in self._segments}.values():
            file.close()


class CachedVectors(Mapping[bytes, np.ndarray]):
    """Some keys' vectors in the cache's files (key -> row), read when asked for."""

    def __init__(self, rows: dict[bytes, int], source: FileRows | np.ndarray) -> None:
        self.rows, self._source = rows, source

    def __getitem__(self, key: bytes) -> np.ndarray:
        return self.take([key])[0]

    def take(self, keys: Sequence[bytes]) -> np.ndarray:
        """The vectors of ``keys`` as one float32 matrix."""
        return rows_from(self._source, [self.rows[key] for key in keys])

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def rows_from(source: FileRows | np.ndarray, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    """The float32 vectors of a cache's ``rows`` (read from its files, or from a matrix)."""
    if isinstance(source, FileRows):
        return source.take(rows)
    return np.asarray(source[np.asarray(rows, dtype=np.int64)], dtype=np.float32).reshape(len(rows), -1)


@contextlib.contextmanager
def _closing_on_error(file: BinaryIO) -> Iterator[BinaryIO]:
    """``file``, closed if what reads it fails (else a ``FileRows`` keeps it open)."""
    try:
        yield file
    except BaseException:
        file.close()
        raise


def read_cache_file(path: Path, identity: str) -> tuple[dict[str, Any], KeyedVectors]:
    """The header and the keys of the cache file at ``path``, checked (size and checksum, read a
    block at a time), with its vectors left in the file (``FileRows``, which keeps it open).
    ValueError (and its kin) when the file is damaged, foreign, or of another model."""
    file = open(path, "rb")  # noqa: SIM115 - FileRows holds it, or it is closed on an error
    with _closing_on_error(file):
        header = read_header(file, CACHE_MAGIC, "a VecBook cache file")
        version = int(header.get("format", 1))
        if version > CACHE_FORMAT:
            raise ValueError(f"written by a newer VecBook (format {version})")
        if header["identity"] != identity:
            raise ValueError(f"made for another model ({header['identity']})")
        end = os.fstat(file.fileno()).st_size
        return header, _read_payload(file, header, end, version >= 2, lambda: ValueError("truncated"), version >= 3)


def read_header(file: BinaryIO, magic: bytes, what: str) -> dict[str, Any]:
    """The JSON header after ``magic`` in ``file`` (ValueError if it is not one)."""
    head = file.read(len(magic) + 4)
    if not head.startswith(magic) or len(head) < len(magic) + 4:
        raise ValueError(f"not {what}")
    (size,) = struct.unpack_from("<I", head, len(magic))
    header = json.loads(file.read(size))
    if not isinstance(header, dict):
        raise ValueError(f"not {what}")
    return header


def _read_payload(file: BinaryIO, header: dict[str, Any], end: int, with_splits: bool,
                  short: Callable[[], Exception], summed: bool = False) -> KeyedVectors:
    """The payload described by ``header`` from ``file``'s position, which must end at ``end``:
    its keys and split passages read, its vectors checksummed and left in the file (``summed``:
    by their sums per MiB, not in ``sha256``). The vectors of a MiB whose sum is not the one kept
    (``vector_piece_sums``) are left out, their number in ``header["damaged_vectors"]``."""
    count, dim = int(header["count"]), int(header["dimension"])
    passages, windows = (int(header.get("splits", 0)), int(header.get("split_windows", 0))) if with_splits else (0, 0)
    offset = file.tell()
    vector_bytes = count * 4 * dim
    if end - offset != count * KEY_BYTES + vector_bytes + sum(split_bytes(passages, windows)):
        raise short()
    keys = file.read(KEY_BYTES * count)
    digest = hashlib.sha256(keys)
    damaged = np.zeros(0, dtype=np.int64)
    if summed:
        # ~0.5 s for the 1.5 GB of a million vectors, against ~3-5 s to hash them.
        try:
            sums = piece_sums(read_pieces(file, vector_bytes))
        except ValueError:
            raise short() from None
        if "vector_piece_sums" in header:
            damaged = damaged_rows(sums, bytes.fromhex(header["vector_piece_sums"]), count, 4 * dim)
        elif sums_digest(sums) != header["vector_sums"]:
            raise ValueError("checksum mismatch")
    left = 0 if summed else vector_bytes
    while left:
        block = file.read(min(READ_BLOCK, left))
        if not block:
            raise short()
        digest.update(block)
        left -= len(block)
    tail = file.read(end - file.tell())
    digest.update(tail)
    if digest.hexdigest() != header["sha256"]:
        raise ValueError("checksum mismatch")
    splits = SplitPassages.parsed(tail, passages, windows)
    if not len(damaged):
        return KeyedVectors(keys, FileRows([(file, offset + KEY_BYTES * count, count)], dim), splits=splits)
    header["damaged_vectors"] = len(damaged)
    sound = np.setdiff1d(np.arange(count, dtype=np.int64), damaged)
    kept = np.frombuffer(keys, dtype=np.uint8).reshape(count, KEY_BYTES)[sound].tobytes()
    return KeyedVectors(kept, FileRows([(file, offset + KEY_BYTES * count, count)], dim, select=sound), splits=splits)


def damaged_rows(sums: bytes, kept: bytes, count: int, row_bytes: int) -> np.ndarray:
    """The rows (of ``count`` vectors of ``row_bytes``) lying in a MiB whose sum in ``sums``
    differs from the one ``kept`` at the save; every row where the two lists do not match."""
    if len(kept) != len(sums):
        return np.arange(count, dtype=np.int64)
    pieces = np.flatnonzero(np.frombuffer(sums, dtype="<u8") != np.frombuffer(kept, dtype="<u8"))
    first, last = pieces * SUM_BYTES // row_bytes, ((pieces + 1) * SUM_BYTES - 1) // row_bytes
    rows = [np.arange(a, min(b, count - 1) + 1, dtype=np.int64) for a, b in zip(first.tolist(), last.tolist())]
    return np.unique(np.concatenate(rows)) if rows else np.zeros(0, dtype=np.int64)


def payload_header(keep: StreamedVectors, summed: bool = False) -> tuple[dict[str, Any], Callable[[BinaryIO], None]]:
    """The header fields of ``keep``'s payload (its checksum among them), and a writer of the
    payload. The vectors are hashed (``summed``: summed per MiB, apart) and written a block at a
    time, not joined, which would copy 150 MB more at 100k records (they are made twice, a block
    at a time, rather than held whole)."""
    dim = keep.dimension if len(keep) else 0
    digest = hashlib.sha256(keep.joined)
    vectors = (np.ascontiguousarray(block, dtype="<f4") for block in keep.blocks())
    sums = piece_sums(gathered_pieces(vectors)) if summed else None
    for block in () if summed else vectors:
        digest.update(block)
    splits = keep.splits.parts()
    for part in splits:
        digest.update(part)
    header = {"dimension": dim, "count": len(keep), "splits": len(keep.splits),
              "split_windows": len(keep.splits.spans), "sha256": digest.hexdigest()}
    if sums is not None:
        header["vector_piece_sums"] = sums.hex()

    def write(out: BinaryIO) -> None:
        out.write(keep.joined)
        for block in keep.blocks():
            out.write(np.ascontiguousarray(block, dtype="<f4"))
        for part in splits:
            out.write(part)

    return header, write


def write_cache_file(path: Path, identity: str, keep: StreamedVectors,
                     lock: contextlib.AbstractContextManager[Any] | None = None,
                     then: Callable[[], None] | None = None) -> None:
    """Replace the cache file at ``path`` with ``keep`` (``write_atomically``)."""
    fields, payload = payload_header(keep, summed=True)
    header = json.dumps({"format": CACHE_FORMAT, "identity": identity, **fields}).encode()

    def write(out: BinaryIO) -> None:
        out.write(CACHE_MAGIC + struct.pack("<I", len(header)) + header)
        payload(out)

    write_atomically(path, ".vectors-", write, lock, then)


def append_to_journal(path: Path, identity: str, keep: StreamedVectors, valid: int) -> int:
    """Append ``keep`` as one chunk to the journal at ``path`` (created with its header when
    ``valid`` is 0), cutting the file back to its first ``valid`` bytes first (what a write that
    failed midway left after them is not a chunk); returns the journal's new valid size. Synced,
    so a checkpoint outlives a power cut."""
    fields, payload = payload_header(keep)
    chunk = json.dumps(fields).encode()
    handle = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(handle, "r+b") as out:
        if os.fstat(out.fileno()).st_size < valid:
            valid = 0  # another process's save took the journal in and deleted it: start it again
        out.truncate(valid)
        out.seek(valid)
        if not valid:
            header = json.dumps({"format": JOURNAL_FORMAT, "identity": identity, "dimension": keep.dimension}).encode()
            out.write(JOURNAL_MAGIC + struct.pack("<I", len(header)) + header)
        out.write(struct.pack("<I", len(chunk)) + chunk)
        payload(out)
        out.flush()
        os.fsync(out.fileno())
        return out.tell()


def read_journal(path: Path, identity: str) -> tuple[list[KeyedVectors], str | None]:
    """The chunks of the journal at ``path`` that read whole (their vectors left in the file,
    which stays open while a chunk's ``FileRows`` needs it), and what ended it early (a chunk
    cut short or damaged) or None. ValueError (and its kin) when the journal itself is not one
    of this model's."""
    file = open(path, "rb")  # noqa: SIM115 - the chunks' FileRows hold it, or it is closed here
    chunks: list[KeyedVectors] = []
    with _closing_on_error(file):
        header = read_header(file, JOURNAL_MAGIC, "a VecBook journal")
        if int(header.get("format", 0)) != JOURNAL_FORMAT or header["identity"] != identity:
            raise ValueError(f"not a journal of {identity} in format {JOURNAL_FORMAT}")
        size = os.fstat(file.fileno()).st_size
        problem = None
        while file.tell() < size:
            try:
                chunks.append(_read_chunk(file, size))
            except (ValueError, KeyError, json.JSONDecodeError, struct.error) as exc:
                problem = str(exc)
                break
    if not chunks:
        file.close()
    return chunks, problem


def _read_chunk(file: BinaryIO, size: int) -> KeyedVectors:
    """The journal chunk at ``file``'s position (ValueError if it is cut short or damaged)."""
    head = file.read(4)
    if len(head) < 4:
        raise ValueError("a chunk cut short")
    (length,) = struct.unpack("<I", head)
    raw = file.read(length)
    if len(raw) < length:
        raise ValueError("a chunk cut short")
    header = json.loads(raw)
    count, dim = int(header["count"]), int(header["dimension"])
    end = file.tell() + count * (KEY_BYTES + 4 * dim) + sum(split_bytes(int(header["splits"]),
                                                                        int(header["split_windows"])))
    if end > size:
        raise ValueError("a chunk cut short")
    return _read_payload(file, header, end, True, lambda: ValueError("a chunk cut short"))


def joined_entries(parts: Sequence[KeyedVectors]) -> KeyedVectors:
    """One set of keys over several files' (the cache file's, then journal chunks'): a key
    stored twice is the first one's, as is a split passage; the vectors stay in their files."""
    parts = [part for part in parts if len(part) or len(part.splits)]
    if len(parts) <= 1:
        return parts[0] if parts else KeyedVectors()
    splits = SplitPassages()
    for part in parts:
        splits = splits.merged(part.splits)
    keys = [key for part in parts for key in _split_keys(part.joined)]
    rows = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))  # the first row of each key
    first = np.fromiter(sorted(rows.values()), dtype=np.int64, count=len(rows))
    dims = {part.matrix.shape[1] for part in parts if len(part)}
    if len(dims) > 1 or not all(isinstance(part.matrix, FileRows) for part in parts):
        raise ValueError("its files hold vectors of different sizes")
    segments = [segment for part in parts for segment in part.matrix._segments]
    joined = b"".join(keys[i] for i in first.tolist())
    return KeyedVectors(joined, FileRows(segments, dims.pop() if dims else 0, _stored_rows(parts)[first]),
                        splits=splits)


def _stored_rows(parts: Sequence[KeyedVectors]) -> np.ndarray:
    """Each key's row among all the parts' segments, one after the other: a part's own ``select``
    (a cache file with damaged vectors left out) says which of its segments' rows its keys have."""
    stored, before = [], 0
    for part in parts:
        matrix: FileRows = part.matrix
        own = matrix._select if matrix._select is not None else np.arange(len(part), dtype=np.int64)
        stored.append(own + before)
        before += sum(count for _, _, count in matrix._segments)
    return np.concatenate(stored) if stored else np.zeros(0, dtype=np.int64)


def _split_keys(joined: bytes) -> list[bytes]:
    """The 16-byte keys joined in ``joined``."""
    return [joined[i:i + KEY_BYTES] for i in range(0, len(joined), KEY_BYTES)]
