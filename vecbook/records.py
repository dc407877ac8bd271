"""Record files: UTF-8 decoding and splitting text into ``---``-separated records with ``Key: Value`` headers."""

from __future__ import annotations

import bisect
import codecs
import functools
import re
import sys
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from .sqlite_ro import BUSY_MESSAGES
from .utf16 import utf16_codec
# Re-exported: dates as people write them lived here before they had a module.
from .written_dates import fromisoformat_310, iso_moment, written_date  # noqa: F401

SEPARATOR = "---"
# A header key is one word (letter first); the colon must be followed by a
# space or the end of the line, so "http://x" and "12:30" stay body text.
HEADER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*):(?:[ \t]+(.*)|[ \t]*)$")
REPLACEMENT = "\ufffd"
# A record longer than this many words is indexed as passages of at most this
# size, each with its own lines, so that a match deep in a long record scores
# as a match (BM25 of a whole 4 MB record drowns one sentence in its length)
# and a snippet can point at it. Notes, messages and abstracts stay whole
# (97% of SciFact's abstracts are shorter), so BM25 still sees them entire.
PASSAGE_WORDS = 400
# A chat window's messages are indexed in pieces of consecutive messages holding at most this
# many words (a longer message is a piece of its own): each piece is a keyword passage and a
# model window, and the window scores as its best piece, so a fact said in one line of a long
# window is not diluted by the rest. Chosen on RealMem's tuning personas (bench/chat_recall.py).
PIECE_WORDS = 60
# Blank or ASCII punctuation only: Markdown's >, ---, ```, * * *, |---|, a list's bare -.
_MARKUP_ONLY_RE = re.compile(r"[\s!-/:-@\[-`{-~]*")
# Headers whose value is a list of names or labels ("Tags: quick, leftovers"): split on
# commas so that filters match members (tags__in=quick) rather than the whole line.
LIST_HEADERS = frozenset({"tags", "participants", "aliases", "attendees"})
# Headers and properties holding a record's date: read into ISO 8601 (``written_date``).
DATE_KEYS = frozenset({"date", "end_date", "created"})
# Metadata values up to this long are interned (shared by every record holding them).
INTERNED_CHARS = 64


