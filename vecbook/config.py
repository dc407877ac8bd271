"""Settings: ``vecbook.toml`` (the working directory's, else the user's), ``VECBOOK_*`` variables and
overrides, validated into a frozen Config; the error hierarchy every other module raises from."""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

log = logging.getLogger("vecbook")

__version__ = "0.1.0"
CONFIG_NAME = "vecbook.toml"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Names under which the packaged MiniLM weights are accepted; anything else must
# be a local model directory, because nothing is downloaded at run time.
PACKAGED_MODEL_NAMES = (DEFAULT_MODEL, "all-MiniLM-L6-v2")
# The languages all-MiniLM-L6-v2 was trained on: its queries in any other language lean on
# keywords in hybrid search (vecbook.languages). Another model reads every language
# (ALL_LANGUAGES) unless ``embedding_languages`` names them.
PACKAGED_MODEL_LANGUAGES = ("english",)
ALL_LANGUAGES = "all"
MODES = ("semantic", "keyword", "hybrid")
FUSIONS = ("rrf", "linear")
METRICS = ("cosine", "l2")
PRECISIONS = ("auto", "float32", "bfloat16", "int8")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR")
# Keyword analysis languages (``language``): each one's Snowball stemmer and stop words
# (vecbook.tokens); "none" folds and cuts words but neither stems nor drops any.
DEFAULT_LANGUAGE = "english"
LANGUAGES = ("none", "arabic", "armenian", "basque", "catalan", "czech", "danish", "dutch", "english",
             "esperanto", "estonian", "finnish", "french", "german", "greek", "hindi", "hungarian", "indonesian",
             "irish", "italian", "lithuanian", "nepali", "norwegian", "persian", "polish", "portuguese",
             "romanian", "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish")
# What ``embedding_languages`` names: the keyword languages, the languages written in the scripts
# vecbook.languages tells apart (its SCRIPTS), and other widely written Latin-script languages.
EMBEDDING_LANGUAGES = tuple(sorted({
    *LANGUAGES[1:], "afrikaans", "albanian", "amharic", "assamese", "azerbaijani", "belarusian", "bengali",
    "bosnian", "bulgarian", "burmese", "chinese", "croatian", "dhivehi", "filipino", "galician", "georgian",
    "gujarati", "hausa", "hebrew", "icelandic", "japanese", "kannada", "kazakh", "khmer", "korean", "kurdish",
    "kyrgyz", "lao", "latvian", "luxembourgish", "macedonian", "malay", "malayalam", "maltese", "marathi",
    "mongolian", "odia", "pashto", "punjabi", "sanskrit", "sinhala", "slovak", "slovenian", "swahili", "syriac",
    "tagalog", "tajik", "telugu", "thai", "tibetan", "tigrinya", "ukrainian", "urdu", "uzbek", "vietnamese",
    "welsh", "yoruba", "zulu"}))
# A result list longer than this is no longer "search"; it also bounds the
# candidate arrays a single query allocates.
MAX_RESULTS_LIMIT = 1000
# A query is a question, not a document: 10k characters is far past any
# sensible question and keeps a stray paste from embedding megabytes.
MAX_QUERY_CHARS = 10_000
# Records shown on each side of one that ``get`` returns, at most.
MAX_CONTEXT = 50
# The largest text budget a search takes (characters): past it, no budget is needed.
MAX_TOTAL_CHARS = 100_000_000
# The longest text a hit may be cut to (``max_chars``); a record holds at most a few MB.
MAX_CHARS = 1_000_000
# The operators of a filter key (``date__gte``). Here, not in filters.py, so the MCP tools'
# descriptions are written without importing numpy before ``initialize`` is answered.
FILTER_OPERATORS = ("exact", "ne", "gt", "gte", "lt", "lte", "in", "contains", "startswith", "exists")
# ``serve --http``: where it listens, and the variable holding its token (here for the CLI's help).
DEFAULT_HOST, DEFAULT_PORT, TOKEN_VARIABLE = "127.0.0.1", 8765, "VECBOOK_TOKEN"
# What a collection may be called: what the user types (``family-chat``, ``work_mail``). Lower-case
# ASCII letters and digits, with - and _ inside: safe in citations ("name/file:3"), ids
# ("name:row"), ``sources=`` filters, cache scopes and a shell, and never a path or an option.
COLLECTION_NAME_RE = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9_])?\Z")
COLLECTION_NAME_RULE = "lower-case letters, digits, - and _ (starting with a letter or digit, at most 64)"
# A pause this long in a chat starts a new conversation window: people answer
# within minutes, and a new topic usually follows a longer silence.
DEFAULT_WINDOW_GAP_MINUTES = 30.0
# What ``cache_directory`` (config, VECBOOK_CACHE_DIRECTORY) accepts to turn the vector cache off.
CACHE_OFF_WORDS = ("false", "off")


