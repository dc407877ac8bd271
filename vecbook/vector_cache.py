"""The persistent vector cache: vectors keyed by model identity and a hash of the embedded
text, one file per model and data scope (with the journals of long builds beside it), written
atomically and pruned by last use."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import ClassVar, Iterable, Sequence

import numpy as np

from .config import Config
from .vector_files import (
    CACHE_FORMAT,
    CACHE_MAGIC,
    CachedVectors,
    FileRows,
    KeyedVectors,
    StreamedVectors,
    append_to_journal,
    joined_entries,
    read_cache_file,
    read_header,
    read_journal,
    write_cache_file,
)

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


class VectorCache:
    """Persistent vectors, keyed by model identity and a hash of the embedded text.

    One file per model identity and data scope (``cache_scope``), so two VecBooks over
    different folders, or two configs over one folder, never prune each other's vectors, and
    adding or removing a collection keeps the file. A scope without a file yet starts from
    the first of its ``seeds`` (other scopes: ``seed_scopes``) that has a readable file:
    vectors are keyed by text, so another scope's are as good, and a config over a folder
    already searched alone embeds only what the folder lacks.
    Beside the file, journals hold what long builds embedded since its last save (appended
    every CHECKPOINT_SECONDS, see caches, and when a build is interrupted): a load reads the
    file and every journal of its scope, and the next save takes them in and deletes them.
    The layouts are in ``vector_files``.
    Saves go to a temporary file that is renamed over the old one, so a crash (or
    a second process writing the same file) leaves one whole cache, never a mix; a
    file that fails any check is reported and rebuilt. Each save keeps exactly the
    scope's live vectors, and deletes the cache files of scopes not written for
    STALE_SCOPE_DAYS.
    """

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
        self._name = f"vectors-{self._model_hash}{_scope_hash(scope)}"
        self.path = directory / f"{self._name}.vbc"
        # Where a large index over this scope's rows saves its quantized scan (``scan_file``).
        self.scan_path = directory / f"scan-{self._model_hash}{_scope_hash(scope)}.vbs"
        # And where it saves its float16 rows, mapped by the next start over the same rows (``rows_file``).
        self.rows_path = directory / f"rows-{self._model_hash}{_scope_hash(scope)}.vbr"
        self.seeds = [directory / f"vectors-{self._model_hash}{_scope_hash(seed)}.vbc" for seed in seeds]
        self._scope_hashes = [_scope_hash(each) for each in (scope, *seeds) if each]
        # Whether ``entries`` came from a seed's file: the first save then writes this scope's
        # own file even when the keys are the same.
        self.seeded = False
        # The format of the file ``entries`` came from: an older one is written anew at the next save
        # (0 for a file with damaged vectors, left out of ``entries``).
        self.format = CACHE_FORMAT
        # The journals read into ``entries``: the next save takes their vectors in and deletes them.
        self.journals: set[Path] = set()
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

    @property
    def needs_rewrite(self) -> bool:
        """Whether the next save must write the file even if its keys are the live ones: it was
        a seed's, is of an older format, or journals were read beside it."""
        return self.seeded or self.format < CACHE_FORMAT or bool(self.journals)

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
        """Read the cache file (or, while there is none, a seed's) and this scope's journals;
        warn and start empty when the file fails a check."""
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
        """(Under ``_entries_lock``.) The file's vectors (or while it has none those of the first
        seed whose file reads), then those of this scope's journals."""
        entries = self._loaded_file()
        journals = self._journal_entries()
        return joined_entries([entries, *journals]) if journals else entries

    def _loaded_file(self) -> KeyedVectors:
        """(Under ``_entries_lock``.) The file's vectors, or while it has none those of the first
        seed whose file reads (none when the file fails a check, with a WARN, or no seed reads)."""
        self.seeded, self.format = False, CACHE_FORMAT
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

    def _journal_entries(self) -> list[KeyedVectors]:
        """(Under ``_entries_lock``.) The chunks of this scope's journals that read whole, oldest
        journal first; each journal read is noted, for the next save to delete."""
        chunks: list[KeyedVectors] = []
        journals = []
        for path in self.directory.glob(f"{self._name}.*.vbj"):
            with contextlib.suppress(OSError):
                journals.append((path.stat().st_mtime, path))
        for _, path in sorted(journals):
            try:
                read, problem = read_journal(path, self.identity)
            except FileNotFoundError:
                continue  # another process's save took it in meanwhile
            except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
                log.warning("vector cache journal %s is unusable (%s); it will be deleted", path, exc)
                self.journals.add(path)
                continue
            if problem is not None:  # a process killed while it appended: its last chunk is lost
                log.info("vector cache journal %s ends early (%s); its whole chunks are used", path, problem)
            log.info("vector cache: %d vectors from %s", sum(map(len, read)), path)
            chunks += read
            self.journals.add(path)
        return chunks

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
                return str(read_header(file, CACHE_MAGIC, "a VecBook cache file")["identity"])
        return None

    def _opened(self, path: Path) -> KeyedVectors:
        """The keys of the cache file at ``path`` (``_read``), marked as in use."""
        entries = self._read(path)
        log.info("vector cache: %d vectors from %s", len(entries), path)
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: other scopes' saves prune by last use (STALE_SCOPE_DAYS)
        return entries

    def vectors_of(self, keys: Iterable[bytes]) -> CachedVectors:
        """The cached vectors of those of ``keys`` the cache holds, read from the file when asked for."""
        wanted = list(dict.fromkeys(keys))
        rows, source = self.rows_of(b"".join(wanted))
        return CachedVectors({key: row for key, row in zip(wanted, rows.tolist()) if row >= 0}, source)

    def rows_of(self, joined: bytes) -> tuple[np.ndarray, FileRows | np.ndarray]:
        """Each of the 16-byte keys ``joined``'s row in the cache (-1: none), and what those rows are
        read from (``rows_from``). Once the vectors were released the file is opened again, if one
        is wanted (rare: a build takes the vectors of the index it replaces first, and a saved
        cache holds no others)."""
        entries = self.entries
        reread = self._released and bool((entries.rows.rows_of(joined) >= 0).any())
        if reread:
            self._wait_for_saves()
        with self._entries_lock:  # no save swaps entries between the check, the read and the capture
            if self.entries is not entries:  # a save swapped them meanwhile: look again
                entries = self.entries
                reread = self._released and bool((entries.rows.rows_of(joined) >= 0).any())
            if reread:
                self._install(self._loaded())
                entries = self.entries
            return entries.rows.rows_of(joined), entries.matrix

    def release_vectors(self) -> None:
        """Close the files the vectors are read from, keeping their keys (and the key -> row
        table, if made) and split passages: once a build has taken its vectors, its index holds
        them (float16). (Reading the whole file at once held 150 MB more at 100k records, all
        the time.)"""
        with self._entries_lock:
            entries = self.entries
            if len(entries) and entries.matrix.shape[1]:
                self._released = True  # first: a reader that sees keys only must know to read the file
                self.entries = KeyedVectors(entries.joined, np.empty((len(entries), 0), dtype=np.float32),
                                            entries._rows, entries.splits)
                if isinstance(entries.matrix, FileRows):
                    entries.matrix.close()
            retired, self._retired = self._retired, []
        self.entries.splits.release()
        for rows in retired:  # replaced by a save or load while the build read them: it is done now
            rows.close()

    def _read(self, path: Path) -> KeyedVectors:
        """The keys of the cache file at ``path``, checked, with its vectors left in the file."""
        header, entries = read_cache_file(path, self.identity)
        self.format = int(header.get("format", 1))
        damaged = int(header.get("damaged_vectors", 0))
        if damaged:
            log.warning("vector cache %s: %d of %d vectors failed their checksum; those records are embedded again, "
                        "the other %d are used", path, damaged, int(header["count"]), len(entries))
            self.format = 0  # written anew at the next save, even if no record needs a vector it lost
        return entries

    def save(self, keep: KeyedVectors | StreamedVectors | dict[bytes, np.ndarray]) -> None:
        """Atomically replace the cache with exactly ``keep`` (which prunes stale entries), then
        delete the journals read at load, which it took in (a build's own journal goes with
        its ``Checkpoints``)."""
        if isinstance(keep, dict):
            keep = KeyedVectors.from_dict(keep)
        if isinstance(keep, KeyedVectors):
            keep = StreamedVectors.of(keep)
        with self._save_lock:
            self._write(keep)
            done, self.journals = self.journals, set()
        for path in done:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        self.prune_stale_scopes()

    def _write(self, keep: StreamedVectors) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

        def install() -> None:
            # The file holds the vectors; memory keeps their keys (see release_vectors).
            if isinstance(self.entries.matrix, FileRows):
                self._retired.append(self.entries.matrix)  # a build may still read it
            self._released, self.seeded, self.format = True, False, CACHE_FORMAT
            self.entries = KeyedVectors(keep.joined, np.empty((len(keep), 0), dtype=np.float32), keep.rows,
                                        keep.splits)

        # The rename and the new keys under the lock a read of the file takes: the write itself
        # (1-2 s at 100k records) is not, so a build never waits for it.
        write_cache_file(self.path, self.identity, keep, self._entries_lock, install)

    def new_journal(self) -> Path:
        """A journal file name of this scope no other build uses (created by its first append)."""
        return self.directory / f"{self._name}.{secrets.token_hex(6)}.vbj"

    def append(self, journal: Path, keep: StreamedVectors, valid: int) -> int:
        """Append ``keep`` to ``journal`` (``vector_files.append_to_journal``); returns its valid size."""
        self.directory.mkdir(parents=True, exist_ok=True)
        return append_to_journal(journal, self.identity, keep, valid)

    def prune_stale_scopes(self, now: float | None = None) -> list[Path]:
        """Delete cache files and journals (of any scope or model) not written for STALE_SCOPE_DAYS,
        and temporary files a killed process left behind; returns what was deleted."""
        now = time.time() if now is None else now
        deleted = []
        # The keyword cache's files (one per data scope) follow the same rule.
        for pattern, age in (("vectors-*.vbc", STALE_SCOPE_DAYS * 86400), ("vectors-*.vbj", STALE_SCOPE_DAYS * 86400),
                             ("keywords-*.vbk", STALE_SCOPE_DAYS * 86400), ("scan-*.vbs", STALE_SCOPE_DAYS * 86400),
                             ("rows-*.vbr", STALE_SCOPE_DAYS * 86400), ("told-*.json", STALE_SCOPE_DAYS * 86400),
                             (".vectors-*.tmp", STALE_TEMP_SECONDS), (".keywords-*.tmp", STALE_TEMP_SECONDS),
                             (".scan-*.tmp", STALE_TEMP_SECONDS), (".rows-*.tmp", STALE_TEMP_SECONDS),
                             (".told-*.tmp", STALE_TEMP_SECONDS)):  # (told: what `add` listed, vecbook.told)
            for path in self.directory.glob(pattern):
                try:
                    if path not in (self.path, self.scan_path, self.rows_path) and now - path.stat().st_mtime > age:
                        path.unlink()
                        deleted.append(path)
                except OSError:
                    continue  # another process pruned it first, or it is not ours to delete
        if deleted:
            log.info("vector cache: deleted %d file%s unused for %d days", len(deleted),
                     "" if len(deleted) == 1 else "s", STALE_SCOPE_DAYS)
        return deleted


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
