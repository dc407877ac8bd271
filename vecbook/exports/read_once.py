"""A chat exported twice into one collection, read once (WhatsApp, Telegram, Messenger, Discord,
ChatGPT, Slack).

People export a chat again months later and keep both: WhatsApp's "WhatsApp Chat with Ana.txt"
beside a browser's "WhatsApp Chat with Ana (1).txt", a zip beside the folder it was unzipped to,
Telegram Desktop's "ChatExport_2024-03-01" beside "ChatExport_2024-06-01", Facebook's download of
March beside June's. Read whole, every message of the older export is read twice: twice the hits
to fold, twice the counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from ..records import Record
from .base import Export, Message

# The chat formats whose windows two sources (``vecbook add``) or two files of a notes folder
# (``read_twice``) are compared by, to tell of a chat exported twice.
CHAT_FORMATS = ("whatsapp", "telegram", "messenger", "discord", "slack", "chatgpt")
# The metadata key a chat format's windows name their chat's id by (ChatGPT's ``thread`` is the
# conversation's id, Messenger's the thread's path), for ``window_key``.
CHAT_IDS = {"telegram": "chat_id", "slack": "channel_id", "chatgpt": "thread", "messenger": "thread"}
# The chat formats without message ids, whose window key is a digest holding the chat's name.
NO_MESSAGE_IDS = frozenset({"messenger"})


def read_once(export: Export, messages: list[Message], chat_of: Callable[[Message], Hashable] | None = None,
              copy_of: Callable[[Message], str] | None = None) -> list[Message]:
    """Each message once: the copies of one conversation (its name, or what ``chat_of`` says of
    it: an app's id of the chat), each a file or what ``copy_of`` says (the folder of a thread
    Facebook writes in parts), are taken newest first (by their last message), and a message an
    older copy holds is dropped there when a newer one holds it too (its id where the app gives
    one, else its minute; its author and text; as many times as the newer copy has it). What only
    an older copy holds (deleted on the phone since, or edited) stays, cited there; an older copy
    that gave messages up says so in a WARN."""
    kept, repeats = kept_once(messages, chat_of, copy_of)
    for repeat in repeats:
        _say_read_once(export, repeat)
    return kept


@dataclass
class Repeat:
    """An older copy of a chat (its messages) some of whose messages a newer copy holds too."""

    messages: list[Message]
    newest: Message  # the first message of the newest copy of the chat
    dropped: int  # how many of ``messages`` the newer copies hold, so dropped here


def kept_once(messages: list[Message], chat_of: Callable[[Message], Hashable] | None = None,
              copy_of: Callable[[Message], str] | None = None,
              said_of: Callable[[Message], Hashable] | None = None) -> tuple[list[Message], list[Repeat]]:
    """``read_once`` without its WARNs: the messages kept, and each older copy that gave some up.
    ``said_of`` is what tells one message from another (default: see ``_said``)."""
    chats: dict[Hashable, dict[str, list[Message]]] = {}
    for message in messages:
        chat = chat_of(message) if chat_of is not None else message.conversation
        copy = copy_of(message) if copy_of is not None else message.file.rel
        chats.setdefault(chat, {}).setdefault(copy, []).append(message)
    if all(len(files) == 1 for files in chats.values()):
        return messages, []
    said = said_of or _said
    kept: list[Message] = []
    repeats: list[Repeat] = []
    for files in chats.values():
        newest, *older = sorted(files.values(), key=lambda f: (_last(f), len(f), f[0].file.rel), reverse=True)
        kept += newest
        held = Counter(said(m) for m in newest)  # the most times any file so far holds each message
        for file_messages in older:
            here: Counter[Hashable] = Counter()
            for message in file_messages:
                here[key := said(message)] += 1
                if here[key] > held[key]:
                    kept.append(message)
            if dropped := sum((here & held).values()):
                repeats.append(Repeat(file_messages, newest[0], dropped))
            held |= here
    return kept, repeats


def _last(messages: list[Message]) -> float:
    """When a file's last message was sent, as a number: a file's times are all aware or all
    naive, two files' need not be (an old Telegram export wrote no zone)."""
    return max((m.when.timestamp() for m in messages if m.when is not None), default=float("-inf"))


def _said(message: Message) -> tuple[object, ...]:
    # The app's id where it has one (Telegram, Discord), the chat's id an account export writes
    # before it taken off ("100:1"): an export from before 2021 wrote Telegram's times without a
    # zone, later ones exact. With the text, so an edit is read in both. Else to the minute: a chat
    # an iPhone took over from an Android phone is written with seconds there.
    if message.id:
        return message.id.rsplit(":", 1)[-1], message.author, message.text
    when = message.when.replace(second=0, microsecond=0) if message.when is not None else None
    return when, message.author, message.text


