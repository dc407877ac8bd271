"""The time zones of an iCalendar file's times: a zone by its IANA name (or the one an old
Thunderbird or Outlook name stands for), a series' zone by a name dateutil can read back (for a
zone only the file defines, the IANA zone of the same clock), the times a calendar's own zone
(``X-WR-TIMEZONE``) places, and the dates marked ``VALUE=DATE`` read as days whatever zone they
are given."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from .ics_windows import DISPLAY_NAME, region_zone, windows_zones

# The properties whose value a calendar's zone places when written without TZID or Z.
ZONED = ("DTSTART", "DTEND", "DUE", "RECURRENCE-ID", "RDATE", "EXDATE")
# The areas of the IANA zones named by a city (not the old US/Eastern, CET, Etc/GMT-1 kind).
_AREAS = ("Africa/", "America/", "Antarctica/", "Asia/", "Atlantic/", "Australia/", "Europe/", "Indian/", "Pacific/")
# The properties Outlook (and Hotmail's calendar before it) flags an all-day event with.
_ALL_DAY_FLAGS = ("X-MICROSOFT-CDO-ALLDAYEVENT", "X-MICROSOFT-MSNCALENDAR-ALLDAYEVENT")
# A TZID that names an offset from UTC alone: "GMT+01:00", "UTC+05:30", "+03:00", "(GMT-03.00)".
_OFFSET_NAME = re.compile(r"^\s*\(?\s*(?:GMT|UTC)?\s*([+-])\s*(\d{1,2})(?:[:.]?(\d{2}))?\s*\)?\s*$", re.IGNORECASE)
# The properties whose TZID names the zone of a record's own dates.
_DATED = ("DTSTART", "DTEND", "DUE", "RECURRENCE-ID")


@lru_cache(maxsize=2048)
def calendar_zone(name: str) -> tzinfo | None:
    """A zone by its IANA name, or its Windows one (Exchange names a calendar's zone
    ``X-WR-TIMEZONE:W. Europe Standard Time``), or its Windows display name (``display_zone``);
    None where the name is none. Kept once made:
    ``_keeping`` tries each of the system's zones for each clock it looks for, and zoneinfo
    keeps only the last few it read (each other one was read from its file again)."""
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(windows_zones().get(name.strip()) or display_zone(name) or name)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
        return None


def display_zone(name: str) -> str | None:
    """The IANA zone a Windows display name names (``(UTC+01:00) Amsterdam, Berlin, Bern, Rome,
    Stockholm, Vienna``, as Outlook writes a TZID, in its own language): the region it says
    (``region_zone``), else the zone of the first city it says that keeps its offset in standard
    time (the lesser of January's and July's this year); None where none does."""
    found = DISPLAY_NAME.match(name)
    if found is None:
        return None
    region = region_zone(found.group(4))
    if region is not None:
        return region
    sign, hours, minutes = found.group(1, 2, 3)
    offset = timedelta(hours=int(hours or 0), minutes=int(minutes or 0)) * (-1 if sign == "-" else 1)
    year = datetime.now().year
    for zone in _said(found.group(4)):
        kept = calendar_zone(zone)
        if kept is not None and min(datetime(year, month, 1, tzinfo=kept).utcoffset() for month in (1, 7)) == offset:
            return zone
    return None


def _said(words: str) -> list[str]:
    """The IANA zones named by a city ``words`` says, in the order it says them."""
    text = " " + " ".join(re.findall(r"[^\W\d_]+", words.casefold())) + " "
    places = ((text.find(f" {zone.rsplit('/', 1)[-1].replace('_', ' ').casefold()} "), zone)
              for zone in _every_zone() if zone.startswith(_AREAS))
    return [zone for at, zone in sorted(place for place in places if place[0] >= 0)]


def current_name(name: str) -> str:
    """The name tz gives a zone now: an old name tz keeps only as another name of a zone
    (``Asia/Chongqing``, ``Asia/Calcutta``, ``Europe/Kiev``, as display names' cities and CLDR's
    ids behind Windows names give them) as that zone's (``Asia/Shanghai``, ``Asia/Kolkata``,
    ``Europe/Kyiv``). A name of ``zone.tab``, tz's list of the zones people choose, stays
    (``Europe/Amsterdam``, which some tz builds make another name of ``Europe/Brussels``); so does
    every name where this system's tz data does not say, and one of no place (``UTC``, ``Etc/GMT-1``,
    ``EST5EDT``), which tz links to ``Etc/`` names no one writes."""
    if "/" not in name or name.startswith("Etc/"):
        return name
    current, links = _tz_names()
    seen = 0
    while name not in current and name in links and seen < 4:  # (a link to a link, in some builds)
        name, seen = links[name], seen + 1
    return name


@lru_cache(maxsize=1)
def _tz_names() -> tuple[frozenset[str], dict[str, str]]:
    """The zones of the tz data zoneinfo reads (``zone.tab``, ``zone1970.tab``) and its links
    (``tzdata.zi``'s ``L`` lines: each old name to its zone); empty where it has no such files
    (macOS keeps no ``tzdata.zi``: names then stay as they are)."""
    for folder in _tz_folders():
        try:
            links = {}
            for line in (folder / "tzdata.zi").read_text(encoding="utf-8").splitlines():
                if line.startswith("L "):
                    _, target, link = line.split()[:3]
                    links[link] = target
            tables = [(folder / name).read_text(encoding="utf-8") for name in ("zone.tab", "zone1970.tab")
                      if (folder / name).is_file()]
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        current = {fields[2] for table in tables for line in table.splitlines()
                   if not line.startswith("#") and len(fields := line.split()) >= 3}
        return frozenset(current), links
    return frozenset(), {}


def _tz_folders() -> list[Any]:
    """The folders zoneinfo reads zones from, in its order: the system's, then the tzdata package's."""
    from zoneinfo import TZPATH

    folders: list[Any] = [Path(folder) for folder in TZPATH]
    try:
        from importlib.resources import files

        folders.append(files("tzdata") / "zoneinfo")
    except (ImportError, ModuleNotFoundError):
        pass
    return folders


def named_or_defined(name: str) -> tzinfo | None:
    """A zone by its IANA or Windows name (``calendar_zone``), or an offset alone (``+05:30``, as a
    vCalendar 1.0 file's ``TZ`` is read), else the one the file just read
    defines in a VTIMEZONE of that TZID (the library keeps it by its TZID until the next file):
    a calendar's ``X-WR-TIMEZONE`` may name a zone only the file defines."""
    zone = calendar_zone(name) or _named_offset(name)
    if zone is None:
        import warnings

        from icalendar.timezone import tzp

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its guess at a "/vendor/..." name: said as unknown if none)
            try:
                zone = tzp.timezone(name)
            except Exception:  # noqa: BLE001 - a name the library cannot look up: no zone
                zone = None
    return zone


def zone_id(value: datetime) -> str | None:
    """An IANA zone name for the series' start: the zone's own, or the one a Windows name stands
    for (Outlook's "W. Europe Standard Time"), or for a zone only the file defines the one of the
    same clock (one named by a display name too: the clock it defines decides), else a fixed
    offset of whole hours as ``Etc/GMT-1``, so the occurrences keep their local time and day;
    None for UTC."""
    name = getattr(value.tzinfo, "key", None) or getattr(value.tzinfo, "_tzid", None)
    name = windows_zones().get(name, name) if name else None
    if name and name.startswith("/"):  # a globally unique TZID: /mozilla.org/20070129_1/Europe/Berlin
        name = named_at_end(name)
    if name and name != "UTC" and not DISPLAY_NAME.match(name) and calendar_zone(name) is not None:
        return current_name(name)
    # (a zone of an offset alone, +05:30, as the one that keeps it: the occurrences on its clock)
    if value.tzinfo is not None and (name != "UTC" if name else bool(value.utcoffset())):
        try:
            same = same_clock(value.tzinfo, value.year)
        except TypeError:  # (a zone that cannot be hashed, so not looked for once: its offset says it)
            same = None
        if same:
            return current_name(same)
    offset = value.utcoffset()
    hours = int(offset.total_seconds() // 3600) if offset else 0
    fixed = f"Etc/GMT{-hours:+d}"  # (POSIX signs: Etc/GMT-1 is an hour ahead of UTC)
    if not offset or offset.total_seconds() % 3600 or calendar_zone(fixed) is None:
        return None
    return fixed


def same_clock(zone: tzinfo, year: int) -> str | None:
    """The IANA zone that keeps the clock of a zone only the file defines (Outlook's "Customized
    Time Zone", or its display name "(UTC+01:00) Amsterdam, Berlin, ..."): the same offsets,
    changed at the same hours, over ``year`` and the next; one whose city the zone's name says
    first, then the zones Windows names stand for. None where none does, or the zone keeps one
    offset of whole hours (``Etc/GMT-1`` says that). Looked for once for each name and rules."""
    definition = _definition(zone)
    return _same_clock(zone if definition is None else _Defined(zone, definition), year)


class _Defined:
    """A zone a file defines, the same as another of the same name and rules: each file's
    VTIMEZONE is a new object, and its clock was walked from its rules' start (1601, Outlook's)
    again for each of a folder's invitations, 0.2 s a file."""

    __slots__ = ("zone", "key")

    def __init__(self, zone: tzinfo, key: tuple[Any, ...]) -> None:
        self.zone, self.key = zone, key

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Defined) and self.key == other.key


def _definition(zone: tzinfo) -> tuple[Any, ...] | None:
    """The name and rules of a zone dateutil made of a VTIMEZONE (the library's zones are such);
    None for any other kind of zone, which is then looked for by itself."""
    comps = getattr(zone, "_comps", None)
    if not isinstance(comps, list):
        return None
    try:
        return (str(getattr(zone, "_tzid", "")), tuple(
            (c.tzoffsetfrom, c.tzoffsetto, c.isdst, c.tzname, _rules(c.rrule)) for c in comps))
    except (AttributeError, TypeError):
        return None


def _rules(rule: Any) -> tuple[Any, ...]:
    """A VTIMEZONE part's recurrence as text and dates (dateutil's rruleset, or one rule)."""
    if hasattr(rule, "_rrule"):
        return (tuple(map(str, rule._rrule)), tuple(rule._rdate), tuple(map(str, rule._exrule)),
                tuple(rule._exdate))
    return (str(rule),)


@lru_cache(maxsize=64)
def _same_clock(defined: tzinfo | _Defined, year: int) -> str | None:
    """``same_clock`` of a zone, or of the first of its definition met (``_Defined``)."""
    zone = defined.zone if isinstance(defined, _Defined) else defined
    start = datetime(year, 1, 1, tzinfo=timezone.utc)
    instants = [start + timedelta(weeks=week) for week in range(105)]
    offsets = [_offset(zone, when) for when in instants]
    if None in offsets or (len(set(offsets)) == 1 and not offsets[0].total_seconds() % 3600):
        return None
    for i in range(len(instants) - 1, 0, -1):  # the hour of each change, and the hour before it
        if offsets[i] != offsets[i - 1]:
            changed = _change(zone, instants[i - 1], instants[i], offsets[i])
            instants[i:i] = [changed - timedelta(hours=1), changed]
            offsets[i:i] = [offsets[i - 1], offsets[i]]
    return _keeping(str(getattr(zone, "_tzid", "") or ""), tuple(zip(instants, offsets)))


def zone_keeping(clock: Iterable[tuple[datetime, timedelta]]) -> str | None:
    """The first IANA zone (those Windows names stand for first) that has each offset at each
    instant of ``clock`` (instants with a zone); None where none does."""
    return _keeping("", tuple(clock))


@lru_cache(maxsize=64)
def _keeping(name: str, clock: tuple[tuple[datetime, timedelta], ...]) -> str | None:
    """The first of the zones to try for ``name`` that has each offset at each instant (the
    same zone in many files is looked for once)."""
    for candidate in _candidates(name):
        found = calendar_zone(candidate)
        if found is not None and all(when.astimezone(found).utcoffset() == offset for when, offset in clock):
            return candidate
    return None


def _offset(zone: tzinfo, when: datetime) -> timedelta | None:
    try:
        return when.astimezone(zone).utcoffset()
    except Exception:  # noqa: BLE001 - a zone the file defines so that it cannot say: no match
        return None


def _change(zone: tzinfo, before: datetime, after: datetime, offset: timedelta | None) -> datetime:
    """The first whole hour between ``before`` and ``after`` at which ``zone`` has ``offset``."""
    low, high = 0, int((after - before).total_seconds() // 3600)
    while high - low > 1:
        middle = (low + high) // 2
        if _offset(zone, before + timedelta(hours=middle)) == offset:
            high = middle
        else:
            low = middle
    return before + timedelta(hours=high)


def _candidates(name: str) -> list[str]:
    """IANA zone names to try, those whose city ``name`` says first (``Amsterdam``)."""
    words = " " + " ".join(re.findall(r"[^\W\d_]+", name.casefold())) + " "
    main = list(dict.fromkeys(windows_zones().values()))
    every = _every_zone()
    said = [zone for zone in every if zone.startswith(_AREAS)
            and f" {zone.rsplit('/', 1)[-1].replace('_', ' ').casefold()} " in words]
    return list(dict.fromkeys([*said, *main, *every]))


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
                    if name == "DTSTART" and component.get("RRULE") is not None:
                        value.utc_as_written = when  # (a series in UTC repeats on UTC's clock: ``series_lines``)
                    value.dt = when.astimezone(zone)


def offset_zones(component: Any) -> None:
    """Times whose TZID names an offset alone and no zone (``GMT+01:00``, ``UTC+05:30``, ``+03:00``,
    ``(GMT-03.00)``: Lotus, PHP generators), which the file does not define either, in that fixed
    offset: the library left them floating (``Etc/GMT-1``, POSIX's reversed sign, is a zone); and
    those whose TZID is a Windows display name (``display_zone``) in the zone it names."""
    for name in ZONED:
        props = component.get(name)
        for prop in props if isinstance(props, list) else [] if props is None else [props]:
            named = str(getattr(prop, "params", {}).get("TZID") or "")
            zone = _named_offset(named) or (calendar_zone(named) if DISPLAY_NAME.match(named) else None)
            if zone is None:
                continue
            for value in getattr(prop, "dts", None) or [prop]:
                when = getattr(value, "dt", None)
                if isinstance(when, datetime) and when.tzinfo is None:
                    value.dt = when.replace(tzinfo=zone)


@lru_cache(maxsize=256)
def _named_offset(name: str) -> tzinfo | None:
    """The fixed offset a TZID names alone (``GMT+01:00``), else None."""
    found = _OFFSET_NAME.match(name)
    if found is None or int(found.group(2)) > 14 or int(found.group(3) or 0) > 59:
        return None
    offset = timedelta(hours=int(found.group(2)), minutes=int(found.group(3) or 0))
    return timezone(-offset if found.group(1) == "-" else offset)


def days_as_written(component: Any) -> None:
    """Dates the file marks ``VALUE=DATE`` read as days, a TZID beside them or not (the library
    reads ``DTSTART;TZID=Europe/Berlin;VALUE=DATE:20240901`` as midnight in Berlin); and the
    midnights of an event Outlook flags all-day (``X-MICROSOFT-CDO-ALLDAYEVENT:TRUE``, written
    midnight to midnight in its zone) read as the days they begin, as written."""
    all_day = _outlook_all_day(component)
    for name in ZONED:
        props = component.get(name)
        for prop in props if isinstance(props, list) else [] if props is None else [props]:
            if str(getattr(prop, "params", {}).get("VALUE", "")).upper() != "DATE" and not all_day:
                continue
            for value in getattr(prop, "dts", None) or [prop]:
                when = getattr(value, "dt", None)
                if isinstance(when, datetime):
                    value.dt = when.date()


def _outlook_all_day(component: Any) -> bool:
    """Whether Outlook flags the event all-day and writes it from midnight to midnight (a flagged
    event whose start or end has another time is taken as timed)."""
    if not any(str(component.get(flag, "")).strip().upper() == "TRUE" for flag in _ALL_DAY_FLAGS):
        return False
    ends = [component.get(name) for name in ("DTSTART", "DTEND")]
    try:
        times = [getattr(end, "dt", None) for end in ends if end is not None and not isinstance(end, list)]
    except Exception:  # noqa: BLE001 - a broken date: warned of from errors
        return False
    return bool(times) and all(isinstance(when, datetime) and when.time() == time(0) for when in times)


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


@lru_cache(maxsize=1)
def _every_zone() -> list[str]:
    """The IANA zones this system knows, those named by a city first."""
    from zoneinfo import available_timezones

    return sorted(available_timezones(), key=lambda zone: (not zone.startswith(_AREAS), zone))
