"""ChatGPT: ``conversations.json`` from "Settings > Data controls > Export data" (a list of
conversations, each a tree of messages in ``mapping``).

A conversation is read along the branch the user last saw: from ``current_node`` up
through the parents, then in reading order; edited prompts and regenerated answers left
on other branches are not read. User and assistant turns are kept (the assistant's code
cells too); system and tool messages, hidden ones and empty ones are skipped. Each turn is
cited at the lines of its ``message`` object inside ``mapping``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterator

from ..records import Record
from .base import Export, ExportFile, Message, chat_records, clean_text, from_timestamp
from .jsonpos import JsonText

# Who a turn is shown as, by author role; other roles (system, tool) are not turns.
AUTHORS = {"user": "User", "assistant": "ChatGPT"}
# Content types that are settings, not turns (custom instructions, memory).
_CONTEXT_TYPES = frozenset({"user_editable_context", "model_editable_context"})


def detect(export: Export) -> bool:
    """A JSON list of conversations: ``mapping`` trees of nodes with ``parent`` and ``children``."""
    return any(_looks_like(f.head()) for f in _json_files(export))


def _looks_like(head: bytes) -> bool:
    return (head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[") and b'"mapping"' in head
            and b'"parent"' in head and b'"children"' in head)


def _json_files(export: Export) -> list[ExportFile]:
    # conversations.json; also copies renamed .json.txt (as some share them)
    return export.find(lambda f: f.name.lower().endswith((".json", ".json.txt")))


def read(export: Export) -> list[Record]:
    """Every conversation's branch, windowed."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    return chat_records(export, export.read_each(files, lambda f: _messages(export, f)))


def _messages(export: Export, file: ExportFile) -> Iterator[Message]:
    doc = JsonText(file.read_text())
    for begin, _, conversation in doc.elements(0):
        line = doc.line_at(begin)
        mapping = conversation.get("mapping") if isinstance(conversation, dict) else None
        if not isinstance(mapping, dict):
            export.warn(file, line, "a conversation without a 'mapping' object; skipped")
            continue
        branch = {node_id: n for n, node_id in enumerate(_branch(conversation, mapping))}
        spans = _message_lines(doc, doc.path(["mapping"], begin), branch)
        title = conversation.get("title") or "Untitled"
        thread = conversation.get("conversation_id") or conversation.get("id")
        model = conversation.get("default_model_slug") or _last_model(mapping, branch)
        for node_id in branch:
            if node_id in spans:
                message = _message(mapping[node_id], node_id, title, thread, model, conversation, file,
                                   *spans[node_id])
                if message is not None:
                    yield message


def _branch(conversation: dict[str, Any], mapping: dict[str, Any]) -> list[str]:
    """The node ids from the root to ``current_node`` (else to the newest leaf), in order."""
    node = conversation.get("current_node")
    if node not in mapping:
        leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
        node = max(leaves, key=lambda k: _time(mapping[k]) or 0.0, default=None)
    path: dict[str, None] = {}  # ordered, and a loop of parents ends the walk
    while isinstance(node, str) and node in mapping and node not in path:
        path[node] = None
        node = mapping[node].get("parent") if isinstance(mapping[node], dict) else None
    return list(path)[::-1]


def _message_lines(doc: JsonText, mapping_at: int | None, wanted: dict[str, int]) -> dict[str, tuple[int, int]]:
    """The lines of the ``message`` object of each wanted node of ``mapping``."""
    spans: dict[str, tuple[int, int]] = {}
    if mapping_at is None:
        return spans
    for node_id, start, _, node in doc.members(mapping_at):
        if node_id in wanted and isinstance(node, dict) and isinstance(node.get("message"), dict):
            at = doc.path(["message"], start)
            if at is not None:
                spans[node_id] = doc.lines(at, doc.decode(at)[1])
    return spans


def _message(node: dict[str, Any], node_id: str, title: str, thread: Any, model: Any,
             conversation: dict[str, Any], file: ExportFile, line: int, end_line: int) -> Message | None:
    message = node["message"]
    author = message.get("author") or {}
    role = author.get("role") if isinstance(author, dict) else None
    metadata = message.get("metadata") or {}
    content = message.get("content") or {}
    if role not in AUTHORS or not isinstance(content, dict) or content.get("content_type") in _CONTEXT_TYPES:
        return None
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    text = clean_text(_text(content))
    if not text:
        return None
    return Message(conversation=str(title), author=AUTHORS[role], text=text, file=file, line=line,
                   end_line=end_line, when=_when(_time(node)) or _when(conversation.get("create_time")),
                   id=str(message.get("id") or node_id), thread=str(thread) if thread else None, role=role,
                   metadata={"model": model} if model else {})


def _text(content: dict[str, Any]) -> str:
    """The turn's text: its string parts joined, other parts named ("[image]"), or a code cell."""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n\n".join(p for p in (_part(part) for part in parts) if p)
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        if isinstance(part.get("text"), str):  # a voice turn's transcript
            return part["text"]
        kind = str(part.get("content_type") or "attachment")
        return "[image]" if "image" in kind else f"[{kind}]"
    return ""


def _when(seconds: Any) -> datetime | None:
    """UTC time from Unix seconds; None when absent or not a time (the turn is still read)."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return None
    try:
        return from_timestamp(seconds)
    except (OverflowError, OSError, ValueError):
        return None


def _time(node: Any) -> float | None:
    message = node.get("message") if isinstance(node, dict) else None
    when = message.get("create_time") if isinstance(message, dict) else None
    return when if isinstance(when, (int, float)) and not isinstance(when, bool) else None


def _last_model(mapping: dict[str, Any], branch: dict[str, int]) -> str | None:
    """The model of the branch's last assistant turn."""
    for node_id in reversed(list(branch)):
        message = mapping[node_id].get("message") if isinstance(mapping[node_id], dict) else None
        slug = (message.get("metadata") or {}).get("model_slug") if isinstance(message, dict) else None
        if isinstance(slug, str) and slug:
            return slug
    return None
