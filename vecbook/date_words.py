"""Date words in a query ("in March", "last summer", "2 weeks ago", "on Tuesday"): the span of
days they name, counted back from a reference day (the newest record the search may return, or
today where that is earlier), or ahead from today ("tomorrow", "next week": a calendar's coming
events), as a soft preference for the records inside it (``in_span``: dated in it, or reaching
into it as the ``since``/``until`` filters have it), weighed by DATE_WEIGHT in ``blends``, never
a filter.

English only: the phrases are matched by a few patterns over the query's lower-cased words. A
date parser (dateparser's ``search_dates``) reads more languages, but takes tens of milliseconds
a query and finds dates in ordinary words ("may", "sun", "a second"); a query naming no date
must cost nothing and change nothing here.
"""

from __future__ import annotations

import math
import re
from datetime import date, timedelta
from typing import Callable, Sequence

import numpy as np

from .date_ranges import SPAN_END
from .filters import Condition, FilterColumns
from .records import Record

# When a query names a span of days, each candidate's score becomes (1 - DATE_WEIGHT) x its
# score + DATE_WEIGHT where it lies in the span (``in_span``; x its score alone where it does not,
# or has no date): a record from the span gains ~0.11 on the rest, so it passes close matches from
# other days while a clearly better match from another day stays first. Not measured on data:
# no question of RealMem names a day ("last time" is the nearest, and names no span).
DATE_WEIGHT = 0.1
_EPOCH_DAY = date(1970, 1, 1)

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Northern seasons as (first month, months): winter runs from December into the next year.
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBER = r"(\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_AGO_RE = re.compile(rf"\b{_NUMBER} (day|week|month|year)s? ago\b")
# "the day before yesterday" before "yesterday", which it holds ("the day after tomorrow" too).
_NAMED_RE = re.compile(r"\b((?:the )?day before yesterday|yesterday|today|(?:last|this) (?:week|month|year))\b")
_SEASON_RE = re.compile(r"\b(last|this|in|in the) (spring|summer|autumn|fall|winter)\b")
_MONTH_RE = re.compile(rf"\b(?:in|last|during|since|early|late|mid) ({'|'.join(_MONTHS)})(?: (\d{{4}}))?\b"
                       rf"|\b({'|'.join(_MONTHS)}) (\d{{4}})\b")
_DAY_RE = re.compile(rf"\b(?:on|last) ({'|'.join(_DAYS)})\b")
_YEAR_RE = re.compile(r"\b(?:in|during) ((?:19|20)\d\d)\b")
# Days ahead, which a calendar's coming events are in ("what's on tomorrow?", "next week's
# meetings"), as --since and --until read them (vecbook.typed_dates). Not "in 3 days", which
# --since reads too: in a question it is more often a length of time ("fixed in 3 days").
_AHEAD_RE = re.compile(r"\b((?:the )?day after tomorrow|tomorrow|next (?:week|month|year))\b")


def query_span(query: str, dates: Callable[[], np.ndarray], mask: np.ndarray | None,
               today: date | None = None) -> tuple[float, float] | None:
    """The span of days (as days since 1970: [first, end)) the query's date words name, counted
    back from the newest of the records it may return (``dates()``: each record's, NaN for none,
    asked for only when the query has date words; ``mask``: those its filters allow, None for
    all) or from ``today`` (None: the computer's), whichever is earlier, and ahead from
    ``today``; None when it names none, or no record the search may return has a date."""
    text = " ".join(query.lower().split())
    if not any(pattern.search(text) for pattern, _ in (*_READERS, *_AHEAD_READERS)):
        return None
    every = dates()
    allowed = every if mask is None else every[mask]
    if not np.isfinite(allowed).any():
        return None
    today = date.today() if today is None else today
    newest = _EPOCH_DAY + timedelta(days=math.floor(float(np.nanmax(allowed))))
    # An old export's "last week" is its own last week; a calendar's events ahead (or a date
    # typed years ahead) do not move "today" or "last week" past today.
    span = date_span(text, min(newest, today), today)
    return None if span is None else (days_since_epoch(span[0]), days_since_epoch(span[1]))


