"""A recurring event's occurrences, for the date filters: a record whose ``rrule`` metadata
holds a series in iCalendar's words (``DTSTART``, ``RRULE``, ``RDATE``, ``EXDATE`` lines, as
the calendar reader writes it) matches a date range when one of its occurrences falls inside,
not only its first date. The occurrences are counted out at search time, never stored, so an
endless series costs the record nothing."""

from __future__ import annotations

import heapq
import itertools
import operator
import re
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache
from typing import Any, Callable, Iterator

from .records import iso_moment
from .rule_never import never_occurs

# How many occurrences of one series a date filter looks at before it gives up. A series is
# counted out from a little before the range (its start moved on by whole periods), so this
# bounds only the rules that cannot be moved (with COUNT: a daily one covers 27 years in them)
# and a range that spans many occurrences; dateutil counts them out at about 20 us each, so
# at most about 0.2 s a series and range (the answer is kept).
MAX_OCCURRENCES = 10_000
# How many steps one search of a series may take (about 3 us of dateutil's work each: a day of
# a daily rule, a month of a monthly one; see ``_searched_class``): dateutil steps through a rule's periods
# until one yields an occurrence, and one that never does (FREQ=DAILY;INTERVAL=7;BYDAY=TU begun
# on a Monday), or only after a very long search, it would step through to the year 9999: 7 s a
# daily series, for ever a minutely one, for every search by date. So at most some 0.3 s a
# series and range: 270 years of a daily rule's days, 2,700 of a monthly one's months, 5,000 of
# a yearly one's, a few months of a minutely one looked at minute by minute.
MAX_STEPS = 100_000
_TESTS = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}
# What dateutil raises for a rule it cannot read or count out (IndexError: a 53rd Monday of a
# month beside a first, BYDAY=53MO,1MO), and a bound that cannot be read or ordered.
RULE_ERRORS = (ValueError, TypeError, OverflowError, KeyError, IndexError)
# DTSTART as the calendar reader writes it: its parameters, its date or date-time, a Z.
_START_RE = re.compile(r"^(DTSTART(?:;[^:]*)?:)(\d{8}(?:T\d{6})?)(Z?)$", re.I)
_DAY_RDATE_RE = re.compile(r"^RDATE;VALUE=DATE:", re.I | re.M)
# The zone a series is shown in, where its start is in UTC (dateutil reads no such line).
_SHOWN_ZONE_RE = re.compile(r"\n?^X-WR-TIMEZONE:([^\n]*)$", re.I | re.M)
# A zoned DTSTART (TZID or Z), and an UNTIL written without Z: a date, or a local date-time.
_ZONED_START_RE = re.compile(r"^DTSTART(?:;TZID=([^:;\n]+))?:\d{8}T\d{6}(Z?)$", re.I | re.M)
_LOCAL_UNTIL_RE = re.compile(r"(UNTIL=)(\d{8})(T\d{6})?(?![\dTtZz])", re.I)
_DAY_UNTIL_RE = re.compile(r"(UNTIL=)(\d{8})(?![\dTtZz])", re.I)
# dateutil's frequencies (0 yearly ... 6 secondly) by their names.
_FREQUENCIES = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY")
_UNITS = {"WEEKLY": timedelta(weeks=1), "DAILY": timedelta(days=1), "HOURLY": timedelta(hours=1),
          "MINUTELY": timedelta(minutes=1), "SECONDLY": timedelta(seconds=1)}


@lru_cache(maxsize=4096)
def series_matches(rule: str, ranges: tuple[tuple[str, str], ...]) -> bool | None:
    """Whether an occurrence of ``rule`` satisfies every ``(op, ISO date or date-time)`` bound
    (``gt``, ``gte``, ``lt``, ``lte``); None when the rule cannot be read (then the record's own
    date decides). A bound without an offset is compared with an occurrence's local time, as
    the filters compare a date with a date-time's text."""
    try:
        return occurrence_within(rule, ranges) is not None
    except RULE_ERRORS:  # a rule dateutil cannot read, or order
        return None


