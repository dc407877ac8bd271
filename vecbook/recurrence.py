"""A recurring event's occurrences, for the date filters: a record whose ``rrule`` metadata
holds a series in iCalendar's words (``DTSTART``, ``RRULE``, ``RDATE``, ``EXDATE`` lines, as
the calendar reader writes it) matches a date range when one of its occurrences falls inside,
not only its first date. The occurrences are counted out at search time, never stored, so an
endless series costs the record nothing."""

from __future__ import annotations

import operator
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable, Iterator

from .records import iso_moment

# How many occurrences of one series a date filter looks at before it gives up: a daily series
# covers 27 years in them, a weekly one 190, an hourly one 14 months. dateutil counts them out
# at about 20 us each, so a range far past an endless series' start costs at most about 0.2 s,
# once per series and range (the answer is kept).
MAX_OCCURRENCES = 10_000
_TESTS = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}


@lru_cache(maxsize=4096)
def series_matches(rule: str, ranges: tuple[tuple[str, str], ...]) -> bool | None:
    """Whether an occurrence of ``rule`` satisfies every ``(op, ISO date or date-time)`` bound
    (``gt``, ``gte``, ``lt``, ``lte``); None when the rule cannot be read (then the record's own
    date decides). A bound without an offset is compared with an occurrence's local time, as
    the filters compare a date with a date-time's text."""
    try:
        bounds = [(_TESTS[op], iso_moment(value)) for op, value in ranges]
        placed: dict[int, list[tuple[Callable[[Any, Any], bool], datetime]]] = {}
        for count, when in enumerate(_occurrences(rule)):
            if count >= MAX_OCCURRENCES:
                return False
            tests = placed.get(id(when.tzinfo))  # by id: dateutil's tzlocal cannot be hashed
            if tests is None:
                tests = placed[id(when.tzinfo)] = [(test, _beside(bound, when)) for test, bound in bounds]
            if not all(test(when, bound) for test, bound in tests if test in (operator.lt, operator.le)):
                return False  # occurrences come in order: none later is before the end
            if all(test(when, bound) for test, bound in tests):
                return True
    except (ValueError, TypeError, OverflowError, KeyError):  # a rule dateutil cannot read, or order
        return None
    return False


def _beside(bound: datetime, when: datetime) -> datetime:
    """``bound`` made comparable with ``when``: as is where both have an offset or neither,
    else its local time (in ``when``'s zone where ``when`` has one)."""
    if (when.tzinfo is None) == (bound.tzinfo is None):
        return bound
    return bound.replace(tzinfo=when.tzinfo)


@lru_cache(maxsize=256)
def _parsed(rule: str) -> Any:
    """The series as dateutil's rruleset; a series whose UNTIL and DTSTART disagree on having
    a zone (dateutil refuses those; calendars write them) is read without zones."""
    from dateutil.rrule import rrulestr

    try:
        return rrulestr(rule, forceset=True)
    except ValueError:
        return rrulestr(rule, forceset=True, ignoretz=True)


def _occurrences(rule: str) -> Iterator[datetime]:
    """The occurrences in order (an all-day series' at midnight, as a plain date compares)."""
    return iter(_parsed(rule))
