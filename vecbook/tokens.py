"""Keyword text analysis: words (marks kept with their letters; each emoji a word of its own),
accent folding, overlapping character bigrams for scripts written without spaces, stop words and
Snowball stemmers by language, and the vocabulary that numbers the terms the keyword index holds.

The analysis of one word is ``fold`` (lower case, accents off) -> stop word? -> stem, so a
word typed with or without its accents gives the same term. Han, Hiragana, Katakana, Hangul,
Thai, Lao, Khmer and Myanmar runs are cut into overlapping bigrams of characters (one
character alone is a unigram), as Lucene's CJK bigram filter does: any word of two or more
characters inside a clause is found, and a query's bigrams are scored as BM25 over terms.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Iterator, Sequence

import numpy as np

from .config import DEFAULT_LANGUAGE, LANGUAGES, Config
from .han_variants import HAN_RE, han_folds
from .letter_digits import bounded_with_parts, may_hold_mixed, spans_with_parts, with_parts

# Each language's Snowball algorithm (PyStemmer); English keeps the original Porter (1980)
# stemmer the keyword index always used (Snowball's "porter": the same stems, see the tests),
# not Snowball's newer "english", so English scores stay as they were. "none": no stemmer.
STEMMERS: dict[str, str | None] = {name: name for name in LANGUAGES}
STEMMERS.update({"english": "porter", "none": None})
# A word longer than this is kept as its first MAX_TERM_CHARS characters, unstemmed: a run of
# base64 or a pasted hash is not a word, and one giant term would hold megabytes.
MAX_TERM_CHARS = 100
MEMO_WORDS = 200_000  # words whose term each Analysis remembers, at most

# Scripts written without spaces between words, cut into character bigrams. Han (with its
# iteration marks), Hiragana, Katakana (full and half width), Hangul (syllables and jamo),
# Thai, Lao, Khmer and Myanmar. Korean does space its phrases, but a particle sticks to its
# noun (서울에서 "in Seoul"), so bigrams find the noun inside the phrase. The digits of Thai, Lao,
# Myanmar and Khmer are left out, as ASCII digits are: a number is one word (๒๕๖๗ is 2567 once its
# digits fold, not the bigrams 25 56 67, which found no 2567 and matched every 25 and 56).
SEGMENTED = ("\u0e00-\u0e4f\u0e5a-\u0ecf\u0eda-\u0eff\u1000-\u103f\u104a-\u108f\u109a-\u109f"
             "\u1100-\u11ff\u1780-\u17df\u17ea-\u17ff\u19e0-\u19ff\u2e80-\u2fdf"
             "\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
             "\u4e00-\u9fff\ua960-\ua97f\ua9e0-\ua9ef\ua9fa-\ua9ff\uaa60-\uaa7f\uac00-\ud7ff\uf900-\ufaff"
             "\uff66-\uffdc\U00020000-\U0003134f")
SEGMENTED_RE = re.compile(f"[{SEGMENTED}]")
# Emoji and the pictographs beside them (technical symbols such as ⌘ and ⏰, the miscellaneous
# symbols and dingbats ☀ ✈ ❤ ✓ ➡, ⭐, and U+1F000-1FAFF), each a word of its own, as Lucene's
# standard tokenizer keeps them: 🍕 finds the messages holding it. Any other sign is one too where
# the emoji variation selector follows it (©️, ▶️, ↔️, #️⃣), as phones send them; without it the
# Arrows block, geometric shapes and box drawing stay separators: in notes they are bullets and
# rules. A word takes the skin tones, variation selectors and keycap frame after its emoji, which
# fold away (👍🏽 is 👍, ❤️ is ❤, #️⃣ is #); the regional indicators pair into a flag (🇩🇪,
# FLAG_PAIR); a zero-width joiner parts the emoji of a sequence (👨‍👩‍👧 is 👨 👩 👧).
EMOJI = ("\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001f1e5\U0001f200-\U0001f3fa"
         "\U0001f400-\U0001faff")
SKIN_TONES = "\U0001f3fb-\U0001f3ff"
FLAG_PAIR = "[\U0001f1e6-\U0001f1ff]{1,2}"
EMOJI_WORD = f"(?:[{EMOJI}]|[^\\s\\w\\x00](?=\ufe0f))[\ufe0f\u20e3{SKIN_TONES}]*"
EMOJI_RE = re.compile(f"{FLAG_PAIR}|{EMOJI_WORD}")
TOKEN_RE = re.compile(r"[^\W_]+")  # letters and digits; ``word_re`` adds the marks that belong to them
# ASCII text, where [^\W_] is [a-zA-Z0-9] and there are no marks: the plain class matches
# ~1.7x faster than the Unicode one, and most personal text is ASCII.
ASCII_TOKEN_RE = re.compile(r"[a-z0-9]+")
# Texts tokenized together are joined by a NUL between spaces; no word holds it, and both ways
# of cutting words below keep it as a word of its own: the texts' bounds among their words.
BOUND = "\x00"
# ASCII_TOKEN_RE's runs, cut by bytes.translate (every other byte to a space) and split:
# twice as fast as findall on ASCII text.
_ASCII_WORD_BYTES = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" + BOUND else 32 for c in range(256))
JOINED_CHARS = 4_000_000  # characters joined for one findall, at most (unless one text is longer)

# Folding: marks removed after canonical decomposition. Only the diacritics of Latin, Greek and
# Cyrillic (U+0300-036F), Hebrew points and Arabic vowel marks (people type both without them),
# not the marks that are letters' vowels elsewhere (Devanagari, Thai, Japanese dakuten: removing
# those would merge different words). Letters with no decomposition are mapped as ASCII folding
# does; Turkish dotless ı folds to i, as dotted İ does (İ is i + U+0307). The Devanagari nukta
# goes too, and chandrabindu is anusvara, as Lucene's Hindi normalizer has them: Hindi writes
# ज़ and ज, हाँ and हां for one word (the nukta of Bengali stays: there য় and য are two letters).
_FOLDED_MARKS = [*range(0x300, 0x370), *range(0x591, 0x5c8), *range(0x610, 0x61b), *range(0x64b, 0x660), 0x670, 0x640,
                 0x93c, 0xad, 0x2060,  # the nukta; the soft hyphen and word joiner (IN_WORD_FORMAT)
                 *range(0xfe00, 0xfe10), 0x20e3,  # variation selectors (❤️ is ❤) and the keycap (1️⃣ is 1)
                 *range(0x1f3fb, 0x1f400)]  # skin tones (👍🏽 is 👍)
_FOLD_TABLE: dict[int, str | None] = {**dict.fromkeys(_FOLDED_MARKS), **{ord(k): v for k, v in {
    "ß": "ss", "ẞ": "ss", "ı": "i", "ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe",
    "ŀ": "l", "ħ": "h", "ſ": "s", "ς": "σ",
    # Arabic and Persian letter forms people type for one another, as Lucene's Arabic and Persian
    # normalizers fold them: alef maksura and Persian yeh are yeh, teh marbuta heh, keheh kaf,
    # and Persian heh with yeh ۀ (ae ە once NFD parts its hamza) and Urdu heh goal ہ are heh.
    "ى": "ي", "ی": "ي", "ة": "ه", "ک": "ك", "\u06d5": "ه", "\u06c1": "ه", "\u0901": "\u0902"}.items()},
    # Decimal digits of every script are ASCII ones, as Lucene's DecimalDigitFilter has them: an
    # Arabic phone types ١٠ (and a Persian one ۱۰) where a note says 10. The two ranges hold every
    # such digit of the Basic Multilingual Plane but the full-width ones (width folding has those),
    # and are scanned in 2 ms at import, not the 30 ms of the whole plane.
    **{code: str(unicodedata.digit(chr(code))) for block in (range(0x660, 0x1C5A), range(0xA620, 0xABFA))
       for code in block if unicodedata.category(chr(code)) == "Nd"},
    # Katakana are hiragana, as Groonga's unify_kana folds them: Japanese writes one word in
    # either (りんご and リンゴ, ねこ and ネコ, a word typed before its conversion to katakana).
    # The voicing marks stay (NFD has them apart, NFC puts them back: ガ is が, not か); ァ-ヶ and
    # the iteration marks ヽヾ have hiragana 0x60 below them, ヷ-ヺ and the long-vowel mark ー none.
    **{code: chr(code - 0x60) for code in (*range(0x30A1, 0x30F7), 0x30FD, 0x30FE)}}


# The digits above U+FFFF (Adlam, Hanifi Rohingya, the mathematical bold 𝟏𝟎 of "fancy text") are
# folded by ``fold`` where a word holds such a character: a table of them would scan 1M code points.
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")
# What sends a word down ``fold``'s longer path: an ideograph of the Basic Multilingual Plane (the
# Chinese table, ``han_variants``) or any character above U+FFFF (an emoji, such digits, an
# ideograph of the extensions). One scan for both: other scripts pay nothing for the table.
_HAN_OR_ASTRAL_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\U00010000-\U0010ffff]")


# Width folding, as Lucene's CJKWidthFilter and NFKC do it, one character for one (so a text's
# offsets stay its own): full-width Latin letters, digits and signs (ＡＢＣ, １０) are their
# ASCII selves, half-width katakana and Hangul (ｶﾀｶﾅ, its ﾞ voicing mark) their full-width
# forms, the ideographic space a space. Phones and Japanese input methods write both widths.
_WIDTH_TABLE: dict[int, str] = {code: folded for code in (*range(0xFF01, 0xFFEF), 0x3000)
                                if len(folded := unicodedata.normalize("NFKC", chr(code))) == 1}
_WIDE_RE = re.compile("[\u3000\uff01-\uffee]")  # a scan in C: most non-ASCII text has none


_DEAD_N = "\u0928\u094d"  # न with virama: n without its vowel


def lowered(text: str) -> str:
    """``text`` as the keyword analysis reads it: lower-cased, and width-folded (``_WIDTH_TABLE``)
    where it holds such forms. Lower-casing may lengthen a letter (İ -> i + dot); width folding
    never changes a length."""
    low = text.lower()
    return low if low.isascii() or not _WIDE_RE.search(low) else low.translate(_WIDTH_TABLE)


def _parted(text: str) -> bool:
    """Whether ``text`` has a word of letters and digits that ``in_context`` cuts into them."""
    return in_context(text) and may_hold_mixed(lowered(text))


def in_context(text: str) -> bool:
    """Whether ``text`` (as written) holds a script written without spaces or full-width forms:
    there a word of letters and digits (iPhone15) is also its letters and its digits (``letter_digits``)."""
    return not text.isascii() and (_WIDE_RE.search(text) is not None or SEGMENTED_RE.search(text) is not None)


@lru_cache(maxsize=1)
def _han_fold_table() -> dict[int, str | None]:
    """``_FOLD_TABLE`` with OpenCC's traditional -> simplified characters and Japanese new forms
    -> their traditional characters' folds (``han_variants``), one translate for a word of all:
    built on the first word holding an ideograph."""
    return {**_FOLD_TABLE, **han_folds()}


def fold(word: str) -> str:
    """A lower-case word without its accents: ``Café`` -> ``cafe``, ``Straße`` -> ``strasse``,
    ``İstanbul`` -> ``istanbul``, ``カメラ`` -> ``かめら``, ``ﬁle`` -> ``file``, ``臺灣`` ->
    ``台湾``. Hangul and kana come back whole (NFC recomposes them), katakana as hiragana, each
    traditional Chinese character as its simplified form (Japanese kanji too, and a Japanese new
    form as its traditional character's: 図書館 is 图书馆, in the query as in the text)."""
    if word.isascii():
        return word.lower()
    # Compatibility decomposition (NFKD; NFC below makes it NFKC, as ICU's folding in Lucene has
    # it): the ligatures and Arabic presentation forms of text copied out of a PDF (ﬁ, ﻻ), the
    # micro sign, superscripts (m²) and Roman numerals are the letters and digits they stand for.
    # Lower-cased after it, as a compatibility letter may stand for a capital (ℌ is H): the lower
    # case of NFKD text is NFKD text (checked over every code point), so no accent stays composed.
    decomposed = unicodedata.normalize("NFKD", word).lower()
    decomposed = decomposed.replace("и\u0306", "й")  # й is a letter of its own
    found = _HAN_OR_ASTRAL_RE.search(decomposed)
    if found is None:  # most words: no ideograph, nothing above U+FFFF
        folded = decomposed.translate(_FOLD_TABLE)
    else:
        folded = _han_or_astral_folded(decomposed, found.group())
    if _DEAD_N in folded:  # हिन्दी is हिंदी: a dead n is written as anusvara too (Lucene's Hindi normalizer)
        folded = folded.replace(_DEAD_N, "\u0902")
    return unicodedata.normalize("NFC", folded)


def _han_or_astral_folded(decomposed: str, first: str) -> str:
    """``decomposed`` (which holds an ideograph or a character above U+FFFF, ``first`` the first
    of them) through the fold table, with each traditional Chinese character as its simplified
    form (臺灣 is 台湾) where it holds an ideograph, and the digits above U+FFFF as ASCII ones."""
    han = first < "\U00010000" or HAN_RE.search(decomposed) is not None  # past U+FFFF, mostly an emoji
    folded = decomposed.translate(_han_fold_table() if han else _FOLD_TABLE)
    if _ASTRAL_RE.search(folded):  # an emoji, mostly; rarely digits (Adlam, bold 𝟏𝟎) the table leaves out
        folded = "".join(str(unicodedata.digit(c)) if unicodedata.category(c) == "Nd" else c for c in folded)
    return folded


# Invisible characters that leave a word whole, as format characters do in Unicode's word
# boundaries (UAX #29): the soft hyphen of web pages and e-books (Steuer\u00aderklärung, copied
# with the text) and the word joiner. Folding drops them. Not the zero-width joiner and
# non-joiner: the first parts emoji sequences, and Persian analysis cuts at the second.
IN_WORD_FORMAT = "\u00ad\u2060"


@lru_cache(maxsize=2)
def word_re(bounded: bool = False) -> re.Pattern[str]:
    """Word characters (``\\w``) with the marks that belong to them (Devanagari vowel signs, Thai
    tone marks, a combining accent) and ``IN_WORD_FORMAT``, which ``\\w`` leaves out and so cut
    words apart; ``bounded``:
    ``BOUND`` too, as a word of its own. The text it reads has its ``_`` made spaces first
    (``words``): one class with no exception matches 1.7x faster than ``[^\\W_]`` and 8x faster
    than an alternation of classes. Only the marks of the Basic Multilingual Plane are in it (all
    of them of living scripts): one character above U+FFFF turns the class into a slow list of
    ranges. They are read from this Python's Unicode tables on the first non-ASCII text (~20 ms).
    Each emoji (``EMOJI``, a flag's pair) is a word of its own, in alternatives tried only where
    the class matches nothing (at each space and sign): a class with them in it would be the slow
    list of ranges."""
    marks = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _mark_ranges())
    found = f"[\\w{marks}{IN_WORD_FORMAT}]+|{FLAG_PAIR}|{EMOJI_WORD}"
    return re.compile(f"{found}|{BOUND}" if bounded else found)


