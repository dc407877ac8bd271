"""What the command line writes besides results: quiet by default, logs once, progress on a terminal."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import ROOT, FakeEmbedder


pytestmark = pytest.mark.usefixtures("shared_model")  # each CLI call's VecBook gets the loaded model


def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "garden.txt").write_text("Topic: garden\nTomatoes need sun; the café sells seeds 🍅.\n---\n"
                                     "Title: only a header\n", encoding="utf-8")
    return root


def test_a_search_prints_its_results_and_only_warnings_on_stderr(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = notes(tmp_path)
    assert vecbook.main(["search", "tomatoes", "--data-dir", str(root)]) == 0
    out, err = capsys.readouterr()
    assert "garden.txt:1-2" in out
    assert "INFO" not in err and "indexed" not in err
    assert "garden.txt:4: record has headers but no text; skipped" in err  # a problem in the data is shown


@pytest.mark.parametrize("flag", [["-v"], ["--verbose"], ["--log-level", "info"]])
def test_verbose_shows_what_is_read_and_indexed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                flag: list[str]) -> None:
    assert vecbook.main(["search", "tomatoes", "--data-dir", str(notes(tmp_path)), *flag]) == 0
    err = capsys.readouterr().err
    assert " INFO reading " in err and " INFO indexed " in err


def test_a_restart_with_nothing_changed_tells_its_reading_and_indexing_once(tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    root, cache = notes(tmp_path), tmp_path / "cache"
    past = time.time() - 60  # saved before the start, as a user's files are
    os.utime(root / "garden.txt", (past, past))
    vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), cache_directory=cache).close()
    with caplog.at_level(logging.INFO, logger="vecbook"):
        again = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), cache_directory=cache)
        again.reindex()  # what the watcher does at its start: a look that finds nothing changed
        again.close()
    said = [record.getMessage() for record in caplog.records if record.levelno >= logging.INFO]
    assert [line.split()[0] for line in said if line.startswith(("reading", "indexed"))] == ["reading", "indexed"]
    assert any(line.startswith("indexed ") and "0 texts embedded" in line for line in said)
    # The keyword cache holds every record as it is: no "0 of 4 records changed since ..., it is kept".
    assert not [line for line in said if "records changed since" in line]
    assert not [line for line in said if line.startswith("embedded ")]  # nothing embedded: every vector reused


ONNX_CHATTER = '''
import logging
from vecbook.cli import configure_logging
from vecbook.onnx_build import _quiet_build
configure_logging("INFO")
with _quiet_build():
    # as onnxruntime's quantizer does it, from its own file
    exec(compile("import logging\\nlogging.warning('Please consider to run pre-processing before quantization')",
                 "/site-packages/onnxruntime/quantization/quantize.py", "exec"))
logging.getLogger("vecbook").info("ONNX models built in 14 s")
print(len(logging.getLogger().handlers))
'''


def test_the_onnx_build_leaves_the_root_logger_as_found_and_its_chatter_unprinted() -> None:
    done = subprocess.run([sys.executable, "-c", ONNX_CHATTER], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"  # no root handler left behind
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].endswith(" INFO ONNX models built in 14 s"), lines


def test_reindex_says_changed_only_when_a_source_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import os
    import time

    root = notes(tmp_path)
    past = time.time() - 60  # saved before the run: the keyword cache may keep the file
    os.utime(root / "garden.txt", (past, past))
    cache = ["--config", str(tmp_path / "vecbook.toml")]
    (tmp_path / "vecbook.toml").write_text('data_directory = "notes"\ncache_directory = "cache"\n', encoding="utf-8")
    updates = []
    for _ in range(2):
        assert vecbook.main(["reindex", *cache]) == 0
        updates.append(json.loads(capsys.readouterr().out))
    assert updates[0]["changed"] is True and updates[1]["changed"] is False
    assert updates[1]["files_read"] == 0
    (root / "garden.txt").write_text("Topic: garden\nBasil too.\n", encoding="utf-8")
    assert vecbook.main(["reindex", *cache]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] is True


def test_min_score_help_says_what_a_nonsense_query_scores(sample_book: vecbook.VecBook,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    best = sample_book.search("purple elephant quantum banana", max_results=1)[0].similarity_score
    assert 0.15 < best < 0.35  # what --help and the docs say: about 0.25
    assert not sample_book.search("purple elephant quantum banana", min_score=0.35)
    assert vecbook.main(["search", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "a nonsense query's best hit ~0.25" in text and "may score 1" not in text


@pytest.mark.parametrize("mode, set_ok, colour, asked", [
    (0x0007, True, True, [0x0007]),  # VT processing on already (Windows Terminal)
    (0x0003, True, True, [0x0003, 0x0007]),  # Windows 10's console: turned on
    (0x0003, False, False, [0x0003, 0x0007]),  # a console before Windows 10 refuses it: no colour
    (None, True, False, []),  # not a console (GetConsoleMode fails)
])
def test_on_windows_colour_is_used_only_where_the_console_shows_it(
        monkeypatch: pytest.MonkeyPatch, mode: int | None, set_ok: bool, colour: bool, asked: list[int]) -> None:
    """Windows 10's console (cmd, PowerShell 5) prints ANSI codes as text (``←[1;33m``) unless the
    program turns virtual terminal processing on, which wants_color does, or prints no colour."""
    import ctypes

    from vecbook import hit_lines

    seen: list[int] = []

    class Kernel32:
        @staticmethod
        def GetStdHandle(which: int) -> int:  # noqa: N802 - the Windows API's names
            assert which == -11  # STD_OUTPUT_HANDLE
            return 7

        @staticmethod
        def GetConsoleMode(handle: Any, out: Any) -> int:  # noqa: N802
            if mode is None:
                return 0
            out._obj.value = mode
            seen.append(mode)
            return 1

        @staticmethod
        def SetConsoleMode(handle: Any, new: int) -> int:  # noqa: N802
            seen.append(new)
            return int(set_ok)

    monkeypatch.setattr(hit_lines, "WINDOWS", True)
    monkeypatch.setattr(ctypes, "WinDLL", lambda *_args, **_kwargs: Kernel32, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert hit_lines.wants_color() is colour
    assert seen == asked


def test_a_process_without_stdout_still_runs_the_command_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """pythonw.exe, and a process started with no console, have ``sys.stdout = None``: the
    output set-up must leave it alone rather than fail before the command runs."""
    from vecbook import hit_lines

    monkeypatch.setattr(sys, "stdout", None)
    hit_lines.fit_stdout()
    assert hit_lines.stdout_is_unicode() is False and hit_lines.wants_color() is False
    root = notes(tmp_path)
    assert vecbook.main(["search", "tomatoes", "--mode", "keyword", "--data-dir", str(root)]) == 0
