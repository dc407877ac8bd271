"""Sources: the data directory and notes folders read file by file (``exports/notes``), rows of
read-only SQLite collections, and exports read in place (``exports/``); what changed since the
last read, so that only that is read again."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .config import CollectionConfig, Config, ConfigError, RecordError
from .exports import detect_format
from .exports import load_export as load_whole_export
from .exports import joplin, logseq
from .exports.base import still_unreadable
from .exports.notes import (MARKDOWN, OTHER, TEXT, Folder, Listing, describe_kinds, extension, list_files,
                            read_file)
from .exports.read_once import read_twice
from .os_paths import os_path
from .records import Problem, Record
from .settling import settled
from .sqlite_rows import rows_to_records
from .told import already_told
from .source_checks import check_sources  # noqa: F401 - book's, from here
# Re-exported: what the last read found and the block keys lived here before they had a module.
from .source_state import (COLLECTION_KEY, DATA_SOURCE, FILE_KEY, NOTES_KEY, Entry, Signature,  # noqa: F401
                           SourceState, block_source, file_signature, kept_while_missing, same_read,
                           tree_signature)
# Re-exported: they lived here before the export readers needed them too.
from . import sqlite_ro
from .sqlite_ro import SQLITE_BUSY_TIMEOUT_SECONDS, _is_wal, open_readonly  # noqa: F401
from .sqlite_ro import BUSY_MESSAGES

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


# Formats whose collection, when its path is a folder, is a notes folder read file by file: the
# two ``vecbook add`` wrote for notes folders before it wrote "notes" keep working, now reading
# every kind of file the folder holds.
NOTES_FORMATS = frozenset({"notes", "markdown", "text"})



@dataclass
class LoadReport:
    """Everything read from the sources, plus what went wrong where."""

    records: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    outside_links: list[str] = field(default_factory=list)
    # The files outside the data directory and notes folders that links in them lead to
    # (absolute): the watcher watches them where they lie.
    linked_files: set[str] = field(default_factory=set)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    files_read: int = 0  # files (and collections) actually read this time; the rest were unchanged
    collections_read: int = 0
    new_problems: list[Problem] = field(default_factory=list)  # found by this read: logged as WARNs
    known_problems: int = 0  # those of sources restored from the keyword cache, warned about when read
    # ``records`` by block key (see FILE_KEY), in order. An unchanged source keeps the very list
    # the last read made, so a build can carry everything made from it.
    blocks: list[tuple[str, list[Record]]] = field(default_factory=list)
    # The data directory's files by kind and the files it does not read, by suffix (as a notes
    # collection's facts have them).
    data_directory: dict[str, Any] = field(default_factory=dict)
    # When each source's records were last indexed (ns since the epoch; for the data
    # directory's ``files``, the latest of its files): by source name.
    read_at: dict[str, int] = field(default_factory=dict)

    def counts_by_source(self) -> Counter[str]:
        """Records per source ("files" or a collection's name), a block at a time: the
        records of one block share their source."""
        if not self.blocks:
            return Counter(r.source for r in self.records)
        counts: Counter[str] = Counter()
        for key, records in self.blocks:
            if records:
                counts[block_source(key)] += len(records)
        return counts

    def removed_since(self, earlier: LoadReport) -> int:
        """How many of ``earlier``'s record ids are gone, comparing only the blocks that differ
        (a block read again is a new list; an unchanged one is the same list in both)."""
        now = dict(self.blocks)
        before = dict(earlier.blocks)
        gone = {r.id for key, records in earlier.blocks if now.get(key) is not records for r in records}
        came = {r.id for key, records in self.blocks if before.get(key) is not records for r in records}
        return len(gone - came)


def discover_files(root: Path, exclude: Sequence[Path] = ()) -> tuple[list[tuple[str, Path]], list[Problem], list[str]]:
    """The files of the data directory to read (notes, records, exports: see ``exports.notes``),
    in sorted order, following symlinks, but those in ``exclude`` (sources read by their own
    reader). Returns (relative path, path) pairs, problems, and the links that point outside."""
    listing = list_files(Folder(DATA_SOURCE, root), exclude)
    return listing.files, listing.problems, listing.outside


def load_file(rel: str, path: Path) -> tuple[list[Record], list[Problem]]:
    """Read one file of the data directory by its kind (a ``.txt`` as records, a ``.md`` note, an
    export); any failure is a Problem, never an exception."""
    records, problems, _ = read_file(Folder(DATA_SOURCE, path.parent), rel, path)
    return records, problems


def load_directory(root: Path | None, state: SourceState | None = None,
                   exclude: Sequence[Path] = ()) -> LoadReport:
    """Every record of every file under root (none when root is None) but those in ``exclude``;
    with ``state``, files whose signature is unchanged since the last read are taken from it,
    and ``state`` is updated to what this read found."""
    report = LoadReport()
    state = state if state is not None else SourceState()
    read_at = {key: at for key, at in state.read_at.items() if not key.startswith(FILE_KEY)}
    unsettled = {key for key in state.unsettled if not key.startswith(FILE_KEY)}
    if root is not None:
        folder = Folder(DATA_SOURCE, root)
        listing = list_files(folder, exclude)
        report.outside_links = listing.outside
        report.linked_files.update(map(str, listing.linked_files))
        state.files, facts = _read_folder(folder, listing, state.files, FILE_KEY, state, report, read_at, unsettled)
        report.files = sum(facts["kinds"].values())
        report.data_directory = facts
        if listing.files:
            report.read_at[DATA_SOURCE] = max(read_at[FILE_KEY + rel] for rel, _ in listing.files)
    else:
        state.files = {}
    state.read_at, state.unsettled = read_at, unsettled
    return report


def _none_read(facts: dict[str, Any]) -> str:
    """Why a notes folder gave no record: its notes hold no text, or it holds none."""
    kinds: dict[str, int] = facts["kinds"]
    if not kinds:
        return "it holds no notes (.md, .txt) and no export VecBook reads"
    heading = " (a heading alone makes no record)" if MARKDOWN in kinds else ""
    return f"its {describe_kinds(kinds, {})} {'holds' if sum(kinds.values()) == 1 else 'hold'} no text{heading}"


def _read_folder(folder: Folder, listing: Listing, before: dict[str, Entry], prefix: str, state: SourceState,
                 report: LoadReport, read_at: dict[str, int],
                 unsettled: set[str]) -> tuple[dict[str, Entry], dict[str, Any]]:
    """Each file of a notes folder, taken from ``before`` where its signature is unchanged (and
    was settled when read), else read again by its kind; adds them to ``report`` (one block a
    file, keyed ``prefix + path``) and the keys of files not settled now to ``unsettled``.
    Returns the entries now, and the folder's facts (files by kind, files not read by suffix)."""
    now: dict[str, Entry] = {}
    kinds: Counter[str] = Counter()
    not_read = Counter(listing.others)
    started = time.time_ns()
    report.problems.extend(listing.problems)
    mark, first_block = len(report.new_problems), len(report.blocks)
    # Taken before reading: a write during the read shows next time. A plain file's is the
    # listing's own lstat (the same fields as a stat: it is no link); a link's, an export
    # folder's and a lone file's are read here.
    signatures = {rel: _signature_of(listing, rel, path) for rel, path in listing.files}
    opens = opens_now(folder.label_prefix, folder.root)
    fresh = {rel: _read_entry(folder, rel, path, signatures[rel]) for rel, path in listing.files
             if state.must_read(prefix + rel, before.get(rel), signatures[rel], opens)}
    if _block_ids_changed(fresh, before, {rel for rel, _ in listing.files}):
        # A Logseq page shows the text of the blocks it references, held by other notes: read again
        # with theirs (it was kept, unchanged, with a block's former text)
        fresh.update({rel: _read_entry(folder, rel, path, signatures[rel]) for rel, path in listing.files
                      if rel not in fresh and _facts(before.get(rel)).get("block_refs")})
    for rel, path in listing.files:
        key, signature, entry = prefix + rel, signatures[rel], before.get(rel)
        read = fresh.get(rel)
        if read is not None:
            if not same_read(entry, read):
                entry = read
                report.files_read += 1
                report.new_problems.extend(read[2])
                read_at[key] = state.read_now(key, signature, started)
        elif state.announce:
            report.known_problems += faults(entry[2])  # type: ignore[index]  # must_read: entry is there
        if not settled(signature, started):
            unsettled.add(key)
        assert entry is not None  # read above, or taken from ``before``; not input validation
        now[rel] = entry
        read_at.setdefault(key, state.read_at.get(key, started))
        report.records.extend(entry[1])
        report.blocks.append((key, entry[1]))
        report.problems.extend(entry[2])
        kind = entry[3]["kind"] if len(entry) > 3 else TEXT
        if kind == OTHER:
            not_read[extension(path)] += 1
        else:
            kinds[kind] += 1
    # The folder's own problems (an unreadable folder, a broken link) are told when its files change.
    if now.keys() != before.keys() or any(now[rel] is not before.get(rel) for rel in now):
        report.new_problems[mark:mark] = listing.problems
    changed = {rel for rel in now if now[rel] is not before.get(rel)}
    _read_twice(folder, report, report.blocks[first_block:], prefix, changed)
    return now, {"kinds": dict(kinds), "not_read": dict(not_read)}


def _read_twice(folder: Folder, report: LoadReport, blocks: list[tuple[str, list[Record]]], prefix: str,
                changed: set[str]) -> None:
    """A WARN for each chat exported twice in a notes folder (``read_twice``): each file is read on its
    own, so both are searched; told again when either file changed since the last read."""
    for older, newer, shared, total in read_twice(blocks, prefix):
        rel, other = older[len(prefix):], newer[len(prefix):]
        problem = folder.problem(rel, f"the same chat as '{other}', exported again ({shared} of its {total} "
                                      "conversation windows are there too): this folder reads each file on its own, "
                                      "so their messages are searched and counted twice; to read each once, move "
                                      "both into a folder of their own and add it (`vecbook add FOLDER`)")
        report.problems.append(problem)
        if rel in changed or other in changed:
            report.new_problems.append(problem)


def _signature_of(listing: Listing, rel: str, path: Path) -> Signature | None:
    signature = listing.signatures.get(rel)
    return signature if signature is not None else tree_signature(path) if path.is_dir() else file_signature(path)


def _read_entry(folder: Folder, rel: str, path: Path, signature: Signature | None) -> Entry:
    """The entry of one file of a notes folder read now: its records, problems and facts (its kind;
    for a Logseq note, whether it shows others' blocks, ``block_refs``, or names blocks, ``block_ids``;
    a Joplin RAW note in its notebook's path, and a notebook item, alike)."""
    records, problems, kind = read_file(folder, rel, path)
    facts: dict[str, Any] = {"kind": kind}
    # (a Joplin RAW note shows its notebooks' titles as a Logseq page shows others' blocks: read again alike)
    shows, held = (logseq.REFERRERS, joplin.FILED_NOTES), (logseq.HOLDERS, joplin.NOTEBOOK_ITEMS)
    facts.update({"block_refs": True} if any(rel in folder.shared.get(key, ()) for key in shows) else {})
    facts.update({"block_ids": True} if any(rel in folder.shared.get(key, ()) for key in held) else {})
    return (signature, records, problems, facts)


def _facts(entry: Entry | None) -> dict[str, Any]:
    return entry[3] if entry is not None and len(entry) > 3 else {}  # type: ignore[misc]


def _block_ids_changed(fresh: dict[str, Entry], before: dict[str, Entry], listed: set[str]) -> bool:
    """Whether a note naming blocks (``block_ids``) was read again, came or went: the blocks that
    Logseq pages reference may read otherwise."""
    return (any(_facts(entry).get("block_ids") or _facts(before.get(rel)).get("block_ids")
                for rel, entry in fresh.items())
            or any(_facts(entry).get("block_ids") for rel, entry in before.items() if rel not in listed))


# Whitespace and SQL comments that may come before the statement's first keyword.
_LEADING_SQL_COMMENTS = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)