@lru_cache(maxsize=1)
def _mark_ranges() -> list[tuple[int, int]]:
    """(first, last) code points of each run of combining marks (Mn, Mc, Me) below U+10000."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x10000):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return ranges


def words(text: str, bounded: bool = False) -> list[str]:
    """``word_re``'s words of a lower-cased non-ASCII text (an underscore separates words)."""
    return word_re(bounded).findall(text.replace("_", " "))


# -- stop words --

# Lucene's English stop words (the set BEIR's BM25 baseline used): they carry no topic, and
# dropping them keeps postings lists short. Plus "s": Lucene's English analysis drops a
# possessive's 's, which the apostrophe cuts off here as a word of its own (grandma's, it's). The other lists are short ones after Snowball's
# (articles, pronouns, prepositions, conjunctions and common auxiliaries, folded), kept short
# on purpose: a long list drops words people search for (a list found on PyPI drops Spanish
# "tiempo" and "trabajo" and Russian "время"). Languages without a list here keep every word;
# BM25's idf already weighs a word found everywhere near zero.
_STOP_LISTS = {
    "english": "a an and are as at be but by for if in into is it no not of on or such that the their then "
               "there these they this to was will with s",
    "german": "aber alle allem allen aller alles als also am an auch auf aus bei bin bis bist da damit dann das "
              "dass dem den denn der des dich die dies diese diesem diesen dieser dieses dir doch du durch ein "
              "eine einem einen einer eines er es euch euer eure für hab habe haben hat hatte hier ich ihm ihn "
              "ihnen ihr ihre ihrem ihren ihrer im in ins ist jede jeder jedes kann kein keine mein meine "
              "meinem meinen meiner mich mir mit nach nicht noch nun nur ob oder ohne sein seine seinem "
              "seinen seiner sich sie sind so über um und uns unser unter vom von vor war waren was weil "
              "wenn werde werden wie wir wird wo zu zum zur",
    "french": "au aux avec c ce ces d dans de des du elle elles en est et eux il ils j je l la le les leur leurs "
              "lui m ma mais me mes moi mon n ne nos notre nous on ou par pas pour qu que qui s sa se ses son "
              "sont sur t ta te tes toi ton tu un une vos votre vous y à",
    "spanish": "a al como con de del e el en entre es esta este esto fue la las le les lo los me mi mis muy "
               "no nos o para pero por que se sin su sus te tu tus un una uno unos y ya yo él",
    "italian": "a ad agli ai al alla alle allo anche che chi ci coi col come con da dai dal dalla dalle degli "
               "dei del della delle dello di e ed gli ha hanno ho i il in io la le lei li lo loro lui ma mi "
               "ne negli nei nel nella nelle noi non o per più quella quello questa questo se si sono su "
               "sua sue sui sul sulla suo suoi ti tra tu un una uno vi voi è",
    "portuguese": "a ao aos as com da das de do dos e ela elas ele eles em entre era eu foi isso mas me meu "
                  "minha na nas no nos não o os ou para pela pelo por que se seu sua são também te um uma "
                  "você à é",
    "dutch": "aan al als bij dan dat de der deze die dit door een en er had heb hebben heeft hem het hij hoe "
             "hun ik in is je kan maar me men met mij mijn naar niet nog nu of om onder ons ook op over "
             "te tot u uit van voor was wat we wel werd wie wij wordt zal ze zich zij zijn zo",
    "russian": "а без бы был была были было быть в вам вас во вот все всё вы где да для до его ее её если есть "
               "еще ещё же за и из или им их к как когда кто ли меня мне мы на над не нет ни но ну о об он "
               "она они оно от по при с со так там то тоже только ты у уж уже что чтобы это эти этот я",
    "swedish": "att av de dem den denna det detta du där efter ej eller en er ett för från ha hade han hans "
               "har hon honom hur i icke inte jag ju kan man med men mig min mitt mot ni nu när och om oss "
               "på sig sin sina sitt som så till under upp ut vad var vara vi vid än är över",
}


