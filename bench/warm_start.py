#!/usr/bin/env python3
"""One warm start at a million records, timed and measured alone: seconds from the process's
start to the index ready, RSS then, RSS after 40 hybrid searches (and its mapped file pages),
RSS once the saves the start began have ended, and the peak; with
``--profile``, cProfile's top functions of the start (cumulative, then own time).

    python bench/warm_start.py [--workdir bench/results] [--size 1000000] [--change] [--rounds 3] [--profile]

``--change`` times a start where one file changed since the caches were saved: a line is
appended to the corpus's ``journal.txt`` before the start (its modification time set a minute
back, as for a file edited a while ago) and the file is put back byte for byte after, so every
round finds it changed. Only ever on the corpus ``bench/speed.py`` generated, never on a
user's files. ``--rounds N`` runs N such starts, each in a fresh process one after the other,
and prints each one's figures and their medians.

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
import statistics
import subprocess
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


def changed(journal: Path, stamp: str) -> bytes:
    """Append a line naming ``stamp`` to ``journal`` (a corpus file of ours), dated a minute
    back so the start keeps it in its keyword cache as settled; returns the bytes it held."""
    original = journal.read_bytes()
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write(f"\n---\nDate: 2026-01-01\nA quokka counted {stamp} lighthouses by the harbour.\n")
    back = time.time() - 60
    os.utime(journal, (back, back))
    return original


def child_arguments(args: argparse.Namespace) -> list[str]:
    """The command line of one round of ``args``."""
    argv = ["--workdir", str(args.workdir), "--size", str(args.size)]
    argv += ["--change"] if args.change else []
    argv += ["--cache", args.cache] if args.cache else []
    return argv + (["--code", str(args.code)] if args.code else [])


def rounds(args: argparse.Namespace, argv: list[str]) -> None:
    """Run ``args.rounds`` starts, each in a process of its own, and print their medians."""
    results = []
    for number in range(args.rounds):
        line = subprocess.run([sys.executable, __file__, *argv, "--rounds", "1"], check=True, stdout=subprocess.PIPE,
                              text=True).stdout.strip().splitlines()[-1]
        results.append(json.loads(line))
        print(f"round {number + 1}: {line}", file=sys.stderr)
    medians = {key: statistics.median(r[key] for r in results)
               for key in ("ready_s", "ready_rss_mb", "serving_rss_mb", "serving_file_mb", "saved_rss_mb", "peak_mb",
                           "load_average") if all(key in r for r in results)}
    print(json.dumps({"rounds": len(results), "change": args.change, "median": medians,
                      "ready_s": [round(r["ready_s"], 2) for r in results]}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--change", action="store_true", help="one corpus file changed since the caches were saved")
    parser.add_argument("--rounds", type=int, default=1, help="starts to run, each in a fresh process (median)")
    parser.add_argument("--cache", help="the cache folder's name in WORKDIR (default scale-cache-SIZE)")
    parser.add_argument("--code", type=Path, help="a checkout whose vecbook package to time (default this one)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.rounds > 1:
        rounds(args, child_arguments(args))
        return
    if args.code is not None:
        sys.path.insert(0, str(args.code.resolve()))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    corpus = args.workdir / f"corpus-{args.size}"
    journal = corpus / "journal.txt"
    original = changed(journal, f"{time.time_ns()}") if args.change else None
    try:
        start(args, corpus)
    finally:
        if original is not None:
            journal.write_bytes(original)


def start(args: argparse.Namespace, corpus: Path) -> None:
    """One warm start over ``corpus``, timed from this process's start; prints its JSON line."""
    import vecbook
    from vecbook.cpu import cpu_description
    from synthetic import synthetic_embedder

    print(f"vecbook from {Path(vecbook.__file__).parent}; machine: {cpu_description()}, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} "
          "at start", file=sys.stderr)
    embedder = synthetic_embedder("auto", args.workdir / "scale-models")
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()
    book = vecbook.VecBook(corpus, cache_directory=args.workdir / (args.cache or f"scale-cache-{args.size}"),
                           embedder=embedder, precision="auto")
    if profile is not None:
        profile.disable()
    out = {"ready_s": time.perf_counter() - STARTED, "ready_rss_mb": rss(), "ready_peak_mb": rss("VmHWM"),
           "load_average": os.getloadavg()[0], "last_update": book.stats()["last_update"]}
    for number in range(40):
        book.search(f"lighthouse {number} meeting notes", mode="hybrid")
    out["serving_rss_mb"] = rss()
    out["serving_file_mb"] = rss("RssFile")  # of it, mapped file pages (the rows file's), which the system may drop
    vecbook.caches.write_put_off()  # the restart's saves in flight, ended: what a server then holds
    out["saved_rss_mb"], out["saved_file_mb"] = rss(), rss("RssFile")
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    book.close()
    vecbook.vector_store.wait_for_scans()  # the scan saved before the process ends, as scale.py does


if __name__ == "__main__":
    main()
