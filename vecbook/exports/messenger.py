"""Facebook Messenger: the JSON of "Download your information" (``messages/inbox/<thread>/
message_1.json``, ``message_2.json``... one file a part of a thread), and the newer JSON of
end-to-end encrypted chats (``senderName``, ``timestamp``, ``text``, ``threadName``).

Facebook writes the text's UTF-8 bytes as if each were a Latin-1 character (``\\u00c3\\u00a9``
for é); names, titles and messages are repaired where that reading round-trips, and kept as
they are where it does not (a file already written right). Messages are stored newest
first: they are windowed oldest first, each keeping its own lines. Unsent messages and
reactions are not read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterator

from ..records import Record
from .base import Export, ExportFile, Message, chat_records, clean_text, distinct_ids, from_timestamp
from .jsonpos import JsonText, JsonTextError

# A timestamp past this is in milliseconds (this many seconds is the year 5138; as milliseconds, 1973):
# ``timestamp_ms`` always is, the older files' and the encrypted chats' ``timestamp`` may be either.
MILLISECONDS_FROM = 100_000_000_000
# Media a message can carry, each named in the text: (key, label); "media" is the newer files' list.
_MEDIA = (("photos", "photo"), ("videos", "video"), ("gifs", "gif"), ("audio_files", "audio"), ("files", "file"),
          ("media", "media"))


def detect(export: Export) -> bool:
    """A JSON file with Messenger's ``participants`` and ``messages`` holding ``sender_name``
    (``senderName`` in the end-to-end encrypted chats' files)."""
    return any(_looks_like(f.head()) for f in _json_files(export))


def _looks_like(head: bytes) -> bool:
    return b'"participants"' in head and b'"messages"' in head and (
        b'"sender_name"' in head or b'"senderName"' in head)


def _json_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name.lower().endswith(".json"))


def read(export: Export) -> list[Record]:
    """Every thread file's messages, windowed oldest first."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    return distinct_ids(chat_records(export, export.read_each(files, lambda f: _messages(export, f))))


def repair(text: str) -> str:
    """Facebook's mis-encoded text made right: its characters are UTF-8 bytes read as Latin-1.
    Text that is not such (ASCII, or already right) comes back unchanged."""
    if text.isascii():
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def _messages(export: Export, file: ExportFile) -> Iterator[Message]:
    doc = JsonText(file.read_text())
    title = _value(doc, "title") or _value(doc, "threadName")
    thread = _value(doc, "thread_path")
    folder = file.rel.replace("!/", "/").rsplit("/", 2)  # inbox/<thread folder>/message_1.json
    conversation = repair(title) if title else (thread or (folder[-2] if len(folder) > 1 else file.name))
    start = doc.path(["messages"])
    if start is None:
        export.warn(file, None, "no 'messages' array; file skipped")
        return
    found = []
    try:
        for begin, end, item in doc.elements(start):
            line, end_line = doc.lines(begin, end)
            message = _message(export, item, conversation, thread, file, line, end_line)
            if message is not None:
                found.append(message)
    except JsonTextError as exc:  # a truncated file: the whole messages before the break still load
        export.warn(file, exc.line, f"rest of the file skipped: {exc}")
    if found and found[0].when > found[-1].when:  # type: ignore[operator]  # every message has one
        found.reverse()  # stored newest first; a conversation reads oldest first
    yield from found


def _value(doc: JsonText, key: str) -> Any:
    """A top-level string of the thread file (None when absent, not a string, or past a break
    in the file: the title comes after the messages, which still load up to the break)."""
    try:
        at = doc.path([key])
        value = doc.decode(at)[0] if at is not None else None
    except JsonTextError:
        return None
    return value if isinstance(value, str) else None


def _message(export: Export, item: Any, conversation: str, thread: str | None, file: ExportFile,
             line: int, end_line: int) -> Message | None:
    if not isinstance(item, dict):
        export.warn(file, line, "a message that is not a JSON object; skipped")
        return None
    stamp = item.get("timestamp_ms", item.get("timestamp"))
    when = _when(stamp)
    if when is None:
        export.warn(file, line, f"a message without a valid 'timestamp_ms' ({stamp!r}); skipped")
        return None
    text = clean_text("\n".join(_parts(item)))
    if not text or item.get("is_unsent") or item.get("isUnsent"):
        return None  # nothing said (a call log), or taken back
    author = repair(item.get("sender_name") or item.get("senderName") or "") or "?"
    return Message(conversation=conversation, author=author, text=text, file=file, line=line, end_line=end_line,
                   when=when, thread=thread)


def _when(stamp: Any) -> datetime | None:
    """UTC time from Unix milliseconds (or seconds, in older files); None when not a time."""
    if not isinstance(stamp, (int, float)) or isinstance(stamp, bool):
        return None
    try:
        return from_timestamp(stamp / 1000.0 if stamp > MILLISECONDS_FROM else stamp)
    except (OverflowError, OSError, ValueError):
        return None


def _parts(item: dict[str, Any]) -> list[str]:
    """The message's text, its shared link, and its media named by file."""
    said = item.get("content", item.get("text"))
    parts = [repair(said)] if isinstance(said, str) else []
    share = item.get("share")
    if isinstance(share, dict):
        parts += [repair(share[k]) for k in ("share_text", "link") if isinstance(share.get(k), str)
                  and repair(share[k]) not in parts]
    for key, label in _MEDIA:
        parts += [f"[{label}: {_file_name(m)}]" for m in item.get(key) or [] if isinstance(m, dict)]
    sticker = item.get("sticker")
    if isinstance(sticker, dict):
        parts.append(f"[sticker: {_file_name(sticker)}]")
    return parts


def _file_name(media: dict[str, Any]) -> str:
    uri = media.get("uri")
    return uri.rsplit("/", 1)[-1] if isinstance(uri, str) and uri else "?"
