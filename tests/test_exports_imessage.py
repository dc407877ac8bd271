"""iMessage export collections: macOS Messages' chat.db read in place, read-only."""

from __future__ import annotations

import os
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import FORMATS, detect_format, load_export, open_export, reader
from vecbook.exports.imessage import apple_date, attributed_body_text

from conftest import EXPORTS, FakeEmbedder

IMESSAGE = EXPORTS / "imessage"
CHAT_DB = IMESSAGE / "macos-ts_synthetic_chat.db"
BLOBS = IMESSAGE / "imessage-exporter_attributedBody_streamtyped"


def collection(path: Path, name: str = "im", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


# -- the fixture, record by record --

EXPECTED = [  # (citation, text): one window per chat and pause; cited by the first message's ROWID
    ("im/chat.db#message:1", "+15551234567: Hey, how are you?\nme: I'm doing great, thanks!"),
    ("im/chat.db#message:3", "+15551234567: Want to grab lunch tomorrow?\nme: Sure, sounds good!"),
    ("im/chat.db#message:5", "+15551234567: See you at noon 🍕"),
    ("im/chat.db#message:10", "me: Who's free this Saturday?\n+15551234567: I'm in!"),
    ("im/chat.db#message:12", "+15559876543: Count me in too\nalice@example.com: What time works for everyone?"),
    ("im/chat.db#message:15", "me: Here's a photo of the venue\n[attachment: venue.jpg]"),
    ("im/chat.db#message:6", "alice@example.com: Check out this cool project!\nme: That looks awesome!"),
    ("im/chat.db#message:8", "me: Can you send me the link?"),
    ("im/chat.db#message:9", "alice@example.com: Here's the screenshot\n[attachment: screenshot.png]"),
]


@pytest.fixture
def chat_db(tmp_path: Path) -> Path:
    """The fixture copied as a user has it: a folder holding chat.db."""
    folder = tmp_path / "Messages"
    folder.mkdir()
    shutil.copy(CHAT_DB, folder / "chat.db")
    return folder


def test_the_fixture_loads_as_conversation_windows_with_row_citations(chat_db: Path) -> None:
    records, problems, facts = load_export(collection(chat_db))
    assert [(r.citation, r.text) for r in records] == EXPECTED
    group = records[4]
    assert group.metadata == {"date": "2025-06-15T09:00:00+00:00", "end_date": "2025-06-15T09:00:00+00:00",
                              "participants": ["+15559876543", "alice@example.com"],
                              "conversation": "Weekend Plans", "format": "imessage", "message_count": 2}
    assert (group.id, group.file_path, group.source) == ("im:chat.db#msg-guid-12", "im/chat.db", "im")
    assert (group.line_number, group.end_line, group.segments) == (None, None, ())
    assert group.lines_of(0, 10) == (None, None)
    # message 14 is an attributedBody holding only a placeholder character
    assert [str(p) for p in problems] == ["im/chat.db: collection 'im': 1 message without text skipped (message:14)"]
    assert facts["format"] == "imessage"


def test_a_chat_db_given_as_the_file_itself_loads_the_same(chat_db: Path) -> None:
    records, _, _ = load_export(collection(chat_db / "chat.db"))
    assert [(r.citation, r.text) for r in records] == EXPECTED


def test_dates_are_apple_epoch_seconds_or_nanoseconds() -> None:
    assert apple_date(771588000000000000) == datetime(2025, 6, 14, 10, 0, tzinfo=timezone.utc)  # macOS 10.13+
    assert apple_date(771588000) == datetime(2025, 6, 14, 10, 0, tzinfo=timezone.utc)  # older macOS
    assert apple_date(0) is None and apple_date(None) is None


@pytest.mark.parametrize("blob, text", [
    ("AttributedBodyTextOnly", "Noter test"),
    ("AttributedBodyTextOnly2", "Test 3"),
    ("Blank", ""),
    ("ExtraData", "This is parsing  "),  # its length runs past the blob: read to the object's end
    ("MultiPart", "\ufffctest 1\ufffctest 2 \ufffctest 3"),
    ("URL", "https://github.com/ReagentX/Logria"),
    ("WeirdText", "𝖍𝖊𝖑𝖑𝖔 𝖜𝖔𝖗𝖑𝖉"),
])
def test_attributed_body_blobs_decode_to_their_string(blob: str, text: str) -> None:
    assert attributed_body_text((BLOBS / blob).read_bytes()) == text


def test_attributed_body_long_lengths_and_no_string() -> None:
    long = "x" * 300
    two = b"\x84\x84\x08NSString\x01\x94\x84\x01+\x81" + (300).to_bytes(2, "little") + long.encode() + b"\x86\x84"
    four = b"\x84\x84\x08NSString\x01\x94\x84\x01+\x82" + (300).to_bytes(4, "little") + long.encode() + b"\x86"
    assert attributed_body_text(two) == long and attributed_body_text(four) == long
    assert attributed_body_text(b"streamtyped NSDictionary") is None


# -- older schemas, group names, bad input --

def make_old_chat_db(path: Path) -> Path:
    """A chat.db as OS X 10.12 wrote it: dates in seconds, no attributedBody column; an unnamed group."""
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE handle (ROWID INTEGER PRIMARY KEY, id TEXT);
            CREATE TABLE chat (ROWID INTEGER PRIMARY KEY, chat_identifier TEXT, display_name TEXT);
            CREATE TABLE message (ROWID INTEGER PRIMARY KEY, guid TEXT, text TEXT, handle_id INTEGER,
                                  is_from_me INTEGER, date INTEGER, associated_message_type INTEGER);
            CREATE TABLE chat_message_join (chat_id INTEGER, message_id INTEGER);
            CREATE TABLE chat_handle_join (chat_id INTEGER, handle_id INTEGER);
            INSERT INTO handle VALUES (1, 'ana@example.com'), (2, '+4915112345678');
            INSERT INTO chat VALUES (1, 'chat99', '');
            INSERT INTO chat_handle_join VALUES (1, 1), (1, 2);
            INSERT INTO message VALUES (1, 'G1', 'Ferry at 9?', 1, 0, 500000000, 0),
                                       (2, 'G2', 'Loved “Ferry at 9?”', 2, 0, 500000010, 2000),
                                       (3, 'G3', 'Yes, see you there', 0, 1, 500000060, 0),
                                       (4, 'G4', 'No date on this one', 2, 0, 0, 0);
            INSERT INTO chat_message_join VALUES (1, 1), (1, 2), (1, 3), (1, 4);
        """)
    return path


def test_an_older_schema_with_second_dates_and_an_unnamed_group(tmp_path: Path) -> None:
    make_old_chat_db(tmp_path / "chat.db")
    records, problems, _ = load_export(collection(tmp_path))
    assert [(r.citation, r.text, r.metadata["conversation"], r.metadata["date"]) for r in records] == [
        ("im/chat.db#message:1", "ana@example.com: Ferry at 9?\nme: Yes, see you there\n"
         "+4915112345678: No date on this one", "ana@example.com, +4915112345678", "2016-11-05T00:53:20+00:00"),
    ]  # the tapback ("Loved ...") is not a message of its own; an undated message comes last
    assert [p.reason for p in problems] == ["collection 'im': 1 message without a date kept undated"]


def test_one_persons_sms_and_imessage_chats_interleave_by_time(tmp_path: Path) -> None:
    path = make_old_chat_db(tmp_path / "chat.db")
    with sqlite3.connect(path) as db:
        db.executescript("""
            INSERT INTO chat VALUES (2, 'ana@example.com', NULL), (3, 'ana@example.com', NULL);
            INSERT INTO message VALUES (10, 'G10', 'on iMessage', 1, 0, 600000000, 0),
                                       (11, 'G11', 'on SMS', 1, 0, 600000030, 0),
                                       (12, 'G12', 'iMessage again', 0, 1, 600000060, 0);
            INSERT INTO chat_message_join VALUES (2, 10), (3, 11), (2, 12);
        """)
    records, _, _ = load_export(collection(tmp_path))
    ana = [r for r in records if r.metadata["conversation"] == "ana@example.com"]
    assert [r.text for r in ana] == ["ana@example.com: on iMessage\nana@example.com: on SMS\nme: iMessage again"]


def test_two_groups_of_one_name_with_other_members_stay_apart(tmp_path: Path) -> None:
    path = make_old_chat_db(tmp_path / "chat.db")
    with sqlite3.connect(path) as db:
        db.executescript("""
            -- a handle row per address and service: the SMS copy of the group lists them otherwise
            INSERT INTO handle VALUES (3, 'bo@example.com'), (4, '+4915112345678'), (5, 'ana@example.com');
            UPDATE chat SET display_name = 'Family' WHERE ROWID = 1;
            INSERT INTO chat VALUES (2, 'chat77', 'Family'), (3, 'chat78', 'Family');
            INSERT INTO chat_handle_join VALUES (2, 3), (3, 4), (3, 5);
            INSERT INTO message VALUES (10, 'G10', 'the other Family', 3, 0, 500000020, 0),
                                       (11, 'G11', 'the same people again', 1, 0, 500000030, 0);
            INSERT INTO chat_message_join VALUES (2, 10), (3, 11);
        """)
    records, _, _ = load_export(collection(tmp_path))
    assert {r.metadata["conversation"]: r.text.splitlines()[:2] for r in records} == {
        "Family (+4915112345678, ana@example.com)": ["ana@example.com: Ferry at 9?",
                                                      "ana@example.com: the same people again"],
        "Family (bo@example.com)": ["bo@example.com: the other Family"]}


def test_a_corrupt_database_is_a_warning_not_a_failed_start(tmp_path: Path) -> None:
    data = CHAT_DB.read_bytes()
    (tmp_path / "chat.db").write_bytes(data[:4096] + b"\x00" * 100 + data[8192:12288])
    records, problems, _ = load_export(collection(tmp_path, fmt="imessage"))
    assert records == []
    assert [str(p) for p in problems] == [
        "im/chat.db: collection 'im': cannot read database: database disk image is malformed: the file is damaged "
        "(cut short, or copied while its app was writing to it): copy it again with the app closed, or from a backup"]


def test_a_folder_without_a_messages_database_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "chat.db").write_bytes(b"not a database")
    records, problems, _ = load_export(collection(tmp_path, fmt="imessage"))
    assert records == [] and "no Messages database found" in problems[0].reason


def test_a_sqlite_file_without_the_messages_tables_is_not_imessage(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "notes.db") as db:
        db.execute("CREATE TABLE message (id INTEGER, text TEXT)")
    assert not reader("imessage").detect(open_export(collection(tmp_path)))


# -- read-only --

def test_loading_writes_nothing_beside_the_database(chat_db: Path) -> None:
    before = snapshot(chat_db)
    load_export(collection(chat_db))
    assert snapshot(chat_db) == before


def test_a_wal_database_is_read_without_creating_wal_or_shm_files(chat_db: Path) -> None:
    with sqlite3.connect(chat_db / "chat.db") as db:
        db.execute("PRAGMA journal_mode=WAL")
    os.utime(chat_db / "chat.db", ns=(1, 1))
    before = snapshot(chat_db)
    assert list(before) == ["chat.db"]
    records, _, _ = load_export(collection(chat_db))
    assert len(records) == len(EXPECTED) and snapshot(chat_db) == before


# -- detection --

def test_detected_from_its_tables_and_by_no_other_reader(chat_db: Path) -> None:
    assert detect_format(collection(IMESSAGE)) == "imessage"
    assert detect_format(collection(chat_db / "chat.db")) == "imessage"
    others = [name for name in FORMATS if name != "imessage"]
    assert not [name for name in others if reader(name).detect(open_export(collection(IMESSAGE)))]


@pytest.mark.parametrize("folder", sorted(p.name for p in EXPORTS.iterdir() if p.is_dir() and p.name != "imessage"))
def test_the_imessage_detector_says_no_to_other_exports(folder: str) -> None:
    assert not reader("imessage").detect(open_export(collection(EXPORTS / folder)))


# -- search and filters --

def test_imessage_is_searched_and_filtered_beside_the_notes(tmp_path: Path, chat_db: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("lunch menu ideas\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "im"\npath = "{chat_db}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    top = book.search("grab lunch tomorrow", mode="keyword", filters={"source": "im"})[0]
    assert (top.citation, top.line_number, top.end_line) == ("im/chat.db#message:3", None, None)
    assert top.to_dict()["line_number"] is None
    group = book.search("everyone saturday", mode="keyword", filters={"conversation": "Weekend Plans"})
    assert {h.citation for h in group} == {"im/chat.db#message:10", "im/chat.db#message:12"}
    mine = book.search("link", mode="keyword", filters={"participants__contains": "me", "date__gte": "2025-06-01"})
    assert {h.citation for h in mine} >= {"im/chat.db#message:8"}
    assert all("me" in h.metadata["participants"] and h.metadata["date"] >= "2025-06-01" for h in mine)
    assert book.stats()["collections"]["im"]["format"] == "imessage"


def test_the_benchmark_chat_db_loads_without_warnings(tmp_path: Path) -> None:
    from bench.export_imessage import generate

    generate(tmp_path, 400, seed=2)
    records, problems, _ = load_export(collection(tmp_path))
    assert problems == []
    assert sum(r.metadata["message_count"] for r in records) < 400  # tapbacks are not messages
    assert any("[attachment: IMG_" in r.text for r in records)
    assert all(r.citation.startswith("im/chat.db#message:") and r.metadata["date"] for r in records)
    assert any(r.metadata["conversation"].startswith("Group ") for r in records)
