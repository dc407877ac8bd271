"""Dates as a person types them for ``since`` and ``until``, beside the ISO forms the filters
read: ISO without its zeros (``2024-3-5``), dates as written (``5 March 2024``, ``2024/03/05``,
``05.03.2024``: ``vecbook.written_dates``), a month by its name (``March 2024``, ``März 2024``),
a day without its year (``March 5``: the latest one), Chinese, Japanese and Korean dates (``2024年3月5日``)
and the date words a question may hold (``yesterday``, ``last week``, ``2 weeks ago``,
``March``, ``on Tuesday``: ``vecbook.date_words``), counted back from today, and ahead (``tomorrow``,
``next week``, ``in 3 days``: a calendar's coming events)."""

from __future__ import annotations

import functools
import re
from datetime import date, timedelta

from .config import QueryError

_UNPADDED_RE = re.compile(r"^(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?$")
_MONTH_YEAR_RE = re.compile(r"^(\S+?)\.?,?\s+(\d{4})$")
_SLASHED_RE = re.compile(r"^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$")
# Spanish, Portuguese and Catalan dates join their parts with "de" (5 de marzo de 2024, março de 2024).
_OF_RE = re.compile(r"^(\d{1,2}\s+de\s+)?(\S+)\s+de\s+(\d{4})$", re.I)
# Chinese and Japanese (年 月 日) and Korean (년 월 일) dates, the year first, each part optional but the
# month: 2024年3月5日, 2024년 3월 5일, 2024年3月, 3月5日 (that day's latest, as ``March 5``).
_CJK_RE = re.compile(r"^(?:(\d{4})\s*[年년]\s*)?(\d{1,2})\s*[月월](?:\s*(\d{1,2})\s*[日일])?$")
# What else since and until read, for their error message.
READ_TOO = "5 March 2024, 2024/3/5, yesterday, last week, 2 weeks ago, March, tomorrow, next week, in 3 days"


def typed_period(name: str, text: str, today: date) -> tuple[date, date] | None:
    """The first and last day ``text`` names, where it is a date, month or date words as typed
    (not ISO 8601, which the filters read themselves); None where it is none of them. QueryError
    for a day written with both fields under 13 (``05/03/2024``), which is two days."""
    typed = " ".join(text.split())
    if of := _OF_RE.match(typed):  # (read as "5 marzo 2024")
        typed = " ".join(part.split()[0] for part in of.groups() if part)
    return (_numbers(typed) or _written(name, typed) or _month_name(typed) or _day_of_month(typed, today)
            or _cjk(typed, today) or _words(typed.lower(), today) or _ahead(typed.lower(), today))


def _numbers(text: str) -> tuple[date, date] | None:
    """``2024-3-5`` or ``2024/3`` (the year first: one reading), as its day or month."""
    found = _UNPADDED_RE.match(text)
    if found is None:
        return None
    year, month, day = int(found.group(1)), int(found.group(2)), found.group(3)
    try:
        if day is not None:
            return (date(year, month, int(day)),) * 2
        return _month(year, month)
    except ValueError:
        return None


def _written(name: str, text: str) -> tuple[date, date] | None:
    from .written_dates import day_first, written_date

    written = written_date(text)
    if written is not None and len(written) == 10:
        try:
            day = date.fromisoformat(written)
        except ValueError:  # ISO's form, no day (2024-02-30, 0000-01-01)
            return None
        return day, day
    slashed = _SLASHED_RE.match(text)
    if slashed and day_first(slashed.group(1), slashed.group(2)) is None and slashed.group(1) != slashed.group(2):
        a, b, year = (int(v) for v in slashed.groups())
        try:
            first, second = date(year, b, a), date(year, a, b)
        except ValueError:  # a day or month 0 (00/05/2024): no date either way
            return None
        raise QueryError(f"{name} {text} could be the day {first.isoformat()} or {second.isoformat()} (the day or "
                         f"the month first): write it year first")
    return None


