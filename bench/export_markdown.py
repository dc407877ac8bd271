#!/usr/bin/env python3
"""Markdown/Obsidian reader benchmark: load a generated vault of N heading sections.

    python bench/export_markdown.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)
"""

from __future__ import annotations

import random
import sys
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("the of and to in is was for on that with as it at by from this garden kitchen meeting budget project "
         "plan travel train hotel flight dinner recipe book note idea week month morning evening team client "
         "report invoice payment boiler window paint coffee bread garlic onion tomato oven bake review launch "
         "deadline release server backup laptop ticket museum beach mountain river forest library").split()
FOLDERS = ["Daily", "Notes", "Projects/Garden", "Projects/Work", "References", "Clippings"]
TAGS = ["work", "home", "idea", "garden", "reading", "travel/japan", "cooking", "todo"]


def _paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(1, 5)):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words)), f"[[{rng.choice(WORDS).capitalize()} notes]]")
        if rng.random() < 0.1:
            words.append(f"#{rng.choice(TAGS)}")
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def _section(rng: random.Random, level: int) -> list[str]:
    lines = [f"{'#' * level} {rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}", ""]
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.15:
            lines += [f"- [ ] {_paragraph(rng)[:80]}" for _ in range(rng.randint(2, 5))]
        elif kind < 0.22:
            lines += ["```python", "# a comment, not a heading", "print('[[not a link]]')", "```"]
        else:
            lines.append(_paragraph(rng))
        lines.append("")
    return lines


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write a vault of notes holding ``messages`` sections in all (1-8 a note, H1-H3),
    with front matter, wikilinks, tags and code blocks; plus the .obsidian folder."""
    rng = random.Random(seed)
    (folder / ".obsidian").mkdir(parents=True, exist_ok=True)
    (folder / ".obsidian" / "app.json").write_text("{}")
    written, number, day = 0, 0, date(2022, 1, 1)
    while written < messages:
        count = min(rng.randint(1, 8), messages - written)
        day += timedelta(days=rng.randint(0, 2))
        tags = ", ".join(rng.sample(TAGS, rng.randint(0, 3)))
        lines = ["---", f"date: {day.isoformat()}", f"tags: [{tags}]", f"rating: {rng.randint(1, 5)}",
                 "people:", f'  - "[[{rng.choice(["Ana", "Bo", "Cy"])}]]"', "---", ""]
        for index in range(count):
            lines += _section(rng, 1 if index == 0 else rng.choice((2, 2, 3)))
            if rng.random() < 0.2:
                lines += [f"#### Detail {index}", _paragraph(rng), ""]
        path = folder / rng.choice(FOLDERS) / f"{day.isoformat()} {rng.choice(WORDS)} {number}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
        written += count
        number += 1
    return folder


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "markdown", *sys.argv[1:]])
