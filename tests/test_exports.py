"""Export collections: the reader framework (files, zips, JSON positions, windows, detection)."""

from __future__ import annotations

import io
import os
import re
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export
from vecbook.exports.base import MAX_WINDOW_WORDS, Export, Message, chat_records
from vecbook.exports.jsonpos import JsonText, JsonTextError

from conftest import EXPORTS, FakeEmbedder, assert_messages_cited


def export_collection(path: Path, name: str = "chats", fmt: str | None = None, gap: float = 30.0) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt, window_gap_minutes=gap)


# -- JSON positions --

def test_json_elements_carry_the_lines_they_occupy() -> None:
    text = '{\n  "a": 1,\n  "messages": [\n    {"id": 1},\n    {\n      "id": 2\n    }\n  ]\n}\n'
    doc = JsonText(text)
    spans = [(doc.lines(start, end), value) for start, end, value in doc.elements(doc.path(["messages"]))]
    assert spans == [((4, 4), {"id": 1}), ((5, 7), {"id": 2})]


def test_json_on_one_line_cites_line_one() -> None:
    doc = JsonText('{"messages": [{"id": 1}, {"id": 2}]}')
    assert [doc.lines(s, e) for s, e, _ in doc.elements(doc.path(["messages"]))] == [(1, 1), (1, 1)]


def test_json_missing_key_and_broken_text() -> None:
    doc = JsonText('{"a": {"b": []}}')
    assert doc.path(["a", "c"]) is None
    assert list(doc.elements(doc.path(["a", "b"]))) == []
    with pytest.raises(JsonTextError, match="line 2"):
        list(JsonText('{"m": [\n {"id": 1},, ]}').elements(JsonText('{"m": [\n {"id": 1},, ]}').path(["m"])))


# -- windows --

def _message(file, minute: int, text: str, author: str = "Ana", line: int = 1) -> Message:
    when = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc) + timedelta(minutes=minute)
    return Message("general", author, text, file, line, line, when=when, id=f"m{minute}")