@lru_cache(maxsize=None)
def stop_words(language: str) -> frozenset[str]:
    """The folded stop words of ``language`` (empty for a language without a list, and for "none")."""
    return frozenset(fold(w) for w in _STOP_LISTS.get(language, "").split())


STOP_WORDS = stop_words(DEFAULT_LANGUAGE)


# -- stemming --

_local = threading.local()  # PyStemmer's stemmers are not safe to share between threads


def stem(word: str, algorithm: str) -> str:
    """``word`` (folded) stemmed by a Snowball ``algorithm``; words of one or two characters, and
    non-ASCII words for "porter" (which knows only English letters), come back unchanged. Not
    memoised here: the vocabulary and each Analysis remember the words they met."""
    if len(word) <= 2 or (algorithm == "porter" and not word.isascii()):
        return word
    stemmers = _local.__dict__.setdefault("stemmers", {})
    stemmer = stemmers.get(algorithm)
    if stemmer is None:
        import Stemmer  # PyStemmer: Snowball in C

        stemmer = stemmers[algorithm] = Stemmer.Stemmer(algorithm)
    return str(stemmer.stemWord(word))


def porter_stem(word: str) -> str:
    """A lower-case word stemmed by the original Porter (1980) algorithm (short words as they are)."""
    return stem(word, "porter")


