"""Whether a read of a source can vouch for it later: a source is skipped by the next read when
its signature (size, mtime, inode, device) is unchanged, but a file written again within its
timestamp's granularity (1 s on HFS+, 2 s on FAT, some network shares) after a read keeps all
four. So a read is trusted only for sources that had settled when it began (as git treats a
"racily clean" file): the others are read again by the next read, in this process
(``sources``) and at the next start (the keyword cache does not store them: ``keyword_trust``).
"""

from __future__ import annotations

from typing import Any, Iterator

# A source written this close to (or after) the moment its read began may have changed
# again within its timestamp's granularity (2 s on FAT) without its signature showing it.
SETTLE_NS = 2_000_000_000


def signature_mtimes(signature: Any) -> Iterator[int]:
    """The modification times in a signature: each (size, mtime_ns, inode, device) in it (a
    file's, a collection's tree of them, a database and its WAL)."""
    if isinstance(signature, tuple):
        if len(signature) == 4 and all(type(v) is int for v in signature):
            yield signature[1]
        else:
            for part in signature:
                yield from signature_mtimes(part)


def settled(signature: Any, read_ns: int) -> bool:
    """Whether every file of ``signature`` was last written well before ``read_ns`` (when the read
    that took it began), so an unchanged signature means unchanged content."""
    return all(mtime < read_ns - SETTLE_NS for mtime in signature_mtimes(signature))
