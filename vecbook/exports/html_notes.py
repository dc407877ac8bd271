"""Notes kept as HTML files in a notes folder (``.html``, ``.htm``): Apple Notes exported as HTML
(an AppleScript export writes each note's body, ``<div>`` a line; Exporter and other apps a page
with its ``<title>``), a saved page. One record a note: its text as a reader sees it (no markup,
scripts or styles), titled by its ``<title>``, else its first line (Apple Notes' title), cited
by the file's lines. Never guessed: a notes folder reads its ``.html`` files so, but a chat
app's HTML export among them (``HTML_EXPORTS``), which it names instead, and the pages an
export writes beside its data (``APP_PAGES``), nor a saved page's frames (``SAVED_PAGE_FOLDER``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from ..records import BINARY_REASON, Record, read_text
from .base import Export, ExportFile, export_record
from .html_note_text import html_note_lines
from .html_text import html_to_text

SUFFIXES = (".html", ".htm")
# Pages an app's export writes beside the data read from it, showing the same content again (ChatGPT's
# chat.html beside its conversations; Google Takeout's index of the archive): no notes, by name, with
# the files beside one that say it is that page (none: the name says it).
APP_PAGES = {"chat.html": ("conversations.json", "conversations-000.json", "export_manifest.json"),
             "archive_browser.html": ()}
# A browser's "Web Page, Complete" (Chrome, Firefox, Edge) writes the page beside "<name>_files", which
# holds its frames (ads, embeds) as .html: parts of the page, no notes.
SAVED_PAGE_FOLDER = "_files"
# The pages after the first of a chat app's HTML export of one chat (Telegram's messages2.html...,
# Facebook's message_2.html...): the first page's WARN names the export, once a chat, not once a page.
_LATER_PAGE_RE = re.compile(r"^(?:messages[1-9]\d*|message_(?:[2-9]|[1-9]\d+))\.html$")
_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def app_page(path: Path) -> bool:
    """Whether ``path`` is a page an app's export writes beside its data (``APP_PAGES``): not a note."""
    beside = APP_PAGES.get(path.name.lower())
    return beside is not None and (not beside or any((path.parent / name).exists() for name in beside))


def saved_page_part(path: Path) -> bool:
    """Whether ``path`` is inside the folder a browser saved a page's parts in (``<name>_files``
    beside ``<name>.html``): a frame of the page, not a note."""
    for folder in path.parents:
        stem = folder.name[:-len(SAVED_PAGE_FOLDER)] if folder.name.endswith(SAVED_PAGE_FOLDER) else ""
        if stem and any((folder.parent / (stem + suffix)).is_file() for suffix in SUFFIXES):
            return True
    return False


def later_page(path: Path) -> bool:
    """Whether ``path`` is a page after the first of a chat's HTML export (``messages2.html``)."""
    return _LATER_PAGE_RE.match(path.name) is not None


def detect(export: Export) -> bool:
    """Never: a notes folder reads its ``.html`` files as notes by their suffix."""
    return False


def read(export: Export) -> list[Record]:
    """Every ``.html`` note of the export, one record each."""
    notes = export.find(lambda f: f.name.lower().endswith(SUFFIXES))
    return export.read_each(notes, lambda f: _records(export, f))


def _records(export: Export, file: ExportFile) -> Iterator[Record]:
    read = read_text(file.read_bytes(), file.label)
    if read is None:
        export.warn(file, None, BINARY_REASON)
        return
    html = read[0]
    lines = html_note_lines(html)
    if not lines:
        return
    text = "\n".join(line for line, _ in lines)
    title = _title(html) or lines[0][0]
    inside = file.rel.rsplit("!/", 1)[-1]
    folder = inside.rsplit("/", 1)[0] if "/" in inside else None
    found = {"note": title, "title": title, "folder": folder, "format": export.format}
    metadata = {k: v for k, v in found.items() if v}
    at = [line for _, line in lines if line is not None]
    if not at:  # (markup the parser gave up on: the whole file)
        end = html.rstrip("\n").count("\n") + 1
        yield export_record(export, file, text, 1, end, metadata, "note", segments=((0, 1, end),))
        return
    yield export_record(export, file, text, min(at), max(at), metadata, "note", segments=_line_segments(lines))


def _line_segments(lines: list[tuple[str, int | None]]) -> tuple[tuple[int, int, int], ...]:
    """(offset in the text, file line, file line) of each line of text: a hit cites the lines it
    shows, as a Markdown note's does, however the file spreads them (a blank line between an
    ``<h1>`` and the next, several ``<div>`` on one line). A line of unknown origin (a blank one, a
    ``<pre>``'s after its first) is counted with the line before it."""
    segments, offset = [], 0
    last = next(line for _, line in lines if line is not None)
    for text, line in lines:
        last = line if line is not None else last
        segments.append((offset, last, last))
        offset += len(text) + 1
    return tuple(segments)


def _title(html: str) -> str:
    """The page's ``<title>``, its markup and entities read as text; "" where it has none."""
    found = _TITLE_RE.search(html)
    return " ".join(html_to_text(found.group(1)).split()) if found else ""
