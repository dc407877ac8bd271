"""Outlook's own mail files (.msg, .pst, .ost, .olm), which VecBook does not read: named, with how to get
mail it reads, where no format recognises the export (``outlook_file``), where they lie beside mail
that is read (``warn_outlook_files``) and in a notes folder (``outlook_advice``), so that their mail is
not missed in silence."""

from __future__ import annotations

from typing import Mapping

from ..config import counted
from .base import Export, ExportFile

READPST = ("readpst -o <folder> <file>.pst (libpst: apt install pst-utils, brew install libpst), which writes an "
           "mbox file a mail folder")
# (its file name's ending, its first bytes, what it is, what one is called where they are counted, how to
# get mail VecBook reads)
OUTLOOK_FILES = (
    (".msg", b"\xd0\xcf\x11\xe0", "Outlook's .msg message files", "Outlook .msg file",
     "save the messages as .eml instead (new Outlook for Windows: Save as; Outlook for Mac: drag them to a "
     f"folder), or export the mailbox as a .pst and convert that with {READPST}"),
    (".pst", b"!BDN", "an Outlook data file (.pst)", "Outlook data file (.pst)",
     f"convert it with {READPST}, and add that folder"),
    (".ost", b"!BDN", "Outlook's offline cache (.ost)", "Outlook offline cache (.ost)",
     f"export the mailbox as a .pst (File > Open & Export > Import/Export) and convert that with {READPST}"),
    (".olm", b"PK", "Outlook for Mac's archive (.olm)", "Outlook for Mac archive (.olm)",
     "drag the messages from Outlook for Mac into a folder (one .eml file each) and add that folder"),
)


def outlook_file(export: Export) -> str | None:
    """What to do with Outlook's own files (``OUTLOOK_FILES``), where the export holds one."""
    for file in export.files():
        for ending, mark, what, _, how in OUTLOOK_FILES:
            if _is_one(file, ending, mark):
                return f"it holds {what}, which VecBook does not read: {how}"
    return None


def warn_outlook_files(export: Export) -> None:
    """A WARN for each kind of Outlook's files in a mail export that is read, counted, at the first one,
    with how to get their mail read."""
    for ending, mark, _, noun, how in OUTLOOK_FILES:
        found = [file for file in export.files() if _is_one(file, ending, mark)]
        if found:
            export.warn(found[0], None, _not_read(len(found), noun, how))


def outlook_advice(not_read: Mapping[str, int]) -> list[str]:
    """What to do with the Outlook files a notes folder counts as not read (``{suffix: count}``), one
    line a kind; by the suffix alone, as a notes folder never opens a file it does not read."""
    return [_not_read(not_read[ending], noun, how) for ending, _, _, noun, how in OUTLOOK_FILES
            if not_read.get(ending)]


def _not_read(count: int, noun: str, how: str) -> str:
    return f"{counted(count, noun)} {'are' if count > 1 else 'is'} not read (VecBook reads none): {how}"


def _is_one(file: ExportFile, ending: str, mark: bytes) -> bool:
    return file.name.lower().endswith(ending) and file.head(len(mark)) == mark
