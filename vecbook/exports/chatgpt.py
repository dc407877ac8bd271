"""ChatGPT: ``conversations.json`` from "Settings > Data controls > Export data" (a list of
conversations, each a tree of messages in ``mapping``).

A conversation is read along the branch the user last saw: from ``current_node`` up
through the parents, then in reading order; edited prompts and regenerated answers left
on other branches are not read. User and assistant turns are kept (the assistant's code
cells too, a canvas as its document); system and tool messages, the assistant's other calls
to tools, hidden ones and empty ones are skipped. Each turn is
cited at the lines of its ``message`` object inside ``mapping``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Container, Iterator

from ..records import Record
from .base import Export, ExportFile, Message, chat_records, clean_text, from_timestamp, json_list, json_string
from .jsonpos import JsonText
from .read_once import read_once

# Who a turn is shown as, by author role; other roles (system, tool) are not turns.
AUTHORS = {"user": "User", "assistant": "ChatGPT"}
# Whom a turn addresses when its content is what the user sees: everyone, and the code
# interpreter ("python", and "python_user_visible" for the code behind charts and tables shown).
SAID_TO = frozenset({None, "all", "python", "python_user_visible"})
# The tools that make images, called with the prompt as JSON: DALL·E, and since 2025 the image
# generation of GPT-4o and later models, under the tool name ChatGPT gives it (or its own).
IMAGE_TOOLS = frozenset({"dalle.text2im", "t2uay3k.sj1i4kz", "image_gen", "image_gen.text2im"})
# Content types that are settings, not turns (custom instructions, memory).
_CONTEXT_TYPES = frozenset({"user_editable_context", "model_editable_context"})
# Marks the app draws as citation links or cards, not words: U+E200 kind U+E202 ids U+E201
# ("cite", "filecite", "navlist", "image_group"...), and the older 【4†source】 (and the space
# before either). An "entity" mark shows its name: ["place","Alfama"] reads "Alfama".
_MARK = re.compile("\\s*\ue200(?!entity\ue202)[^\ue200\ue201]*\ue201|\\s*【\\d+(?::\\d+)?†[^】\\n]*】")
_ENTITY = re.compile("\ue200entity\ue202([^\ue200\ue201]*)\ue201")


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
    """Every conversation's branch, windowed; a conversation in two exports (March's data export
    beside June's) is read once, each message in the newer (``read_once``, by its ``conversation_id``
    and the messages' ids)."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    messages = export.read_each(files, lambda f: _messages(export, f))
    return chat_records(export, read_once(export, messages, lambda m: m.thread or m.conversation))


def _messages(export: Export, file: ExportFile) -> Iterator[Message]:
    doc = JsonText(file.read_text())
    for begin, _, conversation in doc.elements(0):
        line = doc.line_at(begin)
        mapping = conversation.get("mapping") if isinstance(conversation, dict) else None
        if not isinstance(mapping, dict):
            export.warn(file, line, "a conversation without a 'mapping' object; skipped")
            continue
        branch = _branch(conversation, mapping)
        title = str(conversation.get("title") or "Untitled")
        thread = conversation.get("conversation_id") or conversation.get("id")
        model = conversation.get("default_model_slug") or _last_model(mapping, branch)
        turns = {node_id: turn for node_id in branch if (turn := _turn(mapping[node_id])) is not None}
        spans = _message_lines(doc, doc.path(["mapping"], begin), mapping, turns)
        for node_id, (role, text, when, message_id) in turns.items():
            if node_id in spans:
                yield Message(conversation=title, author=AUTHORS[role], text=text, file=file,
                              line=spans[node_id][0], end_line=spans[node_id][1],
                              when=when or _when(conversation.get("create_time")), id=message_id or node_id,
                              thread=str(thread) if thread else None, role=role,
                              metadata={"model": model} if model else {})


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


def _message_lines(doc: JsonText, mapping_at: int | None, mapping: dict[str, Any],
                   wanted: Container[str]) -> dict[str, tuple[int, int]]:
    """The lines of the ``message`` object of each wanted node of ``mapping`` (the object
    starting at ``mapping_at``). Each node is found by its key in the text, in the mapping's
    order, so only the wanted messages are decoded (again); a node id elsewhere (``parent``,
    ``children``, ``id``) is never followed by ``:``."""
    spans: dict[str, tuple[int, int]] = {}
    at = mapping_at
    for node_id in mapping:
        if at is None:
            break
        if node_id in wanted:
            at = _key_at(doc, node_id, at)
            message_at = doc.path(["message"], at) if at is not None else None
            if message_at is not None:
                end = doc.decode(message_at)[1]
                spans[node_id] = doc.lines(message_at, end)
                at = end
    return spans