@dataclass(frozen=True)
class Analysis:
    """How text becomes keyword terms: the ``language`` (its stop words and stemmer) and
    whether to stem at all. Folding and bigrams apply in every language."""

    language: str = DEFAULT_LANGUAGE
    stemming: bool = True

    @cached_property
    def known_terms(self) -> dict[str, str | None]:
        """Terms of the words met so far, by word (snippets read the same words again for every
        hit); read-only for callers: ``term`` fills it, up to MEMO_WORDS words."""
        return {}

    def term(self, word: str) -> str | None:
        """The term of one lower-cased word (a bigram included), or None for a stop word."""
        known = self.known_terms
        if word in known:
            return known[word]
        term = self.new_term(word)
        if len(known) < MEMO_WORDS:
            known[word] = term
        return term

    def new_term(self, word: str) -> str | None:
        """``term`` without the memo (the vocabulary keeps its own, of every word it met)."""
        folded = fold(word[:MAX_TERM_CHARS])
        if not folded:
            return None  # marks alone (a stray combining accent) fold to nothing: no term
        if len(word) > MAX_TERM_CHARS:
            return folded[:MAX_TERM_CHARS]
        if folded in stop_words(self.language):
            return None
        algorithm = STEMMERS.get(self.language) if self.stemming else None
        # Folding may lengthen a word (ß -> ss): the bound holds for the term itself.
        return (stem(folded, algorithm) if algorithm else folded)[:MAX_TERM_CHARS]


