"""SQLite collections: toolbox-store tables, JOIN queries and an iMessage chat.db,
searched with the files, filtered, reported, and never written to."""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

import vecbook

DATA = Path(__file__).resolve().parent / "data"
IMESSAGE_DB = DATA / "imessage_chat.db"
SIDECARS = ("-wal", "-shm", "-journal")

# Messages/threads (personal-search.md schema) as records: thread title and tags come
# from a JOIN; tags (a JSON array in a TEXT column) are merged as a real list through
# the `metadata` column, so `tags__contains` matches whole tags.
CHATS_QUERY = """
SELECT m.id AS id,
       m.content AS content,
       m.role AS role,
       m.ts AS date,
       m.thread_id AS thread_id,
       t.title AS thread_title,
       json_patch(COALESCE(m.meta, '{}'),
                  json_object('tags', json(COALESCE(t.tags, '[]')))) AS metadata
FROM messages AS m
JOIN threads AS t ON t.thread_id = m.thread_id
"""

# macOS Messages: `date` counts nanoseconds since 2001-01-01 UTC (seconds before
# macOS 10.13, hence the CASE); 978307200 is 2001-01-01 as a Unix time.
IMESSAGE_QUERY = """
SELECT m.ROWID AS id,
       m.text AS content,
       strftime('%Y-%m-%dT%H:%M:%SZ',
                CASE WHEN m.date > 100000000000 THEN m.date / 1000000000 ELSE m.date END
                + 978307200, 'unixepoch') AS date,
       CASE WHEN m.is_from_me = 1 THEN 'me' ELSE h.id END AS sender,
       COALESCE(NULLIF(c.display_name, ''), c.chat_identifier) AS chat,
       m.service AS service
FROM message AS m
LEFT JOIN handle AS h ON h.ROWID = m.handle_id
LEFT JOIN chat_message_join AS cm ON cm.message_id = m.ROWID
LEFT JOIN chat AS c ON c.ROWID = cm.chat_id
WHERE m.text IS NOT NULL AND m.text <> ''
"""

# (id, metadata, source, content) of the toolbox-store collection "notes".
NOTES = [
    ("n1", {"user": {"name": "ana"}, "channel": "garden", "date": "2024-09-03"}, "slack",
     "Watered the tomato plants and tied them to bamboo stakes before the storm."),
    ("n2", {"user": {"name": "ben"}, "channel": "finance", "date": "2024-08-20"}, "slack",
     "Budget review: cloud spending is down by a third after the reserved instances."),
    ("n3", {"user": {"name": "ana"}, "channel": "travel", "date": "2024-10-01"}, "discord",
     "Booked the night train to Lisbon for the October conference."),
    ("n4", {"user": {"name": "cleo"}, "channel": "garden", "date": "2024-07-15"}, "discord",
     "The courgettes are taking over the raised bed; pick them small."),
]

THREADS = [
    ("t1", "Garden planning", "ana, ben", json.dumps(["garden", "home"]), "2024-09-01"),
    ("t2", "Quarterly budget", "ben, dana", json.dumps(["work", "finance"]), "2024-08-01"),
]

# (id, thread_id, role, content, ts, source, channel, meta)
MESSAGES = [
    ("m1", "t1", "user", "When should I harvest the tomatoes so they do not split?",
     "2024-09-05T10:00:00", "chatgpt", "web", json.dumps({"model": "gpt-4o"})),
    ("m2", "t1", "assistant", "Pick tomatoes when they are fully coloured but still firm; "
     "uneven watering makes them split.", "2024-09-05T10:00:05", "chatgpt", "web",
     json.dumps({"model": "gpt-4o"})),
    ("m3", "t2", "user", "Draft a summary of the quarterly budget for the board.",
     "2024-08-02T09:00:00", "claude", "desktop", None),
    ("m4", "t2", "assistant", "Revenue grew 8% while travel costs fell; the board summary "
     "is attached.", "2024-08-02T09:00:09", "claude", "desktop", json.dumps({"model": "sonnet"})),
]

FILES = {
    "garden/tomatoes.txt": "Title: Tomato diary\nAuthor: ana\n\nThe tomatoes on the balcony need "
                           "watering twice a day in August; the cherry ones ripen first.\n",
    "work/budget.txt": "Author: dana\n\nBudget meeting notes: freeze hiring until the quarterly "
                       "numbers are in.\n---\nAuthor: dana\n\nTravel policy: book trains for trips "
                       "under five hours.\n",
}


# --- helpers ----------------------------------------------------------------

