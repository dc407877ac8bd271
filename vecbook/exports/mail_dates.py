"""A mail's Date header written in its sender's language ("Di, 12 Mär 2024 14:05:00 +0100",
"martes, 12 de marzo de 2024 14:05"), as some clients, scripts and gateways write it instead of
RFC 5322's English: read by naming its month in English for the email package's parser.

A date in ISO 8601 ("2024-03-12 14:05:00", as scripts and some gateways write it, or year first with
slashes, "2024/03/12 14:05") is read too.
Otherwise only day-month-year dates (and month-day-year ones, "Dezember 3, 2024") with a month name of
German, French, Spanish, Italian, Portuguese, Dutch or a Scandinavian language are read; anything else
stays no date, as before. A weekday, which may share its abbreviation with a month (French "mar." is
Tuesday), is skipped unread.
"""

from __future__ import annotations

import re
from datetime import datetime
from email.utils import parsedate_to_datetime

from ..records import iso_moment

# Month names and the abbreviations mail apps write, lower case, each language's in turn
# (German with Austrian "Jän", French, Spanish, Italian, Portuguese, Dutch, Swedish/Danish/Norwegian).
_MONTH_NAMES = (
    ("jan", "januar", "jän", "jänner", "janv", "janvier", "ene", "enero", "gen", "gennaio", "janeiro", "januari"),
    ("feb", "februar", "feber", "févr", "fevr", "fév", "février", "fevrier", "febrero", "febbraio", "fev",
     "fevereiro", "februari"),
    ("mär", "märz", "maerz", "mrz", "mars", "mar", "marzo", "março", "marco", "mrt", "maart", "marts"),
    ("apr", "april", "avr", "avril", "abr", "abril", "aprile"),
    ("mai", "may", "mayo", "mag", "maggio", "maio", "mei", "maj"),
    ("jun", "juni", "juin", "junio", "giu", "giugno", "junho"),
    ("jul", "juli", "juil", "juillet", "julio", "lug", "luglio", "julho"),
    ("aug", "august", "août", "aout", "ago", "agosto", "augustus", "augusti"),
    ("sep", "sept", "september", "septembre", "septiembre", "set", "setiembre", "settembre", "setembro"),
    ("okt", "oktober", "oct", "octobre", "octubre", "ott", "ottobre", "out", "outubro"),
    ("nov", "november", "novembre", "noviembre", "novembro"),
    ("dez", "dezember", "déc", "dec", "décembre", "decembre", "dic", "diciembre", "dicembre", "dezembro",
     "december", "des", "desember"),
)
_ENGLISH = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTHS = {name: _ENGLISH[number] for number, names in enumerate(_MONTH_NAMES) for name in names}
# [at] [time] [zone], after the year
CLOCK_AND_ZONE = (r"(?:\s+(?:um|à|a las|alle|às|om|kl\.?|klo)?\s*(\d{1,2})[:.h](\d{2})(?:[:.](\d{2}))?)?"
                  r"\s*(.*)$")
# [weekday,] day[.] [de] month[.] [de] year [at] [time] [zone]: the weekday is any words before the day
LOCAL_DATE = re.compile(r"^[^\d]*?(\d{1,2})\.?\s+(?:de\s+)?([^\W\d_]+)\.?,?\s+(?:de\s+)?(\d{4}),?" + CLOCK_AND_ZONE,
                        re.I)
# [weekday,] month[.] day[,] year [at] [time] [zone]: "Dezember 3, 2024", as a US-style locale
# writes its language's month names
MONTH_FIRST_DATE = re.compile(r"^(?:[^\W\d_]+\.?,?\s+)?([^\W\d_]+)\.?\s+(\d{1,2}),?\s+(\d{4}),?" + CLOCK_AND_ZONE,
                              re.I)

# An offset at the end written "+01:00", "GMT+01:00" or "UTC-0530" (scripts, Java mailers): read as
# RFC 5322's "+0100" (the email package reads only that, and would drop the offset).
OFFSET = re.compile(r"\s(?:GMT|UTC)?([+-])(\d{2}):?(\d{2})(\s*\([^()]*\))?$", re.I)

# A time on a 12-hour clock: 8:15 PM, 12:05:09 a.m.
TWELVE_HOUR = re.compile(r"\b(\d{1,2}):(\d{2}(?::\d{2})?)\s*([ap])\.?m\b\.?", re.I)

# (and year/month/day, as Japanese and Chinese scripts write it: the year first, so never day-first)
ISO_DATE = re.compile(r"^(\d{4})(?:-(\d{2})-(\d{2})|/(\d{1,2})/(\d{1,2}))[T ](\d{1,2}):(\d{2})(?::(\d{2}))?"
                      r"(?:[.,]\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$", re.I)


def rfc_form(raw: str) -> str:
    """A Date header with its offset at the end written as RFC 5322 writes it (``OFFSET``) and a
    12-hour clock's time as a 24-hour one (the email package reads "8:15 PM" as 08:15)."""
    return TWELVE_HOUR.sub(_24_hour, OFFSET.sub(r" \1\2\3\4", raw))


def _24_hour(found: re.Match[str]) -> str:
    hour, rest, noon = int(found.group(1)), found.group(2), found.group(3).lower()
    return f"{hour % 12 + (12 if noon == 'p' else 0):02d}:{rest}"


def localized_date(raw: str) -> datetime | None:
    """The date a Date header names in ISO 8601 or a European language (``LOCAL_DATE``, else
    ``MONTH_FIRST_DATE``); None when it is none."""
    if iso := ISO_DATE.match(raw.strip()):
        return _iso_date(iso)
    if found := LOCAL_DATE.match(raw.strip()):
        day, month, year, hour, minute, second, zone = found.groups()
    elif found := MONTH_FIRST_DATE.match(raw.strip()):
        month, day, year, hour, minute, second, zone = found.groups()
    else:
        return None
    english = MONTHS.get(month.lower())
    if english is None:
        return None
    clock = f" {hour}:{minute}:{second or '00'}" if hour else " 00:00:00"
    try:
        return parsedate_to_datetime(f"{day} {english} {year}{clock} {zone}".strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _iso_date(found: re.Match[str]) -> datetime | None:
    """An ISO 8601 date and time, with its offset where it has one (naive without, as written),
    to the second: read by ``iso_moment`` once the space before an offset and the fraction are
    left out."""
    year, month, day, slashed_month, slashed_day, hour, minute, second, offset = found.groups()
    month, day = month or slashed_month.zfill(2), day or slashed_day.zfill(2)
    try:
        return iso_moment(f"{year}-{month}-{day}T{hour.zfill(2)}:{minute}:{second or '00'}{offset or ''}")
    except ValueError:  # (a 13th month, a 25th hour, an offset of a day or more)
        return None