@lru_cache(maxsize=None)
def _analysis(language: str, stemming: bool) -> Analysis:
    """One Analysis per setting, so its memo of terms lasts from one query to the next."""
    return Analysis(language, stemming)


ENGLISH = _analysis(DEFAULT_LANGUAGE, True)


def analysis_of(config: Config, source: str = "files") -> Analysis:
    """The analysis of one source's records: its collection's ``language`` if it has one, else
    the global ``language``; ``stemming`` is global."""
    language = next((c.language for c in config.collections if c.name == source and c.language), None)
    return _analysis(language or config.language, config.stemming)


def analyses(config: Config) -> list[Analysis]:
    """Every analysis some source of ``config`` is indexed with (the global one first): a query
    is cut by each, so it meets every record in the terms that record was indexed in."""
    found = [analysis_of(config), *(analysis_of(config, c.name) for c in config.collections)]
    return list(dict.fromkeys(found))


# Korean particles of two syllables, which stick to the noun before them (집에서: at home). Those
# of one syllable (이, 가, 의, 도...) are left out: they end as many nouns (아이, 나이, 우도).
KOREAN_PARTICLES = frozenset("에서 에게 한테 께서 까지 부터 으로 처럼 마다 에는 에도".split())
_HANGUL_WORD_RE = re.compile("[\uac00-\ud7a3]+")


