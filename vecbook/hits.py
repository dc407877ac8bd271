"""What a search returns: hits (with snippets and folded duplicates), records with their
neighbours for ``get``, result lists with notebook conversions, the checks on query
arguments, and the fluent ``Query`` builder."""

from __future__ import annotations

import dataclasses
import html
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from .build import Snapshot
from .chat_hits import (MERGE_MAX_CHARS, lines_shown, merge_touching, merged_citation, merged_metadata,
                        merged_text)
from .config import (FUSIONS, MAX_CHARS, MAX_CONTEXT, MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, MAX_TOTAL_CHARS, QueryError,
                     VecBookError)
from .filters import parse_filters
from .graphemes import cluster_end, cluster_start
from .rank import Scored
from .records import Record
from .snippets import cut_around, make_snippet
from .keyword_chars import character_spans
from .tokens import ENGLISH, Analysis, without_sender_emoji, word_spans

if TYPE_CHECKING:  # the facade imports this module, not the other way round
    from .book import VecBook


# How to_dict/to_dicts give scores: six-decimal strings (the JSON contract) or floats.
SCORE_FORMATS = ("string", "float")
# Results.to_pandas's column types: lines are nullable whole numbers (a SQLite row has none).
PANDAS_TYPES = {"similarity_score": "float64", "semantic_score": "float64", "keyword_score": "float64",
                **{name: "Int64" for name in ("line_number", "end_line", "snippet_line", "snippet_end_line")},
                "matches_query": "bool", "truncated": "bool"}
# The columns that always hold text: pandas 3 types them ``str`` (earlier versions ``object``),
# but not in a frame of no rows, whose columns it cannot infer.
PANDAS_TEXT_COLUMNS = ("text", "file_path", "source", "id", "citation", "snippet")


@dataclass(frozen=True)
class Hit:
    """One search result; ``to_dict`` gives the JSON shape every interface shares."""

    text: str
    file_path: str
    line_number: int | None
    end_line: int | None
    similarity_score: float
    metadata: dict[str, Any]
    source: str
    id: str
    citation: str
    semantic_score: float | None = None
    keyword_score: float | None = None
    snippet: str = ""  # the best passage cut to about 480 characters around the strongest match
    snippet_line: int | None = None  # the snippet's lines in the file (null for SQLite rows)
    snippet_end_line: int | None = None
    matched_terms: list[str] = dataclasses.field(default_factory=list)  # query words found in the snippet
    duplicates: list[str] = dataclasses.field(default_factory=list)  # citations of near-identical hits folded here
    # False for a hit that matched nothing of the query: no query word, and (hybrid, linear
    # fusion) no closer in meaning than the least close candidate, so it scores 0. Listed
    # because it passed the filters (a filter keeps min(max_results, matching records)), last.
    matches_query: bool = True
    # True where ``max_chars`` cut ``text`` to the part around its snippet: its lines and citation
    # are then those of the text shown (``get`` with the id gives the whole record).
    truncated: bool = False

    def to_dict(self, scores_as: str = "string") -> dict[str, Any]:
        """JSON-ready dict; scores become strings with six decimals, as the spec requires,
        or stay floats with ``scores_as="float"`` (for sorting and arithmetic in a notebook)."""
        check_choice("scores_as", scores_as, SCORE_FORMATS)
        data = dataclasses.asdict(self)
        for key in ("similarity_score", "semantic_score", "keyword_score"):
            if data[key] is not None and scores_as == "string":
                data[key] = f"{data[key]:.6f}"
        return data

    def _repr_html_(self) -> str:
        """The hit as a one-row table in Jupyter (``Results`` shows many)."""
        return hits_table([self], ranked=False)


