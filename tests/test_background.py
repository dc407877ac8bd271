"""Background indexing, keyword fallback while vectors are computed, and the vector cache."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pytest

import vecbook
from conftest import ROOT, FakeEmbedder
from test_mcp import call as mcp_call


class SlowEmbedder(vecbook.Embedder):
    """The real model, held back until the test releases it, counting what it embeds."""

    def __init__(self, real: vecbook.Embedder) -> None:
        super().__init__(real.model_name)
        self._model, self._path, self.precision = real._model, real._path, real.precision
        self.release = threading.Event()
        self.embedded: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.release.wait(timeout=60)
        self.embedded.extend(texts)
        return super().encode(texts)

    def encode_query(self, text: str) -> np.ndarray:
        return vecbook.Embedder.encode(self, [text])[0]  # queries are never held back


class CountingEmbedder(SlowEmbedder):
    def __init__(self, real: vecbook.Embedder) -> None:
        super().__init__(real)
        self.release.set()


NOTES = {f"n{i}.txt": f"Topic: t{i}\nNote {i}: the ferry to the island leaves at {i} o'clock.\n" for i in range(6)}
NOTES["kayak.txt"] = "Bought a second-hand kayak and paddle for the summer.\n"


def test_keyword_search_works_while_vectors_are_computed(write_files: Any, embedder: vecbook.Embedder,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    slow = SlowEmbedder(embedder)
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=slow, background=True,
                           semantic_wait_seconds=0.2)
    assert book.stats()["state"] == "not started"
    book.start()
    hits = book.search("kayak", mode="keyword")
    assert hits[0].id == "kayak.txt:1"
    stats = book.stats()
    assert stats["state"] == "embedding" and stats["records_total"] == 7 and stats["records_embedded"] == 0
    started = time.monotonic()
    fallback = book.search("boat for paddling", mode="hybrid")
    assert time.monotonic() - started < 5
    assert "answering hybrid search from the keyword index" in caplog.text
    assert all(h.semantic_score is None for h in fallback) and fallback.mode == "keyword"
    told = mcp_call(book, "search", {"query": "boat for paddling", "mode": "semantic"})  # an assistant is told too
    assert json.loads(told.content[-1].text)["answered_as"] == told.structured_content["answered_as"] == "keyword"
    slow.release.set()
    assert book.wait_until_ready(timeout=60)
    stats = book.stats()
    assert stats["state"] == "ready" and stats["records_embedded"] == 7
    assert book.search("boat for paddling", mode="semantic")[0].id == "kayak.txt:1"
    answered = mcp_call(book, "search", {"query": "boat for paddling", "mode": "semantic"})
    assert "answered_as" not in answered.structured_content and len(answered.content) == 1


class LoadTimingEmbedder(FakeEmbedder):
    """The fake model, noting when it is loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded_at: float | None = None

    def load(self) -> Any:
        if self.loaded_at is None:
            self.loaded_at = time.monotonic()
        return None


def test_a_first_keyword_search_is_answered_before_the_model_loads(write_files: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The model's import and load hold the interpreter in long stretches: a search running
    # when keyword search opens is finished first (the load waits for a quiet moment).
    ranking = vecbook.snapshot_search.rank

    def slow_rank(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)
        return ranking(*args, **kwargs)

    monkeypatch.setattr(vecbook.snapshot_search, "rank", slow_rank)
    # A wide quiet window, so that a slow machine's search still starts within it.
    monkeypatch.setattr(vecbook.book, "QUIET_SECONDS", 1.0)
    model = LoadTimingEmbedder()
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=model, background=True, cache_directory=False)
    book.start()
    assert book.search("kayak", mode="keyword")[0].id == "kayak.txt:1"
    answered = time.monotonic()
    assert book.wait_until_ready(timeout=10)
    assert model.loaded_at is not None and model.loaded_at >= answered


def test_a_search_waiting_for_vectors_does_not_hold_the_model_back(write_files: Any) -> None:
    model = LoadTimingEmbedder()
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=model, background=True, cache_directory=False)
    book.start()
    started = time.monotonic()
    hits = book.search("kayak paddle", mode="semantic")  # waits for the vectors, not counted as running
    assert hits[0].id == "kayak.txt:1" and book.stats()["precision"] is not None
    assert model.loaded_at is not None and model.loaded_at - started < vecbook.book.QUIET_WAIT_LIMIT_SECONDS