def make_notes_db(path: Path, rows: list[tuple[str, Any, str, Any]] = NOTES, table: str = "notes_documents",
                  journal: str = "delete") -> Path:
    """A toolbox-store table: id TEXT PRIMARY KEY, metadata JSON, source TEXT, content TEXT."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA journal_mode = {journal}")
        db.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, metadata JSON, source TEXT, content TEXT)")
        db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?)",
                       [(i, m if isinstance(m, str) or m is None else json.dumps(m), s, c) for i, m, s, c in rows])
    db.close()
    return path


def make_chats_db(path: Path) -> Path:
    """The personal-search.md storage model (messages, threads) in SQLite."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE threads (thread_id TEXT PRIMARY KEY, title TEXT, participants TEXT,
                                  tags TEXT, started_at TEXT);
            CREATE TABLE messages (id TEXT PRIMARY KEY, thread_id TEXT REFERENCES threads(thread_id),
                                   role TEXT, content TEXT, ts TEXT, source TEXT, channel TEXT, meta JSON);
        """)
        db.executemany("INSERT INTO threads VALUES (?, ?, ?, ?, ?)", THREADS)
        db.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?)", MESSAGES)
    db.close()
    return path


def toml_string(text: str) -> str:
    """A TOML multi-line literal string (no escapes inside)."""
    assert "'''" not in text
    return "'''" + text + "'''"


def write_config(folder: Path, collections: list[dict[str, str]], data: str = "data") -> Path:
    lines = [f'data_directory = "{data}"', "max_results = 10", ""]
    for collection in collections:
        lines.append("[[collections]]")
        for key, value in collection.items():
            lines.append(f"{key} = {toml_string(value) if key == 'query' else json.dumps(value)}")
        lines.append("")
    path = folder / "vecbook.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def write_records(folder: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def fingerprint(path: Path) -> tuple[str | None, int | None, list[str]]:
    """sha256 and mtime of a database, and which journal files lie beside it."""
    if not path.exists():
        return None, None, []
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, path.stat().st_mtime_ns, [s for s in SIDECARS if Path(f"{path}{s}").exists()]


def by_id(results: vecbook.Results) -> dict[str, vecbook.Hit]:
    return {hit.id: hit for hit in results}


def vecbook_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "vecbook" and r.levelno == logging.WARNING]


# --- one book: files + toolbox-store + messages/threads + iMessage --------------

@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: vecbook.Embedder) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("sqlite_world")
    write_records(root / "data")
    dbs = {
        "notes": make_notes_db(root / "dbs" / "notes.db"),
        "chats": make_chats_db(root / "dbs" / "chats.db"),
        "imessage": Path(shutil.copy(IMESSAGE_DB, root / "dbs" / "chat.db")),
    }
    config = write_config(root, [
        {"name": "notes", "database": "dbs/notes.db"},
        {"name": "chats", "database": "dbs/chats.db", "query": CHATS_QUERY},
        {"name": "imessage", "database": "dbs/chat.db", "query": IMESSAGE_QUERY},
    ])
    before = {name: fingerprint(path) for name, path in dbs.items()}
    book = vecbook.VecBook(config=vecbook.load_config(config), embedder=embedder)
    return {"book": book, "dbs": dbs, "before": before, "root": root}


def test_imessage_fixture_is_recent_macos_nanoseconds() -> None:
    """The chat.db dates are nanoseconds since 2001 (recent macOS), which the query converts."""
    with sqlite3.connect(f"{IMESSAGE_DB.as_uri()}?mode=ro", uri=True) as db:
        low, high = db.execute("SELECT MIN(date), MAX(date) FROM message").fetchone()
    assert 10**17 < low <= high < 10**19


def test_stats_count_rows_per_collection(world: dict[str, Any]) -> None:
    stats = world["book"].stats()
    assert stats["state"] == "ready"
    assert stats["sources"] == {"files": 3, "notes": 4, "chats": 4, "imessage": 13}
    assert stats["collections"]["notes"]["records"] == 4
    assert stats["collections"]["notes"]["database"] == "dbs/notes.db"
    assert stats["collections"]["imessage"] == {"database": "dbs/chat.db", "records": 13, "skipped_rows": 0,
                                                "problems": [], "left_out": [], "windows": None, "messages": None}  # a row a message


def test_one_ranked_list_mixes_files_and_both_kinds_of_database(world: dict[str, Any]) -> None:
    results = world["book"].search("watering tomato plants", max_results=6, mode="hybrid")
    assert {hit.source for hit in results[:4]} >= {"files", "notes", "chats"}
    scores = [hit.similarity_score for hit in results]
    assert scores == sorted(scores, reverse=True)
    hits = by_id(results)

    note = hits["notes:n1"]
    assert (note.source, note.file_path, note.line_number, note.end_line) == ("notes", "dbs/notes.db", None, None)
    assert note.citation == "dbs/notes.db#notes_documents:n1"
    assert note.text == NOTES[0][3]
    assert note.metadata["user"] == {"name": "ana"} and note.metadata["source"] == "slack"

    chat = hits["chats:m2"]
    assert (chat.source, chat.file_path, chat.line_number) == ("chats", "dbs/chats.db", None)
    # a query's rows are cited by the table its id is read from (the first it reads), where the
    # row can be looked up, not by the source's name, which no table of the database bears
    assert chat.citation == "dbs/chats.db#messages:m2"
    assert chat.metadata["thread_title"] == "Garden planning"
    assert chat.metadata["tags"] == ["garden", "home"]
    assert chat.metadata["model"] == "gpt-4o"

    file_hit = hits["garden/tomatoes.txt:1"]
    assert (file_hit.source, file_hit.file_path, file_hit.line_number) == ("files", "garden/tomatoes.txt", 1)
    assert file_hit.citation == "garden/tomatoes.txt:1-4"

    data = note.to_dict()
    assert data["line_number"] is None and data["id"] == "notes:n1" and isinstance(data["similarity_score"], str)


def test_imessage_hit_has_iso_date_sender_and_chat(world: dict[str, Any]) -> None:
    book = world["book"]
    top = book.search("grab lunch tomorrow", max_results=3, mode="hybrid", filters={"source": "imessage"})[0]
    assert top.id == "imessage:3"
    assert top.text == "Want to grab lunch tomorrow?"
    assert top.citation == "dbs/chat.db#message:3"  # as the iMessage reader cites it
    assert top.file_path == "dbs/chat.db" and top.line_number is None
    # 771588000000000000 ns after 2001-01-01T00:00:00Z
    assert top.metadata["date"] == "2025-06-14T10:00:00Z"
    assert top.metadata["sender"] == "+15551234567"
    assert top.metadata["chat"] == "+15551234567"

    group = by_id(book.search("count me in", max_results=13, mode="keyword", filters={"source": "imessage"}))
    assert group["imessage:12"].metadata == {"date": "2025-06-15T09:00:00Z", "sender": "+15559876543",
                                            "chat": "Weekend Plans", "service": "SMS"}
    assert group["imessage:12"].text == "Count me in too"


def test_imessage_filters_by_sender_and_date(world: dict[str, Any]) -> None:
    book = world["book"]
    mine = book.search("plans", max_results=50, filters={"source": "imessage", "sender": "me"})
    assert {hit.id for hit in mine} == {"imessage:2", "imessage:4", "imessage:7", "imessage:8",
                                       "imessage:10", "imessage:15"}
    june15 = book.search("plans", max_results=50, filters={"date__gte": "2025-06-15", "source": "imessage"})
    assert {hit.id for hit in june15} == {"imessage:5", "imessage:12", "imessage:13", "imessage:15"}


@pytest.mark.parametrize(("filters", "expected"), [
    ({"source": "notes"}, {"notes:n1", "notes:n2", "notes:n3", "notes:n4"}),
    ({"source__in": ["chats", "notes"], "date__lt": "2024-08-21"}, {"notes:n2", "notes:n4", "chats:m3", "chats:m4"}),
    ({"metadata.user.name": "ana"}, {"notes:n1", "notes:n3"}),
    ({"user.name": "cleo"}, {"notes:n4"}),
    ({"metadata.user.name__in": ["ben", "cleo"], "channel": "garden"}, {"notes:n4"}),
    ({"metadata.channel": "garden", "date__gte": "2024-09-01"}, {"notes:n1"}),
    ({"metadata.source": "discord"}, {"notes:n3", "notes:n4"}),  # the row's own `source` column
    ({"role": "assistant"}, {"chats:m2", "chats:m4"}),
    ({"thread_title": "Garden planning"}, {"chats:m1", "chats:m2"}),
    ({"tags__contains": "finance"}, {"chats:m3", "chats:m4"}),
    ({"tags__contains": "fin"}, set()),  # tags are a list: whole tags only
    ({"model": "gpt-4o", "source": "chats"}, {"chats:m1", "chats:m2"}),
    ({"source": "files", "author": "dana"}, {"work/budget.txt:1", "work/budget.txt:5"}),
])
def test_filters_on_row_metadata(world: dict[str, Any], filters: dict[str, Any], expected: set[str]) -> None:
    book = world["book"]
    # semantic search scores every record, so all matching records come back
    assert {hit.id for hit in book.search("garden", max_results=100, mode="semantic", filters=filters)} == expected
    # keyword (and hybrid) hits are a subset: only records sharing a word with the query
    for mode in ("keyword", "hybrid"):
        hits = book.search("tomatoes budget train courgettes", max_results=100, mode=mode, filters=filters)
        assert {hit.id for hit in hits} <= expected, mode


def test_source_filter_narrows_a_semantic_search(world: dict[str, Any]) -> None:
    results = world["book"].search("tomatoes", max_results=2, mode="semantic", filters={"source": "chats"})
    assert {hit.id for hit in results} == {"chats:m1", "chats:m2"}


def test_databases_unchanged_after_load_search_and_reindex(world: dict[str, Any]) -> None:
    book = world["book"]
    for mode in ("semantic", "keyword", "hybrid"):
        book.search("tomatoes", mode=mode, filters={"source__in": ["notes", "chats", "imessage"]})
    book.reindex()
    assert book.stats()["sources"]["imessage"] == 13
    for name, path in world["dbs"].items():
        assert fingerprint(path) == world["before"][name], name
        assert world["before"][name][2] == [], name  # no -wal/-shm/-journal next to a DELETE-mode db
    assert fingerprint(IMESSAGE_DB)[0] == fingerprint(world["dbs"]["imessage"])[0]


# --- config -------------------------------------------------------------------

def test_config_paths_resolve_against_the_config_file_and_expand_home(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "notes", "database": "dbs/notes.db"},
        {"name": "mine", "database": "~/chat.db", "query": "SELECT 1 AS id, 'x' AS content"},
        {"name": "slack", "database": "dbs/store.db", "table": "slack_messages"},
    ]))
    notes, mine, slack = config.collections
    assert notes.database == tmp_path / "dbs" / "notes.db" and notes.table == "notes_documents"
    assert notes.label == "notes_documents" and notes.database_label == "dbs/notes.db"
    assert mine.database == tmp_path / "home" / "chat.db" and mine.label == "mine"
    assert mine.database_label == "~/chat.db"
    assert slack.label == "slack_messages"


@pytest.mark.parametrize(("collections", "message"), [
    ([{"database": "a.db"}], "'name' is required"),
    ([{"name": "Notes", "database": "a.db"}], "lower-case letters, digits, - and _"),
    ([{"name": "a", "database": "a.db"}, {"name": "a", "database": "b.db"}], "already used"),
    ([{"name": "a"}], "'database'"),
    ([{"name": "a", "database": "a.db", "table": "t", "query": "SELECT 1"}], "not both"),
    ([{"name": "a", "database": "a.db", "tabel": "t"}], "did you mean 'table'"),
])
def test_bad_collection_tables_are_config_errors(tmp_path: Path, collections: list[dict[str, str]],
                                                 message: str) -> None:
    with pytest.raises(vecbook.ConfigError, match=message.replace("[", r"\[").replace("+", r"\+")):
        vecbook.load_config(write_config(tmp_path, collections))


def test_database_path_with_uri_special_characters(tmp_path: Path) -> None:
    db = make_notes_db(tmp_path / "my data #1" / "notes?v=2&x%20.db")
    collection = vecbook.CollectionConfig(name="notes", database=db, database_label="x.db", table="notes_documents")
    records, problems, skipped = vecbook.sources.load_collection(collection)
    assert (len(records), problems, skipped) == (4, [], 0)


# --- read-only guarantees -------------------------------------------------------

@pytest.fixture
def notes_db(tmp_path: Path) -> Path:
    return make_notes_db(tmp_path / "notes.db")


@pytest.mark.parametrize("statement", [
    "INSERT INTO notes_documents VALUES ('x', '{}', 's', 'c')",
    "UPDATE notes_documents SET content = 'gone'",
    "DELETE FROM notes_documents",
    "DROP TABLE notes_documents",
    "CREATE TABLE evil (x)",
    "CREATE TEMP TABLE evil (x)",
    "ATTACH DATABASE ':memory:' AS other",
    "PRAGMA journal_mode = wal",
    "PRAGMA query_only = OFF",
    "VACUUM",
    "REPLACE INTO notes_documents VALUES ('n1', '{}', 's', 'c')",
])
def test_open_readonly_refuses_writes(notes_db: Path, statement: str) -> None:
    before = fingerprint(notes_db)
    connection = vecbook.sources.open_readonly(notes_db)
    try:
        with pytest.raises(sqlite3.DatabaseError):
            connection.execute(statement)
        assert connection.execute("SELECT COUNT(*) FROM notes_documents").fetchone() == (4,)
    finally:
        connection.close()
    assert fingerprint(notes_db) == before


def test_open_readonly_layers_each_refuse_writes_alone(notes_db: Path) -> None:
    """Without the authorizer query_only refuses; without query_only, mode=ro refuses."""
    connection = vecbook.sources.open_readonly(notes_db)
    try:
        connection.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only"):
            connection.execute("DELETE FROM notes_documents")
        connection.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute("DELETE FROM notes_documents")
    finally:
        connection.close()
    assert fingerprint(notes_db)[2] == []
    with sqlite3.connect(notes_db) as db:
        assert db.execute("SELECT COUNT(*) FROM notes_documents").fetchone() == (4,)
    db.close()


@pytest.mark.parametrize("sql", [
    "DELETE FROM notes_documents",
    "SELECT 1; DROP TABLE x",
    "SELECT 1 AS id, 'a' AS content; SELECT 2",
    "PRAGMA table_info(notes_documents)",
    "ATTACH DATABASE 'x.db' AS x",
    "INSERT INTO t SELECT 1",
    "",
    "   ;  ",
    "SELECT 'unterminated",
])
def test_check_select_rejects_anything_but_one_select(sql: str) -> None:
    with pytest.raises(vecbook.RecordError, match="collection 'c'"):
        vecbook.sources.check_select(sql, "collection 'c'")


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT 1", "SELECT 1"),
    ("  select id, content from t ;  ", "select id, content from t"),
    ("WITH x AS (SELECT 1) SELECT * FROM x;", "WITH x AS (SELECT 1) SELECT * FROM x"),
])
def test_check_select_accepts_one_select(sql: str, expected: str) -> None:
    assert vecbook.sources.check_select(sql, "collection 'c'") == expected


@pytest.mark.parametrize("sql", [
    # BUG: a single SELECT whose string literal holds ';' is refused as "more than one statement".
    "SELECT id, content FROM notes_documents WHERE id <> 'a;b'",
    # BUG: a leading SQL comment (natural in a multi-line TOML query) is refused as "not a SELECT".
    "-- notes from slack\nSELECT id, content FROM notes_documents",
    # BUG: a trailing `-- comment` swallows the ';' appended for complete_statement.
    "SELECT id, content FROM notes_documents -- every row",
])
def test_check_select_accepts_a_single_select_with_comments_or_semicolons_in_strings(notes_db: Path,
                                                                                      sql: str) -> None:
    statement = vecbook.sources.check_select(sql, "collection 'c'")
    collection = vecbook.CollectionConfig(name="c", database=notes_db, database_label="notes.db", query=sql)
    records, problems, _ = vecbook.sources.load_collection(collection)
    assert (len(records), problems) == (4, []), statement


# --- failures never stop start-up ------------------------------------------------

def _broken_setup(root: Path) -> tuple[list[dict[str, str]], dict[str, Path]]:
    dbs = root / "dbs"
    good = make_notes_db(dbs / "good.db", table="good_documents")
    with sqlite3.connect(good) as db:
        db.execute("CREATE TABLE plain (n INTEGER PRIMARY KEY, note TEXT)")
    db.close()
    corrupt = dbs / "corrupt.db"
    corrupt.write_bytes(os.urandom(8192))
    damaged = dbs / "damaged.db"  # cut short after its first page: the schema is there, the rows are not
    damaged.write_bytes(make_notes_db(dbs / "whole.db", table="damaged_documents").read_bytes()[:4096])
    bad_json = make_notes_db(dbs / "badjson.db", table="badjson_documents", rows=[
        ("j1", {"channel": "ok"}, "s", "Compost the coffee grounds with the leaves."),
        ("j2", "{not json", "s", "Pruned the apple tree in late winter."),
        ("j3", "[1, 2", "s", "Mulched the strawberries with straw."),
    ])
    empty = make_notes_db(dbs / "empty.db", table="empty_documents", rows=[
        ("e1", {}, "s", "Sowed broad beans along the fence."),
        ("e2", {}, "s", None),
        ("e3", {}, "s", ""),
        ("e4", {}, "s", "   \n  "),
    ])
    collections = [
        {"name": "good", "database": "dbs/good.db"},
        {"name": "missing_file", "database": "dbs/nope.db"},
        {"name": "missing_table", "database": "dbs/good.db", "table": "nothing_here"},
        {"name": "bad_sql", "database": "dbs/good.db", "query": "SELECT id, content FRM good_documents"},
        {"name": "not_select", "database": "dbs/good.db", "query": "DELETE FROM good_documents"},
        {"name": "two_statements", "database": "dbs/good.db",
         "query": "SELECT id, content FROM good_documents; DROP TABLE good_documents"},
        {"name": "cte_delete", "database": "dbs/good.db",
         "query": "WITH x AS (SELECT 1) DELETE FROM good_documents"},
        {"name": "no_content", "database": "dbs/good.db", "query": "SELECT id, source FROM good_documents"},
        {"name": "no_content_table", "database": "dbs/good.db", "table": "plain"},
        {"name": "corrupt", "database": "dbs/corrupt.db"},
        {"name": "damaged", "database": "dbs/damaged.db"},
        {"name": "badjson", "database": "dbs/badjson.db"},
        {"name": "empty", "database": "dbs/empty.db"},
    ]
    return collections, {"good": good, "corrupt": corrupt, "damaged": damaged, "badjson": bad_json, "empty": empty}


# collection -> (records kept, text the WARN holds)
BROKEN = {
    "missing_file": (0, "not found"),
    "missing_table": (0, "no such table: nothing_here (tables: good_documents, plain)"),
    "bad_sql": (0, "syntax error"),
    "not_select": (0, "must be a SELECT"),
    "two_statements": (0, "single SQL statement"),
    "cte_delete": (0, "not authorized"),
    "no_content": (0, "the rows need an 'id' and a 'content' column (got id, source): name them so in the "
                      "'query' (`SELECT rowid AS id, body AS content ...`)"),
    "no_content_table": (0, "the rows need an 'id' and a 'content' column (got n, note): "
                            "`vecbook remove no_content_table`, then `vecbook add dbs/good.db --table plain "
                            "--text-column COLUMN` writes a 'query' that reads another column"),
    "corrupt": (0, "file is not a database: not SQLite, or encrypted (as Signal's and WhatsApp's are), "
                   "which cannot be read"),
    "damaged": (0, "database disk image is malformed: the file is damaged (cut short, or copied while its app "
                   "was writing to it): copy it again with the app closed, or from a backup"),
    "badjson": (3, "2 rows have invalid JSON metadata"),
    "empty": (1, "3 rows with NULL or empty content skipped"),
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory, embedder: vecbook.Embedder) -> dict[str, Any]:
    """One book whose collections are mostly broken; log records captured during start-up."""
    root = tmp_path_factory.mktemp("sqlite_broken")
    write_records(root / "data")
    collections, dbs = _broken_setup(root)
    before = {name: fingerprint(path) for name, path in dbs.items()}
    captured: list[logging.LogRecord] = []
    handler = logging.Handler(level=logging.WARNING)
    handler.emit = captured.append  # type: ignore[method-assign]
    logger = logging.getLogger("vecbook")
    logger.addHandler(handler)
    try:
        book = vecbook.VecBook(config=vecbook.load_config(write_config(root, collections)), embedder=embedder)
    finally:
        logger.removeHandler(handler)
    warnings = [r.getMessage() for r in captured if r.levelno == logging.WARNING]
    return {"book": book, "dbs": dbs, "before": before, "warnings": warnings}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_collection_is_a_warn_and_shows_in_stats(broken: dict[str, Any], name: str) -> None:
    kept, text = BROKEN[name]
    matching = [w for w in broken["warnings"] if f"collection '{name}'" in w]
    assert matching, broken["warnings"]
    assert any(text in w for w in matching), matching
    entry = broken["book"].stats()["collections"][name]
    assert entry["records"] == kept
    assert any(text in p for p in entry["problems"]), entry


def test_broken_collections_do_not_stop_start_up(broken: dict[str, Any]) -> None:
    book = broken["book"]
    stats = book.stats()
    assert stats["state"] == "ready"
    assert stats["sources"]["files"] == 3 and stats["sources"]["good"] == 4
    assert stats["collections"]["good"]["problems"] == []
    assert stats["collections"]["empty"]["skipped_rows"] == 3
    assert book.search("tomato stakes", max_results=1, filters={"source": "good"})[0].id == "good:n1"
    pruned = book.search("pruned apple tree", max_results=1, mode="keyword")[0]
    assert pruned.id == "badjson:j2" and pruned.metadata == {"source": "s"}  # kept, without the bad JSON
    assert book.search("broad beans", max_results=1, mode="keyword")[0].id == "empty:e1"


def test_broken_databases_unchanged_after_load_search_and_reindex(broken: dict[str, Any]) -> None:
    book = broken["book"]
    book.search("garden", mode="hybrid")
    book.reindex()
    assert book.stats()["sources"]["good"] == 4  # DELETE and DROP never ran
    for name, path in broken["dbs"].items():
        assert fingerprint(path) == broken["before"][name], name
        assert fingerprint(path)[2] == [], name


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_load_sources_warns_through_the_vecbook_logger(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                       name: str) -> None:
    (tmp_path / "data").mkdir()
    collections, _ = _broken_setup(tmp_path)
    config = vecbook.load_config(write_config(tmp_path, [c for c in collections if c["name"] == name]))
    caplog.set_level(logging.WARNING, logger="vecbook")
    report = vecbook.sources.load_sources(config)
    assert [w for w in vecbook_warnings(caplog) if f"collection '{name}'" in w and BROKEN[name][1] in w]
    assert report.collections[name]["records"] == BROKEN[name][0]


def test_unreadable_database_path_is_a_warn_not_a_crash(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """BUG: Path.is_file() raises for errors other than 'not found' (EACCES/EPERM, e.g. a folder
    the user may not read, or ~/Library/Messages without macOS Full Disk Access; ENAMETOOLONG),
    and load_collection calls it outside its try, so one collection stops start-up."""
    (tmp_path / "data").mkdir()
    locked = make_notes_db(tmp_path / "locked" / "notes.db")
    real_stat = Path.stat

    def stat(self: Path, *args: Any, **kwargs: Any) -> os.stat_result:
        if self == locked:
            raise PermissionError(errno.EPERM, "Operation not permitted", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "locked", "database": "locked/notes.db"},
        {"name": "long_name", "database": "x" * 300 + ".db"},
        {"name": "fine", "database": "fine.db"},
    ]))
    make_notes_db(tmp_path / "fine.db", table="fine_documents")
    caplog.set_level(logging.WARNING, logger="vecbook")
    report = vecbook.sources.load_sources(config)
    assert report.collections["fine"]["records"] == 4
    for name in ("locked", "long_name"):
        assert report.collections[name]["records"] == 0
        assert [w for w in vecbook_warnings(caplog) if f"collection '{name}'" in w]


# --- a database in use by its app -------------------------------------------------

def test_wal_database_with_an_open_write_transaction_loads(tmp_path: Path, embedder: vecbook.Embedder,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "data").mkdir()
    db = make_notes_db(tmp_path / "app.db", journal="wal")
    app = sqlite3.connect(db, isolation_level=None)
    try:
        assert app.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        app.execute("PRAGMA wal_autocheckpoint = 0")
        # committed but still only in the -wal file
        app.execute("INSERT INTO notes_documents VALUES ('n5', '{}', 'app', 'Committed: the greenhouse door sticks.')")
        app.execute("BEGIN IMMEDIATE")
        app.execute("INSERT INTO notes_documents VALUES ('n6', '{}', 'app', 'Uncommitted: secret draft about bees.')")
        caplog.set_level(logging.WARNING, logger="vecbook")
        config = vecbook.load_config(write_config(tmp_path, [{"name": "notes", "database": "app.db"}]))
        book = vecbook.VecBook(config=config, embedder=embedder)
        assert book.stats()["collections"]["notes"] == {"database": "app.db", "records": 5, "skipped_rows": 0,
                                                        "problems": [], "left_out": [], "windows": None, "messages": None}
        assert book.search("greenhouse door", max_results=1, mode="keyword")[0].id == "notes:n5"
        assert "notes:n6" not in {hit.id for hit in book.search("secret draft about bees", max_results=50)}
        assert not [w for w in vecbook_warnings(caplog) if "collection 'notes'" in w]
        app.execute("COMMIT")
    finally:
        app.close()


def test_delete_mode_database_locked_briefly_is_waited_for(tmp_path: Path) -> None:
    """An exclusive lock held for a moment is a busy wait, not an error."""
    db = make_notes_db(tmp_path / "busy.db")
    app = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    app.execute("BEGIN EXCLUSIVE")
    app.execute("INSERT INTO notes_documents VALUES ('n5', '{}', 'app', 'Written while you waited.')")
    release = threading.Timer(0.5, lambda: (app.execute("COMMIT"), app.close()))
    release.start()
    try:
        collection = vecbook.CollectionConfig(name="notes", database=db, database_label="busy.db",
                                              table="notes_documents")
        records, problems, _ = vecbook.sources.load_collection(collection)
    finally:
        release.join()
    assert problems == []
    assert len(records) == 5


def test_a_database_locked_past_the_wait_says_what_to_do_and_is_read_again_next_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Chrome holds its History locked while it runs: the WARN says so and what to do, and the
    next read (a reindex, the next command) reads it again though the file did not change."""
    monkeypatch.setattr(vecbook.sqlite_ro, "SQLITE_BUSY_TIMEOUT_SECONDS", 0.05)
    (tmp_path / "data").mkdir()
    db = make_notes_db(tmp_path / "busy.db")
    config = vecbook.load_config(write_config(tmp_path, [{"name": "notes", "database": "busy.db"}]))
    caplog.set_level(logging.WARNING, logger="vecbook")

    def while_locked(open_book: Any) -> Any:
        app = sqlite3.connect(db, isolation_level=None)
        app.execute("BEGIN EXCLUSIVE")
        app.execute("UPDATE notes_documents SET source = 'app'")
        os.utime(db, ns=(0, 0))  # written long ago: only the lock can make a read of it miss rows
        try:
            return open_book()
        finally:
            app.execute("ROLLBACK")
            app.close()

    book = while_locked(lambda: vecbook.VecBook(config=config, keyword_only=True, cache_directory=tmp_path / "c"))
    assert book.stats()["sources"]["notes"] == 0
    assert [w for w in vecbook_warnings(caplog) if "collection 'notes'" in w] == [
        "busy.db: collection 'notes': database is locked: another program is writing to it (waited 0.05 s); "
        "the next search reads it again, or close that program (a browser keeps its history locked while it "
        "runs) or add a copy of the file"]
    book.close()
    assert vecbook.sources.file_signature(db)[1] == 0  # unchanged: the lock's going tells no signature
    next_command = vecbook.VecBook(config=config, keyword_only=True, cache_directory=tmp_path / "c")
    assert next_command.stats()["sources"]["notes"] == 4
    next_command.close()
    book = while_locked(lambda: vecbook.VecBook(config=config, keyword_only=True, cache_directory=False))
    assert book.stats()["sources"]["notes"] == 0
    assert book.reindex()["sources"]["notes"] == 4


