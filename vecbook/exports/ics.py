"""iCalendar (.ics): one record an event, to-do or journal entry, read with the icalendar library.

The library parses; a line scan of the same text finds each component's
BEGIN..END lines, matched to the parsed components in order (component k of the
file is the k-th BEGIN:VEVENT/VTODO/VJOURNAL line; a VALARM inside an event is
part of it). A recurring event is one record whose text says the rule in words.
"""

from __future__ import annotations

import hashlib
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any, Iterator

from ..records import Record, undecoded_reason
from .base import Export, ExportFile, clean_text, export_record
from .ics_lines import (escaped_quotes, file_text, looks_like_calendar, mended_folds, quoted_zones, used_lines,
                        without_windows_zones)
from .ics_people import event_text, people_and_rooms, where
from .ics_series import (day_until, moved_dates, onward_changes, outlook_rule, series_lines, series_texts,
                         this_and_future)
from .ics_versions import Version, marked_superseded, version_of
from .ics_v1 import as_icalendar, is_version_1
from .ics_values import event_end, hours_as_written, is_day, prop_dates, prop_text, prop_texts, prop_value
from .ics_words import iso_value, moment, rule_words, scale_name, span_words
from .ics_zones import days_as_written, named_or_defined, offset_zones, place_in_zone, unknown_zones
from .mime import html_to_text

