"""Joplin's notes as the Markdown reader meets them: the RAW export (and JEX, a tar of it), where
each item is ``<32 hex digits>.md``: a note's title on its first line, a blank line, its body,
a blank line, then its properties (``created_time: 2021-03-21T16:20:56.123Z`` ...) ending with
``type_: N`` (1 a note; 2 a notebook, 4 a resource, 5 a tag, 6 a tag's link, not notes); and
times written as milliseconds since 1970 (Joplin's API, tools built on it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..records import iso_moment
from .base import from_timestamp, iso

_ID_NAME = re.compile(r"^[0-9a-f]{32}\.md$")
_PROPERTY = re.compile(r"^([a-z_]+):(?: (.*))?$")
NOTE_TYPE = "1"
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