def check_select(sql: str, where: str) -> str:
    """Accept exactly one SELECT (or WITH ... SELECT) statement; return it without a trailing ';'."""
    statement = sql.strip().rstrip(";").strip()
    # complete_statement skips quotes and comments: a ';' that already completes a
    # statement before the end means a second statement follows it.
    early_end = any(ch == ";" and sqlite3.complete_statement(statement[:i + 1]) for i, ch in enumerate(statement))
    if early_end or not sqlite3.complete_statement(statement + "\n;"):
        raise RecordError(f"{where}: 'query' must be a single SQL statement")
    first_keyword = statement[_LEADING_SQL_COMMENTS.match(statement).end():]
    if not re.match(r"(?is)^(select|with)\b", first_keyword):
        raise RecordError(f"{where}: 'query' must be a SELECT statement")
    return statement


def load_collection(collection: CollectionConfig) -> tuple[list[Record], list[Problem], int]:
    """Rows of one collection as records; returns (records, problems, rows skipped)."""
    where = f"collection '{collection.name}'"
    label = collection.database_label
    try:
        if collection.database is None or not collection.database.is_file():
            return [], [Problem(label, None, f"{where}: database file not found ({collection.database})")], 0
        if collection.query is not None:
            sql = check_select(collection.query, where)
        else:
            sql = f'SELECT * FROM "{(collection.table or "").replace(chr(34), chr(34) * 2)}"'
        connection = open_readonly(collection.database)
        try:
            try:
                cursor = connection.execute(sql)
                columns, rows = [d[0] for d in cursor.description], cursor.fetchall()
            except sqlite3.Error as exc:
                raise sqlite3.Error(_what_to_do(str(exc), connection)) from None
            # A query's rows are cited by the table its first column is read from (the id's, selected
            # first as `add` writes it), where a row can be looked up; none read: the source's name.
            cited = sqlite_ro.cited_table(connection) if collection.query else None
            return rows_to_records(collection, columns, rows, cited)
        finally:
            connection.close()
    except OSError as exc:  # e.g. a folder the user may not read (macOS: Full Disk Access)
        return [], [Problem(label, None, f"{where}: cannot read database: {exc.strerror or exc}")], 0
    except (sqlite3.Error, RecordError) as exc:
        message = str(exc).replace(f"{where}: ", "")
        return [], [Problem(label, None, f"{where}: {message}")], 0


