#!/usr/bin/env python3
"""Slack export benchmark: write a realistic workspace export, time reading and windowing it.

    python bench/export_slack.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)

``generate(folder, messages, seed)`` writes what Slack's "Export data" writes (the current
layout): ``users.json``, ``channels.json``, ``groups.json``, ``dms.json``, ``mpims.json``
and one folder per conversation of pretty-printed per-day files. Messages carry the
fields real ones do (``client_msg_id``, ``user_profile``, ``blocks``, ``team``), and the
mix a workspace has: mentions, channel links, links with labels, ``&amp;``, multi-line
messages and code, threads with replies on later days, edits, uploaded files, bot cards,
joins. ``main()`` generates into PATH (or a temporary folder), times
``vecbook.exports.load_export`` (median of 3) and prints
``format, messages, records, seconds, peak RSS`` (and the CPU seconds, which a busy
shared machine does not inflate the way it does wall-clock seconds).
"""

from __future__ import annotations

import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TEAM = "T024BE7LD"
FIRST_NAMES = ["Ana", "Ben", "Chiara", "Dev", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo", "Kofi", "Lena",
               "Mateo", "Nour", "Oskar", "Priya", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Viktor", "Wen", "Yara"]
LAST_NAMES = ["Lima", "Berg", "Rossi", "Patel", "Novak", "Haddad", "Meyer", "Sato", "Kowalski", "Okafor"]
CHANNELS = ["general", "random", "engineering", "deploys", "design", "support", "product", "hiring",
            "incidents", "data-team"]
WORDS = """the a to and of in is for on that it with we this be can I you have are not will do at as
deploy release build test review merge branch staging production rollback migration schema index query
cache latency dashboard alert incident postmortem customer ticket invoice roadmap sprint standup retro
design mockup figma copy onboarding signup checkout search filter export import backup laptop vpn
meeting agenda notes budget hiring interview offer candidate friday monday tomorrow today later soon
please thanks sounds good agreed looks fine blocked waiting approved shipped fixed broken flaky slow
""".split()


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write a Slack export of ``messages`` messages under ``folder``; returns ``folder``."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    users = _users(rng)
    ids = [u["id"] for u in users if not u["is_bot"]]
    channels = [_channel(rng, i, name, ids) for i, name in enumerate(CHANNELS)]
    dms = [{"id": f"D0{i:07d}", "created": 1_600_000_000, "members": rng.sample(ids, 2)} for i in range(6)]
    mpims = [_mpim(rng, i, users) for i in range(3)]
    for name, value in (("users", users), ("channels", channels), ("groups", []), ("dms", dms), ("mpims", mpims)):
        _write(folder / f"{name}.json", value)
    folders = [c["name"] for c in channels] + [d["id"] for d in dms] + [m["name"] for m in mpims]
    weights = [8, 6, 10, 5, 4, 6, 5, 2, 3, 4] + [2] * len(dms) + [1] * len(mpims)
    counts = _split(rng, messages, weights)
    by_id = {u["id"]: u for u in users}
    channel_ids = {c["name"]: c["id"] for c in channels}
    members = [c["members"] for c in channels] + [d["members"] for d in dms] + [m["members"] for m in mpims]
    for name, count, people in zip(folders, counts, members):
        _write_conversation(rng, folder / name, count, people, by_id, channel_ids, bots=name in CHANNELS)
    return folder


def _users(rng: random.Random) -> list[dict[str, Any]]:
    users = []
    for i, first in enumerate(FIRST_NAMES):
        last = LAST_NAMES[i % len(LAST_NAMES)]
        display = first if i % 3 else ""  # a third leave display_name empty, as many do
        users.append({"id": f"U0{i:08d}", "team_id": TEAM, "name": f"{first.lower()}.{last.lower()}",
                      "deleted": False, "real_name": f"{first} {last}", "tz": "Europe/Berlin", "is_bot": False,
                      "profile": {"title": rng.choice(["Engineer", "Designer", "PM", ""]),
                                  "real_name": f"{first} {last}", "display_name": display, "image_72": f"https://avatars.example/{i}.png",
                                  "team": TEAM}})
    users.append({"id": "U0BOT00001", "team_id": TEAM, "name": "deploybot", "deleted": False,
                  "real_name": "Deploy Bot", "is_bot": True, "profile": {"real_name": "Deploy Bot", "display_name": "", "bot_id": "B0DEPLOY1"}})
    return users


def _channel(rng: random.Random, i: int, name: str, ids: list[str]) -> dict[str, Any]:
    return {"id": f"C0{i:08d}", "name": name, "created": 1_577_836_800 + i * 86_400, "creator": ids[0],
            "is_archived": False, "is_general": name == "general",
            "members": rng.sample(ids, rng.randint(5, len(ids))),
            "topic": {"value": f"All things {name}", "creator": ids[0], "last_set": 0},
            "purpose": {"value": f"Talk about {name}", "creator": ids[0], "last_set": 0}}


def _mpim(rng: random.Random, i: int, users: list[dict[str, Any]]) -> dict[str, Any]:
    members = rng.sample([u for u in users if not u["is_bot"]], 3)
    return {"id": f"G0{i:07d}", "name": "mpdm-" + "--".join(u["name"] for u in members) + "-1",
            "created": 1_600_000_000, "members": [u["id"] for u in members]}


def _split(rng: random.Random, total: int, weights: list[int]) -> list[int]:
    counts = [total * w // sum(weights) for w in weights]
    counts[0] += total - sum(counts)
    return counts


def _write_conversation(rng: random.Random, folder: Path, count: int, ids: list[str], by_id: dict[str, Any],
                        channel_ids: dict[str, str], bots: bool) -> None:
    """``count`` messages over consecutive working days, 20-200 a day, some threads spilling over."""
    day = datetime(2023, 1, 2, 8, 0, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 30))
    left = count
    pending: list[dict[str, Any]] = []  # replies still to be posted, on a later day
    while left > 0:
        today = min(left, rng.randint(20, 200))
        left -= today
        when = day + timedelta(minutes=rng.randint(0, 90))
        items, replies_now = [], [r for r in pending if r["_day"] <= day]
        pending = [r for r in pending if r["_day"] > day]
        for _ in range(today):
            if replies_now and rng.random() < 0.5:
                item = replies_now.pop(0)
            else:
                item = _message(rng, ids, by_id, channel_ids, when, notices=bots)
                # a thread: its replies come minutes or a day later
                if "client_msg_id" in item and rng.random() < 0.08:
                    replies = _thread(rng, item, ids, by_id, channel_ids, day)
                    replies_now += [r for r in replies if r["_day"] == day]
                    pending += [r for r in replies if r["_day"] > day]
            item.pop("_day", None)
            item["ts"] = f"{when.timestamp():.0f}.{rng.randint(0, 999_999):06d}"
            if item.get("_parent") is not None:
                parent = item.pop("_parent")
                item["thread_ts"] = parent["ts"]
                item["parent_user_id"] = parent["user"]
            items.append(item)
            when += timedelta(seconds=rng.choice([20, 45, 90, 240, 600, 3_000]))
        pending += replies_now
        for item in items:
            if item.get("reply_count"):
                item["thread_ts"] = item["ts"]
        _write(folder / f"{day:%Y-%m-%d}.json", items)
        day += timedelta(days=1 if day.weekday() < 4 else 3)


def _thread(rng: random.Random, parent: dict[str, Any], ids: list[str], by_id: dict[str, Any],
            channel_ids: dict[str, str], day: datetime) -> list[dict[str, Any]]:
    replies = []
    for _ in range(rng.randint(1, 6)):
        reply = _message(rng, ids, by_id, channel_ids, day, notices=False)
        reply["_parent"] = parent
        reply["_day"] = day + timedelta(days=rng.choice([0, 0, 0, 1]))
        replies.append(reply)
    parent["reply_count"] = len(replies)
    parent["reply_users"] = sorted({r["user"] for r in replies})
    return replies


def _message(rng: random.Random, ids: list[str], by_id: dict[str, Any], channel_ids: dict[str, str],
             when: datetime, notices: bool = True) -> dict[str, Any]:
    roll = rng.random() if notices else 1.0
    if roll < 0.03:
        return {"type": "message", "subtype": "bot_message", "bot_id": "B0DEPLOY1", "username": "deploybot",
                "text": "", "attachments": [{"fallback": "deploy", "color": "good", "pretext": "Deploy finished",
                                 "title": f"api v{rng.randint(1, 9)}.{rng.randint(0, 40)}", "text": _sentence(rng)}]}
    user = rng.choice(ids)
    if roll < 0.04:
        return {"type": "message", "subtype": "channel_join", "user": user,
                "text": f"<@{user}> has joined the channel"}
    text = _text(rng, ids, channel_ids)
    item: dict[str, Any] = {"client_msg_id": str(uuid.UUID(int=rng.getrandbits(128))), "type": "message",
                            "text": text, "user": user, "team": TEAM, "user_team": TEAM, "source_team": TEAM,
                            "user_profile": {"real_name": by_id[user]["real_name"],
                                             "display_name": by_id[user]["profile"]["display_name"],
                                             "name": by_id[user]["name"], "team": TEAM,
                                             "image_72": "https://a/x.png"},
                            "blocks": [{"type": "rich_text", "block_id": f"b{rng.getrandbits(20):05x}", "elements": [
                                {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}]}
    if rng.random() < 0.05:
        item["edited"] = {"user": user, "ts": f"{when.timestamp() + 60:.0f}.000000"}
    if rng.random() < 0.04:
        name = rng.choice(["q3-plan.pdf", "mockup.png", "schema.sql", "notes.txt"])
        item["files"] = [{"id": f"F0{rng.getrandbits(32):08X}", "name": name, "title": name,
                          "mimetype": "application/pdf", "size": rng.randint(1_000, 900_000), "url_private": f"https://files.slack.com/{name}"}]
    return item


def _text(rng: random.Random, ids: list[str], channel_ids: dict[str, str]) -> str:
    parts = [_sentence(rng) for _ in range(max(1, int(rng.lognormvariate(0.3, 0.7))))]
    roll = rng.random()
    if roll < 0.15:
        parts.insert(0, f"<@{rng.choice(ids)}>")
    elif roll < 0.2:
        name = rng.choice(list(channel_ids))
        parts.append(f"see <#{channel_ids[name]}|{name}>")
    elif roll < 0.27:
        parts.append(f"<https://docs.example.com/{rng.choice(WORDS)}|the {rng.choice(WORDS)} doc>")
    elif roll < 0.3:
        parts.append("R&amp;D &lt;3")
    if rng.random() < 0.1:
        return " ".join(parts) + "\n```\n" + "\n".join(_sentence(rng) for _ in range(3)) + "\n```"
    return ("\n" if rng.random() < 0.2 else " ").join(parts)


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 16))).capitalize()


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "slack", *sys.argv[1:]])
