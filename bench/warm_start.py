#!/usr/bin/env python3
"""One warm start at a million records, timed and measured alone: seconds from the process's
start to the index ready, RSS then, RSS after 40 hybrid searches and the peak; with
``--profile``, cProfile's top functions of the start (cumulative, then own time).

    python bench/warm_start.py [--workdir bench/results] [--size 1000000] [--profile]

It reuses what ``bench/scale.py`` left in WORKDIR (its corpus, cache folder and models): run
that first. Quicker than scale.py's warm run (no latency rounds, no edit) for comparing one
change's start against another's in the same hour on a shared machine; the same synthetic
vectors (``bench/synthetic.py``). Linux only (RSS from /proc).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import sys
import time
from pathlib import Path

STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]


def rss(field: str = "VmRSS") -> float:
    """This process's RSS (or its peak, ``VmHWM``) in MB."""
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) / 1024 for line in lines if line.startswith(field + ":"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import vecbook
    from vecbook.cpu import cpu_description
    from synthetic import synthetic_embedder

    print(f"machine: {cpu_description()}, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} "
          "at start", file=sys.stderr)
    embedder = synthetic_embedder("auto", args.workdir / "scale-models")
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()
    book = vecbook.VecBook(args.workdir / f"corpus-{args.size}", cache_directory=args.workdir / f"scale-cache-{args.size}",
                           embedder=embedder, precision="auto")
    if profile is not None:
        profile.disable()
    out = {"ready_s": time.perf_counter() - STARTED, "ready_rss_mb": rss(), "ready_peak_mb": rss("VmHWM"),
           "last_update": book.stats()["last_update"]}
    for number in range(40):
        book.search(f"lighthouse {number} meeting notes", mode="hybrid")
    out["serving_rss_mb"] = rss()
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    book.close()
    vecbook.vector_store.wait_for_scans()  # the scan saved before the process ends, as scale.py does


if __name__ == "__main__":
    main()
