"""Ranking: metadata filters, score fusion (RRF and linear) and the per-query ranking of candidates.
The functions are pure (indexes and arrays in, scores out); FilterColumns caches filter columns per index."""

from __future__ import annotations

import difflib
import fnmatch
import json
import math
import re
import threading
import time
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, Sequence

import numpy as np

from .config import QueryError
from .index import KeywordIndex, VectorIndex, top_k
from .records import Record
from .snippets import date_days

FILTER_OPERATORS = ("exact", "ne", "gt", "gte", "lt", "lte", "in", "contains", "startswith", "exists")
# Each retriever contributes this many candidates (or max_results, if larger)
# to fusion; deeper lists only add tail noise to RRF.
FUSION_DEPTH = 100
# Linear fusion scales each list by its candidates' range, but never to a top below these
# (see floored_minmax): a best cosine under 0.6 or a best keyword score under 0.4 is a
# weak match and stays one. Chosen with the keyword weight on SciFact's 809 train
# queries (bench/fusion.py: nDCG@10 0.7428 against 0.7403 for plain min-max).
SEMANTIC_CEILING = 0.6
KEYWORD_CEILING = 0.4
# A query in a language the embedding model does not read (vecbook.languages) leans on keywords
# in hybrid search: linear fusion weighs keywords at least this much, and RRF gives the keyword
# list this share. Its meaning scores are then noise that favours other text the model cannot
# read either (a German query put lorem-ipsum chat lines above the German note holding both of
# its words); at 0.9 a record holding a ninth of the best keyword match outranks the best
# record by meaning alone, which still orders close keyword matches and fills in after them
# (at 0.8 a chat message sharing one question word passed the note holding the query's subject).
LEAN_KEYWORD_WEIGHT = 0.9
# A query whose words do not tell its language (vecbook.languages: a few Latin-script nouns)
# leans on keywords when some record holds its words and none of the semantic side's first
# UNREAD_DEPTH candidates holds any: the model's idea of it shares nothing with what was typed.
UNREAD_DEPTH = 10
_MISSING = object()
_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
# What gt/gte/lt/lte accept besides numbers: an ISO-8601 date, optionally with a time and
# an offset. ISO text sorts chronologically, so such values keep comparing as text; any
# other text would compare alphabetically, which is never what a range filter means.
_ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
_COMPARISONS = ("gt", "gte", "lt", "lte")


@dataclass(frozen=True)
class Condition:
    """One parsed filter: ``date__gte: "2024-01-01"`` -> field, path, op, value."""

    key: str
    field: str  # "metadata", "source" or "file_path"
    path: tuple[str, ...]
    op: str
    value: Any
    # Set for the shorthand filters (``since``, ``until``, ``participants``): how the user
    # wrote it, "since 30d", so that an error speaks of what was typed, not of "date__gte".
    shorthand: str = ""


def parse_filters(filters: dict[str, Any] | None) -> list[Condition]:
    """Validate Django-style filters; raise QueryError naming the key at fault."""
    if filters is None:
        return []
    if not isinstance(filters, dict):
        raise QueryError(f"filters must be an object mapping keys to values, got {type(filters).__name__}")
    return [_parse_condition(str(key), value) for key, value in filters.items()]


def _parse_condition(key: str, value: Any) -> Condition:
    name, op = key, "exact"
    if "__" in key:
        name, op = key.rsplit("__", 1)
        if op not in FILTER_OPERATORS:
            raise QueryError(f"unknown filter operator '{op}' in '{key}' (use one of: {', '.join(FILTER_OPERATORS)})")
    if not name:
        raise QueryError(f"filter '{key}' has no key before the operator")
    lowered = name.lower()
    if lowered.startswith("metadata."):
        field_name, path = "metadata", tuple(name[len("metadata."):].split("."))
    elif lowered in ("source", "file_path"):
        field_name, path = lowered, ()
    else:
        field_name, path = "metadata", tuple(name.split("."))
    if any(not part for part in path):
        raise QueryError(f"filter key '{key}' has an empty path segment")
    _check_filter_value(key, op, value)
    if op == "in":
        value = list(value)
    return Condition(key, field_name, path, op, value)


