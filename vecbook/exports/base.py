"""What every export reader shares: the export's files (a folder, one file, or a zip's members,
read where they lie: see ``zips``), problems reported as WARNs, messages, and conversation
windows made into records.

A reader module (one per format family) has two functions:

- ``detect(export: Export) -> bool``: whether the export is in this format, judged from
  content (file names only narrow the search);
- ``read(export: Export) -> list[Record]``: the records, reporting bad input with
  ``export.warn(...)`` and never raising for it.

Chat readers build ``Message`` objects and hand them to ``chat_records``, which cuts
conversation windows; other readers build records with ``export_record``.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator, Sequence, TypeVar

from ..os_paths import os_path, plain, walk
from ..records import CANNOT_READ, Problem, Record
from .jsonpos import JsonTextError
from .zips import HeldZips, Zips

T = TypeVar("T")

# One export file larger than this is skipped with a WARN: exports are read into
# memory whole (JSON needs it), and nothing a chat app writes for one
# conversation or one day comes near it.
MAX_FILE_BYTES = 1 << 30
# A conversation window holds at most this many words: all-MiniLM-L6-v2 reads 256
# word pieces, about 200 English words.
MAX_WINDOW_WORDS = 200
# What detection looks at, at most, of a file's start (``ExportFile.head``'s default).
HEAD_BYTES = 65_536
# Files never read inside an export: OS litter, not content.
IGNORED_NAMES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
# macOS's AppleDouble files ("._Kyoto.md", binary metadata): written beside each file copied to
# a FAT or exFAT drive or a share, and zipped with such a folder. Litter as well.
APPLE_DOUBLE_PREFIX = "._"
# A link to nothing, and links that lead to one another (a -> b, b -> a): no file to read, and none
# to try again until the link changes (which changes the source's signature). A loop is no broken
# link: nothing is missing, and the user would look for a file that was never there.
BROKEN_LINK = "broken symbolic link skipped"
LINK_LOOP = "symbolic link loop skipped (its links lead to one another, never to a file)"
WINDOWS_LINK_LOOP = 1921  # ERROR_CANT_RESOLVE_FILENAME


@dataclass
class ExportFile:
    """One file of an export: a plain file, or a member of a zip (read from the zip, into memory)."""

    rel: str  # the path inside the export, "/"-separated; a zip member: "<archive>!/<member>"
    label: str  # "<collection>/<rel>": the record's file_path
    size: int
    _read: Callable[[int], bytes]
    path: Path | None = None  # the file on disk, when it is not a zip member
    # Its first HEAD_BYTES, kept once ``keep_head`` read them (a file many detectors look at)
    _head: bytes | None = field(default=None, repr=False, compare=False)
    # Why ``head`` could not read it (an encrypted or damaged zip member), to say so when no
    # format recognises the export: None while every read worked
    fault: str | None = field(default=None, repr=False, compare=False)

    def keep_head(self) -> None:
        """Read the first HEAD_BYTES once for every ``head`` after (and the whole of a small file)."""
        if self._head is None:
            self._head = self.head(HEAD_BYTES)

    @property
    def name(self) -> str:
        """The file's own name, without folders."""
        return self.rel.rsplit("/", 1)[-1]

    def read_bytes(self, limit: int = MAX_FILE_BYTES) -> bytes:
        """The whole file; ``OSError`` when unreadable, ``ValueError`` past ``limit`` bytes."""
        if self.size > limit:
            # A zip member is read into memory whole; unpacked, an mbox is read from disk in pieces
            # (a heavy Gmail user's Takeout mbox passes 1 GiB).
            unpack = "; unpack the zip and add the folder (an mbox on disk has no such limit)" if self.path is None else ""
            raise ValueError(f"{self.size:,} bytes is over the {limit:,}-byte limit for one export file{unpack}")
        if self._head is not None and len(self._head) < HEAD_BYTES and len(self._head) == self.size:
            return self._head  # the whole file, read by keep_head
        data = self._read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"over the {limit:,}-byte limit for one export file")
        return data

    def head(self, size: int = HEAD_BYTES) -> bytes:
        """The first ``size`` bytes (for detection); empty when unreadable."""
        if self._head is not None and (size <= len(self._head) or len(self._head) < HEAD_BYTES):
            return self._head[:size]
        try:
            return self._read(size)[:size]
        except (OSError, ValueError) as exc:
            self.fault = str(exc)
            return b""

    def read_text(self) -> str:
        """The file as text: UTF-8 (a BOM dropped), invalid bytes as U+FFFD."""
        return self.read_bytes().decode("utf-8-sig", errors="replace")


