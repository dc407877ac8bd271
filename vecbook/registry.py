"""The sources a config file lists: what ``vecbook add`` finds in a path before it registers it
(format, records, date range, participants, problems) and the summary ``sources`` shows; the edits
of ``add`` and ``remove`` are ``config_edits``'."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .config import (
    COLLECTION_NAME_RE,
    COLLECTION_NAME_RULE,
    CollectionConfig,
    Config,
    ConfigError,
    counted,
    did_you_mean,
    load_config,
)
from .exports import FORMATS, format_list, open_export, reader, recognising_formats, why_unrecognised
from .exports.left_out import add_line
from .exports.notes import describe_kinds, holds_notes
from .exports.outlook_files import outlook_advice
from .exports.read_once import CHAT_FORMATS, window_key
from .records import Problem, Record
from .snippets import date_days
from .source_counts import chat_facts, chats_by_source
from .tokens import fold
from .sources import (DATA_SOURCE, NOTES_FORMATS, LoadReport, is_notes_folder, load_collection, load_export,
                      other_sources)
from .told import cache_directory_of
from .sqlite_tables import date_warnings, joplin_profile_name, known_app, other_profiles, profile_database, sqlite_table

# What ``--format`` accepts besides the export formats: a SQLite database of rows.
SQLITE = "sqlite"
# Chat exports people export again months later and may add apart: add reads the sources of the
# same format to say so (``exported_again``).
CHATS_EXPORTED_AGAIN = CHAT_FORMATS
SQLITE_MAGIC = b"SQLite format 3\x00"
# Participants shown by ``add``: the most frequent few (a group chat may have hundreds).
SHOWN_PARTICIPANTS = 8
# Problems shown by ``add``; the rest are counted.
SHOWN_PROBLEMS = 5


@dataclass
class SourceSummary:
    """What one source holds: shown by ``add`` before it writes, by ``sources`` and the MCP tool."""

    name: str
    format: str
    path: str
    records: int = 0
    windows: int | None = None  # the records that are a chat's conversation windows (``source_counts``)
    messages: int | None = None  # the chat messages in them; both None for a source without any
    first_date: str | None = None
    last_date: str | None = None
    participants: list[str] = field(default_factory=list)  # most frequent first
    problems: list[str] = field(default_factory=list)
    # What it leaves out on purpose (an app's trash, Spam), each saying the setting that keeps it.
    left_out: list[str] = field(default_factory=list)
    description: str = ""
    last_indexed: str | None = None  # when its records were last indexed (local time, to the minute)
    # A notes folder (the data directory too): its files by kind ("markdown", "text", an export's
    # format), and the files it does not read, by suffix; empty for other sources.
    kinds: dict[str, int] = field(default_factory=dict)
    not_read: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dataclasses.asdict(self)

    def lines(self) -> list[str]:
        """The summary as a person reads it, one fact a line."""
        lines = [f"format: {self.format}", f"path: {self.path}", f"records: {self.records}"]
        if self.windows:
            lines.append(f"messages: {self.messages} in {counted(self.windows, 'conversation window')}")
        if self.kinds or self.not_read:
            lines.append(f"files: {describe_kinds(self.kinds, self.not_read)}")
            lines += [f"  {advice}" for advice in outlook_advice(self.not_read)]
        if self.first_date:
            lines.append(f"dates: {self.first_date} to {self.last_date}")
        if self.participants:
            lines.append(f"participants: {', '.join(self.participants)}")
        if self.description:
            lines.append(f"description: {self.description}")
        lines += left_out_lines(self.left_out)
        if self.problems:
            shown = self.problems[:SHOWN_PROBLEMS]
            more = len(self.problems) - len(shown)
            lines.append(f"problems: {len(self.problems)}")
            lines += [f"  - {p}" for p in shown] + ([f"  - ... and {more} more"] if more else [])
        return lines


def left_out_lines(left_out: Sequence[str]) -> list[str]:
    """What a source leaves out on purpose, as ``add`` and ``sources`` say it: one thing on its
    line, several each on a line of its own."""
    if len(left_out) == 1:
        return [f"left out: {left_out[0]}"]
    return ["left out:", *(f"  - {item}" for item in left_out)] if left_out else []


def summarize(name: str, format_name: str, path: str, records: Sequence[Record],
              problems: Sequence[Problem | str], description: str = "",
              facts: dict[str, Any] | None = None, in_folder: bool = False) -> SourceSummary:
    """Count the records of one source, their date range (``date``/``end_date`` metadata, any
    case) and their participants; a notes folder's ``facts`` give its files by kind (``in_folder``:
    the source is a folder, whose files what it left out names)."""
    days: list[str] = []
    people: Counter[str] = Counter()
    for record in records:
        for key, value in record.metadata.items():
            if key.lower() in ("date", "end_date") and isinstance(value, str) and not math.isnan(date_days(value)):
                days.append(value[:10])
            elif key.lower() == "participants":  # a .txt header keeps its case (Participants:), as filters read it
                people.update(a for a in ([value] if isinstance(value, str) else value or []) if isinstance(a, str))
    chats = chat_facts(chats_by_source(records))  # (records read for ``add`` may name no source yet)
    return SourceSummary(name=name, format=format_name, path=path, records=len(records), **chats,
                         first_date=min(days, default=None), last_date=max(days, default=None),
                         participants=[p for p, _ in people.most_common(SHOWN_PARTICIPANTS)],
                         problems=[str(p) for p in problems if not isinstance(p, Problem) or not p.left_out],
                         left_out=[_left_out(p, name, in_folder) for p in problems
                                   if isinstance(p, Problem) and p.left_out],
                         description=description,
                         kinds=dict((facts or {}).get("kinds", {})), not_read=dict((facts or {}).get("not_read", {})))


def _left_out(problem: Problem, name: str, in_folder: bool) -> str:
    """What a source left out, as said under its name: the reason alone (a collection's name, and
    a file that is the source itself, go without saying), a file of a folder named."""
    prefix = f"collection '{name}': "
    if not problem.reason.startswith(prefix):
        return str(problem)  # the data directory's: its file named
    reason = problem.reason.removeprefix(prefix)
    inner = problem.where.removeprefix(f"{name}/")
    at = f"{inner}:{problem.line}" if problem.line else inner
    return f"{at}: {reason}" if in_folder and inner != problem.where else reason


def summarize_report(config: Config, report: LoadReport) -> list[SourceSummary]:
    """Each source of ``config`` as ``report`` (a build's read) found it: the data directory's
    ``files`` first (when there is one), then every collection with its description."""
    by_source: dict[str, list[Record]] = {}
    for record in report.records:
        by_source.setdefault(record.source, []).append(record)
    found = []
    if config.data_directory is not None:
        problems = [p for p in report.problems if not p.reason.startswith("collection '")]
        found.append(summarize(DATA_SOURCE, "notes", str(config.data_directory), by_source.get(DATA_SOURCE, []),
                               problems, "the data directory's notes, records and exports", report.data_directory))
    for collection in config.collections:
        facts = report.collections.get(collection.name, {})
        fmt = facts.get("format") or collection.format or ("sqlite" if collection.database else "?")
        found.append(summarize(collection.name, fmt, collection.database_label,
                               by_source.get(collection.name, []), facts.get("problems", []),
                               collection.description, facts))
        prefix = f"collection '{collection.name}': "
        in_folder = collection.path is not None and collection.path.is_dir()
        found[-1].left_out = [_left_out(p, collection.name, in_folder) for p in report.problems
                              if p.left_out and p.reason.startswith(prefix)]
    for summary in found:
        read_at = report.read_at.get(summary.name)
        summary.last_indexed = local_minute(read_at / 1e9) if read_at is not None else None
    return found


def local_minute(seconds: float) -> str:
    """A moment as local time to the minute, ``2024-05-02 14:05``."""
    from datetime import datetime

    return datetime.fromtimestamp(seconds).isoformat(" ", "minutes")


def derive_name(path: Path, format_name: str | None = None) -> str:
    """A collection name from the name the export gives itself, where its format has one (a
    Telegram chat's name: every Telegram export is a ``result.json``), else from the file or
    folder name: ``WhatsApp Chat with Family.txt`` -> ``whatsapp-chat-with-family``, ``Familia
    Peña.txt`` -> ``familia-pena`` (accents folded). A name in another script is spelled in
    Latin letters (anyascii): ``Чат с мамой.txt`` -> ``chat-s-mamoy``, ``微信.zip`` -> ``weixin``,
    so a Telegram chat named ``Семья`` is ``semya``, not its file's ``result``. One with nothing
    to spell (``★.txt``) becomes ``source-`` and a short hash of the path."""
    for given in (_suggested_name(path, format_name), path.name if path.is_dir() else path.stem):
        name = _name_of(given or "")
        if name:
            return name
    return "source-" + hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:6]


def _name_of(given: str) -> str:
    """``given`` as a collection name: its letters and digits, accents folded and those of another
    script spelled in Latin letters (``WhatsApp Chat with Мама`` -> ``whatsapp-chat-with-mama``,
    ``Семья 2023`` -> ``semya-2023``, not ``whatsapp-chat-with`` and ``2023``, which every such
    chat would share); a symbol (an emoji, ``★``) says nothing; "" when nothing is left."""
    folded = fold(given.lower())
    if not folded.isascii():
        from anyascii import anyascii  # only naming a new source needs it

        # (its ' and ` mark a soft sign or a glottal stop inside a word: Sem'ya is one word)
        folded = "".join(char if char.isascii() else re.sub(r"['`]", "", anyascii(char))
                         if unicodedata.category(char)[0] in "LMN" else " " for char in folded)
    return _slug(folded.lower())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text).strip("-_")[:64].strip("-_")


def _suggested_name(path: Path, format_name: str | None) -> str | None:
    """The name an export of ``format_name`` gives itself (its reader's ``suggested_name``), if any."""
    if format_name not in FORMATS:
        return None
    suggest = getattr(reader(format_name), "suggested_name", None)
    if suggest is None:
        return None
    return suggest(open_export(CollectionConfig(name="source", path=path, database_label=str(path))))


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a file (a database may be gigabytes: not read whole)."""
    with open(path, "rb") as handle:
        return handle.read(size)


def check_name(name: str, taken: Sequence[str], config_file: Path) -> str:
    """A usable new name, or ConfigError: the naming rule (with the name it allows, spelled as
    one taken from a file's: ``Family Chat`` -> ``family-chat``), 'files', or one the config
    already has."""
    if not COLLECTION_NAME_RE.match(name):
        spelled = _name_of(name)
        would_do = f": --name {spelled} would do" if spelled else ""
        raise ConfigError(f"source name {name!r} is not allowed: use {COLLECTION_NAME_RULE}{would_do}")
    if name == "files" or name in taken:
        why = "it names the data folder's notes" if name == "files" else f"in {config_file}"
        raise ConfigError(f"a source named '{name}' already exists ({why}); choose another with --name")
    return name


def check_not_added(path: Path, table: str | None, query: str | None, config: Config | None,
                    config_file: Path) -> None:
    """ConfigError when the config already searches this file or folder, as a source (for a
    database: this table or query) or as its data folder: every record would come back twice."""
    if config is None:
        return
    if config.data_directory is not None and Path(config.data_directory).resolve() == path:
        raise ConfigError(f"{path} is the data folder of {config_file}: its notes are searched already")
    for collection in config.collections:
        where = collection.database or collection.path
        if where is not None and where.resolve() == path and (collection.table, collection.query) == (table, query):
            what = f"table '{table}' of {path}" if table else str(path)
            # (one --format cannot add a folder's other kind: a notes folder reads every kind already)
            reads = ", which reads every kind of file in it (.md notes, .txt records, the exports inside)" \
                if is_notes_folder(collection) else ""
            raise ConfigError(f"{what} is already added as '{collection.name}' (in {config_file}){reads}; "
                              f"`vecbook remove {collection.name}` first to add it again")


def overlaps(path: Path, config: Config | None, notes: bool = False) -> list[str]:
    """What a new source at ``path`` shares with those the config has: a file or folder it lies
    inside, or one it holds (whose records both would read, so every one comes back twice).
    The data folder and notes folders (``notes``: the new source is one) leave out the paths
    of other sources (each is read by its own reader), so they overlap nothing."""
    if config is None or notes:
        return []
    found = []
    if config.data_directory is not None and _inside(Path(config.data_directory).resolve(), path):
        found.append(f"{path} holds the data folder {config.data_directory}: its notes will be searched twice")
    for collection in config.collections:
        where = collection.path or collection.database
        if where is None or is_notes_folder(collection):
            continue
        where = where.resolve()
        if _inside(path, where):
            found.append(f"{path} lies inside '{collection.name}' ({where}), which reads it already: its records "
                         f"will be searched twice (`vecbook remove {collection.name}` to keep the new source alone)")
        elif _inside(where, path):
            found.append(f"{path} holds '{collection.name}' ({where}), already added: its records will be searched "
                         f"twice (`vecbook remove {collection.name}` to keep the new source alone)")
    return found


def _inside(inner: Path, outer: Path) -> bool:
    """Whether ``inner`` lies inside the folder ``outer`` (not ``outer`` itself)."""
    return outer in inner.parents


def check_readable(path: Path) -> Path:
    """The path, absolute, or ConfigError when it does not exist or cannot be read."""
    if not path.exists():
        raise ConfigError(f"no such file or folder: {path}")
    folder = path.is_dir()
    if not os.access(path, os.R_OK | (os.X_OK if folder else 0)):
        raise ConfigError(f"cannot read {path}: permission denied")
    if not folder:
        try:
            with open(path, "rb") as handle:
                handle.read(1)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    return path.resolve()


def choose_format(path: Path, name: str, wanted: str | None) -> str:
    """``--format`` checked against the known ones, else the format read from the content: a
    folder that holds notes (a ``.md``, or a ``.txt`` no export format claims) or the exports of
    several formats is ``notes``, read file by file; else the export format that recognises it,
    SQLite for a database, or ``text`` for a ``.txt`` file; ConfigError listing the formats when
    none fits, or several claim a file."""
    choices = f"formats: {format_list()}; {SQLITE} (a SQLite database of rows)"
    if wanted is not None:
        wanted = wanted.lower()
        if wanted != SQLITE and wanted not in FORMATS:
            hint = did_you_mean(wanted, [*FORMATS, SQLITE])
            # a near miss needs the names alone; a name from nowhere, what each format reads
            listed = f"formats: {', '.join([*FORMATS, SQLITE])}" if hint else choices
            raise ConfigError(f"unknown format '{wanted}'{hint} ({listed})")
        # a folder said to be Markdown notes or text records is read as notes: every kind in it
        return "notes" if wanted in NOTES_FORMATS and path.is_dir() else wanted
    if path.is_dir() and holds_notes(path):
        return "notes"
    claimed = recognising_formats(CollectionConfig(name=name, path=path, database_label=str(path)))
    if len(claimed) > 1 and path.is_dir():
        return "notes"  # a folder of several apps' exports: each file is read by its own reader
    if len(claimed) > 1:
        raise ConfigError(f"cannot tell the format of {path}: it looks like {' and '.join(claimed)}; "
                          f"pass --format ({choices})")
    if claimed:
        return claimed[0]
    if path.is_file() and _head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC:
        return SQLITE
    if path.suffix.lower() == ".txt":
        return "text"  # .txt records, as in the data directory
    html = why_unrecognised(open_export(CollectionConfig(name=name, path=path, database_label=str(path))))
    if html is not None:  # an archive it cannot open, a chat app's HTML export: --format would not help
        raise ConfigError(f"cannot tell what {path} is: {html}")
    raise ConfigError(f"cannot tell what {path} is: no format recognises it; pass --format ({choices})")


@dataclass
class NewSource:
    """A source ``add`` is about to write: its config table and what reading it found."""

    table: dict[str, Any]
    summary: SourceSummary
    warnings: list[str] = field(default_factory=list)  # what ``add`` says before it writes (see ``overlaps``)
    said: list[str] = field(default_factory=list)  # what ``add`` read instead of the path given (``_in_profile``)
    path: Path | None = None  # the file, folder or database read
    cache_directory: Path | None = None  # the cache folder of the config ``add`` writes

    def remember_problems(self, config_file: Path) -> None:
        """Keep the problems ``add`` listed (``told``): the first read into the index says them no more."""
        from .told import remember

        if self.path is not None:
            remember(self.cache_directory, config_file, self.summary.name, self.path,
                     self.summary.problems[:SHOWN_PROBLEMS])


def inspect(path_text: str, config_file: Path, name: str | None = None, format_name: str | None = None,
            description: str | None = None, table: str | None = None, text_column: str | None = None,
            date_column: str | None = None) -> NewSource:
    """Read the source at ``path_text`` as ``add`` would register it; ConfigError (and nothing
    written) for a path that is missing or unreadable, an unknown format, a name in use, or a
    config file that is not valid TOML."""
    config = checked_config(config_file) if config_file.is_file() else None
    taken = [c.name for c in config.collections] if config is not None else []
    path = check_readable(Path(path_text).expanduser().absolute())
    path, app, said = _in_profile(path, format_name)
    if format_name is None:
        check_not_app_folder(path)
    check_not_added(path, None, None, config, config_file)  # before any name: an export or folder added already
    if name is not None:
        name = check_name(name, taken, config_file)  # a bad name is refused before the path is read
    chosen = choose_format(path, name or "source", format_name)
    if (table or text_column or date_column) and chosen != SQLITE:
        raise ConfigError(f"--table, --text-column and --date-column apply to a SQLite database; {path} is {chosen}")
    picked_table, query = sqlite_table(path, table, text_column, date_column) if chosen == SQLITE else (None, None)
    # (a database's table) before the name from the path: the same `add` twice hears it is there already
    check_not_added(path, picked_table, query, config, config_file)
    if name is None:
        name = check_name(_name_of(app or "") or derive_name(path, chosen), taken, config_file)
    label = _path_for(path, config_file)
    entry: dict[str, Any] = {"name": name}
    if chosen == SQLITE:
        entry["database"] = label
        entry.update({"table": picked_table} if picked_table else {"query": query})
        collection = CollectionConfig(name=name, database=path, database_label=label, table=picked_table,
                                      query=query)
        records, problems, _ = load_collection(collection)
        facts: dict[str, Any] = {}
    else:
        entry["path"] = label
        entry["format"] = chosen  # written, not detected again at each start
        collection = CollectionConfig(name=name, path=path, database_label=label, format=chosen)
        records, problems, facts = load_export(collection, other_sources(config, name) if config else [])
    if not records:
        raise ConfigError(f"nothing to search in {path}: {why_empty(problems, name, path, label)}; nothing was added"
                          f"{_by_hand(entry, problems, config_file)}")
    if description:
        entry["description"] = description
    dateless = date_warnings(query, records, config_file, name, date_column)
    return NewSource(entry, summarize(name, facts.get("format", chosen), label, records, problems, description or "",
                                      facts, path.is_dir()), overlaps(path, config, notes=chosen == "notes")
                     + exported_again(path, name, chosen, records, config) + dateless, said, path,
                     cache_directory_of(config))


def exported_again(path: Path, name: str, chosen: str, records: Sequence[Record], config: Config | None) -> list[str]:
    """A warning for each source of the same chat format holding conversation windows the new
    one holds too: the same chat exported again (June's beside March's) and added apart, whose
    messages both would search and count. (In one folder, one source, each is read once.)"""
    if config is None or chosen not in CHATS_EXPORTED_AGAIN:
        return []
    found = []
    for collection in config.collections:
        where = collection.path.resolve() if collection.path is not None else None
        if collection.format != chosen or where is None or _inside(path, where) or _inside(where, path):
            continue  # (a path inside the other, or holding it: ``overlaps`` says so)
        try:
            theirs = {window_key(record) for record in load_export(collection)[0]}
        except (ConfigError, OSError):  # a source that cannot be read now says so when it is searched
            continue
        if shared := sum(window_key(record) in theirs for record in records):
            found.append(f"{path} holds the chat '{collection.name}' holds, exported again ({shared} of its "
                         f"{len(records)} conversation windows are there too): their messages will be searched "
                         f"and counted twice; to read each once, put both exports in one folder and add it "
                         f"(`vecbook remove {collection.name}` and `vecbook remove {name}` first)")
    return found


def _in_profile(path: Path, format_name: str | None) -> tuple[Path, str | None, list[str]]:
    """(path to read, app, what to say): the database of a note app's profile folder (Joplin's
    ``~/.config/joplin-desktop``, Bear's ``Application Data``), named by its app, whose logs and
    settings read as notes were the source's records and its notes none; the path given else (the
    database of such an app named by it too: ``database``, ``collection`` (Anki's) and ``metadata``
    (Calibre's) say nothing)."""
    if path.is_dir() and format_name in (None, SQLITE) and (found := profile_database(path)) is not None:
        said = [f"{path} is {found[1]}'s profile folder: its notes are in {found[0]}, which is added"]
        said += [f"it holds {found[1]}'s profile '{name}' too, not added: `{add_line(folder)}` adds it"
                 for name, folder in other_profiles(path)]
        return found[0], _profile_app(found[1], path), said
    app = known_app(path) if path.is_file() and _head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC else None
    return path, _profile_app(app, path.parent) if app else None, []


def _profile_app(app: str, folder: Path) -> str:
    """The app as a source is named after it: a Joplin profile other than the first with its name
    too (``Joplin Work``, so ``joplin-work``), as the first's source is ``joplin``."""
    name = joplin_profile_name(folder)
    return f"{app} {name}" if name else app


# The folders a notes app keeps inside the notes folder it opens, by name, with a file each always
# holds and what they are: settings, not notes (Logseq's holds backups of pages, with older text).
APP_FOLDERS = {".obsidian": ("app.json", "Obsidian's settings folder"),
               "logseq": ("config.edn", "Logseq's folder of its config and page backups")}


def check_not_app_folder(path: Path) -> None:
    """ConfigError where ``path`` is the folder a notes app keeps inside a vault or graph (``.obsidian``,
    Logseq's ``logseq``), naming the notes folder to add: read, it is no notes, or old copies of them."""
    known = APP_FOLDERS.get(path.name)
    if known is not None and path.is_dir() and (path / known[0]).is_file():
        import shlex

        raise ConfigError(f"{path} is {known[1]}, not notes: add the notes folder holding it "
                          f"(vecbook add {shlex.quote(str(path.parent))}); nothing was added")


def _by_hand(entry: dict[str, Any], problems: Sequence[Problem], config_file: Path) -> str:
    """Where a source holds only what it leaves out on purpose (an app's trash, Spam), the table that
    reads it, to write by hand: ``add`` writes none for a source without a record, and the reason
    says to set the table's setting."""
    if not any(p.left_out for p in problems) or any(p.skipped and not p.left_out for p in problems):
        return ""
    setting = "keep_trashed" if "database" in entry else "include_spam_and_trash"
    fields = ", ".join(f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in entry.items())
    return (f", as it holds nothing else: to search it, write its table in {config_file} by hand "
            f"([[collections]] with {fields}, {setting} = true)")


def why_empty(problems: Sequence[Problem], name: str, path: Path, label: str) -> str:
    """What the reader found wrong with a source that gave no record, in one line: the first
    problem that skipped something (a file's own WARN), else the first at all, with the file
    inside the source and the line where known; a database table without rows says so."""
    if not problems:
        return "it holds no rows"
    problem = next((p for p in problems if p.skipped), problems[0])
    reason = problem.reason.removeprefix(f"collection '{name}': ").removeprefix(f"nothing read from {path}: ")
    reason = reason.removeprefix("file skipped: ")  # nothing of it was kept: that is what is said
    reason = f"left out: {reason}" if problem.left_out else reason  # (it names what, not that it was left out)
    file = problem.where.removeprefix(f"{name}/")
    where = [file] if problem.where not in (label, name) and not (path.is_file() and file == path.name) else []
    where += [f"line {problem.line}"] if problem.line and f"(line {problem.line}" not in reason else []
    return f"{reason} ({', '.join(where)})" if where else reason


def checked_config(config_file: Path) -> Config:
    """The config in ``config_file``, or ConfigError saying the file is left as it is."""
    try:
        return load_config(config_file)
    except ConfigError as exc:
        raise ConfigError(f"{exc} ({config_file} is left unchanged: fix it first)") from None


def _path_for(path: Path, config_file: Path) -> str:
    """The path as written in the config: relative to its folder when inside it, else absolute."""
    try:
        return path.relative_to(config_file.parent.absolute()).as_posix()
    except ValueError:
        return str(path)
