#!/usr/bin/env python3
"""Write the chat benchmark's corpus: chatterbot-corpus's English dialogues as one WhatsApp
chat export (Android, en-GB), the text ``bench/chat_quality.py`` reads.

Usage::

    pip download --no-deps chatterbot-corpus==1.3.3   # the wheel; nothing is installed
    python bench/chat_corpus.py chatterbot_corpus-1.3.3-py2.py3-none-any.whl [OUT] [--pause MINUTES]

Source: the PyPI package chatterbot-corpus 1.3.3 (Gunther Cox, BSD licence; repository
gunthercox/chatterbot-corpus), ``chatterbot_corpus/data/english/*.yml``: 21 topic files of
dialogues, each a list of turns (person, bot, person, ...). Files are read in name order;
a dialogue repeated word for word (tech_support.yml repeats ten dialogues ~100 times) is
written once. The first speaker of each dialogue is ``Sam``, the second ``Bot``.

Times are made up, as a phone would write them: turns of a dialogue one minute apart, the
next dialogue three hours later, so VecBook's 30-minute gap ends a window where a dialogue
ends. ``--pause 5`` packs the dialogues five minutes apart instead: windows then run on
across dialogues until ~200 words, several unrelated topics in one window, as in a busy real
chat (a harder case for windows). Line numbers do not depend on the pause, so the same judged
questions hold for both. A turn over several lines continues on the following lines of the file, as WhatsApp
writes it. Nothing else is changed: the text of each turn is the corpus's, stripped.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import zipfile
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / "data" / "chatterbot_english_whatsapp.txt"
SPEAKERS = ("Sam", "Bot")
# A day past 12 on the first line proves the day-first order to the reader at once.
START = datetime(2024, 1, 15, 9, 0)
TURN = timedelta(minutes=1)
# Longer than the 30-minute default gap, so each dialogue is its own run of windows.
BETWEEN_MINUTES = 180
ENGLISH = "chatterbot_corpus/data/english/"


def dialogues(wheel: Path) -> list[tuple[str, list[str]]]:
    """(topic file, turns) for each distinct English dialogue of the wheel, in file order."""
    seen: set[tuple[str, ...]] = set()
    out = []
    with zipfile.ZipFile(wheel) as archive:
        names = sorted(n for n in archive.namelist() if n.startswith(ENGLISH) and n.endswith(".yml"))
        for name in names:
            data = yaml.safe_load(archive.read(name).decode("utf-8"))
            for turns in data.get("conversations") or []:
                turns = [str(t).strip() for t in turns if str(t).strip()]
                if len(turns) < 2 or tuple(turns) in seen:
                    continue
                seen.add(tuple(turns))
                out.append((PurePosixPath(name).name, turns))
    return out


def whatsapp_text(found: list[tuple[str, list[str]]], between: timedelta = timedelta(minutes=BETWEEN_MINUTES)) -> str:
    """The dialogues as an Android WhatsApp export: ``15/01/2024, 09:00 - Sam: text``."""
    lines = []
    when = START
    for _, turns in found:
        for number, turn in enumerate(turns):
            stamp = when.strftime("%d/%m/%Y, %H:%M")
            lines.append(f"{stamp} - {SPEAKERS[number % 2]}: {turn}")
            when += TURN
        when += between
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="chatterbot_corpus-1.3.3-py2.py3-none-any.whl")
    parser.add_argument("out", type=Path, nargs="?", default=DEFAULT_OUT)
    parser.add_argument("--pause", type=float, default=BETWEEN_MINUTES,
                        help=f"minutes between the last turn of a dialogue and the next (default {BETWEEN_MINUTES})")
    args = parser.parse_args(argv)
    found = dialogues(args.wheel)
    text = whatsapp_text(found, timedelta(minutes=args.pause))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(args.wheel.read_bytes()).hexdigest()
    turns = sum(len(t) for _, t in found)
    print(f"{args.out}: {len(found)} dialogues, {turns} messages, {text.count(chr(10))} lines "
          f"(wheel sha256 {digest})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
