"""The vectors of one build: which of its windows need the model (``Todo``), every live vector
by the key of its text as the cache save gathers them (``LiveVectors``), and what the model
makes of them, by the key of their text, kept in an unnamed temporary file rather than
in the process (``MadeVectors``): a first index of a million records makes ~1M float32 vectors
(1.5 GB) that are wanted only twice after they are made, once when the index's float16 rows
are encoded and once when the vector cache is saved. Held as Python arrays they were the cold
build's largest part; written out as they come, the page cache holds them (clean pages the
kernel can drop) and the process holds only a key -> row table. A build that embeds fewer than
SPILL_FROM texts (an update) keeps them in memory, in the same layout."""

from __future__ import annotations

import io
import logging
import tempfile
import threading
from pathlib import Path
from dataclasses import dataclass
from typing import BinaryIO, Container, Iterator, Mapping, Sequence

import numpy as np

from .blocks import Keys
from .key_rows import KEY_BYTES, KeyRows
from .vector_files import FileRows, SplitPassages, StreamedVectors
from .vector_index import VectorIndex

log = logging.getLogger("vecbook")

# Texts to embed from which a build writes its vectors to a temporary file (1.5 KB each):
# below it, at most ~6 MB stay in memory and no file is made for a one-note update.
SPILL_FROM = 4096
# Vectors encoded (or gathered for a cache save) at a time: 1024 x 384 float32 is 1.5 MB, and a
# few such blocks are all a build holds beside its index (at 16k rows, ~60 MB at the end of
# a warm start of 100k records, its highest moment).
ENCODE_BLOCK = 1024
# Blocks a cache save reads from a store's mapped rows before it lets their pages go (~50 MB of
# float16 rows): the process does not come to count the whole file as its own while it saves.
DROP_EVERY = 64


