"""Record files: UTF-8 decoding and splitting text into ``---``-separated records with ``Key: Value`` headers."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any

SEPARATOR = "---"
# A header key is one word (letter first); the colon must be followed by a
# space or the end of the line, so "http://x" and "12:30" stay body text.
HEADER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*):(?:[ \t]+(.*)|[ \t]*)$")
REPLACEMENT = "\ufffd"
# Headers whose value is a list of names or labels ("Tags: quick, leftovers"): split on
# commas so that filters match members (tags__in=quick) rather than the whole line.
LIST_HEADERS = frozenset({"tags", "participants", "aliases", "attendees"})


@dataclass(frozen=True)
class Record:
    """One searchable unit: a block of a ``.txt`` file, or one SQLite row."""

    text: str
    file_path: str
    line_number: int | None
    end_line: int | None
    metadata: dict[str, Any]
    source: str = "files"
    id: str = ""
    citation: str = ""
    content: str = ""  # the whole record, headers included: what is embedded and keyword-indexed


@dataclass(frozen=True)
class Problem:
    """Something wrong with the input, kept for the log and for ``stats``."""

    where: str
    line: int | None
    reason: str
    skipped: bool = True  # False: the record or file was kept despite the problem

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line else self.where
        return f"{at}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by ``stats``."""
        return {"file_path": self.where, "line": self.line, "reason": self.reason}


def decode_text(data: bytes, file_path: str) -> tuple[str, list[Problem]]:
    """Decode UTF-8 (BOM dropped); invalid bytes become U+FFFD with one Problem per line."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    # Slow path only for broken files: find the lines that hold the bad bytes.
    problems, lines = [], data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Problem(file_path, number, "bytes that are not UTF-8 were replaced by U+FFFD", False))
    return data.decode("utf-8", errors="replace"), problems


def parse_records(text: str, file_path: str) -> tuple[list[Record], list[Problem]]:
    """Split a file's text into records; report empty and header-only blocks.

    Blocks are separated by lines that are exactly ``---`` (a trailing ``\\r`` is
    tolerated). Blank blocks before the first or after the last separator are
    file framing, not records, and are skipped silently.
    """
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    blocks: list[tuple[int, list[str]]] = []  # (1-based first line, lines)
    start = 0
    for index, line in enumerate(lines):
        if line == SEPARATOR:
            blocks.append((start + 1, lines[start:index]))
            start = index + 1
    blocks.append((start + 1, lines[start:]))
    records: list[Record] = []
    problems: list[Problem] = []
    for number, (first, block) in enumerate(blocks):
        framing = number in (0, len(blocks) - 1)
        record, problem = _parse_block(block, first, file_path, framing)
        if record is not None:
            records.append(record)
        if problem is not None:
            problems.append(problem)
    return records, problems


def _parse_block(block: list[str], first: int, file_path: str,
                 framing: bool) -> tuple[Record | None, Problem | None]:
    filled = [i for i, line in enumerate(block) if line.strip()]
    if not filled:
        return None, None if framing else Problem(file_path, first, "empty record skipped")
    top, bottom = filled[0], filled[-1]
    metadata: dict[str, Any] = {}
    body_start = top
    for i in range(top, bottom + 1):
        match = HEADER_RE.match(block[i])
        if not match:
            break
        metadata[match.group(1)] = header_value(match.group(1), match.group(2) or "")
        body_start = i + 1
    body = block[body_start:bottom + 1]
    while body and not body[0].strip():
        body.pop(0)
    line_number, end_line = first + top, first + bottom
    if not body:
        return None, Problem(file_path, line_number, "record has headers but no text; skipped")
    return Record(
        text="\n".join(body), file_path=file_path, line_number=line_number, end_line=end_line,
        metadata=metadata, id=f"{file_path}:{line_number}",
        citation=f"{file_path}:{line_number}-{end_line}",
        content="\n".join(block[top:bottom + 1]),
    ), None


def header_value(key: str, raw: str) -> str | list[str]:
    """A header's value: stripped text, or for a list header (``Tags``, ``Participants``,
    ``Aliases``, ``Attendees``, any case) its comma-separated, non-empty, stripped items."""
    if key.casefold() in LIST_HEADERS:
        return [item.strip() for item in raw.split(",") if item.strip()]
    return raw.strip()
