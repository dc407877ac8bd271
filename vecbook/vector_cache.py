"""The persistent vector cache: vectors keyed by model identity and a hash of the embedded
text, one file per model and data scope, written atomically and pruned by last use."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, ClassVar, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .config import Config

log = logging.getLogger("vecbook")

# A cache file (one data scope's vectors) not written for this long belongs to a folder
# that is no longer searched (or was moved): any scope's save deletes it. Two months
# covers a holiday; what is lost is only time, the vectors are computed again.
STALE_SCOPE_DAYS = 60
# A temporary cache file older than this was left by a killed process (a save takes seconds).
STALE_TEMP_SECONDS = 24 * 3600
# How long opening a cache waits for this process's save in flight (100k vectors take ~1-2 s);
# past it the older file is read, which is still whole.
SAVE_WAIT_SECONDS = 60.0


KEY_BYTES = 16
READ_BLOCK = 1 << 22  # bytes checksummed at a time when a cache file is read


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

    def rows_of(self, keys: Sequence[bytes]) -> np.ndarray:
        """Each key's row (-1 where it has none)."""
        if not len(keys) or not len(self._sorted):
            return np.full(len(keys), -1, dtype=np.int64)
        wanted = np.frombuffer(b"".join(keys), dtype=">u8").reshape(len(keys), KEY_BYTES // 8)
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


class KeyedVectors(Mapping[bytes, np.ndarray]):
    """Vectors by the 16-byte key of their text, held as one buffer of keys and one float32
    matrix: reading, writing and gathering 100k of them are a few numpy passes rather than
    a Python object per vector (which held the interpreter for ~0.7 s in a background save,
    stalling the next update). The key -> row dict is made on the first lookup. A cache read
    from its file holds the keys only, its vectors staying there (``FileRows``)."""

    def __init__(self, joined: bytes = b"", matrix: np.ndarray | FileRows | None = None,
                 rows: KeyRows | None = None) -> None:
        self.joined = joined
        self.matrix = np.zeros((0, 0), dtype=np.float32) if matrix is None else matrix
        if len(joined) != KEY_BYTES * len(self.matrix):
            raise ValueError(f"{len(joined) // KEY_BYTES} keys for {len(self.matrix)} vectors")
        self._rows = rows

    @classmethod
    def from_dict(cls, vectors: dict[bytes, np.ndarray]) -> KeyedVectors:
        """From key -> vector (tests, small sets)."""
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
                 rows: KeyRows | None = None) -> None:
        self.joined = joined
        self.dimension = dimension
        self.blocks = blocks
        self.rows = rows

    def __len__(self) -> int:
        return len(self.joined) // KEY_BYTES


class FileRows:
    """The float32 rows of a cache file, read from it when asked for rather than held: a warm
    start encodes them into the index a block at a time, and never holds all of them at once
    (150 MB at 100k records, beside the index). The file stays open until ``close`` (a save
    that replaces it meanwhile leaves this one readable, as POSIX keeps a renamed-over file)."""

    def __init__(self, file: BinaryIO, offset: int, count: int, dimension: int) -> None:
        self._file = file  # held until close()
        self._lock = threading.Lock()  # seek and read are one step
        self._offset, self.shape = offset, (count, dimension)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, row: int) -> np.ndarray:
        return self.take([row])[0]

    def take(self, rows: Sequence[int]) -> np.ndarray:
        """The vectors of ``rows``, in that order; a run of consecutive rows is one read."""
        dim = self.shape[1]
        out = np.empty((len(rows), dim), dtype=np.float32)
        size = 4 * dim
        with self._lock:
            start = 0
            while start < len(rows):
                end = start + 1
                while end < len(rows) and rows[end] == rows[end - 1] + 1:
                    end += 1
                self._file.seek(self._offset + rows[start] * size)
                data = self._file.read((end - start) * size)
                if len(data) != (end - start) * size:
                    raise ValueError("the cache file was cut short while in use")
                out[start:end] = np.frombuffer(data, dtype="<f4").reshape(end - start, dim)
                start = end
        return out

    def close(self) -> None:
        self._file.close()