def _what_to_do(message: str, connection: sqlite3.Connection) -> str:
    """SQLite's error ``message`` with what the user can do about it, where SQLite's words
    alone leave them guessing."""
    if message in BUSY_MESSAGES:  # a lock passes: the source is read again at the next read (``Problem.unread``)
        return sqlite_ro.busy(message, "the next search reads it again, or ")
    if message in sqlite_ro.UNREADABLE_ADVICE:
        return sqlite_ro.explained(message)
    if message.startswith("no such table"):
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return f"{message} (tables: {', '.join(tables) or 'none'})"
    return message


def check_collections(config: Config) -> None:
    """Fail fast on what no load could fix: an unknown export format, or an export whose
    format cannot be told (ConfigError listing the formats)."""
    for collection in config.collections:
        if collection.path is not None:
            detect_format(collection)


def load_sources(config: Config, state: SourceState | None = None) -> LoadReport:
    """Read the data directory and every collection; never raises for content problems.

    With ``state`` (kept by the caller between reads), unchanged files and
    collections are not read again, and only problems found by this read are
    logged: a known bad record is not warned about on every rebuild.
    """
    state = state if state is not None else SourceState()
    report = load_directory(config.data_directory, state, other_sources(config, None))
    now: dict[str, Entry] = {}
    notes: dict[str, dict[str, Entry]] = {}
    read_at = {key: at for key, at in state.read_at.items() if key.startswith(FILE_KEY)}
    unsettled = {key for key in state.unsettled if key.startswith(FILE_KEY)}
    started = time.time_ns()
    for collection in config.collections:
        if is_notes_folder(collection, state):
            notes[collection.name] = _load_notes(collection, other_sources(config, collection.name), state, report,
                                                 read_at, unsettled)
            continue
        key = COLLECTION_KEY + collection.name
        where = collection.path if collection.path is not None else collection.database
        signature = tree_signature(where)
        entry = state.collections.get(collection.name)
        gone, present = None, where is None or os.path.lexists(where)
        if present:
            state.missing.discard(collection.name)
        if not present and entry is not None:  # gone for now (an unmounted drive): kept as it was last read
            told = collection.name in state.missing
            gone = kept_while_missing(state, collection.name, collection.database_label, where, len(entry[1]))
            if not told:
                report.new_problems.append(gone)
        elif state.must_read(key, entry, signature, _files_open_now(collection)):
            read: Entry = (signature, *_load_one_collection(collection))
            if not same_read(entry, read):
                entry = read
                report.collections_read += 1
                report.new_problems.extend(entry[2])
                read_at[key] = state.read_now(key, signature, started)
        elif state.announce:
            report.known_problems += faults(entry[2])  # type: ignore[index]  # must_read: entry is there
        if not settled(signature, started):
            unsettled.add(key)
        assert entry is not None  # read above, or the last read's; not input validation
        now[collection.name] = entry
        report.read_at[collection.name] = read_at.setdefault(key, state.read_at.get(key, started))
        _, records, problems, facts = entry
        problems = problems + [gone] if gone is not None else problems
        report.records.extend(records)
        report.blocks.append((key, records))
        report.problems.extend(problems)
        report.collections[collection.name] = {**facts, "records": len(records), **told_apart(problems)}
    state.collections, state.notes, state.read_at, state.unsettled = now, notes, read_at, unsettled
    state.announce = False
    told = already_told(config.cache_directory, config.config_file, {
        c.name: c.path if c.path is not None else c.database for c in config.collections}) \
        if report.new_problems else set()
    for problem in report.new_problems:  # what a source leaves out on purpose is no fault to warn of
        if problem.left_out:  # (its reason names what, as `add` shows it under "left out:")
            log.info("left out: %s", problem)
        elif str(problem) in told:  # (`add` listed it, reading the same files)
            log.info("%s (listed by `vecbook add`)", problem)
        else:
            log.warning("%s", problem)
    if report.known_problems:
        log.info("%d problem%s reported when the unchanged sources were last read ('vecbook stats' lists them)",
                 report.known_problems, "" if report.known_problems == 1 else "s")
    return report