@dataclass(frozen=True)
class Entry:
    """A record as ``get`` returns it: the hit fields without scores."""

    text: str
    file_path: str
    line_number: int | None
    end_line: int | None
    metadata: dict[str, Any]
    source: str
    id: str
    citation: str

    @classmethod
    def of(cls, record: Record) -> Entry:
        """The entry of a record."""
        return cls(record.text, record.file_path, record.line_number, record.end_line, record.metadata,
                   record.source, record.id, record.citation)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Context:
    """A record with its neighbours in the same file and conversation, in file order."""

    record: Entry
    before: list[Entry]
    after: list[Entry]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``record``, ``before`` and ``after``."""
        return {"record": self.record.to_dict(), "before": [e.to_dict() for e in self.before],
                "after": [e.to_dict() for e in self.after]}

    def _repr_html_(self) -> str:
        """The record and its neighbours as a table in Jupyter, the record itself in bold;
        positions count from it (-2, -1, 0, +1...)."""
        entries = [*self.before, self.record, *self.after]
        rows = []
        for offset, entry in enumerate(entries, -len(self.before)):
            text = _cell(html.escape(entry.text))
            if entry is self.record:
                text = f"<b>{text}</b>"
            rows.append([f"{offset:+d}" if offset else "0", html.escape(entry.citation), text,
                         html.escape(entry.source), html.escape(record_date(entry.metadata))])
        return _table(["", "citation", "text", "source", "date"], rows)


class Results(list):  # list[Hit]
    """A list of hits, best first, with notebook-friendly conversions. ``left_out``: how many
    hits a ``max_total_chars`` budget left out (0 without one); ``mode``: the mode that answered
    (``keyword`` for a semantic or hybrid search while the first index still embeds); ``analysis``:
    the keyword analysis of a source's records (its language), which the table marks words by;
    ``why_empty``: for a search without hits, what left it empty (the filter that left no record,
    and the values there are; a query of stop words in keyword mode), else None."""

    def __init__(self, hits: Iterable[Hit] = (), left_out: int = 0, mode: str | None = None,
                 analysis: Callable[[str], Analysis] | None = None, why_empty: str | None = None) -> None:
        super().__init__(hits)
        self.left_out = left_out
        self.mode = mode
        self.analysis = analysis
        self.why_empty = None if self else why_empty

    def __getitem__(self, key: Any) -> Any:
        """A hit, or for a slice (``hits[:3]``) Results again, so a notebook still shows it as a
        table marked by its source's language; a slice's ``left_out`` is 0 (no budget cut it)."""
        if isinstance(key, slice):
            return Results(super().__getitem__(key), 0, self.mode, self.analysis, self.why_empty)
        return super().__getitem__(key)

    def to_dicts(self, scores_as: str = "string") -> list[dict[str, Any]]:
        """The JSON shape of each hit; ``scores_as="float"`` keeps scores as floats."""
        check_choice("scores_as", scores_as, SCORE_FORMATS)
        return [hit.to_dict(scores_as) for hit in self]

    def _repr_html_(self) -> str:
        """The hits as a table in Jupyter: rank, score, citation, snippet with the matched words
        marked, source and date (in a terminal the list shows as plain text)."""
        if self:
            return hits_table(self, analysis=self.analysis)
        return f"<p>no results{': ' + html.escape(self.why_empty) if self.why_empty else ''}</p>"

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per hit, scores as floats (pandas is optional)."""
        try:
            import pandas as pd
        except ImportError:
            raise VecBookError("to_pandas needs pandas: run `pip install pandas`") from None
        columns = [f.name for f in dataclasses.fields(Hit)]
        frame = pd.DataFrame([dataclasses.asdict(hit) for hit in self], columns=columns)
        # Fixed types, whatever the hits: pandas would infer object columns for no hits, and
        # floats (17.0) for line numbers once a SQLite row (no lines) is among them.
        text = pd.Series([""]).dtype  # what this pandas makes of text
        return frame.astype({**PANDAS_TYPES, **{name: text for name in PANDAS_TEXT_COLUMNS}})


