"""Line endings of mail files as the mail readers expect them, ``\\n`` (``\\r\\n`` is read as it is).

A Windows tool that converted a file's line endings twice writes ``\\r\\r\\n``: its header block had
no blank line the parser knew, its subject was lost. Old Mac mail apps (Eudora, Claris Emailer,
Mac OS 9's Outlook Express) end lines with ``\\r`` alone: such a file was no mail at all. Both are
read as ``\\n``. A line is counted where the file's ``\\n`` is, as grep, less, vim and every other
citation of VecBook count it, so the runs of ``\\r`` before one change no line number; in a file
without any ``\\n`` (old Mac), each ``\\r`` ends a line, as every editor shows it.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

CR_RUN_BEFORE_LF = re.compile(rb"\r+\n")
OLD_MAC_HEAD_BYTES = 65536  # how far into a file a "\n" is looked for before it is taken for old Mac's


def is_old_mac(head: bytes) -> bool:
    """A file whose lines end with ``\\r`` alone: its first bytes hold a ``\\r`` and no ``\\n``."""
    head = head[:OLD_MAC_HEAD_BYTES]
    return b"\r" in head and b"\n" not in head


def normal_line_ends(data: bytes, old_mac: bool | None = None) -> bytes:
    """``data`` with ``\\n`` line endings: an old Mac file's ``\\r`` (``old_mac``: told from ``data``
    where not given), and runs of ``\\r`` before a ``\\n`` (``\\r\\r\\n``); other files as they are."""
    if old_mac if old_mac is not None else is_old_mac(data):
        return data.replace(b"\r", b"\n")
    return CR_RUN_BEFORE_LF.sub(b"\n", data) if b"\r\r\n" in data else data


def normal_blocks(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """A file read in blocks, with ``normal_line_ends``: a block's trailing ``\\r`` waits for the next
    block, where its ``\\n`` may be (old Mac's is told from the first block)."""
    old_mac: bool | None = None
    held = b""
    for block in blocks:
        if old_mac is None:
            old_mac = is_old_mac(block)
        block = held + block if held else block  # (no copy of an 8 MB block where nothing waits)
        kept = len(block)
        while kept and not old_mac and block[kept - 1] == 0x0D:
            kept -= 1
        held = block[kept:]
        if kept:
            yield normal_line_ends(block if kept == len(block) else block[:kept], old_mac)
    if held:
        yield held