class VecBookError(Exception):
    """Root of every error VecBook raises on purpose."""


class ConfigError(VecBookError):
    """The configuration (file, environment or arguments) is invalid."""


class RecordError(VecBookError):
    """A record file cannot be used."""


class ModelNotFoundError(VecBookError):
    """The embedding model is not installed or not found on disk."""


class QueryError(VecBookError):
    """A search request is invalid (empty query, bad limit, bad filter...)."""


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 record``, ``2 records``: a count with its noun (``plural`` where it is not noun + s)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


@dataclass(frozen=True)
class CollectionConfig:
    """One ``[[collections]]`` table: SQLite rows (``database``) or an export (``path``), read-only."""

    name: str
    database: Path | None = None
    database_label: str = ""  # the path as configured: what citations show
    table: str | None = None
    query: str | None = None
    path: Path | None = None  # an export: a file or folder (or a .zip) in its app's own format
    format: str | None = None  # None: detected from the export's content
    window_gap_minutes: float = DEFAULT_WINDOW_GAP_MINUTES
    description: str = ""  # what the user said it holds: shown by ``sources`` and the MCP tool
    language: str | None = None  # keyword analysis; None: the global ``language``
    # How an export's dates that could be read either way are read ("dmy" or "mdy"); None: from
    # the dates themselves (WhatsApp's exports write dates in the phone's locale).
    date_order: str | None = None
    keep_trashed: bool = False  # SQLite: keep the rows an app marks as in its trash (sqlite_rows.TRASH_COLUMNS)
    # Mail: whether what Gmail labels Spam or Trash and the Trash and Junk mailboxes are read.
    include_spam_and_trash: bool = False

    @property
    def label(self) -> str:
        """The name after ``#`` in citations: the table (a query's: the one it reads first, else the name)."""
        return self.name if self.query else (self.table or f"{self.name}_documents")


@dataclass(frozen=True)
class Config:
    """Validated settings; docs/configuration.md describes each key."""

    # None: no folder of .txt records (a config file that only lists collections).
    data_directory: Path | None = Path("data")
    max_results: int = 10
    embedding_model: str = DEFAULT_MODEL
    # The languages the model reads: ALL_LANGUAGES or names from EMBEDDING_LANGUAGES; None: not
    # set (English for the packaged model, every language for another: vecbook.languages).
    embedding_languages: str | tuple[str, ...] | None = None
    similarity_metric: str = "cosine"
    log_level: str = "INFO"
    # Defaults tuned on SciFact's train queries (bench/quality.py; docs/performance.md).
    search_mode: str = "hybrid"
    fusion: str = "linear"
    rrf_k: int = 60
    keyword_weight: float = 0.4
    bm25_k1: float = 1.2
    bm25_b: float = 0.5
    stemming: bool = True
    language: str = DEFAULT_LANGUAGE
    precision: str = "auto"
    batch_size: int = 64
    # None: the cache is off (``cache_directory = false``); default: the platform's user cache folder.
    cache_directory: Path | None = dataclasses.field(default_factory=lambda: default_cache_directory())
    semantic_wait_seconds: float = 30.0
    recency_half_life_days: float | None = None  # None: no recency blend
    dedupe: bool = True
    watch: bool = True  # only ``serve`` reads it: watch the sources and apply changes as they happen
    collections: tuple[CollectionConfig, ...] = ()
    config_file: Path | None = None


