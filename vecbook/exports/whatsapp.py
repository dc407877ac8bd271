"""WhatsApp: the chat export ("Export chat", a ``.txt``, or a ``.zip`` holding ``_chat.txt``
or ``WhatsApp Chat with X.txt`` beside the media), one file a chat.

Each message starts a line with its date and time, in the phone's locale:

- Android: ``31/12/2023, 13:05 - Ana: text``; iOS: ``[31/12/2023, 13:05:09] Ana: text``;
- 12- or 24-hour clock (``1:05 PM``, ``1:05\u202fpm``, ``1:05 p. m.``, ``13:05``), the marker
  after the time or before it in other scripts (``오후 1:05``, ``午後1:05``, ``下午1:05``,
  ``1:05 م``, ``1:05 μ.μ.``; Malay ``PTG``, Hebrew ``אחה״צ``, Persian ``ب.ظ``, Turkish ``ÖS``...: see
  ``DAY_HALVES``), seconds or not, ``:`` or ``.`` in the time (``13.34``, Finnish
  ``klo 13.34``), a stray dot after it (``13:34. -``);
- ``/`` ``.`` ``-`` between the date's fields (a space after each allowed: ``2020. 1. 12.``),
  2- or 4-digit years, the year first (``2023-12-31``, ``2022/12/14``) or last (Bulgarian ``31.12.23 г.``); or the date
  in Korean words, ``2020년 1월 12일`` (Android in Korean), and in 年月日;
- iOS puts an invisible U+200E before attachment and system lines and texts.
- exports from before 2017: a colon after the time, with seconds (``3/24/14, 1:59:59 PM: Ana: text``).

Lines that do not start that way continue the message above (their lines are cited); one that
starts with a date and a time in a form not read here is kept so, with a WARN naming the first.

Day/month order, judged from every date of the file at once (see ``_date_order``): a 4-digit
first field is a year (year-month-day), and so is a 2-digit one in a Korean phone's
``24. 3. 5.`` (``_KOREAN_SHORT``) where it reads as a year since WhatsApp's first and ``date_order`` is
not set; a first field past 12 anywhere proves day-first, a second field past 12 month-first;
otherwise ``.`` separators mean day-first (no locale writes month.day), then the reading that
keeps the dates in order wins (where neither does, the one that steps back in time at most half
as far: ``_nearer_in_order``); when nothing decides and the two readings differ, day-first is
used (most locales write it) with a WARN. A collection's ``date_order`` ("dmy" or "mdy") decides
every file its dates do not settle themselves.

WhatsApp writes local time without a zone: dates are naive (a Thai phone's Buddhist-Era year
and a Persian phone's Solar Hijri date are made the Gregorian ones). System lines are skipped: on Android they have no ``Name:`` after
the date ("X added Y", subject changes, in the phone's language); iOS writes them with U+200E
before the text under the chat's own name, which writes nothing unmarked (``_marked``), and a
few under the other person's name in a chat of two (``_MARKED_NOTICE``; in other languages
``_TAP``, ``_ENCRYPTED`` and ``_NOTICE_WORDS``). What
people sent is kept as written, attachments (``<Media omitted>``, ``<attached: file>``,
``image omitted``), locations and deletions included: they keep the replies around them readable.

A chat exported twice into one collection (March's export beside June's) is read once: each
message in the newest file that holds it (``read_once``).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from typing import Iterable, Iterator

from ..records import Record
from . import solar_hijri
from .base import Export, ExportFile, Message, chat_records, distinct_ids
from .read_once import read_once

# The header that starts a message: optional U+200E/U+200F/BOM, an optional "[", the date
# (three fields, a space allowed after each separator: "2020. 1. 12."), an optional comma,
# the word some locales put before the time ("klo", "kl."), the time (hour and minute by ":"
# or ".", seconds or not, an AM/PM marker before or after it, a stray "." after it), then
# "]" when it opened with "[", else " - " (an en dash on some phones).
# Three groups only ("[", date, time): ``HEADER.split`` cuts a whole file in one C call.
_SPACE = "[ \u202f\u00a0]"
# 12-hour markers as phones write them (CLDR's, which Android and iOS both follow), morning
# first, per language; read in any case, with or without their dots (a Hebrew gershayim ״ also
# as an ASCII "). The Latin "AM"/"PM" ("PM", "p.m.", "p. m.") are _LATIN_MARK. Chinese iPhones
# may name the part of the day (凌晨 small hours ... 晚上 evening), and Cantonese ones (Hong Kong)
# theirs (午夜 midnight, 朝早 morning, 下晝 afternoon, 夜晚 evening; in speech's words too, 上晝
# before noon, 晏晝 midday and after): each reads as AM or PM.
DAY_HALVES = (("午前", "午後"), ("上午", "下午"), ("凌晨", "晚上"), ("早上", "中午"), ("清晨", "傍晚"),
              ("午夜", "下晝"), ("朝早", "夜晚"), ("上晝", "晏晝"),  # yue
              ("오전", "오후"), ("ص", "م"), ("π.μ.", "μ.μ."), ("PG", "PTG"),  # Malay: pagi, petang
              ("לפנה״צ", "אחה״צ"), ("ق.ظ", "ب.ظ"), ("SA", "CH"), ("ÖÖ", "ÖS"), ("дп", "пп"),  # he, fa, vi, tr, uk
              ("пр.об.", "сл.об."), ("fm", "em"), ("de.", "du."), ("dop.", "odp."),  # bg, sv, hu, cs
              ("dop.", "pop."),  # sl
              ("ap.", "ip."), ("f.h.", "e.h."), ("vm.", "nm."), ("p.d.", "m.d."), ("TO", "TK"),  # fi, is, af, sq, uz
              ("ก่อนเที่ยง", "หลังเที่ยง"), ("पूर्वाह्न", "अपराह्न"), ("முற்பகல்", "பிற்பகல்"), ("priešpiet", "popiet"),
              ("পূর্বাহ্ণ", "অপরাহ্ণ"), ("म.पू.", "म.उ."), ("ਪੂ.ਦੁ.", "ਬਾ.ਦੁ."), ("ಪೂರ್ವಾಹ್ನ", "ಅಪರಾಹ್ನ"),  # bn mr pa kn
              ("පෙ.ව.", "ප.ව."), ("နံနက်", "ညနေ"), ("ກ່ອນທ່ຽງ", "ຫຼັງທ່ຽງ"), ("ጥዋት", "ከሰዓት"),  # si my lo am
              ("претпл.", "попл."), ("priekšpusdienā", "pēcpusdienā"), ("ү.ө.", "ү.х."), ("غ.م.", "غ.و."))  # mk lv mn ps
_LATIN_MARK = r"[AaPp]\.?" + _SPACE + r"?[Mm]\.?"
_DIRECTION = "[\u200e\u200f]*"  # right-to-left locales put a direction mark beside the marker


def _mark_pattern(mark: str) -> str:
    """A marker as a pattern: its dots optional, a gershayim or an ASCII quote."""
    return "".join({".": r"\.?", "״": "[\"״]"}.get(char, re.escape(char)) for char in mark)


def _mark_key(mark: str) -> str:
    """A marker as the key it is looked up by: no dots, quotes, spaces or direction marks, casefolded."""
    return re.sub("[.\"״ \u202f\u00a0\u200e\u200f]", "", mark).casefold()


# Each marker's key -> whether it is the afternoon's ("am" and "pm" for the Latin ones).
AFTERNOON = {"am": False, "pm": True} | {_mark_key(mark): half == 1 for pair in DAY_HALVES
                                         for half, mark in enumerate(pair)}
_MARK = (_DIRECTION + r"(?:" + _LATIN_MARK + "|(?i:" + "|".join(_mark_pattern(m) for m in sorted(
    {m for pair in DAY_HALVES for m in pair}, key=len, reverse=True)) + "))" + _DIRECTION)
# Korean phones write the date in words: "2020년 1월 12일" (year, month, day; Chinese and
# Japanese characters alike, 年月日).
_WORDS_DATE = r"\d{2,4}[년年] ?\d{1,2}[월月] ?\d{1,2}[일日]"
# Between the fields, Arabic and Persian phones write U+200F (a right-to-left mark) around the
# separator, and an Arabic comma "،" after the date.
_SEPARATOR = "[\u200e\u200f]?[./-][\u200e\u200f]? ?"
# Bulgarian phones write "г." (година, year) after the date: "31.12.23 г., 13:05". A dot after the
# date is kept in it: Korean's "24. 3. 5." is told by it (_KOREAN_SHORT).
_DATE = r"(\d{1,4}" + _SEPARATOR + r"\d{1,2}" + _SEPARATOR + r"\d{1,4}\.?|" + _WORDS_DATE + r")\.?(?: г\.)?"
# Korean phones write the short date year first with a 2-digit year, a space after each dot and a
# dot after the day: "24. 3. 5." (CLDR's "yy. M. d."). Croatian in Bosnia writes the same shape
# day first ("d. M. yy."), told apart by a first field that is no year of WhatsApp's.
_KOREAN_SHORT = re.compile(r"\d{2}\. \d{1,2}\. \d{1,2}\.")
_TIME = (r"((?:" + _MARK + _SPACE + r"?)?\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:" + _SPACE + r"?" + _MARK + r")?)\.?")
HEADER = re.compile(r"^[\u200e\u200f\ufeff]*(\[)?" + _DATE + r"[,،]?" + _SPACE + r"(?:klo |kl\. |à )?" + _TIME
                    + r"(?(1)\][ \u202f\u00a0]?|[ \u202f\u00a0][-\u2013][ \u202f\u00a0])", re.M)
# Exports from before 2017 put ": " after the time, which had seconds, and a comma after the date:
# "3/24/14, 1:59:59 PM: Ana: hi" (a log's "2024-03-05 08:15:02: ERROR: ..." has no comma). The same
# three groups as HEADER (the "[" one never takes part); a file is read by the one its first line fits.
OLD_HEADER = re.compile(r"^[\u200e\u200f\ufeff]*(\[){0}" + _DATE + "," + _SPACE + r"(\d{1,2}:\d{2}:\d{2}(?:" + _SPACE
                        + "?" + _MARK + ")?): ", re.M)
# A line that starts like a message header (a date, then a time), whether or not HEADER reads it.
LIKE_HEADER = re.compile(r"^[\u200e\u200f\ufeff]*\[?(?:\d{1,4}" + _SEPARATOR + r"\d{1,2}" + _SEPARATOR + r"\d{2,4}|"
                         + _WORDS_DATE + r")\.?[,،]?\s+\D{0,6}\d{1,2}[:.]\d{2}", re.M)
_DATE_FIELDS = re.compile(r"(\d+)[\u200e\u200f]?(?:[./-]|[년年])[\u200e\u200f]? ?(\d+)[\u200e\u200f]?(?:[./-]|[월月])"
                          r"[\u200e\u200f]? ?(\d+)")
# WhatsApp exists since 2009 (2552 in the Buddhist Era, which Thai phones write; 1387 in the Solar
# Hijri calendar, which Persian phones may write): another earlier year is of another calendar (an
# Arabic phone's Islamic 1445), kept as written with a WARN.
FIRST_YEAR = 2009
BUDDHIST_ERA = FIRST_YEAR + 543
NEXT_YEAR = date.today().year + 1  # a year past it is not yet written in a chat
SOLAR_HIJRI = (FIRST_YEAR - 622, NEXT_YEAR - 621)  # WhatsApp's years there: 1387 (from March 2008) on
_CLOCK = re.compile(r"(\d+)[:.](\d+)(?:[:.](\d+))?")
# A chat's name from its file, as WhatsApp names the export in the phone's language (Android's
# names; iOS zips are "WhatsApp Chat - Ana" in every language): the name after the words, or
# before them in some languages ("Ana ile WhatsApp Sohbeti", "AnaとのWhatsAppチャット"). A form
# whose words a shorter one would take for the name comes first ("Chat WhatsApp s uživatelem").
_NAME = re.compile("^(?:" + "|".join((
    r"WhatsApp[ _-]Chat ?- ?(.+)",  # iOS
    r"WhatsApp[ _-](?:Chatt?|Samtale|Gesprek) (?:with|mit|met|med|kay) (.+)",  # en de nl da sv nb af tl
    r"WhatsApp (?:razgovor s|pokalbis su|sarakste ar|klepet z|разговор со|Ћаскање са|Чат с|чат:) (.+)",
    r"(?:Chat|Чат) WhatsApp (?:s uživatelem|с контактом) (.+)", r"WhatsApp chat s používateľom (.+)",  # cs ru sk
    r"WhatsApp csevegés vele:? (.+)", r"WhatsApp'i vestlus kontaktiga (.+)",  # hu et
    r"WhatsApp-keskustelu henkilön (.+) kanssa",  # fi
    r"(?:Discussion|Chat|Czat|Чат|Бесіда|Συνομιλία|Sembang|Conversa[țţ]ie|Trò chuyện|แชท|گفتگوی|צ['’]אט) WhatsApp "
    r"(?:avec|con|dengan|z|с|з|με|cu|với|กับ|با|עם) (.+)",
    r"(?:Chat de|Conversa do|Conversa no|Xat de|Soga za) WhatsApp (?:con|com|amb|na) (.+)", r"دردشة واتساب مع (.+)",
    r"Biseda me (.+) në WhatsApp", r"WhatsApp [与與] (.+) 的(?:对话|對話)",
    r"(.+?) ?(?:ile WhatsApp Sohbeti|ilə WhatsApp Söhbəti|bilan WhatsApp chati|とのWhatsAppチャット|님과의 WhatsApp 대화|"
    r"के साथ WhatsApp चैट|এর সাথে WhatsApp চ্যাট|સાથેની WhatsApp વાત|ಜೊತೆ WhatsApp ಸಂಭಾಷಣೆ|മായുള്ള WhatsApp ചാറ്റുകൾ|"
    r"सोबतच्या WhatsApp गप्पा|ਨਾਲ WhatsApp ਗੱਲਬਾਤ|உடன் WhatsApp உரையாடல்|తో WhatsApp సంభాషణ|کے ساتھ WhatsApp بات چیت)",
    r"WhatsApp[ _-]Chat \w+ (.+)", r"(?:Discussion|Conversa do|Chat de|Chat|Чат) WhatsApp \w+ (.+)",  # other words
)) + ")$", re.I)
# A browser saving a second download of the same name adds " (1)": "WhatsApp Chat with Ana (1).txt"
# is the chat with Ana, exported again.
_DOWNLOADED_AGAIN = re.compile(r" \(\d{1,3}\)$")
# What someone sent, though iOS marks it as it marks system lines (U+200E first): an attachment
# (Android "<Media omitted>", iOS "<attached: x.jpg>", "Budget.pdf • 3 pages <attached: ...>",
# "image omitted", "document omitted", in other languages "Bild weggelassen", "imagen omitida",
# "لم يتم إدراج الصورة") or a shared location ("Location: https://maps...").
_SENT = re.compile(r"<[^<>]+>| (?:omitted|weggelassen|ausgelassen|weggelaten|omitid[oa]|omis[e]?|omess[oa]|absente|"
                   r"manquante|não revelad[oa]|ocultad[oa]|отсутствует|відсутн[єя]|пропущено|vynechán[oa]?)$|"
                   r"^لم يتم إدراج|://", re.I)
# Notices that come with a sender name (the chat's) but are the app's, not anyone's words.
_NOTICE = re.compile(r"^Messages (?:and calls )?(?:you send to this \w+ )?(?:are|to this \w+ are) "
                     r"(?:now )?(?:end-to-end encrypted|secured with end-to-end encryption)", re.I)
# Notices iOS writes marked (U+200E) under the other person's name in a chat of two, where that
# name writes messages too (English): a changed security code, a block, a new number,
# disappearing messages, a join by link, that the other person is a contact ("Ana is a contact.").
_MARKED_NOTICE = re.compile(r"Your security code with .+ changed|.+['\u2019]s security code changed|You (?:un)?blocked "
                            r"this contact|.+ changed their phone number|.+ turned (?:on|off) disappearing messages|"
                            r".+ joined using this group['\u2019]s invite link|.+ is a contact\.?$")
# The same notices in any language, marked, told by what they share: the sentence that says to tap
# (to learn more, to unblock, to message the new number), or the words "end-to-end encrypted".
_TAP = re.compile(r"\b(?:Tap to|Tippe,? um|Toca para|Pulsa para|Toque para|Appuyez pour|Touchez pour|Tocca per|"
                  r"Tik (?:om|voor)|Tryck för|Trykk for|Tryk for|Napauta|Dotknij|Ketuk untuk|Nhấn để|Нажмите|"
                  r"Подробнее|Торкніться|dokunun)|タップ|轻触|輕觸|点按|點按|点击|點一下|انقر|اضغط|누르세요|탭하여|แตะเพื่อ|"
                  r"टैप कर|ضربه بزنید|הקש", re.I)
_ENCRYPTED = re.compile(r"end-to-end|Ende-zu-Ende|de extremo a extremo|de ponta a ponta|ponto a ponto|de bout en bout|"
                        r"uçtan uca|сквозным шифрованием|наскрізним шифруванням|koncovým šifrováním|エンドツーエンド|"
                        r"端到端|端對端|بين الطرفين|종단간|엔드투엔드|מקצה לקצה|سرتاسری|mã hóa đầu cuối|ต้นทางถึงปลายทาง|एंड-टू-एंड",
                        re.I)
# The notices that say neither, in other languages, by their words: disappearing messages (the
# feature's name) turned on or off, a join by the group's invite link, a contact unblocked, and
# "Ana is a contact." (the whole line).
_NOTICE_WORDS = re.compile(
    r"mensajes temporales|selbstlöschende Nachrichten|mensagens temporárias|messages éphémères|messaggi effimeri|"
    r"исчезающие сообщения|限时消息|限時訊息|消えるメッセージ|الرسائل المؤقتة|गायब होने वाले मैसेज|pesan sementara|"
    r"süreli mesaj|kaybolan mesaj|"
    r"enlace de invitación|Einladungslink|link de convite|lien d['’]invitation|link d['’]invito|link di invito|"
    r"ссылке-приглашению|邀请链接|邀請連結|招待リンク|رابط الدعوة|tautan undangan|davet bağlantısı|"
    r"Desbloqueaste a (?:este contacto|esta persona)|Você desbloqueou este contato|Hai sbloccato questo contatto|"
    r"Du hast diesen Kontakt freigegeben|(?:Vous avez|Tu as) débloqué ce contact|Вы разблокировали|"
    r"membuka blokir kontak ini|engelini kaldırdınız|"
    r"^.+ (?:es un contacto|ist ein Kontakt|é (?:um|seu) contato|est un contact|è un contatto)\.?$", re.I)
# What comes before a call's "Tap to call back" (", \u200e"), the end of the text before it.
_AFTER_CALL = re.compile("[,\uff0c\u060c\u3001] ?\u200e ?$")
# A system line quoting a subject with ": " in it ('Ana changed the subject to "Trip: Rome"',
# 'Jan hat den Betreff zu „Reise: Rom“ geändert') seems to have a "Name: " before it: a "name"
# ending in a quote opened after a space and never closed (Hebrew names hold a " between
# letters, ד"ר כהן; a nickname may be quoted whole, Bob "The" Builder).
_QUOTES = '"\u201c\u201d\u201e\u201f\u00ab\u00bb\u300c\u300d\u300e\u300f'
_OPEN_QUOTE = re.compile(f"(?:^|\\s)[{_QUOTES}][^{_QUOTES}]*$")
_MARKS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\ufeff"
# After a message header's time, a separator before the name: "] ", " - ", " -- " (a journal's
# "2024-03-05 10:30 Standup: ..." or a log's "08:15:02 ERROR: ..." has none).
_CHAT_LIKE = re.compile(r"\d[:.]\d{2}(?:[:.]\d{2})?[^:\n]{0,8}?(?:\]|\s[-\u2013\u2014]{1,2}\s)[^\n]*?: ")
# How many non-blank lines at the head of a .txt are looked at to recognise a chat.
_DETECT_LINES = 20


def detect(export: Export) -> bool:
    """A ``.txt`` (plain or in a zip) whose first non-blank line starts with a WhatsApp
    date and time and that has a ``Name: text`` message near the top."""
    return any(_looks_like(f.head(), strict=True) for f in _text_files(export))


def _looks_like(head: bytes, strict: bool = False) -> bool:
    """A ``Name: text`` message among the first lines (``strict``: and the first line is a
    message or system line, as in every export; a file with lines put before is still read
    when the format is named). System lines (a date and no name: a group's joins may run to
    hundreds before anyone writes) are passed over; the other lines count to _DETECT_LINES."""
    lines = [line for line in head.decode("utf-8-sig", errors="replace").splitlines() if line.strip()]
    header = _header_of(lines[0]) if lines else HEADER
    if not lines or (strict and not header.match(lines[0])):
        return False
    counted = 0
    for line in lines:
        if (found := header.match(line)) is not None and ": " in line[found.end():]:
            return True
        counted += found is None
        if counted >= _DETECT_LINES:
            return False
    return False


def _header_of(first: str) -> re.Pattern[str]:
    """HEADER, or OLD_HEADER where the ``first`` line is a message header of an export from before
    2017 and not one of today's."""
    return OLD_HEADER if not HEADER.match(first) and OLD_HEADER.match(first) else HEADER