@lru_cache(maxsize=4096)
def occurrence_within(rule: str, ranges: tuple[tuple[str, str], ...]) -> datetime | None:
    """The first occurrence of ``rule`` that satisfies every bound (see ``series_matches``), or
    None where none does within ``MAX_OCCURRENCES``; raises one of ``RULE_ERRORS`` for a rule or
    bound that cannot be read, ``TooRare`` for one whose
    search for an occurrence took ``MAX_STEPS``."""
    bounds = [(_TESTS[op], iso_moment(value)) for op, value in ranges]
    first = _start_occurrence(rule) if _start_near(rule, bounds) else None
    if first is not None and all(test(first, _beside(bound, first)) for test, bound in bounds):
        return _in_start_zone(rule, first)  # (the earliest: a series' occurrences are from its start on)
    placed: dict[int, list[tuple[Callable[[Any, Any], bool], datetime]]] = {}
    for count, when in enumerate(_near(rule, bounds)):
        if count >= MAX_OCCURRENCES:
            return None
        tests = placed.get(id(when.tzinfo))  # by id: dateutil's tzlocal cannot be hashed
        if tests is None:
            tests = placed[id(when.tzinfo)] = [(test, _beside(bound, when)) for test, bound in bounds]
        if not all(test(when, bound) for test, bound in tests if test in (operator.lt, operator.le)):
            return None  # occurrences come in order: none later is before the end
        if all(test(when, bound) for test, bound in tests):
            return _in_start_zone(rule, when)
    return None


def _near(rule: str, bounds: list[tuple[Callable[[Any, Any], bool], datetime]]) -> Iterator[datetime]:
    """The series' occurrences counted out from a little before the bounds' start: an hourly or
    finer rule's a day at a time (``_day_by_day``), another's from its start moved on by whole
    periods (``_moved_start``)."""
    alone = _each_rule(rule)
    if alone is not None:  # (each rule moved near on its own: their periods differ)
        return _merged([_near(one, bounds) for one in alone])
    starts = [bound for test, bound in bounds if test in (operator.gt, operator.ge)]
    ends = [bound for test, bound in bounds if test in (operator.lt, operator.le)]
    found = _day_by_day(rule, starts, ends)
    if found is not None:
        return found
    return _occurrences(rule, MAX_STEPS, _moved_start(rule, max(starts, key=_naive)) if starts else None)


def _each_rule(rule: str) -> list[str] | None:
    """A series of several RRULEs (RFC 5545 allows them; old Apple and Lotus exports write them)
    as one series a rule, each with the DTSTART, RDATEs and EXDATEs: counted out together from
    the start, one begun decades back ran out of ``MAX_OCCURRENCES`` before the range, and an
    hourly one was looked at hour by hour. None for a series of one rule, or with an EXRULE
    (which takes out the occurrences of every rule)."""
    lines = rule.split("\n")
    rules = [line for line in lines if line[:6].upper() == "RRULE:"]
    if len(rules) < 2 or any(line[:7].upper() == "EXRULE:" for line in lines):
        return None
    others = [line for line in lines if line[:6].upper() != "RRULE:"]
    return ["\n".join([others[0], one, *others[1:]]) for one in rules]


def _merged(series: list[Iterator[datetime]]) -> Iterator[datetime]:
    """The occurrences of several series in order, each once (an RDATE, or a day two rules name)."""
    return (when for when, _ in itertools.groupby(heapq.merge(*series)))


def _start_near(rule: str, bounds: list[tuple[Callable[[Any, Any], bool], datetime]]) -> bool:
    """Whether the series' DTSTART, as written, lies within two days of the bounds (a bound in
    another zone is at most ~26 hours away), so it is worth reading as dateutil would (a series
    begun years before the range is not)."""
    found = _START_RE.match(rule.split("\n", 1)[0])
    if found is None:
        return True
    written = found.group(2)
    start = datetime.strptime(written, "%Y%m%d" if len(written) == 8 else "%Y%m%dT%H%M%S")
    slack = timedelta(days=2)
    try:
        return all(start >= _naive(bound) - slack if test in (operator.gt, operator.ge)
                   else start <= _naive(bound) + slack for test, bound in bounds)
    except OverflowError:  # a bound within two days of the year 1 or 9999
        return True