def _month_name(text: str) -> tuple[date, date] | None:
    """``March 2024``, ``März 2024``, ``déc. 2024``: a month by its name in a language of
    ``vecbook.month_names``, and its year."""
    from .month_names import month_number

    found = _MONTH_YEAR_RE.match(text)
    month = month_number(found.group(1)) if found else None
    return None if found is None or month is None else _month(int(found.group(2)), month)


@functools.lru_cache(maxsize=1)
def _days_without_year() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``March 5``, ``5th March``, ``24. Dezember``: compiled on first need, as the month names of
    every language are (``vecbook.written_dates``)."""
    from .month_names import DAY, MONTH

    return re.compile(rf"^{MONTH}\s+{DAY}$", re.I), re.compile(rf"^{DAY}\s+{MONTH}$", re.I)


def _day_of_month(text: str, today: date) -> tuple[date, date] | None:
    """A day and month without a year: the latest such day up to ``today``."""
    from .month_names import month_number

    month_first, day_first = _days_without_year()
    if found := month_first.match(text):
        month, day = month_number(found.group(1)), int(found.group(2))
    elif found := day_first.match(text):
        day, month = int(found.group(1)), month_number(found.group(2))
    else:
        return None
    return _latest(month or 0, day, today)


def _latest(month: int, day: int, today: date) -> tuple[date, date] | None:
    """The latest ``day`` of ``month`` up to ``today``; None where there is no such day (31 April)."""
    for year in range(today.year, today.year - 9, -1):  # (29 February: its leap year may be 8 years back)
        try:
            when = date(year, month, day)
        except ValueError:
            continue  # 29 February outside a leap year, or no such day (31 April: None after the loop)
        if when <= today:
            return when, when
    return None


def _cjk(text: str, today: date) -> tuple[date, date] | None:
    """``2024年3月5日``, ``2024년 3월 5일``, ``2024年3月`` (the month), ``3月5日`` (the latest such day up to
    ``today``); a month alone (``3月``) is left to the date words, as ``March`` is."""
    found = _CJK_RE.match(text)
    if found is None or (found.group(1) is None and found.group(3) is None):
        return None
    month, day = int(found.group(2)), found.group(3)
    try:
        if found.group(1) is None:
            return _latest(month, int(day), today)
        year = int(found.group(1))
        return (date(year, month, int(day)),) * 2 if day is not None else _month(year, month)
    except ValueError:  # 2024年13月, 2月30日
        return None


def _words(text: str, today: date) -> tuple[date, date] | None:
    """Date words as a question reads them (``vecbook.date_words``), the whole of ``text``, with
    ``in`` or ``on`` understood before a month or a weekday; ``N days ago`` is that day."""
    from .date_words import days_ago, phrase_span

    back = days_ago(text)
    if back is not None:
        return (today - timedelta(days=back),) * 2
    for phrase in (text, f"in {text}", f"on {text}"):
        span = phrase_span(phrase, today)
        if span is not None:
            return span[0], span[1] - timedelta(days=1)
    return None


def _ahead(text: str, today: date) -> tuple[date, date] | None:
    """Days ahead, which a calendar's coming events are in: ``tomorrow``, ``next week`` (Monday
    to Sunday), ``next month``, ``next year``, ``in 3 days`` (that day)."""
    from .date_words import ahead_span, days_ago

    if text.startswith("in ") and (ahead := days_ago(f"{text[3:]} ago")) is not None:
        return (today + timedelta(days=ahead),) * 2
    span = ahead_span(text, today)  # as a question's date words read them
    return None if span is None else (span[0], span[1] - timedelta(days=1))


def _month(year: int, month: int) -> tuple[date, date] | None:
    """The first and last day of ``year``'s ``month``; None where there is none (year 0, month 13)."""
    import calendar

    try:
        return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
    except ValueError:  # (calendar.IllegalMonthError is one too)
        return None
