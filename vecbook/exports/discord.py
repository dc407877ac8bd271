"""Discord: DiscordChatExporter's JSON (one file a channel, DM or group DM, or a part of one)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Iterator

from ..records import Record, iso_moment
from .base import Export, ExportFile, Message, chat_records, clean_text, json_list, json_object, json_string
from .jsonpos import JsonText
from .read_once import read_once

# The app's notices, not what anyone said: DiscordChatExporter writes a message's kind by the
# name its enum has for it (joins, pins, renames, calls, threads started)...
NOTICE_KINDS = frozenset({"RecipientAdd", "RecipientRemove", "Call", "ChannelNameChange", "ChannelIconChange",
                          "ChannelPinnedMessage", "GuildMemberJoin", "ThreadCreated"})
# ...and a kind the enum has no name for as Discord's number. Discord numbers its notices 1-18
# (boosts, follows, discovery notices) and, past 19 (a reply), 21 (a thread's copy of the message
# it started from), 22 (an invite reminder), 24 (AutoMod's report, its embed the blocked text),
# 25-32 (role purchases, stage starts and ends, upsells), 36-39 (raid alerts), 44 (a purchase)
# and 46 (a poll's result); the others are what a person or bot said (20: a slash command's
# answer, 23: a context-menu command's), read like "Default".
NOTICE_NUMBERS = frozenset({*range(1, 19), 21, 22, *range(24, 33), *range(36, 40), 44, 46})
# How DiscordChatExporter names the second and later parts of a partitioned export.
_PART = re.compile(r" \[part \d+\](?=\.json$)", re.I)
# DiscordChatExporter's HTML export (its GUI's default format), not read, opens its stylesheet
# with these classes; its CSV export, not read either (no guild, channel or message ids in it),
# with this header row.
HTML_MARK = b"chatlog__"
CSV_MARK = b"AuthorID,Author,Date,Content,Attachments,Reactions"
# What each export not read is called, by its suffix, and the mark it is told by.
OTHER_EXPORTS = {(".html", ".htm"): ("HTML", HTML_MARK), (".csv",): ("CSV", CSV_MARK)}
# Its plain-text export, read as text where a .txt is, opens with a rule of 62 "=" and the guild.
TEXT_MARK = re.compile("\ufeff?={62}\r?\nGuild: ")


def detect(export: Export) -> bool:
    """A JSON file holding DiscordChatExporter's ``guild``, ``channel`` and ``messages`` keys."""
    return any(_looks_like(f.head()) for f in _json_files(export))


def _looks_like(head: bytes) -> bool:
    return b'"guild"' in head and b'"channel"' in head and b'"messages"' in head


def _json_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name.lower().endswith(".json"))


def read(export: Export) -> list[Record]:
    """Every channel file's messages, windowed, each once where a channel was exported twice
    (``read_once``); an HTML or CSV export among them is a WARN."""
    files = [f for f in _json_files(export) if _looks_like(f.head())]
    _html_exports(export, files)
    messages = export.read_each(files, lambda f: _messages(export, f))
    return chat_records(export, read_once(export, messages, _channel_of, _export_of))


def _channel_of(message: Message) -> tuple[str, str | None]:
    """The channel a message is of, and its thread: each thread of a channel is a file of its own."""
    return message.conversation, message.thread


def _export_of(message: Message) -> str:
    """The export a message is in: its file, the parts of a partitioned one (``--partition``:
    "<channel>.json", "<channel> [part 2].json"...) taken together, as they hold its messages
    between them."""
    return _PART.sub("", message.file.rel)


def plain_text_export(head: str) -> bool:
    """Whether a ``.txt`` starts as DiscordChatExporter's plain-text export does (it is read as
    text: its dates are written as the exporting computer's locale writes them)."""
    return TEXT_MARK.match(head) is not None


def _html_exports(export: Export, files: list[ExportFile]) -> None:
    """A WARN for each channel exported as HTML (or CSV) among the JSON ones, where it would be
    passed over unseen; one exported both ways (the same name, ``.json`` beside ``.html``) is read
    from its JSON."""
    if not files:  # an HTML export alone: the load's "nothing read" WARN names it and what to do
        return
    read_names = {f.rel.rsplit(".", 1)[0] for f in files}
    for suffixes, (kind, mark) in OTHER_EXPORTS.items():
        for page in export.find(lambda f: f.name.lower().endswith(suffixes)):
            if page.rel.rsplit(".", 1)[0] not in read_names and mark in page.head():
                export.warn(page, None, f"DiscordChatExporter's {kind} export, which VecBook does not read: export "
                                        "the channel again choosing the JSON format")


