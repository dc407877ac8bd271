"""Obsidian Excalidraw drawings (``Name.excalidraw.md``, front matter ``excalidraw-plugin``): a
Markdown note whose words are its text elements; the rest is the plugin's.

The plugin writes a banner (``==⚠ Switch to EXCALIDRAW VIEW ...==``) at the top of every drawing,
then ``# Excalidraw Data`` holding ``## Text Elements`` (each element's text, ended by its block id,
`` ^aB3dE9fG``), ``## Element Links``, ``## Embedded Files`` and ``## Drawing``: the scene as JSON or
as compressed base64, often hundreds of kilobytes. Read as a note, every drawing was a hit for the
banner's words and its text elements came with kilobytes of base64 in their record. What the user
writes under the banner, above the data (the plugin's "back of the card" notes, the data often
hidden below a ``%%`` line), is a note of its own, read as one.
"""

from __future__ import annotations

import re
from typing import Any

FRONT_KEY = "excalidraw-plugin"
_TEXT_ELEMENTS = re.compile(r"^#{1,2} Text Elements[ \t]*$")
# The end of the text elements: the next heading, or the comment block the drawing sits in.
_SECTION_END = re.compile(r"^(?:#{1,6} |%%)")
_BLOCK_ID = re.compile(r"[ \t]+\^[A-Za-z0-9_-]{6,}[ \t]*$")
# Where the plugin's part starts (older drawings have no "Excalidraw Data" heading), and its banner.
_DATA_START = re.compile(r"^(?:# Excalidraw Data|#{1,2} Text Elements|#{1,2} Drawing)[ \t]*$")
_BANNER = re.compile(r"^==⚠.*Switch to EXCALIDRAW VIEW", re.I)


def is_drawing(front: dict[str, Any]) -> bool:
    """Whether a note's front matter says it is an Excalidraw drawing."""
    return FRONT_KEY in front


def text_lines(lines: list[str], body_start: int) -> tuple[list[str], int]:
    """A drawing's ``lines`` with the notes on its back kept, its banner blank, and of the
    plugin's part only its text elements (their block ids dropped); every other line blank, so
    the kept ones keep their line numbers. Also the index where the plugin's part starts: its
    text elements are no part of the section of the notes above it."""
    data = next((i for i in range(body_start, len(lines)) if _DATA_START.match(lines[i])), len(lines))
    back = ["" if _BANNER.match(line) else line for line in lines[body_start:data]]
    last = next((i for i in range(len(back) - 1, -1, -1) if back[i].strip()), None)
    if last is not None and back[last].strip() == "%%":  # the comment that hides the data
        back[last] = ""
    kept = lines[:body_start] + back
    inside = False
    for line in lines[data:]:
        if _TEXT_ELEMENTS.match(line):
            inside = True
            kept.append("")
            continue
        inside = inside and not _SECTION_END.match(line)
        kept.append(_BLOCK_ID.sub("", line) if inside else "")
    return kept, data
