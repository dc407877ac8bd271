"""vCalendar 1.0 (``.vcs``: older phones, Lotus Notes, some Outlook versions) written as the
iCalendar 2.0 the reader reads, line for line: quoted-printable texts decoded (a soft line break
made a fold), rules in vCalendar's own words (``W1 TU TH #10``) made RRULEs, EXDATE and RDATE
lists split by ``;`` split by ``,``, and an attendee written ``Name <address>`` a CN and an
address (the ``OWNER`` the organizer). Every line keeps its number."""

from __future__ import annotations

import quopri
import re
from datetime import datetime, timedelta, timezone

from .ics_zones import zone_keeping

# The VERSION line of a vCalendar 1.0 file.
_VERSION_1 = re.compile(r"^VERSION:1\.0[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)
# A content line: its name, its parameters, its value.
_LINE = re.compile(r"^([A-Za-z0-9-]+)((?:;[^:\r\n]*)?):(.*?)(\r?)$", re.DOTALL)
_WEEKDAYS = {"SU", "MO", "TU", "WE", "TH", "FR", "SA"}
_FREQUENCIES = {"D": "DAILY", "W": "WEEKLY", "MP": "MONTHLY", "MD": "MONTHLY", "YM": "YEARLY", "YD": "YEARLY"}
_RULE = re.compile(r"^(MP|MD|YM|YD|D|W)(\d+)((?:\s+\S+)*?)(?:\s+(#\d+|\d{8}(?:T\d{6}Z?)?))?\s*$", re.IGNORECASE)
_ORDINAL = re.compile(r"^(\d{1,3})([+-]?)$")
_ATTENDEE = re.compile(r"^\s*(.*?)\s*<([^<>]+)>\s*$")
# A component's BEGIN or END line; a DTSTART or DTEND written without Z: its date, its time.
_EDGE = re.compile(r"^(?:BEGIN|END):", re.IGNORECASE)
_MOMENT = re.compile(r"^(DTSTART|DTEND):(\d{8})T(\d{6})(\r?)$", re.IGNORECASE)
# The calendar's zone: its standard offset (``TZ:+01``, ``TZ:-05:00``), and its offset in summer
# time and the local times that begins and ends it, one line a year (``DAYLIGHT:TRUE;+02;
# 20240331T020000;20241027T030000;;``; ``DAYLIGHT:FALSE``: none).
_OFFSET = r"[ \t]*([+-])(\d{1,2})(?::?(\d{2}))?[ \t]*"
_TZ = re.compile(rf"^TZ:{_OFFSET}(\r?)$", re.IGNORECASE)
_DAYLIGHT = re.compile(rf"^DAYLIGHT:[ \t]*TRUE[ \t]*;{_OFFSET};[ \t]*(\d{{8}}T\d{{6}})Z?[ \t]*;[ \t]*(\d{{8}}T\d{{6}})Z?",
                       re.IGNORECASE)


def is_version_1(text: str) -> bool:
    """Whether a calendar's text says ``VERSION:1.0``."""
    return _VERSION_1.search(text) is not None


def as_icalendar(text: str) -> tuple[str, list[tuple[int, str]]]:
    """The text as iCalendar 2.0, line for line, and the (line, words) of what could not be read."""
    lines = text.split("\n")
    problems: list[tuple[int, str]] = []
    at = 0
    while at < len(lines):
        end = at + 1
        if "QUOTED-PRINTABLE" in lines[at].split(":", 1)[0].upper():
            while end < len(lines) and lines[end - 1].rstrip("\r").endswith("="):
                end += 1
        lines[at:end] = _property(lines[at:end], at + 1, problems)
        at = end
    _whole_days(lines)
    _local_zone(lines, problems)
    return "\n".join(lines), problems


def _local_zone(lines: list[str], problems: list[tuple[int, str]]) -> None:
    """The calendar's ``TZ`` line written as the ``X-WR-TIMEZONE`` its times without Z are read in
    (and those in UTC shown in): the IANA zone that keeps its ``DAYLIGHT`` lines' summer time, else
    its standard offset (a WARN where DAYLIGHT says a summer time no zone keeps)."""
    if any(line[:14].upper() == "X-WR-TIMEZONE:" for line in lines):
        return
    at, found = next(((n, m) for n, line in enumerate(lines) if (m := _TZ.match(line))), (None, None))
    if at is None or found is None:
        return
    standard = _offset(*found.group(1, 2, 3))
    if standard is None:
        return
    name = _offset_name(standard)
    summers = [(n, m) for n, line in enumerate(lines) if (m := _DAYLIGHT.match(line))]
    if summers:
        zone = zone_keeping(point for _, summer in summers for point in _clock(standard, summer))
        if zone is None:
            problems.append((summers[0][0] + 1, f"vCalendar 1.0 summer time '{lines[summers[0][0]].strip()}' is no "
                                                f"known zone's: its times are read at UTC{name} all year"))
        name = zone or name
    lines[at] = f"X-WR-TIMEZONE:{name}{found.group(4)}"


def _offset(sign: str, hours: str, minutes: str | None) -> timedelta | None:
    """An offset from UTC as written (None past 14 hours)."""
    offset = timedelta(hours=int(hours), minutes=int(minutes or 0))
    return None if offset > timedelta(hours=14) else -offset if sign == "-" else offset


def _offset_name(offset: timedelta) -> str:
    minutes = int(abs(offset).total_seconds() // 60)
    return f"{'-' if offset < timedelta(0) else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


def _clock(standard: timedelta, summer: re.Match[str]) -> list[tuple[datetime, timedelta]]:
    """The offsets a DAYLIGHT line says a day before and after its summer time begins and ends
    (a day: writers differ on whether the times are standard, summer or UTC)."""
    offset = _offset(*summer.group(1, 2, 3))
    begins, ends = (datetime.strptime(summer.group(i), "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc) for i in (4, 5))
    if offset is None or ends - begins < timedelta(days=3):
        return []
    begins, ends, day = begins - standard, ends - offset, timedelta(days=1)
    return [(begins - day, standard), (begins + day, offset), (ends - day, offset), (ends + day, standard)]


def _whole_days(lines: list[str]) -> None:
    """Each entry a phone writes from 00:00 to 23:59 of one day (vCalendar has no dates alone: a
    birthday, a holiday) made that day, as an all-day event is written (its DTEND the day after)."""
    found: dict[str, tuple[int, re.Match[str]]] = {}
    for number, line in enumerate(lines):
        edge = _EDGE.match(line)
        if edge is not None:
            start, end = found.get("DTSTART"), found.get("DTEND")
            if start and end and start[1].group(2) == end[1].group(2) and start[1].group(3) == "000000" \
                    and end[1].group(3) in ("235900", "235959"):
                after = datetime.strptime(end[1].group(2), "%Y%m%d") + timedelta(days=1)
                lines[start[0]] = f"DTSTART;VALUE=DATE:{start[1].group(2)}{start[1].group(4)}"
                lines[end[0]] = f"DTEND;VALUE=DATE:{after:%Y%m%d}{end[1].group(4)}"
            found.clear()
            continue
        moment = _MOMENT.match(line)
        if moment is not None:
            found[moment.group(1).upper()] = (number, moment)


def _property(physical: list[str], number: int, problems: list[tuple[int, str]]) -> list[str]:
    """One property's lines (a quoted-printable value's soft line breaks with it) as iCalendar's."""
    # (a soft line break, a quoted-printable line's last "=", joins it to the next)
    found = _LINE.match("".join([*(line.rstrip("\r")[:-1] for line in physical[:-1]), physical[-1]]))
    if found is None:
        return physical
    name, parameters, value, ending = found.group(1).upper(), found.group(2), found.group(3), found.group(4)
    if "QUOTED-PRINTABLE" in parameters.upper():
        parameters, value = _decoded(parameters, value)
    if name == "RRULE":
        rule = _rule(value)
        if rule is None:
            problems.append((number, f"vCalendar 1.0 rule '{value.strip()}' not read: the event is dated by its start "
                                     "alone"))
            name, rule = "X-VCALENDAR-RRULE", value
        value = rule
    elif name in ("EXDATE", "RDATE"):
        value = value.replace(";", ",")
    elif name == "ATTENDEE":
        name, parameters, value = _attendee(parameters, value)
    first = f"{found.group(1) if name == found.group(1).upper() else name}{parameters}:{value}{ending}"
    # the lines a soft line break took: each a fold of nothing, so every line keeps its number
    return [first, *(" " + line[len(line.rstrip("\r")):] for line in physical[1:])]


def _decoded(parameters: str, value: str) -> tuple[str, str]:
    """A quoted-printable value decoded in its CHARSET (where none, UTF-8, else Windows-1252) and escaped
    as an iCalendar text is, and the parameters without ENCODING and CHARSET."""
    kept, charset = [], ""
    for parameter in parameters.split(";")[1:]:
        key, _, given = parameter.partition("=")
        if key.upper() == "CHARSET":
            charset = given.strip('"')
        elif key.upper() != "ENCODING" and parameter.upper() != "QUOTED-PRINTABLE":
            kept.append(parameter)
    data = quopri.decodestring(value.encode("utf-8"))
    try:
        text = data.decode(charset or "utf-8", "strict" if not charset else "replace")
    except LookupError:  # a charset Python does not know
        text = data.decode("utf-8", "replace")
    except UnicodeDecodeError:  # no CHARSET, and not UTF-8: Windows-1252, as Outlook 2003 wrote
        text = data.decode("cp1252", "replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    escaped = re.sub(r"([\\;,])", r"\\\1", text).replace("\n", "\\n")
    return "".join(f";{p}" for p in kept), escaped


def _rule(value: str) -> str | None:
    """A vCalendar 1.0 rule (``W1 TU TH #10``, ``MP1 1+ MO #0``, ``MD1 LD 20241231T000000``) as an
    RRULE's value; None for one it does not say plainly (a time list, ``$``, an unknown word)."""
    found = _RULE.match(value.strip())
    if found is None:
        return None
    kind, interval = found.group(1).upper(), int(found.group(2))
    words, end = found.group(3).split(), found.group(4)
    parts = [f"FREQ={_FREQUENCIES[kind]}"] + ([f"INTERVAL={interval}"] if interval > 1 else [])
    chosen = _chosen(kind, [w.upper() for w in words])
    if chosen is None:
        return None
    parts += chosen
    if end is None:
        parts.append("COUNT=2")  # (vCalendar 1.0: a rule without a duration or end occurs twice)
    elif end.startswith("#"):
        parts += [f"COUNT={end[1:]}"] if int(end[1:]) else []  # (#0: for ever)
    else:
        parts.append(f"UNTIL={end.upper()}")
    return ";".join(parts)


def _chosen(kind: str, words: list[str]) -> list[str] | None:
    """The BYxxx parts a rule's words name; None for a word it does not know."""
    if not words:
        return []
    if kind == "W" and all(w in _WEEKDAYS for w in words):
        return [f"BYDAY={','.join(words)}"]
    if kind == "MP":
        days = [w for w in words if w in _WEEKDAYS]
        ordinals = [_ordinal(w) for w in words if w not in _WEEKDAYS]
        if None in ordinals or not days or not ordinals:
            return None
        return [f"BYDAY={','.join(f'{n}{day}' for n in ordinals for day in days)}"]
    if kind in ("MD", "YM", "YD"):
        numbers = [-1 if w == "LD" else _ordinal(w) for w in words]
        if None in numbers:
            return None
        part = {"MD": "BYMONTHDAY", "YM": "BYMONTH", "YD": "BYYEARDAY"}[kind]
        return [f"{part}={','.join(str(n) for n in numbers)}"]
    return None


def _ordinal(word: str) -> int | None:
    """``2`` or ``2+`` (the second), ``1-`` (the last) as a number; None for another word."""
    found = _ORDINAL.match(word)
    if found is None or int(found.group(1)) == 0:
        return None
    return -int(found.group(1)) if found.group(2) == "-" else int(found.group(1))


def _attendee(parameters: str, value: str) -> tuple[str, str, str]:
    """A vCalendar attendee (``ATTENDEE;ROLE=OWNER:Ana Lima <ana@example.com>``) as iCalendar's:
    its name a CN, its address a mailto, the OWNER or ORGANIZER the ORGANIZER."""
    named = _ATTENDEE.match(value)
    name, address = (named.group(1).strip('"'), named.group(2).strip()) if named else ("", value.strip())
    role = re.search(r";ROLE=([A-Za-z-]+)", parameters, re.IGNORECASE)
    kind = "ORGANIZER" if role and role.group(1).upper() in ("OWNER", "ORGANIZER") else "ATTENDEE"
    if "@" in address and not address.lower().startswith("mailto:"):
        address = f"mailto:{address}"
    if not name:  # (an address alone: its parameters kept, a CN among them, as a writer of both versions puts one)
        return kind, parameters, address
    return kind, f';CN="{name.replace(chr(34), "^" + chr(39))}"', address
