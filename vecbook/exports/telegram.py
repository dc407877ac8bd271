"""Telegram: Telegram Desktop's JSON export (``result.json``), one chat (``name``, ``type``,
``id``, ``messages``) or the whole account (``chats.list[*]`` and ``left_chats.list[*]``)."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Generator, Hashable, Iterator

from ..records import Record, iso_moment
from .base import (Export, ExportFile, Message, chat_records, clean_text, collector_paused, from_timestamp,
                   json_list)
from .jsonpos import JsonText
from .read_once import read_once

# The chat types Telegram Desktop writes ("personal_chat", "private_supergroup", ...): a JSON
# file naming one of them beside "messages" is a single-chat export.
_CHAT_TYPE = re.compile(rb'"type"\s*:\s*"(?:saved_messages|replies|verification_codes|personal_chat|bot_chat'
                        rb'|private_group|private_supergroup|public_supergroup|private_channel|public_channel)"')
# A whole-account export opens with these sections.
_ACCOUNT = re.compile(rb'"(?:personal_information|chats|left_chats|contacts|frequent_contacts)"\s*:\s*\{')
# An account export's first key (told apart from a chat without walking past its messages).
_ACCOUNT_START = re.compile(r'\s*\{\s*"(?:about|personal_information)"')
# A single chat's name: the first key of its export.
_NAME = re.compile(r'^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")')
# Where the chats of a whole-account export are: each one's "list".
CHAT_LISTS = ("chats", "left_chats")
# The chats Telegram Desktop writes without a "name", called as the app's chat list calls them.
UNNAMED_CHATS = {"saved_messages": "Saved Messages", "replies": "Replies", "verification_codes": "Verification Codes"}
# What Telegram Desktop's HTML export writes near the top of each page (its pages are not read).
HTML_MARK = b'class="page_wrap"'
# What a media message holds, shown in its place (the media itself is never read).
MEDIA = {"sticker": "sticker", "animation": "GIF", "video_file": "video", "video_message": "video message",
         "voice_message": "voice message", "audio_file": "audio"}


def detect(export: Export) -> bool:
    """A JSON file holding a Telegram chat (a chat ``type`` and ``messages``) or an account export."""
    return any(_looks_like(f.head()) for f in _json_files(export))


def _looks_like(head: bytes) -> bool:
    if b'"messages"' in head and _CHAT_TYPE.search(head):
        return True
    return bool(b'"about"' in head and _ACCOUNT.search(head))


def _json_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name.lower().endswith(".json"))


def suggested_name(export: Export) -> str | None:
    """What to call the export (``vecbook add`` names a source by it): Telegram Desktop calls
    every export ``result.json``, so a single chat is named by the chat's ``name``, and a
    whole-account export, or a folder of several chats, by the folder holding it."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    if len(files) == 1 and not _ACCOUNT_START.match(files[0].head(4096).decode("utf-8-sig", errors="replace")):
        name = _chat_name(files[0].head())
        if name:
            return name
    if export.path.is_file():
        return export.path.parent.name
    return export.path.name


def _chat_name(head: bytes) -> str | None:
    """A single-chat export's ``name`` (Telegram writes it first), read from the file's head."""
    found = _NAME.search(head.decode("utf-8-sig", errors="replace"))
    if found is None:
        return None
    try:
        name = json.loads(found.group(1))
    except ValueError:
        return None
    return name.strip() if isinstance(name, str) and name.strip() else None