@lru_cache(maxsize=4096)
def _start_occurrence(rule: str) -> datetime | None:
    """The series' DTSTART as an occurrence, as dateutil gives one (None: an EXDATE takes it
    out, or it cannot be read). RFC 5545's recurrence set is DTSTART's with the RRULE's and
    RDATE's: a series begun on a Monday "every Tuesday and Thursday" (Apple and Google keep the
    day it was made), or an event with RDATEs, occurs on its start; dateutil counts only the rule's."""
    from dateutil.rrule import rrulestr

    try:
        series = _parsed(rule)  # (the one counted out where the series is not moved: read once)
        rules = series._rrule
        if rules:
            when = rules[0]._dtstart
        else:  # (RDATEs alone: the DTSTART line read as dateutil reads it)
            start = rule.split("\n", 1)[0]
            when = next(iter(rrulestr(f"{start}\nRRULE:FREQ=DAILY;COUNT=1")))
    except (*RULE_ERRORS, StopIteration):
        return None
    return None if any(_same(when, day) for day in series._exdate) else when


def _same(when: datetime, other: datetime) -> bool:
    """One moment (a time without an offset beside one with: on the same clock)."""
    return when == other if (when.tzinfo is None) == (other.tzinfo is None) else _naive(when) == _naive(other)


def _in_start_zone(rule: str, when: datetime) -> datetime:
    """``when`` on the clock of the series' start (an RDATE is written in UTC; the people met
    at 17:00 Berlin time), or of the zone its ``X-WR-TIMEZONE`` line names (a series begun in UTC,
    which repeats on UTC's clock, in a calendar whose text shows it in Berlin time)."""
    shown = _SHOWN_ZONE_RE.search(rule)
    zone = _shown_zone(shown.group(1).strip()) if shown else None
    zone = zone or next((one._dtstart.tzinfo for one in _parsed(rule)._rrule), None)
    return when.astimezone(zone) if zone is not None and when.tzinfo is not None else when


@lru_cache(maxsize=64)
def _shown_zone(name: str) -> Any:
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):  # a zone this machine does not know: the start's clock
        return None


def _moved_start(rule: str, start: datetime) -> datetime | None:
    """The series' DTSTART moved on by whole periods of its rule to a little before ``start``, so
    counting out starts there rather than decades back: the occurrences from there on are the
    same, as each period repeats the first. None where it is not moved (a rule with COUNT, more
    than one RRULE, a start past the 28th of a month of a monthly or yearly rule, where the months
    differ, or one already near). The parsed series is counted from it (``_occurrences``): the
    moved text was parsed again for each range, a millisecond a series of each search by date."""
    lines = rule.split("\n")
    found = _START_RE.match(lines[0])
    rules = [line for line in lines if line.upper().startswith("RRULE:")]
    if found is None or len(rules) != 1 or "COUNT=" in rules[0].upper():
        return None
    parts = dict(p.split("=", 1) for p in rules[0][6:].upper().split(";") if "=" in p)
    written = found.group(2)
    first = datetime.strptime(written, "%Y%m%d" if len(written) == 8 else "%Y%m%dT%H%M%S")
    # two days early: a bound in another zone than the series' is at most ~26 hours away
    periods = _periods_before(first, _naive(start) - timedelta(days=2), parts.get("FREQ", ""),
                              int(parts.get("INTERVAL", "1") or 1))
    if periods <= 0:
        return None
    return _add(first, parts["FREQ"], periods).replace(tzinfo=_parsed(rule)._rrule[0]._dtstart.tzinfo)


# The parts of a rule that choose its days, which a daily rule reads as an hourly or finer one does
# (dateutil: BYDAY's numbers are dropped in both).
_DAY_PARTS = ("BYMONTH", "BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY", "WKST")


