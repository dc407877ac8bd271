"""What an export's reader leaves out on purpose, as the app's own search does (Spam, an app's
trash): a ``left_out`` Problem, said under "left out:" by ``vecbook add`` and ``vecbook sources``
apart from the faults, its reason naming what and how to search it."""

from __future__ import annotations

from pathlib import Path

from ..config import counted
from ..records import Problem
from .base import Export, ExportFile

# What a vault keeps apart from its notes, said under "left out" where it holds any: the folder
# Obsidian's Templates plugin is set to (its notes hold placeholders such as ``{{date}}``), and
# Obsidian's own trash, where it moves a deleted note when its "Deleted files" setting says so.
TEMPLATES = "the folder of Obsidian's Templates plugin (templates, not notes)"
OBSIDIAN_TRASH_FOLDER = ".trash"
OBSIDIAN_TRASH = f"Obsidian's trash ({OBSIDIAN_TRASH_FOLDER})"
# And a Logseq graph's recycle bin, in the app's own folder: the pages deleted in Logseq.
LOGSEQ_RECYCLE_FOLDER = ".recycle"
LOGSEQ_RECYCLE = f"Logseq's recycle bin (logseq/{LOGSEQ_RECYCLE_FOLDER})"


def leave_out(export: Export, file: ExportFile, line: int | None, reason: str) -> None:
    """Record what was left out on purpose (Spam, Trash, messages deleted in Thunderbird, a note in an
    app's trash): a ``left_out`` Problem, which no one is warned of as a fault."""
    export.problems.append(Problem(file.label, line, f"{export.problem_prefix}{reason}", left_out=True))


def keep_setting(export: Export, what: str) -> str:
    """How to read what was left out (Spam, an app's trash): the collection's setting (the data folder has
    no table for it, so ``what`` is to be added as a source of its own)."""
    return ("set include_spam_and_trash = true in this collection's table" if export.problem_prefix else
            f"add {what} as a source of its own (vecbook add PATH) and set include_spam_and_trash = true in its table")


def folder_left_out(count: int, what: str, folder: Path | None) -> str:
    """What says the ``count`` notes of a vault's folder kept apart from its notes (``what``:
    ``TEMPLATES``, ``OBSIDIAN_TRASH``) were left out; added as a source of its own (``folder``, None
    in a zip) the folder reads them."""
    said = f"{counted(count, 'note')} in {what}"
    return f"{said}; `{add_line(folder)}` reads {'them' if count != 1 else 'it'}" if folder is not None else said


def add_line(path: Path, format_name: str | None = None) -> str:
    """The ``vecbook add`` command that reads ``path`` on its own."""
    shown = f'"{path}"' if any(c.isspace() or c in "'\"$`&;|()<>*?" for c in str(path)) else str(path)
    return f"vecbook add {shown}" + (f" --format {format_name}" if format_name else "")
