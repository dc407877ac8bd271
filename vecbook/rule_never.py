"""Whether a recurrence rule (as dateutil reads it) names no day it can occur on: dateutil would
step through it to the year 9999 looking for one (seconds a daily rule, for ever a secondly one),
so a series of such a rule is dated by its start alone (``recurrence``)."""

from __future__ import annotations

import itertools
from datetime import date, timedelta
from typing import Any


# The most days each month can have (February's in a leap year).
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def never_occurs(one: Any) -> bool:
    """Whether a dateutil rrule names only days of the month that none of its months has
    (``BYMONTH=2;BYMONTHDAY=30``, or a yearly February rule begun on the 30th), or only days
    no period has (``BYMONTHDAY=-32``, ``BYDAY=6MO`` in a month, ``BYSETPOS=40`` of a month's
    Mondays, ``BYYEARDAY=367``): it never occurs."""
    days, counted_back = one._bymonthday or (), one._bynmonthday or ()
    if (days or counted_back) and all(abs(day) > 31 for day in (*days, *counted_back)):
        return True
    if one._byyearday and all(not 0 < abs(day) <= 366 for day in one._byyearday):
        return True
    if _no_such_weekday(one) or _no_such_position(one) or _no_such_week(one):
        return True
    if not days or counted_back:
        return False
    months = one._bymonth or range(1, 13)
    return all(day > _MONTH_DAYS[month - 1] for day in days for month in months)


def _no_such_weekday(one: Any) -> bool:
    """Every day of BYDAY counted further than its period has (``6MO`` of a month, ``54MO`` of a year)."""
    if one._byweekday or not one._bynweekday:
        return False
    most = 5 if one._freq == 1 or one._bymonth else 53  # (dateutil: 0 yearly, 1 monthly)
    return all(abs(number) > most for _, number in one._bynweekday)


def _no_such_week(one: Any) -> bool:
    """Every BYWEEKNO week outside BYMONTH's months (``BYWEEKNO=-53;BYMONTH=4``: week 53 lies in
    December and January). A week's days are counted from its year's first week, begun between
    three days before 1 January and three after it, in a year of 365 or 366 days and 52 or 53
    weeks: the months any of those can touch."""
    if not one._byweekno or not one._bymonth:
        return False
    months: set[int] = set()
    for week, weeks, year in itertools.product(one._byweekno, (52, 53), (2023, 2024)):
        number = week if week > 0 else weeks + week + 1
        if 1 <= number <= weeks:
            first = date(year, 1, 1) + timedelta(days=7 * (number - 1) - 3)
            months.update((first + timedelta(days=day)).month for day in range(13))
    return not months & set(one._bymonth)


def _no_such_position(one: Any) -> bool:
    """Every BYSETPOS past the most occurrences a period can hold: a day each at most, times the
    hours, minutes and seconds named inside the period (one each where none is: an hourly rule's
    period holds its BYMINUTE x BYSECOND occurrences, a secondly one's one). dateutil would look
    for an hourly or finer one second by second, to the year 9999: for ever."""
    if not one._bysetpos:
        return False
    most = {0: 366, 1: 31, 2: 7}.get(one._freq, 1)  # (dateutil: 0 yearly ... 3 daily, 4 hourly ... 6 secondly)
    for named in (one._byhour, one._byminute, one._bysecond)[max(0, one._freq - 3):]:
        most *= len(named or (0,))
    return all(abs(position) > most for position in one._bysetpos)
