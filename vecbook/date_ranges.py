"""The date range among a search's filters (``since``/``until``, ``date__gte``...): which
conditions make it, and each recurring event's hit marked with the occurrence that put it
there. The filters themselves are evaluated in ``filters``."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .records import iso_moment
from .recurrence import RULE_ERRORS, occurrence_within, series_matches

if TYPE_CHECKING:
    from .filters import Condition
    from .hits import Hit

COMPARISONS = ("gt", "gte", "lt", "lte")
# The key whose value ends a record's span (a chat window's last message, an event's end):
# ``since`` finds a record that reaches into the range, not only one that begins there.
SPAN_END = ("end_date",)
# Text a date range compares as a date: it starts with one (2024-03-05, 2024-03-05T14:00+01:00).
DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}")
# Moments are compared as whole microseconds from this one: as float seconds, two moments a
# microsecond apart are one from about 2100 on (float64 steps are 3e-5 s by the year 9999).
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def with_occurrences(hits: list[Hit], conditions: Sequence[Condition]) -> list[Hit]:
    """Under a date range, each recurring event's hit (``rrule`` metadata) with ``occurrence``:
    its first occurrence inside the range (a plain date for an all-day event), which is what
    put it there; its ``date`` stays the series' first."""
    if not date_ranges(conditions):
        return hits
    return [_with_occurrence(hit, reaching_ranges(conditions, hit.metadata)) if isinstance(hit.metadata.get("rrule"), str)
            else hit for hit in hits]


def _with_occurrence(hit: Hit, ranges: tuple[tuple[str, str], ...]) -> Hit:
    metadata = hit.metadata
    try:
        when = occurrence_within(metadata["rrule"], ranges)
    except RULE_ERRORS:  # unreadable: its own date put it in range
        return hit
    if when is None:
        return hit
    text = when.date().isoformat() if metadata.get("all_day") else when.replace(microsecond=0).isoformat()
    # beside the date (the series' first): the command line's one line of metadata, cut to the
    # terminal's width, lost it after the rule, and showed the first date alone
    items = [(key, value) for key, value in metadata.items() if key != "occurrence"]
    at = next((i + 1 for i, (key, _) in enumerate(items) if key == "date"), len(items))
    return replace(hit, metadata=dict([*items[:at], ("occurrence", text), *items[at:]]))


def date_ranges(conditions: Sequence[Condition]) -> tuple[tuple[str, str], ...]:
    """The ``(op, value)`` bounds of the date range among ``conditions``."""
    return tuple((c.op, str(c.value)) for c in conditions if is_date_range(c))


def is_date_range(condition: Condition) -> bool:
    """A gt/gte/lt/lte condition on the ``date`` metadata (``since``/``until`` are such)."""
    return (condition.field == "metadata" and condition.op in COMPARISONS
            and tuple(p.casefold() for p in condition.path) == ("date",))


def series_in_range(dated: np.ndarray, codes: np.ndarray, rules: list[Any], ends: np.ndarray,
                    records: Sequence[Any], conditions: Sequence[Condition]) -> None:
    """Replace in ``dated`` the verdict of each record of a series (``codes`` into ``rules``, the
    last code none) with whether an occurrence is in the range. A series is its rule and its end
    (``ends``, codes of ``end_date``): two events of one start and rule may last apart (a standup
    and a focus block both from Monday 09:00), and ``since`` moves back by each one's length."""
    _series, firsts, inverse = np.unique(codes.astype(np.int64) * (int(ends.max(initial=0)) + 1) + ends,
                                        return_index=True, return_inverse=True)
    verdicts = [series_matches(rules[codes[first]], reaching_ranges(conditions, records[first].metadata))
                if codes[first] < len(rules) and isinstance(rules[codes[first]], str) else None
                for first in firsts.tolist()]
    # spread with numpy in one pass, not one pass over the records a series
    counted = np.array([v is not None for v in verdicts], dtype=bool)[inverse.ravel()]
    dated[counted] = np.array([bool(v) for v in verdicts], dtype=bool)[inverse.ravel()][counted]


