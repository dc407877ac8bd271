"""Keyword text: words, Lucene's English stop words, the Porter (1980) stemmer, and the
vocabulary that numbers the terms the keyword index holds."""

from __future__ import annotations

import re
from functools import lru_cache, partial
from typing import Callable, Sequence

import numpy as np

# Lucene's English stop words (the set BEIR's BM25 baseline used): they carry
# no topic, and dropping them keeps postings lists short.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split())
TOKEN_RE = re.compile(r"[^\W_]+")
# The same runs in ASCII text, where [^\W_] is [a-zA-Z0-9]: the plain class matches ~1.7x
# faster than the Unicode one, and most personal text is ASCII.
ASCII_TOKEN_RE = re.compile(r"[a-z0-9]+")
# Texts tokenized together are joined by a NUL between spaces; no word holds it, and both ways
# of cutting words below keep it as a word of its own: the texts' bounds among their words.
BOUND = "\x00"
_BOUNDED_RE = re.compile(TOKEN_RE.pattern + "|" + BOUND)
# ASCII_TOKEN_RE's runs, cut by bytes.translate (every other byte to a space) and split:
# twice as fast as findall on ASCII text.
_ASCII_WORD_BYTES = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" + BOUND else 32 for c in range(256))
JOINED_CHARS = 4_000_000  # characters joined for one findall, at most (unless one text is longer)

# Porter (1980) stemmer, original algorithm; agrees with NLTK's ORIGINAL_ALGORITHM
# mode on every word of 3+ letters in SciFact (30,076 words).
# Suffix tables: (suffix, replacement). Within a step only the first (longest)
# matching suffix is considered; if its condition fails the step does nothing,
# as the paper prescribes. Order matters where one suffix ends another.
_STEP1A: tuple[tuple[str, str], ...] = (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", ""))
_STEP2: tuple[tuple[str, str], ...] = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("abli", "able"), ("alli", "al"), ("entli", "ent"),
    ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
    ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
_STEP3: tuple[tuple[str, str], ...] = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"),
    ("ical", "ic"), ("ful", ""), ("ness", ""),
)
_STEP4: tuple[tuple[str, str], ...] = tuple((s, "") for s in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
    "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
))

# Map every ASCII char to 'c' (consonant) or 'v' (vowel); 'y' is context-dependent.
_CV_TABLE: dict[int, str] = {
    i: "v" if chr(i) in "aeiou" else "y" if chr(i) == "y" else "c" for i in range(128)}


def _cv(s: str) -> str:
    """Consonant/vowel pattern of s, e.g. 'toy' -> 'cvc'."""
    cv = s.translate(_CV_TABLE)
    if "y" not in cv:
        return cv
    chars = list(cv)
    for i, ch in enumerate(chars):
        if ch == "y":  # Porter: y is a vowel only when it follows a consonant
            chars[i] = "v" if i and chars[i - 1] == "c" else "c"
    return "".join(chars)


def _m(s: str) -> int:
    # [C](VC){m}[V]: each vowel->consonant transition is one VC pair.
    return _cv(s).count("vc")


def _has_vowel(s: str) -> bool:
    return "v" in _cv(s)


def _ends_double_c(s: str) -> bool:
    return len(s) >= 2 and s[-1] == s[-2] and _cv(s)[-1] == "c"


def _ends_cvc(s: str) -> bool:
    # *o: stem ends consonant-vowel-consonant, last one not w/x/y (e.g. -hop, -wil).
    return len(s) >= 3 and _cv(s).endswith("cvc") and s[-1] not in "wxy"


def _apply(w: str, rules: tuple[tuple[str, str], ...], min_m: int) -> str:
    for suffix, repl in rules:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            return stem + repl if min_m == 0 or _m(stem) >= min_m else w
    return w


