"""An iCalendar file's text made ready for the parser: decoded (UTF-8 or UTF-16), a fold inside a
character mended, a quote a backslash escapes inside a parameter written as RFC 6868's, and for
the parse cut to the lines a record uses (without the VTIMEZONE blocks of Windows zone names).
The file's text keeps every line where it was, so the line numbers a record cites and a warning
names are the file's."""

from __future__ import annotations

import re
from typing import Iterator

from ..records import Problem, decode_text
from ..utf16 import utf16_codec
from .base import ExportFile
from .ics_windows import windows_zones

# The properties a record uses; the others (DTSTAMP, SEQUENCE, X-..., ATTACH with
# inline base64) and VALARM blocks are not handed to the library, whose content-line
# parser walks each line a character at a time. VTIMEZONE blocks are passed whole.
USED_PROPERTIES = frozenset({"BEGIN", "END", "UID", "SUMMARY", "DESCRIPTION", "LOCATION", "DTSTART", "DTEND",
                             "DUE", "DURATION", "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID", "STATUS",
                             "ORGANIZER", "ATTENDEE", "X-WR-CALNAME", "X-ALT-DESC", "X-MICROSOFT-CDO-ALLDAYEVENT",
                             "X-MICROSOFT-MSNCALENDAR-ALLDAYEVENT", "X-MICROSOFT-RRULE", "SEQUENCE", "DTSTAMP"})
_NAME_RE = re.compile(r"([A-Za-z0-9-]+)[;:]")
# A long line folded (RFC 5545 3.1: a line break and a space or tab) inside a character's UTF-8
# bytes, as some calendar writers fold by bytes: the character's first bytes, the fold, the rest.
_SPLIT_FOLD = re.compile(rb"([\xc0-\xf7][\x80-\xbf]{0,2})(\r?\n[ \t])(?=[\x80-\xbf])")
# A content line with parameters (``NAME;...``), its folded continuations with it.
_WITH_PARAMETERS = re.compile(r"^[A-Za-z0-9-]+;(?:[^\n]|\n[ \t])*", re.MULTILINE)
# A backslash and a quote, a fold between them or not.
_ESCAPED_QUOTE = re.compile(r'\\(?:\r?\n[ \t])?"')
# A line's fold (RFC 5545 3.1), skipped when looking at the character after a quote.
_FOLD = re.compile(r"\r?\n[ \t]")
# A date property's TZID left unquoted with a colon in it (old Google Calendar's GMT+05:30, an
# Outlook or Lotus display name, "(UTC+01:00) Amsterdam, Berlin, ..."), RFC 5545 asking for quotes:
# its value is up to the next parameter or the value's colon, the line's last (a date has none),
# as libical and Thunderbird read it. Folds may fall anywhere in it.
_PARAMETER = r'(?:[^;:"\r\n]|\r?\n[ \t])'  # a character of a parameter, or a fold
_ZONE_CHAR = r'(?:[^;"\r\n]|\r?\n[ \t])'
_VALUE_CHAR = r"(?:[^:\r\n]|\r?\n[ \t])"
_COLON_ZONE = re.compile(
    rf"^((?:DTSTART|DTEND|DUE|RECURRENCE-ID|EXDATE|RDATE)(?:;{_PARAMETER}*)*?;TZID=)"
    rf'((?!"){_ZONE_CHAR}{{0,200}}?:{_ZONE_CHAR}{{0,200}}?)'
    rf"(?=(?:;{_PARAMETER}*)*:{_VALUE_CHAR}*\r?$(?!\n[ \t]))", re.MULTILINE | re.IGNORECASE)
# A line that cannot begin a content line (empty lines aside): a content line's rest that a mail
# client broke off, without the fold's space; mended after a line of text or a person (a long
# description, an attendee of many parameters), where a writer's junk line is not looked for.
_BROKEN_FOLD = re.compile(r"\n(?![ \t\r\n]|\Z|(?!mailto:)[A-Za-z0-9-]+[;:](?!//))",  # (its line break first: 5x faster)
                          re.IGNORECASE)
# A person's line broken inside its parameters, before the colon of its value: the next line goes on
# with it whatever it starts with (``ATTENDEE;CN=Ana;ROLE=REQ-`` and ``PARTICIPANT;RSVP=TRUE:mailto:...``).
# (Never a BEGIN or END line: a person's line without a value is a writer's fault, said by the library.)
_UNFINISHED = re.compile(r"^(ATTENDEE|ORGANIZER);[^:\r\n]*\r?\n(?=[^ \t\r\n])(?!(?:BEGIN|END):)",
                         re.MULTILINE | re.IGNORECASE)
