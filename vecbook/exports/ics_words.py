"""Calendar dates and rules in words, as the calendar reader's records say them: a date or
date-time with its zone ("2024-05-06 09:30 (Europe/Paris)"), a span, and an RRULE
("Repeats monthly on the last Friday")."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from .base import iso
from .ics_zones import current_name

_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last", -2: "second to last"}
_DAYS = {"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday", "FR": "Friday",
         "SA": "Saturday", "SU": "Sunday"}
_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")  # (date.weekday()'s order)
# The parts of a rule that name the days it repeats on (without them, its start's day).
_DAY_PARTS = ("BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
# The months of the Hijri (Islamic) year: a rule of that calendar names them by number.
_HIJRI_MONTHS = ("Muharram", "Safar", "Rabi' al-awwal", "Rabi' al-thani", "Jumada al-awwal", "Jumada al-thani",
                 "Rajab", "Sha'ban", "Ramadan", "Shawwal", "Dhu al-Qa'dah", "Dhu al-Hijjah")
_FREQUENCIES = {"SECONDLY": ("every second", "seconds"), "MINUTELY": ("every minute", "minutes"),
                "HOURLY": ("hourly", "hours"), "DAILY": ("daily", "days"), "WEEKLY": ("weekly", "weeks"),
                "MONTHLY": ("monthly", "months"), "YEARLY": ("yearly", "years")}


def iso_value(value: Any) -> str | None:
    """ISO 8601: a plain date for an all-day value, the offset where the zone is known."""
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    return None


def _zone_name(zone: tzinfo | None, when: datetime) -> str:
    """The zone's name as its calendar gives it: a VTIMEZONE's TZID is a text value, its commas
    escaped (Outlook's "(UTC+01:00) Amsterdam\\, Berlin\\, ..."), unescaped here."""
    key = getattr(zone, "key", None) or getattr(zone, "_tzid", None)
    return re.sub(r"\\([\\;,])", r"\1", current_name(str(key)) if key else str(when.tzname() or ""))


def moment(value: Any) -> str:
    """A date, date-time (with its zone), time, or period, as people write it."""
    if isinstance(value, tuple):
        begin, finish = value
        if isinstance(finish, timedelta):
            return f"{moment(begin)} for {_duration(finish)}"
        return f"{moment(begin)} to {moment(finish)}"
    if isinstance(value, datetime):
        zone = _zone_name(value.tzinfo, value) if value.tzinfo else ""
        return value.strftime("%Y-%m-%d %H:%M") + (f" ({zone})" if zone else "")
    if isinstance(value, (date, time)):
        return value.isoformat()
    return str(value)


def span_words(start: Any, end: Any) -> str:
    if end is None or end == start:
        return moment(start)
    if (isinstance(start, datetime) and isinstance(end, datetime) and start.date() == end.date()
            and start.tzinfo == end.tzinfo):
        zone = _zone_name(start.tzinfo, start) if start.tzinfo else ""
        return f"{start:%Y-%m-%d %H:%M} to {end:%H:%M}" + (f" ({zone})" if zone else "")
    return f"{moment(start)} to {moment(end)}"


def _duration(value: timedelta) -> str:
    minutes = int(value.total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    return " ".join(p for p in (f"{hours}h" if hours else "", f"{minutes}min" if minutes else "") if p) or "0min"


def rule_words(rule: Any, start: Any = None) -> str:
    """An RRULE in words: "Repeats weekly on Monday until 2024-06-01"; several (RFC 5545 allows
    them, old Apple and Lotus exports write them) each after the first as "; also ...". A weekly,
    monthly or yearly rule that names no day repeats on the day of its ``start`` (DTSTART), which
    the words then say: "Repeats weekly on Monday", "Repeats yearly on 12 June"."""
    if isinstance(rule, list):
        words = [_one_rule_words(one, start) for one in rule]
        return "; ".join([*words[:1], *(f"also {one.removeprefix('Repeats ')}" for one in words[1:])])
    return _one_rule_words(rule, start)


def _start_day(rule: Any, frequency: str, start: Any) -> list[str]:
    """The words of the day a rule that names none repeats on: its start's."""
    if not isinstance(start, date) or any(rule.get(key) for key in _DAY_PARTS):
        return []
    if _scale(rule):  # (a lunar one falls on another Gregorian day each year)
        return []
    if frequency == "WEEKLY":
        return [f"on {_DAYS[_CODES[start.weekday()]]}"]
    if frequency == "MONTHLY":
        return [f"on day {start.day} of the month"]
    if frequency == "YEARLY":
        return [f"on {start.day} {_MONTHS[start.month - 1]}"]
    return []


def _scale(rule: Any) -> str:
    """The calendar other than the Gregorian a rule counts in (RFC 7529's RSCALE: ``Chinese``,
    ``Hebrew``, ``Islamic-civil``), as its name is written; '' for the Gregorian."""
    scale = str((rule.get("RSCALE") or [""])[0])
    return "" if scale.upper() in ("", "GREGORIAN") else scale_name(scale)


def scale_name(scale: str) -> str:
    """A calendar's name as RSCALE writes it (``ISLAMIC-CIVIL``) as people do (``Islamic-Civil``)."""
    return "-".join(part.capitalize() for part in scale.split("-"))


def _one_rule_words(rule: Any, start: Any = None) -> str:
    if not hasattr(rule, "get") or not rule.get("FREQ"):
        return f"Repeats ({rule})"
    first = lambda key: (rule.get(key) or [None])[0]  # noqa: E731 - vRecur holds lists
    frequency = str(first("FREQ")).upper()
    every, unit = _FREQUENCIES.get(frequency, (frequency.lower(), frequency.lower()))
    interval = int(first("INTERVAL") or 1)
    words = ["Repeats", f"every {interval} {unit}" if interval > 1 else every, *_start_day(rule, frequency, start)]
    if _scale(rule):
        words.append(f"by the {_scale(rule)} calendar")
    codes = [str(d).upper() for d in rule.get("BYDAY") or []]
    positions = [int(p) for p in rule.get("BYSETPOS") or [] if re.fullmatch(r"[+-]?\d+", str(p))]
    if codes and positions and all(code in _DAYS for code in codes):
        words.append(_chosen_day_words(positions, codes))  # Outlook's "the second Tuesday"
    elif codes:
        words.append("on " + _and([_day_words(code) for code in codes]))
    month_days = [int(d) for d in rule.get("BYMONTHDAY") or [] if re.fullmatch(r"[+-]?\d+", str(d))]
    counted = [str(d) for d in month_days if d > 0]
    parts = ([f"day {_and(counted)}"] if counted else []) + [f"the {_ordinal(-d, last=True)} day"
                                                             for d in month_days if d < 0]
    if parts:
        words.append("on " + _and(parts) + " of the month")
    months = _month_words(rule)
    if months:
        words.append("in " + _and(months))
    if first("COUNT"):
        words.append(f"{first('COUNT')} times")
    until = first("UNTIL")
    if until is not None:
        words.append(f"until {_day_of(until, start).isoformat()}")
    return " ".join(words)


def _month_words(rule: Any) -> list[str]:
    """A rule's BYMONTH in words: a Gregorian month by its name, a Hijri one by its own
    (``Muharram``); another calendar's by its number (a Hebrew year's months are numbered
    otherwise in a leap year)."""
    numbers = [str(m) for m in rule.get("BYMONTH") or []]
    scale = _scale(rule).upper()
    if not scale:
        return [_MONTHS[int(m) - 1] for m in numbers if m.isdigit() and 1 <= int(m) <= 12]
    if scale.startswith(("HIJRI", "ISLAMIC")):
        return [_HIJRI_MONTHS[int(m) - 1] for m in numbers if m.isdigit() and 1 <= int(m) <= 12]
    return [f"its month {m}" for m in numbers]


def _day_of(until: Any, start: Any) -> date:
    """The day an UNTIL ends on, on the clock of the series' ``start`` (UNTIL is in UTC: a Los
    Angeles series whose last day is 3 June ends at 06:59 UTC on the 4th)."""
    if not isinstance(until, datetime):
        return until
    if until.tzinfo is not None and isinstance(start, datetime) and start.tzinfo is not None:
        return until.astimezone(start.tzinfo).date()
    return until.date()


def _chosen_day_words(positions: list[int], codes: list[str]) -> str:
    """BYSETPOS over BYDAY in words: "on the first weekday", "on the first and third of Monday
    and Friday"."""
    chosen = set(codes)
    kind = {frozenset(_DAYS): "day", frozenset(_DAYS) - {"SA", "SU"}: "weekday",
            frozenset({"SA", "SU"}): "weekend day"}.get(frozenset(chosen))
    if kind is None and len(chosen) == 1:
        kind = _DAYS[codes[0]]
    which = _and([_ordinal(abs(p), last=p < 0) for p in positions])
    return f"on the {which} {kind}" if kind else f"on the {which} of {_and([_DAYS[c] for c in codes])}"


def _ordinal(number: int, last: bool = False) -> str:
    """1 "first" (or "last"), 2 "second" (or "second to last"), 11 "11th"."""
    word = _ORDINALS.get(number) if number <= 5 else None
    word = word or f"{number}th"
    if last:
        return "last" if number == 1 else f"{word} to last"
    return word


def _day_words(code: str) -> str:
    match = re.fullmatch(r"([+-]?\d{1,2})?([A-Z]{2})", code.upper())
    if not match or match.group(2) not in _DAYS:
        return code
    day = _DAYS[match.group(2)]
    if not match.group(1):
        return day
    number = int(match.group(1))
    return f"the {_ORDINALS.get(number, f'{number}th')} {day}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
