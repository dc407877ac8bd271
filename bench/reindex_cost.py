#!/usr/bin/env python3
"""What a one-note update costs: a warm start over ``bench/speed.py``'s corpus of SIZE records
and a cache folder its cold build left (``bench/scale.py``, ``bench/cold_peak.py``), then ROUNDS
notes appended to ``journal.txt`` one at a time, each ``reindex()``ed: wall seconds, CPU
seconds of the process (steadier than wall time on a shared machine), and whether the note is
found by keyword and by meaning; each round starts once the last one's background writes are
done, and also gives the CPU seconds of the calling thread alone (the build runs on it; the
process's count includes background saves). ``journal.txt`` is put back as it was after. CODE names the
checkout whose ``vecbook`` runs (default: this one), to compare two versions over one cache.

    python bench/reindex_cost.py SIZE CACHE_DIR [--rounds 3] [--code PATH] [--workdir bench/results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", type=int)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
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
                 "found": []}
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
            wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
            book.reindex()
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


if __name__ == "__main__":
    main()