_SPAN_RE = re.compile(r"^\s*(\d+)\s*([hdwmy])\s*$", re.I)
_SPAN_DAYS = {"h": 1 / 24, "d": 1, "w": 7, "m": 30.4375, "y": 365.25}


def convenience_conditions(sources: Sequence[str] | None = None, since: str | None = None,
                           until: str | None = None, participants: Sequence[str] | None = None,
                           now: float | None = None) -> list[Condition]:
    """The assistants' shorthand as filters: ``sources`` (any of these collections, ``files``
    for the .txt records), ``since``/``until`` (an ISO date or date-time, or a span back
    from now such as ``30d``, ``2w``, ``6m``, ``1y``, ``12h``; ``until`` a date includes that
    whole day) and ``participants`` (each one named takes part: a whole-word match)."""
    conditions = []
    if sources:
        conditions.append(_parse_condition("source__in", list(_string_list("sources", sources))))
    if since:
        start = _moment("since", since, now)
        conditions.append(replace(_parse_condition("date__gte", start), shorthand=f"since {since}"))
    if until:
        moment = _moment("until", until, now)
        op = "lt" if len(moment) == 10 else "lte"
        end = _next_day(moment) if op == "lt" else moment
        if since and date_days(start) >= date_days(end) + (0 if op == "lt" else 1e-9):
            raise QueryError(f"since {since} is later than until {until}: no record can be dated between them "
                             f"(swap them?)")
        conditions.append(replace(_parse_condition(f"date__{op}", end), shorthand=f"until {until}"))
    for person in _string_list("participants", participants or []):
        conditions.append(replace(_parse_condition("participants__contains", person),
                                  shorthand=f"participants {person}"))
    return conditions


def _string_list(name: str, values: Any) -> list[str]:
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in values):
        raise QueryError(f"{name} must be a list of names, got {values!r}")
    return [v.strip() for v in values]


def _moment(name: str, value: Any, now: float | None) -> str:
    """An ISO date or date-time as given, or a span back from ``now`` as an ISO date-time (UTC)."""
    from datetime import date, datetime, timedelta, timezone

    if not isinstance(value, str):
        raise QueryError(f"{name} must be a date such as 2024-01-31 or a span such as 30d, got {value!r}")
    span = _SPAN_RE.match(value)
    if span:
        moment = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc)
        moment -= timedelta(days=int(span.group(1)) * _SPAN_DAYS[span.group(2).lower()])
        return moment.replace(microsecond=0).isoformat()
    text = value.strip()
    try:
        (date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text))
    except ValueError:
        raise QueryError(f"{name} must be an ISO date (2024-01-31), a date-time (2024-01-31T09:00) or a span "
                         f"back from now (30d, 2w, 6m, 1y, 12h); got {value!r}") from None
    return text


def _next_day(day: str) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def _check_filter_value(key: str, op: str, value: Any) -> None:
    scalar = (str, int, float, bool)
    if op == "exists":
        if not isinstance(value, bool):
            raise QueryError(f"filter '{key}' needs true or false, got {value!r}")
    elif op == "in":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, scalar) for v in value):
            raise QueryError(f"filter '{key}' needs a list of values, got {value!r}")
    elif not isinstance(value, scalar) or (isinstance(value, float) and not math.isfinite(value)):
        raise QueryError(f"filter '{key}' needs a string or number, got {value!r}")
    elif op in _COMPARISONS and not _is_comparable(value):
        raise QueryError(f"filter '{key}' needs a number or an ISO date such as 2024-01-31 or "
                         f"2024-01-31T09:30:00+01:00, got {value!r}")


