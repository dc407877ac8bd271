"""The command line, through main(argv): output formats, exit codes, errors on stderr."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import ROOT

CONFIG = str(ROOT / "vecbook.toml")


pytestmark = pytest.mark.usefixtures("shared_model")  # each CLI call's VecBook gets the loaded model


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = vecbook.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_prints_score_citation_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "search", "solo trip to Portugal", "-n", "2", "--config", CONFIG, "-v")
    assert code == 0
    first = out.splitlines()[0]
    assert re.match(r" 1\. [01]\.\d{6}  travel\.txt:28-\d+$", first), first
    assert "Location: Lisbon" in out and "INFO" not in out
    # Files and collections are counted apart, so a surprise collection is visible.
    assert re.search(r"indexed 88 records in \d+\.\ds: 50 from 11 files, 16 from collection messages, 6 from "
                     r"collection family-chat \(15 messages\), 4 from collection hiking-club \(8 messages\), 4 from "
                     r"collection calendar, 8 from "
                     r"collection vault; in all: \d+ files? ", err), err


def test_search_json_is_an_array_of_contract_hits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "heating broke", "--json", "-n", "3", "--mode", "semantic",
                       "--config", CONFIG)
    hits = json.loads(out)
    assert code == 0 and len(hits) == 3
    assert hits[0]["citation"].startswith("journal/2024/03.txt:17-")
    assert isinstance(hits[0]["similarity_score"], str) and len(hits[0]["similarity_score"]) == 8


def test_search_filters_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "plans", "--json", "-n", "50", "--filter", "source=messages",
                       "--filter", "channel__in=family,general", "--config", CONFIG)
    hits = json.loads(out)
    assert code == 0 and hits
    assert all(h["source"] == "messages" and h["metadata"]["channel"] in ("family", "general") for h in hits)


def test_data_dir_overrides_the_config(capsys: pytest.CaptureFixture[str], write_files: Any) -> None:
    root = write_files({"only.txt": "The only note here, about kayaks.\n"})
    code, out, _ = run(capsys, "search", "boats", "--json", "--data-dir", str(root), "--config", CONFIG)
    assert code == 0 and [h["id"] for h in json.loads(out) if h["source"] == "files"] == ["only.txt:1"]


def test_stats_in_both_formats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "--json", "--config", CONFIG)
    stats = json.loads(out)
    assert code == 0 and stats["records"] == 88 and stats["files"] == 11
    code, out, _ = run(capsys, "stats", "--config", CONFIG)
    assert code == 0 and "records: 88" in out and "index_type: IndexScalarQuantizer (float16)" in out
    assert "\nwindows: 10\nmessages: 23\n" in out  # the chats' conversation windows and the messages in them


def test_stats_for_a_person_leaves_out_what_is_not_there_and_indents_what_is_nested() -> None:
    # with no data folder it said "files: 0", "data_directory: None", "error: None", and each of
    # collections, cache and last_update was one long JSON line
    from vecbook.cli_output import stats_lines

    stats = {"state": "ready", "records": 2, "files": 0, "sources": {"files": 0, "京都": 2}, "skipped": [],
             "warnings": [{"file_path": "京都/chat.txt", "line": None, "reason": "cannot tell day/month"}],
             "collections": {"京都": {"format": "notes", "kinds": {"markdown": 1, "whatsapp": 1}, "not_read": {},
                                     "problems": ["cannot tell day/month"], "left_out": []}},
             "data_directory": None, "model_languages": ["english"], "cache": {"path": "/c/v.vbc", "entries": 2},
             "last_update": {"full": False, "seconds": 1.4}, "error": None}
    assert stats_lines(stats) == [
        "state: ready", "records: 2", "sources:", "  京都: 2", "warnings: 1",
        "  - 京都/chat.txt: cannot tell day/month", "collections:", "  京都:", "    format: notes", "    kinds:",
        "      markdown: 1", "      whatsapp: 1", "    problems: 1", "      - cannot tell day/month",
        "model_languages: 1", "  - english", "cache:", "  path: /c/v.vbc", "  entries: 2", "last_update:",
        "  full: False", "  seconds: 1.4"]
    with_folder = stats_lines({**stats, "data_directory": "/notes", "files": 0})
    assert with_folder[2:4] == ["files: 0", "sources:"] and "  files: 0" in with_folder


@pytest.mark.parametrize("argv, message", [
    (["search", "", "--config", CONFIG], "query must be a non-empty string"),
    (["search", "x", "--filter", "nokey", "--config", CONFIG], "--filter needs KEY=VALUE"),
    (["search", "x", "--filter", "date__soon=1", "--config", CONFIG], "unknown filter operator 'soon'"),
    (["search", "x", "--filter", "Tags__exists=maybe", "--config", CONFIG], "needs true or false"),
    (["search", "x", "--config", "/nonexistent/vecbook.toml"], "config file not found"),
    (["search", "x", "--data-dir", "/nonexistent/dir", "--config", CONFIG], "data directory not found"),
])
def test_usage_errors_exit_2_with_a_message_on_stderr(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                      message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err


def test_a_missing_model_is_said_once(capsys: pytest.CaptureFixture[str], write_files: Any,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_files({"a.txt": "text\n"})
    original = vecbook.VecBook.__init__  # shared_model's, which gives the loaded model: give a missing one
    monkeypatch.setattr(vecbook.VecBook, "__init__", lambda self, *args, **kwargs: original(
        self, *args, **dict(kwargs, embedder=vecbook.Embedder(str(root / "missing-model")))))
    code, out, err = run(capsys, "search", "text", "--data-dir", str(root), "--config", CONFIG)
    assert code == 1 and out == ""
    assert err.count("not a local directory") == 1, err
    assert err.startswith("vecbook: error: hybrid search is unavailable:")  # the mode searched: the default
    assert err.rstrip().endswith('keyword search works without the model: --mode keyword on the command line, '
                                 'mode="keyword" over MCP and in Python, keyword under Mode on the search page, or '
                                 'search_mode = "keyword" in vecbook.toml to make it the default'), err


def test_a_query_of_unquoted_words_is_searched_as_if_quoted(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The quotes forgotten, `vecbook search who fixed the boiler` searches those words, as the
    quoted query does, and words typed after an option belong to it too."""
    searched: list[str] = []
    monkeypatch.setattr(vecbook.cli, "_cmd_search", lambda args, config: searched.append(args.query) or 0)
    for words in (["who fixed the boiler"], ["who", "fixed", "the", "boiler"], ["who", "fixed", "-n", "3", "the", "boiler"]):
        assert run(capsys, "search", *words, "--config", CONFIG) == (0, "", "")
    assert searched == ["who fixed the boiler"] * 3


