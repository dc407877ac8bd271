"""Joplin's notes as the Markdown reader meets them: the RAW export (and JEX, a tar of it), where
each item is ``<32 hex digits>.md``: a note's title on its first line, a blank line, its body,
a blank line, then its properties (``created_time: 2021-03-21T16:20:56.123Z`` ...) ending with
``type_: N`` (1 a note; 2 a notebook, 4 a resource, 5 a tag, 6 a tag's link, not notes); and
times written as milliseconds since 1970 (Joplin's API, tools built on it). A note's notebook is
the path of the notebook items its ``parent_id`` leads through (``raw_notebooks``, ``notebook_path``)."""

from __future__ import annotations

import re
import stat
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import iso_moment, read_text
from .base import Export, ExportFile, from_timestamp, iso

_ID_NAME = re.compile(r"^[0-9a-f]{32}\.md$")
_PROPERTY = re.compile(r"^([a-z_]+):(?: (.*))?$")
NOTE_TYPE, NOTEBOOK_TYPE = "1", "2"
# What a notes folder's read learns of its RAW items (in ``Export.shared``, by their paths in the
# folder): the notebooks, and the notes whose folder their notebooks name (read again when one changes).
NOTEBOOK_ITEMS, FILED_NOTES = "joplin notebooks", "joplin filed notes"
# The deepest notebook path followed (Joplin nests them freely; a parent loop must end somewhere).
_MAX_DEPTH = 64
# How much of an item's end tells a notebook ("type_: 2"): its last line.
_TAIL_BYTES = 32
# Keys holding a time that Joplin or its tools write as milliseconds since 1970 (or as text).
TIME_KEYS = frozenset({"created", "updated", "created_time", "updated_time", "user_created_time",
                       "user_updated_time", "date", "end_date"})
# A number past this is milliseconds (1e11 seconds is the year 5138), one from 1e9 (2001) seconds;
# smaller numbers are not times (a rating, a year).
_MILLISECONDS = 1e11
_SECONDS = 1e9


@dataclass(frozen=True)
class RawItem:
    """One item of a RAW export: its type, title, where its body ends, and its properties."""

    kind: str
    title: str
    body_end: int  # the index of the first line after the body
    properties: dict[str, str]

    @property
    def is_note(self) -> bool:
        return self.kind == NOTE_TYPE

    @property
    def in_trash(self) -> bool:
        """Whether Joplin's trash holds it (since Joplin 3: ``deleted_time`` set, 0 or empty while it lives)."""
        return self.properties.get("deleted_time", "") not in ("", "0")

    def metadata(self) -> dict[str, Any]:
        """``date`` (the creation time the user sees, else the item's), ``updated``, and the
        author and source URL where given."""
        props = self.properties
        created = props.get("user_created_time") or props.get("created_time")
        updated = props.get("user_updated_time") or props.get("updated_time")
        found = {"date": raw_time(created), "updated": raw_time(updated), "author": props.get("author"),
                 "source_url": props.get("source_url"), "joplin_id": props.get("id")}
        return {k: v for k, v in found.items() if v}


def raw_item(name: str, lines: list[str]) -> RawItem | None:
    """The file as a RAW export item, or None where it is not one (its name is no item id, or
    its last lines are no property block ending with ``type_``)."""
    if not _ID_NAME.match(name.lower()):
        return None
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    start = end
    while start and _PROPERTY.match(lines[start - 1]):
        start -= 1
    properties = dict(_PROPERTY.match(line).groups("") for line in lines[start:end])  # type: ignore[union-attr]
    if start == end or "type_" not in properties or not lines[end - 1].startswith("type_:"):
        return None
    return RawItem(properties["type_"].strip(), lines[0].strip() if start else "", start,
                   {k: v.strip() for k, v in properties.items()})


