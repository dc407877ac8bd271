"""The keyword cache: a restart reads and tokenizes only the sources that changed, and
answers exactly as a start that read everything."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import vecbook
from vecbook.config import CollectionConfig, ConfigError
from vecbook.exports import detect_format, load_export
from vecbook.keyword_cache import REF_SHIFT, FileTexts, KeywordCache
from vecbook.record_columns import StoredRecords, record_columns

from conftest import EXPORTS, FakeEmbedder

NOTES = {
    "garden.txt": "Date: 2024-03-01\nTags: garden, spring\n\nPlanted tomatoes and basil by the fence.\n---\n"
                  "Author: ana\n\nThe roses need pruning before the frost.",
    "kitchen/soup.txt": "Lentil soup: onions, garlic, cumin, lentils and lemon.\n---\nBread dough rests overnight.",
    "travel.txt": "Train to Lyon at 9:40, platform 3.\n---\nHotel near the old town, breakfast included.",
    "long.txt": " ".join(f"word{i % 97} filler" for i in range(900)) + " walrus at the very end",
}
QUERIES = ["tomatoes fence", "soup lemon", "train platform", "walrus", "roses frost", "breakfast hotel"]


def settle(*paths: Path) -> None:
    """Date files (every file under a folder) a minute back, as files saved before the start
    are (a file written within two seconds of a read is read again at the next start, by design)."""
    past = time.time() - 60
    for path in paths:
        for file in path.rglob("*.txt") if path.is_dir() else [path]:
            os.utime(file, (past, past))


def book(root: Path, cache: Path | None, **settings: Any) -> vecbook.VecBook:
    return vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), keyword_only=True,
                           cache_directory=cache if cache is not None else False, **settings)


def answers(found: vecbook.VecBook) -> list[list[dict[str, Any]]]:
    return [[hit.to_dict() for hit in found.search(query, mode="keyword")] for query in QUERIES] + \
           [[hit.to_dict() for hit in found.search("garden", mode="keyword", filters={"tags": "spring"})]]


def test_a_restart_reads_only_what_changed_and_answers_as_a_full_read(write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    first = book(root, cache)
    assert first.stats()["last_update"]["files_read"] == 4
    assert len(list(cache.glob("keywords-*.vbk"))) == 1
    restarted = book(root, cache)
    assert restarted.stats()["last_update"]["files_read"] == 0
    assert answers(restarted) == answers(book(root, None))
    # An edited file, a deleted one and a new one: only the edited and new ones are read.
    (root / "travel.txt").write_text("Ferry to Corsica at dawn.\n---\nHotel near the port.", encoding="utf-8")
    (root / "kitchen" / "soup.txt").unlink()
    (root / "new.txt").write_text("A note about tomatoes and a walrus.", encoding="utf-8")
    settle(root / "travel.txt", root / "new.txt")
    assert book(root, cache).stats()["last_update"]["files_read"] == 2
    again = book(root, cache)
    assert again.stats()["last_update"]["files_read"] == 0
    assert answers(again) == answers(book(root, None))
    assert again.search("ferry corsica", mode="keyword")[0].citation == "travel.txt:1-1"


def test_a_file_written_just_before_its_read_is_read_again_at_the_next_start(write_files: Any,
                                                                             tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"  # written now: within the settling time
    book(root, cache)
    restarted = book(root, cache)
    assert restarted.stats()["last_update"]["files_read"] == 4
    assert answers(restarted) == answers(book(root, None))


def test_a_source_too_fresh_to_store_stays_unstored_when_a_later_update_saves(write_files: Any, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # a.txt is written as the first build reads it, so its timestamp cannot vouch for its text;
    # it is then changed within the same tick (same size, same mtime: the signature is blind to
    # it). A later update of another file must not store a.txt's old text as settled.
    root, cache = write_files({"a.txt": "alpha one", "b.txt": "beta"}), tmp_path / "cache"
    settle(root / "b.txt")
    live = book(root, cache)
    tick = (root / "a.txt").stat().st_mtime_ns
    (root / "a.txt").write_text("gamma one", encoding="utf-8")
    os.utime(root / "a.txt", ns=(tick, tick))
    later = time.time_ns() + 10_000_000_000  # the update reads ten seconds later
    monkeypatch.setattr(vecbook.build.time, "time_ns", lambda: later)
    (root / "b.txt").write_text("beta, edited", encoding="utf-8")
    settle(root / "b.txt")
    live.reindex()
    live.close()  # writes the update's state
    monkeypatch.undo()
    restarted = book(root, cache)
    assert restarted.search("gamma", mode="keyword") and not restarted.search("alpha", mode="keyword")


def test_an_update_soon_after_a_save_is_written_when_the_book_closes(write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    live = book(root, cache)
    path = next(cache.glob("keywords-*.vbk"))
    written = path.read_bytes()
    (root / "travel.txt").write_text("Ferry to Corsica at dawn.\n---\nHotel near the port.", encoding="utf-8")
    settle(root / "travel.txt")
    live.reindex()  # an update within UPDATE_WRITE_SECONDS of the first build's write
    assert path.read_bytes() == written
    live.close()
    assert path.read_bytes() != written
    restarted = book(root, cache)
    assert restarted.stats()["last_update"]["files_read"] == 0
    assert answers(restarted) == answers(book(root, None))


def held_keyword_writes(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold every keyword cache write until the returned event is set (for at most 10 s)."""
    release = threading.Event()
    write = KeywordCache._write

    def held(self: KeywordCache, captured: Any) -> None:
        release.wait(10)
        write(self, captured)

    monkeypatch.setattr(KeywordCache, "_write", held)
    return release


