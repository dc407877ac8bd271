"""The command line: ``search``, ``get``, ``stats``, ``reindex``, ``serve``, and ``add``, ``sources``,
``remove`` and ``config path`` for the sources a config lists; logging and progress on stderr."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn, Sequence

# Modules that import numpy (book, hits, filters, tokens...) are imported by the commands that use
# them: ``serve`` answers an MCP client's ``initialize`` before any of them is imported.
from .hit_lines import (fit_stdout, format_hits, json_text, left_out_line, metadata_line, shown, text_lines,
                        wants_color)
from .config import (
    CONFIG_NAME,
    FUSIONS,
    LOG_LEVELS,
    MAX_CONTEXT,
    MODES,
    Config,
    ConfigError,
    QueryError,
    VecBookError,
    __version__,
    find_config_file,
    load_config,
    user_config_file,
)
from .config_notice import log_config_in_use
from .cli_output import print_sources, print_stats
from .mcp import OpenedLater, serve, serve_unusable
from .progress import TerminalProgress
from .source_checks import check_sources

if TYPE_CHECKING:
    from .book import VecBook

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


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


def command_log_level(args: argparse.Namespace, config: Config) -> str:
    """The stderr log level of a command: ``--log-level``, else INFO for ``-v``; else ``serve``
    logs at the configured level (INFO by default: its stderr is a log the client keeps) and the
    one-shot commands show warnings and errors only, so a search prints its results and nothing else."""
    if args.log_level:
        return str(args.log_level)
    if getattr(args, "verbose", False):
        return "INFO"
    return config.log_level if args.command == "serve" else "WARNING"


def route_other_loggers() -> None:
    """Log everything the process logs (FastMCP, the MCP SDK, any library) through VecBook's
    stderr handler, so ``serve`` writes one format: ``HH:MM:SS LEVEL message``."""
    import fastmcp  # noqa: F401 - importing it installs its rich handlers, removed below

    ours = next(h for h in log.handlers if isinstance(h, _StderrHandler))
    fast = logging.getLogger("fastmcp")
    for handler in fast.handlers[:]:
        fast.removeHandler(handler)
    fast.propagate = True
    fast.setLevel(log.level)  # FastMCP's INFO lines only when VecBook's own are shown
    root = logging.getLogger()
    if ours not in root.handlers:
        root.addHandler(ours)  # other libraries stay at the root's WARNING level
    log.propagate = False  # "vecbook" has the handler already: no second copy via the root


class _Parser(argparse.ArgumentParser):
    """argparse's parser with a usage error on one line, as every other error is (argparse prints
    the whole usage block first), naming the help that lists the options; ``commands``: the
    top parser's command parsers, by name."""

    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists what it takes)\n")


def _checked(check_name: str) -> Callable[[str], int]:
    """An argparse type: a whole number the library's own check (``hits.check_name``) accepts, its
    refusal told under the flag's name (``argument --max-total-chars: must be ...``), not the Python one's."""
    def whole(text: str) -> int:
        from . import hits

        check = getattr(hits, check_name)
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        try:
            check(value)
        except QueryError as exc:  # "max_chars must be ...": the flag names it
            raise argparse.ArgumentTypeError(str(exc).split(" ", 1)[1]) from None
        return value

    return whole


