"""Soft preferences applied to ranked candidates before they are cut to the k best: recency
(a half-life), a chat participant the query names, and the span of days its date words name.
Each blends a candidate's score with the preference; none is a filter."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from .build import Snapshot
from .chat_hits import NAME_WEIGHT, named_windows
from .date_words import DATE_WEIGHT, in_span, query_span
from .rank import Scored
from .snippets import recency_blend


def blended(snapshot: Snapshot, scored: list[Scored], query: str, mask: np.ndarray | None,
            half_life: float | None) -> list[Scored]:
    """``scored`` with each preference the query (or ``half_life``) asks for blended in."""
    if half_life:
        scored = _recent(snapshot, scored, half_life)
    if theirs := named_windows(snapshot.records, [s.index for s in scored], query):  # chat speakers it names
        scored = [dataclasses.replace(s, score=preferred(s.score, NAME_WEIGHT, s.index in theirs)) for s in scored]
    if span := query_span(query, snapshot.columns.dates, mask):  # "in March", "2 weeks ago"
        inside = in_span(snapshot.records, [s.index for s in scored], span)
        scored = [dataclasses.replace(s, score=preferred(s.score, DATE_WEIGHT, s.index in inside)) for s in scored]
    return scored


def preferred(score: float, weight: float, met: bool) -> float:
    """A candidate's score under a soft preference of ``weight``: (1 - weight) x its score, plus
    ``weight`` where it ``met`` the preference (scores stay in [0, 1]; one that meets it gains
    ~weight on the rest, so it passes close matches while a clearly better one stays first)."""
    return (1.0 - weight) * score + (weight if met else 0.0)


def _recent(snapshot: Snapshot, scored: list[Scored], half_life: float) -> list[Scored]:
    """Each candidate's score blended with the decay of its ``date`` (see snippets.recency_blend)."""
    days = snapshot.columns.dates()
    today = time.time() / 86_400.0
    return [dataclasses.replace(s, score=recency_blend(s.score, float(days[s.index]), today, half_life))
            for s in scored]
