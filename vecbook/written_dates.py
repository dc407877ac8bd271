"""Dates as people and exports write them: ISO 8601 as Python 3.11 reads it (on 3.10 too), and
the written forms a header or a note's front matter holds ("March 5, 2024", "05.03.2024", "5. März
2024": month names of ``month_names``, which mail dates are read with too)."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from .month_names import DAY, MONTH, MONTH_FIRST, month_number

_CLOCK = r"(?:,?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?)?"
_WEEKDAY = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"


@lru_cache(maxsize=1)
def _written_dates() -> list[tuple[re.Pattern[str], str]]:
    """(form, the order its groups give year, month and day in): "March 5, 2024", "5 March 2024",
    "2024/03/05", "05.03.2024" (a dot: day first everywhere), "5/3/2024" (decided below).
    Compiled on first need: the month names of every language took ~15 ms of CPU at each start
    (an MCP handshake, a one-off search) that reads no written date."""
    return [
        (re.compile(rf"^{_WEEKDAY}{MONTH_FIRST}{_CLOCK}$", re.I), "mdy"),
        (re.compile(rf"^{_WEEKDAY}{DAY}\s+{MONTH},?\s+(\d{{4}}){_CLOCK}$", re.I), "dmy"),
        (re.compile(rf"^(\d{{4}})[/.](\d{{1,2}})[/.](\d{{1,2}}){_CLOCK}$"), "ymd"),
        (re.compile(rf"^(\d{{1,2}})\.\s?(\d{{1,2}})\.\s?(\d{{4}}){_CLOCK}$"), "dmy"),
        (re.compile(rf"^(\d{{1,2}})[/-](\d{{1,2}})[/-](\d{{4}}){_CLOCK}$"), "dmy or mdy"),
    ]


_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")  # what filters and recency read: "2024-03-05 (Tuesday)" too


_FRACTION = re.compile(r"(?<=:\d\d)\.(\d+)")  # seconds' fraction, of any number of digits
_BASIC_OFFSET = re.compile(r"(?<=\d)([+-]\d\d)(\d\d)$")  # an offset without its colon: +0100


def iso_moment(text: str) -> datetime:
    """``datetime.fromisoformat`` as Python 3.11 reads it, on Python 3.10 too (ValueError if it
    is no ISO 8601 date or date-time): 3.10 reads only a fraction of a second of 3 or 6 digits and
    no ``Z``, and exports write others (DiscordChatExporter: ``10:00:44.21+00:00``, .NET's
    ``.4360000``), so their messages were undated there."""
    return datetime.fromisoformat(fromisoformat_310(text.strip()))


def fromisoformat_310(text: str) -> str:
    """``text`` in the form Python 3.10's ``fromisoformat`` reads: ``Z`` as ``+00:00``, ``+0100``
    as ``+01:00``, the fraction of a second as 6 digits (cut past 6, as 3.11 does)."""
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    text = _BASIC_OFFSET.sub(r"\1:\2", text)
    return _FRACTION.sub(lambda found: "." + (found.group(1) + "00000")[:6], text, count=1)


def written_date(value: str) -> str | None:
    """``value`` as an ISO 8601 date (with its time where it has one) when it is a date as people
    write it and says which day it is: "March 5, 2024", "Tue, 5th March 2024 10:30", "2024/03/05",
    "05.03.2024" (a dot: day first), "25/03/2024" (a field past 12), "05/05/2024"; text that starts
    with an ISO date as it is; None for anything else ("05/03/2024" could be either day)."""
    text = value.strip()
    if _ISO_DAY.match(text):
        return text
    for form, order in _written_dates():
        found = form.match(text)
        if found is None:
            continue
        a, b, c, *clock = found.groups()
        if order == "dmy or mdy":
            first_is_day = day_first(a, b)
            if first_is_day is None:
                return None  # two readings, two days (or none)
            order = "dmy" if first_is_day else "mdy"
        year, month, day = {"mdy": (c, a, b), "dmy": (c, b, a), "ymd": (a, b, c)}[order]
        try:
            moment = datetime(int(year), month_number(month) or int(month), int(day),
                              *(int(v or 0) for v in clock))
        except ValueError:
            return None
        return moment.isoformat() if clock[0] else moment.date().isoformat()
    return None


def day_first(first: str, second: str) -> bool | None:
    """Whether ``first/second/year`` puts the day first: where one field is past 12, that one is
    the day (where both are the same, either reading is that day); None where both could be."""
    if first != second and (int(first) > 12) == (int(second) > 12):
        return None
    return int(first) > 12
