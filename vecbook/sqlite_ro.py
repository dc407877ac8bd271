"""Read-only SQLite: the one way VecBook opens a user's database (SQLite collections and
exports that are databases, such as iMessage's ``chat.db``), so nothing can ever write to it.

Its own module because both ``sources`` and the export readers need it, and ``sources``
imports the export package.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

# How long a read waits for an app that holds a write lock on its database.
SQLITE_BUSY_TIMEOUT_SECONDS = 5.0
# SQLite's words for a database another program holds locked past that wait, and what to do.
BUSY_MESSAGES = ("database is locked", "database table is locked")
# What SQLite's words for a file it cannot read as a database mean to the user, and what to do.
UNREADABLE_ADVICE = {
    "file is not a database": "not SQLite, or encrypted (as Signal's and WhatsApp's are), which cannot be read",
    "database disk image is malformed": "the file is damaged (cut short, or copied while its app was writing to "
                                        "it): copy it again with the app closed, or from a backup",
}
# SQLite's extended error code for a read-only connection that meets a hot journal to roll back.
READONLY_ROLLBACK = 776
BUSY_ADVICE = ("close that program (a browser keeps its history locked while it runs) or add a copy of the file")


def busy(message: str, first: str = "") -> str:
    """SQLite's ``message`` for a lock held past the wait, with what the user can do (``first``
    said before the rest)."""
    return f"{message}: another program is writing to it (waited {SQLITE_BUSY_TIMEOUT_SECONDS:g} s); " \
           f"{first}{BUSY_ADVICE}"


def explained(message: str) -> str:
    """SQLite's error ``message``, with what it means where it says a file cannot be read as a database."""
    return f"{message}: {UNREADABLE_ADVICE[message]}" if message in UNREADABLE_ADVICE else message


class ReadOnlyConnection(sqlite3.Connection):
    """A connection that removes its scratch copy of the database (if any) when closed, and
    notes the tables its statements read."""

    scratch: tempfile.TemporaryDirectory[str] | None = None
    # The tables (and views) the statements prepared on it read, in the order SQLite resolves their
    # columns (a SELECT's result columns in the order written), each with the view or WITH table it
    # is read through (None: named by the statement itself): what a query's rows are cited by.
    tables_read: list[tuple[str, str | None]]

    def close(self) -> None:
        super().close()
        if self.scratch is not None:
            self.scratch.cleanup()


def open_readonly(database: Path) -> ReadOnlyConnection:
    """Open SQLite so that nothing can write: ``mode=ro``, ``query_only`` and an authorizer.

    A WAL-mode database keeps its latest rows in its ``-wal`` file and the WAL's index in
    ``-shm``, which every reader would write (even a read-only one) or create:
    - no ``-wal`` (its app is closed): ``immutable=1`` reads it without creating anything;
    - ``-wal`` and ``-shm`` (its app is running, or the three were copied): ``readonly_shm=1``
      reads the WAL's rows without writing to ``-shm``, beside a live writer too;
    - a ``-wal`` without ``-shm`` (copied without it): SQLite cannot read the WAL without
      creating ``-shm``, so the two files are read from a scratch copy, removed on close.
    A database beside a hot ``-journal`` (its app stopped mid-write, or the two were copied while
    it wrote) must have the journal rolled back before it is read, which writes the database: it
    is read from a scratch copy of the two, rolled back there.
    """
    uri, wal = database.resolve().as_uri() + "?mode=ro", _is_wal(database)
    if wal and not Path(f"{database}-wal").exists():
        return _connect(uri + "&immutable=1")
    if wal and Path(f"{database}-shm").exists():
        return _connect(uri + "&readonly_shm=1")
    if wal:
        return _scratch_copy(database, "-wal", "?mode=ro")
    connection = _connect(uri)
    if Path(f"{database}-journal").exists() and _hot_journal(connection):
        connection.close()
        return _scratch_copy(database, "-journal", "?mode=rw")  # the copy's journal rolled back in the copy
    return connection


def _connect(uri: str, scratch: tempfile.TemporaryDirectory[str] | None = None) -> ReadOnlyConnection:
    """A connection to ``uri`` that refuses every statement but reading (``scratch``: the copy it
    reads, removed when it closes)."""
    connection = sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_SECONDS, check_same_thread=False,
                                 factory=ReadOnlyConnection)
    connection.scratch, connection.tables_read = scratch, []
    connection.execute("PRAGMA query_only = ON")
    allowed = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
               getattr(sqlite3, "SQLITE_RECURSIVE", 33)}

    def authorize(action: int, table: str | None, _column: str | None, _schema: str | None,
                  through: str | None) -> int:
        if action == sqlite3.SQLITE_READ and table:
            connection.tables_read.append((table, through))
        return sqlite3.SQLITE_OK if action in allowed else sqlite3.SQLITE_DENY
    connection.set_authorizer(authorize)
    return connection


def cited_table(connection: ReadOnlyConnection) -> str | None:
    """The table (or view) a query's rows are cited by, of those its statement read: the first it
    names itself (a view's name, not the table the view reads), else the first read (a WITH
    table's); None where it read none."""
    named = [table for table, through in connection.tables_read if through is None]
    return named[0] if named else connection.tables_read[0][0] if connection.tables_read else None


def _scratch_copy(database: Path, journal: str, mode: str) -> ReadOnlyConnection:
    """A connection to a scratch copy of ``database`` and its ``journal`` file (``-wal``,
    ``-journal``), opened in ``mode``; the copy is removed when the connection closes."""
    scratch = tempfile.TemporaryDirectory(prefix="vecbook-sqlite-")
    copy = Path(scratch.name) / database.name
    shutil.copyfile(database, copy)
    shutil.copyfile(f"{database}{journal}", f"{copy}{journal}")
    return _connect(copy.as_uri() + mode, scratch)


def _hot_journal(connection: ReadOnlyConnection) -> bool:
    """Whether reading the database needs its hot journal rolled back, which a read-only
    connection refuses (SQLITE_READONLY_ROLLBACK); any other error is left to the read."""
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        return getattr(exc, "sqlite_errorcode", READONLY_ROLLBACK) == READONLY_ROLLBACK and "readonly" in str(exc)
    finally:
        connection.tables_read.clear()  # (this read's: the rows read next are cited by theirs)
    return False


def row_key(connection: sqlite3.Connection, table: str) -> str | None:
    """The SQL that names each row of ``table`` (its rowid, or a WITHOUT ROWID table's primary
    key, its columns joined by ':'); None for a view, whose rows have no rowid (SQLite gives
    NULL, so every row would share one id)."""
    quoted = '"' + table.replace('"', '""') + '"'
    kind, sql = connection.execute("SELECT type, sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    if kind == "view":
        return None
    try:
        connection.execute(f"SELECT rowid FROM {quoted} LIMIT 0")
        return "rowid"
    except sqlite3.Error:  # WITHOUT ROWID
        pass
    # The read-only connection's authorizer refuses PRAGMA: the table's own CREATE statement,
    # run in a scratch in-memory database, tells its primary key without touching the user's.
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(sql)
        key = [name for _, name, *_, pk in sorted(scratch.execute(f"PRAGMA table_info({quoted})"),
                                                    key=lambda column: column[-1]) if pk]
    finally:
        scratch.close()
    return " || ':' || ".join('"' + name.replace('"', '""') + '"' for name in key)


def _is_wal(database: Path) -> bool:
    """Bytes 18-19 of a SQLite header are 2 and 2 in WAL mode."""
    try:
        with open(database, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == b"\x02\x02"
