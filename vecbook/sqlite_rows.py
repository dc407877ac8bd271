"""A SQLite collection's rows as records: the ``id`` and ``content`` columns, the others as
metadata (a JSON ``metadata`` column merged in, a numeric ``date`` read as Unix time), and the
short scalar ones embedded with the text, as a file's headers are."""

from __future__ import annotations

import functools
import json
import math
import re
from datetime import datetime
from typing import Any

from .config import CollectionConfig, counted
from .exports.base import from_timestamp, iso
from .filter_values import FALSE_WORDS
from .records import Problem, Record

# Row metadata longer than this is not added to the embedded text: it is
# usually an id list or a blob of JSON, not words a person searches for.
MAX_EMBEDDED_METADATA_CHARS = 200

# A row's ``date`` or ``end_date`` held as a number is Unix time; its size tells the unit, as
# apps write seconds, milliseconds (JavaScript, Android), microseconds (Firefox) or
# nanoseconds: each bound is year 5138 in the smaller unit, which no row is dated.
UNIX_TIME_UNITS = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6), (math.inf, 1e9))
# A smaller number is no Unix time of a person's records (it would be before March 1973), but a
# date written as a number: 20240105 (YYYYMMDD) or a year, 2024; such a value is kept as it is.
UNIX_TIME_FLOOR = 1e8
# Nor is a number whose reading falls after 2100: a date-time written in digits (20240105123000,
# YYYYMMDDhhmmss, read as milliseconds, is the year 2611) or a time from another epoch (Chrome's
# microseconds since 1601, the year 2393). A date-time in digits that reads as the 1970s
# (202401051230, YYYYMMDDhhmm, is 1976 in milliseconds) is told by its layout (DIGIT_DATE_TIMES).
UNIX_TIME_CEILING = 4_102_444_800  # 2100-01-01
DIGIT_DATE_TIMES = {12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
_NUMBER_TEXT_RE = re.compile(r"^\s*\d+(?:\.\d+)?\s*$")
ROW_DATE_KEYS = ("date", "end_date")
UNIT_SEPARATOR = "\x1f"  # ASCII's, between the fields Anki keeps in a note's one column
# The apps whose text is HTML, read as the text it shows (a tag or an entity was searched and embedded as
# words): Anki's fields (notes.flds, as `add` reads it) and Calibre's descriptions (comments, as its query
# reads them), told by the query (upper case) `add` writes of them; a field holding neither is as written.
HTML_APPS = {"Anki": ('"FLDS" AS CONTENT', '"CSUM"'), "Calibre": ("FROM COMMENTS WHERE BOOK = BOOKS.ID",)}
_HTML_RE = re.compile(r"<[a-zA-Z/!][^>]*>|&(?:[a-zA-Z]+\d*|#\d+|#x[0-9a-fA-F]+);")
# What a row's columns hold besides words: embedded with the text they only add noise to every
# search (an app's table is mostly ids, flags and times), so they are metadata only. A column
# named as an id is one (parent_id, noteId, Bear's ZUNIQUEIDENTIFIER), and so is a value that is
# a UUID, a token of letters and digits without a space (a hash, a base64 key), a time written
# out, or no word at all (digits, "0"); a phone number, which names a person, is embedded.
# The columns with which apps mark a row as in their trash, to be restored or purged later (a
# number or text other than 0, false, no, N or F, or any time: marked; NULL, 0, "", the text NULL: not): Bear's
# ZTRASHED and ZPERMANENTLYDELETED, Apple Notes' ZMARKEDFORDELETION, Joplin's deleted_time (0
# while the note lives), and the soft deletes of web frameworks (Rails' and Laravel's deleted_at).
TRASH_COLUMNS = frozenset({
    "deleted", "is_deleted", "isdeleted", "deleted_at", "deleted_time", "deleted_on", "deleted_date", "date_deleted",
    "deletion_date", "trashed", "is_trashed", "istrashed", "in_trash", "trashed_at", "trashed_time", "ztrashed",
    "zpermanentlydeleted", "zmarkedfordeletion", "zisdeleted", "zdeleted"})
# A flag's false (a Y/N flag's N; PostgreSQL's f, as a dump copies a boolean), or nothing (NULL, as
# a CSV import writes an empty cell)
_NOT_MARKED = FALSE_WORDS | {"", "0.0", "null", "none"}
_ID_COLUMN_RE = re.compile(r"(?:^|_)(?:id|uuid|guid|hash|sha\d*|md5|checksum|etag)$|identifier$")
_CAMEL_ID_COLUMN_RE = re.compile(r"[a-z0-9](?:Id|ID|Uuid|UUID|Guid|GUID|Hash)$")
# A column holding a row's title or subject (title, ZTITLE, note_title, Subject): its text is words
# even as one token of letters and digits, as slugs and daily notes' titles are.
_TITLE_COLUMN_RE = re.compile(r"(?:^|_|z)(?:title|subject)$", re.I)
_UUID_RE = re.compile(r"^\{?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}?$", re.I)
_TOKEN_RE = re.compile(r"^(?=\D*\d)(?=.*[A-Za-z])[A-Za-z0-9+/=_-]{12,}$")
# A date or date-time and nothing more (a title that opens with its day, "2024-03-05 Standup", is words)
_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:Z|[+-]\d{2}:?\d{2})?)?$", re.I)
_PHONE_RE = re.compile(r"^(?=.*[+\s().-])\+?\(?\d[\d\s().-]{6,}$")  # "+15551234567", "(555) 123-4567"


