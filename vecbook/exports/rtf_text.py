"""The text of an RTF body as Outlook stores it in a TNEF attachment (``tnef``): compressed
(MS-OXRTFCP's LZ77 variant, "LZFu") and written as rich text, as plain text wrapped in RTF
(``\\fromtext``), or as HTML wrapped in RTF (``\\fromhtml``, MS-OXRTFEX: the page is rebuilt
and read by ``html_text``). No RTF engine: groups that hold no text (font and colour tables,
pictures, the document's information) are skipped, and the rest is its characters.
"""

from __future__ import annotations

import re
import struct
from typing import Callable

# The dictionary every compressed RTF stream starts from (MS-OXRTFCP 2.1.3.1.1).
PREBUF = (b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript "
          b"\\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par "
          b"\\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx")
COMPRESSED, UNCOMPRESSED = 0x75465A4C, 0x414C454D  # "LZFu", "MELA"
# Destinations whose content is no text of the message.
SKIPPED = frozenset({"fonttbl", "colortbl", "stylesheet", "info", "pict", "objdata", "objclass", "header",
                     "footer", "headerl", "headerr", "footerl", "footerr", "listtable", "listoverridetable",
                     "rsidtbl", "generator", "themedata", "colorschememapping", "latentstyles", "datastore",
                     "xmlnstbl", "filetbl", "revtbl", "fldinst", "private", "userprops", "mmathpr", "pgdsctbl"})
SYMBOLS = {"par": "\n", "line": "\n", "row": "\n", "sect": "\n", "page": "\n", "tab": "\t", "cell": " ",
           "emdash": "\u2014", "endash": "\u2013", "bullet": "\u2022", "lquote": "\u2018", "rquote": "\u2019",
           "ldblquote": "\u201c", "rdblquote": "\u201d", "emspace": "\u2003", "enspace": "\u2002"}
ESCAPES = {"~": "\u00a0", "_": "\u2011", "-": "", "{": "{", "}": "}", "\\": "\\"}
TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\([^a-zA-Z])|([{}])|[\r\n]+|"
                   rb"([^\\{}\r\n]+)")


def decompress_rtf(data: bytes) -> bytes:
    """A PR_RTF_COMPRESSED value as its RTF; ValueError when it is no such stream. A stream cut
    short gives what it holds."""
    if len(data) < 16:
        raise ValueError("compressed RTF shorter than its header")
    size, raw_size, kind = struct.unpack_from("<III", data)
    if kind == UNCOMPRESSED:
        return data[16:16 + raw_size]
    if kind != COMPRESSED:
        raise ValueError(f"unknown compressed RTF type 0x{kind:08x}")
    window = bytearray(PREBUF.ljust(4096, b" "))
    write, out, at, end = len(PREBUF), bytearray(), 16, min(len(data), size + 4)
    while at < end:
        control, at = data[at], at + 1
        for bit in range(8):
            if at >= end:
                break
            if not control >> bit & 1:
                window[write], write, at = data[at], (write + 1) % 4096, at + 1
                out.append(window[write - 1])
                continue
            if at + 2 > end:
                break
            token, at = data[at] << 8 | data[at + 1], at + 2
            offset, length = token >> 4, (token & 0xF) + 2
            if offset == write:  # the end marker
                return bytes(out[:raw_size])
            for step in range(length):
                byte = window[(offset + step) % 4096]
                window[write], write = byte, (write + 1) % 4096
                out.append(byte)
    return bytes(out[:raw_size])


def rtf_text(rtf: bytes, html_to_text: Callable[[str], str] | None = None) -> str:
    """An RTF body's text; HTML wrapped in RTF rebuilt and read with ``html_to_text`` (a
    function from HTML to text) where one is given."""
    html = b"\\fromhtml" in rtf[:1024]
    text = _characters(rtf, html).replace("\x00", "")  # (Outlook ends the stream with a NUL)
    if html and html_to_text is not None:
        return html_to_text(text)
    return "\n".join(line.rstrip() for line in text.replace("\r", "").split("\n")).strip()


