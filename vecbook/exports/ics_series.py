"""A recurring event's series in iCalendar's words (``DTSTART``, ``RRULE``, ``RDATE``, ``EXDATE``
lines), as the date filters count its occurrences out (``recurrence``)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any, Iterable

from .ics_values import is_day, listed, prop_dates, prop_text, prop_value
from .ics_zones import zone_id


def moved_dates(components: Iterable[Any]) -> dict[str, list[Any]]:
    """The dates each series (by UID) no longer occurs on: those a changed occurrence replaces."""
    moved: dict[str, list[Any]] = {}
    for component in components:
        replaced = prop_value(component, "RECURRENCE-ID")
        if isinstance(replaced, date) and prop_text(component, "UID"):
            moved.setdefault(prop_text(component, "UID"), []).append(replaced)
    return moved


def series_lines(component: Any, start: Any, moved: list[Any]) -> str | None:
    """A recurring event's DTSTART, RRULE, RDATE and EXDATE lines (None for a single one; the dates
    its changed occurrences replace, ``moved``, are EXDATEs too), for the
    date filters to count its occurrences out: a zone by its name, so a weekly 09:00 stays 09:00
    across a change to summer time (a zone with no name as UTC)."""
    rules = [r for r in listed(component.get("RRULE")) if hasattr(r, "to_ical")]
    extra = [v[0] if isinstance(v, tuple) else v for v in prop_dates(component, "RDATE")]
    if not isinstance(start, date) or not (rules or extra):
        return None
    lines = [f"DTSTART{_ical_moment(start)}", *(f"RRULE:{r.to_ical().decode()}" for r in rules)]
    # dateutil reads a TZID on DTSTART only: the other dates go in UTC, the same instants
    lines += [f"RDATE{_ical_moment(_like(v, start), False)}" for v in extra if isinstance(v, date)]
    if prop_value(component, "RECURRENCE-ID") is not None:
        moved = []  # (a changed occurrence that repeats: its own dates stand)
    except_on = [v for v in (*prop_dates(component, "EXDATE"), *moved) if isinstance(v, date)]
    lines += [f"EXDATE{_ical_moment(_like(v, start), False)}" for v in except_on]
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
