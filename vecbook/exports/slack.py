"""Slack: a workspace export, as a folder or its .zip: one folder per conversation holding
one JSON array of messages per day (``general/2024-03-01.json``), with ``users.json`` and
``channels.json`` (plus ``groups.json``, ``dms.json``, ``mpims.json`` in current exports)
beside the folders. Both Slack's own export and slackdump's write this layout."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Hashable, Iterator

from ..emoji_names import emoji_for, with_emoji
from ..records import Record
from .base import (Export, ExportFile, Message, chat_records, clean_text, collector_paused, from_timestamp,
                   json_list, json_object)
from .jsonpos import JsonText
from .read_once import held_there, kept_once

# A day file: "<conversation folder>/YYYY-MM-DD.json", anywhere in the export (a folder that
# holds several exports, or a zip with a top folder, puts a prefix before it).
DAY_FILE = re.compile(r"(?:^|/)([^/]+)/\d{4}-\d{2}-\d{2}\.json$")
# What a day file's first bytes look like: an array of message objects with Slack timestamps.
_DAY_HEAD = re.compile(rb'^\s*\[\s*\{')
_TS = re.compile(rb'"ts"\s*:\s*"\d+\.\d+"')
_MESSAGE_TYPE = re.compile(rb'"type"\s*:\s*"message"')
# Slack's own notices, not what anyone said: joins, leaves, topic and name changes,
# integrations added, pins, deleted thread parents kept as placeholders, and calls (a huddle's
# notice, Slackbot's, whose thread holds what was said beside the huddle; older calls' rooms).
SKIPPED_SUBTYPES = frozenset({
    "channel_join", "channel_leave", "group_join", "group_leave", "channel_topic", "group_topic",
    "channel_purpose", "group_purpose", "channel_name", "group_name", "channel_archive",
    "group_archive", "channel_unarchive", "group_unarchive", "bot_add", "bot_remove", "bot_enable",
    "bot_disable", "pinned_item", "unpinned_item", "tombstone", "channel_convert_to_private",
    "channel_convert_to_public", "reminder_add", "huddle_thread", "sh_room_created",
})
# Slack's markup: <@U123>, <#C123|general>, <!here>, <http://x|label>.
_MARKUP = re.compile(r"<([^<>\n]+)>")
# What str.splitlines splits at.
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A bot_add notice names the integration it added: ".../services/B0JL6RASU|github>".
_BOT_ADDED = re.compile(r"/services/(B\w+)\|([^>]+)>")


def detect(export: Export) -> bool:
    """A ``<folder>/YYYY-MM-DD.json`` file holding an array of Slack messages (``"ts"``)."""
    return any(_looks_like(f.head()) for f in _day_files(export))


def _looks_like(head: bytes) -> bool:
    return bool(_DAY_HEAD.match(head) and _TS.search(head) and _MESSAGE_TYPE.search(head))


def _day_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: DAY_FILE.search(f.rel) is not None)


def read(export: Export) -> list[Record]:
    """Every conversation's day files, windowed; a thread is windowed apart from its channel. A
    workspace exported twice (March's export beside June's, a zip beside its folder) is read once
    (``_read_once``)."""
    workspaces: dict[str, Workspace] = {}

    def parse(file: ExportFile) -> Iterator[Message]:
        root = file.rel[:DAY_FILE.search(file.rel).start(1)]  # type: ignore[union-attr]
        if root not in workspaces:
            workspaces[root] = Workspace.load(export, root)
        return _messages(export, workspaces[root], file)

    # every day file is read whole anyway: its first bytes only have to open an array of objects;
    # one that cannot be read is read too, so that its WARN says so (rather than leave it out unsaid)
    files = [f for f in _day_files(export) if _DAY_HEAD.match(f.head(256)) or f.fault is not None]
    with collector_paused():
        messages = export.read_each(files, parse)
        for workspace in workspaces.values():
            workspace.name_bots()
        return chat_records(export, _read_once(export, messages))


def _root_of(rel: str) -> str:
    """The export a day file is of: its path before the conversation's folder ("" for the
    collection's own export, "2024-06/" for one in a folder, "x.zip!/" for a zip's)."""
    return rel[:DAY_FILE.search(rel).start(1)]  # type: ignore[union-attr]


def _read_once(export: Export, messages: list[Message]) -> list[Message]:
    """Each message once where a workspace was exported twice: each channel's messages in the
    newest export holding it, as other chats' are (``read_once``). A message is told by its ``ts``
    (unique in its channel) and its last edit's, not by the names shown, which change as people
    rename themselves. One WARN an older export, not one a channel: a workspace has hundreds."""
    kept, repeats = kept_once(messages, _channel_of, lambda m: _root_of(m.file.rel), _said)
    counts = Counter(_root_of(m.file.rel) for m in messages)
    older: dict[str, list[tuple[str, int]]] = {}
    for repeat in repeats:
        older.setdefault(_root_of(repeat.messages[0].file.rel), []).append(
            (_root_of(repeat.newest.file.rel), repeat.dropped))
    for root, held in older.items():
        newest = Counter(n for n, _ in held).most_common(1)[0][0]
        export.warn(f"{export.label_prefix}{_root_name(root)}" if root else None, None,
                    f"the same workspace as '{_root_name(newest) or export.path.name}', exported again: "
                    f"{held_there(sum(d for _, d in held), counts[root])}", skipped=False)
    return kept


def _root_name(root: str) -> str:
    """An export's root as a reader names it: "2024-06", "x.zip"."""
    return root.removesuffix("/").removesuffix("!")