_MENDED_AFTER = frozenset({"SUMMARY", "DESCRIPTION", "LOCATION", "COMMENT", "ATTENDEE", "ORGANIZER", "CONTACT",
                           "X-ALT-DESC", "X-WR-CALNAME", "X-WR-CALDESC"})
# The lines that begin and end a VTIMEZONE block, and a block's TZID.
_ZONE_EDGE = re.compile(r"^(BEGIN|END):VTIMEZONE[ \t]*\r?(?:\n|$)", re.MULTILINE | re.IGNORECASE)
_ZONE_ID = re.compile(r"^TZID:(.*?)\r?$", re.MULTILINE | re.IGNORECASE)


def file_text(file: ExportFile) -> tuple[str, list[Problem]]:
    """The file as text, decoded as the other text files are (``decode_text``: UTF-8, or UTF-16
    as Windows PowerShell writes it; a bare CR, classic Mac OS's, ends a line), a fold inside a
    character moved before it (so each line keeps its number, and unfolding joins the character
    whole), a fold a mail client broke mended (``mended_folds``), its escaped quotes mended and a TZID
    with a colon left unquoted quoted (``quoted_zones``);
    and the lines whose bytes were not UTF-8."""
    data = file.read_bytes()
    if utf16_codec(data) is None and _SPLIT_FOLD.search(data):
        data = _SPLIT_FOLD.sub(rb"\2\1", data)
    text, bad = decode_text(data, file.label)
    return quoted_zones(escaped_quotes(mended_folds(text))), bad


def mended_folds(text: str) -> str:
    """The text with each line that cannot begin a content line (no ``NAME:`` or ``NAME;`` before
    its text, or a web address's ``https://`` or ``mailto:``), and each line after a person's
    broken before its value's colon (``_UNFINISHED``), made the continuation of the line before, as a
    fold is: a calendar sent by mail may come back with its folds' leading spaces taken off, or
    its long lines wrapped, and the library could not read the rest of the line (a WARN, the text
    lost). Only a line after a text or a person's (``_MENDED_AFTER``) is mended; another stays, for
    the library to report (a writer's junk line after a date), and so does a vCalendar 1.0 file
    (its quoted-printable values go on over lines of their own). Every line keeps its place."""
    from .ics_v1 import is_version_1

    if is_version_1(text):
        return text
    unfinished = {found.end(): found.group(1).upper() for found in _UNFINISHED.finditer(text)}
    pieces: list[str] = []
    done = 0  # the text before this is in pieces
    last: tuple[int, str] = (-1, "")  # the broken line before, and the name of its content line
    for at in sorted({broken.end() for broken in _BROKEN_FOLD.finditer(text)} | set(unfinished)):
        last = (at, unfinished.get(at) or _name_before(text, at, last))
        if last[1] in _MENDED_AFTER:
            pieces += [text[done:at], " "]
            done = at
    return "".join(pieces) + text[done:] if pieces else text


def _name_before(text: str, at: int, last: tuple[int, str]) -> str:
    """The property name of the content line before the line at ``at``, past its continuations
    ('' where none): a broken line met on the way up has ``last``'s (so thousands of broken lines
    in a row are each looked at once, not walked up again)."""
    start = at
    while start > 0:
        start = text.rfind("\n", 0, start - 1) + 1
        if start == last[0]:
            return last[1]
        if text[start:start + 1] not in (" ", "\t"):
            break
    name = _NAME_RE.match(text, start)
    return name.group(1).upper() if name else ""


def quoted_zones(text: str) -> str:
    """The text with each date property's TZID that holds a colon unquoted (``DTSTART;TZID=GMT+05:30:
    20120904T020000``) quoted, as RFC 5545 asks: the library took the zone to end at its first
    colon, and the time was lost. Every line keeps its place."""
    if ";TZID=" not in text.upper():
        return text
    return _COLON_ZONE.sub(lambda found: f'{found.group(1)}"{found.group(2)}"', text)


