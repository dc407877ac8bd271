"""Sources: ``.txt`` files discovered under the data directory, rows of read-only SQLite collections,
and exports read in place (``exports/``)."""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .config import CONFIG_NAME, CollectionConfig, Config, ConfigError, RecordError, counted, user_config_file
from .exports import detect_format, load_export
from .exports.whatsapp import looks_like_chat
from .records import Problem, Record, read_record_file
# Re-exported: they lived here before the export readers needed them too.
from .sqlite_ro import SQLITE_BUSY_TIMEOUT_SECONDS, _is_wal, open_readonly  # noqa: F401

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


# Row metadata longer than this is not added to the embedded text: it is
# usually an id list or a blob of JSON, not words a person searches for.
MAX_EMBEDDED_METADATA_CHARS = 200


@dataclass
class LoadReport:
    """Everything read from the sources, plus what went wrong where."""

    records: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    outside_links: list[str] = field(default_factory=list)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    files_read: int = 0  # files (and collections) actually read this time; the rest were unchanged
    collections_read: int = 0
    new_problems: list[Problem] = field(default_factory=list)  # found by this read: logged as WARNs
    known_problems: int = 0  # those of sources restored from the keyword cache, warned about when read
    # ``records`` by source ("file:<path>", "collection:<name>"), in order. An unchanged source
    # keeps the very list the last read made, so a build can carry everything made from it.
    blocks: list[tuple[str, list[Record]]] = field(default_factory=list)
    # When each source's records were last indexed (ns since the epoch; for the data
    # directory's ``files``, the latest of its files): by source name.
    read_at: dict[str, int] = field(default_factory=dict)

    def counts_by_source(self) -> Counter[str]:
        """Records per source ("files" or a collection's name), a block at a time: the
        records of one block share their source."""
        if not self.blocks:
            return Counter(r.source for r in self.records)
        counts: Counter[str] = Counter()
        for _, records in self.blocks:
            if records:
                counts[records[0].source] += len(records)
        return counts

    def removed_since(self, earlier: LoadReport) -> int:
        """How many of ``earlier``'s record ids are gone, comparing only the blocks that differ
        (a block read again is a new list; an unchanged one is the same list in both)."""
        now = dict(self.blocks)
        before = dict(earlier.blocks)
        gone = {r.id for key, records in earlier.blocks if now.get(key) is not records for r in records}
        came = {r.id for key, records in self.blocks if before.get(key) is not records for r in records}
        return len(gone - came)


Signature = tuple[Any, ...]


@dataclass
class SourceState:
    """What the last read found, per file and per collection, with the signature it was
    read under (size, mtime, inode): an unchanged source is not read again."""

    files: dict[str, tuple[Signature, list[Record], list[Problem]]] = field(default_factory=dict)
    collections: dict[str, tuple[Signature, list[Record], list[Problem], dict[str, Any]]] = field(
        default_factory=dict)
    # Set when the state was restored from the keyword cache: the next read counts the problems
    # of sources it does not read again (warned about when they were read: once per change).
    announce: bool = False
    # When each source's current content was first read (ns since the epoch), by block key:
    # what ``sources`` shows as "last indexed". Kept in the keyword cache with the rest.
    read_at: dict[str, int] = field(default_factory=dict)
    # Each source's signature and read time from a keyword cache that other code or settings
    # made (unusable, but true about when): a source read again unchanged keeps its time.
    earlier: dict[str, tuple[Signature, int]] = field(default_factory=dict)

    def read_now(self, key: str, signature: Any, now: int) -> int:
        """The read time of source ``key`` read again now with ``signature``: its earlier
        time when an earlier read saw the same content, else ``now``."""
        earlier = self.earlier.get(key)
        return earlier[1] if earlier is not None and signature is not None and earlier[0] == signature else now


