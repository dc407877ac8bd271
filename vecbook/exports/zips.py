"""Zip archives read as an export's files: their members listed and read from the zip where it
lies (nothing is extracted to disk, the zip is never read whole into memory), a zip inside a zip
opened too, all within the limits that keep a zip bomb out.

``Zips.members`` yields each member as a ``ZipMember`` (its path inside the export, its size, a
read callback); ``base.Export`` makes them its ``ExportFile``s. This module knows nothing of
exports: what it warns of goes to the ``warn`` it is given, with the path of the archive at fault.
"""

from __future__ import annotations

import errno
import struct
import threading
import zipfile
import zlib
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, ContextManager, Iterator, NamedTuple, TypeVar, Union

from ..records import CANNOT_READ

# What VecBook reads of a zip's members, unpacked, at most in all (and no member past
# MAX_FILE_BYTES): a zip bomb (a few KB that inflate to terabytes) is refused with a WARN
# before it is read, and the reads themselves stop at the limits, so a member whose header
# lies about its size cannot slip past. The zip's own size is no limit: only the members read
# are held in memory, so a WhatsApp chat exported with its media (1-4 GB of photos and videos
# around a 100 KB _chat.txt) or a 50 GB Google Takeout part costs what its texts do.
MAX_ZIP_TOTAL_BYTES = 4 << 30
# A zip inside a zip is opened too (an export zipped again), this many archives deep at most:
# a zip of zips of zips is a zip bomb's shape (42.zip), no app's export.
MAX_ZIP_DEPTH = 2
# Through one read of an export, this many zips at most are kept open from one member read to
# the next (an open costs ~35 us on Linux, more on Windows: a Slack export's thousands of day
# files read through one zip); few, as macOS lets a process open 256 files.
MAX_HELD_ZIPS = 8
# Why a password-protected zip member is not read (VecBook never asks for passwords).
ENCRYPTED = "encrypted (the zip has a password), which VecBook does not read"
_T = TypeVar("_T")


class ZipMember(NamedTuple):
    """One member of a zip: ``rel`` is "<archive>!/<member>", ``read(limit)`` its bytes."""

    rel: str
    size: int
    read: Callable[[int], bytes]