def told_apart(problems: Sequence[Problem]) -> dict[str, list[str]]:
    """A source's ``problems`` and what it ``left_out`` on purpose, by their reasons, as its facts hold them."""
    return {"problems": [p.reason for p in problems if not p.left_out],
            "left_out": [p.reason for p in problems if p.left_out]}


def faults(problems: Sequence[Problem]) -> int:
    """How many of ``problems`` are faults, not what a source leaves out on purpose."""
    return sum(not p.left_out for p in problems)


def opens_now(prefix: str, base: Path) -> Callable[[Problem], bool]:
    """Whether the file of a problem ``unread`` (cited ``prefix`` + its path under ``base``) opens
    now. One not found there (its name cited as ``\\xe9``, or gone) is not known to stay
    unreadable: its source is read again, as before this check."""
    def opens(problem: Problem) -> bool:
        if not problem.where.startswith(prefix):
            return True
        return not still_unreadable(os_path(base / problem.where[len(prefix):]))
    return opens


def _files_open_now(collection: CollectionConfig) -> Callable[[Problem], bool] | None:
    """``opens_now`` for an export read whole (its files cited ``<name>/<path inside it>``); None
    for a database, read again while a lock or a fault lasts, as before."""
    path = collection.path
    if path is None:
        return None
    return opens_now(f"{collection.name}/", path if os_path(path).is_dir() else path.parent)