# key -> (accepted Python types, allowed values or None)
_SCALAR_KEYS: dict[str, tuple[tuple[type, ...], tuple[Any, ...] | None]] = {
    "data_directory": ((str,), None),
    "max_results": ((int,), None),
    "embedding_model": ((str,), None),
    "embedding_languages": ((str, list, tuple), None),  # "all", or a list (the environment: names and commas)
    "similarity_metric": ((str,), METRICS),
    "log_level": ((str,), LOG_LEVELS),
    "search_mode": ((str,), MODES),
    "fusion": ((str,), FUSIONS),
    "rrf_k": ((int,), None),
    "keyword_weight": ((int, float), None),
    "bm25_k1": ((int, float), None),
    "bm25_b": ((int, float), None),
    "stemming": ((bool,), None),
    "language": ((str,), LANGUAGES),
    "precision": ((str,), PRECISIONS),
    "batch_size": ((int,), None),
    "cache_directory": ((str, bool), None),  # a path, or false (off)
    "semantic_wait_seconds": ((int, float), None),
    "recency_half_life_days": ((int, float), None),
    "dedupe": ((bool,), None),
    "watch": ((bool,), None),
}
_PATH_KEYS = ("data_directory", "cache_directory")
_COLLECTION_KEYS = ("name", "database", "table", "query", "path", "format", "window_gap_minutes", "description",
                    "language", "date_order", "keep_trashed", "include_spam_and_trash")
DATE_ORDERS = ("dmy", "mdy")


def default_cache_directory() -> Path:
    """The platform's user cache folder for VecBook (``~/.cache/vecbook`` on Linux,
    ``~/Library/Caches/vecbook`` on macOS, ``%LOCALAPPDATA%\\vecbook\\Cache`` on Windows)."""
    import platformdirs  # small, but only configs need it: ``import vecbook`` stays lean

    return Path(platformdirs.user_cache_dir("vecbook", appauthor=False))


def user_config_file() -> Path:
    """The user's config file, which ``vecbook add`` writes: ``vecbook.toml`` in the platform's
    config folder (``~/.config/vecbook`` on Linux, ``~/Library/Application Support/vecbook``
    on macOS, ``%LOCALAPPDATA%\\vecbook`` on Windows)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("vecbook", appauthor=False)) / CONFIG_NAME


def find_config_file(start: Path | None = None) -> Path | None:
    """The config used without ``--config``: ``vecbook.toml`` in the working directory (or
    ``start``), else the user's config file, else None (no file: defaults only)."""
    for candidate in ((start or Path.cwd()) / CONFIG_NAME, user_config_file()):
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | Path | None = None, **overrides: Any) -> Config:
    """Build a Config: defaults < config file < ``VECBOOK_*`` environment < overrides.

    Args:
        path: a TOML file; ``None`` looks for the default file (and uses
            defaults when there is none).
        overrides: keys of the config file, e.g. ``data_directory="notes"``;
            relative paths here resolve against the working directory.
    """
    # A data folder named (argument or environment) without a config file is searched alone:
    # the collections of a config found by default are not what the user asked to search.
    environment = _environment_values()
    named = overrides.get("data_directory") is not None or "data_directory" in environment
    file = Path(path).expanduser() if path is not None else None if named else find_config_file()
    values: dict[str, Any] = {}
    collections: tuple[CollectionConfig, ...] = ()
    if file is not None:
        raw = _read_toml(file)
        try:
            collections = _parse_collections(raw.pop("collections", []), file)
            values["data_directory"] = _default_data_directory(file.parent, optional=bool(collections))
            values.update(_check_values(raw, where=str(file), base=file.parent))
        except ConfigError as exc:
            raise _placed(exc, file) from None
    else:
        values["data_directory"] = _default_data_directory(Path.cwd(), optional=True)
    values.update(_check_environment(environment))
    values.update(_check_arguments(overrides))
    return Config(**values, collections=collections, config_file=file)