def test_windows_break_at_a_pause_longer_than_the_gap(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    export = Export("chats", tmp_path, "chats", gap_minutes=30, format_name="test")
    file = export.files()[0]
    records = chat_records(export, [_message(file, 0, "hello"), _message(file, 10, "hi", "Bo", 2),
                                    _message(file, 41, "later", line=3)])
    assert [r.text for r in records] == ["Ana: hello\nBo: hi", "Ana: later"]
    first = records[0]
    assert first.metadata == {"date": "2024-03-01T09:00:00+00:00", "end_date": "2024-03-01T09:10:00+00:00",
                              "participants": ["Ana", "Bo"], "conversation": "general", "format": "test",
                              "message_count": 2}
    assert (first.line_number, first.end_line, first.citation) == (1, 2, "chats/x.json:1-2#m0")
    assert first.id == "chats:x.json#m0" and first.source == "chats"
    assert first.lines_of(first.text.index("hi"), len(first.text)) == (2, 2)


def test_windows_stay_under_the_model_window_and_a_long_message_stands_alone(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    export = Export("chats", tmp_path, "chats")
    file = export.files()[0]
    words = " ".join(["word"] * 90)
    long = " ".join(["long"] * (MAX_WINDOW_WORDS + 50))
    records = chat_records(export, [_message(file, i, words, line=i + 1) for i in range(3)]
                           + [_message(file, 3, long, line=4), _message(file, 4, "after", line=5)])
    assert [r.metadata["message_count"] for r in records] == [2, 1, 1, 1]
    assert all(len(r.text.split()) <= MAX_WINDOW_WORDS + 1 for r in records[:2])


# -- files and zips --

def test_zip_members_are_cited_inside_the_archive(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "export.zip", "w") as archive:
        archive.writestr("chan/2024-01-01.json", "[]")
        archive.writestr("__MACOSX/._junk", "x")
    export = Export("slack", tmp_path / "export.zip", "export.zip")
    assert [(f.rel, f.label) for f in export.files()] == [
        ("export.zip!/chan/2024-01-01.json", "slack/export.zip!/chan/2024-01-01.json")]
    assert export.files()[0].read_bytes() == b"[]"


def _zip_with_raw_names(path: Path, names: list[str], utf8_flag: bool) -> None:
    """A zip whose member names are UTF-8 bytes, with or without the UTF-8 flag (bit 11): Info-ZIP
    on Linux and many other tools write UTF-8 names and leave the flag unset."""
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "x")
    data = bytearray(path.read_bytes())
    if not utf8_flag:
        at = 0
        while (at := data.find(b"PK\x03\x04", at)) >= 0:
            data[at + 7] &= ~0x08
            at += 4
        at = 0
        while (at := data.find(b"PK\x01\x02", at)) >= 0:
            data[at + 9] &= ~0x08
            at += 4
    path.write_bytes(bytes(data))


def test_a_utf8_member_name_without_the_utf8_flag_is_read_as_utf8(tmp_path: Path) -> None:
    names = ["WhatsApp Chat with Семья.txt", "家族/メモ.txt", "café.txt"]
    _zip_with_raw_names(tmp_path / "x.zip", names, utf8_flag=False)
    assert sorted(f.rel for f in Export("x", tmp_path / "x.zip", "x.zip").files()) == sorted(
        f"x.zip!/{name}" for name in names)  # zipfile alone reads them as cp437: 'WhatsApp Chat with ╨í╨╡╨╝╤î╤Å.txt'


APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + b"\x00" * 60


def test_macos_appledouble_files_are_litter_in_folders_and_zips(tmp_path: Path) -> None:
    """macOS writes a '._' AppleDouble file beside each file it copies to a USB stick (FAT,
    exFAT) or a share, and into zips made from such a folder: binary metadata, never content
    (a vault held 76 of them, each a 'binary file' WARN)."""
    vault = tmp_path / "vault"
    (vault / "Trips").mkdir(parents=True)
    (vault / "Trips" / "Kyoto.md").write_text("# Kyoto\nTemples.\n")
    (vault / "Trips" / "._Kyoto.md").write_bytes(APPLE_DOUBLE)
    (vault / "._Trips").write_bytes(APPLE_DOUBLE)
    with zipfile.ZipFile(tmp_path / "vault.zip", "w") as archive:
        for path in sorted(vault.rglob("*")):
            archive.write(path, path.relative_to(vault).as_posix())
    assert [f.rel for f in Export("x", vault, "vault").files()] == ["Trips/Kyoto.md"]
    assert [f.rel for f in Export("x", tmp_path / "vault.zip", "vault.zip").files()] == ["vault.zip!/Trips/Kyoto.md"]
    records, problems, _ = load_export(export_collection(tmp_path / "vault.zip", fmt="markdown"))
    assert problems == [] and [r.text for r in records] == ["# Kyoto\nTemples."]


def test_a_zip_inside_a_zip_is_read_in_memory_too(tmp_path: Path) -> None:
    """An export zipped again (a WhatsApp '.zip' sent on in an 'Exports.zip', a Takeout folder
    of zips zipped for a backup): its members are cited through both archives."""
    inner = tmp_path / "inner.zip"
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("_chat.txt", "[14/03/2024, 09:05:12] Ana: the kayak leaks\n")
    with zipfile.ZipFile(tmp_path / "Exports.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(inner, "Chats/WhatsApp Chat - Ana.zip")
    inner.unlink()
    before = (tmp_path / "Exports.zip").read_bytes()
    assert detect_format(export_collection(tmp_path / "Exports.zip")) == "whatsapp"
    records, problems, _ = load_export(export_collection(tmp_path / "Exports.zip", fmt="whatsapp"))
    assert problems == [] and [r.citation for r in records] == [
        "chats/Exports.zip!/Chats/WhatsApp Chat - Ana.zip!/_chat.txt:1-1"]
    assert records[0].metadata["conversation"] == "Ana"
    assert (tmp_path / "Exports.zip").read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "Exports.zip"]  # nothing extracted


def test_zips_nested_past_two_deep_are_a_warning(tmp_path: Path) -> None:
    data = b"x"
    for depth in range(4):
        path = tmp_path / f"z{depth}.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(f"z{depth - 1}.zip" if depth else "a.txt", data)
        data = path.read_bytes()
    export = Export("x", tmp_path / "z3.zip", "z3.zip")
    assert export.files() == []
    assert [(p.where, p.reason) for p in export.problems] == [(
        "x/z3.zip!/z2.zip!/z1.zip", "collection 'x': zip archive not opened: it is a zip inside 2 zips, deeper than "
        "VecBook opens (a zip bomb's shape): unzip the outer one and add the folder it holds")]


def test_a_chat_zip_zipped_twice_over_names_the_zip_not_opened_and_what_to_do(tmp_path: Path) -> None:
    # a user's backup of a folder of exported chats, zipped once more: the chat's own zip is too deep
    data = b"[31/12/2023, 13:05:09] Ana: hi\n"
    for name, member in (("WhatsApp Chat - Ana.zip", "_chat.txt"), ("Chats.zip", "WhatsApp Chat - Ana.zip"),
                         ("Backup 2023.zip", "Chats.zip")):
        with zipfile.ZipFile(tmp_path / name, "w") as archive:
            archive.writestr(member, data)
        data = (tmp_path / name).read_bytes()
    with pytest.raises(vecbook.ConfigError, match=re.escape(
            "cannot tell the format of " + str(tmp_path / "Backup 2023.zip") + ": Backup 2023.zip!/Chats.zip!/"
            "WhatsApp Chat - Ana.zip: zip archive not opened: it is a zip inside 2 zips, deeper than VecBook opens "
            "(a zip bomb's shape): unzip the outer one and add the folder it holds")):
        load_export(export_collection(tmp_path / "Backup 2023.zip"))


def test_a_zip_member_past_the_file_limit_is_told_to_be_unpacked(tmp_path: Path) -> None:
    # a Takeout zip's mbox passes 1 GiB for a heavy Gmail user: unpacked, it is read in pieces
    from vecbook.exports.base import Export

    with zipfile.ZipFile(tmp_path / "takeout.zip", "w") as archive:
        archive.writestr("Takeout/Mail/All mail.mbox", "From a@b Mon Mar  4 11:15:00 2024\n\nhi\n" * 10)
    (tmp_path / "mail.mbox").write_text("From a@b Mon Mar  4 11:15:00 2024\n\nhi\n" * 10, encoding="utf-8")
    [member] = Export("x", tmp_path / "takeout.zip", "takeout.zip").files()
    with pytest.raises(ValueError, match="limit for one export file; unpack the zip and add the folder"):
        member.read_bytes(limit=100)
    [on_disk] = Export("x", tmp_path / "mail.mbox", "mail.mbox").files()
    with pytest.raises(ValueError, match="limit for one export file$"):
        on_disk.read_bytes(limit=100)


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED], ids=["deflated", "stored"])
def test_a_compressed_zip_inside_a_zip_past_the_file_limit_says_so_a_stored_one_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: int) -> None:
    # a compressed zip inside a zip is unpacked in memory to be opened; a stored one (Info-ZIP's
    # `zip` stores a .zip member) is opened where it lies in the outer file, whatever its size
    monkeypatch.setattr(vecbook.exports.base, "MAX_FILE_BYTES", 200)
    with zipfile.ZipFile(tmp_path / "inner.zip", "w") as archive:
        archive.writestr("notes/a.md", "# A\n\n" + "text " * 100)
    with zipfile.ZipFile(tmp_path / "outer.zip", "w", compression=compression) as archive:
        archive.write(tmp_path / "inner.zip", "export.zip")
    size = (tmp_path / "inner.zip").stat().st_size
    export = Export("x", tmp_path / "outer.zip", "outer.zip")
    if compression == zipfile.ZIP_STORED:
        [member] = export.files()
        assert export.problems == [] and member.rel == "outer.zip!/export.zip!/notes/a.md"
        assert member.read_bytes(limit=1000).startswith(b"# A\n\ntext text")
        return
    assert export.files() == []
    assert [p.reason for p in export.problems] == [
        f"collection 'x': zip archive not opened: it is {size:,} bytes, over the 200 bytes VecBook reads of a zip "
        f"inside a zip: unzip the outer one and add the folder it holds"]


