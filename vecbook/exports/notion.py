"""Notion's "Markdown & CSV" export as the Markdown reader meets it: every page's and folder's
name ends with the page's 32-digit id ("Q2 planning 8f3e….md"), and a database page opens with
"# Title", a blank line, then its properties as "Name: value" lines ("Created: March 5, 2024
10:30 AM", "Tags: planning, work", a date range as "May 1, 2024 → May 3, 2024"). A page links to
another by its file's path, URL-encoded, each name ending with its id ("[Trip](Notes%20<id>/Trip%20<id>.md)"),
and a relation property is a list of such paths: read as the names of the pages they lead to."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import unquote

_ID_END = re.compile(r" [0-9a-f]{32}$")
# A path in the export, as a page's link or a relation property writes it: URL-encoded (no spaces),
# a name ending with a page id; a link's target may be a page's folder, a bare path is a page or table.
_PATH = r"[^\s()\[\]`]*%20[0-9a-f]{32}"
_LINK = re.compile(rf"\[([^\[\]\n]*)\]\(({_PATH}(?:\.md|\.csv)?)\)")
_BARE_PATH = re.compile(rf"(?<![^\s,:(])({_PATH}\.(?:md|csv))(?=$|[\s,)])")
# A property line: a name (Notion allows spaces, not a colon) and its value.
_PROPERTY = re.compile(r"^([^\s:#>*`|-][^:]{0,60}): (.+)$")
# The formats Notion writes dates in (its default; a page may show others, kept as written).
# The property names whose values are read as dates.
_DATED_NAME = re.compile(r"date|created|edited|time|due|when", re.I)
_DATE_FORMATS = ("%B %d, %Y %I:%M %p", "%B %d, %Y", "%Y/%m/%d %I:%M %p", "%Y/%m/%d")
# Month/Day/Year and Day/Month/Year, as the user chose (the page does not say which): read where
# the two readings agree or only one is a date (a day past 12).
_EITHER_ORDER = ("%m/%d/%Y", "%d/%m/%Y")


def is_page(name: str) -> bool:
    """Whether a file name (without its suffix) is a Notion page's: it ends with the page id."""
    return _ID_END.search(name) is not None


def without_id(name: str) -> str:
    """A page's or folder's name without the id Notion appends."""
    return _ID_END.sub("", name) or name


def has_paths(line: str) -> bool:
    """Whether a line may hold a link to a page of the export (a quick test before ``link_words``)."""
    return "%20" in line


def link_words(text: str) -> str:
    """Links to pages of the export as the words they show (``[Trip](Trip%20<id>.md)`` -> Trip), and
    a bare path, a relation property's, as the name of its page (``../Notes%20<id>/Trip%20<id>.md`` -> Trip)."""
    return _BARE_PATH.sub(lambda m: _page_name(m.group(1)), _LINK.sub(lambda m: m.group(1), text))


def _page_name(path: str) -> str:
    """The name of the page (or table) at an export's path, decoded, without its id."""
    return without_id(unquote(path.rsplit("/", 1)[-1]).rsplit(".", 1)[0])


def page_properties(lines: list[str]) -> dict[str, Any]:
    """A database page's properties as front matter: ``tags`` a list, dates as ISO text, and
    ``date`` the page's (a property named Date, else Created, else one whose name says date).
    A single line that holds no date is taken for the page's first sentence, not a property."""
    if len(lines) < 3 or not lines[0].startswith("# ") or lines[1].strip():
        return {}
    front: dict[str, Any] = {}
    dated: list[tuple[int, str]] = []  # (preference, name) of the properties holding a date
    for line in lines[2:]:
        found = _PROPERTY.match(line)
        if not found:
            break
        name, value = found.group(1).strip(), link_words(found.group(2).strip())
        day = notion_date(value) if _DATED_NAME.search(name) else None
        if name.lower() == "tags":
            front["tags"] = [t.strip() for t in value.split(",") if t.strip()]
            continue
        front[name] = day or value
        if day:
            dated.append((0 if name.lower() == "date" else 1 if name.lower().startswith("created") else 2, name))
    if len(front) < 2 and not dated:
        return {}  # one "Word: words" line is as likely the page's first sentence
    if dated and "date" not in front:
        front["date"] = front[min(dated)[1]]
    return front


def notion_date(value: str) -> str | None:
    """A date as Notion writes it, in ISO 8601 (a range: its start); None where it is none."""
    start = value.split("→", 1)[0].strip().lstrip("@")
    for pattern in _DATE_FORMATS:
        try:
            moment = datetime.strptime(start, pattern)
        except ValueError:
            continue
        return moment.date().isoformat() if "%H" not in pattern and "%I" not in pattern else moment.isoformat()
    days = {day for day in (_day(start, pattern) for pattern in _EITHER_ORDER) if day}
    return days.pop() if len(days) == 1 else None


def _day(text: str, pattern: str) -> str | None:
    try:
        return datetime.strptime(text, pattern).date().isoformat()
    except ValueError:
        return None