class Export:
    """One export collection being read: its files, its settings, and the problems found."""

    # What the files of one read of a notes folder share (a Logseq graph's blocks), set by its ``Folder``.
    shared: dict[Any, Any] | None = None

    def __init__(self, name: str, path: Path, label: str, gap_minutes: float = 30.0,
                 format_name: str = "", date_order: str | None = None, *, rel: str | None = None,
                 label_prefix: str | None = None, problem_prefix: str | None = None,
                 include_spam_and_trash: bool = False) -> None:
        self.name = name
        self.path = path
        self.label = label
        # One file or folder of a notes folder read as an export (see ``notes``): its path inside
        # the notes folder, which its files' paths start with; None: the export is the source.
        self.rel = rel
        # A file's label (a record's ``file_path``) is this and its path: ``<collection>/``, or
        # nothing in the data directory, whose paths are relative to it.
        self.label_prefix = f"{name}/" if label_prefix is None else label_prefix
        # What every problem's reason starts with: the collection's name (nothing in the data directory).
        self.problem_prefix = f"collection '{name}': " if problem_prefix is None else problem_prefix
        self.gap_minutes = gap_minutes
        self.format = format_name
        self.date_order = date_order  # "dmy" or "mdy" for dates either reading allows; None: guessed
        self.include_spam_and_trash = include_spam_and_trash  # mail: read what Gmail labels Spam or Trash
        self.problems: list[Problem] = []
        self._files: list[ExportFile] | None = None
        self._zips = HeldZips()

    def reading(self) -> ContextManager[None]:
        """A block in which the export's zips stay open between member reads (a detection, a
        reader's read: a Slack export's thousands of day files), each closed at its end."""
        return self._zips.held()

    def warn(self, where: ExportFile | str | None, line: int | None, reason: str, skipped: bool = True) -> None:
        """Record a problem; the loader logs it as a WARN naming collection, file and line."""
        label = where.label if isinstance(where, ExportFile) else (where or self.label)
        self.problems.append(Problem(label, line, f"{self.problem_prefix}{reason}", skipped))

    def files(self) -> list[ExportFile]:
        """Every file of the export, sorted by path: the folder's files (recursively), the
        file itself, or a zip's members (zips inside a folder are opened too)."""
        if self._files is None:
            self._files = list(self._list_files())
        return self._files

    def read_each(self, files: Iterable[ExportFile], parse: Callable[[ExportFile], Iterable[T]]) -> list[T]:
        """``parse`` over each file, collecting what it yields; a file that fails (bad JSON,
        unreadable, too big, an unexpected shape) is a WARN and the others still load."""
        out: list[T] = []
        for file in files:
            before = len(out)
            try:
                out.extend(parse(file))  # keeps what a generator yielded before it raised
            except JsonTextError as exc:
                self._warn_failed(file, exc.line, str(exc), len(out) - before)
            except OSError as exc:
                self.warn(file, None, f"{CANNOT_READ}: {exc.strerror or exc}")
            except Exception as exc:  # noqa: BLE001 - any shape a reader did not expect is bad input
                self._warn_failed(file, None, f"{type(exc).__name__}: {exc}", len(out) - before)
        return out

    def _warn_failed(self, file: ExportFile, line: int | None, reason: str, kept: int) -> None:
        """"file skipped" only when nothing of the file was kept."""
        if kept:
            self.warn(file, line, f"{kept} item{'s' if kept > 1 else ''} kept; the rest of the file is "
                                  f"unread: {reason}", skipped=False)
        else:
            self.warn(file, line, f"file skipped: {reason}")

    def find(self, predicate: Callable[[ExportFile], bool]) -> list[ExportFile]:
        """The files for which ``predicate`` is true."""
        return [f for f in self.files() if predicate(f)]

    def _list_files(self) -> Iterator[ExportFile]:
        if self.path.is_file() or (self.rel is not None and not self.path.is_dir()):  # (one gone since listed: a WARN)
            yield from self._expand(self.path, self.rel or self.path.name)
            return
        inside = f"{self.rel}/" if self.rel else ""
        for folder, dirs, names in walk(self.path):
            dirs.sort()
            for name in sorted(names):
                path = plain(folder, self.path) / name
                rel = inside + readable_path(path.relative_to(self.path).as_posix())
                if not is_litter(name):
                    yield from self._expand(os_path(path), rel)

    def _expand(self, path: Path, rel: str) -> Iterator[ExportFile]:
        """A plain file, or the members of a zip."""
        if path.suffix.lower() in (".zip", ".textpack"):  # (a TextPack: a zipped TextBundle, one note)
            zips = Zips(lambda where, reason: self.warn(self._label(where), None, reason), is_litter, MAX_FILE_BYTES,
                        self._zips)
            for member in zips.members(path, rel):
                yield ExportFile(member.rel, self._label(member.rel), member.size, member.read)
            return
        try:
            size = path.stat().st_size
        except OSError as exc:
            self.warn(self._label(rel), None, _stat_fault(path, exc))
            return
        yield ExportFile(rel, self._label(rel), size, lambda limit, p=path: _read_file(p, limit), path)

    def _label(self, rel: str) -> str:
        return f"{self.label_prefix}{rel}"