def test_a_search_waiting_for_vectors_ends_the_quiet_wait(write_files: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The quiet moment spares a first keyword answer the model load; a hybrid or semantic search
    # waiting for the vectors waits on the load itself (a restart's first hybrid answer waited
    # the quiet moment on top), so the load starts at once.
    monkeypatch.setattr(vecbook.book, "QUIET_SECONDS", 5.0)
    monkeypatch.setattr(vecbook.book, "QUIET_WAIT_LIMIT_SECONDS", 10.0)
    model = LoadTimingEmbedder()
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=model, background=True, cache_directory=False)
    book.start()
    started = time.monotonic()
    hits = book.search("kayak paddle", mode="hybrid")
    assert hits[0].id == "kayak.txt:1" and hits[0].semantic_score is not None
    assert model.loaded_at is not None and model.loaded_at - started < 2.5


def test_semantic_search_waits_for_vectors_within_the_limit(write_files: Any, embedder: vecbook.Embedder) -> None:
    slow = SlowEmbedder(embedder)
    book = vecbook.VecBook(data_directory=write_files(NOTES), embedder=slow, background=True,
                           semantic_wait_seconds=30)
    book.start()
    threading.Timer(0.5, slow.release.set).start()
    hits = book.search("boat for paddling", mode="semantic")
    assert hits[0].id == "kayak.txt:1" and hits[0].semantic_score is not None


def test_reindex_keeps_serving_the_old_index_until_the_new_one_is_complete(
        write_files: Any, embedder: vecbook.Embedder) -> None:
    root = write_files(NOTES)
    slow = SlowEmbedder(embedder)
    slow.release.set()
    book = vecbook.VecBook(data_directory=root, embedder=slow)
    slow.release.clear()
    (root / "new.txt").write_text("A note about violins.\n", encoding="utf-8")
    worker = threading.Thread(target=book.reindex)
    worker.start()
    time.sleep(0.5)
    during = book.search("boat for paddling", mode="semantic")
    assert during[0].semantic_score is not None and book.stats()["records"] == 7
    slow.release.set()
    worker.join()
    assert book.stats()["records"] == 8


# -- the vector cache --

def cached_book(root: Path, cache: Path, embedder: vecbook.Embedder) -> tuple[vecbook.VecBook, CountingEmbedder]:
    counting = CountingEmbedder(embedder)
    return vecbook.VecBook(data_directory=root, embedder=counting, cache_directory=cache), counting


def test_cache_is_on_by_default_in_the_user_cache_folder(write_files: Any, fake_book: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("VECBOOK_CACHE_DIRECTORY")  # conftest points XDG_CACHE_HOME at a session folder
    root = write_files(NOTES)
    stats = fake_book(root).stats()
    default = Path(platformdirs.user_cache_dir("vecbook"))
    assert stats["cache"] is not None and Path(stats["cache"]["path"]).parent == default
    assert Path(stats["cache"]["path"]).is_file()
    assert not any(p.suffix == ".vbc" for p in root.rglob("*"))  # never among the records


@pytest.mark.parametrize("how", ["argument", "file", "env false", "env off"])
def test_cache_directory_false_turns_the_cache_off(write_files: Any, tmp_path: Path, how: str,
                                                   monkeypatch: pytest.MonkeyPatch, user_cache: Path) -> None:
    root = write_files(NOTES)
    before = set(user_cache.glob("*.vbc")) if user_cache.exists() else set()
    if how == "argument":
        book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=False)
    elif how == "file":
        monkeypatch.delenv("VECBOOK_CACHE_DIRECTORY")  # the environment would override the file
        config = tmp_path / "vecbook.toml"
        config.write_text(f'data_directory = "{root}"\ncache_directory = false\n', encoding="utf-8")
        book = vecbook.VecBook.from_config(config, embedder=FakeEmbedder())
    else:
        monkeypatch.setenv("VECBOOK_CACHE_DIRECTORY", how.split()[1].upper())
        book = vecbook.VecBook(root, embedder=FakeEmbedder())
    assert book.config.cache_directory is None and book.stats()["cache"] is None
    assert (set(user_cache.glob("*.vbc")) if user_cache.exists() else set()) == before


def test_cache_directory_true_is_an_error(tmp_path: Path) -> None:
    config = tmp_path / "vecbook.toml"
    config.write_text("cache_directory = true\n", encoding="utf-8")
    with pytest.raises(vecbook.ConfigError, match="must be a folder path or false"):
        vecbook.load_config(config)


