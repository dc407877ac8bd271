"""A folder that holds more than one kind of file is read file by file, at any depth, in one
source: ``.md`` notes by the Markdown reader, ``.txt`` files as records, an export found inside
by its own reader (or named in a WARN with the ``vecbook add`` line that reads it); the data
directory alike. Each file is read again only when it changed."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

import vecbook
from conftest import EXPORTS, FakeEmbedder, cited_lines, write_tree
from vecbook.config import CollectionConfig, load_config
from vecbook.exports import load_export as read_whole

WHATSAPP = EXPORTS / "whatsapp" / "chat-analytics_2A_5M.txt"
TELEGRAM = EXPORTS / "telegram" / "chat-analytics_DM_2A_7M.json"
VAULT = EXPORTS / "obsidian" / "kepano-obsidian-vault"

KYOTO = """---
tags: [viaje, 日本]
date: 2024-03-02
---
# 京都 Kyoto
Visit Fushimi Inari at dawn 🦊 and eat yudōfu.

## Café
The café near Nanzen-ji serves matcha crème brûlée. #food
"""
READING = "Date: 2024-03-03\nTags: bücher\n\nLire « L'Étranger » de Camus, en français 📚\n---\n北京烤鸭: order a day ahead.\n"
NOTES = {
    "Trips/2024/Kyoto.md": KYOTO,
    "reading.txt": READING,
    "Trips/packing.txt": "Passport, yen, the rail pass 🚄.\n",
    # a subfolder with more .txt than .md: its note is read all the same
    "Archive/old/a.txt": "Ancienne note sur la forêt.\n",
    "Archive/old/b.txt": "Old note about the harbour.\n",
    "Archive/old/c.md": "# Harbour\nThe ferry leaves at 07:40 from pier ٣.\n",
    "Attachments/photo.jpg": b"\xff\xd8\xff\xe0",
    ".obsidian/app.json": "{}",
    ".trash/gone.md": "# Gone\ndeleted note\n",
}


def write_notes(root: Path) -> Path:
    """The notes folder of these tests: notes and records at several depths, a WhatsApp chat
    and a Telegram chat export among them, a picture, and hidden folders."""
    write_tree(root, NOTES)
    (root / "Chats" / "ChatExport_2024-03-01").mkdir(parents=True)
    shutil.copy(WHATSAPP, root / "Chats" / "WhatsApp Chat with B.txt")
    shutil.copy(TELEGRAM, root / "Chats" / "ChatExport_2024-03-01" / "result.json")
    past = time.time() - 60  # settled: the keyword cache keeps them
    for folder, _, names in os.walk(root):
        for name in names:
            os.utime(Path(folder, name), (past, past))
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = vecbook.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_outlook_files_in_a_notes_folder_are_counted_with_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a .pst beside notes was only "1 other file not read (.pst)": its mail lost without a way on
    write_tree(tmp_path / "nb", {"plan.md": "# Plan\n\nThe trip to Kyoto.\n", "archive.pst": "!BDN",
                                 "old.ost": "!BDN", "photo.jpg": "x"})
    code, out, err = run(capsys, "add", str(tmp_path / "nb"), "--config", str(tmp_path / "vecbook.toml"))
    assert code == 0, err
    assert "  files: 1 Markdown note, 3 other files not read (.jpg, .ost, .pst)\n" \
           "    1 Outlook data file (.pst) is not read (VecBook reads none): convert it with readpst" in out, out
    assert "    1 Outlook offline cache (.ost) is not read (VecBook reads none): export the mailbox" in out, out
    code, out, err = run(capsys, "sources", "--config", str(tmp_path / "vecbook.toml"))
    assert "\n    1 Outlook data file (.pst) is not read" in out, out


def test_a_notes_folder_whose_notes_hold_no_text_says_so_not_that_it_holds_no_notes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a folder of one note, "# Plan" alone, was refused as holding "no notes (.md, .txt)"
    write_tree(tmp_path / "nb", {"plan.md": "# Plan\n"})
    code, _, err = run(capsys, "add", str(tmp_path / "nb"), "--config", str(tmp_path / "vecbook.toml"))
    assert code == 2 and err == f"vecbook: error: nothing to search in {tmp_path / 'nb'}: its 1 Markdown note holds " \
                                "no text (a heading alone makes no record); nothing was added\n", err


def by_file(records: list[vecbook.Record]) -> dict[str, list[vecbook.Record]]:
    found: dict[str, list[vecbook.Record]] = {}
    for record in records:
        found.setdefault(record.file_path, []).append(record)
    return found


def test_add_reads_every_kind_in_one_source_and_prints_the_count_per_kind(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = write_notes(tmp_path / "notes")
    config = tmp_path / "vecbook.toml"
    code, out, err = run(capsys, "add", str(notes), "--config", str(config))
    assert code == 0, err
    assert "  format: notes\n" in out and "  records: " in out
    assert "  files: 2 Markdown notes, 4 text files, 1 telegram export, 1 whatsapp export, " \
           "1 other file not read (.jpg)\n" in out
    [collection] = load_config(config).collections
    assert (collection.name, collection.format) == ("notes", "notes")
    records = read_notes(collection)
    files = by_file(records)
    assert sorted(files) == [
        "notes/Archive/old/a.txt", "notes/Archive/old/b.txt", "notes/Archive/old/c.md",
        "notes/Chats/ChatExport_2024-03-01/result.json", "notes/Chats/WhatsApp Chat with B.txt",
        "notes/Trips/2024/Kyoto.md", "notes/Trips/packing.txt", "notes/reading.txt"]
    # each kind cites its own lines, and the lines hold what the record says
    kyoto, cafe = files["notes/Trips/2024/Kyoto.md"]
    assert (kyoto.citation, kyoto.metadata["title"], kyoto.metadata["tags"]) == (
        "notes/Trips/2024/Kyoto.md:5-6", "Kyoto > 京都 Kyoto", ["viaje", "日本", "food"])
    assert (cafe.citation, cafe.id, cafe.metadata["folder"]) == (
        "notes/Trips/2024/Kyoto.md:8-9", "notes:Trips/2024/Kyoto.md#Kyoto > 京都 Kyoto > Café", "Trips/2024")
    assert cited_lines(notes, cafe) == ["## Café", "The café near Nanzen-ji serves matcha crème brûlée. #food"]
    first, second = files["notes/reading.txt"]
    assert (first.citation, first.id, first.metadata, first.source) == (
        "notes/reading.txt:1-4", "notes/reading.txt:1", {"Date": "2024-03-03", "Tags": ["bücher"]}, "notes")
    assert cited_lines(notes, second) == ["北京烤鸭: order a day ahead."]
    [harbour] = files["notes/Archive/old/c.md"]
    assert harbour.text == "# Harbour\nThe ferry leaves at 07:40 from pier ٣."
    chat = files["notes/Chats/WhatsApp Chat with B.txt"]
    assert {r.metadata["format"] for r in chat} == {"whatsapp"} and chat[0].metadata["conversation"] == "B"
    assert chat[0].citation.startswith("notes/Chats/WhatsApp Chat with B.txt:1-")
    telegram = files["notes/Chats/ChatExport_2024-03-01/result.json"]
    assert {r.metadata["format"] for r in telegram} == {"telegram"} and "#" in telegram[0].citation
    assert telegram[0].metadata["conversation"] == "Bob"


def read_notes(collection: CollectionConfig) -> list[vecbook.Record]:
    records, problems, _ = vecbook.sources.load_export(collection)
    assert [p for p in problems if not p.left_out] == []  # (Obsidian's trash, .trash, is said to be left out)
    return records


def test_apple_notes_exported_as_html_are_notes_titled_and_without_markup(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Apple Notes exported as HTML (an AppleScript export writes each note's body, Exporter and
    # others a page with its <title>) were "other files not read (.html)": a folder of them could
    # not be added at all. Telegram's HTML export among them stays unread, as before.
    notes = write_tree(tmp_path / "Apple Notes", {
        "Trip plan.html": "<html><head><title>Trip plan</title><style>div{color:red}</style></head><body>"
                          "<div><h1>Trip plan</h1></div><div>Visit <b>Kraków</b> 🏰</div><div><br></div>"
                          "<ul><li>passport</li><li>charger</li></ul></body></html>\n",
        "iCloud/Ideen.htm": '<div><b><span style="font-size: 24px">Ideen für Mai</span></b></div>\n'
                            "<div>مرحبا &amp; Grüße</div>\n",
        "chat/messages.html": '<div class="page_wrap">Telegram</div>',
        "chat/messages2.html": '<div class="page_wrap">Telegram</div>',  # a page of the same chat: no WARN more
        "chat/messages3.html": '<div class="page_wrap">Telegram</div>',
        "Takeout/archive_browser.html": "<html><title>Archive</title><body>Your Google data</body></html>"})
    config = tmp_path / "vecbook.toml"
    code, out, err = run(capsys, "add", str(notes), "--config", str(config))
    assert code == 0 and "  files: 2 HTML notes, 4 other files not read (.html)\n" in out, err + out
    records, problems, _ = vecbook.sources.load_export(CollectionConfig(
        name="apple-notes", path=notes, database_label="apple-notes", format="notes"))
    assert [p.reason for p in problems] == ["collection 'apple-notes': it is Telegram Desktop's HTML export, which "
                                            "VecBook does not read: export the chat again choosing Format: "
                                            "Machine-readable JSON"]
    assert [(r.metadata["title"], r.metadata.get("folder"), r.text, r.citation) for r in records] == [
        ("Trip plan", None, "Trip plan\n\nVisit Kraków 🏰\n\n- passport\n- charger", "apple-notes/Trip plan.html:1-1"),
        ("Ideen für Mai", "iCloud", "Ideen für Mai\nمرحبا & Grüße", "apple-notes/iCloud/Ideen.htm:1-2")]
    # ChatGPT's export: its chat.html shows the conversations it reads, and makes no notes folder of it
    write_tree(tmp_path / "gpt", {"conversations.json": "[]", "chat.html": "<html><body>User: hi</body></html>"})
    assert not vecbook.exports.notes.holds_notes(tmp_path / "gpt")


def test_an_apple_notes_body_reads_a_div_a_line_and_a_hit_cites_the_lines_it_shows(tmp_path: Path) -> None:
    # Apple Notes writes a note's body one <div> a line; each div was a paragraph, so the note read
    # double-spaced and a snippet's lines, counted in that text, pointed past the file's end.
    notes = write_tree(tmp_path / "notes", {
        "Kyoto.html": '<div><b><span style="font-size: 24px">Kyoto 京都</span></b></div>\n'
                      "<div>Book the ryokan</div>\n<div><br></div>\n<div>Pack the rail pass 🚄</div>\n",
        # a page around the body (Exporter's): the text starts at line 3
        "Page.html": "<html><head><title>Page</title></head>\n<body>\n<div>Ticket to Nara</div>\n"
                     "<div>Deer crackers</div>\n</body></html>\n",
        "One line.html": "<div>Buy milk</div><div>Call Ana</div>\n",  # no line of its own: the line they share
        # Apple Notes' title as a heading: a blank line after it in the text, none in the file
        "Groceries.html": "<div><h1>Groceries</h1></div>\n<div>For the weekend</div>\n<ul>\n<li>Milk</li>\n"
                          "<li>Eggs 🥚</li>\n</ul>\n<div>End</div>\n"})
    records, problems, _ = vecbook.sources.load_export(CollectionConfig(
        name="notes", path=notes, database_label="notes", format="notes"))
    assert problems == []
    found = {r.metadata["title"]: r for r in records}
    kyoto, page, one = found["Kyoto 京都"], found["Page"], found["Buy milk"]
    assert kyoto.text == "Kyoto 京都\nBook the ryokan\n\nPack the rail pass 🚄" and kyoto.citation == "notes/Kyoto.html:1-4"
    start = kyoto.content.index("rail pass")
    assert kyoto.lines_of(start, start + 9) == (4, 4)
    assert page.text == "Ticket to Nara\nDeer crackers" and page.citation == "notes/Page.html:3-4"
    assert cited_lines(notes, page) == ["<div>Ticket to Nara</div>", "<div>Deer crackers</div>"]
    start = page.content.index("Deer")
    assert page.lines_of(start, start + 4) == (4, 4)
    start = one.content.index("Call")
    assert one.text == "Buy milk\nCall Ana" and one.citation == "notes/One line.html:1-1"
    assert one.lines_of(start, start + 4) == (1, 1)
    groceries = found["Groceries"]
    assert groceries.text == "Groceries\n\nFor the weekend\n\n- Milk\n- Eggs 🥚\n\nEnd"
    assert groceries.citation == "notes/Groceries.html:1-7"
    start = groceries.content.index("Eggs")
    assert groceries.lines_of(start, start + 4) == (5, 5)
    assert groceries.lines_of(0, len(groceries.content)) == (1, 7)


def zipped(files: dict[str, str | bytes]) -> bytes:
    """A zip of ``files`` ({member name: text or bytes})."""
    import io
    import zipfile

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return data.getvalue()


def test_a_zipped_vault_and_a_textpack_in_a_notes_folder_are_read_as_notes(tmp_path: Path) -> None:
    # The docs said a zipped vault in a notes folder is read: it was "1 other file not read (.zip)",
    # as was a TextPack (a zipped TextBundle, Bear's and Ulysses' export of a note); a zip holding a
    # few notes among other files is not taken for a vault, and is said with the line that reads it.
    notes = write_tree(tmp_path / "notes", {
        "Today.md": "# Today\nWater the plants.\n",
        "Vault backup.zip": zipped({"vault/.obsidian/app.json": "{}", "vault/Trips/京都.md": "# 京都\nFushimi Inari 🦊\n",
                                    "vault/photo.png": b"\x89PNG\x00"}),
        "Trip plan.textpack": zipped({"Trip plan.textbundle/info.json": "{}",
                                      "Trip plan.textbundle/text.markdown": "Visit Kraków in May. #travel\n"}),
        "Reisen/Ideen.textpack": zipped({"info.json": "{}", "text.md": "Mit dem Zug nach Wien\n"}),
        "Code.zip": zipped({"README.md": "# Tool\nRun it.\n", "a.py": "1", "b.py": "2", "c.py": "3"})})
    records, problems, facts = vecbook.sources.load_export(CollectionConfig(
        name="notes", path=notes, database_label="notes", format="notes"))
    assert vecbook.exports.notes.describe_kinds(facts["kinds"], facts["not_read"]) == (
        "3 Markdown notes, 1 zipped vault, 1 other file not read (.zip)")  # (as `vecbook add` says it)
    assert [str(p) for p in problems] == [
        "notes/Code.zip: collection 'notes': a zip holding 1 Markdown note among 4 files, not read here as notes: "
        f"`vecbook add {notes / 'Code.zip'} --format markdown` reads its notes"]
    assert [(r.metadata["note"], r.metadata.get("folder"), r.metadata.get("tags"), r.citation) for r in records] == [
        ("Ideen", "Reisen", None, "notes/Reisen/Ideen.textpack!/text.md:1-1"),
        ("Today", None, None, "notes/Today.md:1-2"),
        ("Trip plan", None, ["travel"], "notes/Trip plan.textpack!/Trip plan.textbundle/text.markdown:1-1"),
        ("京都", "vault/Trips", None, "notes/Vault backup.zip!/vault/Trips/京都.md:1-2")]


def test_a_zip_in_a_notes_folder_is_opened_once_for_its_read_not_once_a_member(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as a zip added as a source is (Export.reading): each open costs ~35 us here, more on Windows,
    # and a Slack export or a vault zipped in a notes folder holds thousands of files
    import builtins

    import vecbook.exports.zips

    notes = write_tree(tmp_path / "notes", {"Vault.zip": zipped({
        "vault/.obsidian/app.json": "{}", **{f"vault/Día {i}.md": f"# Día {i}\nnota {i} 🌵\n" for i in range(20)}})})
    opened: list[str] = []
    monkeypatch.setattr(vecbook.exports.zips, "open", lambda path, *args: opened.append(path) or builtins.open(
        path, *args), raising=False)
    assert len(read_notes(CollectionConfig(name="notes", path=notes, database_label="notes", format="notes"))) == 20
    assert len(opened) == 1, opened


def test_obsidian_s_trash_is_counted_again_only_when_a_note_goes_in_or_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The trash is left out, but each refresh walked all of it to count its notes (thousands, in a
    # vault years old): it is counted again only when a note is moved in or out.
    from vecbook.exports import notes as notes_folder

    vault = write_tree(tmp_path / "vault", {".obsidian/app.json": "{}", "Today.md": "# Today\nPlants.\n",
                                            ".trash/Old.md": "# Old\n", ".trash/Older.md": "# Older\n"})
    walked: list[str] = []
    real_walk = os.walk
    monkeypatch.setattr(notes_folder.os, "walk", lambda top, *a, **k: walked.append(str(top)) or real_walk(top, *a, **k))
    folder = notes_folder.Folder("vault", vault, "vault/")

    def left_out() -> list[str]:
        return [p.reason for p in notes_folder.list_files(folder).problems if p.left_out]

    assert left_out() == [f"2 notes in Obsidian's trash (.trash); `vecbook add {vault / '.trash'}` reads them"]
    assert left_out() == [f"2 notes in Obsidian's trash (.trash); `vecbook add {vault / '.trash'}` reads them"]
    assert sum(top.endswith(".trash") for top in walked) == 1
    (vault / ".trash" / "Old.md").unlink()
    os.utime(vault / ".trash", ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # (a coarse clock's tick)
    assert left_out() == [f"1 note in Obsidian's trash (.trash); `vecbook add {vault / '.trash'}` reads it"]


def test_a_notion_export_zip_holding_its_part_zips_is_read_in_the_pages_folders(tmp_path: Path) -> None:
    # Notion's export is a zip holding "ExportBlock-<uuid>-Part-1.zip": a page's folder was the part's
    # name and the folders in it, "ExportBlock-….zip!/Private & Shared/Projekte"
    page, folder = "8f3e1c2d4b5a69788796a5b4c3d2e1f0", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    part = zipped({f"Private & Shared/Projekte {folder}/Q2 planning {page}.md": "# Q2 planning\n\nShip the beta 🚀.\n",
                   f"Private & Shared/Projekte {folder}/Q2 planning {page}/chart.png": b"\x89PNG\x00"})
    notes = write_tree(tmp_path / "notes", {
        "Export-2b5f.zip": zipped({"ExportBlock-2b5f4c1e-9d7a-4b1e-8c2f-3a4b5c6d7e8f-Part-1.zip": part})})
    [record], _, _ = vecbook.sources.load_export(CollectionConfig(
        name="notes", path=notes, database_label="notes", format="notes"))
    assert (record.metadata["note"], record.metadata["folder"]) == ("Q2 planning", "Private & Shared/Projekte")


def test_a_saved_page_is_one_note_without_the_frames_in_its_files_folder(tmp_path: Path) -> None:
    # A browser's "Web Page, Complete" writes the page beside <name>_files/, which holds its frames
    # (ads, embeds) as .html: they were read as notes of their own ("Buy now!"), found by any search.
    notes = write_tree(tmp_path / "notes", {
        "Recipe.html": "<html><head><title>Pasta</title></head><body><p>Boil the pasta</p></body></html>",
        "Recipe_files/ad.html": "<html><body>Buy now!</body></html>",
        "Recipe_files/embed.htm": "<html><body>Video player</body></html>",
        "Reports_files/q1.html": "<html><body>Q1 report</body></html>"})  # no page beside it: a folder of notes
    records, problems, _ = vecbook.sources.load_export(CollectionConfig(
        name="notes", path=notes, database_label="notes", format="notes"))
    assert problems == []
    assert [r.citation for r in records] == ["notes/Recipe.html:1-1", "notes/Reports_files/q1.html:1-1"]


def test_a_subfolder_with_more_text_files_than_notes_is_read_whole(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = write_notes(tmp_path / "notes")
    config = tmp_path / "vecbook.toml"
    code, out, _ = run(capsys, "add", str(notes / "Archive" / "old"), "--config", str(config))
    assert code == 0 and "  format: notes\n" in out and "  files: 1 Markdown note, 2 text files\n" in out
    book = vecbook.VecBook.from_config(config, keyword_only=True)
    assert book.stats()["sources"] == {"files": 0, "old": 3}
    assert [h.citation for h in book.search("ferry pier", mode="keyword")] == ["old/c.md:1-2"]


def test_a_folder_of_several_apps_exports_is_added_as_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exports = tmp_path / "Exports"
    (exports / "ChatExport_2024-03-01").mkdir(parents=True)
    shutil.copy(WHATSAPP, exports / "WhatsApp Chat with B.txt")
    shutil.copy(TELEGRAM, exports / "ChatExport_2024-03-01" / "result.json")
    code, out, err = run(capsys, "add", str(exports), "--config", str(tmp_path / "vecbook.toml"))
    assert code == 0, err
    assert "  format: notes\n" in out and "  files: 1 telegram export, 1 whatsapp export\n" in out


def test_an_export_two_formats_claim_and_a_database_are_named_with_the_add_line(tmp_path: Path) -> None:
    notes = tmp_path / "my notes"
    notes.mkdir()
    (notes / "todo.md").write_text("# Todo\nWater the ficus.\n", encoding="utf-8")
    both = {"name": "Ana", "type": "personal_chat", "guild": {"name": "g"}, "channel": {"name": "c"}, "messages": []}
    (notes / "odd.json").write_text(json.dumps(both), encoding="utf-8")
    with sqlite3.connect(notes / "diary.db") as connection:
        connection.execute("CREATE TABLE entries(id INTEGER PRIMARY KEY, content TEXT)")
    connection.close()
    records, problems, facts = vecbook.sources.load_export(CollectionConfig(
        name="mine", path=notes, database_label=str(notes), format="notes"))
    assert [r.citation for r in records] == ["mine/todo.md:1-2"]
    assert [str(p) for p in problems] == [
        f"mine/diary.db: collection 'mine': a SQLite database, not read here: `vecbook add \"{notes / 'diary.db'}\"` "
        f"reads its rows",
        f"mine/odd.json: collection 'mine': looks like discord and telegram, so it is not read here: "
        f"`vecbook add \"{notes / 'odd.json'}\" --format discord` or `vecbook add \"{notes / 'odd.json'}\" --format "
        f"telegram` reads it"]
    assert (facts["kinds"], facts["not_read"]) == ({"markdown": 1}, {".db": 1, ".json": 1})


def test_stats_and_sources_show_a_notes_folders_problems_and_kinds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("# Todo\nWater the ficus 🌿.\n", encoding="utf-8")
    both = {"name": "Ana", "type": "personal_chat", "guild": {"name": "g"}, "channel": {"name": "c"}, "messages": []}
    (notes / "odd.json").write_text(json.dumps(both), encoding="utf-8")
    config = tmp_path / "vecbook.toml"
    config.write_text(f'data_directory = "{notes}"\n', encoding="utf-8")
    code, out, _ = run(capsys, "sources", "--config", str(config))
    assert code == 0 and f"files: notes, 1 record\n  path: {notes}\n  files: 1 Markdown note, 1 other file not " \
                          "read (.json)\n  description: the data directory's notes, records and exports\n" in out
    assert "\n  problems: 1 (`vecbook stats` lists them)\n" in out
    code, out, _ = run(capsys, "stats", "--json", "--config", str(config))
    [skipped] = json.loads(out)["skipped"]
    assert skipped["file_path"] == "odd.json" and skipped["reason"].startswith("looks like discord and telegram")


def test_the_data_directory_reads_notes_records_and_exports(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "data")
    book = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), keyword_only=True)
    [hit] = book.search("matcha brûlée", mode="keyword")
    assert (hit.citation, hit.source, hit.id) == (
        "Trips/2024/Kyoto.md:8-9", "files", "files:Trips/2024/Kyoto.md#Kyoto > 京都 Kyoto > Café")
    assert [h.citation for h in book.search("Étranger", mode="keyword")] == ["reading.txt:1-4"]
    assert {h.metadata.get("format") for h in book.search("Bob", mode="keyword")} == {"telegram"}
    stats = book.stats()
    assert (stats["files"], stats["skipped"], stats["warnings"]) == (8, [], [])
    [files] = book.sources()
    assert (files["format"], files["kinds"], files["not_read"]) == (
        "notes", {"markdown": 2, "text": 4, "telegram": 1, "whatsapp": 1}, {".jpg": 1})
    assert not any(".trash" in h.file_path for h in book.search("deleted note", mode="keyword"))
    # Obsidian's trash, a vault's .trash, is said under "left out" (it was left out without a word)
    assert stats["left_out"] == [{"file_path": ".trash", "line": None, "reason": f"1 note in Obsidian's trash (.trash); "
                                                                                f"`vecbook add {root / '.trash'}` reads it"}]


def test_an_edit_of_one_note_reads_only_that_file_and_ids_stay_across_restarts(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes")
    config = tmp_path / "vecbook.toml"
    config.write_text(f'[[collections]]\nname = "notes"\npath = "{notes}"\nformat = "notes"\n', encoding="utf-8")

    def open_book() -> vecbook.VecBook:
        return vecbook.VecBook.from_config(config, embedder=FakeEmbedder(), keyword_only=True,
                                           cache_directory=tmp_path / "cache")

    book = open_book()
    before = book._snapshot.report
    ids = sorted(r.id for r in before.records)
    kyoto = notes / "Trips" / "2024" / "Kyoto.md"
    kyoto.write_text(KYOTO.replace("matcha crème brûlée", "hōjicha parfait"), encoding="utf-8")
    os.utime(kyoto, (time.time() - 30, time.time() - 30))  # settled: the keyword cache keeps it
    book.reindex()
    update = book.stats()["last_update"]
    assert (update["files_read"], update["collections_read"]) == (1, 0)
    after = book._snapshot.report
    unchanged = [key for (key, records), (_, earlier) in zip(after.blocks, before.blocks) if records is earlier]
    assert len(unchanged) == len(after.blocks) - 1 and "notes:notes/Trips/2024/Kyoto.md" not in unchanged
    assert [h.citation for h in book.search("parfait", mode="keyword")] == ["notes/Trips/2024/Kyoto.md:8-9"]
    assert sorted(r.id for r in after.records) == ids  # the sections kept their ids
    book.close()
    again = open_book()  # from the keyword cache: nothing is read again, the same ids
    assert again.stats()["last_update"]["files_read"] == 0
    assert sorted(r.id for r in again._snapshot.report.records) == ids


def test_a_source_folder_that_goes_away_keeps_its_records_until_it_is_back(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A notes folder (or an export) on an unmounted drive, a synced folder moved away for a
    # while: its records stay searchable and its vectors cached, as the data directory's do,
    # rather than vanish and be embedded all again when it is back.
    drive = tmp_path / "drive"
    notes = write_notes(drive / "notes")
    chat = drive / "WhatsApp Chat with B.txt"
    shutil.copy(WHATSAPP, chat)
    os.utime(chat, (time.time() - 60, time.time() - 60))
    config = tmp_path / "vecbook.toml"
    config.write_text(f'[[collections]]\nname = "notes"\npath = "{notes}"\nformat = "notes"\n'
                      f'[[collections]]\nname = "chat"\npath = "{chat}"\n', encoding="utf-8")

    def open_book() -> vecbook.VecBook:
        return vecbook.VecBook.from_config(config, embedder=FakeEmbedder(), keyword_only=True,
                                           cache_directory=tmp_path / "cache")

    book = open_book()
    ids = sorted(r.id for r in book._snapshot.report.records)
    away = tmp_path / "away"
    drive.rename(away)
    book.reindex()
    assert sorted(r.id for r in book._snapshot.report.records) == ids
    assert [h.citation for h in book.search("parfait crème brûlée", mode="keyword")][:1] == ["notes/Trips/2024/Kyoto.md:8-9"]
    warned = [r.getMessage() for r in caplog.records if "not found" in r.getMessage()]
    assert any("collection 'notes': not found" in m and "its records are kept until it is back" in m
               and "vecbook remove notes" in m for m in warned), warned
    assert any("collection 'chat'" in m and "its records are kept until it is back" in m for m in warned), warned
    book.close()
    again = open_book()  # a restart while it is away: kept from the keyword cache too
    assert sorted(r.id for r in again._snapshot.report.records) == ids
    again.close()
    away.rename(drive)
    back = open_book()
    assert back.stats()["last_update"]["files_read"] == 0 and back.stats()["last_update"]["collections_read"] == 0
    assert sorted(r.id for r in back._snapshot.report.records) == ids
    back.close()


@pytest.mark.parametrize("written", ["markdown", "text"])
def test_a_notes_folder_added_by_an_earlier_version_reads_every_kind(tmp_path: Path, written: str) -> None:
    """`vecbook add` wrote format "markdown" (mostly .md) or "text" (else) for a notes folder:
    each dropped the other kind in silence. Such a table reads the folder whole now, and the
    Markdown sections keep the ids the Markdown reader gave them."""
    notes = write_notes(tmp_path / "notes")
    config = tmp_path / "vecbook.toml"
    config.write_text(f'[[collections]]\nname = "notes"\npath = "{notes}"\nformat = "{written}"\n', encoding="utf-8")
    book = vecbook.VecBook.from_config(config, keyword_only=True)
    files = by_file(book._snapshot.report.records)
    assert len(files) == 8 and book.stats()["collections"]["notes"]["format"] == "notes"
    markdown_ids = [r.id for r in read_whole(CollectionConfig(name="notes", path=notes, database_label=str(notes),
                                                              format="markdown"))[0]]
    assert [r.id for f in sorted(files) if f.endswith(".md") for r in files[f]] == markdown_ids


def test_a_vault_read_as_notes_gives_what_the_markdown_reader_gives(tmp_path: Path) -> None:
    """A folder of one kind reads as it did: the .obsidian folder, hidden folders and the
    Templates plugin's folder are left out; citations, ids and metadata are the same."""
    vault = CollectionConfig(name="vault", path=VAULT, database_label=str(VAULT), format="notes")
    records, problems, facts = vecbook.sources.load_export(vault)
    whole, whole_problems, _ = read_whole(CollectionConfig(name="vault", path=VAULT, database_label=str(VAULT),
                                                           format="markdown"))
    assert sorted(records, key=lambda r: r.id) == sorted(whole, key=lambda r: r.id) and problems == whole_problems
    assert not any("Templates/" in r.file_path for r in records)
    # said under "left out" (it was left out without a word), with the line that reads them
    assert [(str(p), p.left_out) for p in problems] == [
        (f"vault/Templates: collection 'vault': 52 notes in the folder of Obsidian's Templates plugin (templates, "
         f"not notes); `vecbook add {VAULT / 'Templates'}` reads them", True)]
    assert facts["kinds"] == {"markdown": len({r.file_path for r in records})}
    assert facts["not_read"] == {"": 1, ".jpg": 1}  # LICENSE and a picture


