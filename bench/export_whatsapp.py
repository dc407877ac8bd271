#!/usr/bin/env python3
"""Time the WhatsApp reader on a generated export (issue 12's target: 200,000 messages parsed
and windowed in at most 10 s).

Usage::

    python bench/export_whatsapp.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)

The export is a folder of chat files as phones write them, one a chat, the messages split
between them: an Android en-GB chat (``31/12/2023, 13:05 - Ana: ...``), an iOS en-US chat
(``[12/31/23, 1:05:09\u202fPM] Ana: ...`` with U+200E before attachment lines), a German
Android chat (``31.12.23, 13:05 - ...``) and an iOS chat zipped with a photo
(``WhatsApp Chat - X.zip`` holding ``_chat.txt``). Messages come in bursts (seconds to
minutes apart, now and then hours or days), about 1 in 12 runs over several lines, 1 in 40
is an attachment, and each chat opens with the app's system lines.
"""

from __future__ import annotations

import random
import sys
import zipfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


WORDS = ("the a to and we you it is at on for in so ok yes no maybe tonight tomorrow dinner train "
         "station meeting photo call later running late coffee lunch weekend beach keys flat rent "
         "birthday present cake movie ticket bus airport flight hotel doctor school homework match "
         "score great thanks sorry love haha lol sure fine done send address time").split()
NAMES = ("Ana", "Bo Li", "Carla", "+44 7700 900123", "Dmitri", "Eve", "Farid")


def _android_gb(when: datetime) -> str:
    return f"{when:%d/%m/%Y, %H:%M} - "


def _ios_us(when: datetime) -> str:
    hour = when.hour % 12 or 12
    return f"[{when.month}/{when.day}/{when:%y}, {hour}:{when:%M:%S}\u202f{'AM' if when.hour < 12 else 'PM'}] "


def _android_de(when: datetime) -> str:
    return f"{when:%d.%m.%y, %H:%M} - "


def _ios_gb(when: datetime) -> str:
    return f"[{when:%d/%m/%Y, %H:%M:%S}] "


# (file name, header writer, iOS marks) for each chat
CHATS: tuple[tuple[str, Callable[[datetime], str], bool], ...] = (
    ("WhatsApp Chat with Ana.txt", _android_gb, False),
    ("WhatsApp Chat with Bo Li.txt", _ios_us, True),
    ("WhatsApp Chat mit Carla.txt", _android_de, False),
    ("WhatsApp Chat - Family.zip", _ios_gb, True),
)


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write a WhatsApp export of ``messages`` messages into ``folder``; returns the folder."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    share = [messages // len(CHATS)] * len(CHATS)
    share[0] += messages - sum(share)
    for (name, header, ios), count in zip(CHATS, share):
        text = _chat(rng, count, header, ios)
        if name.endswith(".zip"):
            with zipfile.ZipFile(folder / name, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("_chat.txt", text)
                archive.writestr("00000012-PHOTO-2021-03-04-10-11-12.jpg", b"\xff\xd8\xff\xe0" + bytes(2000))
        else:
            (folder / name).write_text(text, encoding="utf-8")
    return folder


def _chat(rng: random.Random, count: int, header: Callable[[datetime], str], ios: bool) -> str:
    mark = "\u200e" if ios else ""
    when = datetime(2019, 1, 1, 8, 0) + timedelta(minutes=rng.randrange(60 * 24 * 30))
    people = rng.sample(NAMES, 4)
    lines = [f"{header(when)}{'Family: ' if ios else ''}{mark}Messages and calls are end-to-end encrypted. "
             "No one outside of this chat, not even WhatsApp, can read or listen to them.",
             f"{mark}{header(when)}{people[0]} added {people[1]}" if not ios else
             f"{mark}{header(when)}Family: {mark}{people[0]} added {people[1]}"]
    for _ in range(count):
        when += timedelta(seconds=_pause(rng))
        author = rng.choice(people)
        roll = rng.random()
        if roll < 1 / 40:
            said = (f"{mark}<attached: {rng.randrange(10**8):08d}-PHOTO-{when:%Y-%m-%d}.jpg>" if ios
                    else "<Media omitted>")
            lines.append(f"{mark}{header(when)}{author}: {said}")
            continue
        said = _sentence(rng)
        if roll < 1 / 40 + 1 / 12:
            said += "".join("\n" + _sentence(rng) for _ in range(rng.randint(1, 4)))
        lines.append(f"{header(when)}{author}: {said}")
    return "\n".join(lines) + "\n"


def _pause(rng: random.Random) -> float:
    """Seconds to the next message: a conversation's rhythm, then a pause of hours or days."""
    roll = rng.random()
    if roll < 0.85:
        return rng.expovariate(1 / 40)
    if roll < 0.97:
        return rng.expovariate(1 / 600)
    return rng.expovariate(1 / 36000)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(max(1, int(rng.expovariate(1 / 9))))]
    return " ".join(words).capitalize() + rng.choice(("", "", ".", "?", "!", " 😂", " 👍"))


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "whatsapp", *sys.argv[1:]])
