"""Where a text may be cut without splitting what a reader sees as one character.

A hit's text cut to ``max_chars`` and a snippet are stretches of a record's text; a cut inside a
grapheme cluster leaves half of it on the page: ``👍🏽`` shown as ``👍`` and a stray skin tone,
``🏳️‍🌈`` as a white flag and a dangling zero-width joiner, ``é`` written e + U+0301 as a bare
``e``, one regional indicator of a flag. The rules are Unicode's extended grapheme clusters
(UAX #29) as far as personal text needs them, from ``unicodedata`` alone (no dependency):
CR LF, combining and spacing marks, zero-width joiners with the pictograph they join, variation
selectors, skin tones, emoji tags and keycaps, flags as pairs of regional indicators, Hangul
jamo, and Indic conjuncts joined by a virama.
"""

from __future__ import annotations

import unicodedata

_ZWJ = "\u200d"
# Characters that extend the cluster before them though their category is not a mark:
# ZWNJ, variation selectors (text/emoji style), skin tones, emoji tag characters (subdivision
# flags), the supplementary variation selectors.
_EXTEND_RANGES = ((0x200C, 0x200D), (0xFE00, 0xFE0F), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F),
                  (0xE0100, 0xE01EF))
# Regional indicators: two make a flag (🇯🇵), counted in pairs from the start of a run.
_RI_FIRST, _RI_LAST = 0x1F1E6, 0x1F1FF
# Viramas that join two consonants into one conjunct (Unicode 15.1's InCB=Linker): क्ष is one.
_LINKERS = frozenset("\u094d\u09cd\u0acd\u0b4d\u0c4d\u0d4d")


def is_boundary(text: str, at: int) -> bool:
    """Whether a cut at ``at`` (0 to ``len(text)``) falls between two grapheme clusters."""
    if at <= 0 or at >= len(text):
        return True
    before, after = text[at - 1], text[at]
    if before == "\r" and after == "\n":
        return False
    if _control(before) or _control(after):
        return True
    if _extends(after):
        return False
    if _hangul_joins(before, after):
        return False
    if before == _ZWJ and unicodedata.category(after) == "So":  # 👨‍👩‍👧, 🏳️‍🌈
        return False
    if unicodedata.category(after) == "Lo" and (before in _LINKERS or (before == _ZWJ and at > 1 and text[at - 2] in _LINKERS)):
        return False
    if _regional(after) and _regional(before):
        run = 0
        while at - run > 0 and _regional(text[at - run - 1]):
            run += 1
        return run % 2 == 0  # an odd run before: ``after`` completes its flag
    return True


def cluster_start(text: str, at: int) -> int:
    """The start of the grapheme cluster holding ``at`` (``at`` itself at a boundary)."""
    while not is_boundary(text, at):
        at -= 1
    return at


def cluster_end(text: str, at: int) -> int:
    """The end of the grapheme cluster holding ``at`` (``at`` itself at a boundary)."""
    while not is_boundary(text, at):
        at += 1
    return at


def whole_clusters(text: str, start: int, end: int, limit: int) -> tuple[int, int]:
    """``[start, end)`` moved to grapheme boundaries, at most ``limit`` long when it was: its end
    back to the start of the cluster it splits, its start back to the start of its cluster
    where that still fits (a matched word that starts inside a cluster, 👩 of 👨‍👩‍👧, shows its
    whole cluster), else on to the next one. Empty where no whole cluster fits."""
    end = cluster_start(text, end)
    back = cluster_start(text, start)
    start = back if end - back <= limit else cluster_end(text, start)
    return (start, end) if start <= end else (start, start)


def _extends(char: str) -> bool:
    """A mark, or one of the characters that join the cluster before them."""
    if unicodedata.category(char)[0] == "M":
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _EXTEND_RANGES)


def _control(char: str) -> bool:
    """Line breaks and other controls, which stand alone (U+2028 included); the format
    characters that join clusters (ZWJ, ZWNJ, emoji tags) are not controls here."""
    category = unicodedata.category(char)
    return category in ("Cc", "Zl", "Zp") or (category == "Cf" and not _extends(char))


def _regional(char: str) -> bool:
    return _RI_FIRST <= ord(char) <= _RI_LAST


def _hangul_kind(char: str) -> str:
    """The Hangul syllable type of a character: L, V, T (jamo), LV, LVT (syllables), or ""."""
    code = ord(char)
    if 0x1100 <= code <= 0x115F or 0xA960 <= code <= 0xA97C:
        return "L"
    if 0x1160 <= code <= 0x11A7 or 0xD7B0 <= code <= 0xD7C6:
        return "V"
    if 0x11A8 <= code <= 0x11FF or 0xD7CB <= code <= 0xD7FB:
        return "T"
    if 0xAC00 <= code <= 0xD7A3:
        return "LV" if (code - 0xAC00) % 28 == 0 else "LVT"
    return ""


def _hangul_joins(before: str, after: str) -> bool:
    """Whether two Hangul characters are parts of one syllable (UAX #29 GB6-GB8)."""
    first, second = _hangul_kind(before), _hangul_kind(after)
    if not first or not second:
        return False
    if first == "L":
        return second in ("L", "V", "LV", "LVT")
    if first in ("LV", "V"):
        return second in ("V", "T")
    return second == "T"  # LVT or T