def link_fault(link: Path) -> str | None:
    """LINK_LOOP where the link ``link`` leads to itself through links, else None."""
    try:
        link.stat()
    except OSError as exc:
        return LINK_LOOP if exc.errno == errno.ELOOP or getattr(exc, "winerror", None) == WINDOWS_LINK_LOOP else None
    return None


def _stat_fault(path: Path, exc: OSError) -> str:
    """Why the listed file ``path`` has no size: a loop of links, a link to nothing, or what the OS
    said (``CANNOT_READ``: a file to try again at the next read)."""
    if path.is_symlink() and (loop := link_fault(path)) is not None:
        return loop
    if path.is_symlink() and isinstance(exc, FileNotFoundError):
        return BROKEN_LINK
    return f"{CANNOT_READ}: {exc.strerror or exc}"


def is_litter(name: str) -> bool:
    """Whether a file so named is the OS's, not the export's: never read, never counted."""
    return name in IGNORED_NAMES or name.startswith(APPLE_DOUBLE_PREFIX)


def readable_path(rel: str) -> str:
    """``rel``, a path as the OS named it, as text every output can carry. A name whose bytes are
    not UTF-8 (a Latin-1 name from an old archive or a Windows share) holds them as lone
    surrogates, which JSON cannot encode: MCP and the HTTP server failed the whole search that
    met one. Such bytes are written ``\\xe9``, as Python and the shell show them, so the citation
    stays the same at every read (and an id given back finds its record)."""
    if rel.isascii():
        return rel
    try:
        raw = rel.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate of a Windows name stands for no byte
        return rel.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def still_unreadable(path: Path) -> bool:
    """Whether the file ``path``, which a read could not open, still cannot be (a chmod or an
    access granted fixes it without changing its size, mtime or inode). One not found is not
    known unreadable: False."""
    try:
        _read_file(path, 0)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return False


