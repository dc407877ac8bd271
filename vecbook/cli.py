"""The command line: ``search``, ``stats``, ``reindex`` and ``serve``, with logging and progress on stderr."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from functools import partial
from typing import Any, Callable, Sequence

from .book import VecBook
from .hits import MAX_CONTEXT, Hit, check_max_results, check_query
from .config import (
    CONFIG_NAME,
    FUSIONS,
    LOG_LEVELS,
    MODES,
    Config,
    ConfigError,
    QueryError,
    VecBookError,
    __version__,
    load_config,
)
from .mcp import serve
from .tokens import ENGLISH, Analysis, analysis_of, word_spans
from .rank import parse_filters
from .records import Problem

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


# Width of the metadata line in the human-readable search output.
PREVIEW_WIDTH = 100
BOLD, RESET = "\x1b[1;33m", "\x1b[0m"  # bold yellow: the matched words in a terminal


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
    """The ``vecbook`` command line: search, stats, reindex, serve."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="PATH", help=f"config file (default: ./{CONFIG_NAME}, "
                                                         "else the one beside vecbook.py)")
    common.add_argument("--data-dir", metavar="DIR", help="folder of .txt records (overrides the config)")
    common.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
                        help="stderr log level: DEBUG, INFO, WARNING (or WARN), ERROR")
    parser = argparse.ArgumentParser(
        prog="vecbook", description="VecBook: local semantic, keyword and hybrid search over your own text records.")
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
    search.add_argument("--min-score", type=float, metavar="S",
                        help="drop hits scoring below S (0-1); semantic: cosine mapped to 0-1, keyword: BM25 over "
                             "its upper bound, hybrid: the fused score, relative to this query's other candidates "
                             "(a nonsense query's best hit may score 1), so not an absolute relevance")
    search.add_argument("--source", action="append", metavar="NAME",
                        help="only this collection ('files' for the .txt notes); repeatable")
    search.add_argument("--since", metavar="WHEN", help="records dated on or after: 2024-01-31, or 30d, 2w, 6m, 1y")
    search.add_argument("--until", metavar="WHEN", help="records dated up to: 2024-01-31 (the whole day), or a span")
    search.add_argument("--participant", action="append", metavar="NAME",
                        help="conversations this person took part in; repeatable (each must)")
    search.add_argument("--no-dedupe", action="store_true", help="show near-identical hits separately")
    search.add_argument("--recency-half-life", type=float, metavar="DAYS",
                        help="favour recent records: blend a decay of this half-life into the score")
    search.add_argument("--json", action="store_true", help="print a JSON array of hits")
    search.set_defaults(handler=_cmd_search)
    get = commands.add_parser("get", parents=[common], help="show a record whole, with its neighbours",
                              description="Show the record a hit came from (by its id or citation) "
                                          "with up to --context records before and after it.")
    get.add_argument("ref", help="a hit's id or citation, e.g. journal/2024/03.txt:9-15")
    get.add_argument("-C", "--context", type=int, default=0, metavar="N",
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
    serve_cmd = commands.add_parser("serve", parents=[common], help="run the MCP server on stdio",
                                    description="Run the MCP stdio server (for Claude Desktop, Claude Code...); "
                                                "changes to the records are picked up as they happen.")
    serve_cmd.add_argument("--no-watch", action="store_true",
                           help="do not watch the data directory and collections (reindex by the MCP tool only)")
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
    # Check everything that needs no index before building one: loading the model and
    # indexing take seconds, and a typo in a filter should not cost them.
    parse_filters(filters)
    check_query(args.query)
    if args.max_results is not None:
        check_max_results(args.max_results)
    # A keyword search from the shell needs no vectors: skip loading the model and embedding.
    book = _open_book(config, keyword_only=(args.mode or config.search_mode) == "keyword")
    hits = book.search(args.query, max_results=args.max_results, mode=args.mode, filters=filters,
                       min_score=args.min_score, fusion=args.fusion, keyword_weight=args.keyword_weight,
                       sources=args.source, since=args.since, until=args.until, participants=args.participant,
                       dedupe=False if args.no_dedupe else None, recency_half_life_days=args.recency_half_life)
    if args.json:
        print(json.dumps(hits.to_dicts(), indent=2, ensure_ascii=False))
    else:
        print(format_hits(hits, color=_wants_color(), analysis=partial(analysis_of, config)))
    return 0


def _cmd_get(args: argparse.Namespace, config: Config) -> int:
    # Looking a record up needs no vectors: skip the model.
    context = _open_book(config, keyword_only=True).get(args.ref, args.context)
    if args.json:
        print(json.dumps(context.to_dict(), indent=2, ensure_ascii=False))
        return 0
    blocks = []
    for entry in [*context.before, context.record, *context.after]:
        mark = ">" if entry is context.record else " "
        blocks.append(f"{mark} {entry.citation}\n" + "\n".join("    " + line for line in entry.text.splitlines()))
    print("\n\n".join(blocks))
    return 0


def _wants_color() -> bool:
    """Highlight only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def format_hits(hits: Sequence[Hit], color: bool = False,
                analysis: Callable[[str], Analysis] = lambda source: ENGLISH) -> str:
    """Human-readable results: rank, score and citation, metadata, then the snippet with the
    lines it comes from (matched words highlighted when ``color``, as ``analysis`` of the
    hit's source cuts them)."""
    if not hits:
        return "no results"
    blocks = []
    for rank_number, hit in enumerate(hits, 1):
        lines = [f"{rank_number:>2}. {hit.similarity_score:.6f}  {hit.citation}"]
        if hit.metadata:
            shown = ", ".join(f"{k}: {_shown_value(v)}" for k, v in hit.metadata.items())
            lines.append("    " + _clip(shown))
        if hit.snippet_line is not None:
            where = (f"line {hit.snippet_line}" if hit.snippet_line == hit.snippet_end_line
                     else f"lines {hit.snippet_line}-{hit.snippet_end_line}")
            lines.append(f"    {where}:")
        snippet = _highlight(hit.snippet, hit.matched_terms, analysis(hit.source)) if color else hit.snippet
        lines += ["      " + line for line in snippet.splitlines() if line.strip()]
        if hit.duplicates:
            lines.append(f"    also in: {', '.join(hit.duplicates)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _highlight(text: str, terms: Sequence[str], analysis: Analysis = ENGLISH) -> str:
    """Bold the words of ``text`` whose term is one of ``terms``' (as the keyword index matched
    them: ``boilers`` marks ``boiler``, ``cafe`` marks ``Café``, ``长城`` marks that bigram)."""
    wanted = {analysis.term(word) for term in terms for _, _, word in word_spans(term)} - {None}
    marked: list[list[int]] = []
    for start, end, word in word_spans(text):
        if analysis.term(word) in wanted:
            if marked and start <= marked[-1][1]:  # overlapping bigrams: one mark
                marked[-1][1] = max(marked[-1][1], end)
            else:
                marked.append([start, end])
    pieces, at = [], 0
    for start, end in marked:
        pieces += [text[at:start], BOLD, text[start:end], RESET]
        at = end
    return "".join(pieces) + text[at:]


def _shown_value(value: Any) -> str:
    """A metadata value as a person reads it: a list header (``Tags``) as "quick, leftovers"."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    return str(value)


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


def _cmd_reindex(args: argparse.Namespace, config: Config) -> int:
    book = _open_book(config, background=True)
    stats = book.reindex(full=args.full)
    print(json.dumps({**stats["last_update"], "cache": stats["cache"]}, indent=2, ensure_ascii=False))
    return 1 if stats["error"] else 0


def _cmd_serve(args: argparse.Namespace, config: Config) -> int:
    route_other_loggers()
    serve(VecBook(config=config, background=True, watch=config.watch and not args.no_watch))
    return 0
