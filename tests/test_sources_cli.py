"""Registering sources: ``vecbook add``, ``sources``, ``remove`` and ``config path`` against the
user's config (a tmp folder: conftest's ``user_config``), and every bad input refused with one
line and no file changed."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

import vecbook
import vecbook.registry
import vecbook.source_counts
import vecbook.sqlite_tables
from conftest import ROOT, write_tree
from vecbook.config import load_config

EXPORTS = ROOT / "samples" / "exports"
WHATSAPP = EXPORTS / "WhatsApp Chat with Family.txt"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = vecbook.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder away from the checkout, as the working directory, with a notes folder and a
    WhatsApp export in it."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("VECBOOK_") and name != "VECBOOK_CACHE_DIRECTORY":
            monkeypatch.delenv(name)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "garden.txt").write_text("Date: 2024-05-02\n\nPlant the courgettes after the last frost.\n---\n"
                                      "Date: 2024-06-11\n\nNet the strawberries: the blackbirds found them.\n",
                                      encoding="utf-8")
    shutil.copy(WHATSAPP, tmp_path / WHATSAPP.name)
    return tmp_path


def test_add_reads_the_export_prints_what_it_found_and_writes_the_user_config(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "add", WHATSAPP.name, "--description", "family group chat since 2019")
    assert code == 0, err
    assert out.splitlines()[:8] == [
        "found 'whatsapp-chat-with-family':", "  format: whatsapp", f"  path: {home / WHATSAPP.name}",
        "  records: 6", "  messages: 15 in 6 conversation windows", "  dates: 2024-02-14 to 2024-03-20",
        "  participants: Ana, Dad, Mum, Priya, Uncle Tom", "  description: family group chat since 2019"]
    assert out.splitlines()[-1] == f"added 'whatsapp-chat-with-family' to {user_config}"
    [collection] = load_config(user_config).collections
    assert (collection.name, collection.format, collection.path) == (
        "whatsapp-chat-with-family", "whatsapp", home / WHATSAPP.name)
    assert collection.description == "family group chat since 2019"


def test_a_notes_folder_and_an_export_are_searched_together_from_any_folder(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(capsys, "add", str(home / WHATSAPP.name), "--name", "family-chat")[0] == 0
    code, out, _ = run(capsys, "add", str(home / "notes"))
    assert code == 0 and "  format: notes\n" in out and "  records: 2\n  files: 1 text file\n" in out
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    code, out, _ = run(capsys, "config", "path")
    assert (code, out) == (0, f"{user_config}\n")
    code, out, err = run(capsys, "search", "strawberries arancini", "--mode", "keyword", "--json")
    cited = {hit["source"]: hit["citation"] for hit in json.loads(out)}
    assert cited == {"notes": "notes/garden.txt:5-7", "family-chat": "family-chat/WhatsApp Chat with Family.txt:7-9"}
    code, out, _ = run(capsys, "sources", "--json")
    listed = json.loads(out)
    assert listed["config_file"] == str(user_config)
    assert [(s["name"], s["format"], s["records"]) for s in listed["sources"]] == [
        ("family-chat", "whatsapp", 6), ("notes", "notes", 2)]
    # the second listing knows when the first one indexed
    assert json.loads(run(capsys, "sources", "--json")[1])["last_indexed"] is not None


def test_sources_lists_format_path_records_dates_and_description(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the checkout's own config: the samples and their exports
    code, out, _ = run(capsys, "sources")
    assert code == 0
    assert "family-chat: whatsapp, 15 messages in 6 conversation windows, 2024-02-14 to 2024-03-20\n" \
           "  path: samples/exports/WhatsApp Chat with Family.txt\n" \
           "  description: family WhatsApp group, February-March 2024\n" in out
    assert "messages: sqlite, 16 records, 2024-04-20 to 2024-06-20\n  path: samples/chats.db\n" in out


def test_sources_says_when_each_source_was_last_indexed_across_config_changes(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A config change makes the keyword cache unusable (every source is read again), but a
    source read again unchanged keeps the time its records were indexed; an edit moves it."""
    import types
    from datetime import datetime

    def at(moment: str) -> None:
        ns = int(datetime.fromisoformat(moment).timestamp() * 1e9)
        monkeypatch.setattr(vecbook.sources, "time", types.SimpleNamespace(time_ns=lambda: ns))

    def indexed() -> dict[str, str]:
        listed = json.loads(run(capsys, "sources", "--json")[1])
        return {s["name"]: s["last_indexed"] for s in listed["sources"]}

    garden = home / "notes" / "garden.txt"
    for path in (garden, home / WHATSAPP.name):
        os.utime(path, (1_700_000_000, 1_700_000_000))  # settled: the keyword cache keeps them
    at("2024-05-02T10:00:00")
    assert run(capsys, "add", "notes")[0] == 0
    assert indexed() == {"notes": "2024-05-02 10:00"}
    code, out, _ = run(capsys, "sources")
    assert f"\nnotes: notes, 2 records, 2024-05-02 to 2024-06-11\n  path: {home / 'notes'}\n" \
           "  files: 1 text file\n  last indexed: 2024-05-02 10:00\n" in out
    at("2024-05-03T09:30:00")
    assert run(capsys, "add", WHATSAPP.name)[0] == 0
    assert indexed() == {"notes": "2024-05-02 10:00", "whatsapp-chat-with-family": "2024-05-03 09:30"}
    garden.write_text("Date: 2024-05-02\n\nPlant the courgettes.\n", encoding="utf-8")
    os.utime(garden, (1_700_000_100, 1_700_000_100))
    at("2024-05-04T08:15:00")
    assert indexed() == {"notes": "2024-05-04 08:15", "whatsapp-chat-with-family": "2024-05-03 09:30"}
    code, out, _ = run(capsys, "sources")
    assert "notes: notes, 1 record, 2024-05-02 to 2024-05-02\n" in out


def test_remove_takes_one_source_out_and_keeps_the_rest_of_the_file(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = home / "my.toml"
    text = "# my settings\nmax_results = 3  # short lists\n\n# the chat\n"
    config.write_text(text, encoding="utf-8")
    assert run(capsys, "add", "notes", "--config", str(config), "--name", "garden")[0] == 0
    assert run(capsys, "add", WHATSAPP.name, "--config", str(config), "--name", "family-chat")[0] == 0
    written = config.read_text(encoding="utf-8")
    assert written.startswith(text) and 'path = "notes"' in written  # inside the config's folder: relative
    code, out, _ = run(capsys, "remove", "garden", "--config", str(config))
    assert (code, out) == (0, f"removed 'garden' from {config} (its files are untouched)\n")
    assert [c.name for c in load_config(config).collections] == ["family-chat"]
    assert config.read_text(encoding="utf-8").startswith(text) and (home / "notes" / "garden.txt").is_file()
    assert run(capsys, "remove", "family-chat", "--config", str(config))[0] == 0
    assert config.read_text(encoding="utf-8").rstrip() == text.rstrip()


COMMENTED = """data_directory = "notes"

# family chat, exported monthly
[[collections]]
name = "family"
path = "family.txt"

# work slack
# (the admin's export)
[[collections]]
name = "work"
path = "slack"  # a folder

# mail archive
[[collections]]
name = "mail"
path = "mail.mbox"
description = \"\"\"
[not a table]
# not a comment\"\"\"
"""


@pytest.mark.parametrize("name, gone", [("family", "# family chat"), ("work", "# work slack\n# (the admin's"),
                                        ("mail", "# mail archive")])
def test_remove_takes_a_tables_own_comment_lines_with_it_and_leaves_the_others(
        home: Path, capsys: pytest.CaptureFixture[str], name: str, gone: str) -> None:
    """The comment lines right above a table describe it: they go with it, and the next table
    keeps its own (tomlkit alone would move the removed table's comment onto the next one)."""
    config = home / "commented.toml"
    config.write_text(COMMENTED, encoding="utf-8")
    before = load_config(config)
    assert run(capsys, "remove", name, "--config", str(config))[0] == 0
    after = config.read_text(encoding="utf-8")
    assert gone not in after and f'name = "{name}"' not in after
    for other in ("family", "work", "mail"):
        if other != name:
            comment = {"family": "# family chat, exported monthly\n[[collections]]\n",
                       "work": "# work slack\n# (the admin's export)\n[[collections]]\n",
                       "mail": "# mail archive\n[[collections]]\n"}[other]
            assert comment + f'name = "{other}"' in after
    assert [c.name for c in load_config(config).collections] == [c.name for c in before.collections if c.name != name]
    assert after.startswith('data_directory = "notes"\n\n')


def test_add_then_remove_leaves_a_hand_written_file_as_it_was_down_to_its_last_comment(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A comment closing the file belongs to what is above it: ``add`` puts a blank line between it
    and the new table, so it is not read as the new table's description (which ``remove`` takes
    away with the table)."""
    config = home / "mine.toml"
    text = '[[collections]]  # the family chat\nname = "family"\npath = "family.txt"\n# exported monthly\n'
    config.write_text(text, encoding="utf-8")
    assert run(capsys, "add", "notes", "--config", str(config), "--name", "garden")[0] == 0
    assert config.read_text(encoding="utf-8").startswith(text + "\n[[collections]]\n")
    assert run(capsys, "remove", "garden", "--config", str(config))[0] == 0
    assert config.read_text(encoding="utf-8") == text


def test_remove_still_removes_where_a_string_looks_like_a_comment_above_the_next_table(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = home / "tricky.toml"
    config.write_text('[[collections]]\nname = "a"\npath = "a.txt"\ndescription = """x\n# y"""\n'
                      '[[collections]]\nname = "b"\npath = "b.txt"\n', encoding="utf-8")
    assert run(capsys, "remove", "b", "--config", str(config))[0] == 0
    assert [(c.name, c.description) for c in load_config(config).collections] == [("a", "x\n# y")]


def _unreadable(home: Path) -> str:
    path = home / "locked.txt"
    path.write_text("x", encoding="utf-8")
    path.chmod(0)
    return str(path)


