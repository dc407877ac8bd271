"""iMessage as imessage-exporter writes it in text (``imessage-exporter -f txt``): a folder of
``.txt`` files, one a conversation, named after the group (``Family - 12.txt``, its chat's number
after the name), its members (``Ana, Bo.txt``) or the number or address (``+15551234567.txt``).

Each message is a block after a blank line: its local time as chrono writes
``%b %d, %Y %l:%M:%S %p`` (``May 17, 2022  5:29:42 PM``, English month names, the hour
space-padded), perhaps a read receipt after it (``(Read by you after 1 hour, 49 seconds)``), the
sender (``Me`` for the owner, a contact's name, a number or address), then the message's lines.
A group event is one line after its time (``... PM Ana named the conversation Trip``). What the
exporter adds to a message's lines is left out: its tapbacks (``Tapbacks:`` and one line each),
the replies copied indented under it (each is read in its own place), the notes ``This message
responded to an earlier message.``, ``Sent with Confetti``, an unsent part, a shared location;
an edited message is read as it was last edited; an attachment's path is named
``[attachment: IMG_0420.HEIC]``.

The times carry no zone: dates are naive, as written. A window cites the lines of its messages'
blocks, from each one's time to its last line.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Callable, Iterator

from ..records import Record
from .base import Export, ExportFile, Message, chat_records, distinct_ids

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# The time at the start of a line, as chrono's "%b %d, %Y %l:%M:%S %p" writes it (one space or two
# before the hour: %l pads it).
STAMP = re.compile(r"(" + "|".join(_MONTHS) + r") (\d{2}), (\d{4})  ?(\d{1,2}):(\d{2}):(\d{2}) ([AP]M)")
# After a message's time: nothing, or when it was read.
_RECEIPT = re.compile(r" \(Read by .+ after .+\)")
# The start of an export: its first block's time, then a message's sender (a line of text) or
# a group event on the time's line. Looked for in a file's first bytes only (notes folders ask
# every .txt).
_OPENING = re.compile(r"\ufeff?\s*" + STAMP.pattern + r"(?:(?:" + _RECEIPT.pattern + r")?\r?\n\S| \S)")
_MESSAGE_HEAD = re.compile(r"(?:^|\n)\r?\n" + STAMP.pattern + r"(?:" + _RECEIPT.pattern + r")?\r?\n\S")
_DETECT_BYTES = 4096
# Lines the exporter writes into a message that nobody wrote: the effect it was sent with, the
# note on a reply, a deleted or unsent part, shared locations, stickers, attachments it could not
# find ("Shooting Start": older versions' spelling).
_NOTES = re.compile(r"Sent with (?:Confetti|Echo|Fireworks|Balloons|Heart|Lasers|Shooting Star|Shooting Start"
                    r"|Sparkles|Spotlight|Slam|Loud|Gentle|Invisible Ink)|This message responded to an earlier "
                    r"message\.|This message was deleted from the conversation!|.+ unsent this message part"
                    r"(?: .+ after sending)?!|(?:Started|Stopped) sharing location!|Shared location!|"
                    r"Attachment missing!|Unable to format app message: .*|SharePlay Message|"
                    r"(?:\S+ )?Sticker from [^:]+: \S*/.*|Sticker from .+ not found!")
_TAPBACKS = frozenset({"Tapbacks:", "Reactions:"})  # "Reactions:" in older versions
_EDITED = re.compile(r"Edited .+? later: ")
# An attachment's path: where Messages keeps it (macOS, an iOS backup), or the copy the exporter
# made beside the export ("attachments/12/IMG_0420.HEIC").
_ATTACHMENT = re.compile(r"(?:~|/\S*?)/Library/(?:Messages|SMS)/Attachments/.+|attachments/\d+/.+")
# A named group's file: "<name> - <chat number>.txt".
_GROUP_NUMBER = re.compile(r" - \d+$")


def detect(export: Export) -> bool:
    """A ``.txt`` that starts with a message's or group event's time as imessage-exporter writes
    it, with a message (a time alone on its line, then its sender) near the top."""
    return any(_looks_like(f.head(_DETECT_BYTES)) for f in _text_files(export))


def _looks_like(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    if _OPENING.match(text) is None:
        return False
    start = text.lstrip("\ufeff \t\r\n")
    return _MESSAGE_HEAD.search("\n\n" + start) is not None


def _text_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name.lower().endswith(".txt"))


def read(export: Export) -> list[Record]:
    """Every conversation file's messages, windowed (other ``.txt`` files are not conversations)."""
    files = [f for f in _text_files(export) if _looks_like(f.head(_DETECT_BYTES))]
    return distinct_ids(chat_records(export, export.read_each(files, lambda f: _messages(export, f))))


