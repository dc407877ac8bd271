"""Versions of one event across a calendar's files: each update of a meeting is mailed as a new
invitation (the same UID, a higher ``SEQUENCE``), and a folder of saved invitations holds them
all. The later version is the event as it stands; an earlier one is marked ``superseded_by`` it,
so that the outdated time is not found as if it stood."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from ..records import Record
from .ics_values import prop_text, prop_value
from .ics_words import iso_value


@dataclass(frozen=True)
class Version:
    """Which event (UID, and the occurrence a change replaces) a record is, and how recent."""

    event: tuple[str, str]
    sequence: int
    stamp: str


def version_of(component: Any) -> Version | None:
    """The component's version: its ``SEQUENCE`` (0 where none, RFC 5545's default), then its
    ``DTSTAMP`` (when the invitation was sent) in UTC; None without a UID."""
    uid = prop_text(component, "UID")
    if not uid:
        return None
    moved = prop_value(component, "RECURRENCE-ID")
    try:
        sequence = int(prop_text(component, "SEQUENCE") or 0)
    except ValueError:  # (a SEQUENCE that is no number: the version is told by its DTSTAMP)
        sequence = 0
    return Version((uid, iso_value(moved) or ""), sequence, _utc(prop_value(component, "DTSTAMP")))


def _utc(value: Any) -> str:
    """A DTSTAMP as an ISO text in UTC that orders as time does ('' where there is none)."""
    if isinstance(value, datetime):
        value = value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value
        return value.isoformat()
    return value.isoformat() if isinstance(value, date) else ""


def marked_superseded(records: list[Record], versions: dict[str, Version]) -> list[Record]:
    """``records`` with each earlier version of an event (by ``versions``, keyed by record id)
    given ``superseded_by``: the citation of its latest version. Versions that are alike
    (the same invitation saved twice) mark none."""
    latest: dict[tuple[str, str], tuple[Version, Record]] = {}
    for record in records:
        version = versions.get(record.id)
        if version is None:
            continue
        best = latest.get(version.event)
        if best is None or _order(version) > _order(best[0]):
            latest[version.event] = (version, record)
    marked = []
    for record in records:
        version = versions.get(record.id)
        best = latest.get(version.event) if version is not None else None
        if best is not None and version is not None and _order(version) < _order(best[0]):
            record = record.replace(metadata=_with_mark(record.metadata, best[1].citation))
        marked.append(record)
    return marked


def _with_mark(metadata: dict[str, Any], citation: str) -> dict[str, Any]:
    """``superseded_by`` right after the date (the command line's one line of metadata is cut
    to its width: the mark comes before the people and place)."""
    marked: dict[str, Any] = {}
    for key, value in metadata.items():
        marked[key] = value
        if key == "date":
            marked["superseded_by"] = citation
    marked.setdefault("superseded_by", citation)
    return marked


def _order(version: Version) -> tuple[int, str]:
    return version.sequence, version.stamp
