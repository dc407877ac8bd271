"""One Chinese, Japanese or Korean character typed alone as a keyword: found inside longer runs.

The keyword index cuts runs of Han and Hangul into overlapping bigrams (``tokens``), so the
character 伞 of 记得带伞 is indexed only inside the term 带伞, and a query of 伞 alone (people
search 伞, 猫, 雨, 駅, 집 that way) would find only texts where it stands by itself. Here such a
query term is read at query time as every term of the vocabulary that holds the character: its
bigrams that begin or end with it, and the character standing alone. Their postings are joined
into one term (``KeywordIndex.character_postings``), scored as BM25 scores a word: its count in a
passage is the larger of its bigrams' counts that begin and that end with it (a character inside
a run begins one bigram and ends another), plus its lone occurrences: a lower bound, one short
where the character ends one run and begins another (带伞。伞很), as bigrams do not say where a
run ends. Its idf is that of the passages holding any of them, and those passages, the hits, are
exactly the ones holding it. The index itself is unchanged.

Each vocabulary keeps its two-character terms in one array (``CharacterTerms``), made on the
first such query and extended with the terms added since, where a character's bigrams are found.
"""

from __future__ import annotations

import re
import threading
import weakref
from functools import lru_cache
from itertools import compress, islice
from typing import Callable, Collection

import numpy as np

from .tokens import Vocabulary

# The characters a one-character query term is looked for inside bigrams by: the ideographs
# (unified, extension A, the compatibility block and the astral extensions) and the Hangul
# syllables. A lone kana (の, を) or Thai letter is a particle or part of a word, not a word:
# such a query term keeps matching only where it stands alone.
# The ideographs (extension A, the unified block, the compatibility block, the astral extensions)
# and the Hangul syllables.
WORD_CHARACTERS = (("\u3400", "\u4dbf"), ("\u4e00", "\u9fff"), ("\uf900", "\ufaff"), ("\uac00", "\ud7a3"),
                   ("\U00020000", "\U0003134f"))


def is_word_character(term: str) -> bool:
    """Whether the query term ``term`` is one ideograph or Hangul syllable (looked for inside bigrams)."""
    return len(term) == 1 and any(low <= term <= high for low, high in WORD_CHARACTERS)


@lru_cache(maxsize=1)
def word_characters() -> re.Pattern[str]:
    """WORD_CHARACTERS as a pattern, compiled on first need: Python's compiler walks a class's
    ~50,000 code points one by one (~5 ms of CPU), which every start paid, though only a query
    of such a character scans for them."""
    return re.compile("[" + "".join(f"{low}-{high}" for low, high in WORD_CHARACTERS) + "]")


def character_tid(term: str) -> int:
    """The id a word character's joined term goes by among a query's terms: negative, so it is
    no vocabulary term's, and one per character."""
    return -1 - ord(term)


class CharacterTerms:
    """The two-character terms of one vocabulary (the bigrams of its runs), each found by the
    characters it holds. They are kept as one array of the pairs' code points end to end (the
    pair at 2i is the term ``tids[i]``): a character's terms are its places in it, found by one
    numpy comparison, and the vocabulary's terms are never read one by one in Python (a loop over
    180,000 terms took seconds; a regular expression's search of the pairs 30 ms). The vocabulary
    only grows (ids never change): the terms added since it was last read are appended; a lock
    keeps two searches from appending at once."""

    def __init__(self) -> None:
        self.codes = np.zeros(0, dtype=np.uint32)
        self.tids = np.zeros(0, dtype=np.int32)
        self.read = 0  # the vocabulary's terms read so far
        self._lock = threading.Lock()

    def of(self, vocabulary: Vocabulary, char: str, n_terms: int) -> tuple[np.ndarray, np.ndarray]:
        """The ids below ``n_terms`` (an index's terms) of the two-character terms that begin
        with ``char``, and of those that end with it."""
        with self._lock:
            if self.read < n_terms:
                self._extend(vocabulary, n_terms)
            codes, tids = self.codes, self.tids
        places = np.flatnonzero(codes == ord(char))
        found = tids[places // 2]
        kept = found < n_terms
        return found[kept & (places % 2 == 0)], found[kept & (places % 2 == 1)]

    def _extend(self, vocabulary: Vocabulary, n_terms: int) -> None:
        """Read the vocabulary's terms from ``read`` to ``n_terms`` (ids are in insertion order),
        keeping those of two characters not both ASCII: every bigram of a run (a Han or Hangul
        character is always in a run, so a term holding one is its run's bigram or lone
        character). Filtered and joined by loops in C (map, compress, join)."""
        # islice copies the new keys in one C call: no other thread's insert can interleave.
        new = list(islice(vocabulary.ids, self.read, n_terms))
        two = np.fromiter(map(len, new), dtype=np.int64, count=len(new)) == 2
        two &= ~np.fromiter(map(str.isascii, new), dtype=bool, count=len(new))
        pairs = "".join(compress(new, two.tolist())).encode("utf-32-le")
        self.codes = np.concatenate([self.codes, np.frombuffer(pairs, dtype=np.uint32)])
        self.tids = np.concatenate([self.tids, (self.read + np.flatnonzero(two)).astype(np.int32)])
        self.read += len(new)


_maps: weakref.WeakKeyDictionary[Vocabulary, CharacterTerms] = weakref.WeakKeyDictionary()
_maps_lock = threading.Lock()


def character_terms(vocabulary: Vocabulary) -> CharacterTerms:
    """``vocabulary``'s map of bigram terms by character (one per vocabulary, kept while it lives)."""
    with _maps_lock:
        found = _maps.get(vocabulary)
        if found is None:
            found = _maps[vocabulary] = CharacterTerms()
        return found


def character_spans(text: str, start: int, end: int | None, wanted: Collection[str],
                    term: Callable[[str], str | None]) -> list[tuple[int, int, str]]:
    """(start, end, term) of each word character of ``text[start:end]`` whose term (``term``: the
    record's analysis) is one of the one-character query terms in ``wanted``: what snippets centre
    on and highlighting marks, the character alone, not the bigram it was found in."""
    chars = {t for t in wanted if t is not None and is_word_character(t)}
    if not chars:
        return []
    found = []
    for match in word_characters().finditer(text, start, len(text) if end is None else end):
        if (t := term(match.group())) in chars:
            found.append((match.start(), match.end(), t))
    return found