def _messages(export: Export, file: ExportFile) -> Iterator[Message]:
    doc = JsonText(file.read_text())
    conversation, thread = _conversation(_object(doc, "guild"), _object(doc, "channel"))
    start = doc.path(["messages"])
    if start is None:
        export.warn(file, None, "no 'messages' array; file skipped")
        return
    empty: list[int] = []  # lines of messages with nothing to read, said once a file
    for begin, end, item in doc.elements(start):
        if not isinstance(item, dict) or _is_notice(item.get("type")):
            continue
        line, end_line = doc.lines(begin, end)
        message = _message(item, conversation, file, line, end_line)
        if message is None:
            empty.append(line)
        else:
            message.thread = thread
            yield message
    if empty:
        export.warn(file, empty[0], f"{len(empty)} message{'s' * (len(empty) > 1)} without text skipped (a poll, "
                                    "an embed of an image alone: DiscordChatExporter writes no words for them)")


def _object(doc: JsonText, key: str) -> dict[str, Any]:
    at = doc.path([key])
    value = doc.decode(at)[0] if at is not None else None
    return value if isinstance(value, dict) else {}


def _conversation(guild: dict[str, Any], channel: dict[str, Any]) -> tuple[str, str | None]:
    """The file's conversation, ``<server> / <channel>`` (a DM by its channel's name), and its
    thread: a thread's file names its parent channel as its ``category``, and is a thread of it,
    as Slack's threads are of their channel."""
    name = str(channel.get("name") or channel.get("id") or "?")
    server = guild.get("name")
    parent = json_string(channel.get("category")).strip()
    if json_string(channel.get("type")).endswith("Thread") and parent:
        name, thread = parent, name
    else:
        thread = None
    return (name if not server or server == "Direct Messages" else f"{server} / {name}"), thread


def _message(item: dict[str, Any], conversation: str, file: ExportFile, line: int, end_line: int) -> Message | None:
    parts = _said(item)
    forwarded = item.get("forwardedMessage")
    if isinstance(forwarded, dict):  # a forward's own content is empty: what it carries is the message
        parts += ["[forwarded]", *_said(forwarded)]
    text = clean_text("\n".join(p for p in parts if p))
    if not text:
        return None
    return Message(conversation=conversation, author=_author(item.get("author")), text=text, file=file, line=line,
                   end_line=end_line, when=_when(item.get("timestamp")), id=item.get("id"))


def _author(author: Any) -> str:
    """The author's nickname, else name (an author written as a bare string: that string)."""
    if isinstance(author, str):
        return author.strip() or "?"
    found = json_object(author)
    return next((n.strip() for n in (json_string(found.get(k)) for k in ("nickname", "name")) if n.strip()), "?")


def _said(item: dict[str, Any]) -> list[str]:
    """A message's (or a forwarded message's) content, embeds, attachments and stickers."""
    parts = [json_string(item.get("content"))]
    for embed in json_list(item.get("embeds")):
        parts += _embed_lines(embed)
    parts += [f"[attachment: {a.get('fileName') or a.get('url')}]" for a in json_list(item.get("attachments"))
              if isinstance(a, dict)]
    # a sticker is named, as Telegram's are: a message of a sticker alone would otherwise have no text
    parts += [f"[sticker: {s.get('name') or '?'}]" for s in json_list(item.get("stickers")) if isinstance(s, dict)]
    return parts


def _embed_lines(embed: Any) -> list[str]:
    """An embed's text as Discord shows it: author line, title, description, each field as
    ``name: value``, footer; a bot's answer often lives here alone, with empty ``content``."""
    if not isinstance(embed, dict):
        return []
    lines = [json_object(embed.get("author")).get("name"), embed.get("title"), embed.get("description")]
    for field in embed.get("fields") or []:
        if isinstance(field, dict):
            lines.append(": ".join(p for p in (json_string(field.get("name")).strip(),
                                               json_string(field.get("value")).strip()) if p))
    lines.append(json_object(embed.get("footer")).get("text"))
    return [text for text in (json_string(line).strip() for line in lines) if text]


def _is_notice(kind: Any) -> bool:
    """Whether a message ``type`` is one of the app's notices (see NOTICE_KINDS)."""
    if not isinstance(kind, str):
        return kind is not None  # a type of an unexpected shape: not a message this reader knows
    if kind.isdigit():
        return int(kind) in NOTICE_NUMBERS
    return kind in NOTICE_KINDS


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return iso_moment(value)
    except ValueError:
        return None
