"""The MCP stdio server: ``search``, ``reindex`` and ``stats`` tools over one VecBook."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from .book import VecBook
from .config import MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, QueryError, VecBookError, __version__
from .rank import FILTER_OPERATORS

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


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
        similarity_score (0-1, as a string), metadata, source, id and citation. In hybrid
        mode similarity_score is relative to the query's other candidates (the best hit of
        an unrelated query can score 1), so compare hits with each other, not with a fixed bar.
        """
        try:
            hits = book.search(query, max_results=max_results, mode=mode,
                               filters=filters_argument(filters)).to_dicts()
        except VecBookError as exc:
            raise ToolError(str(exc)) from None
        # Explicit text content, so an empty result reads "[]" rather than nothing.
        return ToolResult(content=json.dumps(hits, ensure_ascii=False), structured_content={"result": hits})

    def reindex(full: bool = False) -> dict[str, Any]:
        """Bring the index up to date now: changed files and collections are re-read, new text
        embedded (stats' last_update says what was done). full=true rebuilds from scratch.
        The server also watches the sources and does this by itself when they change."""
        try:
            return book.reindex(full=full)
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
        "filters": Annotated[dict[str, Any] | str | None, Field(
            description='Metadata filters, Django style, e.g. {"author": "ana", "date__gte": "2024-01-01", '
                        '"tags__contains": "work", "file_path": "journal/**", "source": "files"} (an object, '
                        'or the same object as JSON text). Operators: ' + ", ".join(FILTER_OPERATORS) + ".")],
        "return": list[dict[str, Any]],
    }
    reindex.__annotations__ = {
        "full": Annotated[bool, Field(description="Rebuild from scratch, forgetting what was read before "
                                                  "(vectors of unchanged text still come from the cache).")],
        "return": dict[str, Any],
    }
    read_only = {"readOnlyHint": True, "openWorldHint": False}
    server.tool(search, annotations=read_only)
    server.tool(reindex, annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                                      "openWorldHint": False})
    server.tool(stats, annotations=read_only)
    return server


def filters_argument(value: dict[str, Any] | str | None) -> dict[str, Any] | None:
    """The ``filters`` tool argument as a dict: clients that send every argument as a
    string (the MCP Inspector's ``--tool-arg``, some assistants) pass the object as JSON text."""
    if not isinstance(value, str):
        return value
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise QueryError(f"filters must be a JSON object such as {{\"author\": \"ana\"}}; "
                         f"the text given is not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(parsed, dict):
        raise QueryError(f"filters must be a JSON object such as {{\"author\": \"ana\"}}, got {value!r}")
    return parsed


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