# --- reindex ------------------------------------------------------------------------

@pytest.mark.parametrize("query, cited", [
    ('SELECT rowid AS id, "body" AS content FROM "entries"', "entries:1"),  # as `add --text-column` writes it
    ("WITH e AS (SELECT rowid AS id, body AS content FROM entries) SELECT * FROM e", "entries:1"),
    ("SELECT e.body AS content, e.rowid AS id FROM entries AS e", "entries:1"),
    ("SELECT 1 AS id, 'Planted tomatoes' AS content", "diary:1"),  # no table read: the source's name
    # a view, by its own name: its id is its own (not the rowid of the table it reads)
    ('SELECT "id" AS id, "body" AS content FROM "dated"', "dated:2024-03-01/1"),
])
def test_a_querys_rows_are_cited_by_the_table_they_are_read_from(tmp_path: Path, query: str, cited: str) -> None:
    from vecbook.config import CollectionConfig
    from vecbook.sources import load_collection

    with sqlite3.connect(tmp_path / "diary.db") as db:
        db.execute("CREATE TABLE entries (body TEXT)")
        db.execute("INSERT INTO entries VALUES ('Planted tomatoes')")
        db.execute("CREATE VIEW dated AS SELECT '2024-03-01/' || rowid AS id, body FROM entries")
    db.close()
    collection = CollectionConfig(name="diary", database=tmp_path / "diary.db", database_label="diary.db", query=query)
    records, problems, _ = load_collection(collection)
    assert [r.citation for r in records] == [f"diary.db#{cited}"] and not problems