def particle_nouns(text: str) -> list[tuple[int, int]]:
    """(start, end) of each one-syllable Korean noun written with a two-syllable particle in a
    query (집 of 집에서, 차 of 차까지): none of the word's bigrams is the noun, and a note that
    says the noun alone (우리 집) would not be found. A longer noun's bigrams find it already."""
    return [(word.start(), word.start() + 1) for word in _HANGUL_WORD_RE.finditer(text)
            if len(word.group()) == 3 and word.group()[1:] in KOREAN_PARTICLES]


def query_tokens(text: str, config_analyses: Sequence[Analysis]) -> list[str]:
    """The keyword terms of a query under several analyses: each term as often as the analysis
    that repeats it most (one analysis: ``tokenize`` itself, with ``particle_nouns``)."""
    found = words_of(text) + [text[start:end] for start, end in particle_nouns(text)]
    counts: dict[str, int] = {}
    for analysis in config_analyses:
        for term, repeat in Counter(t for t in map(analysis.term, found) if t is not None).items():
            counts[term] = max(counts.get(term, 0), repeat)
    return [term for term, repeat in counts.items() for _ in range(repeat)]


# -- words --


def words_of(text: str) -> list[str]:
    """The lower-cased words of a text as the keyword index reads them: runs of letters, digits
    and their marks, with runs of a script written without spaces cut into bigrams."""
    low = lowered(text)
    found = ASCII_TOKEN_RE.findall(low) if low.isascii() else _split_segmented(words(low), low)
    return with_parts(found) if in_context(text) else found


def _split_segmented(words: list[str], text: str) -> list[str]:
    """``words`` with each run of a segmented script replaced by its bigrams (no pass at all
    when ``text`` holds none)."""
    if not SEGMENTED_RE.search(text):
        return words
    out: list[str] = []
    for word in words:
        if word.isascii() or not SEGMENTED_RE.search(word):
            out.append(word)
        else:
            out.extend(piece for _, _, piece in _pieces(word, 0))
    return out