def date_span(query: str, reference: date, today: date | None = None) -> tuple[date, date] | None:
    """The days [first, end) the query's first date phrase names, counted back from
    ``reference`` (the newest day a hit can have), or None when it names none. A month or
    weekday without a year is the latest one on or before ``reference``'s day; "last summer" the
    latest summer over by then; "2 weeks ago" the week around the day 14 days back. Days ahead
    ("tomorrow", "next week") count from ``today`` (None: ``reference``): a calendar's newest
    event may lie months ahead, and an export's newest record has no day after it."""
    text = " ".join(query.lower().split())
    ahead_from = reference if today is None else today
    found = [(m.start(), span) for readers, day in ((_READERS, reference), (_AHEAD_READERS, ahead_from))
             for pattern, read in readers
             if (m := pattern.search(text)) and (span := _within_calendar(read, m, day)) is not None]
    return min(found)[1] if found else None


def phrase_span(phrase: str, reference: date) -> tuple[date, date] | None:
    """The days [first, end) ``phrase`` names where date words are the whole of it ("last week",
    "in March", not "week" or "notes from last week"), as ``date_span`` counts them; else None."""
    text = " ".join(phrase.lower().split())
    found = ((m, read) for pattern, read in _READERS if (m := pattern.fullmatch(text)))
    return next((span for m, read in found if (span := _within_calendar(read, m, reference)) is not None), None)


def _within_calendar(read: Callable[[re.Match[str], date], tuple[date, date] | None], m: re.Match[str],
                     reference: date) -> tuple[date, date] | None:
    """``read``'s span of ``m``; None for one past the ends of Python's calendar ("March 0000",
    "December 9999", whose end is in the year 10000; "last week" of records dated in the year 1)."""
    try:
        return read(m, reference)
    except (ValueError, OverflowError):
        return None


def ahead_span(phrase: str, today: date) -> tuple[date, date] | None:
    """The days [first, end) ``phrase`` names where it is the whole of it and names days ahead
    of ``today`` ("tomorrow", "the day after tomorrow", "next week": Monday to Sunday, "next
    month", "next year"); else None."""
    m = _AHEAD_RE.fullmatch(" ".join(phrase.lower().split()))
    return None if m is None else _within_calendar(_ahead, m, today)


def days_ago(phrase: str) -> int | None:
    """The days ``N days/weeks/months/years ago`` counts back (a month 30, a year 365), where
    that is the whole of ``phrase``; else None."""
    m = _AGO_RE.fullmatch(" ".join(phrase.lower().split()))
    if m is None:
        return None
    return (int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]) * _UNIT_DAYS[m.group(2)]


def _ago(m: re.Match[str], ref: date) -> tuple[date, date]:
    count = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
    unit = _UNIT_DAYS[m.group(2)]
    centre = ref - timedelta(days=count * unit)
    half = unit // 2
    return centre - timedelta(days=half), centre + timedelta(days=half + 1)


def _named(m: re.Match[str], ref: date) -> tuple[date, date]:
    phrase = m.group(1)
    if phrase.endswith("day before yesterday"):
        return ref - timedelta(days=2), ref - timedelta(days=1)
    if phrase in ("yesterday", "today"):
        day = ref - timedelta(days=1 if phrase == "yesterday" else 0)
        return day, day + timedelta(days=1)
    which, unit = phrase.split()
    back = 1 if which == "last" else 0
    if unit == "week":
        monday = ref - timedelta(days=ref.weekday() + 7 * back)
        return monday, monday + timedelta(days=7)
    if unit == "month":
        first = _month_start(ref.year, ref.month - back)
        return first, _month_start(first.year, first.month + 1)
    return date(ref.year - back, 1, 1), date(ref.year - back + 1, 1, 1)