def _key_at(doc: JsonText, key: str, start: int) -> int | None:
    """The offset of the value of the object member named ``key``, searching from ``start``."""
    quoted = f'"{key}"'
    found = doc.text.find(quoted, start)
    while found >= 0:
        after = doc.skip_ws(found + len(quoted))
        if doc.text.startswith(":", after) and doc.text[found - 1] != "\\":
            return doc.skip_ws(after + 1)
        found = doc.text.find(quoted, found + 1)
    return None


def _turn(node: Any) -> tuple[str, str, datetime | None, str | None] | None:
    """(role, text, time, message id) of a user or assistant turn; None for the rest (system,
    tool, hidden, custom-instruction context, empty)."""
    message = node.get("message") if isinstance(node, dict) else None
    if not isinstance(message, dict):
        return None
    author = message.get("author") or {}
    role = author.get("role") if isinstance(author, dict) else None
    metadata = message.get("metadata") or {}
    content = message.get("content") or {}
    if role not in AUTHORS or not isinstance(content, dict) or content.get("content_type") in _CONTEXT_TYPES:
        return None
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    recipient = message.get("recipient")
    said = _without_marks(_text(content)) if recipient in SAID_TO else _tool_call(recipient, content)
    text = clean_text("\n\n".join(p for p in (said, *_files(metadata)) if p))
    if not text:
        return None
    message_id = message.get("id")
    return role, text, _when(_time(node)), str(message_id) if message_id else None


def _text(content: dict[str, Any]) -> str:
    """The turn's text: its string parts joined, other parts named ("[image]"), or a code cell."""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n\n".join(p for p in (_part(part) for part in parts) if p)
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _files(metadata: Any) -> list[str]:
    """The documents the user gave with the turn, by name (``metadata.attachments``); images
    are left to their ``[image]`` part."""
    attachments = metadata.get("attachments") if isinstance(metadata, dict) else None
    return [f"[file: {a['name']}]" for a in json_list(attachments) if isinstance(a, dict) and json_string(a.get("name"))
            and not json_string(a.get("mime_type")).startswith("image/")]


def _without_marks(text: str) -> str:
    """The text without the citation marks the app draws as links (``_MARK``); an entity by its name."""
    if "\ue200" not in text and "【" not in text:
        return text
    return _ENTITY.sub(_entity_name, _MARK.sub("", text))


def _entity_name(match: re.Match[str]) -> str:
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return ""
    names = [v for v in value[1:2] if isinstance(v, str)] if isinstance(value, list) else []
    return names[0] if names else ""


def _tool_call(recipient: Any, content: dict[str, Any]) -> str:
    """What the assistant's call to a tool shows the user: a canvas's document (the canvas tool
    takes it as JSON) and its edits, an image's prompt, what it saved to memory; other calls
    (web searches, clicks, file search) are plumbing, JSON the user never sees, read as nothing."""
    call = _json_object(_text(content))
    if recipient == "canmore.create_textdoc":
        return f"[canvas: {call.get('name') or 'untitled'}]\n{json_string(call.get('content'))}" if call else ""
    if recipient == "canmore.update_textdoc":
        edits = [json_string(u.get("replacement")) for u in json_list(call.get("updates")) if isinstance(u, dict)]
        return "[canvas edit]\n" + "\n\n".join(e for e in edits if e) if any(edits) else ""
    if recipient == "canmore.comment_textdoc":
        notes = [json_string(c.get("comment")) for c in json_list(call.get("comments")) if isinstance(c, dict)]
        return "[canvas comments]\n" + "\n".join(n for n in notes if n) if any(notes) else ""
    if recipient in IMAGE_TOOLS and json_string(call.get("prompt")):
        return f"[image: {call['prompt']}]"
    if recipient == "bio" and not call:  # the memory tool takes plain text
        return f"[memory: {_text(content).strip()}]" if _text(content).strip() else ""
    return ""


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        if isinstance(part.get("text"), str):  # a voice turn's transcript
            return part["text"]
        kind = str(part.get("content_type") or "")
        # named as the app shows it, not by its pointer's type ("audio_asset_pointer")
        return next((f"[{name}]" for name in ("image", "video", "audio") if name in kind), "[attachment]")
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


def _last_model(mapping: dict[str, Any], branch: list[str]) -> str | None:
    """The model of the branch's last assistant turn."""
    for node_id in reversed(branch):
        message = mapping[node_id].get("message") if isinstance(mapping[node_id], dict) else None
        slug = (message.get("metadata") or {}).get("model_slug") if isinstance(message, dict) else None
        if isinstance(slug, str) and slug:
            return slug
    return None
