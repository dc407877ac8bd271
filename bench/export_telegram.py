#!/usr/bin/env python3
"""Telegram export benchmark: write a realistic Telegram Desktop export, time reading it.

    python bench/export_telegram.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)

``generate(folder, messages, seed)`` writes what Telegram Desktop's "Export chat history"
writes for a few chats (one ``ChatExport_<date>/result.json`` each: a DM, a small group, a
busy supergroup), or with ``account=True`` one whole-account ``result.json`` holding every
chat under ``chats.list``. Messages have the fields real ones do (``date`` and
``date_unixtime``, ``from``/``from_id``, ``text`` as a string or a list of entities beside
``text_entities``, ``reply_to_message_id``, ``edited``, photos, files, stickers, service
messages). ``main()`` generates into PATH (or a temporary folder), times
``vecbook.exports.load_export`` (median of 3) and prints
``format, messages, records, seconds, peak RSS``.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from export_slack import WORDS, _sentence  # noqa: E402 - the same vocabulary and sentences

PEOPLE = ["Ana Lima", "Ben Berg", "Chiara Rossi", "Dev Patel", "Eli Novak", "Fatima Haddad", "Gus Meyer",
          "Hana Sato", "Ivan Kowalski", "Jo Okafor", "Kofi Mensah", "Lena Vogel"]
# (name, type, share of the messages, members)
CHATS = [("Ben Berg", "personal_chat", 3, 2), ("Family", "private_group", 2, 5),
         ("Climbing club", "private_supergroup", 5, 12), ("Lena Vogel", "personal_chat", 1, 2)]
NOT_INCLUDED = "(File not included. Change data exporting settings to download.)"


def generate(folder: Path, messages: int, seed: int = 0, account: bool = False) -> Path:
    """Write a Telegram export of ``messages`` messages under ``folder``; returns ``folder``."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    shares = [share for _, _, share, _ in CHATS]
    counts = [messages * s // sum(shares) for s in shares]
    counts[-1] += messages - sum(counts)
    chats = [_chat(rng, i, name, kind, count, members)
             for i, ((name, kind, _, members), count) in enumerate(zip(CHATS, counts))]
    if account:
        _write(folder / "DataExport_2024-03-01" / "result.json", {
            "about": "Here is the data you requested. Remember: Telegram is ad free, it doesn't sell your data.",
            "personal_information": {"user_id": 100, "first_name": "Ana", "last_name": "Lima", "phone_number": "+1"},
            "chats": {"about": "This page lists all chats from this export.", "list": chats},
            "left_chats": {"about": "This page lists all supergroups and channels you've left.", "list": []}})
    else:
        for i, chat in enumerate(chats):
            _write(folder / f"ChatExport_2024-03-0{i + 1}" / "result.json", chat)
    return folder


def _chat(rng: random.Random, index: int, name: str, kind: str, count: int, members: int) -> dict[str, Any]:
    people = ["Ana Lima"] + ([name] if kind == "personal_chat" else rng.sample(PEOPLE[1:], members - 1))
    when = datetime(2021, 1, 4, 9, 0) + timedelta(days=rng.randint(0, 60))
    items: list[dict[str, Any]] = []
    for number in range(1, count + 1):
        when += timedelta(seconds=rng.choice([15, 40, 90, 300, 1_200, 4_000, 30_000]))
        author = rng.choice(people)
        item: dict[str, Any] = {"id": number, "type": "message", "date": when.isoformat(),
                                "date_unixtime": str(int(when.timestamp())), "from": author,
                                "from_id": f"user{1000 + PEOPLE.index(author) if author in PEOPLE else 999}"}
        roll = rng.random()
        if roll < 0.02:
            item.update(type="service", actor=author, actor_id=item.pop("from_id"), action="pin_message",
                        message_id=max(1, number - 5))
            item.pop("from")
            item["text"], item["text_entities"] = "", []
        elif roll < 0.06:
            item.update(photo="photos/photo_%d@%s.jpg" % (number, when.strftime("%d-%m-%Y_%H-%M-%S")),
                        width=1280, height=960)
            _text(rng, item, caption=True)
        elif roll < 0.08:
            item.update(file=NOT_INCLUDED, file_name=f"{rng.choice(WORDS)}.pdf", mime_type="application/pdf")
            _text(rng, item, caption=True)
        elif roll < 0.10:
            item.update(file="stickers/sticker.webp", media_type="sticker", sticker_emoji=rng.choice("👍😂🎉"))
            item["text"], item["text_entities"] = "", []
        else:
            _text(rng, item)
        if number > 3 and rng.random() < 0.15:
            item["reply_to_message_id"] = number - rng.randint(1, 3)
        if rng.random() < 0.03:
            edited = when + timedelta(minutes=2)
            item.update(edited=edited.isoformat(), edited_unixtime=str(int(edited.timestamp())))
        items.append(item)
    return {"name": name, "type": kind, "id": 4_000_000 + index, "messages": items}


def _text(rng: random.Random, item: dict[str, Any], caption: bool = False) -> None:
    """A plain string most of the time; a list of entities when there is a link or formatting."""
    if caption and rng.random() < 0.6:
        item["text"], item["text_entities"] = "", []
        return
    sentences = [_sentence(rng) for _ in range(max(1, int(rng.lognormvariate(0.2, 0.7))))]
    plain = ("\n" if rng.random() < 0.2 else " ").join(sentences)
    roll = rng.random()
    if roll < 0.12:
        entities = [{"type": "plain", "text": plain + " "},
                    rng.choice([{"type": "link", "text": "https://example.org/" + rng.choice(WORDS)},
                                {"type": "bold", "text": rng.choice(WORDS)},
                                {"type": "mention", "text": "@" + rng.choice(WORDS)},
                                {"type": "text_link", "text": "this", "href": "https://example.org/t"}])]
        item["text"] = [e["text"] if e["type"] == "plain" else e for e in entities]
        item["text_entities"] = entities
    else:
        item["text"], item["text_entities"] = plain, [{"type": "plain", "text": plain}]



def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "telegram", *sys.argv[1:]])
