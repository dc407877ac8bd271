#!/usr/bin/env python3
"""Keyword analysis A/B: the first keyword index and keyword query latency of two checkouts
on one synthetic corpus, alternating, each run in a fresh process.

    python bench/keyword_ab.py OTHER_CHECKOUT [--this CHECKOUT] [--size 100000] [--rounds 3] [--queries 200]
                               [--corpus synthetic|whatsapp]

Each round builds a keyword-only VecBook (no vector cache, no keyword cache) over the same
corpus in each checkout, then times ``--queries`` keyword searches (the default 10 results,
snippets included). Prints the medians and the ratio this checkout / OTHER. The corpus:
``bench/speed.py``'s ASCII records (``synthetic``), or a WhatsApp export of ``--size`` messages
from ``bench/export_whatsapp.py`` (``whatsapp``: four chats, 2 in 7 sentences ending in an emoji).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import export_whatsapp  # noqa: E402  (bench/export_whatsapp.py: a generated WhatsApp export)
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


def chat_queries(count: int, seed: int = 7) -> list[str]:
    """Queries of one to three of the WhatsApp export's words, one in five with its emoji."""
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        words = rng.sample(export_whatsapp.WORDS, rng.randint(1, 3))
        found.append(" ".join(words + ([rng.choice(("😂", "👍"))] if rng.random() < 0.2 else [])))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the checkout to compare with (e.g. a worktree of main)")
    parser.add_argument("--this", type=Path, default=ROOT, help="the checkout measured (default: this one)")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--corpus", choices=("synthetic", "whatsapp"), default="synthetic")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = (speed.make_corpus(Path(work), args.size) if args.corpus == "synthetic"
                else export_whatsapp.generate(Path(work) / "whatsapp", args.size))
        queries = speed.queries(args.queries) if args.corpus == "synthetic" else chat_queries(args.queries)
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