def _step1b(w: str) -> str:
    if w.endswith("eed"):  # 'eed' blocks the 'ed' rule even when m == 0 (feed)
        return w[:-1] if _m(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            return _step1b_tidy(w[: -len(suffix)])
    return w


def _step1b_tidy(s: str) -> str:
    # Put the e back on -at/-bl/-iz so steps 2-4 can see -ate/-ble/-ize.
    if s.endswith(("at", "bl", "iz")):
        return s + "e"
    if _ends_double_c(s):  # hopp -> hop, but fall/hiss/fizz stay
        return s if s[-1] in "lsz" else s[:-1]
    return s + "e" if _m(s) == 1 and _ends_cvc(s) else s  # fil -> file


def _step1c(w: str) -> str:
    return w[:-1] + "i" if w.endswith("y") and _has_vowel(w[:-1]) else w


def _step4(w: str) -> str:
    # -ion needs a preceding s/t; as the matching suffix, failing that ends the step.
    if w.endswith("ion") and w[-4:-3] not in ("s", "t"):
        return w
    return _apply(w, _STEP4, 2)


def _step5(w: str) -> str:
    if w.endswith("e"):
        m = _m(w[:-1])
        if m > 1 or (m == 1 and not _ends_cvc(w[:-1])):
            w = w[:-1]
    # -ll -> -l only for long stems (controll -> control, roll stays).
    return w[:-1] if w.endswith("ll") and _m(w) > 1 else w


_STEPS: tuple[Callable[[str], str], ...] = (
    partial(_apply, rules=_STEP1A, min_m=0), _step1b, _step1c,
    partial(_apply, rules=_STEP2, min_m=1),
    partial(_apply, rules=_STEP3, min_m=1), _step4, _step5,
)


@lru_cache(maxsize=200_000)
def porter_stem(word: str) -> str:
    """Stem a lowercase ASCII word with the original Porter (1980) algorithm.

    Words of length <= 2 and non-ASCII words are returned unchanged.
    Results are memoised, since token streams repeat words heavily.
    """
    if len(word) <= 2 or not word.isascii():
        return word
    for step in _STEPS:
        word = step(word)
    return word


def words_of(text: str) -> list[str]:
    """Lower-cased runs of letters and digits (``TOKEN_RE``)."""
    lowered = text.lower()
    return (ASCII_TOKEN_RE if lowered.isascii() else TOKEN_RE).findall(lowered)


def tokenize(text: str, stemming: bool = True) -> list[str]:
    """Keyword tokens: lower-cased runs of letters and digits, stop words dropped, Porter-stemmed."""
    words = [w for w in words_of(text) if w not in STOP_WORDS]
    return [porter_stem(w) for w in words] if stemming else words


class Vocabulary:
    """Keyword terms and their ids. Ids never change and the table only grows, so token
    ids stored per passage stay valid across rebuilds (unchanged files are not re-tokenized)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        # Raw lower-cased word -> term id (STOP for a stop word), per stemming setting: text
        # repeats words heavily, so one C-level dict lookup per token (map over the words)
        # replaces three per-token Python steps: the stop-word test, the stemmer's cache and
        # the term lookup, which were the largest cost of a first keyword index.
        self._words: dict[bool, dict[str, int]] = {True: {BOUND: self.BOUND_ID}, False: {BOUND: self.BOUND_ID}}

    STOP = -1
    BOUND_ID = -2  # ``BOUND`` between two texts of ``encode_texts``

    def __len__(self) -> int:
        return len(self.ids)

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """Token ids of ``tokens``, adding new terms."""
        ids = self.ids
        return np.fromiter((ids.setdefault(t, len(ids)) for t in tokens), dtype=np.int32, count=len(tokens))

    def encode_text(self, text: str, stemming: bool = True) -> np.ndarray:
        """Token ids of ``tokenize(text, stemming)``, adding new terms."""
        ids = self._ids(words_of(text), stemming)
        return ids[ids != self.STOP]

    def encode_texts(self, texts: Sequence[str], stemming: bool = True) -> list[np.ndarray]:
        """``encode_text`` of each text (the same ids), from one lower-casing, one cut into words
        and one array over them all: the per-text calls were most of a first keyword index's
        cost (20k records in 196 files: the whole index 0.68 s before, 0.42 s with this)."""
        if len(texts) < 2 or any(BOUND in text for text in texts):  # a NUL would be read as a bound
            return [self.encode_text(text, stemming) for text in texts]
        if sum(map(len, texts)) > JOINED_CHARS:  # a few MB at a time, not a copy of a whole log file
            middle = len(texts) // 2
            return self.encode_texts(texts[:middle], stemming) + self.encode_texts(texts[middle:], stemming)
        lowered = f" {BOUND} ".join(texts).lower()
        if lowered.isascii():
            words = lowered.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()
        else:
            words = _BOUNDED_RE.findall(lowered)
        ids = self._ids(words, stemming)
        kept = ids >= 0  # neither stop words nor bounds
        # Each bound's place among the kept ids: where one text's tokens end and the next's begin.
        ends = np.cumsum(kept)[ids == self.BOUND_ID].tolist()
        tokens = ids[kept]
        return [tokens[a:b] for a, b in zip([0, *ends], [*ends, len(tokens)])]

    def _ids(self, words: list[str], stemming: bool) -> np.ndarray:
        """The id of each word (STOP for a stop word, BOUND_ID for ``BOUND``), learning new ones."""
        known = self._words[stemming]
        found = list(map(known.get, words))
        if None in found:
            # Learn each new word once (in order of first use, so ids are as a word-by-word
            # pass would give them), then look every word up again in C: a Python pass over
            # every word for a few new ones cost more than the lookups themselves.
            for word in [w for w in dict.fromkeys(words) if w not in known]:
                self._learn(word, stemming)
            found = list(map(known.get, words))
        return np.array(found, dtype=np.int32)

    def _learn(self, word: str, stemming: bool) -> None:
        """Note a word not seen before: STOP, or the id of its term (a new term gets the next id)."""
        if word in STOP_WORDS:
            self._words[stemming][word] = self.STOP
        else:
            stem = porter_stem(word) if stemming else word
            self._words[stemming][word] = self.ids.setdefault(stem, len(self.ids))