def _day_by_day(rule: str, starts: list[datetime], ends: list[datetime]) -> Iterator[datetime] | None:
    """The occurrences of an hourly or finer series (``FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29;
    BYHOUR=9``) from the latest of ``starts`` on (none, or a COUNT, which counts from the start:
    from its start), looked for a day at a time: the days its rule can name found as a daily
    rule's (a step a day), and on each the count restarted at the last instant of its rule (its
    start moved on by whole periods) before the first time of day it names, or the start bound.
    dateutil looked at each hour, minute or second from the start (or two days before the range):
    a minutely one's next leap day, a secondly one's 09:00 the day after, or any of a secondly one's
    172,800 seconds of two days, was not found. None for another series (more than one RRULE),
    counted out as before. Days after the earliest of ``ends`` are not looked at."""
    lines = rule.split("\n")
    rules = [line for line in lines if line[:6].upper() == "RRULE:"]
    if len(rules) != 1 or _START_RE.match(lines[0]) is None:
        return None
    parts = dict(part.split("=", 1) for part in rules[0][6:].upper().split(";") if "=" in part)
    if parts.get("FREQ") not in ("HOURLY", "MINUTELY", "SECONDLY"):
        return None
    series = _parsed(rule)
    start, zone = _naive(series._rrule[0]._dtstart), series._rrule[0]._dtstart.tzinfo
    # an hour's leeway: a time on the series' clock that summer time's change makes twice
    since = max([start, *(_on_clock(bound, zone) - timedelta(hours=1) for bound in starts if "COUNT" not in parts)])
    try:
        stop = min(_on_clock(bound, zone) for bound in ends) + timedelta(hours=1) if ends else None
    except OverflowError:  # (an end within an hour of the year 9999)
        stop = None
    days = f"DTSTART:{since:%Y%m%dT000000}\nRRULE:FREQ=DAILY" + "".join(
        f";{name}={parts[name]}" for name in _DAY_PARTS if name in parts)
    budget = _Budget(MAX_STEPS)
    extra = sorted(day for day in series._rdate if not any(_same(day, out) for out in series._exdate))
    return heapq.merge(_days_walked(series, _occurrences(days, budget), since, stop, budget), extra)


def _on_clock(bound: datetime, zone: Any) -> datetime:
    """A bound as the time on a series' clock it is compared with (see ``_beside``)."""
    return _naive(bound.astimezone(zone)) if bound.tzinfo is not None and zone is not None else _naive(bound)


def _days_walked(series: Any, days: Iterator[datetime], since: datetime, stop: datetime | None,
                 budget: _Budget) -> Iterator[datetime]:
    """The rule's occurrences on each of ``days`` (from ``since`` on; its COUNT counted over them
    all, EXDATEs among them, as RFC 5545 counts), its count restarted on each at the last instant
    of the rule before the first time of day it names, and left after the last (dateutil would look
    for the next second by second: a day of a secondly rule is 86,400 steps)."""
    one = series._rrule[0]
    named = [getattr(one, f"_by{name}") for name in ("hour", "minute", "second")]
    earliest = time(*(min(times or (0,)) for times in named))
    latest = time(*(max(times or (most,)) for times, most in zip(named, (23, 59, 59))))
    start, zone = _naive(one._dtstart), one._dtstart.tzinfo
    until = one._until and (_naive(one._until.astimezone(zone)) if zone and one._until.tzinfo else _naive(one._until))
    frequency, interval, left = _FREQUENCIES[one._freq], one._interval, one._count
    taken_out = set(series._exdate)  # (Outlook writes hundreds: looked up, not compared one by one)
    ahead = since.replace(hour=0, minute=0, second=0)  # (no occurrence before this day)
    for day in days:
        if (stop is not None and day > stop) or (until is not None and day > until):
            return
        if day < ahead:
            continue
        at = max(datetime.combine(day.date(), earliest), since)
        if at > datetime.combine(day.date(), latest):  # (a range's start after the day's last time: dateutil
            continue                                   # would count each second of it on to the next day)
        moved = _add(start, frequency, _periods_before(start, at, frequency, interval))
        end = day + timedelta(days=1)
        for when in _counting(one.replace(dtstart=moved.replace(tzinfo=zone), count=None), budget):
            local = _naive(when)
            if local >= end:  # the next is on a later day: the days before it need not be looked at
                ahead = local.replace(hour=0, minute=0, second=0)
                break
            if local < max(since, day):  # (one before the day: the day before's, if it is one of the days)
                continue
            if left is not None:
                if left <= 0:
                    return
                left -= 1
            if when not in taken_out:
                yield when
            if local.time() >= latest:  # the day's last: dateutil would look for the next to the day after
                break


