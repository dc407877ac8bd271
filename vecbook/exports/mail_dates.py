"""A mail's Date header written in its sender's language ("Di, 12 Mär 2024 14:05:00 +0100",
"martes, 12 de marzo de 2024 14:05"), as some clients, scripts and gateways write it instead of
RFC 5322's English: read by naming its month in English for the email package's parser.

A date in ISO 8601 ("2024-03-12 14:05:00", as scripts and some gateways write it, or year first with
slashes, "2024/03/12 14:05") is read too.
So are year-month-day dates as Japanese, Chinese and Korean clients write them ("2024年3月5日(火) 午後3:05"),
a locale's short date in numbers ("05.03.2024 08:15": a dot puts the day first; with slashes only where a
field past 12 says which is the day), and day-month-year dates (and month-day-year ones, "Dezember 3,
2024") with a month name of ``month_names`` (the table the dates of text headers are read with too); anything else
stays no date, as before. A weekday, which may share its abbreviation with a month (French "mar." is
Tuesday), is skipped unread.
A day's end, 24:00 (ISO 8601's), is the next day's midnight.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

from ..month_names import DAY, MONTH, MONTH_FIRST, month_number
from ..records import iso_moment
from ..written_dates import day_first

_ENGLISH = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
CLOCK = r"(\d{1,2})[:.h](\d{2})(?:[:.](\d{2}))?"
# [year's word] [at] [time] [zone], after the year: Russian "г.", Ukrainian "р." and Polish "r." follow
# the year ("5 марта 2024 г. в 08:15"); "at" in the languages of ``month_names``
CLOCK_AND_ZONE = (r"(?:\s*(?:г|р|r)\.)?(?:\s+(?:at|um|à|a las|alle|às|om|kl\.?|klo|в|о|o|v)?\s*" + CLOCK + r")?"
                  r"\s*(.*)$")
# [weekday,] day[.] [de] month[.] [de] year [at] [time] [zone]: the weekday is any words before the day
LOCAL_DATE = re.compile(rf"^[^\d]*?{DAY}\s+(?:de\s+)?{MONTH},?\s+(?:de\s+)?(\d{{4}}),?" + CLOCK_AND_ZONE, re.I)
# [weekday,] month[.] day[,] year [at] [time] [zone]: "Dezember 3, 2024", as a US-style locale
# writes its language's month names
MONTH_FIRST_DATE = re.compile(rf"^(?:[^\W\d_]+\.?,?\s+)?{MONTH_FIRST},?" + CLOCK_AND_ZONE, re.I)
# [weekday,] day.month.year or day/month/year [at] [time] [zone], as mail apps write their locale's
# short date: with dots the day is first everywhere (German, Russian, Finnish, Czech, Polish)
NUMERIC_DATE = re.compile(r"^[^\d]*?(\d{1,2})([./-])\s?(\d{1,2})\2\s?(\d{4}|\d{2}(?!\d)),?" + CLOCK_AND_ZONE, re.I)
# Year, month, day as Japanese, Chinese and Korean write them ("2024年3月5日", "2024년 3월 5일",
# "2024. 3. 5."), then perhaps the weekday ("(火)", "火曜日", "星期二", "周二", "(화)", "화요일"), the time
# and the zone (the half of the day before the time is read by ``rfc_form``)
YEAR_FIRST_DATE = re.compile(r"^(\d{4})\s*(?:年|년|\.|/)\s*(\d{1,2})\s*(?:月|월|\.|/)\s*(\d{1,2})\s*(?:日|일|\.)?"
                             r"\s*(?:[(（][^()（）\d]{1,4}[)）]|[^\W\d_]{1,2}曜日|星期.|[周週].|[^\W\d_]요일)?,?"
                             r"(?:\s*(\d{1,2})(?:[:.]|\s*[時时시]\s*)(\d{2})\s*[分분]?(?:[:.](\d{2}))?)?\s*(.*)$")
# Year, month's name, day, as Hungarian writes them ("2024. március 5., kedd 8:15"), the weekday after the day.
YEAR_MONTH_NAME_DATE = re.compile(rf"^(\d{{4}})\.?\s+{MONTH}\s+{DAY},?(?:\s+[^\W\d_]+\.?,?)?" + CLOCK_AND_ZONE, re.I)
# The half of the day written before a 12-hour clock's time: Chinese, Japanese, Korean.
EAST_ASIAN_HALF_DAY = re.compile(r"(上午|午前|오전|下午|午後|오후)\s*(\d{1,2}):(\d{2}(?::\d{2})?)")
AFTERNOON = ("下午", "午後", "오후")

# An offset at the end written "+01:00", "GMT+01:00", "UTC-0530", "GMT +0100", with its seconds,
# "+01:00:00", or as hours alone, "+8", "-05", "GMT+8", "UTC+5:30" (scripts, Java mailers, PHP, some
# webmail), and after GMT or UTC before the year, as Java's Date.toString() writes a zone it knows by no
# name ("Mon Mar 04 10:00:00 GMT+01:00 2024"): read as RFC 5322's "+0100" (the email package reads only
# that: it dropped the others, and read "+8" as 8 minutes).
OFFSET = re.compile(r"\s(?:(GMT|UTC)\s?)?([+-])(\d{1,2})(?::?(\d{2})(?::00)?)?(\s*\([^()]*\)|\s+\d{4})?$", re.I)
# GMT or UTC and four digits without a sign ("GMT0100", as Windows writes its zones' offsets east of
# Greenwich): the offset east, "+0100".
UNSIGNED_OFFSET = re.compile(r"(?<=\s)(GMT|UTC)(\d{4})(?=(?:\s*\([^()]*\)|\s+\d{4})?$)", re.I)
# A fraction of a second (.NET, Java and PHP mailers: "08:15:30.123"), which the email package reads as
# a date without its offset: left out.
FRACTION = re.compile(r"(\d:\d{2}:\d{2})[.,]\d+")
# A leap second (23:59:60), which RFC 5322 allows and Python's datetime has none of: read as the second
# before, not as no date.
LEAP_SECOND = re.compile(r"(\d:\d{2}):60(?!\d)")

# A year counted from 1900 after its month, as mailers with the Y2K bug wrote it (C's and Perl's tm_year:
# "1 Jan 100" is 2000, "124" 2024), or with "19" before it ("19100"): read as the year it counts to, not as
# the year 100 or 1910.
TM_YEAR = re.compile(r"(?<=[A-Za-z] )(1\d\d|191\d\d)(?=,? \d{1,2}:\d\d)")
# The end of a day, 24:00 (ISO 8601 allows it; some scripts write midnight so), which Python's datetime
# has no hour for: read as the next day's 00:00, not as no date.
END_OF_DAY = re.compile(r"(?<![\d:])24([:.h])00(?:([:.])00)?(?![\d:.,])")

# Zones by the names old clients and scripts write after the time, where a name says one offset
# (not IST, India's, Ireland's or Israel's; the email package reads North America's, EST to PDT, and
# UT, GMT, Z): read as that offset, where it was a date with none.
ZONE_NAMES = {"CET": "+0100", "MEZ": "+0100", "MET": "+0100", "CEST": "+0200", "MESZ": "+0200", "MEST": "+0200",
              "WET": "+0000", "WEST": "+0100", "BST": "+0100", "EET": "+0200", "EEST": "+0300", "MSK": "+0300",
              "JST": "+0900", "KST": "+0900", "HKT": "+0800", "SGT": "+0800", "AWST": "+0800", "ACST": "+0930",
              "ACDT": "+1030", "AEST": "+1000", "AEDT": "+1100", "NZST": "+1200", "NZDT": "+1300", "HST": "-1000",
              "AKST": "-0900", "AKDT": "-0800"}
# (before the year too, as Java's Date.toString() writes it: "Tue Mar 05 08:15:30 CET 2024")
# (and with " DST" after it, daylight time, an hour ahead, as old Unix mailers wrote it: "MET DST")
ZONE_NAME = re.compile(r"(?<=\d)\s+\(?(" + "|".join(ZONE_NAMES) + r")(\s+DST)?\)?(\s*\([^()]*\)|\s+\d{4})?$", re.I)
# A zone by its IANA name or Windows' after the time, perhaps in brackets, perhaps before the year: "Europe/Berlin",
# "W. Europe Standard Time" (scripts, Windows tools; "Daylight Time" as Windows says it in summer).
LONG_ZONE_NAME = re.compile(r"\d:\d\d(?::\d\d)?\s+\(?([A-Za-z][\w+./ -]{2,60}?)\)?(?:\s+\d{4})?\s*$")
# A time on a 12-hour clock: 8:15 PM, 12:05:09 a.m., 8:15 p. m. (Spanish locales)
TWELVE_HOUR = re.compile(r"\b(\d{1,2}):(\d{2}(?::\d{2})?)\s*([ap])(?:\.\s?)?m\b\.?", re.I)

# (and year/month/day, as Japanese and Chinese scripts write it: the year first, so never day-first)
# (and, after an offset, its zone's name, as Go's time.String() writes it: "+0100 CET m=+0.0012", the last
# its monotonic clock)
ISO_DATE = re.compile(r"^(\d{4})(?:-(\d{2})-(\d{2})|/(\d{1,2})/(\d{1,2}))(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?"
                      r"(?:[.,]\d+)?\s*([+-]\d{2}(?::?\d{2})?(?=\s|$)|Z)?(?(9)(?:\s+(?:[A-Z]{2,5}|[+-]\d\d(?:\d\d)?)"
                      r"(?:\s+m=[+-]\d+(?:\.\d+)?)?)?))?(?:\s*\([^()]*\))?$", re.I)


def mail_date(raw: str) -> datetime | None:
    """The date a Date header names: in RFC 5322's form (as ``rfc_form`` writes it), else in a
    language or form of ``localized_date``; a day's end, 24:00, is the next day's 00:00
    (``END_OF_DAY``). None when it names none."""
    raw, day_end = END_OF_DAY.subn(_day_start, rfc_form(raw), count=1)
    try:
        date: datetime | None = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):  # (a year of 20 digits overflows)
        date = localized_date(raw)  # "Di, 12 Mär 2024 14:05", as some clients write it
    if date is not None and date.tzinfo is None and (named := LONG_ZONE_NAME.search(raw)):
        date = _in_named_zone(date, named.group(1))
    return date + timedelta(days=1) if date is not None and day_end else date


def _in_named_zone(date: datetime, name: str) -> datetime:
    """``date``, read without a zone, at the offset the zone ``name`` (IANA's or Windows') keeps on that
    day; as it was where the name is no zone's."""
    from .ics_zones import calendar_zone  # (the calendar reader's names of zones, Windows' too)

    zone = calendar_zone(name.strip().replace("Daylight Time", "Standard Time"))
    if zone is None:
        return date
    offset = date.replace(tzinfo=zone).utcoffset()
    return date.replace(tzinfo=timezone(offset)) if offset is not None else date


