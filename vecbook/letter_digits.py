"""Letters and digits written together in Chinese, Japanese or Korean text: also found apart.

Chinese and Japanese write a model's name and its number as one word (``iPhone15を買った``,
``我的iPhone15坏了``), and a Japanese phone keyboard types them in full-width forms
(``ｉＰｈｏｎｅ１５``), where an English note or query spaces them (``iPhone 15``). In a text that
holds a script written without spaces or full-width forms (``tokens`` decides which), such a word
is kept and followed by its runs of letters and of digits, as Lucene's word delimiter filter
splits them with its original preserved: ``iphone15`` is also ``iphone`` and ``15``. Elsewhere
(every English text) a word stays one term, so English terms and scores are as they were.
"""

from __future__ import annotations

import re
from typing import Sequence

# A longer run of letters and digits is a hash or an identifier, not a name and its number: it
# stays one term (a pasted 40-character hash would else become 20 terms).
MAX_SPLIT_CHARS = 24
_RUN_RE = re.compile(r"[a-z]+|[0-9]+")
_MIXED_RE = re.compile(r"[a-z][0-9]|[0-9][a-z]")  # a letter beside a digit, somewhere


def may_hold_mixed(low: str) -> bool:
    """Whether a lower-cased text may hold a ``mixed`` word (one scan in C: most CJK text has none)."""
    return _MIXED_RE.search(low) is not None


def mixed(word: str) -> bool:
    """Whether a lower-cased word is ASCII letters and digits, both, of at most MAX_SPLIT_CHARS."""
    return (len(word) <= MAX_SPLIT_CHARS and word.isascii() and word.isalnum()
            and not word.isalpha() and not word.isdigit())


def with_parts(words: Sequence[str]) -> list[str]:
    """``words`` with each ``mixed`` one followed by its runs of letters and of digits."""
    out: list[str] = []
    for word in words:
        out.append(word)
        if mixed(word):
            out += _RUN_RE.findall(word)
    return out


def bounded_with_parts(words: list[str], bound: str, parted: Sequence[int]) -> list[str]:
    """``words`` of texts joined by ``bound`` words, with ``with_parts`` of the texts numbered
    ``parted`` (ascending) alone: their bounds are found by ``list.index`` (a scan in C) and only
    their words are read in Python (a pass over every word made a Chinese batch 1.3x as slow)."""
    out: list[str] = []
    start = text = copied = 0  # ``start``: the first word of the text numbered ``text``
    for wanted in parted:
        while text < wanted:
            start = words.index(bound, start) + 1
            text += 1
        try:
            end = words.index(bound, start)
        except ValueError:  # the last text
            end = len(words)
        out += words[copied:start]
        out += with_parts(words[start:end])
        copied = end
    return out + words[copied:]


def spans_with_parts(spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``with_parts`` of (start, end, word) spans, each part at its own place in the text (width
    folding keeps one character for one, so a word's offsets are its characters')."""
    out: list[tuple[int, int, str]] = []
    for start, end, word in spans:
        out.append((start, end, word))
        if mixed(word):
            out += [(start + run.start(), start + run.end(), run.group()) for run in _RUN_RE.finditer(word)]
    return out