def rows_to_records(collection: CollectionConfig, columns: list[str], rows: list[tuple[Any, ...]],
                    table: str | None = None) -> tuple[list[Record], list[Problem], int]:
    """A SQLite collection's rows as records (``id`` and ``content`` columns, every other one
    metadata), cited as rows of ``table`` (default: the collection's ``label``); returns
    (records, problems, rows skipped)."""
    where = f"collection '{collection.name}'"
    lowered = [c.lower() for c in columns]
    if "id" not in lowered or "content" not in lowered:
        advice = ("name them so in the 'query' (`SELECT rowid AS id, body AS content ...`)" if collection.query
                  else f"`vecbook remove {collection.name}`, then `vecbook add {collection.database_label} --table "
                       f"{collection.table} --text-column COLUMN` writes a 'query' that reads another column")
        return [], [Problem(collection.database_label, None, f"{where}: the rows need an 'id' and a 'content' column "
                                                             f"(got {', '.join(columns)}): {advice}")], 0
    records: list[Record] = []
    bad_json = empty = binary = duplicate = 0
    seen: set[str] = set()
    rows, left_out = _out_of_trash(collection, columns, rows)
    reader = _RowReader(columns)
    cited = table or collection.label
    html = _html_app(collection) is not None
    for row in rows:
        content = _row_text(row[reader.content], html)
        if content is None:
            binary += 1
            continue
        if not content.strip():
            empty += 1
            continue
        row_id = str(row[reader.id])
        if row_id in seen:
            duplicate += 1
            continue
        seen.add(row_id)
        metadata, worded, ok = reader.metadata(row)
        bad_json += not ok
        records.append(_row_record(collection, cited, row_id, content.strip(), metadata, worded))
    return (records, left_out + _row_problems(collection, bad_json, empty, binary, duplicate),
            empty + binary + duplicate)


