"""Record contents kept in the keyword cache file and read back when a hit is shown: the file's
``texts`` member (every record's content in UTF-8, one after another, written a chunk at a
time), the references restored records hold into it (``FileTexts`` and a byte range), and the
records of a first build adopting the file once it is saved."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Sequence

import numpy as np

from .records import Record

log = logging.getLogger("vecbook")

TEXT_CHUNK = 8 << 20  # bytes of record texts read or written at a time when the file is saved
# A stored content's reference: its first byte in the file's texts, shifted past its size.
REF_SHIFT = 32
REF_SIZE = (1 << REF_SHIFT) - 1


def text_size(record: Record) -> int:
    """The bytes of a record's content in UTF-8 (a stored one's, without reading it)."""
    stored = record.stored_in
    return stored[1] & REF_SIZE if stored is not None else len(record.content.encode("utf-8", "surrogatepass"))


class FileTexts:
    """Record contents read back from a keyword cache file (a stretch of its ``texts``), which
    stays open for as long as a record refers to it: a save that replaces the file leaves this
    one readable (POSIX keeps a renamed-over file for whoever holds it open)."""

    def __init__(self, file: BinaryIO, offset: int, size: int) -> None:
        self._file = file  # held while records refer to it
        self._offset, self.size = offset, size

    def read(self, ref: int) -> str:
        """The content that ``ref`` names."""
        return self.read_bytes(ref).decode("utf-8", "surrogatepass")

    def read_bytes(self, ref: int) -> bytes:
        """The UTF-8 bytes ``ref`` names."""
        start, size = ref >> REF_SHIFT, ref & REF_SIZE
        data = os.pread(self._file.fileno(), size, self._offset + start)
        if len(data) != size:
            raise ValueError(f"the keyword cache {self._file.name} was cut short while in use")
        return data

    def __del__(self) -> None:
        self._file.close()


class Replaced(ValueError):
    """The file at a path is another than the one opened a moment before: a process replaced it."""


def file_identity(file: Any) -> tuple[int, int]:
    """(device, inode) of an open file."""
    info = os.fstat(file.fileno())
    return info.st_dev, info.st_ino


def opened_texts(path: Path, size: int, identity: tuple[int, int]) -> FileTexts:
    """The ``texts`` of the file at ``path``, checked to be the file ``identity`` names (another
    process may replace it at any moment) and to hold ``size`` bytes."""
    import zipfile

    file = open(path, "rb")  # noqa: SIM115 - FileTexts holds it, or it is closed here
    try:
        if file_identity(file) != identity:
            raise Replaced("another process replaced it meanwhile")
        with zipfile.ZipFile(file) as archive:  # a file passed in stays open
            info = archive.getinfo("texts.npy")
        file.seek(info.header_offset)
        local = file.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise ValueError("its texts are not where its index says")
        names, extra = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
        file.seek(info.header_offset + 30 + names + extra)
        version = np.lib.format.read_magic(file)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(file)
        if shape != (size,) or dtype != np.uint8:
            raise ValueError("its texts do not agree with its records")
        return FileTexts(file, file.tell(), size)
    except BaseException:
        file.close()
        raise


def write_npz(out: BinaryIO, arrays: dict[str, np.ndarray], records: Sequence[Record], size: int) -> None:
    """``np.savez``'s file, with one more member, ``texts``: every record's content in UTF-8, one
    after the other, written a chunk at a time rather than gathered (450 MB at a million records)."""
    import zipfile

    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
        with archive.open("texts.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_2_0(member, {"descr": "|u1", "fortran_order": False, "shape": (size,)})
            for chunk in _text_chunks(records):
                member.write(chunk)


def _text_chunks(records: Sequence[Record]) -> Iterator[bytes]:
    """The records' contents in UTF-8, joined into chunks of about TEXT_CHUNK bytes; the
    contents of stored records that follow each other in their file are read in one go."""
    pending: list[bytes] = []
    held = 0
    run: list[Any] | None = None  # [texts, first byte, end] of stored contents that follow each other
    for record in records:
        stored = record.stored_in
        if stored is not None and isinstance(stored[0], FileTexts):
            texts, ref = stored
            start = ref >> REF_SHIFT
            end = start + (ref & REF_SIZE)
            if run is not None and run[0] is texts and run[2] == start and end - run[1] <= TEXT_CHUNK:
                run[2] = end
                continue
            if run is not None:
                pending.append(run[0].read_bytes((run[1] << REF_SHIFT) | (run[2] - run[1])))
                held += len(pending[-1])
            run = [texts, start, end]
        else:
            if run is not None:
                pending.append(run[0].read_bytes((run[1] << REF_SHIFT) | (run[2] - run[1])))
                held += len(pending[-1])
                run = None
            pending.append(record.content.encode("utf-8", "surrogatepass"))
            held += len(pending[-1])
        if held >= TEXT_CHUNK:
            yield b"".join(pending)
            pending, held = [], 0
    if run is not None:
        pending.append(run[0].read_bytes((run[1] << REF_SHIFT) | (run[2] - run[1])))
    if pending:
        yield b"".join(pending)


def adopt_texts(records: Sequence[Record], sizes: np.ndarray, path: Path, identity: tuple[int, int]) -> None:
    """Let records that hold their contents read them back from the file just written instead
    (the file's texts are the records' in order). Stored ones keep their file: a reader takes a
    record's reference and its file one after the other, so only a held content may change."""
    if all(record.stored_in is not None for record in records):
        return
    try:
        texts = opened_texts(path, int(sizes.sum()), identity)
    except (OSError, ValueError, KeyError) as exc:
        log.info("keyword cache %s: record texts stay in memory (%s)", path, exc)
        return
    put = object.__setattr__
    for record, start, size in zip(records, _text_starts(sizes), sizes.tolist()):
        if record.stored_in is None:
            put(record, "_texts", texts)  # first: the content is still held while the file is set
            put(record, "_content", (start << REF_SHIFT) | size)


def _text_starts(sizes: np.ndarray) -> list[int]:
    """Each content's first byte among the texts (Python ints: past 4 GB of text a shifted
    reference no longer fits 64 bits)."""
    return [0, *np.cumsum(sizes)[:-1].tolist()] if len(sizes) else []
