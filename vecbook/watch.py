"""Watching the sources: changes under the data directory and the collection paths are
batched by watchfiles and applied by the book's incremental ``reindex()``, in a thread."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .config import Config
from .exports.notes import read_change
from .sources import is_notes_folder

if TYPE_CHECKING:  # pragma: no cover - the book imports this module, not the other way round
    from .book import VecBook

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


# An editor's save is several events (write a temp file, rename it, touch the folder):
# watchfiles yields once no event came for STEP_MS, at most DEBOUNCE_MS after the first,
# so a save is one update and an edit is searchable well within two seconds.
DEBOUNCE_MS = 300
STEP_MS = 50
# How often the roots themselves are checked (a watch on a folder that was deleted and
# made again sees nothing): this is only for re-arming, changes come from watchfiles.
REARM_SECONDS = 0.5
# How watchfiles (its Rust side) says it met a path that is not UTF-8, which it cannot name.
UNDECODABLE_PATH = "Unable to decode path"
# A failure that repeats (a folder we may not read, a bug) is retried at doubling
# intervals up to this, so the log gets a line a minute rather than two a second.
MAX_REARM_SECONDS = 60.0


@dataclass(frozen=True)
class Root:
    """One watched folder and which changes under it matter."""

    folder: str  # absolute, as watchfiles reports paths under it
    recursive: bool
    names: frozenset[str] | None = None  # only these files directly in the folder (a database, its WAL)
    notes: bool = False  # a notes folder (the data directory too): only the files it reads, and folders

    def matters(self, path: str, deleted: bool) -> bool:
        """Whether a change of ``path`` (under this root) can change what the sources hold."""
        if self.names is not None:
            return os.path.dirname(path) == self.folder and os.path.basename(path) in self.names
        if not self.notes:
            return True
        # A folder (made, renamed, deleted): its files come and go with it. A deleted path cannot
        # be asked whether it was one; read_change takes a name without a suffix as one.
        rel = os.path.relpath(path, self.folder).replace(os.sep, "/")
        return read_change(rel, is_dir=not deleted and os.path.isdir(path))


def watch_roots(config: Config) -> list[Root]:
    """The data directory and notes folders (recursively, the files they read), every other
    collection folder (recursively), and the folder of every collection file (only that file
    and its ``-wal``)."""
    roots = ([Root(os.path.abspath(config.data_directory), recursive=True, notes=True)]
             if config.data_directory is not None else [])
    for collection in config.collections:
        path = collection.path if collection.path is not None else collection.database
        if path is None:
            continue
        path = Path(os.path.abspath(path))
        if path.is_dir():
            roots.append(Root(str(path), recursive=True, notes=is_notes_folder(collection)))
        else:  # a file, or not there yet: watch its folder, not the folder's whole tree
            roots.append(Root(str(path.parent), recursive=False, names=frozenset({path.name, f"{path.name}-wal"})))
    return roots


class Watcher:
    """Keeps one book fresh: ``start()`` watches its sources in background threads (one for
    the recursive roots, one for the folders of collection files), ``stop()`` ends them.

    Every failure is logged and the watch re-armed; a root that vanishes is waited for
    and, when it is back, re-watched and the book reindexed. Nothing is reindexed while
    the data directory itself is missing (an unmounted drive is not an empty one).
    """

    def __init__(self, book: VecBook) -> None:
        self.book = book
        self.roots = watch_roots(book.config)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._armed: list[threading.Event] = []
        self._missing_logged = False

    @property
    def running(self) -> bool:
        """Watching: every thread has armed its watch at least once and none has ended."""
        return (not self._stop.is_set() and bool(self._threads)
                and all(t.is_alive() for t in self._threads) and all(e.is_set() for e in self._armed))

    def start(self) -> None:
        """Start the watching threads (once): the recursive roots' where there are any, and the
        single files' always (a link to a file outside may come at any time)."""
        if self._threads:
            return
        for recursive in (True, False):
            if not recursive or any(r.recursive for r in self.roots):
                armed = threading.Event()
                thread = threading.Thread(target=self._run, args=(recursive, armed), daemon=True,
                                          name=f"vecbook-watch{'' if recursive else '-files'}")
                self._threads.append(thread)
                self._armed.append(armed)
                thread.start()

    def roots_now(self, recursive: bool) -> list[Root]:
        """The roots one thread watches: the recursive ones; or the folders of collection files
        and of the files that links in the notes folders lead to outside them (what the index
        served now read: a link made since is watched once the update that read it is served)."""
        if recursive:
            return [r for r in self.roots if r.recursive]
        snapshot = self.book._snapshot  # the index served now, and what its read found
        linked: dict[str, set[str]] = {}
        for path in sorted(snapshot.report.linked_files if snapshot is not None else ()):
            linked.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
        return [r for r in self.roots if not r.recursive] + [
            Root(folder, recursive=False, names=frozenset(names)) for folder, names in linked.items()]

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; waits (bounded) for the threads to end."""
        self._stop.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)

    def wait_until_watching(self, timeout: float | None = None) -> bool:
        """Block until every watch is armed (and the book caught up with it); False on timeout."""
        return all(e.wait(timeout) for e in self._armed)

    # -- the watching thread --

    def _run(self, recursive: bool, armed: threading.Event) -> None:
        failures, roots = 0, []
        while not self._stop.is_set():
            try:
                roots = self.roots_now(recursive)
                self._watch(roots, armed)
                failures = 0
            except Exception:  # a thread has no caller to raise to: log, wait a moment, re-arm
                failures += 1
                pause = min(REARM_SECONDS * 2 ** failures, MAX_REARM_SECONDS)
                log.exception("watching %s failed; watching again in %.0fs", ", ".join(r.folder for r in roots),
                              pause)
                self._stop.wait(pause)

    def _watch(self, roots: list[Root], armed: threading.Event) -> None:
        """Watch the roots that exist until one of them vanishes or comes back, the linked files
        change (or stop)."""
        import watchfiles

        if not roots:  # no file to watch (yet): nothing to catch up with
            armed.set()
            self._stop.wait(REARM_SECONDS)
            return
        before = _identities(roots)
        present = list(dict.fromkeys(r.folder for r in roots if before[r.folder] is not None))
        if not present:  # nothing to watch yet: wait for a root to appear
            self._stop.wait(REARM_SECONDS)
            if _identities(roots) != before:
                self._update(roots, "a watched folder came back")
            armed.set()
            return
        caught_up, folders = False, {r.folder for r in roots}
        try:
            for changes in watchfiles.watch(*present, watch_filter=_filter(roots), debounce=DEBOUNCE_MS, step=STEP_MS,
                                            stop_event=self._stop, rust_timeout=int(REARM_SECONDS * 1000),
                                            yield_on_timeout=True, raise_interrupt=False,
                                            recursive=roots[0].recursive, ignore_permission_denied=True):
                if changes or not caught_up:
                    # The first time round this catches what changed while the watch was set up.
                    self._update(roots, f"{len(changes)} change{'' if len(changes) == 1 else 's'}" if changes
                                 else "watch armed")
                    caught_up = True
                    armed.set()
                # A folder removed and made again at once may get the same inode: its own
                # deletion event says the watch on it is gone, even when its identity does not.
                if any(path in folders for _, path in changes) or _identities(roots) != before:
                    log.info("a watched folder was removed or replaced; watching it again")
                    return  # re-armed by _run, which catches up again
                if not roots[0].recursive and self.roots_now(False) != roots:
                    return  # a link to a file outside came or went: re-armed over the files now
        except RuntimeError as exc:
            if not str(exc).startswith(UNDECODABLE_PATH):
                raise
            # watchfiles cannot name a file whose name is not UTF-8 (a Latin-1 name) and stops at
            # its first event (reading the file is one). That is a change all the same, read now,
            # not a failure to back off from: the pause doubled at each one, to a minute in which
            # no edit was seen, each with a traceback. Then the watch is set up again.
            log.debug("a file whose name is not UTF-8 changed under %s; watching again", ", ".join(present))
            self._update(roots, "a change to a file whose name is not UTF-8")
            armed.set()
            if not caught_up:  # it came before the watch's first batch, and may again: twice a second at most
                self._stop.wait(REARM_SECONDS)

    def _update(self, roots: Iterable[Root], why: str) -> None:
        """Apply the changes by an incremental reindex (not while the data directory is gone)."""
        if self.book.config.data_directory is None or self.book.config.data_directory.is_dir():
            self._missing_logged = False
            log.debug("updating the index: %s", why)
            self.book.reindex()
        elif not self._missing_logged:
            self._missing_logged = True
            log.warning("the data directory %s is missing; the index is kept as it was until it is back",
                        self.book.config.data_directory)


def _identities(roots: Iterable[Root]) -> dict[str, Any]:
    """(device, inode) of each root folder, None where missing: a change means re-arm."""
    found: dict[str, Any] = {}
    for root in roots:
        try:
            info = os.stat(root.folder)
            found[root.folder] = (info.st_dev, info.st_ino) if os.path.isdir(root.folder) else None
        except OSError:
            found[root.folder] = None
    return found


def _filter(roots: list[Root]) -> Any:
    """A watchfiles filter that keeps the changes some root says matter."""
    import watchfiles

    # macOS's FSEvents names a change by its real path (/private/var/... for /var/..., a
    # symlinked folder's target): each root's real path is read as the root itself.
    folders = [(root, folder) for root in roots
               for folder in dict.fromkeys((root.folder, os.path.realpath(root.folder)))]

    def keep(change: watchfiles.Change, path: str) -> bool:
        deleted = change == watchfiles.Change.deleted
        for root, folder in folders:
            if path == folder:
                return True  # the root itself: it went away or came back (re-armed)
            if path.startswith(folder + os.sep):
                if root.matters(root.folder + path[len(folder):], deleted):
                    return True
        return False

    return keep
