"""Which records ``get`` shows around a record (its ``context``): the run of adjacent records
of its file and, for exports, its conversation and thread; for Slack, whose export splits a
conversation into one file per day, the records of its conversation and thread across the
day files of the conversation's folder; for Messenger and DiscordChatExporter, which split a
long chat into parts (``message_1.json``, ``message_2.json``...; ``... [part 2].json``), the
records of its chat across its parts, in time order."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from .hits import Context, Entry
from .records import Record

# Export formats that write one conversation as one file per day in the conversation's folder
# (``general/2024-03-01.json``): a thread reply sent the next day is in the next day's file.
DAY_FILE_FORMATS = frozenset({"slack"})
# Export formats that split one chat into part files beside each other: Messenger's
# ``message_1.json`` (the newest), ``message_2.json``...; DiscordChatExporter's ``--partition``
# writes ``<name>.json``, ``<name> [part 2].json``...
PART_FILE_FORMATS = frozenset({"messenger", "discord"})
# What sets a part's file name apart from its chat's other parts.
_PART_RE = re.compile(r"(?<=^message)_\d+(?=\.json$)| \[part \d+\](?=\.json$)", re.I)


def context_around(records: Sequence[Record], position: int, context: int) -> Context:
    """The record at ``position`` with up to ``context`` neighbours on each side: the run of
    adjacent records from the same file (and, for exports, conversation and thread); for a
    format of DAY_FILE_FORMATS, the nearest records of the same conversation and thread in
    any day file of its folder (a thread's records are its thread, a channel's its channel)."""
    record = records[position]
    if record.metadata.get("format") in DAY_FILE_FORMATS:
        before = _same_thread(records, position, context, -1)
        after = _same_thread(records, position, context, 1)
    elif record.metadata.get("format") in PART_FILE_FORMATS:
        chat = _chat_in_order(records, position)
        at = chat.index(position)
        before, after = chat[max(0, at - context):at], chat[at + 1:at + 1 + context]
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
    folder, (conversation, thread) = _folder(record.file_path), _chat_of(record)
    here = position + step
    while len(found) < context and 0 <= here < len(records):
        other = records[here]
        if other.source != record.source or _folder(other.file_path) != folder:
            break
        # (the thread first: most of a channel's records are of another thread, or of none)
        if other.metadata_value("thread") == thread and other.metadata_value("conversation") == conversation:
            found.append(here)
        here += step
    return sorted(found)


def _chat_in_order(records: Sequence[Record], position: int) -> list[int]:
    """The positions of the records of ``position``'s chat (its conversation and thread, in its
    part files: those of its folder whose names differ only by the part), each part in file order
    and the parts by their first date (Messenger numbers them newest first)."""
    record = records[position]
    chat, key = _chat_file(record.file_path), _chat_of(record)
    low, high = position, position + 1
    while low > 0 and _same_folder(records[low - 1], record):
        low -= 1
    while high < len(records) and _same_folder(records[high], record):
        high += 1
    parts: dict[str, list[int]] = {}
    for here in range(low, high):
        other = records[here]
        if _chat_file(other.file_path) == chat and _chat_of(other) == key:
            parts.setdefault(other.file_path, []).append(here)

    def first_date(part: list[int]) -> tuple[str, str]:
        return str(records[part[0]].metadata.get("date") or ""), records[part[0]].file_path

    return [here for part in sorted(parts.values(), key=first_date) for here in part]


# Called for each record of a folder (as ``_folder``), whose records share a few files: a get in a
# chat of 100,000 windows took 0.25-0.6 s on the AVX2 EPYC, most of it here and in making each
# record's metadata dict (``_chat_of`` reads two values instead): 0.04-0.08 s since.
@lru_cache(maxsize=4096)
def _chat_file(file_path: str) -> str:
    """A part file's path without its part (``inbox/ana_1/message.json``), its chat's name."""
    folder, _, name = file_path.rpartition("/")
    return f"{folder}/{_PART_RE.sub('', name)}"


def _same_folder(a: Record, b: Record) -> bool:
    return a.source == b.source and _folder(a.file_path) == _folder(b.file_path)


@lru_cache(maxsize=4096)
def _folder(file_path: str) -> str:
    return file_path.rpartition("/")[0]


def _neighbours(a: Record, b: Record) -> bool:
    """Records of one file and source (two tables of one database are two sources) and, for
    exports, one conversation and thread."""
    return a.file_path == b.file_path and a.source == b.source and _chat_of(a) == _chat_of(b)


def _chat_of(record: Record) -> tuple[object, object]:
    """The record's conversation and thread, read without making its metadata dict."""
    return record.metadata_value("conversation"), record.metadata_value("thread")


def _contiguous(positions: list[int], centre: int) -> list[int]:
    """The run of consecutive positions around ``centre``."""
    run = [centre]
    for step in (-1, 1):
        here = centre + step
        while here in positions:
            run.append(here)
            here += step
    return sorted(run)