def mark_matches(text: str, terms: Sequence[str], mark: Callable[[str], str],
                 plain: Callable[[str], str] = lambda part: part, analysis: Analysis = ENGLISH) -> str:
    """``text`` with each word whose term is one of ``terms``' (as the keyword index matched them:
    ``boilers`` marks ``boiler``, ``cafe`` marks ``Café``, ``长城`` marks that bigram) passed
    through ``mark``, and the text between through ``plain`` (e.g. an HTML escape)."""
    # A sign's term (# of #️⃣, © of ©️) is no word without its selector: it stands for itself.
    wanted = {analysis.term(word) for term in terms
              for word in [word for _, _, word in word_spans(term)] or [term]} - {None}
    spans = [(start, end) for start, end, word in word_spans(text) if analysis.term(word) in wanted] if wanted else []
    # A one-character query term (伞) found inside a run's bigrams (带伞): the character alone.
    inside = character_spans(text, 0, None, wanted, analysis.term) if wanted else []
    marked: list[list[int]] = []
    for start, end in sorted({*spans, *((start, end) for start, end, _ in inside)}) if inside else spans:
        # the whole picture a matched emoji is part of (👩 of 👨‍👩‍👧, 🏴 of a flag and its tags):
        # a mark inside a grapheme cluster would part it on the screen
        if not text[max(0, start - 1):end + 1].isascii():
            start, end = cluster_start(text, start), cluster_end(text, end)
        if marked and start <= marked[-1][1]:  # overlapping bigrams: one mark
            marked[-1][1] = max(marked[-1][1], end)
        else:
            marked.append([start, end])
    out, position = [], 0
    for start, end in marked:
        out += [plain(text[position:start]), mark(text[start:end])]
        position = end
    out.append(plain(text[position:]))
    return "".join(out)


def record_date(metadata: dict[str, Any]) -> str:
    """A record's date as written (``date`` or ``Date`` metadata), or ""."""
    value = next((v for k, v in metadata.items() if k.lower() == "date"), None)
    if isinstance(value, list):
        value = value[0] if value else None
    return "" if value is None else str(value)


def hits_table(hits: Sequence[Hit], ranked: bool = True, analysis: Callable[[str], Analysis] | None = None) -> str:
    """HTML table of hits; every value from the records is escaped. ``analysis``: each source's
    keyword analysis, so words are marked by the stems that matched them (English without it)."""
    rows = []
    for rank_number, hit in enumerate(hits, 1):
        snippet = mark_matches(hit.snippet or hit.text, hit.matched_terms,
                               lambda word: f"<mark>{html.escape(word)}</mark>", html.escape,
                               ENGLISH if analysis is None else analysis(hit.source))
        rows.append([*([str(rank_number)] if ranked else []), f"{hit.similarity_score:.3f}",
                     html.escape(hit.citation), _cell(snippet), html.escape(hit.source),
                     html.escape(record_date(hit.metadata))])
    return _table([*(["rank"] if ranked else []), "score", "citation", "snippet", "source", "date"], rows)


def _cell(escaped: str) -> str:
    """Escaped text with its line breaks kept."""
    return escaped.replace("\n", "<br>")


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """An HTML table of cells already escaped; ``dir="auto"`` lets right-to-left text read right,
    and ``text-align:start`` start at the right (Jupyter aligns cells right, a fixed left would not)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td dir="auto" style="text-align:start; vertical-align:top">{c}</td>'
                                    for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


T = TypeVar("T")


def within_budget(hits: Sequence[T], budget: int | None, chars: Callable[[T], int]) -> tuple[list[T], int]:
    """The hits, best first, whose texts fit in ``budget`` characters together, and how many
    were left out: a hit that does not fit in what is left is left out, and a later, shorter
    one may still fill the rest. ``budget`` None keeps every hit."""
    if budget is None:
        return list(hits), 0
    kept, left = [], budget
    for hit in hits:
        size = chars(hit)
        if size <= left:
            kept.append(hit)
            left -= size
    return kept, len(hits) - len(kept)


def check_max_total_chars(value: Any) -> int | None:
    """``max_total_chars`` must be None or a whole number of characters of at least 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOTAL_CHARS:
        raise QueryError(f"max_total_chars must be a whole number of characters from 1 to {MAX_TOTAL_CHARS:,}, "
                         f"got {value!r}")
    return value


def check_max_chars(value: Any) -> int | None:
    """``max_chars`` must be None or a whole number of characters from 0 to MAX_CHARS."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CHARS:
        raise QueryError(f"max_chars must be a whole number of characters from 0 to {MAX_CHARS:,}, got {value!r}")
    return value


def check_context(value: Any) -> int:
    """``context`` (records around a ``get``) must be a whole number from 0 to MAX_CONTEXT."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CONTEXT:
        raise QueryError(f"context must be a whole number of records from 0 to {MAX_CONTEXT}, got {value!r}")
    return value