def file_signature(path: Path) -> Signature | None:
    """(size, mtime in ns, inode, device): changes whenever the file is written or replaced."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev


def tree_signature(path: Path) -> Signature:
    """Signatures of every file under ``path`` (or of ``path`` itself and its SQLite WAL);
    an unreadable path has none, and is read (and reported) every time."""
    try:
        is_folder = path.is_dir()
    except OSError:
        return (object(),)  # equal to nothing: read again, so the WARN stays true
    if not is_folder:
        return (file_signature(path), file_signature(Path(f"{path}-wal")))
    found = []
    for folder, dirs, names in os.walk(path, followlinks=True):
        dirs.sort()
        found += [(folder, name, file_signature(Path(folder, name))) for name in sorted(names)]
    return tuple(found)


def discover_files(root: Path, exclude: Sequence[Path] = ()) -> tuple[list[tuple[str, Path]], list[Problem], list[str]]:
    """All ``.txt`` files under root in sorted order, following symlinks (and zips holding a
    WhatsApp chat: not read, listed to say how to add them).

    A folder reached twice (a symlink loop) is walked once; a file reached
    twice is listed once; broken links and unreadable folders become Problems.
    The files and folders in ``exclude`` (collections read in their own format, such as a
    WhatsApp chat kept among the notes) are left out: each record is read once, by its reader.
    Returns (relative path, path) pairs, problems, and the relative paths of
    links that point outside ``root``.
    """
    real_root = root.resolve()
    files: list[tuple[str, Path]] = []
    problems: list[Problem] = []
    outside: list[str] = []
    excluded = {identity for identity in map(_identity, exclude) if identity is not None}
    seen_dirs: set[tuple[int, int]] = set(excluded)
    seen_files: set[tuple[int, int]] = set(excluded)

    def on_error(error: OSError) -> None:
        where = _relative(Path(error.filename or root), root)
        problems.append(Problem(where, None, f"cannot read folder: {error.strerror}"))

    for folder, dirs, names in os.walk(root, followlinks=True, onerror=on_error):
        here = Path(folder)
        identity = _identity(here)
        if identity is None or identity in seen_dirs:
            dirs[:] = []
            continue
        seen_dirs.add(identity)
        dirs.sort()
        for name in [d for d in dirs if (here / d).is_symlink()]:
            _note_link(here / name, root, real_root, outside)
        for name in sorted(names):
            path = here / name
            _collect_file(path, root, real_root, files, problems, outside, seen_files)
    files.sort(key=lambda item: item[0].split("/"))  # a folder's files and subfolders interleave by name
    return files, problems, outside


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _note_link(path: Path, root: Path, real_root: Path, outside: list[str]) -> None:
    target = path.resolve()
    if target != real_root and real_root not in target.parents:
        outside.append(_relative(path, root))


def _collect_file(path: Path, root: Path, real_root: Path, files: list[tuple[str, Path]],
                  problems: list[Problem], outside: list[str], seen: set[tuple[int, int]]) -> None:
    rel = _relative(path, root)
    if path.is_symlink():
        if not path.exists():
            problems.append(Problem(rel, None, "broken symbolic link skipped"))
            return
        if path.suffix.lower() == ".txt":
            _note_link(path, root, real_root, outside)
    if path.suffix.lower() != ".txt" and not (path.suffix.lower() == ".zip" and _zip_holds_a_chat(path)):
        return
    identity = _identity(path)
    if identity is None or not path.is_file():
        return
    if identity in seen:
        log.debug("%s is a second path to a file already indexed, or a collection; skipped", rel)
        return
    seen.add(identity)
    files.append((rel, path))


def load_file(rel: str, path: Path) -> tuple[list[Record], list[Problem]]:
    """Read and parse one record file; any failure is a Problem, never an exception. A chat
    export dropped among the records (a WhatsApp ``.txt``, read as records all the same, or
    its ``.zip``, not read) gets a hint: how to add it as the export it is."""
    if path.suffix.lower() == ".zip":  # listed only when it holds a WhatsApp chat
        return [], [Problem(rel, None, f"skipped: {_export_hint(path)}")]
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [Problem(rel, None, f"cannot read file: {exc.strerror or exc}")]
    records, problems = read_record_file(data, rel)
    if b"\x00" not in data and looks_like_chat(data[:65_536]):  # a binary file was skipped: no hint
        problems.append(Problem(rel, None, f"read as records: {_export_hint(path)}", skipped=False))
    return records, problems


def _export_hint(path: Path) -> str:
    """The hint for a chat export found among the records."""
    shown = str(path) if " " not in str(path) else f'"{path}"'
    return f"looks like a WhatsApp export: `vecbook add {shown}`"


def _zip_holds_a_chat(path: Path) -> bool:
    """Whether a zip's first ``.txt`` member looks like a WhatsApp chat (read in memory)."""
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(path) as archive:
            member = next((m for m in archive.infolist() if m.filename.lower().endswith(".txt")
                           and not m.filename.startswith("__MACOSX/")), None)
            if member is None:
                return False
            with archive.open(member) as handle:
                return looks_like_chat(handle.read(65_536))
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError, EOFError, zlib.error):
        return False  # RuntimeError: an encrypted member; EOFError, zlib.error: a damaged or cut-short one