def test_a_cache_directory_inside_the_data_directory_is_refused(write_files: Any) -> None:
    root = write_files(NOTES)
    with pytest.raises(vecbook.ConfigError, match=r"lies inside the data directory .*must not be stored among"):
        vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=root / ".cache")


def test_the_default_cache_folder_inside_the_data_directory_turns_the_cache_off(
        write_files: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    root = write_files(NOTES)
    monkeypatch.delenv("VECBOOK_CACHE_DIRECTORY")
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / ".cache"))  # a data directory of ~
    book = vecbook.VecBook(root, embedder=FakeEmbedder())
    assert book.stats()["cache"] is None and "the cache is off" in caplog.text
    assert not (root / ".cache").exists()


def test_two_folders_share_the_cache_without_evicting_each_other(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    roots = {}
    for name in ("a", "b"):
        roots[name] = tmp_path / name
        roots[name].mkdir()
        for i in range(5):
            (roots[name] / f"{i}.txt").write_text(f"Folder {name}, note {i}: words of {name}{i}.\n", encoding="utf-8")
    for name in ("a", "b", "a"):
        update = vecbook.VecBook(roots[name], embedder=FakeEmbedder(), cache_directory=cache).stats()["last_update"]
    assert update["embedded"] == 0 and update["from_cache"] == 5  # b's save kept a's vectors
    update = vecbook.VecBook(roots["b"], embedder=FakeEmbedder(), cache_directory=cache).stats()["last_update"]
    assert update["embedded"] == 0 and update["from_cache"] == 5
    assert len(list(cache.glob("*.vbc"))) == 2


@pytest.fixture
def two_configs(tmp_path: Path) -> Callable[[str | None], dict[str, Any]]:
    """Two configs, "work" and "home", over one folder of 5 notes, each with a one-message chat
    of its own; the returned function opens a book over one of them (None: the folder alone,
    as `--data-dir` or a notebook opens it) and returns its last update."""
    root, cache = tmp_path / "notes", tmp_path / "cache"
    root.mkdir()
    for i in range(5):
        (root / f"{i}.txt").write_text(f"Note {i}: words of note {i}.\n", encoding="utf-8")
    configs = {}
    for name in ("work", "home"):
        chat = tmp_path / f"{name}.txt"
        chat.write_text(f"01/03/2024, 09:00 - Ana: the {name} chat, one message 🌊\n", encoding="utf-8")
        configs[name] = tmp_path / f"{name}.toml"
        configs[name].write_text(f'data_directory = "{root.as_posix()}"\n\n[[collections]]\nname = "{name}"\n'
                                 f'path = "{chat.as_posix()}"\nformat = "whatsapp"\n', encoding="utf-8")

    def update(name: str | None) -> dict[str, Any]:
        if name is None:
            book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
        else:
            book = vecbook.VecBook(config=vecbook.load_config(configs[name], cache_directory=cache),
                                   embedder=FakeEmbedder())
        book.close()
        stats = book.stats()
        return {**stats["last_update"], "pruned": stats["cache"]["pruned"]}

    return update


def test_two_configs_over_one_folder_keep_their_own_caches(
        two_configs: Callable[[str | None], dict[str, Any]], tmp_path: Path) -> None:
    """One cache file per config over a folder, and one for the folder searched alone: a shared
    file lost one config's collection vectors at each save of the other's (1 of 6 re-embedded
    at every switch). A config's file is not where another config starts from."""
    assert [two_configs(name)["embedded"] for name in ("work", "home", None)] == [6, 6, 5]
    assert [two_configs(name)["embedded"] for name in ("work", "home", None, "work", "home")] == [0, 0, 0, 0, 0]
    assert len(list((tmp_path / "cache").glob("vectors-*.vbc"))) == 3


def test_a_config_over_a_folder_searched_alone_starts_from_its_cache(
        two_configs: Callable[[str | None], dict[str, Any]], tmp_path: Path) -> None:
    """As after an upgrade (every config over a folder used the folder's file): only the chat is
    embedded; the config's own file is written at once, even when nothing was new."""
    cache = tmp_path / "cache"
    assert two_configs(None)["embedded"] == 5
    work = two_configs("work")
    assert (work["embedded"], work["from_cache"], work["pruned"]) == (1, 5, 0)  # nothing of its own pruned
    plain = tmp_path / "plain.toml"  # a config with the folder only: the seed holds every vector it needs
    plain.write_text(f'data_directory = "{(tmp_path / "notes").as_posix()}"\n', encoding="utf-8")
    book = vecbook.VecBook(config=vecbook.load_config(plain, cache_directory=cache), embedder=FakeEmbedder())
    book.close()
    assert book.stats()["last_update"]["embedded"] == 0
    assert len(list(cache.glob("vectors-*.vbc"))) == 3  # its own file, written although nothing was new


def test_an_unreadable_seed_is_passed_over_quietly(two_configs: Callable[[str | None], dict[str, Any]],
                                                   tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert two_configs(None)["embedded"] == 5
    [folder_file] = (tmp_path / "cache").glob("vectors-*.vbc")
    folder_file.write_bytes(folder_file.read_bytes()[:-7])  # truncated: not this scope's to rebuild
    with caplog.at_level(logging.INFO, logger="vecbook"):
        assert two_configs("work")["embedded"] == 6
    assert "vector cache: cannot start from" in caplog.text and "unusable" not in caplog.text


def test_a_new_model_or_records_path_says_why_every_record_is_embedded_again(
        write_files: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """As after an upgrade that moves `auto` to int8 on this CPU: the vectors cached for these
    sources were made by another path, and a start that used to be quick embeds everything."""
    class Int8Fake(FakeEmbedder):
        @property
        def identity(self) -> str:
            return "fake-bag-of-words|files|256|int8-smooth-v3-7bit|256"

    root, cache = write_files(NOTES), tmp_path / "cache"
    with caplog.at_level(logging.WARNING, logger="vecbook"):
        vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache).close()
        assert "nothing cached yet" not in caplog.text  # a first start has nothing to explain
        book = vecbook.VecBook(root, embedder=Int8Fake(), cache_directory=cache)
        book.close()
    assert book.stats()["last_update"]["embedded"] == len(NOTES)
    assert ("vector cache: nothing cached yet for fake-bag-of-words, int8-smooth-v3-7bit; the vectors cached for "
            "these sources were made for fake-bag-of-words, so every record is embedded once more") in caplog.text


def test_cache_files_unused_for_60_days_are_deleted_when_a_scope_saves(write_files: Any, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    day = 86400
    old, recent = cache / "vectors-aaaa-old.vbc", cache / "vectors-aaaa-recent.vbc"
    temp, foreign = cache / ".vectors-crashed.tmp", cache / "notes.txt"
    old_scan, recent_scan, scan_temp = cache / "scan-aaaa-old.vbs", cache / "scan-aaaa-recent.vbs", cache / ".scan-x.tmp"
    for path, age in ((old, 61 * day), (recent, 59 * day), (temp, 2 * day), (foreign, 400 * day),
                      (old_scan, 61 * day), (recent_scan, 59 * day), (scan_temp, 2 * day)):
        path.write_bytes(b"x")
        os.utime(path, (time.time() - age, time.time() - age))
    vecbook.VecBook(write_files(NOTES), embedder=FakeEmbedder(), cache_directory=cache)
    assert not old.exists() and not temp.exists() and not old_scan.exists() and not scan_temp.exists()
    assert recent.exists() and foreign.exists() and recent_scan.exists()  # in use lately, or not a cache file
    assert len(list(cache.glob("*.vbc"))) == 2


def test_opening_a_cache_counts_as_use(write_files: Any, tmp_path: Path) -> None:
    cache, root = tmp_path / "cache", write_files(NOTES)
    vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    path = next(cache.glob("*.vbc"))
    os.utime(path, (time.time() - 90 * 86400,) * 2)
    vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)  # nothing new: not rewritten
    assert time.time() - path.stat().st_mtime < 3600


def test_saving_the_cache_never_delays_a_search(write_files: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_files(NOTES)
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "cache")
    saving, release = threading.Event(), threading.Event()
    original = vecbook.vector_cache.VectorCache._write

    def slow_write(self: Any, keep: Any) -> None:
        saving.set()
        release.wait(30)
        original(self, keep)

    monkeypatch.setattr(vecbook.vector_cache.VectorCache, "_write", slow_write)
    monkeypatch.setattr(vecbook.caches, "UPDATE_WRITE_SECONDS", 0.0)  # the update writes at once
    (root / "violin.txt").write_text("A note about violins.\n", encoding="utf-8")
    worker = threading.Thread(target=book.reindex)
    worker.start()
    try:
        assert saving.wait(30)
        hits = book.search("violins", mode="hybrid")  # answered while the save is held
        assert hits and hits[0].id == "violin.txt:1" and hits[0].semantic_score is not None
    finally:
        release.set()
        worker.join()
    assert vecbook.VecBook(root, embedder=FakeEmbedder(),
                           cache_directory=tmp_path / "cache").stats()["last_update"]["embedded"] == 0


def test_updates_write_the_caches_at_most_once_a_minute_then_the_newest_state(
        write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    past = time.time() - 60  # files saved a while ago: the keyword cache stores only settled ones
    for path in root.iterdir():
        os.utime(path, (past, past))
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    files = [next(cache.glob("*.vbc")), next(cache.glob("keywords-*.vbk"))]
    written = [path.read_bytes() for path in files]
    for name in ("violin", "cello"):  # two edits within the minute of the first build's write
        (root / f"{name}.txt").write_text(f"A note about the {name}.\n", encoding="utf-8")
        os.utime(root / f"{name}.txt", (past, past))
        book.reindex()
        book._caches.wait()
        assert [path.read_bytes() for path in files] == written
    book.close()  # writes what waited: the newest state
    restarted = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    update = restarted.stats()["last_update"]
    assert update["embedded"] == 0 and update["files_read"] == 0 and update["records"] == 9
    for query in ("ferry island", "the cello"):  # the cached vectors, reused and new, are the live ones
        assert [h.to_dict() for h in restarted.search(query, mode="semantic")] == \
               [h.to_dict() for h in book.search(query, mode="semantic")]


def test_a_put_off_write_happens_when_its_minute_is_up(write_files: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.caches, "UPDATE_WRITE_SECONDS", 3.0)
    root, cache = write_files(NOTES), tmp_path / "cache"
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    path = next(cache.glob("*.vbc"))
    written = path.read_bytes()
    (root / "violin.txt").write_text("A note about violins.\n", encoding="utf-8")
    book._caches._last_write = time.monotonic()  # the minute starts now, however slow the first build's write was
    book.reindex()
    timer = book._caches._timer
    assert timer is not None and path.read_bytes() == written  # put off
    timer.join(30)  # the timer writes on its own thread
    assert not timer.is_alive() and path.read_bytes() != written
    other = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert other.stats()["last_update"]["embedded"] == 0 and other.search("violins", mode="keyword")


def test_a_full_build_within_the_minute_is_not_overwritten_by_an_older_update(write_files: Any,
                                                                              tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    past = time.time() - 60  # files saved a while ago: the keyword cache stores only settled ones
    for path in root.iterdir():
        os.utime(path, (past, past))
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    for name, full in (("violin", False), ("cello", True)):  # an update put off, then a full build
        (root / f"{name}.txt").write_text(f"A note about the {name}.\n", encoding="utf-8")
        os.utime(root / f"{name}.txt", (past, past))
        book.reindex(full=full)
    book.close()  # the update's state, older than the full build's, is not written over it
    restarted = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache).stats()["last_update"]
    assert restarted["files_read"] == 0 and restarted["embedded"] == 0 and restarted["records"] == 9


def test_a_book_whose_put_off_write_fails_does_not_cost_the_others_theirs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    books = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        (root / "n.txt").write_text(f"Note {name} about the ferry.\n", encoding="utf-8")
        book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / f"cache-{name}")
        (root / "violin.txt").write_text("A note about violins.\n", encoding="utf-8")
        book.reindex()  # put off
        books.append(book)
    failing, original = books[0]._caches, vecbook.caches.Caches.flush

    def flush(self: Any) -> None:
        if self is failing:
            raise RuntimeError("disk on fire")
        original(self)

    monkeypatch.setattr(vecbook.caches.Caches, "flush", flush)
    vecbook.caches.write_put_off()
    assert "cannot write the caches" in caplog.text and "disk on fire" in caplog.text
    other = vecbook.VecBook(tmp_path / "b", embedder=FakeEmbedder(), cache_directory=tmp_path / "cache-b")
    assert other.stats()["last_update"]["embedded"] == 0


EXITS = """
import os, sys, time
from pathlib import Path
sys.path[:0] = [{tests!r}, {root!r}]
from conftest import FakeEmbedder
import vecbook
data, cache = Path(sys.argv[1]), Path(sys.argv[2])
book = vecbook.VecBook(data, embedder=FakeEmbedder(), cache_directory=cache)
(data / "violin.txt").write_text("A note about violins.", encoding="utf-8")
os.utime(data / "violin.txt", (time.time() - 60,) * 2)  # settled: the keyword cache may store it
book.reindex()  # put off: within a minute of the first build's write; the script ends without close()
"""


def test_a_process_that_exits_without_closing_still_writes_what_an_update_put_off(
        write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    for path in root.iterdir():
        os.utime(path, (time.time() - 60,) * 2)
    script = EXITS.format(tests=str(ROOT / "tests"), root=str(ROOT))
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", script, str(root), str(cache)], check=True, timeout=120)
    assert time.monotonic() - started < 30  # the put-off write's timer does not hold the process for a minute
    update = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache).stats()["last_update"]
    assert update["embedded"] == 0 and update["files_read"] == 0 and update["records"] == 8


WRITER = """
import sys, time
from pathlib import Path
sys.path[:0] = [{tests!r}, {root!r}]
from conftest import FakeEmbedder
import vecbook
data, cache, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
book = vecbook.VecBook(data, embedder=FakeEmbedder(), cache_directory=cache)
for i in range(15):
    (data / f"{{name}}-{{i}}.txt").write_text(f"Process {{name}} wrote note {{i}} " + "word " * 2000, encoding="utf-8")
    book.reindex()
"""


def test_two_processes_writing_one_cache_leave_it_readable(write_files: Any, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    script = WRITER.format(tests=str(ROOT / "tests"), root=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(root), str(cache), name],
                              stderr=subprocess.PIPE, text=True) for name in ("p", "q")]
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], errors
    assert not any("unusable" in e or "cannot write" in e for e in errors), errors
    caplog.set_level(logging.INFO, logger="vecbook")
    book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=cache)
    assert "is unusable" not in caplog.text
    update = book.stats()["last_update"]
    assert update["records"] == 37 and update["from_cache"] >= 22  # all of one process's view, at least
    book.close()  # its own save of the caches it found stale ends first: that temporary file is no leftover
    assert [p.name for p in cache.iterdir() if p.suffix == ".tmp"] == []