def test_reindex_sees_added_and_deleted_rows(tmp_path: Path, embedder: vecbook.Embedder) -> None:
    write_records(tmp_path / "data", {"a.txt": "A file about kites.\n"})
    db = make_notes_db(tmp_path / "notes.db")
    chats = make_chats_db(tmp_path / "chats.db")
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "notes", "database": "notes.db"},
        {"name": "chats", "database": "chats.db", "query": CHATS_QUERY},
    ]))
    book = vecbook.VecBook(config=config, embedder=embedder)
    assert book.stats()["sources"] == {"files": 1, "notes": 4, "chats": 4}
    assert book.search("night train Lisbon", max_results=1, mode="keyword")[0].id == "notes:n3"

    with sqlite3.connect(db) as app:
        app.execute("DELETE FROM notes_documents WHERE id = 'n3'")
        app.execute("INSERT INTO notes_documents VALUES ('n9', ?, 'slack', 'Ordered a new hive for the bees.')",
                    (json.dumps({"user": {"name": "dana"}}),))
    app.close()
    with sqlite3.connect(chats) as app:
        app.execute("INSERT INTO messages VALUES ('m5', 't1', 'user', 'Do beans need a trellis?', "
                    "'2024-09-06', 'chatgpt', 'web', NULL)")
    app.close()

    stats = book.reindex()
    assert stats["sources"] == {"files": 1, "notes": 4, "chats": 5}
    hive = book.search("new hive for the bees", max_results=1, mode="semantic")[0]
    assert (hive.id, hive.metadata["user"]["name"]) == ("notes:n9", "dana")
    trellis = book.search("beans trellis", max_results=1, mode="keyword")[0]
    assert (trellis.id, trellis.metadata["thread_title"]) == ("chats:m5", "Garden planning")
    everything = book.search("night train Lisbon", max_results=100, mode="hybrid")
    assert "notes:n3" not in {hit.id for hit in everything}
    ana = book.search("garden", max_results=100, mode="semantic", filters={"metadata.user.name": "ana"})
    assert [hit.id for hit in ana] == ["notes:n1"]