def _characters(rtf: bytes, html: bool) -> str:
    """The characters of the RTF's text (for ``\\fromhtml``, the page's source)."""
    reader = _Reader(html)
    for found in TOKEN.finditer(rtf):
        reader.token(*found.groups())
    reader.emit("")
    # a character past the BMP is written as two \u surrogates: joined here (a lone one is U+FFFD)
    return "".join(reader.out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class _Reader:
    """The state of one RTF read: what is written out, and each open group's state (skipped, its
    ``\\uc`` count of fallback characters, inside an HTML tag, inside ``\\htmlrtf``)."""

    def __init__(self, html: bool) -> None:
        self.html = html
        self.out: list[str] = []
        self.pending = bytearray()  # \'hh bytes, decoded together (a double-byte code page's pairs)
        self.codepage = "cp1252"
        self.stack: list[tuple[bool, int, bool, bool]] = []
        self.skip, self.uc, self.tag, self.suppressed = False, 1, False, False
        self.to_drop = 0  # fallback characters still to skip after a \u
        self.starred = False

    def shown(self) -> bool:
        return not self.skip and not (self.suppressed and not self.tag)

    def emit(self, piece: str) -> None:
        if self.pending:
            self.out.append(self.pending.decode(self.codepage, "replace"))
            self.pending.clear()
        if self.shown():
            self.out.append(piece)

    def token(self, word: bytes | None, number: bytes | None, hexbyte: bytes | None, escaped: bytes | None,
              brace: bytes | None, chars: bytes | None) -> None:
        if self.to_drop and (hexbyte or chars):  # a \u's fallback: one character each
            if hexbyte:
                self.to_drop -= 1
                return
            dropped = min(self.to_drop, len(chars or b""))
            chars, self.to_drop = (chars or b"")[dropped:], self.to_drop - dropped
            if not chars:
                return
        if brace == b"{":
            self.emit("")
            self.stack.append((self.skip, self.uc, self.tag, self.suppressed))
            self.starred = False
        elif brace == b"}":
            self.emit("")
            if self.stack:
                self.skip, self.uc, self.tag, self.suppressed = self.stack.pop()
        elif hexbyte is not None:
            if self.shown():
                self.pending.append(int(hexbyte, 16))
        elif escaped is not None:
            self.starred = escaped == b"*"
            if not self.starred:
                self.emit(ESCAPES.get(escaped.decode("latin-1"), ""))
        elif word is not None:
            self.control(word.decode("ascii").lower(), int(number) if number else None)
        elif chars is not None:
            self.emit(chars.decode(self.codepage, "replace"))

    def control(self, name: str, value: int | None) -> None:
        """A control word: a destination skipped or an HTML tag's, a state, or a character."""
        if self.html and self.starred and name in ("htmltag", "mhtmltag"):
            self.tag, self.skip = name == "htmltag", self.skip or name == "mhtmltag"
        elif self.starred or name in SKIPPED:
            self.skip = True
        elif name == "htmlrtf":
            self.suppressed = value != 0
        elif name == "ansicpg" and value:
            self.codepage = codec(value)
        elif name == "uc" and value is not None:
            self.uc = value
        elif name == "u" and value is not None:
            self.emit(chr(value % 65536) if value % 65536 else "")
            self.to_drop = self.uc
        elif name in SYMBOLS:
            self.emit(SYMBOLS[name])
        self.starred = False


def codec(codepage: int) -> str:
    """Python's codec for a Windows code page number (Windows-1252 where it knows none)."""
    name = {65001: "utf-8", 20127: "cp1252", 28591: "cp1252", 20866: "koi8_r", 21866: "koi8_u",
            936: "gb18030", 950: "big5hkscs", 10000: "mac_roman"}.get(codepage)
    if name is None and 28592 <= codepage <= 28605:
        name = f"iso8859_{codepage - 28590}"
    name = name or f"cp{codepage}"
    try:
        "".encode(name)
    except LookupError:
        return "cp1252"
    return name