def read(export: Export) -> list[Record]:
    """Every chat's messages, windowed, each once where a chat was exported twice (``read_once``); an
    HTML export among them is a WARN (``_html_exports``)."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    _html_exports(export, files)
    chat_ids: dict[str, object] = {}
    with collector_paused():
        messages = export.read_each(files, lambda f: _file_read(export, f, chat_ids))
        return chat_records(export, read_once(export, messages, _chat_of(chat_ids)))


def _chat_of(chat_ids: dict[str, object]) -> Callable[[Message], Hashable]:
    """Which chat a message is of, for ``read_once``: the id Telegram gave the chat (an account
    export writes it before each message's id, "100:1"; a chat's own export once at its head,
    ``chat_ids`` by file), so a chat renamed between two exports (a contact saved under another
    name since) is one chat still; its name where no id is written."""
    def chat_of(message: Message) -> Hashable:
        chat = message.id.split(":", 1)[0] if message.id and ":" in message.id else chat_ids.get(message.file.rel)
        return ("id", str(chat)) if chat is not None and str(chat) != "None" else ("name", message.conversation)
    return chat_of


def _html_exports(export: Export, files: list[ExportFile]) -> None:
    """A WARN for each chat exported as HTML (Telegram Desktop's default format) in a folder of
    JSON exports, where it would be passed over unseen: its first page, ``messages.html``, in a
    folder without a JSON export (Telegram writes both where both formats are chosen)."""
    if not files:  # an HTML export alone: the load's "nothing read" WARN names it and what to do
        return
    read_folders = {_folder(f.rel) for f in files}
    for page in export.find(lambda f: f.name == "messages.html"):
        if _folder(page.rel) not in read_folders and HTML_MARK in page.head():
            export.warn(page, None, "Telegram Desktop's HTML export, which VecBook does not read: export the chat "
                                    "again choosing Format: Machine-readable JSON")


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _file_read(export: Export, file: ExportFile, chat_ids: dict[str, object]) -> Iterator[Message]:
    """The file's messages, with one kind of time (see ``_one_kind_of_time``); a single chat's
    export puts its chat's id in ``chat_ids``."""
    offsets: Counter[timedelta] = Counter()
    return _one_kind_of_time(_file_messages(export, file, offsets, chat_ids), offsets)


def _one_kind_of_time(messages: Iterator[Message], offsets: Counter[timedelta]) -> Iterator[Message]:
    """The file's messages, each with an aware time when any has one.

    ``date`` is the exporting computer's local time without a zone; ``date_unixtime`` (written
    beside it since 2021) is exact. A message with only ``date`` in a file where others have an
    exact time gets the offset the file's items with both fields show (the most common one;
    ``offsets``, counted as the file is read: every item with both counts, text or not,
    service messages too, since a file may have only one such item), else this computer's
    zone: without one kind of time, no gap between the two kinds could be measured. A file of
    bare dates only keeps them as written. The file's messages are held until it is read
    (whether it mixes is known only then); a failure part way is raised after the messages
    read before it."""
    held: list[Message] = []
    aware, failure = False, None
    try:
        for message in messages:
            if message.when is not None and message.when.tzinfo is not None:
                aware = True
            held.append(message)
    except Exception as exc:  # noqa: BLE001 - raised again below, after what was read (read_each reports it)
        failure = exc
    zone = timezone(offsets.most_common(1)[0][0]) if offsets else None
    for message in held:
        if aware and message.when is not None and message.when.tzinfo is None:
            message.when = message.when.replace(tzinfo=zone) if zone is not None else message.when.astimezone()
        yield message
    if failure is not None:
        raise failure


def _file_messages(export: Export, file: ExportFile, offsets: Counter[timedelta],
                   chat_ids: dict[str, object]) -> Iterator[Message]:
    doc = JsonText(file.read_text())
    start = doc.skip_ws(0)
    if not _ACCOUNT_START.match(doc.text):
        head = {key: _value(doc, start, key) for key in ("name", "type", "id")}
        chat_ids[file.rel] = head["id"]
        at = doc.member(start, "messages")
        if at is None:
            export.warn(file, 1, f"chat '{_conversation(head)}' has no 'messages' array; file skipped")
            return
        yield from _chat_messages(export, file, doc, at, head, offsets, qualify=False)
        return
    # A whole account: walked member by member, so each message is decoded once (finding
    # "left_chats" with doc.path, or listing chats with doc.elements, would decode every
    # chat whole first: twice the time, and the largest chat held in memory decoded).
    def chat(at: int) -> Generator[Message, None, int]:
        return _account_chat(export, file, doc, at, offsets)

    def chat_list(key: str, at: int) -> Generator[Message, None, int] | None:
        return _walk_array(doc, at, chat) if key == "list" else None

    def section(key: str, at: int) -> Generator[Message, None, int] | None:
        return _walk_object(doc, at, chat_list) if key in CHAT_LISTS else None

    yield from _walk_object(doc, start, section)


def _account_chat(export: Export, file: ExportFile, doc: JsonText, start: int,
                  offsets: Counter[timedelta]) -> Generator[Message, None, int]:
    """The messages of one chat of an account export; returns the offset after the chat.
    Telegram writes ``name``, ``type`` and ``id`` before ``messages``, as read here."""
    if not doc.text.startswith("{", start):
        return doc.decode(start)[1]
    head: dict[str, Any] = {}

    def visit(key: str, at: int) -> Generator[Message, None, int]:
        if key == "messages":  # message ids count per chat: the chat's id keeps them apart in one file
            return _chat_messages(export, file, doc, at, head, offsets, qualify=True)
        return _keep(doc, at, head, key)

    return (yield from _walk_object(doc, start, visit))


def _chat_messages(export: Export, file: ExportFile, doc: JsonText, at: int, head: dict[str, Any],
                   offsets: Counter[timedelta], qualify: bool) -> Generator[Message, None, int]:
    """The messages of the array at ``at`` of the chat ``head`` describes, counting into
    ``offsets`` the UTC offset each item with both kinds of time shows; returns the offset after it."""
    conversation = _conversation(head)
    prefix = f"{head.get('id')}:" if qualify else ""
    metadata: dict[str, Any] = {"chat_type": head["type"]} if isinstance(head.get("type"), str) else {}
    if isinstance(head.get("id"), (int, str)) and not isinstance(head["id"], bool):
        metadata["chat_id"] = head["id"]  # what tells a chat renamed since apart (``window_key``)
    after = doc.skip_ws(at) + 1
    for begin, end, item in doc.elements(at):
        after = end
        if not isinstance(item, dict):
            continue
        offset = _local_offset(item)
        if offset is not None:
            offsets[offset] += 1
        if item.get("type", "message") != "message":
            continue  # service messages: joins, calls, pins, title changes
        line, end_line = doc.lines(begin, end)
        message = _message(export, item, conversation, file, line, end_line, prefix)
        if message is not None:
            message.metadata = metadata
            yield message
    return doc.skip_ws(after) + 1  # past the "]" that ended the elements


# -- walking an account export without decoding what holds the messages --

Visit = Callable[[str, int], "Generator[Message, None, int] | None"]


def _walk_object(doc: JsonText, index: int, visit: Visit) -> Generator[Message, None, int]:
    """The members of the object at ``index``: ``visit(key, at)`` gives a walker of the value
    (returning the offset after it), or None to skip the value. Returns the offset after the object."""
    text = doc.text
    index = doc.skip_ws(_expect(doc, index, "{"))
    if text.startswith("}", index):
        return index + 1
    while True:
        key, index = doc.decode(index)
        at = doc.skip_ws(_expect(doc, index, ":"))
        walker = visit(str(key), at)
        index = (yield from walker) if walker is not None else doc.decode(at)[1]
        index = doc.skip_ws(index)
        if text.startswith("}", index):
            return index + 1
        index = doc.skip_ws(_expect(doc, index, ","))


def _walk_array(doc: JsonText, index: int, element: Callable[[int], Generator[Message, None, int]]
                ) -> Generator[Message, None, int]:
    """Each element of the array at ``index`` through ``element(start)``; the offset after the array."""
    text = doc.text
    index = doc.skip_ws(_expect(doc, index, "["))
    if text.startswith("]", index):
        return index + 1
    while True:
        index = doc.skip_ws((yield from element(index)))
        if text.startswith("]", index):
            return index + 1
        index = doc.skip_ws(_expect(doc, index, ","))


def _keep(doc: JsonText, at: int, into: dict[str, Any], key: str) -> Generator[Message, None, int]:
    """A walker that yields no messages: it decodes the value at ``at`` into ``into[key]``."""
    into[key], end = doc.decode(at)
    return end
    yield  # unreachable: makes this a generator, as walkers are


def _expect(doc: JsonText, index: int, char: str) -> int:
    index = doc.skip_ws(index)
    if not doc.text.startswith(char, index):
        found = doc.text[index:index + 1] or "end of file"
        raise doc.fault(f"expected '{char}', found {found!r}", index, cut_short=index >= len(doc.text))
    return index + 1


def _value(doc: JsonText, start: int, key: str) -> Any:
    at = doc.member(start, key)
    return doc.decode(at)[0] if at is not None else None


def _conversation(head: dict[str, Any]) -> str:
    name = head.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    kind = head.get("type")
    if isinstance(kind, str) and kind in UNNAMED_CHATS:
        return UNNAMED_CHATS[kind]
    return f"{head.get('type') or 'chat'} {head.get('id')}"


def _message(export: Export, item: dict[str, Any], conversation: str, file: ExportFile, line: int,
             end_line: int, prefix: str) -> Message | None:
    when = _when(item)
    if when is None:
        export.warn(file, line, f"message {item.get('id')} without a date skipped")
        return None
    text = shown_text(item)
    if not text:
        export.warn(file, line, f"message {item.get('id')} without text skipped")
        return None
    author = str(item.get("from") or item.get("from_id") or "?").strip()
    signer = item.get("author")  # a channel post's signature, an anonymous admin's title: the app shows both
    if isinstance(signer, str) and signer.strip() and signer.strip() != author:
        author = f"{author} ({signer.strip()})"
    message_id = item.get("id")
    return Message(conversation=conversation, author=author, text=text, file=file, line=line,
                   end_line=end_line, when=when, id=f"{prefix}{message_id}" if message_id is not None else None)


def shown_text(item: dict[str, Any]) -> str:
    """The message as a reader sees it: whose words it forwards, its text (entities joined),
    its media named, one under the other."""
    forwarded = [_forwarded(item["forwarded_from"])] if "forwarded_from" in item else []
    return clean_text("\n".join(p for p in (*forwarded, _text(item.get("text")), *_media(item)) if p))


def _forwarded(source: Any) -> str:
    # null where the sender hid their account from forwards
    return f"[forwarded from {source.strip()}]" if isinstance(source, str) and source.strip() else "[forwarded]"


def _local_offset(item: dict[str, Any]) -> timedelta | None:
    """The exporting computer's UTC offset an item shows: its ``date`` (local, bare) less
    its ``date_unixtime`` (exact); None unless it has both."""
    date, unix = item.get("date"), item.get("date_unixtime")
    if not isinstance(date, str) or unix is None:
        return None
    try:
        when = from_timestamp(float(unix))
        local = iso_moment(date)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    if local.tzinfo is not None:
        return None
    offset = local - when.replace(tzinfo=None)
    # A real offset is whole quarter hours within a day.
    return offset if abs(offset) < timedelta(hours=24) and offset % timedelta(minutes=15) == timedelta(0) else None


def _text(value: Any) -> str:
    """A message's text: a string, or a list of strings and entities (``{type, text}``)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    parts = []
    for part in value:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            text = str(part.get("text") or "")
            href = part.get("href")
            parts.append(f"{text} ({href})" if href and href != text else text)
    return "".join(parts)


def _media(item: dict[str, Any]) -> Iterator[str]:
    """What the message carried besides text, named in brackets."""
    if "photo" in item:
        yield "[photo]"
    media = item.get("media_type")
    if media == "sticker":
        yield f"[sticker {item.get('sticker_emoji') or ''}]".replace(" ]", "]")
    elif media in MEDIA:
        yield f"[{MEDIA[media]}: {_file_name(item)}]" if _file_name(item) else f"[{MEDIA[media]}]"
    elif "file" in item:
        yield f"[file: {_file_name(item)}]" if _file_name(item) else "[file]"
    poll = item.get("poll")
    if isinstance(poll, dict) and _text(poll.get("question")).strip():
        yield _listed("poll", poll.get("question"), poll.get("answers"))
    checklist = item.get("todo_list")  # a checklist (2025): its items are its "answers"
    if isinstance(checklist, dict):
        yield _listed("checklist", checklist.get("title"), checklist.get("answers"))
    place = _joined(item.get("place_name"), item.get("address"), sep=", ")  # a venue: its name and address
    if place:
        yield f"[location: {place}]"
    elif isinstance(item.get("location_information"), dict):
        yield "[location]"
    game = _joined(item.get("game_title"), item.get("game_description"))
    if game:
        yield f"[game: {game}]"
    invoice = item.get("invoice_information")
    if isinstance(invoice, dict) and (bill := _joined(invoice.get("title"), invoice.get("description"))):
        yield f"[invoice: {bill}]"
    if "paid_stars_amount" in item:  # a paid post: only its price in Stars is written
        yield "[paid media]"
    giveaway = item.get("giveaway_information")
    if isinstance(giveaway, dict):
        prize = _joined(giveaway.get("additional_prize"))
        yield f"[giveaway: {prize}]" if prize else "[giveaway]"
    if isinstance(item.get("giveaway_results"), dict):
        yield "[giveaway results]"
    contact = item.get("contact_information")
    if isinstance(contact, dict):  # by name, else by number (a contact saved without a name)
        who = _joined(contact.get("first_name"), contact.get("last_name"), sep=" ") or _joined(contact.get("phone_number"))
        yield f"[contact: {who}]" if who else "[contact]"


def _listed(kind: str, title: Any, entries: Any) -> str:
    """A poll or a checklist, ``[kind: title (entry, entry)]``: the title and each entry's
    ``text`` are written as message text is (a string, or entities once formatted)."""
    words = [_text(e.get("text")).strip() for e in json_list(entries) if isinstance(e, dict)]
    listed = ", ".join(w for w in words if w)
    named = _text(title).strip()
    heading = f"{kind}: {named}" if named else kind
    return f"[{heading} ({listed})]" if listed else f"[{heading}]"


def _joined(*parts: Any, sep: str = ": ") -> str:
    """The parts that are non-empty strings, joined (a venue's name and address, a game's title
    and description)."""
    return sep.join(p.strip() for p in parts if isinstance(p, str) and p.strip())


def _file_name(item: dict[str, Any]) -> str:
    """The file's own name: ``file_name``, else the exported path's last part (not a placeholder)."""
    name = item.get("file_name") or item.get("title")
    if isinstance(name, str) and name:
        return name
    path = item.get("file")
    if isinstance(path, str) and path and not path.startswith("("):  # "(File not included. ...)"
        return path.rsplit("/", 1)[-1]
    return ""


def _when(item: dict[str, Any]) -> datetime | None:
    """``date_unixtime`` (aware, UTC), else ``date`` as written (naive: the exporting computer's zone)."""
    unix = item.get("date_unixtime")
    if unix is not None:
        try:
            return from_timestamp(float(unix))
        except (TypeError, ValueError, OverflowError, OSError):
            pass
    date = item.get("date")
    if isinstance(date, str):
        try:
            return iso_moment(date)
        except ValueError:
            return None
    return None