def load_directory(root: Path | None, state: SourceState | None = None,
                   exclude: Sequence[Path] = ()) -> LoadReport:
    """Every record of every ``.txt`` file under root (none when root is None) but those in
    ``exclude``; with ``state``, files whose signature is unchanged since the last read are
    taken from it, and ``state`` is updated to what this read found."""
    report = LoadReport()
    files, report.problems, report.outside_links = discover_files(root, exclude) if root is not None else ([], [], [])
    report.new_problems = list(report.problems)
    state = state if state is not None else SourceState()
    now: dict[str, tuple[Signature, list[Record], list[Problem]]] = {}
    read_at = {key: at for key, at in state.read_at.items() if not key.startswith("file:")}
    started = time.time_ns()
    for rel, path in files:
        key = f"file:{rel}"
        signature = file_signature(path)  # taken before reading: a write during the read shows next time
        entry = state.files.get(rel)
        if entry is None or signature is None or entry[0] != signature:
            records, problems = load_file(rel, path)
            entry = (signature, records, problems)
            report.files_read += 1
            report.new_problems.extend(problems)
            read_at[key] = state.read_now(key, signature, started)
        elif state.announce:
            report.known_problems += len(entry[2])
        now[rel] = entry
        read_at.setdefault(key, state.read_at.get(key, started))
        report.records.extend(entry[1])
        report.blocks.append((key, entry[1]))
        report.problems.extend(entry[2])
    state.files, state.read_at = now, read_at
    report.files = len(files)
    if files:
        report.read_at["files"] = max(read_at[f"file:{rel}"] for rel, _ in files)
    return report


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
            cursor = connection.execute(sql)
            columns = [d[0] for d in cursor.description]
            return _rows_to_records(collection, columns, cursor.fetchall())
        finally:
            connection.close()
    except OSError as exc:  # e.g. a folder the user may not read (macOS: Full Disk Access)
        return [], [Problem(label, None, f"{where}: cannot read database: {exc.strerror or exc}")], 0
    except (sqlite3.Error, RecordError) as exc:
        message = str(exc).replace(f"{where}: ", "")
        return [], [Problem(label, None, f"{where}: {message}")], 0


def _rows_to_records(collection: CollectionConfig, columns: list[str],
                     rows: list[tuple[Any, ...]]) -> tuple[list[Record], list[Problem], int]:
    where = f"collection '{collection.name}'"
    lowered = [c.lower() for c in columns]
    if "id" not in lowered or "content" not in lowered:
        return [], [Problem(collection.database_label, None,
                            f"{where}: the rows need an 'id' and a 'content' column (got {', '.join(columns)})")], 0
    records: list[Record] = []
    bad_json = empty = duplicate = 0
    seen: set[str] = set()
    for row in rows:
        values = dict(zip(lowered, row))
        content = values.get("content")
        if not isinstance(content, str) or not content.strip():
            empty += 1
            continue
        row_id = str(values["id"])
        if row_id in seen:
            duplicate += 1
            continue
        seen.add(row_id)
        metadata, ok = _row_metadata(columns, row)
        bad_json += not ok
        records.append(_row_record(collection, row_id, content.strip(), metadata))
    return records, _row_problems(collection, bad_json, empty, duplicate), empty + duplicate


def _row_metadata(columns: list[str], row: tuple[Any, ...]) -> tuple[dict[str, Any], bool]:
    """Extra columns become fields; a JSON ``metadata`` column is merged in (columns win)."""
    metadata: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    ok = True
    for name, value in zip(columns, row):
        low = name.lower()
        if low in ("id", "content") or value is None or isinstance(value, bytes):
            continue
        if low == "metadata":
            try:
                parsed = json.loads(value) if isinstance(value, str) else value
            except json.JSONDecodeError:
                ok = False
                continue
            if isinstance(parsed, dict):
                metadata.update(parsed)
            elif parsed is not None:
                metadata["metadata"] = parsed
        else:
            fields[name] = value
    metadata.update(fields)
    return metadata, ok


