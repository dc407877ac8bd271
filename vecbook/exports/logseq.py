"""Logseq's block references as the app shows them: ``((uuid))`` and ``{{embed ((uuid))}}`` read
as the text of the block whose ``id:: uuid`` property names it, found anywhere in the same graph
(a page, a journal), so a page is found by the words it shows, and its snippet shows them too;
a page embed, ``{{embed [[page]]}}``, as an embed."""

from __future__ import annotations

import re
import stat
import weakref
from pathlib import Path
from typing import Callable, Iterable

from ..records import Problem, read_text
from .base import Export

UUID = r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"
# An embed first: its ((uuid)) is no reference of its own.
_REFERENCE_RE = re.compile(rf"\{{\{{embed \(\(({UUID})\)\)\}}\}}|\(\(({UUID})\)\)")
# A page shown inside a block: {{embed [[page]]}}.
_PAGE_EMBED_RE = re.compile(r"\{\{embed \[\[([^\[\]]+)\]\]\}\}")
# The line naming a block (indented under it: a page's own properties are no block).
_BLOCK_ID_RE = re.compile(rf"^\s+id:: ({UUID})\s*$")
_BULLET_RE = re.compile(r"^(\s*)- ?(.*)$")
_PROPERTY_LINE_RE = re.compile(r"^\s*[A-Za-z][\w-]*:: ")
# What a reference whose block the graph does not hold reads as (deleted, or in a page not
# exported): the uuid is no word anyone searches by.
MISSING_BLOCK, MISSING_EMBED = "[block]", "[embed: block]"
# References inside a referenced block are read this deep (a block may reference its referrer).
_DEPTH = 3
_NOTE_SUFFIXES = (".md", ".markdown")
# The graph folder's own folder: the app's config and its page backups, which hold the same ids.
_APP_FOLDER = "logseq"
# What a notes folder's read learns of the notes it read (in ``Export.shared``, by their paths in
# it): those that show another note's block, read again when one holding block ids changed.
REFERRERS, HOLDERS = "logseq referrers", "logseq block holders"
_blocks_by_graph: dict[Path, tuple[tuple[tuple[str, int, int], ...], dict[str, str]]] = {}
# A whole export's blocks, gathered once however many of its notes hold references.
_blocks_by_export: weakref.WeakKeyDictionary[Export, dict[str, str]] = weakref.WeakKeyDictionary()


def has_references(text: str) -> bool:
    """Whether ``text`` may hold a block reference or a page embed (cheap: most notes hold none)."""
    return ("((" in text and _REFERENCE_RE.search(text) is not None) or "{{embed [[" in text


def holds_block_ids(lines: list[str]) -> bool:
    """Whether a note's ``lines`` name a block another may reference (an ``id::`` line)."""
    return any("id:: " in line and _BLOCK_ID_RE.match(line) for line in lines)


def resolve(lines: list[str], blocks: Callable[[], dict[str, str]]) -> list[str]:
    """``lines`` with each reference replaced by its block's text on one line (``blocks``: the
    graph's block texts by uuid, asked for only where a line holds a reference), and each page
    embed written as Obsidian's (``![[page]]``), which the Markdown reader reads as an embed."""
    found: dict[str, str] | None = None
    out = []
    for line in lines:
        if "{{embed [[" in line:
            line = _PAGE_EMBED_RE.sub(r"![[\1]]", line)
        if "((" in line and _REFERENCE_RE.search(line):
            found = blocks() if found is None else found
            line = _replaced(line, found, _DEPTH)
        out.append(line)
    return out


def _replaced(text: str, blocks: dict[str, str], depth: int) -> str:
    def one(match: re.Match[str]) -> str:
        embed, uuid = match.group(1), match.group(1) or match.group(2)
        block = blocks.get(uuid)
        if block is None or depth == 0:
            return MISSING_EMBED if embed else MISSING_BLOCK
        return _replaced(block, blocks, depth - 1)
    return _REFERENCE_RE.sub(one, text)


