#!/usr/bin/env python3
"""Search latency with hits shaped as users get them (snippets, passages), with and without
folding duplicates, on an indexed folder; the query vectors are embedded once beforehand, so
the figures are search and shaping alone (embedding a query is timed apart).

    python bench/latency.py RECORDS_DIR QUERIES_JSONL [--cache-dir DIR] [--queries 200] [-n 10]

QUERIES_JSONL holds one ``{"text": ...}`` object a line (BEIR's queries.jsonl; with SciFact's
records written by bench/quality.py into its --workdir).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import exports  # noqa: E402  (bench/exports.py: the CPU line)
import vecbook  # noqa: E402


def percentiles(times: list[float]) -> str:
    times = sorted(times)
    return f"p50 {statistics.median(times):.1f} ms, p95 {times[max(0, int(0.95 * len(times)) - 1)]:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--queries-count", "--queries", type=int, default=200, dest="count")
    parser.add_argument("-n", "--max-results", type=int, default=10)
    args = parser.parse_args()
    print(f"$ python {' '.join(sys.argv)}\n{exports.cpu_line()}")
    book = vecbook.VecBook(data_directory=args.records, cache_directory=args.cache_dir or False)
    texts = [json.loads(line)["text"] for line in args.queries.open(encoding="utf-8")][:args.count]
    embed = []
    for text in texts:  # fills the query-vector cache
        started = time.perf_counter()
        book.embedder.encode_query(text)
        embed.append((time.perf_counter() - started) * 1000)
    print(f"{book.stats()['records']:,} records; query embedding {percentiles(embed)}")
    for dedupe in (False, True):
        times = []
        for text in texts:
            started = time.perf_counter()
            book.search(text, max_results=args.max_results, dedupe=dedupe)
            times.append((time.perf_counter() - started) * 1000)
        print(f"hybrid, {args.max_results} results, dedupe={dedupe}: {percentiles(times)}")


if __name__ == "__main__":
    main()