def cached_then_edited(root: Path, cache: Path, name: str, text: str) -> tuple[Path, bytes]:
    """A first book over settled ``root`` writes its keyword cache; then file ``name`` gets
    ``text`` (settled): returns the cache file and the bytes it held."""
    settle(root)
    book(root, cache)
    path = next(cache.glob("keywords-*.vbk"))
    written = path.read_bytes()
    (root / name).write_text(text, encoding="utf-8")
    settle(root / name)
    return path, written


def test_a_restart_saves_in_the_background_and_a_second_start_waits_for_that_save(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    path, written = cached_then_edited(root, cache, "travel.txt",
                                       "Ferry to Corsica at dawn.\n---\nHotel near the port.")
    release = held_keyword_writes(monkeypatch)
    started = time.monotonic()
    restarted = book(root, cache)
    # Ready, and searchable with the change, while its keyword cache is still to be written.
    assert time.monotonic() - started < 5 and not release.is_set() and path.read_bytes() == written
    assert restarted.stats()["last_update"]["files_read"] == 1
    assert restarted.search("ferry corsica", mode="keyword")[0].citation == "travel.txt:1-1"
    # A second book in this process waits for that save, and reads nothing again.
    threading.Timer(0.3, release.set).start()
    again = book(root, cache)
    assert release.is_set() and path.read_bytes() != written
    assert again.stats()["last_update"]["files_read"] == 0
    assert answers(again) == answers(book(root, None))


def test_a_restart_that_changed_at_most_one_percent_of_the_records_keeps_the_file_and_reads_the_change_again(
        write_files: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    many = "\n---\n".join(f"Day {i}: the weather by the harbour, note {i}." for i in range(300))
    root, cache = write_files({"many.txt": many, "diary.txt": "Bread dough rests overnight."}), tmp_path / "cache"
    # One record of 301 changed: the file is kept, the change searched at once and read again next time.
    path, written = cached_then_edited(root, cache, "diary.txt",
                                       "Ferry to Corsica at dawn 🚢, Ajaccio café, 北京 ferry, مرحبا.")
    with caplog.at_level(logging.INFO, logger="vecbook"):
        restarted = book(root, cache)
        restarted._caches.wait()
    assert "keyword cache: 1 of 301 records changed since" in caplog.text and "it is kept" in caplog.text
    assert path.read_bytes() == written
    assert restarted.search("ferry corsica", mode="keyword")[0].citation == "diary.txt:1-1"
    assert [h.citation for h in restarted.search("北京", mode="keyword")] == ["diary.txt:1-1"]
    # Its keyword counts, layered over the file's, are compacted in the background, as a save would.
    deadline = time.monotonic() + 10
    while restarted._snapshot.keywords.layered and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not restarted._snapshot.keywords.layered
    again = book(root, cache)
    assert again.stats()["last_update"]["files_read"] == 1
    fresh = book(root, None)
    for query in ("ferry corsica", "weather harbour note 12", "北京", "مرحبا", "café"):
        assert [h.to_dict() for h in again.search(query, mode="keyword")] == \
            [h.to_dict() for h in fresh.search(query, mode="keyword")]
    # A change to more than 1% of the records rewrites the file; the next start reads nothing.
    (root / "many.txt").write_text(many.replace("note 7.", "note seven, a walrus."), encoding="utf-8")
    settle(root / "many.txt")
    book(root, cache)._caches.wait()
    assert path.read_bytes() != written
    last = book(root, cache)
    assert last.stats()["last_update"]["files_read"] == 0
    assert last.search("walrus", mode="keyword")[0].citation == "many.txt:15-15"


def test_a_reindex_asked_for_at_start_writes_even_one_changed_record_so_the_next_finds_nothing_changed(
        write_files: Any, tmp_path: Path) -> None:
    """``vecbook reindex`` (a reindex asked for before the first build) is a restart too, but one
    the user asked for: the change is written, and the next reindex reports nothing changed."""
    many = "\n---\n".join(f"Day {i}: the weather by the harbour, note {i}." for i in range(300))
    root, cache = write_files({"many.txt": many, "diary.txt": "Bread dough rests overnight."}), tmp_path / "cache"
    path, written = cached_then_edited(root, cache, "diary.txt", "Ferry to Corsica at dawn 🚢, 北京.")
    first = book(root, cache, background=True).reindex()["last_update"]
    assert first["changed"] and first["files_read"] == 1
    deadline = time.monotonic() + 10
    while path.read_bytes() == written and time.monotonic() < deadline:
        time.sleep(0.05)
    again = book(root, cache, background=True)
    update = again.reindex()["last_update"]
    assert not update["changed"] and update["files_read"] == 0
    assert [h.citation for h in again.search("北京", mode="keyword")] == ["diary.txt:1-1"]


def test_a_source_is_stale_when_re_read_gone_new_or_with_windows_the_file_lacks(tmp_path: Path) -> None:
    records, windows = [object()] * 50, object()
    cache = KeywordCache(tmp_path, vecbook.Config(data_directory=tmp_path))
    cache._held = [("a", records, windows), ("b", records, None), ("c", records, windows), ("gone", [object()] * 3, None)]
    now: dict[str, Any] = {"a": SimpleNamespace(records=records, windowed=windows),  # as the file holds it
                           "b": SimpleNamespace(records=records, windowed=object()),  # windows cut since
                           "c": SimpleNamespace(records=list(records), windowed=None),  # read again
                           "new": SimpleNamespace(records=[object()] * 2, windowed=None)}
    assert cache.stale(now) == (50 + 50 + 2 + 3, 152)


def test_a_restart_s_save_in_flight_is_finished_when_the_process_exits(write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    book(root, cache)
    (root / "travel.txt").write_text("Ferry to Corsica at dawn.\n---\nHotel near the port.", encoding="utf-8")
    settle(root / "travel.txt")
    # A process that restarts (its keyword write slowed) and ends at once: its exit finishes the file.
    script = f"""
import sys, time
sys.path[:0] = {[str(Path(__file__).parent), str(Path(vecbook.__file__).parent.parent)]!r}
from pathlib import Path
import vecbook
from vecbook.keyword_cache import KeywordCache
from conftest import FakeEmbedder
write = KeywordCache._write
def slow(self, captured):
    time.sleep(0.5)
    write(self, captured)
KeywordCache._write = slow
book = vecbook.VecBook(data_directory={str(root)!r}, embedder=FakeEmbedder(), keyword_only=True,
                       cache_directory=Path({str(cache)!r}))
assert book.stats()["last_update"]["files_read"] == 1
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    again = book(root, cache)
    assert again.stats()["last_update"]["files_read"] == 0
    assert again.search("ferry corsica", mode="keyword")[0].citation == "travel.txt:1-1"


def test_a_restart_does_not_inherit_the_terms_of_deleted_sources(write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files({**NOTES, "zoo.txt": "A zebra at the zoo."}), tmp_path / "cache"
    settle(root)
    live = book(root, cache)
    (root / "zoo.txt").unlink()
    live.reindex()
    live.close()
    assert "zebra" in live._builder.vocabulary.ids  # ids never change in a running book
    restarted = book(root, cache)
    assert restarted.stats()["last_update"]["files_read"] == 0
    assert "zebra" not in restarted._builder.vocabulary.ids
    assert answers(restarted) == answers(book(root, None))


def test_a_cache_another_process_replaces_while_it_is_opened_is_read_anew(
        write_files: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # two processes sharing a cache: the file may be replaced between its two opens
    import vecbook.keyword_cache as keyword_cache
    from vecbook.stored_texts import Replaced

    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    book(root, cache)
    real, calls = keyword_cache.opened_texts, []

    def replaced_once(*args: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            raise Replaced("another process replaced it meanwhile")
        return real(*args)

    monkeypatch.setattr(keyword_cache, "opened_texts", replaced_once)
    caplog.set_level(logging.WARNING, logger="vecbook")
    restarted = book(root, cache)
    assert len(calls) == 2 and "is unusable" not in caplog.text
    assert restarted.stats()["last_update"]["files_read"] == 0


@pytest.mark.parametrize("damage", ["truncate", "garbage", "mismatch", "not an object", "a value past its table",
                                    "a key set past its table", "a record's lines short", "texts said to be apart",
                                    "a term count changed"])
def test_a_damaged_keyword_cache_is_reported_and_every_source_read(write_files: Any, tmp_path: Path, damage: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    book(root, cache)
    path = next(cache.glob("keywords-*.vbk"))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(4096))
    else:  # a whole file whose parts disagree (token counts cut short), or whose header is a list
        import numpy as np

        with np.load(path) as stored:
            parts = {name: stored[name] for name in stored.files}
        if damage == "mismatch":
            parts["token_lengths"] = parts["token_lengths"][:-1]
        elif damage == "a value past its table":
            parts["record_values"] = parts["record_values"] + 1000
        elif damage == "a key set past its table":
            parts["record_keys"] = parts["record_keys"] + 1000
        elif damage == "a record's lines short":
            parts["record_lines"] = parts["record_lines"][:-1]
        elif damage == "a term count changed":  # the file then is whole (its CRCs agree), its parts not
            parts["tf"] = parts["tf"].copy()
            parts["tf"][0] += 1
        elif damage == "texts said to be apart":  # from their contents, with no text among the extras
            parts["record_bodies"] = np.full_like(parts["record_bodies"], -1)
        else:
            parts["header"] = np.frombuffer(b"[1, 2]", dtype=np.uint8)
        with path.open("wb") as out:
            np.savez(out, **parts)
    caplog.set_level(logging.WARNING, logger="vecbook")
    restarted = book(root, cache)
    assert "keyword cache" in caplog.text and "is unusable" in caplog.text
    assert restarted.stats()["last_update"]["files_read"] == 4
    assert answers(restarted) == answers(book(root, None))
    assert book(root, cache).stats()["last_update"]["files_read"] == 0  # written whole again


def test_other_settings_or_other_code_never_reuse_the_keyword_cache(write_files: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    book(root, cache)
    unstemmed = book(root, cache, stemming=False)
    assert unstemmed.stats()["last_update"]["files_read"] == 4
    assert answers(unstemmed) == answers(book(root, None, stemming=False))
    book(root, cache)  # stemmed again: the file is rewritten for these settings
    monkeypatch.setattr(vecbook.keyword_trust, "code_digest", lambda: "another version")
    assert book(root, cache).stats()["last_update"]["files_read"] == 4


def test_a_changed_data_file_of_the_analysis_is_other_code(tmp_path: Path) -> None:
    """The tables that fold traditional Chinese to simplified, and Japanese new forms to them,
    shape the terms as the code does: a new version of one must rebuild the keyword cache as a
    new tokenizer would."""
    from vecbook import han_variants, keyword_trust

    package = Path(keyword_trust.__file__).resolve().parent
    for data in (han_variants.TS_CHARACTERS, han_variants.JP_CHARACTERS):
        assert data.relative_to(package).as_posix() in keyword_trust.ANALYSIS_DATA
    (tmp_path / "tokens.py").write_text("x = 1\n", encoding="utf-8")
    table = tmp_path / han_variants.TS_CHARACTERS.name
    table.write_text("臺\t台\n", encoding="utf-8")
    before = keyword_trust.digest_of(tmp_path)
    table.write_text("臺\t台\n灣\t湾\n", encoding="utf-8")
    assert keyword_trust.digest_of(tmp_path) != before


def test_a_change_of_language_rebuilds_the_keyword_index_once_and_never_mixes_terms(write_files: Any,
                                                                                  tmp_path: Path) -> None:
    root, cache = write_files({**NOTES, "paris.txt": "Les réunions de l'été ont eu lieu à Paris."}), tmp_path / "cache"
    settle(root)
    book(root, cache)  # English terms cached
    french = book(root, cache, language="french")
    assert french.stats()["last_update"]["files_read"] == 5  # every source analysed again
    fresh = book(root, None, language="french")
    assert answers(french) == answers(fresh)
    found = [hit.to_dict() for hit in french.search("réunion ete", mode="keyword")]
    assert found == [hit.to_dict() for hit in fresh.search("réunion ete", mode="keyword")] and found
    again = book(root, cache, language="french")  # rebuilt once: the French terms are the cache now
    assert again.stats()["last_update"]["files_read"] == 0 and answers(again) == answers(fresh)


def test_the_cache_fingerprint_holds_every_language_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = vecbook.config.config_without_file(data_directory=tmp_path)
    chat = CollectionConfig(name="chat", path=tmp_path / "chat", database_label="chat")
    prints = {vecbook.keyword_trust.fingerprint(config) for config in (
        base, vecbook.config.replace_config(base, language="german"),
        vecbook.config.replace_config(base, stemming=False))}
    assert len(prints) == 3
    # A collection's own settings are its source's alone: adding one leaves the fingerprint.
    assert vecbook.keyword_trust.fingerprint(dataclasses.replace(base, collections=(chat,))) in prints
    settings = [vecbook.keyword_trust.source_settings(dataclasses.replace(base, collections=(c,)), "collection:chat")
                for c in (chat, dataclasses.replace(chat, language="spanish"),
                          dataclasses.replace(chat, window_gap_minutes=5))]
    assert [s["language"] for s in settings] == ["english", "spanish", "english"]
    assert len({s["collection"] for s in settings}) == 3
    assert vecbook.keyword_trust.source_settings(base, "collection:chat") is None  # gone
    # A path as written (`--config vecbook.toml` keeps it relative) and resolved are one source.
    monkeypatch.chdir(tmp_path)
    written = dataclasses.replace(base, collections=(dataclasses.replace(chat, path=Path("chat")),))
    assert vecbook.keyword_trust.source_settings(written, "collection:chat") == settings[0]
    assert "pystemmer" in vecbook.keyword_trust.library_versions()


# Twenty messages a minute apart, with a pause of ten minutes after the tenth.
PAUSED_CHAT = "".join(f"15/01/2024, 09:{i + 10 * (i >= 10):02d} - {'Ana' if i % 2 else 'Ben'}: message {i} about "
                      f"{topic}\n" for i, topic in enumerate(["the ferry", "lentil soup", "the walrus", "a train",
                                                             "basil"] * 4))


def configured(tmp_path: Path, cache: Path, collections: dict[str, str]) -> vecbook.VecBook:
    """A keyword-only book over ``tmp_path``'s data folder and the collections of a vecbook.toml
    (name -> the rest of its table)."""
    tables = "".join(f'[[collections]]\nname = "{name}"\n{rest}\n' for name, rest in collections.items())
    (tmp_path / "vecbook.toml").write_text(f'data_directory = "data"\n{tables}', encoding="utf-8")
    return vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder(),
                           keyword_only=True, cache_directory=cache)


def reads(found: vecbook.VecBook) -> tuple[int, int]:
    update = found.stats()["last_update"]
    return update["files_read"], update["collections_read"]


def test_adding_or_removing_a_source_reads_only_the_new_one_and_answers_as_a_full_read(
        write_files: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notes = write_files(NOTES)
    (tmp_path / "chat.txt").write_text(PAUSED_CHAT, encoding="utf-8")
    (tmp_path / "other.txt").write_text(PAUSED_CHAT.replace("Ana", "Cleo"), encoding="utf-8")
    settle(notes, tmp_path / "chat.txt", tmp_path / "other.txt")
    cache = tmp_path / "cache"
    chat = {"chat": 'path = "chat.txt"\nformat = "whatsapp"'}
    assert reads(configured(tmp_path, cache, chat)) == (4, 1)
    caplog.set_level(logging.INFO, logger="vecbook")
    both = configured(tmp_path, cache, {**chat, "other": 'path = "other.txt"\nformat = "whatsapp"'})
    assert reads(both) == (0, 1)  # only the new chat
    assert "reading every source" not in caplog.text
    fresh = configured(tmp_path, tmp_path / "fresh-cache", {**chat, "other": 'path = "other.txt"\nformat = "whatsapp"'})
    assert answers(both) == answers(fresh) and [h.citation for h in both.search("Cleo walrus", mode="keyword")] == \
        [h.citation for h in fresh.search("Cleo walrus", mode="keyword")]
    alone = configured(tmp_path, cache, chat)  # removed again: nothing read, and nothing of it found
    assert reads(alone) == (0, 0) and alone.search("Cleo", mode="keyword") == []
    assert answers(alone) == answers(configured(tmp_path, tmp_path / "third-cache", chat))


@pytest.mark.parametrize("change, read_every_source", [
    ('window_gap_minutes = 5', False),  # two windows, not one: this chat is read again, alone
    ('language = "spanish"', True),  # other terms: no term of the old analysis is kept
])
def test_a_collection_whose_settings_change_is_read_again(write_files: Any, tmp_path: Path, change: str,
                                                          read_every_source: bool) -> None:
    notes = write_files(NOTES)
    (tmp_path / "chat.txt").write_text(PAUSED_CHAT, encoding="utf-8")
    settle(notes, tmp_path / "chat.txt")
    cache, table = tmp_path / "cache", 'path = "chat.txt"\nformat = "whatsapp"'
    configured(tmp_path, cache, {"chat": table})
    changed = configured(tmp_path, cache, {"chat": f"{table}\n{change}"})
    assert reads(changed) == ((4, 1) if read_every_source else (0, 1))
    fresh = configured(tmp_path, tmp_path / "fresh-cache", {"chat": f"{table}\n{change}"})
    assert answers(changed) == answers(fresh)
    assert changed.stats()["sources"]["chat"] == fresh.stats()["sources"]["chat"] == (1 if read_every_source else 2)
    assert [h.to_dict() for h in changed.search("lentil soup walrus", mode="keyword")] == \
        [h.to_dict() for h in fresh.search("lentil soup walrus", mode="keyword")]
    assert reads(configured(tmp_path, cache, {"chat": f"{table}\n{change}"})) == (0, 0)


def test_a_problem_in_the_data_is_warned_about_once_per_change_and_stats_keeps_it(
        write_files: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root, cache = write_files({**NOTES, "bad.txt": b"Caf\xe9 au lait, decoded with a replacement."}), tmp_path / "cache"
    settle(root)
    caplog.set_level(logging.INFO, logger="vecbook")
    book(root, cache)
    assert [r for r in caplog.records if "bad.txt" in r.getMessage() and r.levelno == logging.WARNING]
    caplog.clear()
    restarted = book(root, cache)
    assert restarted.stats()["last_update"]["files_read"] == 0
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "1 problem reported when the unchanged sources were last read" in caplog.text  # at INFO
    fresh = book(root, None).stats()
    assert [restarted.stats()[key] for key in ("skipped", "warnings")] == [fresh[key] for key in ("skipped", "warnings")]
    (root / "bad.txt").write_bytes(b"Caf\xe9 again, changed.")
    settle(root)
    caplog.clear()
    book(root, cache)
    assert [r for r in caplog.records if "bad.txt" in r.getMessage() and r.levelno == logging.WARNING]
    assert fresh["warnings"]  # the decoding problem is there to compare


def test_a_book_without_a_cache_folder_writes_no_keyword_cache(write_files: Any, tmp_path: Path,
                                                              user_cache: Path) -> None:
    root = write_files(NOTES)
    before = set(user_cache.glob("keywords-*.vbk"))
    book(root, None)
    assert set(user_cache.glob("keywords-*.vbk")) == before


def export_records() -> list[vecbook.Record]:
    records = []
    for folder in sorted(p for p in EXPORTS.iterdir() if p.is_dir()):
        for export in sorted(folder.iterdir()):
            if export.name.startswith(".") or export.suffix == ".md":
                continue
            collection = CollectionConfig(name=export.stem, path=export, database_label=str(export))
            try:
                detect_format(collection)
            except ConfigError:  # a folder of one format's parts (message blobs), not an export
                continue
            records += load_export(collection)[0]
    return records


def test_every_export_format_s_records_come_back_from_the_cache_as_they_were(tmp_path: Path) -> None:
    records = export_records()
    assert len({r.source for r in records}) >= 10  # the fixtures' formats, each read
    assert any(r._id is not None for r in records) and any(r.segments for r in records)
    assert any(r.line_number is None for r in records) and any(type(r._text) is str for r in records)
    contents = [r.content.encode("utf-8", "surrogatepass") for r in records]
    (tmp_path / "texts").write_bytes(b"".join(contents))
    texts = FileTexts(open(tmp_path / "texts", "rb"), 0, sum(map(len, contents)))
    refs, start = [], 0
    for content in contents:
        refs.append((start << REF_SHIFT) | len(content))
        start += len(content)
    # Two sources, as a restart reads them (the tables through JSON, as the file's header holds them).
    half = len(records) // 2
    arrays, tables = record_columns([records[:half], records[half:]])
    stored = StoredRecords.read(json.loads(json.dumps(tables, ensure_ascii=False)), arrays, 2)
    restored = stored.of(0, 0, half, texts, refs[:half]) + stored.of(1, half, len(records), texts, refs[half:])
    for record, again in zip(records, restored, strict=True):
        assert again == record and again.stored_in is not None, record.citation
        assert type(again.line_number) is type(record.line_number) and again.metadata == record.metadata
    assert stored.facts(0, half) == (frozenset(k.casefold() for r in records[:half] for k in r.metadata_keys),
                                     frozenset(r.source for r in records[:half]))


def test_the_keyword_cache_file_holds_no_pickled_objects(write_files: Any, tmp_path: Path) -> None:
    import numpy as np

    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    book(root, cache)
    with np.load(next(cache.glob("keywords-*.vbk")), allow_pickle=False) as stored:
        assert all(stored[name].dtype != object for name in stored.files)
    assert KeywordCache(cache, book(root, cache).config).path.is_file()


def test_a_save_never_replaces_a_newer_capture(write_files: Any, tmp_path: Path) -> None:
    # Saves come from a saver thread and from flushes; whichever runs last, the file keeps the newest state.
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    live = book(root, cache)
    older = KeywordCache.capture(live._builder)
    (root / "travel.txt").write_text("Ferry to Corsica at dawn.\n---\nHotel near the port.", encoding="utf-8")
    settle(root / "travel.txt")
    live.reindex()
    newer = KeywordCache.capture(live._builder)
    assert older is not None and newer is not None
    live._caches.keywords.save(newer)
    live._caches.keywords.save(older)
    assert book(root, cache).stats()["last_update"]["files_read"] == 0


# -- model windows kept with their sources --

# A passage longer than one model window (cut in several), CJK, right-to-left and emoji text,
# and a chat whose windows are its message pieces.
LONG_LINES = ["Day {n}: the boiler café needed 修理 again, المرجل يعمل الآن 🔥 and the garden budget grew",
              "Notes {n}: Straße, naïve crème brûlée, 東京の会議 at noon, שלום לכולם, and a long walk home"]
WINDOWED = {
    "long.txt": "Title: a long journal\n" + "\n".join(LONG_LINES[n % 2].format(n=n) for n in range(60)) + "\n",
    "notes.txt": "東京の会議は正午に始まります 🎉\n---\nשלום לכולם, the roof repair estimate is ready\n---\n"
                 "Café crème brûlée for the walrus party 🦭",
}
CHAT = "".join(f"15/01/2024, 09:{minute:02d} - {author}: {message}\n" for minute, (author, message) in enumerate(
    [("Ana", "the plumber comes thursday 🔧"), ("Ben", "東京 trip booked, ホテル near the station"),
     ("Ana", " ".join(f"filler{i}" for i in range(70))), ("Ben", "שלום, the boiler works again")]))
WINDOW_QUERIES = ["boiler repair 修理", "東京の会議", "المرجل 🔥", "plumber thursday", "walrus brûlée", "שלום roof"]


def windowed_book(tmp_path: Path, embedder: vecbook.Embedder, cache: Path | None) -> vecbook.VecBook:
    """A book over WINDOWED (its notes folder) and CHAT (a WhatsApp collection)."""
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "chat"\npath = "{tmp_path / "chat.txt"}"\n'
        'format = "whatsapp"\n', encoding="utf-8")
    return vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=embedder,
                           cache_directory=cache if cache is not None else False)


def write_windowed(tmp_path: Path) -> None:
    from conftest import write_tree

    write_tree(tmp_path / "notes", WINDOWED)
    (tmp_path / "chat.txt").write_text(CHAT, encoding="utf-8")
    settle(tmp_path / "notes", tmp_path / "chat.txt")


def found(book: vecbook.VecBook) -> list[list[dict[str, Any]]]:
    return [[hit.to_dict(scores_as="float") for hit in book.search(query, mode=mode)]
            for query in WINDOW_QUERIES for mode in ("semantic", "hybrid")]


def assert_same_answers(one: vecbook.VecBook, other: vecbook.VecBook) -> None:
    """The same hits in the same order, scores equal to 1e-6."""
    for mine, theirs in zip(found(one), found(other), strict=True):
        assert [h["citation"] for h in mine] == [h["citation"] for h in theirs]
        for a, b in zip(mine, theirs):
            for score in ("similarity_score", "semantic_score", "keyword_score"):
                assert (a[score] is None) == (b[score] is None)
                assert a[score] is None or a[score] == pytest.approx(b[score], abs=1e-6)
            assert {k: v for k, v in a.items() if not k.endswith("_score")} == \
                {k: v for k, v in b.items() if not k.endswith("_score")}


def counting(monkeypatch: pytest.MonkeyPatch, embedder: vecbook.Embedder) -> tuple[list[str], list[int]]:
    """The texts ``embedder`` cuts into windows from here on, and the record contents read back
    from a keyword cache file."""
    cut: list[str] = []
    read: list[int] = []
    real_cut, real_read = embedder.window_spans_many, vecbook.stored_texts.FileTexts.read

    def window_spans_many(texts: Any) -> Any:
        cut.extend(texts)
        return real_cut(texts)

    def read_back(self: Any, ref: int) -> str:
        read.append(ref)
        return real_read(self, ref)

    monkeypatch.setattr(embedder, "window_spans_many", window_spans_many)
    monkeypatch.setattr(vecbook.stored_texts.FileTexts, "read", read_back)
    return cut, read


def test_a_warm_start_takes_its_windows_from_the_keyword_cache_and_answers_as_a_cold_build(
        tmp_path: Path, embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    write_windowed(tmp_path)
    cache = tmp_path / "cache"
    first = windowed_book(tmp_path, embedder, cache)
    assert len(first._builder.splits) >= 2  # the long record's passage is several windows
    assert any(len(r.segments) > 1 for r in first._snapshot.records)  # a chat window of messages
    first.close()
    cut, read = counting(monkeypatch, embedder)
    warm = windowed_book(tmp_path, embedder, cache)
    assert warm.stats()["last_update"]["files_read"] == 0 and warm.stats()["last_update"]["embedded"] == 0
    assert cut == [] and read == []  # no record's text was read back, none cut into windows
    cold = windowed_book(tmp_path, embedder, None)
    assert warm._snapshot.vectors.keys == cold._snapshot.vectors.keys
    assert np.array_equal(warm._snapshot.vectors.spans, cold._snapshot.vectors.spans)
    assert_same_answers(warm, cold)


def test_an_edited_source_gets_new_windows_and_the_others_keep_theirs(
        tmp_path: Path, embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    write_windowed(tmp_path)
    cache = tmp_path / "cache"
    windowed_book(tmp_path, embedder, cache).close()
    added = "A new record: the lighthouse keeper's quokka 🦘 fixed the 灯台"
    (tmp_path / "notes" / "notes.txt").write_text(WINDOWED["notes.txt"] + "\n---\n" + added, encoding="utf-8")
    settle(tmp_path / "notes" / "notes.txt")
    cut, _ = counting(monkeypatch, embedder)
    edited = windowed_book(tmp_path, embedder, cache)
    assert edited.stats()["last_update"]["files_read"] == 1
    assert cut == [added]  # the edited file's other records keep their windows
    edited.close()
    cut.clear()
    again = windowed_book(tmp_path, embedder, cache)
    assert cut == [] and again.stats()["last_update"]["files_read"] == 0
    assert [h.text for h in again.search("quokka lighthouse", mode="semantic", max_results=1)] == [added]
    assert_same_answers(again, windowed_book(tmp_path, embedder, None))


class HalvingEmbedder(FakeEmbedder):
    """Another model: its windows are each text's two halves (a text over 20 characters)."""

    @property
    def identity(self) -> str:
        return "fake-bag-of-words|256|halves"

    def window_spans_many(self, texts: Any) -> list[tuple[list[tuple[int, int]], bool]]:
        return [([(0, len(t) // 2), (len(t) // 2, len(t))] if len(t) > 20 else [(0, len(t))], False) for t in texts]


def test_windows_another_embedder_cut_are_cut_again(write_files: Any, tmp_path: Path) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), cache_directory=cache).close()
    halving = HalvingEmbedder()
    cut: list[str] = []
    real = halving.window_spans_many
    halving.window_spans_many = lambda texts: cut.extend(texts) or real(texts)  # type: ignore[method-assign]
    other = vecbook.VecBook(data_directory=root, embedder=halving, cache_directory=cache)
    assert other.stats()["last_update"]["files_read"] == 0  # the records come from the cache, their windows do not
    assert len(cut) == len(other._snapshot.passages)
    cold = vecbook.VecBook(data_directory=root, embedder=HalvingEmbedder(), cache_directory=False)
    assert other._snapshot.vectors.keys == cold._snapshot.vectors.keys
    assert np.array_equal(other._snapshot.vectors.spans, cold._snapshot.vectors.spans)
    assert [[h.to_dict() for h in other.search(q)] for q in QUERIES] == \
        [[h.to_dict() for h in cold.search(q)] for q in QUERIES]
    other.close()
    cut.clear()
    vecbook.VecBook(data_directory=root, embedder=halving, cache_directory=cache)
    assert cut == []  # the file holds this embedder's windows now


@pytest.mark.parametrize("damage", ["window keys cut short", "a window past its record's passages",
                                    "windows of fewer records"])
def test_damaged_windows_are_reported_and_every_source_read(write_files: Any, tmp_path: Path, damage: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    root, cache = write_files(NOTES), tmp_path / "cache"
    settle(root)
    vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), cache_directory=cache).close()
    path = next(cache.glob("keywords-*.vbk"))
    with np.load(path) as stored:
        parts = {name: stored[name] for name in stored.files}
    assert len(parts["window_counts"]) == len(parts["passage_counts"])  # every record's windows were kept
    if damage == "window keys cut short":
        parts["window_keys"] = parts["window_keys"][:-16]
    elif damage == "a window past its record's passages":
        parts["window_passages"] = parts["window_passages"] + 50
    else:
        parts["window_counts"] = parts["window_counts"][:-1]
    with path.open("wb") as out:
        np.savez(out, **parts)
    caplog.set_level(logging.WARNING, logger="vecbook")
    restarted = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), cache_directory=cache)
    assert "keyword cache" in caplog.text and "is unusable" in caplog.text
    assert restarted.stats()["last_update"]["files_read"] == 4
    cold = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), cache_directory=False)
    assert [[h.to_dict() for h in restarted.search(q)] for q in QUERIES] == \
        [[h.to_dict() for h in cold.search(q)] for q in QUERIES]
