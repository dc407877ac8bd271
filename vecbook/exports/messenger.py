"""Facebook Messenger: the JSON of "Download your information" (``messages/inbox/<thread>/
message_1.json``, ``message_2.json``... one file a part of a thread), and the newer JSON of
end-to-end encrypted chats (``senderName``, ``timestamp``, ``text``, ``threadName``).

Facebook writes the text's UTF-8 bytes as if each were a Latin-1 character (``\\u00c3\\u00a9``
for é); names, titles and messages are repaired where that reading round-trips, and kept as
they are where it does not (a file already written right). Messages are stored newest
first: they are windowed oldest first, each keeping its own lines. Unsent messages and
reactions are not read.

Instagram's download has the same shape, and writes notices as messages of their own, in the
account's language: a reaction is on the message it reacts to (``reactions``, with the second
it was made) and again as a message of the reactor's ("Reacted 😢 to your message "), a like
as "Liked a message", an unsent message as "José unsent a message". A message is such a notice,
and skipped, when it holds text alone and that text is "<its sender> unsent a message" or
"Reacted <emoji> to your message", or is short (a like, a reaction in another language) and its
sender reacted in the file in that very second. A message saying the same in other words, or
at another time, is kept.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Iterator

from ..records import Record
from .base import Export, ExportFile, Message, chat_records, clean_text, distinct_ids, from_timestamp
from .jsonpos import JsonText, JsonTextError
from .read_once import read_once

# A timestamp past this is in milliseconds (this many seconds is the year 5138; as milliseconds, 1973):
# ``timestamp_ms`` always is, the older files' and the encrypted chats' ``timestamp`` may be either.
MILLISECONDS_FROM = 100_000_000_000
# Media a message can carry, each named in the text: (key, label); "media" is the newer files' list.
_MEDIA = (("photos", "photo"), ("videos", "video"), ("gifs", "gif"), ("audio_files", "audio"), ("files", "file"),
          ("media", "media"))
# Instagram's notice of a reaction, in English: the reaction is one or two symbols, no word.
_REACTED = re.compile(r"Reacted (\S+(?: \S+)?) to your message")
# Words at most in a notice of a like or a reaction in another language ("Liked a message").
NOTICE_WORDS = 8
# A part of a thread, in the thread's folder of a download.
_PART = re.compile(r"message_\d+\.json", re.I)


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
    """Every thread file's messages, windowed oldest first; a thread downloaded twice (March's
    download beside June's) is read once, each message in the newer download (``read_once``)."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    messages = export.read_each(files, lambda f: _messages(export, f))
    return distinct_ids(chat_records(export, read_once(export, messages, _thread_of, _download_of)))


def _thread_of(message: Message) -> str:
    """The thread a message is of: its ``thread_path`` ("inbox/ana_1"), the same in every download
    though the thread is renamed; the title of an end-to-end encrypted chat's file, which has none."""
    return message.thread or message.conversation


def _download_of(message: Message) -> str:
    """The copy of a thread a message is in: the folder of its parts (``message_1.json``,
    ``message_2.json``... hold a thread's messages between them), else its file."""
    folder, _, name = message.file.rel.rpartition("/")
    return folder if _PART.fullmatch(name) else message.file.rel


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
    reacted: set[tuple[str, int]] = set()  # (who, second) of every reaction in the file
    try:
        for begin, end, item in doc.elements(start):
            line, end_line = doc.lines(begin, end)
            message = _message(export, item, conversation, thread, file, line, end_line)
            if message is not None and not _is_notice(item, message):
                found.append(message)
            reacted.update(_reactions(item))
    except JsonTextError as exc:  # a truncated file: the whole messages before the break still load
        export.warn(file, exc.line, f"rest of the file skipped: {exc}")
    found = [m for m in found if not _is_reaction_notice(m, reacted)]
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


def _is_notice(item: dict[str, Any], message: Message) -> bool:
    """Instagram's notice of an unsent message or of a reaction, in English (see the module
    docstring); one that needs the file's reactions to tell is kept for ``_is_reaction_notice``."""
    said = message.text
    if "\n" in said or len(said) > 200 or not _text_alone(item):
        return False
    if said in (f"{message.author} unsent a message", "You unsent a message"):
        return True
    reaction = _REACTED.fullmatch(said)
    return reaction is not None and not any(c.isalnum() for c in reaction.group(1))


def _text_alone(item: dict[str, Any]) -> bool:
    """Whether the message holds nothing but its text (no media, link, sticker or reactions)."""
    return not any(item.get(key) for key, _ in _MEDIA) and not any(
        item.get(key) for key in ("share", "sticker", "reactions"))


def _reactions(item: Any) -> Iterator[tuple[str, int]]:
    """(who, second) of each reaction on a message that says when it was made."""
    for reaction in (item.get("reactions") or []) if isinstance(item, dict) else []:
        stamp = reaction.get("timestamp") if isinstance(reaction, dict) else None
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and isinstance(reaction.get("actor"), str):
            yield repair(reaction["actor"]), int(stamp / 1000 if stamp > MILLISECONDS_FROM else stamp)


def _is_reaction_notice(message: Message, reacted: set[tuple[str, int]]) -> bool:
    """A short message of text alone sent in the second its sender reacted to a message: the
    reaction's notice ("Liked a message", or one in the account's language)."""
    if message.when is None or len(message.text.split()) > NOTICE_WORDS or "\n" in message.text:
        return False
    return (message.author, int(message.when.timestamp())) in reacted  # the reaction's second, as written


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
