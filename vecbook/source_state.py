"""What the last read of the sources found, per source, and how a source is known unchanged
since: its signature (size, mtime, inode, device of each of its files), trusted only where the
read began after the source had settled (``settling``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .os_paths import os_path, plain, walk
from .records import Problem, Record

# The data directory's source name, and the block keys of sources: a file of the data directory
# ("file:<path>"), a file of a notes folder added as a source ("notes:<name>/<path>"), a
# collection read whole ("collection:<name>").
DATA_SOURCE = "files"
FILE_KEY, NOTES_KEY, COLLECTION_KEY = "file:", "notes:", "collection:"

Signature = tuple[Any, ...]
# What one read of a source found: its signature, records, problems and facts (a file of a notes
# folder: its kind; a collection read whole: its format, files...).
Entry = tuple[Signature, list[Record], list[Problem], dict[str, Any]]


def block_source(key: str) -> str:
    """The source (``files`` or a collection's name) whose records the block ``key`` holds."""
    if key.startswith(FILE_KEY):
        return DATA_SOURCE
    if key.startswith(NOTES_KEY):
        return key[len(NOTES_KEY):].split("/", 1)[0]
    return key[len(COLLECTION_KEY):]


@dataclass
class SourceState:
    """What the last read found, per file and per collection, with the signature it was
    read under (size, mtime, inode): an unchanged source is not read again."""

    files: dict[str, Entry] = field(default_factory=dict)  # the data directory's, by path
    collections: dict[str, Entry] = field(default_factory=dict)  # collections read whole, by name
    # Notes folders added as sources, read file by file: by collection name, then path.
    notes: dict[str, dict[str, Entry]] = field(default_factory=dict)
    # Set when the state was restored from the keyword cache: the next read counts the problems
    # of sources it does not read again (warned about when they were read: once per change).
    announce: bool = False
    # When each source's current content was first read (ns since the epoch), by block key:
    # what ``sources`` shows as "last indexed". Kept in the keyword cache with the rest.
    read_at: dict[str, int] = field(default_factory=dict)
    # Each source's signature and read time from a keyword cache that other code or settings
    # made (unusable, but true about when): a source read again unchanged keeps its time.
    earlier: dict[str, tuple[Signature, int]] = field(default_factory=dict)
    # Block keys whose last read began before the source had settled (``settling``): an edit
    # in the same timestamp tick leaves its signature as it was, so the next read reads it again.
    unsettled: set[str] = field(default_factory=set)
    # Collections whose path was not found at the last read, their records kept from the read
    # before (an unmounted drive): told once when it goes, not at every update while it is away.
    missing: set[str] = field(default_factory=set)

    def entry(self, key: str) -> Entry | None:
        """What the last read found for the block ``key``."""
        if key.startswith(FILE_KEY):
            return self.files.get(key[len(FILE_KEY):])
        if key.startswith(NOTES_KEY):
            name, _, rel = key[len(NOTES_KEY):].partition("/")
            return self.notes.get(name, {}).get(rel)
        return self.collections.get(key[len(COLLECTION_KEY):])

    def put(self, key: str, entry: Entry) -> None:
        """Keep ``entry`` as what the block ``key`` holds (a restore from the keyword cache)."""
        if key.startswith(FILE_KEY):
            self.files[key[len(FILE_KEY):]] = entry
        elif key.startswith(NOTES_KEY):
            name, _, rel = key[len(NOTES_KEY):].partition("/")
            self.notes.setdefault(name, {})[rel] = entry
        else:
            self.collections[key[len(COLLECTION_KEY):]] = entry

    def copy(self) -> SourceState:
        """The state as it is now (a later read replaces its dicts rather than changing them)."""
        return SourceState(dict(self.files), dict(self.collections), dict(self.notes), read_at=dict(self.read_at),
                           unsettled=set(self.unsettled), missing=set(self.missing))

    def must_read(self, key: str, entry: Entry | None, signature: Any,
                  opens: Callable[[Problem], bool] | None = None) -> bool:
        """Whether the source ``key``, last read as ``entry``, is read again now that its
        signature is ``signature``: new, changed, gone, not settled when last read, or holding a
        file that read could not open (made readable since, its signature unchanged). With
        ``opens``, which says whether such a problem's file opens now, a source is read again for
        them only once one does: an export of thousands of files with one unreadable was read
        whole at every update, to find that file still unreadable."""
        if entry is None or signature is None or entry[0] != signature or key in self.unsettled:
            return True
        unread = [problem for problem in entry[2] if problem.unread]
        return bool(unread) and (opens is None or any(opens(problem) for problem in unread))

    def read_now(self, key: str, signature: Any, now: int) -> int:
        """The read time of source ``key`` read again now with ``signature``: its earlier
        time when an earlier read saw the same content, else ``now``."""
        earlier = self.earlier.get(key)
        return earlier[1] if earlier is not None and signature is not None and earlier[0] == signature else now


def kept_while_missing(state: SourceState, name: str, label: str, path: Path, records: int) -> Problem:
    """The WARN of collection ``name``, whose ``path`` is gone, keeping its ``records`` from the
    last read (an unmounted drive, a folder moved away for a while: removing them would lose its
    vectors from the cache, and its return would embed it all again); marks it missing."""
    state.missing.add(name)
    return Problem(label, None, f"collection '{name}': not found ({path}); its records are kept until it is back "
                                f"({records:,} from the last read; `vecbook remove {name}` if it is gone for good)",
                   False)


def file_signature(path: Path) -> Signature | None:
    """(size, mtime in ns, inode, device): changes whenever the file is written or replaced."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev


def same_read(before: Entry | None, now: Entry) -> bool:
    """Whether ``now``, a source read again only because ``before`` had not settled, found what
    ``before`` did: the earlier entry is kept, so the update sees nothing changed."""
    return before is not None and before[0] == now[0] and before[1:] == now[1:]


def tree_signature(path: Path) -> Signature:
    """Signatures of every file under ``path`` (or of ``path`` itself and its SQLite WAL);
    an unreadable path has none, and is read (and reported) every time."""
    try:
        is_folder = os_path(path).is_dir()
    except OSError:
        return (object(),)  # equal to nothing: read again, so the WARN stays true
    if not is_folder:
        return (file_signature(path), file_signature(Path(f"{path}-wal")))
    found = []
    for folder, dirs, names in walk(path):
        dirs.sort()
        here = plain(folder, path)
        found += [(folder, name, file_signature(os_path(here / name))) for name in sorted(names)]
    return tuple(found)
