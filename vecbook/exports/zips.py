"""Zip archives read as an export's files: their members listed and read in memory (nothing is
extracted to disk), a zip inside a zip opened too, all within the limits that keep a zip bomb out.

``Zips.members`` yields each member as a ``ZipMember`` (its path inside the export, its size, a
read callback); ``base.Export`` makes them its ``ExportFile``s. This module knows nothing of
exports: what it warns of goes to the ``warn`` it is given, with the path of the archive at fault.
"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from ..records import CANNOT_READ

# A zip's members may expand to at most this much in all (and no member past
# MAX_FILE_BYTES). A zip bomb (a few KB that inflate to terabytes) is refused
# with a WARN before it is read, and the reads themselves stop at the limits, so
# a member whose header lies about its size cannot slip past.
MAX_ZIP_TOTAL_BYTES = 4 << 30
# A zip inside a zip is opened too (an export zipped again), this many archives deep at most:
# a zip of zips of zips is a zip bomb's shape (42.zip), no app's export.
MAX_ZIP_DEPTH = 2
# Why a password-protected zip member is not read (VecBook never asks for passwords).
ENCRYPTED = "encrypted (the zip has a password), which VecBook does not read"


class ZipMember(NamedTuple):
    """One member of a zip: ``rel`` is "<archive>!/<member>", ``read(limit)`` its bytes."""

    rel: str
    size: int
    read: Callable[[int], bytes]


@dataclass(frozen=True)
class Zips:
    """How an export opens its zips: what it warns with (the archive's path inside the export, the
    reason), which member names are the OS's litter, and the most one member may hold."""

    warn: Callable[[str, str], None]
    is_litter: Callable[[str], bool]
    file_limit: int

    def members(self, path: Path, rel: str) -> Iterator[ZipMember]:
        """The members of the zip ``path`` (cited as ``rel``), and those of the zips inside it."""
        try:
            size = path.stat().st_size
            if size > MAX_ZIP_TOTAL_BYTES:  # (its members expand to more still: refused before it fills memory)
                self.warn(rel, f"zip archive refused: it is {size:,} bytes, over the "
                               f"{MAX_ZIP_TOTAL_BYTES:,} bytes VecBook reads from a zip in "
                               f"memory: unpack it and add the folder it holds")
                return
            data = path.read_bytes()  # read once, into memory: nothing is extracted to disk
        except OSError as exc:
            self.warn(rel, f"{CANNOT_READ}: {exc.strerror or exc}")
            return
        yield from self._archive_members(data, rel, [MAX_ZIP_TOTAL_BYTES], 1)

    def _archive_members(self, data: bytes, rel: str, budget: list[int], depth: int) -> Iterator[ZipMember]:
        """A zip's members, read from ``data``; a zip among them is opened in memory too (up to
        MAX_ZIP_DEPTH deep), all of them drawing on one ``budget`` of expanded bytes."""
        try:
            archive = zipfile.ZipFile(_BytesReader(data))
            members = [m for m in archive.infolist() if not m.is_dir()]
        except (zipfile.BadZipFile, ValueError) as exc:
            self.warn(rel, f"cannot read zip archive: {exc} (a download cut short, or a "
                           f"damaged file: download or export it again)")
            return
        total = sum(m.file_size for m in members)
        if total > budget[0]:
            self.warn(rel, f"zip archive refused: its members expand to {total:,} bytes, "
                           f"over the {MAX_ZIP_TOTAL_BYTES:,}-byte limit (a zip bomb?)")
            return
        for member in sorted(members, key=member_name):
            inside = member_name(member)
            name = inside.rsplit("/", 1)[-1]
            if not name or self.is_litter(name) or inside.startswith("__MACOSX/"):  # (no name: a folder)
                continue
            member_rel = f"{rel}!/{inside}"
            if name.lower().endswith(".zip"):
                yield from self._inner_zip(archive, member, member_rel, budget, depth)
                continue
            yield ZipMember(member_rel, member.file_size,
                            lambda limit, m=member: _read_member(archive, m, limit, budget))

    def _inner_zip(self, archive: zipfile.ZipFile, member: zipfile.ZipInfo, rel: str, budget: list[int],
                   depth: int) -> Iterator[ZipMember]:
        """A zip inside a zip (an export zipped again), opened in memory as its outer one was."""
        if depth >= MAX_ZIP_DEPTH:
            self.warn(rel, f"zip archive not opened: it is a zip inside {MAX_ZIP_DEPTH} zips, "
                           f"deeper than VecBook opens (a zip bomb's shape): unzip the outer "
                           f"one and add the folder it holds")
            return
        if member.file_size > self.file_limit:  # (a read cut at the limit would be no zip, "damaged": it is not)
            self.warn(rel, f"zip archive not opened: it is {member.file_size:,} bytes, over the "
                           f"{self.file_limit:,} bytes VecBook reads of a zip inside a zip: unzip "
                           f"the outer one and add the folder it holds")
            return
        try:
            data = _read_member(archive, member, self.file_limit, budget)
        except ValueError as exc:
            self.warn(rel, f"cannot read zip archive: {exc}")
            return
        yield from self._archive_members(data, rel, budget, depth + 1)


def member_name(member: zipfile.ZipInfo) -> str:
    """A zip member's path as the tool that made the zip wrote it. A name without the UTF-8 flag
    is cp437 by the zip spec, and zipfile reads it so; but Info-ZIP on Linux, macOS's tools and
    others write UTF-8 names without the flag, which cp437 turns into 'Chat with ╨í╨╡╨╝╤î╤Å'
    (a WhatsApp conversation named that, a citation no one can find). Bytes that are valid
    UTF-8 are read as UTF-8 (cp437 text with accents almost never is); others stay cp437.
    Backslashes are folders, as every unzip reads them: Windows tools (PowerShell 5's
    Compress-Archive) write ``general\\2024-03-01.json``, which the spec forbids and no name
    on Windows can hold."""
    name = member.filename
    if not (member.flag_bits & 0x800 or name.isascii()):
        try:
            name = name.encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return name.replace("\\", "/")


class _BytesReader:
    """A seekable view of bytes for zipfile (io.BytesIO would copy them)."""

    def __init__(self, data: bytes) -> None:
        self._view = memoryview(data)
        self._pos = 0

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, size: int = -1) -> bytes:
        end = len(self._view) if size is None or size < 0 else self._pos + size
        chunk = bytes(self._view[self._pos:end])
        self._pos += len(chunk)
        return chunk


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, limit: int, budget: list[int]) -> bytes:
    """A zip member's bytes, stopping at ``limit`` and at what is left of the archive's budget."""
    allowed = min(limit, budget[0] + 1)
    if member.flag_bits & 0x1:  # zipfile would ask for the password (a RuntimeError)
        raise ValueError(f"{ENCRYPTED}: unzip it with its password and add the folder")
    try:
        with archive.open(member) as handle:
            data = handle.read(allowed)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # garbled bytes, a bad CRC, a cut-short member
        raise ValueError(f"the archive is damaged ({exc}): download or export it again") from None
    except NotImplementedError as exc:  # Deflate64 (Windows' Explorer, 7-Zip), PPMd: zipfile cannot unpack them
        raise ValueError(f"it is compressed in a way VecBook cannot unpack (Deflate64, PPMd...: {exc}): "
                         f"unzip it and add the folder") from None
    budget[0] -= len(data)
    if budget[0] < 0:
        raise ValueError(f"the archive expands past the {MAX_ZIP_TOTAL_BYTES:,}-byte limit (a zip bomb?)")
    return data
