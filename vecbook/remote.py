"""A running ``vecbook serve --http`` seen from the command line: the record a server leaves
for its config, the URL parameters of a search, and ``RemoteBook``, through which the CLI's
``search``, ``get`` and ``stats`` ask that server before working in-process."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from .config import Config, ConfigError, ModelNotFoundError, QueryError, RecordError, VecBookError, __version__
from .hits import Context, Entry, Hit, Results, check_max_total_chars, within_budget

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"

# How long the CLI waits for a recorded server to answer ``/-/server.json`` before working
# in-process: a live server on this machine answers in milliseconds, a hung one must not hold
# a search up for long.
PROBE_SECONDS = 1.0
# How long one search, get or stats through a server may take: a semantic search during the
# server's first index waits for its vectors up to ``semantic_wait_seconds`` (30 s by default).
CALL_SECONDS = 300.0
# Settings that shape no result: a server and a CLI that differ only in these share answers.
NOT_IN_IDENTITY = ("log_level", "watch")
# The error classes a server's JSON error names, raised again here under the same class.
ERRORS = {cls.__name__: cls for cls in (VecBookError, ConfigError, QueryError, RecordError, ModelNotFoundError)}
# /search.json's header saying what left a search without hits (Results.why_empty, MCP's
# "no_results"), percent-encoded: a header holds ASCII, the reason may name "José" or "王小明".
NO_RESULTS_HEADER = "VecBook-No-Results"
# The URL parameters of a search (the MCP tool's argument names, ``q`` for the query, and the
# CLI's fusion options): the page's address, ``/search.json`` and the CLI share them.
LIST_PARAMS = ("sources", "participants")
SEARCH_PARAMS = ("q", "max_results", "mode", "filters", *LIST_PARAMS, "since", "until", "dedupe",
                 "recency_half_life_days", "fusion", "keyword_weight", "min_score", "max_total_chars", "max_chars",
                 "marks")
# Windows looks a recorded server's process up by its handle: ``os.kill(pid, 0)`` is no probe
# there (signal 0 is CTRL_C_EVENT, sent to every process of this console, this one among them).
WINDOWS = os.name == "nt"
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
STILL_ACTIVE = 259  # GetExitCodeProcess's answer while the process runs
ERROR_ACCESS_DENIED = 5


class ServerGone(Exception):
    """The recorded server did not answer (it stopped, or it is not a VecBook server for this config)."""


@dataclasses.dataclass(frozen=True)
class ServerRecord:
    """What a running server writes for the CLI: where it listens, its process, the config it
    serves (``config_identity``), its token when it has one, and the VecBook version."""

    url: str
    pid: int
    config: str
    token: str | None
    version: str
    started: float

    def to_json(self) -> str:
        """The record as the file holds it."""
        return json.dumps(dataclasses.asdict(self), indent=2)


def config_identity(config: Config) -> str:
    """A hash of every setting that shapes results, paths made absolute (``log_level`` and
    ``watch`` left out): a CLI asks a server only when both hash the same."""
    values = {field.name: getattr(config, field.name) for field in dataclasses.fields(config)
              if field.name not in NOT_IN_IDENTITY}
    text = json.dumps(values, sort_keys=True, default=_identity_value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _identity_value(value: Any) -> Any:
    if isinstance(value, Path):
        return os.path.abspath(value)
    if dataclasses.is_dataclass(value):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    return str(value)


def runtime_folder() -> Path:
    """Where servers leave their records: the platform's runtime folder for VecBook
    (``$XDG_RUNTIME_DIR/vecbook`` on Linux, emptied at logout), else its state folder
    (``~/.local/state/vecbook``) when the runtime one cannot be used."""
    import warnings

    import platformdirs

    try:
        with warnings.catch_warnings():  # platformdirs warns when it falls back to /tmp: said below instead
            warnings.simplefilter("ignore")
            runtime = Path(platformdirs.user_runtime_dir("vecbook", appauthor=False))
    except OSError:
        runtime = None
    # Without XDG_RUNTIME_DIR, platformdirs falls back to /tmp/runtime-<uid>, in a folder anyone
    # may write, where another user could make it first: the state folder instead.
    if runtime is None or (runtime.parent.name.startswith("runtime-")
                           and runtime.parent.parent == Path(tempfile.gettempdir())):
        return Path(platformdirs.user_state_dir("vecbook", appauthor=False))
    return runtime


def record_path(config: Config) -> Path:
    """The record file of the server for ``config``: one per config, named by its identity."""
    return runtime_folder() / f"server-{config_identity(config)[:20]}.json"


def write_record(path: Path, record: ServerRecord) -> None:
    """Write ``record`` atomically, readable by this user only (0600, in a 0700 folder): it may hold the token."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(record.to_json())
    os.replace(temporary, path)