def _day_start(found: re.Match[str]) -> str:
    """"24:00:00" as "00:00:00", "24.00" as "00.00": the same separators, so every form still reads."""
    clock_separator, second_separator = found.groups()
    return f"00{clock_separator}00" + (f"{second_separator}00" if second_separator else "")


def rfc_form(raw: str) -> str:
    """A Date header with its offset at the end written as RFC 5322 writes it (``OFFSET``; a zone's
    name, ``ZONE_NAMES``, as its offset), without a fraction of a second (``FRACTION``; a leap second as
    the second before, ``LEAP_SECOND``), and a 12-hour clock's time as a 24-hour one (the email package
    reads "8:15 PM" as 08:15)."""
    raw = EAST_ASIAN_HALF_DAY.sub(_east_asian_24_hour, raw) if not raw.isascii() else raw
    raw = ZONE_NAME.sub(_zone_offset, LEAP_SECOND.sub(r"\1:59", FRACTION.sub(r"\1", raw)))
    raw = TM_YEAR.sub(lambda found: str(1900 + int(found.group(1)[-3:])), raw)
    return TWELVE_HOUR.sub(_24_hour, OFFSET.sub(_rfc_offset, UNSIGNED_OFFSET.sub(r"\1+\2", raw)))


def _rfc_offset(found: re.Match[str]) -> str:
    """"+8", "GMT+08:00", "UTC+5:30" as "+0800", "+0800", "+0530" (Java's year after it kept after it);
    "GMT-0" as "+0000" (RFC 5322's "-0000" says the offset is unknown, and GMT says it is none)."""
    named, sign, hours, minutes, comment = found.groups()
    if comment and not named and comment.strip().isdigit():  # (only Java's "GMT+01:00 2024" has a year after)
        return found.group(0)
    if named and int(hours) == int(minutes or 0) == 0:
        sign = "+"
    return f" {sign}{int(hours):02d}{minutes or '00'}{comment or ''}"