def notebook_path(parent: str, notebooks: dict[str, RawItem]) -> str:
    """The path of the notebook ``parent`` names, its ancestors' titles first (``Personal/Travel``);
    "" for a note outside any notebook the export holds."""
    titles: list[str] = []
    while parent in notebooks and len(titles) < _MAX_DEPTH:
        titles.append(notebooks[parent].title.replace("/", "∕"))  # (a "/" in a title is no folder)
        parent = notebooks[parent].properties.get("parent_id", "")
    return "/".join(reversed(titles))


def raw_notebooks(export: Export, file: ExportFile) -> dict[str, RawItem]:
    """The notebooks of the RAW export holding ``file``, by id: the items beside it whose type is 2.
    For one file of a notes folder, those on disk, found once a read of the folder (and read again
    only when one of them changed); for an export read whole (a folder, a zip), its own files."""
    if file.path is not None and file.path == export.path:
        shared = export.shared if export.shared is not None else {}
        key = (NOTEBOOK_ITEMS, file.path.parent)
        if key not in shared:
            shared[key] = _disk_notebooks(file.path.parent)
        return shared[key]  # type: ignore[no-any-return]
    folder = file.rel.rsplit("/", 1)[0] if "/" in file.rel else ""
    by_folder = _by_export.setdefault(export, {})
    if folder not in by_folder:
        beside = export.find(lambda f: (f.rel.rsplit("/", 1)[0] if "/" in f.rel else "") == folder
                             and _ID_NAME.match(f.name.lower()) is not None)
        by_folder[folder] = _notebooks((f.name, f.read_bytes) for f in beside)
    return by_folder[folder]


_by_folder: dict[Path, tuple[tuple[tuple[str, int, int], ...], dict[str, RawItem]]] = {}
_by_export: weakref.WeakKeyDictionary[Export, dict[str, dict[str, RawItem]]] = weakref.WeakKeyDictionary()


def _disk_notebooks(folder: Path) -> dict[str, RawItem]:
    """The notebook items among the files of ``folder``, told by their last line (``type_: 2``) before
    they are read whole: a RAW export of thousands of notes holds a few dozen notebooks."""
    try:
        items = sorted(p for p in folder.iterdir() if _ID_NAME.match(p.name.lower()))
    except OSError:
        return {}
    signature = tuple(filter(None, map(_signature, items)))
    known = _by_folder.get(folder)
    if known is not None and known[0] == signature:
        return known[1]
    notebooks = _notebooks((p.name, p.read_bytes) for p in items if _ends_as_notebook(p))
    _by_folder[folder] = (signature, notebooks)
    return notebooks


def _notebooks(items: Any) -> dict[str, RawItem]:
    """The notebooks among ``items`` ((name, a function reading its bytes) pairs), by id."""
    found: dict[str, RawItem] = {}
    for name, read in items:
        try:
            text = read_text(read(), name)
        except (OSError, ValueError):
            continue  # (its own read says so)
        item = raw_item(name, text[0].split("\n")) if text is not None else None
        if item is not None and item.kind == NOTEBOOK_TYPE:
            found[item.properties.get("id", name[:-3])] = item
    return found


def _ends_as_notebook(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - _TAIL_BYTES))
            return handle.read().rstrip().endswith(b"type_: " + NOTEBOOK_TYPE.encode())
    except OSError:
        return False


def _signature(path: Path) -> tuple[str, int, int] | None:
    """(name, mtime, size) of an item file; None for one gone since listed, or no file."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (path.name, found.st_mtime_ns, found.st_size) if stat.S_ISREG(found.st_mode) else None


def raw_time(value: str | None) -> str | None:
    """A RAW property's time (ISO text with ``Z``; ``0`` or empty: none) as ISO 8601."""
    if not value or value == "0":
        return None
    try:
        return iso(iso_moment(value))
    except ValueError:
        return None


def epoch_time(value: Any) -> str | None:
    """A number of milliseconds (or seconds) since 1970 as an ISO 8601 time in UTC; None for a
    value that is no such number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _SECONDS <= value < 1e14:
        return None
    seconds = value / 1000 if value >= _MILLISECONDS else value
    return iso(from_timestamp(seconds))
