"""Always fresh: incremental updates (each change is reflected after the next update and
never before it is complete), the watcher that applies them by itself, and stats."""

from __future__ import annotations

import json
import logging
import random
import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import vecbook
from conftest import FakeEmbedder

# Generous for a loaded CI machine; an edit normally shows within a second.
DEADLINE_SECONDS = 10.0


def ids(hits: Any) -> list[str]:
    return [h.id for h in hits]


def found(book: vecbook.VecBook, word: str, **options: Any) -> list[str]:
    return ids(book.search(word, mode="keyword", max_results=1000, **options))


def eventually(check: Callable[[], Any], deadline: float = DEADLINE_SECONDS) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while True:
        result = check()
        if result or time.monotonic() > end:
            assert result, f"not true within {deadline}s"
            return result
        time.sleep(0.05)


@pytest.fixture
def book_over(tmp_path: Path) -> Iterator[Callable[..., vecbook.VecBook]]:
    """VecBooks over tmp folders with the fake embedder, closed (watchers stopped) after the test."""
    books: list[vecbook.VecBook] = []

    def make(root: Path, **options: Any) -> vecbook.VecBook:
        book = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=tmp_path / "cache", **options)
        books.append(book)
        if options.get("watch"):
            assert book._watcher.wait_until_watching(DEADLINE_SECONDS)
        return book

    yield make
    for book in books:
        book.close()


# -- incremental updates (reindex) --

def test_an_edit_is_reflected_after_the_update_and_not_before(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "alpha first\n---\nalpha second\n", "b.txt": "untouched note\n"})
    book = book_over(root)
    (root / "a.txt").write_text("alpha first\n---\nbravo second\n", encoding="utf-8")
    assert found(book, "bravo") == [] and len(found(book, "alpha")) == 2
    book.reindex()
    assert found(book, "bravo") == ["a.txt:3"] and found(book, "alpha") == ["a.txt:1"]
    update = book.stats()["last_update"]
    assert update["files_read"] == 1 and update["embedded"] == 1 and update["changed"] is True


def test_an_append_embeds_only_the_new_record(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "kept record\n"})
    book = book_over(root)
    with open(root / "a.txt", "a", encoding="utf-8") as out:
        out.write("---\nappended charlie\n")
    assert found(book, "charlie") == []
    book.reindex()
    assert found(book, "charlie") == ["a.txt:3"] and found(book, "kept") == ["a.txt:1"]
    assert book.stats()["last_update"]["embedded"] == 1


def test_a_deleted_record_never_comes_back(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "one delta\n---\ntwo echo\n---\nthree foxtrot\n", "gone.txt": "golf note\n"})
    book = book_over(root)
    (root / "a.txt").write_text("one delta\n---\nthree foxtrot\n", encoding="utf-8")
    (root / "gone.txt").unlink()
    assert found(book, "echo") and found(book, "golf")  # not before the update
    book.reindex()
    for step in ("update", "unrelated change", "full"):
        if step == "unrelated change":
            (root / "other.txt").write_text("hotel\n", encoding="utf-8")
        book.reindex(full=step == "full")
        for mode in ("keyword", "semantic", "hybrid"):
            hits = book.search("two echo golf note", mode=mode, max_results=100)
            assert not [h for h in hits if "echo" in h.text or "golf" in h.text], (step, mode)
        assert book.stats()["records"] == 2 + (step != "update")


def test_a_renamed_file_keeps_its_vectors(write_files: Any, book_over: Any) -> None:
    root = write_files({"old.txt": "india juliet kilo\n---\nlima mike\n", "other.txt": "november\n"})
    book = book_over(root)
    (root / "old.txt").rename(root / "new.txt")
    book.reindex()
    assert found(book, "india") == ["new.txt:1"] and found(book, "lima") == ["new.txt:3"]
    update = book.stats()["last_update"]
    assert update["embedded"] == 0 and update["reused"] == 3 and update["removed"] == 2
    assert book.search("india juliet", mode="semantic")[0].id == "new.txt:1"


def postings_by_term(index: vecbook.index.KeywordIndex) -> dict[str, tuple[list[int], list[int], list[float]]]:
    """Each term's (documents, counts, weights), by the term's text (ids depend on build history)."""
    table = {}
    for term, tid in index.vocabulary.ids.items():
        if tid < index.n_terms and index.indptr[tid + 1] > index.indptr[tid]:
            part = slice(index.indptr[tid], index.indptr[tid + 1])
            table[term] = (index.doc_ids[part].tolist(), index.tf[part].tolist(), index.weights[part].tolist())
    return table


