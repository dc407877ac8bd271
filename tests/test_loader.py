"""File discovery and loading: every .txt under the data directory, once, in a stable order;
whatever cannot be read becomes a Problem (a WARN), never an exception."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

import pytest

import vecbook
from vecbook.sources import discover_files, load_directory, load_file

WriteFiles = Callable[[dict[str, "str | bytes"]], Path]


def rels(root: Path) -> list[str]:
    """The relative paths discover_files lists, in its order."""
    files, _, _ = discover_files(root)
    return [rel for rel, _ in files]


def messages(report: vecbook.sources.LoadReport) -> list[str]:
    return [str(problem) for problem in report.problems]


# -- discovery --


def test_discovery_is_recursive_and_sorted(write_files: WriteFiles) -> None:
    root = write_files({name: "x" for name in ["c.txt", "b.txt", "a/z.txt", "a/x.txt", "a/b/y.txt"]})
    assert rels(root) == ["a/b/y.txt", "a/x.txt", "a/z.txt", "b.txt", "c.txt"]


def test_discovery_finds_nested_folders(write_files: WriteFiles) -> None:
    root = write_files({"top.txt": "x", "a/b/c/deep.txt": "x", "a/mid.txt": "x"})
    assert sorted(rels(root)) == ["a/b/c/deep.txt", "a/mid.txt", "top.txt"]


def test_records_keep_file_order(write_files: WriteFiles) -> None:
    root = write_files({"notes.txt": "one\n---\ntwo\n---\nthree\n"})
    assert [r.text for r in load_directory(root).records] == ["one", "two", "three"]


def test_notes_records_and_exports_are_read_and_other_files_counted(write_files: WriteFiles) -> None:
    root = write_files({
        "keep.txt": "x", "notes.md": "x", "data.csv": "x", "backup.txt.bak": "x", "noext": "x",
        "txt": "x", "folder.txt/inner.txt": "x", "photo.JPG": b"\xff\xd8", ".hidden.txt": "x", ".git/HEAD.txt": "x",
    })
    # files with no suffix may be an mbox: looked at, and not read when nothing recognises them
    assert sorted(rels(root)) == ["folder.txt/inner.txt", "keep.txt", "noext", "notes.md", "txt"]
    report = load_directory(root)
    assert [r.file_path for r in report.records] == ["folder.txt/inner.txt", "keep.txt", "notes.md"]
    assert report.data_directory == {"kinds": {"text": 2, "markdown": 1},
                                     "not_read": {".csv": 1, ".bak": 1, "": 2, ".jpg": 1}}
    assert report.files == 3 and report.problems == []


def test_empty_data_directory(write_files: WriteFiles) -> None:
    report = load_directory(write_files({}))
    assert (report.records, report.problems, report.files, report.outside_links) == ([], [], 0, [])


def test_empty_and_blank_files_give_no_records_and_no_warnings(write_files: WriteFiles) -> None:
    report = load_directory(write_files({"empty.txt": "", "blank.txt": "\n  \n\n"}))
    assert (report.records, report.problems, report.files) == ([], [], 2)


@pytest.mark.parametrize("name", ["with space.txt", "ünïcödé/日本語 メモ.txt", "new\nline.txt", "-dash.txt"])
def test_odd_file_names(write_files: WriteFiles, name: str) -> None:
    root = write_files({name: "Hello from an odd name.\n"})
    report = load_directory(root)
    assert [(r.file_path, r.text) for r in report.records] == [(name, "Hello from an odd name.")]
    assert report.records[0].citation == f"{name}:1-1"
    assert report.problems == []


def test_relative_root(write_files: WriteFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files({"a/n.txt": "x"})
    monkeypatch.chdir(tmp_path)
    report = load_directory(Path("data"))
    assert [r.file_path for r in report.records] == ["a/n.txt"]


# -- symlinks --


def test_symlinked_file_and_folder_are_followed(write_files: WriteFiles, tmp_path: Path) -> None:
    root = write_files({"own.txt": "Own record."})
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "file.txt").write_text("Linked file record.")
    (outside / "dir" / "inner.txt").write_text("Linked folder record.")
    (root / "linked.txt").symlink_to(outside / "file.txt")
    (root / "linkdir").symlink_to(outside / "dir", target_is_directory=True)

    report = load_directory(root)

    assert sorted((r.file_path, r.text) for r in report.records) == [
        ("linkdir/inner.txt", "Linked folder record."),
        ("linked.txt", "Linked file record."),
        ("own.txt", "Own record."),
    ]
    assert report.problems == []


def test_links_pointing_outside_are_listed(write_files: WriteFiles, tmp_path: Path) -> None:
    root = write_files({"real/a.txt": "Inside."})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.txt").write_text("Outside.")
    (root / "out.txt").symlink_to(outside / "b.txt")
    (root / "outdir").symlink_to(outside, target_is_directory=True)
    (root / "in.txt").symlink_to(root / "real" / "a.txt")         # inside: followed, not listed
    (root / "indir").symlink_to(Path("real"), target_is_directory=True)

    report = load_directory(root)

    assert sorted(report.outside_links) == ["out.txt", "outdir"]
    assert {r.text for r in report.records} == {"Inside.", "Outside."}


def test_root_reached_through_a_symlink_has_nothing_outside(write_files: WriteFiles, tmp_path: Path) -> None:
    real = write_files({"sub/a.txt": "x"})
    (real / "alias").symlink_to(real / "sub", target_is_directory=True)
    root = tmp_path / "root_link"
    root.symlink_to(real, target_is_directory=True)
    report = load_directory(root)
    assert report.outside_links == []
    assert len(report.records) == 1


def test_symlink_loop_terminates_and_each_file_is_indexed_once(write_files: WriteFiles) -> None:
    root = write_files({"top.txt": "Top.", "a/n.txt": "Nested."})
    (root / "a" / "up").symlink_to(Path(".."), target_is_directory=True)     # a/up -> data
    (root / "a" / "self").symlink_to(Path("."), target_is_directory=True)    # a/self -> a
    (root / "loop").symlink_to(root, target_is_directory=True)               # data/loop -> data

    report = load_directory(root)

    assert sorted(r.text for r in report.records) == ["Nested.", "Top."]
    assert report.files == 2
    assert report.problems == []


def test_a_file_reached_by_several_paths_is_indexed_once(write_files: WriteFiles) -> None:
    root = write_files({"notes/n.txt": "Only once."})
    (root / "alias.txt").symlink_to(root / "notes" / "n.txt")
    os.link(root / "notes" / "n.txt", root / "hard.txt")
    (root / "again").symlink_to(root / "notes", target_is_directory=True)

    report = load_directory(root)

    assert [r.text for r in report.records] == ["Only once."]
    assert report.files == 1
    assert report.problems == []


def test_broken_symlink_is_a_problem_naming_it(write_files: WriteFiles) -> None:
    root = write_files({"ok.txt": "Still loaded."})
    (root / "gone.txt").symlink_to(root / "missing.txt")
    report = load_directory(root)
    assert [r.text for r in report.records] == ["Still loaded."]
    assert messages(report) == ["gone.txt: broken symbolic link skipped"]


def test_a_loop_of_symlinks_is_a_problem_saying_it_is_a_loop(write_files: WriteFiles) -> None:
    # a -> b, b -> a (a sync of two machines' links, a link made twice): nothing is missing,
    # so "broken" sent the user looking for a file that was never there
    root = write_files({"ok.txt": "Still loaded."})
    (root / "a.md").symlink_to("b.md")
    (root / "b.md").symlink_to("a.md")
    (root / "self.txt").symlink_to("self.txt")
    report = load_directory(root)
    assert [r.text for r in report.records] == ["Still loaded."]
    assert messages(report) == [f"{name}: symbolic link loop skipped (its links lead to one another, never to a file)"
                                for name in ("a.md", "b.md", "self.txt")]


def test_a_note_left_in_icloud_is_named_in_a_warn_not_passed_over(write_files: WriteFiles) -> None:
    # With Optimize Mac Storage, iCloud Drive swaps a note it has not downloaded for a hidden
    # ".name.icloud" stand-in: such notes were left out without a word, and never found.
    root = write_files({"ok.md": "# Ok\nA note.\n", "Daily/.2024-03-04.md.icloud": b"bplist00\xd1\x01\x02",
                        ".journal.txt.icloud": b"bplist00", ".photo.jpg.icloud": b"bplist00", "..hidden.md.icloud": b"bplist00",
                        ".obsidian/.workspace.json.icloud": b"bplist00"})
    report = load_directory(root)
    assert [r.file_path for r in report.records] == ["ok.md"]
    why = "in iCloud only, not downloaded to this Mac, so not read (Finder: Download Now, or keep the folder downloaded)"
    assert sorted(messages(report)) == [f"Daily/2024-03-04.md: {why}", f"journal.txt: {why}"]


# -- files that cannot be used --


def test_binary_file_is_skipped_with_a_problem(write_files: WriteFiles) -> None:
    root = write_files({"image.txt": b"GIF89a\x00\x01\x02binary", "ok.txt": "Text."})
    report = load_directory(root)
    assert [r.file_path for r in report.records] == ["ok.txt"]
    assert messages(report) == ["image.txt: binary file (it holds NUL bytes) skipped"]


def test_a_binary_file_named_md_is_skipped_as_a_text_file_is(write_files: WriteFiles) -> None:
    # A picture or program saved under a .md name: read as a note it was U+FFFD and control
    # bytes in the index, with a WARN to save it as UTF-8.
    root = write_files({"photo.md": b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe binary\n", "ok.md": "# Ok\nA note.\n"})
    report = load_directory(root)
    assert [r.file_path for r in report.records] == ["ok.md"]
    assert messages(report) == ["photo.md: binary file (it holds NUL bytes) skipped"]


def test_a_note_padded_with_nul_bytes_at_its_end_is_still_read(write_files: WriteFiles) -> None:
    # A crash or an interrupted sync can leave a file's last blocks as zeros (its size written,
    # its data not): the text before them is the note, not a binary file. A file of NULs alone,
    # or one with a NUL before its text ends, is binary as before.
    root = write_files({"trip.md": b"# Trip\nThe ferry to Hydra leaves at 7.\n\0\0\0\0",
                        "log.txt": "The ferry to Hydra leaves at 7.\n".encode() + b"\0" * 4096,
                        "zeros.md": b"\0" * 4096, "photo.md": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR ferry\n"})
    report = load_directory(root)
    assert sorted(r.file_path for r in report.records) == ["log.txt", "trip.md"]
    assert all("\0" not in r.text for r in report.records) and all("Hydra" in r.text for r in report.records)
    assert messages(report) == ["photo.md: binary file (it holds NUL bytes) skipped",
                                "zeros.md: binary file (it holds NUL bytes) skipped"]


def test_a_text_file_in_latin1_is_one_warning_that_says_what_to_do(write_files: WriteFiles) -> None:
    # An old Windows journal: every line with an accent holds a byte that is not UTF-8. One WARN
    # a line was hundreds of lines on stderr, none saying how to get the letters back.
    journal = "".join(f"Tag {n}: Müller im Café, schöne Grüße.\n" for n in range(300))
    root = write_files({"tagebuch.txt": "Datum: heute\n\nok\n".encode() + journal.encode("cp1252")})
    report = load_directory(root)
    assert len(report.records) == 1 and "M\ufffdller" in report.records[0].text  # kept, U+FFFD for the bytes
    assert messages(report) == ["tagebuch.txt:4: bytes that are not UTF-8 were replaced by U+FFFD "
                                "(on 300 lines, the first here); save the file as UTF-8 to keep its letters"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_note_saved_as_utf16_with_its_bom_is_read_as_text(write_files: WriteFiles, encoding: str) -> None:
    """Windows PowerShell 5's ``>`` and Notepad's "Unicode" save UTF-16 with a byte order mark:
    its NUL bytes make it no binary file, and a Markdown note is not mojibake."""
    bom = b"\xfe\xff" if encoding == "utf-16-be" else b""  # "utf-16" writes its own (little-endian here)
    root = write_files({"todo.txt": bom + "Title: Trip\n\nKayak paddles, café.\n".encode(encoding),
                        "shop.md": bom + "# Shopping\n\nBuy kayak wax.\n".encode(encoding)})
    report = load_directory(root)
    assert sorted((r.file_path, r.line_number, r.text) for r in report.records) == [
        ("shop.md", 1, "# Shopping\n\nBuy kayak wax."), ("todo.txt", 1, "Kayak paddles, café.")]
    assert messages(report) == []


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_note_saved_as_utf16_without_a_bom_is_read_as_text_in_any_language(write_files: WriteFiles,
                                                                            encoding: str) -> None:
    """Tools that write UTF-16 without a byte order mark (.NET's ``Encoding.Unicode`` bytes written
    out, ``iconv -t UTF-16LE``) leave NUL bytes on one side of every ASCII character: text, told
    from binary by that, and cited by its lines as an editor shows them."""
    diary = "Date: 2024-03-02\n\nПоехали на дачу, шашлык у реки.\n---\n東京で寿司。 Kyoto next 🍣\n"
    root = write_files({"diary.txt": diary.encode(encoding),
                        "shop.md": "# Shopping\n\nBuy kayak wax.\n".encode(encoding) + b"\0" * 6})
    report = load_directory(root)
    assert sorted((r.citation, r.text) for r in report.records) == [
        ("diary.txt:1-3", "Поехали на дачу, шашлык у реки."), ("diary.txt:5-5", "東京で寿司。 Kyoto next 🍣"),
        ("shop.md:1-3", "# Shopping\n\nBuy kayak wax.")]
    assert messages(report) == []


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_note_without_a_bom_is_text_with_characters_that_hold_a_nul_byte(write_files: WriteFiles,
                                                                                encoding: str) -> None:
    """Some characters are themselves a NUL byte and another in UTF-16: 一 (U+4E00), the Japanese
    ideographic space (U+3000), ☀ (U+2600), 😀 (its low surrogate is U+DE00). A note holding
    them is still text, not a binary file: no code unit of text is all NUL."""
    diary = "Date: 2024-03-02\n\nGreat walk today 😀 ☀\n---\n一緒に散歩。\u3000Kyoto next week\n"
    root = write_files({"diary.txt": diary.encode(encoding)})
    report = load_directory(root)
    assert sorted((r.citation, r.text) for r in report.records) == [
        ("diary.txt:1-3", "Great walk today 😀 ☀"), ("diary.txt:5-5", "一緒に散歩。\u3000Kyoto next week")]
    assert messages(report) == []


# Chinese, Japanese and Thai are written without spaces: such a note's UTF-16 holds NUL bytes in
# its line ends alone, far fewer than a tenth of its code units, where an English or Russian
# one's spaces give it plenty.
CHINESE = "今天天气很好，我们一起去爬山。山上的风景非常美丽，大家都很开心。\n明天要去上海出差，记得带护照和充电器。\n"
JAPANESE = "明日は会議があります。資料を準備してください。\n"
THAI = "สวัสดีครับ วันนี้อากาศดีมาก\n"  # its UTF-16 bytes are ASCII's: U+0E2A is b"\x2a\x0e"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_note_without_a_bom_in_chinese_japanese_or_thai_is_read_as_text(write_files: WriteFiles,
                                                                               encoding: str) -> None:
    """A note written without spaces and saved as UTF-16 without a byte order mark is read as text;
    the Chinese diary was skipped as a binary file, and the Japanese memo, whose one NUL byte was
    its last, read as UTF-8 mojibake."""
    root = write_files({"日记.txt": CHINESE.encode(encoding), "メモ.md": JAPANESE.encode(encoding),
                        "บันทึก.txt": THAI.encode(encoding)})
    report = load_directory(root)
    assert sorted((r.citation, r.text) for r in report.records) == [
        ("บันทึก.txt:1-1", THAI.strip()), ("メモ.md:1-1", JAPANESE.strip()), ("日记.txt:1-2", CHINESE.strip())]
    assert messages(report) == []


def test_a_utf16_note_without_a_bom_with_bytes_that_are_no_utf16_keeps_the_rest_and_says_where(
        write_files: WriteFiles) -> None:
    """As one with its mark does: only the first characters tell text from binary, so one bad
    code unit (a lone surrogate: text cut inside an emoji) no longer makes a note a binary file."""
    root = write_files({"todo.txt": "ok\nbad ".encode("utf-16-le") + b"\x00\xd8" + "\nmore\n".encode("utf-16-le")})
    report = load_directory(root)
    assert [r.text for r in report.records] == ["ok\nbad \ufffd\nmore"]
    assert messages(report) == ["todo.txt:2: bytes that are not UTF-16 were replaced by U+FFFD (on this line); "
                                "save the file as UTF-8 to keep its letters"]


def test_a_utf16_note_is_told_from_binary_once(write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    """Telling markless UTF-16 from binary scans the whole file: it was done three times a note
    (is it binary, is its end padding, how is it decoded): 0.3-0.46 s for an 8.6 MB note, 0.07 s
    once."""
    calls: list[int] = []
    told = vecbook.records.utf16_codec

    def counted(data: bytes) -> tuple[str, int, int] | None:
        calls.append(len(data))
        return told(data)

    monkeypatch.setattr(vecbook.records, "utf16_codec", counted)
    note = "Date: 2024-03-02\n\nKayak trip, café.\n".encode("utf-16-le")
    report = load_directory(write_files({"a.txt": note, "b.md": b"\xff\xfe" + note, "c.txt": "Kayak trip.\n"}))
    assert sorted(r.citation for r in report.records) == ["a.txt:1-3", "b.md:1-3", "c.txt:1-1"]
    assert len(calls) == 3


def _png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    pixels = b"".join(b"\0" + bytes(range(48)) for _ in range(16))  # 16 rows of 16 RGB pixels
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))


def _pdf() -> bytes:
    import hashlib
    import zlib

    # a page's text, then a photo's JPEG bytes (incompressible, as a scan's are)
    stream = zlib.compress(b"BT /F1 24 Tf 72 720 Td (Kayak) Tj ET" * 20)
    photo = b"".join(hashlib.sha256(bytes([n])).digest() for n in range(200))
    return (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
            + b"4 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream
            + b"\nendstream\nendobj\n5 0 obj\n<< /Length %d /Filter /DCTDecode >>\nstream\n" % len(photo) + photo
            + b"\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")


def _sqlite(tmp_path: Path) -> bytes:
    import sqlite3

    connection = sqlite3.connect(tmp_path / "notes.db")
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    connection.executemany("INSERT INTO notes (body) VALUES (?)", [("kayak trip",), ("café",)])
    connection.commit()
    connection.close()
    return (tmp_path / "notes.db").read_bytes()


def _zip() -> bytes:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("vault/kayak.md", "# Kayak\nPaddles.\n" * 30)
        archive.writestr("vault/raw.md", "stored as it is\n", compress_type=zipfile.ZIP_STORED)
    return out.getvalue()


def _wav() -> bytes:
    import io
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(bytes(b for n in range(2000) for b in (n % 97, 0)))  # quiet 16-bit samples
    return out.getvalue()


def test_binary_files_under_a_note_s_name_are_still_skipped(write_files: WriteFiles, tmp_path: Path) -> None:
    """A picture, a PDF, a database, a zip, a sound or a NUL-separated list of names (``find
    -print0``'s) saved under a ``.md`` or ``.txt`` name is no note, UTF-16 without its mark though
    some hold NULs on one side of many byte pairs."""
    words = ["kayak", "Hydra", "ferry", "notes", "sushi", "ana", "Kyoto", "tea", "bread", "olive", "lemon", "onion"]
    binaries = {"photo.md": _png(), "paper.txt": _pdf(), "notes.md": _sqlite(tmp_path), "vault.md": _zip(),
                "memo.txt": _wav(), "ascii.txt": b"kayak trip\n" * 40 + b"\0stray\n",
                # read as UTF-16, pairs of letters are CJK ideographs ("Bush hid the facts")
                "latin1.txt": "Müller im Café\n".encode("cp1252") * 40 + b"\0stray\n",
                "cjk.txt": CHINESE.encode() * 10 + b"\0stray\n",
                "names.txt": b"\0".join(w.encode() for w in [*words, "trip", *words[:3], "boat", *words]) + b"\0"}
    root = write_files({**binaries, "ok.md": "# Ok\nA note.\n"})
    report = load_directory(root)
    assert [r.file_path for r in report.records] == ["ok.md"]
    assert messages(report) == [f"{name}: binary file (it holds NUL bytes) skipped" for name in sorted(binaries)]


def test_a_utf16_note_with_bytes_that_are_no_utf16_keeps_the_rest_and_says_where(write_files: WriteFiles) -> None:
    root = write_files({"todo.txt": "ok\nbad ".encode("utf-16") + b"\x00\xd8" + "\nmore\n".encode("utf-16-le")})
    report = load_directory(root)
    assert [r.text for r in report.records] == ["ok\nbad \ufffd\nmore"]
    assert messages(report) == ["todo.txt:2: bytes that are not UTF-16 were replaced by U+FFFD (on this line); "
                                "save the file as UTF-8 to keep its letters"]


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
def test_lines_end_at_cr_lf_or_both_and_are_cited_as_an_editor_numbers_them(write_files: WriteFiles, end: str) -> None:
    """Classic Mac OS (and apps that kept its ways: old TextEdit and BBEdit files, some exports)
    end lines with a bare CR, which every editor shows as a line end: read as one line, such a
    journal was one record cited ``:1-1`` whatever line held the words."""
    journal = end.join(["First note.", "---", "Date: 2024-03-04", "", "The boiler is fixed.", "---", "Last note.", ""])
    note = end.join(["---", "tags: [trip]", "---", "# Trip", "Ferry at 7.", "## Day two", "Hydra.", ""])
    root = write_files({"n.txt": journal.encode(), "trip.md": note.encode()})
    report = load_directory(root)
    assert [(r.citation, r.text) for r in report.records] == [
        ("n.txt:1-1", "First note."), ("n.txt:3-5", "The boiler is fixed."), ("n.txt:7-7", "Last note."),
        ("trip.md:4-5", "# Trip\nFerry at 7."), ("trip.md:6-7", "## Day two\nHydra.")]
    assert report.records[1].metadata == {"Date": "2024-03-04"} and report.records[3].metadata["tags"] == ["trip"]
    assert messages(report) == []


def test_a_file_with_mixed_line_ends_counts_each_once(write_files: WriteFiles) -> None:
    # a file edited on several systems: CR LF is one line end, a CR or an LF alone another
    root = write_files({"mixed.txt": b"one\r\ntwo\rthree\n---\r\nfour\r\rfive\n\nsix\r\n",
                        "latin.txt": "ok\r\xe9t\xe9\rok\r".encode("latin-1")})
    report = load_directory(root)
    assert [(r.citation, r.text) for r in report.records] == [
        ("latin.txt:1-3", "ok\n\ufffdt\ufffd\nok"), ("mixed.txt:1-3", "one\ntwo\nthree"),
        ("mixed.txt:5-9", "four\n\nfive\n\nsix")]
    assert messages(report) == ["latin.txt:2: bytes that are not UTF-8 were replaced by U+FFFD (on this line); "
                                "save the file as UTF-8 to keep its letters"]


def test_cr_lf_written_through_a_windows_text_mode_file_is_still_one_line_end(write_files: WriteFiles) -> None:
    """A script writing CR LF text through a Windows text-mode file (Python's ``open(path, "w")``,
    an FTP ASCII transfer) leaves CR CR LF at each line end: one line end, as ``grep -n`` and vim
    count it, not a line and a blank one, which cut the headers from their record (undated)."""
    journal = "\r\r\n".join(["Title: Trip", "Date: 2024-03-05", "", "Kayak out.", "---", "Last note.", ""])
    root = write_files({"n.txt": journal.encode(), "crlf.txt": journal.replace("\r\r", "\r").encode()})
    report = load_directory(root)
    assert [(r.citation, r.text, r.metadata) for r in report.records] == [
        (f"{name}:{lines}", text, metadata) for name in ("crlf.txt", "n.txt") for lines, text, metadata in (
            ("1-4", "Kayak out.", {"Title": "Trip", "Date": "2024-03-05"}), ("6-6", "Last note.", {}))]
    assert messages(report) == []


def test_a_file_name_that_is_not_utf8_is_cited_as_text_every_output_can_carry(tmp_path: Path) -> None:
    """A Latin-1 name from an old archive (``caf\\xe9.txt``) is read; Python holds its byte as a
    lone surrogate, which no JSON (MCP, the HTTP server) can encode: its citation writes the byte
    as ``\\xe9``, as Python and the shell show it."""
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    try:
        (root / os.fsdecode(b"caf\xe9.txt")).write_text("kayak\n", encoding="utf-8")
        (root / os.fsdecode(b"d\xe9j\xe0")).mkdir()
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes UTF-8 names only")
    (root / os.fsdecode(b"d\xe9j\xe0") / "vu.txt").write_text("canoe\n", encoding="utf-8")
    report = load_directory(root)
    assert sorted(r.citation for r in report.records) == ["caf\\xe9.txt:1-1", "d\\xe9j\\xe0/vu.txt:1-1"]
    json.dumps([r.citation for r in report.records], ensure_ascii=False).encode("utf-8")  # no lone surrogate


def _windows_refuses_long_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """File calls answered as Windows answers them without long paths turned on: a path of
    MAX_PATH characters or more is not found unless it has the prefix, here "//" ("//tmp/..." is
    "/tmp/..." on Linux, and pathlib keeps it; ``long_form`` writes Windows' own, tested apart)."""
    from vecbook import os_paths

    monkeypatch.setattr(os_paths, "WINDOWS", True)
    monkeypatch.setattr(os_paths, "long_form", lambda absolute: absolute if absolute.startswith("//") else "/" + absolute)
    import builtins
    import errno
    import io

    def refusing(call: Callable[..., object]) -> Callable[..., object]:
        def check(path: object, *args: object, **kwargs: object) -> object:
            text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
            if isinstance(text, str) and len(text) >= 260 and not text.startswith("//"):
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", text)
            return call(path, *args, **kwargs)
        return check
    for name in ("stat", "lstat", "scandir"):
        monkeypatch.setattr(os, name, refusing(getattr(os, name)))
    monkeypatch.setattr(builtins, "open", refusing(builtins.open))
    monkeypatch.setattr(io, "open", refusing(io.open))


def test_on_windows_a_path_past_max_path_is_read_through_the_long_path_prefix(
        write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    # A vault synced from a Mac: deep folders and long CJK names pass Windows' 260 characters; a
    # Slack export among them is read whole, its files as long
    deep = "/".join(["Projekte 2024 – Überblick und Planung"] * 5) + "/会議メモ 東京 2024年3月 第二四半期の計画と予算"
    slack = {"channels.json": '[{"id": "C1", "name": "general"}]', "users.json": "[]",
             "general/2024-03-01.json": '[{"type": "message", "user": "U1", "text": "Kayak trip to Hydra", '
                                        '"ts": "1709290000.000100"}]'}
    root = write_files({f"{deep}/Kayak {'🛶' * 20}.md": "# Kayak\nPaddles for the Hydra trip.\n",
                        "short.md": "# Short\nok\n", **{f"{deep}/slack/{rel}": text for rel, text in slack.items()}})
    assert min(len(str(path)) for path in root.rglob("*") if path.is_file() and "short" not in path.name) >= 260
    _windows_refuses_long_paths(monkeypatch)
    report = load_directory(root)
    assert sorted(r.file_path.rsplit("/", 1)[-1] for r in report.records) == [
        "2024-03-01.json", f"Kayak {'🛶' * 20}.md", "short.md"]
    assert messages(report) == []
    # the export's files are seen by what tells an update that they changed, too
    signature = vecbook.source_state.tree_signature(root / deep / "slack")
    assert len(signature) == 3 and all(stat is not None for _, _, stat in signature)


def test_the_long_path_prefix_names_a_drive_s_path_and_a_share_s() -> None:
    from vecbook.os_paths import long_form

    assert long_form("C:\\Users\\ana\\notes\\a.md") == "\\\\?\\C:\\Users\\ana\\notes\\a.md"
    assert long_form("\\\\nas\\notes\\a.md") == "\\\\?\\UNC\\nas\\notes\\a.md"
    assert long_form("\\\\?\\C:\\a.md") == "\\\\?\\C:\\a.md"


def test_unreadable_file(write_files: WriteFiles) -> None:
    root = write_files({"secret.txt": "Hidden.", "ok.txt": "Text."})
    secret = root / "secret.txt"
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):
            pytest.skip("running with privileges that read a mode-000 file (root)")
        report = load_directory(root)
    finally:
        secret.chmod(0o644)
    assert [r.file_path for r in report.records] == ["ok.txt"]
    assert messages(report) == ["secret.txt: cannot read file: Permission denied"]


def test_unreadable_folder(write_files: WriteFiles) -> None:
    root = write_files({"locked/inner.txt": "Hidden.", "ok.txt": "Text."})
    locked = root / "locked"
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running with privileges that read a mode-000 folder (root)")
        report = load_directory(root)
    finally:
        locked.chmod(0o755)
    assert [r.file_path for r in report.records] == ["ok.txt"]
    assert messages(report) == ["locked: cannot read folder: Permission denied"]


def test_a_file_unreadable_last_time_is_read_once_its_permissions_are_fixed(
        write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    # chmod changes neither size, mtime nor inode: a file skipped as unreadable must not stay
    # skipped (its content never seen) until its next edit.
    import vecbook.exports.base

    root = write_files({"ok.txt": "Text.", "secret.txt": "Fixed café notes 日记."})
    for note in root.iterdir():
        os.utime(note, (time.time() - 3600, time.time() - 3600))  # settled: not read again for that
    real = vecbook.exports.base._read_file

    def denied(path: Path, limit: int) -> bytes:
        if path.name == "secret.txt":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    state = vecbook.sources.SourceState()
    monkeypatch.setattr(vecbook.exports.base, "_read_file", denied)
    assert messages(load_directory(root, state)) == ["secret.txt: cannot read file: Permission denied"]
    still = load_directory(root, state)  # still unreadable: tried again, no new problem
    assert still.new_problems == [] and still.files_read == 0
    monkeypatch.setattr(vecbook.exports.base, "_read_file", real)
    fixed = load_directory(root, state)
    assert sorted(r.file_path for r in fixed.records) == ["ok.txt", "secret.txt"]
    assert fixed.problems == [] and fixed.files_read == 1


@pytest.mark.parametrize("format_name", ["notes", "markdown"])
def test_a_file_of_an_added_folder_unreadable_last_time_is_read_once_fixed(
        write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch, format_name: str) -> None:
    # An added folder's problems name their collection ("collection 'mine': cannot read file:
    # ..."): the same file must be tried again as one of the data directory is.
    import vecbook.exports.base
    from vecbook.config import CollectionConfig, Config

    root = write_files({"ok.md": "# Ok\nText.", "secret.md": "# Secret\nFixed café notes 日记."})
    for note in root.iterdir():
        os.utime(note, (time.time() - 3600, time.time() - 3600))
    real = vecbook.exports.base._read_file

    def denied(path: Path, limit: int) -> bytes:
        if path.name == "secret.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    config = Config(data_directory=None, collections=(
        CollectionConfig(name="mine", path=root, database_label=str(root), format=format_name),))
    state = vecbook.sources.SourceState()
    monkeypatch.setattr(vecbook.exports.base, "_read_file", denied)
    assert messages(vecbook.sources.load_sources(config, state)) == [
        "mine/secret.md: collection 'mine': cannot read file: Permission denied"]
    monkeypatch.setattr(vecbook.exports.base, "_read_file", real)
    fixed = vecbook.sources.load_sources(config, state)
    assert sorted({r.file_path for r in fixed.records}) == ["mine/ok.md", "mine/secret.md"]
    assert fixed.problems == []


@pytest.mark.parametrize("format_name", ["slack", "notes"])
def test_an_unreadable_file_in_an_added_export_does_not_make_each_update_read_the_export_again(
        write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch, format_name: str) -> None:
    # A Slack export with one day the user may not read: each update (the watcher's, after any
    # note's save) read the whole export again, only to find that file still unreadable. The
    # file is tried on its own; once it opens, the export is read again.
    import vecbook.exports.base
    from vecbook.config import CollectionConfig, Config

    days = {f"general/2024-03-{day:02d}.json": '[{"type": "message", "user": "U1", "text": "Kayak day %d", '
                                                '"ts": "17092%02d000.000100"}]' % (day, day) for day in range(1, 6)}
    export = write_files({"channels.json": '[{"id": "C1", "name": "general"}]', "users.json": "[]", **days})
    root = export if format_name == "slack" else export.parent
    for path in export.rglob("*"):
        os.utime(path, (time.time() - 3600, time.time() - 3600))  # settled: not read again for that
    real, reads = vecbook.exports.base._read_file, []

    def denied(path: Path, limit: int) -> bytes:
        reads.append(path.name)
        if path.name == "2024-03-03.json" and not fixed:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    config = Config(data_directory=None, collections=(
        CollectionConfig(name="chat", path=root, database_label=str(root), format=format_name),))
    state, fixed, exports_read = vecbook.sources.SourceState(), False, []
    monkeypatch.setattr(vecbook.exports.base, "_read_file", denied)
    for reader in ("read_file", "_load_one_collection"):  # a notes folder's export, an added export
        monkeypatch.setattr(vecbook.sources, reader, lambda *args, _read=getattr(vecbook.sources, reader):
                            exports_read.append(args) or _read(*args))
    first = vecbook.sources.load_sources(config, state)
    assert [p.reason.rsplit(": ", 1)[-1] for p in first.problems] == ["Permission denied"]
    reads.clear(), exports_read.clear()
    still = vecbook.sources.load_sources(config, state)
    assert exports_read == [] and "2024-03-03.json" in reads  # that file is tried, the export not read
    assert still.new_problems == [] and len(still.records) == 4
    fixed = True
    now = vecbook.sources.load_sources(config, state)
    assert len(now.records) == 5 and now.problems == []


def test_a_link_to_a_folder_above_in_an_added_export_reads_each_file_once(write_files: WriteFiles) -> None:
    # "up -> .." was followed 40 folders deep, until the OS refused the path: each message was a
    # record 41 times, with a WARN of a link loop at the bottom; two such links never finished
    from vecbook.config import CollectionConfig, Config

    root = write_files({"channels.json": '[{"id": "C1", "name": "general"}]', "users.json": "[]",
                        "general/2024-03-01.json": '[{"type": "message", "user": "U1", "text": "Kayak", '
                                                   '"ts": "1709201000.000100"}]'})
    (root / "general" / "up").symlink_to("..")
    config = Config(data_directory=None, collections=(
        CollectionConfig(name="chat", path=root, database_label=str(root), format="slack"),))
    report = vecbook.sources.load_sources(config, vecbook.sources.SourceState())
    assert [(r.citation, r.text) for r in report.records] == [("chat/general/2024-03-01.json:1-1#1709201000.000100",
                                                               "U1: Kayak")]
    assert messages(report) == []
    assert len(vecbook.source_state.tree_signature(root)) == 3


def test_a_broken_link_or_a_loop_in_an_added_export_is_said_so_and_does_not_make_each_update_read_it(
        write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    # read as "cannot read file: No such file or directory", a file to try again: the export
    # was read whole at every update
    from vecbook.config import CollectionConfig, Config

    root = write_files({"channels.json": '[{"id": "C1", "name": "general"}]', "users.json": "[]",
                        "general/2024-03-01.json": '[{"type": "message", "user": "U1", "text": "Kayak", '
                                                   '"ts": "1709201000.000100"}]'})
    (root / "general" / "2024-03-02.json").symlink_to(root / "elsewhere.json")
    (root / "general" / "2024-03-03.json").symlink_to("2024-03-04.json")
    (root / "general" / "2024-03-04.json").symlink_to("2024-03-03.json")
    for path in [root, *root.rglob("*")]:
        os.utime(path, (time.time() - 3600, time.time() - 3600), follow_symlinks=False)
    config = Config(data_directory=None, collections=(
        CollectionConfig(name="chat", path=root, database_label=str(root), format="slack"),))
    state = vecbook.sources.SourceState()
    first = vecbook.sources.load_sources(config, state)
    assert messages(first) == [
        "chat/general/2024-03-02.json: collection 'chat': broken symbolic link skipped",
        "chat/general/2024-03-03.json: collection 'chat': symbolic link loop skipped (its links lead to one another, "
        "never to a file)",
        "chat/general/2024-03-04.json: collection 'chat': symbolic link loop skipped (its links lead to one another, "
        "never to a file)"]
    read_again = []
    monkeypatch.setattr(vecbook.sources, "_load_one_collection", lambda *args: read_again.append(args))
    vecbook.sources.load_sources(config, state)
    assert read_again == []


def test_file_that_vanishes_after_discovery(write_files: WriteFiles) -> None:
    root = write_files({"gone.txt": "Soon deleted."})
    (rel, path), = discover_files(root)[0]
    path.unlink()
    records, problems = load_file(rel, path)
    assert records == []
    assert [str(p) for p in problems] == ["gone.txt: cannot read file: No such file or directory"]


def test_record_problems_carry_the_relative_path(write_files: WriteFiles) -> None:
    root = write_files({"sub/bad.txt": "ok\n---\n---\nTitle: only\n"})
    report = load_directory(root)
    assert messages(report) == ["sub/bad.txt:3: empty record skipped",
                                "sub/bad.txt:4: record has headers but no text; skipped"]


def test_a_refresh_compares_each_plain_file_by_the_lstat_that_listed_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # At 10,000 files every extra call a file is a share of a one-note update: a plain file is
    # listed and compared with one lstat, and a change is still seen.
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    for n in range(12):
        note = root / ("sub" if n % 2 else "") / f"note {n} 咖啡.md"
        note.write_text(f"# Note {n}\n\nbody {n} 🔥\n", encoding="utf-8")
        os.utime(note, (time.time() - 3600, time.time() - 3600))  # settled: a fresh file is read again (settling)
    state = vecbook.sources.SourceState()
    load_directory(root, state)
    followed: list[Path] = []
    original = Path.stat

    def stat(self: Path, *, follow_symlinks: bool = True) -> os.stat_result:
        if follow_symlinks and self.suffix == ".md":
            followed.append(self)
        return original(self, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(Path, "stat", stat)
    again = load_directory(root, state)
    assert followed == [] and again.files_read == 0 and len(again.records) == 12
    (root / "sub" / "note 3 咖啡.md").write_text("# Note 3\n\nedited 🔥 body\n", encoding="utf-8")
    os.utime(root / "sub" / "note 3 咖啡.md", ns=(1, 10**18))
    edited = load_directory(root, state)
    assert edited.files_read == 1 and any("edited" in r.content for r in edited.records)
