"""A recurring event's series in iCalendar's words (``DTSTART``, ``RRULE``, ``RDATE``, ``EXDATE``
lines), as the date filters count its occurrences out (``recurrence``)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any, Iterable

from .ics_values import is_day, listed, prop_dates, prop_text, prop_value
from ..recurrence import occurrences_before
from .ics_zones import zone_id


def moved_dates(components: Iterable[Any]) -> dict[str, list[Any]]:
    """The dates each series (by UID) no longer occurs on: those a changed occurrence replaces."""
    moved: dict[str, list[Any]] = {}
    for component in components:
        replaced = prop_value(component, "RECURRENCE-ID")
        if isinstance(replaced, date) and prop_text(component, "UID"):
            moved.setdefault(prop_text(component, "UID"), []).append(replaced)
    return moved


# Outlook's X-MICROSOFT-CALSCALE names (MS-OXCICAL) as RFC 7529's RSCALE would: a calendar
# whose days and months are the Gregorian ones (an era of its own: Japan, Taiwan, Thai) is
# counted as the Gregorian; one not named is some other than the Gregorian.
_OUTLOOK_SCALES = {"HIJRI": "HIJRI", "UMALQURA": "HIJRI-UMALQURA", "HEBREW": "HEBREW", "CHINESELUNAR": "CHINESE",
                   "LUNARETOCHN": "CHINESE", "KOREALUNAR": "KOREAN-LUNAR", "LUNARETOKOR": "KOREAN-LUNAR",
                   "JAPANLUNAR": "JAPANESE-LUNAR", "LUNARROKUYOU": "JAPANESE-LUNAR", "SAKA": "SAKA"}
_GREGORIAN_DAYS = {"GREGORIAN", "GREGORIAN_US", "GREGORIANMEFRENCH", "GREGORIANARABIC", "GREGORIANXLITENGLISH",
                   "GREGORIANXLITFRENCH", "JAPAN", "TAIWAN", "KOREA", "THAI"}


def outlook_rule(component: Any, scale: str | None) -> None:
    """Outlook's rule of another calendar (``X-MICROSOFT-RRULE``, a Hijri or Hebrew series, its
    calendar named once in the calendar's ``X-MICROSOFT-CALSCALE``) made the component's RRULE,
    with RFC 7529's RSCALE naming that calendar: it read as a one-off event. Its words then say
    the calendar, and the reader dates it by its start alone, as any RSCALE rule."""
    from icalendar.prop import vRecur

    written = prop_text(component, "X-MICROSOFT-RRULE")
    if not written or component.get("RRULE") is not None:
        return
    name = re.sub(r"\s+", "", scale or "").upper()
    rscale = "" if name in _GREGORIAN_DAYS else _OUTLOOK_SCALES.get(name, name or "NON-GREGORIAN")
    try:
        component["RRULE"] = vRecur.from_ical(f"RSCALE={rscale};{written}" if rscale else written)
    except ValueError:  # (a rule the library cannot read: the event stays a single one)
        return


def day_until(component: Any, zone: tzinfo | None) -> None:
    """An all-day series' UNTIL written as a time in UTC (RFC 5545 asks for a date; Google writes
    the end of the last day on its user's clock, in UTC) made that day: on the calendar's clock
    (``zone``), else the day before where the time is before noon UTC (the end of a day west of
    UTC is early the next morning in UTC; a day 12 or more hours east ends before noon too, and
    loses its last day without the calendar's zone). Counted as written, an occurrence at the
    next day's midnight fell before 06:59 UTC: one day more."""
    start = prop_value(component, "DTSTART")
    if not is_day(start):
        return
    for rule in listed(component.get("RRULE")):
        until = (rule.get("UNTIL") or [None])[0] if hasattr(rule, "get") else None
        if isinstance(until, datetime) and until.tzinfo is not None:
            rule["UNTIL"] = [_last_day(until, zone)]


def _last_day(until: datetime, zone: tzinfo | None) -> date:
    if zone is not None:
        return until.astimezone(zone).date()
    utc = until.astimezone(timezone.utc)
    # (midnight itself is the day it begins: that occurrence is at UNTIL, which counts it)
    into_day = utc - utc.replace(hour=0, minute=0, second=0, microsecond=0)
    return utc.date() - timedelta(days=1) if timedelta(0) < into_day < timedelta(hours=12) else utc.date()


def series_lines(component: Any, start: Any, moved: list[Any]) -> str | None:
    """A recurring event's DTSTART, RRULE, RDATE and EXDATE lines (None for a single one; the dates
    its changed occurrences replace, ``moved``, are EXDATEs too), for the
    date filters to count its occurrences out: a zone by its name, so a weekly 09:00 stays 09:00
    across a change to summer time (a zone with no name as UTC; a start written in UTC in UTC, the
    calendar's zone it is shown in on an ``X-WR-TIMEZONE`` line: such a series repeats at that UTC
    time all year, and an occurrence is said on the calendar's clock, as its text is)."""
    rules = [r for r in listed(component.get("RRULE")) if hasattr(r, "to_ical")]
    extra = [v[0] if isinstance(v, tuple) else v for v in prop_dates(component, "RDATE")]
    if not isinstance(start, date) or not (rules or extra):
        return None
    # a DTSTART in UTC that the calendar's zone shows in its own time: the series repeats on UTC's clock
    written = getattr(component.get("DTSTART"), "utc_as_written", None)
    shown = zone_id(start) if written is not None and written == start and isinstance(start, datetime) else None
    start = written if written is not None and written == start else start
    lines = [f"DTSTART{_ical_moment(start)}", *(f"RRULE:{r.to_ical().decode()}" for r in rules)]
    # dateutil reads a TZID on DTSTART only: the other dates go in UTC, the same instants
    lines += [f"RDATE{_ical_moment(_like(v, start), False)}" for v in extra if isinstance(v, date)]
    if prop_value(component, "RECURRENCE-ID") is not None:
        moved = []  # (a changed occurrence that repeats: its own dates stand)
    except_on = [v for v in (*prop_dates(component, "EXDATE"), *moved) if isinstance(v, date)]
    lines += [f"EXDATE{_ical_moment(_like(v, start), False)}" for v in except_on]
    if shown:  # (its occurrences said on the clock its text shows: ``recurrence``)
        lines.append(f"X-WR-TIMEZONE:{shown}")
    return "\n".join(lines)


def _like(value: date, start: date) -> date:
    """A series' date as the kind of value its start is (RFC 5545 asks for it; some writers put a
    time on an all-day series' EXDATE, or a date on a timed one's, or leave out the zone of a
    zoned one's, and dateutil cannot mix them): the day a time is on, as written; the start's
    time of day on a day; a time without a zone on the start's clock; a zoned one's clock time
    for a series without a zone."""
    if is_day(start) and isinstance(value, datetime):
        return value.date()
    if isinstance(start, datetime) and is_day(value):
        return datetime.combine(value, start.timetz())
    if isinstance(start, datetime) and isinstance(value, datetime) and (start.tzinfo is None) != (value.tzinfo is None):
        return value.replace(tzinfo=start.tzinfo)
    return value


def _ical_moment(value: date, named: bool = True) -> str:
    """A date or date-time as an iCalendar property's parameters and value (``;TZID=...:...``
    where ``named`` and the zone has a name, else in UTC)."""
    if not isinstance(value, datetime):
        return f";VALUE=DATE:{value:%Y%m%d}"
    if value.tzinfo is None:
        return f":{value:%Y%m%dT%H%M%S}"
    zone = zone_id(value) if named else None
    if zone:
        return f";TZID={zone}:{value:%Y%m%dT%H%M%S}"
    return f":{value.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}"


# The texts a changed occurrence shows (its title, place, people, description), which Lotus Notes
# and Outlook, keeping a change as what differs from its series, may leave out of it.
_SERIES_TEXTS = ("SUMMARY", "DESCRIPTION", "LOCATION", "ORGANIZER", "ATTENDEE")


def series_texts(components: Iterable[Any]) -> None:
    """Each changed occurrence (a ``RECURRENCE-ID``, alone or this and following) given the texts
    of its series that it does not state: otherwise a change of "this and following" from the
    first occurrence, which is the whole series, left no record holding the series' description,
    and a search on a moved day found the change without it. A cancelled occurrence takes only the
    title (the series' record holds its text; a cancellation is no meeting to find by its agenda)."""
    changes: list[Any] = []
    masters: dict[str, Any] = {}
    for component in components:
        uid = prop_text(component, "UID")
        if not uid:
            continue
        if component.get("RECURRENCE-ID") is not None:
            changes.append(component)
        else:
            masters.setdefault(uid, component)
    for change in changes:
        master = masters.get(prop_text(change, "UID"))
        if master is None:
            continue
        cancelled = prop_text(change, "STATUS").upper() == "CANCELLED"
        for name in _SERIES_TEXTS[:1] if cancelled else _SERIES_TEXTS:
            if change.get(name) is None and master.get(name) is not None:
                change[name] = master[name]


def this_and_future(component: Any) -> bool:
    """A change to an occurrence and all later ones (``RECURRENCE-ID;RANGE=THISANDFUTURE``)."""
    replaced = component.get("RECURRENCE-ID")
    params = getattr(replaced, "params", None) or {}
    return str(params.get("RANGE", "")).upper() == "THISANDFUTURE"


def onward_changes(components: Iterable[Any]) -> list[Any]:
    """Each change to an occurrence and all later ones (``RECURRENCE-ID;RANGE=THISANDFUTURE``, as
    Lotus Notes, Apple and CalDAV servers write "this and following events") made the series it
    is: the rule of the series it changes from its occurrence on (a COUNT less the occurrences
    before), the series' EXDATEs and changed occurrences from there moved as it moved the time;
    and the series before it ended where it begins. A change with a rule of its own keeps it.
    Returns the series a change replaces from their first occurrence on, which have none left."""
    replaced: list[Any] = []
    groups: dict[str, list[Any]] = {}
    for component in components:
        if prop_text(component, "UID"):
            groups.setdefault(prop_text(component, "UID"), []).append(component)
    for group in groups.values():
        master = next((c for c in group if c.get("RECURRENCE-ID") is None and c.get("RRULE") is not None), None)
        start = prop_value(master, "DTSTART") if master is not None else None
        if isinstance(start, date) and _split(master, start, group):
            replaced.append(master)
    return replaced


def _split(master: Any, start: date, group: list[Any]) -> bool:
    """The master's series split at each change to this and later occurrences in ``group``;
    whether the first change is on its first occurrence (DTSTART, RFC 5545's first), so that
    nothing of it is left: no rule ended before its start (COUNT=0)."""
    changes = sorted(((_like(prop_value(c, "RECURRENCE-ID"), start), c) for c in group
                      if this_and_future(c) and isinstance(prop_value(c, "RECURRENCE-ID"), date)),
                     key=lambda pair: _order(pair[0]))
    if not changes:
        return False
    rules = [r for r in listed(master.get("RRULE")) if hasattr(r, "to_ical")]
    before = [[occurrences_before(f"DTSTART{_ical_moment(start)}\nRRULE:{r.to_ical().decode()}", when) for r in rules]
              for when, _ in changes]
    taken_out = [_like(v, start) for v in prop_dates(master, "EXDATE") if isinstance(v, date)]
    taken_out += [_like(v, start) for c in group if not this_and_future(c)
                  and isinstance(v := prop_value(c, "RECURRENCE-ID"), date)]
    whole = _order(changes[0][0]) <= _order(start)
    if not whole:
        _set_rules(master, [_ended(r, start, changes[0][0], counts[0]) for r, counts in zip(rules, zip(*before))])
    for i, (when, change) in enumerate(changes):
        new_start = prop_value(change, "DTSTART")
        if change.get("RRULE") is not None or not isinstance(new_start, date):
            continue
        shift = _shift(when, new_start)
        later = changes[i + 1][0] if i + 1 < len(changes) else None
        _set_rules(change, [_from(r, new_start, before[i][n], later and later + shift,
                                  before[i + 1][n] if later else None) for n, r in enumerate(rules)])
        out = [v + shift for v in taken_out if _order(when) < _order(v) and (later is None or _order(v) < _order(later))]
        if out:
            change.add("EXDATE", out)
    return whole


def _set_rules(component: Any, rules: list[Any]) -> None:
    """The component's RRULE made ``rules`` (one as a value, as the library reads one)."""
    component["RRULE"] = rules[0] if len(rules) == 1 else rules


def _order(value: date) -> datetime:
    """A date or date-time as a moment to order by (UTC for one with a zone)."""
    if not isinstance(value, datetime):
        return datetime.combine(value, datetime.min.time())
    return value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value


def _shift(when: date, new_start: date) -> timedelta:
    """How far a change moved its occurrence (nothing where the two kinds of value differ)."""
    moved = _like(when, new_start)
    try:
        return new_start - moved if type(moved) is type(new_start) else timedelta(0)
    except TypeError:  # one with a zone and one without
        return timedelta(0)


def _ended(rule: Any, start: date, cut: date, count: int | None) -> Any:
    """A copy of ``rule`` ended before ``cut``: COUNT made the occurrences before it (``count``,
    where found), else an UNTIL just before it (an earlier UNTIL stays)."""
    from icalendar.prop import vRecur

    ended = vRecur(rule)
    if "COUNT" in ended and count is not None:
        ended["COUNT"] = [count]
        return ended
    until = cut - timedelta(days=1) if not isinstance(start, datetime) else cut - timedelta(seconds=1)
    if isinstance(until, datetime) and until.tzinfo is not None:
        until = until.astimezone(timezone.utc)
    own = ended.get("UNTIL")
    if not own or _order(_like(own[0], start)) > _order(_like(until, start)):
        ended["UNTIL"] = [until]
    return ended


def _from(rule: Any, start: date, before: int | None, cut: date | None, before_cut: int | None) -> Any:
    """A copy of the master's ``rule`` for a change from its occurrence on: COUNT less the
    ``before`` occurrences before it, and ended before the next change (``cut``)."""
    from icalendar.prop import vRecur

    rule = vRecur(rule)
    if "COUNT" in rule and before is not None:
        rule["COUNT"] = [max(int(rule["COUNT"][0]) - before, 1)]
    if cut is None:
        return rule
    return _ended(rule, start, cut, None if before_cut is None or before is None else before_cut - before)