def _default_data_directory(base: Path, optional: bool) -> Path | None:
    """``data`` beside the config file (the spec's layout), or None where it is ``optional`` and
    missing: a file that lists collections (the user config ``vecbook add`` writes) then searches
    them alone, and with no file at all (``base``: the working directory) there is nothing to search."""
    folder = base / "data"
    return None if optional and not folder.is_dir() else folder


def config_without_file(**overrides: Any) -> Config:
    """Defaults < ``VECBOOK_*`` environment < overrides, reading no config file
    (``VecBook(data_directory=...)`` is complete without one)."""
    values = _check_environment(_environment_values())
    values.update(_check_arguments(overrides))
    return Config(**values)


def replace_config(config: Config, **overrides: Any) -> Config:
    """``config`` with ``overrides`` (None: keep) applied and checked like any argument."""
    return dataclasses.replace(config, **_check_arguments(overrides))


def _check_arguments(overrides: dict[str, Any]) -> dict[str, Any]:
    """Checked overrides from code or the command line; None means "not given"."""
    return _check_values({k: v for k, v in overrides.items() if v is not None}, where="arguments", base=Path.cwd())


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        with open(file, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {file}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {file}: {exc}{_backslash_hint(file, str(exc))}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror}") from None


# What TOML makes of a backslash in double quotes, as it was typed (a Windows path's "\notes").
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


def _windows_path_hint(typed: str) -> str:
    """How to write ``typed``, a path with backslashes, in TOML."""
    return (f"TOML reads a backslash in double quotes as an escape: write a Windows path in single quotes "
            f"('{typed}') or with forward slashes (\"{typed.replace(chr(92), '/')}\")")


def _backslash_hint(file: Path, error: str) -> str:
    """'; ' and ``_windows_path_hint`` where the line a TOML error names holds a backslash in
    double quotes (``"C:\\Users"``: ``\\U`` wants 8 hex digits), else ''."""
    where = re.search(r"at line (\d+)", error)
    try:
        line = file.read_text(encoding="utf-8", errors="replace").splitlines()[int(where.group(1)) - 1] if where else ""
    except (OSError, IndexError):
        return ""
    quoted = re.search(r'"([^"]*\\[^"]*)"', line)
    return f"; {_windows_path_hint(quoted.group(1))}" if quoted else ""


def _check_path_text(key: str, value: Any, where: str) -> None:
    """A path that holds a control character was a Windows path in double quotes whose
    backslashes TOML read as escapes (``"D:\\notes"``: a newline): say how to write it."""
    if isinstance(value, str) and (found := [c for c in _ESCAPES if c in value]):
        name = {"\n": "a newline", "\t": "a tab", "\r": "a carriage return"}.get(found[0], "a control character")
        typed = value.translate(str.maketrans(_ESCAPES))
        raise ConfigError(f"config key '{key}' in {where} holds {name} (TOML's reading of \"{typed}\"); "
                          f"{_windows_path_hint(typed)}")


def _placed(error: ConfigError, file: Path) -> ConfigError:
    """``error`` (about a key or a [[collections]] table of ``file``) with the line at fault after
    the file's name, ``vecbook.toml:7``: tomllib keeps no positions, so the line is found in the
    text, the key's own line or else its table's header."""
    message = str(error)
    table = re.search(r"\[\[collections\]\] #(\d+) in ", message)
    named = (re.search(r"config key '([^']+)'", message) or re.search(r"^'(collections)' ", message)
             or re.search(r": '(\w+)' (?:is required|applies to)", message)
             or re.search(r"collection (name) '", message))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return error
    line = key_line(text, named.group(1) if named else None, int(table.group(1)) if table else None)
    if line is None or str(file) not in message:
        return error
    return ConfigError(message.replace(str(file), f"{file}:{line}", 1))


