#!/usr/bin/env python3
"""What a one-note update costs: a warm start over ``bench/speed.py``'s corpus of SIZE records
and a cache folder its cold build left (``bench/scale.py``, ``bench/cold_peak.py``), then ROUNDS
notes appended to ``journal.txt`` one at a time, each ``reindex()``ed: wall seconds, CPU
seconds of the process (steadier than wall time on a shared machine), and whether the note is
found by keyword and by meaning; each round starts once the last one's background writes are
done, and also gives the CPU seconds of the calling thread alone (the build runs on it; the
process's count includes background saves). ``journal.txt`` is put back as it was after. CODE names the
checkout whose ``vecbook`` runs (default: this one), to compare two versions over one cache.
``--steps`` adds each round's wall seconds per step of ``reindex()`` (reading what changed, the
keyword snapshot, the vectors, the saves begun, the ``stats`` it returns); ``--profile`` prints
cProfile's top functions of the last round's ``reindex()``.

    python bench/reindex_cost.py SIZE CACHE_DIR [--rounds 3] [--code PATH] [--workdir bench/results]
        [--steps] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# The steps ``--steps`` times: (module of vecbook, class or None, function).
STEPS = {"read": ("build", "Builder", "read"), "keywords": ("build", "Builder", "keyword_snapshot"),
         "vectors": ("book", "VecBook", "_embed"), "saves begun": ("caches", "Caches", "save_update"),
         "stats": ("book", "VecBook", "stats"), "memory release": ("book", None, "_release_freed_memory")}


def timed_steps() -> dict[str, float]:
    """Wrap each of STEPS' functions to add its wall seconds to the dict returned."""
    spent: dict[str, float] = {}
    for name, (module_name, class_name, function) in STEPS.items():
        module = importlib.import_module(f"vecbook.{module_name}")
        owner = getattr(module, class_name) if class_name else module
        inner = getattr(owner, function)

        @functools.wraps(inner)
        def wrapper(*args, _inner=inner, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - started
        setattr(owner, function, wrapper)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", type=int)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--steps", action="store_true", help="each round's wall seconds per step of reindex()")
    parser.add_argument("--profile", action="store_true", help="cProfile of the last round's reindex()")
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    sys.path[:0] = [str(args.code), str(ROOT / "bench")]
    import vecbook
    from synthetic import synthetic_embedder

    corpus = args.workdir / f"corpus-{args.size}"
    book = vecbook.VecBook(corpus, cache_directory=args.cache, precision="auto",
                           embedder=synthetic_embedder("auto", args.workdir / "scale-models"))
    store = getattr(book._snapshot.vectors, "store", None)
    if store is not None and hasattr(store, "wait_for_scan"):
        store.wait_for_scan()
    book.search("warm up", mode="hybrid")
    journal = corpus / "journal.txt"
    original = journal.read_bytes()
    from vecbook.cpu import cpu_description

    out: dict = {"code": str(args.code), "cpu_line": cpu_description(), "load_average": os.getloadavg()[0],
                 "wall": [], "cpu": [], "thread_cpu": [], "visible": [],
                 "found": [], "steps": []}
    spent = timed_steps() if args.steps else None
    profile = cProfile.Profile() if args.profile else None
    try:
        for number in range(args.rounds):
            with open(journal, "a", encoding="utf-8") as handle:
                handle.write(f"\n---\nDate: 2026-01-0{number + 1}\nA quokka repaired the lighthouse with a blue "
                             f"umbrella {number}.\n")
            # The last round's background writes (caches, the scan) done first: their CPU time
            # counts in the process's, and they compete with the update for the cores.
            if hasattr(book, "_caches"):
                book._caches.wait()
            if hasattr(vecbook.vector_store, "wait_for_scans"):
                vecbook.vector_store.wait_for_scans()
            if spent is not None:
                spent.clear()
            last = profile is not None and number == args.rounds - 1
            if last:
                profile.enable()
            wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
            book.reindex()
            if last:
                profile.disable()
            if spent is not None:
                out["steps"].append({name: round(seconds, 3) for name, seconds in spent.items()})
            out["wall"].append(round(time.perf_counter() - wall, 3))
            out["cpu"].append(round(time.process_time() - cpu, 3))
            out["thread_cpu"].append(round(time.thread_time() - own, 3))
            top = book.search("quokka lighthouse umbrella", mode="keyword", max_results=1)
            near = book.search("a quokka fixing a lighthouse", mode="semantic", max_results=10)
            out["visible"].append(round(time.perf_counter() - wall, 3))
            out["found"].append(bool(top) and "quokka" in top[0].text and any("quokka" in h.text for h in near))
    finally:
        journal.write_bytes(original)
        book.reindex()
        book.close()
    for name in ("wall", "cpu", "thread_cpu", "visible"):
        out[name + "_median"] = statistics.median(out[name])
    print(json.dumps(out))
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
