#!/usr/bin/env python3
"""Keyword cache benchmark: a keyword-only VecBook from process start to index ready, reading
and tokenizing every source (no cache) against restarting with the keyword cache of the last
run, each in a fresh process, alternating.

    python bench/keyword_restart.py DATA_DIR [--cache-dir DIR] [--rounds 3]

DATA_DIR is any data folder (bench/speed.py makes seeded ones under bench/results/, e.g.
corpus-20000); the cache folder defaults to a temporary one, removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from speed import run_child  # noqa: E402 - bench/speed.py: a fresh interpreter per measurement

START = """
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, ".")
import vecbook
cache = sys.argv[2] if sys.argv[2] != "off" else False
book = vecbook.VecBook(config=vecbook.config.config_without_file(data_directory=sys.argv[1], cache_directory=cache),
                       keyword_only=True)
print(json.dumps({"seconds": time.perf_counter() - started, "files_read": book.stats()["last_update"]["files_read"],
                  "records": book.stats()["records"]}))
"""


def start(data: Path, cache: str) -> dict:
    return run_child(START, str(data.resolve()), cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the data folder")
    parser.add_argument("--cache-dir", type=Path, help="cache folder (default: a temporary one)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from vecbook.embed import cpu_description

    # Resolved: the measurements run from the repository root (run_child).
    cache = (args.cache_dir or Path(tempfile.mkdtemp(prefix="vecbook-keyword-bench-"))).resolve()
    try:
        print(f"machine: {cpu_description()}, load average {os.getloadavg()[0]:.2f} at start")
        start(args.data, str(cache))  # writes the keyword cache the restarts read
        runs: dict[str, list[dict]] = {"no cache": [], "restart": []}
        for _ in range(args.rounds):
            runs["no cache"].append(start(args.data, "off"))
            runs["restart"].append(start(args.data, str(cache)))
        records = runs["restart"][0]["records"]
        print(f"keyword-only start to index ready, {records:,} records, median of {args.rounds} alternating")
        print("| start | seconds | files read |")
        print("|---|---:|---:|")
        for name, results in runs.items():
            print(f"| {name} | {statistics.median(r['seconds'] for r in results):.2f} | {results[-1]['files_read']} |")
        size = sum(p.stat().st_size for p in cache.glob("keywords-*.vbk"))
        print(f"keyword cache file: {size / 1e6:.0f} MB")
    finally:
        if args.cache_dir is None:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