def test_a_zip_bomb_is_refused_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.exports.zips, "MAX_ZIP_TOTAL_BYTES", 1000)
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.json", b"0" * 5000)
    export = Export("x", tmp_path / "bomb.zip", "bomb.zip")
    assert export.files() == []
    assert "zip archive refused" in str(export.problems[0]) and "bomb.zip" in str(export.problems[0])


def test_a_zip_larger_than_the_limit_is_read_for_the_members_read(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A WhatsApp chat exported with media, a Google Takeout part, is 1 to 50 GB of photos and
    videos stored as they are, around a text that VecBook reads: the limit is on what is unpacked
    and read, not on the zip's size (it was refused past 4 GiB, as read into memory whole)."""
    monkeypatch.setattr(vecbook.exports.zips, "MAX_ZIP_TOTAL_BYTES", 1000)
    with zipfile.ZipFile(tmp_path / "takeout-001.zip", "w") as archive:  # stored, as Takeout's media are
        archive.writestr("Takeout/Photos/IMG_0001.jpg", bytes(range(256)) * 8)
        archive.writestr("Takeout/notes.txt", "the kayak leaks")
    export = Export("x", tmp_path / "takeout-001.zip", "takeout-001.zip")
    assert [f.rel for f in export.files()] == ["takeout-001.zip!/Takeout/Photos/IMG_0001.jpg",
                                               "takeout-001.zip!/Takeout/notes.txt"]
    assert export.files()[1].read_text() == "the kayak leaks" and export.problems == []


class _Sparse(io.FileIO):
    """A file whose large writes (a test's video) are holes: the test costs no disk writes."""

    def write(self, data: Any) -> int:
        if len(data) < 1 << 20:
            return super().write(data)
        self.seek(len(data), os.SEEK_CUR)
        return len(data)


def _chat_beside_media(path: Path, media_bytes: int, nested: bool) -> None:
    """A WhatsApp chat exported with media: a small _chat.txt beside a large video stored as it is
    (on iOS, the zip "WhatsApp Chat - Ana.zip"); ``nested``: that zip stored in another (a backup)."""
    def fill(archive: zipfile.ZipFile) -> None:
        archive.writestr("_chat.txt", "[14/03/2024, 09:05:12] Ana: the kayak leaks\n")
        archive.writestr("00000012-VIDEO-2024-03-14-09-05-20.mp4", bytes(media_bytes))

    with _Sparse(path, "w") as file, zipfile.ZipFile(file, "w") as archive:
        if not nested:
            fill(archive)
            return
        with archive.open("Chats/WhatsApp Chat - Ana.zip", "w") as member, zipfile.ZipFile(member, "w") as inner:
            fill(inner)


@pytest.mark.parametrize("nested", [False, True])
def test_a_zip_is_read_from_disk_only_its_members_read_in_memory(tmp_path: Path, nested: bool) -> None:
    """A laptop holds the 100 KB chat in memory, not the 1-4 GB zip of the photos and videos
    around it (the whole zip was read into memory at each read of the source)."""
    import tracemalloc

    from vecbook.exports import reader

    _chat_beside_media(tmp_path / "Ana.zip", 32 << 20, nested)
    reader("whatsapp")  # (its import is no part of the read)
    tracemalloc.start()
    try:
        records, problems, _ = load_export(export_collection(tmp_path / "Ana.zip", fmt="whatsapp"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems == [] and [r.text for r in records] == ["Ana: the kayak leaks"]
    assert peak < 1 << 20, f"{peak:,} bytes held to read a 32 MB zip"


def _handles_on(*paths: Path) -> list[str]:
    """The process's open file descriptors on ``paths`` (Linux)."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            if Path(os.readlink(fd)) in paths:
                found.append(fd.name)
        except OSError:
            pass
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="open files listed by /proc (Linux)")
def test_no_handle_on_a_zip_is_held_between_reads(tmp_path: Path) -> None:
    # on Windows an open handle keeps the user from deleting, renaming or replacing the zip
    _chat_beside_media(tmp_path / "Ana.zip", 1000, nested=True)
    export = Export("x", tmp_path / "Ana.zip", "Ana.zip")
    files = export.files()
    assert _handles_on(tmp_path / "Ana.zip") == []
    assert files[-1].read_text().startswith("[14/03/2024") and files[0].head(4) == bytes(4)
    assert _handles_on(tmp_path / "Ana.zip") == []
    with export.reading():  # a reader's read: the zip stays open from one member read to the next
        assert files[-1].read_text().startswith("[14/03/2024") and files[0].head(4) == bytes(4)
        assert len(_handles_on(tmp_path / "Ana.zip")) == 1
    assert _handles_on(tmp_path / "Ana.zip") == []


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="open files listed by /proc (Linux)")
def test_a_read_keeps_few_zips_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a folder of chat zips: macOS lets a process open 256 files
    monkeypatch.setattr(vecbook.exports.zips, "MAX_HELD_ZIPS", 2)
    paths = [tmp_path / f"WhatsApp Chat - {name}.zip" for name in ("Ana", "Bo", "Cy")]
    for path in paths:
        _chat_beside_media(path, 10, nested=False)
    export = Export("x", tmp_path, "chats")
    with export.reading():
        assert all(file.head(1) for file in export.files())
        assert len(_handles_on(*paths)) == 2
    assert _handles_on(*paths) == []


@pytest.mark.parametrize("change, why", [
    (lambda p: os.truncate(p, 50), "file skipped: ValueError: the archive is damaged (Truncated file header): "
                                    "download or export it again"),
    (lambda p: p.write_bytes(b"PK\x03\x04" + bytes(400)), "file skipped: ValueError: the archive is damaged "
                                                           "(Bad magic number for file header)"),
    (lambda p: p.unlink(), "cannot read file: No such file or directory"),
])
def test_a_zip_cut_short_or_changed_after_it_was_listed_is_a_warning(tmp_path: Path, change: Any, why: str) -> None:
    with zipfile.ZipFile(tmp_path / "x.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.txt", "first")
        archive.writestr("b.txt", "second")
    export = Export("x", tmp_path / "x.zip", "x.zip")
    files = export.files()
    change(tmp_path / "x.zip")
    assert export.read_each(files[1:], lambda f: [f.read_text()]) == []
    assert [p.where for p in export.problems] == ["x/x.zip!/b.txt"]
    assert export.problems[0].reason.startswith(f"collection 'x': {why}")
    assert files[1].head() == b"" and files[1].fault is not None


def test_a_member_lying_about_its_size_stops_at_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with zipfile.ZipFile(tmp_path / "a.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.json", b"0" * 5000)
    export = Export("x", tmp_path / "a.zip", "a.zip")
    member = export.files()[0]
    member.size = 10  # as a forged header would claim
    with pytest.raises(ValueError, match="limit"):
        member.read_bytes(limit=100)


def _damaged_zip(path: Path) -> None:
    """A zip whose member's compressed bytes are garbled (a bad disk, a broken transfer)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("WhatsApp Chat with Ana.txt", "[3/14/24, 9:05 AM] Ana: the kayak leaks\n" * 50)
    data = bytearray(path.read_bytes())
    for i in range(60, 70):  # inside the member's compressed bytes, after its 56-byte header
        data[i] ^= 0x55
    path.write_bytes(bytes(data))


def _encrypted_zip(path: Path) -> None:
    """A password-protected zip: its member's general-purpose flag has the encryption bit."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("WhatsApp Chat with Ana.txt", "[3/14/24, 9:05 AM] Ana: hi\n")
    data = bytearray(path.read_bytes())
    data[6] |= 1  # the local header's flag
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 1  # the central directory's flag, which zipfile reads
    path.write_bytes(bytes(data))


def _deflate64_zip(path: Path) -> None:
    """A zip compressed with Deflate64 (method 9), as Windows' Explorer and 7-Zip write large
    files, which Python's zipfile cannot decompress."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("WhatsApp Chat with Ana.txt", "[3/14/24, 9:05 AM] Ana: hi\n")
    data = bytearray(path.read_bytes())
    data[8] = 9  # the local header's method
    data[data.index(b"PK\x01\x02") + 10] = 9  # the central directory's, which zipfile reads
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("make, why", [
    (lambda p: p.write_bytes(b"PK\x03\x04" + b"\x00" * 40), "cannot read zip archive: File is not a zip file "
     "(a download cut short, or a damaged file: download or export it again)"),
    (lambda p: zipfile.ZipFile(p, "w").close(), "the zip archive is empty"),
    (_damaged_zip, "cannot read x.zip!/WhatsApp Chat with Ana.txt: the archive is damaged (Error -3 while "
     "decompressing data: "),
    (_encrypted_zip, "x.zip!/WhatsApp Chat with Ana.txt is encrypted (the zip has a password), which VecBook does "
     "not read: unzip it with its password and add the folder"),
    (_deflate64_zip, "cannot read x.zip!/WhatsApp Chat with Ana.txt: it is compressed in a way VecBook cannot "
     "unpack (Deflate64, PPMd...: That compression method is not supported): unzip it and add the folder"),
])
def test_a_zip_that_cannot_be_read_says_why_rather_than_no_format(tmp_path: Path, make: Any, why: str) -> None:
    path = tmp_path / "x.zip"
    make(path)
    with pytest.raises(vecbook.ConfigError, match=re.escape(f"cannot tell the format of {path}: {why}")):
        detect_format(export_collection(path))


@pytest.mark.parametrize("name, kind", [("chat.tar.gz", ".tar.gz"), ("Takeout.tgz", ".tgz"), ("chat.7z", ".7z"),
                                        ("chat.rar", ".rar"), ("chat.tar", ".tar")])
def test_an_archive_of_another_kind_is_named_with_what_to_do(tmp_path: Path, name: str, kind: str) -> None:
    (tmp_path / name).write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 40)
    with pytest.raises(vecbook.ConfigError, match=re.escape(
            f"it is a {kind} archive, which VecBook does not read: unpack it and add the folder it holds "
            f"(a .zip is read as it is)")):
        detect_format(export_collection(tmp_path / name))


# -- detection and loading --

def test_an_unknown_format_is_a_config_error_listing_the_formats(tmp_path: Path) -> None:
    with pytest.raises(vecbook.ConfigError, match=r"unknown format 'skype'.*discord"):
        detect_format(export_collection(tmp_path, fmt="skype"))
    with pytest.raises(vecbook.ConfigError, match=r"unknown format 'whatsap' \(did you mean 'whatsapp'\?\) \("):
        detect_format(export_collection(tmp_path, fmt="whatsap"))


def test_a_path_no_format_recognises_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"a": 1}')
    with pytest.raises(vecbook.ConfigError, match=r"cannot tell the format .*no format recognises it.*format ="):
        detect_format(export_collection(tmp_path))
    (tmp_path / "notes.json").unlink()  # a folder of files no reader opens: no format would read it
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(vecbook.ConfigError, match=r"cannot tell the format .*: it holds no notes \(.md, .txt\) and no "
                                                  r"export VecBook reads, only 1 file it does not open \(.csv\)$"):
        detect_format(export_collection(tmp_path))


def test_a_missing_export_is_a_warning_not_a_failed_start(tmp_path: Path) -> None:
    records, problems, _ = load_export(export_collection(tmp_path / "gone"))
    assert records == [] and "export not found" in str(problems[0])


def test_a_truncated_file_keeps_its_whole_messages_and_warns_at_the_break(tmp_path: Path) -> None:
    good = (EXPORTS / "discord" / "chat-analytics_GC_3A_5M.json").read_text(encoding="utf-8")
    (tmp_path / "good.json").write_text(good, encoding="utf-8")
    # another channel's export, cut (the same channel's would be read once, from good.json)
    cut = good[: good.index('"woah')].replace('"a group chat"', '"another group chat"', 1)
    (tmp_path / "bad.json").write_text(cut, encoding="utf-8")
    records, problems, facts = load_export(export_collection(tmp_path))
    counts = sorted((r.file_path, r.metadata["message_count"]) for r in records)
    assert counts == [("chats/bad.json", 2), ("chats/good.json", 1), ("chats/good.json", 2)]
    assert len(problems) == 1 and problems[0].where == "chats/bad.json"
    assert problems[0].line == good[: good.index('"woah')].count("\n") + 1


def test_config_reads_export_collections(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "vecbook.toml").write_text(
        'data_directory = "data"\n[[collections]]\nname = "dc"\npath = "exports/discord"\n'
        'format = "Discord"\nwindow_gap_minutes = 10\n')
    config = vecbook.load_config(tmp_path / "vecbook.toml")
    (collection,) = config.collections
    assert (collection.path, collection.format, collection.window_gap_minutes) == (
        tmp_path / "exports/discord", "discord", 10.0)


@pytest.mark.parametrize("table, message", [
    ('name = "x"\npath = "p"\ndatabase = "d.db"', "either 'database'"),
    ('name = "x"', "either 'database'"),
    ('name = "x"\npath = "p"\nquery = "SELECT 1"', "'query' applies to a SQLite"),
    ('name = "x"\ndatabase = "d.db"\nformat = "slack"', "'format' applies to exports"),
    ('name = "x"\npath = "p"\nwindow_gap_minutes = 0', "window_gap_minutes"),
    ('name = "x"\npath = "p"\nformat = 3', "must be str"),
])
def test_bad_export_tables_are_config_errors(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "vecbook.toml").write_text(f"[[collections]]\n{table}\n")
    with pytest.raises(vecbook.ConfigError, match=message):
        vecbook.load_config(tmp_path / "vecbook.toml")


def test_an_export_is_searched_beside_the_notes(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("the chiptune tracker manual\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "discord"\npath = "{EXPORTS / "discord"}"\n')
    config = vecbook.load_config(tmp_path / "vecbook.toml")
    book = vecbook.VecBook(config=config, embedder=FakeEmbedder())
    hits = book.search("reactions", mode="keyword", filters={"source": "discord"})
    assert hits[0].citation.startswith("discord/chat-analytics_SV_5A_5M.json:")
    assert book.stats()["collections"]["discord"]["format"] == "discord"
    hit = book.search("attachments stickers", mode="keyword")[0]
    records, _, _ = load_export(export_collection(EXPORTS / "discord", name="discord"))
    assert_messages_cited(EXPORTS / "discord", next(r for r in records if r.id == hit.id))
    hits = book.search("nickname", mode="keyword", filters={"participants__contains": "mlomb",
                                                            "date__gte": "2018-01-01"})
    assert hits and all("mlomb" in h.metadata["participants"] for h in hits)