def _zone_offset(found: re.Match[str]) -> str:
    """A zone's name as its offset; one after an offset ("+0100 (CET)") is its comment, kept."""
    if re.search(r"[+-]\d\d:?\d\d$", found.string[:found.start()]):
        return found.group(0)
    offset = ZONE_NAMES[found.group(1).upper()]
    if found.group(2):  # (daylight time: an hour ahead)
        offset = f"{offset[0]}{abs(int(offset[:3]) + (1 if offset[0] == '+' else -1)):02d}{offset[3:]}"
    return f" {offset}{found.group(3) or ''}"


def _east_asian_24_hour(found: re.Match[str]) -> str:
    """下午3:05 (Chinese), 午後3:05 (Japanese), 오후 3:05 (Korean) as 15:05."""
    half, hour, rest = found.groups()
    return f" {int(hour) % 12 + (12 if half in AFTERNOON else 0):02d}:{rest}"


def _24_hour(found: re.Match[str]) -> str:
    hour, rest, noon = int(found.group(1)), found.group(2), found.group(3).lower()
    return f"{hour % 12 + (12 if noon == 'p' else 0):02d}:{rest}"


def localized_date(raw: str) -> datetime | None:
    """The date a Date header names in ISO 8601, year first as East Asian clients write it
    (``YEAR_FIRST_DATE``), with a month name (``LOCAL_DATE``, ``YEAR_MONTH_NAME_DATE``, else
    ``MONTH_FIRST_DATE``) or in numbers (``NUMERIC_DATE``); None when it is none, or when its
    numbers could be either day."""
    raw = raw.strip()
    if iso := ISO_DATE.match(raw):
        return _iso_date(iso)
    if found := YEAR_FIRST_DATE.match(raw):
        year, month, day, hour, minute, second, zone = found.groups()
        number: int | None = int(month)
    elif found := LOCAL_DATE.match(raw):
        day, month, year, hour, minute, second, zone = found.groups()
        number = month_number(month)
    elif found := YEAR_MONTH_NAME_DATE.match(raw):
        year, month, day, hour, minute, second, zone = found.groups()
        number = month_number(month)
    elif found := MONTH_FIRST_DATE.match(raw):
        month, day, year, hour, minute, second, zone = found.groups()
        number = month_number(month)
    elif found := NUMERIC_DATE.match(raw):
        first, separator, second_field, year, hour, minute, second, zone = found.groups()
        first_is_day = True if separator == "." else day_first(first, second_field)
        if first_is_day is None:
            return None
        day, number = (first, int(second_field)) if first_is_day else (second_field, int(first))
    else:
        return None
    if number is None or not 1 <= number <= 12:
        return None
    clock = f" {hour}:{minute}:{second or '00'}" if hour else " 00:00:00"
    try:
        return parsedate_to_datetime(f"{day} {_ENGLISH[number - 1]} {year}{clock} {zone}".strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _iso_date(found: re.Match[str]) -> datetime | None:
    """An ISO 8601 date and time (a day alone at its midnight), with its offset where it has one
    (naive without, as written), to the second: read by ``iso_moment`` once the space before an offset and the fraction are
    left out."""
    year, month, day, slashed_month, slashed_day, hour, minute, second, offset = found.groups()
    month, day = month or slashed_month.zfill(2), day or slashed_day.zfill(2)
    if offset and len(offset) == 3:  # "-04": hours alone, as ISO 8601 allows
        offset += ":00"
    try:
        return iso_moment(f"{year}-{month}-{day}T{(hour or '0').zfill(2)}:{minute or '00'}:{second or '00'}"
                          f"{offset or ''}")
    except ValueError:  # (a 13th month, a 25th hour, an offset of a day or more)
        return None
