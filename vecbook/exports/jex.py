"""Joplin's JEX export (*File* > *Export all* > *JEX - Joplin Export File*): a tar of its RAW
export, one ``<id>.md`` item a note, notebook, tag or resource (``joplin``), and the resources'
files under ``resources/``. Read in place with ``tarfile``, nothing unpacked to disk: each note
as the Markdown reader reads a RAW note (its title, dates, a note in Joplin's trash left out),
in its notebook's path (``Personal/Travel``), cited as the archive's member
(``Joplin.jex!/<id>.md:3-5``).
"""

from __future__ import annotations

import io
import tarfile

from ..records import Record, read_text
from .base import CANNOT_READ, MAX_FILE_BYTES, Export, ExportFile
from .joplin import NOTEBOOK_TYPE, RawItem, notebook_path, raw_item
from .markdown import note_records

SUFFIX = ".jex"
# Where a tar header says which tar it is (POSIX ustar and GNU tar alike: "ustar"), as Joplin's writes it.
_TAR_MAGIC_AT, _TAR_MAGIC = 257, b"ustar"


def detect(export: Export) -> bool:
    """Files that are all JEX archives (``.jex``, a tar)."""
    files = export.files()
    return bool(files) and all(_is_jex(f) for f in files)


def read(export: Export) -> list[Record]:
    """Every note of every archive, in its notebook."""
    return export.read_each([f for f in export.files() if _is_jex(f)], lambda f: _archive_records(export, f))


def _is_jex(file: ExportFile) -> bool:
    head = file.head(_TAR_MAGIC_AT + len(_TAR_MAGIC))
    return file.name.lower().endswith(SUFFIX) and head[_TAR_MAGIC_AT:] == _TAR_MAGIC


def _archive_records(export: Export, file: ExportFile) -> list[Record]:
    """The notes of one archive: its items read first (a notebook may come after its notes)."""
    try:
        with _open(file) as archive:
            items = _items(export, file, archive)
    except tarfile.TarError as exc:
        export.warn(file, None, f"not a JEX archive Joplin wrote, or a damaged one ({exc}): export it again")
        return []
    notebooks = {item.properties.get("id", ""): item for _, _, item in items if item.kind == NOTEBOOK_TYPE}
    records: list[Record] = []
    for member, data, item in items:
        if item.is_note:  # (the reader leaves out a note in the trash, and says so)
            records.extend(note_records(export, member_file(file, member, data),
                                        notebook_path(item.properties.get("parent_id", ""), notebooks)))
    return records


def _open(file: ExportFile) -> tarfile.TarFile:
    """The archive, read where it lies (a file on disk), or from memory (a member of a zip)."""
    if file.path is not None:
        return tarfile.open(file.path, mode="r:")
    return tarfile.open(fileobj=io.BytesIO(file.read_bytes()), mode="r:")


def _items(export: Export, file: ExportFile, archive: tarfile.TarFile) -> list[tuple[str, bytes, RawItem]]:
    """(member name, its bytes, the item it is) for each RAW item at the archive's top; resources' files
    are skipped unread."""
    found = []
    for member in archive:
        name = member.name.removeprefix("./")
        if not member.isfile() or "/" in name or not name.lower().endswith(".md"):
            continue
        if member.size > MAX_FILE_BYTES:
            export.warn(f"{file.label}!/{name}", None, f"{member.size:,} bytes is over the {MAX_FILE_BYTES:,}-byte "
                                                       "limit for one export file")
            continue
        handle = archive.extractfile(member)  # (read from the archive into memory, not to disk)
        if handle is None:
            export.warn(f"{file.label}!/{name}", None, f"{CANNOT_READ}: not a plain file in the archive")
            continue
        data = handle.read()
        text = read_text(data, name)
        item = raw_item(name, text[0].split("\n")) if text is not None else None
        if item is not None:
            found.append((name, data, item))
    return found


def member_file(archive: ExportFile, name: str, data: bytes) -> ExportFile:
    """The archive's member ``name`` (read already) as a file of the export: ``<archive>!/<name>``."""
    return ExportFile(f"{archive.rel}!/{name}", f"{archive.label}!/{name}", len(data),
                      lambda limit, data=data: data[:limit])
