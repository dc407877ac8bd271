"""SuperWhisper recordings: one record a recording, long ones windowed by segments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export, superwhisper
from vecbook.exports.base import Export, MAX_WINDOW_WORDS

from conftest import EXPORTS, FakeEmbedder, assert_messages_cited, cited_lines

RECORDINGS = EXPORTS / "superwhisper"


def collection(path: Path, name: str = "voice") -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path))


def load(path: Path) -> tuple[list[vecbook.Record], list]:
    records, problems, _ = load_export(collection(path))
    return records, problems


def test_a_recording_is_one_record_citing_its_result() -> None:
    records, problems = load(RECORDINGS)
    assert problems == []
    first = records[0]
    assert first.text == ("Remind me to call the plumber tomorrow morning about the leak under the kitchen sink. "
                          "Also pick up the dry cleaning before six.")
    assert first.metadata == {"date": "2024-05-01T10:15:02", "title": "Voice note - Default", "tags": ["Default"],
                              "duration_ms": 9800, "model": "Ultra (Cloud)", "format": "superwhisper"}
    assert first.citation == "voice/recordings/1714558502/meta.json:11-11#1714558502"
    assert first.id == "voice:recordings/1714558502/meta.json#1714558502"
    assert cited_lines(RECORDINGS, first)[0].lstrip().startswith('"result" : "Remind me')


def test_a_long_recording_is_windowed_by_segments_each_citing_its_own_lines() -> None:
    records, _ = load(RECORDINGS)
    windows = [r for r in records if "1714637340" in r.file_path]
    assert [(w.metadata["part"], w.line_number, w.end_line) for w in windows] == [("1 of 2", 13, 67),
                                                                                 ("2 of 2", 68, 127)]
    assert [w.id for w in windows] == ["voice:recordings/1714637340/meta.json#1714637340/1",
                                       "voice:recordings/1714637340/meta.json#1714637340/2"]
    assert all(len(w.text.split()) <= MAX_WINDOW_WORDS for w in windows)
    assert windows[0].text.startswith("Okay so this is the weekly sync for the garden project")
    assert windows[1].text.endswith("That is everything, next sync is Thursday at the same time.")
    assert (windows[1].metadata["start_s"], windows[1].metadata["end_s"]) == (73.47, 152.32)
    assert windows[0].metadata["tags"] == ["Meeting"] and windows[0].metadata["date"] == "2024-05-02T08:09:00"
    for window in windows:
        assert_messages_cited(RECORDINGS, window)
    at = windows[0].text.index("Third item is the budget")
    line, end = windows[0].lines_of(at, at + 10)
    assert (line, end) == (line, line + 4)  # one segment object: {, end, start, text, }
    assert "Third item is the budget" in cited_lines(RECORDINGS, windows[0])[line - 13 + 3]


def test_missing_optional_fields_and_a_utc_datetime() -> None:
    records, _ = load(RECORDINGS)
    email, minimal = records[-2:]
    assert email.metadata["date"] == "2024-05-03T09:53:20+00:00" and email.metadata["model"] == "Pro (Local)"
    assert minimal.metadata == {"date": "2024-05-04T05:20:00", "title": "Voice note", "format": "superwhisper"}
    assert minimal.text == "Idea for the blog: a post about fixing the timer."


def test_a_recording_without_datetime_is_dated_by_its_folder_and_bad_ones_warn(tmp_path: Path) -> None:
    root = tmp_path / "recordings"
    shutil.copytree(RECORDINGS / "recordings" / "1714558502", root / "1714558502")
    (root / "1714900000").mkdir()
    (root / "1714900000" / "meta.json").write_text(json.dumps({"result": "no date here", "modeName": "Note"}))
    (root / "1715000000").mkdir()
    (root / "1715000000" / "meta.json").write_text('{\n  "result" : "",\n  "segments" : [],\n  "modeName" : "x"\n}')
    (root / "1715100000").mkdir()
    (root / "1715100000" / "meta.json").write_text('{\n  "result" : "cut off\n')
    (root / "notes").mkdir()
    (root / "notes" / "meta.json").write_text(json.dumps({"result": "undated", "modeName": "Note"}))
    records, problems = load(tmp_path)
    by_id = {r.metadata.get("title") and r.id.rsplit("#", 1)[1]: r for r in records}
    assert by_id["1714900000"].metadata["date"] == "2024-05-05T09:06:40+00:00"
    assert "date" not in by_id["notes"].metadata
    found = sorted((p.where, p.line, p.reason) for p in problems)
    expected = [
        ("voice/recordings/1715000000/meta.json", 1,
         "recording without text ('result' and 'segments' are empty); skipped"),
        ("voice/recordings/1715100000/meta.json", 2, "file skipped: invalid JSON"),
        ("voice/recordings/notes/meta.json", 1, "recording without a readable 'datetime'; kept undated"),
    ]
    assert [(w, n) for w, n, _ in found] == [(w, n) for w, n, _ in expected]
    assert all(text in reason for (_, _, reason), (_, _, text) in zip(found, expected)), found


def test_a_recording_whose_result_comes_after_8_kb_is_read_and_detected(tmp_path: Path) -> None:
    # the app writes its keys sorted: a long dictation's llmResult, prompt and rawResult come
    # before "result", which was then past the bytes looked at, and the recording dropped in silence
    words = " ".join(["the long dictation about the migration of the blue whale"] * 200)
    meta = {"datetime": "2024-05-02T08:00:00Z", "llmResult": words, "modeName": "Note", "modelName": "Pro (Local)",
            "prompt": "You are a helpful assistant. " * 50, "rawResult": words, "result": words + " capybara"}
    (tmp_path / "1714600000").mkdir()
    (tmp_path / "1714600000" / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    assert detect_format(collection(tmp_path)) == "superwhisper"
    shutil.copytree(RECORDINGS / "recordings" / "1714558502", tmp_path / "1714558502")
    records, problems = load(tmp_path)
    assert problems == []
    assert len(records) > 1 and any(r.text.endswith("capybara") for r in records)


def test_detection_knows_recordings_and_nothing_else() -> None:
    assert detect_format(collection(RECORDINGS)) == "superwhisper"
    assert detect_format(collection(RECORDINGS / "recordings" / "1714558502" / "meta.json")) == "superwhisper"
    for other in sorted(p for p in EXPORTS.iterdir() if p.is_dir() and p.name != "superwhisper"):
        export = Export("x", other, str(other))
        assert not superwhisper.detect(export), other  # no double match with another format's export


def test_voice_notes_are_filtered_by_mode_and_date(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("unrelated note\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "voice"\npath = "{RECORDINGS}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("compost delivery", mode="keyword", filters={"tags__contains": "Meeting"})
    assert hits and all(h.metadata["title"] == "Voice note - Meeting" for h in hits)
    hits = book.search("timer", mode="keyword", filters={"date__gte": "2024-05-04"})
    assert [h.citation for h in hits] == ["voice/recordings/1714800000/meta.json:3-3#1714800000"]
    assert book.stats()["collections"]["voice"]["format"] == "superwhisper"


def test_a_recording_that_cannot_be_read_is_a_warn_and_the_others_load(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # left out without a word before: its first bytes, empty, held no "result"
    import shutil

    import vecbook.exports.base

    shutil.copytree(RECORDINGS, tmp_path / "recordings")
    real = vecbook.exports.base._read_file

    def denied(path: Path, limit: int) -> bytes:
        if path.parent.name == "1714637340":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    everything, _ = load(tmp_path / "recordings")
    monkeypatch.setattr(vecbook.exports.base, "_read_file", denied)
    records, problems = load(tmp_path / "recordings")
    assert [r.id for r in records] == [r.id for r in everything if "1714637340" not in r.id]
    assert [str(p) for p in problems] == ["voice/recordings/1714637340/meta.json: collection 'voice': cannot read file: "
                                          "Permission denied"]
