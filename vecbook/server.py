"""The HTTP server (``vecbook serve --http``): the MCP tools over MCP's streamable HTTP transport
at ``/mcp``, the search page at ``/`` and its JSON (``/search.json``, ``/get.json``,
``/sources.json``, ``/stats.json``, ``/-/server.json``), all behind one guard: loopback ``Host``
names only, no request from another ``Origin``, a bearer token where one is set, bounded
request bodies. fastmcp builds the Starlette app; uvicorn (which comes with it) serves it."""

from __future__ import annotations

import base64
import errno
import hmac
import ipaddress
import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib import parse

from .book import VecBook
from .config import (DEFAULT_HOST, DEFAULT_PORT, MAX_QUERY_CHARS, TOKEN_VARIABLE, Config, ConfigError, QueryError,
                     VecBookError, __version__)
from .hits import mark_matches
from .mcp import exit_handler, filters_argument, well_formed_line
from .remote import (LIST_PARAMS, NO_RESULTS_HEADER, SEARCH_PARAMS, ServerRecord, config_identity, other_server,
                     record_path, remove_record, write_record)
from .tokens import analysis_of

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"

# /search.json's header saying how many hits a max_total_chars budget left out (MCP's "left_out").
LEFT_OUT_HEADER = "VecBook-Left-Out"
# /search.json's header naming the mode that answered where it is not the one asked for: during a
# first index, semantic and hybrid searches are answered by keywords (MCP's "answered_as").
ANSWERED_AS_HEADER = "VecBook-Answered-As"
# A token shorter than this could be guessed by a client trying tokens over the network.
MIN_TOKEN_CHARS = 16
# Request bodies (MCP's JSON-RPC posts): a search call is under 50 KB (queries stop at 10,000
# characters), so 1 MiB leaves room for any real call and refuses a flood with 413.
MAX_BODY_BYTES = 1 << 20
# A client has this long to send its whole body; a slower one gets 408 and its connection closes.
BODY_SECONDS = 30.0
# The request line and headers may be this large: a 10,000-character CJK query is ~90 KB once
# percent-encoded in a /search.json address (h11's own default is 16 KB).
MAX_HEADER_BYTES = 256 * 1024
# The page's own files, shipped in the package (vecbook/page): no CDN, no build step.
PAGE = Path(__file__).resolve().parent / "page"
STATIC_TYPES = {"page.js": "text/javascript; charset=utf-8", "page.css": "text/css; charset=utf-8",
                "icon.svg": "image/svg+xml"}
# Where the page, once it has the token, hands it to the browser (an XMLHttpRequest with the token
# as its password): the browser keeps it, for this origin only, until it closes. At the root, so the
# browser's protection space is the whole server: it sends the token with every request here, and
# the page's "JSON" links and a hit opened in a new tab (whose session storage starts empty) need
# no second prompt. (At /-/auth it would send it only under /-/ unasked.)
AUTH_PATH = "/auth"
# A Basic challenge: what makes a browser ask for (or send what it keeps of) a user name and password.
BASIC_CHALLENGE = b'Basic realm="vecbook: any user name, the token as password", charset="UTF-8"'
# What needs no token: the page and its files hold no record text (they ask for it, with the token).
PUBLIC_PATHS = ("/", "/favicon.ico", *(f"/-/static/{name}" for name in STATIC_TYPES))
# Every response: the page runs only its own script and loads nothing from elsewhere, so even
# record text that slipped into markup could not run; nothing frames it or sniffs types.
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                 b"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
# Fetch metadata of requests a page of another site made (scripts, images, fetches): refused;
# a plain navigation (a link or bookmark to a search) is not.
FOREIGN_SITES = ("cross-site", "same-site")
# Where to reach a server bound to every address: its loopback address.
UNSPECIFIED = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def check_bind(host: str, token: str | None) -> bool:
    """Whether ``host`` is a loopback address; raises ConfigError for any other without a token
    (and for a token too short or not fit for a header)."""
    loopback = is_loopback_address(host)
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable()
                              or " " in token):
        raise ConfigError(f"the token must be at least {MIN_TOKEN_CHARS} printable ASCII characters without "
                          "spaces; make one with: python -c \"import secrets; print(secrets.token_urlsafe(32))\"")
    if not loopback and not token:
        raise ConfigError(
            f"refusing to serve on {host} without a token: beyond loopback anyone who can reach this machine "
            f"could read your notes, chats and mail through it. Set {TOKEN_VARIABLE} (or --token) to a secret "
            "each client sends as 'Authorization: Bearer TOKEN', or leave --host at 127.0.0.1")
    return loopback


