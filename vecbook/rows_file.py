"""The saved float16 rows of a large vector index's store: every row as the index holds it, one
file per model and data scope beside the vector cache, memory-mapped by a warm start over the
same rows instead of reading the cache's float32 vectors and encoding them (~1.5 GB read and
~4 s at a million rows). The mapped rows are pages the operating system reads when a search
touches them and may drop again, rather than memory of the process's own.

A file is mapped whole for the rows it was made from: its key hashes the model identity, the
metric, the dimension and every row's text key in order (as ``scan_file``'s). After the rows
it holds those text keys (16 bytes each), so a start over rows that changed a little since
(a file edited between two starts) still maps it, keeps the rows whose keys it holds, and puts
the others in a delta beside it (``VectorIndex.updated``), as an update does within a process;
past that share the rows are made from the vector cache as before and the file is written anew.
It is written atomically (mode 0600, like the other caches); its rows begin at a page
boundary, and rows and keys carry a checksum (a 64-bit sum of each MiB, hashed) that a load
verifies by reading the file, not the mapping: a file cut short or damaged is reported and the
rows are made from the vector cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import struct
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .key_rows import KEY_BYTES
from .file_writes import DIGEST_CHARS, gathered_pieces, read_pieces, summed_digest, write_atomically
from .vector_files import read_header

log = logging.getLogger("vecbook")

ROWS_MAGIC = b"VBROWS\x00\x01"
# The file's layout, and how its key and checksum are made: a change to any gets a new number.
# 2: the rows' text keys after the rows, in the checksum.
ROWS_FORMAT = 2
ALIGN = 4096  # the rows begin at a multiple of this (a page), so they are mapped where they lie
WRITE_BYTES = 8 << 20  # bytes of rows written at a time
# Whether a loaded file is mapped rather than read into memory: not on Windows, where a mapped
# file cannot be replaced by the next save.
MAP_ROWS = os.name != "nt"
# Mapped rows that lie in at most this many runs (rows side by side: a search's candidates, a hit's
# windows, an exact scan's block) are read through the file rather than the mapping (``read_rows``),
# a run in one read; rows in more runs (a large filter's scattered subset) through the mapping.
READ_ROWS_LIMIT = 4_096

# Each mapping of rows, with its file open beside it (closed with the mapping) and where in the
# file the array ``_opened_rows`` returned begins: (descriptor, file offset, array address).
_FILES: weakref.WeakKeyDictionary[mmap.mmap, tuple[int, int, int]] = weakref.WeakKeyDictionary()


class RowsFile:
    """Where a data scope's store rows are saved (``path``), for vectors of one model ``identity``."""

    def __init__(self, path: Path, identity: str) -> None:
        self.path = path
        self.identity = identity

    def key_for(self, joined: bytes, metric: str, dimension: int) -> str:
        """The key of the rows whose text keys are ``joined`` (in row order)."""
        digest = hashlib.sha256(json.dumps([ROWS_FORMAT, self.identity, metric, dimension]).encode())
        digest.update(joined)
        return digest.hexdigest()

    def load(self, key: str, rows: int, dimension: int) -> np.ndarray | None:
        """The saved rows when the file holds those of ``key`` (float16, ``rows`` x ``dimension``,
        read-only: mapped from the file, or read where files are not mapped); None for no file,
        a file of other rows (an INFO) or one that fails a check (a WARN)."""
        try:
            with open(self.path, "rb") as handle:
                header, offset = _read_header(handle)
                if header.get("format") != ROWS_FORMAT:
                    log.warning("saved vector rows %s were made by another version (format %s; this is format %d); "
                                "they are made from the vector cache", self.path, header.get("format"), ROWS_FORMAT)
                    return None
                if header.get("key") != key:
                    # Routine after any change to the rows since they were saved: not worth a warning.
                    log.info("saved vector rows %s are of other rows; they are made from the vector cache", self.path)
                    return None
                if header.get("rows") != rows or header.get("dimension") != dimension:
                    raise ValueError(f"{header.get('rows')} rows of {header.get('dimension')}, not {rows} of "
                                     f"{dimension}")
                size = _payload_bytes(rows, dimension) + KEY_BYTES * rows
                _check_size(handle, offset, size)
                handle.seek(offset)
                if summed_digest(read_pieces(handle, size)) != header.get("digest"):
                    raise ValueError("its rows do not match their digest")
                loaded = _opened_rows(handle, offset, rows, dimension)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("saved vector rows %s are unusable (%s); they are made from the vector cache", self.path, exc)
            return None
        try:
            os.utime(self.path)  # in use: saves of other scopes prune by last use
        except OSError:
            pass
        return loaded

    def keys(self, metric: str, dimension: int) -> tuple[str, bytes] | None:
        """The file's key and its rows' text keys (joined), when it holds rows of this model,
        ``metric`` and ``dimension`` in this format (its keys checked against its key; the rows
        are checked by ``load``); None for no such file. Cheap: the header and 16 bytes a row."""
        try:
            with open(self.path, "rb") as handle:
                header, offset = _read_header(handle)
                rows = header.get("rows")
                if header.get("format") != ROWS_FORMAT or header.get("dimension") != dimension \
                        or type(rows) is not int or rows < 0:
                    return None
                _check_size(handle, offset, _payload_bytes(rows, dimension) + KEY_BYTES * rows)
                handle.seek(offset + _payload_bytes(rows, dimension))
                joined = handle.read(KEY_BYTES * rows)
        except (OSError, ValueError):
            return None  # none, or damaged: ``load`` reports a damaged file where it is asked for its rows
        key = header.get("key")
        return (key, joined) if key == self.key_for(joined, metric, dimension) else None

    def save(self, key: str, rows: np.ndarray, joined: bytes) -> np.ndarray:
        """Atomically replace the file with ``rows`` (float16), the rows of ``key`` whose text
        keys are ``joined``; returns them as the file holds them (mapped), or ``rows`` themselves
        where the file could not be written (a WARN: the next start makes them from the vector
        cache again) or mapped."""
        rows = np.ascontiguousarray(rows, dtype="<f2")

        def copy(block: np.ndarray, start: int) -> None:
            block[:] = rows[start:start + len(block)]

        saved = self.save_made(key, rows.shape, copy, joined)
        return rows if saved is None else saved

    def save_made(self, key: str, shape: tuple[int, int], write: Callable[[np.ndarray, int], None],
                  joined: bytes) -> np.ndarray | None:
        """Atomically replace the file with the float16 rows ``write`` makes (``write(block, r)``
        fills ``block`` with rows r, r + 1, ...), the ``shape`` rows of ``key`` whose text keys are
        ``joined``, a block at a time: the rows never sit in the process whole (768 MB at a
        million: a first build's peak). Returns them as the file holds them (mapped); None where
        the file could not be written (a WARN) or mapped."""
        count, dimension = shape
        keys = np.frombuffer(joined, dtype=np.uint8)

        def made() -> Iterator[np.ndarray]:
            block = np.empty((min(count, max(1, WRITE_BYTES // (2 * max(dimension, 1)))), dimension), dtype="<f2")
            for start in range(0, count, len(block)):
                part = block[:min(len(block), count - start)]
                write(part, start)
                yield part

        def header(digest: str) -> bytes:
            text = json.dumps({"format": ROWS_FORMAT, "key": key, "rows": count, "dimension": dimension,
                               "digest": digest}).encode()
            head = ROWS_MAGIC + struct.pack("<I", len(text)) + text
            return head + bytes(_aligned(len(head)) - len(head))

        def write_file(out: BinaryIO) -> None:
            # The digest is known once every row is written: a header of its length first, then
            # the real one over it (a digest's length never changes).
            out.write(header("0" * DIGEST_CHARS))

            def written() -> Iterator[np.ndarray]:
                for part in made():
                    out.write(memoryview(part).cast("B"))
                    yield part
                yield keys

            digest = summed_digest(gathered_pieces(written()))
            out.write(joined)
            out.seek(0)
            out.write(header(digest))

        try:
            write_atomically(self.path, ".rows-", write_file)
        except OSError as exc:
            log.warning("could not save the vector rows to %s (%s); the next start makes them from the vector "
                        "cache again", self.path, exc)
            return None
        try:
            with open(self.path, "rb") as handle:
                saved, offset = _read_header(handle)
                # Another process may have saved its own rows meanwhile: only these are mapped.
                if saved.get("key") != key or saved.get("rows") != count or saved.get("dimension") != dimension:
                    return None
                _check_size(handle, offset, _payload_bytes(count, dimension) + len(joined))
                return _opened_rows(handle, offset, count, dimension)
        except (OSError, ValueError):
            return None


def fill_rows(rows: np.ndarray, write: Callable[[np.ndarray, int], None], block: int) -> None:
    """Fill ``rows`` ``block`` rows at a time by ``write`` (the block, its first row's number)."""
    for start in range(0, len(rows), block):
        write(rows[start:start + block], start)


def _payload_bytes(rows: int, dimension: int) -> int:
    return rows * dimension * 2


def _aligned(size: int) -> int:
    """``size`` rounded up to a multiple of ALIGN."""
    return -(-size // ALIGN) * ALIGN


def _read_header(handle: BinaryIO) -> tuple[dict[str, Any], int]:
    """The JSON header of a rows file, and where its rows begin (ValueError if it is not one)."""
    header = read_header(handle, ROWS_MAGIC, "a VecBook rows file")
    return header, _aligned(handle.tell())


def _check_size(handle: BinaryIO, offset: int, size: int) -> None:
    actual = os.fstat(handle.fileno()).st_size
    if actual != offset + size:
        raise ValueError(f"{actual} bytes, not {offset + size}")


def _opened_rows(handle: BinaryIO, offset: int, rows: int, dimension: int) -> np.ndarray:
    """The rows at ``offset`` of the open file: mapped read-only (the mapping outlives the handle
    and keeps the file it was opened on, whatever replaces its name), or read (MAP_ROWS off)."""
    count = rows * dimension
    if not MAP_ROWS or not count:
        handle.seek(offset)
        data = np.fromfile(handle, dtype="<f2", count=count)
        if len(data) != count:
            raise ValueError("cut short")
        return data.reshape(rows, dimension)
    mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    array = np.frombuffer(mapped, dtype="<f2", count=count, offset=offset).reshape(rows, dimension)
    if hasattr(os, "pread"):
        descriptor = os.dup(handle.fileno())
        _FILES[mapped] = (descriptor, offset, array.__array_interface__["data"][0])
        weakref.finalize(mapped, os.close, descriptor)
    return array


def read_rows(rows: np.ndarray, picked: np.ndarray) -> np.ndarray:
    """``rows[picked]``. Rows mapped from a rows file are read through the file rather than the
    mapping where they lie in at most READ_ROWS_LIMIT runs (rows side by side): the system maps
    whole pieces of its page cache around each row touched (~0.9 MB a row on Linux 6.18, large
    folios), so the 512 rows a search scores, scattered over a million, made ~450 MB of the file
    count as this process's own; read, they stay in the page cache only (~1.5 us a read, one a
    run: an exact scan's block of rows is one read)."""
    source = _file_of(rows) if len(picked) else None
    if source is None:
        return rows[picked]
    descriptor, start = source
    step = rows.strides[0]
    picked = np.asarray(picked, dtype=np.int64)
    picked = np.where(picked < 0, picked + len(rows), picked)
    if int(picked.min()) < 0 or int(picked.max()) >= len(rows):
        wrong = int(picked[(picked < 0) | (picked >= len(rows))][0])
        raise IndexError(f"row {wrong} is out of bounds for {len(rows)} rows")
    runs = np.flatnonzero(np.diff(picked, prepend=-2) != 1)  # where each run begins
    if len(runs) > READ_ROWS_LIMIT:
        return rows[picked]
    offsets = (start + picked[runs] * step).tolist()
    if len(runs) == len(picked):
        # One read a row, joined once: ~1.5 us a read (a view per row into one array: ~2).
        data = bytearray().join([os.pread(descriptor, step, offset) for offset in offsets])
        if len(data) != step * len(picked):
            raise OSError("the rows file ended before a row it holds")
        return np.frombuffer(data, dtype=rows.dtype).reshape(len(picked), rows.shape[1])
    out = np.empty((len(picked), rows.shape[1]), dtype=rows.dtype)
    view = memoryview(out).cast("B")
    first = (runs * step).tolist()
    for begin, end, offset in zip(first, [*first[1:], len(view)], offsets):
        _read_into(descriptor, view[begin:end], offset)
    return out


def read_many(rows: np.ndarray, picked: np.ndarray) -> np.ndarray:
    """``rows[picked]`` for any number of rows, READ_ROWS_LIMIT of them at a time by ``read_rows``:
    mapped rows scattered over the file (a scan's training sample) are read through it too."""
    if len(picked) <= READ_ROWS_LIMIT:
        return read_rows(rows, picked)
    return np.concatenate([read_rows(rows, picked[start:start + READ_ROWS_LIMIT])
                           for start in range(0, len(picked), READ_ROWS_LIMIT)])


def _read_into(descriptor: int, view: memoryview, offset: int) -> None:
    """Fill ``view`` from the file at ``offset`` (a read may return less than asked: ~2 GB)."""
    while len(view):
        if hasattr(os, "preadv"):
            got = os.preadv(descriptor, [view], offset)
        else:  # (macOS before 11)
            chunk = os.pread(descriptor, len(view), offset)
            view[:len(chunk)], got = chunk, len(chunk)
        if not got:
            raise OSError("the rows file ended before a row it holds")
        view, offset = view[got:], offset + got


def _file_of(rows: np.ndarray) -> tuple[int, int] | None:
    """(descriptor, file offset of row 0) for C-ordered rows of a mapping ``_opened_rows`` made."""
    base: Any = rows
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    mapped = base.obj if isinstance(base, memoryview) else base
    found = _FILES.get(mapped) if isinstance(mapped, mmap.mmap) else None
    if found is None or not rows.flags.c_contiguous:
        return None
    descriptor, offset, address = found
    return descriptor, offset + rows.__array_interface__["data"][0] - address