class Record:
    """One searchable unit: a block of a ``.txt`` file, or one SQLite row.

    Immutable. Fields: ``text``, ``file_path``, ``line_number``, ``end_line``, ``metadata``,
    ``source``, ``id``, ``citation``, ``content`` (the whole record, headers included: what is
    embedded and keyword-indexed) and ``segments`` (where ``content`` came from when its lines
    are not the file's consecutive lines, as an export's messages: (offset in content, first
    file line, last file line), sorted by offset; each covers the content up to the next one's
    offset).

    Held compactly, since an index holds one per record (at 100k records a dataclass per
    record took 1.8 KB each, a third of the process): slots rather than a ``__dict__``; the
    text, nearly always the end of the content, as the offset where it begins there; an id
    and a citation of the usual ``path:line`` and ``path:line-end`` forms made when read; and
    metadata keys and short values interned, so that a thousand records sharing ``Author:
    ana`` share its strings. A record restored from the keyword cache holds no text at all:
    its content is read back from the cache file when asked for (``stored_many``; a hit's
    snippet, ``get``), which at a million records keeps ~500 MB of text out of memory.
    """

    __slots__ = ("_text", "file_path", "line_number", "end_line", "_keys", "_values", "source", "_id", "_citation",
                 "_content", "segments", "_texts")
    FIELDS = ("text", "file_path", "line_number", "end_line", "metadata", "source", "id", "citation", "content",
              "segments")

    def __init__(self, text: str, file_path: str, line_number: int | None, end_line: int | None,
                 metadata: dict[str, Any], source: str = "files", id: str = "", citation: str = "",
                 content: str = "", segments: tuple[tuple[int, int, int], ...] = ()) -> None:
        put = object.__setattr__
        put(self, "_text", len(content) - len(text) if text and content.endswith(text) else text)
        put(self, "file_path", sys.intern(file_path) if type(file_path) is str else file_path)
        put(self, "line_number", line_number)
        put(self, "end_line", end_line)
        put(self, "_keys", _key_tuple(tuple(sys.intern(k) if type(k) is str else k for k in metadata)))
        put(self, "_values", tuple(map(_shared, metadata.values())))
        put(self, "source", sys.intern(source) if type(source) is str else source)
        put(self, "_id", None if id == f"{file_path}:{line_number}" else id)
        put(self, "_citation", None if citation == f"{file_path}:{line_number}-{end_line}" else citation)
        put(self, "_content", content)
        put(self, "segments", segments)
        put(self, "_texts", None)

    @classmethod
    def stored_many(cls, texts: StoredTexts, refs: Sequence[int], bodies: Sequence[int], paths: Sequence[str],
                    lines: Sequence[int | None], ends: Sequence[int | None], keys: Sequence[tuple[str, ...]],
                    values: Sequence[tuple[Any, ...]], sources: Sequence[str],
                    extras: Sequence[tuple[int, str | None, str | None, str | None, Any]] = ()) -> list[Record]:
        """Records whose contents ``texts`` reads back by their ``refs`` when asked for, from columns
        (one entry per record): where each text begins in its content (``bodies``), file paths,
        lines, end lines, metadata keys (tuples from ``shared_keys``) and values (a tuple as long
        as its keys), sources. Ids and
        citations take their usual forms and segments none, except for the records ``extras``
        names: (number among these records, text where it is not the content's end, id, citation,
        segments as lists), each None (or empty) where usual.
        Made in one loop with the slots' own setters, from values already shared (interned): a
        restart makes a million of these, and a call or a JSON row per record took most of it."""
        set_text, set_path, set_line, set_end, set_keys, set_values, set_source, set_id, set_citation, set_content, \
            set_segments, set_texts = _SETTERS
        new = _new
        records = []
        for body, path, line, end, names, held, origin, ref in zip(bodies, paths, lines, ends, keys, values, sources,
                                                                   refs):
            if len(held) != len(names):
                raise ValueError("a record's metadata does not agree with its keys")
            record = new(cls)
            set_text(record, body)
            set_path(record, path)
            set_line(record, line)
            set_end(record, end)
            set_keys(record, names)
            set_values(record, held)
            set_source(record, origin)
            set_id(record, None)
            set_citation(record, None)
            set_content(record, ref)
            set_segments(record, ())
            set_texts(record, texts)
            records.append(record)
        if len(records) != len(values):
            raise ValueError("the records' metadata does not agree with their keys")
        for number, text, id, citation, segments in extras:
            record = records[number]
            if text is not None:
                set_text(record, text)
            set_id(record, id)
            set_citation(record, citation)
            set_segments(record, tuple(map(tuple, segments)) if segments else ())
        return records

    @property
    def metadata(self) -> dict[str, Any]:
        """The record's headers (or its collection's fields), as a new dict each time: a record
        keeps their values in a tuple beside a tuple of keys that records of the same header
        lines share (a dict a record took ~180 bytes, 180 MB at a million)."""
        return dict(zip(self._keys, self._values))

    @property
    def metadata_keys(self) -> tuple[str, ...]:
        """The metadata's keys, in order (no dict made)."""
        return self._keys

    def metadata_value(self, key: str, default: Any = None) -> Any:
        """One metadata value, ``default`` where the record has no such key (no dict made: a
        search looks at a few keys of each of its candidates)."""
        keys = self._keys
        return self._values[keys.index(key)] if key in keys else default

    @property
    def content(self) -> str:
        """The whole record, headers included: what is embedded and keyword-indexed."""
        content = self._content
        return content if type(content) is str else self._texts.read(content)

    @property
    def stored_in(self) -> tuple[StoredTexts, int] | None:
        """(the texts, the reference) a stored record's content is read back from; None when held."""
        return None if type(self._content) is str else (self._texts, self._content)

    @property
    def text(self) -> str:
        """The record's text: its content without the headers."""
        text = self._text
        return self.content[text:] if type(text) is int else text

    @property
    def text_start(self) -> int:
        """Where the text begins in the content (after the headers); 0 where the text is not the
        content's end (an export record whose text is not in its content as written)."""
        text = self._text
        if type(text) is int:
            return text
        content = self.content
        return len(content) - len(text) if content.endswith(text) else 0

    @property
    def id(self) -> str:
        """A stable identifier: ``path:line`` for a block of a file."""
        return f"{self.file_path}:{self.line_number}" if self._id is None else self._id

    @property
    def citation(self) -> str:
        """Where to find the record: ``path:line-end`` for a block of a file."""
        return f"{self.file_path}:{self.line_number}-{self.end_line}" if self._citation is None else self._citation

    def replace(self, **changes: Any) -> Record:
        """A copy with ``changes`` (field names) applied, as ``dataclasses.replace`` gives."""
        return Record(**{name: changes.get(name, getattr(self, name)) for name in self.FIELDS})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Record is immutable: cannot set {name!r} (use record.replace({name}=...))")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Record is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Record:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.FIELDS)

    __hash__ = None  # type: ignore[assignment] - equal by value, and the metadata dict is mutable

    def __repr__(self) -> str:
        return "Record(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS) + ")"

    def __getstate__(self) -> tuple[Any, ...]:
        # A stored record's content travels as text: the file it is read from stays here.
        held = {"_content": self.content, "_texts": None}
        return tuple(held.get(name, getattr(self, name)) for name in self.__slots__)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state):
            object.__setattr__(self, name, value)

    def lines_of(self, start: int, end: int) -> tuple[int, int] | tuple[None, None]:
        """The file lines holding ``content[start:end]`` (None for SQLite rows)."""
        if self.line_number is None:
            return None, None
        if not self.segments:
            first = self.line_number + self.content.count("\n", 0, start)
            return first, first + self.content.count("\n", start, max(start, end - 1))
        covered = [(a, b) for offset, a, b in self._segments_over(start, end)]
        return min(a for a, _ in covered), max(b for _, b in covered)

    def _segments_over(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """The segments overlapping ``[start, end)`` (at least the one holding ``start``)."""
        offsets = [s[0] for s in self.segments]
        first = max(bisect.bisect_right(offsets, start) - 1, 0)
        last = max(bisect.bisect_left(offsets, max(end, start + 1)) - 1, first)
        return list(self.segments[first:last + 1])


# Key tuples shared by the records that have the same metadata keys in the same order (a
# file's headers, an export's fields); new ones are no longer kept past this many.
KEY_TUPLES = 65_536
_key_tuples: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def shared_keys(keys: Sequence[str]) -> tuple[str, ...]:
    """The tuple of metadata keys (interned) that records with these keys share."""
    return _key_tuple(tuple(map(sys.intern, keys)))


def _key_tuple(keys: tuple[Any, ...]) -> tuple[Any, ...]:
    """The shared copy of ``keys``."""
    shared = _key_tuples.get(keys)
    if shared is None:
        shared = _key_tuples.setdefault(keys, keys) if len(_key_tuples) < KEY_TUPLES else keys
    return shared


_new = object.__new__
# Each slot's setter, in __slots__ order (Record.stored_many).
_SETTERS = tuple(Record.__dict__[name].__set__ for name in Record.__slots__)


class StoredTexts(Protocol):
    """Where stored records' contents are read back from (the keyword cache's file)."""

    def read(self, ref: int) -> str:
        """The content that ``ref`` names."""


@dataclass(frozen=True)
class Problem:
    """Something wrong with the input, kept for the log and for ``stats``; or, ``left_out``, what a
    source leaves out on purpose (an app's trash, Spam), its reason naming the setting that keeps it."""

    where: str
    line: int | None
    reason: str
    skipped: bool = True  # False: the record or file was kept despite the problem
    left_out: bool = False  # True: no fault, and not told as one (``sources`` and ``stats`` list it apart)

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line else self.where
        return f"{at}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by ``stats``."""
        return {"file_path": self.where, "line": self.line, "reason": self.reason}

    @property
    def unread(self) -> bool:
        """Whether the file could not be read at all (permission denied, an I/O error, a database
        locked past the wait): what it holds is unknown, so the next read tries it again even when
        its signature is unchanged."""
        return _UNREAD_RE.match(self.reason) is not None


# The reason of a file that could not be opened or read. A chmod that fixes it changes neither
# its size, mtime nor inode (its signature), so a Problem with this reason marks the file to read
# again (``Problem.unread``) rather than one whose content is known.
CANNOT_READ = "cannot read file"
# An added source's problems start with its name (``collection 'notes': cannot read file: ...``).
# A database another program held locked past the wait is unread too: the lock's going changes
# no signature either (``sqlite_ro.BUSY_MESSAGES``).
_UNREAD_RE = re.compile(f"(?:collection '[^']*': )?(?:{CANNOT_READ}|{'|'.join(BUSY_MESSAGES)})")

# What a code unit that is no UTF-16 decodes to before it becomes U+FFFD: it marks its line (a
# U+FFFD the note itself holds is no problem). NUL is no character a note holds.
_NOT_UTF16 = "\x00"
codecs.register_error("vecbook-mark-not-utf16", lambda error: (_NOT_UTF16, error.end))  # type: ignore[arg-type]
# Classic Mac OS ended lines with a bare CR (old TextEdit, BBEdit and AppleWorks files, and apps
# that kept its ways), which every editor shows as a line end, as it does LF and CR LF: read as
# one line, such a file was one record cited ``:1-1`` whatever line held its words.
_BARE_CR = re.compile(r"\r(?!\n)")
# CR CR LF is one line end, not a line and a blank one: what CR LF text written through a Windows
# text-mode file (Python's open(path, "w"), an FTP ASCII transfer) becomes, as grep -n and vim count it.
_CRS_BEFORE_CR_LF = re.compile(r"\r+(?=\r\n)")
_LINE_END = re.compile(rb"\r*\n|\r")


def decode_text(data: bytes, file_path: str) -> tuple[str, list[Problem]]:
    """Decode UTF-8 (BOM dropped), or UTF-16 (``utf16_codec``: after its byte order mark, or
    without one); invalid bytes become U+FFFD with one Problem per line. A line ends at LF, CR LF
    or a bare CR, which comes back as LF (``with_lf``), so the text's lines are the editor's."""
    return _decoded(data, file_path, utf16_codec(data))


def read_text(data: bytes, file_path: str) -> tuple[str, list[Problem]] | None:
    """A text file's ``data`` decoded as ``decode_text`` does, or None for a binary file
    (``is_binary``). UTF-16 is told once (it scans the whole file). NUL bytes after the text are
    dropped: a crash or an interrupted sync can leave a file's last blocks as zeros (its size
    written, its data not); UTF-16's last NUL is its own."""
    found = utf16_codec(data)
    if found is None and b"\x00" in data:
        if _nul_inside(data):
            return None
        data = data.rstrip(b"\x00")
    return _decoded(data, file_path, found)


def _decoded(data: bytes, file_path: str, found: tuple[str, int, int] | None) -> tuple[str, list[Problem]]:
    if found is not None:
        codec, start, end = found
        text = with_lf(data[start:end].decode(codec, errors="vecbook-mark-not-utf16"))
        if _NOT_UTF16 not in text:
            return text, []
        problems = [Problem(file_path, number, "bytes that are not UTF-16 were replaced by U+FFFD", False)
                    for number, line in enumerate(text.split("\n"), 1) if _NOT_UTF16 in line]
        return text.replace(_NOT_UTF16, "\ufffd"), problems
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return with_lf(data.decode("utf-8")), []
    except UnicodeDecodeError:
        pass
    # Slow path only for broken files: find the lines that hold the bad bytes.
    problems, lines = [], _LINE_END.split(data) if b"\r" in data else data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Problem(file_path, number, "bytes that are not UTF-8 were replaced by U+FFFD", False))
    return with_lf(data.decode("utf-8", errors="replace")), problems


