"""imessage-exporter's text export (``imessage-exporter -f txt``): one ``.txt`` a conversation,
each message a block of its time, its sender and its lines; detected apart from notes."""

from __future__ import annotations

from pathlib import Path

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import FORMATS, detect_format, load_export, reader
from vecbook.exports.base import Export
from vecbook.exports.notes import Folder, read_file
from vecbook.registry import choose_format

from conftest import FakeEmbedder, assert_messages_cited, cited_lines

# As imessage-exporter writes it (exporters/txt): the time as chrono's "%b %d, %Y %l:%M:%S %p"
# (the hour space-padded), a read receipt after it, the sender ("Me" for the owner), the
# message's lines, then a blank line. Tapbacks follow the part they react to; a reply is
# written indented under the message it answers, and again in its place with a note; a group
# event is one line after its time; an edit keeps its history; an attachment is its path.
GROUP = """\
Jun 14, 2025  9:58:12 AM You named the conversation Família 🌴

Jun 14, 2025 10:00:05 AM
Ana Lima
lunch at Café Lisboa? ☕
Tapbacks:
Loved by Me


Jun 14, 2025 10:01:40 AM (Read by you after 2 minutes, 3 seconds)
+15551234567
שלום! מה שלומך
the second line of one message
Sent with Confetti

Jun 14, 2025 10:02:00 AM (Read by them after 1 minute)
Me
Jun 14, 2025 10:02:00 AM see you at noon
Edited 12 seconds later: see you at 12:30 🍕
    Jun 14, 2025 10:03:00 AM
    Ana Lima
    perfect


Jun 14, 2025 10:03:00 AM
Ana Lima
perfect
This message responded to an earlier message.

Jun 14, 2025 10:04:10 AM
Me
/Users/me/Library/Messages/Attachments/ab/11/7F3E2A/IMG_0420.HEIC
the menu 📷

Jun 14, 2025 10:05:00 AM
Me
You unsent this message part 5 seconds after sending!

Jun 14, 2025  3:30:00 PM
Ana Lima
東京の写真ありがとう

"""


def collection(path: Path, name: str = "im", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def export_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "imessage_export"
    folder.mkdir()
    (folder / "Família 🌴 - 12.txt").write_text(GROUP, encoding="utf-8")
    (folder / "+15551234567.txt").write_text(
        "Jun 15, 2025 11:00:00 PM\n+15551234567\nare you awake?\n\n"
        "Jun 15, 2025 11:01:30 PM\nMe\nyes\n\n", encoding="utf-8")
    (folder / "orphaned.txt").write_text("")  # written always, empty when every message has a chat
    return folder


def test_each_message_is_read_with_its_sender_time_and_lines(tmp_path: Path) -> None:
    folder = export_folder(tmp_path)
    records, problems, _ = load_export(collection(folder))
    assert [str(p) for p in problems] == []
    single, first, late = sorted(records, key=lambda r: (r.file_path, r.line_number or 0))
    assert first.text == ("Ana Lima: lunch at Café Lisboa? ☕\n"
                          "+15551234567: שלום! מה שלומך\nthe second line of one message\n"
                          "Me: see you at 12:30 🍕\n"
                          "Ana Lima: perfect\n"
                          "Me: [attachment: IMG_0420.HEIC]\nthe menu 📷")
    assert first.metadata == {"date": "2025-06-14T10:00:05", "end_date": "2025-06-14T10:04:10",
                              "participants": ["Ana Lima", "+15551234567", "Me"],
                              "conversation": "Família 🌴", "format": "imessage-txt", "message_count": 5}
    assert first.citation == "im/Família 🌴 - 12.txt:3-33"
    assert [s[1:] for s in first.segments] == [(3, 5), (10, 13), (16, 19), (25, 27), (30, 33)]
    assert (late.text, late.metadata["date"], late.citation) == (
        "Ana Lima: 東京の写真ありがとう", "2025-06-14T15:30:00", "im/Família 🌴 - 12.txt:39-41")
    assert single.text == "+15551234567: are you awake?\nMe: yes"
    assert single.metadata["conversation"] == "+15551234567"
    for record in (late, single):
        assert_messages_cited(folder, record)
    assert cited_lines(folder, first)[-2:] == ["/Users/me/Library/Messages/Attachments/ab/11/7F3E2A/IMG_0420.HEIC",
                                               "the menu 📷"]


def test_a_folder_of_imessage_exporter_files_is_its_own_format(tmp_path: Path) -> None:
    folder = export_folder(tmp_path)
    assert "imessage-txt" in FORMATS
    assert detect_format(collection(folder)) == "imessage-txt"
    assert choose_format(folder, "im", None) == "imessage-txt"  # what `vecbook add` names
    assert choose_format(folder / "+15551234567.txt", "im", None) == "imessage-txt"


def test_notes_that_start_with_a_date_stay_notes(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "journal.txt").write_text("Jun 14, 2025\nWent to the beach with Ana.\n")
    (notes / "meeting.txt").write_text("Jun 14, 2025 10:00 AM standup\nBo: shipped the fix\n")
    (notes / "log.txt").write_text("Jun 14, 2025 10:00:00 AM\n\nserver restarted\n")
    (notes / "todo.txt").write_text("buy milk\n")
    assert choose_format(notes, "notes", None) == "notes"
    detector = reader("imessage-txt")
    for path in notes.iterdir():
        assert not detector.detect(Export("x", path, "x")), path.name


def test_a_chat_inside_a_notes_folder_is_read_as_a_chat(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "Messages").mkdir(parents=True)
    (notes / "todo.txt").write_text("buy milk\n")
    chat = notes / "Messages" / "Bo.txt"
    chat.write_text("Jun 15, 2025 11:00:00 PM\nBo\nbring the tent ⛺\n\n")
    assert choose_format(notes, "notes", None) == "notes"
    records, problems, kind = read_file(Folder("notes", notes, "notes/"), "Messages/Bo.txt", chat)
    assert kind == "imessage-txt" and problems == []
    assert [(r.text, r.citation, r.metadata["conversation"]) for r in records] == [
        ("Bo: bring the tent ⛺", "notes/Messages/Bo.txt:1-3", "Bo")]


def test_imessage_exporter_windows_are_searched_and_filtered(tmp_path: Path) -> None:
    folder = export_folder(tmp_path)
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "im"\npath = "{folder}"\n')
    (tmp_path / "notes").mkdir()
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("Lisboa lunch", mode="keyword", filters={"participants__contains": "Ana Lima",
                                                               "format": "imessage-txt"})
    assert hits and hits[0].citation.startswith("im/Família 🌴 - 12.txt:3-")
