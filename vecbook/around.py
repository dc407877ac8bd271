"""Which records ``get`` shows around a record (its ``context``): the run of adjacent records
of its file and, for exports, its conversation and thread; for Slack, whose export splits a
conversation into one file per day, the records of its conversation and thread across the
day files of the conversation's folder."""

from __future__ import annotations

from typing import Sequence

from .hits import Context, Entry
from .records import Record

# Export formats that write one conversation as one file per day in the conversation's folder
# (``general/2024-03-01.json``): a thread reply sent the next day is in the next day's file.
DAY_FILE_FORMATS = frozenset({"slack"})


def context_around(records: Sequence[Record], position: int, context: int) -> Context:
    """The record at ``position`` with up to ``context`` neighbours on each side: the run of
    adjacent records from the same file (and, for exports, conversation and thread); for a
    format of DAY_FILE_FORMATS, the nearest records of the same conversation and thread in
    any day file of its folder (a thread's records are its thread, a channel's its channel)."""
    record = records[position]
    if record.metadata.get("format") in DAY_FILE_FORMATS:
        before = _same_thread(records, position, context, -1)
        after = _same_thread(records, position, context, 1)
    else:
        same = [i for i in range(max(0, position - context), min(len(records), position + context + 1))
                if _neighbours(records[i], record)]
        around = _contiguous(same, position)
        before, after = [i for i in around if i < position], [i for i in around if i > position]
    return Context(Entry.of(record), [Entry.of(records[i]) for i in before],
                   [Entry.of(records[i]) for i in after])


def _same_thread(records: Sequence[Record], position: int, context: int, step: int) -> list[int]:
    """Up to ``context`` positions from ``position`` on (``step`` -1: back) of records of the
    same conversation and thread, passing over the conversation's other threads, until its
    folder's records end (its day files are adjacent, in the order of their dates)."""
    record, found = records[position], []
    folder = _folder(record.file_path)
    here = position + step
    while len(found) < context and 0 <= here < len(records):
        other = records[here]
        if other.source != record.source or _folder(other.file_path) != folder:
            break
        if _neighbours_in_folder(other, record):
            found.append(here)
        here += step
    return sorted(found)


def _folder(file_path: str) -> str:
    return file_path.rpartition("/")[0]


def _neighbours(a: Record, b: Record) -> bool:
    """Records of one file and source (two tables of one database are two sources) and, for
    exports, one conversation and thread."""
    return a.file_path == b.file_path and a.source == b.source and _neighbours_in_folder(a, b)


def _neighbours_in_folder(a: Record, b: Record) -> bool:
    return all(a.metadata.get(k) == b.metadata.get(k) for k in ("conversation", "thread"))


def _contiguous(positions: list[int], centre: int) -> list[int]:
    """The run of consecutive positions around ``centre``."""
    run = [centre]
    for step in (-1, 1):
        here = centre + step
        while here in positions:
            run.append(here)
            here += step
    return sorted(run)
