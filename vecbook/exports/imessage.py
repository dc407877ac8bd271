"""iMessage: macOS Messages' ``chat.db`` (``~/Library/Messages/chat.db``), opened read-only.

A database has no lines: a window is cited as ``<collection>/chat.db#message:<ROWID>`` (its
first message's row, as SQLite collections cite ``db#table:id``) and its record id is built
from that message's ``guid``, which Messages never reuses or renumbers.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timedelta, timezone
from typing import Any

from ..records import Record
from ..sqlite_ro import explained, open_readonly
from .base import Export, ExportFile, Message, chat_records, clean_text

# The tables every Messages database since OS X 10.8 has, and that a message needs.
REQUIRED_TABLES = frozenset({"message", "handle", "chat", "chat_message_join"})
# Messages counts time from 2001-01-01 UTC: in seconds up to macOS 10.12, in
# nanoseconds since 10.13. A seconds value passes 1e11 only in the year 5170.
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=timezone.utc)
NANOSECOND_DATES = 10**11
# associated_message_type in this range: a tapback (reaction) to another message,
# whose text ("Loved “...”") repeats the message it reacts to.
TAPBACKS = range(2000, 4000)
# Characters Messages puts in a body where an attachment (U+FFFC) or an app
# balloon (U+FFFD) sat: placeholders, not words.
PLACEHOLDERS = re.compile("[\ufffc\ufffd]")
SQLITE_HEADER = b"SQLite format 3\x00"


def detect(export: Export) -> bool:
    """A SQLite file with Messages' ``message``, ``handle``, ``chat`` and ``chat_message_join`` tables."""
    return any(_is_chat_db(f) for f in _sqlite_files(export))


def read(export: Export) -> list[Record]:
    """Every chat's messages, windowed."""
    files = [f for f in _sqlite_files(export) if _is_chat_db(f, export)]
    if not files and not export.problems:
        export.warn(None, None, "no Messages database found (a SQLite file with the tables "
                                f"{', '.join(sorted(REQUIRED_TABLES))}, such as ~/Library/Messages/chat.db)")
    return chat_records(export, export.read_each(files, lambda f: _messages(export, f)))


def _sqlite_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: not f.name.endswith(("-wal", "-shm", "-journal"))
                       and f.head(len(SQLITE_HEADER)) == SQLITE_HEADER)


def _is_chat_db(file: ExportFile, export: Export | None = None) -> bool:
    """Whether the file holds Messages' tables; a database that cannot be read is a WARN when reading."""
    try:
        connection = _connect(file)
        try:
            return REQUIRED_TABLES <= _tables(connection)
        finally:
            connection.close()
    except (sqlite3.Error, OSError, ValueError) as exc:
        if export is not None:
            export.warn(file, None, f"cannot read database: {explained(str(exc))}")
        return False


def _connect(file: ExportFile) -> sqlite3.Connection:
    """The database read-only; a zip member is copied into memory (nothing is extracted)."""
    if file.path is not None:
        return open_readonly(file.path)
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.deserialize(file.read_bytes())
    connection.execute("PRAGMA query_only = ON")
    return connection


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    # (not PRAGMA table_info: the read-only connection's authorizer refuses every PRAGMA)
    return {d[0] for d in connection.execute(f'SELECT * FROM "{table}" LIMIT 0').description}


def _messages(export: Export, file: ExportFile) -> list[Message]:
    connection = _connect(file)
    try:
        tables = _tables(connection)
        members = _chat_members(connection, tables)
        chats = _chat_names(connection, members)
        attachments = _attachments(connection, tables)
        rows = connection.execute(_message_query(_columns(connection, "message"))).fetchall()
    finally:
        connection.close()
    messages: list[Message] = []
    empty: list[int] = []
    undated = 0
    for rowid, guid, text, body, from_me, date, handle, chat_id, associated, item_type in rows:
        if (associated or 0) in TAPBACKS or (item_type or 0) != 0:
            continue  # reactions and group events (renames, joins): not something anyone wrote
        words = _text(text, body, attachments.get(rowid, []))
        if not words:
            empty.append(rowid)
            continue
        when = apple_date(date)
        undated += when is None
        conversation = chats.get(chat_id) or handle or "?"
        author = "me" if from_me else handle or _only_member(members.get(chat_id)) or "?"
        messages.append(Message(conversation=conversation, author=author, text=words, file=file, line=None,
                                end_line=None, when=when, id=guid or f"rowid-{rowid}", anchor=f"message:{rowid}"))
    # one person's SMS and iMessage chats carry one name: their messages interleave by time,
    # as Messages shows them
    messages.sort(key=lambda m: (m.conversation, m.when is None, m.when or APPLE_EPOCH))
    if empty:
        export.warn(file, None, f"{_count(len(empty), 'message')} without text skipped "
                                f"(message:{', message:'.join(map(str, empty[:5]))}{', ...' if len(empty) > 5 else ''})")
    if undated:
        export.warn(file, None, f"{_count(undated, 'message')} without a date kept undated", skipped=False)
    return messages


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _message_query(columns: set[str]) -> str:
    """Messages with their chat and sender; columns older macOS lacks read as NULL."""
    def column(name: str) -> str:
        return f"m.{name}" if name in columns else "NULL"

    return (f"SELECT m.ROWID, {column('guid')}, {column('text')}, {column('attributedBody')}, "
            f"{column('is_from_me')}, {column('date')}, h.id, cmj.chat_id, "
            f"{column('associated_message_type')}, {column('item_type')} "
            "FROM message m LEFT JOIN chat_message_join cmj ON cmj.message_id = m.ROWID "
            "LEFT JOIN handle h ON h.ROWID = m.handle_id "
            f"ORDER BY cmj.chat_id, COALESCE({column('date')}, 0) = 0, {column('date')}, m.ROWID")  # undated last