def cut_hit(hit: Hit, held: Sequence[Record], lead: int, focus: tuple[int, int], limit: int) -> Hit:
    """``hit`` with its text cut to ``limit`` characters around ``focus`` (its snippet's stretch in
    the text of ``held[lead]``; ``held``: the records whose texts, a line each, make its text),
    and its lines and citation narrowed to the lines of the text shown."""
    starts = list(itertools.accumulate((len(record.text) + 1 for record in held[:-1]), initial=0))
    start, end = cut_around(hit.text, (starts[lead] + focus[0], starts[lead] + focus[1]), limit)
    cut = dataclasses.replace(hit, text=hit.text[start:end], truncated=True)
    lines = []
    for record, at in zip(held, starts):
        a, b = max(start, at), min(end, at + len(record.text))
        if a < b:
            lines.append(lines_shown(record, record.text_start - at + a, record.text_start - at + b))
    if hit.line_number is None or not lines:  # a SQLite row keeps its row; nothing shown, its record
        return cut
    first, last = min(a for a, _ in lines), max(b for _, b in lines)
    # The id of the first message shown, where a window's first message opens the text shown.
    anchor = held[starts.index(start)].citation.partition("#")[2] if start in starts else ""
    return dataclasses.replace(cut, line_number=first, end_line=last,
                               citation=f"{hit.file_path}:{first}-{last}" + (f"#{anchor}" if anchor else ""))


def check_query(query: Any, name: str = "query") -> str:
    """A query must be a non-blank string of at most MAX_QUERY_CHARS characters."""
    if not isinstance(query, str) or not query.strip():
        raise QueryError(f"{name} must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"{name} is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,}")
    return query