@pytest.mark.parametrize("argv, message", [
    (["add", "missing.txt"], "no such file or folder: {home}/missing.txt"),
    (["add", "notes", "--format", "papyrus"], "unknown format 'papyrus' (formats: "),
    # a near miss: the names, not what each reads (18 of them, a screenful on one line)
    (["add", "notes", "--format", "discrod"], "unknown format 'discrod' (did you mean 'discord'?) (formats: discord, "
     "whatsapp, "),
    # the rule, and the name that would do, spelled as a name taken from a file's is
    (["add", "notes", "--name", "Family Chat"], "source name 'Family Chat' is not allowed: use lower-case letters, "
     "digits, - and _ (starting with a letter or digit, at most 64): --name family-chat would do"),
    (["add", "notes", "--name", "Семья Été"], "source name 'Семья Été' is not allowed: use lower-case letters, "
     "digits, - and _ (starting with a letter or digit, at most 64): --name semya-ete would do"),
    (["add", "notes", "--name", "★"], "source name '★' is not allowed: use lower-case letters, digits, - and _ "
     "(starting with a letter or digit, at most 64)\n"),
    (["add", "notes", "--name", "files"],
     "a source named 'files' already exists (it names the data folder's notes); choose another"),
    (["add", "notes", "--name", "old"], "a source named 'old' already exists (in {config}); choose another"),
    # a picture or a document: no --format reads it, so none is suggested
    (["add", "picture.png"], "cannot tell what {home}/picture.png is: it is a .png file, which VecBook does not "
     "open: it reads notes (.md, .txt), the chat, mail and calendar exports of the apps it knows, and SQLite "
     "databases\n"),
    (["add", "papers/2023/Tax return.PDF"], "cannot tell what {home}/papers/2023/Tax return.PDF is: it is a .pdf "
     "file, which VecBook does not open: "),
    # a folder just made for notes: --format would only lead to "nothing to search"
    (["add", "empty-folder"], "cannot tell what {home}/empty-folder is: the folder is empty (no file in it at any "
     "depth): nothing to read until it holds notes or an export"),
    # a folder of documents: no --format reads a PDF
    (["add", "papers"], "cannot tell what {home}/papers is: it holds no notes (.md, .txt) and no export VecBook "
     "reads, only 2 files it does not open (.docx, .pdf)"),
    # a Maildir's cur/ given alone: its messages were each an extension (.000260:2,s, ...), no way on
    (["add", "Mail/INBOX/cur"], "cannot tell what {home}/Mail/INBOX/cur is: it holds no notes (.md, .txt) and no "
     "export VecBook reads, only 3 files it does not open (no extension); it is named as a Maildir's cur folder: "
     "`vecbook add {home}/Mail/INBOX` reads the Maildir\n"),
    (["add", "notes", "--table", "t"], "--table, --text-column and --date-column apply to a SQLite database; "
     "{home}/notes is notes"),
    (["add", "notes", "--date-column", "day"], "--table, --text-column and --date-column apply to a SQLite database"),
    (["remove", "nope"], "no source named 'nope' in {config} (sources: old)"),
    # a source that yields nothing is not registered, --format or not: the reader says why
    (["add", "picture.png", "--format", "telegram"], "nothing to search in {home}/picture.png: not a telegram export "
     "(Telegram Desktop JSON (result.json)); it is a .png file, which VecBook does not open: it reads notes (.md, "
     ".txt), the chat, mail and calendar exports of the apps it knows, and SQLite databases; nothing was added"),
    (["add", "cut.json", "--format", "telegram"], "nothing to search in {home}/cut.json: invalid JSON: Unterminated "
     "string starting at (line 1, column 82): the file ends there, cut short (a download, copy or export that did not finish: "
     "get it again); nothing was added"),
    (["add", "cut.json"], "nothing to search in {home}/cut.json: invalid JSON"),
    (["add", "empty.json", "--format", "discord"], "nothing to search in {home}/empty.json: the file is empty; "
     "nothing was added"),
    (["add", "quiet.json"], "nothing to search in {home}/quiet.json: no telegram messages or items found in it; "
     "nothing was added"),
], ids=["missing", "unknown-format", "misspelt-format", "bad-name", "bad-name-script", "bad-name-symbol",
        "reserved-name", "name-in-use", "not-a-format", "a-pdf",
        "empty-folder", "documents", "maildir-cur", "table-not-sqlite", "date-column-not-sqlite", "remove-unknown", "not-that-format", "cut-short", "cut-short-detected",
        "empty", "no-messages"])