def test_a_restart_embeds_only_new_or_changed_records(write_files: Any, embedder: vecbook.Embedder,
                                                      tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    book, counting = cached_book(root, cache, embedder)
    assert len(counting.embedded) == 7 and book.stats()["cache"]["embedded"] == 7
    (root / "kayak.txt").write_text("Bought a canoe instead.\n", encoding="utf-8")
    (root / "n0.txt").unlink()
    book, counting = cached_book(root, cache, embedder)
    assert counting.embedded == ["Bought a canoe instead."]
    assert book.stats()["cache"] == {"path": str(next(cache.glob("*.vbc"))), "entries": 6, "reused": 5,
                                     "embedded": 1, "pruned": 2}
    fresh = vecbook.VecBook(data_directory=root, embedder=CountingEmbedder(embedder), cache_directory=False)
    for query in ("canoe", "ferry timetable"):
        cached, rebuilt = book.search(query, mode="semantic"), fresh.search(query, mode="semantic")
        # A record's vector does not depend on the texts embedded with it (the cached ones were
        # embedded in other batches, the fresh ones all in one): a fresh start ranks as the
        # cached one, near-ties included
        assert [h.id for h in cached] == [h.id for h in rebuilt]
        assert np.allclose([h.similarity_score for h in cached], [h.similarity_score for h in rebuilt], atol=1e-6)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "foreign"])
