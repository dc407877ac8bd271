"""Whether the embedding model reads a query's language: the languages a model reads (the
packaged all-MiniLM-L6-v2: English; another model: every language unless the config names
them), and what a query's own letters and function words say about its language. Hybrid search
leans on keywords for a query the model cannot read (vecbook.rank).

No language detector: a query is a few words, and the small detectors misread them (see
docs/design.md). A query is told apart by two signs that hold for a handful of words: a word in a
script other than Latin (Chinese, Cyrillic, Arabic...) is certain, and a Latin-script query
names its language by its function words (the keyword analysis' stop words, with a fuller
English list). A Latin-script query with neither sign (``Steuererklärung Erstattung``) is
undecided here; vecbook.rank decides it from what the two sides of hybrid search found.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from .config import ALL_LANGUAGES, PACKAGED_MODEL_LANGUAGES, PACKAGED_MODEL_NAMES, Config
from .tokens import EMOJI_RE, fold, stop_words, word_re

# Scripts other than Latin, by the first word of their letters' Unicode names, and the
# languages written in each (the names ``embedding_languages`` takes). A model reads a script
# when it reads one of its languages: Han is read by a model that reads Chinese or Japanese.
# Letters of scripts not listed here (symbols such as µ, mathematical letters) count for none.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "CJK": ("chinese", "japanese", "korean"), "IDEOGRAPHIC": ("chinese", "japanese", "korean"),
    "HIRAGANA": ("japanese",), "KATAKANA": ("japanese",), "HANGUL": ("korean",), "BOPOMOFO": ("chinese",),
    "CYRILLIC": ("russian", "ukrainian", "belarusian", "bulgarian", "serbian", "macedonian", "kazakh",
                 "kyrgyz", "mongolian", "tajik"),
    "ARABIC": ("arabic", "persian", "urdu", "pashto", "kurdish"), "HEBREW": ("hebrew", "yiddish"),
    "SYRIAC": ("syriac",), "THAANA": ("dhivehi",), "GREEK": ("greek",), "ARMENIAN": ("armenian",),
    "GEORGIAN": ("georgian",), "ETHIOPIC": ("amharic", "tigrinya"), "THAI": ("thai",), "LAO": ("lao",),
    "KHMER": ("khmer",), "MYANMAR": ("burmese",), "TIBETAN": ("tibetan",),
    "DEVANAGARI": ("hindi", "marathi", "nepali", "sanskrit"), "BENGALI": ("bengali", "assamese"),
    "GURMUKHI": ("punjabi",), "GUJARATI": ("gujarati",), "ORIYA": ("odia",), "TAMIL": ("tamil",),
    "TELUGU": ("telugu",), "KANNADA": ("kannada",), "MALAYALAM": ("malayalam",), "SINHALA": ("sinhala",),
}
# Scripts in which one character is a word: elsewhere a lone letter (α in "TNF-α", a stray
# Cyrillic letter) is a symbol, not a word of the language.
WORD_CHARACTERS = ("CJK", "IDEOGRAPHIC", "HIRAGANA", "KATAKANA", "HANGUL")
# Latin-script languages told by their function words: those with a stop-word list in
# vecbook.tokens. English's list there is Lucene's 33 words (the keyword index's): too few to
# outweigh another language's longer list, so its words are counted with these, the rest of
# Snowball's English list (contractions as the keyword words they split into: don't -> don t).
ENGLISH_FUNCTION_WORDS = frozenset(
    "about above after again against all am any aren because been before being below between both can "
    "couldn did didn do does doesn doing don down during each few from further had hadn has hasn have "
    "haven having he her here hers herself him himself his how i isn its itself just ll me more most "
    "mustn my myself nor now off once only other our ours ourselves out over own re same shan she "
    "should shouldn so some than them themselves those through too under until up ve very wasn we were "
    "weren what when where which while who whom why won wouldn you your yours yourself yourselves".split())
# The Latin-script languages with a stop-word list in vecbook.tokens (Russian's is Cyrillic: its
# script tells it).
FUNCTION_WORD_LANGUAGES = ("english", "german", "french", "spanish", "italian", "portuguese", "dutch", "swedish")
# A Latin-script query is in a language the model does not read when it holds at least this
# many function words of one, and more than of any language the model reads: one such word alone
# is often an English word too ("die", "man", "come", "chi").
MIN_FUNCTION_WORDS = 2
# A query's language is read from its first this many characters: a pasted page (up to 10,000)
# would cost ~16 ms, and its start tells its language as well as the rest.
QUERY_CHARS_READ = 2_000


def model_languages(config: Config) -> frozenset[str] | None:
    """The languages the configured embedding model reads (None: every language):
    ``embedding_languages`` where set, else English for the packaged all-MiniLM-L6-v2 and every
    language for any other model (a model chosen in its place is most often a multilingual one)."""
    chosen = config.embedding_languages
    if chosen is None:
        chosen = PACKAGED_MODEL_LANGUAGES if config.embedding_model in PACKAGED_MODEL_NAMES else ALL_LANGUAGES
    return None if chosen == ALL_LANGUAGES else frozenset(chosen)


def reads_query(text: str, languages: frozenset[str] | None) -> bool | None:
    """Whether a model that reads ``languages`` (None: all) reads the query ``text``: False when
    it holds a word in a script none of whose languages the model reads, or at least
    MIN_FUNCTION_WORDS function words of a Latin-script language it does not read (none of them
    a function word of one it reads) and fewer of any it reads; True when it holds at least as
    many of a language the model reads, or its words are all in scripts it reads; also False for
    a query of emoji without a letter (``🍕``, ``🎂 30``): a model named by its languages is
    taken to read none (the packaged one reads each as an unknown token); None when its words do
    not tell (a few nouns, numbers)."""
    if languages is None:
        return True
    scripts, latin = _words_by_script(text[:QUERY_CHARS_READ])
    if any(languages.isdisjoint(SCRIPTS[script]) for script in scripts):
        return False
    if not latin:
        return True if scripts else (False if EMOJI_RE.search(text[:QUERY_CHARS_READ]) else None)
    read, unread = _function_words(latin, languages)
    if unread >= MIN_FUNCTION_WORDS and unread > read:
        return False
    if read:
        return True
    return True if scripts and not unread else None


def _words_by_script(text: str) -> tuple[set[str], list[str]]:
    """The scripts other than Latin that ``text`` has words in (SCRIPTS' keys), and its
    Latin-script words as written."""
    scripts: set[str] = set()
    latin: list[str] = []
    for word in word_re().findall(text.replace("_", " ")):
        for script, run in _runs(word):
            if script == "LATIN":
                latin.append(run)
            elif script in SCRIPTS and (len(run) > 1 or script in WORD_CHARACTERS):
                scripts.add(script)
    return scripts, latin


def _runs(word: str) -> list[tuple[str, str]]:
    """``word`` cut where its letters' script changes: (script, letters). Digits and marks
    belong to no run (``MUC1``: ``MUC``; a Devanagari vowel sign is not a letter of its own)."""
    runs: list[tuple[str, str]] = []
    for char in word:
        script = _script(char)
        if script is None:
            continue
        if runs and runs[-1][0] == script:
            runs[-1] = (script, runs[-1][1] + char)
        else:
            runs.append((script, char))
    return runs


@lru_cache(maxsize=4096)
def _script(char: str) -> str | None:
    """The script of a letter (the first word of its Unicode name; LATIN for full-width Latin
    letters too), or None for a digit, a mark or anything else."""
    if not unicodedata.category(char).startswith("L"):
        return None
    words = unicodedata.name(char, "").split()
    if words[:1] in (["FULLWIDTH"], ["HALFWIDTH"]):
        words = words[1:]
    return words[0] if words else None


def _function_words(latin: list[str], languages: frozenset[str]) -> tuple[int, int]:
    """The most function words the query's Latin-script words hold of one language the model
    reads, and of one it does not, counting for the latter only words that are no function word
    of a language the model reads: Dutch "of", "in" and "men" are English words too. Words of
    one letter (English "a", French "l'", Italian "e") and words in capitals within a query that
    has lower case (IL-6, DNA) are not counted: they are letters and abbreviations as often as
    words."""
    typed_lower = any(word != word.upper() for word in latin)
    words = [fold(word) for word in latin if len(word) > 1 and not (typed_lower and word == word.upper())]
    read_lists, unread_lists = _lists(languages)
    read = max((sum(word in listed for word in words) for listed in read_lists), default=0)
    unread = max((sum(word in listed for word in words) for listed in unread_lists), default=0)
    return read, unread


@lru_cache(maxsize=16)
def _lists(languages: frozenset[str]) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """The function-word lists of the languages the model reads, and those of the others less
    every word of the former."""
    read = [_function_word_list(language) for language in FUNCTION_WORD_LANGUAGES if language in languages]
    known = frozenset().union(*read)
    unread = [_function_word_list(language) - known for language in FUNCTION_WORD_LANGUAGES
              if language not in languages]
    return read, unread


@lru_cache(maxsize=None)
def _function_word_list(language: str) -> frozenset[str]:
    """``language``'s stop words (folded), English's with ENGLISH_FUNCTION_WORDS."""
    listed = stop_words(language)
    return listed | ENGLISH_FUNCTION_WORDS if language == "english" else listed