def _row_record(collection: CollectionConfig, row_id: str, content: str, metadata: dict[str, Any]) -> Record:
    # Short scalar metadata (sender, date, thread title) is embedded with the
    # text, as headers are for files, so "what did Ana say about ..." can match.
    header = [f"{k}: {v}" for k, v in metadata.items()
              if isinstance(v, (str, int, float)) and not isinstance(v, bool)
              and len(str(v)) <= MAX_EMBEDDED_METADATA_CHARS]
    return Record(
        text=content, file_path=collection.database_label, line_number=None, end_line=None,
        metadata=metadata, source=collection.name, id=f"{collection.name}:{row_id}",
        citation=f"{collection.database_label}#{collection.label}:{row_id}",
        content="\n".join(header + [content]),
    )


def _row_problems(collection: CollectionConfig, bad_json: int, empty: int, duplicate: int) -> list[Problem]:
    where, label = f"collection '{collection.name}'", collection.database_label
    problems = []
    if bad_json:
        problems.append(Problem(label, None, f"{where}: {counted(bad_json, 'row has', 'rows have')} invalid JSON metadata (kept without it)",
                                False))
    if empty:
        problems.append(Problem(label, None, f"{where}: {counted(empty, 'row')} with NULL or empty content skipped"))
    if duplicate:
        problems.append(Problem(label, None, f"{where}: {counted(duplicate, 'row')} with a repeated id skipped"))
    return problems


def check_sources(config: Config) -> None:
    """The data directory must be a folder; with none (a config of collections only) there must be
    a collection, else there is nothing to search and the error says how to add a source."""
    path = config.data_directory
    if path is None:
        if not config.collections:
            raise ConfigError(f"nothing to search: no {CONFIG_NAME} here or in {user_config_file().parent}; "
                              f"add a source with `vecbook add PATH` (a notes folder, a chat export...), "
                              f"or pass --data-dir DIR or --config FILE")
        return
    if not path.exists():
        raise ConfigError(f"data directory not found: {path} (create it, or set data_directory in "
                          f"{CONFIG_NAME} or pass --data-dir)")
    if not path.is_dir():
        raise ConfigError(f"data directory is not a folder: {path}")


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
    exports = [c.path for c in config.collections if c.path is not None]
    state = state if state is not None else SourceState()
    report = load_directory(config.data_directory, state, exports)
    now = {}
    read_at = {key: at for key, at in state.read_at.items() if key.startswith("file:")}
    started = time.time_ns()
    for collection in config.collections:
        key = f"collection:{collection.name}"
        signature = tree_signature(collection.path if collection.path is not None else collection.database)
        entry = state.collections.get(collection.name)
        if entry is None or entry[0] != signature:
            entry = (signature, *_load_one_collection(collection))
            report.collections_read += 1
            report.new_problems.extend(entry[2])
            read_at[key] = state.read_now(key, signature, started)
        elif state.announce:
            report.known_problems += len(entry[2])
        now[collection.name] = entry
        report.read_at[collection.name] = read_at.setdefault(key, state.read_at.get(key, started))
        _, records, problems, facts = entry
        report.records.extend(records)
        report.blocks.append((key, records))
        report.problems.extend(problems)
        report.collections[collection.name] = {**facts, "records": len(records),
                                               "problems": [p.reason for p in problems]}
    state.collections, state.read_at = now, read_at
    state.announce = False
    for problem in report.new_problems:
        log.warning("%s", problem)
    if report.known_problems:
        log.info("%d problem%s reported when the unchanged sources were last read ('vecbook stats' lists them)",
                 report.known_problems, "" if report.known_problems == 1 else "s")
    return report


def _load_one_collection(collection: CollectionConfig) -> tuple[list[Record], list[Problem], dict[str, Any]]:
    if collection.path is not None:
        return load_export(collection)
    records, problems, skipped = load_collection(collection)
    return records, problems, {"database": collection.database_label, "skipped_rows": skipped}