def check_max_results(value: Any) -> int:
    """max_results must be an integer from 1 to MAX_RESULTS_LIMIT."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(f"max_results must be an integer, got {value!r}")
    if not 1 <= value <= MAX_RESULTS_LIMIT:
        raise QueryError(f"max_results must be between 1 and {MAX_RESULTS_LIMIT}, got {value}")
    return value


def check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise QueryError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise QueryError(f"{name} must be true or false, got {value!r}")
    return value


def check_half_life(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 100_000:
        raise QueryError(f"recency_half_life_days must be a number of days above 0, got {value!r}")
    return float(value)


def check_rrf_k(value: Any) -> int:
    """``rrf_k`` (reciprocal rank fusion's constant) must be a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise QueryError(f"rrf_k must be a positive integer, got {value!r}")
    return value


def check_unit(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise QueryError(f"{name} must be a number between 0 and 1, got {value!r}")
    return float(value)


def unmatched(scored: Sequence[Scored]) -> frozenset[int]:
    """The records among ``scored`` (as ranked, before any recency blend) that matched nothing
    of the query: a score of exactly 0 with no keyword score. Only linear fusion gives one: its
    scaling puts the least close candidate at 0, and with no query word it stays there."""
    return frozenset(s.index for s in scored if s.score == 0.0 and not s.keyword)


class HitShaper:
    """Turns ranked records of one query into hits: the snippet of each record's best
    passage (by keyword where a query word occurs, else by meaning) and its lines."""

    def __init__(self, snapshot: Snapshot, terms: dict[str, str], passage_scores: np.ndarray | None,
                 vector: np.ndarray | None, analysis: Callable[[str], Analysis] = lambda source: ENGLISH,
                 unmatched: frozenset[int] = frozenset()) -> None:
        """``passage_scores``: the keyword index's ``scores`` of the query's tokens, needed
        when ``terms`` has any (the ranking computed them already: no second pass);
        ``analysis``: the keyword analysis of a record's source (its collection's language);
        ``unmatched``: the records that matched nothing of the query (see ``unmatched``)."""
        self.snapshot = snapshot
        self.unmatched = unmatched
        self.analysis = analysis
        self.terms = terms
        self.vector = vector
        self._passage_scores = passage_scores if terms else None

    def hits(self, scored: Sequence[Scored], groups: Iterable[tuple[int, list[int]]], limit: int,
             max_chars: int | None = None) -> list[Hit]:
        """The hits of ranked records (``groups``: each record's position in ``scored``, best
        first, with the positions of the near-duplicates folded into it; read only as far as
        needed), at most ``limit``, consecutive windows of one chat conversation merged into one
        hit (``chat_hits``), each text cut to ``max_chars`` around its snippet (``cut_hit``)."""
        records = self.snapshot.records
        seen: list[tuple[int, list[int]]] = []

        def ranked() -> Iterator[tuple[int, float]]:
            for group in groups:
                seen.append(group)
                yield scored[group[0]].index, scored[group[0]].score
        # Windows merge only within max_chars too: a merged hit cut down to its best window's part
        # would lose the other windows, which as hits of their own come whole.
        most = None if max_chars is None else min(max_chars, MERGE_MAX_CHARS)
        merged = merge_touching(records, ranked(), limit, most)
        out = []
        for lead, joined in merged:
            held = [seen[p] for p in (lead, *joined)]
            folded = [records[scored[j].index].citation for _, copies in held for j in copies]
            lead_scored = scored[held[0][0]]
            best = lead_scored.index
            hit, focus = self.hit(lead_scored, folded)
            windows = sorted(scored[i].index for i, _ in held) if joined else [best]
            if joined:
                hit = dataclasses.replace(hit, text=merged_text(records, windows),
                                          metadata=merged_metadata(records, windows, hit.metadata),
                                          line_number=records[windows[0]].line_number,
                                          end_line=records[windows[-1]].end_line,
                                          citation=merged_citation(records, windows))
            if max_chars is not None and len(hit.text) > max_chars:
                hit = cut_hit(hit, [records[w] for w in windows], windows.index(best), focus, max_chars)
            out.append(hit)
        return out

    def hit(self, scored: Scored, duplicates: list[str]) -> tuple[Hit, tuple[int, int]]:
        """The hit for one ranked record, citing the records folded into it, and the stretch of
        its text that its snippet centres on (``Snippet.focus``)."""
        record = self.snapshot.records[scored.index]
        snippet = make_snippet(record.content, self._region(scored.index, record), self.terms,
                               self.analysis(record.source),
                               matched_in=without_sender_emoji(record.content, record.metadata_value("participants")))
        first, last = record.lines_of(snippet.start, snippet.end)
        hit = Hit(text=record.text, file_path=record.file_path, line_number=record.line_number,
                  end_line=record.end_line, similarity_score=scored.score, metadata=record.metadata,
                  source=record.source, id=record.id, citation=record.citation,
                  semantic_score=scored.semantic, keyword_score=scored.keyword, snippet=snippet.text,
                  snippet_line=first, snippet_end_line=last, matched_terms=snippet.matched_terms,
                  duplicates=duplicates, matches_query=scored.index not in self.unmatched)
        offset = record.text_start
        return hit, (snippet.focus[0] - offset, snippet.focus[1] - offset)

    def _region(self, index: int, record: Record) -> tuple[int, int]:
        """The best passage (or model window) of a record, within its text (headers left out
        where the text follows them)."""
        keywords = self.snapshot.keywords
        passages = keywords.passages_of(index)
        region = self.snapshot.passage_span(passages.start)
        if self._passage_scores is not None and len(passages) > 1:
            best = max(passages, key=lambda p: self._passage_scores[p])  # type: ignore[index]
            if self._passage_scores[best] > 0:
                return self._within_text(record, self.snapshot.passage_span(best))
        vectors = self.snapshot.vectors
        if self.vector is not None and vectors is not None:
            row = vectors.best_row(self.vector, index)
            if row is not None:
                start, end = vectors.spans[row]
                region = (int(start), int(end))
        return self._within_text(record, region)

    @staticmethod
    def _within_text(record: Record, region: tuple[int, int]) -> tuple[int, int]:
        offset = record.text_start
        start, end = max(region[0], offset), region[1]
        return (start, end) if end > start else (offset, len(record.content))



class Query:
    """Fluent search builder (the toolbox-store interface) over one VecBook."""

    def __init__(self, book: VecBook) -> None:
        self._book = book
        self._semantic: str | None = None
        self._keyword: str | None = None
        self._hybrid = False
        self._fusion: str | None = None
        self._weight: float | None = None
        self._rrf_k: int | None = None
        self._filters: dict[str, Any] = {}
        self._limit: int | None = None
        self._min_score: float | None = None

    def __repr__(self) -> str:
        """The search ``to_list()`` would run, with the book's defaults filled in."""
        try:
            mode: str | None = self._mode()
        except QueryError:
            mode = None  # no text yet: the query cannot run, but it can still be shown
        shown: dict[str, Any] = {"semantic": self._semantic or self._keyword,
                                 "keyword": self._keyword or self._semantic, "mode": mode}
        if mode == "hybrid":
            config = self._book.config
            shown["fusion"] = self._fusion or config.fusion
            if shown["fusion"] == "linear":
                shown["keyword_weight"] = config.keyword_weight if self._weight is None else self._weight
            else:
                shown["rrf_k"] = config.rrf_k if self._rrf_k is None else self._rrf_k
        shown["filters"] = self._filters
        shown["limit"] = self._book.config.max_results if self._limit is None else self._limit
        if self._min_score is not None:
            shown["min_score"] = self._min_score
        return "Query(" + ", ".join(f"{key}={value!r}" for key, value in shown.items()) + ")"

    def semantic(self, text: str) -> Query:
        """Text to embed for semantic similarity."""
        self._semantic = check_query(text, "semantic text")
        return self

    def keyword(self, text: str) -> Query:
        """Text to match with BM25."""
        self._keyword = check_query(text, "keyword text")
        return self

    def hybrid(self, method: str | None = None, keyword_weight: float | None = None,
               rrf_k: int | None = None) -> Query:
        """Fuse both: ``method`` is ``rrf`` or ``linear`` (default: the configured ``fusion``;
        ``keyword_weight`` in [0, 1]; ``rrf_k`` a whole number of at least 1). A bad value raises
        here, as ``.limit`` and ``.filter`` do, not when the query runs."""
        fusion = None if method is None else check_choice("method", method, FUSIONS)
        weight = None if keyword_weight is None else check_unit("keyword_weight", keyword_weight)
        rrf_k = None if rrf_k is None else check_rrf_k(rrf_k)
        self._hybrid = True
        self._fusion, self._weight, self._rrf_k = fusion, weight, rrf_k
        return self

    def filter(self, filters: dict[str, Any]) -> Query:
        """Add Django-style metadata filters (calls accumulate)."""
        if not isinstance(filters, dict):  # parse_filters takes None as "no filters"; here it is a mistake
            raise QueryError(f"filters must be an object mapping keys to values, got {type(filters).__name__}")
        parse_filters(filters)  # fail here, where the mistake was made
        self._filters.update(filters)
        return self

    def limit(self, n: int) -> Query:
        """Maximum number of hits."""
        self._limit = check_max_results(n)
        return self

    def min_score(self, score: float) -> Query:
        """Drop hits scoring below this (what the score means in each mode and fusion: see
        ``VecBook.search``; a nonsense query's best linear hybrid hit scores about 0.25)."""
        self._min_score = check_unit("min_score", score)
        return self

    def _mode(self) -> str:
        if self._hybrid or (self._semantic and self._keyword):
            return "hybrid"
        if self._semantic:
            return "semantic"
        if self._keyword:
            return "keyword"
        raise QueryError("the query has no text: call .semantic(...) and/or .keyword(...)")

    def to_list(self) -> Results:
        """Run the query."""
        mode = self._mode()
        semantic = self._semantic or self._keyword or ""
        keyword = self._keyword or self._semantic or ""
        return self._book._search(semantic, keyword, self._limit, mode, self._filters or None,
                                  self._min_score, self._fusion, self._weight, self._rrf_k)

    def to_dicts(self, scores_as: str = "string") -> list[dict[str, Any]]:
        """Run the query; hits as JSON-shaped dicts (``scores_as="float"`` keeps scores as floats)."""
        check_choice("scores_as", scores_as, SCORE_FORMATS)  # before the search, not after it
        return self.to_list().to_dicts(scores_as)

    def to_pandas(self) -> Any:
        """Run the query; hits as a pandas DataFrame."""
        return self.to_list().to_pandas()
