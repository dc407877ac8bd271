#!/usr/bin/env python3
"""The vector index alone at a million rows: the time to make it, a top-10 search's p50/p95,
recall@10 against exact search, and an update that adds one row.

    python bench/index_scan.py [--rows 1000000] [--exhaustive]

The rows are 384-dimensional unit vectors in 2,000 seeded clusters with wide noise (topics, as
a text model's vectors fall, but spread much more evenly: the harder case for a quantizer);
the queries are 60 rows with a little noise added, 20 of them also searched exactly.
``--exhaustive`` raises ``APPROXIMATE_FROM`` past the rows: FAISS's exact float16 scan of every
row, the search below that size, as the baseline. Prints the CPU line and the load.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DIM = 384


def rows_of(first: int, end: int) -> np.ndarray:
    """Rows ``first`` to ``end`` of the seeded corpus, normalised float32."""
    centres = np.random.default_rng(7).standard_normal((2000, DIM), dtype=np.float32)
    rng = np.random.default_rng(first)
    x = centres[rng.integers(0, 2000, end - first)] + 1.5 * rng.standard_normal((end - first, DIM), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--exhaustive", action="store_true", help="FAISS's exact scan of every row (the baseline)")
    args = parser.parse_args()
    import vecbook.vector_index as vi
    from vecbook.cpu import cpu_description

    if args.exhaustive:
        vi.APPROXIMATE_FROM = 2 * args.rows + 2  # (the update below adds a row)
    n = args.rows
    print(f"machine: {cpu_description()}; load {os.getloadavg()[0]:.1f}; {' '.join(sys.argv)}", flush=True)

    made: dict[int, np.ndarray] = {}  # the seeded corpus is made 50,000 rows at a time

    def write(out: np.ndarray, start: int) -> None:
        for first in range(start - start % 50_000, start + len(out), 50_000):
            if first not in made:
                made.clear()
                made[first] = rows_of(first, min(n, first + 50_000)).astype(np.float16)
            low, high = max(start, first), min(start + len(out), first + len(made[first]))
            out[low - start:high - start] = made[first][low - first:high - first]

    started = time.perf_counter()
    index = vi.VectorIndex(None, np.arange(n), n, "cosine", fill=(DIM, write))
    print(f"{n:,} rows made into an index in {time.perf_counter() - started:.1f} s (rows generated "
          f"included)", flush=True)
    if index.store is not None:  # its scan is made in the background: wait for it
        index.store.wait_for_scan()
        print(f"its quantized scan set {time.perf_counter() - started:.1f} s after the start (one "
              f"background thread)", flush=True)
    print(index.index_type, flush=True)
    rng = np.random.default_rng(99)
    picks = rng.integers(0, n, 60)
    queries = index.decode(picks) + 0.05 * rng.standard_normal((60, DIM), dtype=np.float32)
    times, found, own = [], [], 0
    for number, query in enumerate(queries):
        started = time.perf_counter()
        ids, _ = index.top(query, 10)
        times.append((time.perf_counter() - started) * 1000)
        if number < 20:
            exact = index.top(query, 10, exact=True)[0] if index.store is not None else ids
            found.append(len(set(ids.tolist()) & set(exact.tolist())) / 10)
            own += int(ids[0] == picks[number])
    print(f"top 10: p50 {statistics.median(times):.1f} ms, p95 {np.percentile(times, 95):.1f} ms; recall@10 "
          f"against exact {np.mean(found):.4f}; a row's own vector first {own} of 20")
    source = np.concatenate([np.arange(n), [-1]])
    started = time.perf_counter()
    vi.VectorIndex.updated(index, np.arange(n + 1), n + 1, "cosine", None, b"", {}, DIM, source,
                           lambda rows: rows_of(n, n + len(rows)).astype(np.float16))
    print(f"an update adding one row: {time.perf_counter() - started:.2f} s; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