def other_sources(config: Config, name: str | None) -> list[Path]:
    """The files and folders the sources of ``config`` read, but collection ``name``'s (None: the
    data directory's): a notes folder and the data directory leave them to their own readers,
    so each record is read once."""
    paths = [c.path if c.path is not None else c.database for c in config.collections if c.name != name]
    if name is not None and config.data_directory is not None:
        paths.append(config.data_directory)
    return [path for path in paths if path is not None]


def is_notes_folder(collection: CollectionConfig, state: SourceState | None = None) -> bool:
    """Whether a collection is a notes folder, read file by file: ``format = "notes"``, or a
    folder said (or, without ``format``, found) to be Markdown notes or text records."""
    path = collection.path
    if path is None:
        return False
    if collection.format is not None:
        return collection.format == "notes" or (collection.format in NOTES_FORMATS and path.is_dir())
    if state is not None and (collection.name in state.notes or collection.name in state.collections):
        return collection.name in state.notes  # detected at an earlier read: a folder is not walked at each
    try:
        return path.is_dir() and detect_format(collection) in NOTES_FORMATS
    except ConfigError:
        return False  # reading it whole says why


def load_export(collection: CollectionConfig, exclude: Sequence[Path] = ()) -> tuple[list[Record], list[Problem],
                                                                                  dict[str, Any]]:
    """The records of one ``path`` collection, its problems and its facts for ``stats``: an
    export read whole, a notes folder file by file, leaving out the other sources in ``exclude``
    (what ``vecbook add`` shows before it writes)."""
    if not is_notes_folder(collection):
        return load_whole_export(collection)
    report = LoadReport()
    _load_notes(collection, exclude, SourceState(), report, {}, set())
    facts = report.collections[collection.name]
    return report.records, report.problems, {k: v for k, v in facts.items() if k not in ("records", "problems")}