def read_record(path: Path) -> ServerRecord | None:
    """The record at ``path``; None when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerRecord(**data)
    except (OSError, ValueError, TypeError):
        return None


def remove_record(path: Path, pid: int) -> None:
    """Remove the record at ``path`` if it is still this process's (a later server may have replaced it)."""
    record = read_record(path)
    if record is not None and record.pid == pid:
        try:
            path.unlink()
        except OSError:
            pass


def process_running(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without sending anything; on
    Windows, its handle's exit code)."""
    if WINDOWS:
        return _windows_process_running(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user's: the probe will tell whether it is a server
    except OSError:
        return False
    return True


def _windows_process_running(pid: int) -> bool:
    """Whether the process ``pid`` runs, by OpenProcess and GetExitCodeProcess (a process that
    ended is still found while another holds its handle; its exit code says it ended)."""
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.OpenProcess.restype = ctypes.c_void_p  # a handle is pointer-sized
    kernel32.GetExitCodeProcess.argtypes = (ctypes.c_void_p, ctypes.POINTER(ctypes.c_ulong))
    kernel32.CloseHandle.argtypes = (ctypes.c_void_p,)
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        # another user's (the probe will tell whether it is a server), else no such process
        return ctypes.get_last_error() == ERROR_ACCESS_DENIED  # type: ignore[attr-defined]
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def search_params(query: str, **arguments: Any) -> list[tuple[str, str]]:
    """The URL parameters of a search with ``VecBook.search``'s keyword arguments; None is left out."""
    params = [("q", query)]
    for name, value in arguments.items():
        if value is None:
            continue
        if name not in SEARCH_PARAMS:
            raise TypeError(f"search takes no argument {name!r} over HTTP")
        if name == "filters":
            params.append((name, json.dumps(value, ensure_ascii=False)))
        elif isinstance(value, (list, tuple)):
            params += [(name, str(item)) for item in value]
        elif isinstance(value, bool):
            params.append((name, "true" if value else "false"))
        else:
            params.append((name, repr(value) if isinstance(value, float) else str(value)))
    return params


def other_server(path: Path) -> ServerRecord | None:
    """The record at ``path`` when another process's server is running and answers there (a
    second ``serve --http`` on another port must leave the first one's record in place)."""
    record = read_record(path)
    if record is None or record.pid == os.getpid() or not process_running(record.pid):
        return None
    try:
        _ask(record, "/-/server.json", [], PROBE_SECONDS)
    except (ServerGone, VecBookError):
        return None
    return record


def server_at(url: str, token: str | None = None) -> dict[str, Any] | None:
    """What the VecBook server at ``url`` says of itself (``/-/server.json``: its config identity,
    ``config_file``, ``pid``), or None when nothing there answers as one within PROBE_SECONDS."""
    probe = ServerRecord(url=url, pid=0, config="", token=token, version="", started=0.0)
    try:
        about = _ask(probe, "/-/server.json", [], PROBE_SECONDS)
    except (ServerGone, VecBookError):
        return None
    return about if isinstance(about, dict) and about.get("name") == "vecbook" else None


def find_server(config: Config, fallback: Callable[[], Any]) -> Any:
    """A ``RemoteBook`` on the running server for ``config`` when one answers, else ``fallback()``
    (a ``VecBook`` in this process). Each path is logged at INFO (``-v``)."""
    path = record_path(config)
    record = read_record(path)
    if record is None:
        log.info("no server is running for this config (no %s): working in-process", path)
        return fallback()
    if not process_running(record.pid):
        log.info("ignoring %s: its server (pid %d) is no longer running; working in-process", path, record.pid)
        return fallback()
    try:
        about = _ask(record, "/-/server.json", [], PROBE_SECONDS)
    except (ServerGone, VecBookError) as exc:
        log.info("the server in %s (%s) does not answer (%s): working in-process", path, record.url, exc)
        return fallback()
    if about.get("config") != config_identity(config) or about.get("version") != __version__:
        log.info("the server at %s serves another config or version (vecbook %s): working in-process",
                 record.url, about.get("version"))
        return fallback()
    log.info("answering through the server at %s (pid %d): no model or index loaded here", record.url, record.pid)
    return RemoteBook(record, fallback)


class RemoteBook:
    """A running server, asked over HTTP the way the CLI asks a ``VecBook``: ``search``, ``get``
    and ``stats`` return what the book's own methods return. When the server stops answering
    mid-way, the call is made in-process instead (``fallback``)."""

    def __init__(self, record: ServerRecord, fallback: Callable[[], Any]) -> None:
        self.record = record
        self._fallback = fallback

    def search(self, query: str, max_total_chars: int | None = None, **arguments: Any) -> Results:
        """``VecBook.search`` through the server: the same hits. A ``max_total_chars`` budget is
        applied here, to the hits the server ranked, so ``left_out`` counts what it left out."""
        from urllib import parse

        budget = check_max_total_chars(max_total_chars)
        headers: dict[str, str] = {}
        try:
            hits = _ask(self.record, "/search.json", search_params(query, **arguments), CALL_SECONDS, headers)
        except ServerGone as exc:
            return self._in_process(exc).search(  # type: ignore[no-any-return]
                query, max_total_chars=budget, **arguments)
        kept, left_out = within_budget([hit_of(data) for data in hits], budget, lambda hit: len(hit.text))
        why = headers.get(NO_RESULTS_HEADER.casefold())
        return Results(kept, left_out, why_empty=parse.unquote(why) if why else None)

    def get(self, ref: str, context: int = 0) -> Context:
        """``VecBook.get`` through the server."""
        try:
            data = _ask(self.record, "/get.json", [("ref", ref), ("context", str(context))], CALL_SECONDS)
        except ServerGone as exc:
            return self._in_process(exc).get(ref, context)  # type: ignore[no-any-return]
        return context_of(data)

    def stats(self) -> dict[str, Any]:
        """The server's ``stats``."""
        try:
            return _ask(self.record, "/stats.json", [], CALL_SECONDS)  # type: ignore[no-any-return]
        except ServerGone as exc:
            return self._in_process(exc).stats()  # type: ignore[no-any-return]

    def _in_process(self, exc: ServerGone) -> Any:
        log.warning("the server at %s stopped answering (%s): working in-process", self.record.url, exc)
        return self._fallback()


def hit_of(data: dict[str, Any]) -> Hit:
    """A ``Hit`` from its JSON shape (scores come as six-decimal strings)."""
    scores = {key: None if data[key] is None else float(data[key])
              for key in ("similarity_score", "semantic_score", "keyword_score")}
    fields = {field.name for field in dataclasses.fields(Hit)}
    return Hit(**{**{k: v for k, v in data.items() if k in fields}, **scores})


def context_of(data: dict[str, Any]) -> Context:
    """A ``Context`` from its JSON shape."""
    return Context(Entry(**data["record"]), [Entry(**e) for e in data["before"]], [Entry(**e) for e in data["after"]])


def _ask(record: ServerRecord, route: str, params: Sequence[tuple[str, str]], timeout: float,
         answer_headers: dict[str, str] | None = None) -> Any:
    """GET ``route`` from the server as JSON; its JSON errors raise as the VecBook error they name.
    ``answer_headers`` gets the answer's headers, by their casefolded names."""
    from urllib import error, parse, request

    url = record.url.rstrip("/") + route + ("?" + parse.urlencode(params) if params else "")
    headers = {"Accept": "application/json"}
    if record.token:
        headers["Authorization"] = f"Bearer {record.token}"
    try:
        with request.urlopen(request.Request(url, headers=headers), timeout=timeout) as response:
            if answer_headers is not None:
                answer_headers.update((name.casefold(), value) for name, value in response.headers.items())
            return json.loads(response.read())
    except error.HTTPError as exc:
        body = _json_or_none(exc.read())
        if isinstance(body, dict) and body.get("type") in ERRORS and exc.code == 400:
            raise ERRORS[body["type"]](body.get("error", "")) from None
        raise ServerGone(f"HTTP {exc.code}") from None
    except (OSError, ValueError) as exc:  # refused, reset, timed out, not JSON
        raise ServerGone(str(getattr(exc, "reason", exc))) from None


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def wait_for_record(path: Path, timeout: float) -> ServerRecord | None:
    """The record at ``path`` once a server has written it (tests and scripts that start one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = read_record(path)
        if record is not None and process_running(record.pid):
            return record
        time.sleep(0.05)
    return None
