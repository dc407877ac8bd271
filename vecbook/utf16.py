"""UTF-16 text told from binary data: by its byte order mark, or, without one, by where its NUL
bytes lie and by what it reads as.

Windows PowerShell 5's ``>`` and Notepad's "Unicode" write UTF-16 after a byte order mark; other
tools (.NET's ``Encoding.Unicode.GetBytes`` written out, some exporters and sync tools, a
``iconv -t UTF-16LE``) write none. Such a note's text is half NUL bytes: read as UTF-8 it was
skipped as a binary file (a ``.txt``) or indexed as mojibake (a ``.md``).
"""

from __future__ import annotations

import codecs

# The byte order marks of UTF-16 and the codecs they name.
MARKS = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# Without a mark, a file is UTF-16 only when every NUL byte lies on one side of its code units
# (the high byte: odd offsets in little-endian, even in big-endian), at least this share of its
# code units have one there (the ASCII letters, spaces, digits and line ends of any language's
# text: 13% of a Russian diary's, nearly all of an English one), and what it decodes to is
# text. A picture, a PDF, a database or a zip holds NULs on both sides; a mostly ASCII file
# with a stray NUL has too few to be read as pairs of bytes.
MIN_HIGH_NUL_SHARE = 0.1
# At least this share of the first SAMPLE_CHARS characters decoded must be printable or
# whitespace: 16-bit samples of a sound or numbers of a program decode to control characters.
MIN_PRINTABLE_SHARE = 0.95
SAMPLE_CHARS = 4096


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
    low, high = data[0:end:2].count(0), data[1:end:2].count(0)
    for codec, wrong, right in (("utf-16-le", low, high), ("utf-16-be", high, low)):
        if wrong == 0 and right >= MIN_HIGH_NUL_SHARE * units and _reads_as_text(data, codec, end):
            return codec, 0, end
    return None


def _reads_as_text(data: bytes, codec: str, end: int) -> bool:
    """Whether ``data[:end]`` decodes as ``codec`` into text: no unpaired surrogate, and nearly
    all of its first characters printable or whitespace."""
    try:
        text = data[:end].decode(codec)
    except UnicodeDecodeError:
        return False
    sample = text[:SAMPLE_CHARS]
    shown = sum(char.isprintable() or char.isspace() for char in sample)
    return shown >= MIN_PRINTABLE_SHARE * len(sample)