_RUN_RE = re.compile(f"[{SEGMENTED}]+|[^{SEGMENTED}]+")


def _pieces(word: str, offset: int) -> Iterator[tuple[int, int, str]]:
    """(start, end, text) of the keyword pieces of one word found at ``offset``: each run of a
    segmented script as its bigrams, each other run whole (``我的iphone坏了``: 我的, iphone, 坏了)."""
    for run in _RUN_RE.finditer(word):
        start = offset + run.start()
        if not SEGMENTED_RE.match(run.group(0)):
            yield start, offset + run.end(), run.group(0)
            continue
        units = _units(run.group(0))
        if len(units) == 1:
            yield start, start + len(units[0]), units[0]
        at = start
        for first, second in zip(units, units[1:]):
            yield at, at + len(first) + len(second), first + second
            at += len(first)


# A Hangul syllable written decomposed (NFD, as macOS writes file names and some apps text) is
# its leading consonant, then a vowel and maybe a final consonant from these ranges (jamo of
# Grapheme_Cluster_Break V and T): they belong to the syllable before, as a mark to its letter,
# so 서울 in NFD gives the bigram of 서울, not bigrams of its jamo.
_HANGUL_VOWEL_OR_FINAL = "\u1160-\u11ff\ud7b0-\ud7ff"


def _units(run: str) -> list[str]:
    """The characters of a run, each with the marks that follow it (Thai vowel and tone marks,
    a Japanese voicing mark, a decomposed Hangul syllable's vowel and final consonant): a bigram
    never splits a letter from its mark."""
    joining, unit = _joining_res()
    return unit.findall(run) if joining.search(run) else list(run)


@lru_cache(maxsize=1)
def _joining_res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A character that joins the one before it (a mark, a Hangul vowel or final consonant), and
    one character with those that join it: matched in C, as a test of each character in Python
    was a fifth of a Chinese text's keyword indexing, and most runs (Chinese, Japanese) hold none.
    The marks of the Basic Multilingual Plane are all a run can hold (no segmented script has
    others)."""
    joining = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _mark_ranges()) + _HANGUL_VOWEL_OR_FINAL
    return re.compile(f"[{joining}]"), re.compile(f"(?s).[{joining}]*")


def word_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int, str]]:
    """(start, end, lower-cased word) of every keyword word of ``text[start:end]``, in the
    text's own offsets (bigrams of a segmented run included, and the letters and digits of a
    word holding both where ``in_context``): what snippets and highlighting match, so they mark
    what the index matched, as written."""
    spans = _spans(text, start, end)
    return spans_with_parts(spans) if in_context(text[start:end]) else spans


def _spans(text: str, start: int, end: int | None) -> list[tuple[int, int, str]]:
    """``word_spans`` before a word of letters and digits is cut into them."""
    part = text[start:end]
    low = lowered(part)
    # A letter that lengthens when lower-cased (İ -> i + dot) would move the offsets: then the
    # words are found, and cut, in the text itself and lower-cased piece by piece.
    same = len(low) == len(part)
    found = low if same else part.translate(_WIDTH_TABLE)
    pattern = ASCII_TOKEN_RE if same and low.isascii() else word_re()
    spans = [(start + m.start(), start + m.end(), m.group(0)) for m in pattern.finditer(found.replace("_", " "))]
    if same and (pattern is ASCII_TOKEN_RE or not SEGMENTED_RE.search(low)):
        return spans
    cut: list[tuple[int, int, str]] = []
    for a, b, word in spans:
        pieces = _pieces(word, a) if not word.isascii() and SEGMENTED_RE.search(word) else [(a, b, word)]
        cut += pieces if same else [(x, y, lowered(piece)) for x, y, piece in pieces]
    return cut


def without_sender_emoji(content: str, senders: Sequence[str] | None) -> str:
    """``content`` with the emoji of chat senders' names blanked where a line opens with one
    (``Mum ❤️: ...``), at the same length, so offsets hold: the keyword text of a chat. A name
    opens every line its sender writes, and as a word its emoji would rank all their messages
    above the one that says it; the name's letters stay words (a question may name them)."""
    listed = [senders] if isinstance(senders, str) else senders or ()  # a database row's one name
    named = sorted((s for s in listed if isinstance(s, str) and EMOJI_RE.search(s)), key=len, reverse=True)
    if not named:
        return content
    opening = re.compile(f"(?m)^(?:{'|'.join(map(re.escape, named))}):")
    return opening.sub(lambda line: EMOJI_RE.sub(lambda emoji: " " * len(emoji.group()), line.group()), content)