def _say_read_once(export: Export, repeat: Repeat) -> None:
    """The WARN of an older export of a chat some of whose messages a newer one holds."""
    export.warn(repeat.messages[0].file, None, f"the same chat as '{repeat.newest.file.rel}', exported again: "
                                               f"{held_there(repeat.dropped, len(repeat.messages))}", skipped=False)


def held_there(dropped: int, count: int) -> str:
    """What a WARN of an older export of ``count`` messages says of the ``dropped`` a newer one holds."""
    alone = count - dropped
    return (f"all {dropped} of its messages are read there" if not alone else
            f"{dropped} of its messages are read there; the {alone} it alone holds here")


def window_key(record: Record) -> tuple[object, ...]:
    """What two exports of one chat share for a window: its chat, its start and its first
    message's key (the app's id, or a digest of the message: ``Message.key``), not the file. A
    Telegram account export writes the chat's id before the message's ("100:1", its ids count per
    chat), the chat's own export not ("1"): the key is taken without it. Where the window names
    its chat's id (``CHAT_IDS``), that and the message's id are the key, as ``read_once`` tells them:
    a chat renamed between the exports, or one exported before 2021 (its times without a zone, so
    its ``date`` another), is the same chat still. Without message ids (Messenger's), the key is a
    digest of the first message holding the chat's name, which a rename changes: the chat's id and
    the window's start, to the second, are the key."""
    key = record.id.rsplit("#", 1)[-1].rsplit(":", 1)[-1]
    chat_format = str(record.metadata_value("format"))
    named = CHAT_IDS.get(chat_format)
    chat = record.metadata_value(named) if named is not None else None
    if chat is not None:
        return ("chat", str(chat)), record.metadata_value("date") if chat_format in NO_MESSAGE_IDS else key
    return record.metadata_value("conversation"), record.metadata_value("date"), key


def read_twice(blocks: Sequence[tuple[str, Sequence[Record]]], folder: str = "") -> list[tuple[str, str, int, int]]:
    """Chats exported twice among files read each on its own (a notes folder's, whose files are
    read again one by one as they change, so ``read_once`` never sees two together): for each
    block of chat windows some of which a newer block holds too, (its key, the newest such
    block's key, how many of its windows that one holds, how many it has). The newer of two is
    the one whose last window is later. The same blocks as the ``folder``'s last call (the very
    lists: a refresh keeps an unchanged file's) give its answer again, unread."""
    chat_blocks = [(key, records) for key, records in blocks
                   if records and records[0].metadata_value("format") in CHAT_FORMATS]
    last = _READ_TWICE.get(folder)
    if last is not None and len(last[0]) == len(chat_blocks) and all(
            key == was and records is held for (key, records), (was, held) in zip(chat_blocks, last[0])):
        return list(last[1])
    found = _read_twice(chat_blocks) if len(chat_blocks) > 1 else []
    _READ_TWICE[folder] = (chat_blocks, found)
    return list(found)


# The last ``read_twice`` of each notes folder (by its blocks' key prefix): its chat blocks and answer.
_READ_TWICE: dict[str, tuple[list[tuple[str, Sequence[Record]]], list[tuple[str, str, int, int]]]] = {}


def _read_twice(blocks: Sequence[tuple[str, Sequence[Record]]]) -> list[tuple[str, str, int, int]]:
    """``read_twice`` of blocks of chat windows."""
    chats = {key: {r.metadata_value("conversation") for r in records} for key, records in blocks}
    # Only the blocks holding a conversation another block holds too are compared, window by window.
    seen: Counter[object] = Counter(chat for held in chats.values() for chat in held)
    shared_chats = {chat for chat, count in seen.items() if count > 1}
    keys = {key: {window_key(r) for r in records} for key, records in blocks if not chats[key].isdisjoint(shared_chats)}
    holders: defaultdict[tuple[object, ...], list[str]] = defaultdict(list)
    for key, windows in keys.items():
        for window in windows:
            holders[window].append(key)
    order = {key: (max(str(r.metadata_value("end_date") or r.metadata_value("date")) for r in records), len(records),
                   key) for key, records in blocks if key in keys}
    found = []
    for key, windows in keys.items():
        shared = Counter(other for window in windows for other in holders[window] if order[other] > order[key])
        if shared:
            newest = max(shared, key=order.__getitem__)
            found.append((key, newest, shared[newest], len(windows)))
    return found