def build_parser() -> _Parser:
    """The ``vecbook`` command line: search, get, stats, reindex, serve, add, remove, sources, config path."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="PATH", help=f"config file (default: ./{CONFIG_NAME}, else the "
                                                         "user's, see `vecbook config path`)")
    common.add_argument("--data-dir", metavar="DIR", help="the notes folder to search (.md, .txt, exports): alone, "
                        "or with --config in place of its data_directory")
    common.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
                        help="stderr log level: DEBUG, INFO, WARNING (or WARN), ERROR (default: WARNING; "
                             "serve: the config's log_level, INFO)")
    common.add_argument("-v", "--verbose", action="store_true", help="log what is read and indexed (--log-level INFO)")
    parser = _Parser(
        prog="vecbook", description="VecBook: local semantic, keyword and hybrid search over your own text records.")
    parser.add_argument("--version", action="version", version=f"vecbook {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parser.commands = commands.choices
    search = commands.add_parser("search", parents=[common], help="search the records",
                                 description="Search records; prints hits best first.")
    search.add_argument("query", nargs="+", help="what to look for (its words quoted, or not)")
    search.add_argument("-n", "--max-results", type=_checked("check_max_results"), metavar="N",
                        help="number of hits (1-1000)")
    # Any case, as --log-level: a shell user types --mode Keyword (MCP's and Python's stay exact).
    search.add_argument("--mode", type=str.lower, choices=MODES,
                        help="semantic, keyword or hybrid (default from config)")
    search.add_argument("--fusion", type=str.lower, choices=FUSIONS, help="hybrid fusion: rrf or linear")
    search.add_argument("--keyword-weight", type=float, metavar="W", help="linear fusion weight of keywords, 0-1")
    search.add_argument("--filter", action="append", default=[], metavar="KEY[__OP]=VALUE",
                        help="metadata filter, repeatable: author=ana, date__gte=2024-01-01, tags__contains=work, "
                             "channel__in=a,b, file_path='journal/*', 'priority>2'")
    search.add_argument("--min-score", type=float, metavar="S",
                        help="drop hits scoring below S (0-1); semantic: cosine mapped to 0-1 (an unrelated "
                             "query's best hit still scores ~0.6), keyword: BM25 over its upper bound, hybrid "
                             "linear: the fused score (a nonsense query's best hit ~0.25, a real question's ~0.8), "
                             "hybrid rrf: ranks only, so it cuts only a list's tail")
    search.add_argument("--source", action="append", metavar="NAME",
                        help="only this collection ('files' for the data folder's notes); repeatable")
    search.add_argument("--since", metavar="WHEN",
                        help="records dated on or after (or lasting into it): 2024-01-31, 2024-03, 2024, 30d, 2w, 6m, 1y, "
                             "or as written: '5 March 2024', yesterday, 'last week', '2 weeks ago'")
    search.add_argument("--until", metavar="WHEN",
                        help="records dated up to: 2024-01-31, 2024-03 or 2024 (the whole of it), or a span")
    search.add_argument("--participant", action="append", metavar="NAME",
                        help="conversations this person took part in: a name, a mail address, @domain or @handle; "
                             "repeatable (each must)")
    search.add_argument("--no-dedupe", action="store_true", help="show near-identical hits separately")
    search.add_argument("--recency-half-life", type=float, metavar="DAYS",
                        help="favour recent records: blend a decay of this half-life into the score")
    search.add_argument("--max-total-chars", type=_checked("check_max_total_chars"), metavar="N",
                        help="a budget for all hits' text together: hits best first while they fit; "
                             "how many were left out is said on stderr")
    search.add_argument("--max-chars", type=_checked("check_max_chars"), metavar="N",
                        help="cut each hit's text to N characters around its match and show it, with the "
                             "lines it cites, in place of the snippet (the budget counts the cut texts)")
    search.add_argument("--json", action="store_true", help="print a JSON array of hits")
    search.set_defaults(handler=_cmd_search)
    get = commands.add_parser("get", parents=[common], help="show a record whole, with its neighbours",
                              description="Show the record a hit came from (by its id or citation) "
                                          "with up to --context records before and after it.")
    get.add_argument("ref", help="a hit's id or citation, e.g. journal/2024/03.txt:9-15")
    get.add_argument("-C", "--context", type=_checked("check_context"), default=0, metavar="N",
                     help=f"records before and after, from the same file or conversation (0-{MAX_CONTEXT})")
    get.add_argument("--json", action="store_true", help="print JSON")
    get.set_defaults(handler=_cmd_get)
    stats = commands.add_parser("stats", parents=[common], help="index statistics",
                                description="Index the records and print statistics.")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(handler=_cmd_stats)
    reindex = commands.add_parser("reindex", parents=[common], help="build the index and the vector cache",
                                  description="Index the records (vectors come from the cache where the same "
                                              "text was embedded before) and print what the update did.")
    reindex.add_argument("--full", action="store_true",
                         help="rebuild from scratch instead of reusing what is unchanged (the cache still counts)")
    reindex.set_defaults(handler=_cmd_reindex)
    serve_cmd = commands.add_parser("serve", parents=[common], help="run the MCP server (stdio, or HTTP with the page)",
                                    description="Run the MCP server on stdio (for Claude Desktop, Claude Code...), "
                                                "or with --http one server for every client, the search page and "
                                                "the CLI; changes to the records are picked up as they happen.")
    serve_cmd.add_argument("--no-watch", action="store_true",
                           help="do not watch the data directory and collections (reindex by the MCP tool only)")
    _add_http_options(serve_cmd)
    serve_cmd.set_defaults(handler=_cmd_serve)
    _add_source_commands(commands, common)
    return parser


def _add_http_options(serve_cmd: argparse.ArgumentParser) -> None:
    """``serve --http`` and where it listens (docs/server.md)."""
    from .config import DEFAULT_HOST, DEFAULT_PORT, TOKEN_VARIABLE

    serve_cmd.add_argument("--http", action="store_true",
                           help="serve MCP over streamable HTTP at /mcp, the search page at /, and the CLI")
    serve_cmd.add_argument("--host", metavar="HOST", help=f"--http: the address to listen on (default: {DEFAULT_HOST}; "
                                                          "any other needs a token)")
    serve_cmd.add_argument("--port", type=int, metavar="N", help=f"--http: the port (default: {DEFAULT_PORT}; 0: any free one)")
    serve_cmd.add_argument("--token", metavar="TOKEN", help=f"--http: the bearer token clients must send (default: "
                                                            f"${TOKEN_VARIABLE}; needed beyond loopback)")


def _add_source_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """``add``, ``sources``, ``remove`` and ``config path``: the sources a config file lists."""
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--config", metavar="PATH", help="config file to edit (default: the user's, "
                                                         "see `vecbook config path`)")
    add = commands.add_parser("add", parents=[target], help="register a source: notes folder, export, database",
                              description="Read a source (a folder of .txt records or Markdown notes, a chat, "
                                          "mail or calendar export, a SQLite database), show what it holds, and "
                                          "add it to the config.")
    add.add_argument("path", help="the file, folder or .zip")
    add.add_argument("--name", help="what to call it in citations and sources= (default: from the file name)")
    add.add_argument("--format", help="the export format, when it cannot be told from the content "
                                      "(whatsapp, telegram, markdown, ics, text, sqlite...)")
    add.add_argument("--description", metavar="TEXT", help="what it holds, shown to you and to assistants")
    add.add_argument("--table", help="SQLite: the table of rows to search")
    add.add_argument("--text-column", metavar="COLUMN", help="SQLite: the table's column holding the text")
    add.add_argument("--date-column", metavar="COLUMN", help="SQLite: the table's column holding each row's date "
                                                             "(ISO text, or Unix or Core Data time)")
    add.set_defaults(handler=_cmd_add, loads_config=False)
    remove = commands.add_parser("remove", parents=[target], help="take a source out of the config",
                                 description="Remove a source from the config (its files are not touched).")
    remove.add_argument("name", help="the source's name, as `vecbook sources` lists it")
    remove.set_defaults(handler=_cmd_remove, loads_config=False)
    sources = commands.add_parser("sources", parents=[common], help="list the sources searched",
                                  description="Read the sources and list each with its format, path, records, "
                                              "date range and description.")
    sources.add_argument("--json", action="store_true", help="print JSON")
    sources.set_defaults(handler=_cmd_sources)
    config = commands.add_parser("config", help="about the config file",
                                 description="`vecbook config path` prints the config file in use.")
    actions = config.add_subparsers(dest="action", required=True, metavar="ACTION",
                                    help="path: print the config file in use")
    path = actions.add_parser("path", parents=[common], help="print the config file in use",
                              description=f"Print the config file a command run here uses: --config, else "
                                          f"./{CONFIG_NAME}, else the user's.")
    path.set_defaults(handler=_cmd_config_path, loads_config=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2: usage error, 1: runtime error)."""
    fit_stdout()
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if args.command == "search" and not any(word.startswith("-") for word in unknown):  # words after an option
            args.query, unknown = " ".join([*args.query, *unknown]), []
        if unknown:  # told by the command's own parser, whose help lists what it takes
            parser.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:  # argparse exits on --help and usage errors
        return int(exc.code or 0)
    # add, remove and config path take no --log-level: they log warnings only.
    configure_logging(getattr(args, "log_level", None)
                      or ("INFO" if getattr(args, "verbose", False) or args.command == "serve" else "WARNING"))
    with _sigterm_as_interrupt() as terminated:
        return _run(args, terminated)


