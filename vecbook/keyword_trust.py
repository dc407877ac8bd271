"""What the keyword cache is trusted for: the fingerprint of what every cached record depends on
(the code, the Python, Unicode and parsing libraries, the data scope and the keyword analysis),
each source's own settings (its collection's table and analysis language), and whether a source
may be stored at all (settled before its read began, and every value JSON gives back as it was).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from .blocks import Block
from .config import Config
from .record_columns import storable_lines
from .settling import settled, signature_mtimes
from .sources import FILE_KEY, block_source
from .tokens import analysis_of
from .vector_cache import cache_scope

# Libraries whose output ends up in records: a new version may read the same export otherwise.
# PyStemmer too: a new Snowball release may stem a word otherwise, and the cached terms would
# no longer be those a query is cut into.
PARSING_LIBRARIES = ("icalendar", "python-dateutil", "tzdata", "pystemmer")


# The package's data files that shape the terms as its code does (the tables folding traditional
# Chinese to simplified and Japanese new forms to them, ``han_variants``): hashed with the code.
ANALYSIS_DATA = ("ts_characters.txt", "jp_characters.txt")


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of VecBook's own source files and ANALYSIS_DATA: a changed parser, tokenizer or
    folding table never reuses what an older one made (hashing them takes about a millisecond)."""
    return digest_of(Path(__file__).resolve().parent)


def digest_of(package: Path) -> str:
    """The hash of the ``.py`` files under ``package`` and its ANALYSIS_DATA, path and bytes."""
    digest = hashlib.sha256()
    data = [package / name for name in ANALYSIS_DATA if (package / name).is_file()]
    for path in sorted([*package.rglob("*.py"), *data]):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(config: Config) -> str:
    """What every cached record depends on: the code, the Python and Unicode versions (lower-
    casing, ``\\w``, marks, folding), the libraries that parse exports and stem, the data scope
    and the settings of the keyword analysis (``stemming``, ``language``; BM25's k1 and b are
    applied at each build, so they may differ). Not the list of collections: ``vecbook add`` and
    ``remove`` change it, and every other source must still come from the cache
    (``source_settings`` holds what one source depends on). The file's own layout is checked
    beside it (``keyword_cache.FORMAT``)."""
    facts = {"code": code_digest(), "python": list(sys.version_info[:2]),
             "unicode": unicodedata.unidata_version, "libraries": library_versions(),
             "scope": cache_scope(config), "stemming": config.stemming, "language": config.language}
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def source_settings(config: Config, key: str) -> dict[str, Any] | None:
    """What the records of the source ``key`` depend on beyond ``fingerprint``: the keyword
    analysis' language, and a hash of its collection's settings (path, format, window gap, date
    order, columns...: none for the data directory's files); None for a collection gone."""
    name = block_source(key)
    if key.startswith(FILE_KEY):
        return {"language": analysis_of(config).language, "collection": None}
    collection = next((c for c in config.collections if c.name == name), None)
    if collection is None:
        return None
    # Paths resolved: `--config vecbook.toml` leaves a relative path as written, the file found
    # in this folder makes it absolute, and both read the same source.
    settings = json.dumps({field: str(value.resolve() if isinstance(value, Path) else value)
                           for field, value in dataclasses.asdict(collection).items()}, sort_keys=True)
    return {"language": analysis_of(config, name).language,
            "collection": hashlib.sha256(settings.encode("utf-8", "surrogatepass")).hexdigest()[:16]}


def settings_by_source(config: Config) -> Callable[[str], dict[str, Any] | None]:
    """``source_settings`` of ``config`` for many block keys, each source's computed once: a
    notes folder of 100,000 files is 100,000 keys of one source."""
    known: dict[str, dict[str, Any] | None] = {}

    def of(key: str) -> dict[str, Any] | None:
        source = block_source(key)
        if source not in known:
            known[source] = source_settings(config, key)
        return known[source]
    return of


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str | None]:
    """Versions of the libraries whose parsing ends up in records (calendars and their zones)."""
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in PARSING_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def storable(entry: tuple[Any, ...], block: Block) -> bool:
    """Whether a source may be kept: settled before the read its records came from began, and
    every value JSON gives back as it was (metadata of str, numbers, booleans, None and lists)."""
    signature = entry[0]
    # Not settled when its read began (``settling``), or with no file's time to tell it by: the
    # next start reads it again.
    if next(signature_mtimes(signature), None) is None or not settled(signature, block.read_ns) \
            or not _plain(signature, tuples=True):
        return False
    return _plain(entry[3]) and all(type(k) is str for keys in {r.metadata_keys for r in block.records} for k in keys) \
        and all(_plain(value) for r in block.records for value in r._values) \
        and all(type(r.file_path) is str and type(r.source) is str and storable_lines(r) for r in block.records)


def _plain(value: Any, tuples: bool = False) -> bool:
    """True for what json.loads(json.dumps(value)) gives back equal; with ``tuples``, tuples
    too (a signature's, which ``from_json`` turns back from lists)."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) is list or (tuples and type(value) is tuple):
        return all(_plain(item, tuples) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v, tuples) for k, v in value.items())
    return False


def from_json(value: Any) -> Any:
    """A signature as it was: JSON gives its tuples back as lists."""
    return tuple(map(from_json, value)) if isinstance(value, list) else value
