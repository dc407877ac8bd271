"""The time zones of an iCalendar file's times: a zone by its IANA name (or the one an old
Thunderbird or Outlook name stands for), a series' zone by a name dateutil can read back, and
the times a calendar's own zone (``X-WR-TIMEZONE``) places."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Iterator

# The properties whose value a calendar's zone places when written without TZID or Z.
ZONED = ("DTSTART", "DTEND", "DUE", "RECURRENCE-ID", "RDATE", "EXDATE")
# The properties whose TZID names the zone of a record's own dates.
_DATED = ("DTSTART", "DTEND", "DUE", "RECURRENCE-ID")


def calendar_zone(name: str) -> tzinfo | None:
    """A zone by its IANA name (None where the name is none)."""
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
        return None


def zone_id(value: datetime) -> str | None:
    """An IANA zone name for the series' start: the zone's own, or the one a Windows name stands
    for (Outlook's "W. Europe Standard Time"), else a fixed offset of whole hours (a zone only the
    file defines) as ``Etc/GMT-1``, so the occurrences keep their local time and day; None for UTC."""
    name = getattr(value.tzinfo, "key", None) or getattr(value.tzinfo, "_tzid", None)
    try:
        from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON
    except ImportError:  # (icalendar 6.0 kept it elsewhere)
        WINDOWS_TO_OLSON = {}
    name = WINDOWS_TO_OLSON.get(name, name) if name else None
    if name and name.startswith("/"):  # a globally unique TZID: /mozilla.org/20070129_1/Europe/Berlin
        name = named_at_end(name)
    if name and name != "UTC" and calendar_zone(name) is not None:
        return name
    offset = value.utcoffset()
    hours = int(offset.total_seconds() // 3600) if offset else 0
    fixed = f"Etc/GMT{-hours:+d}"  # (POSIX signs: Etc/GMT-1 is an hour ahead of UTC)
    if not offset or offset.total_seconds() % 3600 or calendar_zone(fixed) is None:
        return None
    return fixed


def named_at_end(tzid: str) -> str | None:
    """The IANA zone a globally unique TZID (RFC 5545's leading "/": Thunderbird's and Evolution's
    ``/softwarestudio.org/Olson_20011030_5/America/New_York``) ends with, its longest such tail."""
    parts = tzid.split("/")
    return next(("/".join(parts[i:]) for i in range(1, len(parts)) if calendar_zone("/".join(parts[i:]))), None)


def place_in_zone(component: Any, zone: tzinfo) -> None:
    """Times written without TZID or Z put in ``zone``, and times in UTC read in it (the same instant)."""
    for name in ZONED:
        props = component.get(name)
        for prop in props if isinstance(props, list) else [] if props is None else [props]:
            if getattr(prop, "params", {}).get("TZID"):
                continue  # a TZID the library could not resolve stays floating (warned as such)
            for value in getattr(prop, "dts", None) or [prop]:
                when = getattr(value, "dt", None)
                if isinstance(when, datetime) and when.tzinfo is None:
                    value.dt = when.replace(tzinfo=zone)
                elif isinstance(when, datetime) and when.utcoffset() == timedelta(0) and is_utc(when):
                    value.dt = when.astimezone(zone)


def is_utc(when: datetime) -> bool:
    """A time in UTC itself (``Z``), not in a zone that is at UTC now (Europe/London in winter)."""
    return when.tzinfo is timezone.utc or getattr(when.tzinfo, "key", None) in ("UTC", "Etc/UTC")


def unknown_zones(component: Any) -> Iterator[tuple[str, str]]:
    """(property, TZID) of each date whose TZID neither the file defines nor names a known zone:
    the library leaves its time floating."""
    for name in _DATED:
        prop = component.get(name)
        prop = prop[0] if isinstance(prop, list) and prop else prop
        zone = getattr(prop, "params", {}).get("TZID") if prop is not None else None
        try:
            value = prop.dt if prop is not None else None
        except Exception:  # noqa: BLE001 - a broken value: reported from component.errors
            continue
        if zone and isinstance(value, datetime) and value.tzinfo is None:
            yield name, str(zone)