def tokenize(text: str, stemming: bool = True, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """Keyword terms of a text: its words folded, stop words dropped, stemmed by ``language``."""
    analysis = _analysis(language, stemming)
    return [t for t in map(analysis.term, words_of(text)) if t is not None]


class Vocabulary:
    """Keyword terms and their ids. Ids never change and the table only grows, so token
    ids stored per passage stay valid across rebuilds (unchanged files are not re-tokenized)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        # Raw lower-cased word -> term id (STOP for a stop word), per analysis: text repeats
        # words heavily, so one C-level dict lookup per token (map over the words) replaces
        # the per-token Python steps (folding, the stop-word test, the stemmer's cache and the
        # term lookup), which were the largest cost of a first keyword index.
        self._words: dict[Analysis, dict[str, int]] = {}

    STOP = -1
    BOUND_ID = -2  # ``BOUND`` between two texts of ``encode_texts``

    def __len__(self) -> int:
        return len(self.ids)

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """Token ids of ``tokens``, adding new terms."""
        ids = self.ids
        return np.fromiter((ids.setdefault(t, len(ids)) for t in tokens), dtype=np.int32, count=len(tokens))

    def encode_text(self, text: str, analysis: Analysis = ENGLISH) -> np.ndarray:
        """Token ids of ``text``'s terms under ``analysis``, adding new terms."""
        ids = self._ids(words_of(text), analysis)
        return ids[ids != self.STOP]

    def encode_texts(self, texts: Sequence[str], analysis: Analysis = ENGLISH) -> list[np.ndarray]:
        """``encode_text`` of each text (the same ids), from one lower-casing, one cut into words
        and one array over them all: the per-text calls were most of a first keyword index's
        cost (20k records in 196 files: the whole index 0.68 s before, 0.42 s with this)."""
        if len(texts) < 2 or any(BOUND in text for text in texts):  # a NUL would be read as a bound
            return [self.encode_text(text, analysis) for text in texts]
        if sum(map(len, texts)) > JOINED_CHARS:  # a few MB at a time, not a copy of a whole log file
            middle = len(texts) // 2
            return self.encode_texts(texts[:middle], analysis) + self.encode_texts(texts[middle:], analysis)
        low = lowered(f" {BOUND} ".join(texts))
        if low.isascii():
            found = low.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()
        else:
            found = _split_segmented(words(low, bounded=True), low)
        if may_hold_mixed(low) and (parted := [i for i, text in enumerate(texts) if _parted(text)]):
            found = bounded_with_parts(found, BOUND, parted)
        ids = self._ids(found, analysis)
        kept = ids >= 0  # neither stop words nor bounds
        # Each bound's place among the kept ids: where one text's tokens end and the next's begin.
        ends = np.cumsum(kept)[ids == self.BOUND_ID].tolist()
        tokens = ids[kept]
        return [tokens[a:b] for a, b in zip([0, *ends], [*ends, len(tokens)])]

    def _ids(self, words: list[str], analysis: Analysis) -> np.ndarray:
        """The id of each word (STOP for a stop word, BOUND_ID for ``BOUND``), learning new ones."""
        known = self._words.get(analysis)
        if known is None:
            known = self._words[analysis] = {BOUND: self.BOUND_ID}
        found = list(map(known.get, words))
        if None in found:
            # Learn each new word once (in order of first use, so ids are as a word-by-word
            # pass would give them), then look every word up again in C: a Python pass over
            # every word for a few new ones cost more than the lookups themselves.
            for word in [w for w in dict.fromkeys(words) if w not in known]:
                term = analysis.new_term(word)
                known[word] = self.STOP if term is None else self.ids.setdefault(term, len(self.ids))
            found = list(map(known.get, words))
        return np.array(found, dtype=np.int32)
