"""Where a text may be cut without splitting what a reader sees as one character.

A hit's text cut to ``max_chars`` and a snippet are stretches of a record's text; a cut inside a
grapheme cluster leaves half of it on the page: ``👍🏽`` shown as ``👍`` and a stray skin tone,
``🏳️‍🌈`` as a white flag and a dangling zero-width joiner, ``é`` written e + U+0301 as a bare
``e``, one regional indicator of a flag, half of a Devanagari conjunct. The clusters are Unicode's
extended grapheme clusters (UAX #29), as the ``regex`` module's ``\\X`` finds them (it comes with
sentence-transformers' tokenizers and follows each Unicode release).
"""

from __future__ import annotations

import bisect
from functools import lru_cache
from typing import Any

# Clusters are found from a point known to lie between two: a line's start (a line break stands
# alone), or, in a line longer than this, a point between two characters of Grapheme_Cluster_Break
# Other (letters of most scripts, CJK, digits, spaces, punctuation, a pictograph: no rule of
# UAX #29 joins two of them), at most this far before the point asked about. (ASCII pairs alone
# left a line of Chinese or Japanese scanned from its start for every cut: 0.2 s a cut at 100,000
# characters.)
_REACH = 256


def is_boundary(text: str, at: int) -> bool:
    """Whether a cut at ``at`` (0 to ``len(text)``) falls between two grapheme clusters."""
    if at <= 0 or at >= len(text) or _between_ascii(text, at):
        return True
    bounds = _bounds_around(text, at)
    index = bisect.bisect_left(bounds, at)
    return index < len(bounds) and bounds[index] == at


def cluster_start(text: str, at: int) -> int:
    """The start of the grapheme cluster holding ``at`` (``at`` itself at a boundary)."""
    if at <= 0 or at >= len(text) or _between_ascii(text, at):
        return max(0, min(at, len(text)))
    bounds = _bounds_around(text, at)
    return bounds[bisect.bisect_right(bounds, at) - 1]


def cluster_end(text: str, at: int) -> int:
    """The end of the grapheme cluster holding ``at`` (``at`` itself at a boundary)."""
    if at <= 0 or at >= len(text) or _between_ascii(text, at):
        return max(0, min(at, len(text)))
    bounds = _bounds_around(text, at)
    return bounds[bisect.bisect_left(bounds, at)]


def whole_clusters(text: str, start: int, end: int, limit: int) -> tuple[int, int]:
    """``[start, end)`` moved to grapheme boundaries, at most ``limit`` long when it was: its end
    back to the start of the cluster it splits, its start back to the start of its cluster
    where that still fits (a matched word that starts inside a cluster, 👩 of 👨‍👩‍👧, shows its
    whole cluster), else on to the next one. Empty where no whole cluster fits."""
    end = cluster_start(text, end)
    back = cluster_start(text, start)
    start = back if end - back <= limit else cluster_end(text, start)
    return (start, end) if start <= end else (start, start)


def clip_columns(text: str, columns: int, ellipsis: str = "...") -> str:
    """``text`` whole where it fits in ``columns`` terminal columns, else its first grapheme
    clusters that fit with ``ellipsis`` after them. A cluster holding a wide character (CJK,
    Hangul, full-width forms, an emoji) takes two columns, as terminals draw it."""
    if text.isascii() and "\r" not in text:  # each character a cluster: no need of ``regex``
        widths = [(end, _columns(character)) for end, character in enumerate(text, 1)]
    else:
        widths = [(found.end(), _columns(found.group())) for found in _patterns()[0].finditer(text)]
    if sum(width for _, width in widths) <= columns:
        return text
    room, end = columns - len(ellipsis), 0
    for cluster_end_at, width in widths:
        if width > room:
            break
        room, end = room - width, cluster_end_at
    return text[:end] + ellipsis


def _columns(cluster: str) -> int:
    """Terminal columns of one grapheme cluster: two for East Asian wide or full-width, an emoji
    with its presentation selector, or a flag; none for a lone control or format character."""
    import unicodedata

    first = cluster[0]
    if unicodedata.east_asian_width(first) in "WF" or "\ufe0f" in cluster or "\U0001f1e6" <= first <= "\U0001f1ff":
        return 2
    return 0 if unicodedata.category(first) in ("Cc", "Cf") else 1


def _between_ascii(text: str, at: int) -> bool:
    """Whether ``at`` (inside ``text``) lies between two ASCII characters other than CR LF: of
    UAX #29's rules that join two characters only CR LF's applies to ASCII (no ASCII character is
    an extending mark, a joiner, a prepended sign, Hangul or a regional indicator), so such a point
    is a boundary, told without the ``regex`` module (whose import and patterns cost ~20 ms of a
    one-off search)."""
    pair = text[at - 1:at + 1]
    return pair.isascii() and pair != "\r\n"


def _bounds_around(text: str, at: int) -> list[int]:
    """The cluster boundaries from a known one before ``at`` to the first one after it (``at``
    is inside ``text``)."""
    low = _known_boundary(text, at)
    bounds = [low]
    for found in _patterns()[0].finditer(text, low):
        bounds.append(found.end())
        if found.end() > at:
            break
    return bounds


def _known_boundary(text: str, at: int) -> int:
    """A boundary before ``at``: its line's start (before a CR LF, which is one cluster), or a
    point between two characters no rule joins within ``_REACH`` of it."""
    line_start = text.rfind("\n", 0, at - 1) + 1
    if at - line_start <= _REACH:
        return line_start
    found = _patterns()[1].search(text, at - _REACH, at)
    return found.start() if found is not None else line_start


@lru_cache(maxsize=1)
def _patterns() -> tuple[Any, Any]:
    """``\\X``, and (searched backwards) a point between two characters of Grapheme_Cluster_Break Other."""
    import regex  # only cutting a text needs it

    return (regex.compile(r"\X", regex.DOTALL),
            regex.compile(r"(?r)(?<=\p{Grapheme_Cluster_Break=Other})(?=\p{Grapheme_Cluster_Break=Other})"))
