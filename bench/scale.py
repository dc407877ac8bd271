#!/usr/bin/env python3
"""VecBook at 100k and a million records: the cold build's peak, a warm start to ready, what
serving holds, query latency per mode, the approximate index's recall against exact search,
and a new note searchable after ``reindex()``.

    python bench/scale.py [--sizes 100000,1000000] [--workdir bench/results] [--queries 200]
        [--searches 40] [--precision auto] [--cold]

Each size runs in fresh processes over ``bench/speed.py``'s seeded corpus (written once under
WORKDIR): a cold build over an empty cache folder (only when the folder holds no vectors yet,
or with ``--cold``), then a warm start over the caches it wrote. The vectors are synthetic
(``bench/synthetic.py``: a hashed bag of words per window the real model's tokenizer cut), so
a million records build in minutes rather than hours; memory, latency and the index's
behaviour are those of real vectors of the same shapes, retrieval quality is not (real
vectors' recall: ``bench/ann_recall.py``). Linux only (RSS from /proc).

The warm process reports, in order: seconds from its start (interpreter included) to the
index ready; RSS when
ready; seconds from its start until the index's quantized scan is in use (read back from the
cache folder, or trained in the background: searches are exact until then), and one semantic
search's time before it; RSS after ``--searches`` hybrid searches, and the peak; p50/p95 of ``--queries``
distinct queries per mode, each embedded; recall@10 of the semantic top 10 against exact
search over the same rows, and whether 200 records' own texts find them first; a new note
appended to ``journal.txt``, seconds until ``reindex()`` returns and it is found by keyword
and by meaning (the file is put back as it was after).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import speed  # noqa: E402  (bench/speed.py: the corpus and its queries)

CHILD = """
import json, os, random, resource, statistics, sys, time
started = time.perf_counter()
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/bench"]
from pathlib import Path
import numpy as np
import vecbook
from synthetic import synthetic_embedder

kind, corpus, cache, precision = sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
queries, searches = json.loads(sys.argv[6]), int(sys.argv[7])

def rss(field="VmRSS"):
    with open("/proc/self/status") as lines:
        return next(int(l.split()[1]) / 1024 for l in lines if l.startswith(field + ":"))

embedder = synthetic_embedder(precision, cache.parent / "scale-models")  # built once for every size
book = vecbook.VecBook(corpus, cache_directory=cache, embedder=embedder, precision=precision)
ready = time.perf_counter() - started
out = {"kind": kind, "records": book.stats()["records"], "ready_s": ready, "ready_rss_mb": rss(),
       "ready_peak_mb": rss("VmHWM"), "last_update": book.stats()["last_update"]}
store = getattr(book._snapshot.vectors, "store", None)  # (an older VecBook: no store, exact)
if store is not None and hasattr(store, "wait_for_scan"):
    # The quantized scan is read back or trained in the background: exact searches until then.
    out["exact_until_scan"] = not store.wait_for_scan(0)
    if kind == "warm" and out["exact_until_scan"]:
        t = time.perf_counter()
        book.search(queries[0], mode="semantic")
        out["semantic_before_scan_ms"] = (time.perf_counter() - t) * 1000
    store.wait_for_scan()
    out["scan_s"] = time.perf_counter() - started
