"""Export readers: chat, mail, calendar, note and voice-note exports read in place as collections.

Each format is one module of this package with ``detect(export)`` and ``read(export)``
(see ``base``); adding a format is one new module and one line in ``FORMATS``.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config import CollectionConfig, ConfigError, counted, did_you_mean
from ..records import Problem, Record
from .base import Export
from .outlook_files import outlook_file
from .zips import ENCRYPTED

log = logging.getLogger("vecbook")

# format name -> (module in this package, what it reads): the registry. "module:name" is a
# reader object in a module that reads several formats (mail: mbox and Maildir).
FORMATS: dict[str, tuple[str, str]] = {
    "discord": ("discord", "DiscordChatExporter JSON"),
    "whatsapp": ("whatsapp", "WhatsApp chat export .txt or .zip"),
    "messenger": ("messenger", "Facebook Messenger JSON"),
    "chatgpt": ("chatgpt", "ChatGPT conversations.json"),
    "ics": ("ics", "iCalendar .ics and vCalendar .vcs files"),
    "markdown": ("markdown", "Markdown notes and Obsidian vaults"),
    "jex": ("jex", "Joplin's JEX export (.jex), read in place"),
    "html": ("html_notes", "notes kept as .html files, as Apple Notes exports them (never guessed)"),
    "superwhisper": ("superwhisper", "SuperWhisper recordings folder (meta.json)"),
    "imessage": ("imessage", "macOS Messages chat.db"),
    "imessage-txt": ("imessage_txt", "imessage-exporter's text export (-f txt), one .txt a conversation"),
    "mbox": ("mail:mbox", "mbox mailbox (Gmail Takeout, Thunderbird, Apple Mail)"),
    "maildir": ("mail:maildir", "Maildir folder (cur/new/tmp), .eml files or Apple Mail's .emlx store"),
    "slack": ("slack", "Slack workspace export, folder or .zip"),
    "telegram": ("telegram", "Telegram Desktop JSON (result.json)"),
    "text": ("text", "a folder of .txt records, as in the data directory (never guessed)"),
    "notes": ("notes", "a folder of notes read file by file: .md as Markdown, .txt as records, "
                       "exports inside by their readers (never guessed)"),
}


# The HTML a chat app offers first (Telegram Desktop's and DiscordChatExporter's default format,
# Facebook's and Instagram's default download) or beside the format read (imessage-exporter's
# -f html), which no reader reads: (file name, a mark of its markup, what it is, how to get what
# VecBook reads). Told apart so that a user who kept the default hears what to do, not only
# that no format recognises the export.
HTML_EXPORTS = (
    (re.compile(r"(?:^|/)messages\d*\.html$"), b'class="page_wrap"',  # telegram.HTML_MARK
     "Telegram Desktop's HTML export", "export the chat again choosing Format: Machine-readable JSON"),
    (re.compile(r"\.html?$", re.IGNORECASE), b"chatlog__",  # its stylesheet, first in the page (discord.HTML_MARK)
     "DiscordChatExporter's HTML export", "export the channel again choosing the JSON format"),
    (re.compile(r"\.html?$", re.IGNORECASE), b".message .sent",  # imessage-exporter's stylesheet, first in the page
     "imessage-exporter's HTML export", "export again as text: imessage-exporter -f txt"),
    (re.compile(r"(?:^|/)message_\d+\.html$"), b"<html",
     "Facebook's (or Instagram's) HTML download", "request your messages again choosing Format: JSON"),
)
# The same for the chat exports in another format than HTML that no reader reads: DiscordChatExporter's
# CSV (no guild, channel or message ids in it; its dates as the exporting computer's locale writes them).
OTHER_FORMAT_EXPORTS = (
    (re.compile(r"\.csv$", re.IGNORECASE), b"AuthorID,Author,Date,Content,Attachments,Reactions",  # discord.CSV_MARK
     "DiscordChatExporter's CSV export", "export the channel again choosing the JSON format"),
)


# Archives of other kinds, which VecBook does not open (a .zip is read as it is):
# named, with what to do, where no format recognises one.
OTHER_ARCHIVES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".7z", ".rar", ".gz", ".bz2", ".xz")


def why_unrecognised(export: Export) -> str | None:
    """Why no format recognises the export, where VecBook can tell: an archive of another kind
    (.tar.gz, .7z...), a zip it cannot open (cut short, damaged, empty, password-protected), a
    chat app's HTML export, Outlook's own files, or a folder with no file VecBook opens; None when
    it is simply no format VecBook reads."""
    return (_other_archive(export) or _unreadable_zip(export) or html_export(export) or outlook_file(export)
            or _nothing_to_open(export))


# A file of a kind no reader opens whatever --format says: a picture, a PDF, a document.
# The folders of a Maildir that hold its messages (``tmp/``: deliveries not yet done).
MAILDIR_FOLDERS = ("cur", "new", "tmp")
NOT_OPENED = ("it reads notes (.md, .txt), the chat, mail and calendar exports of the apps it knows, and SQLite "
              "databases")


def _nothing_to_open(export: Export) -> str | None:
    """A folder just made for notes, or of documents and pictures, or one such file: no ``--format``
    makes it searchable, so none is suggested."""
    from .left_out import add_line
    from .notes import READ_SUFFIXES, extension, suffix_list

    if export.path.is_file():
        suffix = export.path.suffix.lower()
        # (.emlx: Apple Mail's message files, read by the maildir reader though no folder counts them)
        opened = suffix in READ_SUFFIXES or suffix == ".emlx"
        return None if opened else f"it is a {suffix} file, which VecBook does not open: {NOT_OPENED}"
    if not export.path.is_dir():
        return None
    files = export.files()
    if not files:
        return "the folder is empty (no file in it at any depth): nothing to read until it holds notes or an export"
    suffixes = {os.path.splitext(file.name)[1].lower() for file in files}
    if suffixes & READ_SUFFIXES:
        return None  # a file a reader might take, given its --format
    kinds = Counter(extension(Path(file.name)) for file in files)
    why = (f"it holds no notes (.md, .txt) and no export VecBook reads, only {counted(len(files), 'file')} it "
           f"does not open ({suffix_list(kinds)})")
    if export.path.name in MAILDIR_FOLDERS:  # (a Maildir's messages, given without the Maildir)
        why += f"; it is named as a Maildir's {export.path.name} folder: `{add_line(export.path.parent)}` reads the Maildir"
    return why


def _other_archive(export: Export) -> str | None:
    name = export.path.name.lower()
    kind = next((suffix for suffix in OTHER_ARCHIVES if name.endswith(suffix)), None)
    if kind is None or not export.path.is_file():
        return None
    return f"it is a {kind} archive, which VecBook does not read: unpack it and add the folder it holds " \
           f"(a .zip is read as it is)"


def _unreadable_zip(export: Export) -> str | None:
    """The first fault of a zip in the export: the archive itself (its listing's WARN), an empty
    zip given alone, or a member no read could open (asked only once no format recognised it)."""
    files = export.files()
    for problem in export.problems:
        if "zip archive" in problem.reason:  # a zip inside is named: the error names only the path given
            inner = problem.where.removeprefix(export.label_prefix)
            return ("" if "!/" not in inner else f"{inner}: ") + problem.reason.removeprefix(export.problem_prefix)
    if not files and export.path.is_file() and export.path.suffix.lower() == ".zip":
        return "the zip archive is empty"
    for file in files:
        if "!/" not in file.rel or file.head(1) or file.fault is None:
            continue
        if file.fault.startswith(ENCRYPTED):
            return f"{file.rel} is {file.fault}"
        return f"cannot read {file.rel}: {file.fault}"
    return None


def html_export(export: Export) -> str | None:
    """What the export is and how to get the JSON VecBook reads, when it is a chat app's HTML
    export, or its export in another format no reader reads (see HTML_EXPORTS, OTHER_FORMAT_EXPORTS);
    None otherwise. Asked only once no format recognised it."""
    for file in export.files():
        rel = file.rel.replace("!/", "/")
        for name, mark, what, how in HTML_EXPORTS + OTHER_FORMAT_EXPORTS:
            if name.search(rel) and mark in file.head():
                return f"it is {what}, which VecBook does not read: {how}"
    return None


@lru_cache(maxsize=None)
def reader(format_name: str) -> Any:
    """The module (or the module's reader object) with ``detect`` and ``read`` for ``format_name``
    (found once: a notes folder asks for each of its files)."""
    module, _, name = FORMATS[format_name][0].partition(":")
    found = importlib.import_module(f".{module}", __name__)
    return getattr(found, name) if name else found


def format_list() -> str:
    """The formats and what each reads, for error messages."""
    return "; ".join(f"{name} ({what})" for name, (_, what) in FORMATS.items())


def open_export(collection: CollectionConfig) -> Export:
    """An Export for a ``path`` collection (its format not yet known)."""
    assert collection.path is not None  # only path collections come here; not input validation
    return Export(collection.name, collection.path, collection.database_label, collection.window_gap_minutes,
                  collection.format or "", collection.date_order,
                  include_spam_and_trash=collection.include_spam_and_trash)


def detect_format(collection: CollectionConfig) -> str | None:
    """The configured format, or the one format whose reader recognises the export.

    Returns None when the path does not exist (a WARN at load, like a missing
    database); raises ConfigError for an unknown format name, or a path that no
    format, or more than one, recognises.
    """
    where = f"collection '{collection.name}'"
    if collection.format is not None:
        if collection.format not in FORMATS:
            hint = did_you_mean(collection.format, FORMATS)
            raise ConfigError(f"{where}: unknown format '{collection.format}'{hint} (formats: {format_list()})")
        return collection.format
    if collection.path is None or not collection.path.exists():
        return None
    matches = recognising_formats(collection)
    if len(matches) == 1:
        return matches[0]
    html = None if matches else why_unrecognised(open_export(collection))
    if html is not None:
        raise ConfigError(f"{where}: cannot tell the format of {collection.path}: {html}")
    found = f"it looks like {' and '.join(matches)}" if matches else "no format recognises it"
    raise ConfigError(f"{where}: cannot tell the format of {collection.path}: {found}; set format = \"...\" "
                      f"in its [[collections]] table (formats: {format_list()})")


def recognising_formats(collection: CollectionConfig) -> list[str]:
    """The formats whose reader recognises the export from its content (``vecbook add`` asks
    for ``--format`` when there are several)."""
    export = open_export(collection)
    with export.reading():
        return [name for name in FORMATS if detects(name, export)]


def detects(name: str, export: Export) -> bool:
    """Whether format ``name``'s reader recognises ``export`` (a detector that fails says no)."""
    try:
        return bool(reader(name).detect(export))
    except Exception as exc:  # noqa: BLE001 - a detector must never stop start-up
        log.debug("format %s: detection failed on %s (%s)", name, export.path, exc)
        return False


def load_export(collection: CollectionConfig) -> tuple[list[Record], list[Problem], dict[str, Any]]:
    """Records of one export collection, its problems, and facts for ``stats``; never raises
    for the export's content (a reader's failure is a WARN, the rest of the sources load)."""
    where = f"collection '{collection.name}'"
    label = collection.database_label
    if collection.path is None or not collection.path.exists():
        return [], [Problem(label, None, f"{where}: export not found ({collection.path})")], {}
    format_name = detect_format(collection)
    assert format_name is not None  # the path exists
    export = open_export(collection)
    export.format = format_name
    try:
        with export.reading():
            records = list(reader(format_name).read(export))
    except Exception as exc:  # noqa: BLE001 - a reader bug must not stop start-up
        log.debug("reader %s failed", format_name, exc_info=True)
        export.warn(None, None, f"the {format_name} reader failed ({type(exc).__name__}: {exc}); "
                                f"records read before the failure are lost")
        records = []
    if not records and not any(p.skipped for p in export.problems):  # (a skipped file's WARN says why already)
        export.warn(None, None, f"nothing read from {collection.path}: {_why_nothing(export, collection.format)}")
    return records, export.problems, {"path": label, "format": format_name, "files": len(export.files())}


def _why_nothing(export: Export, forced: str | None) -> str:
    """Why an export gave no record, for its WARN: empty, not the format it was said to be
    (and what it looks like), or the first problem its reader found."""
    files = export.files()
    if not files:
        return "the export holds no file"
    if all(f.size == 0 for f in files):
        return "the file is empty" if len(files) == 1 else f"its {len(files)} files are empty"
    if forced is not None and not detects(forced, export):
        others = [name for name in FORMATS if name != forced and detects(name, export)]
        looks = f"it looks like {' or '.join(others)}: name that format, or none (VecBook tells it by its content)" \
            if others else (why_unrecognised(export) or "no format VecBook reads recognises it")
        return f"not a {forced} export ({FORMATS[forced][1]}); {looks}"
    found = [p.reason.split(": ", 1)[-1] for p in export.problems]
    return f"{found[0]}" if found else f"no {export.format} messages or items found in it"
