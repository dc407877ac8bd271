"""Outlook's TNEF attachment (``winmail.dat``, ``application/ms-tnef``): the message body and the
attachment names it carries, for a mail whose text is only there (Exchange's "rich text" mail).

TNEF (MS-OXTNEF) is a signature, a key, then attributes: a level (message or attachment), an id
whose high word is its type, a length, the data and a checksum. The body is the legacy
``attBody`` attribute, or a MAPI property of ``attMAPIProps``: ``PR_BODY`` (plain text),
``PR_BODY_HTML``, or ``PR_RTF_COMPRESSED`` (``rtf_text``). Attachments are named, never decoded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

SIGNATURE = 0x223E9F78
TNEF_TYPES = frozenset({"application/ms-tnef", "application/vnd.ms-tnef"})
LEVEL_MESSAGE, LEVEL_ATTACHMENT = 1, 2
ATT_BODY, ATT_MAPI_PROPS, ATT_OEM_CODEPAGE = 0x800C, 0x9003, 0x9007
ATT_ATTACH_TITLE, ATT_ATTACH_RENDDATA, ATT_ATTACHMENT = 0x8010, 0x9002, 0x9005
PR_BODY, PR_RTF_COMPRESSED, PR_BODY_HTML, PR_INTERNET_CPID = 0x1000, 0x1009, 0x1013, 0x3FDE
PR_ATTACH_LONG_FILENAME, PR_DISPLAY_NAME = 0x3707, 0x3001
PT_STRING8, PT_UNICODE, PT_BINARY, PT_OBJECT, MV_FLAG = 0x001E, 0x001F, 0x0102, 0x000D, 0x1000
# Bytes of a single fixed-size MAPI value (as stored: a short or a boolean takes 4).
FIXED_SIZES = {0x0000: 4, 0x0001: 4, 0x0002: 4, 0x0003: 4, 0x0004: 4, 0x0005: 8, 0x0006: 8, 0x0007: 8,
               0x000A: 4, 0x000B: 4, 0x0014: 8, 0x0040: 8, 0x0048: 16}
VARIABLE_TYPES = frozenset({PT_STRING8, PT_UNICODE, PT_BINARY, PT_OBJECT})
# A mail whose only text is a winmail.dat that holds none readable says so where its text would be.
UNREAD = "[Outlook's winmail.dat: no text could be read from it]"


@dataclass
class Tnef:
    """What a TNEF stream says: its body in the forms present, and its attachments' names."""

    text: str = ""
    html: bytes = b""
    html_codepage: int | None = None
    rtf: bytes = b""  # PR_RTF_COMPRESSED, still compressed
    attachments: list[str] = field(default_factory=list)
    codepage: int = 1252  # attOemCodepage: the message's 8-bit strings are in it


def read_tnef(data: bytes) -> Tnef:
    """The body and attachment names of a TNEF stream; ValueError when it is none. A stream cut
    short keeps what came before the cut."""
    if len(data) < 6 or struct.unpack_from("<I", data)[0] != SIGNATURE:
        raise ValueError("not a TNEF stream (no TNEF signature)")
    tnef, at, legacy_body = Tnef(), 6, b""
    while at + 9 <= len(data):
        level, attribute, length = struct.unpack_from("<BII", data, at)
        value = data[at + 9:at + 9 + length]
        at += 9 + length + 2  # (the checksum, not checked: a bad one costs nothing read here)
        name = attribute & 0xFFFF
        if name == ATT_OEM_CODEPAGE and len(value) >= 4:
            tnef.codepage = struct.unpack_from("<I", value)[0] or tnef.codepage
        elif name == ATT_BODY and level == LEVEL_MESSAGE:
            legacy_body = value
        elif name == ATT_ATTACH_RENDDATA:
            tnef.attachments.append("")
        elif name == ATT_ATTACH_TITLE and tnef.attachments:
            tnef.attachments[-1] = tnef.attachments[-1] or _string(value.rstrip(b"\0"), tnef.codepage)
        elif name in (ATT_MAPI_PROPS, ATT_ATTACHMENT):
            _read_props(value, tnef, attachment=name == ATT_ATTACHMENT and bool(tnef.attachments))
    if not tnef.text and legacy_body:
        tnef.text = _string(legacy_body.rstrip(b"\0"), tnef.codepage)
    tnef.attachments = [name for name in tnef.attachments if name]
    return tnef