def with_lf(text: str) -> str:
    """``text`` with each bare CR (classic Mac OS's line end) as LF; CR LF stays as it is, and so
    does CR CR LF, made CR LF (``_CRS_BEFORE_CR_LF``)."""
    if "\r" not in text:
        return text
    return _BARE_CR.sub("\n", _CRS_BEFORE_CR_LF.sub("", text) if "\r\r" in text else text)


def parse_records(text: str, file_path: str) -> tuple[list[Record], list[Problem]]:
    """Split a file's text into records; report empty and header-only blocks.

    Blocks are separated by lines that are exactly ``---`` (a trailing ``\\r`` is
    tolerated). Blank blocks before the first or after the last separator are
    file framing, not records, and are skipped silently.
    """
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    blocks: list[tuple[int, list[str]]] = []  # (1-based first line, lines)
    start = 0
    for index, line in enumerate(lines):
        if line == SEPARATOR:
            blocks.append((start + 1, lines[start:index]))
            start = index + 1
    blocks.append((start + 1, lines[start:]))
    records: list[Record] = []
    problems: list[Problem] = []
    for number, (first, block) in enumerate(blocks):
        framing = number in (0, len(blocks) - 1)
        record, problem = _parse_block(block, first, file_path, framing)
        if record is not None:
            records.append(record)
        if problem is not None:
            problems.append(problem)
    return records, problems


