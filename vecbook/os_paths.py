"""Paths as the OS opens them: on Windows, a path past MAX_PATH characters with the ``\\\\?\\``
prefix, which lifts the limit.

Windows refuses a path of 260 characters or more (MAX_PATH, its NUL included) unless long paths
are turned on both in the registry and in the program's manifest, or the path starts with
``\\\\?\\``. A notes folder synced from a Mac or Linux (deep vault folders, long note names in
CJK or with emoji) easily holds such paths: each was skipped as unreadable, ``cannot read file:
No such file or directory``, though it is there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

WINDOWS = os.name == "nt"
# Windows' limit: a path of this many characters or more needs the prefix (a folder's limit is
# 248, as a file must still fit in it; a walk's folders are given the prefix whatever their length).
MAX_PATH = 260
PREFIX = "\\\\?\\"
# A share's path (\\server\share\...) takes the prefix as \\?\UNC\server\share\...
UNC = "\\\\"


def long_form(absolute: str) -> str:
    """``absolute`` (a full, normalised path) with the ``\\\\?\\`` prefix (``\\\\?\\UNC\\`` for a
    share's); a path that has it already as it is."""
    if absolute.startswith(PREFIX):
        return absolute
    if absolute.startswith(UNC):
        return f"{PREFIX}UNC{absolute[1:]}"
    return PREFIX + absolute


def os_path(path: Path) -> Path:
    """``path`` as the OS opens it: on Windows, with the ``\\\\?\\`` prefix when it is MAX_PATH
    characters or longer (then made absolute, as the prefix turns off Windows' own
    normalisation); anywhere else, and any shorter path, as it is."""
    text = str(path)
    if not WINDOWS or len(text) < MAX_PATH or text.startswith(PREFIX):
        return path
    return Path(long_form(os.path.abspath(text)))


def walk_root(root: Path) -> str:
    """What ``os.walk`` is given to list ``root``: on Windows its long form, so that a folder
    deep enough to pass MAX_PATH is listed too (``plain`` gives each folder it yields back
    without the prefix)."""
    return long_form(os.path.abspath(root)) if WINDOWS else str(root)


def walk(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` of ``walk_root(root)``, symbolic links followed, each folder once: a link to a
    folder above it (``up -> ..``) or to one walked already is not walked again, which listed
    its files again down to the OS's limit of 40 links (and two such links never ended)."""
    seen: set[tuple[int, int]] = set()
    for folder, dirs, names in os.walk(walk_root(root), followlinks=True):
        try:
            info = os.stat(folder)
        except OSError:  # (listed, yet gone or closed since: walked as it was)
            yield folder, dirs, names
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        yield folder, dirs, names


def plain(folder: str, root: Path) -> Path:
    """A folder ``os.walk`` yielded from ``walk_root(root)``, as a path under ``root`` written as
    ``root`` is (no prefix), so paths inside it are worked out as before."""
    if not WINDOWS:
        return Path(folder)
    start = walk_root(root)
    return Path(root, folder[len(start):].lstrip("\\/")) if folder.startswith(start) else Path(folder)