def _text_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name.lower().endswith(".txt"))


def read(export: Export) -> list[Record]:
    """Every chat file's messages, windowed; a ``.txt`` whose lines start like message headers
    in a date or time format not read here is a WARN (other ``.txt`` files are not chats)."""
    files = []
    for file in _text_files(export):
        head = file.head()
        if _looks_like(head):
            files.append(file)
        elif (unread := _unread_header(head.decode("utf-8", errors="replace"))) is not None:
            export.warn(file, unread[0], f"file skipped: its lines start like WhatsApp messages, in a date or "
                                         f"time format not read (line {unread[0]}: {unread[1]!r})")
    messages = export.read_each(files, lambda f: _messages(export, f))
    return distinct_ids(chat_records(export, read_once(export, messages)))


def _unread_header(text: str, chat_like: bool = False) -> tuple[int, str] | None:
    """(line number, line) of the first line of ``text`` that starts like a message header but
    that HEADER does not read (``chat_like``: and names a sender after a separator, as a message
    does; a schedule's "12/03/2024 14:00 dentist" does not); None when there is none."""
    for found in LIKE_HEADER.finditer(text):
        start = found.start()
        if not HEADER.match(text, start):
            end = text.find("\n", start)
            line = text[start:end if end >= 0 else len(text)]
            if not chat_like or _CHAT_LIKE.search(line):
                return text.count("\n", 0, start) + 1, line[:80].rstrip("\r")
    return None