def test_a_wal_database_whose_app_is_closed_is_read_without_creating_files(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t_documents (id TEXT, metadata JSON, source TEXT, content TEXT)")
    connection.execute("INSERT INTO t_documents VALUES ('1', '{}', 's', 'hello from a closed app')")
    connection.commit()
    connection.close()  # the last connection closing removes -wal and -shm
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
    before = db.read_bytes()
    records, problems, _ = vecbook.sources.load_collection(
        vecbook.CollectionConfig(name="t", database=db, database_label="app.db", table="t_documents"))
    assert [r.text for r in records] == ["hello from a closed app"] and problems == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"] and db.read_bytes() == before


@pytest.mark.parametrize("copied", [("-wal", "-shm"), ("-wal",)])
def test_a_wal_database_copied_with_its_wal_is_read_whole_and_nothing_beside_it_changes(
        tmp_path: Path, copied: tuple[str, ...]) -> None:
    # `cp chat.db* backup/` while the app runs: the newest rows lie in the -wal file, and a
    # reader writes -shm (or creates it) unless told not to
    app = make_notes_db(tmp_path / "app" / "app.db", journal="wal")
    with sqlite3.connect(app) as writer:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("INSERT INTO notes_documents VALUES ('n5', '{}', 'app', 'Only in the WAL: the hive.')")
        writer.commit()
        (tmp_path / "copy").mkdir()
        for suffix in ("", *copied):
            shutil.copyfile(f"{app}{suffix}", tmp_path / "copy" / f"app.db{suffix}")
    writer.close()
    before = {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()}
    records, problems, _ = vecbook.sources.load_collection(vecbook.CollectionConfig(
        name="t", database=tmp_path / "copy" / "app.db", database_label="app.db", table="notes_documents"))
    assert problems == [] and "Only in the WAL: the hive." in [r.text for r in records]
    assert {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()} == before


def test_a_database_copied_with_its_hot_journal_is_read_as_committed_and_nothing_beside_it_changes(
        tmp_path: Path) -> None:
    # an app that crashed mid-write (or a copy, a sync, a backup taken while it wrote) leaves a hot
    # -journal holding the pages before the write: reading without rolling it back was refused with
    # "attempt to write a readonly database", and a VecBook that read the file as it lies would read
    # half a write
    app = tmp_path / "app" / "app.db"
    app.parent.mkdir()
    writer = sqlite3.connect(app, isolation_level=None)
    writer.executescript("CREATE TABLE notes (id INTEGER PRIMARY KEY, content TEXT);"
                         "INSERT INTO notes (content) VALUES ('Committed: the hive is queenright');"
                         "PRAGMA cache_size = 1; BEGIN; UPDATE notes SET content = 'Half written';")
    for _ in range(200):  # a write past the cache spills its pages to the file, the old ones to the journal
        writer.execute("INSERT INTO notes (content) VALUES (?)", ("Half written " + "x" * 1000,))
    (tmp_path / "copy").mkdir()
    for suffix in ("", "-journal"):
        shutil.copyfile(f"{app}{suffix}", tmp_path / "copy" / f"app.db{suffix}")
    writer.execute("ROLLBACK")
    writer.close()
    before = {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()}
    records, problems, _ = vecbook.sources.load_collection(vecbook.CollectionConfig(
        name="t", database=tmp_path / "copy" / "app.db", database_label="app.db", query="SELECT * FROM notes"))
    assert problems == [] and [r.text for r in records] == ["Committed: the hive is queenright"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()} == before
    # a journal that is not hot (PERSIST mode keeps it, its header zeroed) is read in place
    with sqlite3.connect(app) as db:
        db.executescript("PRAGMA journal_mode = PERSIST; UPDATE notes SET content = 'Kept: the swarm settled'")
    db.close()
    assert (tmp_path / "app" / "app.db-journal").exists()
    records, problems, _ = vecbook.sources.load_collection(vecbook.CollectionConfig(
        name="t", database=app, database_label="app.db", query="SELECT * FROM notes"))
    assert [(r.text, r.citation) for r in records] == [("Kept: the swarm settled", "app.db#notes:1")] and not problems


def test_text_kept_as_a_blob_or_a_number_is_read_and_binary_data_is_named(tmp_path: Path) -> None:
    from vecbook.config import CollectionConfig
    from vecbook.sources import load_collection

    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, content)")
        db.executemany("INSERT INTO entries VALUES (?, ?)", [
            (1, "Dentist moved to Thursday 3pm".encode()), (2, "Plain text about the garden"), (3, 4711),
            (4, b"\x89PNG\r\n\x1a\n\x00\x00"), (5, None)])
    collection = CollectionConfig(name="app", database=path, table="entries", database_label="app.db")
    records, problems, skipped = load_collection(collection)
    assert [(r.id, r.text) for r in records] == [
        ("app:1", "Dentist moved to Thursday 3pm"), ("app:2", "Plain text about the garden"), ("app:3", "4711")]
    assert [p.reason for p in problems] == [
        "collection 'app': 1 row with NULL or empty content skipped",
        "collection 'app': 1 row whose content is binary data, not UTF-8 text, skipped"]
    assert skipped == 2


