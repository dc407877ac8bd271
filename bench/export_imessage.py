#!/usr/bin/env python3
"""iMessage export benchmark: a generated macOS Messages chat.db loaded as a collection.

    python bench/export_imessage.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)

The database has the real schema (copied from the chat.db fixture, macOS 14): 1:1 chats
over iMessage and SMS, named and unnamed group chats, messages whose words are only in
``attributedBody`` (typedstream, as recent macOS writes them), tapbacks, attachments,
multi-line messages and nanosecond dates in bursts with pauses. Loading is timed in a
fresh process per run (median of 3), with its peak RSS, and printed as
``format, messages, records, seconds, peak RSS`` (then CPU seconds and warnings).
"""

from __future__ import annotations

import random
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "exports" / "imessage" / "macos-ts_synthetic_chat.db"
WORDS = """ok sure see you at the station tomorrow morning can you bring the charger I am running late
dinner tonight sounds great what time works for everyone the train is delayed again happy birthday
did you see the game last night call me when you land love you too lol haha thanks so much no worries
meeting moved to three the kids are asleep pick up milk on the way home traffic is terrible here""".split()
HANDLES = [f"+1555{n:07d}" for n in range(40)] + [f"friend{n}@example.com" for n in range(20)]
SECOND = 10**9  # dates are nanoseconds since 2001-01-01 (macOS 10.13 and later)


def _typedstream(text: str) -> bytes:
    """An attributedBody blob holding ``text``, shaped as macOS writes them."""
    data = text.encode()
    size = bytes([len(data)]) if len(data) < 0x80 else b"\x81" + len(data).to_bytes(2, "little")
    return (b"\x04\x0bstreamtyped\x81\xe8\x03\x84\x01@\x84\x84\x84\x12NSAttributedString\x00\x84\x84\x08"
            b"NSObject\x00\x85\x92\x84\x84\x84\x08NSString\x01\x94\x84\x01+" + size + data
            + b"\x86\x84\x02iI\x01\x06\x92\x84\x84\x84\x0cNSDictionary\x00\x94\x84\x01i\x01\x86\x86")


def _schema() -> list[str]:
    with sqlite3.connect(f"{FIXTURE.as_uri()}?mode=ro", uri=True) as db:
        return [sql for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_%' AND sql IS NOT NULL")]


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write ``folder/chat.db`` holding ``messages`` messages."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "chat.db"
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    for sql in _schema():
        db.execute(sql)
    db.executemany("INSERT INTO handle (ROWID, id, service) VALUES (?, ?, ?)",
                   [(i + 1, h, "SMS" if i % 5 == 0 else "iMessage") for i, h in enumerate(HANDLES)])
    chats: list[tuple[int, list[int]]] = []
    for chat_id in range(1, 81):
        if chat_id <= 60:  # 1:1
            members = [chat_id % len(HANDLES) + 1]
            ident, name = HANDLES[members[0] - 1], None
        else:  # groups, half of them named
            members = rng.sample(range(1, len(HANDLES) + 1), rng.randint(3, 7))
            ident, name = f"chat{chat_id:09d}", (f"Group {chat_id}" if chat_id % 2 else None)
        db.execute("INSERT INTO chat (ROWID, guid, style, chat_identifier, service_name, display_name) "
                   "VALUES (?, ?, ?, ?, 'iMessage', ?)", (chat_id, f"iMessage;-;{ident}", 45, ident, name))
        db.executemany("INSERT INTO chat_handle_join VALUES (?, ?)", [(chat_id, m) for m in members])
        chats.append((chat_id, members))
    when = 700_000_000 * SECOND
    rows, joins, attachments = [], [], []
    chat_id, members = chats[0]
    for rowid in range(1, messages + 1):
        if rng.random() < 0.15:  # conversations come in bursts: mostly the same chat again
            chat_id, members = rng.choice(chats)
            when += rng.randint(600, 90_000) * SECOND
        else:
            when += rng.randint(5, 240) * SECOND
        from_me = rng.random() < 0.45
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 30)))
        if rng.random() < 0.08:
            text += "\n" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        body, associated = None, 0
        if rng.random() < 0.3:  # recent macOS: the words only in attributedBody
            body, text = _typedstream(text), None
        elif rng.random() < 0.04:
            text, associated = "Loved “" + text[:40] + "”", 2000
        rows.append((rowid, f"guid-{rowid:08d}", text, body, 0 if from_me else rng.choice(members), int(from_me),
                     when, associated))
        joins.append((chat_id, rowid, when))
        if rng.random() < 0.03:
            attachments.append((rowid, f"IMG_{rowid:05d}.HEIC"))
    db.executemany("INSERT INTO message (ROWID, guid, text, attributedBody, handle_id, is_from_me, date, "
                   "associated_message_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.executemany("INSERT INTO chat_message_join VALUES (?, ?, ?)", joins)
    db.executemany("INSERT INTO attachment (ROWID, guid, filename, transfer_name, original_guid) "
                   "VALUES (?, ?, ?, ?, ?)",
                   [(i + 1, f"att-{i}", f"~/Library/Messages/Attachments/{n}", n, f"att-{i}")
                    for i, (_, n) in enumerate(attachments)])
    db.executemany("INSERT INTO message_attachment_join VALUES (?, ?)",
                   [(m, i + 1) for i, (m, _) in enumerate(attachments)])
    db.commit()
    db.close()
    return path


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "imessage", *sys.argv[1:]])