def test_an_updated_index_equals_one_built_from_scratch(write_files: Any, book_over: Any, tmp_path: Path) -> None:
    # An update carries unchanged sources whole and rebuilds the changed ones: after edits in
    # the middle of the file order, a deletion, a rename, a duplicate text and a new file,
    # every row of both indexes is what a fresh build over the same files holds.
    files = {f"f{i}.txt": "\n---\n".join(f"word{i} item{j} shared" for j in range(3)) for i in range(6)}
    root = write_files(files)
    book = book_over(root)
    steps = [lambda: (root / "f2.txt").write_text("word2 item0 shared\n---\nedited words here\n", encoding="utf-8"),
             lambda: (root / "f4.txt").unlink(),
             lambda: (root / "f1.txt").rename(root / "f9.txt"),
             lambda: (root / "dup.txt").write_text("word0 item1 shared\n---\nbrand new text\n", encoding="utf-8")]
    for step in steps:
        step()
        book.reindex()
        fresh = vecbook.VecBook(root, embedder=FakeEmbedder(), cache_directory=False)
        ours, theirs = book._snapshot, fresh._snapshot
        assert [r.id for r in ours.records] == [r.id for r in theirs.records]
        np.testing.assert_array_equal(ours.keywords.owners, theirs.keywords.owners)
        np.testing.assert_array_equal(ours.keywords.lengths, theirs.keywords.lengths)
        assert postings_by_term(ours.keywords) == postings_by_term(theirs.keywords)
        np.testing.assert_array_equal(ours.passages, theirs.passages)
        for name in ("owners", "spans", "vectors"):
            np.testing.assert_array_equal(getattr(ours.vectors, name), getattr(theirs.vectors, name), err_msg=name)
        assert ours.vectors.keys == theirs.vectors.keys and ours.vectors.index.ntotal == len(ours.vectors.owners)
        query = FakeEmbedder().encode(["item1 shared words"])[0]
        assert ours.vectors.top(query, 5)[0].tolist() == theirs.vectors.top(query, 5)[0].tolist()


def test_new_subfolders_are_read(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "oscar\n"})
    book = book_over(root)
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "deeper" / "b.txt").write_text("papa quebec\n", encoding="utf-8")
    book.reindex()
    assert found(book, "papa") == ["sub/deeper/b.txt:1"]


def test_changes_in_a_symlinked_folder_are_read(write_files: Any, book_over: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("romeo\n", encoding="utf-8")
    root = write_files({"a.txt": "sierra\n"})
    (root / "linked").symlink_to(outside, target_is_directory=True)
    book = book_over(root)
    assert found(book, "romeo") == ["linked/x.txt:1"]
    (outside / "x.txt").write_text("tango\n", encoding="utf-8")
    book.reindex()
    assert found(book, "tango") == ["linked/x.txt:1"] and found(book, "romeo") == []


def test_a_change_reported_under_the_folder_s_real_path_counts(tmp_path: Path) -> None:
    """macOS's FSEvents reports a change by the file's real path: /private/var/... for a folder
    under /var or /tmp, the target's path for a notes folder reached through a symlink (iCloud
    Drive, Dropbox). Such a change must count as one under the folder watched."""
    import watchfiles

    from vecbook.watch import Root, _filter

    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    try:
        (tmp_path / "link").symlink_to(real, target_is_directory=True)
    except OSError:  # Windows without the right to make links
        pytest.skip("cannot make a symlink here")
    keep = _filter([Root(str(tmp_path / "link"), recursive=True, notes=True)])
    assert keep(watchfiles.Change.modified, str(real / "sub" / "a.txt"))
    assert keep(watchfiles.Change.deleted, str(real))  # the folder itself went away
    assert not keep(watchfiles.Change.modified, str(tmp_path / "elsewhere" / "a.txt"))


def make_db(path: Path, rows: list[tuple[str, str]]) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes_documents (id TEXT PRIMARY KEY, metadata JSON, source TEXT, content TEXT)")
        db.executemany("INSERT INTO notes_documents VALUES (?, '{}', 'app', ?)", rows)
    return path


def collection_book(tmp_path: Path, write_files: Any, **options: Any) -> tuple[vecbook.VecBook, Path]:
    root = write_files({"a.txt": "uniform\n"})
    folder = tmp_path / "dbs"
    folder.mkdir()
    db = make_db(folder / "notes.db", [("1", "victor row"), ("2", "whiskey row")])
    config = tmp_path / "vecbook.toml"
    config.write_text(f'data_directory = "{root}"\ncache_directory = "{tmp_path / "cache"}"\n'
                      f'[[collections]]\nname = "notes"\ndatabase = "{db}"\n', encoding="utf-8")
    return vecbook.VecBook.from_config(config, embedder=FakeEmbedder(), **options), db


def test_a_changed_sqlite_row_is_reflected(tmp_path: Path, write_files: Any) -> None:
    book, db = collection_book(tmp_path, write_files)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE notes_documents SET content = 'xray row' WHERE id = '2'")
    assert found(book, "xray") == []
    book.reindex()
    assert len(found(book, "xray")) == 1 and found(book, "whiskey") == []
    update = book.stats()["last_update"]
    assert update["collections_read"] == 1 and update["files_read"] == 0 and update["embedded"] == 1


# -- the watcher --

def test_an_edit_becomes_searchable_by_itself(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "yankee\n"})
    book = book_over(root, watch=True)
    assert book.stats()["watching"] is True
    (root / "a.txt").write_text("zulu\n", encoding="utf-8")
    eventually(lambda: found(book, "zulu") == ["a.txt:1"])
    assert found(book, "yankee") == []
    (root / "a.txt").unlink()
    eventually(lambda: found(book, "zulu") == [])