def _out_of_trash(collection: CollectionConfig, columns: list[str],
                  rows: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], list[Problem]]:
    """The rows no ``TRASH_COLUMNS`` column marks (all of them with ``keep_trashed``), and the
    ``left_out`` Problem that says how many the trash held and how to keep them: a note thrown
    away is not one to find, but one a person looks for must be found to have been left out."""
    marking = [i for i, c in enumerate(columns) if c.lower() in TRASH_COLUMNS]
    if not marking or collection.keep_trashed:
        return rows, []
    kept = [row for row in rows if not any(_marked(row[i]) for i in marking)]
    if len(kept) == len(rows):
        return kept, []
    trashed = len(rows) - len(kept)
    app = _app_of(collection, [columns[i] for i in marking])
    what = (f"{counted(trashed, 'note')} in {app}'s trash" if app else
            f"{counted(trashed, 'row')} in the app's trash ({', '.join(columns[i] for i in marking)})")
    reason = (f"collection '{collection.name}': {what}; "
              f"keep_trashed = true keeps {'it' if trashed == 1 else 'them'}")
    return kept, [Problem(collection.database_label, None, reason, left_out=True)]


def _app_of(collection: CollectionConfig, marking: list[str]) -> str | None:
    """The note app whose trash the ``marking`` columns are (Bear's Core Data ``ZSFNOTE``, Joplin's
    ``notes`` with ``deleted_time``, Day One's ``ZENTRY`` with the ``trashed`` the query ``add`` writes), as the
    table or query read names it; None for another."""
    read = (collection.table or collection.query or "").upper()
    marks = {c.lower() for c in marking}
    if "ZSFNOTE" in read and marks <= {"ztrashed", "zpermanentlydeleted"}:
        return "Bear"
    if re.search(r'\bNOTES\b', read) and marks == {"deleted_time"}:
        return "Joplin"
    if '"ZENTRY"' in read and marks == {"trashed"}:
        return "Day One"
    return None


def _html_app(collection: CollectionConfig) -> str | None:
    """The app of ``HTML_APPS`` whose text the collection's query reads, else None."""
    read = (collection.query or "").upper()
    return next((app for app, marks in HTML_APPS.items() if all(mark in read for mark in marks)), None)


def _marked(value: Any) -> bool:
    """Whether a trash column's value marks its row: a flag or a time set; NULL, 0, "" and false not."""
    if value is None or isinstance(value, bytes):
        return False
    if isinstance(value, str):
        return value.strip().casefold() not in _NOT_MARKED
    return value != 0


