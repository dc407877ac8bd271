"""Shaping hits for people and assistants: the snippet around the strongest match and the
query words found in it, folding near-duplicate hits, and the recency blend. Pure
functions over text, dates and scores; the facade decides when to call them."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Sequence

from .graphemes import cluster_end, cluster_start, whole_clusters
from .keyword_chars import character_spans
from .tokens import ASCII_TOKEN_RE, EMOJI_RE, ENGLISH, TOKEN_RE, Analysis, particle_nouns, word_spans

# About ±240 characters around the match, as the user's design asks: enough for the
# sentence that answers, little enough for ten hits to fit an assistant's context.
SNIPPET_CHARS = 480
ELLIPSIS = "…"
# A matched word's end is looked for this far (a run of CJK text is one token, its terms bigrams).
FOCUS_WORD_CHARS = 40
# Near-duplicates: word 3-grams ("shingles") of each hit's text (its first
# DEDUPE_WORDS words), folded when the shingles of the shorter text lie at least
# DEDUPE_CONTAINMENT in the longer one: a forwarded message under another name, a
# note copied with a changed line, a mail quoted whole in its reply.
DEDUPE_SHINGLE = 3
DEDUPE_WORDS = 2_000
DEDUPE_CONTAINMENT = 0.8
# Texts with fewer shingles than this fold only when their words are identical:
# two short messages share most of their few shingles by chance ("ok see you").
DEDUPE_MIN_SHINGLES = 8
# The share of the final score that recency decides when a half-life is given.
RECENCY_WEIGHT = 0.2
_DATE_RE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?")


@dataclass(frozen=True)
class Snippet:
    """A stretch of a record's content: ``text`` is ``content[start:end]``, with ``…`` where cut;
    ``focus``: the stretch from the first matched word it is centred on to the last (its own
    ``start`` and ``end`` where no query word occurs)."""

    text: str
    start: int
    end: int
    matched_terms: list[str]
    focus: tuple[int, int] = (0, 0)


def query_terms(query: str, analyses: Sequence[Analysis] = (ENGLISH,)) -> dict[str, str]:
    """Keyword terms of a query (as the index analyses them, under each of ``analyses``) mapped
    to the word the user typed: ``Cafés`` for the term ``cafe``, ``长城`` for that bigram."""
    terms: dict[str, str] = {}
    for start, end, word in [*word_spans(query), *((a, b, query[a:b]) for a, b in particle_nouns(query))]:
        for analysis in analyses:
            term = analysis.term(word)
            if term is not None:
                terms.setdefault(term, query[start:end])
    return terms

# The characters of ASCII_TOKEN_RE's words: a match of a word must not continue into one.
ASCII_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def make_snippet(content: str, region: tuple[int, int], terms: dict[str, str], analysis: Analysis = ENGLISH,
                 size: int = SNIPPET_CHARS, matched_in: str | None = None) -> Snippet:
    """The ``size`` characters of ``content[region]`` holding the most distinct query terms
    (the earliest such stretch; the region's start when no term occurs), cut between words.
    ``analysis`` is the record's: its words meet the query's terms as the index met them;
    ``matched_in``: the text the index read them from where it is not ``content`` (as long)."""
    start, end = region
    matches = _matches(matched_in if matched_in is not None else content, start, end, terms, analysis)
    focus = None
    if matches:
        start, first, last = _best_start(matches, start, end, size)
        focus = (first, _word_end(content, last, FOCUS_WORD_CHARS))
    return _cut(content, start, min(end, start + size), region, matches, terms, focus)


def _matches(content: str, start: int, end: int, terms: dict[str, str], analysis: Analysis) -> list[tuple[int, str]]:
    """(offset, term) of every query term in ``content[start:end]`` (bigrams of CJK text included)."""
    if not terms:
        return []
    part = content[start:end]
    if part.isascii():
        return _ascii_matches(part.lower(), start, terms, analysis)
    term = analysis.term
    found = [(position, t) for position, _, word in word_spans(content, start, end) if (t := term(word)) in terms]
    # A one-character query term (伞) inside the bigrams of a run (带伞): the character itself.
    inside = character_spans(content, start, end, terms, term)
    return sorted({*found, *((position, t) for position, _, t in inside)}) if inside else found


def _ascii_matches(lowered: str, offset: int, terms: dict[str, str], analysis: Analysis) -> list[tuple[int, str]]:
    """``_matches`` of ASCII text (most personal text), the same words at the same offsets: its
    distinct words are analysed once, and only those whose term the query holds are looked for,
    whole (``ASCII_TOKEN_RE``'s runs). A snippet of each of ten hits no longer builds a tuple for
    every word of every hit (at 100k records, a third of a keyword query's time)."""
    known, term = analysis.known_terms, analysis.term  # the memo read inline: ~65 distinct words a hit
    wanted = {word: t for word in set(ASCII_TOKEN_RE.findall(lowered))
              if (t := known[word] if word in known else term(word)) in terms}
    found = []
    for word, t in wanted.items():
        at = lowered.find(word)
        while at >= 0:
            after = at + len(word)
            if (at == 0 or lowered[at - 1] not in ASCII_WORD_CHARS) and lowered[after:after + 1] not in ASCII_WORD_CHARS:
                found.append((offset + at, t))
            at = lowered.find(word, after)
    found.sort()
    return found


def _best_start(matches: list[tuple[int, str]], start: int, end: int, size: int) -> tuple[int, int, int]:
    """Where a ``size``-character stretch with the most distinct terms (then most matches) begins,
    centred on the matches it holds, and where the first and the last begin of the fewest of
    them that hold all its terms (``_tightest``): what a shorter cut shows."""
    best: tuple[int, int] = (-1, -1)
    chosen = matches[:1]
    right = 0
    for left, (position, _) in enumerate(matches):
        right = max(right, left)
        while right + 1 < len(matches) and matches[right + 1][0] < position + size:
            right += 1
        inside = matches[left:right + 1]
        score = (len({s for _, s in inside}), len(inside))
        if score > best:
            best, chosen = score, inside
    first, last = _tightest(chosen)
    return _centred(chosen[0][0], chosen[-1][0], size, start, end), first, last


def _tightest(matches: list[tuple[int, str]]) -> tuple[int, int]:
    """Where the first and the last begin of the narrowest run of ``matches`` holding every term
    they hold (the earliest such): a word said again and again before the one place where all
    the query's words meet would else be what a cut to ``max_chars`` centres on, without them."""
    wanted = len({term for _, term in matches})
    counts: dict[str, int] = {}
    best = (matches[0][0], matches[-1][0])
    left = 0
    for position, term in matches:
        counts[term] = counts.get(term, 0) + 1
        while len(counts) == wanted:
            if position - matches[left][0] < best[1] - best[0]:
                best = (matches[left][0], position)
            dropped = matches[left][1]
            counts[dropped] -= 1
            if not counts[dropped]:
                del counts[dropped]
            left += 1
    return best


def _centred(first: int, last: int, size: int, low: int, high: int) -> int:
    """Where a ``size``-character stretch within ``[low, high)`` begins when centred on
    ``[first, last)`` (from ``first`` where that is wider)."""
    return max(low, min(first - max(0, size - (last - first)) // 2, high - size))


def _word_end(text: str, at: int, most: int) -> int:
    """The end of the word at ``at``, at most ``most`` characters on (``at + 1`` where none begins there)."""
    word = TOKEN_RE.match(text, at) or EMOJI_RE.match(text, at)  # an emoji with its skin tone
    return min(word.end(), at + most) if word else at + 1


def _cut(content: str, start: int, end: int, region: tuple[int, int], matches: list[tuple[int, str]],
         terms: dict[str, str], focus: tuple[int, int] | None) -> Snippet:
    """The stretch moved to word boundaries and trimmed, with ``…`` where the region goes on."""
    if start > region[0]:  # begin at a word, not inside one
        space = content.find(" ", start, min(end, start + 40))
        start = space + 1 if space >= 0 else start
    if end < region[1]:
        space = content.rfind(" ", max(start, end - 40), end)
        end = space if space > start else end
    # Text without spaces (Chinese, emoji side by side) is cut where the size ends: widen the cut
    # to whole grapheme clusters, so no skin tone, flag or ZWJ sequence shows in halves.
    start, end = cluster_start(content, start), cluster_end(content, end)
    while start < end and content[start].isspace():
        start += 1
    while end > start and content[end - 1].isspace():
        end -= 1
    text = (ELLIPSIS if start > region[0] else "") + content[start:end] + (ELLIPSIS if end < region[1] else "")
    found = {stem for position, stem in matches if start <= position < end}
    return Snippet(text, start, end, [terms[s] for s in terms if s in found], focus or (start, end))


def cut_around(text: str, focus: tuple[int, int], limit: int) -> tuple[int, int]:
    """The ``[start, end)`` of at most ``limit`` characters of ``text`` around ``focus`` (the
    matched words a snippet centres on, ``Snippet.focus``), centred on it: whole lines where the
    lines holding the focus fit (a chat line keeps its speaker), else begun and ended between
    words; without blank lines at its edges; never inside a grapheme cluster (a skin tone, a flag,
    a ZWJ sequence, a combining accent: ``graphemes``); the whole text where it fits. Of a focus
    wider than half the limit (query words far apart, a snippet found by meaning) its first
    half-limit is centred on, and its first word is kept."""
    if len(text) <= limit:
        return 0, len(text)
    if limit <= 0:
        return 0, 0
    # The focus in whole clusters: a matched emoji may be one of a ZWJ sequence (👩 of 👨‍👩‍👧).
    first, focus_end = cluster_start(text, focus[0]), cluster_end(text, focus[1])
    if focus_end - first <= limit // 2:
        last = keep = focus_end
    else:  # a wide focus (words far apart, a snippet found by meaning): its first word is what must show
        keep = cluster_end(text, _word_end(text, first, limit))
        last = max(keep, first + limit // 2)
    lines_start = text.rfind("\n", 0, first) + 1
    lines_end = text.find("\n", max(first, last - 1))
    if 0 <= lines_end < last:  # the focus ends with its line's newline
        lines_end = text.find("\n", last)
    lines_end = len(text) if lines_end < 0 else lines_end
    if lines_end - lines_start <= limit:
        start, end = _whole_lines(text, lines_start, lines_end, limit)
    else:
        start = _cut_start(text, _centred(first, last, limit, 0, len(text)), first, last, limit)
        end = _cut_end(text, start, min(len(text), start + limit), keep)
    start, end = _shed_blank_edges(text, start, end, first, keep)
    # A cut between words or inside a giant one can fall inside a cluster (text without spaces,
    # emoji side by side): half of it would show (👍 without its tone, 🏳️ and a dangling ZWJ).
    whole = whole_clusters(text, start, end, limit)
    if whole == (start, end):
        return start, end
    start, end = whole
    while end > max(start, keep) and text[end - 1] in " \t":  # the space before the cluster cut off
        end -= 1
    while start < min(end, first) and text[start] in " \t":
        start += 1
    return start, end


def _whole_lines(text: str, start: int, end: int, limit: int) -> tuple[int, int]:
    """The lines ``[start, end)`` (within ``limit``) and the whole lines around them that fit in
    it, centred on them; a blank line is taken only with the line beyond it, so it never takes
    the room of a line that would fit."""
    wide_start = _centred(start, end, limit, 0, len(text))
    wide_end = wide_start + limit
    if wide_start > 0 and text[wide_start - 1] != "\n":
        wide_start = text.find("\n", wide_start, start) + 1
    if wide_end < len(text) and text[wide_end] != "\n":
        wide_end = text.rfind("\n", end, wide_end)
    start, end = _shed_blank_edges(text, wide_start, min(wide_end, len(text)), start, end)  # blank edges go first
    while True:  # the centred window's partial lines may leave room for one more line on a side
        before, after = _line_before(text, start), _line_after(text, end)
        if before < start and end - before <= limit:
            start = before
        elif after > end and after - start <= limit:
            end = after
        else:
            return start, end


def _shed_blank_edges(text: str, start: int, end: int, inner_start: int, inner_end: int) -> tuple[int, int]:
    """``[start, end)`` without the blank lines at its edges, shed no further than
    ``[inner_start, inner_end)``."""
    while start < inner_start and text[start] == "\n":
        start += 1
    while end > inner_end and text[end - 1] == "\n":
        end -= 1
    return start, end


def _line_before(text: str, start: int) -> int:
    """The start of the nearest line before ``start`` (a line start) that is not blank, the
    blank lines between taken with it; ``start`` itself where there is none."""
    at = start
    while at > 0:
        at = text.rfind("\n", 0, at - 1) + 1
        if text[at:start].strip("\n"):
            return at
    return start


def _line_after(text: str, end: int) -> int:
    """The end of the nearest line after ``end`` (a line end) that is not blank, the blank lines
    between taken with it; ``end`` itself where there is none."""
    at = end
    while at < len(text):
        at = text.find("\n", at + 1)
        at = len(text) if at < 0 else at
        if text[end:at].strip("\n"):
            return at
    return end


def _cut_start(text: str, start: int, first: int, last: int, limit: int) -> int:
    """Where a cut from ``start`` begins: the start of its line where the cut still reaches
    ``last`` from there (a chat line keeps its speaker), else the next line start before
    ``first``, else the next word."""
    if start == 0 or text[start - 1] == "\n":
        return start
    line = text.rfind("\n", 0, start) + 1
    if last - line <= limit:
        return line
    for mark in ("\n", " "):
        at = text.find(mark, start, first)
        if at >= 0:
            return at + 1
    return start


def _cut_end(text: str, start: int, end: int, keep: int) -> int:
    """Where a cut from ``start`` to at most ``end`` ends: its last line end after ``keep``, else
    its last word end, where that keeps at least half of it (a giant word is cut inside)."""
    if end == len(text) or text[end] == "\n":
        return end
    least = max(keep, start + (end - start) // 2)
    for mark in ("\n", " "):
        at = text.rfind(mark, least, end)
        if at >= 0:
            return at
    return end


# -- duplicates --


def shingles(text: str) -> frozenset[Any]:
    """Word 3-grams of a text's first DEDUPE_WORDS words (case and punctuation ignored)."""
    head = text[: DEDUPE_WORDS * 12]
    # ASCII text (most): the same words by the plain class, 1.7x faster than the Unicode one.
    words = (ASCII_TOKEN_RE.findall(head.lower()) if head.isascii() else TOKEN_RE.findall(head.casefold()))
    words = words[:DEDUPE_WORDS]
    if len(words) < DEDUPE_SHINGLE:
        return frozenset([tuple(words)])
    return frozenset(zip(*(words[i:] for i in range(DEDUPE_SHINGLE))))


def near_duplicates(a: frozenset[Any], b: frozenset[Any]) -> bool:
    """Identical words, or (both long enough) the shorter's shingles contained in the longer's."""
    if a == b:
        return True
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if len(small) < DEDUPE_MIN_SHINGLES:
        return False
    return len(small & large) >= DEDUPE_CONTAINMENT * len(small)


def fold(texts: Iterable[str], limit: int) -> list[tuple[int, list[int]]]:
    """Positions of the first ``limit`` distinct texts (in order), each with the positions
    of the texts folded into it that rank above the last one kept; ``texts`` is read only
    until then (a lazy iterable spares making the texts of the candidates never reached)."""
    return list(itertools.islice(folding(texts), limit))


def folding(texts: Iterable[str]) -> Iterator[tuple[int, list[int]]]:
    """``fold`` as it goes: each distinct text's position when it is reached, with the list of
    the positions folded into it, which grows while later texts are read."""
    kept: list[tuple[list[int], frozenset[Any]]] = []
    for position, text in enumerate(texts):
        signature = shingles(text)
        home = next((k for k in kept if near_duplicates(k[1], signature)), None)
        if home is not None:
            home[0].append(position)
        else:
            kept.append(([], signature))
            yield position, kept[-1][0]


# -- recency --


def date_days(value: Any) -> float:
    """Days since 1970-01-01 of an ISO-8601 date or date-time (NaN when it is none)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if not isinstance(value, str):
        return math.nan
    match = _DATE_RE.match(value)
    if not match:
        return math.nan
    try:
        parts = [int(p) if p else 0 for p in match.groups()]
        moment = datetime(*parts, tzinfo=timezone.utc)  # type: ignore[misc]
    except ValueError:
        return math.nan
    return moment.timestamp() / 86_400.0


def recency_blend(score: float, days: float, today: float, half_life: float) -> float:
    """``(1 - w) * score + w * 0.5 ** (age / half_life)`` with w = RECENCY_WEIGHT; a record
    without a date keeps its score (it is neither boosted nor penalised)."""
    if math.isnan(days):
        return score
    decay = 0.5 ** (max(0.0, today - days) / half_life)
    return (1.0 - RECENCY_WEIGHT) * score + RECENCY_WEIGHT * decay