BINARY_REASON = "binary file (it holds NUL bytes) skipped"


def is_binary(data: bytes) -> bool:
    """Whether a file's ``data`` holds NUL bytes (UTF-16's are text) before its end or only them:
    no note, but a picture or a program. NULs after the text are padding (``read_text``)."""
    return _nul_inside(data) and utf16_codec(data) is None


def _nul_inside(data: bytes) -> bool:
    return b"\x00" in data and (data.startswith(b"\x00") or b"\x00" in data.rstrip(b"\x00"))


def undecoded_reason(bad: list[Problem], thing: str) -> str:
    """One reason for all of a file's lines that ``decode_text`` found undecodable (``bad``, not
    empty): how many, the first one's line being where it is told, and what to do. A note in
    Latin-1 or Windows-1252 has such a byte on every line with an accent: one WARN a line was
    hundreds of lines on stderr."""
    where = f"on {len(bad)} lines, the first here" if len(bad) > 1 else "on this line"
    return f"{bad[0].reason} ({where}); save the {thing} as UTF-8 to keep its letters"


def read_record_file(data: bytes, file_path: str) -> tuple[list[Record], list[Problem]]:
    """The records of a ``.txt`` file's bytes: a file holding NUL bytes (but UTF-16) is binary and skipped,
    the rest decoded (``decode_text``) and parsed (``parse_records``); problems, never exceptions."""
    read = read_text(data, file_path)
    if read is None:
        return [], [Problem(file_path, None, BINARY_REASON)]
    text, bad = read
    problems = [Problem(file_path, bad[0].line, undecoded_reason(bad, "file"), False)] if bad else []
    records, parse_problems = parse_records(text, file_path)
    return records, problems + parse_problems