def test_a_rows_context_holds_rows_of_its_own_collection_only(tmp_path: Path) -> None:
    # two tables of one app's database are two collections citing the same file: a row's
    # neighbours are the rows around it in its own table, never the other table's
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.executescript("CREATE TABLE notes (id INTEGER PRIMARY KEY, content TEXT);"
                         "CREATE TABLE tasks (id INTEGER PRIMARY KEY, content TEXT);"
                         "INSERT INTO notes VALUES (1, 'Boiler service due'), (2, 'Bread starter feeding');"
                         "INSERT INTO tasks VALUES (1, 'Call the plumber'), (2, 'Buy flour');")
    db.close()
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "notes", "database": "app.db", "table": "notes"},
        {"name": "tasks", "database": "app.db", "table": "tasks"}]))
    book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False)
    context = book.get("notes:2", context=2)
    assert [e.id for e in context.before] == ["notes:1"] and context.after == []
    context = book.get("tasks:1", context=2)
    assert context.before == [] and [e.id for e in context.after] == ["tasks:2"]


def test_unix_times_in_date_columns_are_read_as_dates(tmp_path: Path) -> None:
    # apps keep times as integers since 1970: seconds, milliseconds (JavaScript, Android),
    # microseconds (Firefox's places.sqlite); a `date` or `end_date` column holding one is a
    # date like an ISO one, so --since and --until see the row
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, created INTEGER, edited_ms INTEGER, "
                   "visited_us INTEGER, due REAL)")
        db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?)", [
            (1, "Boiler service booked", 1709300000, 1709300000123, 1709300000123456, 1709300000.5),
            (2, "Boiler part ordered", 1720000000, 1720000000000, 1720000000000000, None),
            (3, "Boiler manual lost", 0, None, None, None),
            # numbers that are dates but no Unix time: YYYYMMDD, a year (not 1970-08-23, 1970-01-01)
            (4, "Boiler bought", 20240105, None, None, 2024)])
    db.close()
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": name, "database": "app.db",
         "query": f"SELECT id, body AS content, {column} AS date, created AS end_date FROM notes"}
        for name, column in (("s", "created"), ("ms", "edited_ms"), ("us", "visited_us"), ("real", "due"))]))
    book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False, dedupe=False)
    dates = {hit.id: hit.metadata["date"] for hit in book.search("boiler", max_results=20) if "date" in hit.metadata}
    assert dates == {**{f"{name}:1": "2024-03-01T13:33:20+00:00" for name in ("s", "ms", "us", "real")},
                     **{f"{name}:2": "2024-07-03T09:46:40+00:00" for name in ("s", "ms", "us")},
                     "s:3": 0, "s:4": 20240105, "real:4": 2024}  # 0: an app's "no date", not 1970
    assert book.get("ms:1").record.metadata["end_date"] == "2024-03-01T13:33:20+00:00"
    march = book.search("boiler", max_results=20, since="2024-03-01", until="2024-03-31")
    assert sorted(hit.id for hit in march) == ["ms:1", "real:1", "s:1", "us:1"]


def test_numbers_that_are_no_unix_time_of_a_record_stay_as_written(tmp_path: Path) -> None:
    # a date-time written in digits (YYYYMMDDhhmmss, YYYYMMDDhhmm) and a time from another epoch
    # (Chrome's microseconds since 1601) are not read as Unix times of 2611, 1976 or 2393
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, content TEXT, date INTEGER)")
        db.executemany("INSERT INTO notes VALUES (?, ?, ?)", [
            (1, "Boiler bought", 20240105123000), (2, "Boiler fixed", 202401051230),
            (3, "Boiler - Wikipedia", 13355000000000000), (4, "Boiler serviced", 1709300000)])
    db.close()
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [{"name": "app", "database": "app.db", "table": "notes"}]))
    book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False, dedupe=False)
    dates = {hit.id: hit.metadata["date"] for hit in book.search("boiler", max_results=20)}
    assert dates == {"app:1": 20240105123000, "app:2": 202401051230, "app:3": 13355000000000000,
                     "app:4": "2024-03-01T13:33:20+00:00"}


def test_a_unix_time_kept_as_text_is_read_as_the_number_would_be(tmp_path: Path) -> None:
    # a column declared TEXT keeps the numbers written to it as text (SQLite's type affinity: an app's
    # `created TEXT` given Date.now()), which stayed as written, so --since passed the rows by
    from vecbook.config import CollectionConfig
    from vecbook.sources import load_collection

    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, content TEXT, date TEXT)")
        db.executemany("INSERT INTO notes VALUES (?, 'Boiler', ?)", [
            (1, 1709300000), (2, 1709300000123), (3, " 1709300000.5 "), (4, 20240105), (5, "0"), (6, "1709300000x")])
        assert db.execute("SELECT typeof(date) FROM notes WHERE id = 1").fetchone() == ("text",)
    db.close()
    records, _, _ = load_collection(CollectionConfig(name="app", database=path, table="notes"))
    assert [r.metadata["date"] for r in records] == [
        "2024-03-01T13:33:20+00:00", "2024-03-01T13:33:20+00:00", "2024-03-01T13:33:20+00:00",
        "20240105", "0", "1709300000x"]  # a date in digits, an app's "no date", and text stay as written


def test_a_unix_time_column_named_date_in_capitals_is_a_date_too(tmp_path: Path) -> None:
    # filters read `Date` as `date` (keys match case-insensitively): so does the reading of times
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.executescript("CREATE TABLE entries (id INTEGER PRIMARY KEY, content TEXT, Date INTEGER, END_DATE INTEGER);"
                         "INSERT INTO entries VALUES (1, 'Boiler service booked', 1709300000, 1709303600);")
    db.close()
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [{"name": "app", "database": "app.db", "table": "entries"}]))
    book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False)
    [hit] = book.search("boiler", since="2024-03-01", until="2024-03-01")
    assert (hit.metadata["Date"], hit.metadata["END_DATE"]) == ("2024-03-01T13:33:20+00:00", "2024-03-01T14:33:20+00:00")


def test_since_over_rows_without_a_date_column_says_which_column_to_name_date(tmp_path: Path) -> None:
    path = tmp_path / "History"
    with sqlite3.connect(path) as db:
        db.executescript("CREATE TABLE urls (id INTEGER PRIMARY KEY, title TEXT, last_visit_time INTEGER);"
                         "INSERT INTO urls VALUES (1, 'Boiler - Wikipedia', 13355000000000000);")
    db.close()
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "history", "database": "History", "query": "SELECT id, title AS content, last_visit_time FROM urls"}]))
    book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False)
    with pytest.raises(vecbook.QueryError) as raised:
        book.search("boiler", sources=["history"], since="2024-01-01")
    assert str(raised.value) == (
        "since 2024-01-01: no record of history has a date (a Date: header, a database row's 'date' column, or "
        "the time of a message, mail or event), so none can match; sources with dates: none")


