#!/usr/bin/env python3
"""Load on `vecbook serve --http`: CLIENTS MCP clients at once (fastmcp's Client over streamable
HTTP), each running SEARCHES hybrid searches with filters, and a full reindex when half of them
are done. Every answer is checked against the same search made before the load (no error, no
lost or changed answer); prints the CPU, the latency's p50 and p95, and the throughput.

    python bench/server_load.py [--scifact /work/shared/eval/scifact [--records 1000]] [--clients 20] [--searches 100]

Without --scifact it serves the shipped samples (vecbook.toml, 87 records). With it, the first
--records of SciFact's 5,183 abstracts are written once as dated .txt records under --workdir
and served from there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib import parse, request

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import exports  # noqa: E402  (bench/exports.py: the CPU line)
import vecbook  # noqa: E402
from vecbook.remote import record_path, wait_for_record  # noqa: E402

SAMPLE_QUERIES = ["what went wrong with the nightly sales load", "boiler repair quote", "birthday lunch",
                  "hiking trip in the rain", "sourdough starter", "train tickets", "dentist appointment",
                  "learning Spanish verbs"]


def scifact_config(scifact: Path, workdir: Path, records: int) -> tuple[Path, list[str]]:
    """SciFact's first ``records`` abstracts as dated records (one file per 100, a date from each
    id so `since` filters something), a config serving them, and the first queries."""
    notes = workdir / f"notes-{records}"
    if not notes.is_dir():
        notes.mkdir(parents=True)
        docs = [json.loads(line) for line in (scifact / "corpus.jsonl").open(encoding="utf-8")][:records]
        for start in range(0, len(docs), 100):
            blocks = [f"Date: 2020-{1 + int(d['_id']) % 12:02d}-{1 + int(d['_id']) % 28:02d}\n"
                      f"Title: {d['title']}\n\n{d['text']}" for d in docs[start:start + 100]]
            (notes / f"abstracts-{start // 100:03d}.txt").write_text("\n---\n".join(blocks) + "\n", encoding="utf-8")
    config = workdir / f"vecbook-{records}.toml"
    config.write_text(f'data_directory = "{notes.name}"\n', encoding="utf-8")
    queries = [json.loads(line)["text"] for line in (scifact / "queries.jsonl").open(encoding="utf-8")][:50]
    return config, queries


def filters_for(number: int) -> dict[str, Any]:
    """The filters of the n-th search: a date, a source, a file glob, in turn."""
    return [{"since": "2020-06-01"}, {"sources": ["files"]}, {"filters": {"file_path": "*"}},
            {"since": "2019-01-01", "until": "2030-12-31"}][number % 4]


def percentile(times: list[float], share: float) -> float:
    times = sorted(times)
    return times[min(len(times) - 1, int(share * len(times)))]


def fetch_json(url: str) -> Any:
    with request.urlopen(url, timeout=600) as answer:
        return json.loads(answer.read())


def expected_answers(url: str, queries: list[str]) -> dict[tuple[str, int], list[str]]:
    """Each (query, filter kind)'s hit ids, asked once before the load."""
    answers = {}
    for query in queries:
        for kind in range(4):
            params = [("q", query), ("mode", "hybrid")]
            for key, value in filters_for(kind).items():
                values = value if isinstance(value, list) else [json.dumps(value) if key == "filters" else value]
                params += [(key, v) for v in values]
            answers[(query, kind)] = [hit["id"] for hit in fetch_json(f"{url}/search.json?{parse.urlencode(params)}")]
    return answers


async def load(url: str, queries: list[str], clients: int, searches: int,
               expected: dict[tuple[str, int], list[str]]) -> dict[str, Any]:
    from fastmcp import Client

    times: list[float] = []
    wrong: list[str] = []
    half = asyncio.Event()
    total = clients * searches

    async def client(number: int) -> None:
        async with Client(url + "/mcp", timeout=600) as session:
            for turn in range(searches):
                query, kind = queries[(number * 7 + turn) % len(queries)], (number + turn) % 4
                started = time.perf_counter()
                result = await session.call_tool("search", {"query": query, "mode": "hybrid", **filters_for(kind)})
                times.append(time.perf_counter() - started)
                if [hit["id"] for hit in json.loads(result.content[0].text)] != expected[(query, kind)]:
                    wrong.append(query)
                if len(times) >= total // 2:
                    half.set()

    async def reindex() -> float:
        await half.wait()
        async with Client(url + "/mcp", timeout=600) as session:
            started = time.perf_counter()
            stats = (await session.call_tool("reindex", {"full": True})).structured_content
            assert stats["state"] == "ready", stats
            return time.perf_counter() - started

    started = time.perf_counter()
    reindex_seconds, *_ = await asyncio.gather(reindex(), *(client(n) for n in range(clients)))
    return {"times": times, "wrong": wrong, "seconds": time.perf_counter() - started, "reindex": reindex_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, help="BEIR SciFact folder (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--records", type=int, default=1000, help="SciFact abstracts to serve (of 5,183)")
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results" / "server-load")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--searches", type=int, default=100)
    args = parser.parse_args()
    if args.scifact:
        config, queries = scifact_config(args.scifact, args.workdir, args.records)
    else:
        config, queries = ROOT / "vecbook.toml", SAMPLE_QUERIES
    runtime = Path(tempfile.mkdtemp(prefix="vecbook-runtime-"))
    runtime.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # this server's record, not the user's
    log = open(Path(tempfile.mkdtemp()) / "serve.log", "w+b")
    server = subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", "--http", "--port", "0",
                               "--config", str(config)], stdout=subprocess.DEVNULL, stderr=log,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        record = wait_for_record(record_path(vecbook.load_config(config)), 120)
        if record is None:
            raise SystemExit("the server did not start")
        while fetch_json(record.url + "/stats.json")["state"] != "ready":
            time.sleep(0.5)
        records = fetch_json(record.url + "/stats.json")["records"]
        expected = expected_answers(record.url, queries)
        result = asyncio.run(load(record.url, queries, args.clients, args.searches, expected))
    finally:
        server.terminate()
        server.wait(30)
    times = [t * 1000 for t in result["times"]]
    log.seek(0)
    errors = [line for line in log.read().decode().splitlines() if " ERROR " in line or "Traceback" in line]
    print(f"CPU: {exports.cpu_line()}")
    print(f"{records:,} records; {args.clients} clients x {args.searches} hybrid searches with filters, "
          f"a full reindex ({result['reindex']:.1f} s) once half were done")
    print(f"answers: {len(times)} of {args.clients * args.searches}, {len(result['wrong'])} differing from "
          f"the same search before the load, {len(errors)} server errors")
    print(f"latency: p50 {statistics.median(times):.1f} ms, p95 {percentile(times, 0.95):.1f} ms; "
          f"{len(times) / result['seconds']:.0f} searches/s over {result['seconds']:.1f} s")
    if result["wrong"] or errors or len(times) != args.clients * args.searches:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
