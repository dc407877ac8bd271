#!/usr/bin/env python3
"""What a step of linear fusion costs: hybrid search latency with it and without it (its
constants in ``vecbook.rank`` set to 0: by default FEEDBACK_WEIGHT, the feedback step;
``--off PEAK_SHIFT RECORD_SHARE``: the weight moved by the lists' shapes and the other
passages' keyword scores), alternating rounds in one process over one index.

Usage::

    python bench/feedback_cost.py CORPUS_DIR --cache-dir DIR [--queries 200] [--rounds 3]
        [--off CONSTANT ...]

CORPUS_DIR: e.g. ``bench/speed.py``'s ``corpus-10000`` (its ``--workdir``), with its cache
folder, so nothing is embedded. Each search embeds its query, as a user's does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import exports  # noqa: E402  (bench/exports.py: the CPU line)
import speed  # noqa: E402  (bench/speed.py: its queries)
import vecbook  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--off", nargs="+", default=["FEEDBACK_WEIGHT"],
                        choices=["FEEDBACK_WEIGHT", "PEAK_SHIFT", "RECORD_SHARE"],
                        help="the vecbook.rank constants set to 0 in the rounds without (default: the feedback step)")
    args = parser.parse_args()
    print(f"$ python {' '.join(sys.argv)}\n{exports.cpu_line()}; load average {os.getloadavg()[0]:.2f} at start")
    book = vecbook.VecBook(data_directory=args.corpus, cache_directory=args.cache_dir)
    queries = speed.queries(args.queries)
    for query in queries[:20]:  # warm-up
        book.search(query, mode="hybrid", fusion="linear")
    shipped = {name: getattr(vecbook.rank, name) for name in args.off}
    settings = {"with": shipped, "without": dict.fromkeys(shipped, 0.0)}
    times: dict[str, list[float]] = {"with": [], "without": []}
    # Each query is searched both ways in turn (which first alternates by round), so a change in
    # the machine's load between rounds falls on both alike: the paired differences' median is
    # the step's cost, steadier than the two p50s on a shared machine.
    for round_ in range(args.rounds):
        for query in queries:
            for label in ("with", "without") if round_ % 2 == 0 else ("without", "with"):
                for name, value in settings[label].items():
                    setattr(vecbook.rank, name, value)
                started = time.perf_counter()
                book.search(query, mode="hybrid", fusion="linear")
                times[label].append((time.perf_counter() - started) * 1000)
    paired = statistics.median(a - b for a, b in zip(times["with"], times["without"]))
    for label, found in times.items():
        found = sorted(found)
        named = ", ".join(f"{name} {value}" for name, value in settings[label].items())
        print(f"{label} ({named}): hybrid p50 {statistics.median(found):.1f} ms, "
              f"p95 {found[int(0.95 * len(found))]:.1f} ms ({len(found)} searches)")
    print(f"a search with, minus the same search without: median {paired:+.2f} ms")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    book.close()


if __name__ == "__main__":
    main()
