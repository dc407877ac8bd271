"""Month names as people, mail apps and notes write them, in English and the European languages
VecBook reads dates in (in Latin, Cyrillic and Greek letters; 3月 and 3월 too), and the month-first
date ("March 5, 2024", "Dezember 3, 2024"): one table for the dates of text headers
(``written_dates``) and of mail (``exports.mail_dates``)."""

from __future__ import annotations

# Month names and the abbreviations apps write, lower case, each language's in turn (English,
# German with Austrian "Jän", French, Spanish, Catalan, Italian, Portuguese, Dutch, Swedish/Danish/
# Norwegian, Finnish, Polish, Czech, Turkish, Hungarian, Russian, Ukrainian, Greek), in the forms a
# date writes them in (the genitive: "5 марта", "5 marca", "5. března", "5 Μαρτίου").
MONTH_NAMES = (
    ("january", "jan", "januar", "jän", "jänner", "janv", "janvier", "ene", "enero", "gener", "gen", "gennaio",
     "janeiro", "januari", "tammikuuta", "tammikuu", "stycznia", "styczeń", "sty", "ledna", "leden", "ocak", "oca",
     "január", "января", "январь", "янв", "січня", "січень", "січ", "ιανουαρίου", "ιανουάριος", "ιαν"),
    ("february", "feb", "februar", "feber", "févr", "fevr", "fév", "février", "fevrier", "febrero", "febrer",
     "febbraio", "fev", "fevereiro", "februari", "helmikuuta", "helmikuu", "lutego", "luty", "lut", "února", "únor",
     "şubat", "şub", "február", "febr", "февраля", "февраль", "фев", "лютого", "лютий", "лют", "φεβρουαρίου",
     "φεβρουάριος", "φεβ"),
    ("march", "mar", "mär", "märz", "maerz", "mrz", "mars", "marzo", "març", "março", "marco", "mrt", "maart",
     "marts", "maaliskuuta", "maaliskuu", "marca", "marzec", "března", "březen", "mart", "március", "márc", "марта",
     "март", "мар", "березня", "березень", "бер", "μαρτίου", "μάρτιος", "μαρ"),
    ("april", "apr", "avr", "avril", "abr", "abril", "aprile", "huhtikuuta", "huhtikuu", "kwietnia", "kwiecień",
     "kwi", "dubna", "duben", "nisan", "nis", "április", "ápr", "апреля", "апрель", "апр", "квітня", "квітень",
     "квіт", "απριλίου", "απρίλιος", "απρ"),
    ("may", "mai", "mayo", "maig", "mag", "maggio", "maio", "mei", "maj", "toukokuuta", "toukokuu", "maja",
     "května", "květen", "mayıs", "május", "máj", "мая", "май", "травня", "травень", "трав", "μαΐου", "μάιος",
     "μαΐ", "μαϊ"),
    ("june", "jun", "juni", "juin", "junio", "juny", "giu", "giugno", "junho", "kesäkuuta", "kesäkuu", "czerwca",
     "czerwiec", "cze", "června", "červen", "haziran", "haz", "június", "jún", "июня", "июнь", "июн", "червня",
     "червень", "черв", "ιουνίου", "ιούνιος", "ιουν"),
    ("july", "jul", "juli", "juil", "juillet", "julio", "juliol", "lug", "luglio", "julho", "heinäkuuta",
     "heinäkuu", "lipca", "lipiec", "lip", "července", "červenec", "temmuz", "tem", "július", "júl", "июля", "июль",
     "июл", "липня", "липень", "ιουλίου", "ιούλιος", "ιουλ"),
    ("august", "aug", "août", "aout", "ago", "agosto", "agost", "augustus", "augusti", "elokuuta", "elokuu",
     "sierpnia", "sierpień", "sie", "srpna", "srpen", "ağustos", "ağu", "augusztus", "августа", "август", "авг",
     "серпня", "серпень", "серп", "αυγούστου", "αύγουστος", "αυγ"),
    ("september", "sep", "sept", "septembre", "septiembre", "setembre", "set", "setiembre", "settembre", "setembro",
     "syyskuuta", "syyskuu", "września", "wrzesień", "wrz", "září", "eylül", "eyl", "szeptember", "szept",
     "сентября", "сентябрь", "сен", "сент", "вересня", "вересень", "вер", "σεπτεμβρίου", "σεπτέμβριος", "σεπ"),
    ("october", "oct", "okt", "oktober", "octobre", "octubre", "ott", "ottobre", "out", "outubro", "lokakuuta",
     "lokakuu", "października", "październik", "paź", "října", "říjen", "ekim", "eki", "október", "октября",
     "октябрь", "окт", "жовтня", "жовтень", "жовт", "οκτωβρίου", "οκτώβριος", "οκτ"),
    ("november", "nov", "novembre", "noviembre", "novembro", "marraskuuta", "marraskuu", "listopada", "listopad",
     "lis", "listopadu", "kasım", "kas", "ноября", "ноябрь", "ноя", "нояб", "листопада", "листопад", "лист",
     "νοεμβρίου", "νοέμβριος", "νοε"),
    ("december", "dec", "dez", "dezember", "déc", "décembre", "decembre", "dic", "diciembre", "desembre",
     "dicembre", "dezembro", "des", "desember", "joulukuuta", "joulukuu", "grudnia", "grudzień", "gru", "prosince",
     "prosinec", "aralık", "ara", "декабря", "декабрь", "дек", "грудня", "грудень", "груд", "δεκεμβρίου",
     "δεκέμβριος", "δεκ"),
)
# Chinese and Japanese write a month as its number and 月, Korean with 월 (strftime's %b under their locales)
MONTHS = {name: number for number, names in enumerate(MONTH_NAMES, 1)
          for name in (*names, f"{number}月", f"{number:02d}月", f"{number}월", f"{number:02d}월")}
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