def test_bad_input_is_one_line_and_changes_no_file(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    user_config.parent.mkdir(parents=True)
    user_config.write_text('# mine\n[[collections]]\nname = "old"\npath = "notes"\nformat = "text"\n',
                           encoding="utf-8")
    (home / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (home / "empty-folder" / "inner").mkdir(parents=True)
    (home / "papers" / "2023").mkdir(parents=True)
    (home / "papers" / "2023" / "Tax return.PDF").write_bytes(b"%PDF-1.7\n" + bytes(64))
    (home / "papers" / "notes.docx").write_bytes(b"PK\x03\x04" + bytes(64))
    for n in range(3):
        write_tree(home / "Mail" / "INBOX" / "cur", {f"1354585346.00026{n}.host:2,S": f"From: ana@example.com\n\nolá {n}\n"})
    chat = '{"name": "Ana", "type": "personal_chat", "id": 1, "messages": [{"id": 1, "text": "olá, café ☕'
    (home / "cut.json").write_text(chat, encoding="utf-8")
    (home / "empty.json").write_bytes(b"")
    (home / "quiet.json").write_text(chat.split("[")[0] + "[]}", encoding="utf-8")
    before = user_config.read_bytes()
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("vecbook: error: " + message.format(home=home, config=user_config))
    assert user_config.read_bytes() == before


def test_a_file_already_added_is_refused_under_any_name(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its records would come back twice; another table of the same database is a new source."""
    assert run(capsys, "add", WHATSAPP.name)[0] == 0
    before = user_config.read_bytes()
    code, out, err = run(capsys, "add", f"./{WHATSAPP.name}", "--name", "family")
    assert code == 2 and out == "" and err == (
        f"vecbook: error: {home / WHATSAPP.name} is already added as 'whatsapp-chat-with-family' (in "
        f"{user_config}); `vecbook remove whatsapp-chat-with-family` first to add it again\n")
    database = home / "diary.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE entries(id INTEGER PRIMARY KEY, content TEXT);"
                                 "CREATE TABLE dreams(id INTEGER PRIMARY KEY, content TEXT);"
                                 "INSERT INTO entries VALUES (1, 'Swam 40 lengths');"
                                 "INSERT INTO dreams VALUES (1, 'Flew');")
    connection.close()
    assert run(capsys, "add", str(database), "--table", "entries")[0] == 0
    code, _, err = run(capsys, "add", str(database), "--table", "entries", "--name", "again")
    assert code == 2 and err.startswith(f"vecbook: error: table 'entries' of {database} is already added as 'diary'")
    assert run(capsys, "add", str(database), "--table", "dreams", "--name", "dreams")[0] == 0
    assert [c.name for c in load_config(user_config).collections] == ["whatsapp-chat-with-family", "diary", "dreams"]
    assert user_config.read_bytes().startswith(before)
    folder = f'data_directory = "{(home / "notes").as_posix()}"\n'
    user_config.write_text(folder + user_config.read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = run(capsys, "add", "notes/../notes", "--name", "notes-again")
    assert code == 2 and err == (f"vecbook: error: {home / 'notes'} is the data folder of {user_config}: its notes "
                                 "are searched already\n")


def test_the_same_add_run_twice_says_the_source_is_there_already(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not "choose another name with --name", which only leads to the next refusal."""
    database = home / "diary.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE entries(id INTEGER PRIMARY KEY, body TEXT);"
                                 "INSERT INTO entries VALUES (1, 'Swam 40 lengths');")
    connection.close()
    for argv, added, first in [(["notes"], f"{home / 'notes'} is already added as 'notes'", True),
                               (["notes", "--name", "notes"], f"{home / 'notes'} is already added as 'notes'", False),
                               (["diary.db", "--table", "entries", "--text-column", "body"],
                                f"{database} is already added as 'diary'", True)]:
        if first:
            assert run(capsys, "add", *argv)[0] == 0
        before = user_config.read_bytes()
        code, out, err = run(capsys, "add", *argv)
        assert (code, out) == (2, "") and err.startswith(f"vecbook: error: {added} (in {user_config})"), err
        assert user_config.read_bytes() == before


def test_a_path_inside_a_source_or_holding_one_is_added_with_a_warning(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both would read its records: added (the user may mean it), and told that they come back twice."""
    chats = home / "exports" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(WHATSAPP, chats / WHATSAPP.name)
    assert run(capsys, "add", "exports/chats")[0] == 0
    code, out, err = run(capsys, "add", f"exports/chats/{WHATSAPP.name}", "--name", "family")
    assert code == 0 and "added 'family'" in out
    assert f"WARN {chats / WHATSAPP.name} lies inside 'chats' ({chats}), which reads it already: " \
           "its records will be searched twice (`vecbook remove chats` to keep the new source alone)" in err
    code, out, err = run(capsys, "add", "exports", "--name", "everything")
    assert code == 0
    assert err.count("WARN") == 2 and f"WARN {home / 'exports'} holds 'chats' ({chats}), already added: its records " \
           "will be searched twice (`vecbook remove chats` to keep the new source alone)" in err
    assert [c.name for c in load_config(user_config).collections] == ["chats", "family", "everything"]


def test_a_chat_exported_again_and_added_apart_is_added_with_a_warning(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """June's export of a chat whose March export is a source: both would be searched and counted, so
    add says how to read each message once."""
    march = WHATSAPP.read_text(encoding="utf-8")
    (home / "WhatsApp Chat with Family (1).txt").write_text(march + "20/06/2024, 09:00 - Ana: the ferry again?\n",
                                                             encoding="utf-8")
    assert run(capsys, "add", WHATSAPP.name)[0] == 0
    code, out, err = run(capsys, "add", "WhatsApp Chat with Family (1).txt")
    assert code == 0 and "added 'whatsapp-chat-with-family-1'" in out
    assert f"WARN {home / 'WhatsApp Chat with Family (1).txt'} holds the chat 'whatsapp-chat-with-family' holds, " \
           "exported again (6 of its 7 conversation windows are there too): their messages will be searched and " \
           "counted twice; to read each once, put both exports in one folder and add it " \
           "(`vecbook remove whatsapp-chat-with-family` and `vecbook remove whatsapp-chat-with-family-1` first)" in err, err


TELEGRAM_SAID = [{"id": 1, "type": "message", "date": "2024-03-01T10:00:00", "date_unixtime": "1709287200",
                  "from": "Ana", "text": "the ferry to Porto leaves at noon"},
                 {"id": 2, "type": "message", "date": "2024-03-01T10:01:00", "date_unixtime": "1709287260",
                  "from": "Bo", "text": "ok"}]
TELEGRAM_BO = {"name": "Bo", "type": "personal_chat", "id": 100, "messages": TELEGRAM_SAID}


@pytest.mark.parametrize("march, june", [
    # the account export numbers a chat's messages "<chat id>:<id>" (ids count per chat), the
    # chat's own export "<id>": the same messages all the same
    (TELEGRAM_BO, {"about": "Here is the data you requested.", "personal_information": {"user_id": 1},
                   "chats": {"about": "All chats.", "list": [TELEGRAM_BO]}}),
    # the chat is named as the contact is saved on the phone: "Bo" in March, "Bo Silva" by June
    (TELEGRAM_BO, {**TELEGRAM_BO, "name": "Bo Silva"}),
    # Telegram Desktop wrote "date" alone (local time, no zone) before 2021, "date_unixtime" too since
    ({**TELEGRAM_BO, "messages": [{k: v for k, v in m.items() if k != "date_unixtime"} for m in TELEGRAM_SAID]},
     TELEGRAM_BO),
], ids=["alone and in the account export", "renamed since", "exported before 2021"])
def test_a_telegram_chat_exported_again_and_added_apart_is_added_with_a_warning(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], march: dict, june: dict) -> None:
    """A chat is told by the id Telegram gave it and a message by its id, as the reader tells them."""
    for folder, value in (("ChatExport_2024-03-01", march), ("DataExport_2024-06-01", june)):
        (home / folder).mkdir()
        (home / folder / "result.json").write_text(json.dumps(value), encoding="utf-8")
    assert run(capsys, "add", "DataExport_2024-06-01", "--name", "june")[0] == 0
    code, out, err = run(capsys, "add", "ChatExport_2024-03-01", "--name", "march")
    assert code == 0 and "added 'march'" in out
    assert f"WARN {home / 'ChatExport_2024-03-01'} holds the chat 'june' holds, exported again (1 of its 1 " \
           "conversation windows are there too)" in err, err


def test_a_slack_workspace_exported_again_and_added_apart_is_added_with_a_warning(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its zip beside the folder it was unzipped to, each added: both would be searched and counted."""
    source = ROOT / "tests" / "data" / "exports" / "slack" / "slackdump_source_export"
    shutil.copytree(source, home / "slack-2025-01")
    shutil.copy(source.with_suffix(".zip"), home / "slack-2025-01.zip")
    assert run(capsys, "add", "slack-2025-01", "--name", "folder")[0] == 0
    code, out, err = run(capsys, "add", "slack-2025-01.zip", "--name", "zipped")
    assert code == 0 and "added 'zipped'" in out
    assert f"WARN {home / 'slack-2025-01.zip'} holds the chat 'folder' holds, exported again (9 of its 9 " \
           "conversation windows are there too)" in err, err


def test_a_chatgpt_export_made_again_and_added_apart_is_added_with_a_warning(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """March's data export beside June's, where the conversation was renamed since: a conversation
    is told by its id, as the reader tells it."""
    source = ROOT / "tests" / "data" / "exports" / "chatgpt" / "chatgpt2graph_conversations.json"
    conversations = json.loads(source.read_text(encoding="utf-8"))
    for folder, title in (("chatgpt-2024-03", None), ("chatgpt-2024-06", "Distances, renamed")):
        (home / folder).mkdir()
        renamed = [{**c, "title": title or c["title"]} for c in conversations]
        (home / folder / "conversations.json").write_text(json.dumps(renamed), encoding="utf-8")
    assert run(capsys, "add", "chatgpt-2024-03", "--name", "march")[0] == 0
    code, out, err = run(capsys, "add", "chatgpt-2024-06", "--name", "june")
    assert code == 0 and "added 'june'" in out
    assert f"WARN {home / 'chatgpt-2024-06'} holds the chat 'march' holds, exported again (" in err, err


def test_a_messenger_thread_downloaded_again_and_added_apart_is_added_with_a_warning(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Messenger writes no message ids; a thread is told by its path, which stays when the group is
    renamed (its title, and so its windows' conversation, do not)."""
    said = [{"sender_name": "Bo", "timestamp_ms": 1709287260000, "content": "ok"},
            {"sender_name": "Ana", "timestamp_ms": 1709287200000, "content": "the ferry to Porto leaves at noon"}]
    for folder, title in (("facebook-ana-2024-03", "Porto trip"), ("facebook-ana-2024-06", "Porto trip 2024")):
        thread = home / folder / "your_facebook_activity" / "messages" / "inbox" / "portotrip_1234"
        thread.mkdir(parents=True)
        (thread / "message_1.json").write_text(json.dumps({
            "participants": [{"name": "Ana"}, {"name": "Bo"}], "messages": said, "title": title,
            "thread_path": "inbox/portotrip_1234"}), encoding="utf-8")
    assert run(capsys, "add", "facebook-ana-2024-03", "--name", "march")[0] == 0
    code, out, err = run(capsys, "add", "facebook-ana-2024-06", "--name", "june")
    assert code == 0 and "added 'june'" in out
    assert f"WARN {home / 'facebook-ana-2024-06'} holds the chat 'march' holds, exported again (1 of its 1 " \
           "conversation windows are there too)" in err, err


def test_a_notes_folder_leaves_the_sources_inside_it_to_their_readers(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As the data folder does: each record is read once, by its own reader, so nothing overlaps."""
    (home / "notes" / "todo.md").write_text("# Todo\nRenew the passport 🛂 before the trip.\n", encoding="utf-8")
    assert run(capsys, "add", "notes")[0] == 0
    code, out, err = run(capsys, "add", "notes/garden.txt")
    assert code == 0 and "WARN" not in err
    code, out, err = run(capsys, "add", str(home), "--name", "everything")
    assert code == 0 and "WARN" not in err
    assert "  files: 1 whatsapp export\n" in out  # notes/ (with garden.txt) is left to the two sources above
    book = vecbook.VecBook.from_config(user_config, keyword_only=True)
    assert book.stats()["sources"] == {"files": 0, "notes": 1, "garden": 2, "everything": 6}
    assert [hit.citation for hit in book.search("strawberries", mode="keyword")] == ["garden/garden.txt:5-7"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_path_is_refused(home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "add", _unreadable(home))
    assert code == 2 and err == f"vecbook: error: cannot read {home}/locked.txt: permission denied\n"
    assert not user_config.exists()


def test_a_path_the_user_may_not_read_is_refused_even_as_root(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads everything, so the permission check is given the answer a user would get."""
    monkeypatch.setattr(vecbook.registry.os, "access", lambda path, mode: Path(path).name != "notes")
    code, _, err = run(capsys, "add", "notes")
    assert code == 2 and err == f"vecbook: error: cannot read {home}/notes: permission denied\n"
    assert not user_config.exists()


def test_a_path_two_formats_claim_needs_format(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    real = vecbook.registry.recognising_formats
    monkeypatch.setattr(vecbook.registry, "recognising_formats", lambda collection: ["slack", "discord"])
    code, _, err = run(capsys, "add", WHATSAPP.name)
    assert code == 2 and err.startswith(f"vecbook: error: cannot tell the format of {home / WHATSAPP.name}: it "
                                        f"looks like slack and discord; pass --format (formats: ")
    assert not user_config.exists()
    monkeypatch.setattr(vecbook.registry, "recognising_formats", real)  # not undo(): conftest's patches stay
    code, out, _ = run(capsys, "add", WHATSAPP.name, "--format", "TEXT")  # --format decides, in any case
    assert code == 0 and "  format: text\n" in out


def test_a_config_that_is_not_valid_toml_is_left_untouched(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user_config.parent.mkdir(parents=True)
    user_config.write_text("max_results = [\n", encoding="utf-8")
    for argv in (["add", "notes"], ["remove", "notes"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.startswith(f"vecbook: error: invalid TOML in {user_config}: ")
        assert err.endswith(f"({user_config} is left unchanged: fix it first)\n")
        assert user_config.read_text(encoding="utf-8") == "max_results = [\n"


def test_a_sqlite_table_is_asked_for_when_it_cannot_be_guessed(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = home / "diary.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE entries(body TEXT, date TEXT); CREATE TABLE tags(name TEXT);"
                                 "INSERT INTO entries VALUES ('Swam 40 lengths before work', '2024-05-03');")
    connection.close()
    code, _, err = run(capsys, "add", str(database))
    # the table and column holding the most text named, as the column is when the table is given
    assert code == 2 and err == (f"vecbook: error: which table of {database} holds the text? pass --table NAME "
                                 f"(and --text-column NAME when it has no 'content' column; `--table entries "
                                 f"--text-column body` reads the most text); tables: entries (body, date); "
                                 f"tags (name)\n")
    code, _, err = run(capsys, "add", str(database), "--table", "entries")
    assert code == 2 and err == ("vecbook: error: which column of table 'entries' holds the text? pass "
                                 "--text-column NAME (body holds the most text); columns: body, date\n")
    assert not user_config.exists()
    code, out, err = run(capsys, "add", str(database), "--table", "entries", "--text-column", "body")
    assert code == 0, err
    assert "  format: sqlite\n" in out and "  records: 1\n" in out and "  dates: 2024-05-03 to 2024-05-03\n" in out
    code, out, _ = run(capsys, "search", "swimming lengths", "--mode", "keyword", "--json")
    assert [h["citation"] for h in json.loads(out)] == [f"{database}#entries:1"]  # the table the row is in


def test_a_database_with_a_full_text_index_beside_its_table_is_added(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Joplin and Thunderbird keep an FTS index (a virtual table the read-only connection cannot
    # open) beside their rows: listing the tables must not fail on it
    database = home / "joplin.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE notes(id TEXT PRIMARY KEY, body TEXT);"
                                 "INSERT INTO notes VALUES ('a1', 'Boiler service is due in October.');"
                                 "CREATE VIRTUAL TABLE notes_fts USING fts4(content='notes', body);")
    connection.close()
    code, out, err = run(capsys, "add", str(database), "--table", "notes", "--text-column", "body")
    assert code == 0, err
    assert "  records: 1\n" in out


def test_a_table_without_a_content_column_is_asked_for_its_text_column_with_the_likeliest_named(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Bear's ZSFNOTE has some forty columns; the notes are in ZTEXT, its longest text
    database = home / "database.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE ZSFNOTE(Z_PK INTEGER PRIMARY KEY, ZTITLE VARCHAR, ZTEXT VARCHAR, "
            "ZUNIQUEIDENTIFIER VARCHAR, ZVECTORCLOCK BLOB);"
            "INSERT INTO ZSFNOTE VALUES (1, 'Kyoto', '# Kyoto\nBook the ryokan near 清水寺', "
            "'9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D-LONGER-THAN-THE-TEXT', x'00010203040506070809');"
            "CREATE TABLE ZEMPTY(Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR);")
    connection.close()
    code, _, err = run(capsys, "add", str(database), "--table", "ZSFNOTE")
    assert code == 2 and err == ("vecbook: error: which column of table 'ZSFNOTE' holds the text? pass --text-column "
                                 "NAME (ZTEXT holds the most text); columns: Z_PK, ZTITLE, ZTEXT, ZUNIQUEIDENTIFIER, "
                                 "ZVECTORCLOCK\n"), err
    code, _, err = run(capsys, "add", str(database), "--table", "ZEMPTY")
    assert code == 2 and err.endswith("pass --text-column NAME; columns: Z_PK, ZNAME\n"), err


def test_the_likeliest_text_is_words_not_the_json_an_app_keeps_beside_them(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Day One keeps each entry twice, as Markdown and as rich-text JSON, the longer: the JSON was named
    database = home / "journal.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE entries(k INTEGER PRIMARY KEY, rich TEXT, markdown TEXT)")
        connection.execute("INSERT INTO entries VALUES (1, ?, 'Hiked to the waterfall')", (json.dumps(
            {"contents": [{"text": "Hiked to the waterfall", "attributes": {"line": {"header": 0}}}]}, indent=1),))
    connection.close()
    for argv, said in ((["--table", "entries"], "(markdown holds the most text)"),
                       ([], "`--table entries --text-column markdown` reads the most text")):
        code, _, err = run(capsys, "add", str(database), *argv)
        assert code == 2 and said in err, err


def test_bear_s_and_joplin_s_databases_are_added_by_their_path_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the notes table and its text column of the two note apps that keep a plain SQLite database
    # are known: `vecbook add database.sqlite` reads the notes, their dates, without the trash
    from test_sqlite import bear_database

    bear = bear_database(home / "bear.sqlite")
    joplin = home / "joplin.sqlite"
    with sqlite3.connect(joplin) as connection:
        connection.executescript(
            "CREATE TABLE notes(id TEXT PRIMARY KEY, parent_id TEXT, title TEXT, body TEXT, created_time INT, "
            "user_created_time INT, is_todo INT, deleted_time INT);"
            "CREATE TABLE folders(id TEXT PRIMARY KEY, title TEXT, parent_id TEXT);"
            "INSERT INTO notes VALUES ('f1ae8b0e3a2845c1a065ee7e2c35abcc', '', 'Rezept', 'Apfelstrudel mit Zimt', "
            "1700000000000, 1700000000000, 0, 0), ('a1ae8b0e3a2845c1a065ee7e2c35abcc', '', 'Old', 'Thrown away', "
            "1700000000000, 1700000000000, 0, 1700000999000);")
    connection.close()
    code, out, err = run(capsys, "add", str(bear))
    assert code == 0 and "  records: 2\n" in out and "  dates: 2024-10-30 to 2024-10-30\n" in out, err + out
    code, out, err = run(capsys, "add", str(joplin))
    assert code == 0 and "  records: 1\n" in out and "  dates: 2023-11-14 to 2023-11-14\n" in out, err + out
    code, out, _ = run(capsys, "search", "Apfelstrudel", "--mode", "keyword", "--json")
    assert [h["metadata"]["title"] for h in json.loads(out)] == ["Rezept"]


def test_a_day_one_database_is_added_by_its_path_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Day One (DayOne.sqlite, Core Data): its entries in ZENTRY's ZMARKDOWNTEXT, dated by ZCREATIONDATE
    # (seconds since 2001), each in a journal; one moved to the Trash journal is in its trash. `add`
    # asked which of its tables held the text, and named the rich-text JSON
    database = home / "DayOne.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE ZENTRY(Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZJOURNAL INTEGER, "
            "ZCREATIONDATE TIMESTAMP, ZMODIFIEDDATE TIMESTAMP, ZUUID VARCHAR, ZMARKDOWNTEXT VARCHAR, "
            "ZRICHTEXTJSON VARCHAR);"
            "CREATE TABLE ZJOURNAL(Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR, "
            "ZISTRASHJOURNAL INTEGER);"
            "INSERT INTO ZJOURNAL VALUES (1, 9, 1, 'Reisen ✈️', 0), (2, 9, 1, 'Trash', 1);"
            "INSERT INTO ZENTRY VALUES (5, 8, 2, 1, 731000000.25, 731000100, '6A1F', 'Zum Wasserfall gewandert', "
            "'{\"contents\": [{\"text\": \"Zum Wasserfall gewandert\"}]}'),"
            "(6, 8, 2, 2, 731000000, 731000100, '7B2E', 'Ein Eintrag im Papierkorb', NULL);")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert code == 0 and "found 'day-one':" in out and "  records: 1\n" in out, err + out
    assert "  dates: 2024-03-01 to 2024-03-01\n" in out and "1 note in Day One's trash" in out, out
    code, out, _ = run(capsys, "search", "Wasserfall", "--mode", "keyword", "--json", "--filter", "journal=Reisen ✈️")
    [hit] = json.loads(out)
    assert hit["citation"] == f"{database}#ZENTRY:5" and hit["text"] == "Zum Wasserfall gewandert"
    assert hit["metadata"]["date"] == "2024-03-01T15:33:20+00:00" and "ZRICHTEXTJSON" not in hit["metadata"]


def test_an_anki_collection_is_added_by_its_path_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Anki's collection.anki2: a note's fields in notes.flds, split by the unit separator (U+001F),
    # its id the time it was made, in milliseconds. `add` asked which table held the text, and the
    # fields read as one run-on line ("cat␟ねこ")
    database = home / "collection.anki2"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE col (id integer primary key, crt integer, models text, decks text);"
            "CREATE TABLE notes (id integer primary key, guid text not null, mid integer not null, mod integer not "
            "null, usn integer not null, tags text not null, flds text not null, sfld integer not null, csum integer "
            "not null, flags integer not null, data text not null);"
            "CREATE TABLE cards (id integer primary key, nid integer not null, did integer not null);"
            "INSERT INTO notes VALUES (1709300000123, 'b@3Tr9Lm0q', 1342697561419, 1712000000, -1, ' japanese ', "
            "'猫' || char(31) || 'ねこ: cat', '猫', 456, 0, ''),"
            # Anki's fields are HTML: they were read with their tags ("<b>Kyoto</b><br>")
            "(1709400000000, 'c@4Us0Mn1r', 1342697561419, 1712000000, -1, '', '<div><b>Kyoto</b></div>' || char(31) "
            "|| 'Capital of Japan&nbsp;until 1869<br>(京都)', 'Kyoto', 457, 0, '');")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert code == 0 and "  records: 2\n" in out and "  dates: 2024-03-01 to 2024-03-02\n" in out, err + out
    assert "found 'anki':" in out, out  # named after the app, not 'collection', the name of every Anki file
    code, out, _ = run(capsys, "search", "ねこ", "--mode", "keyword", "--json")
    [hit] = json.loads(out)
    assert hit["text"] == "猫\nねこ: cat" and hit["citation"] == f"{database}#notes:1709300000123"
    assert hit["metadata"]["date"] == "2024-03-01T13:33:20+00:00"
    code, out, _ = run(capsys, "search", "capital of japan", "--mode", "keyword", "--json")
    assert [h["text"] for h in json.loads(out)] == ["Kyoto\nCapital of Japan until 1869\n(京都)"]


def test_a_calibre_library_is_added_by_its_path_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Calibre's metadata.db: a book's title in books, its description in comments, its authors through
    # books_authors_link. `add` asked which table held the text, and the descriptions alone would
    # have left out every book without one, and said nothing of any book's title or author
    database = home / "metadata.db"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE books (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL DEFAULT 'Unknown', "
            "sort TEXT, timestamp TIMESTAMP, pubdate TIMESTAMP, series_index REAL NOT NULL DEFAULT 1.0, "
            "author_sort TEXT, isbn TEXT DEFAULT '', path TEXT NOT NULL DEFAULT '', uuid TEXT, has_cover BOOL "
            "DEFAULT 0, last_modified TIMESTAMP);"
            "CREATE TABLE comments (id INTEGER PRIMARY KEY, book INTEGER NOT NULL, text TEXT NOT NULL, UNIQUE(book));"
            "CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL, sort TEXT, link TEXT NOT NULL "
            "DEFAULT '');"
            "CREATE TABLE books_authors_link (id INTEGER PRIMARY KEY, book INTEGER NOT NULL, author INTEGER NOT NULL);"
            "INSERT INTO books (id, title, timestamp, pubdate, path) VALUES "
            "(1, 'The Overstory', '2024-03-01 13:33:20.123456+00:00', '2018-04-03 00:00:00+00:00', "
            "'Richard Powers/The Overstory (1)'), (2, '三体', '2024-03-02 09:00:00+00:00', NULL, 'Liu Cixin/San Ti (2)'),"
            # a book whose publication date Calibre does not know: its placeholder, year 101, was read as a date
            "(3, 'Ficciones', '2024-03-03 10:00:00+00:00', '0101-01-01 00:00:00+00:00', 'Jorge Luis Borges/Ficciones (3)');"
            # Calibre's descriptions are HTML: they were read with their tags ("<div><p>A novel...")
            "INSERT INTO comments VALUES (1, 1, '<div>\n<p>A novel about <b>trees</b>\nand the people who defend "
            "them.</p>\n<p>Winner of the Pulitzer&nbsp;Prize.</p></div>');"
            "INSERT INTO authors VALUES (1, 'Richard Powers', 'Powers, Richard', ''), (2, '刘慈欣', '刘慈欣', ''), "
            "(3, 'Jorge Luis Borges', 'Borges, Jorge Luis', '');"
            "INSERT INTO books_authors_link VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3);")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert code == 0 and "found 'calibre':" in out and "  records: 3\n" in out, err + out  # not 'metadata'
    assert "  dates: 2024-03-01 to 2024-03-03\n" in out, out
    code, out, _ = run(capsys, "search", "trees", "--mode", "keyword", "--json")
    [hit] = json.loads(out)
    assert hit["citation"] == f"{database}#books:1"
    assert hit["text"] == "A novel about trees and the people who defend them.\n\nWinner of the Pulitzer Prize."
    assert (hit["metadata"]["title"], hit["metadata"]["author"]) == ("The Overstory", "Richard Powers")
    assert hit["metadata"]["path"] == "Richard Powers/The Overstory (1)"
    code, out, _ = run(capsys, "search", "三体", "--mode", "keyword", "--json")
    assert [(h["text"], h["metadata"]["author"]) for h in json.loads(out)] == [("三体", "刘慈欣")]
    code, out, _ = run(capsys, "search", "Ficciones", "--mode", "keyword", "--json")
    assert [("pubdate" in h["metadata"], h["metadata"]["date"]) for h in json.loads(out)] == [
        (False, "2024-03-03 10:00:00+00:00")]
    code, out, err = run(capsys, "add", str(database), "--date-column", "pubdate", "--config", str(home / "o.toml"))
    assert code == 0 and "  dates: 2018-04-03 to 2018-04-03\n" in out, err + out  # not from the year 101


def test_firefox_history_is_added_by_its_path_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Firefox's places.sqlite: a page's title (none for many: its address stands in), its address, its
    # last visit in microseconds, the bookmark's name where the user kept one; `add` asked which table
    # held the text, and read as its titles, every page without one was a problem
    database = home / "places.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR, rev_host "
            "LONGVARCHAR, visit_count INTEGER DEFAULT 0, hidden INTEGER DEFAULT 0 NOT NULL, typed INTEGER DEFAULT 0 "
            "NOT NULL, frecency INTEGER DEFAULT -1 NOT NULL, last_visit_date INTEGER, guid TEXT, foreign_count "
            "INTEGER DEFAULT 0 NOT NULL, url_hash INTEGER DEFAULT 0 NOT NULL, description TEXT, site_name TEXT);"
            "CREATE TABLE moz_bookmarks (id INTEGER PRIMARY KEY, type INTEGER, fk INTEGER DEFAULT NULL, parent "
            "INTEGER, position INTEGER, title LONGVARCHAR, dateAdded INTEGER, lastModified INTEGER, guid TEXT);"
            "INSERT INTO moz_places (id, url, title, visit_count, hidden, last_visit_date, description) VALUES "
            "(1, 'https://en.wikipedia.org/wiki/Sourdough', 'Sourdough - Wikipedia', 3, 0, 1709300000123456, "
            "'Sourdough is bread made by fermenting dough'), "
            "(2, 'https://www.ynet.co.il/news/article/hjk', NULL, 1, 0, 1709400000000000, NULL), "
            "(3, 'https://accounts.example.com/redirect?x=1', NULL, 1, 1, 1709400000000000, NULL);"
            "INSERT INTO moz_bookmarks VALUES (10, 1, 1, 3, 0, 'Starter guide 🍞', 1709300000123456, 0, 'bk1');")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert code == 0 and "found 'firefox':" in out and "  records: 2\n" in out and "problems" not in out, err + out
    assert "  dates: 2024-03-01 to 2024-03-02\n" in out, out
    code, out, _ = run(capsys, "search", "starter guide", "--mode", "keyword", "--json")
    [hit] = json.loads(out)
    assert hit["citation"] == f"{database}#moz_places:1" and hit["text"] == "Sourdough - Wikipedia"
    assert hit["metadata"]["url"] == "https://en.wikipedia.org/wiki/Sourdough"
    assert hit["metadata"]["bookmark"] == "Starter guide 🍞"
    code, out, _ = run(capsys, "search", "ynet", "--mode", "keyword", "--json")
    assert [h["text"] for h in json.loads(out)] == ["https://www.ynet.co.il/news/article/hjk"]  # no title: its address


def test_the_tables_a_full_text_index_keeps_its_words_in_are_not_listed(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Joplin's database.sqlite: its notes_fts index's own tables (notes_fts_segments,
    # notes_fts_docsize...) hold no one's text, and made the list of tables to choose from twice as long
    database = home / "database.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE notes(id TEXT PRIMARY KEY, title TEXT, body TEXT);"
                                 "CREATE TABLE folders(id TEXT PRIMARY KEY, title TEXT);"
                                 "CREATE VIRTUAL TABLE notes_fts USING fts4(content='notes', title, body);"
                                 "CREATE VIRTUAL TABLE items_fts USING fts5(title, body);"
                                 "CREATE TABLE notes_fts_archive(id TEXT, body TEXT);")
    connection.close()
    code, _, err = run(capsys, "add", str(database))
    assert code == 2 and err.endswith("tables: folders (id, title); notes (id, title, body); "
                                      "notes_fts_archive (id, body)\n"), err


def test_add_dates_a_tables_rows_by_the_column_named(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a journal app's entries dated by Unix seconds in "written" were added undated, with the edit
    # of the query by hand that would date them: --since found none
    database = home / "journal.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE entries(entry_id INTEGER PRIMARY KEY, body TEXT, written INTEGER, "
                                 "mood TEXT); INSERT INTO entries VALUES (1, 'Swam 40 lengths', 1709300000, 'calm');")
    connection.close()
    code, out, err = run(capsys, "add", str(database), "--table", "entries", "--text-column", "body",
                         "--date-column", "written")
    assert code == 0 and "  dates: 2024-03-01 to 2024-03-01\n" in out and "no dates" not in err, err + out
    code, out, _ = run(capsys, "search", "swimming lengths", "--mode", "keyword", "--json", "--since", "2024-03-01")
    assert [h["citation"] for h in json.loads(out)] == [f"{database}#entries:1"]
    # a column of no dates: said at once, not found out when --since finds nothing
    other = home / "other.toml"
    code, out, err = run(capsys, "add", str(database), "--table", "entries", "--text-column", "body",
                         "--date-column", "mood", "--config", str(other))
    assert code == 0 and "dates:" not in out, out
    assert ("WARN no dates: --date-column mood holds no date VecBook reads (its values are like 'calm'): an ISO "
            "date or date-time, or a Unix time in seconds, milliseconds, microseconds or nanoseconds") in err, err
    code, _, err = run(capsys, "add", str(database), "--table", "entries", "--text-column", "body",
                       "--date-column", "when", "--config", str(other))
    assert code == 2 and err == ("vecbook: error: no column 'when' in table 'entries'; columns: entry_id, body, "
                                 "written, mood\n")


# Safari's History.db: a page's address in history_items, each visit (its title, its time as a REAL of
# seconds since 2001-01-01, Apple's) in history_visits; a redirect's visit names where it led.
SAFARI_HISTORY = (
    "CREATE TABLE history_items (id INTEGER PRIMARY KEY AUTOINCREMENT, url TEXT NOT NULL UNIQUE, domain_expansion "
    "TEXT NULL, visit_count INTEGER NOT NULL, daily_visit_counts BLOB NOT NULL, weekly_visit_counts BLOB NULL, "
    "autocomplete_triggers BLOB NULL, should_recompute_derived_visit_counts INTEGER NOT NULL, visit_count_score "
    "INTEGER NOT NULL, status_code INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE history_visits (id INTEGER PRIMARY KEY AUTOINCREMENT, history_item INTEGER NOT NULL REFERENCES "
    "history_items(id) ON DELETE CASCADE, visit_time REAL NOT NULL, title TEXT NULL, load_successful BOOLEAN NOT "
    "NULL DEFAULT 1, http_non_get BOOLEAN NOT NULL DEFAULT 0, synthesized BOOLEAN NOT NULL DEFAULT 0, "
    "redirect_source INTEGER NULL UNIQUE REFERENCES history_visits(id) ON DELETE CASCADE, redirect_destination "
    "INTEGER NULL UNIQUE REFERENCES history_visits(id) ON DELETE CASCADE, origin INTEGER NOT NULL DEFAULT 0, "
    "generation INTEGER NOT NULL DEFAULT 0, attributes INTEGER NOT NULL DEFAULT 0, score INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE history_tombstones (id INTEGER PRIMARY KEY AUTOINCREMENT, start_time REAL NOT NULL, end_time REAL "
    "NOT NULL, url TEXT, generation INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO history_items (id, url, domain_expansion, visit_count, daily_visit_counts, "
    "should_recompute_derived_visit_counts, visit_count_score) VALUES "
    "(1, 'https://ja.wikipedia.org/wiki/京都', 'ja.wikipedia', 2, x'', 0, 0), "
    "(2, 'https://www.ynet.co.il/news/article/hjk', 'ynet', 1, x'', 0, 0), "
    "(3, 'https://t.co/abc', 't', 1, x'', 0, 0);"
    "INSERT INTO history_visits (id, history_item, visit_time, title, redirect_destination) VALUES "
    "(1, 1, 730990000.5, '京都 - Wikipedia', NULL), (2, 1, 731000000.25, '京都 - Wikipedia', NULL), "
    "(3, 2, 731086400.0, NULL, NULL), (4, 3, 731086399.0, NULL, 3);")


def test_safari_history_is_added_by_its_path_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `add History.db` asked which table held the text; read with --date-column visit_time, its visits
    # (seconds since 2001, not in a Core Data table) were dated in the 1990s
    database = home / "History.db"
    with sqlite3.connect(database) as connection:
        connection.executescript(SAFARI_HISTORY)
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert code == 0 and "found 'safari':" in out and "  records: 2\n" in out and "problems" not in out, err + out
    assert "  dates: 2024-03-01 to 2024-03-02\n" in out, out  # each page's last visit; not the redirect's
    code, out, _ = run(capsys, "search", "京都", "--mode", "keyword", "--json")
    [hit] = json.loads(out)
    assert hit["citation"] == f"{database}#history_items:1" and hit["text"] == "京都 - Wikipedia"
    assert hit["metadata"]["url"] == "https://ja.wikipedia.org/wiki/京都" and hit["metadata"]["visit_count"] == 2
    assert hit["metadata"]["date"] == "2024-03-01T15:33:20+00:00"
    code, out, _ = run(capsys, "search", "ynet", "--mode", "keyword", "--json")
    assert [h["text"] for h in json.loads(out)] == ["https://www.ynet.co.il/news/article/hjk"]


def test_a_column_of_seconds_since_2001_is_read_so_and_said(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Safari's visits read as a table: their visit_time, seconds since 2001 (a REAL, no Core Data table),
    # read as Unix time, dated every visit in 1993
    database = home / "History.db"
    with sqlite3.connect(database) as connection:
        connection.executescript(SAFARI_HISTORY)
    connection.close()
    code, out, err = run(capsys, "add", str(database), "--table", "history_visits", "--text-column", "title",
                         "--date-column", "visit_time")
    assert code == 0 and "  dates: 2024-03-01 to 2024-03-01\n" in out, err + out
    assert ("WARN --date-column visit_time is read as seconds since 2001-01-01, as Apple's apps count time: read as "
            "Unix time, its rows would be dated 1993, not 2024; if they are Unix times of 1993, replace "
            '`"visit_time" + 978307200 /* seconds since 2001 */` by `"visit_time"` in its query in ') in err, err
    code, out, _ = run(capsys, "search", "京都", "--mode", "keyword", "--json", "--since", "2024-03-01")
    hits = json.loads(out)
    assert hits and all(h["metadata"]["date"].startswith("2024-03-01T") for h in hits), out


def test_a_without_rowid_table_is_cited_by_its_primary_key(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a WITHOUT ROWID table (key-value stores, many apps' settings) has no rowid to cite rows by:
    # its primary key names each row instead (both columns of a composite one), after the table's
    # name (not the source's: "app.db#app:wifi" named no table to look the row up in)
    database = home / "app.db"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;"
            "CREATE TABLE cells(sheet TEXT, cell TEXT, value TEXT, PRIMARY KEY (sheet, cell)) WITHOUT ROWID;"
            "INSERT INTO kv VALUES ('wifi', 'The wifi password is on the fridge'), ('alarm', 'Alarm code 4321');"
            "INSERT INTO cells VALUES ('budget', 'B2', 'Rent goes up in June');")
    connection.close()
    code, out, err = run(capsys, "add", str(database), "--table", "kv", "--text-column", "v")
    assert code == 0, err
    assert "  records: 2\n" in out
    code, out, err = run(capsys, "add", str(database), "--table", "cells", "--text-column", "value", "--name", "cells")
    assert code == 0, err
    code, out, _ = run(capsys, "search", "wifi rent", "--mode", "keyword", "--json")
    assert sorted(h["citation"] for h in json.loads(out)) == [f"{database}#cells:budget:B2", f"{database}#kv:wifi"]


@pytest.mark.parametrize("damage, said", [
    (lambda data: data[:4096], "database disk image is malformed: the file is damaged (cut short, or copied while "
                               "its app was writing to it): copy it again with the app closed, or from a backup"),
    (lambda data: data[:16] + bytes(4096), "file is not a database: not SQLite, or encrypted (as Signal's and "
                                           "WhatsApp's are), which cannot be read"),
], ids=["cut-short", "header-only"])
def test_a_damaged_database_is_refused_with_what_it_means(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], damage: Any, said: str) -> None:
    whole, database = home / "whole.db", home / "diary.db"
    with sqlite3.connect(whole) as connection:
        connection.executescript("CREATE TABLE entries(id INTEGER PRIMARY KEY, content TEXT);"
                                 "INSERT INTO entries VALUES (1, 'Swam 40 lengths');")
    connection.close()
    database.write_bytes(damage(whole.read_bytes()))
    code, out, err = run(capsys, "add", str(database))
    assert code == 2 and out == "" and err.startswith("vecbook: error: ") and str(database) in err, err
    assert err.endswith(f"{said}\n") or f"{said};" in err, err
    assert not user_config.exists()


def test_a_database_locked_past_the_wait_is_refused_with_what_to_do(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # a running browser holds its history locked: say so, and how to add it anyway
    monkeypatch.setattr(vecbook.sqlite_ro, "SQLITE_BUSY_TIMEOUT_SECONDS", 0.05)
    database = home / "History"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE urls(id INTEGER PRIMARY KEY, title TEXT);"
                                 "INSERT INTO urls VALUES (1, 'Boiler - Wikipedia');")
    connection.close()
    browser = sqlite3.connect(database, isolation_level=None)
    browser.execute("BEGIN EXCLUSIVE")
    browser.execute("UPDATE urls SET title = title")
    try:
        code, out, err = run(capsys, "add", str(database), "--table", "urls", "--text-column", "title")
    finally:
        browser.execute("ROLLBACK")
        browser.close()
    assert code == 2 and err == (f"vecbook: error: cannot read the SQLite database {database}: database is locked: "
                                 "another program is writing to it (waited 0.05 s); close that program (a browser "
                                 "keeps its history locked while it runs) or add a copy of the file\n")
    assert not user_config.exists()


def test_a_lock_taken_between_listing_the_tables_and_reading_the_key_is_the_same_refusal(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    database = home / "app.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;")
    connection.close()

    def locked(*_: object) -> str:
        raise sqlite3.OperationalError("database is locked")
    monkeypatch.setattr(vecbook.sqlite_tables, "row_key", locked)
    code, _, err = run(capsys, "add", str(database), "--table", "kv", "--text-column", "v")
    assert code == 2 and err.startswith(f"vecbook: error: cannot read the SQLite database {database}: database is "
                                        "locked: another program is writing to it"), err
    assert not user_config.exists()


def test_a_view_without_an_id_column_is_refused_with_what_to_do(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a view's rows have no rowid (SQLite gives NULL): every row would share one id
    database = home / "app.db"
    with sqlite3.connect(database) as connection:
        connection.executescript("CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);"
                                 "INSERT INTO notes VALUES (1, 'Boiler', 'Service due'), (2, 'Bread', 'Feed it');"
                                 "CREATE VIEW titled AS SELECT title, body FROM notes;")
    connection.close()
    code, out, err = run(capsys, "add", str(database), "--table", "titled", "--text-column", "body")
    assert code == 2 and err == ("vecbook: error: 'titled' is a view with no 'id' column, and a view's rows have "
                                 "no rowid to cite them by: add the view's underlying table instead, or write "
                                 "the [[collections]] table by hand with a 'query' that selects an id "
                                 "(docs/formats.md#sqlite-collections)\n")
    assert not user_config.exists()


def test_a_table_without_rows_is_not_registered(home: Path, user_config: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    database = home / "empty.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, content TEXT)")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert (code, out, err) == (2, "", f"vecbook: error: nothing to search in {database}: it holds no rows; "
                                       "nothing was added\n")
    assert not user_config.exists()


def test_a_table_whose_every_row_is_in_the_trash_says_so(home: Path, user_config: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # it said "it holds no rows" of a table of two rows, and nothing of the trash or keep_trashed
    database = home / "app.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, content TEXT, deleted_at TEXT)")
        connection.execute("INSERT INTO notes VALUES (1, 'Boiler', '2024-03-01'), (2, 'Bread', '2024-03-02')")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert (code, out) == (2, "")
    assert err.startswith(f"vecbook: error: nothing to search in {database}: left out: 2 rows in "
                          "the app's trash (deleted_at); keep_trashed = true keeps them; nothing was added")
    assert 'table = "notes", keep_trashed = true)' in err
    assert not user_config.exists()


def test_a_database_with_one_id_and_content_table_needs_no_table(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "add", str(ROOT / "samples" / "chats.db"), "--name", "chats")
    assert code == 0 and "  records: 16\n" in out
    assert load_config(user_config).collections[0].table == "messages_documents"


def test_config_path_says_which_file_is_in_use(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(capsys, "config", "path")
    assert code == 1 and out.startswith(f"none (no ./vecbook.toml and no {user_config}")
    (home / "data").mkdir()  # with no config file, a search here reads ./data
    code, out, _ = run(capsys, "config", "path")
    assert code == 0 and out.startswith(f"none: ./data is searched alone (no ./vecbook.toml and no {user_config}")
    user_config.parent.mkdir(parents=True)
    user_config.write_text("", encoding="utf-8")
    assert run(capsys, "config", "path")[1] == f"{user_config}\n"
    (home / "vecbook.toml").write_text("", encoding="utf-8")
    assert run(capsys, "config", "path")[1] == f"{home / 'vecbook.toml'}\n"
    assert run(capsys, "config", "path", "--config", "other.toml")[1] == f"{home / 'other.toml'}\n"
    assert run(capsys, "config", "path", "--data-dir", "notes")[1] == "none: --data-dir notes is searched alone\n"
    monkeypatch.setenv("VECBOOK_DATA_DIRECTORY", "elsewhere")
    assert run(capsys, "config", "path")[1] == "none: VECBOOK_DATA_DIRECTORY (elsewhere) is searched alone\n"
    assert run(capsys, "config", "path", "--config", "other.toml")[1] == f"{home / 'other.toml'}\n"


def test_a_command_logs_its_config_and_warns_where_a_local_one_hides_the_users_sources(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # a search in a folder with its own vecbook.toml read that alone, in silence, and -v named no file
    assert run(capsys, "add", "notes")[0] == 0
    code, _, err = run(capsys, "sources", "-v")
    assert code == 0 and f" INFO config: {user_config}\n" in err and "WARN" not in err, err
    (home / "vecbook.toml").write_text('data_directory = "notes"\n', encoding="utf-8")
    code, _, err = run(capsys, "sources")
    assert code == 0 and err.endswith(f" WARN reading ./vecbook.toml, not your user config {user_config}: its 1 "
                                      f"source (notes) is not searched here (`--config {user_config}` reads it)\n"), err
    assert run(capsys, "sources", "--config", "vecbook.toml")[2] == ""  # a file named is what was asked for
    monkeypatch.setenv("VECBOOK_MAX_RESULT", "3")  # a misspelt variable is said once, not again for the user config
    assert run(capsys, "sources")[2].count("VECBOOK_MAX_RESULT is no VecBook setting") == 1
    monkeypatch.delenv("VECBOOK_MAX_RESULT")
    code, _, err = run(capsys, "sources", "-v")
    assert f" INFO config: {home / 'vecbook.toml'}\n" in err, err


def test_a_data_folder_named_without_config_is_searched_alone(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "add", WHATSAPP.name, "--name", "family-chat")[0] == 0
    code, out, _ = run(capsys, "search", "strawberries arancini", "--mode", "keyword", "--json",
                       "--data-dir", "notes")
    assert [hit["citation"] for hit in json.loads(out)] == ["garden.txt:5-7"]


@pytest.mark.parametrize("file, name", [
    ("WhatsApp Chat with Family.txt", "whatsapp-chat-with-family"), ("Takeout", "takeout"),
    ("my_notes (2).md", "my_notes-2"), ("--weird--", "weird"), ("Familia Peña.txt", "familia-pena"),
    ("Straße Notizen", "strasse-notizen"),
])
def test_names_come_from_the_file_or_folder_name(tmp_path: Path, file: str, name: str) -> None:
    from vecbook.registry import derive_name

    assert derive_name(tmp_path / file) == name


def test_an_export_kept_among_the_notes_is_read_once_by_its_reader(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "chats").mkdir(parents=True)
    (notes / "todo.txt").write_text("Renew the passport.\n", encoding="utf-8")
    shutil.copy(WHATSAPP, notes / "chats" / WHATSAPP.name)
    config = tmp_path / "vecbook.toml"
    config.write_text('data_directory = "notes"\n[[collections]]\nname = "family"\npath = "notes/chats"\n',
                      encoding="utf-8")
    book = vecbook.VecBook.from_config(config, keyword_only=True)
    assert book.stats()["sources"] == {"files": 1, "family": 6}
    assert book.stats()["files"] == 1


def test_a_background_book_lists_its_sources_once_it_has_read_them(home: Path) -> None:
    """What the MCP ``sources`` tool calls right after start-up: counts, not zeros."""
    book = vecbook.VecBook(data_directory=home / "notes", background=True, keyword_only=True)
    try:
        [files] = book.sources()
        assert (files["name"], files["records"], files["first_date"], files["last_date"]) == (
            "files", 2, "2024-05-02", "2024-06-11")
    finally:
        book.close()


def test_sources_list_the_participants_of_a_header_written_in_any_case(tmp_path: Path) -> None:
    """A record's ``Participants:`` header (as a .txt record writes it) names people the
    ``participants`` filter finds: ``sources`` lists them too, so the search page offers them."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "meetings.txt").write_text("Date: 2024-05-02\nParticipants: Ana, יוסי כהן\n\nBudget review.\n---\n"
                                        "Date: 2024-05-09\nPARTICIPANTS: Ana\n\nBudget again.\n", encoding="utf-8")
    with vecbook.VecBook(data_directory=notes, keyword_only=True) as book:
        [files] = book.sources()
        assert files["participants"] == ["Ana", "יוסי כהן"]
        assert len(book.search("budget", participants=["יוסי כהן"])) == 1


def test_every_new_command_and_option_has_help_text() -> None:
    parser = vecbook.cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name in ("add", "remove", "sources", "config"):
        assert commands[name].description
        assert all(action.help for action in commands[name]._actions), name


def test_a_linked_config_is_edited_where_it_lies_and_stays_private(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = home / "dotfiles" / "vecbook.toml"
    real.parent.mkdir()
    real.write_text("# my sources\n", encoding="utf-8")
    real.chmod(0o600)
    link = home / "vecbook-link.toml"
    link.symlink_to(real)
    code, _, err = run(capsys, "add", WHATSAPP.name, "--config", str(link))
    assert code == 0, err
    assert link.is_symlink() and [c.name for c in load_config(real).collections] == ["whatsapp-chat-with-family"]
    assert real.read_text(encoding="utf-8").startswith("# my sources\n")
    assert real.stat().st_mode & 0o777 == 0o600


def test_collections_written_as_an_inline_array_are_refused_naming_the_file(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = home / "vecbook.toml"
    text = 'collections = [{name = "notes", path = "notes", format = "text"}]\n'
    config.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "add", WHATSAPP.name, "--config", str(config))
    assert code == 2 and f"'collections' in {config} is not written as [[collections]] tables" in err
    assert ".tmp" not in err and config.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("file, name", [
    ("Чат с мамой.txt", "chat-s-mamoy"), ("微信.zip", "weixin"), ("Ελληνικά νέα.txt", "ellinika-nea"),
    ("가족 단톡방", "gajog-dantogbang"), ("دردشة.txt", "drdshh"), ("👨‍👩‍👧 Family.txt", "family"),
    # Latin letters beside another script's: both spelled, or every such chat shares one name
    ("WhatsApp Chat with Мама.txt", "whatsapp-chat-with-mama"), ("WhatsApp Chat with Папа.txt",
    "whatsapp-chat-with-papa"), ("Семья 2023.txt", "semya-2023"), ("Straße", "strasse"),
])
def test_a_name_in_another_script_is_spelled_in_latin_letters(tmp_path: Path, file: str, name: str) -> None:
    assert vecbook.registry.derive_name(tmp_path / file) == name


def test_names_with_nothing_to_spell_differ_by_path(tmp_path: Path) -> None:
    names = {vecbook.registry.derive_name(tmp_path / f) for f in ("★.txt", "☆☆.txt", "→.zip")}
    assert len(names) == 3 and all(n.startswith("source-") and vecbook.config.COLLECTION_NAME_RE.match(n) for n in names)


def test_a_damaged_zip_among_the_notes_does_not_stop_the_read(tmp_path: Path) -> None:
    import zipfile

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("A note about the harbour.\n", encoding="utf-8")
    chat = "\n".join(f"12/03/2024, 09:{m:02d} - Ana: message {m} about the harbour" for m in range(60))
    archive = notes / "WhatsApp Chat - Ana.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("WhatsApp Chat - Ana.txt", chat)
    data = bytearray(archive.read_bytes())
    start = 30 + len("WhatsApp Chat - Ana.txt")  # the member's compressed bytes follow its local header
    data[start:start + 10] = b"\xff" * 10
    archive.write_bytes(bytes(data))
    report = vecbook.sources.load_directory(notes)
    assert [r.file_path for r in report.records] == ["a.txt"]
    assert report.data_directory == {"kinds": {"text": 1}, "not_read": {".zip": 1}}  # counted: no reader knows it


def test_a_telegram_chat_is_named_by_the_chat_and_an_account_export_by_its_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Telegram Desktop calls every export result.json: named "result", the second one collided.
    chats = {"ChatExport_2024-03-01": {"name": "Família Silva", "type": "private_group", "id": 11},
             "ChatExport_2024-03-02": {"name": "Bob", "type": "personal_chat", "id": 12},
             "ChatExport_2024-03-03": {"name": "Семья Иванов", "type": "private_group", "id": 13}}
    for folder, head in chats.items():
        message = {"id": 1, "type": "message", "date": "2024-03-01T10:00:00", "from": "Ana", "text": "olá"}
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "result.json").write_text(json.dumps({**head, "messages": [message]}), encoding="utf-8")
    account = tmp_path / "DataExport_2024-03-05"
    account.mkdir()
    (account / "result.json").write_text(json.dumps({"about": "Here is the data you requested.", "chats": {"list": [
        {"name": "Bob", "type": "personal_chat", "id": 12, "messages": [
            {"id": 1, "type": "message", "date": "2024-03-01T10:00:00", "from": "Ana", "text": "hi"}]}]}}),
        encoding="utf-8")
    config = tmp_path / "vecbook.toml"
    for path in ("ChatExport_2024-03-01/result.json", "ChatExport_2024-03-02", "ChatExport_2024-03-03/result.json",
                 str(account / "result.json")):
        assert run(capsys, "add", str(tmp_path / path), "--config", str(config))[0] == 0
    # A chat named in Cyrillic is spelled in Latin letters, not named after its file's "result".
    assert [c.name for c in load_config(config).collections] == ["familia-silva", "bob", "semya-ivanov",
                                                                 "dataexport_2024-03-05"]


@pytest.mark.parametrize("records, windows, messages, said", [
    (12, None, None, "12 records"), (1, None, None, "1 record"),
    (6, 6, 15, "15 messages in 6 conversation windows"), (1, 1, 1, "1 message in 1 conversation window"),
    (20, 6, 15, "20 records (15 messages in 6 conversation windows)"),  # a notes folder holding a chat export
])
def test_sources_say_how_many_messages_a_chat_holds(records: int, windows: int | None, messages: int | None,
                                                    said: str) -> None:
    assert vecbook.source_counts.held(records, windows, messages) == said


def test_a_reports_chat_counts_count_a_block_once_while_it_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    # stats and the log line after each update count a chat's messages: a note added beside a
    # million chat windows must not count them all again
    from vecbook.records import Record
    from vecbook.sources import LoadReport

    def window(i: int) -> Record:
        return Record(id=f"w{i}", text="hi", source="chat", file_path="chat.txt", line_number=i + 1, end_line=i + 1,
                      metadata={"message_count": 3})

    chat, note = [window(i) for i in range(4)], [Record(id="n", text="note", source="files", file_path="n.md",
                                                         line_number=1, end_line=1, metadata={})]
    report = LoadReport(records=chat + note, blocks=[("collection:chat", chat), ("file:n.md", note)])
    assert vecbook.source_counts.report_chats(report) == {"chat": (4, 12)}
    counted: list[int] = []
    real = vecbook.source_counts.chats_by_source
    monkeypatch.setattr(vecbook.source_counts, "chats_by_source", lambda rs: counted.append(len(rs)) or real(rs))
    again = [*note, Record(id="m", text="new", source="files", file_path="n.md", line_number=2, end_line=2,
                            metadata={})]
    later = LoadReport(records=chat + again, blocks=[("collection:chat", chat), ("file:n.md", again)])
    assert vecbook.source_counts.report_chats(later) == {"chat": (4, 12)} and counted == [2]


def test_the_indexed_line_says_its_work_is_of_every_source_and_names_no_empty_data_folder() -> None:
    # "18 from collection notes (0 files read, 51 texts embedded, 0 reused)" read as the notes
    # collection's own counts, and "0 from 0 files" named a data folder there was none of
    from vecbook.records import Record
    from vecbook.sources import LoadReport
    from vecbook.status import indexed_line

    notes = [Record(id=f"n{i}", text="note", source="notes", file_path="n.md", line_number=1, end_line=1, metadata={})
             for i in range(18)]
    report = LoadReport(records=notes, blocks=[("collection:notes", notes)], collections={"notes": {}})
    update = {"seconds": 0.25, "files_read": 0, "embedded": 51, "reused": 0}
    assert indexed_line(report, update) == ("indexed 18 records in 0.2s: 18 from collection notes; "
                                            "in all: 0 files read, 51 texts embedded, 0 reused")
    report.files = 2
    assert indexed_line(report, update).startswith("indexed 18 records in 0.2s: 0 from 2 files, 18 from collection notes;")


def test_what_a_source_leaves_out_on_purpose_is_said_apart_from_its_problems_with_how_to_include_it(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a note in Bear's trash and Gmail's Spam are left out as the apps' own search leaves them out;
    # that was said in the log alone (or counted among the problems), so a person looking for a
    # note they had thrown away never learnt where it went or that `keep_trashed = true` keeps it.
    # Each reason names what was left out, as the line "left out:" heads it
    from test_exports_mail import GMAIL_LABELS, takeout
    from test_sqlite import bear_database

    bear = bear_database(home / "database.sqlite")
    trash = "1 note in Bear's trash; keep_trashed = true keeps it"
    code, out, err = run(capsys, "add", str(bear), "--name", "bear")
    assert code == 0 and f"  left out: {trash}\n" in out and "problems" not in out, err + out
    mbox = takeout(home / "All mail.mbox", GMAIL_LABELS)
    spam = ("3 messages labelled Spam or Trash in Gmail, as Gmail's search leaves them out; to search "
            "them, set include_spam_and_trash = true in this collection's table")
    code, out, err = run(capsys, "add", str(mbox), "--name", "gmail")
    assert code == 0 and f"  left out: {spam}\n" in out and "problems" not in out, err + out
    code, out, err = run(capsys, "sources")
    assert code == 0 and f"  left out: {trash}\n" in out and f"  left out: {spam}\n" in out, err + out
    # said once: "left out: 1 note in Bear's trash left out; ..." doubled it
    assert [line.count("left out") for line in out.splitlines() if "left out" in line] == [1, 1]
    assert "problems" not in out
    code, out, _ = run(capsys, "sources", "--json")
    assert {s["name"]: (s["left_out"], s["problems"]) for s in json.loads(out)["sources"]} == {
        "bear": ([trash], []), "gmail": ([spam], [])}
    stats = vecbook.VecBook(config=load_config(user_config), keyword_only=True).stats()
    assert (stats["skipped"], stats["warnings"]) == ([], [])
    said = [f"collection 'bear': {trash}", f"collection 'gmail': {spam}"]
    assert [item["reason"] for item in stats["left_out"]] == said
    assert (stats["collections"]["bear"]["left_out"], stats["collections"]["bear"]["problems"]) == (said[:1], [])


def joplin_profile(folder: Path) -> Path:
    """Joplin's profile folder (``~/.config/joplin-desktop``) as the app keeps it: its notes in
    ``database.sqlite``, beside its settings, its logs (every line a time and a logger), resources."""
    folder.mkdir()
    with sqlite3.connect(folder / "database.sqlite") as connection:
        connection.executescript(
            "CREATE TABLE notes(id TEXT PRIMARY KEY, parent_id TEXT, title TEXT, body TEXT, created_time INT, "
            "user_created_time INT, is_todo INT, deleted_time INT);"
            "INSERT INTO notes VALUES ('f1ae8b0e3a2845c1a065ee7e2c35abcc', '', 'Rezept', 'Apfelstrudel mit Zimt', "
            "1700000000000, 1700000000000, 0, 0);")
    connection.close()
    (folder / "settings.json").write_text('{"$schema": "https://joplinapp.org/schema/settings.json", "locale": "de_DE"}')
    (folder / "log.txt").write_text("2024-05-02 10:00:01: Synchronizer: Starting synchronisation\n"
                                    "2024-05-02 10:00:02: Synchronizer: Completed\n")
    (folder / "log-database.txt").write_text("2024-05-02 10:00:01: Database: SELECT * FROM notes\n")
    (folder / "resources").mkdir()
    (folder / "resources" / "0a1b2c3d4e5f60718293a4b5c6d7e8f9.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return folder


def test_a_note_apps_profile_folder_adds_the_notes_of_its_database_not_its_log_files(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `vecbook add ~/.config/joplin-desktop` became a notes folder whose records were the app's
    # log lines and whose notes were not read at all
    profile = joplin_profile(home / "joplin-desktop")
    code, out, err = run(capsys, "add", str(profile))
    assert code == 0, err
    assert out.splitlines()[:4] == [
        f"{profile} is Joplin's profile folder: its notes are in {profile / 'database.sqlite'}, which is added",
        "found 'joplin':", "  format: sqlite", f"  path: {profile / 'database.sqlite'}"]
    [collection] = load_config(user_config).collections
    assert (collection.database, collection.path) == (profile / "database.sqlite", None)
    code, out, _ = run(capsys, "search", "Synchronizer", "--mode", "keyword", "--json")
    assert json.loads(out) == []
    code, out, _ = run(capsys, "search", "Apfelstrudel", "--mode", "keyword", "--json")
    assert [h["metadata"]["title"] for h in json.loads(out)] == ["Rezept"]
    code, _, err = run(capsys, "add", str(profile))  # added already, under its database's path
    assert code == 2 and "already added" in err, err


def test_apple_notes_database_is_refused_saying_how_to_export_its_notes(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Apple Notes keeps a note's text compressed (a gzipped protobuf in ZICNOTEDATA.ZDATA): `add` of
    # its NoteStore.sqlite asked which table holds the text, among tables none of which does
    database = home / "NoteStore.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript(
            "CREATE TABLE ZICCLOUDSYNCINGOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZTITLE1 VARCHAR, "
            "ZSNIPPET VARCHAR, ZNOTEDATA INTEGER);"
            "CREATE TABLE ZICNOTEDATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZNOTE INTEGER, ZDATA BLOB);"
            "INSERT INTO ZICCLOUDSYNCINGOBJECT VALUES (1, 12, 'Trip plan', 'Visit Kraków in May', 1);")
    connection.close()
    code, out, err = run(capsys, "add", str(database))
    assert (code, out) == (2, "") and err.startswith(
        f"vecbook: error: {database} is Apple Notes' database, which keeps each note's text compressed, in a form "
        "VecBook does not read: export the notes as Markdown or HTML (Exporter, from the Mac App Store, or an "
        "AppleScript export) and add that folder"), err
    assert not user_config.exists()


def test_a_joplin_note_is_searched_and_shown_in_its_notebook(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Joplin keeps its notebooks (nested) in the folders table, a note's parent_id naming one: the
    # note's record held only that id, so no search or filter could name the notebook
    profile = joplin_profile(home / "joplin-desktop")
    with sqlite3.connect(profile / "database.sqlite") as connection:
        connection.executescript(
            "CREATE TABLE folders(id TEXT PRIMARY KEY, title TEXT, parent_id TEXT, created_time INT);"
            "INSERT INTO folders VALUES ('p1', 'Küche', '', 0), ('p2', 'Österreich', 'p1', 0);"
            "UPDATE notes SET parent_id = 'p2';")
    connection.close()
    code, _, err = run(capsys, "add", str(profile))
    assert code == 0, err
    code, out, _ = run(capsys, "search", "Apfelstrudel", "--mode", "keyword", "--filter", "folder=Küche/Österreich",
                       "--json")
    assert [h["metadata"]["folder"] for h in json.loads(out)] == ["Küche/Österreich"]


def test_joplins_other_profiles_are_named_with_the_line_that_adds_each(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Joplin keeps each profile made after the first in profile-<id> inside the first's folder, named
    # in profiles.json: `vecbook add ~/.config/joplin-desktop` added the first's notes and said nothing
    # of the others, and adding one of them was refused, as 'joplin' was taken
    profile = joplin_profile(home / "joplin-desktop")
    work = joplin_profile(profile / "profile-ab12cd34")
    (profile / "profiles.json").write_text('{"version": 2, "profiles": [{"name": "Default", "id": "default"}, '
                                           '{"name": "Arbeit", "id": "ab12cd34"}], "currentProfileId": "default"}')
    code, out, err = run(capsys, "add", str(profile))
    assert code == 0, err
    assert out.splitlines()[:2] == [
        f"{profile} is Joplin's profile folder: its notes are in {profile / 'database.sqlite'}, which is added",
        f"it holds Joplin's profile 'Arbeit' too, not added: `vecbook add {work}` adds it"]
    code, out, err = run(capsys, "add", str(work))
    assert code == 0 and "found 'joplin-arbeit':\n" in out and f"  path: {work / 'database.sqlite'}\n" in out, err


def test_bears_application_data_folder_adds_its_notes_and_a_folder_asked_for_as_notes_stays_notes(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_sqlite import bear_database

    data = home / "9K33E3U3T4.net.shinyfrog.bear" / "Application Data"
    (data / "Local Files" / "Note Images").mkdir(parents=True)
    bear_database(data / "database.sqlite")
    code, out, err = run(capsys, "add", str(data.parent))  # the group container holding it too
    assert code == 0 and out.startswith(f"{data.parent} is Bear's profile folder") and "found 'bear':\n" in out, \
        err + out
    assert f"  path: {data / 'database.sqlite'}\n" in out
    profile = joplin_profile(home / "joplin")
    code, out, err = run(capsys, "add", str(profile), "--format", "notes", "--name", "logs")
    assert code == 0 and "  format: notes\n" in out and "profile folder" not in out, err + out


def test_a_source_holding_only_what_is_left_out_on_purpose_is_refused_with_the_table_that_reads_it(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the refusal said to set include_spam_and_trash "in this collection's table", which `add` had not written
    from test_exports_mail import takeout

    mbox = takeout(home / "Spam.mbox", ["Spam", "Trash,Opened"])
    code, _, err = run(capsys, "add", str(mbox))
    assert code == 2 and err.endswith(
        f"nothing was added, as it holds nothing else: to search it, write its table in {user_config} by hand "
        f'([[collections]] with name = "spam", path = "{mbox}", format = "mbox", include_spam_and_trash = true)\n'), err
    assert not user_config.exists()
    with sqlite3.connect(home / "trash.db") as connection:
        connection.executescript("CREATE TABLE notes(id INTEGER PRIMARY KEY, content TEXT, deleted_at TEXT);"
                                 "INSERT INTO notes VALUES (1, 'thrown away', '2024-03-01 10:00:00');")
    connection.close()
    code, _, err = run(capsys, "add", str(home / "trash.db"))
    assert code == 2 and err.endswith(
        f'([[collections]] with name = "trash", database = "{home / "trash.db"}", table = "notes", '
        f"keep_trashed = true)\n"), err


def test_what_a_folder_leaves_out_names_the_file_it_was_left_out_of(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_exports_mail import GMAIL_LABELS, takeout

    takeout(home / "notes" / "All mail.mbox", GMAIL_LABELS)
    said = ("left out: All mail.mbox:11: 3 messages labelled Spam or Trash in Gmail, as Gmail's search "
            "leaves them out; to search them, set include_spam_and_trash = true in this collection's table\n")
    code, out, err = run(capsys, "add", "notes")
    assert code == 0 and f"  {said}" in out, err + out
    code, out, err = run(capsys, "sources")
    assert code == 0 and f"  {said}" in out, err + out


@pytest.mark.parametrize("app_folder, files, app", [
    (".obsidian", {"app.json": "{}", "core-plugins.json": '["file-explorer"]'}, "Obsidian's settings folder"),
    ("logseq", {"config.edn": "{:meta/version 1}", "custom.css": ""}, "Logseq's folder of its config and page backups"),
])
def test_a_vaults_own_app_folder_is_refused_naming_the_vault_to_add(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], app_folder: str, files: dict[str, str],
        app: str) -> None:
    # `vecbook add vault/.obsidian` asked for --format among sixteen formats, none of which reads it
    vault = home / "Zettelkasten ✍"
    (vault / app_folder).mkdir(parents=True)
    (vault / "idea.md").write_text("# Idea\nA lighthouse hotel\n", encoding="utf-8")
    for name, text in files.items():
        (vault / app_folder / name).write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "add", str(vault / app_folder))
    assert code == 2 and err == (f"vecbook: error: {vault / app_folder} is {app}, not notes: add the notes "
                                 f"folder holding it (vecbook add '{vault}'); nothing was added\n"), err
    assert not user_config.exists()


@pytest.mark.parametrize("added", ["WhatsApp Chat with Bob.txt", "chats"])
def test_a_problem_add_has_listed_is_not_warned_again_by_the_first_sources(
        home: Path, user_config: Path, capsys: pytest.CaptureFixture[str], added: str) -> None:
    # add listed "cannot tell day/month" and the first `sources` (the first read into the index)
    # said it again as a WARN: a problem is said once per change of the file (a notes folder's too)
    chat = home / "chats" / "WhatsApp Chat with Bob.txt" if added == "chats" else home / added
    write_tree(home / "chats", {"plan.md": "# Plan\nCall Bob about the café.\n"})
    chat.write_text("12/9/20, 23:55 - Bob: hello\n12/9/20, 23:56 - Eve: hi 👋\n12/9/20, 23:58 - Bob: café?\n",
                    encoding="utf-8")
    code, out, err = run(capsys, "add", added)
    assert code == 0 and "cannot tell day/month" in out, out + err
    code, out, err = run(capsys, "sources")
    assert code == 0 and "WARN" not in err and "  problems: 1 (`vecbook stats` lists them)" in out, out + err
    chat.write_text(chat.read_text(encoding="utf-8") + "12/9/20, 23:59 - Eve: sí\n", encoding="utf-8")
    os.utime(chat, (1e9, 1e9))  # (changed: said again)
    code, out, err = run(capsys, "sources")
    assert code == 0 and err.count("WARN") == 1 and "cannot tell day/month" in err, out + err


def test_what_add_listed_is_never_kept_inside_the_data_folder(tmp_path: Path) -> None:
    from vecbook.config import Config
    from vecbook.told import cache_directory_of

    assert cache_directory_of(Config(data_directory=tmp_path, cache_directory=tmp_path / "cache")) is None
    assert cache_directory_of(Config(data_directory=tmp_path / "notes", cache_directory=tmp_path)) == tmp_path


@pytest.mark.parametrize("entry", [{"at": "yesterday"}, {"at": None, "problems": [["a list"]]},
                                   {"tree": 1, "problems": "one text", "at": 1e12}])
def test_a_damaged_list_of_what_add_listed_is_taken_as_none(tmp_path: Path, entry: dict[str, Any]) -> None:
    # told-*.json edited by hand, or written by another version: never a crash of add or of a start
    from vecbook import told

    config_file = tmp_path / "vecbook.toml"
    told.told_file(tmp_path, config_file).write_text(json.dumps({"chat": entry}), encoding="utf-8")
    told.remember(tmp_path, config_file, "notes", tmp_path, ["a problem"])
    told.told_file(tmp_path, config_file).write_text(json.dumps({"chat": entry}), encoding="utf-8")
    assert told.already_told(tmp_path, config_file, {"chat": tmp_path}) == set()


def test_taking_one_source_from_what_add_listed_never_leaves_the_list_half_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a start that takes its source's entry while another reads the list (a second start, an add)
    # must leave the old list or the new one, as add's own write does: never a cut-short file
    from vecbook import told

    config_file = tmp_path / "vecbook.toml"
    (tmp_path / "a").mkdir()
    told.remember(tmp_path, config_file, "a", tmp_path / "a", ["a problem"])
    told.remember(tmp_path, config_file, "b", tmp_path, ["b problem"])
    before = told.told_file(tmp_path, config_file).read_bytes()

    def cut_short(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        with open(self, "w", encoding="utf-8") as out:
            out.write(data[:5])  # (the process killed mid-write)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", cut_short)
    monkeypatch.setattr(os, "replace", lambda *args: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        told.already_told(tmp_path, config_file, {"a": tmp_path / "a"})
    assert told.told_file(tmp_path, config_file).read_bytes() == before