def is_loopback_address(host: str) -> bool:
    """Whether ``host`` (a name or an address) names this machine's loopback interface only."""
    try:
        return all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback
                   for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM))
    except (OSError, ValueError):
        return False


def is_loopback_host(header: str) -> bool:
    """Whether a ``Host`` header (``name[:port]``) is ``localhost`` or a loopback address, as a
    browser led here by a rebound DNS name would not send."""
    name = header.strip().lower()
    if name.startswith("["):
        name = name[1:name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.split(":")[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware in front of every route: the Host, Origin and token checks (refusals
    answered with 421, 403 or 401 and logged), and bodies read whole, bounded in size (413)
    and time (408), before the app sees them. It also adds SECURITY_HEADERS to every response."""

    def __init__(self, app: Any, token: str | None = None, loopback: bool = True) -> None:
        self.app = app
        self.token = token
        self.loopback = loopback

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        refused = self.refusal(scope, headers)
        if refused is None and scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            body, refused = await self.read_body(receive)
            if body is None and refused is None:
                return  # the client left before sending its request: nobody to answer
            if refused is None:  # MCP's JSON with its lone surrogate escapes mended, as on stdio
                receive = _replay(well_formed_line(body or b"") if scope["path"] == "/mcp" else body or b"", receive)
        if refused is not None:
            status, reason = refused
            client = scope.get("client") or ("?", 0)
            # A browser handed the token at AUTH_PATH asks without it first, as Basic login does: not worth a WARN.
            quiet = scope["path"] == AUTH_PATH and "authorization" not in headers
            log.log(logging.DEBUG if quiet else logging.WARNING, "refused %s %s from %s: %s", scope["method"],
                    scope["path"], client[0], reason)
            await self.answer(send, status, reason, basic=asks_browser_login(scope["path"], headers))
            return

        async def send_secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_secured)

    def refusal(self, scope: dict[str, Any], headers: dict[str, str]) -> tuple[int, str] | None:
        """(status, reason) when the request is refused before any route sees it."""
        host = headers.get("host", "")
        if self.loopback and not is_loopback_host(host):
            return 421, f"Host {host!r} is not a loopback name or address (a DNS rebinding attempt?)"
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() != f"{scope.get('scheme', 'http')}://{host}".lower():
            return 403, f"a page of another origin ({origin}) may not use this server"
        if headers.get("sec-fetch-site") in FOREIGN_SITES and headers.get("sec-fetch-mode") != "navigate":
            return 403, f"a page of another site may not use this server (Sec-Fetch-Site: {headers['sec-fetch-site']})"
        if self.token and scope["path"] not in PUBLIC_PATHS:
            given = given_token(headers.get("authorization", ""))
            if given is None:
                return 401, ("this server needs its token: send 'Authorization: Bearer TOKEN' (a browser tab asks for "
                             "it: any user name, the token as password)")
            if not hmac.compare_digest(given.encode("utf-8"), self.token.encode("utf-8")):
                return 401, "wrong token"
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            return 413, f"the request body ({declared} bytes) is over the limit of {MAX_BODY_BYTES} bytes"
        return None

    async def read_body(self, receive: Any) -> tuple[bytes | None, tuple[int, str] | None]:
        """The whole request body, or a refusal: over MAX_BODY_BYTES, or not sent within BODY_SECONDS;
        (None, None) when the client left."""
        import anyio

        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(BODY_SECONDS):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None, None
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                if size > MAX_BODY_BYTES:
                    return b"", (413, f"the request body is over the limit of {MAX_BODY_BYTES} bytes")
                if not message.get("more_body", False):
                    return b"".join(chunks), None
        return None, (408, f"the request body did not arrive within {BODY_SECONDS:.0f} s")

    async def answer(self, send: Any, status: int, reason: str, basic: bool = False) -> None:
        """A refusal as JSON ``{"error": reason, "type": "refused"}`` (the page shows it); a 401
        asks a browser tab for the token with its own login prompt where ``basic``."""
        body = json.dumps({"error": reason, "type": "refused"}).encode("utf-8")
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close"), *SECURITY_HEADERS]
        if status == 401:
            headers.append((b"www-authenticate", BASIC_CHALLENGE if basic else b'Bearer realm="vecbook"'))
        try:
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        except OSError:
            pass  # the client is gone already


def given_token(authorization: str) -> str | None:
    """The token an ``Authorization`` header carries: ``Bearer TOKEN``, or ``Basic`` with the token
    as the password (any user name), as a browser tab sends it once its login prompt got it."""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "bearer":
        return value.strip()
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")[2]
    except ValueError:  # not base64, or not UTF-8 (UnicodeDecodeError is a ValueError)
        return None


def asks_browser_login(path: str, headers: dict[str, str]) -> bool:
    """Whether a 401 should carry a Basic challenge: a tab opened on a JSON address (a navigation)
    gets the browser's own login prompt, and AUTH_PATH (the page handing the browser its token)
    must be challenged for the browser to keep it. A fetch of the page's script never is: the
    browser would then prompt over the page's own token form."""
    if path == AUTH_PATH:
        return True
    mode = headers.get("sec-fetch-mode")
    return mode == "navigate" or (mode is None and "text/html" in headers.get("accept", ""))


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the app the body read already, then waits on the client (disconnects)."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # type: ignore[no-any-return]

    return replay


# -- the page's JSON --

def search_arguments(params: Any) -> tuple[dict[str, Any], int | None, bool]:
    """``VecBook.search``'s keyword arguments from a ``/search.json`` address (empty values count
    as absent, as a form leaves them), with ``max_chars`` and ``marks``."""
    unknown = sorted(set(params.keys()) - set(SEARCH_PARAMS))
    if unknown:
        raise QueryError(f"unknown parameter {unknown[0]!r}; the search takes {', '.join(SEARCH_PARAMS)}")
    value = {key: params.get(key) or None for key in SEARCH_PARAMS if key not in LIST_PARAMS}
    if value["q"] is None:
        raise QueryError("query must be a non-empty string: pass it as q=...")
    arguments = {
        "query": value["q"], "max_results": _number(value, "max_results", int), "mode": _lower(value["mode"]),
        "filters": filters_argument(value["filters"]), "since": value["since"], "until": value["until"],
        "dedupe": _flag(value, "dedupe"), "fusion": _lower(value["fusion"]),
        "recency_half_life_days": _number(value, "recency_half_life_days", float),
        "keyword_weight": _number(value, "keyword_weight", float), "min_score": _number(value, "min_score", float),
        "max_total_chars": _number(value, "max_total_chars", int),
        **{key: [v for v in params.getlist(key) if v] or None for key in LIST_PARAMS},
    }
    return arguments, _number(value, "max_chars", int), bool(_flag(value, "marks"))


def _lower(text: str | None) -> str | None:
    # A choice typed into an address by hand (mode=Keyword, fusion=RRF) is taken in any case, as
    # the CLI's --mode and --fusion take it; the MCP schema and the Python API keep exact names.
    return None if text is None else text.lower()


def _number(values: dict[str, Any], key: str, kind: Callable[[str], Any]) -> Any:
    text = values[key]
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        raise QueryError(f"{key} must be a {'whole ' if kind is int else ''}number, got {text!r}") from None


def _flag(values: dict[str, Any], key: str) -> bool | None:
    text = values[key]
    if text is None:
        return None
    if text.lower() not in ("true", "false", "1", "0"):
        raise QueryError(f"{key} must be true or false, got {text!r}")
    return text.lower() in ("true", "1")


def match_offsets(text: str, terms: list[str], analysis: Any) -> list[list[int]]:
    """[start, end) character offsets of the words of ``text`` the CLI would highlight for ``terms``."""
    spans: list[list[int]] = []
    position = 0

    def plain(part: str) -> str:
        nonlocal position
        position += len(part)
        return part

    def mark(word: str) -> str:
        nonlocal position
        spans.append([position, position + len(word)])
        position += len(word)
        return word

    mark_matches(text, terms, mark, plain, analysis)
    return spans


@dataclass
class Answer:
    """A JSON route's answer with headers of its own beside the body."""
    data: Any
    headers: dict[str, str]


def page_routes(book: VecBook) -> dict[str, Callable[[Any], Any]]:
    """The page and its JSON, by path: each calls one method of ``book`` (on a worker thread,
    so a long search never holds the server's event loop) and answers its JSON shape."""
    from starlette.responses import FileResponse, Response

    def search(request: Any) -> Any:
        arguments, max_chars, marks = search_arguments(request.query_params)
        results = book.search(**arguments, max_chars=max_chars)
        hits = results.to_dicts()
        if marks:
            for hit in hits:
                hit["snippet_marks"] = match_offsets(hit["snippet"], hit["matched_terms"],
                                                     analysis_of(book.config, hit["source"]))
        # The body stays the list every client reads; how many hits a budget left out, and a
        # mode that answered in place of the one asked for, are headers.
        headers = {LEFT_OUT_HEADER: str(results.left_out)} if arguments.get("max_total_chars") else {}
        if results.mode is not None and results.mode != (arguments["mode"] or book.default_mode):
            headers[ANSWERED_AS_HEADER] = results.mode
        if results.why_empty:  # what left it empty (MCP's "no_results"), as ASCII a header can hold
            headers[NO_RESULTS_HEADER] = parse.quote(results.why_empty, safe=" ,;:()=")
        return Answer(hits, headers) if headers else hits

    def get(request: Any) -> Any:
        context = _number({"context": request.query_params.get("context") or "0"}, "context", int)
        return book.get(request.query_params.get("ref", ""), context).to_dict()

    def about(_request: Any) -> Any:
        config = book.config
        return {"name": "vecbook", "version": __version__, "config": config_identity(config), "pid": os.getpid(),
                "config_file": str(config.config_file) if config.config_file else None,
                "search_mode": book.default_mode, "max_results": config.max_results,
                "max_query_chars": MAX_QUERY_CHARS}

    def page(_request: Any) -> Any:
        return FileResponse(PAGE / "index.html", media_type="text/html; charset=utf-8",
                            headers={"Cache-Control": "no-cache"})

    def static(request: Any) -> Any:
        name = request.path_params["name"]
        if name not in STATIC_TYPES:
            return Response("not found", status_code=404, media_type="text/plain")
        return FileResponse(PAGE / name, media_type=STATIC_TYPES[name], headers={"Cache-Control": "no-cache"})

    def icon(_request: Any) -> Any:
        return FileResponse(PAGE / "icon.svg", media_type=STATIC_TYPES["icon.svg"])

    def authorized(_request: Any) -> Any:
        return Response(status_code=204)  # the Guard let it through: the token it carries is right

    json_routes = {"/search.json": search, "/get.json": get, "/sources.json": lambda _: book.sources(),
                   "/stats.json": lambda _: book.stats(), "/-/server.json": about}
    return {**{path: _json_route(path, handler) for path, handler in json_routes.items()},
            "/": _threaded(page), AUTH_PATH: _threaded(authorized), "/-/static/{name}": _threaded(static), "/favicon.ico": _threaded(icon)}


def _threaded(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    async def route(request: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(handler, request)

    return route


def _json_route(path: str, handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A route answering ``handler``'s result as JSON; a VecBook error is 400 with
    ``{"error": message, "type": class name}`` (and a log line, as MCP refusals have)."""
    from starlette.responses import Response

    def answer(request: Any) -> Any:
        headers = {"Cache-Control": "no-store"}
        try:
            data, status = handler(request), 200
        except VecBookError as exc:
            log.warning("%s refused: %s", path.strip("/").removesuffix(".json"), " ".join(str(exc).splitlines()))
            data, status = {"error": str(exc), "type": type(exc).__name__}, 400
        if isinstance(data, Answer):
            data, headers = data.data, {**headers, **data.headers}
        return Response(json.dumps(data, ensure_ascii=False), status_code=status,
                        media_type="application/json", headers=headers)

    return _threaded(answer)


def build_app(book: VecBook, token: str | None = None, loopback: bool = True) -> Any:
    """The ASGI app: fastmcp's streamable HTTP app for ``book``'s tools at ``/mcp``, with the
    page's routes added and the ``Guard`` in front."""
    from starlette.middleware import Middleware

    from .mcp import build_server

    server = build_server(book)
    for path, route in page_routes(book).items():
        server.custom_route(path, methods=["GET"])(route)
    # fastmcp's own Host/Origin check is left off: the Guard makes the same checks for every
    # route, the page's too, and logs each refusal.
    return server.http_app(path="/mcp", middleware=[Middleware(Guard, token=token, loopback=loopback)],
                           host_origin_protection=False)


def bind(host: str, port: int, config: Config | None = None) -> socket.socket:
    """A listening socket on ``host``:``port`` (port 0: any free one), or an error that says what
    to do; with ``config``, a port held by a VecBook server is said to be, and whose it is."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                              flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host!r} is not an address of this machine ({exc.strerror})") from None
    sock = socket.socket(family, kind, proto)
    if os.name != "nt":  # on Windows the option would let another process take the port over
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        held = port_holder(config, host, port) if exc.errno == errno.EADDRINUSE and config is not None else None
        raise VecBookError(f"cannot listen on {host_port(host, port)}: " + (held or (
            f"{exc.strerror} (another vecbook serve --http? pass --port N for another port)"))) from None
    return sock


def port_holder(config: Config, host: str, port: int) -> str | None:
    """What to tell of the VecBook server listening on ``host``:``port``: ``config``'s own (a
    second one would index everything again, so it points to the first), or another config's;
    None when no VecBook server answers there (within a second: the error must come at once)."""
    from .remote import read_record, record_path, server_at

    url = f"http://{host_port(UNSPECIFIED.get(host, host), port)}"
    record = read_record(record_path(config))  # its token, where the server has one
    about = server_at(url, record.token if record else None)
    if about is None:
        return None
    if about.get("config") == config_identity(config):
        return (f"vecbook serve --http already runs for this config at {url} (pid {about.get('pid')}): its page is "
                f"{url}/ and MCP clients connect to {url}/mcp; one server serves them all, so there is nothing to "
                "start (stop that one first to start it again)")
    return (f"a vecbook server for another config ({about.get('config_file') or 'no config file'}, pid "
            f"{about.get('pid')}) listens there; pass --port N for another port")


def host_port(host: str, port: int) -> str:
    """``host``:``port`` as a URL writes it: an IPv6 address in brackets (``[::1]:8765``), whose
    own colons would otherwise run into the port's."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def serve_http(book: VecBook, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
               sock: socket.socket | None = None) -> None:
    """Serve ``book`` over HTTP until SIGTERM or Ctrl-C, leaving a record of this server (for the
    CLI) in the runtime folder meanwhile; at exit, remove it and write what the caches put off.
    ``sock``: a socket ``bind`` made already (the CLI binds before the slow imports)."""
    import signal

    loopback = check_bind(host, token)
    sock = sock or bind(host, port)
    address = sock.getsockname()
    reachable = ("127.0.0.1" if sock.family == socket.AF_INET else "::1") if \
        ipaddress.ip_address(address[0].split("%")[0]).is_unspecified else address[0]
    url = f"http://{host_port(reachable, address[1])}"
    record = record_path(book.config)
    app = build_app(book, token, loopback)
    stop = exit_handler(lambda: remove_record(record, os.getpid()))
    signal.signal(signal.SIGTERM, stop)  # uvicorn stops first, then hands the signal on to this
    signal.signal(signal.SIGINT, stop)
    server = http_server(app)
    if (first := other_server(record)) is not None:
        log.warning("another vecbook server (pid %d, %s) serves this config: the CLI keeps answering through it, "
                    "and this one answers at %s only", first.pid, first.url, url)
    else:
        write_record(record, ServerRecord(url=url, pid=os.getpid(), config=config_identity(book.config),
                                          token=token, version=__version__, started=time.time()))
    log.info("serving the search page at %s/ and MCP at %s/mcp%s", url, url,
             "" if loopback else f" (listening on {host}; clients send the token)")
    book.start()
    try:
        server.run(sockets=[sock])  # until a signal: uvicorn stops, then hands it on to ``stop``
    finally:
        remove_record(record, os.getpid())
    raise VecBookError("the HTTP server stopped without being asked to (see the log above)")


def http_server(app: Any) -> Any:
    """The uvicorn server for ``app``: VecBook's logging (none of uvicorn's own set-up), no
    access log, request heads up to MAX_HEADER_BYTES, two seconds for open calls at exit."""
    import uvicorn

    return uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", ws="none",
                                         timeout_graceful_shutdown=2, h11_max_incomplete_event_size=MAX_HEADER_BYTES))