def _periods_before(first: datetime, start: datetime, frequency: str, interval: int) -> int:
    """How many whole periods of ``interval`` units fit between ``first`` and ``start`` (in units)."""
    if frequency in ("YEARLY", "MONTHLY"):
        if first.day > 28:
            return 0
        months = (start.year - first.year) * 12 + start.month - first.month - 1
        step = interval * (12 if frequency == "YEARLY" else 1)
        return max(months // step, 0) * step
    unit = _UNITS.get(frequency)
    if unit is None or interval < 1:
        return 0
    return max(int((start - first) / (unit * interval)), 0) * interval


def _add(first: datetime, frequency: str, units: int) -> datetime:
    if frequency in ("YEARLY", "MONTHLY"):
        months = first.month - 1 + units
        return first.replace(year=first.year + months // 12, month=months % 12 + 1)
    return first + _UNITS[frequency] * units


def _naive(when: datetime) -> datetime:
    return when.replace(tzinfo=None)


def _beside(bound: datetime, when: datetime) -> datetime:
    """``bound`` made comparable with ``when``: as is where both have an offset or neither,
    else its local time (in ``when``'s zone where ``when`` has one)."""
    if (when.tzinfo is None) == (bound.tzinfo is None):
        return bound
    return bound.replace(tzinfo=when.tzinfo)


@lru_cache(maxsize=4096)
def _parsed(rule: str) -> Any:
    """The series as dateutil's rruleset; a series whose UNTIL and DTSTART disagree on having
    a zone (dateutil refuses those; calendars write them) is read without zones, an all-day
    series' RDATEs as plain dates."""
    from dateutil.rrule import rrulestr

    # dateutil refuses RDATE;VALUE=DATE (an all-day series' extra dates, as the calendar reader
    # writes them) and reads the bare dates as the midnights an all-day series' occurrences are
    rule = _until_in_utc(_DAY_RDATE_RE.sub("RDATE:", _SHOWN_ZONE_RE.sub("", rule)))
    try:
        series = rrulestr(rule, forceset=True)
    except ValueError:
        series = rrulestr(rule, forceset=True, ignoretz=True)
    if any(one._interval < 1 for one in series._rrule):  # INTERVAL=0 never moves on: dateutil loops forever
        raise ValueError("INTERVAL must be 1 or more")
    if any(never_occurs(one) for one in series._rrule):  # dateutil would walk day by day to the year 9999 (seconds)
        raise ValueError("the rule names no day it can occur on")
    return series


def _until_in_utc(rule: str) -> str:
    """A zoned series' UNTIL written without Z (a date, or a local date-time: Apple, Lotus and
    hand-made calendars write them, though RFC 5545 asks for UTC, and dateutil refuses them)
    made the UTC instant it means on the series' own clock: a date, the end of that day (a
    floating series' date UNTIL too, which dateutil reads as its midnight)."""
    start = _ZONED_START_RE.search(rule)
    if start is None:
        return rule
    if not (start.group(1) or start.group(2)):  # a floating series: a date UNTIL is the end of that day
        return _DAY_UNTIL_RE.sub(r"\1\2T235959", rule)
    from zoneinfo import ZoneInfo

    try:
        zone = ZoneInfo(start.group(1)) if start.group(1) else timezone.utc
    except (KeyError, ValueError, OSError):  # a zone this machine does not know: left to dateutil
        return rule

    def in_utc(found: re.Match[str]) -> str:
        local = datetime.strptime(found.group(2) + (found.group(3) or "T235959"), "%Y%m%dT%H%M%S")
        return f"{found.group(1)}{local.replace(tzinfo=zone).astimezone(timezone.utc):%Y%m%dT%H%M%SZ}"

    return _LOCAL_UNTIL_RE.sub(in_utc, rule)


def first_occurrence(rule: str) -> datetime | None:
    """The series' first occurrence (None: it has none, all of them taken out or past its UNTIL);
    raises one of ``RULE_ERRORS`` for a rule dateutil cannot read, ``TooRare`` for one that names
    no day it can occur on or whose first occurrence takes more than ``MAX_STEPS`` to find."""
    try:
        return next(_near(rule, []), None)
    except ValueError as exc:
        if "names no day" in str(exc):
            raise TooRare(str(exc)) from exc
        raise


def counted_to(rule: str) -> tuple[int, datetime | None] | None:
    """How far a search by date follows a series with COUNT, which is counted out from its start
    (the occurrences before the range are counted, so it cannot start near it): the occurrences it
    counts and the last of them, where that falls short of the series' end (``MAX_OCCURRENCES``, or
    ``MAX_STEPS`` of its search); None where it reaches the end, or the series has no COUNT."""
    if "COUNT=" not in rule.upper():
        return None
    count, last = 0, None
    try:
        for when in _near(rule, []):
            if count >= MAX_OCCURRENCES:
                return count, last
            count, last = count + 1, when
    except TooRare:
        return count, last
    return None


def occurs_plainly(rule: str) -> bool:
    """Whether each RRULE of the series is of the plain shapes calendars write, which occur in each
    period or nearly (weekly on some weekdays, monthly on the second Tuesday or the 15th, yearly in
    June), so its first occurrence need not be looked for to know it has one (``first_occurrence``
    costs ~0.2 ms: a calendar of thousands of series is read that much faster)."""
    for line in rule.split("\n"):
        if line[:6].upper() == "RRULE:":
            parts = dict(part.split("=", 1) for part in line[6:].upper().split(";") if "=" in part)
            named = {key: value for key, value in parts.items() if key not in _PLAIN_PARTS}
            if not _plain(parts.get("FREQ", ""), named, parts.get("INTERVAL", "1")):
                return False
    return True


# The parts of a rule that choose no day; the weekdays; a day of a month every month has.
_PLAIN_PARTS = frozenset({"FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST"})
_WEEKDAY_RE = re.compile(r"^(?:[+-]?[1-4])?(?:MO|TU|WE|TH|FR|SA|SU)$")
_MONTH_DAY_RE = re.compile(r"^[+-]?(?:[1-9]|1\d|2[0-8])$")


def _plain(frequency: str, named: dict[str, str], interval: str) -> bool:
    """Whether a rule of ``frequency`` naming these BYxxx parts occurs in each period or nearly."""
    days = named.get("BYDAY", "").split(",") if "BYDAY" in named else []
    if days and not all(_WEEKDAY_RE.match(day) for day in days):
        return False
    monthdays = named.get("BYMONTHDAY", "").split(",") if "BYMONTHDAY" in named else []
    if monthdays and not all(_MONTH_DAY_RE.match(day) for day in monthdays):
        return False
    numbered = any(day[:1] not in "MTWFS" for day in days)
    keys = set(named)
    if frequency == "WEEKLY":
        return keys <= {"BYDAY"} and not numbered
    if frequency == "MONTHLY":
        return keys <= {"BYDAY"} or keys <= {"BYMONTHDAY"}
    if frequency == "YEARLY":
        return "BYMONTH" in keys and (keys <= {"BYMONTH", "BYDAY"} or keys <= {"BYMONTH", "BYMONTHDAY"}) or not keys
    return frequency == "DAILY" and not keys - {"BYDAY"} and not numbered and interval.strip() in ("", "1")


def occurrences_before(rule: str, moment: date) -> int | None:
    """How many occurrences of ``rule`` come before ``moment`` (a date: its midnight); None where
    that is not found (more than ``MAX_OCCURRENCES``, a search past ``MAX_STEPS``, a rule dateutil
    cannot read)."""
    bound = moment if isinstance(moment, datetime) else datetime.combine(moment, datetime.min.time())
    count = 0
    try:
        for when in _occurrences(rule, MAX_STEPS):
            if when >= _beside(bound, when):
                break
            count += 1
            if count > MAX_OCCURRENCES:
                return None
    except RULE_ERRORS:
        return None
    return count


class TooRare(ValueError):
    """A series whose search for an occurrence ran out of steps (``MAX_STEPS``): one that never
    occurs, or next occurs further on than is looked at. The record's own date decides."""


def _occurrences(rule: str, steps: int | _Budget, start: datetime | None = None) -> Iterator[datetime]:
    """The occurrences in order (an all-day series' at midnight, as a plain date compares), found
    in at most ``steps`` steps of dateutil's search (or those a budget has left), after which
    ``TooRare`` is raised; from ``start`` on where given (its one rule counted from there)."""
    from dateutil.rrule import rruleset

    series, budget = _parsed(rule), steps if isinstance(steps, _Budget) else _Budget(steps)
    counted = rruleset()
    for one in series._rrule:
        counted.rrule(_counting(one if start is None else one.replace(dtstart=start), budget))
    for one in series._exrule:
        counted.exrule(_counting(one, budget))
    for day in series._rdate:
        counted.rdate(day)
    for day in series._exdate:
        counted.exdate(day)
    return iter(counted)


class _Budget:
    """The steps a search has left."""

    def __init__(self, steps: int) -> None:
        self.left, self.steps = steps, steps

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise TooRare(f"none in {self.steps:,} steps of the search")


class _Counted(tuple):  # type: ignore[type-arg]
    """An hourly or finer rule's BYHOUR, BYMINUTE or BYSECOND, each look into them a step: dateutil
    looks for the next hour, minute or second they name one by one (86,400 a day at most)."""

    budget: _Budget

    def __contains__(self, value: object) -> bool:
        self.budget.spend(1)
        return tuple.__contains__(self, value)


def _counting(one: Any, budget: _Budget) -> Any:
    """A copy of a dateutil rrule whose search spends ``budget`` (see ``_searched_class``)."""
    searched = _searched_class()
    counting = searched.__new__(searched)
    counting.__dict__.update(one.__dict__)
    counting._budget = budget
    if one._freq > 3:  # (dateutil: 0 yearly ... 3 daily, 4 hourly ... 6 secondly)
        for name in ("_byhour", "_byminute", "_bysecond"):
            if one.__dict__.get(name) is not None:
                counting.__dict__[name] = counted = _Counted(one.__dict__[name])
                counted.budget = budget
    return counting


@lru_cache(maxsize=1)
def _searched_class() -> Any:
    from dateutil.rrule import rrule

    class Searched(rrule):  # type: ignore[misc]
        """An rrule whose search spends its budget where dateutil's work is: each time it lays out
        a year or month (``_iterinfo.rebuild``, which reads ``_byeaster`` each time: a yearly or
        monthly rule's period, a month of a weekly or finer one's days), and each time an hourly
        or finer period lays out its times (reading ``_tzinfo``). A step is some 3 us of it."""

        @property
        def _byeaster(self) -> Any:
            self._budget.spend(_LAYOUT_STEPS.get(self._freq, 31))
            return self.__dict__["_byeaster"]

        @property
        def _tzinfo(self) -> Any:
            self._budget.spend(3)
            return self.__dict__["_tzinfo"]

    return Searched


# The steps a year's layout costs a yearly rule (its 366 days, looked at in a tight loop), a
# month's a monthly one; a weekly or finer rule's month of days, looked at one a period, 31.
_LAYOUT_STEPS = {0: 60, 1: 10}
