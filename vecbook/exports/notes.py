"""A folder of notes, read file by file: the data directory, and a notes folder added as a source
(``format = "notes"``). Each file is read by its own reader, at any depth: ``.md`` notes by the
Markdown reader (front matter, headings, tags, wikilinks), ``.txt`` files as records, and an app's
export found among them (a WhatsApp chat, a Telegram ``result.json``, a calendar, an mbox, a Slack
or Maildir folder) by that export's reader; one that cannot be told apart is named in a WARN with
the ``vecbook add`` line that reads it. Each file is read on its own, so ``sources`` re-reads only
the files that changed.

As in an Obsidian vault, folders whose names start with a dot (``.obsidian``, ``.trash``,
``.git``), hidden files and the Templates plugin's folder are not notes; nor is a Logseq graph's
``logseq`` folder (its config and its copies of pages).
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..config import counted
from ..os_paths import os_path, plain, walk_root
from ..records import Problem, Record
from . import FORMATS, detects, html_export, reader
from .base import BROKEN_LINK, IGNORED_NAMES, Export, link_fault, readable_path
from .left_out import (LOGSEQ_RECYCLE, LOGSEQ_RECYCLE_FOLDER, OBSIDIAN_TRASH, OBSIDIAN_TRASH_FOLDER, TEMPLATES,
                       add_line, folder_left_out)
from .markdown import LOGSEQ_CONFIG, LOGSEQ_FOLDER, TEXTPACK
from .html_notes import SUFFIXES as HTML_SUFFIXES
from .html_notes import app_page, later_page, saved_page_part
from .markdown import SUFFIXES as MARKDOWN_SUFFIXES

log = logging.getLogger("vecbook")

# The kinds a file of a notes folder is read as besides an export's format: decided by its
# suffix, never guessed from content (any export may hold .txt files).
MARKDOWN, TEXT, HTML, OTHER = "markdown", "text", "html", "other"
# A zip of notes (a vault zipped for a backup or to send) is read by the Markdown reader, counted apart.
VAULT = "zipped vault"
TEXT_SUFFIX = ".txt"
# Files that may be an app's export, read when a reader recognises them ("": no suffix, as an
# mbox often has). Any other file (pictures, PDFs, documents) is counted, never opened.
EXPORT_SUFFIXES = frozenset({"", ".json", ".zip", ".jex", ".ics", ".ical", ".icalendar", ".ifb", ".vcs", ".mbox", ".mbx",
                             ".eml", ".db", ".sqlite", ".sqlite3"})
READ_SUFFIXES = EXPORT_SUFFIXES | {TEXT_SUFFIX, TEXTPACK, *MARKDOWN_SUFFIXES, *HTML_SUFFIXES}
# A folder holding one of these files (Slack's workspace lists beside its channel folders) or all
# of these folders (a Maildir's) may be an export read whole: its files make sense only together.
EXPORT_FOLDER_FILES = frozenset({"channels.json", "users.json"})
# A Maildir is told by its cur/ alone, as NeoMutt tells one: a Maildir cloned from git has no new/
# or tmp/ (git keeps no empty folder).
MAILDIR_DIR = "cur"
# Formats never guessed for a file found here: the note kinds have their suffixes, and this one.
NOT_GUESSED = frozenset({MARKDOWN, TEXT, HTML, "notes"})
SQLITE_MAGIC = b"SQLite format 3\x00"
# iCloud Drive with Optimize Mac Storage swaps a file it has not downloaded for a hidden stand-in,
# ".<name>.icloud" (a few hundred bytes of plist): a note there would be left out without a word.
ICLOUD_SUFFIX = ".icloud"
# What an extension looks like (``.md``, ``.jpeg``, ``.tar``, ``.001``): a Maildir message's name
# (``1354585346.000260.host:2,S``), a dated backup's (``notes.20240308T0130``) or a sentence's
# (``trip.draft 2``) ends in none, and is counted as a file with no extension.
EXTENSION = re.compile(r"\.(?:\w*[^\W\d]\w*|\d{1,3})", re.ASCII)
EXTENSION_LENGTH = 10
# Past this many kinds of files not read, ``add`` names the commonest and counts the rest.
SHOWN_SUFFIXES = 5
IN_ICLOUD = "in iCloud only, not downloaded to this Mac, so not read (Finder: Download Now, or keep the folder downloaded)"
# How ``add`` and ``sources`` name each kind, one and many; an export is "<format> export".
KIND_NOUNS = {MARKDOWN: ("Markdown note", "Markdown notes"), VAULT: ("zipped vault", "zipped vaults"),
              TEXT: ("text file", "text files"), HTML: ("HTML note", "HTML notes")}
# The folders kept apart (a vault's trash, its templates) whose notes were counted, with the signature
# they had then (``_notes_in``); past this many, the counts start again.
_COUNTED_FOLDERS = 1024
_counted: dict[Path, tuple[tuple[int, int, int], int]] = {}


def detect(export: Export) -> bool:
    """Never: ``vecbook add`` chooses this format for a folder of notes no export format claims."""
    return False


def read(export: Export) -> list[Record]:
    """Every file of the folder by its own reader, at once (``sources`` reads them one by one)."""
    folder = Folder(export.name, export.path, export.label_prefix, export.problem_prefix, export.gap_minutes,
                    export.date_order, export.include_spam_and_trash)
    listing = list_files(folder)
    export.problems.extend(listing.problems)
    records: list[Record] = []
    for rel, path in listing.files:
        found, problems, _ = read_file(folder, rel, path)
        records.extend(found)
        export.problems.extend(problems)
    return records


@dataclass(frozen=True)
class Folder:
    """A notes folder being read: the data directory (source ``files``, paths relative to it,
    problems without a source's name) or a collection (paths ``<name>/...``, problems naming it)."""

    name: str
    root: Path
    label_prefix: str = ""
    problem_prefix: str = ""
    gap_minutes: float = 30.0
    date_order: str | None = None
    include_spam_and_trash: bool = False
    # What its files' readers gather once for the whole read (``Export.shared``).
    shared: dict[Any, Any] = field(default_factory=dict, compare=False, hash=False)

    def problem(self, rel: str, reason: str) -> Problem:
        """A problem of the file or folder ``rel`` (its path inside the notes folder)."""
        return Problem(self.label_prefix + rel, None, self.problem_prefix + reason)

    def export(self, rel: str, path: Path) -> Export:
        """The file (or export folder) ``rel`` as an export of its own, cited as part of this folder."""
        export = Export(self.name, path, self.label_prefix + rel, self.gap_minutes, "", self.date_order, rel=rel,
                        label_prefix=self.label_prefix, problem_prefix=self.problem_prefix,
                        include_spam_and_trash=self.include_spam_and_trash)
        export.shared = self.shared
        return export


@dataclass
class Listing:
    """What a notes folder holds: the files (and export folders) to read with their paths inside
    it, in order; problems met on the way; the links that lead outside it; and the files not
    read, by suffix."""

    files: list[tuple[str, Path]] = field(default_factory=list)
    # A plain file's signature (size, mtime in ns, inode, device) from the lstat that listed it,
    # by its path inside the folder: a refresh compares it without a second stat of every file.
    signatures: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    # The files that links to files lead to outside the folder (resolved): no event under the
    # folder tells of their edits, so the watcher watches them where they lie.
    linked_files: list[Path] = field(default_factory=list)
    others: Counter[str] = field(default_factory=Counter)


def list_files(folder: Folder, exclude: Sequence[Path] = ()) -> Listing:
    """The files of ``folder`` to read, following symbolic links (a folder reached twice, a
    symlink loop, is walked once; a file reached twice is listed once), but those in
    ``exclude`` (other sources, read by their own readers), hidden folders and files, the
    vault's templates and a Logseq graph's own folder. A folder that is an app's export is
    listed whole. Broken links and unreadable folders are problems."""
    root = folder.root
    listing = Listing()
    if root.is_file():  # a source of one note
        listing.files.append((root.name, root))
        return listing
    real_root = root.resolve()
    excluded = {identity for identity in map(_identity, exclude) if identity is not None}
    seen_dirs: set[tuple[int, int]] = set(excluded)
    seen_files: set[tuple[int, int]] = set(excluded)

    def on_error(error: OSError) -> None:
        listing.problems.append(folder.problem(_relative(plain(error.filename or str(root), root), root),
                                               f"cannot read folder: {error.strerror}"))

    for name, dirs, names in os.walk(walk_root(root), followlinks=True, onerror=on_error):
        here = plain(name, root)
        opened = os_path(here)  # (with Windows' long path prefix where it needs one)
        identity = _identity(opened)
        if identity is None or identity in seen_dirs:
            dirs[:] = []
            continue
        seen_dirs.add(identity)
        if here != root and _is_export_folder(folder, _relative(here, root), opened, dirs, names):
            listing.files.append((_relative(here, root), opened))
            dirs[:] = []
            continue
        if ".obsidian" in dirs:
            seen_dirs.update(_template_folders(folder, opened, listing))
            if OBSIDIAN_TRASH_FOLDER in dirs:  # (hidden, so not read below)
                _say_left_out(folder, opened / OBSIDIAN_TRASH_FOLDER, OBSIDIAN_TRASH, listing)
        if LOGSEQ_FOLDER in dirs and (own := _logseq_folder(opened)):
            seen_dirs.update(own)
            _say_left_out(folder, opened / LOGSEQ_FOLDER / LOGSEQ_RECYCLE_FOLDER, LOGSEQ_RECYCLE, listing)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for child in [d for d in dirs if os_path(here / d).is_symlink()]:
            _note_link(here / child, root, real_root, listing.outside)
        # Each file's path inside the folder from its folder's, worked out once a folder: a
        # pathlib relative_to a file was ~60 us, 0.6 s of a refresh at 10,000 files.
        prefix = "" if here == root else _relative(here, root) + "/"
        for child in sorted(names):
            _collect(folder, os_path(here / child), prefix + readable_path(child), real_root, listing, seen_files)
    listing.files.sort(key=lambda item: item[0].split("/"))  # a folder's files and subfolders interleave by name
    return listing


def read_file(folder: Folder, rel: str, path: Path) -> tuple[list[Record], list[Problem], str]:
    """One file (or export folder) of a notes folder: its records, its problems and its kind
    (``markdown``, ``text``, the format of the export that read it, or ``other``: not read)."""
    export = folder.export(rel, path)
    with export.reading():  # (a zip here stays open from one member read to the next, as a source's does)
        kind = _kind(export, path)
        records: list[Record] = []
        if kind != OTHER:
            export.format = MARKDOWN if kind == VAULT else kind
            try:
                records = list(reader(export.format).read(export))
            except Exception as exc:  # noqa: BLE001 - a reader bug must not stop the rest of the folder
                log.debug("reader %s failed on %s", kind, path, exc_info=True)
                export.warn(None, None, f"the {kind} reader failed ({type(exc).__name__}: {exc}); "
                                        "its records are lost")
    return records, export.problems, kind


def read_change(rel: str, is_dir: bool) -> bool:
    """Whether a change of ``rel`` (a path inside a notes folder, "/"-separated) can change what
    the folder reads: a file it reads or may (a deleted folder has no suffix either), a folder,
    a Maildir message, the vault's templates setting; nothing in hidden folders."""
    parts = rel.split("/")
    if parts[-2:] == [".obsidian", "templates.json"]:
        return True
    if any(part.startswith(".") for part in parts):
        return False
    return is_dir or os.path.splitext(parts[-1])[1].lower() in READ_SUFFIXES or parts[-2:-1] in (["cur"], ["new"])


def holds_notes(root: Path) -> bool:
    """Whether a folder holds notes (a Markdown note, or a ``.txt`` that no export format claims):
    then it is a notes folder, whatever exports lie beside them. An empty ``.txt`` holds no note:
    an export may write one (imessage-exporter's ``orphaned.txt``, when no message lacks a chat)."""
    folder = Folder("source", root, "source/")
    listing = list_files(folder)
    for rel, path in listing.files:
        suffix = path.suffix.lower() if not path.is_dir() else None
        if suffix == TEXT_SUFFIX and listing.signatures.get(rel, (1,))[0] == 0:
            continue
        if suffix in MARKDOWN_SUFFIXES or (suffix in (TEXT_SUFFIX, *HTML_SUFFIXES)
                                           and _kind(folder.export(rel, path), path) in (TEXT, HTML)):
            return True
    return False


def describe_kinds(kinds: dict[str, int], not_read: dict[str, int]) -> str:
    """``12 Markdown notes, 10 text files, 1 whatsapp export, 3 other files not read (.jpg, .pdf)``."""
    order = sorted(kinds, key=lambda kind: (kind not in KIND_NOUNS, list(KIND_NOUNS).index(kind)
                                            if kind in KIND_NOUNS else 0, kind))
    parts = [counted(kinds[kind], *KIND_NOUNS.get(kind, (f"{kind} export", f"{kind} exports"))) for kind in order]
    if not_read:
        suffixes = suffix_list(not_read)
        parts.append(f"{counted(sum(not_read.values()), 'other file')} not read ({suffixes})")
    return ", ".join(parts) or "no files"


def suffix_list(counts: dict[str, int]) -> str:
    """Extensions by how many files have each (``{".jpg": 2, "": 1}``), commonest first, past six
    the first five and a count: ``.jpg, no extension, …and 4 more kinds``."""
    commonest = sorted(counts, key=lambda suffix: (-counts[suffix], suffix))
    shown = commonest if len(commonest) <= SHOWN_SUFFIXES + 1 else commonest[:SHOWN_SUFFIXES]  # (one more is named)
    more = f", …and {len(commonest) - len(shown)} more kinds" if len(shown) < len(commonest) else ""
    return ", ".join(suffix or "no extension" for suffix in shown) + more


def extension(path: Path) -> str:
    """``path``'s extension, lowercase, as ``add`` counts the files it does not read: "" where its
    name's last dotted part is no extension (``EXTENSION``), so a Maildir's messages are not each a kind."""
    suffix = path.suffix.lower()
    return suffix if len(suffix) <= EXTENSION_LENGTH and EXTENSION.fullmatch(suffix) else ""


# -- what a file is --


def _kind(export: Export, path: Path) -> str:
    """Markdown by its suffix; else the one export format that recognises it; else text for a
    ``.txt``, and nothing for the rest. An export that several formats claim, or a SQLite
    database, is a WARN giving the ``vecbook add`` line that reads it, not a giant record."""
    if path.suffix.lower() in (*MARKDOWN_SUFFIXES, TEXTPACK) and not path.is_dir():  # (a TextPack is one note)
        return MARKDOWN
    if path.suffix.lower() in HTML_SUFFIXES and not path.is_dir():  # (Apple Notes exported as HTML, a saved page)
        if app_page(path) or saved_page_part(path):  # (a saved page's frames are parts of it)
            return OTHER
        chat = html_export(export)  # a chat app's HTML export is no note: said, with what to export instead
        if chat is not None and not later_page(path):  # (said once a chat, not once each of its pages)
            export.warn(None, None, chat)
        return HTML if chat is None else OTHER
    files = export.files()
    if len(files) == 1 and files[0].path is not None:  # a plain file: the detectors share one read of its start
        files[0].keep_head()
    found = [name for name in FORMATS if name not in NOT_GUESSED and detects(name, export)]
    if len(found) == 1:
        return found[0]
    if found:
        lines = " or ".join(f"`{add_line(path, name)}`" for name in found)
        export.warn(None, None, f"looks like {' and '.join(found)}, so it is not read here: {lines} reads it")
        return OTHER
    if path.suffix.lower() == TEXT_SUFFIX and not path.is_dir():
        return TEXT
    if path.suffix.lower() == ".zip" and not path.is_dir():
        return _zipped_notes(export, path)
    if not path.is_dir() and _head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC:
        export.warn(None, None, f"a SQLite database, not read here: `{add_line(path)}` reads its rows")
    return OTHER


def _zipped_notes(export: Export, path: Path) -> str:
    """A zip no export format claims: a vault (the Markdown reader's detection: a ``.obsidian`` folder,
    or mostly notes) is read as one; one holding notes among more other files (a project's README) is
    named, with the line that reads its notes."""
    if detects(MARKDOWN, export):
        return VAULT
    notes = len(export.find(lambda f: f.name.lower().endswith(MARKDOWN_SUFFIXES)))
    if notes:
        export.warn(None, None, f"a zip holding {counted(notes, 'Markdown note')} among "
                                f"{counted(len(export.files()), 'file')}, not read here as notes: "
                                f"`{add_line(path, MARKDOWN)}` reads its notes")
    return OTHER


def _is_export_folder(folder: Folder, rel: str, path: Path, dirs: list[str], names: list[str]) -> bool:
    """Whether a folder found inside is an app's export read whole (Slack's, a Maildir): only
    a folder with their files is asked, and only export formats' readers answer."""
    if not (EXPORT_FOLDER_FILES & set(names) or MAILDIR_DIR in dirs):
        return False
    export = folder.export(rel, path)
    return any(name not in NOT_GUESSED and detects(name, export) for name in FORMATS)


def _template_folders(folder: Folder, vault: Path, listing: Listing) -> list[tuple[int, int]]:
    """The folder Obsidian's Templates plugin is set to (``.obsidian/templates.json``): its
    notes hold placeholders such as ``{{date}}``, not notes (said in ``listing``'s problems)."""
    try:
        name = json.loads((vault / ".obsidian" / "templates.json").read_text(encoding="utf-8")).get("folder")
    except (OSError, ValueError, AttributeError):
        return []
    templates = vault / name.strip("/") if isinstance(name, str) and name.strip("/") else None
    identity = _identity(templates) if templates is not None else None
    if templates is None or identity is None:
        return []
    _say_left_out(folder, templates, TEMPLATES, listing)
    return [identity]


def _say_left_out(folder: Folder, kept_apart: Path, what: str, listing: Listing) -> None:
    """Add to ``listing``'s problems that the notes of ``kept_apart``, a folder a vault keeps apart
    from its notes (``what``), were left out, with how many and the line that reads them: one who
    looks for a template or a deleted note learns where it went. Nothing where it holds none."""
    count = _notes_in(kept_apart)
    if count:
        shown = plain(str(kept_apart), folder.root)  # (without Windows' long path prefix)
        listing.problems.append(Problem(folder.label_prefix + _relative(shown, folder.root), None,
                                        folder.problem_prefix + folder_left_out(count, what, shown), left_out=True))


def _notes_in(kept_apart: Path) -> int:
    """How many notes ``kept_apart`` holds, at any depth; counted again only when the folder itself
    changed (a note moved in or out, as Obsidian's trash takes a deleted note or folder): each refresh
    walked all of a trash years old, which is never read."""
    try:
        found = kept_apart.stat()
    except OSError:
        return 0
    signature = (found.st_mtime_ns, found.st_ino, found.st_dev)
    known = _counted.get(kept_apart)
    if known is not None and known[0] == signature:
        return known[1]
    count = sum(os.path.splitext(file)[1].lower() in MARKDOWN_SUFFIXES for here, _, files in os.walk(kept_apart)
                for file in files if not file.startswith(".") and not _hidden_folder(here, kept_apart))
    if len(_counted) >= _COUNTED_FOLDERS:
        _counted.clear()
    _counted[kept_apart] = (signature, count)
    return count


def _hidden_folder(here: str, top: Path) -> bool:
    """Whether ``here``, a folder under ``top``, is inside a hidden one (not read as notes)."""
    return any(part.startswith(".") for part in Path(here).relative_to(top).parts)


def _logseq_folder(graph: Path) -> list[tuple[int, int]]:
    """A Logseq graph's own ``logseq`` folder (told by its ``config.edn``): the app's config, and
    in ``bak`` and ``version-files`` its copies of the pages it saved over, no notes."""
    if not (graph / LOGSEQ_FOLDER / LOGSEQ_CONFIG).is_file():
        return []
    identity = _identity(graph / LOGSEQ_FOLDER)
    return [identity] if identity is not None else []


def _collect(folder: Folder, path: Path, rel: str, real_root: Path, listing: Listing,
             seen: set[tuple[int, int]]) -> None:
    """List the file ``path`` (``rel`` inside the folder) if it is one to read."""
    name = path.name
    if _in_icloud(name):
        listing.problems.append(folder.problem(rel[:len(rel) - len(name)] + name[1:-len(ICLOUD_SUFFIX)], IN_ICLOUD))
        return
    if name.startswith(".") or name in IGNORED_NAMES:  # hidden files, editors' and the OS's litter
        return
    # One lstat answers for a plain file (most of them): a refresh lists every file of a
    # notes folder, and four calls a file were ~0.3 s of a one-note update at 10,000 files.
    try:
        info = path.lstat()
    except OSError:
        return
    link = stat.S_ISLNK(info.st_mode)
    if link and not path.exists():
        listing.problems.append(folder.problem(rel, link_fault(path) or BROKEN_LINK))
        return
    suffix = path.suffix.lower()
    if suffix not in READ_SUFFIXES:
        listing.others[extension(path)] += 1
        return
    if link:
        outside = _note_link(path, folder.root, real_root, listing.outside)
        identity = _identity(path)
        if identity is None or not path.is_file():
            return
        if outside:
            listing.linked_files.append(path.resolve())
    elif stat.S_ISREG(info.st_mode):
        identity = info.st_dev, info.st_ino
        listing.signatures[rel] = info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev
    else:
        return
    if identity in seen:
        log.debug("%s is a second path to a file already read, or another source's; skipped", rel)
        return
    seen.add(identity)
    listing.files.append((rel, path))


def _in_icloud(name: str) -> bool:
    """Whether ``name`` is iCloud's stand-in for a file of a kind read here (a hidden one's is not)."""
    if not (name.startswith(".") and name.endswith(ICLOUD_SUFFIX)) or name.startswith(".."):
        return False
    suffix = os.path.splitext(name[1:-len(ICLOUD_SUFFIX)])[1].lower()
    return bool(suffix) and suffix in READ_SUFFIXES


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _relative(path: Path, root: Path) -> str:
    """``path`` inside ``root`` as its records cite it (``readable_path``)."""
    try:
        return readable_path(path.relative_to(root).as_posix())
    except ValueError:
        return readable_path(str(path))


def _note_link(path: Path, root: Path, real_root: Path, outside: list[str]) -> bool:
    """Add the link ``path`` to ``outside`` when it leads out of the folder; whether it does."""
    target = path.resolve()
    if target != real_root and real_root not in target.parents:
        outside.append(_relative(path, root))
        return True
    return False


def _head(path: Path, size: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""
