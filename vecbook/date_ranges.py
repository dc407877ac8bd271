"""The date range among a search's filters (``since``/``until``, ``date__gte``...): which
conditions make it, and each recurring event's hit marked with the occurrence that put it
there. The filters themselves are evaluated in ``filters``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from .recurrence import occurrence_within

if TYPE_CHECKING:
    from .filters import Condition
    from .hits import Hit

COMPARISONS = ("gt", "gte", "lt", "lte")
# The key whose value ends a record's span (a chat window's last message, an event's end):
# ``since`` finds a record that reaches into the range, not only one that begins there.
SPAN_END = ("end_date",)


def with_occurrences(hits: list[Hit], conditions: Sequence[Condition]) -> list[Hit]:
    """Under a date range, each recurring event's hit (``rrule`` metadata) with ``occurrence``:
    its first occurrence inside the range (a plain date for an all-day event), which is what
    put it there; its ``date`` stays the series' first."""
    ranges = date_ranges(conditions)
    if not ranges:
        return hits
    return [_with_occurrence(hit, ranges) if isinstance(hit.metadata.get("rrule"), str) else hit for hit in hits]


def _with_occurrence(hit: Hit, ranges: tuple[tuple[str, str], ...]) -> Hit:
    metadata = hit.metadata
    try:
        when = occurrence_within(metadata["rrule"], ranges)
    except (ValueError, TypeError, OverflowError, KeyError):  # unreadable: its own date put it in range
        return hit
    if when is None:
        return hit
    text = when.date().isoformat() if metadata.get("all_day") else when.replace(microsecond=0).isoformat()
    return replace(hit, metadata={**metadata, "occurrence": text})


def date_ranges(conditions: Sequence[Condition]) -> tuple[tuple[str, str], ...]:
    """The ``(op, value)`` bounds of the date range among ``conditions``."""
    return tuple((c.op, str(c.value)) for c in conditions if is_date_range(c))


def is_date_range(condition: Condition) -> bool:
    """A gt/gte/lt/lte condition on the ``date`` metadata (``since``/``until`` are such)."""
    return (condition.field == "metadata" and condition.op in COMPARISONS
            and tuple(p.casefold() for p in condition.path) == ("date",))
