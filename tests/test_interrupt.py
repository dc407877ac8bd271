"""An interrupted first index keeps what it embedded (docs/freshness-and-caches.md): Ctrl-C
and SIGTERM save it before the process leaves, with one line on stderr and no traceback; a
long index appends it to a journal every CHECKPOINT_SECONDS, so even a kill -9 loses only the
last stretch; the next start embeds only the rest. Each is a real process, interrupted while
it embeds with the real model."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import ROOT, FakeEmbedder
from vecbook.vector_files import read_journal

RECORDS = 48
# Runs a command as `vecbook` does, embedding in chunks of 4 texts and pausing after each, with a
# line in the marker file once a chunk is noted (and appended to the journal when one is due).
# Ctrl-C is met with Python's own handler, as in a terminal: a test run started in the background
# by a non-interactive shell inherits SIGINT ignored, and the child would never see it.
DRIVER = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, sys.argv[1])
import vecbook.build, vecbook.caches, vecbook.cli
vecbook.build.EMBED_CHUNK = 4
vecbook.caches.CHECKPOINT_SECONDS = float(sys.argv[2])
noted = vecbook.caches.Checkpoints.embedded

def embedded(self, vectors):
    noted(self, vectors)
    with open(sys.argv[3], "a") as marks:
        marks.write(f"{len(vectors)}\\n")
    time.sleep(0.4)

vecbook.caches.Checkpoints.embedded = embedded
sys.exit(vecbook.cli.main(sys.argv[4:]))
"""


def notes(count: int, first: int = 0) -> str:
    """``count`` one-window records, each its own text (in several scripts)."""
    words = ["garden 🌱", "café crème", "東京 会議", "المرجل يعمل", "שלום", "budget"]
    return "\n---\n".join(f"Note {n}: {words[n % 6]} and the ferry at {n} o'clock" for n in range(first, first + count))


@pytest.fixture
def library(tmp_path: Path, embedder: vecbook.Embedder) -> Path:
    """A config over a folder of RECORDS notes (the model built already: the session's)."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "notes.txt").write_text(notes(RECORDS) + "\n", encoding="utf-8")
    config = tmp_path / "vecbook.toml"
    config.write_text('data_directory = "notes"\n', encoding="utf-8")
    return config


def start(config: Path, checkpoint_seconds: float, *command: str) -> tuple[subprocess.Popen[str], Path]:
    marks = config.parent / "marks.txt"
    marks.unlink(missing_ok=True)
    driver = config.parent / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(driver), str(ROOT), str(checkpoint_seconds), str(marks), *command,
                             "--config", str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=config.parent, env={**os.environ, "NO_COLOR": "1"})
    return proc, marks


def wait_for_chunks(proc: subprocess.Popen[str], marks: Path, chunks: int, timeout: float = 120.0) -> int:
    """Wait until ``chunks`` chunks are embedded and noted; returns the texts they hold."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = marks.read_text().split() if marks.exists() else []
        if len(lines) >= chunks:
            return sum(map(int, lines[:chunks]))
        if proc.poll() is not None:
            raise AssertionError(f"the process ended first: {proc.communicate()[1][-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"fewer than {chunks} chunks embedded within {timeout}s")


def next_start(config: Path, embedder: vecbook.Embedder) -> dict[str, Any]:
    book = vecbook.VecBook(config=vecbook.load_config(config), embedder=embedder)
    book.close()
    stats = book.stats()
    return {**stats["last_update"], "cache_file": Path(stats["cache"]["path"])}


def journals(cache_file: Path) -> list[Path]:
    """The journals beside ``cache_file`` (of its scope: other tests' books share the session's
    cache folder, and one still closing may leave a journal of its own there for a moment)."""
    return list(cache_file.parent.glob(f"{cache_file.stem}.*.vbj"))


@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"),
                                                (signal.SIGTERM, 143, "terminated")])
