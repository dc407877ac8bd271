#!/usr/bin/env python3
"""What linear fusion's feedback step costs: hybrid search latency with it and without it
(``vecbook.rank.FEEDBACK_WEIGHT`` 0), alternating rounds in one process over one index.

Usage::

    python bench/feedback_cost.py CORPUS_DIR --cache-dir DIR [--queries 200] [--rounds 3]

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
    args = parser.parse_args()
    print(f"$ python {' '.join(sys.argv)}\n{exports.cpu_line()}; load average {os.getloadavg()[0]:.2f} at start")
    book = vecbook.VecBook(data_directory=args.corpus, cache_directory=args.cache_dir)
    queries = speed.queries(args.queries)
    for query in queries[:20]:  # warm-up
        book.search(query, mode="hybrid", fusion="linear")
    step = vecbook.rank.FEEDBACK_WEIGHT
    times: dict[float, list[float]] = {step: [], 0.0: []}
    for round_ in range(args.rounds):
        for weight in (step, 0.0) if round_ % 2 == 0 else (0.0, step):
            vecbook.rank.FEEDBACK_WEIGHT = weight
            for query in queries:
                started = time.perf_counter()
                book.search(query, mode="hybrid", fusion="linear")
                times[weight].append((time.perf_counter() - started) * 1000)
    for weight, found in times.items():
        found.sort()
        print(f"feedback step {weight}: hybrid p50 {statistics.median(found):.1f} ms, "
              f"p95 {found[int(0.95 * len(found))]:.1f} ms ({len(found)} searches)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    book.close()


if __name__ == "__main__":
    main()