def _row_text(value: Any, html: bool = False) -> str | None:
    """A row's content as text: text as it is, a number written out, a BLOB holding UTF-8 text
    decoded (apps store text so); "" for NULL; None for a BLOB that is not text. The fields an app
    keeps in one column between unit separators (an Anki note's front and back) are lines; with
    ``html``, each field holding HTML is the text it shows."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if value is not None and not isinstance(value, str):
        return str(value)
    text = value or ""
    if html and _HTML_RE.search(text):
        from .exports.html_text import html_to_text

        return "\n".join(html_to_text(field) if _HTML_RE.search(field) else field
                         for field in text.split(UNIT_SEPARATOR))
    return text.replace(UNIT_SEPARATOR, "\n")


class _RowReader:
    """Reads the rows of one query: where its ``id`` and ``content`` columns are, and each other
    column's role, worked out once; whether a field is embedded, judged once a column name and
    once a value of it (a sender, a thread's title repeat down a table), not at every row: a
    table of 30,000 rows took 1.7 s of CPU so, read again at every change of its database."""

    def __init__(self, columns: list[str]) -> None:
        lowered = [c.lower() for c in columns]
        # dict(zip(...)) of a row: the last of columns named alike
        self.id = max(i for i, low in enumerate(lowered) if low == "id")
        self.content = max(i for i, low in enumerate(lowered) if low == "content")
        self.columns = columns
        self.verdicts: dict[str, dict[str, bool]] = {kind: {} for kind in _KEY_KINDS}
        # a JSON column merged in, or two columns named alike: read as _merged_metadata does
        self.merged = "metadata" in lowered or len(set(columns)) < len(columns)
        # (index, name, is a date, the verdicts on its text: None where its name says it is never embedded)
        self.fields = [(i, name, low in ROW_DATE_KEYS, None if _key_kind(name) == ID_KEY else
                        self.verdicts[_key_kind(name)]) for i, (name, low) in enumerate(zip(columns, lowered))
                       if low not in ("id", "content")]

    def metadata(self, row: tuple[Any, ...]) -> tuple[dict[str, Any], list[str], bool]:
        """The row's metadata (the worded fields first), those fields' keys, and whether its JSON
        ``metadata`` column (if any) was read."""
        if self.merged:
            metadata, ok = _merged_metadata(self.columns, row)
            worded = [key for key, value in metadata.items() if type(value) is str and self.embedded(key, value)]
        else:
            metadata, worded, ok = {}, [], True
            for i, name, dated, verdicts in self.fields:
                value = row[i]
                if value is None or isinstance(value, bytes):
                    continue
                if dated:
                    read = _unix_date(value)
                    if read is not value and isinstance(read, str):  # a time read as ISO: always embedded
                        metadata[name] = read
                        worded.append(name)
                        continue
                metadata[name] = value
                if verdicts is not None and type(value) is str:
                    verdict = verdicts.get(value)
                    if verdict is None:
                        verdict = verdicts[value] = _worded(_key_kind(name), value)
                    if verdict:
                        worded.append(name)
        # The fields holding words first: a hit's metadata line shows the first few, which in an app's
        # table were its ids (Joplin's parent_id, Bear's Z_PK, Z_ENT, Z_OPT) before its title.
        if worded and list(metadata)[:len(worded)] != worded:
            metadata = {**{key: metadata[key] for key in worded}, **metadata}
        return metadata, worded, ok

    def embedded(self, key: str, text: str) -> bool:
        """``embedded_field`` of a text ``key``'s ``text``, each value judged once a read."""
        kind = _key_kind(key)
        verdicts = self.verdicts[kind]
        verdict = verdicts.get(text)
        if verdict is None:
            verdict = verdicts[text] = _worded(kind, text)
        return verdict


def _merged_metadata(columns: list[str], row: tuple[Any, ...]) -> tuple[dict[str, Any], bool]:
    """Extra columns become fields; a JSON ``metadata`` column is merged in (columns win)."""
    metadata: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    ok = True
    for name, value in zip(columns, row):
        low = name.lower()
        if low in ("id", "content") or value is None or isinstance(value, bytes):
            continue
        if low == "metadata":
            try:
                parsed = json.loads(value) if isinstance(value, str) else value
            except json.JSONDecodeError:
                ok = False
                continue
            if isinstance(parsed, dict):
                metadata.update(parsed)
            elif parsed is not None:
                metadata["metadata"] = parsed
        else:
            fields[name] = value
    metadata.update(fields)
    for key in [key for key in metadata if key.lower() in ROW_DATE_KEYS]:  # as filters read keys: any case
        metadata[key] = _unix_date(metadata[key])
    return metadata, ok


def _unix_date(value: Any) -> Any:
    """A number (or text of one: a column declared TEXT keeps the numbers written to it so) as the
    ISO date-time (UTC) of that Unix time, in the unit its size tells; anything else as it is (0 is
    how apps write "no date", not 1970; see UNIX_TIME_FLOOR)."""
    if isinstance(value, str) and _NUMBER_TEXT_RE.match(value):
        read = _unix_date(float(value))
        return read if isinstance(read, str) else value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not UNIX_TIME_FLOOR <= value < math.inf:
        return value
    divisor = time_unit(value)
    if value / divisor >= UNIX_TIME_CEILING or _digit_date_time(value):
        return value
    try:
        return iso(from_timestamp(value / divisor))
    except (OverflowError, OSError, ValueError):
        return value


def time_unit(value: float) -> float:
    """What a number of Unix time (at least ``UNIX_TIME_FLOOR``) is divided by to give seconds, as its
    size tells (``UNIX_TIME_UNITS``)."""
    for bound, divisor in UNIX_TIME_UNITS:  # (a loop: a generator's cost, at every row, was a tenth of a read)
        if value < bound:
            return divisor
    return UNIX_TIME_UNITS[-1][1]


def _digit_date_time(value: int | float) -> bool:
    """Whether ``value`` is a date-time written in digits (YYYYMMDDhhmm or YYYYMMDDhhmmss) of a
    year from 1900 to 2099."""
    digits = str(int(value))
    if value != int(value) or len(digits) not in DIGIT_DATE_TIMES or not digits.startswith(("19", "20")):
        return False
    try:
        datetime.strptime(digits, DIGIT_DATE_TIMES[len(digits)])
    except ValueError:
        return False
    return True


def _row_record(collection: CollectionConfig, table: str, row_id: str, content: str,
                metadata: dict[str, Any], worded: list[str]) -> Record:
    # Short scalar metadata (sender, date, thread title: the ``worded`` keys) is embedded with
    # the text, as headers are for files, so "what did Ana say about ..." can match.
    header = [f"{key}: {metadata[key]}" for key in worded]
    return Record(
        text=content, file_path=collection.database_label, line_number=None, end_line=None,
        metadata=metadata, source=collection.name, id=f"{collection.name}:{row_id}",
        citation=f"{collection.database_label}#{table}:{row_id}",
        content="\n".join(header + [content]),
    )


def embedded_field(key: str, value: Any) -> bool:
    """Whether a row's metadata field is embedded with its text: short text holding words (a
    title, a sender, a place, the row's date), not an id, a UUID, a hash, a number, a flag or a
    time (those stay metadata, which filters read); a title's or subject's text always."""
    return isinstance(value, str) and _worded(_key_kind(key), value)


# What a field's name says of its text (``_key_kind``): never embedded, a title's, a date's, other.
ID_KEY, TITLE_KEY, DATE_KEY, OTHER_KEY = "id", "title", "date", "other"
_KEY_KINDS = (ID_KEY, TITLE_KEY, DATE_KEY, OTHER_KEY)


@functools.lru_cache(maxsize=1024)
def _key_kind(key: str) -> str:
    """What the field name ``key`` says of its text, one of ``_KEY_KINDS``."""
    if _ID_COLUMN_RE.search(key.lower()) or _CAMEL_ID_COLUMN_RE.search(key):
        return ID_KEY
    if _TITLE_COLUMN_RE.search(key):  # a note's title, whatever it looks like ("standup-2024-03-05", a day)
        return TITLE_KEY
    return DATE_KEY if key.lower() in ROW_DATE_KEYS else OTHER_KEY


def _worded(kind: str, value: str) -> bool:
    """Whether the text ``value`` of a field of ``kind`` is embedded (``embedded_field``)."""
    if kind == ID_KEY:
        return False
    text = value.strip()
    if not text or len(text) > MAX_EMBEDDED_METADATA_CHARS or _UUID_RE.match(text):
        return False
    if kind == TITLE_KEY:
        return True
    if _TOKEN_RE.match(text):
        return False
    if _TIME_RE.match(text):
        return kind == DATE_KEY
    return any(c.isalpha() for c in text) or _PHONE_RE.match(text) is not None


def _row_problems(collection: CollectionConfig, bad_json: int, empty: int, binary: int,
                  duplicate: int) -> list[Problem]:
    where, label = f"collection '{collection.name}'", collection.database_label
    problems = []
    if bad_json:
        problems.append(Problem(label, None, f"{where}: {counted(bad_json, 'row has', 'rows have')} invalid JSON metadata (kept without it)",
                                False))
    if empty:
        problems.append(Problem(label, None, f"{where}: {counted(empty, 'row')} with NULL or empty content skipped"))
    if binary:
        problems.append(Problem(label, None, f"{where}: {counted(binary, 'row')} whose content is binary data, "
                                             f"not UTF-8 text, skipped"))
    if duplicate:
        problems.append(Problem(label, None, f"{where}: {counted(duplicate, 'row')} with a repeated id skipped"))
    return problems