def _run(args: argparse.Namespace, terminated: list[int]) -> int:
    """Run the parsed command; errors, Ctrl-C and SIGTERM become one line on stderr and an exit code."""
    try:
        if not getattr(args, "loads_config", True):
            code = int(args.handler(args, None))
        else:
            try:
                config = load_config(args.config, data_directory=args.data_dir, log_level=args.log_level)
            except ConfigError as exc:
                if not _answers_a_client(args):
                    raise
                return _serve_unusable(exc)
            configure_logging(command_log_level(args, config))
            log_config_in_use(config, named=bool(args.config))
            code = int(args.handler(args, config))
        if sys.stdout is not None:  # None under pythonw.exe: nothing to flush
            sys.stdout.flush()  # here, so a reader that left is a BrokenPipeError caught below
        return code
    except (ConfigError, QueryError) as exc:
        print(f"vecbook: error: {exc}", file=sys.stderr)
        return 2
    except VecBookError as exc:
        print(f"vecbook: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        # An interrupted index says what it kept (the exception's text), in the same line.
        kept = f"; {exc}" if str(exc) else ""
        TerminalProgress.end_all()
        print(f"vecbook: {'terminated' if terminated else 'interrupted'}{kept}", file=sys.stderr)
        return 128 + (terminated[0] if terminated else signal.SIGINT)  # as shells report a signal's end
    except BrokenPipeError:
        # stdout's reader left (`vecbook search ... | head`): no traceback, and none at exit when
        # Python flushes stdout again (the recipe in Python's signal module documentation).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process ended by SIGPIPE


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[list[int]]:
    """While a command runs, SIGTERM is met as Ctrl-C is (a KeyboardInterrupt in the main
    thread), so an interrupted first index keeps what it embedded; the list yielded holds the
    signal once one came. ``serve`` sets its own handler. Off the main thread, nothing changes."""
    received: list[int] = []

    def interrupt(signum: int, _frame: Any) -> None:
        if received:
            return  # a second SIGTERM: the first is being handled (what was embedded being kept)
        received.append(signum)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def _open_book(config: Config, **options: Any) -> VecBook:
    from .book import VecBook

    progress = TerminalProgress() if sys.stderr.isatty() else None
    return VecBook(config=config, progress=progress, **options)


def _cmd_search(args: argparse.Namespace, config: Config) -> int:
    from .filters import convenience_conditions, parse_filter_argument, parse_filters
    from .hits import check_query
    from .remote import find_server
    from .tokens import analysis_of

    filters = dict(parse_filter_argument(f) for f in args.filter) or None
    # Check everything that needs no index before building one: loading the model and
    # indexing take seconds, and a typo in a filter should not cost them.
    parse_filters(filters)
    convenience_conditions(args.source, args.since, args.until, args.participant)
    check_query(args.query)
    # A running server for this config answers at once; else a keyword search from the shell
    # needs no vectors: skip loading the model and embedding.
    book = find_server(config, lambda: _open_book(config, keyword_only=(args.mode or config.search_mode) == "keyword"))
    hits = book.search(args.query, max_results=args.max_results, mode=args.mode, filters=filters,
                       min_score=args.min_score, fusion=args.fusion, keyword_weight=args.keyword_weight,
                       sources=args.source, since=args.since, until=args.until, participants=args.participant,
                       dedupe=False if args.no_dedupe else None, recency_half_life_days=args.recency_half_life,
                       max_total_chars=args.max_total_chars, max_chars=args.max_chars)
    if args.json:
        print(json_text(hits.to_dicts()))
        if getattr(hits, "why_empty", None):  # the body stays a list; what left it empty goes beside it
            print(f"vecbook: no results: {hits.why_empty}", file=sys.stderr)
    else:
        filtered = bool(filters or args.source or args.since or args.until or args.participant)
        print(format_hits(hits, color=wants_color(), analysis=partial(analysis_of, config), filtered=filtered))
    if hits.left_out:
        print(left_out_line(len(hits), hits.left_out, args.max_total_chars), file=sys.stderr)
    return 0


def _cmd_get(args: argparse.Namespace, config: Config) -> int:
    from .remote import find_server

    # Looking a record up needs no vectors: skip the model.
    context = find_server(config, lambda: _open_book(config, keyword_only=True)).get(args.ref, args.context)
    if args.json:
        print(json_text(context.to_dict()))
        return 0
    blocks = []
    for entry in [*context.before, context.record, *context.after]:
        mark = ">" if entry is context.record else " "
        # The record asked for says its date, sender, subject... as a hit does (a mail's text is its body)
        about = [metadata_line(entry.metadata)] if entry is context.record and entry.metadata else []
        lines = ["    " + line for line in text_lines(shown(entry.text))]
        blocks.append("\n".join([f"{mark} {shown(entry.citation)}", *about, *lines]))
    print("\n\n".join(blocks))
    return 0


def _cmd_stats(args: argparse.Namespace, config: Config) -> int:
    from .remote import find_server

    stats = find_server(config, lambda: _open_book(config)).stats()
    if args.json:
        print(json_text(stats))
        return 0
    print_stats(stats)
    return 0


def _cmd_reindex(args: argparse.Namespace, config: Config) -> int:
    book = _open_book(config, background=True)
    stats = book.reindex(full=args.full)
    print(json_text({**stats["last_update"], "cache": stats["cache"]}))
    return 1 if stats["error"] else 0


def _cmd_serve(args: argparse.Namespace, config: Config) -> int:
    def open_book() -> VecBook:
        from .book import VecBook

        return VecBook(config=config, background=True, watch=config.watch and not args.no_watch)

    if not args.http:
        named = [flag for flag, value in (("--host", args.host), ("--port", args.port), ("--token", args.token))
                 if value is not None]
        if named:
            raise ConfigError(f"{named[0]} is for the HTTP server: add --http")
        route_other_loggers()
        if not _answers_a_client(args):
            serve(open_book())  # from a terminal, a book that cannot be opened is an error at once
            return 0
        # Started by a client: the handshake is answered before VecBook's own modules are imported, and a
        # book that cannot be opened is told through the tools. Nothing to search is known at once, and
        # said at start and by the exit code even where the client leaves before its first message.
        try:
            check_sources(config)
        except ConfigError as exc:
            return _serve_unusable(exc)
        serve(OpenedLater(open_book))
        return 0
    from .server import DEFAULT_HOST, DEFAULT_PORT, TOKEN_VARIABLE, bind, check_bind, serve_http

    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    host, port = args.host or DEFAULT_HOST, DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be from 0 (any free port) to 65535, got {args.port}")
    check_bind(host, token)  # before anything loads
    # Bound here and held until the server takes it: a port in use is told at once, not after
    # fastmcp's import (2-12 s), and no second server takes the port meanwhile.
    with bind(host, port, config) as sock:
        route_other_loggers()
        serve_http(open_book(), host, port, token, sock=sock)
    return 0


def _answers_a_client(args: argparse.Namespace) -> bool:
    """Whether this is ``serve`` on stdio started by an MCP client (stdin is no terminal): a config
    or its sources that cannot be used are then told through the tools (``serve_unusable``), as
    a client shows a server that exits at start only as a closed connection."""
    return args.command == "serve" and not args.http and not os.isatty(0)


def _serve_unusable(error: VecBookError) -> int:
    route_other_loggers()  # FastMCP's start line in VecBook's format here too
    serve_unusable(error)
    return 2


def _target_file(args: argparse.Namespace) -> Path:
    """The config ``add`` and ``remove`` edit: ``--config``, else the user's."""
    return Path(args.config).expanduser() if args.config else user_config_file()


def _cmd_add(args: argparse.Namespace, _config: None) -> int:
    from .config_edits import add_source
    from .registry import inspect

    target = _target_file(args)
    found = inspect(args.path, target, name=args.name, format_name=args.format, description=args.description,
                    table=args.table, text_column=args.text_column, date_column=args.date_column)
    for line in found.said:
        print(line)
    print(f"found '{found.summary.name}':")
    print("\n".join("  " + line for line in found.summary.lines()))
    for warning in found.warnings:
        log.warning("%s", warning)
    add_source(target, found.table)
    found.remember_problems(target)
    print(f"added '{found.summary.name}' to {target}")
    here = Path.cwd() / CONFIG_NAME
    if not args.config and here.is_file():
        print(f"note: in this folder ./{CONFIG_NAME} is used instead (pass --config {CONFIG_NAME} to add it there)")
    return 0


def _cmd_remove(args: argparse.Namespace, _config: None) -> int:
    from .config_edits import remove_source

    target = _target_file(args)
    remove_source(target, args.name)
    print(f"removed '{args.name}' from {target} (its files are untouched)")
    return 0


def _cmd_config_path(args: argparse.Namespace, _config: None) -> int:
    if args.data_dir and not args.config:
        print(f"none: --data-dir {args.data_dir} is searched alone")
        return 0
    named = os.environ.get("VECBOOK_DATA_DIRECTORY")
    if named and not args.config:  # as load_config reads it: a folder named without a file
        print(f"none: VECBOOK_DATA_DIRECTORY ({named}) is searched alone")
        return 0
    file = Path(args.config).expanduser() if args.config else find_config_file()
    if file is None:
        looked = f"no ./{CONFIG_NAME} and no {user_config_file()}; `vecbook add PATH` creates the latter"
        if (Path.cwd() / "data").is_dir():  # what a search here reads then (load_config)
            print(f"none: ./data is searched alone ({looked})")
            return 0
        print(f"none ({looked})")
        return 1
    print(file.absolute())
    return 0


def _cmd_sources(args: argparse.Namespace, config: Config) -> int:
    book = _open_book(config, keyword_only=True)
    listed = book.sources()
    latest = max((s["last_indexed"] for s in listed if s["last_indexed"]), default=None)
    if args.json:
        print(json_text({"config_file": str(config.config_file) if config.config_file else None,
                         "last_indexed": latest, "sources": listed}))
        return 0
    print_sources(config, listed)
    return 0