def test_mode_and_fusion_take_any_case(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell user types `--mode Keyword` or `--fusion RRF`, as --log-level takes `warn` or `WARN`:
    each was an invalid choice."""
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(vecbook.cli, "_cmd_search", lambda args, config: seen.append((args.mode, args.fusion)) or 0)
    for mode, fusion in (("Keyword", "LINEAR"), ("HYBRID", "Rrf")):
        assert run(capsys, "search", "x", "--mode", mode, "--fusion", fusion, "--config", CONFIG) == (0, "", "")
    assert seen == [("keyword", "linear"), ("hybrid", "rrf")]


@pytest.mark.parametrize("level", ["warn", "WARN", "warning", "error"])
def test_log_level_flag_takes_the_config_spellings(capsys: pytest.CaptureFixture[str], level: str) -> None:
    code, out, err = run(capsys, "search", "Kahneman", "--mode", "keyword", "--log-level", level, "--config", CONFIG)
    assert code == 0 and out and "INFO" not in err


@pytest.mark.parametrize("argv, message", [
    (["search"], "vecbook search: error: the following arguments are required: query"),
    (["search", "x", "-n", "many"], "vecbook search: error: argument -n/--max-results: must be a whole number, "
                                    "got 'many'"),
    # A number out of range is named by the flag typed, in the library's own words.
    (["search", "x", "-n", "0"], "vecbook search: error: argument -n/--max-results: must be between 1 and 1000, got 0"),
    (["search", "x", "-n", "5000"], "vecbook search: error: argument -n/--max-results: must be between 1 and 1000"),
    (["search", "x", "--max-total-chars", "0"], "vecbook search: error: argument --max-total-chars: must be a whole "
                                                "number of characters from 1 to 100,000,000, got 0"),
    (["search", "x", "--max-chars", "-1"], "vecbook search: error: argument --max-chars: must be a whole number of "
                                           "characters from 0 to 1,000,000, got -1"),
    (["get", "x", "-C", "99"], "vecbook get: error: argument -C/--context: must be a whole number of records from 0 "
                               "to 50, got 99"),
    (["frobnicate"], "vecbook: error: argument COMMAND: invalid choice: 'frobnicate'"),
    (["search", "x", "--log-level", "loud"], "vecbook search: error: argument --log-level: invalid choice: 'LOUD'"),
    (["search", "x", "--mode", "fuzzy"], "vecbook search: error: argument --mode: invalid choice: 'fuzzy'"),
    (["stats", "--source", "x"], "vecbook stats: error: unrecognized arguments: --source x (`vecbook stats --help`"),
    (["search", "who", "fixed", "--frob"], "vecbook search: error: unrecognized arguments: --frob (`vecbook search"),
])
def test_argparse_errors_exit_2_with_one_line_naming_the_help(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                             message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith(message)
    assert err.count("\n") == 1 and err.rstrip().endswith("--help` lists what it takes)")  # no usage block


def test_runtime_errors_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path, write_files: Any,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # this test needs the configured (missing) model, not the shared one
    root = write_files({"a.txt": "text\n"})
    config = tmp_path / "broken.toml"
    config.write_text(f'data_directory = "{root}"\nembedding_model = "{tmp_path}/no-model"\n', encoding="utf-8")
    code, out, err = run(capsys, "search", "x", "--mode", "semantic", "--config", str(config))
    assert code == 1 and "semantic search is unavailable" in err and out == ""


def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("search", "stats", "reindex", "serve"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and "--config" in out and "--data-dir" in out
    code, out, _ = run(capsys, "--help")
    assert all(c in out for c in ("search", "stats", "reindex", "serve"))


def test_a_keyword_search_skips_the_model(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()

    def no_model(self: vecbook.Embedder) -> None:
        raise AssertionError("a keyword search must not load the model")

    monkeypatch.setattr(vecbook.Embedder, "load", no_model)
    code, out, _ = run(capsys, "search", "Kahneman", "--mode", "keyword", "--json", "--config", CONFIG)
    assert code == 0 and json.loads(out)[0]["id"] == "reading_notes.txt:22"


def test_embedding_progress_is_a_bar_on_a_terminal_and_log_lines_otherwise(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, write_files: Any) -> None:
    root = write_files({"notes.txt": "Kayak trip on Sunday.\n---\nBoiler service on Monday.\n"})
    argv = ("search", "kayak", "--data-dir", str(root), "--config", CONFIG)
    code, _, err = run(capsys, *argv)
    assert code == 0 and err == ""  # not a terminal, not verbose: nothing
    (root / "boat.txt").write_text("Canoe club meets on Friday.\n", encoding="utf-8")  # a text to embed
    code, _, err = run(capsys, *argv, "-v")
    # The config's SQLite collection is indexed too, so count, do not assume, the total.
    assert code == 0 and re.search(r"embedded (\d+) of \1 records", err) and "\r" not in err  # lines for a log
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # capsys's stream, now "a terminal"
    monkeypatch.setattr(vecbook.progress, "PROGRESS_BAR_WINDOWS", 1)
    (root / "more.txt").write_text("Kayak lessons start in June.\n", encoding="utf-8")  # a text to embed
    code, _, err = run(capsys, *argv)
    assert code == 0 and re.search(r"\rembedding (\d+) of \1 records: 100%\|.*\| \[[\d:]+<[\d:]+, 1/1 windows[],]", err), err


def test_the_bar_of_a_long_record_moves_with_its_windows(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # One 5 MB record beside 3,000 notes stood at "3003/3004 [..., 4 record/s]" for 12 minutes.
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(vecbook.progress, "BAR_REDRAW_SECONDS", 0.0)  # every call draws
    bar, Work = vecbook.cli.TerminalProgress(), vecbook.progress.Work
    bar(0, 3004, Work(0, 9004, 0, 1_500_000))
    bar(3003, 3004, Work(3000, 9004, 300_000, 1_500_000))
    bar(3003, 3004, Work(6000, 9004, 900_000, 1_500_000))
    bar(3004, 3004, Work(9004, 9004, 1_500_000, 1_500_000))
    err = capsys.readouterr().err
    assert "embedding 3,003 of 3,004 records:  20%|" in err and "3,000/9,004 windows" in err, repr(err)
    assert "embedding 3,003 of 3,004 records:  60%|" in err and "6,000/9,004 windows" in err, repr(err)
    assert re.search(r"embedding 3,004 of 3,004 records: 100%\|.*9,004/9,004 windows, [\d.]+ windows/s\]\n$", err)


def test_a_small_update_on_a_terminal_draws_no_bar(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = vecbook.cli.TerminalProgress()
    for done in range(0, 11):
        bar(done, 10)
    assert capsys.readouterr().err == ""


def test_ctrl_c_during_a_bar_says_what_was_kept_on_a_line_of_its_own(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # The line used to trail the bar ("...72.1record/s]vecbook: interrupted; ..."), and the bar
    # was drawn again below it when Python exited.
    import argparse

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = vecbook.cli.TerminalProgress()

    def first_index(_args: argparse.Namespace, _config: None) -> int:
        bar(0, 1000)
        bar(300, 1000)
        raise KeyboardInterrupt("kept the 300 vectors embedded so far")

    assert vecbook.cli._run(argparse.Namespace(loads_config=False, handler=first_index), []) == 130
    bar(364, 1000)  # the indexing thread's last checkpoint, after the interrupt: no bar again
    err = capsys.readouterr().err
    assert re.search(r"windows/s\]\nvecbook: interrupted; kept the 300 vectors embedded so far\n$", err), repr(err)


def test_the_script_runs_from_any_folder_with_its_config_named(tmp_path: Path) -> None:
    # `python /abs/path/vecbook.py` started from another folder finds the vecbook package beside
    # it; the checkout's own config is used only when named (or from the checkout itself).
    out = subprocess.run([sys.executable, str(ROOT / "vecbook.py"), "search", "kimchi", "--mode", "keyword",
                          "-n", "1", "--json", "--config", CONFIG], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["file_path"] == "recipes.txt"


def test_from_another_folder_with_no_config_it_says_how_to_add_a_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # today `cd / && vecbook.py stats` searched the samples
    code, out, err = run(capsys, "search", "leftover rice")
    assert code == 2 and out == ""
    assert err.startswith("vecbook: error: nothing to search: ") and "`vecbook add PATH`" in err


def test_plain_output_shows_the_snippet_with_its_lines_and_folded_duplicates() -> None:
    hit = vecbook.Hit(text="one\ntwo boiler\nthree", file_path="a.txt", line_number=1, end_line=3,
                      similarity_score=0.5, metadata={"Tags": ["home", "money"]}, source="files", id="a.txt:1",
                      citation="a.txt:1-3", snippet="two boiler\nthree", snippet_line=2, snippet_end_line=3,
                      matched_terms=["boilers"], duplicates=["b.txt:4-6"])
    assert vecbook.cli.format_hits([hit]).splitlines() == [
        " 1. 0.500000  a.txt:1-3", "    Tags: home, money", "    lines 2-3:", "      two boiler", "      three",
        "    also in: b.txt:4-6"]
    coloured = vecbook.cli.format_hits([hit], color=True)
    assert "two \x1b[1;33mboiler\x1b[0m" in coloured  # matched by stem, as the keyword index matched it


def test_a_metadata_value_of_several_lines_stays_on_the_metadata_line() -> None:
    # a recurring event's rrule (DTSTART, RRULE lines), a YAML block scalar: one printed line
    hit = vecbook.Hit(text="Birthday", file_path="cal/f.ics", line_number=3, end_line=9, similarity_score=0.5,
                      metadata={"title": "Birthday", "rrule": "DTSTART;VALUE=DATE:19900612\nRRULE:FREQ=YEARLY"},
                      source="cal", id="cal:f.ics#b", citation="cal/f.ics:3-9", snippet="Birthday", snippet_line=3,
                      snippet_end_line=3)
    assert vecbook.cli.format_hits([hit]).splitlines() == [
        " 1. 0.500000  cal/f.ics:3-9", "    title: Birthday, rrule: DTSTART;VALUE=DATE:19900612 RRULE:FREQ=YEARLY",
        "    line 3:", "      Birthday"]


@pytest.mark.parametrize("participants, shown", [
    # Chinese and Japanese names take two columns a character: 100 columns hold half as many
    (["王小明", "李华", "さくら", "田中太郎", "김민준", "이서연"] * 4,
     "    participants: 王小明, 李华, さくら, 田中太郎, 김민준, 이서연, 王小明, 李华, さくら, 田中太郎, 김..."),
    # a family emoji (seven code points, one picture) is kept whole or left out, never halved
    (["x" * 80, "👨\u200d👩\u200d👧\u200d👦 Family"], "    participants: " + "x" * 80 + ", ..."),
])
def test_the_metadata_line_is_cut_to_100_columns_between_whole_characters(participants: list[str], shown: str) -> None:
    hit = vecbook.Hit(text="hi", file_path="chat.json", line_number=1, end_line=2, similarity_score=0.5,
                      metadata={"participants": participants}, source="files", id="chat.json#1",
                      citation="chat.json:1-2", snippet="hi", snippet_line=1, snippet_end_line=1)
    line = vecbook.cli.format_hits([hit]).splitlines()[1]
    assert line == shown
    assert sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in line[4:]) <= 100


def test_a_line_separator_inside_a_message_is_no_printed_line_of_its_own() -> None:
    # U+2028 inside a chat message is one line of its file: printed lines match cited lines
    hit = vecbook.Hit(text="Bo: first\u2028second pineapple\nAna: ok", file_path="c.txt", line_number=8,
                      end_line=9, similarity_score=0.5, metadata={}, source="files", id="c.txt:8",
                      citation="c.txt:8-9", truncated=True)
    assert vecbook.cli.format_hits([hit]).split("\n") == [
        " 1. 0.500000  c.txt:8-9", "    lines 8-9:", "      Bo: first\u2028second pineapple", "      Ana: ok"]


def test_control_characters_in_a_record_are_shown_not_sent_to_the_terminal() -> None:
    # An ESC in a chat message would drive the terminal (clear it, retitle it), a bare CR print a
    # line over itself, a NEL (U+0085) end the line in some terminals: each is shown as a picture
    # of itself, and the printed lines still match the cited ones
    text = "Bo: \x1b[2Jred\x1b[0m alert\rover\nAna: para\x85graph\x07 ok\r\n"
    hit = vecbook.Hit(text=text, file_path="c\x1b.txt", line_number=8, end_line=9, similarity_score=0.5,
                      metadata={"title": "x\x1b]0;owned\x07"}, source="files", id="c.txt:8",
                      citation="c\x1b.txt:8-9", truncated=True, matched_terms=["alert"])
    for color in (False, True):
        out = vecbook.cli.format_hits([hit], color=color)
        assert "\x1b[2J" not in out and "\x1b]" not in out and "\r" not in out and "\x85" not in out
        assert "\x07" not in out
    assert vecbook.cli.format_hits([hit]).split("\n") == [
        " 1. 0.500000  c\u241b.txt:8-9", "    title: x\u241b]0;owned\u2407", "    lines 8-9:",
        "      Bo: \u241b[2Jred\u241b[0m alert\u240dover", "      Ana: para\u2424graph\u2407 ok"]
    assert "\x1b[1;33malert\x1b[0m" in vecbook.cli.format_hits([hit], color=True)


def test_get_shows_the_record_s_metadata_under_its_citation_as_search_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a mail's text is its body: who sent it and when are its metadata
    (tmp_path / "n.txt").write_text("First note.\n---\nDate: 2024-03-04\nFrom: Zoë\nThe boiler is fixed.\n---\n"
                                    "Last note.\n", encoding="utf-8")
    code, out, _ = run(capsys, "get", "n.txt:5", "-C", "1", "--data-dir", str(tmp_path))
    assert code == 0 and out.splitlines() == [
        "  n.txt:1-1", "    First note.", "",
        "> n.txt:3-5", "    Date: 2024-03-04, From: Zoë", "    The boiler is fixed.", "",
        "  n.txt:7-7", "    Last note."]


def test_get_finds_a_line_of_a_file_whose_lines_end_in_a_bare_cr(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # classic Mac OS line ends: the line cited is the line an editor shows there
    (tmp_path / "n.txt").write_bytes(b"First note.\r---\rDate: 2024-03-04\rThe boiler is fixed.\r---\rLast note.\r")
    code, out, _ = run(capsys, "get", "n.txt:4", "--data-dir", str(tmp_path))
    assert code == 0 and out.splitlines() == ["> n.txt:3-4", "    Date: 2024-03-04", "    The boiler is fixed."]


def test_get_shows_control_characters_of_a_record_as_pictures(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "n.txt").write_text("a \x1b[2J clear\nnext\x85line\n", encoding="utf-8")
    code, out, _ = run(capsys, "get", "n.txt:1", "--data-dir", str(tmp_path))
    assert code == 0 and out.splitlines() == ["> n.txt:1-2", "    a \u241b[2J clear", "    next\u2424line"]


def test_plain_output_is_never_coloured_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "boiler", "--mode", "keyword", "--config", CONFIG)
    assert code == 0 and "boiler" in out.lower() and "\x1b[" not in out


@pytest.mark.parametrize("filter_arg, message", [
    ("tags__contians=work", "unknown filter operator 'contians' in 'tags__contians' (use one of: exact, ne, gt"),
    ("priority__gt=abc", "filter 'priority__gt' needs a number or an ISO date such as 2024-01-31 or "
                         "2024-01-31T09:30:00+01:00, got 'abc'"),
])
def test_a_bad_filter_fails_before_anything_is_indexed(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch, filter_arg: str,
                                                       message: str) -> None:
    def no_index(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("a malformed filter must fail before the model loads and records are indexed")

    monkeypatch.setattr(vecbook.VecBook, "__init__", no_index)
    code, out, err = run(capsys, "search", "x", "--mode", "hybrid", "--filter", filter_arg, "--config", CONFIG)
    assert code == 2 and out == ""
    assert err.startswith(f"vecbook: error: {message}")


def test_list_headers_filter_by_member_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "rice", "--mode", "keyword", "--json", "--filter", "tags__in=quick,leftovers",
                       "--config", CONFIG)
    hits = json.loads(out)
    assert code == 0 and hits[0]["citation"] == "recipes.txt:1-9"
    assert hits[0]["metadata"]["Tags"] == ["quick", "leftovers", "weeknight"]
    code, out, _ = run(capsys, "search", "rice", "--mode", "keyword", "-n", "1", "--filter", "tags__in=quick",
                       "--config", CONFIG)
    assert "Tags: quick, leftovers, weeknight" in out  # lists read as the header was written


def test_min_score_help_says_what_each_mode_compares(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "semantic: cosine mapped to 0-1 (an unrelated query's best hit still scores ~0.6), keyword: BM25 over " \
           "its upper bound, hybrid linear: the fused score (a nonsense query's best hit ~0.25, a real question's " \
           "~0.8), hybrid rrf: ranks only" in text


def test_data_dir_help_says_it_is_searched_alone(capsys: pytest.CaptureFixture[str]) -> None:
    # --data-dir without --config reads no config file: the user's collections are not searched
    code, out, _ = run(capsys, "search", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "--data-dir DIR the notes folder to search (.md, .txt, exports): alone, or with --config in place of " \
           "its data_directory" in text


@pytest.mark.skipif(os.name != "posix" or shutil.which("bash") is None or shutil.which("head") is None,
                    reason="a POSIX pipe into head (exit 141 is SIGPIPE's)")
def test_output_piped_to_a_reader_that_leaves_early_ends_quietly(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.txt").write_text("\n---\n".join(f"Note {i} about the harbour 🚢 " + "and the boats " * 30 for i in range(1000)),
                                 encoding="utf-8")
    script = (f"{sys.executable} {ROOT / 'vecbook.py'} search harbour --mode keyword -n 1000 "
              f"--data-dir {notes} | head -1")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "VECBOOK_CACHE_DIRECTORY": "false"})
    assert done.stdout.startswith(" 1. ")
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 141


@pytest.mark.parametrize("json_output", [False, True])
def test_output_to_a_stdout_that_cannot_encode_emoji_never_fails(tmp_path: Path, json_output: bool) -> None:
    """Windows writes cp1252 to a pipe or a file (``vecbook search ... > hits.txt``, ``| findstr``):
    a character it lacks prints as '?' rather than ending the search in a UnicodeEncodeError,
    and JSON escapes it, so nothing is lost."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "party.txt").write_text("Party 🎉 at Zoë's, café — 東京\n", encoding="utf-8")
    argv = [sys.executable, str(ROOT / "vecbook.py"), "search", "party", "--mode", "keyword", "--data-dir",
            str(notes), *(["--json"] if json_output else [])]
    done = subprocess.run(argv, capture_output=True, timeout=120,
                          env={**os.environ, "VECBOOK_CACHE_DIRECTORY": "false", "PYTHONIOENCODING": "cp1252"})
    assert done.returncode == 0, done.stderr.decode("cp1252")
    out = done.stdout.decode("cp1252")
    if json_output:
        assert json.loads(out)[0]["text"] == "Party 🎉 at Zoë's, café — 東京"
    else:
        assert "Party ? at Zoë's, café — ??" in out


def test_a_missing_data_directory_named_by_the_environment_names_the_variable(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VECBOOK_DATA_DIRECTORY", str(tmp_path / "gone"))
    code, out, err = run(capsys, "search", "x")
    assert code == 2 and err == (f"vecbook: error: data directory not found: {tmp_path / 'gone'} (from "
                                 "VECBOOK_DATA_DIRECTORY: create the folder, or set the variable to one that exists)\n")
