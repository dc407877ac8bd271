"""UTF-16 text told from binary data: by its byte order mark, or, without one, by where its NUL
bytes lie and by what it reads as.

Windows PowerShell 5's ``>`` and Notepad's "Unicode" write UTF-16 after a byte order mark; other
tools (.NET's ``Encoding.Unicode.GetBytes`` written out, some exporters and sync tools, a
``iconv -t UTF-16LE``) write none. Such a note's text is half NUL bytes: read as UTF-8 it was
skipped as a binary file (a ``.txt``) or indexed as mojibake (a ``.md``). A note written without
spaces (Chinese, Japanese, Thai) has too few NULs to tell it by, and is told by its characters.
"""

from __future__ import annotations

import codecs

# The byte order marks of UTF-16 and the codecs they name.
MARKS = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# Without a mark, a file is UTF-16 only when no code unit is all NUL (a picture's, a database's,
# a sound's zeros are), most NUL bytes lie on one side of its code units (the high byte: odd
# offsets in little-endian, even in big-endian; a character such as 一 U+4E00, the ideographic
# space U+3000 or 😀's low surrogate U+DE00 has its NUL on the other), at least this share of
# its code units have one there (the ASCII letters, spaces, digits and line ends of any
# language's text: 13% of a Russian diary's, nearly all of an English one), and what it decodes
# to is text. A zip's or a PDF's compressed bytes hold too few NULs, and a mostly ASCII file with
# a stray NUL too few to be read as pairs of bytes.
MIN_HIGH_NUL_SHARE = 0.1
# NULs on the other side: at most this share of the high side's (a Japanese note's ideographic
# spaces and 一 are a few in a hundred characters, its ASCII at least ten), and then the high
# side's NULs come two in a row at least this share of the time (13% of a Russian diary's ASCII:
# ", ", ".\n"; nearly all of an English one's; a NUL-separated list of words has almost none, and
# as many NULs on each side).
MAX_WRONG_SHARE = 1 / 3
MIN_RUN_SHARE = 0.1
# At least this share of the first SAMPLE_CHARS characters decoded must be printable or
# whitespace: 16-bit samples of a sound or numbers of a program decode to control characters,
# unassigned code points and lone surrogates. Only that sample is decoded here, so a note is
# decoded once in full (by the caller), and a bad code unit past it or among it (a lone
# surrogate: text cut inside an emoji) is the caller's U+FFFD on that line, as with a mark.
MIN_PRINTABLE_SHARE = 0.95
SAMPLE_CHARS = 4096
# A NUL byte as 1, any other as 0 (``_has_nul_unit``).
_NUL_BIT = bytes.maketrans(bytes(range(256)), b"\x01" + bytes(255))
# Chinese, Japanese and Thai are written without spaces: such a note's NULs may be its line ends
# alone, far fewer than MIN_HIGH_NUL_SHARE (2 in 60 code units of a Chinese diary). It is UTF-16
# still when its first bytes without their NULs are no UTF-8 text (an ASCII or UTF-8 note with a
# stray NUL or zeros after its end is, and its pairs of letters would read as CJK ideographs:
# "Bush hid the facts") and, in one byte order only, nearly all (MIN_PRINTABLE_SHARE) of its
# first characters lie in these blocks: ASCII, Latin, Greek and Cyrillic, Thai, punctuation and
# symbols, CJK punctuation, kana and ideographs, Hangul, full-width forms (and any character past
# U+FFFF: emoji, rare ideographs). Binary data decodes to others a time in three (and to lone
# surrogates), as such a note does in the other byte order (U+4E0A 上 is U+0A4E there); text in
# an 8-bit encoding (Latin-1) with a stray NUL mostly reads as these in both orders, and stays
# binary. Fewer code units than this say too little to be told from binary so (b"\x00\x01": Ā).
MIN_SPACELESS_UNITS = 4
SCRIPT_BLOCKS = ((0x09, 0x0D), (0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x4FF), (0xE00, 0xE7F), (0x2000, 0x2BFF),
                 (0x3000, 0x33FF), (0x3400, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFE10, 0xFE4F),
                 (0xFF00, 0xFFEF), (0x10000, 0x10FFFF))


