"""VecBook: local semantic, keyword and hybrid search over your own text records.

Plain ``.txt`` files (records separated by ``---`` lines) and read-only SQLite
tables are loaded at start-up, embedded with all-MiniLM-L6-v2 into an in-memory
FAISS index beside a BM25 keyword index, and searched from the shell
(``vecbook search "..."`` once installed, or ``python vecbook.py search "..."`` in a checkout),
over MCP (``vecbook serve``; ``--http`` adds a search page) or from Python (``from vecbook import VecBook``). Every hit
cites its file and line range.

The package's modules are its sections, in dependency order (each imports only
the ones before it): config -> cpu -> records -> onnx_model -> onnx_build -> embed -> key_rows -> vector_files
-> vector_cache -> rows_file -> vector_store -> scan_file -> search_rows -> vector_index -> tokens -> languages
-> index -> snippets -> filter_values -> filters
-> date_words -> rank -> sqlite_ro -> exports -> sources -> source_counts -> registry
-> blocks -> spill -> build -> stored_texts -> record_columns -> keyword_cache -> caches -> chat_hits -> hits -> status -> watch -> book (the VecBook facade) -> mcp -> remote
-> server -> cli.
``import vecbook`` loads the standard library only; ``VecBook``, ``Embedder``, the hit classes and ``main``
are imported when first named (numpy with them); torch, sentence-transformers, onnxruntime, faiss and fastmcp are
imported by the functions that use them.
"""

import importlib
from typing import TYPE_CHECKING, Any

from .config import (
    CollectionConfig,
    Config,
    ConfigError,
    ModelNotFoundError,
    QueryError,
    RecordError,
    VecBookError,
    __version__,
    load_config,
)
from .records import Record, parse_records

if TYPE_CHECKING:
    from .book import VecBook
    from .cli import main
    from .embed import Embedder
    from .hits import Context, Entry, Hit, Query, Results

# Names imported when first used: ``vecbook serve`` answers an MCP client's ``initialize`` before
# numpy and the search modules are imported (the command line is ``vecbook.cli``, under this package).
_LAZY = {"VecBook": "book", "Context": "hits", "Entry": "hits", "Hit": "hits", "Query": "hits", "Results": "hits",
         "main": "cli", "Embedder": "embed"}

__all__ = [
    "CollectionConfig", "Config", "ConfigError", "Context", "Embedder", "Entry", "Hit", "ModelNotFoundError", "Query",
    "QueryError", "Record", "RecordError", "Results", "VecBook", "VecBookError", "__version__",
    "load_config", "main", "parse_records",
]


def __getattr__(name: str) -> Any:
    """``VecBook`` and the other names of ``_LAZY`` on first use; a submodule (``vecbook.embed``) too."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name.startswith("__"):  # (hasattr(module, "__wrapped__") and the like: no submodule)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