def _channel_of(message: Message) -> Hashable:
    """The conversation a message is of, across exports: its channel's id where listed."""
    channel = message.metadata.get("channel_id")
    return ("id", str(channel)) if channel else ("name", message.conversation)


def _said(message: Message) -> Hashable:
    """What tells one message from another across exports: its ``ts`` and its last edit's."""
    return message.id, message.edited if isinstance(message, SlackMessage) else None


@dataclass
class SlackMessage(Message):
    """A Slack message, with when it was last edited: an edit between two exports is read in both."""

    edited: str | None = None


# -- the workspace: who is who, which folder is which conversation --


@dataclass
class Conversation:
    """A conversation folder: its name (a channel's, or a DM's members') and metadata."""

    name: str
    metadata: dict[str, Any]


@dataclass
class Workspace:
    """One export's names: users, channels, DMs, bots, from the JSON files beside the folders."""

    users: dict[str, str] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)  # channel id -> name, for <#C123>
    folders: dict[str, Conversation] = field(default_factory=dict)
    bots: dict[str, str] = field(default_factory=dict)  # bot id -> name
    bot_messages: list[Message] = field(default_factory=list)  # named once every file is read

    @classmethod
    def load(cls, export: Export, root: str) -> Workspace:
        """The names in the export rooted at ``root`` (a prefix of its files' paths)."""
        space = cls()
        for user in _listing(export, root, "users.json"):
            name = _person_name(user, user.get("profile"))
            if name:
                space.users[str(user.get("id"))] = name
                bot_id = json_object(user.get("profile")).get("bot_id")
                if bot_id:
                    space.bots[bot_id] = name
        for listing, kind in (("channels.json", "channel"), ("groups.json", "private channel")):
            for channel in _listing(export, root, listing):
                space._add_channel(channel, kind)
        for listing, kind in (("dms.json", "dm"), ("mpims.json", "group dm")):
            for chat in _listing(export, root, listing):
                space._add_direct(chat, kind)
        return space

    def _add_channel(self, channel: dict[str, Any], kind: str) -> None:
        name, channel_id = channel.get("name"), channel.get("id")
        if not isinstance(name, str):
            return
        if channel_id:
            self.channels[str(channel_id)] = name
        conversation = Conversation(name, {"channel_id": channel_id, "channel_type": kind})
        for folder in (name, channel_id):
            if folder:
                self.folders.setdefault(str(folder), conversation)

    def _add_direct(self, chat: dict[str, Any], kind: str) -> None:
        members = [self.user(str(m)) for m in json_list(chat.get("members"))]
        name = ", ".join(dict.fromkeys(members)) or chat.get("name") or chat.get("id")
        if not name:
            return
        conversation = Conversation(str(name), {"channel_id": chat.get("id"), "channel_type": kind})
        for folder in (chat.get("id"), chat.get("name")):
            if folder:
                self.folders.setdefault(str(folder), conversation)

    def conversation(self, folder: str) -> Conversation:
        """The conversation a day file's folder holds (the folder's name when unlisted)."""
        found = self.folders.get(folder)
        if found is None:
            found = self.folders[folder] = Conversation(folder, {})
        return found

    def user(self, user_id: str, profile: Any = None) -> str:
        """A user's display name; the message's own profile, then the id, when users.json lacks it."""
        return self.users.get(user_id) or _person_name({}, profile) or user_id

    def name_bots(self) -> None:
        """Bots known only by id when their message was read get the name found later."""
        for message in self.bot_messages:
            message.author = self.bots.get(message.author, message.author)

    def format(self, text: str) -> str:
        """Slack's markup as a reader sees it: @Name, #channel, ``label (url)``, &<> unescaped."""
        if "<" in text:
            text = _MARKUP.sub(self._markup, text)
        if "&" in text:
            text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        return with_emoji(text)

    def _markup(self, match: re.Match[str]) -> str:
        target, _, label = match.group(1).partition("|")
        if target.startswith("@"):
            return "@" + (self.users.get(target[1:]) or label.lstrip("@") or target[1:])
        if target.startswith("#"):
            return "#" + (label or self.channels.get(target[1:]) or target[1:])
        if target.startswith("!"):
            special = target[1:].split("^", 1)[0]
            return label or ("@" + special)  # <!here>, <!subteam^S1|@team>, <!date^...|fallback>
        bare = target.split(":", 1)[-1].lstrip("/")  # what was typed when Slack linked it itself
        if not label or label in (target, bare):
            return label or (bare if target.startswith(("mailto:", "tel:")) else target)
        return f"{label} ({target})"


