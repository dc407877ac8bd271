"""ISO-2022-JP and EUC-JP as Windows mail apps write them (Microsoft's CP50221 and CP51932), codecs for
the mail readers.

Outlook, Thunderbird and Becky! on Windows write NEC's special characters (①, ㈱, Ⅱ: JIS
row 13) and IBM extensions into mail labelled ISO-2022-JP, and half-width katakana after
``ESC ( I``; Python's ``iso2022_jp`` codecs reject them, which cost the whole part. As browsers
and mail apps do, each two-byte JIS character is read through its Shift_JIS form as CP932.
"""

from __future__ import annotations

import codecs
import re

NAME = "cp50221"
EUC_NAME = "cp51932"  # (EUC-JP as Windows writes it: ``decode_euc``)
# The escape sequences: ESC ( B / ESC ( J: ASCII (JIS Roman); ESC $ @ / ESC $ B: JIS X 0208
# (two bytes a character); ESC ( I: half-width katakana (one byte).
ESCAPE = re.compile(rb"\x1b(\(B|\(J|\$@|\$B|\(I)")
TWO_BYTE = (b"$@", b"$B")


def decode(data: bytes, errors: str = "strict") -> tuple[str, int]:
    """The text of ISO-2022-JP bytes, Windows extensions included (a ``codecs`` decoder)."""
    data = bytes(data)
    out: list[str] = []
    mode, at = b"(B", 0
    for found in [*ESCAPE.finditer(data), None]:
        end = found.start() if found else len(data)
        out.append(_run(data[at:end], mode, errors))
        if found:
            mode, at = found.group(1), found.end()
    return "".join(out), len(data)


def _run(chunk: bytes, mode: bytes, errors: str) -> str:
    """One run of bytes between escape sequences, in the mode the last one set."""
    if mode == b"(I":
        return bytes(b + 0x80 if 0x21 <= b <= 0x5F else b for b in chunk).decode("cp932", errors)
    if mode not in TWO_BYTE:
        return chunk.decode("ascii", errors)
    text: list[str] = []
    for piece in re.split(rb"([\r\n]+)", chunk):  # a line break inside a two-byte run stays a break
        even = 0 if piece[:1] in (b"\r", b"\n") else len(piece) // 2 * 2
        text.append(_sjis(piece[:even], errors) + piece[even:].decode("ascii", errors))
    return "".join(text)


def _sjis(pairs: bytes, errors: str) -> str:
    """JIS X 0208 byte pairs, each moved to its Shift_JIS form and read as CP932."""
    out = bytearray()
    for high, low in zip(pairs[::2], pairs[1::2]):
        lead = (high - 0x21) // 2 + 0x81
        lead += 0x40 if lead >= 0xA0 else 0
        trail = low - 0x21 + (0x40 if high & 1 else 0x9F)
        trail += 1 if high & 1 and trail >= 0x7F else 0
        out += bytes([lead & 0xFF, trail & 0xFF])
    return bytes(out).decode("cp932", errors)


# EUC-JP's pieces: a JIS X 0208 pair (each byte 0x80 above JIS), half-width katakana after 0x8E, a JIS X
# 0212 character after 0x8F, and a run of other bytes.
EUC_PIECE = re.compile(rb"((?:[\xa1-\xfe][\xa1-\xfe])+)|\x8e([\xa1-\xdf])|(\x8f[\xa1-\xfe][\xa1-\xfe])"
                       rb"|([^\x8e\x8f\xa1-\xfe]+|.)", re.S)


def decode_euc(data: bytes, errors: str = "strict") -> tuple[str, int]:
    """The text of EUC-JP bytes as Windows writes them (CP51932: NEC's ① and ㈱ in row 13, which
    Python's ``euc_jp`` lacks), each JIS X 0208 pair read through its Shift_JIS form as CP932."""
    data = bytes(data)
    try:
        return data.decode("euc_jp"), len(data)  # (most mail: the fast way)
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    for pairs, kana, supplement, other in (found.groups() for found in EUC_PIECE.finditer(data)):
        if pairs:
            out.append(_sjis(bytes(b - 0x80 for b in pairs), errors))
        elif kana:
            out.append(kana.decode("cp932", errors))
        else:
            out.append((supplement or other).decode("euc_jp", errors))
    return "".join(out), len(data)


def encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
    """Text as CP50221 bytes (a ``codecs`` encoder: ``email.header`` checks a charset with it)."""
    out, mode = bytearray(), b"(B"
    for char in text:
        code = char.encode("cp932", errors)
        if len(code) == 1:
            wanted, code = (b"(B", code) if code[0] < 0x80 else (b"(I", bytes([code[0] - 0x80]))
        else:
            high, low = code[0] - (0x40 if code[0] >= 0xE0 else 0), code[1]
            row = (high - 0x81) * 2 + 0x21 + (1 if low >= 0x9F else 0)
            cell = low - 0x7E if low >= 0x9F else low - 0x1F - (1 if low >= 0x80 else 0)
            wanted, code = b"$B", bytes([row, cell])
        out += (b"\x1b" + wanted if wanted != mode else b"") + code
        mode = wanted
    return bytes(out + (b"\x1b(B" if mode != b"(B" else b"")), len(text)


def _search(name: str) -> codecs.CodecInfo | None:
    if name == EUC_NAME:
        return codecs.CodecInfo(lambda text, errors="strict": (text.encode("euc_jis_2004", errors), len(text)),
                                decode_euc, name=EUC_NAME)
    return codecs.CodecInfo(encode, decode, name=NAME) if name == NAME else None


codecs.register(_search)