def _is_comparable(value: Any) -> bool:
    """A number, or text that is a number or an ISO-8601 date/datetime."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    text = value.strip()
    return bool(_NUMBER_RE.match(text) or _ISO_DATE_RE.match(text))


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER_RE.match(value.strip()):
        return float(value)
    return None


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True).casefold()
    return str(value).casefold()


def compare_values(a: Any, b: Any) -> int:
    """-1, 0 or 1: numbers compare as numbers, everything else (ISO dates too) as case-folded text."""
    na, nb = _as_number(a), _as_number(b)
    left, right = (na, nb) if na is not None and nb is not None else (_as_text(a), _as_text(b))
    return (left > right) - (left < right)


def value_matches(value: Any, op: str, target: Any, glob: bool = False) -> bool:
    """Whether one metadata value satisfies ``op target``; ``_MISSING`` means the key is absent."""
    if value is _MISSING:
        return op == "ne" or (op == "exists" and not target)
    if op == "exists":
        return bool(target)
    items = value if isinstance(value, list) else [value]
    if op in ("exact", "ne", "in"):
        targets = target if op == "in" else [target]
        found = any(_equal(v, t, glob) for v in items for t in targets)
        return not found if op == "ne" else found
    if op == "contains":
        if isinstance(value, list):
            return any(_equal(v, target, False) or _has_word(v, target) for v in value)
        if isinstance(value, dict):
            return _as_text(target) in {_as_text(k) for k in value}
        return _as_text(target) in _as_text(value)
    if op == "startswith":
        return any(_as_text(v).startswith(_as_text(target)) for v in items)
    sign = {"gt": (1,), "gte": (0, 1), "lt": (-1,), "lte": (-1, 0)}[op]
    return any(compare_values(v, target) in sign for v in items)


def _has_word(member: Any, target: Any) -> bool:
    """Whether a list member holds ``target`` as a whole word: "ana" is in "Ana Lopez",
    but "work" is not in "homework" (a list holds names and labels, not prose)."""
    if isinstance(member, (dict, list)):
        return False
    word = re.escape(_as_text(target))
    return re.search(rf"(?<!\w){word}(?!\w)", _as_text(member)) is not None


def _equal(value: Any, target: Any, glob: bool) -> bool:
    if glob:
        return fnmatch.fnmatchcase(str(value), str(target))
    return compare_values(value, target) == 0


def lookup_metadata(metadata: dict[str, Any], path: tuple[str, ...]) -> Any:
    """A metadata value by key, case-insensitively; dotted paths walk nested JSON objects."""
    whole = ".".join(path)
    for candidate in (whole, None):
        if candidate is not None:
            found = _get_casefold(metadata, candidate)
            if found is not _MISSING or len(path) == 1:
                return found
    current: Any = metadata
    for part in path:
        if not isinstance(current, dict):
            return _MISSING
        current = _get_casefold(current, part)
        if current is _MISSING:
            return _MISSING
    return current


def _get_casefold(mapping: dict[str, Any], key: str) -> Any:
    if key in mapping:
        return mapping[key]
    folded = key.casefold()
    for name, value in mapping.items():
        if name.casefold() == folded:
            return value
    return _MISSING


class FilterColumns:
    """Per-index filter evaluation: each key's values are factorised once, and a
    predicate is evaluated over distinct values only, then spread with numpy."""

    def __init__(self, records: Sequence[Record], known_keys: frozenset[str] | None = None,
                 known_sources: list[str] | None = None) -> None:
        """``known_keys`` (casefolded metadata keys) and ``known_sources`` (sorted) may be
        given when the caller has them, rather than found by a pass over every record."""
        self.records = records
        self.known_keys = known_keys if known_keys is not None else {k.casefold() for r in records for k in r.metadata}
        self.known_sources = known_sources if known_sources is not None else sorted({r.source for r in records})
        self._columns: dict[tuple[str, tuple[str, ...]], tuple[np.ndarray, list[Any]]] = {}
        self._lock = threading.Lock()
        self._dates: np.ndarray | None = None
        self._refs: dict[str, int] | None = None
        self._having: dict[str, set[str]] = {}  # metadata key -> the sources some of whose records have it

    def find(self, ref: str) -> int | None:
        """The position of the record whose id or citation is ``ref`` (a citation without its
        ``#anchor``, or ``path:line`` for a line inside a record, also works)."""
        with self._lock:
            if self._refs is None:
                self._refs = {}
                for position, record in enumerate(self.records):
                    for key in (record.citation, record.citation.split("#", 1)[0], record.id):
                        self._refs.setdefault(key, position)
            refs = self._refs
        if ref in refs:
            return refs[ref]
        path, _, line = ref.rpartition(":")
        if not line.isdigit():
            return None
        return next((i for i, r in enumerate(self.records) if r.file_path == path and r.line_number is not None
                     and r.end_line is not None and r.line_number <= int(line) <= r.end_line), None)

    def dates(self) -> np.ndarray:
        """Each record's ``date`` metadata as days since 1970 (NaN where it has none), computed once."""
        with self._lock:
            if self._dates is None:
                self._dates = np.array([date_days(lookup_metadata(r.metadata, ("date",))) for r in self.records],
                                       dtype=np.float64)
            return self._dates

    def mask(self, conditions: Sequence[Condition]) -> np.ndarray | None:
        """Records matching every condition, or None when there are no conditions."""
        if not conditions:
            return None
        result = np.ones(len(self.records), dtype=bool)
        self._check_shorthand(conditions)
        for condition in conditions:
            self._check_known(condition)
            codes, uniques = self._column(condition)
            glob = condition.field == "file_path" and condition.op in ("exact", "in")
            verdict = np.array([value_matches(v, condition.op, condition.value, glob) for v in uniques]
                               + [value_matches(_MISSING, condition.op, condition.value)], dtype=bool)
            result &= verdict[codes]
        return result

    def _check_known(self, condition: Condition) -> None:
        """A key no record has, or a source no record comes from, is a typo: say so rather
        than return nothing."""
        if not self.records:
            return
        if condition.field == "source":
            self._check_source(condition)
        if condition.field != "metadata" or condition.shorthand:  # (see _check_shorthand)
            return
        whole, head = ".".join(condition.path).casefold(), condition.path[0].casefold()
        if whole in self.known_keys or head in self.known_keys:
            return
        close = difflib.get_close_matches(whole, sorted(self.known_keys), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        known = ", ".join(sorted(self.known_keys)[:20]) or "none"
        name = ".".join(condition.path)
        where = f" in '{condition.key}'" if condition.key != name else ""
        raise QueryError(f"unknown filter key '{name}'{where}: no record has it{hint} (known keys: {known})")

    def _check_shorthand(self, conditions: Sequence[Condition]) -> None:
        """``since``, ``until`` or ``participants`` over sources none of whose records has a
        date (or names participants) can match nothing: say which sources, in the words the
        user typed, rather than return no results (or name the filter key behind the shorthand)."""
        if not self.records:
            return
        searched = self._searched_sources(conditions)
        for condition in conditions:
            if not condition.shorthand:
                continue
            key = condition.path[0]
            having = self._sources_with(key)
            if any(source.casefold() in having for source in searched):
                continue
            dated = key == "date"
            what, kinds, others = (("has a date", "a Date: header, or the time of a message, mail or event",
                                    "sources with dates") if dated else
                                   ("names its participants", "chats, mail and calendars name them",
                                    "sources that name them"))
            having_them = [s for s in self.known_sources if s.casefold() in having]
            raise QueryError(f"{condition.shorthand}: no record of {', '.join(searched)} {what} ({kinds}), so none "
                             f"can match; {others}: {', '.join(having_them) or 'none'}")

    def _searched_sources(self, conditions: Sequence[Condition]) -> list[str]:
        """The sources a search covers: those its ``source`` conditions name, else all."""
        searched = list(self.known_sources)
        for condition in conditions:
            if condition.field == "source" and condition.op in ("exact", "in"):
                wanted = {_as_text(v) for v in (condition.value if condition.op == "in" else [condition.value])}
                searched = [s for s in searched if s.casefold() in wanted]
        return searched

    def _sources_with(self, key: str) -> set[str]:
        """The sources (casefolded) of which some record has metadata ``key``; computed once a key."""
        with self._lock:
            having = self._having.get(key.casefold())
        if having is None:
            having = {r.source.casefold() for r in self.records
                      if lookup_metadata(r.metadata, (key,)) not in (_MISSING, None)}
            with self._lock:
                self._having[key.casefold()] = having
        return having

    def _check_source(self, condition: Condition) -> None:
        if condition.op not in ("exact", "ne", "in"):
            return
        known = {s.casefold() for s in self.known_sources}
        wanted = condition.value if condition.op == "in" else [condition.value]
        unknown = [v for v in wanted if _as_text(v) not in known]
        if unknown:
            raise QueryError(
                f"no record comes from source '{unknown[0]}' (sources: {', '.join(self.known_sources)}); "
                f"'source' is the collection a record came from: for a metadata field named source, "
                f"filter on metadata.source={unknown[0]}")

    def _column(self, condition: Condition) -> tuple[np.ndarray, list[Any]]:
        """Codes per record into a list of distinct values; the last code means 'missing'."""
        cache_key = (condition.field, tuple(p.casefold() for p in condition.path))
        with self._lock:
            if cache_key in self._columns:
                return self._columns[cache_key]
        index: dict[Any, int] = {}
        uniques: list[Any] = []
        raw_codes = []
        for record in self.records:
            value = self._value(record, condition)
            if value is _MISSING:
                raw_codes.append(-1)
                continue
            token = _value_token(value)
            code = index.get(token)
            if code is None:
                code = index[token] = len(uniques)
                uniques.append(value)
            raw_codes.append(code)
        codes = np.asarray(raw_codes, dtype=np.int64)
        codes[codes < 0] = len(uniques)
        with self._lock:
            self._columns[cache_key] = (codes, uniques)
        return codes, uniques

    @staticmethod
    def _value(record: Record, condition: Condition) -> Any:
        if condition.field == "source":
            return record.source
        if condition.field == "file_path":
            return record.file_path
        return lookup_metadata(record.metadata, condition.path)


def _value_token(value: Any) -> Any:
    """A hashable stand-in for a metadata value, equal for equal values of one type: the
    value itself (with its type, so 1, 1.0, True and "1" stay apart) for a scalar, JSON for
    a list or table. The JSON encoding of every value took ~0.4 s a column at 100k records."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return type(value), value
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class Scored:
    """A ranked record index with its fused score and components (None: not computed)."""

    index: int
    score: float
    semantic: float | None
    keyword: float | None


def rrf_scores(rankings: Sequence[Sequence[int]], k: int,
               weights: Sequence[float] | None = None) -> dict[int, float]:
    """Reciprocal rank fusion, each list's terms times its weight (1 each unless given), divided
    by its maximum (first in every list) to lie in [0, 1]."""
    shares = weights or [1.0] * len(rankings)
    fused: dict[int, float] = {}
    for ranking, share in zip(rankings, shares):
        for rank, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + share / (k + rank)
    best = sum(shares) / (k + 1)
    return {item: score / best for item, score in fused.items()}


def linear_scores(cosine: np.ndarray, keyword: np.ndarray, keyword_weight: float,
                  core: np.ndarray | None = None) -> np.ndarray:
    """``keyword_weight`` x keyword + (1 - ``keyword_weight``) x semantic, each scaled to
    [0, 1] by :func:`floored_minmax` over the ``core`` candidates (the top FUSION_DEPTH of
    each list, so asking for more results never changes the first ones' scores)."""
    sem_ref = cosine if core is None else cosine[core]
    kw_ref = keyword if core is None else keyword[core]
    return (keyword_weight * floored_minmax(keyword, kw_ref, KEYWORD_CEILING)
            + (1.0 - keyword_weight) * floored_minmax(cosine, sem_ref, SEMANTIC_CEILING))


def floored_minmax(values: np.ndarray, reference: np.ndarray, ceiling: float) -> np.ndarray:
    """Min-max scaling by ``reference``'s range, except that the top of the range is at least
    ``ceiling``: a list whose best value is weak (nothing close in meaning, only a common
    word shared) is not stretched to 1 over a strong match in the other list."""
    if not len(values):
        return values
    ref = reference if len(reference) else values
    low, high = float(ref.min()), float(ref.max())
    if high - low < 1e-9:
        low = min(low, 0.0)  # one candidate (or all equal): measure it from zero, not from itself
    span = max(high - low, ceiling - low, 1e-12)
    return np.clip((values - low) / span, 0.0, 1.0)


def cosine_of(scores: np.ndarray, metric: str) -> np.ndarray:
    """The cosine behind semantic scores: (1 + c) / 2 for cosine; 1 / (1 + d) for l2, with
    d = 2 - 2c between the model's unit vectors."""
    if metric == "cosine":
        return 2.0 * scores - 1.0
    return 1.0 - (1.0 / np.maximum(scores, 1e-12) - 1.0) / 2.0


def _rrf_within_depth(sem_ids: list[int], kw_ids: list[int], candidates: np.ndarray, rrf_k: int,
                      weights: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
    """RRF over the top FUSION_DEPTH of each list (``weights``: semantic, keyword); deeper
    candidates (k > depth) rank after all of those.

    Counting only the first FUSION_DEPTH ranks keeps a record's score the same
    whatever max_results is, so asking for more never reorders the first hits.
    """
    core = rrf_scores([sem_ids[:FUSION_DEPTH], kw_ids[:FUSION_DEPTH]], rrf_k, weights)
    deep = rrf_scores([sem_ids, kw_ids], rrf_k, weights)
    # The lowest score a core record can have (in the lighter list alone, at its last rank), and
    # the highest a deeper one can, both normalised.
    floor = min(weights) * (rrf_k + 1) / (sum(weights) * (rrf_k + FUSION_DEPTH))
    ceiling = (rrf_k + 1) / (rrf_k + FUSION_DEPTH + 1)
    return np.array([core[i] if i in core else deep.get(i, 0.0) * floor / ceiling * 0.999
                     for i in candidates.tolist()])


def keyword_top(index: KeywordIndex, tokens: Sequence[str], k: int, mask: np.ndarray | None,
                passage_scores: np.ndarray | None = None,
                every: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Top keyword matches (indices, scores in [0, 1]) plus all normalised scores (None unless
    ``every``: keyword mode needs only the top, and skips a pass over every record).
    ``passage_scores`` is ``index.scores(tokens)`` where the caller has it already."""
    bound = index.upper_bound(tokens)
    if bound <= 0:
        best = np.zeros(index.size)
    else:
        best = index.best_per_record(index.scores(tokens) if passage_scores is None else passage_scores)
    candidates = best if mask is None else np.where(mask, best, 0.0)
    ids = np.flatnonzero(candidates > 0)  # a bool array: numpy finds its nonzeros ~8x faster than a float one's
    top_ids, top_scores = top_k(ids, candidates[ids], k)
    scale = bound if bound > 0 else 1.0  # dividing by one constant keeps the order
    return top_ids, top_scores / scale, (best / scale if every else None)


def rank(mode: str, k: int, *, vectors: VectorIndex | None, keywords: KeywordIndex,
         query_vector: np.ndarray | None, tokens: Sequence[str], mask: np.ndarray | None,
         fusion: str = "rrf", rrf_k: int = 60, keyword_weight: float = 0.5,
         passage_scores: np.ndarray | None = None, model_reads: bool | None = True) -> list[Scored]:
    """Score records for one query; returns candidates (at least the top k), unsorted by id.
    ``passage_scores``: ``keywords.scores(tokens)``, where the caller has computed it.
    ``model_reads``: whether the embedding model reads the query's language (None: its words do
    not tell, see vecbook.languages); where it does not, hybrid search leans on keywords."""
    if mode == "keyword":
        ids, scores, _ = keyword_top(keywords, tokens, k, mask, passage_scores, every=False)
        return [Scored(int(i), float(s), None, float(s)) for i, s in zip(ids, scores)]
    assert vectors is not None and query_vector is not None  # the facade guarantees this
    if mode == "semantic":
        ids, scores = vectors.top(query_vector, k, mask)
        return [Scored(int(i), float(s), float(s), None) for i, s in zip(ids, scores)]
    depth = max(k, FUSION_DEPTH)
    sem_ids, _ = vectors.top(query_vector, depth, mask)
    kw_ids, _, kw_all = keyword_top(keywords, tokens, depth, mask, passage_scores)
    candidates = np.union1d(sem_ids, kw_ids).astype(np.int64)
    found_ids, found_scores = vectors.scores_of(query_vector, candidates)
    semantic = dict(zip(found_ids.tolist(), found_scores.tolist()))
    numbers = candidates.tolist()  # Python ints and floats: the loops below skip numpy's scalars
    sem = np.array([semantic.get(i, 0.0) for i in numbers])
    assert kw_all is not None  # asked for (every=True); not input validation
    kw = kw_all[candidates]
    lean = not model_reads and (model_reads is False or _meaning_missed_the_words(sem_ids, kw_ids, kw_all))
    if fusion == "rrf":
        weights = (1.0 - LEAN_KEYWORD_WEIGHT, LEAN_KEYWORD_WEIGHT) if lean else (1.0, 1.0)
        total = _rrf_within_depth(sem_ids.tolist(), kw_ids.tolist(), candidates, rrf_k, weights)
    else:
        core = np.isin(candidates, np.union1d(sem_ids[:FUSION_DEPTH], kw_ids[:FUSION_DEPTH]))
        weight = max(keyword_weight, LEAN_KEYWORD_WEIGHT) if lean else keyword_weight
        total = linear_scores(cosine_of(sem, vectors.metric), kw, weight, core)
    return [Scored(i, t, semantic.get(i), w) for i, t, w in zip(numbers, total.tolist(), kw.tolist())]


def _meaning_missed_the_words(sem_ids: np.ndarray, kw_ids: np.ndarray, kw_all: np.ndarray) -> bool:
    """Whether some record holds the query's words (``kw_ids``: the keyword matches) while none
    of the semantic side's first UNREAD_DEPTH candidates holds any: the sign of a query the model
    did not read (vecbook.languages leaves a query of a few Latin-script nouns undecided)."""
    return len(kw_ids) > 0 and not kw_all[sem_ids[:UNREAD_DEPTH]].any()


def best_first(scored: list[Scored], records: Sequence[Any]) -> list[Scored]:
    """``scored`` by score, highest first, equal scores by record id: a sort on the score alone
    (a key made in C), then each run of equal scores by id. Ties are rare, and making every
    candidate's id for the sort key had cost ~0.15 ms of a 2 ms keyword search at 100k."""
    scored = sorted(scored, key=attrgetter("score"), reverse=True)  # stable: ties keep their order
    start = 0
    while start < len(scored):
        end = start + 1
        while end < len(scored) and scored[end].score == scored[start].score:
            end += 1
        if end - start > 1:
            scored[start:end] = sorted(scored[start:end], key=lambda s: records[s.index].id)
        start = end
    return scored