def _read_props(data: bytes, tnef: Tnef, attachment: bool) -> None:
    """The MAPI properties wanted from an attMAPIProps or attAttachment block; an unknown type
    ends the walk (what it held before is kept)."""
    try:
        for prop_id, prop_type, values in _props(data):
            if not values:
                continue
            value = values[0]
            if attachment and prop_id in (PR_ATTACH_LONG_FILENAME, PR_DISPLAY_NAME):
                name = _value_text(value, prop_type, tnef.codepage)
                if name and (prop_id == PR_ATTACH_LONG_FILENAME or not tnef.attachments[-1]):
                    tnef.attachments[-1] = name
            elif attachment:
                continue
            elif prop_id == PR_BODY:
                tnef.text = _value_text(value, prop_type, tnef.codepage)
            elif prop_id == PR_BODY_HTML:
                tnef.html = value
            elif prop_id == PR_RTF_COMPRESSED:
                tnef.rtf = value
            elif prop_id == PR_INTERNET_CPID and len(value) >= 4:
                tnef.html_codepage = struct.unpack_from("<I", value)[0]
    except (struct.error, ValueError):
        return


def _props(data: bytes) -> list[tuple[int, int, list[bytes]]]:
    """(id, type without the multi-value flag, values) of each property, in order."""
    (count,), at, props = struct.unpack_from("<I", data), 4, []
    for _ in range(count):
        prop_type, prop_id = struct.unpack_from("<HH", data, at)
        at += 4
        if prop_id >= 0x8000:  # a named property: its GUID, then an id or a UTF-16 name
            kind = struct.unpack_from("<I", data, at + 16)[0]
            at += 20
            if kind == 1:
                at += 4 + _padded(struct.unpack_from("<I", data, at)[0])
            else:
                at += 4
        base = prop_type & ~MV_FLAG
        values: list[bytes] = []
        if base in VARIABLE_TYPES or prop_type & MV_FLAG:
            number = struct.unpack_from("<I", data, at)[0]
            at += 4
        else:
            number = 1
        for _ in range(number):
            if at >= len(data):  # (a count past the block's bytes: damaged, or made to run for ever)
                raise ValueError("a MAPI property runs past its attribute")
            if base in VARIABLE_TYPES:
                size = struct.unpack_from("<I", data, at)[0]
                values.append(data[at + 4:at + 4 + size])
                at += 4 + _padded(size)
            elif base in FIXED_SIZES:
                values.append(data[at:at + FIXED_SIZES[base]])
                at += FIXED_SIZES[base]
            else:
                raise ValueError(f"unknown MAPI property type 0x{prop_type:04x}")
        if at > len(data):
            raise ValueError("a MAPI property runs past its attribute")
        props.append((prop_id, base, values))
    return props


def _padded(size: int) -> int:
    return (size + 3) // 4 * 4


def _value_text(value: bytes, prop_type: int, codepage: int) -> str:
    if prop_type == PT_UNICODE:
        return value.decode("utf-16-le", "replace").rstrip("\0")
    return _string(value.rstrip(b"\0"), codepage)


def _string(value: bytes, codepage: int) -> str:
    """An 8-bit string in the message's code page (Windows-1252 where Python knows no such)."""
    try:
        return value.decode(f"cp{codepage}")
    except (LookupError, UnicodeDecodeError):
        return value.decode("cp1252", "replace")