def _parse_block(block: list[str], first: int, file_path: str,
                 framing: bool) -> tuple[Record | None, Problem | None]:
    # The first and last lines with text, found from either end (not a pass over every line).
    top, bottom = 0, len(block) - 1
    while top <= bottom and not block[top].strip():
        top += 1
    if top > bottom:
        return None, None if framing else Problem(file_path, first, "empty record skipped")
    while not block[bottom].strip():
        bottom -= 1
    metadata: dict[str, Any] = {}
    body_start = top
    unread: Problem | None = None
    for i in range(top, bottom + 1):
        match = HEADER_RE.match(block[i])
        if not match:
            break
        key, value = match.group(1), header_value(match.group(1), match.group(2) or "")
        if key.lower() in DATE_KEYS and isinstance(value, str) and value:
            value, problem = date_value(value, file_path, first + i, key)
            unread = unread or problem  # (one WARN a record: the first date it could not read)
        metadata[key] = value
        body_start = i + 1
    body = block[body_start:bottom + 1]
    while body and not body[0].strip():
        body.pop(0)
    line_number, end_line = first + top, first + bottom
    if not body:
        return None, Problem(file_path, line_number, "record has headers but no text; skipped")
    return Record(
        text="\n".join(body), file_path=file_path, line_number=line_number, end_line=end_line,
        metadata=metadata, id=f"{file_path}:{line_number}",
        citation=f"{file_path}:{line_number}-{end_line}",
        content="\n".join(block[top:bottom + 1]),
    ), unread


def date_value(value: str, file_path: str, line: int, key: str) -> tuple[str, Problem | None]:
    """A ``Date:`` value in ISO 8601 (``written_date``), or as written with a Problem saying
    that filters and recency cannot place it."""
    iso = written_date(value)
    if iso is not None:
        return iso, None
    return value, Problem(file_path, line, f"{key} '{value}' is not a date VecBook can read (write it as "
                                           f"YYYY-MM-DD): --since, --until and recency do not see it", False)