class CachedVectors(Mapping[bytes, np.ndarray]):
    """Some keys' vectors in the cache file (key -> row), read when asked for."""

    def __init__(self, rows: dict[bytes, int], source: FileRows | np.ndarray) -> None:
        self.rows, self._source = rows, source

    def __getitem__(self, key: bytes) -> np.ndarray:
        return self.take([key])[0]

    def take(self, keys: Sequence[bytes]) -> np.ndarray:
        """The vectors of ``keys`` as one float32 matrix."""
        rows = [self.rows[key] for key in keys]
        if isinstance(self._source, FileRows):
            return self._source.take(rows)
        return np.asarray(self._source[rows], dtype=np.float32).reshape(len(rows), -1)

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


class VectorCache:
    """Persistent vectors, keyed by model identity and a hash of the embedded text.

    One file per model identity and data scope (``cache_scope``), so two VecBooks over
    different folders, or two configs over one folder, never prune each other's vectors, and
    adding or removing a collection keeps the file. A scope without a file yet starts from
    the first of its ``seeds`` (other scopes: ``seed_scopes``) that has a readable file:
    vectors are keyed by text, so another scope's are as good, and a config over a folder
    already searched alone embeds only what the folder lacks.
    Layout: magic, a JSON header (identity, dimension, count, sha256 of the payload), then
    the 16-byte text hashes and the float32 vectors.
    Writes go to a temporary file that is renamed over the old one, so a crash (or
    a second process writing the same file) leaves one whole cache, never a mix; a
    file that fails any check is reported and rebuilt. Each save keeps exactly the
    scope's live vectors, and deletes the cache files of scopes not written for
    STALE_SCOPE_DAYS.
    """

    MAGIC = b"VECBOOK-CACHE-1\n"
    # One save at a time in a process: builds publish their snapshot first and save after,
    # so a save may still run when the next build finishes (processes rely on the rename).
    _save_lock = threading.Lock()
    # Saves announced but not finished, by file: a load in this process waits for them,
    # so a book opened after another one's update reads what that update saves.
    _announced: ClassVar[dict[Path, int]] = {}
    _announced_changed = threading.Condition()

    def __init__(self, directory: Path, identity: str, scope: str = "", seeds: Sequence[str] = ()) -> None:
        self.directory = directory
        self.identity = identity
        self._model_hash = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self.path = directory / f"vectors-{self._model_hash}{_scope_hash(scope)}.vbc"
        self.seeds = [directory / f"vectors-{self._model_hash}{_scope_hash(seed)}.vbc" for seed in seeds]
        self._scope_hashes = [_scope_hash(each) for each in (scope, *seeds) if each]
        # Whether ``entries`` came from a seed's file: the first save then writes this scope's
        # own file even when the keys are the same.
        self.seeded = False
        self.entries = KeyedVectors()
        # Whether ``entries`` holds only the keys: the vectors were let go once a build had
        # taken what it needed (``release_vectors``) and are read again if a build asks for one.
        self._released = False
        # Held while the file is read or replaced together with ``entries`` (a build's thread and
        # the saver's), so ``entries`` always describes the file: a save that landed while an
        # update read the older file left that file's keys in ``entries``, and the next save,
        # seeing the same keys, was skipped (the update's vectors never reached the cache).
        self._entries_lock = threading.Lock()
        self._retired: list[FileRows] = []  # replaced while a build may read them: closed by its release
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(text: str) -> bytes:
        """16 bytes of sha256: collisions are out of reach for a personal corpus."""
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]

    def begin_save(self) -> None:
        """Announce a save that will run in another thread (``end_save`` when it is done)."""
        with self._announced_changed:
            self._announced[self.path] = self._announced.get(self.path, 0) + 1

    def end_save(self) -> None:
        """The save announced by ``begin_save`` is done (or failed)."""
        with self._announced_changed:
            self._announced[self.path] -= 1
            if not self._announced[self.path]:
                del self._announced[self.path]
            self._announced_changed.notify_all()

    def load(self) -> None:
        """Read the cache file (or, while there is none, a seed's); warn and start empty when
        the file fails a check."""
        self._wait_for_saves()
        with self._entries_lock:
            self._install(self._loaded())

    def _install(self, entries: KeyedVectors) -> None:
        """(Under ``_entries_lock``.) Make ``entries`` the cache's, keeping a replaced FileRows to close."""
        if isinstance(self.entries.matrix, FileRows):
            self._retired.append(self.entries.matrix)
        self.entries, self._released = entries, False

    def _wait_for_saves(self) -> None:
        """Wait for this process's saves in flight (never under ``_entries_lock``, which a save takes)."""
        with self._announced_changed:
            self._announced_changed.wait_for(lambda: self.path not in self._announced, timeout=SAVE_WAIT_SECONDS)

    def _loaded(self) -> KeyedVectors:
        """(Under ``_entries_lock``.) The file's vectors, or while it has none those of the first
        seed whose file reads (none when the file fails a check, with a WARN, or no seed reads)."""
        self.seeded = False
        if self.path.exists():
            try:
                return self._opened(self.path)
            except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
                log.warning("vector cache %s is unusable (%s); it will be rebuilt", self.path, exc)
                return KeyedVectors()
        for seed in self.seeds:
            try:
                entries = self._opened(seed)
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
                log.info("vector cache: cannot start from %s (%s)", seed, exc)
                continue
            self.seeded = True
            return entries
        other = self._other_model()
        if other is not None:  # say why a start that used to be quick embeds everything
            log.warning("vector cache: nothing cached yet for %s; the vectors cached for these sources were made "
                        "for %s, so every record is embedded once more", _described(self.identity),
                        _described(other))
        return KeyedVectors()

    def _other_model(self) -> str | None:
        """The identity in the newest cache file of this scope (or a seed's) made for another
        model or records path, if any."""
        others = {}
        for scope_hash in self._scope_hashes:
            for path in self.directory.glob(f"vectors-*{scope_hash}.vbc"):
                with contextlib.suppress(OSError):
                    if not path.name.startswith(f"vectors-{self._model_hash}"):
                        others[path] = path.stat().st_mtime
        for path in sorted(others, key=others.__getitem__, reverse=True):
            with contextlib.suppress(OSError, ValueError, KeyError), open(path, "rb") as file:
                return str(self._header(file)["identity"])
        return None

    def _header(self, file: BinaryIO) -> dict[str, Any]:
        """The JSON header of the cache file open in ``file`` (ValueError if it is not one)."""
        head = file.read(len(self.MAGIC) + 4)
        if not head.startswith(self.MAGIC) or len(head) < len(self.MAGIC) + 4:
            raise ValueError("not a VecBook cache file")
        (size,) = struct.unpack_from("<I", head, len(self.MAGIC))
        header = json.loads(file.read(size))
        if not isinstance(header, dict):
            raise ValueError("not a VecBook cache file")
        return header

    def _opened(self, path: Path) -> KeyedVectors:
        """The keys of the cache file at ``path`` (``_read``), marked as in use."""
        entries = self._read(path)
        log.info("vector cache: %d vectors from %s", len(entries), path)
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: other scopes' saves prune by last use (STALE_SCOPE_DAYS)
        return entries

    def vectors_of(self, keys: Iterable[bytes]) -> CachedVectors:
        """The cached vectors of those of ``keys`` the cache holds, read from the file when asked
        for. Once the vectors were released the file is opened again, if one is wanted (rare: a
        build takes the vectors of the index it replaces first, and a saved cache holds no others)."""
        wanted = list(dict.fromkeys(keys))
        entries = self.entries
        reread = self._released and bool((entries.rows.rows_of(wanted) >= 0).any())
        if reread:
            self._wait_for_saves()
        with self._entries_lock:  # no save swaps entries between the check, the read and the capture
            if self.entries is not entries:  # a save swapped them meanwhile: look again
                entries = self.entries
                reread = self._released and bool((entries.rows.rows_of(wanted) >= 0).any())
            if reread:
                self._install(self._loaded())
                entries = self.entries
        found = entries.rows.rows_of(wanted).tolist()
        return CachedVectors({key: row for key, row in zip(wanted, found) if row >= 0}, entries.matrix)

    def release_vectors(self) -> None:
        """Close the file the vectors are read from, keeping their keys (and the key -> row
        table, if made): once a build has taken its vectors, its index holds them (float16).
        (Reading the whole file at once held 150 MB more at 100k records, all the time.)"""
        with self._entries_lock:
            entries = self.entries
            if len(entries) and entries.matrix.shape[1]:
                self._released = True  # first: a reader that sees keys only must know to read the file
                self.entries = KeyedVectors(entries.joined, np.empty((len(entries), 0), dtype=np.float32),
                                            entries._rows)
                if isinstance(entries.matrix, FileRows):
                    entries.matrix.close()
            retired, self._retired = self._retired, []
        for rows in retired:  # replaced by a save or load while the build read them: it is done now
            rows.close()

    def _read(self, path: Path) -> KeyedVectors:
        """The keys of the cache file at ``path``, checked (size and checksum, read a block at a
        time), with its vectors left in the file (``FileRows``, which keeps it open)."""
        file = open(path, "rb")  # noqa: SIM115 - FileRows holds it, or it is closed here
        try:
            header = self._header(file)
            if header["identity"] != self.identity:
                raise ValueError(f"made for another model ({header['identity']})")
            count, dim = int(header["count"]), int(header["dimension"])
            offset = file.tell()
            if os.fstat(file.fileno()).st_size - offset != count * (KEY_BYTES + 4 * dim):
                raise ValueError("truncated")
            keys = file.read(KEY_BYTES * count)
            digest = hashlib.sha256(keys)
            while block := file.read(READ_BLOCK):
                digest.update(block)
            if digest.hexdigest() != header["sha256"]:
                raise ValueError("checksum mismatch")
        except BaseException:
            file.close()
            raise
        return KeyedVectors(keys, FileRows(file, offset + KEY_BYTES * count, count, dim))

    def save(self, keep: KeyedVectors | StreamedVectors | dict[bytes, np.ndarray]) -> None:
        """Atomically replace the cache with exactly ``keep`` (which prunes stale entries)."""
        if isinstance(keep, dict):
            keep = KeyedVectors.from_dict(keep)
        if isinstance(keep, KeyedVectors):
            matrix = np.ascontiguousarray(keep.matrix, dtype="<f4")
            keep = StreamedVectors(keep.joined, matrix.shape[1] if len(keep) else 0, lambda: iter([matrix]), keep._rows)
        with self._save_lock:
            self._write(keep)
        self.prune_stale_scopes()

    def _write(self, keep: StreamedVectors) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        dim = keep.dimension if len(keep) else 0
        # The payload is the keys then the vectors; hashed and written in pieces, not
        # joined, which would copy 150 MB more at 100k records (the vectors are made twice,
        # a block at a time, rather than held whole).
        joined = keep.joined
        digest = hashlib.sha256(joined)
        for block in keep.blocks():
            digest.update(np.ascontiguousarray(block, dtype="<f4"))
        header = json.dumps({"identity": self.identity, "dimension": dim, "count": len(keep),
                             "sha256": digest.hexdigest()}).encode()

        def write(out: BinaryIO) -> None:
            out.write(self.MAGIC + struct.pack("<I", len(header)) + header)
            out.write(joined)
            for block in keep.blocks():
                out.write(np.ascontiguousarray(block, dtype="<f4"))

        def install() -> None:
            # The file holds the vectors; memory keeps their keys (see release_vectors).
            if isinstance(self.entries.matrix, FileRows):
                self._retired.append(self.entries.matrix)  # a build may still read it
            self._released, self.seeded = True, False
            self.entries = KeyedVectors(joined, np.empty((len(keep), 0), dtype=np.float32), keep.rows)

        # The rename and the new keys under the lock a read of the file takes: the write itself
        # (1-2 s at 100k records) is not, so a build never waits for it.
        write_atomically(self.path, ".vectors-", write, self._entries_lock, install)

    def prune_stale_scopes(self, now: float | None = None) -> list[Path]:
        """Delete cache files (of any scope or model) not written for STALE_SCOPE_DAYS, and
        temporary files a killed process left behind; returns what was deleted."""
        now = time.time() if now is None else now
        deleted = []
        # The keyword cache's files (one per data scope) follow the same rule.
        for pattern, age in (("vectors-*.vbc", STALE_SCOPE_DAYS * 86400), ("keywords-*.vbk", STALE_SCOPE_DAYS * 86400),
                             (".vectors-*.tmp", STALE_TEMP_SECONDS), (".keywords-*.tmp", STALE_TEMP_SECONDS)):
            for path in self.directory.glob(pattern):
                try:
                    if path != self.path and now - path.stat().st_mtime > age:
                        path.unlink()
                        deleted.append(path)
                except OSError:
                    continue  # another process pruned it first, or it is not ours to delete
        if deleted:
            log.info("vector cache: deleted %d file%s unused for %d days", len(deleted),
                     "" if len(deleted) == 1 else "s", STALE_SCOPE_DAYS)
        return deleted