def test_adding_the_folder_again_for_its_other_kind_is_refused_saying_what_it_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = write_notes(tmp_path / "notes")
    config = tmp_path / "vecbook.toml"
    config.write_text(f'[[collections]]\nname = "notes"\npath = "{notes}"\nformat = "markdown"\n', encoding="utf-8")
    code, out, err = run(capsys, "add", str(notes), "--format", "text", "--name", "notes-txt", "--config", str(config))
    assert (code, out) == (2, "")
    assert err == (f"vecbook: error: {notes} is already added as 'notes' (in {config}), which reads every kind of "
                   f"file in it (.md notes, .txt records, the exports inside); `vecbook remove notes` first to add "
                   f"it again\n")


def test_the_watcher_follows_the_files_a_notes_folder_reads(tmp_path: Path) -> None:
    from vecbook.watch import watch_roots

    notes = write_notes(tmp_path / "notes")
    config = vecbook.config.config_without_file(data_directory=tmp_path / "notes")
    [root] = watch_roots(config)
    changes = {"Trips/new.md": True, "a/b/c.txt": True, "result.json": True, "Inbox": True, "photo.jpg": False,
               ".git/index": False, ".trash/x.md": False, ".obsidian/templates.json": True, "mail/cur/1.host:2,S": True}
    assert {rel: root.matters(str(notes / rel), deleted=False) for rel in changes} == changes
    assert root.matters(str(notes / "Trips"), deleted=False) and root.matters(str(notes / "gone"), deleted=True)


