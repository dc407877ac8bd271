"""Obsidian Excalidraw drawings (``Name.excalidraw.md``, front matter ``excalidraw-plugin``): a
Markdown note whose words are its text elements; the rest is the plugin's.

The plugin writes a banner (``==⚠ Switch to EXCALIDRAW VIEW ...==``) at the top of every drawing,
then ``# Excalidraw Data`` holding ``## Text Elements`` (each element's text, ended by its block id,
`` ^aB3dE9fG``), ``## Element Links``, ``## Embedded Files`` and ``## Drawing``: the scene as JSON or
as compressed base64, often hundreds of kilobytes. Read as a note, every drawing was a hit for the
banner's words and its text elements came with kilobytes of base64 in their record.
"""

from __future__ import annotations

import re
from typing import Any

FRONT_KEY = "excalidraw-plugin"
_TEXT_ELEMENTS = re.compile(r"^#{1,2} Text Elements[ \t]*$")
# The end of the text elements: the next heading, or the comment block the drawing sits in.
_SECTION_END = re.compile(r"^(?:#{1,6} |%%)")
_BLOCK_ID = re.compile(r"[ \t]+\^[A-Za-z0-9_-]{6,}[ \t]*$")


def is_drawing(front: dict[str, Any]) -> bool:
    """Whether a note's front matter says it is an Excalidraw drawing."""
    return FRONT_KEY in front


def text_lines(lines: list[str], body_start: int) -> list[str]:
    """A drawing's ``lines`` with only its text elements kept (their block ids dropped) after
    ``body_start``; every other line blank, so the elements keep their line numbers."""
    kept = lines[:body_start]
    inside = False
    for line in lines[body_start:]:
        if _TEXT_ELEMENTS.match(line):
            inside = True
            kept.append("")
            continue
        inside = inside and not _SECTION_END.match(line)
        kept.append(_BLOCK_ID.sub("", line) if inside else "")
    return kept
