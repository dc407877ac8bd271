"""Why a search came back empty, in the words it was asked in: the filter that left no record
(after the ones before it) and the values the records there hold, a query with no word to look
for (in any mode), a keyword query of stop words alone, or the records that passed holding none
of its words. Worked out only for a search without hits: a filter is evaluated once more for
each one before it."""

from __future__ import annotations

import math
from collections import Counter
from datetime import date, timedelta
from typing import Any, Sequence

import numpy as np

from .filter_values import MISSING, as_text, lookup_metadata
from .filters import Condition, FilterColumns
from .tokens import words_of

# How many of the values found are named (the most frequent first), and how many characters of each.
SHOWN_VALUES = 8
SHOWN_CHARS = 40


NO_WORD = "the query holds no word to look for"


def holds_no_word(mode: str, semantic_text: str, keyword_text: str) -> bool:
    """Whether the texts ``mode`` searches with hold no word (letters, digits or an emoji, as the
    keyword index reads them): ``?!`` or ``...``. Such a query is answered empty, in every mode:
    by meaning it finds the records nearest the model's reading of punctuation, which none of
    them matches."""
    texts = {"keyword": (keyword_text,), "semantic": (semantic_text,)}.get(mode, (semantic_text, keyword_text))
    return not any(words_of(text) for text in texts)


def why_empty(columns: FilterColumns, conditions: Sequence[Condition], mode: str, query: str,
              tokens: Sequence[str], cut: tuple[float, float] | None, words: bool = True) -> str | None:
    """What left a search without hits (None where nothing better than "no results" can be said):
    ``conditions`` its filters, ``tokens`` its keyword terms, ``cut`` its ``min_score`` and the
    best score it cut, where that floor left none of the hits ranked; ``words`` False for a
    query that holds no word (``holds_no_word``)."""
    passing, before = np.ones(len(columns.records), dtype=bool), []
    for condition in sorted(conditions, key=lambda c: c.field != "source"):  # "in mail, nothing since..."
        kept = columns.mask([*before, condition])
        if kept is not None and not kept.any():
            return _emptied(columns, condition, before, passing)
        before.append(condition)
        passing = kept if kept is not None else passing
    among = f" of the {int(passing.sum())} that pass {_names(before)}" if before else ""
    if cut is not None:
        return f"min_score {cut[0]:g} left no hit{among} (the best scored {cut[1]:.6f})"
    if not words:
        return NO_WORD
    if mode == "keyword" and not tokens:
        typed = list(dict.fromkeys(words_of(query)))
        if typed:
            return f"the query's words ({', '.join(typed)}) are stop words, which keyword search leaves out"
        return NO_WORD
    if mode == "keyword":
        return f"no record{among} holds a word of the query"
    return None


def _emptied(columns: FilterColumns, condition: Condition, before: list[Condition], passing: np.ndarray) -> str:
    """The message for ``condition``, which leaves none of the records ``passing`` those ``before`` it."""
    among = f" of the {int(passing.sum())} that pass {_names(before)}" if before else ""
    if condition.path[:1] == ("date",) and condition.field == "metadata":
        dates = _dates(columns, passing, "they" if before else "the records")
        return f"{_name(condition)} leaves no record{among}; {dates}"
    key = condition.shorthand.split(" ", 1)[0] if condition.shorthand else ".".join(condition.path)
    if condition.field == "source":
        key = "sources"
    return f"{_name(condition)} leaves no record{among}; {_values(columns, condition, passing, key)}"


def _name(condition: Condition) -> str:
    """A condition as it was asked for: ``since last week``, ``tags=work``."""
    if condition.shorthand:
        return condition.shorthand
    if condition.key == "source__in":  # sources=[...], --source
        return f"sources {', '.join(map(as_text, condition.value))}"
    value = ",".join(map(as_text, condition.value)) if isinstance(condition.value, (list, tuple)) else condition.value
    return f"{condition.key}={value}"


def _names(conditions: Sequence[Condition]) -> str:
    return " and ".join(_name(c) for c in conditions)


def _dates(columns: FilterColumns, passing: np.ndarray, which: str) -> str:
    """The span of the dates of the records ``passing``: ``they are dated 2024-03-09 to 2024-05-01``,
    and how many have none (a date filter leaves those out, whatever its dates)."""
    days = columns.dates()[passing]
    dated = days[np.isfinite(days)]
    if not len(dated):
        return f"{'none of them' if which == 'they' else 'no record'} has a date"
    first, last = (date(1970, 1, 1) + timedelta(days=math.floor(float(d))) for d in (dated.min(), dated.max()))
    undated = len(days) - len(dated)
    return f"{which} are dated {first}" + ("" if first == last else f" to {last}") + (
        f" ({undated} of them {'has' if undated == 1 else 'have'} no date)" if undated else "")


def _values(columns: FilterColumns, condition: Condition, passing: np.ndarray, key: str) -> str:
    """The values the records ``passing`` hold under ``condition``'s key, most frequent first."""
    counts: Counter[str] = Counter()
    for record, kept in zip(columns.records, passing.tolist()):
        if not kept:
            continue
        value: Any = record.source if condition.field == "source" else \
            record.file_path if condition.field == "file_path" else lookup_metadata(record.metadata, condition.path)
        if value is MISSING or value is None:
            continue
        counts.update(dict.fromkeys(map(str, value if isinstance(value, list) else [value]), 1))
    if not counts:
        return f"none of them has {key}"
    shown = [v if len(v) <= SHOWN_CHARS else v[:SHOWN_CHARS - 1] + "…" for v, _ in counts.most_common(SHOWN_VALUES)]
    more = f" and {len(counts) - len(shown)} more" if len(counts) > len(shown) else ""
    return f"{key} there: {', '.join(shown)}{more}"