_TABLE_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([^\]]*?)\s*\]")


def key_line(text: str, key: str | None, collection: int | None = None) -> int | None:
    """The line (from 1) of ``key`` in the TOML ``text``: among the top-level keys, or in the
    ``collection``-th ``[[collections]]`` table; else that table's header, or the header of a
    table named ``key`` (``[search]``, an unknown key). None where none is found."""
    pattern = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""") if key else None
    where: int | str | None = None  # the table the line is in: None at the top, a number for a collection
    seen, header = 0, None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _TABLE_HEADER_RE.match(line)
        if opened:
            array, name = opened.group(1) == "[[", opened.group(2).strip("\"'")
            if array and name == "collections":
                seen += 1
                where = seen
                header = number if seen == collection else header
            else:
                where = name
                if collection is None and name == key:
                    return number
            continue
        if pattern is not None and where == collection and pattern.match(line):
            return number
    return header


def _check_environment(environment: dict[str, Any]) -> dict[str, Any]:
    """``_check_values`` of the environment's settings, each message naming its variable."""
    checked: dict[str, Any] = {}
    for key, value in environment.items():
        checked.update(_check_values({key: value}, where=f"environment variable VECBOOK_{key.upper()}",
                                     base=Path.cwd()))
    return checked


def _environment_values() -> dict[str, Any]:
    """``VECBOOK_MAX_RESULTS=5`` style variables, converted to the key's type; a variable named
    like one of them but misspelt (``VECBOOK_MAX_RESULT``) is ignored with a WARN that names it."""
    for name in os.environ:
        # A name in lower case (vecbook_max_results) is read by no one either: say so as well.
        if not name.upper().startswith("VECBOOK_") or name[8:] == name[8:].upper() and name[8:].lower() in _SCALAR_KEYS:
            continue
        if name[8:].lower() == "collections":  # a table, which no variable can hold
            log.warning("environment variable %s is ignored: sources are [[collections]] tables of the config "
                        "file (`vecbook add PATH` writes one)", name)
            continue
        close = _setting_near(name[8:].lower())
        if close:  # only near a setting: other VECBOOK_ variables (VECBOOK_TOKEN) are no settings
            log.warning("environment variable %s is no VecBook setting (did you mean VECBOOK_%s?); it is ignored",
                        name, close.upper())
    values: dict[str, Any] = {}
    for key, (types, _) in _SCALAR_KEYS.items():
        text = os.environ.get(f"VECBOOK_{key.upper()}")
        if text is None:
            continue
        try:
            if key == "cache_directory":
                values[key] = False if text.strip().lower() in CACHE_OFF_WORDS else text
            elif bool in types:
                values[key] = {"1": True, "true": True, "0": False, "false": False}[text.lower()]
            elif int in types and float not in types:
                values[key] = int(text)
            elif float in types:
                values[key] = float(text)
            else:
                values[key] = text
        except (KeyError, ValueError):
            raise ConfigError(f"invalid value {text!r} for VECBOOK_{key.upper()}") from None
    return values