class MadeVectors(Mapping[bytes, np.ndarray]):
    """Float32 vectors appended a chunk at a time (``add``), read back by key (``take``) from a
    temporary file in ``directory`` (the cache folder, else the system's), or from memory when
    ``expected`` is below SPILL_FROM or the file cannot be made (with a WARN: the build then
    holds them as it did before, which a small machine may not afford)."""

    def __init__(self, expected: int, directory: Path | None = None) -> None:
        # Each row's key, joined in row order, and a lookup by bisection made when first asked
        # (``KeyRows``): a dict of a million keys held ~140 MB to the end of a first build.
        self._joined = bytearray()
        self._lookup: KeyRows | None = None
        self._file: BinaryIO = io.BytesIO()
        self.spilled = False
        if expected >= SPILL_FROM:
            try:
                if directory is not None:
                    directory.mkdir(parents=True, exist_ok=True)
                self._file = tempfile.TemporaryFile(dir=directory, prefix="vecbook-made-")
                self.spilled = True
            except OSError as exc:
                log.warning("cannot make a temporary file for the new vectors in %s (%s); they are held in memory "
                            "until the index is built", directory or tempfile.gettempdir(), exc)
        self.dimension = 0
        self._reader: FileRows | None = None
        self._lock = threading.Lock()  # one reader over the file: a save's thread may read beside the build's

    def add(self, vectors: Mapping[bytes, np.ndarray]) -> None:
        """Append ``vectors``, whose keys are not held yet: a build embeds each distinct text once
        (were one added again, the lookup would still find its first vector)."""
        if not vectors:
            return
        matrix = np.ascontiguousarray(np.stack(list(vectors.values())), dtype="<f4")
        if not self.dimension:
            self.dimension = matrix.shape[1]
        with self._lock:
            self._reader = self._lookup = None  # made again for the rows added
            self._file.seek(0, io.SEEK_END)
            self._file.write(matrix.tobytes())
            self._joined += b"".join(vectors)

    def rows_of(self, keys: Sequence[bytes] | bytes) -> np.ndarray:
        """Each key's row (-1: not held); ``keys`` may be the 16-byte keys joined."""
        with self._lock:
            if self._lookup is None:
                self._lookup = KeyRows(bytes(self._joined))
            lookup = self._lookup
        return lookup.rows_of(keys)

    def take(self, keys: Sequence[bytes]) -> np.ndarray:
        """The vectors of ``keys`` (each held) as one float32 matrix, read in runs of consecutive rows."""
        rows = self.rows_of(keys)
        if bool((rows < 0).any()):
            raise KeyError(keys[int(np.flatnonzero(rows < 0)[0])])
        with self._lock:
            if self._reader is None:
                self._file.flush()
                self._reader = FileRows([(self._file, 0, len(self._joined) // KEY_BYTES)], self.dimension)
            reader = self._reader
        return reader.take(rows.tolist())

    def __getitem__(self, key: bytes) -> np.ndarray:
        return self.take([key])[0]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, bytes) and len(key) == KEY_BYTES and int(self.rows_of([key])[0]) >= 0

    def __iter__(self) -> Iterator[bytes]:
        return iter(Keys(bytes(self._joined)))

    def __len__(self) -> int:
        return len(self._joined) // KEY_BYTES

    def close(self) -> None:
        """Delete the file (the vectors are gone); also done when the object is collected."""
        self._file.close()


@dataclass(frozen=True)
class Todo:
    """The windows of a build that no index or cache has a vector for, by their text: ``first``,
    each distinct text's first window, in the order they are embedded (shortest first, so
    similar lengths batch with little padding; ties in the order the windows come);
    ``windows``, every such window grouped in that order, each text's ending at ``ends``."""

    first: np.ndarray
    windows: np.ndarray
    ends: np.ndarray


def todo_of(missing_keys: Sequence[bytes], cached: Container[bytes], missing: np.ndarray,
            spans: np.ndarray) -> Todo:
    """The ``Todo`` of the windows ``missing`` (whose keys are ``missing_keys``) that ``cached`` lacks."""
    slot_of: dict[bytes, int] = {}  # each distinct text's number, in the order first met
    slots = np.fromiter((-1 if key in cached else slot_of.setdefault(key, len(slot_of)) for key in missing_keys),
                        dtype=np.int64, count=len(missing_keys))
    del slot_of
    chosen = slots >= 0
    windows, slots = missing[chosen], slots[chosen]
    _, first_at = np.unique(slots, return_index=True)
    first = windows[first_at]
    order = np.argsort(spans[first, 1] - spans[first, 0], kind="stable")  # by characters
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    grouped = np.argsort(rank[slots], kind="stable")
    ends = np.cumsum(np.bincount(slots, minlength=len(order))[order])
    return Todo(first[order], windows[grouped], ends)


class LiveVectors:
    """Every vector a build holds, by the key of its text, and the windows of its split
    passages: what the vector cache keeps. Gathered only when the cache is saved, which runs
    after the update is published."""

    def __init__(self, keys: Keys, keep: np.ndarray, index: VectorIndex, found: MadeVectors,
                 made: np.ndarray) -> None:
        self._keys, self._keep = keys, keep
        self.splits = SplitPassages()  # set by the build once its index is made
        # The new index, which the snapshot holds anyway: the vectors the model did not make
        # in this build are saved as its float16 rows (those copied from the previous index
        # are its codes as they were; those from the cache file are not held in float32).
        self.index = index
        self._found = found  # what the model made in this build, in float32 (in a temporary file)
        self._made = made  # the windows whose vector is the model's (in ``found``)
        self._firsts: np.ndarray | None = None
        self._windows: KeyRows | None = None

    @property
    def firsts(self) -> np.ndarray:
        """The first kept window of each live key, in window order: found by sorting the keys
        as numbers (a dict of a million keys took seconds and ~100 MB)."""
        if self._firsts is None:
            self._firsts = self._keys.firsts(np.flatnonzero(self._keep))
        return self._firsts

    @property
    def windows(self) -> KeyRows:
        """Each live key, once (a lookup of many at once: ``rows_of``)."""
        if self._windows is None:
            self._windows = KeyRows(self._keys.at(self.firsts))
        return self._windows


    def vectors(self) -> StreamedVectors:
        """The live keys and their float32 vectors, as the cache stores them, made ENCODE_BLOCK
        at a time as the save writes them."""
        picked = self.firsts
        rows = np.cumsum(self._keep)[picked] - 1  # each kept window's row in the index
        made = np.zeros(len(self._keys), dtype=bool)
        made[self._made] = True
        copied = ~made[picked]
        keys = self._keys
        dim = self.index.vectors.shape[1]

        store = self.index.store

        def blocks() -> Iterator[np.ndarray]:
            for number, start in enumerate(range(0, len(picked), ENCODE_BLOCK)):
                end = min(start + ENCODE_BLOCK, len(picked))
                matrix = np.empty((end - start, dim), dtype=np.float32)
                here = copied[start:end]
                if bool(here.any()):
                    matrix[here] = self.index.vectors[rows[start:end][here]]
                model = np.flatnonzero(~here)
                if len(model):
                    matrix[model] = self._found.take([keys[int(picked[start + p])] for p in model.tolist()])
                yield matrix
                if store is not None and number % DROP_EVERY == DROP_EVERY - 1:
                    store.drop_pages()  # the mapped rows read so far (see Store.drop_pages)
            if store is not None:
                store.drop_pages()

        return StreamedVectors(self.windows.joined, dim, blocks, rows=self.windows, splits=self.splits)
