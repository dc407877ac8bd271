"""Front matter written in TOML between ``+++`` lines, as Hugo and Zola write a page's (Obsidian reads
YAML only): read as the Markdown reader reads YAML front matter."""

from __future__ import annotations

import re
from datetime import time
from typing import Any

from .base import Export, ExportFile

# Where tomllib says a fault is, in its message (its exception has no line before Python 3.13).
_TOML_AT = re.compile(r"\s*\(at line (\d+), column \d+\)")


def toml_front_matter(export: Export, file: ExportFile, lines: list[str]) -> tuple[dict[str, Any], int]:
    """Hugo's and Zola's front matter, TOML between ``+++`` lines, and the index of the first body
    line; an invalid block is a WARN naming its line and stays in the note's text."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    close = next((i for i in range(1, len(lines)) if lines[i].strip() == "+++"), None)
    if close is None:
        return {}, 0
    try:
        return _times_as_text(tomllib.loads("\n".join(lines[1:close]) + "\n")), close + 1
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_AT.search(str(exc))  # (tomllib says where only in its message before Python 3.13)
        problem = _TOML_AT.sub("", str(exc)).strip()
        export.warn(file, int(at.group(1)) + 1 if at else 1, f"invalid front matter ({problem}); the note is "
                                                             "kept as text", skipped=False)
        return {}, 0


def _times_as_text(front: dict[str, Any]) -> dict[str, Any]:
    """``front`` with each time of day (``alarm = 07:32:00``, a ``datetime.time`` no metadata
    takes) as its ISO text, in a list too: YAML's ``alarm: 07:32`` is text as well. Tables stay
    as read (nested, so left out as YAML's mappings are)."""
    def text(value: Any) -> Any:
        return value.isoformat() if isinstance(value, time) else value

    return {key: [text(v) for v in value] if isinstance(value, list) else text(value)
            for key, value in front.items()}