def test_a_first_index_stopped_by_ctrl_c_or_sigterm_keeps_what_it_embedded(
        library: Path, embedder: vecbook.Embedder, signum: int, code: int, word: str) -> None:
    proc, marks = start(library, 3600.0, "reindex")  # no checkpoint falls due: the signal saves it
    try:
        wait_for_chunks(proc, marks, 3)
        proc.send_signal(signum)
        started = time.monotonic()
        _, stderr = proc.communicate(timeout=60)
        assert time.monotonic() - started < 10  # within a few seconds
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code
    line = re.fullmatch(rf"vecbook: {word}; kept the (\d+) vectors embedded so far \((\d+) of {RECORDS} records "
                        r"complete\); the next start embeds only the rest\n", stderr)
    assert line is not None, stderr  # one line, no traceback
    kept = int(line.group(1))
    assert 12 <= kept < RECORDS and int(line.group(2)) == kept  # one window per record
    update = next_start(library, embedder)
    assert update["from_cache"] == kept and update["embedded"] == RECORDS - kept  # only the rest
    assert not journals(update["cache_file"])  # the journal is in the cache file now


def test_a_killed_index_loses_only_what_came_after_its_last_checkpoint(library: Path,
                                                                       embedder: vecbook.Embedder) -> None:
    # every note cached: what the new export's checkpoints must not prune
    cache_file = next_start(library, embedder)["cache_file"]
    (library.parent / "notes" / "chat.txt").write_text(notes(RECORDS, first=1000) + "\n", encoding="utf-8")
    proc, marks = start(library, 0.0, "reindex")  # a checkpoint after every chunk
    try:
        checkpointed = wait_for_chunks(proc, marks, 3)
        proc.kill()  # kill -9: nothing runs after this
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert len(journals(cache_file)) >= 1
    update = next_start(library, embedder)
    kept = update["from_cache"] - RECORDS  # the first notes' vectors all came from the cache file
    assert checkpointed <= kept < RECORDS and update["embedded"] == RECORDS - kept
    assert update["records"] == 2 * RECORDS


def test_the_server_s_sigterm_keeps_what_its_first_index_embedded(library: Path, embedder: vecbook.Embedder) -> None:
    proc, marks = start(library, 3600.0, "serve")
    try:
        assert proc.stdin is not None
        proc.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
                         '"2025-06-18", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}}\n')
        proc.stdin.flush()  # its first message starts the index
        wait_for_chunks(proc, marks, 3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        stderr = proc.stderr.read() if proc.stderr is not None else ""
    finally:
        if proc.poll() is None:
            proc.kill()
    kept = int(re.search(r"kept (\d+) vectors embedded since the last save", stderr).group(1))  # type: ignore[union-attr]
    update = next_start(library, embedder)
    assert kept >= 12 and update["from_cache"] == kept and update["embedded"] == RECORDS - kept


def test_a_background_index_s_exit_write_keeps_what_was_embedded(write_files: Any, tmp_path: Path) -> None:
    """What serve's SIGTERM and the process's exit call (``write_put_off``), while the build
    still embeds in its thread: a journal of what is done, the build going on meanwhile."""
    root, cache = write_files({"notes.txt": notes(RECORDS)}), tmp_path / "cache"
    release, chunks = threading.Event(), []

    class Paused(FakeEmbedder):
        def encode(self, texts: Any) -> Any:
            chunks.append(len(texts))
            if len(chunks) > 2:
                release.wait(30)
            return super().encode(texts)

    import vecbook.build

    original = vecbook.build.EMBED_CHUNK
    vecbook.build.EMBED_CHUNK = 8
    try:
        book = vecbook.VecBook(root, embedder=Paused(), cache_directory=cache, background=True)
        book.start()
        deadline = time.monotonic() + 30
        while len(chunks) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        vecbook.caches.write_put_off()  # two chunks are done, the third waits
        journals = list(cache.glob("*.vbj"))
        written, _ = read_journal(journals[0], FakeEmbedder().identity)
        assert len(journals) == 1 and sum(map(len, written)) == 16
        for chunk in written:
            chunk.matrix.close()
        release.set()
        assert book._thread is not None
        book._thread.join(30)  # the build, and its save
    finally:
        vecbook.build.EMBED_CHUNK = original
    assert not journals[0].exists()  # the finished build's save took it in
    restarted = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert restarted.stats()["last_update"]["embedded"] == 0