def _season(m: re.Match[str], ref: date) -> tuple[date, date]:
    first_month, months = _SEASONS[m.group(2)]
    for year in (ref.year, ref.year - 1, ref.year - 2):
        start = date(year, first_month, 1)
        end = _month_start(year, first_month + months)
        # "last summer": the latest summer over by the reference day; else the latest begun.
        if (end <= ref) if m.group(1) == "last" else (start <= ref):
            return start, end
    return date(ref.year - 2, first_month, 1), _month_start(ref.year - 2, first_month + months)


def _month(m: re.Match[str], ref: date) -> tuple[date, date]:
    name, year = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    month = _MONTHS.index(name) + 1
    first = date(int(year), month, 1) if year else date(ref.year if month <= ref.month else ref.year - 1, month, 1)
    return first, _month_start(first.year, month + 1)


def _weekday(m: re.Match[str], ref: date) -> tuple[date, date]:
    back = (ref.weekday() - _DAYS.index(m.group(1))) % 7 or 7  # the latest one before the reference day
    day = ref - timedelta(days=back)
    return day, day + timedelta(days=1)


def _ahead(m: re.Match[str], today: date) -> tuple[date, date]:
    phrase = m.group(1)
    if phrase.endswith("day after tomorrow"):
        return today + timedelta(days=2), today + timedelta(days=3)
    if phrase == "tomorrow":
        return today + timedelta(days=1), today + timedelta(days=2)
    unit = phrase.split()[1]
    if unit == "week":
        monday = today + timedelta(days=7 - today.weekday())
        return monday, monday + timedelta(days=7)
    if unit == "month":
        first = _month_start(today.year, today.month + 1)
        return first, _month_start(first.year, first.month + 1)
    return date(today.year + 1, 1, 1), date(today.year + 2, 1, 1)


def _year(m: re.Match[str], ref: date) -> tuple[date, date]:
    year = int(m.group(1))
    return date(year, 1, 1), date(year + 1, 1, 1)


def _month_start(year: int, month: int) -> date:
    """The first day of ``month`` of ``year``, months past 12 or below 1 carried into the year."""
    year += (month - 1) // 12
    return date(year, (month - 1) % 12 + 1, 1)


_READERS = ((_AGO_RE, _ago), (_NAMED_RE, _named), (_SEASON_RE, _season), (_MONTH_RE, _month),
            (_DAY_RE, _weekday), (_YEAR_RE, _year))
_AHEAD_READERS = ((_AHEAD_RE, _ahead),)


def in_span(records: Sequence[Record], candidates: Sequence[int], span: tuple[float, float]) -> set[int]:
    """Which of the ``candidates`` (indices into ``records``) lie in ``span`` (days since 1970,
    [first, end)) as ``--since``/``--until`` have it (``date_ranges``): one dated in it, one whose
    span (an event's or a chat window's ``end_date``) reaches into it from before, and a recurring
    event with an occurrence in it; a record without a date lies in none. Only the candidates are
    looked at: a search's few hundred, not the index's every record and series, so a new span
    costs a question milliseconds at 100,000 records, not seconds."""
    first, end = (_EPOCH_DAY + timedelta(days=int(days)) for days in span)
    chosen = [records[i] for i in candidates]
    keys = frozenset({key.casefold() for record in chosen for key in record.metadata_keys} | {"date"})  # (none: no error)
    columns = FilterColumns(chosen, known_keys=keys, known_sources=[])
    mask = columns.mask([Condition("date__gte", "metadata", ("date",), "gte", first.isoformat(), or_path=SPAN_END),
                         Condition("date__lt", "metadata", ("date",), "lt", end.isoformat())])
    return set() if mask is None else {index for index, inside in zip(candidates, mask.tolist()) if inside}


def days_since_epoch(day: date) -> float:
    """``day`` as days since 1970-01-01 (as the records' dates are compared)."""
    return float((day - _EPOCH_DAY).days)