def _listing(export: Export, root: str, name: str) -> list[dict[str, Any]]:
    """The objects of one of the export's listing files (empty when absent or unreadable)."""
    files = export.find(lambda f: f.rel == root + name)
    if not files:
        return []
    try:
        value = json.loads(files[0].read_text())
    except (OSError, ValueError) as exc:
        export.warn(files[0], getattr(exc, "lineno", None), f"cannot read {name} (names left as ids): {exc}")
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _person_name(user: dict[str, Any], profile: Any) -> str:
    profile = profile if isinstance(profile, dict) else {}
    for value in (profile.get("display_name"), profile.get("real_name"), user.get("real_name"),
                  user.get("name"), profile.get("name")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


# -- messages --


def _messages(export: Export, space: Workspace, file: ExportFile) -> Iterator[Message]:
    doc = JsonText(file.read_text())
    conversation = space.conversation(DAY_FILE.search(file.rel).group(1))  # type: ignore[union-attr]
    for begin, end, item in doc.elements(doc.skip_ws(0)):
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        if item.get("subtype") in SKIPPED_SUBTYPES or item.get("hidden"):
            _learn_bot(space, item)
            continue
        line, end_line = doc.lines(begin, end)
        message = _message(export, space, conversation, item, file, line, end_line)
        if message is not None:
            yield message


def _learn_bot(space: Workspace, item: dict[str, Any]) -> None:
    if item.get("subtype") == "bot_add" and isinstance(item.get("text"), str):
        for bot_id, name in _BOT_ADDED.findall(item["text"]):
            space.bots.setdefault(bot_id, name)


def _message(export: Export, space: Workspace, conversation: Conversation, item: dict[str, Any],
             file: ExportFile, line: int, end_line: int) -> Message | None:
    ts = item.get("ts")
    when = _when(ts)
    if when is None:
        export.warn(file, line, "message without a 'ts' timestamp skipped")
        return None
    text = shown_text(space, item)
    if not text:
        export.warn(file, line, f"message {ts} without text skipped")
        return None
    author, named = _author(space, item)
    edited = json_object(item.get("edited")).get("ts")
    message = SlackMessage(conversation=conversation.name, author=author, text=text, file=file, line=line,
                           end_line=end_line, when=when, id=str(ts), thread=_thread(item),
                           metadata=conversation.metadata, edited=str(edited) if edited else None)
    if not named:
        space.bot_messages.append(message)
    return message


def shown_text(space: Workspace, item: dict[str, Any]) -> str:
    """The message as a reader sees it: its text, its attachments' text (link previews, bot
    cards) and its files' names, one under the other."""
    text = item.get("text")
    text = space.format(text) if isinstance(text, str) else ""
    if not text.strip() and "blocks" in item:  # Block Kit alone: apps leave "text" empty
        text = blocks_text(space, item["blocks"])
    if "attachments" in item or "files" in item or "file" in item:
        text = "\n".join(p for p in (text, *_extras(space, item)) if p)
    # most messages are one line: clean_text's split and join is for the others
    return clean_text(text) if _LINE_BREAK.search(text) else text.strip()


def _extras(space: Workspace, item: dict[str, Any]) -> Iterator[str]:
    for attachment in json_list(item.get("attachments")):
        if isinstance(attachment, dict):
            if attachment.get("is_share") or attachment.get("is_msg_unfurl"):
                yield _shared_from(space, attachment)
            shown = [s for s in (attachment.get(k) for k in ("pretext", "title", "text")) if isinstance(s, str) and s]
            if not shown and "blocks" in attachment:  # an app's card in Block Kit
                shown = [s for s in (blocks_text(space, attachment["blocks"]),) if s]
            shown = shown or [attachment.get("fallback")]
            yield from (space.format(s) for s in shown if isinstance(s, str))
    files = json_list(item.get("files")) or ([item["file"]] if isinstance(item.get("file"), dict) else [])
    for upload in files:
        if isinstance(upload, dict):
            name = upload.get("name") or upload.get("title")
            yield f"[file: {name}]" if name else "[file]"


def _shared_from(space: Workspace, attachment: dict[str, Any]) -> str:
    """Whose words a shared message (or a pasted link to one) carries, and from where:
    ``[shared from Bo Berg in #general]``, so they are not taken for the sharer's."""
    author = next((a.strip() for a in (attachment.get("author_name"), attachment.get("author_subname"))
                   if isinstance(a, str) and a.strip()), "")
    if not author and isinstance(attachment.get("author_id"), str):
        author = space.user(attachment["author_id"])
    channel = attachment.get("channel_name") or space.channels.get(str(attachment.get("channel_id")))
    where = f" in #{channel}" if isinstance(channel, str) and channel else ""
    return f"[shared from {author}{where}]" if author else f"[shared{where}]"


def blocks_text(space: Workspace, blocks: Any) -> str:
    """What a message's Block Kit blocks say, one line a piece: headers, sections (text and
    fields), context lines, and rich text (the Slack client's own format). Buttons, images and
    other controls say nothing a reader searches for. Read only where ``text`` is empty: where
    it is not, it says the same (Slack builds it from the blocks)."""
    lines: list[str] = []
    for block in json_list(blocks):
        block = json_object(block)
        kind = block.get("type")
        if kind in ("header", "section"):
            lines += [_composed(space, block.get("text")), *(_composed(space, f) for f in json_list(block.get("fields")))]
        elif kind == "context":
            lines += [_composed(space, element) for element in json_list(block.get("elements"))]
        elif kind == "rich_text":
            lines += [_rich_text(space, json_object(element)) for element in json_list(block.get("elements"))]
    return "\n".join(line for line in lines if line)


def _composed(space: Workspace, value: Any) -> str:
    """A Block Kit text object: ``plain_text`` as it is, ``mrkdwn`` with its markup resolved."""
    value = json_object(value)
    text = value.get("text")
    if not isinstance(text, str) or value.get("type") not in ("plain_text", "mrkdwn"):
        return ""  # an image, a button: nothing said
    return space.format(text) if value["type"] == "mrkdwn" else text


def _rich_text(space: Workspace, element: dict[str, Any]) -> str:
    """A rich text section, quote or code block as one text; a list as one line an item."""
    if element.get("type") == "rich_text_list":
        return "\n".join(_rich_text(space, json_object(item)) for item in json_list(element.get("elements")))
    return "".join(_inline(space, json_object(part)) for part in json_list(element.get("elements")))


def _inline(space: Workspace, part: dict[str, Any]) -> str:
    """One piece of rich text as a reader sees it (as ``Workspace.format`` shows the same in ``text``)."""
    kind, text = part.get("type"), part.get("text")
    if kind == "text":
        return text if isinstance(text, str) else ""
    if kind == "link":
        url = str(part.get("url") or "")
        return f"{text} ({url})" if isinstance(text, str) and text and text != url else url
    if kind == "user":
        return "@" + space.user(str(part.get("user_id")))
    if kind == "channel":
        return "#" + space.channels.get(str(part.get("channel_id")), str(part.get("channel_id")))
    if kind == "usergroup":
        return "@" + str(part.get("usergroup_id"))
    if kind == "broadcast":
        return "@" + str(part.get("range"))
    if kind == "emoji":
        return _emoji(part)
    if kind == "date":
        return str(part.get("fallback") or "")
    return text if isinstance(text, str) else ""


def _emoji(part: dict[str, Any]) -> str:
    """The emoji itself where Slack gives its code points (``1f44d-1f3fb``) or its name is a
    common one, else ``:name:`` as typed (a workspace's own emoji)."""
    try:
        return "".join(chr(int(code, 16)) for code in str(part["unicode"]).split("-"))
    except (KeyError, ValueError, OverflowError):
        return emoji_for(str(part.get("name"))) or f":{part.get('name')}:"


def _author(space: Workspace, item: dict[str, Any]) -> tuple[str, bool]:
    """The name shown for the message, and whether it is final (a bot may be named later)."""
    bot_id = item.get("bot_id")
    if bot_id or item.get("subtype") == "bot_message":
        name = item.get("username") or json_object(item.get("bot_profile")).get("name") or space.bots.get(str(bot_id))
        if isinstance(name, str) and name.strip():
            return name.strip(), True
    user = item.get("user") or json_object(item.get("comment")).get("user")  # a file comment: its commenter
    if isinstance(user, str) and user:
        return space.user(user, item.get("user_profile")), True
    if bot_id:
        return str(bot_id), False
    return "?", True


def _thread(item: dict[str, Any]) -> str | None:
    thread = item.get("thread_ts")
    return str(thread) if thread else None


def _when(ts: Any) -> datetime | None:
    try:
        return from_timestamp(float(ts))
    except (TypeError, ValueError, OverflowError, OSError):
        return None