class HeldZips:
    """The zips kept open between member reads while ``held`` (one read of an export), the
    MAX_HELD_ZIPS used last, all closed when the last ``held`` block ends. Outside it each read
    opens the zip and closes it after: no handle is held once the read is over."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds = 0
        self._kept: dict[_DiskFile, None] = {}  # in the order last used

    @contextmanager
    def held(self) -> Iterator[None]:
        """The zips read within the block kept open until it ends."""
        with self._lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
                done = list(self._kept) if self._holds == 0 else []
                if done:
                    self._kept.clear()
            for file in done:
                file.close_if_idle()

    def keep(self, file: _DiskFile) -> bool:
        """Whether ``file``, just read, stays open (the one used longest ago closed past the limit)."""
        with self._lock:
            if not self._holds:
                return False
            self._kept.pop(file, None)
            self._kept[file] = None
            dropped = next(iter(self._kept)) if len(self._kept) > MAX_HELD_ZIPS else None
            if dropped is not None:
                del self._kept[dropped]
        if dropped is not None:
            dropped.close_if_idle()
        return True


@dataclass(frozen=True)
class Zips:
    """How an export opens its zips: what it warns with (the archive's path inside the export, the
    reason), which member names are the OS's litter, the most one member may hold, and which
    zips are kept open between reads (``HeldZips``)."""

    warn: Callable[[str, str], None]
    is_litter: Callable[[str], bool]
    file_limit: int
    held: HeldZips

    def members(self, path: Path, rel: str) -> Iterator[ZipMember]:
        """The members of the zip ``path`` (cited as ``rel``), and those of the zips inside it."""
        yield from self._archive_members(_DiskFile(path, self.held), rel, [MAX_ZIP_TOTAL_BYTES], 1)

    def _archive_members(self, source: _Source, rel: str, budget: list[int], depth: int) -> Iterator[ZipMember]:
        """A zip's members, read from ``source`` (its central directory now, a member when it is
        read); a zip among them is opened too (up to MAX_ZIP_DEPTH deep), all of them drawing on
        one ``budget`` of unpacked bytes."""
        try:
            with source.opened():
                archive = zipfile.ZipFile(source)  # (its central directory, read now)
            members = [m for m in archive.infolist() if not m.is_dir()]
        except OSError as exc:
            self.warn(rel, f"{CANNOT_READ}: {exc.strerror or exc}")
            return
        except (zipfile.BadZipFile, ValueError) as exc:
            self.warn(rel, f"cannot read zip archive: {exc} (a download cut short, or a "
                           f"damaged file: download or export it again)")
            return
        # What unpacking would add to the members' bytes in the zip: a bomb's terabytes, where photos
        # and videos (stored as they are, or deflated to as much) add nothing.
        grown = sum(max(0, m.file_size - m.compress_size) for m in members)
        if grown > budget[0]:
            self.warn(rel, f"zip archive refused: its members expand by {grown:,} bytes unpacked, "
                           f"over the {MAX_ZIP_TOTAL_BYTES:,}-byte limit (a zip bomb?)")
            return
        for member in sorted(members, key=member_name):
            inside = member_name(member)
            name = inside.rsplit("/", 1)[-1]
            if not name or self.is_litter(name) or inside.startswith("__MACOSX/"):  # (no name: a folder)
                continue
            member_rel = f"{rel}!/{inside}"
            if name.lower().endswith(".zip"):
                yield from self._inner_zip(archive, source, member, member_rel, budget, depth)
                continue
            yield ZipMember(member_rel, member.file_size,
                            lambda limit, m=member: _read_member(archive, source, m, limit, budget))

    def _inner_zip(self, archive: zipfile.ZipFile, source: _Source, member: zipfile.ZipInfo, rel: str,
                   budget: list[int], depth: int) -> Iterator[ZipMember]:
        """A zip inside a zip (an export zipped again): one stored as it is (as Info-ZIP's zip
        stores a .zip) opened where it lies in the outer one, a compressed one unpacked in memory."""
        if depth >= MAX_ZIP_DEPTH:
            self.warn(rel, f"zip archive not opened: it is a zip inside {MAX_ZIP_DEPTH} zips, "
                           f"deeper than VecBook opens (a zip bomb's shape): unzip the outer "
                           f"one and add the folder it holds")
            return
        if member.compress_type == zipfile.ZIP_STORED and not member.flag_bits & 0x1:
            inner = self._read_or_warn(rel, lambda: source.window(_data_start(source, member), member.compress_size))
            if inner is not None:
                yield from self._archive_members(inner, rel, budget, depth + 1)
            return
        if member.file_size > self.file_limit:  # (a read cut at the limit would be no zip, "damaged": it is not)
            self.warn(rel, f"zip archive not opened: it is {member.file_size:,} bytes, over the "
                           f"{self.file_limit:,} bytes VecBook reads of a zip inside a zip: unzip "
                           f"the outer one and add the folder it holds")
            return
        data = self._read_or_warn(rel, lambda: _read_member(archive, source, member, self.file_limit, budget))
        if data is not None:
            yield from self._archive_members(_BytesReader(data), rel, budget, depth + 1)

    def _read_or_warn(self, rel: str, read: Callable[[], _T]) -> _T | None:
        """What ``read`` reads of the zip inside a zip at ``rel``; None, said in a WARN, where the
        outer zip cannot be read there (gone, changed, damaged)."""
        try:
            return read()
        except OSError as exc:
            self.warn(rel, f"{CANNOT_READ}: {exc.strerror or exc}")
        except ValueError as exc:
            self.warn(rel, f"cannot read zip archive: {exc}")
        return None


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


class _DiskFile:
    """A zip on disk as zipfile reads it (or a zip stored whole inside it: the ``length`` bytes
    from ``start``), open only while something is read from it, or between reads within a
    ``HeldZips.held`` block: once the read is over VecBook holds no handle on the user's file (on
    Windows one keeps it from being deleted, renamed or replaced), and an export never closed
    leaks none. Reads that overlap (another thread's) share a handle."""

    def __init__(self, path: Path, held: HeldZips, start: int = 0, length: int | None = None) -> None:
        self.path = path
        self._held = held
        self._start = start
        self._end = None if length is None else start + length  # None: the file's end
        self._handle: BinaryIO | None = None
        self._users = 0
        self._lock = threading.Lock()

    @contextmanager
    def opened(self) -> Iterator[None]:
        """The file open for zipfile's reads within the block; ``OSError`` when it cannot be."""
        with self._lock:
            if self._handle is None:  # (else kept open since the last read, or in another thread's)
                self._handle = open(self.path, "rb")  # read only: the user's file is never written
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                idle = self._users == 0
            if idle and not self._held.keep(self):
                self.close_if_idle()

    def close_if_idle(self) -> None:
        """Close the file unless a read is using it (whose end closes it, or keeps it)."""
        with self._lock:
            if self._users == 0 and self._handle is not None:
                handle, self._handle = self._handle, None
                handle.close()

    def window(self, start: int, length: int) -> _DiskFile:
        """The ``length`` bytes from ``start``, as a file of their own (a zip stored in this one)."""
        return _DiskFile(self.path, self._held, self._start + start, length)

    def read_at(self, offset: int, size: int) -> bytes:
        """``size`` bytes at ``offset`` at most, read through a handle of their own."""
        with open(self.path, "rb") as handle:
            handle.seek(self._start + offset)
            return handle.read(size if self._end is None else max(0, min(size, self._end - handle.tell())))

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        handle = self._open_handle()
        if whence == 2:
            end = handle.seek(0, 2) if self._end is None else self._end
            at = end + offset
        else:
            at = self._start + offset if whence == 0 else handle.tell() + offset
        if at < self._start:  # (as a file says it, which zipfile's search for its directory expects)
            raise OSError(errno.EINVAL, "Invalid argument")
        return handle.seek(at) - self._start

    def tell(self) -> int:
        return self._open_handle().tell() - self._start

    def read(self, size: int | None = -1) -> bytes:
        handle = self._open_handle()
        if self._end is None:
            return handle.read(-1 if size is None else size)
        left = max(0, self._end - handle.tell())
        return handle.read(left if size is None or size < 0 else min(size, left))

    def _open_handle(self) -> BinaryIO:
        if self._handle is None:  # (a read outside ``opened``: a slip of this module's, not the user's)
            raise ValueError(f"{self.path} is not open")
        return self._handle


class _BytesReader:
    """A seekable view of bytes for zipfile (io.BytesIO would copy them): a zip unpacked in memory."""

    def __init__(self, data: bytes | memoryview) -> None:
        self._view = memoryview(data)
        self._pos = 0

    def opened(self) -> ContextManager[None]:
        """Nothing to open: the bytes are in memory."""
        return nullcontext()

    def window(self, start: int, length: int) -> _BytesReader:
        """The ``length`` bytes from ``start`` (not copied)."""
        return _BytesReader(self._view[start:start + length])

    def read_at(self, offset: int, size: int) -> bytes:
        """``size`` bytes at ``offset`` at most."""
        return bytes(self._view[offset:offset + size])

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        end = len(self._view) if size is None or size < 0 else self._pos + size
        chunk = bytes(self._view[self._pos:end])
        self._pos += len(chunk)
        return chunk


_Source = Union[_DiskFile, _BytesReader]

# A member's local header (the zip spec's "local file header"): its signature, then 22 bytes,
# then the lengths of its name and extra field, which the member's bytes follow.
_LOCAL_HEADER = struct.Struct("<4s22xHH")


def _data_start(source: _Source, member: zipfile.ZipInfo) -> int:
    """Where the member's own bytes begin in ``source``: past its local header, whose name and extra
    field may differ in length from the central directory's."""
    header = source.read_at(member.header_offset, _LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise ValueError("the archive is damaged (no member's header where its directory says): download or "
                         "export it again")
    _, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    return member.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _read_member(archive: zipfile.ZipFile, source: _Source, member: zipfile.ZipInfo, limit: int,
                 budget: list[int]) -> bytes:
    """A zip member's bytes, stopping at ``limit`` and at what is left of the archive's budget;
    ``ValueError`` where the zip is damaged (cut short or changed since it was listed too),
    ``OSError`` where it cannot be opened (gone)."""
    allowed = min(limit, budget[0] + 1)
    if member.flag_bits & 0x1:  # zipfile would ask for the password (a RuntimeError)
        raise ValueError(f"{ENCRYPTED}: unzip it with its password and add the folder")
    try:
        with source.opened(), archive.open(member) as handle:
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