def conversation_name(file: ExportFile) -> str:
    """The conversation's name from its file's: a named group's without its chat number."""
    return _GROUP_NUMBER.sub("", file.name.rsplit(".", 1)[0]) or file.name


def _messages(export: Export, file: ExportFile) -> Iterator[Message]:
    lines = file.read_text().replace("\r\n", "\n").split("\n")
    conversation = conversation_name(file)
    heads = [index for index, line in enumerate(lines)
             if (index == 0 or not lines[index - 1].strip()) and STAMP.match(line)]
    for number, start in enumerate(heads):
        end = heads[number + 1] if number + 1 < len(heads) else len(lines)
        found = STAMP.match(lines[start])
        assert found is not None  # heads holds the lines it matched
        after = lines[start][found.end():]
        if after and not _RECEIPT.fullmatch(after):
            continue  # a group event: "Ana named the conversation Trip", "You left the conversation."
        sender = lines[start + 1].strip() if start + 1 < end else ""
        if not sender:
            export.warn(file, start + 1, "a message time without a sender after it; skipped", skipped=False)
            continue
        when = _when(found)
        if when is None:
            export.warn(file, start + 1, f"impossible date or time {found.group(0)!r}; message skipped", skipped=False)
            continue
        kept = _body(lines, start + 2, end)
        if kept:
            text = "\n".join(line for _, line in kept)
            yield Message(conversation=conversation, author=sender, text=text, file=file, line=start + 1,
                          end_line=kept[-1][0] + 1, when=when)


def _when(found: re.Match[str]) -> datetime | None:
    month, day, year, hour, minute, second, half = found.groups()
    try:
        return datetime(int(year), _MONTHS.index(month) + 1, int(day), int(hour) % 12 + (12 if half == "PM" else 0),
                        int(minute), int(second))
    except ValueError:
        return None


def _body(lines: list[str], start: int, end: int) -> list[tuple[int, str]]:
    """The message's own lines between ``start`` and ``end`` (0-based, ``end`` excluded), each
    with its index, without what the exporter added (see the module docstring)."""
    kept: list[tuple[int, str]] = []
    edit_start = None  # where the current part's edit history starts in ``kept``
    index = start
    while index < end:
        line = lines[index]
        if line in _TAPBACKS:  # the tapbacks, one a line, up to a blank line
            index = _skip(lines, index + 1, end, lambda text: bool(text.strip()))
            continue
        if line.startswith("    ") and STAMP.match(line, 4):  # a reply, read in its own place
            index = _skip(lines, index + 1, end, lambda text: not text.strip() or text.startswith("    "))
            continue
        index += 1
        if _NOTES.fullmatch(line):
            if line == "SharePlay Message" and index < end and lines[index] == "Ended":
                index += 1  # the call's two lines
            continue
        if (edited := _EDITED.match(line)) is not None and edit_start is not None:
            del kept[edit_start:]  # a later version replaces the one before
            line = line[edited.end():]
        elif (stamped := STAMP.match(line)) is not None and line[stamped.end():stamped.end() + 1] == " ":
            edit_start, line = len(kept), line[stamped.end() + 1:]  # an edited part's first version
        elif _ATTACHMENT.fullmatch(line):
            line = f"[attachment: {line.rsplit('/', 1)[-1]}]"
        kept.append((index - 1, line))
    while kept and not kept[-1][1].strip():
        kept.pop()
    while kept and not kept[0][1].strip():
        kept.pop(0)
    return kept


def _skip(lines: list[str], index: int, end: int, within: Callable[[str], bool]) -> int:
    """The index of the first line from ``index`` for which ``within`` is false."""
    while index < end and within(lines[index]):
        index += 1
    return index