# The components that become records; VALARM, VTIMEZONE and the like do not.
KINDS = {"VEVENT": "event", "VTODO": "to-do", "VJOURNAL": "journal entry"}
SUFFIXES = (".ics", ".ical", ".icalendar", ".ifb", ".vcs")
# Lines that open or close a component, and the calendar's display name and zone (Google and
# Apple write X-WR-TIMEZONE: the zone of its times written without one) and Outlook's
# X-MICROSOFT-CALSCALE (the calendar its X-MICROSOFT-RRULEs count in); a folded line's
# continuation starts with a space, so it never matches (a long calendar name's continuations
# are taken with it).
_SCAN_RE = re.compile(r"^(?:(BEGIN|END):([A-Za-z-]+)|X-(WR-CALNAME|WR-TIMEZONE|MICROSOFT-CALSCALE)(?:;[^:\r\n]*)?:"
                      r"((?:[^\r\n]|\r?\n[ \t])*))[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)
_FOLD_RE = re.compile(r"\r?\n[ \t]")
# A calendar's BEGIN and END lines, to tell which one was left open.
_CALENDAR_RE = re.compile(r"^(BEGIN|END):VCALENDAR[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)
# A description written in HTML (Google Calendar keeps one formatted in its editor so): a
# tag of the few such editors write, not any "<...>" (an address, "2 < 3") in plain text.
_HTML_TAG_RE = re.compile(r"<(?:br|p|div|span|ul|ol|li|b|i|u|strong|em|html|body|table|tr|td|h[1-6]|font)\s*/?>"
                          r"|<a\s+href=|</(?:a|p|div|span|ul|ol|li|b|i|u|strong|em|font|h[1-6])>", re.I)
# The statuses a record's text states (the others, CONFIRMED, NEEDS-ACTION, ..., are what an
# entry is taken to be): a cancelled occurrence keeps its series' summary, and must not read
# as a meeting that took place.
_SHOWN_STATUSES = {"CANCELLED": "cancelled", "TENTATIVE": "tentative", "COMPLETED": "completed"}
# The lines of ":~" Google Calendar wraps a description's Meet block in, and of underscores
# Outlook wraps a Teams block in (some 80-150 characters of nothing, which filled a hit's lines
# and the model's window), with their line break.
_SEPARATOR_RE = re.compile(r"^(?:-::~[:~]*::-|_{20,})[ \t]*(?:\n|$)", re.MULTILINE)
# A rule that counts in another calendar than the Gregorian (RFC 7529: a Chinese lunar birthday).
_SCALE_RE = re.compile(r"RSCALE=(?!GREGORIAN\b)([A-Z-]+)", re.IGNORECASE)
# Outlook's rule of another calendar (Hijri, Hebrew), as written.
_OUTLOOK_RULE_RE = re.compile(r"^X-MICROSOFT-RRULE:[^\r\n]*", re.MULTILINE | re.IGNORECASE)
# An RDATE/EXDATE list longer than this is cut short in the text ("and 40 more").
MAX_LISTED_DATES = 12


def detect(export: Export) -> bool:
    """A calendar file: its text starts with ``BEGIN:VCALENDAR``."""
    return any(looks_like_calendar(f.head(1024)) for f in _calendar_files(export))


def _calendar_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name.lower().endswith(SUFFIXES))


def read(export: Export) -> list[Record]:
    """Every calendar file's events, to-dos and journal entries, one record each."""
    try:
        import icalendar  # noqa: F401 - imported here: only calendar collections need it
    except ImportError:
        export.warn(None, None, 'icalendar is not available - install it (pip install "icalendar>=6") '
                                'to read .ics exports; calendar files skipped')
        return []
    files = [f for f in _calendar_files(export) if looks_like_calendar(f.head(1024))]
    versions: dict[str, Version] = {}
    return marked_superseded(export.read_each(files, lambda f: _records(export, f, versions)), versions)


# The icalendar library keeps the zones it makes of VTIMEZONEs in one provider for the whole
# process, by their TZID, and each file starts it afresh (``_file_records``): one calendar is
# read at a time, so two books built at once (threads of one process) do not read their
# "Customized Time Zone" as each other's, hours off without a word.
PARSING = threading.RLock()


# -- the line scan --


@dataclass
class _Span:
    """One component's place in the file: its kind, lines, text, and calendar's name and zone
    (``X-WR-TIMEZONE`` as written, and the line it is on), and ``X-MICROSOFT-CALSCALE``."""

    kind: str
    line: int
    end_line: int
    text: str
    calendar: str | None
    closed: bool
    zone: tuple[str, int] | None = None
    scale: str | None = None


def _scan(text: str) -> tuple[list[_Span], str]:
    """The record components' spans in file order, and the VTIMEZONE blocks' text."""
    spans: list[_Span] = []
    zones: list[str] = []
    open_kind: tuple[str, int, int] | None = None  # (kind, line, offset)
    zone_start: int | None = None
    calendar: str | None = None
    zone: tuple[str, int] | None = None
    scale: str | None = None
    line, pos = 1, 0
    for match in _SCAN_RE.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        if match.group(3) is not None:
            value = _unescape(_FOLD_RE.sub("", match.group(4)).strip())
            if match.group(3).upper() == "WR-CALNAME":
                calendar = value or calendar
            elif match.group(3).upper() == "MICROSOFT-CALSCALE":
                scale = value
            else:
                zone = (value, line) if value else zone
            continue
        verb, name = match.group(1).upper(), match.group(2).upper()
        if name == "VCALENDAR" and verb == "BEGIN":
            calendar = zone = scale = None
        elif name == "VTIMEZONE":
            if verb == "BEGIN":
                zone_start = match.start()
            elif zone_start is not None:
                zones.append(text[zone_start:match.end()])
                zone_start = None
        elif name in KINDS and verb == "BEGIN":
            if open_kind is not None:  # a BEGIN while one is open: the open one's END is missing
                spans.append(_close(text, open_kind, line - 1, match.start(), calendar, False, zone, scale))
            open_kind = (name, line, match.start())
        elif name in KINDS and open_kind is not None and name == open_kind[0]:
            spans.append(_close(text, open_kind, line, match.end(), calendar, True, zone, scale))
            open_kind = None
    if open_kind is not None:
        last = line + text.count("\n", pos)
        spans.append(_close(text, open_kind, last - (1 if text.endswith("\n") else 0), len(text), calendar, False,
                            zone, scale))
    return spans, "\r\n".join(zones)


def _close(text: str, opened: tuple[str, int, int], end_line: int, stop: int, calendar: str | None,
           closed: bool, zone: tuple[str, int] | None, scale: str | None) -> _Span:
    kind, line, start = opened
    return _Span(kind, line, max(line, end_line), text[start:stop], calendar, closed, zone, scale)


def _unescape(value: str) -> str:
    return re.sub(r"\\([\\;,nN])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), value)


# -- parsing, matched to the scan --


def _records(export: Export, file: ExportFile, versions: dict[str, Version]) -> Iterator[Record]:
    """A file's records, read while no other thread reads a calendar (``PARSING``); those read
    before a failure are kept, and the failure raised after them (``read_each`` warns of it)."""
    kept: list[Record] = []
    failure: Exception | None = None
    with PARSING:
        try:
            kept.extend(_file_records(export, file, versions))
        except Exception as exc:  # noqa: BLE001 - raised below, once the lock is let go
            failure = exc
    yield from kept
    if failure is not None:
        raise failure


def _file_records(export: Export, file: ExportFile, versions: dict[str, Version]) -> Iterator[Record]:
    from icalendar.timezone import tzp

    # The library keeps the zone it made of a VTIMEZONE by its TZID for every file it reads after:
    # Outlook names many a zone "Customized Time Zone", and a New York file's read with the Berlin
    # one of the file before. A fresh provider of the same kind (a host's choice) forgets them.
    tzp.use(tzp.name)
    text, bad = file_text(file)
    if bad:  # (an old export in Windows-1252: its accents are lost, say where)
        export.warn(file, bad[0].line, undecoded_reason(bad, "calendar"), skipped=False)
    if is_version_1(text):  # (an old phone's .vcs, Lotus Notes: vCalendar 1.0)
        text, unread = as_icalendar(text)
        for line, reason in unread:
            export.warn(file, line, reason, skipped=False)
    spans, zones = _scan(text)
    components = _parse_whole(export, file, text, spans)
    if components is None:
        zones = without_windows_zones(zones)
        components = [_parse_alone(export, file, span, zones) for span in spans]
    zone_warned: set[str] = set()
    calendar_zones_warned: set[str] = set()
    keys: dict[str, int] = {}
    fallback = file.name.rsplit(".", 1)[0]
    parsed = [(span, component) for span, component in zip(spans, components) if component is not None]
    for span, component in parsed:
        _without_broken(component)
        days_as_written(component)
        offset_zones(component)
        _place_floating(export, file, span, component, calendar_zones_warned)
        outlook_rule(component, span.scale)
        day_until(component, named_or_defined(span.zone[0]) if span.zone else None)
        hours_as_written(component, span.text)
    series_texts(component for _, component in parsed)
    # a series changed from its first occurrence on is the change, with nothing left of its own
    replaced = onward_changes(component for _, component in parsed)
    parsed = [(span, component) for span, component in parsed if not any(component is r for r in replaced)]
    moved = moved_dates(component for _, component in parsed)
    for span, component in parsed:
        _warn_errors(export, file, span, component)
        record = _record(export, file, span, component, span.calendar or fallback, zone_warned, keys,
                         moved.get(prop_text(component, "UID"), []))
        version = version_of(component)
        if record is not None:
            if version is not None:  # (which event it is and how recent, for ``marked_superseded``)
                versions[record.id] = version
            yield record


def _without_broken(component: Any) -> None:
    """The properties the library could not read taken out (each is warned of from its
    ``errors``): icalendar 7 keeps one as a value that raises wherever it is used, and a bad
    RDATE, RRULE or DTEND lost the whole file."""
    for name, value in list(component.items()):
        values = value if isinstance(value, list) else [value]
        kept = [one for one in values if type(one).__name__ != "vBroken"]
        if len(kept) == len(values):
            continue
        if kept:
            component[name] = kept if isinstance(value, list) else kept[0]
        else:
            del component[name]


def _parse_whole(export: Export, file: ExportFile, text: str, spans: list[_Span]) -> list[Any] | None:
    """The file's components, parsed at once; None when the parse fails or its
    components do not line up with the scan (then each is parsed on its own)."""
    import icalendar

    try:
        with _quiet():
            calendars = icalendar.Calendar.from_ical(used_lines(text), multiple=True)
    except Exception as exc:  # noqa: BLE001 - any parse failure: read the components one by one
        line = _line_of_message(text, str(exc))
        export.warn(file, line, f"the calendar cannot be parsed whole ({exc}); its events are read one by one",
                    skipped=False)
        return None
    components = [c for cal in calendars for c in cal.walk() if c.name in KINDS]
    if len(components) == len(spans) and all(s.closed for s in spans):
        return components
    broken = next((s for s in spans if not s.closed), None)
    where = broken.line if broken else None
    what = f"BEGIN:{broken.kind} without its END" if broken else "components the parser did not return"
    if broken is None:  # (the library drops a calendar without its END whole: no word of why)
        where, what = _unclosed_calendar(text) or (where, what)
    export.warn(file, where, f"{what}; the file's events are read one by one", skipped=False)
    return None


def _unclosed_calendar(text: str) -> tuple[int, str] | None:
    """The line and words of a VCALENDAR left without its END: the file's last line where the
    last calendar's end is cut off (in a file of several too), or the next BEGIN:VCALENDAR's."""
    opened: int | None = None
    for match in _CALENDAR_RE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match.group(1).upper() == "END":
            opened = None
        elif opened is not None:
            return line, f"BEGIN:VCALENDAR of line {opened} without its END:VCALENDAR before the next BEGIN:VCALENDAR"
        else:
            opened = line
    if opened is None:
        return None
    return (text.rstrip("\r\n").count("\n") + 1,
            "the file ends without END:VCALENDAR, cut short (a download, copy or export that did not finish: get it "
            "again)")


@contextmanager
def _quiet() -> Iterator[None]:
    """The library's warnings hushed: they would reach the user's terminal as Python's, naming
    its source file (an old Thunderbird TZID, ``/mozilla.org/20070129_1/Europe/Berlin``, is read
    as the zone it names, and warned of so); what it cannot read is in ``errors``, warned of here."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"icalendar(\.|$)")
        yield


def _parse_alone(export: Export, file: ExportFile, span: _Span, zones: str) -> Any | None:
    """One component parsed on its own, with the file's time zones before it."""
    import icalendar

    body = span.text if span.closed else f"{span.text.rstrip()}\r\nEND:{span.kind}"
    try:
        with _quiet():
            calendar = icalendar.Calendar.from_ical(f"BEGIN:VCALENDAR\r\n{zones}\r\n{body}\r\nEND:VCALENDAR\r\n")
        return next(c for c in calendar.walk() if c.name == span.kind)
    except Exception as exc:  # noqa: BLE001 - a component the library cannot read is skipped
        line = _line_of_message(span.text, str(exc))
        export.warn(file, span.line + (line - 1 if line else 0), f"{span.kind} skipped: {exc}")
        return None


def _warn_errors(export: Export, file: ExportFile, span: _Span, component: Any) -> None:
    """The lines the library could not read inside a component (the rest of it is kept)."""
    for name, message in getattr(component, "errors", ()):
        offset = _line_of_property(span.text, name) if name else _line_of_message(span.text, message)
        line = span.line + (offset - 1 if offset else 0)
        export.warn(file, line, f"{span.kind} line not read ({message}); the rest of it is kept", skipped=False)


def _line_of_property(text: str, name: str) -> int | None:
    match = re.search(rf"^{re.escape(name)}[;:]", text, re.MULTILINE | re.IGNORECASE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _line_of_message(text: str, message: str) -> int | None:
    """The line a library message quotes (``... parts: 'the line': ...``)."""
    quoted = re.search(r"'([^'\r\n]{3,})'", message)
    at = text.find(quoted.group(1)) if quoted else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else None


# -- one record --


def _record(export: Export, file: ExportFile, span: _Span, component: Any, calendar: str,
            zone_warned: set[str], keys: dict[str, int], moved: list[Any]) -> Record | None:
    kind = KINDS[span.kind]
    _warn_unknown_zones(export, file, span, component, zone_warned)
    summary = prop_text(component, "SUMMARY")
    description = _description(component)
    location = prop_text(component, "LOCATION")
    start, due = prop_value(component, "DTSTART"), prop_value(component, "DUE")
    end = event_end(component, start)
    details = _details(component, start, end, due)
    if not (summary or description or location or details):
        export.warn(file, span.line, f"{span.kind} without summary, description or date skipped")
        return None
    organizer, attendees, rooms = people_and_rooms(component)
    people = [organizer, *attendees] if organizer else attendees
    place = where(location, rooms)  # a room booked as an attendee is where the event is, not one of its people
    text = event_text(summary or f"(untitled {kind})", details, place, organizer, attendees, description)
    uid = prop_text(component, "UID")
    first = _first_date(component, start, due)
    rule = component.get("RRULE")
    metadata: dict[str, Any] = {
        "title": summary, "date": iso_value(first), "end_date": iso_value(end if end is not None else due if start else None),
        "kind": kind, "all_day": True if is_day(first) else None, "location": place, "rooms": rooms or None,
        "organizer": organizer[0] if organizer else None,
        # The organizer takes part as an attendee does (as a mail's sender does), listed first;
        # Google lists them among the attendees too, Outlook and others often do not. Each by
        # name and address, as mail lists them: --participant finds either.
        "participants": list(dict.fromkeys(p for person in people for p in person if p)) or None,
        "emails": list(dict.fromkeys(email for _, email in people if email)) or None,
        "conversation": calendar, "uid": uid, "status": prop_text(component, "STATUS"),
        "recurrence": rule_words(rule, due if start is None else start) if rule is not None else None,
        # a to-do without DTSTART repeats from its DUE (Thunderbird writes a task so, and counts it so)
        "rrule": _searchable(export, file, span, series_lines(component, due if start is None else start, moved)),
        "format": export.format,
    }
    metadata = {k: v for k, v in metadata.items() if v is not None and v != ""}
    key = _key(uid, component, text, keys)
    return export_record(export, file, text, span.line, span.end_line, metadata, key, anchor=uid or None,
                         segments=((0, span.line, span.end_line),))


def invitation_text(data: str) -> str:
    """A calendar a mail carries (an invitation's text/calendar part) as its events' texts, as
    records of a calendar show them; '' where it cannot be read or icalendar is not installed."""
    with PARSING:
        return _invitation_text(data)


def _invitation_text(data: str) -> str:
    try:
        from icalendar import Calendar
        components = Calendar.from_ical(without_windows_zones(quoted_zones(escaped_quotes(mended_folds(data))))).walk()
    except Exception:  # noqa: BLE001 - no library, or a calendar it cannot read: the mail is read without it
        return ""
    texts = []
    for component in components:
        if component.name in KINDS:
            _without_broken(component)
            days_as_written(component)
            start, due = prop_value(component, "DTSTART"), prop_value(component, "DUE")
            organizer, attendees, rooms = people_and_rooms(component)
            details = _details(component, start, event_end(component, start), due)
            texts.append(event_text(prop_text(component, "SUMMARY"), details, where(prop_text(component, "LOCATION"), rooms),
                                    organizer, attendees, _description(component)).strip())
    return "\n\n".join(t for t in texts if t)


def _description(component: Any) -> str:
    """The DESCRIPTION as plain text (one in HTML, as Google keeps a formatted one, made text),
    without the lines Google and Outlook wrap a Meet or Teams block in; several (RFC 5545 lets a
    journal entry hold a day's entries so) one after another; without one, Outlook's HTML
    ``X-ALT-DESC``, which web sites' "add to calendar" files may write alone."""
    description = "\n\n".join(prop_texts(component, "DESCRIPTION")) or prop_text(component, "X-ALT-DESC")
    if _HTML_TAG_RE.search(description):
        description = clean_text(html_to_text(description))
    if "::~" in description or "_" * 20 in description:
        description = clean_text(_SEPARATOR_RE.sub("", description))
    return description


def _first_date(component: Any, start: Any, due: Any) -> Any:
    """The record's date: DTSTART, else DUE, else the changed occurrence's, else the first RDATE."""
    candidates = (start, due, prop_value(component, "RECURRENCE-ID"), *prop_dates(component, "RDATE"))
    for value in candidates:
        value = value[0] if isinstance(value, tuple) else value  # a PERIOD: its start
        if isinstance(value, date):
            return value
    return None


def _searchable(export: Export, file: ExportFile, span: _Span, series: str | None) -> str | None:
    """The series, where an occurrence of it can be found: one whose rule never occurs (a date
    search would step through it to the year 9999), or occurs too rarely to find, is said (on
    its RRULE line) and left out: the event is dated by its start alone. One with a COUNT that a
    search by date cannot follow to its end (it is counted from its start) is kept, and said."""
    from ..recurrence import RULE_ERRORS, first_occurrence, occurs_plainly

    if series is None:
        return None
    scale = _SCALE_RE.search(series)
    plain = scale is None and occurs_plainly(series)
    if plain and "COUNT=" not in series:  # (the shapes calendars write, occurring in each period, without end)
        return series
    line = span.line + (_line_of_property(span.text, "RRULE") or 1) - 1
    rules = " ".join(one for one in series.split("\n") if one.startswith("RRULE:")) or series
    outlook = _OUTLOOK_RULE_RE.search(span.text) if _line_of_property(span.text, "RRULE") is None else None
    if outlook is not None:  # (Outlook's rule of another calendar, made an RRULE with its RSCALE)
        line, rules = span.line + span.text.count("\n", 0, outlook.start()), outlook.group(0).strip()
    if scale is not None:  # (dateutil counts the Gregorian calendar alone)
        named = "X-MICROSOFT-CALSCALE" if outlook is not None else "RSCALE"
        export.warn(file, line, f"the rule {rules} repeats by the {scale_name(scale.group(1))} calendar ({named}), "
                                f"whose dates VecBook does not count: the event is dated by its start alone",
                    skipped=False)
        return None
    try:
        if not plain:
            first_occurrence(series)
    except RULE_ERRORS as exc:
        export.warn(file, line, f"the rule {rules} has no occurrence that can be found ({exc}): the event is dated by "
                                f"its start alone", skipped=False)
        return None
    _warn_counted(export, file, line, rules, series, plain)
    return series


def _warn_counted(export: Export, file: ExportFile, line: int, rules: str, series: str, plain: bool) -> None:
    """A series with a COUNT a search by date does not follow to its end, said: one of the plain
    shapes calendars write is followed to its end where its COUNT is within ``MAX_OCCURRENCES``."""
    from ..recurrence import MAX_OCCURRENCES, counted_to

    counts = [int(count) for count in re.findall(r"COUNT=(\d+)", series, re.I)]
    if not counts or (plain and max(counts) <= MAX_OCCURRENCES):
        return
    reached = counted_to(series)
    if reached is not None:
        count, last = reached
        export.warn(file, line, f"the rule {rules} is counted from its start (it has a COUNT), and a search by date "
                                f"follows it only to {iso_value(last) if last else 'its start'} ({count:,} "
                                f"occurrences): a date range after that does not find the event", skipped=False)


def _key(uid: str, component: Any, text: str, keys: dict[str, int]) -> str:
    """The UID (plus RECURRENCE-ID for a changed occurrence); a digest where there is none;
    a repeat within the file gets a count."""
    key = uid or hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    moved = prop_value(component, "RECURRENCE-ID")
    if moved is not None:
        key += f"@{iso_value(moved)}"
    keys[key] = keys.get(key, 0) + 1
    return key if keys[key] == 1 else f"{key}~{keys[key]}"


def _details(component: Any, start: Any, end: Any, due: Any) -> list[str]:
    """The When/Due/Status/Repeats/Also on/Except lines."""
    lines = []
    if start is not None:
        lines.append(f"When: {span_words(start, end)}")
    if due is not None:
        lines.append(f"Due: {moment(due)}")
    status = _SHOWN_STATUSES.get(prop_text(component, "STATUS").upper())
    if status:
        lines.append(f"Status: {status}")
    moved = prop_value(component, "RECURRENCE-ID")
    if moved is not None:
        later = " and all later ones" if this_and_future(component) else ""
        lines.append(f"Changes the occurrence of {moment(moved)}{later}")
    rule = component.get("RRULE")
    if rule is not None:
        lines.append(rule_words(rule, start if start is not None else due))
    for name, label in (("RDATE", "Also on"), ("EXDATE", "Except on")):
        dates = [moment(v) for v in prop_dates(component, name)]
        if dates:
            more = len(dates) - MAX_LISTED_DATES
            listed = ", ".join(dates[:MAX_LISTED_DATES]) + (f" and {more} more" if more > 0 else "")
            lines.append(f"{label}: {listed}")
    return lines


def _place_floating(export: Export, file: ExportFile, span: _Span, component: Any, warned: set[str]) -> None:
    """Times written without TZID or Z are in the calendar's ``X-WR-TIMEZONE`` (an unknown
    name leaves them floating, said once per file), and times in UTC (Google writes a single
    event's so) read in that zone: the same instant, on the day and hour its people saw."""
    zone = named_or_defined(span.zone[0]) if span.zone else None
    if span.zone and zone is None and span.zone[0] not in warned:
        warned.add(span.zone[0])
        export.warn(file, span.zone[1], f"unknown time zone '{span.zone[0]}' in X-WR-TIMEZONE: the calendar's "
                                        f"times without a zone are read as floating local time", skipped=False)
    if zone is not None:
        place_in_zone(component, zone)


def _warn_unknown_zones(export: Export, file: ExportFile, span: _Span, component: Any, warned: set[str]) -> None:
    """A TZID that is neither defined in the file nor a known zone name leaves its
    times floating (local, no offset): said once per file and TZID."""
    for name, zone in unknown_zones(component):
        if zone not in warned:
            warned.add(zone)
            offset = _line_of_property(span.text, name)
            export.warn(file, span.line + (offset - 1 if offset else 0),
                        f"unknown time zone '{zone}' (no VTIMEZONE for it and not a known zone name): "
                        f"its times are read as floating local time", skipped=False)