def test_a_slack_export_and_a_maildir_inside_are_read_whole_by_their_readers(tmp_path: Path) -> None:
    """Their files make sense only together (Slack's users.json names the day files' authors)."""
    notes = tmp_path / "notes"
    shutil.copytree(EXPORTS / "slack" / "slack-export-viewer_testarchive", notes / "work" / "slack")
    shutil.copytree(EXPORTS / "email" / "maildir_mailpile", notes / "mail", ignore=shutil.ignore_patterns("broken*"))
    (notes / "work" / "plan.md").write_text("# Plan\nShip the sailor's log ⛵.\n", encoding="utf-8")
    records, _, facts = vecbook.sources.load_export(CollectionConfig(
        name="notes", path=notes, database_label=str(notes), format="notes"))
    assert facts["kinds"] == {"markdown": 1, "maildir": 1, "slack": 1}
    slack = [r for r in records if r.metadata.get("format") == "slack"]
    whole, _, _ = read_whole(CollectionConfig(name="notes", path=EXPORTS / "slack" / "slack-export-viewer_testarchive",
                                              database_label="x", format="slack"))
    assert sorted(r.text for r in slack) == sorted(r.text for r in whole)  # authors named through users.json
    assert all(r.file_path.startswith("notes/work/slack/") for r in slack)
    mail = [r for r in records if r.metadata.get("format") == "maildir"]
    assert mail and all(r.file_path.startswith("notes/mail/cur/") for r in mail)


