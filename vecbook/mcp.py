"""The MCP server (stdio here; HTTP in ``server.py``): ``search``, ``get``, ``sources``, ``reindex`` and ``stats`` tools over one VecBook."""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

from .config import (FILTER_OPERATORS, MAX_CHARS, MAX_CONTEXT, MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, MAX_TOTAL_CHARS,
                     ConfigError, QueryError, VecBookError, __version__)

if TYPE_CHECKING:  # imported once the handshake is answered (OpenedLater): numpy and the index come with it
    from .book import VecBook

# Characters of each hit's text an MCP search returns by default: the snippet points at
# the answer, and ten whole 4 MB records would flood an assistant's context.
DEFAULT_MAX_CHARS = 2_000
# On SIGTERM, how long the caches' put-off writes may take before the server leaves anyway
# (~1-3 s at 100k records; clients follow SIGTERM with SIGKILL after a few seconds).
EXIT_WRITE_SECONDS = 10.0

# A JSON escape, two at a time where a high surrogate is followed by a low one: an escaped
# backslash is matched first, so its letters are never read as an escape of their own.
JSON_ESCAPE = re.compile(rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                         rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


MCP_INSTRUCTIONS = (
    "VecBook searches the user's own notes, journals, chat and mail exports, and SQLite "
    "collections on this machine. Use `search` to find records, `get` to read a hit whole with the "
    "records around it, `sources` to see what can be searched (names for search's `sources`); cite hits "
    "by their `citation` "
    "(file:line-range or database#table:row).")


def build_server(book: VecBook) -> Any:
    """A FastMCP server exposing ``search``, ``reindex`` and ``stats`` over ``book``."""
    from typing import Annotated, Literal

    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError, ValidationError
    from fastmcp.server.middleware import Middleware
    from fastmcp.tools.base import ToolResult
    from mcp.types import TextContent
    from pydantic import Field

    class StartIndexing(Middleware):
        """Start indexing and watching on the first message of any kind, once it is answered.

        Not at start-up: reading the sources holds the interpreter, and the handshake would
        wait on it. Not on ``initialize`` alone: a client may open with ``server/discover``
        (fastmcp 4's own ``Client`` does) and never send ``initialize``."""

        async def on_message(self, context: Any, call_next: Any) -> Any:
            result = await call_next(context)
            book.start()  # returns at once, and does nothing after the first time
            return result

    class PlainArgumentErrors(Middleware):
        """An argument the tool's schema refuses (``max_results`` 0, ``dedupe`` "maybe") is told in
        one line naming it, as VecBook's own refusals are, not as pydantic's report with its URL."""

        async def on_call_tool(self, context: Any, call_next: Any) -> Any:
            try:
                return await call_next(context)
            except ValidationError as exc:
                if not hasattr(exc.__cause__, "errors"):
                    raise
                raise ToolError(f"{context.message.name}: {argument_errors(exc.__cause__)}") from None

    def refusal(tool: str, exc: VecBookError) -> Any:
        """The error a tool call answers with, logged here with its reason: fastmcp's own line
        names only the tool, so it is moved to DEBUG (where its version reads ``log_level``)."""
        log.warning("%s refused: %s", tool, " ".join(str(exc).splitlines()))  # one log line, whatever the client sent
        error = ToolError(str(exc))
        error.log_level = logging.DEBUG
        return error

    server = FastMCP("vecbook", instructions=MCP_INSTRUCTIONS, version=__version__)
    server.add_middleware(StartIndexing())
    server.add_middleware(PlainArgumentErrors())

    def search(query, max_results=None, mode=None, filters=None, sources=None, since=None,  # type: ignore[no-untyped-def]
               until=None, participants=None, max_chars=DEFAULT_MAX_CHARS, max_total_chars=None, dedupe=None,
               recency_half_life_days=None):
        """Search the user's local records (notes, journals, chats, mail, calendars, SQLite rows).

        Returns hits best first; each has snippet (the matching lines, about 480 characters),
        snippet_line and snippet_end_line, matched_terms, citation (file:lines), text (cut to
        max_chars around the snippet, citation and lines then those of the text shown; truncated
        says so: call `get` with the id for the whole record and its neighbours), file_path,
        line_number, end_line, similarity_score (0-1, as a string), metadata, source, id,
        duplicates (citations of near-identical hits folded into it) and matches_query (false:
        the hit matched nothing of the query and is listed only because it passed the filters;
        it scores 0).
        With max_total_chars, hits are taken best first while their texts fit in it together; a
        second text item then says how many were left out: {"left_out": N, "max_total_chars": B}.
        No hits: a text item may say what left none, {"no_results": "since 2025-01 leaves no record;
        they are dated 2023-02-01 to 2024-06-30"}: widen that filter rather than ask again.
        While the first index still embeds, a semantic or hybrid search is answered by keywords,
        and a text item says so: {"answered_as": "keyword", "note": ...}.
        """
        try:
            # Each text is cut to max_chars first, so the budget counts what the client receives.
            results = book.search(query, max_results=max_results, mode=mode, filters=filters_argument(filters),
                                  sources=list_argument("sources", sources), since=since, until=until,
                                  participants=list_argument("participants", participants), dedupe=dedupe,
                                  recency_half_life_days=recency_half_life_days, max_total_chars=max_total_chars,
                                  max_chars=max_chars)
        except VecBookError as exc:
            raise refusal("search", exc) from None
        hits, left_out = results.to_dicts(), results.left_out
        # Explicit text content, so an empty result reads "[]" rather than nothing.
        content = [TextContent(type="text", text=json.dumps(hits, ensure_ascii=False))]
        structured: dict[str, Any] = {"result": hits}
        if left_out:
            content.append(TextContent(type="text", text=json.dumps({"left_out": left_out,
                                                                     "max_total_chars": max_total_chars})))
            structured["left_out"] = left_out
        if results.why_empty:
            content.append(TextContent(type="text", text=json.dumps({"no_results": results.why_empty},
                                                                    ensure_ascii=False)))
            structured["no_results"] = results.why_empty
        asked = mode or book.default_mode
        if results.mode is not None and results.mode != asked:
            note = {"answered_as": results.mode, "note": f"the first index is still computing vectors, so this "
                                                         f"{asked} search was answered by keywords; ask again in a "
                                                         f"minute for {asked} hits"}
            content.append(TextContent(type="text", text=json.dumps(note)))
            structured.update(note)
        return ToolResult(content=content, structured_content=structured)

    def get(ref, context=0):  # type: ignore[no-untyped-def]
        """The whole record a search hit came from (pass its `id` or `citation`), with up to
        `context` records before and after it in the same file or conversation: the chat
        messages around a hit, the neighbouring entries of a journal. Each has its citation."""
        try:
            return book.get(ref, context).to_dict()
        except VecBookError as exc:
            raise refusal("get", exc) from None

    def reindex(full: bool = False) -> dict[str, Any]:
        """Bring the index up to date now: changed files and collections are re-read, new text
        embedded (stats' last_update says what was done). full=true rebuilds from scratch.
        The server also watches the sources and does this by itself when they change."""
        try:
            return book.reindex(full=full)
        except VecBookError as exc:
            raise refusal("reindex", exc) from None

    def sources() -> list[dict[str, Any]]:
        """What this server searches, one entry per source: name (what `search` takes in `sources`;
        "files" is the data folder's notes), format (whatsapp, telegram, ics, markdown, sqlite,
        text...), path, records, first_date and last_date, participants (most frequent first),
        problems, left_out (what it leaves out on purpose, such as an app's trash or Spam, and the
        setting that keeps it), and the user's description of it."""
        try:
            return book.sources()
        except VecBookError as exc:
            raise refusal("sources", exc) from None

    def stats() -> dict[str, Any]:
        """Indexing statistics and progress: state, records embedded of total, counts per
        source, skipped records with reasons, what the sources leave out on purpose (left_out),
        model, dimensions, metric, index type."""
        try:
            return book.stats()
        except VecBookError as exc:
            raise refusal("stats", exc) from None

    # Real annotation objects (this module uses postponed annotations, and
    # pydantic resolves strings in module globals, where these names are not).
    search.__annotations__ = {
        "query": Annotated[str, Field(description="What to look for, in natural language or keywords.",
                                      max_length=MAX_QUERY_CHARS)],
        "max_results": Annotated[int | None, Field(
            description=f"How many hits to return (1-{MAX_RESULTS_LIMIT}); default from the config.",
            ge=1, le=MAX_RESULTS_LIMIT)],
        "mode": Annotated[Literal["semantic", "keyword", "hybrid"] | None, Field(
            description="semantic (meaning, in the languages stats lists as model_languages), keyword (BM25 "
                        "on exact words, names, ids; every language) or hybrid (both, fused; leans on keywords "
                        "for a query in another language); default from the config.")],
        "filters": Annotated[dict[str, Any] | str | None, Field(
            description='Metadata filters, Django style, e.g. {"author": "ana", "date__gte": "2024-01-01", '
                        '"tags__contains": "work", "file_path": "journal/**", "source": "files"} (an object, '
                        'or the same object as JSON text). Operators: ' + ", ".join(FILTER_OPERATORS) + ".")],
        "sources": Annotated[list[str] | str | None, Field(
            description='Only these collections, e.g. ["slack", "mail"] ("files" for the notes of the data '
                        'folder, .txt and .md).')],
        "since": Annotated[str | None, Field(
            description="Only records dated on or after this, or lasting into it (a chat window, event or "
                        "entry whose end_date reaches it): an ISO date (2024-01-31), a month (2024-03), a "
                        "year (2024), a span back from now (30d, 2w, 6m, 1y, 12h, 'last 7 days'), a date as "
                        "written (5 March 2024) or words (yesterday, last week, 2 weeks ago, March).")],
        "until": Annotated[str | None, Field(
            description="Only records dated (begun) up to this: an ISO date, month or year (the whole of it), "
                        "a span back from now, a date as written or words (last week: to its Sunday). With since, a record whose span overlaps the range is in it.")],
        "participants": Annotated[list[str] | str | None, Field(
            description='Only conversations with each of these people, e.g. ["Ana"] (whole-word match), '
                        '["ana@example.com"] (the whole address) or ["@example.com"] (a mail domain; '
                        'a leading @ is also a chat handle: ["@ana_b"] finds ana_b).')],
        "max_chars": Annotated[int, Field(
            description="Characters of each hit's text to return: a longer text is cut to the part "
                        "around its snippet, its lines and citation those shown, and says truncated: "
                        "true (the snippet always comes whole).", ge=0, le=MAX_CHARS)],
        "max_total_chars": Annotated[int | None, Field(
            description="A budget for all hits' text together (characters): hits are taken best first "
                        "while they fit; a second item says how many were left out. E.g. 8000.",
            ge=1, le=MAX_TOTAL_CHARS)],
        "dedupe": Annotated[bool | None, Field(
            description="Fold near-identical hits into the best one (default on).")],
        "recency_half_life_days": Annotated[float | None, Field(
            description="Favour recent records: blend a decay with this half-life (days) into the score.",
            gt=0)],
        "return": list[dict[str, Any]],
    }
    get.__annotations__ = {
        "ref": Annotated[str, Field(description="A hit's id or citation.")],
        "context": Annotated[int, Field(description=f"Records to add before and after (0-{MAX_CONTEXT}).",
                                        ge=0, le=MAX_CONTEXT)],
        "return": dict[str, Any],
    }
    reindex.__annotations__ = {
        "full": Annotated[bool, Field(description="Rebuild from scratch, forgetting what was read before "
                                                  "(vectors of unchanged text still come from the cache).")],
        "return": dict[str, Any],
    }
    read_only = {"readOnlyHint": True, "openWorldHint": False}
    writes = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    for tool in (search, get, reindex, sources, stats):
        add_tool(server, tool, writes if tool is reindex else read_only)
    return server


def add_tool(server: Any, function: Callable[..., Any], annotations: dict[str, bool]) -> None:
    """Register ``function`` as a tool described by its docstring, as fastmcp would describe it.

    fastmcp reads a tool's docstring with griffe, whose import (~0.1-0.2 s on the AVX2 EPYC)
    came before ``initialize`` is answered. None of these docstrings has a section griffe splits
    off (``Args:``, ``Returns:``), so its description is the cleaned docstring: given as that, and
    the function left without one, griffe is never imported."""
    description = inspect.cleandoc(function.__doc__ or "")
    function.__doc__ = None
    server.tool(function, description=description, annotations=annotations)


def list_argument(name: str, value: list[str] | str | None) -> list[str] | None:
    """A list argument; clients that send every argument as a string pass JSON text or one name."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise QueryError(f"{name} must be a list such as [\"slack\"]; the text given is not JSON "
                             f"({exc.msg})") from None
        return parsed
    return [part.strip() for part in text.split(",") if part.strip()]


def argument_errors(error: Any) -> str:
    """A pydantic ValidationError as one line: each argument at fault, what it must be, what came."""
    said = []
    for found in error.errors():
        where = ".".join(str(part) for part in found.get("loc", ()) if part != "arguments") or "arguments"
        shown = repr(found.get("input"))
        got = "" if str(found.get("type", "")).startswith("missing") else \
            f" (got {shown if len(shown) <= 40 else shown[:37] + '...'})"
        said.append(f"{where}: {found['msg'][:1].lower()}{found['msg'][1:]}{got}")
    return "; ".join(said)


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


def serve(book: VecBook | OpenedLater) -> None:
    """Run the MCP server on stdio until stdin closes or SIGTERM arrives."""
    import gc

    server = build_server(book)
    # The imports leave ~54k objects the collector tracks, alive as long as the process: frozen, the
    # collector no longer walks them on each full collection while the first index is read
    # (20k records: reading and tokenizing 0.80 -> 0.70 s, measured with fastmcp imported).
    # OpenedLater freezes the book's imports once they are done.
    gc.freeze()
    stop = exit_handler(exit_code=lambda: 2 if isinstance(getattr(book, "opened", None), Unusable) else 0)
    signal.signal(signal.SIGTERM, stop)
    on_any_thread(signal.SIGTERM, stop)
    # The MCP SDK drops a stdin line that is not JSON-RPC with a DEBUG line only: a client that
    # sent one waits for an answer that never comes, so the log says so.
    dispatcher = logging.getLogger("mcp.shared.jsonrpc_dispatcher")
    dispatcher.setLevel(logging.DEBUG)
    dispatcher.addFilter(_unreadable_line)
    mend_stdin()
    server.run(transport="stdio", show_banner=False)
    log.info("stdin closed; exiting")
    # The same exit as SIGTERM's: the interpreter's own shutdown, while a thread still loads the
    # model (a client that closes stdin in the first seconds), aborted in onnxruntime's C++.
    stop(0, None)


class Unusable:
    """What ``serve`` answers with when the config or its sources cannot be used (nothing to
    search, a typo in vecbook.toml): every tool call is that error, with what to do. A client
    shows a server that exits at start as a closed connection only, its reason in a log the user
    seldom finds; this way the assistant reads the reason and can tell the user."""

    default_mode = "hybrid"

    def __init__(self, error: VecBookError) -> None:
        self.error = ConfigError(f"{error}. Then restart the VecBook server (reconnect it in this assistant's "
                                 "MCP settings, or restart the assistant)")

    def start(self) -> None:
        """Nothing to index."""

    def search(self, *_args: Any, **_kwargs: Any) -> Any:
        """Each tool's call: the error."""
        raise self.error

    get = reindex = sources = stats = search


class OpenedLater:
    """The book of a stdio server, made once the client's first message is answered: the
    handshake waits for no import of VecBook's own (numpy and the index modules: ~0.5 s of CPU on
    the AVX2 EPYC, where ``initialize`` was answered 2.71 s after launch). ``start()`` (the
    first message) opens it on a thread; any other attribute waits for it. A book that cannot be
    opened (its folder gone) is ``Unusable``: every tool call answers why, as ``serve_unusable``'s."""

    def __init__(self, open_book: Callable[[], VecBook]) -> None:
        self._open_book = open_book
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.opened: VecBook | Unusable | None = None

    def start(self) -> None:
        """Open the book and start it on a thread of its own; returns at once."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._open, name="vecbook-open", daemon=True)
                self._thread.start()

    def _open(self) -> None:
        import gc

        # Whatever ends the open (even a SystemExit from a library), a waiting tool call is answered.
        opened: VecBook | Unusable = Unusable(VecBookError("the index could not be opened: its opening was stopped"))
        try:
            opened = self._open_book()
            opened.start()  # before a waiting tool call reaches it
        except VecBookError as exc:
            log.error("%s; answering every tool call with this until the client disconnects", exc)
            opened = Unusable(exc)
        except Exception as exc:  # (a bug: said, and the server stays up to say it)
            log.exception("the index could not be opened")
            opened = Unusable(VecBookError(f"the index could not be opened: {exc}"))
        finally:
            gc.freeze()  # the book's imports, as serve() froze the server's
            self.opened = opened
            self._done.set()

    def __getattr__(self, name: str) -> Any:
        self.start()
        self._done.wait()
        return getattr(self.opened, name)


def serve_unusable(error: VecBookError) -> None:
    """Run the MCP server on stdio, every tool call answered with ``error``, until stdin closes."""
    log.error("%s; answering every tool call with this until the client disconnects", error)
    mend_stdin()
    build_server(Unusable(error)).run(transport="stdio", show_banner=False)


def mend_stdin() -> None:
    """Put a thread between stdin and the MCP SDK that reads each lone surrogate escape as U+FFFD.

    JSON's grammar allows ``"\\ud83d"`` alone, and JavaScript's ``JSON.stringify`` writes it for
    a string cut inside an emoji; the SDK's parser refuses such a line whole, and over stdio it
    answers nothing, so the client waited until its own time-out. The SDK reads fd 0 itself:
    fd 0 becomes a pipe this thread fills, and end of input still reaches it as end of input."""
    if os.name == "nt":
        return  # left as it was: the SDK rebinds Windows' standard handle there, not fd 0 alone
    try:
        source = os.fdopen(os.dup(0), "rb")
    except OSError:
        return  # started with no stdin at all: nothing to mend, the SDK reads end of input
    read, write = os.pipe()
    os.dup2(read, 0)
    os.close(read)

    def pump() -> None:
        with os.fdopen(write, "wb", buffering=0) as sink:
            for line in iter(source.readline, b""):
                try:
                    sink.write(well_formed_line(line))
                except BrokenPipeError:
                    return

    threading.Thread(target=pump, name="vecbook-stdin", daemon=True).start()


def well_formed_line(line: bytes) -> bytes:
    """``line`` with each JSON escape of a lone surrogate replaced by ``\\ufffd``, pairs kept."""
    if b"\\u" not in line:
        return line  # nearly every line: no escape to look at
    return JSON_ESCAPE.sub(lambda found: found[0] if len(found[0]) != 6 else b"\\ufffd", line)


def _unreadable_line(record: logging.LogRecord) -> bool:
    """The SDK's "transport yielded exception" as a WARN; its other DEBUG lines at VecBook's level."""
    if record.msg == "transport yielded exception: %r" and isinstance(record.args, tuple) and record.args:
        error = record.args[0]
        first = error.errors()[0] if hasattr(error, "errors") and error.errors() else None  # pydantic's
        said = f"{first['msg']}, in {str(first.get('input', '')).strip()[:120]!r}" if first else str(error)[:200]
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg, record.args = "a line on stdin is not a JSON-RPC message; ignored, with no answer (%s)", (said,)
        return True
    return record.levelno >= log.getEffectiveLevel()


def on_any_thread(signum: int, handler: Callable[[int, Any], None]) -> None:
    """Run ``handler`` on a thread of its own as soon as ``signum`` arrives, whichever thread the
    system hands it to. Python runs a handler in the main thread only, when that thread next runs
    Python code: a SIGTERM that lands on another thread (the one reading stdin, a model's) waited
    there while the idle server's event loop slept, and the server never left. The signal's C
    handler writes its number to the wakeup file, which a thread here reads. (Not on Windows,
    whose wakeup file must be a socket, and where SIGTERM is never sent by another process.)"""
    if os.name == "nt":
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)

    def watch() -> None:
        while True:
            if signum in os.read(read, 64):
                handler(signum, None)

    threading.Thread(target=watch, name="vecbook-signals", daemon=True).start()


def _imported(module: str, name: str) -> Any:
    """``module.name`` where this process has imported ``module`` (wholly), else None."""
    return getattr(sys.modules.get(module), name, None)


def exit_handler(before_exit: Callable[[], None] = lambda: None,
                 exit_code: Callable[[], int] = lambda: 0) -> Callable[[int, Any], None]:
    """A signal handler that runs ``before_exit``, writes what the caches put off (within
    EXIT_WRITE_SECONDS) and ends the process with ``exit_code()`` (signal 0: stdin closed)."""
    stopping = threading.Lock()  # taken by the first call, from the main thread or ``on_any_thread``'s

    def stop(signum: int, _frame: Any) -> None:
        # Write what the last minute's updates put off (the caches are written atomically,
        # so nothing else needs flushing), then leave at once rather than wait on torch threads.
        # The caches and the ONNX build as far as this process imported them: one not imported (a
        # server that left before its book opened) holds nothing to write and builds nothing.
        put_off = _imported("vecbook.caches", "writing_put_off")
        write = _imported("vecbook.caches", "write_before_exit")
        if (put_off is not None and put_off()) or not stopping.acquire(blocking=False):
            return  # a second signal, or the exit (stdin closed) is writing them already: let it finish
        if signum:  # (0: stdin closed, said already)
            log.info("received signal %d; exiting", signum)
        stop_builds = _imported("vecbook.onnx_build", "stop_builds")
        if stop_builds is not None:
            stop_builds()  # an ONNX build under way (a first start) goes too, with its ~1 GB
        try:
            before_exit()
            if write is not None:
                # On a thread of its own, with a time limit: the signal may have interrupted this
                # thread while it held a lock the writes take.
                writer = threading.Thread(target=write, name="vecbook-exit-write", daemon=True)
                writer.start()
                writer.join(EXIT_WRITE_SECONDS)
        finally:
            logging.shutdown()
            for stream in (sys.stdout, sys.stderr):  # the last replies (os._exit flushes nothing)
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(exit_code())

    return stop