def unread_chat(head: str) -> tuple[int, str] | None:
    """(line number, line) when the first non-blank line of ``head`` starts like a message of a
    chat in a date or time form HEADER does not read (a separator before a name after the time,
    ``_CHAT_LIKE``); None otherwise (a journal's or a log's dated line included)."""
    first = next(((number, line) for number, line in enumerate(head.split("\n"), 1) if line.strip()), None)
    if first is None or not LIKE_HEADER.match(first[1]) or HEADER.match(first[1]) or not _CHAT_LIKE.search(first[1]):
        return None
    return first[0], first[1].strip()


def _folder_in_zip(rel: str) -> str:
    """The name of the folder a zip member is in, inside its zip ("" at the zip's top)."""
    inside = rel.rsplit("!/", 1)[-1]
    return inside.rsplit("/", 2)[-2] if "/" in inside else ""


def conversation_name(file: ExportFile) -> str:
    """The chat's name from the file name ("WhatsApp Chat with Ana.txt" -> "Ana"); a zip's
    ``_chat.txt`` is named after the archive, or the folder it was unzipped to (a folder inside
    the export, or one WhatsApp named); else the file's stem."""
    name = file.name.rsplit(".", 1)[0]
    folder = file.path.parent.name if file.path is not None else _folder_in_zip(file.rel)
    if name.startswith("_") and folder and ("/" in file.rel.rsplit("!/", 1)[-1] or _chat_name(folder) is not None):
        name = folder  # the zip unzipped (Safari, Finder), zipped again or not: "WhatsApp Chat - Ana/_chat.txt"
    elif name.startswith("_") and "!/" in file.rel:  # iOS: "WhatsApp Chat - Ana.zip!/_chat.txt" (the innermost zip)
        name = file.rel.rsplit("!/", 1)[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    found = _chat_name(name)
    return _DOWNLOADED_AGAIN.sub("", found) if found is not None else name


def _chat_name(name: str) -> str | None:
    """The chat's name in a file or folder name WhatsApp gave (``_NAME``); None in another. The name
    is composed first (NFC): macOS may list "Trò chuyện" with its accents apart."""
    found = _NAME.match(unicodedata.normalize("NFC", name))
    return None if found is None else next(group for group in found.groups() if group is not None).strip()


def _messages(export: Export, file: ExportFile) -> Iterator[Message]:
    # split: [text before the first message, then per message: "[" or None, date, time, body]
    text = file.read_text()
    parts = _header_of(text.lstrip(_MARKS + " \t\r\n")[:200]).split(text)
    if len(parts) == 1:
        export.warn(file, None, "no WhatsApp message lines found; file skipped")
        return
    dates = list(dict.fromkeys(parts[2::4]))
    order = _date_order(export, file, dates)
    days = {date: _ymd(_fields(date), order) for date in dates}
    if early := next((date for date, ymd in days.items() if ymd is not None and ymd[0] < FIRST_YEAR), None):
        export.warn(file, None, f"dates such as '{early}' lie before WhatsApp existed ({FIRST_YEAR}): the phone "
                                f"writes another calendar than the Gregorian; kept as written", skipped=False)
    clocks: dict[str, tuple[int, int, int] | None] = {}
    conversation = conversation_name(file)
    line = parts[0].count("\n") + 1
    if parts[0].strip(_MARKS + " \t\r\n"):
        export.warn(file, 1, f"lines 1-{line - 1} come before the first message; skipped")
    unread: list[tuple[int, str]] = []  # lines that look like headers HEADER does not read: (line, text)
    messages: list[tuple[Message, bool]] = []  # each with whether iOS marked it as it marks its own lines
    writers: set[str] = set()  # authors of a line iOS did not mark: people, not the chat itself
    run: list[tuple[int, int]] = []  # the lines naming nobody since the last message: (first line, count)
    above: Message | None = None  # the message they follow
    lines: list[str] = []  # the file's lines, split when first needed (``_paste``)
    for number, (date, clock, body) in enumerate(zip(parts[2::4], parts[3::4], parts[4::4])):
        later = body.find("\n")  # the lines after the header's own: a message's first line is never a header
        if later >= 0 and (odd := _unread_header(body[later + 1:], chat_like=True)) is not None:
            unread.append((line + odd[0], odd[1]))
        said = body.rstrip()
        author, sep, said = said.partition(": ")
        if sep and "\n" not in author and not _OPEN_QUOTE.search(author):
            name = author.strip(_MARKS + " ").lstrip("~\u202f ")
            marked = _marked(said)
            above = None
            run.clear()
            if not _is_notice(said) and not (marked and (number == 0 or _marked_notice(said.lstrip(_MARKS)))):
                above = _message(export, file, conversation, name, said, line, (date, clock), days, clocks)
                if above is not None:
                    messages.append((above, marked))
                    if not marked:
                        writers.add(name)
        else:
            run.append((line, body.rstrip().count("\n") + 1))
            if run[-1][1] > 1 and above is not None:  # no notice goes on past its line: these were pasted
                lines = lines or text.split("\n")
                _paste(above, lines, run)
                run.clear()
        line += body.count("\n")
    # iOS writes its own lines ("X added Y", a changed description, the encryption notice) under
    # the chat's name, which writes nothing else; its first line is the encryption notice
    yield from (message for message, marked in messages if not marked or message.author in writers)
    if unread:
        export.warn(file, unread[0][0], f"{len(unread)} line{'s' if len(unread) > 1 else ''} start like a message "
                                        f"header in a date or time format not read, kept as text of the message "
                                        f"above (first: {unread[0][1]!r})", skipped=False)


def _paste(message: Message, lines: list[str], run: list[tuple[int, int]]) -> None:
    """The lines of ``run`` (each its first line and how many), which name nobody as WhatsApp's
    notices do, added to ``message`` as its text: the last of them goes on past its own line, as
    no notice does, so they are lines someone pasted (an agenda: "12/03/2024, 14:00 - dentist")."""
    first, (last, count) = run[0][0], run[-1]
    pasted = "\n".join(line.rstrip("\r") for line in lines[first - 1:last - 1 + count])
    message.text = f"{message.text}\n{pasted.strip(_MARKS)}"
    message.end_line = last + count - 1


def _is_notice(said: str) -> bool:
    """An empty line, or the encryption notice in English (on any platform, under any name)."""
    bare = said.lstrip(_MARKS)
    return not bare or (bare.startswith("Messages") and _NOTICE.match(bare) is not None)


def _marked_notice(bare: str) -> bool:
    """Whether a marked line is one of iOS's notices: by its English words, or in any language by
    the sentence saying to tap or the words "end-to-end encrypted", or in other languages by the
    words of a notice that says neither (``_NOTICE_WORDS``). A call's line says to tap too
    ("Missed voice call, ‎Tap to call back"), after a comma and a mark of its own: it is kept."""
    tap = _TAP.search(bare)
    if tap is not None and not _AFTER_CALL.search(bare, 0, tap.start()):
        return True
    return any(found is not None for found in (_ENCRYPTED.search(bare), _MARKED_NOTICE.match(bare),
                                               _NOTICE_WORDS.search(bare)))


def _marked(said: str) -> bool:
    """Whether iOS marked a line as it marks its own (U+200E before the text), and it is not an
    attachment or a location, which people send and iOS marks too."""
    return said.startswith("\u200e") and not _SENT.search(said.lstrip(_MARKS).split("\n", 1)[0])


def _message(export: Export, file: ExportFile, conversation: str, author: str, said: str, line: int,
             written: tuple[str, str], days: dict[str, tuple[int, int, int] | None],
             clocks: dict[str, tuple[int, int, int] | None]) -> Message | None:
    """A message from its parts and its date and time as ``written`` (read through the file's
    caches ``days`` and ``clocks``); None for a date that does not exist."""
    bare = said.lstrip(_MARKS)
    date, clock = written
    if clock not in clocks:
        clocks[clock] = _clock(clock)
    try:
        when = datetime(*days[date], *clocks[clock])  # type: ignore[misc]  # None is caught below
    except (TypeError, ValueError):
        export.warn(file, line, f"impossible date or time '{date} {clock}'; message skipped")
        return None
    if "\r" in bare:  # a Windows-made file (or a zip from one): lines end "\r\n"
        bare = bare.replace("\r\n", "\n")
    return Message(conversation=conversation, author=author, text=bare, file=file, line=line,
                   end_line=line + said.count("\n"), when=when)


def _fields(date: str) -> tuple[int, int, int]:
    a, b, c = _DATE_FIELDS.match(date).groups()  # type: ignore[union-attr]  # HEADER matched it
    return int(a), int(b), int(c)


def _clock(clock: str) -> tuple[int, int, int] | None:
    """(hour, minute, second) on a 24-hour clock; None for "13:05 PM" or "0:10 AM"."""
    found = _CLOCK.search(clock)
    hour, minute, second = found.groups()  # type: ignore[union-attr]  # HEADER matched it
    mark = _mark_key(clock[:found.start()] + clock[found.end():])  # type: ignore[union-attr]
    hour_24 = int(hour)
    if mark:
        if not 1 <= hour_24 <= 12 or mark not in AFTERNOON:
            return None
        hour_24 = hour_24 % 12 + (12 if AFTERNOON[mark] else 0)
    return hour_24, int(minute), int(second or 0)


def _ymd(fields: tuple[int, int, int], order: str) -> tuple[int, int, int] | None:
    """(year, month, day) from the three fields in ``order`` ("ymd", "dmy" or "mdy")."""
    a, b, c = fields
    year, month, day = {"ymd": (a, b, c), "dmy": (c, b, a), "mdy": (c, a, b)}[order]
    if year < 100:
        year += 2000  # WhatsApp exists since 2009: a 2-digit year is this century...
        if year > NEXT_YEAR and year - 43 >= FIRST_YEAR:
            year -= 43  # ...unless it is yet to come: a Thai phone's Buddhist Era (66 is 2566: 2023)
    elif year >= BUDDHIST_ERA:
        year -= 543  # a Thai phone's year of the Buddhist Era (2566 is 2023): same months and days
    elif SOLAR_HIJRI[0] <= year <= SOLAR_HIJRI[1]:
        return solar_hijri.to_gregorian(year, month, day)  # a Persian phone's (1402/12/15 is 2024-03-05)
    try:
        datetime(year, month, day)
    except ValueError:
        return None
    return year, month, day


def _date_order(export: Export, file: ExportFile, dates: list[str]) -> str:
    """"ymd", "dmy" or "mdy" for the whole file from its dates (as written, in order of first
    appearance); see the module docstring for the rule."""
    if all(len(_first(date)) == 4 for date in dates):
        return "ymd"
    fields = [_fields(date) for date in dates]
    korean = all(_KOREAN_SHORT.fullmatch(date) for date in dates) and all(_whatsapp_year(f) for f in fields)
    if korean and export.date_order is None:  # a Croatian phone's "12. 3. 24." is set to read day first
        return "ymd"
    day_first = any(a > 12 for a, _, _ in fields)
    month_first = any(b > 12 for _, b, _ in fields)
    if day_first and month_first:
        export.warn(file, None, "the file mixes day/month and month/day dates; read as day/month", skipped=False)
        return "dmy"
    if day_first or month_first:
        return "dmy" if day_first else "mdy"
    if export.date_order is not None:  # the collection's date_order: the user knows the phone's locale
        return export.date_order
    if all(a == b for a, b, _ in fields) or any("." in date for date in dates):
        return "dmy"
    if (nearer := _nearer_in_order(fields)) is not None:
        return nearer
    # The data folder's problems name no collection (no prefix): it has no table to set date_order in.
    fix = (f"set date_order = \"mdy\" in this collection's [[collections]] table (name = \"{export.name}\")"
           if export.problem_prefix else
           "add the chat as a source of its own (vecbook add PATH) and set date_order = \"mdy\" in its table")
    export.warn(file, None, "cannot tell day/month from month/day (no date field past 12, both readings in "
                            f"order); dates read as day/month/year ({_both_ways(dates)}): if they are month/day, "
                            f"{fix}", skipped=False)
    return "dmy"


def _both_ways(dates: list[str]) -> str:
    """The first of ``dates`` that the two orders read differently, as read and as it is not:
    "'12/9/20' as 2020-09-12, not 2020-12-09" (what the user checks against the chat)."""
    written = next(day for day in dates if len(set(_fields(day)[:2])) == 2)
    dmy, mdy = (_ymd(_fields(written), order) for order in ("dmy", "mdy"))
    return f"'{written}' as {_iso(dmy)}, not {_iso(mdy)}"


def _iso(ymd: tuple[int, int, int] | None) -> str:
    return "no such day" if ymd is None else date(*ymd).isoformat()


def _whatsapp_year(fields: tuple[int, int, int]) -> bool:
    """Whether a date's fields read year first make a date from WhatsApp's first year to the next."""
    ymd = _ymd(fields, "ymd")
    return ymd is not None and FIRST_YEAR <= ymd[0] <= NEXT_YEAR


def _first(date: str) -> str:
    """The first field of a date as written ("2023" of "2023-12-31" and of "2023년 12월 31일")."""
    return _DATE_FIELDS.match(date).group(1)  # type: ignore[union-attr]  # HEADER matched it


def _nearer_in_order(fields: list[tuple[int, int, int]]) -> str | None:
    """"dmy" or "mdy": the reading under which the dates (first appearance order) run in time
    order, or where neither does (a message delivered late, a changed clock), the one that steps
    back in time at most half as far as the other (a step back of days one way is of months the
    other); None when neither wins so."""
    dmy, mdy = (_days_back([_ymd(f, order) for f in fields]) for order in ("dmy", "mdy"))
    if dmy is None or mdy is None:  # a date that exists one way only
        return None if dmy is mdy else "mdy" if dmy is None else "dmy"
    if 2 * min(dmy, mdy) >= max(dmy, mdy):  # both in order (0 and 0), or stepping back alike
        return None
    return "dmy" if dmy < mdy else "mdy"


def _days_back(dates: Iterable[tuple[int, int, int] | None]) -> int | None:
    """How many days in all the dates step back in time from the one before; None when one does
    not exist."""
    previous, back = 0, 0
    for ymd in dates:
        if ymd is None:
            return None
        day = date(*ymd).toordinal()
        back, previous = back + max(0, previous - day), day
    return back