def test_a_corrupt_or_foreign_cache_is_reported_and_rebuilt(write_files: Any, embedder: vecbook.Embedder,
                                                            tmp_path: Path, damage: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    cached_book(root, cache, embedder)
    path = next(cache.glob("*.vbc"))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "garbage":
        path.write_bytes(os.urandom(4096))
    else:
        other = vecbook.vector_cache.VectorCache(cache, "another-model|x|384|float32|254")
        other.path = path
        other.save({vecbook.vector_cache.VectorCache.key("x"): np.zeros(384, dtype=np.float32)})
    caplog.set_level(logging.WARNING, logger="vecbook")
    book, counting = cached_book(root, cache, embedder)
    if damage == "flip":  # a byte of the vectors (the file ends with them here): its MiB's vectors, all 7
        assert "7 of 7 vectors failed their checksum; those records are embedded again" in caplog.text
    else:
        assert "is unusable" in caplog.text and "will be rebuilt" in caplog.text
    assert len(counting.embedded) == 7
    assert book.search("kayak", mode="semantic")[0].id == "kayak.txt:1"
    book, counting = cached_book(root, cache, embedder)
    assert counting.embedded == []  # the rebuilt file is good


# The power cut also ends the keyword cache's saving thread, which pytest reports.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_crash_while_writing_leaves_the_old_cache_intact_and_keeps_what_was_embedded(
        write_files: Any, embedder: vecbook.Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    cached_book(root, cache, embedder)
    before = {p.name: p.read_bytes() for p in cache.iterdir()}
    (root / "extra.txt").write_text("A new note about lighthouses.\n", encoding="utf-8")

    def crash(*_: Any) -> None:
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(vecbook.embed.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt, match=r"^kept the 1 vector embedded so far \(8 of 8 records complete\); "
                                                r"the next start embeds only the rest$"):
        cached_book(root, cache, embedder)
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in cache.iterdir()}
    journals = [name for name in after if name.endswith(".vbj")]
    assert len(journals) == 1  # what was embedded, beside the old file
    assert {name: data for name, data in after.items() if name not in journals} == before  # no temp file left behind
    book, counting = cached_book(root, cache, embedder)
    assert counting.embedded == []
    assert book.search("lighthouses", mode="semantic", max_results=1)[0].id == "extra.txt:1"
    assert not list(cache.glob("*.vbj"))  # the cache file holds it now