def utf16_codec(data: bytes) -> tuple[str, int, int] | None:
    """Where ``data``'s UTF-16 text lies, as (codec, start, end): after its byte order mark to
    the end, or, without a mark, text told so (``_markless``) up to the NUL bytes that pad it;
    None when ``data`` is no UTF-16."""
    for mark, codec in MARKS:
        if data.startswith(mark):
            return codec, len(mark), len(data)
    return _markless(data) if b"\x00" in data else None


def _markless(data: bytes) -> tuple[str, int, int] | None:
    end = len(data.rstrip(b"\x00"))
    end += end % 2  # the high byte of little-endian text's last character is a NUL
    units = end // 2
    if not units or end > len(data):
        return None
    lows, highs = data[0:end:2], data[1:end:2]
    low, high = lows.count(0), highs.count(0)
    for codec, wrong, right, side in (("utf-16-le", low, high, highs), ("utf-16-be", high, low, lows)):
        if (right >= MIN_HIGH_NUL_SHARE * units and _few_elsewhere(wrong, right, side)
                and not _has_nul_unit(lows, highs) and _reads_as_text(_sample(data, codec, end))):
            return codec, 0, end
    return _spaceless(data, end, lows, highs)


def _few_elsewhere(wrong: int, right: int, side: bytes) -> bool:
    """Whether ``wrong`` NULs off the high side are few enough beside ``right`` on it (``side``, the
    high bytes): none, or at most MAX_WRONG_SHARE of them where the high side's NULs come in runs
    (twice at least), as an ASCII word's, a ", " or a CR LF do (a list of words between NULs has
    them one by one)."""
    if wrong == 0:
        return True
    return wrong <= MAX_WRONG_SHARE * right and side.count(b"\x00\x00") >= max(2, MIN_RUN_SHARE * right)


def _has_nul_unit(lows: bytes, highs: bytes) -> bool:
    """Whether a code unit is two NUL bytes, which no text's is: a NUL at the same place in its
    even bytes (``lows``) and its odd ones (``highs``). Each side's NULs become one bits of an
    integer, and the two are ANDed: 4 times faster than counting an array's zero units."""
    even, odd = (int.from_bytes(side.translate(_NUL_BIT), "little") for side in (lows, highs))
    return even & odd != 0


def _sample(data: bytes, codec: str, end: int) -> str:
    """The first SAMPLE_CHARS characters of ``data[:end]`` decoded as ``codec``, a lone surrogate
    kept as itself."""
    decoder = codecs.getincrementaldecoder(codec)("surrogatepass")
    size = min(end, 2 * SAMPLE_CHARS)
    return decoder.decode(data[:size], final=size == end)  # type: ignore[no-any-return]


def _reads_as_text(sample: str) -> bool:
    """Whether nearly all of ``sample``'s characters are printable or whitespace, leaving lone
    surrogates out of the count: one in a short note would tip it, and binary data decodes to
    unassigned and private-use code points as often."""
    shown = sum(char.isprintable() or char.isspace() for char in sample)
    lone = sum("\ud800" <= char <= "\udfff" for char in sample)
    return shown >= MIN_PRINTABLE_SHARE * (len(sample) - lone)


def _spaceless(data: bytes, end: int, lows: bytes, highs: bytes) -> tuple[str, int, int] | None:
    """``data[:end]`` as UTF-16 whose NULs are too few to tell it by (``SCRIPT_BLOCKS``): the one
    byte order that reads as text of those blocks, if only one does."""
    if end < 2 * MIN_SPACELESS_UNITS or _has_nul_unit(lows, highs) or _starts_as_utf8(data):
        return None
    read = [codec for codec in ("utf-16-le", "utf-16-be") if _in_script_blocks(_sample(data, codec, end))]
    return (read[0], 0, end) if len(read) == 1 else None


def _starts_as_utf8(data: bytes) -> bool:
    """Whether ``data``'s first bytes, their NULs left out, decode as UTF-8 text (Thai's UTF-16
    bytes are ASCII's, but half of them the control character U+000E)."""
    try:
        return _reads_as_text(codecs.getincrementaldecoder("utf-8")().decode(
            data[:4 * SAMPLE_CHARS].replace(b"\x00", b"")))
    except UnicodeDecodeError:
        return False


def _in_script_blocks(sample: str) -> bool:
    """Whether nearly all of ``sample``'s characters lie in SCRIPT_BLOCKS."""
    inside = sum(any(first <= ord(char) <= last for first, last in SCRIPT_BLOCKS) for char in sample)
    return inside >= MIN_PRINTABLE_SHARE * len(sample)