def reaching_ranges(conditions: Sequence[Condition], metadata: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """``date_ranges`` for one recurring event: a ``since`` bound (a condition that reads the
    span's end too) moved back by the event's length (its ``end_date`` less its ``date``), so an
    occurrence begun before the range and lasting into it is in it, as a single event is."""
    length = _length(metadata)
    return tuple((c.op, _moved_back(str(c.value), length, metadata) if c.or_path and length else str(c.value))
                 for c in conditions if is_date_range(c))


def _length(metadata: dict[str, Any]) -> timedelta | None:
    """How long an event lasts from its start to its end (to its last day's start, all day)."""
    start, end = metadata.get("date"), metadata.get("end_date")
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        length = iso_moment(end) - iso_moment(start)
    except (ValueError, TypeError):  # unreadable, or one with an offset and one without
        return None
    return length if length > timedelta(0) else None


def _moved_back(bound: str, length: timedelta, metadata: dict[str, Any]) -> str:
    """``bound`` less ``length``: a plain date stays one where the event is all day (its last
    day reaches a bound inside that day, as ``filter_values.reaches`` has it)."""
    all_day = len(str(metadata.get("end_date")).strip()) == 10
    try:
        moved = iso_moment(bound[:10] if all_day else bound) - length
    except ValueError:
        return bound
    return moved.date().isoformat() if all_day else moved.isoformat()


class DateColumn:
    """A filter column's distinct values laid out once for date ranges, so that a range is
    compared in numpy rather than value by value (100,000 chat windows, each its own moment:
    ~1.5 s a bound in Python). It gives what ``filters.value_matches`` gives for an ISO bound:
    ASCII text starting with a date compares as text (lower case, as filters fold it), and as a
    moment where both it and the bound carry an offset from UTC (``instant``); any other scalar is
    never in a range. A list or non-ASCII text is left to the caller (``slow``)."""

    def __init__(self, uniques: Sequence[Any], instant: Callable[[str], Any]) -> None:
        count = len(uniques)
        self.slow = np.zeros(count, dtype=bool)
        self.dated = np.zeros(count, dtype=bool)
        self.plain = np.zeros(count, dtype=bool)  # a date alone: its day ends a span (``filter_values.reaches``)
        self.timed = np.zeros(count, dtype=bool)  # a moment with its offset, in ``moments``
        self.moments = np.zeros(count, dtype=np.int64)
        texts = [""] * count
        for position, value in enumerate(uniques):
            if isinstance(value, list) or (isinstance(value, str) and not value.isascii()):
                self.slow[position] = True
            elif isinstance(value, str) and DATE_START.match(value):
                self.dated[position] = True
                texts[position] = value.lower()
                self.plain[position] = len(value.strip()) == 10
                moment = instant(value)
                if moment is not None:
                    self.timed[position] = True
                    self.moments[position] = _microseconds(moment)
        self.texts = np.array(texts, dtype=str)

    def verdict(self, sign: tuple[int, ...], text: str, moment: Any, day: str | None = None) -> np.ndarray:
        """Which values compare with the bound (``text`` folded, its ``moment`` or None) as one of
        ``sign`` (-1, 0, 1); with ``day``, a date alone compares with that day instead. Values
        left ``slow`` come out False."""
        order = _order(self.texts, text)
        if moment is not None:
            order = np.where(self.timed, np.sign(self.moments - _microseconds(moment)).astype(np.int8), order)
        if day is not None:
            order = np.where(self.plain, _order(self.texts, day), order)
        return self.dated & np.isin(order, sign)


def _order(texts: np.ndarray, text: str) -> np.ndarray:
    """-1, 0 or 1 for each of ``texts`` against ``text``, as Python orders strings."""
    return (texts > text).astype(np.int8) - (texts < text).astype(np.int8)


def _microseconds(moment: datetime) -> int:
    """An aware moment as whole microseconds since 1970 (UTC), exactly."""
    return (moment - _EPOCH) // _MICROSECOND