def test_a_change_in_a_symlinked_folder_is_seen_by_the_watcher(write_files: Any, book_over: Any,
                                                               tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = write_files({"a.txt": "quebec\n"})
    (root / "linked").symlink_to(outside, target_is_directory=True)
    book = book_over(root, watch=True)
    (outside / "x.txt").write_text("romeo\n", encoding="utf-8")
    eventually(lambda: found(book, "romeo") == ["linked/x.txt:1"])


@pytest.mark.parametrize("linked", ["before the watch", "while watching"])
def test_an_edit_of_a_symlinked_notes_file_outside_the_folder_is_seen_by_the_watcher(
        write_files: Any, book_over: Any, tmp_path: Path, linked: str) -> None:
    """A note linked in from elsewhere (``ln -s ~/Dropbox/todo.txt ~/notes/``) is read through its
    link: an edit of the file it points to is an edit of the note, though no event comes from
    the notes folder for it."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "todo.txt").write_text("sierra\n", encoding="utf-8")
    root = write_files({"a.txt": "quebec\n"})
    if linked == "before the watch":
        (root / "todo.txt").symlink_to(outside / "todo.txt")
    book = book_over(root, watch=True)
    if linked == "while watching":
        (root / "todo.txt").symlink_to(outside / "todo.txt")
    eventually(lambda: found(book, "sierra") == ["todo.txt:1"])
    time.sleep(1.0)  # the watch of the linked file armed
    (outside / "todo.txt").write_text("tango\n", encoding="utf-8")
    eventually(lambda: found(book, "tango") == ["todo.txt:1"])
    replaced = outside / ".todo.txt.tmp"  # an editor's save: a new file renamed over the old
    replaced.write_text("uniform\n", encoding="utf-8")
    replaced.replace(outside / "todo.txt")
    eventually(lambda: found(book, "uniform") == ["todo.txt:1"])


def test_an_edit_of_a_file_whose_name_is_not_utf8_is_applied_and_the_watch_goes_on(
        write_files: Any, book_over: Any, caplog: pytest.LogCaptureFixture) -> None:
    """watchfiles cannot name such a file (``Unable to decode path``) and stops: that is a change
    to read, not a failure to back off from (each one had doubled the pause, to a minute, in
    which no edit was seen, and logged a traceback)."""
    import os

    root = write_files({"a.txt": "alpha\n"})
    name = root / os.fsdecode(b"caf\xe9.txt")
    try:
        name.write_text("oscar\n", encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes UTF-8 names only")
    book = book_over(root, watch=True)
    for word in ("papa", "quebec", "romeo"):
        name.write_text(f"{word}\n", encoding="utf-8")
        eventually(lambda: found(book, word) == ["caf\\xe9.txt:1"])
    started = time.monotonic()
    (root / "a.txt").write_text("sierra\n", encoding="utf-8")
    eventually(lambda: found(book, "sierra") == ["a.txt:1"])
    assert time.monotonic() - started < 2.5
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_watching_is_off_unless_asked_and_stops_on_close(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "alpha\n"})
    book = book_over(root)
    assert book.stats()["watching"] is False
    (root / "b.txt").write_text("bravo\n", encoding="utf-8")
    time.sleep(1.0)
    assert found(book, "bravo") == []
    watched = book_over(root, watch=True)
    watched.close()
    assert watched.stats()["watching"] is False
    (root / "c.txt").write_text("charlie\n", encoding="utf-8")
    time.sleep(1.0)
    assert found(watched, "charlie") == []


def test_only_changes_that_matter_trigger_an_update(write_files: Any, book_over: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_files({"a.txt": "delta\n"})
    book = book_over(root, watch=True)
    calls: list[float] = []
    original = book.reindex
    monkeypatch.setattr(book, "reindex", lambda full=False: calls.append(time.time()) or original(full))
    (root / "notes.pdf").write_bytes(b"%PDF-1.7 not read")
    (root / "draft.txt.swp").write_bytes(b"editor swap")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / ".git").mkdir()
    (root / ".git" / "index.txt").write_text("a hidden folder holds no notes\n", encoding="utf-8")
    time.sleep(1.5)
    assert calls == []
    (root / "b.txt").write_text("echo\n", encoding="utf-8")
    eventually(lambda: found(book, "echo") == ["b.txt:1"])
    assert 1 <= len(calls) <= 2
    (root / "sub").mkdir()
    (root / "sub" / "c.md").write_text("# Café ☕\nEcho of a note 🎶\n", encoding="utf-8")  # a note: read too
    eventually(lambda: found(book, "note") == ["files:sub/c.md#c > Café ☕"])


def test_a_burst_of_1000_new_files_all_arrive(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "foxtrot\n"})
    book = book_over(root, watch=True)
    for i in range(1000):
        (root / "burst" / f"{i // 100}").mkdir(parents=True, exist_ok=True)
        (root / "burst" / f"{i // 100}" / f"{i}.txt").write_text(f"burst note {i} golf{i}\n", encoding="utf-8")
    eventually(lambda: book.stats()["records"] == 1001, deadline=60)
    assert len(found(book, "burst")) == 1000
    assert all(found(book, f"golf{i}") == [f"burst/{i // 100}/{i}.txt:1"] for i in range(0, 1000, 97))


def test_a_removed_and_recreated_folder_is_picked_up(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "hotel\n", "sub/b.txt": "india\n"})
    book = book_over(root, watch=True)
    shutil.rmtree(root / "sub")
    eventually(lambda: found(book, "india") == [])
    (root / "sub").mkdir()
    (root / "sub" / "c.txt").write_text("juliet\n", encoding="utf-8")
    eventually(lambda: found(book, "juliet") == ["sub/c.txt:1"])


def test_a_data_directory_that_vanishes_keeps_its_records_and_is_rewatched(
        write_files: Any, book_over: Any, tmp_path: Path) -> None:
    root = write_files({"a.txt": "kilo\n", "sub/b.txt": "lima\n"})
    book = book_over(root, watch=True)
    aside = tmp_path / "aside"
    root.rename(aside)  # an unmounted drive, a folder moved away
    time.sleep(1.5)
    assert found(book, "kilo") == ["a.txt:1"] and book.stats()["watching"] is True  # not lost meanwhile
    aside.rename(root)
    (root / "c.txt").write_text("mike\n", encoding="utf-8")
    eventually(lambda: found(book, "mike") == ["c.txt:1"])
    assert found(book, "lima") == ["sub/b.txt:1"]
    (root / "d.txt").write_text("november\n", encoding="utf-8")  # the new folder is watched, not only read
    eventually(lambda: found(book, "november") == ["d.txt:1"])
    shutil.rmtree(root)
    root.mkdir()
    (root / "e.txt").write_text("oscar\n", encoding="utf-8")
    eventually(lambda: found(book, "oscar") == ["e.txt:1"])
    eventually(lambda: found(book, "kilo") == [])
    time.sleep(1.0)  # the events of the deletion are long applied: only a new watch sees the next file
    (root / "f.txt").write_text("papa\n", encoding="utf-8")
    eventually(lambda: found(book, "papa") == ["f.txt:1"])


def test_a_file_being_written_is_read_whole_in_the_end(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "papa\n"})
    book = book_over(root, watch=True)
    with open(root / "log.txt", "w", encoding="utf-8") as out:
        for i in range(40):
            out.write(f"entry {i} quebec{i}\n---\n")
            out.flush()
            time.sleep(0.05)
        out.write("the last entry romeo\n")
    eventually(lambda: len(found(book, "romeo")) == 1)
    assert len(found(book, "entry")) == 41 and found(book, "quebec39") == ["log.txt:79"]


def test_a_changed_sqlite_row_becomes_searchable_by_itself(tmp_path: Path, write_files: Any) -> None:
    book, db = collection_book(tmp_path, write_files, watch=True)
    try:
        assert book._watcher.wait_until_watching(DEADLINE_SECONDS)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE notes_documents SET content = 'sierra row' WHERE id = '1'")
        eventually(lambda: len(found(book, "sierra")) == 1)
        (db.parent / "unrelated.db").write_bytes(b"not watched")
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("INSERT INTO notes_documents VALUES ('3', '{}', 'app', 'tango row')")
            conn.commit()
            assert (db.parent / "notes.db-wal").stat().st_size > 0
            eventually(lambda: len(found(book, "tango")) == 1)  # read from the -wal, connection still open
    finally:
        book.close()


def test_searches_never_see_a_half_built_index(write_files: Any, book_over: Any) -> None:
    """8 threads search while the watcher applies changes: each note is one file holding two
    twin records, saved the way editors save (write aside, rename), so a complete snapshot
    has both twins or neither; and every semantic hit scores what its own text's vector scores."""
    root = write_files({f"base{i}.txt": f"steady base note {i}\n" for i in range(20)})
    book = book_over(root, watch=True)
    stop, problems, searches = threading.Event(), [], [0]

    def save(number: int) -> None:
        temp = root / f".gen{number}.tmp"
        temp.write_text(f"twin one gen{number} uniform\n---\ntwin two gen{number} victor\n", encoding="utf-8")
        temp.rename(root / f"gen{number}.txt")

    def search() -> None:
        rng, fake = random.Random(), FakeEmbedder()
        while not stop.is_set():
            number = rng.randrange(0, 30)
            word = f"gen{number}"
            twins = [h for h in book.search(word, mode="keyword", max_results=50) if word in h.text.split()]
            if len(twins) not in (0, 2):
                problems.append(("twins", number, ids(twins)))
            query = fake.encode_query(word)
            for hit in book.search(word, mode="semantic", max_results=50):
                # the fake model is deterministic: a vector that belongs to another record shows
                vector = fake.encode([hit.text])[0]
                cosine = float(query @ vector / np.linalg.norm(query) / np.linalg.norm(vector))
                if abs(hit.similarity_score - (cosine + 1) / 2) > 1e-3:
                    problems.append(("vector", hit.id, hit.text))
            if book.stats()["records"] % 2:
                problems.append(("odd records", book.stats()["records"]))
            searches[0] += 1

    threads = [threading.Thread(target=search) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        for number in range(30):
            save(number)
            if number >= 5:
                (root / f"gen{number - 5}.txt").unlink()
            time.sleep(0.03)
        eventually(lambda: len(found(book, "gen29")) == 2 and book.stats()["records"] == 20 + 2 * 5)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert problems == [] and searches[0] > 8
    assert sorted(found(book, "gen29")) == ["gen29.txt:1", "gen29.txt:3"] and found(book, "gen0") == []


# -- stats and the interfaces --

def test_stats_report_the_last_update(write_files: Any, book_over: Any) -> None:
    root = write_files({"a.txt": "whiskey\n", "b.txt": "xray\n"})
    book = book_over(root)
    first = book.stats()["last_update"]
    assert set(first) == {"full", "files_read", "collections_read", "changed", "records", "removed", "reused",
                          "from_cache", "embedded", "seconds"}
    assert first["files_read"] == 2 and first["embedded"] == 2 and first["full"] is False
    (root / "a.txt").unlink()
    update = book.reindex(full=True)["last_update"]
    assert update["full"] is True and update["removed"] == 1 and update["records"] == 1
    assert update["embedded"] == 0 and update["from_cache"] == 1  # a full rebuild still uses the cache
    unchanged = book.reindex()["last_update"]
    assert unchanged["changed"] is False and unchanged["files_read"] == 0


def test_cli_reindex_prints_what_the_update_did(write_files: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    original = vecbook.VecBook.__init__

    def init(self: vecbook.VecBook, *args: Any, **kwargs: Any) -> None:
        kwargs["embedder"] = FakeEmbedder()
        original(self, *args, **kwargs)

    monkeypatch.setattr(vecbook.VecBook, "__init__", init)
    root = write_files({"a.txt": "yankee\n---\nzulu\n"})
    config = tmp_path / "vecbook.toml"
    config.write_text(f'data_directory = "{root}"\ncache_directory = "{tmp_path / "cache"}"\n', encoding="utf-8")
    monkeypatch.delenv("VECBOOK_CACHE_DIRECTORY")
    results = []
    for argv in (["reindex"], ["reindex", "--full"]):
        assert vecbook.main([*argv, "--config", str(config)]) == 0
        results.append(json.loads(capsys.readouterr().out))
    assert results[0]["full"] is False and results[0]["embedded"] == 2 and results[0]["records"] == 2
    assert results[1]["full"] is True and results[1]["embedded"] == 0 and results[1]["from_cache"] == 2
    assert results[1]["cache"]["entries"] == 2


@pytest.mark.parametrize("argv, env, watching", [([], None, True), (["--no-watch"], None, False),
                                                 ([], "false", False), ([], "true", True)])
def test_serve_watches_unless_told_not_to(write_files: Any, monkeypatch: pytest.MonkeyPatch,
                                          argv: list[str], env: str | None, watching: bool) -> None:
    served: list[vecbook.VecBook] = []
    monkeypatch.setattr(vecbook.cli, "serve", served.append)
    monkeypatch.setattr(vecbook.cli, "route_other_loggers", lambda: None)
    # As from a terminal: the book itself, not the one a client's server opens after its handshake.
    monkeypatch.setattr(vecbook.cli, "_answers_a_client", lambda _args: False)
    if env is not None:
        monkeypatch.setenv("VECBOOK_WATCH", env)
    root = write_files({"a.txt": "alpha\n"})
    assert vecbook.main(["serve", *argv, "--data-dir", str(root)]) == 0
    book = served[0]
    try:
        assert book.stats()["state"] == "not started"  # nothing before the MCP handshake
        book.embedder = FakeEmbedder()
        book._builder.embedder = book.embedder
        book.start()
        assert book.wait_until_ready(30)
        if watching:
            assert book._watcher.wait_until_watching(DEADLINE_SECONDS)
        assert book.stats()["watching"] is watching
    finally:
        book.close()


def test_config_watch_key(tmp_path: Path) -> None:
    config = tmp_path / "vecbook.toml"
    config.write_text("watch = false\n", encoding="utf-8")
    assert vecbook.load_config(config).watch is False and vecbook.Config().watch is True
    config.write_text('watch = "no"\n', encoding="utf-8")
    with pytest.raises(vecbook.ConfigError, match="config key 'watch' .* must be bool"):
        vecbook.load_config(config)


def test_mcp_reindex_takes_full(write_files: Any, book_over: Any) -> None:
    import asyncio

    from fastmcp import Client

    book = book_over(write_files({"a.txt": "bravo\n"}))

    async def run() -> Any:
        async with Client(vecbook.mcp.build_server(book)) as client:
            tools = {t.name: t for t in await client.list_tools()}
            assert tools["reindex"].input_schema["properties"]["full"]["description"]
            return await client.call_tool("reindex", {"full": True})

    result = asyncio.run(run())
    assert result.structured_content["last_update"]["full"] is True


def test_a_failing_update_is_logged_and_the_watch_goes_on(write_files: Any, book_over: Any,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    root = write_files({"a.txt": "sierra\n"})
    book = book_over(root, watch=True)
    original, failed = book.reindex, []

    def flaky(full: bool = False) -> Any:
        if not failed:
            failed.append(True)
            raise OSError("disk hiccup")
        return original(full)

    monkeypatch.setattr(book, "reindex", flaky)
    (root / "b.txt").write_text("tango\n", encoding="utf-8")
    eventually(lambda: found(book, "tango") == ["b.txt:1"])  # the re-armed watch caught up
    assert failed and "failed; watching again" in caplog.text and "disk hiccup" in caplog.text
    (root / "c.txt").write_text("uniform\n", encoding="utf-8")
    eventually(lambda: found(book, "uniform") == ["c.txt:1"])