def split_passages(content: str, size: int = PASSAGE_WORDS) -> list[tuple[int, int]]:
    """``content`` as (start, end) character ranges of at most ``size`` words each, cut
    at line ends where a line fits and between words where one does not; together they
    cover every word. A text of at most ``size`` words is one passage."""
    if len(content) <= 2 * size or len(content.split()) <= size:
        return [(0, len(content))]
    passages: list[tuple[int, int]] = []
    start, words = None, 0
    position = 0
    for line in content.split("\n"):
        end = position + len(line)
        count = len(line.split())
        if count > size:
            if start is not None:
                passages.append((start, position - 1))
                start, words = None, 0
            passages.extend(_split_line(line, position, size))
        elif count:
            if start is not None and words + count > size:
                passages.append((start, position - 1))
                start, words = None, 0
            start = position if start is None else start
            words += count
        position = end + 1
    if start is not None:
        passages.append((start, len(content)))
    return [(a, _trim_end(content, a, b)) for a, b in passages if content[a:b].strip()]


def header_title(record: Record) -> str | None:
    """The value of a ``Title:`` header line among the record's own headers (any case; None
    where it has none, as a chat window or an export record whose title is not in its text)."""
    headers = record.content[:len(record.content) - len(record.text)]
    for line in headers.split("\n"):
        match = HEADER_RE.match(line)
        if match and match.group(1).casefold() == "title" and (match.group(2) or "").strip():
            return match.group(2).strip()
    return None


def record_passages(record: Record) -> list[tuple[int, int]]:
    """A record's passages: a chat window of several messages (``segments``) in message pieces
    (``message_pieces``), any other record by ``split_passages``."""
    if len(record.segments) > 1:
        return message_pieces(record.content, [offset for offset, _, _ in record.segments])
    return split_passages(record.content)


def message_pieces(content: str, starts: list[int], size: int = PIECE_WORDS) -> list[tuple[int, int]]:
    """``content`` (messages beginning at the offsets ``starts``, one a line or more) as pieces of
    consecutive messages of at most ``size`` words together; a longer message is a piece of its
    own, cut by ``split_passages`` where it passes PASSAGE_WORDS. The pieces cover every word."""
    bounds = [(a, _trim_end(content, a, b)) for a, b in zip(starts, [*starts[1:], len(content)])]
    pieces: list[tuple[int, int]] = []
    first, last, words = None, 0, 0
    for a, b in bounds:
        count = len(content[a:b].split())
        if first is not None and words + count > size:
            pieces.append((first, last))
            first, words = None, 0
        if count > size:
            pieces.extend((a + x, a + y) for x, y in split_passages(content[a:b]))
            continue
        first = a if first is None else first
        last, words = b, words + count
    if first is not None:
        pieces.append((first, last))
    # A line of markup alone (a quote's empty ``>``, a rule, a code fence) holds nothing to find,
    # and as a model window of its own its near-empty vector met any vague question.
    return [(a, b) for a, b in pieces if not _MARKUP_ONLY_RE.fullmatch(content, a, b)] or [(0, len(content))]


def _trim_end(content: str, start: int, end: int) -> int:
    while end > start and content[end - 1].isspace():
        end -= 1
    return end


def _split_line(line: str, offset: int, size: int) -> list[tuple[int, int]]:
    """A line of more than ``size`` words, cut between words: from the first word of each run of
    ``size`` to the last. One match a run, not a tuple a word: a giant record's lines are cut
    three times faster (a 50 MB file of 6 million words: the most of its first index's reading)."""
    return [(offset + m.start(), offset + m.end()) for m in _words_re(size).finditer(line)]


@functools.lru_cache(maxsize=8)
def _words_re(size: int) -> re.Pattern[str]:
    """Up to ``size`` words (runs of non-space) and the whitespace between them: neither part
    can match what the other does, so the greedy match never backtracks."""
    return re.compile(r"\S+(?:\s+\S+){0,%d}" % (size - 1))


def _shared(value: Any) -> Any:
    """A short metadata string interned (records repeat authors, channels and dates), else the value."""
    return sys.intern(value) if type(value) is str and len(value) <= INTERNED_CHARS else value


def header_value(key: str, raw: str) -> str | list[str]:
    """A header's value: stripped text, or for a list header (``Tags``, ``Participants``,
    ``Aliases``, ``Attendees``, any case) its comma-separated, non-empty, stripped items."""
    if key.casefold() in LIST_HEADERS:
        return [item.strip() for item in raw.split(",") if item.strip()]
    return raw.strip()
