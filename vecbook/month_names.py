"""Month names as people, mail apps and notes write them, in English and the European languages
VecBook reads dates in, and the month-first date ("March 5, 2024", "Dezember 3, 2024"): one table
for the dates of text headers (``written_dates``) and of mail (``exports.mail_dates``)."""

from __future__ import annotations

# Month names and the abbreviations apps write, lower case, each language's in turn (English,
# German with Austrian "Jän", French, Spanish, Italian, Portuguese, Dutch, Swedish/Danish/Norwegian).
MONTH_NAMES = (
    ("january", "jan", "januar", "jän", "jänner", "janv", "janvier", "ene", "enero", "gen", "gennaio", "janeiro",
     "januari"),
    ("february", "feb", "februar", "feber", "févr", "fevr", "fév", "février", "fevrier", "febrero", "febbraio",
     "fev", "fevereiro", "februari"),
    ("march", "mar", "mär", "märz", "maerz", "mrz", "mars", "marzo", "março", "marco", "mrt", "maart", "marts"),
    ("april", "apr", "avr", "avril", "abr", "abril", "aprile"),
    ("may", "mai", "mayo", "mag", "maggio", "maio", "mei", "maj"),
    ("june", "jun", "juni", "juin", "junio", "giu", "giugno", "junho"),
    ("july", "jul", "juli", "juil", "juillet", "julio", "lug", "luglio", "julho"),
    ("august", "aug", "août", "aout", "ago", "agosto", "augustus", "augusti"),
    ("september", "sep", "sept", "septembre", "septiembre", "set", "setiembre", "settembre", "setembro"),
    ("october", "oct", "okt", "oktober", "octobre", "octubre", "ott", "ottobre", "out", "outubro"),
    ("november", "nov", "novembre", "noviembre", "novembro"),
    ("december", "dec", "dez", "dezember", "déc", "décembre", "decembre", "dic", "diciembre", "dicembre",
     "dezembro", "des", "desember"),
)
MONTHS = {name: number for number, names in enumerate(MONTH_NAMES, 1) for name in names}
# A month name of the table (longest first, so "mars" is not read as "mar"), with its dot.
MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
# A day of the month, perhaps with its English ordinal ("5th") or a dot ("5.").
DAY = r"(\d{1,2})(?:st|nd|rd|th)?\.?"
# Month, day, year: "March 5, 2024", "Dezember 3 2024", "Mar. 5th, 2024" (groups: month, day, year).
MONTH_FIRST = rf"{MONTH}\s+{DAY},?\s+(\d{{4}})"


def month_number(name: str) -> int | None:
    """The month (1-12) ``name`` names in any language of the table ("März", "déc", "May"); None
    for another word."""
    return MONTHS.get(name.lower().rstrip("."))