def _load_notes(collection: CollectionConfig, exclude: Sequence[Path], state: SourceState, report: LoadReport,
                read_at: dict[str, int], unsettled: set[str]) -> dict[str, Entry]:
    """A notes folder's files, each read again only when it changed (or had not settled), into
    ``report`` (one block a file); returns what each file gave."""
    assert collection.path is not None  # only path collections come here; not input validation
    name, root = collection.name, collection.path
    folder = Folder(name, root, f"{name}/", f"collection '{name}': ", collection.window_gap_minutes,
                    collection.date_order, collection.include_spam_and_trash)
    where = f"collection '{name}'"
    first, problems_before, read_before = len(report.records), len(report.problems), report.files_read
    before = state.notes.get(name, {})
    if root.exists():
        state.missing.discard(name)
        listing = list_files(folder, [p for p in exclude if p.resolve() != root.resolve()])
        report.linked_files.update(map(str, listing.linked_files))
    elif before:  # gone for now (an unmounted drive): its files are kept as they were last read
        told = name in state.missing
        gone = kept_while_missing(state, name, collection.database_label, root,
                                  sum(len(entry[1]) for entry in before.values()))
        listing = Listing(files=[(rel, root / rel) for rel in before],
                          signatures={rel: entry[0] for rel, entry in before.items()}, problems=[gone])
        if not told:
            report.new_problems.append(gone)
    else:
        listing = Listing(problems=[Problem(collection.database_label, None, f"{where}: folder not found ({root})")])
    entries, facts = _read_folder(folder, listing, before, f"{NOTES_KEY}{name}/", state, report,
                                  read_at, unsettled)
    records, problems = report.records[first:], report.problems[problems_before:]
    if not records and root.exists() and not any(p.skipped for p in problems):
        empty = Problem(collection.database_label, None, f"{where}: nothing read from {root}: {_none_read(facts)}")
        problems.append(empty)
        report.problems.append(empty)
        if report.files_read > read_before or name not in state.notes:
            report.new_problems.append(empty)
    times = [read_at[f"{NOTES_KEY}{name}/{rel}"] for rel in entries]
    if times:
        report.read_at[name] = max(times)
    report.collections[name] = {"path": collection.database_label, "format": "notes",
                                "files": sum(facts["kinds"].values()), **facts, "records": len(records),
                                **told_apart(problems)}
    return entries


def _load_one_collection(collection: CollectionConfig) -> tuple[list[Record], list[Problem], dict[str, Any]]:
    if collection.path is not None:
        return load_whole_export(collection)
    records, problems, skipped = load_collection(collection)
    return records, problems, {"database": collection.database_label, "skipped_rows": skipped}