def block_texts(lines: Iterable[str]) -> dict[str, str]:
    """The blocks of one page that carry an ``id::``, by uuid: each block's lines (its bullet's
    text and the lines under it before the id), its properties left out, on one line. One pass:
    the lines of the block being read are kept from its bullet to its id (a block has one)."""
    blocks: dict[str, str] = {}
    block: list[str] | None = None  # the block being read: its bullet's text, then its lines
    for line in lines:
        named = _BLOCK_ID_RE.match(line)
        if named is None:
            if bullet := _BULLET_RE.match(line):
                block = [bullet.group(2)]
            elif block is not None:
                block.append(line)
            continue
        if block is not None:
            body = block[:1] + [s.strip() for s in block[1:] if not _PROPERTY_LINE_RE.match(s)]
            blocks.setdefault(named.group(1), " ".join(b.strip() for b in body if b.strip()))
            block = None
    return blocks


def graph_blocks(export: Export, is_note: Callable[[object], bool]) -> dict[str, str]:
    """The block texts of the graph an export's note belongs to: a whole export's notes (a
    folder or zip read as Markdown), else, for one note of a notes folder, every note of the
    Logseq graph holding it on disk (the nearest folder above with ``logseq/config.edn``, else
    the notes folder), read again only when one of them changed."""
    if export.path.is_file() and export.path.suffix.lower() in _NOTE_SUFFIXES:
        # Once a read of the notes folder, however many of its notes hold references (each one
        # walking the graph took 2 minutes for 500 journals over 3,000 pages).
        shared = export.shared if export.shared is not None else {}
        shared.setdefault(REFERRERS, set()).add(export.rel)
        root = _graph_root(export.path, export.rel)
        if (_APP_FOLDER, root) not in shared:
            shared[_APP_FOLDER, root] = _disk_graph_blocks(root)
        return shared[_APP_FOLDER, root]  # type: ignore[no-any-return]
    blocks = _blocks_by_export.get(export)
    if blocks is None:
        blocks = _blocks_by_export[export] = {}
        for file in export.find(is_note):  # type: ignore[arg-type]
            _gather(blocks, read_text(file.read_bytes(), file.label))
    return blocks


def _gather(blocks: dict[str, str], read: tuple[str, list[Problem]] | None) -> None:
    """Add the blocks of one note (``read_text``'s answer; None: not text) that ``blocks`` lacks:
    the first note naming an id keeps it."""
    if read is not None:
        blocks.update((k, v) for k, v in block_texts(read[0].split("\n")).items() if k not in blocks)


def _graph_root(path: Path, rel: str | None) -> Path:
    """The Logseq graph holding the note at ``path`` (``rel``: its path inside the notes folder,
    which bounds the search), else the notes folder."""
    depth = len(rel.split("/")) - 1 if rel else 0  # the folders between the notes folder and the note
    for folder in list(path.parents)[:depth + 1]:
        if (folder / _APP_FOLDER / "config.edn").is_file():
            return folder
    return path.parents[depth]


def _disk_graph_blocks(root: Path) -> dict[str, str]:
    """The block texts of the notes under ``root``, hidden folders and the app's own (its page
    backups hold the same ids, with older text) left out."""
    app = _APP_FOLDER if (root / _APP_FOLDER / "config.edn").is_file() else None
    notes = sorted(p for p in root.rglob("*") if p.suffix.lower() in _NOTE_SUFFIXES
                   and not any(part.startswith(".") or part == app for part in p.relative_to(root).parts[:-1]))
    signature = tuple(filter(None, map(_signature, notes)))
    known = _blocks_by_graph.get(root)
    if known is not None and known[0] == signature:
        return known[1]
    blocks: dict[str, str] = {}
    for note in notes:
        try:
            read = read_text(note.read_bytes(), note.name)
        except OSError:
            continue  # (its own read says so)
        _gather(blocks, read)
    _blocks_by_graph[root] = (signature, blocks)
    return blocks


def _signature(note: Path) -> tuple[str, int, int] | None:
    """(path, mtime, size) of a note file; None for one gone since listed, or no file."""
    try:
        found = note.stat()
    except OSError:
        return None
    return (note.as_posix(), found.st_mtime_ns, found.st_size) if stat.S_ISREG(found.st_mode) else None
