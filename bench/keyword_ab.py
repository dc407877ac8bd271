#!/usr/bin/env python3
"""Keyword analysis A/B: the first keyword index and keyword query latency of two checkouts
on one synthetic corpus, alternating, each run in a fresh process.

    python bench/keyword_ab.py OTHER_CHECKOUT [--this CHECKOUT] [--size 100000] [--rounds 3] [--queries 200]

Each round builds a keyword-only VecBook (no vector cache, no keyword cache) over the same
``bench/speed.py`` corpus in each checkout, then times ``--queries`` keyword searches (the
default 10 results, snippets included). Prints the medians and the ratio this checkout / OTHER.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import speed  # noqa: E402  (bench/speed.py: the synthetic corpus and its queries)

CHILD = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import vecbook
started = time.perf_counter()
book = vecbook.VecBook(data_directory=sys.argv[2], keyword_only=True, cache_directory=False)
book.search("warm up", mode="keyword")
build = time.perf_counter() - started
times = []
for query in json.loads(sys.argv[3]):
    begun = time.perf_counter()
    book.search(query, mode="keyword")
    times.append(time.perf_counter() - begun)
print(json.dumps({"build": build, "p50": statistics.median(times)}))
"""


def run(checkout: Path, data: Path, queries: list[str]) -> dict[str, float]:
    """One build and its queries in a fresh Python process."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(checkout), str(data), json.dumps(queries)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the checkout to compare with (e.g. a worktree of main)")
    parser.add_argument("--this", type=Path, default=ROOT, help="the checkout measured (default: this one)")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = speed.make_corpus(Path(work), args.size)
        queries = speed.queries(args.queries)
        results: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
        for _ in range(args.rounds):
            for name, checkout in (("this", args.this.resolve()), ("other", args.other.resolve())):
                results[name].append(run(checkout, data, queries))
                print(name, results[name][-1], flush=True)
    for figure in ("build", "p50"):
        this = statistics.median(r[figure] for r in results["this"])
        other = statistics.median(r[figure] for r in results["other"])
        print(f"{figure}: this {this * 1000:.2f} ms, other {other * 1000:.2f} ms, ratio {this / other:.3f}")


if __name__ == "__main__":
    main()