def write_atomically(path: Path, prefix: str, write: Callable[[BinaryIO], None],
                     lock: contextlib.AbstractContextManager[Any] | None = None,
                     then: Callable[[], None] | None = None) -> None:
    """Write ``path`` through a temporary file (named ``prefix``..., ``.tmp``) in its folder, synced
    and renamed over it: a crash, or a second process writing the same file, leaves the old file
    or the new one, never a mix (and no temporary file, unless the process itself is killed).
    The rename and ``then`` run holding ``lock`` where one is given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        with lock if lock is not None else contextlib.nullcontext():
            os.replace(temp, path)
            if then is not None:
                then()
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _scope_hash(scope: str) -> str:
    """The part of a cache file's name that names its scope ('' for none)."""
    return "-" + hashlib.sha256(scope.encode("utf-8", "surrogatepass")).hexdigest()[:16] if scope else ""


def _described(identity: str) -> str:
    """A vector identity (model|files|dimension|path|window) as a reader names it: model, path."""
    parts = identity.split("|")
    return ", ".join(parts[i] for i in (0, 3) if i < len(parts))


def cache_scope(config: Config) -> str:
    """What one cache file belongs to: the resolved data directory and the config file; either
    alone where there is no other (else the collections' paths). So two configs over one data
    folder, or a config and a search of its folder alone (``--data-dir``, a notebook), keep
    their own files: one cache over both would lose one's collections' vectors at each save of
    the other's. Not the list of collections: ``vecbook add`` and ``remove`` change it, and
    every unchanged source's vectors must still come from the cache."""
    config_file = f"config:{Path(config.config_file).resolve()}" if config.config_file is not None else ""
    if config.data_directory is not None:
        folder = str(Path(config.data_directory).resolve())
        return f"{folder}\n{config_file}" if config_file else folder
    if config_file:
        return config_file
    paths = [c.path if c.path is not None else c.database for c in config.collections]
    return "\n".join(str(Path(p).resolve()) for p in paths if p is not None)


def seed_scopes(config: Config) -> list[str]:
    """The scopes whose cache files a new scope's starts from, first the likeliest: for a data
    directory with a config file, the directory's alone (a search of it with ``--data-dir`` or
    from a notebook, and every config over it before configs had files of their own), then the
    config's alone."""
    if config.data_directory is None or config.config_file is None:
        return []
    return [str(Path(config.data_directory).resolve()), f"config:{Path(config.config_file).resolve()}"]