def test_an_eml_file_in_a_notes_folder_is_read_as_mail(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "Mail").mkdir(parents=True)
    (notes / "Mail" / "Receipt.eml").write_bytes(
        b"From: Shop <shop@example.com>\nSubject: Your receipt\nDate: Fri, 8 Mar 2024 01:30:00 +0100\n\n"
        b"Thank you for buying the walrus.\n")
    (notes / "plan.md").write_text("# Plan\nBuy a walrus.\n", encoding="utf-8")
    records, _, facts = vecbook.sources.load_export(CollectionConfig(
        name="notes", path=notes, database_label=str(notes), format="notes"))
    assert facts["kinds"] == {"markdown": 1, "maildir": 1}
    mail = [r for r in records if r.metadata.get("format") == "maildir"]
    assert [(r.citation, r.text) for r in mail] == [("notes/Mail/Receipt.eml:1-5", "Thank you for buying the walrus.")]


# -- sync-conflict copies --

DENTIST = "# 2024-12-03\n\n## Morning\nDentist moved to Thursday 10:30, bring the insurance card.\n"
CONFLICTS = {
    "Daily/2024-12-03.md": DENTIST,
    "Daily/2024-12-03.sync-conflict-20241203-101010-ABCDEFG.md": DENTIST,  # Syncthing's, as it was
    "Garden.md": "# Garden\nPlant garlic in October.\n",
    "Garden (Ana's conflicted copy 2024-12-03).md": "# Garden\nPlant garlic in October.\nOrder seed potatoes.\n",
    "todo.txt": "Renew the car insurance.\n",
    "todo (conflicted copy 2024-12-03 101010).txt": "Renew the car insurance.\n",  # Nextcloud's
}


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_sync_conflict_copy_that_did_not_drift_is_folded_under_its_note(tmp_path: Path, mode: str) -> None:
    """Syncthing, Dropbox and Nextcloud leave a copy beside a note two devices changed at once. It
    is read as that note (its name, its title, its day) and says whose copy it is; where the two
    score alike the note is the hit, the copy among its duplicates. Before, the copy, named
    "...sync-conflict-..." or "... (conflicted copy ...)", sorted first and was the hit cited."""
    root = write_tree(tmp_path / "notes", CONFLICTS)
    book = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), keyword_only=mode == "keyword")
    hit = book.search("dentist insurance card", mode=mode, max_results=3)[0]
    assert (hit.citation, hit.duplicates) == (
        "Daily/2024-12-03.md:3-4", ["Daily/2024-12-03.sync-conflict-20241203-101010-ABCDEFG.md:3-4"])
    hit = book.search("renew car insurance", mode=mode, max_results=3)[0]
    assert (hit.citation, hit.duplicates) == ("todo.txt:1-1", ["todo (conflicted copy 2024-12-03 101010).txt:1-1"])


