"""The problems ``vecbook add`` has listed, kept so that the first read of the new source into the
index does not say them again as WARNs: a problem is said once per change of its file. ``add``
reads the source to show what it found; the next start reads it again (the keyword cache holds
no read of it yet) and would warn of the same problems. Kept in the cache folder, one small
JSON file per config file, each source's entry used once and then dropped; a source changed
since ``add`` read it (its files' signatures differ) is warned about as usual.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger("vecbook")

# An entry older than this (an `add` whose source was never read since) is dropped unused.
KEPT_SECONDS = 7 * 24 * 3600


def told_file(cache_directory: Path, config_file: Path) -> Path:
    """Where the problems ``add`` listed for sources of ``config_file`` are kept."""
    key = hashlib.sha256(str(config_file.expanduser().resolve()).encode("utf-8")).hexdigest()[:16]
    return cache_directory / f"told-{key}.json"


def tree_key(where: Path) -> str:
    """A digest of the signatures of every file of ``where`` (``tree_signature``): equal only
    while no file of it changed (an unreadable one makes it differ every time)."""
    from .source_state import tree_signature

    signature = tree_signature(where)
    if os.path.isdir(where):  # (each file's folder as a path inside ``where``: add and a config name it apart)
        signature = tuple((os.path.relpath(folder, where), name, found) for folder, name, found in signature)
    return hashlib.sha256(repr(signature).encode("utf-8")).hexdigest()


def cache_directory_of(config: Any) -> Path | None:
    """The cache folder of ``config`` (a Config), or, with no config file yet, the one a config
    that ``add`` writes (sources alone) will have: ``VECBOOK_CACHE_DIRECTORY``'s, else the
    platform's. Not ``load_config``: it would say a misspelt variable's WARN a second time."""
    if config is not None:
        cache, data = config.cache_directory, config.data_directory
        if cache is not None and data is not None and data.resolve() in (cache.resolve(), *cache.resolve().parents):
            return None  # (the caches are off there: nothing is written among the records)
        return cache
    from .config import CACHE_OFF_WORDS, default_cache_directory

    value = os.environ.get("VECBOOK_CACHE_DIRECTORY")
    if value is None or not value.strip():
        return default_cache_directory()
    return None if value.strip().lower() in CACHE_OFF_WORDS else Path(value).expanduser().absolute()


def remember(cache_directory: Path | None, config_file: Path, name: str, where: Path,
             problems: Sequence[str]) -> None:
    """Keep the ``problems`` ``add`` listed (their text) for the source ``name`` (at ``where``);
    nothing where the cache is off or it listed none. A file that cannot be written only costs a
    WARN said twice."""
    if cache_directory is None or not problems:
        return
    path = told_file(cache_directory, config_file)
    entries = {name: entry for name, entry in _read(path).items() if entry.get("at", 0) > time.time() - KEPT_SECONDS}
    entries[name] = {"tree": tree_key(where), "problems": list(problems), "at": time.time()}
    try:
        _write(path, entries)
    except OSError as exc:
        log.debug("cannot keep the problems add listed in %s: %s", path, exc)


def already_told(cache_directory: Path | None, config_file: Path | None,
                 sources: dict[str, Path | None]) -> set[str]:
    """The problems (as their text) ``add`` listed for those of ``sources`` (name: path) whose files
    are as ``add`` read them; their entries are dropped, used or not (one read is all they
    answer for). Empty, at the cost of a stat, where ``add`` kept none."""
    if cache_directory is None or config_file is None:
        return set()
    path = told_file(cache_directory, config_file)
    if not path.is_file():
        return set()
    entries = _read(path)
    quiet: set[str] = set()
    for name in [name for name in entries if name in sources]:
        entry, where = entries.pop(name), sources[name]
        if where is not None and entry.get("tree") == tree_key(where):
            quiet.update(entry.get("problems", []))
    try:
        if entries:  # (through a temporary file, as remember writes: a reader meets the old list or the new)
            _write(path, entries)
        else:
            path.unlink()
    except OSError as exc:
        log.debug("cannot update %s: %s", path, exc)
    return quiet


def _write(path: Path, entries: dict[str, Any]) -> None:
    """Write ``entries`` to ``path`` through a temporary file renamed over it."""
    from .file_writes import write_atomically

    write_atomically(path, ".told-", lambda out: out.write(json.dumps(entries).encode("utf-8")))


def _read(path: Path) -> dict[str, Any]:
    """The entries of ``path``; none where it is missing or damaged (a WARN said twice at worst)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {name: entry for name, entry in entries.items() if _well_formed(entry)} \
        if isinstance(entries, dict) else {}


def _well_formed(entry: Any) -> bool:
    """Whether ``entry`` is one ``remember`` writes (a file edited by hand, or another version's, may hold others)."""
    return (isinstance(entry, dict) and isinstance(entry.get("tree"), str)
            and isinstance(entry.get("at"), (int, float)) and isinstance(entry.get("problems"), list)
            and all(isinstance(problem, str) for problem in entry["problems"]))