def test_adding_or_removing_a_collection_keeps_the_vectors_of_every_unchanged_source(
        write_files: Any, embedder: vecbook.Embedder, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    chat = tmp_path / "chat.txt"
    chat.write_text("01/03/2024, 09:00 - Ana: The lighthouse tour starts at noon 🌊\n", encoding="utf-8")
    config = tmp_path / "vecbook.toml"
    config.write_text(f'data_directory = "{root.as_posix()}"\n', encoding="utf-8")
    first = CountingEmbedder(embedder)
    vecbook.VecBook(config=vecbook.load_config(config, cache_directory=cache), embedder=first).close()
    assert len(first.embedded) == len(NOTES)
    with open(config, "a", encoding="utf-8") as handle:  # what `vecbook add` appends
        handle.write(f'\n[[collections]]\nname = "family-chat"\npath = "{chat.as_posix()}"\nformat = "whatsapp"\n')
    added = CountingEmbedder(embedder)
    book = vecbook.VecBook(config=vecbook.load_config(config, cache_directory=cache), embedder=added)
    book.close()
    assert added.embedded == ["Ana: The lighthouse tour starts at noon 🌊"]  # only the new source
    assert book.search("lighthouse tour", max_results=1)[0].source == "family-chat"
    config.write_text(config.read_text(encoding="utf-8").split("\n[[collections]]")[0], encoding="utf-8")
    removed = CountingEmbedder(embedder)
    vecbook.VecBook(config=vecbook.load_config(config, cache_directory=cache), embedder=removed).close()
    assert removed.embedded == []
    assert len(list(cache.glob("vectors-*.vbc"))) == 1 and len(list(cache.glob("keywords-*.vbk"))) == 1


def test_a_save_landing_while_an_update_reads_the_cache_leaves_nothing_unwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A put-off vector-cache save that lands while an update reads the older cache file: the
    cache's keys must still describe the file. They used to be the older file's, so the next save
    saw the same keys, was skipped, and the update's vectors never reached the cache."""
    from vecbook import caches, vector_cache

    monkeypatch.setattr(caches, "UPDATE_WRITE_SECONDS", 0.3)
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    stamp = [time.time()]

    def edit(name: str, text: str) -> None:
        (data / name).write_text(text + "\n")
        stamp[0] += 5
        os.utime(data / name, (stamp[0], stamp[0]))

    edit("a.txt", "alpha apple avocado")
    edit("x.txt", "xray xylophone")
    saved, reading = threading.Event(), threading.Event()
    real_save, real_read = vector_cache.VectorCache.save, vector_cache.VectorCache._read

    def save(self: vector_cache.VectorCache, keep: Any) -> None:
        real_save(self, keep)
        if threading.current_thread().name == "vecbook-cache-timer":
            saved.set()

    def read(self: vector_cache.VectorCache, path: Path) -> Any:
        entries = real_read(self, path)  # the file as it was when opened
        if reading.is_set() and threading.current_thread().name != "vecbook-cache-timer":
            reading.clear()
            saved.wait(1.0)  # the put-off save lands now, unless it waits for this read
        return entries

    monkeypatch.setattr(vector_cache.VectorCache, "save", save)
    monkeypatch.setattr(vector_cache.VectorCache, "_read", read)
    book = vecbook.VecBook(data_directory=data, cache_directory=cache, embedder=FakeEmbedder())
    edit("a.txt", "bravo banana blueberry bread")
    book.reindex()  # its write is put off: a timer
    assert book._caches._timer is not None
    reading.set()
    edit("a.txt", "alpha apple avocado")  # the first text again: in the file, not in the index
    assert book.reindex()["last_update"]["from_cache"] == 1
    book.close()  # writes what the update put off

    again = vecbook.VecBook(data_directory=data, cache_directory=cache, embedder=FakeEmbedder())
    assert again.stats()["last_update"]["embedded"] == 0  # every vector came from the cache


class WindowedEmbedder(FakeEmbedder):
    """The fake model with a window of 100 characters: a long record is many windows."""

    def window_spans_many(self, texts: Any) -> list[tuple[list[tuple[int, int]], bool]]:
        return [([(a, min(a + 100, len(text))) for a in range(0, max(len(text), 1), 100)], False) for text in texts]

    def windows_many(self, texts: Any) -> list[tuple[list[str], bool]]:
        return [([text[a:b] for a, b in spans], capped)
                for text, (spans, capped) in zip(texts, self.window_spans_many(texts))]


def long_record_beside_notes(write_files: Any) -> Path:
    """One record of ~150 windows beside 30 one-window notes."""
    long = "".join(f"Line {n} of the long diary, written on a rainy day number {n}.\n" for n in range(240))
    notes = "\n---\n".join(f"Note {n}: buy bread and milk number {n}." for n in range(30))
    return write_files({"diary.txt": long, "notes.txt": notes + "\n"})


def test_the_progress_of_a_long_record_is_counted_in_the_windows_embedded(write_files: Any) -> None:
    # A 5 MB .txt beside 3,000 notes said "embedded 3003 of 3004 records (4 records/s, about 0 s
    # left)" for twelve minutes: its ~6,000 windows were one record of the count.
    root = long_record_beside_notes(write_files)
    calls: list[tuple[int, int, vecbook.progress.Work]] = []
    vecbook.VecBook(root, embedder=WindowedEmbedder(), cache_directory=False,
                    progress=lambda done, total, work: calls.append((done, total, work)))
    done, total, work = calls[-1]
    assert done == total == 31 and work.windows == work.windows_total > 150 and work.chars == work.chars_total
    waiting = [w for d, _, w in calls if d == total - 1]  # every note done, the diary not yet
    assert waiting and waiting[0].windows < work.windows_total / 2 and waiting[0].chars < work.chars_total / 3
    old_style: list[tuple[int, int]] = []  # a callback of (done, total) is called as it was
    vecbook.VecBook(root, embedder=WindowedEmbedder(), cache_directory=False,
                    progress=lambda done, total: old_style.append((done, total)))
    assert old_style[-1] == (31, 31)


def test_the_progress_log_line_says_records_and_counts_the_pace_in_windows(
        write_files: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(vecbook.book, "PROGRESS_LOG_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="vecbook"):
        vecbook.VecBook(long_record_beside_notes(write_files), embedder=WindowedEmbedder(), cache_directory=False)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("embedded ")]
    assert lines[-1].startswith("embedded 31 of 31 records (") and " windows" in lines[-1], lines
    assert any(line.startswith("embedded 30 of 31 records (") for line in lines), lines
    # The pace: 1,000 of 6,004 windows in 100 s, the long ones (most of the characters) left.
    since = (0.0, vecbook.progress.Work(0, 6004, 0, 600_400))
    work = vecbook.progress.Work(1000, 6004, 60_000, 600_400)
    assert vecbook.progress.progress_line(3003, 3004, since, 100.0, work) == \
        "embedded 3003 of 3004 records (1,000 of 6,004 windows, 10 windows/s, about 15 min left)"
