"""How much a source holds, counted as a person counts it: its records and, where they are a
chat's conversation windows (records with ``message_count`` metadata, as every chat reader
writes them), the windows and the messages in them. A chat user asks how many messages are
searched, not how many windows they were cut into; ``sources``, ``stats`` and the index's log
line say both, alike in the CLI, over MCP and in Python."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .config import counted
from .records import Record
from .source_state import block_source

# The metadata key a chat reader gives each conversation window: how many messages it holds.
MESSAGE_COUNT = "message_count"


def chats_by_source(records: Iterable[Record]) -> dict[str, tuple[int, int]]:
    """``{source: (windows, messages)}``: how many of each source's records are conversation
    windows of a chat, and how many messages those hold; a source without any is left out."""
    found: dict[str, tuple[int, int]] = {}
    for record in records:
        if MESSAGE_COUNT in record.metadata_keys:
            count = record.metadata_value(MESSAGE_COUNT)
            if isinstance(count, int) and not isinstance(count, bool):
                windows, messages = found.get(record.source, (0, 0))
                found[record.source] = (windows + 1, messages + count)
    return found


# The chat counts of each block a report reads (``report_chats``), by the block's list: a source
# not read again keeps its very list, so an update of one note counts none of a million chat
# windows again. Holds the current report's lists only (they are alive anyway).
_BLOCK_CHATS: dict[int, tuple[list[Record], tuple[int, int] | None]] = {}


def report_chats(report: Any) -> dict[str, tuple[int, int]]:
    """``chats_by_source`` of a ``LoadReport``'s records, each block counted once while it is
    unchanged (a report without blocks is counted whole)."""
    blocks: Sequence[tuple[str, list[Record]]] = report.blocks
    if not blocks:
        return chats_by_source(report.records)
    known, found = dict(_BLOCK_CHATS), {}
    _BLOCK_CHATS.clear()
    for key, records in blocks:
        entry = known.get(id(records))
        counts = entry[1] if entry is not None and entry[0] is records else _block_chats(records)
        _BLOCK_CHATS[id(records)] = (records, counts)
        if counts is not None:
            source = block_source(key)
            windows, messages = found.get(source, (0, 0))
            found[source] = (windows + counts[0], messages + counts[1])
    return found


def _block_chats(records: list[Record]) -> tuple[int, int] | None:
    """(windows, messages) of one block's records; None where none is a conversation window."""
    counts = chats_by_source(records)
    if not counts:
        return None
    return sum(w for w, _ in counts.values()), sum(m for _, m in counts.values())


def held(records: int, windows: int | None, messages: int | None) -> str:
    """What a source holds in words: "12 records"; "15 messages in 6 conversation windows" where
    every record is a window; "20 records (15 messages in 6 conversation windows)" where some are."""
    if not windows:
        return counted(records, "record")
    chats = f"{counted(messages or 0, 'message')} in {counted(windows, 'conversation window')}"
    return chats if windows == records else f"{counted(records, 'record')} ({chats})"


def chat_facts(chats: dict[str, tuple[int, int]], source: str | None = None) -> dict[str, int | None]:
    """``{"windows": ..., "messages": ...}`` of one ``source`` of ``chats`` (``chats_by_source``),
    or of all of them; null for each where there is no conversation window (a note, a mail, an
    event or a database row is one record, and says nothing of messages)."""
    counts = list(chats.values()) if source is None else [chats[source]] if source in chats else []
    if not counts:
        return {"windows": None, "messages": None}
    return {"windows": sum(w for w, _ in counts), "messages": sum(m for _, m in counts)}