def _read_file(path: Path, limit: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(limit)


# -- messages and conversation windows --


@dataclass
class Message:
    """One chat message as a reader found it, with the file lines it was read from."""

    conversation: str
    author: str
    text: str
    file: ExportFile
    line: int | None  # None: the export is a database, whose rows have no lines
    end_line: int | None
    when: datetime | None = None  # for time gaps; aware where the export carries the zone
    id: str | None = None  # the app's message id, where it has one
    thread: str | None = None
    role: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # format-specific keys for the window
    anchor: str | None = None  # the citation's "#..." when not the id (a database row: "table:rowid")

    @property
    def date(self) -> str | None:
        """ISO 8601, with the offset where the export carries the zone, as written where not."""
        return iso(self.when)

    def key(self) -> str:
        """A stable id: the app's id, else a digest of what the message says and when."""
        if self.id:
            return self.id
        basis = f"{self.conversation}|{self.date}|{self.author}|{self.text}"
        return hashlib.sha1(basis.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def iso(when: datetime | None) -> str | None:
    """ISO 8601 without microseconds (seconds are what people search by)."""
    return when.replace(microsecond=0).isoformat() if when is not None else None


def from_timestamp(seconds: float, zone: timezone = timezone.utc) -> datetime:
    """An aware datetime from Unix seconds."""
    return datetime.fromtimestamp(seconds, zone)


def chat_records(export: Export, messages: Iterable[Message]) -> list[Record]:
    """Conversation windows: consecutive messages of one conversation (and thread) in one
    file, broken at a pause longer than the collection's gap, at a step back in time (apps
    write messages in the order they were stored, not always in time order), between times
    that cannot be compared (one with a zone, one without), and before a window passes
    MAX_WINDOW_WORDS words; a longer single message is a window of its own. So a window's
    ``date`` <= ``end_date`` always, and the span between them is one its messages cover."""
    groups: dict[tuple[str, str, str | None], list[Message]] = {}
    for message in messages:
        if message.text.strip():
            groups.setdefault((message.file.rel, message.conversation, message.thread), []).append(message)
    records = []
    for group in groups.values():
        for window in _windows(group, export.gap_minutes * 60.0):
            records.append(_window_record(export, window))
    return records


def _windows(messages: Sequence[Message], gap_seconds: float) -> Iterator[list[Message]]:
    window: list[Message] = []
    words = 0
    for message in messages:
        count = len(message.text.split())
        if window and (words + count > MAX_WINDOW_WORDS or not 0.0 <= _pause(window[-1], message) <= gap_seconds):
            yield window
            window, words = [], 0
        window.append(message)
        words += count
    if window:
        yield window


def _pause(before: Message, after: Message) -> float:
    """Seconds from one message to the next: negative for a step back in time, NaN when the two
    cannot be compared (one aware, one naive), 0 when either has no time."""
    if before.when is None or after.when is None:
        return 0.0
    try:
        return (after.when - before.when).total_seconds()
    except TypeError:  # one aware, one naive: no gap can be measured, so no window may span them
        return math.nan


def message_line(message: Message) -> str:
    """``Name: text`` (a message's later lines follow as they are)."""
    return f"{message.author}: {message.text.strip()}"


def _window_record(export: Export, window: list[Message]) -> Record:
    first = window[0]
    parts: list[str] = []
    segments: list[tuple[int, int, int]] = []
    offset = 0
    for message in window:
        line = message_line(message)
        segments.append((offset, message.line, message.end_line))
        parts.append(line)
        offset += len(line) + 1
    text = "\n".join(parts)
    participants = list(dict.fromkeys(m.author for m in window))
    timed = [m for m in window if m.when is not None] or [first]  # in time order: _windows breaks at a step back
    metadata: dict[str, Any] = {**first.metadata, "date": timed[0].date, "end_date": timed[-1].date,
                                "participants": participants, "conversation": first.conversation}
    if first.thread is not None:
        metadata["thread"] = first.thread
    roles = list(dict.fromkeys(m.role for m in window if m.role))
    if roles:
        metadata["role"] = roles if len(roles) > 1 else roles[0]
    metadata.update(format=export.format, message_count=len(window))
    metadata = {k: v for k, v in metadata.items() if v is not None}
    starts = [m.line for m in window]
    ends = [m.end_line for m in window]
    if None in starts or None in ends:  # database rows: cited by the first message's row, no lines
        return export_record(export, first.file, text, None, None, metadata, first.key(),
                             anchor=first.anchor or first.id)
    return export_record(export, first.file, text, min(starts), max(ends),  # type: ignore[type-var]
                         metadata, first.key(), anchor=first.anchor or first.id, segments=tuple(segments))


def export_record(export: Export, file: ExportFile, text: str, line: int | None, end_line: int | None,
                  metadata: dict[str, Any], key: str, anchor: str | None = None, content: str | None = None,
                  segments: tuple[tuple[int, int, int], ...] = ()) -> Record:
    """A record from an export file: ``id`` is ``<collection>:<file>#<key>`` (stable as long
    as the item is), ``citation`` is ``<file>:<line>-<end>`` plus ``#<anchor>`` (the app's id);
    a database export has no lines (``line`` None): ``<file>#<anchor>``, as SQLite rows are cited."""
    where = file.label if line is None else f"{file.label}:{line}-{end_line}"
    citation = where + (f"#{anchor}" if anchor else "")
    return Record(text=text, file_path=file.label, line_number=line, end_line=end_line, metadata=metadata,
                  source=export.name, id=f"{export.name}:{file.rel}#{key}", citation=citation,
                  content=text if content is None else content, segments=segments)


def json_object(value: Any) -> dict[str, Any]:
    """``value`` where it is a JSON object, else an empty one (a field of an unexpected shape)."""
    return value if isinstance(value, dict) else {}


def json_list(value: Any) -> list[Any]:
    """``value`` where it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def json_string(value: Any) -> str:
    """``value`` where it is a JSON string, else an empty one."""
    return value if isinstance(value, str) else ""


def clean_text(text: str) -> str:
    """Trim the text's blank edges and each line's trailing spaces; never rewrites words."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def distinct_ids(records: list[Record]) -> list[Record]:
    """The records with a repeated ``id`` made distinct by a ``~2``, ``~3``... suffix, in order.

    Readers whose messages have no ids key windows by a digest of the first message
    (``Message.key``); two windows opening with the same words by the same person in the
    same minute would share it. The suffix keeps ids stable as long as the earlier twin is."""
    seen: dict[str, int] = {}
    out = []
    for record in records:
        count = seen[record.id] = seen.get(record.id, 0) + 1
        out.append(record if count == 1 else record.replace(id=f"{record.id}~{count}"))
    return out


_pause_lock = threading.Lock()
_pauses = 0  # collector_paused blocks running now, in any thread
_collector_was_on = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a build (or an export's reader) makes many
    long-lived, acyclic objects, then one young collection on this thread. The collector
    walked them again and again as they piled up: at 100k records a build's first read and
    keyword index took 3.8-4.1 s with it and 3.1-3.2 s without, and a restore from the keyword
    cache 2.1-2.6 s against 1.0-1.1 s (bench/results corpora); its passes were about a quarter
    of reading 200,000 Slack messages. The switch is process-wide, so pauses are counted: the
    collector comes back, if it was on, when the last one ends."""
    global _pauses, _collector_was_on
    with _pause_lock:
        if _pauses == 0:
            _collector_was_on = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            resume = _pauses == 0 and _collector_was_on
            if resume:
                gc.enable()
        if resume:
            # The objects made meanwhile wait in the youngest generation: walk them here
            # (~0.25 s at 100k) rather than in whichever thread, a search's, allocates next.
            gc.collect(1)