def bear_database(path: Path) -> Path:
    """Bear's ``ZSFNOTE`` as the app keeps it (Core Data: Z_PK, flags as 0/1, times counted from
    2001, a UUID, blobs), two notes and one in the trash."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE ZSFNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZARCHIVED INTEGER, "
                   "ZPERMANENTLYDELETED INTEGER, ZPINNED INTEGER, ZTRASHED INTEGER, ZCREATIONDATE TIMESTAMP, "
                   "ZMODIFICATIONDATE TIMESTAMP, ZTRASHEDDATE TIMESTAMP, ZLASTEDITINGDEVICE VARCHAR, "
                   "ZSUBTITLE VARCHAR, ZTEXT VARCHAR, ZTITLE VARCHAR, ZUNIQUEIDENTIFIER VARCHAR, "
                   "ZCONFLICTUNIQUEIDENTIFIER VARCHAR, ZVECTORCLOCK BLOB)")
        db.executemany("INSERT INTO ZSFNOTE VALUES (?, 7, 12, 0, 0, 0, ?, ?, ?, ?, 'Ana''s MacBook Pro', ?, ?, ?, ?, "
                       "'3F2504E0-4F89-11D3-9A0C-0305E82C3301', x'0001')", [
            (1, 0, 752000000.5, 752100000.25, None, "Book the ryokan", "# Trip to Kyoto\nBook the ryokan near 清水寺",
             "Trip to Kyoto", "9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D"),
            (2, 0, 752000100.0, 752000100.0, None, "اجتماع مع الفريق", "# مذكرة\nاجتماع مع الفريق يوم الأحد",
             "مذكرة", "1B9D6BCD-BBFD-4B2D-9B5D-AB8DFBBD4BED"),
            (3, 1, 751000000.0, 751000000.0, 752200000.0, "A lighthouse hotel", "# Old idea\nA lighthouse hotel",
             "Old idea", "6EC0BD7F-11C0-43DA-975E-2A8AD9EBAE0B")])
    db.close()
    return path


def test_a_rows_ids_uuids_numbers_and_blobs_are_metadata_not_embedded_text(tmp_path: Path) -> None:
    # `add --table ZSFNOTE --text-column ZTEXT` keeps every other column: the ones holding words
    # (a title, a subtitle) are embedded with the text, while ids, UUIDs, hashes, flags and times
    # stay metadata only (filters still read them); embedded, they were noise to every search
    from vecbook.config import CollectionConfig
    from vecbook.registry import sqlite_table
    from vecbook.sources import load_collection

    path = bear_database(tmp_path / "database.sqlite")
    _, query = sqlite_table(path, "ZSFNOTE", "ZTEXT")
    collection = CollectionConfig(name="bear", database=path, query=query, database_label="database.sqlite")
    records, _, _ = load_collection(collection)
    kyoto = next(r for r in records if r.id == "bear:1")
    header = kyoto.content[:-len(kyoto.text)].splitlines()
    assert header == ["ZLASTEDITINGDEVICE: Ana's MacBook Pro", "ZSUBTITLE: Book the ryokan", "ZTITLE: Trip to Kyoto",
                      "date: 2024-10-30T16:53:20+00:00"]
    assert kyoto.metadata["ZUNIQUEIDENTIFIER"] == "9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D"
    # the fields holding words come first, as a hit's metadata line shows the first few
    assert list(kyoto.metadata)[:4] == ["ZLASTEDITINGDEVICE", "ZSUBTITLE", "ZTITLE", "date"]
    assert (kyoto.metadata["Z_PK"], kyoto.metadata["ZCREATIONDATE"], kyoto.metadata["ZPINNED"]) == (1, 752000000.5, 0)


@pytest.mark.parametrize("value, embedded", [
    ("Lisbon trip", True), ("清水寺", True), ("اجتماع", True), ("https://example.com/a", True),
    ("9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", False), ("{9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D}", False),
    ("f1ae8b0e3a2845c1a065ee7e2c35abcc", False), ("d41d8cd98f00b204e9800998ecf8427e", False),
    ("AAAAB3NzaC1yc2EAAAADAQAB", False), ("2024-03-01T13:33:20+00:00", False), ("1709300000", False),
    ("+15551234567", True), ("(555) 123-4567", True),  # a sender's number names a person
    # a title that opens with its day, as daily notes are named (Joplin keeps the title out of the body)
    ("2024-03-05 Standup with Ana", True), ("2024-03-05 10:00", False), ("2024-03-05 10:00:00.123Z", False),
    ("2024-03-05", False),
    ("", False), ("0", False), (42, False), (3.5, False), (True, False),
])
def test_only_row_values_holding_words_are_embedded(value: Any, embedded: bool) -> None:
    from vecbook.sqlite_rows import embedded_field

    assert embedded_field("note", value) is embedded
    assert embedded_field("date", "2024-03-01T13:33:20+00:00")  # a row's date is embedded, as a file's Date: is
    assert not embedded_field("parent_id", "user_42") and not embedded_field("noteId", "abc")


@pytest.mark.parametrize("key", ["title", "ZTITLE", "subject", "note_title", "Subject"])
@pytest.mark.parametrize("value", ["standup-2024-03-05", "Q3-2024-Roadmap", "COVID-19_vaccine", "2024-03-05"])
def test_a_title_written_as_one_word_with_digits_is_embedded(key: str, value: str) -> None:
    # a slug's letters and digits looked like a key or a hash: a Joplin note titled so (its title is
    # not in its body) was found by no word of its title
    from vecbook.sqlite_rows import embedded_field

    assert embedded_field(key, value)
    assert not embedded_field("token", "Q3-2024-Roadmap")  # another column's such value is still a token


def test_rows_in_the_apps_trash_are_left_out_with_a_count_in_the_log(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    # Bear keeps a trashed note with ZTRASHED = 1 until the trash is emptied: searched, the note
    # the person threw away came first for "lighthouse"
    bear_database(tmp_path / "database.sqlite")
    (tmp_path / "data").mkdir()
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "bear", "database": "database.sqlite", "query": "SELECT Z_PK AS id, ZTEXT AS content, ZTITLE AS title, "
                                                                 "ZTRASHED FROM ZSFNOTE"}]))
    with caplog.at_level(logging.INFO, logger="vecbook"):
        book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False)
        assert [hit.id for hit in book.search("lighthouse hotel")] == []
    assert "left out: database.sqlite: collection 'bear': 1 note in Bear's trash; keep_trashed = true keeps it" \
        in caplog.messages
    assert book.stats()["collections"]["bear"]["records"] == 2
    config = vecbook.load_config(write_config(tmp_path, [
        {"name": "bear", "database": "database.sqlite", "keep_trashed": True,
         "query": "SELECT Z_PK AS id, ZTEXT AS content, ZTRASHED FROM ZSFNOTE"}]))
    book = vecbook.VecBook(config=config, keyword_only=True, cache_directory=False)
    assert [hit.id for hit in book.search("lighthouse hotel")] == ["bear:3"]


@pytest.mark.parametrize("column, kept, trashed", [
    ("deleted_time INTEGER", 0, 1700000999000),             # Joplin 3's trash: when it was deleted, 0 if not
    ("is_deleted INTEGER", 0, 1),
    ("deleted_at TEXT", None, "2024-03-01 10:00:00"),        # Rails, Laravel: NULL while the row lives
    ("trashed TEXT", "false", "true"),
    ("ZMARKEDFORDELETION INTEGER", 0, 1),                   # Apple Notes
    ("is_deleted TEXT", "N", "Y"),                          # a Y/N flag, as older systems and hand-made tables keep one
    ("deleted TEXT", "f", "t"),                             # PostgreSQL's text for a boolean, as a dump copies it
    ("is_deleted TEXT", "NULL", "1"),                       # a CSV's empty cell, imported as the text NULL
])
def test_each_usual_soft_delete_column_leaves_the_rows_it_marks_out(tmp_path: Path, column: str, kept: Any,
                                                                    trashed: Any) -> None:
    from vecbook.config import CollectionConfig
    from vecbook.sources import load_collection

    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE notes (id INTEGER PRIMARY KEY, content TEXT, {column})")
        db.executemany("INSERT INTO notes VALUES (?, ?, ?)", [(1, "kept", kept), (2, "thrown away", trashed)])
    db.close()
    records, problems, _ = load_collection(CollectionConfig(name="app", database=path, table="notes"))
    assert [r.id for r in records] == ["app:1"] and [p.left_out for p in problems] == [True]  # said, as no fault
    records, _, _ = load_collection(CollectionConfig(name="app", database=path, table="notes", keep_trashed=True))
    assert [r.id for r in records] == ["app:1", "app:2"]


def test_keep_trashed_is_a_boolean_for_databases_alone(tmp_path: Path) -> None:
    with pytest.raises(vecbook.ConfigError, match="'keep_trashed' in .* must be true or false, got 'yes'"):
        vecbook.load_config(write_config(tmp_path, [{"name": "a", "database": "a.db", "keep_trashed": "yes"}]))
    with pytest.raises(vecbook.ConfigError, match="'keep_trashed' applies to a SQLite 'database'"):
        vecbook.load_config(write_config(tmp_path, [{"name": "a", "path": "a.zip", "keep_trashed": True}]))


def test_an_apps_table_added_with_its_text_column_is_dated_by_its_creation_time(tmp_path: Path) -> None:
    # `add --table ZSFNOTE --text-column ZTEXT` (Bear: Core Data's seconds since 2001) and
    # `--table notes --text-column body` (Joplin: milliseconds since 1970) gave rows no date, so
    # --since found none of them; the query add writes names the creation time `date`
    from vecbook.config import CollectionConfig
    from vecbook.sqlite_tables import sqlite_table
    from vecbook.sources import load_collection

    bear = bear_database(tmp_path / "database.sqlite")
    joplin = tmp_path / "joplin.sqlite"
    with sqlite3.connect(joplin) as db:
        db.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT, body TEXT, created_time INT, "
                   "user_created_time INT, deleted_time INT)")
        db.execute("INSERT INTO notes VALUES ('f1ae8b0e3a2845c1a065ee7e2c35abcc', 'Rezept', 'Apfelstrudel', "
                   "1700000000000, 1600000000000, 0)")
    db.close()
    dates = {}
    for path, table, column in ((bear, "ZSFNOTE", "ZTEXT"), (joplin, "notes", "body")):
        _, query = sqlite_table(path, table, column)
        records, _, _ = load_collection(CollectionConfig(name="app", database=path, query=query))
        dates[table] = [r.metadata["date"] for r in records]
    assert dates == {"ZSFNOTE": ["2024-10-30T16:53:20+00:00", "2024-10-30T16:55:00+00:00"],
                     "notes": ["2020-09-13T12:26:40+00:00"]}  # the time the user gave it, as Joplin shows


@pytest.mark.parametrize("schema, column, value, date", [
    ("written INTEGER", "written", 1709300000, "2024-03-01T13:33:20+00:00"),  # Unix seconds
    ("written INTEGER", "written", 1709300000123, "2024-03-01T13:33:20+00:00"),  # milliseconds (JavaScript, Anki)
    # ISO text, as SQLite's datetime() and Calibre write it
    ("written TEXT", "written", "2024-03-01 13:33:20.123456+00:00", "2024-03-01 13:33:20.123456+00:00"),
    # Core Data (Day One, Apple's apps): seconds since 2001
    ("Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZWRITTEN TIMESTAMP", "ZWRITTEN", 731000000.0,
     "2024-03-01T15:33:20+00:00"),
    # seconds since 2001 outside Core Data (Safari's history_visits.visit_time): as Unix time, 1993
    ("written REAL", "written", 731000000.5, "2024-03-01T15:33:20+00:00"),
    ("written INTEGER", "written", 731000000123456789, "2024-03-01T15:33:20+00:00"),  # in nanoseconds
    # Unix time of the 1990s, which as seconds since 2001 would be after today: Unix time
    ("written INTEGER", "written", 946000000, "1999-12-24T01:46:40+00:00"),
    # the column named wins over a `date` column the table has (a Date the app writes as a weekday)
    ("\"Date\" TEXT DEFAULT 'Friday', written INTEGER", "written", 1709300000, "2024-03-01T13:33:20+00:00"),
])
def test_the_column_add_is_told_dates_the_rows(tmp_path: Path, schema: str, column: str, value: Any,
                                               date: str) -> None:
    # a diary dated by "written" (Unix time) was added undated, the only way to date it an edit of
    # the query by hand
    from vecbook.config import CollectionConfig
    from vecbook.sqlite_tables import sqlite_table
    from vecbook.sources import load_collection

    path = tmp_path / "diary.db"
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE entries ({schema}, body TEXT)")
        db.execute(f'INSERT INTO entries ("{column}", body) VALUES (?, ?)', (value, "Swam 40 lengths"))
    db.close()
    _, query = sqlite_table(path, "entries", "body", date_column=column)
    records, problems, _ = load_collection(CollectionConfig(name="diary", database=path, query=query))
    assert [r.metadata["date"] for r in records] == [date] and not problems
    assert [k for k in records[0].metadata if k.lower() == "date"] == ["date"]


def test_a_table_of_id_and_content_is_dated_by_the_column_named(tmp_path: Path) -> None:
    from vecbook.config import CollectionConfig
    from vecbook.sqlite_tables import sqlite_table
    from vecbook.sources import load_collection

    path = tmp_path / "store.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE docs (id TEXT PRIMARY KEY, content TEXT, ts INTEGER)")
        db.execute("INSERT INTO docs VALUES ('a1', 'Swam 40 lengths', 1709300000)")
    db.close()
    assert sqlite_table(path, None, None) == ("docs", None)
    table, query = sqlite_table(path, None, None, date_column="ts")
    records, _, _ = load_collection(CollectionConfig(name="store", database=path, table=table, query=query))
    assert [(r.id, r.metadata["date"]) for r in records] == [("store:a1", "2024-03-01T13:33:20+00:00")]
    with pytest.raises(vecbook.ConfigError, match=r"^no column 'when' in table 'docs'; columns: id, content, ts$"):
        sqlite_table(path, None, None, date_column="when")


@pytest.mark.parametrize("column, said", [
    ("day", 'add it with `--date-column day` (after `vecbook remove db`: an ISO date, or a Unix or Core Data '
            'time), or add `, "day" AS date` before FROM in its query'),
    ("entry_date", "add it with `--date-column entry_date` (after `vecbook remove db`: an ISO date, or a Unix or "
                   'Core Data time), or add `, "entry_date" AS date` before FROM in its query'),
    ("mood", "add it with `--date-column COLUMN` (after `vecbook remove db`: an ISO date, or a Unix or Core Data "
             "time), or add `, <column> AS date` before FROM in its query"),
])
def test_a_table_added_with_its_text_column_and_no_date_column_says_how_to_date_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, said: str) -> None:
    # a diary table dated by "day" was added with no dates line and no word: --since found none of it
    with sqlite3.connect(tmp_path / "db.sqlite") as db:
        db.execute(f"CREATE TABLE entries (id INTEGER PRIMARY KEY, {column} TEXT, body TEXT)")
        db.execute("INSERT INTO entries VALUES (1, '2024-03-01', 'Planted tomatoes in the garden')")
    db.close()
    config = tmp_path / "vecbook.toml"
    code = vecbook.main(["add", str(tmp_path / "db.sqlite"), "--table", "entries", "--text-column", "body",
                         "--config", str(config)])
    out, err = capsys.readouterr()
    assert code == 0 and "dates:" not in out, out
    assert "WARN no dates: the table has no date column VecBook reads (date, or a creation time such as " \
           f"created_at), so --since, --until and recency pass its rows by; to date them, {said} in {config}" in err, err


class _Counted:
    """A compiled pattern that counts its uses."""

    def __init__(self, pattern: Any) -> None:
        self.pattern, self.uses = pattern, 0

    def search(self, text: str) -> Any:
        self.uses += 1
        return self.pattern.search(text)

    match = search


def test_a_tables_column_names_and_repeated_values_are_judged_once_a_read_not_once_a_row(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # whether a field is embedded was worked out twice a field a row, from its column's name and its
    # value: 30,000 rows of a chat table took 1.7 s of CPU to read, at every change of the database
    from vecbook import sqlite_rows
    from vecbook.config import CollectionConfig

    names, tokens = _Counted(sqlite_rows._ID_COLUMN_RE), _Counted(sqlite_rows._TOKEN_RE)
    monkeypatch.setattr(sqlite_rows, "_ID_COLUMN_RE", names)
    monkeypatch.setattr(sqlite_rows, "_TOKEN_RE", tokens)
    columns = ["id", "content", "sender", "thread_title", "date", "guid", "is_read"]
    rows = [(n, f"message {n} 東京", ("Ana", "Chen Wei")[n % 2], f"Thread {n % 3}", 1709300000 + n,
             f"{n:032x}", n % 2) for n in range(300)]
    records, problems, skipped = sqlite_rows.rows_to_records(
        CollectionConfig(name="chat", database_label="chat.db", table="messages"), columns, rows)
    assert len(records) == 300 and not problems and not skipped
    assert names.uses <= len(columns) and tokens.uses <= 2 + 3 + 300, (names.uses, tokens.uses)
    first = records[1]
    assert list(first.metadata)[:2] == ["sender", "thread_title"]  # the worded fields first, as before
    assert first.metadata["date"] == "2024-03-01T13:33:21+00:00" and first.metadata["guid"] == f"{1:032x}"
    assert first.content == ("sender: Chen Wei\nthread_title: Thread 1\ndate: 2024-03-01T13:33:21+00:00\n"
                             "message 1 東京")
