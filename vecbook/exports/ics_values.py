"""A calendar component's property values as the reader uses them: a text, a date or date-time,
the dates of a list, the end of an event."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterator

from .base import clean_text

# A component's alarms (their DURATION is the alarm's repeat, not the event's), and a DURATION
# written in hours, minutes or seconds alone (no days or weeks: ``PT24H``).
_ALARM_RE = re.compile(r"^BEGIN:VALARM\b.*?^END:VALARM\b", re.MULTILINE | re.DOTALL | re.IGNORECASE)
_TIME_DURATION_RE = re.compile(r"^DURATION(?:;[^:\r\n]*)?:[+-]?PT[\dHMS]+[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)


def prop_text(component: Any, name: str) -> str:
    """A text property's value; a quote escaped with a backslash (RFC 5545 escapes none, some
    writers do: ``SUMMARY:Say \\"hi\\"``) as the quote."""
    value = component.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return _text(value) if value is not None else ""


def prop_texts(component: Any, name: str) -> list[str]:
    """Each value of a text property that may occur more than once (a journal entry's
    DESCRIPTIONs), those with text, as ``prop_text`` reads one."""
    return [text for value in listed(component.get(name)) if (text := _text(value))]


def _text(value: Any) -> str:
    return clean_text(str(value).replace('\\"', '"'))


def listed(value: Any) -> list[Any]:
    return [] if value is None else value if isinstance(value, list) else [value]


def prop_value(component: Any, name: str) -> Any:
    """A date-time property's value, or None when absent or unreadable."""
    prop = component.get(name)
    if isinstance(prop, list):
        prop = prop[0] if prop else None
    try:
        return prop.dt if prop is not None else None
    except Exception:  # noqa: BLE001 - a broken value: reported from component.errors
        return None


def prop_dates(component: Any, name: str) -> Iterator[Any]:
    for prop in listed(component.get(name)):
        for item in getattr(prop, "dts", ()):
            try:
                yield item.dt
            except Exception:  # noqa: BLE001 - reported from component.errors
                continue


def event_end(component: Any, start: Any) -> Any:
    """The end: DTEND, or DTSTART plus DURATION; an all-day end is its last day (DTEND is
    the day after)."""
    end = prop_value(component, "DTEND")
    duration = prop_value(component, "DURATION")
    if end is None and start is not None and isinstance(duration, timedelta):
        exact = getattr(component.get("DURATION"), "in_hours", False)
        end = _after(start, duration, exact)
    if is_day(end) and is_day(start) and end > start:
        end -= timedelta(days=1)
    return end


def hours_as_written(component: Any, text: str) -> None:
    """The component's DURATION marked ``in_hours`` where its ``text`` writes it in hours,
    minutes or seconds alone (``PT24H``): the library reads it as the days it adds up to (P1D),
    which count on the clock, and 24 hours across a change to summer time are 23 or 25 of it."""
    duration = component.get("DURATION")
    if duration is not None and not isinstance(duration, list) and _TIME_DURATION_RE.search(_ALARM_RE.sub("", text)):
        try:
            duration.in_hours = True
        except AttributeError:  # (a value that takes no mark: counted as the library read it)
            pass


def _after(start: date, duration: timedelta, exact: bool = False) -> date:
    """``start`` plus a DURATION as RFC 5545 counts it: its days on the clock (a day is a day
    across a change to summer time), its hours, minutes and seconds exact (ten hours from 22:00
    on the night summer time ends is 07:00: Python's sum of a zoned time keeps to the clock);
    all of it exact where it was written in hours (``exact``: ``PT24H``)."""
    if not isinstance(start, datetime) or start.tzinfo is None or duration < timedelta(0):
        return start + duration
    if exact:
        return (start.astimezone(timezone.utc) + duration).astimezone(start.tzinfo)
    on_clock = start + timedelta(days=duration.days)
    exact = duration - timedelta(days=duration.days)
    return (on_clock.astimezone(timezone.utc) + exact).astimezone(start.tzinfo) if exact else on_clock


def is_day(value: Any) -> bool:
    """A DATE value (an all-day event's), not a DATE-TIME."""
    return isinstance(value, date) and not isinstance(value, datetime)