def _setting_near(word: str) -> str | None:
    """The setting a misspelt variable's lower-cased name means: itself in other case, one it
    begins (``cache`` -> ``cache_directory``), else a close one."""
    if word in _SCALAR_KEYS:
        return word
    begun = [key for key in _SCALAR_KEYS if len(word) >= 3 and key.startswith(word)]
    close = begun or difflib.get_close_matches(word, list(_SCALAR_KEYS), n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the name in ``known`` closest to a misspelt ``word``, or ""."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _unknown_key_error(key: str, where: str, known: Iterable[str]) -> ConfigError:
    return ConfigError(f"unknown config key '{key}' in {where}{did_you_mean(key, known)}")


def _check_values(raw: dict[str, Any], where: str, base: Path) -> dict[str, Any]:
    """Type-check scalar keys and resolve paths against ``base``."""
    checked: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "collections":  # a known key, only not here: no "did you mean 'collections'?"
            raise ConfigError(f"'collections' cannot be given in {where}: sources are [[collections]] tables of a "
                              "config file (VecBook.from_config(path), which `vecbook add PATH` writes for you)")
        if key not in _SCALAR_KEYS:
            raise _unknown_key_error(key, where, [*_SCALAR_KEYS, "collections"])
        types, choices = _SCALAR_KEYS[key]
        if key in _PATH_KEYS and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if key == "log_level" and isinstance(value, str):
            value = value.upper()
        # bool is an int in Python; `max_results = true` is still a type error.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join(t.__name__ for t in types)
            raise ConfigError(f"config key '{key}' in {where} must be {names}, got {value!r}")
        if choices is not None and value not in choices:
            raise ConfigError(f"config key '{key}' in {where} must be one of {', '.join(choices)}; got {value!r}")
        if key == "cache_directory" and (value is False or value is None):
            checked[key] = None  # off
            continue
        if key == "cache_directory" and value is True:
            raise ConfigError(f"config key 'cache_directory' in {where} must be a folder path or false "
                              f"(to turn the vector cache off), got true")
        if key in _PATH_KEYS:
            _check_path_text(key, value, where)
            value = base / Path(value).expanduser()
        elif key == "embedding_model":
            value = _model_folder(value, base)
        elif key == "embedding_languages":
            value = _check_embedding_languages(value, where)
        checked[key] = float(value) if float in types else value
    _check_ranges(checked, where)
    if checked.get("log_level") == "WARN":
        checked["log_level"] = "WARNING"
    return checked


def _model_folder(name: str, base: Path) -> str:
    """``embedding_model`` as given, or, where it names a folder relative to ``base`` (the config
    file's folder, else the working directory), that folder's absolute path: relative paths in a
    config file resolve against its folder, wherever the command is run from."""
    if name in PACKAGED_MODEL_NAMES:
        return name
    folder = base / Path(name).expanduser()
    return str(folder.resolve()) if folder.is_dir() else name


def _check_embedding_languages(value: str | Sequence[Any], where: str) -> str | tuple[str, ...]:
    """``embedding_languages``: "all", or language names (a list, or in text separated by
    commas), each one of EMBEDDING_LANGUAGES."""
    names = value.split(",") if isinstance(value, str) else value
    if not all(isinstance(name, str) for name in names):
        raise ConfigError(f"config key 'embedding_languages' in {where} must be \"{ALL_LANGUAGES}\" or a list of "
                          f"language names such as [\"english\", \"german\"], got {value!r}")
    cleaned = [name.strip().lower() for name in names if name.strip()]
    if cleaned == [ALL_LANGUAGES]:
        return ALL_LANGUAGES
    if not cleaned:
        raise ConfigError(f"config key 'embedding_languages' in {where} names no language: give "
                          f"\"{ALL_LANGUAGES}\" or the languages the model reads, such as [\"english\"]")
    for name in cleaned:
        if name not in EMBEDDING_LANGUAGES:
            hint = did_you_mean(name, [ALL_LANGUAGES, *EMBEDDING_LANGUAGES])
            raise ConfigError(f"config key 'embedding_languages' in {where}: unknown language '{name}'{hint}; "
                              f"give \"{ALL_LANGUAGES}\" or names from: {', '.join(EMBEDDING_LANGUAGES)}")
    return tuple(dict.fromkeys(cleaned))


def _check_ranges(values: dict[str, Any], where: str) -> None:
    limits = {
        "max_results": (1, MAX_RESULTS_LIMIT), "rrf_k": (1, 10_000), "keyword_weight": (0, 1),
        "bm25_k1": (0, 10), "bm25_b": (0, 1), "batch_size": (1, 4096), "semantic_wait_seconds": (0, 3600),
        "recency_half_life_days": (0.01, 100_000),
    }
    for key, (low, high) in limits.items():
        if key in values and not low <= values[key] <= high:
            raise ConfigError(f"config key '{key}' in {where} must be between {low} and {high}; got {values[key]!r}")


def _parse_collections(raw: Any, file: Path) -> tuple[CollectionConfig, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"'collections' in {file} must be an array of tables ([[collections]])")
    seen: set[str] = set()
    parsed = []
    for number, table in enumerate(raw, 1):
        where = f"[[collections]] #{number} in {file}"
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table")
        collection = _parse_collection(table, where, file.parent)
        if collection.name in seen:
            raise ConfigError(f"{where}: collection name '{collection.name}' is already used")
        seen.add(collection.name)
        parsed.append(collection)
    return tuple(parsed)


def _parse_collection(table: dict[str, Any], where: str, base: Path) -> CollectionConfig:
    """One ``[[collections]]`` table: ``name`` and either ``database`` (SQLite) or ``path`` (an export)."""
    for key, value in table.items():
        if key not in _COLLECTION_KEYS:
            raise _unknown_key_error(key, where, _COLLECTION_KEYS)
        wanted, said = {"window_gap_minutes": ((int, float), "a number"), "keep_trashed": ((bool,), "true or false"),
                        "include_spam_and_trash": ((bool,), "true or false")}.get(key, ((str,), "str"))
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            raise ConfigError(f"config key '{key}' in {where} must be {said}, got {value!r}")
    language = table.get("language")
    if language is not None and language not in LANGUAGES:
        raise ConfigError(f"config key 'language' in {where} must be one of {', '.join(LANGUAGES)}; got {language!r}")
    name, database, path = table.get("name"), table.get("database"), table.get("path")
    if not name or not COLLECTION_NAME_RE.match(name):
        raise ConfigError(f"{where}: 'name' is required and must be {COLLECTION_NAME_RULE}, got {name!r}")
    if name == "files":
        raise ConfigError(f"{where}: collection name 'files' is already used (it names the data folder's notes)")
    if bool(database) == bool(path):
        raise ConfigError(f"{where}: give either 'database' (a SQLite file) or 'path' (an export file or folder)")
    _check_path_text("path" if path else "database", path or database, where)
    if path:
        return _parse_export(table, where, base)
    if "table" in table and "query" in table:
        raise ConfigError(f"{where}: give either 'table' or 'query', not both")
    for key in ("format", "window_gap_minutes", "date_order", "include_spam_and_trash"):
        if key in table:
            raise ConfigError(f"{where}: '{key}' applies to exports ('path'), not to a SQLite 'database'")
    return CollectionConfig(
        name=name, database=base / Path(database).expanduser(), database_label=database,
        table=table.get("table") or (None if "query" in table else f"{name}_documents"),
        query=table.get("query"), description=table.get("description", ""), language=language,
        keep_trashed=table.get("keep_trashed", False),
    )


def _parse_export(table: dict[str, Any], where: str, base: Path) -> CollectionConfig:
    for key in ("table", "query", "keep_trashed"):
        if key in table:
            raise ConfigError(f"{where}: '{key}' applies to a SQLite 'database', not to an export ('path')")
    gap = float(table.get("window_gap_minutes", DEFAULT_WINDOW_GAP_MINUTES))
    if not 0 < gap <= 7 * 24 * 60:
        raise ConfigError(f"config key 'window_gap_minutes' in {where} must be between 0 and 10080 "
                          f"(a week); got {gap!r}")
    order = table.get("date_order")
    if order is not None and order not in DATE_ORDERS:
        raise ConfigError(f"config key 'date_order' in {where} must be \"dmy\" (day/month/year) or \"mdy\" "
                          f"(month/day/year); got {order!r}")
    fmt = table.get("format")
    return CollectionConfig(name=table["name"], path=base / Path(table["path"]).expanduser(),
                            database_label=table["path"], format=fmt.lower() if fmt else None,
                            window_gap_minutes=gap, description=table.get("description", ""),
                            language=table.get("language"), date_order=order,
                            include_spam_and_trash=table.get("include_spam_and_trash", False))