def looks_like_calendar(head: bytes) -> bool:
    """A file's first bytes start a calendar, ``BEGIN:VCALENDAR``, in UTF-8 or UTF-16."""
    found = utf16_codec(head)
    if found is not None:
        codec, start, end = found
        head = head[start:end - (end - start) % 2].decode(codec, errors="ignore").encode("utf-8")
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:15].upper() == b"BEGIN:VCALENDAR"


def escaped_quotes(text: str) -> str:
    """The text with each quote a backslash escapes inside a quoted parameter value written as
    RFC 6868's ``^'``: some calendar writers write ``CN="Ana \\"Nana\\" Ruiz"``, which the
    library cannot read, and the person was lost. Same length: every line keeps its place."""
    if not _ESCAPED_QUOTE.search(text):
        return text
    return _WITH_PARAMETERS.sub(lambda m: _line_quotes(m.group(0)) if _ESCAPED_QUOTE.search(m.group(0)) else m.group(0),
                                text)


def _line_quotes(line: str) -> str:
    """One content line's parameters with their escaped quotes as ``^'``; the value after them
    as it was. A backslash and quote that end the value (a ``;`` or ``:`` or the line's end after
    them) are a backslash of the value's own and its closing quote."""
    chars = list(line)
    quoted = False
    i = 0
    while i < len(chars):
        char = chars[i]
        if char == '"':
            quoted = not quoted
        elif char == ":" and not quoted:
            break
        elif char == "\\" and quoted:
            # (a writer folding at 75 octets may fold between the two)
            quote = i + 1 if line[i + 1:i + 2] == '"' else _past_fold(line, i + 1)
            if line[quote:quote + 1] == '"' and _after(line, quote + 1) not in ";:\r\n":
                chars[i], chars[quote] = "^", "'"
                i = quote
        i += 1
    return "".join(chars)


def _after(line: str, at: int) -> str:
    """The character at ``at``, past a fold there; '' at the line's end."""
    at = _past_fold(line, at)
    return line[at:at + 1]  # (not line[at:][:1]: a copy of the rest of the line for each quote)


def _past_fold(line: str, at: int) -> int:
    """``at``, or past the fold there."""
    fold = _FOLD.match(line, at)
    return fold.end() if fold else at


def without_windows_zones(text: str) -> str:
    """The text without the VTIMEZONE blocks of zones named the Windows way (Outlook's "W. Europe
    Standard Time"), so the library reads each such TZID as the IANA zone it stands for, as it does
    without the block: the same clock, and the block's rules (from 1601) were walked from their
    start for every time of every event (a third of the time an Outlook calendar took to read)."""
    if "Standard Time" not in text:
        return text

    pieces: list[str] = []
    done = 0  # the text before this is in pieces
    for start, end in _zone_blocks(text):
        named = _ZONE_ID.search(text, start, end)
        if named and named.group(1).strip() in windows_zones():
            pieces.append(text[done:start])
            done = end
    return "".join(pieces) + text[done:] if pieces else text


def _zone_blocks(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each VTIMEZONE block, from a BEGIN line to the first END line after it. The
    lines are found once each: a block never ended is left as it is, not searched for an END from
    each of its BEGIN lines (a file that opens thousands took minutes)."""
    start: int | None = None
    for edge in _ZONE_EDGE.finditer(text):
        if edge.group(1).upper() == "BEGIN":
            start = edge.start() if start is None else start
        elif start is not None:
            yield start, edge.end()
            start = None


def used_lines(text: str) -> str:
    """The text without the properties and VALARM blocks no record uses (a line that is
    not a ``NAME:value`` line is kept, so the library reports it), nor the VTIMEZONE blocks
    of Windows zone names (see ``without_windows_zones``)."""
    text = without_windows_zones(text)
    kept: list[str] = []
    keep = True
    zone = alarm = False
    for line in text.split("\n"):  # "\r" stays on its line; other breaks are inside values
        if line[:1] in (" ", "\t"):  # a folded line's continuation goes with its line
            if keep:
                kept.append(line)
            continue
        upper = line[:16].upper()
        if upper.startswith(("BEGIN:VTIMEZONE", "END:VTIMEZONE")):
            zone = upper.startswith("BEGIN")
            keep = True
        elif upper.startswith(("BEGIN:VALARM", "END:VALARM")):
            alarm, keep = upper.startswith("BEGIN"), False
        else:
            name = _NAME_RE.match(line)
            keep = zone or (not alarm and (name is None or name.group(1).upper() in USED_PROPERTIES))
        if keep:
            kept.append(line)
    return "\n".join(kept)