if kind == "warm":
    vectors = book._snapshot.vectors
    scanned = store is not None
    out["index_type"] = vectors.index_type
    for number in range(searches):
        book.search(queries[number % len(queries)], mode="hybrid")
    out["serving_rss_mb"] = rss()
    out["serving_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    latency = {}
    for mode, filters in (("semantic", None), ("keyword", None), ("hybrid", None), ("hybrid", {"channel": "channel42"})):
        times = []
        book.embedder._query_cache.clear()
        for q in queries:
            t = time.perf_counter()
            book.search(q, mode=mode, filters=filters)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        name = mode if filters is None else mode + " + 1% filter"
        latency[name] = {"p50": statistics.median(times), "p95": times[int(0.95 * (len(times) - 1))]}
    out["latency"] = latency
    found = []
    for q in queries:
        vector = book.embedder.encode_query(q)
        exact = vectors.top(vector, 10, exact=True)[0] if scanned else vectors.top(vector, 10)[0]
        approximate = vectors.top(vector, 10)[0]
        found.append(len(set(exact.tolist()) & set(approximate.tolist())) / max(len(exact), 1))
    out["recall_at_10"] = float(np.mean(found))
    records = book._snapshot.records
    sample = random.Random(5).sample(range(len(records)), 200)
    first = []
    for i in sample:
        hits = book.search(records[i].content, mode="semantic", max_results=1, dedupe=False)
        first.append(bool(hits) and (hits[0].id == records[i].id or hits[0].text == records[i].text))
    out["own_text_first"] = sum(first) / len(first)
    journal = corpus / "journal.txt"
    original = journal.read_bytes()
    try:
        with open(journal, "a", encoding="utf-8") as handle:
            handle.write("\\n---\\nDate: 2026-01-01\\nA quokka repaired the lighthouse with a blue umbrella.\\n")
        t = time.perf_counter()
        stats = book.reindex()
        out["reindex_s"] = time.perf_counter() - t
        top = book.search("quokka lighthouse umbrella", mode="keyword", max_results=1)
        near = book.search("a quokka fixing a lighthouse", mode="semantic", max_results=10)
        out["edit_visible_s"] = time.perf_counter() - t
        out["edit_found"] = bool(top) and "quokka" in top[0].text and any("quokka" in h.text for h in near)
        out["edit_update"] = stats["last_update"]
    finally:
        journal.write_bytes(original)
        book.reindex()
        book.close()
if hasattr(vecbook.vector_store, "wait_for_scans"):
    vecbook.vector_store.wait_for_scans()  # the scan saved in the cache folder before the process ends
print(json.dumps(out))
"""


def child(kind: str, corpus: Path, cache: Path, precision: str, queries: list[str], searches: int) -> dict:
    """One fresh process (cold or warm); its JSON line, with its peak RSS from wait4."""
    args = [sys.executable, "-c", CHILD, str(ROOT), kind, str(corpus), str(cache), precision, json.dumps(queries),
            str(searches)]
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    stdout, stderr = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"the {kind} run failed:\n{stderr[-3000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--precision", default="auto", choices=("auto", "float32", "int8"))
    parser.add_argument("--cold", action="store_true", help="always start with a cold build (empty caches)")
    args = parser.parse_args()
    from vecbook.cpu import cpu_description

    print(f"command: python bench/scale.py {' '.join(sys.argv[1:])}")
    print(f"machine: {cpu_description()}, Python {sys.version.split()[0]}, load average "
          f"{os.getloadavg()[0]:.2f} at start (synthetic vectors: bench/synthetic.py)")
    qs = speed.queries(args.queries)
    for size in (int(s) for s in args.sizes.split(",")):
        corpus = speed.make_corpus(args.workdir / f"corpus-{size}", size)
        cache = args.workdir / f"scale-cache-{size}"
        cold = None
        if args.cold or not list(cache.glob("vectors-*.vbc")):
            for path in [*cache.glob("vectors-*.vbc"), *cache.glob("keywords-*.vbk"), *cache.glob("scan-*.vbs")]:
                path.unlink()
            cold = child("cold", corpus, cache, args.precision, qs, 0)
            print(json.dumps({"size": size, "cold": cold}), flush=True)
        warm = child("warm", corpus, cache, args.precision, qs, args.searches)
        print_size(size, cold, warm, args.searches)
        print(json.dumps({"size": size, "cold": cold, "warm": warm}))


def print_size(size: int, cold: dict | None, warm: dict, searches: int) -> None:
    """The figures of one size as a table."""
    print(f"\n{size:,} records ({warm['records']:,} read); index: {warm.get('index_type')}")
    print("| measure | figure |\n|---|---:|")
    if cold is not None:
        print(f"| cold build: start to ready (every text through the tokenizer, synthetic vectors) | {cold['ready_s']:.1f} s |")
        print(f"| cold build: peak RSS | {cold['ready_peak_mb']:,.0f} MB |")
    print(f"| warm start: process start to index ready | {warm['ready_s']:.1f} s |")
    if "scan_s" in warm:
        before = f"; one semantic search before it: {warm['semantic_before_scan_ms']:.0f} ms" \
            if "semantic_before_scan_ms" in warm else ""
        print(f"| warm start: process start to the quantized scan in use (exact searches until then{before}) | "
              f"{warm['scan_s']:.1f} s |")
    print(f"| RSS when ready (peak so far) | {warm['ready_rss_mb']:,.0f} MB ({warm['ready_peak_mb']:,.0f} MB) |")
    print(f"| RSS after {searches} hybrid searches; peak RSS | {warm['serving_rss_mb']:,.0f} MB; "
          f"{warm['serving_peak_mb']:,.0f} MB |")
    for name, figures in warm["latency"].items():
        print(f"| {name} p50 / p95 | {figures['p50']:.1f} / {figures['p95']:.1f} ms |")
    print(f"| semantic recall@10 against exact search | {warm['recall_at_10']:.4f} |")
    print(f"| a record's own text finds it first (200 sampled) | {warm['own_text_first']:.3f} |")
    print(f"| a new note: `reindex()` / found by keyword and meaning | {warm['reindex_s']:.2f} s / "
          f"{warm['edit_visible_s']:.2f} s ({'found' if warm['edit_found'] else 'NOT found'}) |")


if __name__ == "__main__":
    main()
