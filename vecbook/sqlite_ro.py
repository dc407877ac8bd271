"""Read-only SQLite: the one way VecBook opens a user's database (SQLite collections and
exports that are databases, such as iMessage's ``chat.db``), so nothing can ever write to it.

Its own module because both ``sources`` and the export readers need it, and ``sources``
imports the export package.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

# How long a read waits for an app that holds a write lock on its database.
SQLITE_BUSY_TIMEOUT_SECONDS = 5.0


def open_readonly(database: Path) -> sqlite3.Connection:
    """Open SQLite so that nothing can write: ``mode=ro``, ``query_only`` and an authorizer.

    A WAL-mode database whose app is not running has no ``-wal`` file, and even
    a read-only connection would create ``-wal`` and ``-shm`` files beside it;
    ``immutable=1`` reads it without creating anything. While the app runs
    those files exist already, and ``mode=ro`` reads consistently beside it.
    """
    uri = database.resolve().as_uri() + "?mode=ro"
    if _is_wal(database) and not Path(f"{database}-wal").exists():
        uri += "&immutable=1"
    connection = sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_SECONDS, check_same_thread=False)
    connection.execute("PRAGMA query_only = ON")
    allowed = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
               getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
    connection.set_authorizer(lambda action, *_: sqlite3.SQLITE_OK if action in allowed else sqlite3.SQLITE_DENY)
    return connection


def _is_wal(database: Path) -> bool:
    """Bytes 18-19 of a SQLite header are 2 and 2 in WAL mode."""
    try:
        with open(database, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == b"\x02\x02"
