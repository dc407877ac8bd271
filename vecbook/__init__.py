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
-> index -> snippets -> filters
-> date_words -> rank -> sqlite_ro -> exports -> sources -> registry
-> blocks -> spill -> build -> stored_texts -> record_columns -> keyword_cache -> caches -> chat_hits -> hits -> status -> watch -> book (the VecBook facade) -> mcp -> remote
-> server -> cli.
``import vecbook`` loads the standard library and numpy only; torch, sentence-transformers, onnxruntime, faiss and
fastmcp are imported by the functions that use them.
"""

from .book import VecBook
from .hits import Context, Entry, Hit, Query, Results
from .cli import main
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
from .embed import Embedder
from .records import Record, parse_records

__all__ = [
    "CollectionConfig", "Config", "ConfigError", "Context", "Embedder", "Entry", "Hit", "ModelNotFoundError", "Query",
    "QueryError", "Record", "RecordError", "Results", "VecBook", "VecBookError", "__version__",
    "load_config", "main", "parse_records",
]