def test_a_sync_conflict_copy_is_read_as_its_note_and_says_whose_copy_it_is(tmp_path: Path) -> None:
    """A copy may hold the only record of an edit: it stays searchable, under its note's name."""
    root = write_tree(tmp_path / "notes", CONFLICTS)
    book = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), keyword_only=True)
    [hit] = book.search("seed potatoes", mode="keyword")
    assert hit.citation == "Garden (Ana's conflicted copy 2024-12-03).md:1-3"
    assert (hit.metadata["note"], hit.metadata["title"], hit.metadata["conflict_copy_of"]) == (
        "Garden", "Garden", "Garden.md")
    copy = book.get("files:Daily/2024-12-03.sync-conflict-20241203-101010-ABCDEFG.md#2024-12-03 > Morning")
    assert (copy.record.metadata["date"], copy.record.metadata["conflict_copy_of"]) == (
        "2024-12-03", "Daily/2024-12-03.md")
    assert "conflict_copy_of" not in book.search("Plant garlic", mode="keyword", dedupe=False)[0].metadata


def test_a_logseq_graph_added_as_notes_leaves_out_the_app_s_own_folder(tmp_path: Path) -> None:
    # Its page backups (logseq/bak, logseq/version-files) were notes: the page came back three
    # times, a backup cited first, and a Markdown file in logseq/bak changes at every sync.
    from test_exports_markdown import logseq_graph

    book = vecbook.VecBook(data_directory=logseq_graph(tmp_path / "graph"), embedder=FakeEmbedder(),
                           keyword_only=True)
    [hit] = book.search("shakshuka", mode="keyword", dedupe=False)
    assert hit.citation == "pages/Recipes.md:1-2"
    [files] = book.sources()
    assert files["kinds"] == {"markdown": 2}