def _chat_members(connection: sqlite3.Connection, tables: set[str]) -> dict[int, list[str]]:
    members: dict[int, list[str]] = {}
    if "chat_handle_join" in tables:
        for chat_id, handle in connection.execute(
                "SELECT j.chat_id, h.id FROM chat_handle_join j JOIN handle h ON h.ROWID = j.handle_id "
                "ORDER BY j.chat_id, h.ROWID"):
            members.setdefault(chat_id, []).append(handle)
    return members


def _chat_names(connection: sqlite3.Connection, members: dict[int, list[str]]) -> dict[int, str]:
    """A chat's name: its display name (a named group), else its members, else its identifier."""
    columns = _columns(connection, "chat")
    display = "display_name" if "display_name" in columns else "NULL"
    identifier = "chat_identifier" if "chat_identifier" in columns else "NULL"
    names, labels = {}, {}
    for rowid, name, ident in connection.execute(f"SELECT ROWID, {display}, {identifier} FROM chat"):
        labels[rowid] = ", ".join(members.get(rowid, [])) or ident or f"chat {rowid}"
        names[rowid] = name or labels[rowid]
    # Chats of one name are one conversation where their members are the same (a person's SMS
    # and iMessage chats, a group moved between them, whose SMS copy may list them in another
    # order); groups of one name with other members (a second "Family") are told apart by their
    # members (or identifier).
    people = {rowid: ", ".join(sorted(members.get(rowid, []))) or labels[rowid] for rowid in names}
    kinds: dict[str, set[str]] = {}
    for rowid, name in names.items():
        kinds.setdefault(name, set()).add(people[rowid])
    return {rowid: f"{name} ({people[rowid]})" if len(kinds[name]) > 1 and name != labels[rowid] else name
            for rowid, name in names.items()}


def _attachments(connection: sqlite3.Connection, tables: set[str]) -> dict[int, list[str]]:
    """Attachment names by message (named, never opened)."""
    found: dict[int, list[str]] = {}
    if not {"attachment", "message_attachment_join"} <= tables:
        return found
    columns = _columns(connection, "attachment")
    name = "COALESCE(a.transfer_name, a.filename)" if "transfer_name" in columns else "a.filename"
    for message_id, label in connection.execute(
            f"SELECT j.message_id, {name} FROM message_attachment_join j "
            "JOIN attachment a ON a.ROWID = j.attachment_id ORDER BY j.message_id, a.ROWID"):
        if label:
            found.setdefault(message_id, []).append(label.rsplit("/", 1)[-1])
    return found


def _only_member(members: list[str] | None) -> str | None:
    return members[0] if members and len(members) == 1 else None


def _text(text: Any, body: Any, attachments: list[str]) -> str:
    """The message's words: ``text``, else the string inside ``attributedBody``; attachments named."""
    if isinstance(text, str) and not attachments:  # the common case, kept fast
        plain = text.strip()
        if plain and "\ufffc" not in plain and "\ufffd" not in plain:
            return plain if "\n" not in plain else clean_text(plain)
    words = text if isinstance(text, str) and text.strip() else None
    if words is None and isinstance(body, bytes):
        words = attributed_body_text(body)
    words = clean_text("\n".join(p.strip() for p in PLACEHOLDERS.split(words or "") if p.strip()))
    named = "\n".join(f"[attachment: {name}]" for name in attachments)
    return "\n".join(p for p in (words, named) if p)


def attributed_body_text(blob: bytes) -> str | None:
    """The string of a typedstream (NSArchiver) ``attributedBody``: after the ``NSString``
    class marker comes ``+``, a length (one byte; 0x81 and 2 bytes little-endian; 0x82 and
    4 bytes) and that many bytes of UTF-8. None when the blob holds no string."""
    marker = blob.find(b"NSString")
    if marker < 0:
        return None
    plus = blob.find(b"+", marker + 8, marker + 16)
    if plus < 0 or plus + 1 >= len(blob):
        return None
    at, size = plus + 1, blob[plus + 1]
    if size == 0x81:
        length, at = int.from_bytes(blob[at + 1:at + 3], "little"), at + 3
    elif size == 0x82:
        length, at = int.from_bytes(blob[at + 1:at + 5], "little"), at + 5
    else:
        length, at = size, at + 1
    if at + length > len(blob):  # a length past the blob: read to the object's end marker
        end = blob.find(b"\x86\x84", at)
        length = (end if end >= 0 else len(blob)) - at
    return blob[at:at + length].decode("utf-8", errors="replace")


def apple_date(value: Any) -> datetime | None:
    """A UTC datetime from Messages' seconds or nanoseconds since 2001; None for 0 or NULL."""
    if not isinstance(value, (int, float)) or value == 0:
        return None
    if abs(value) > NANOSECOND_DATES:
        return APPLE_EPOCH + timedelta(microseconds=int(value) // 1000)
    return APPLE_EPOCH + timedelta(seconds=value)