def test_a_maildir_with_only_cur_among_notes_is_read_and_odd_names_count_as_no_extension(tmp_path: Path) -> None:
    # a Maildir cloned from git keeps only cur/ (git drops empty new/ and tmp/): its messages were
    # "22 other files not read (.000260:2,, .000261:2,, ...)", one bogus extension a message
    message = "From: Ana <ana@example.com>\nSubject: Kyoto {}\nDate: Fri, 8 Mar 2024 01:30:00 +0100\n\nRoom {} 🦊\n"
    files = {f"mail/cur/1354585346.000{n}:2,S": message.format(n, n) for n in range(260, 270)}
    files |= {"plan.md": "# Plan\nShip it.\n", "photo.jpg": "x"}
    files |= {f"odd/1354585346.000{n}:2,S": "not mail" for n in range(260, 263)}  # (not in a cur/)
    files |= {f"odd/x{n}.{ext}": "" for n, ext in enumerate(("png", "gif", "pdf", "docx", "heic", "mp4", "mov"))}
    files |= {"odd/Kyoto trip.draft version 2": "", "odd/backup.20240308T0130": ""}
    write_tree(tmp_path / "nb", files)
    records, _, facts = vecbook.sources.load_export(CollectionConfig(
        name="nb", path=tmp_path / "nb", database_label=str(tmp_path / "nb"), format="notes"))
    assert facts["kinds"] == {"markdown": 1, "maildir": 1}
    assert len([r for r in records if r.metadata.get("format") == "maildir"]) == 10
    assert facts["not_read"] == {"": 5, ".jpg": 1, ".png": 1, ".gif": 1, ".pdf": 1, ".docx": 1, ".heic": 1,
                                 ".mp4": 1, ".mov": 1}
    assert vecbook.exports.notes.describe_kinds(facts["kinds"], facts["not_read"]) == (
        "1 Markdown note, 1 maildir export, 13 other files not read "
        "(no extension, .docx, .gif, .heic, .jpg, …and 4 more kinds)")
