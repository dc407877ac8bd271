#!/usr/bin/env python3
"""Keyword top-k A/B in one process: every passage scored (the full search) against the pruned
search (vecbook.keyword_prune), alternating query by query so the machine's load falls on both.

    python bench/keyword_speed.py [--size 100000] [--queries 300] [--rounds 3] [--k 10 100]
    python bench/keyword_speed.py --index keywords.pkl   # a pickled {"index": KeywordIndex, "tokens": [...]}

Without ``--index`` it builds a KeywordIndex (one passage a record) over ``--size`` records of
``bench/speed.py``'s synthetic corpus (the corpus ``bench/scale.py`` serves) and tokenizes
``speed.queries``. Before timing, it checks that both give the same top k (records, order and
normalised scores, bit for bit) for every query and every ``--k``; the timed k is the last one
(100: the depth ``VecBook.search`` ranks with its default ``dedupe``). Prints the CPU line, the
load average, the medians of each and their ratio.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import exports  # noqa: E402  (bench/exports.py: the CPU line)
import speed  # noqa: E402  (bench/speed.py: the synthetic corpus and its queries)
from vecbook.index import KeywordIndex  # noqa: E402
from vecbook.rank import keyword_top  # noqa: E402
from vecbook.tokens import ENGLISH, query_tokens, tokenize  # noqa: E402


def synthetic(size: int, queries: int) -> tuple[KeywordIndex, list[list[str]]]:
    """A keyword index over ``size`` synthetic records and the tokens of ``queries`` queries."""
    rng = random.Random(42)
    started = time.perf_counter()
    index = KeywordIndex([tokenize(speed.record_text(rng)) for _ in range(size)])
    print(f"built {size:,} records in {time.perf_counter() - started:.1f} s", flush=True)
    return index, [query_tokens(q, [ENGLISH]) for q in speed.queries(queries)]


def full(index: KeywordIndex, tokens: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top k with every passage scored (as keyword search ranked before pruning)."""
    ids, scores, _ = keyword_top(index, tokens, k, None, passage_scores=index.scores(tokens), every=False)
    return ids, scores


def pruned(index: KeywordIndex, tokens: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top k as keyword search ranks now."""
    ids, scores, _ = keyword_top(index, tokens, k, None, every=False)
    return ids, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, help="a pickled {'index': KeywordIndex, 'tokens': [...]}")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, nargs="+", default=[10, 100])
    args = parser.parse_args()
    print(f"$ python {' '.join(sys.argv)}\n{exports.cpu_line()}; load average {os.getloadavg()[0]:.2f} at start")
    if args.index:
        with open(args.index, "rb") as handle:
            held = pickle.load(handle)
        index, queries = held["index"], held["tokens"][:args.queries]
    else:
        index, queries = synthetic(args.size, args.queries)
    print(f"{index.n_passages:,} passages, {len(index.doc_ids):,} postings, {len(queries)} queries")
    for tokens in queries:  # warm up: each term's bounds are found on its first query
        pruned(index, tokens, args.k[-1])
    for k in args.k:
        differ = sum(1 for tokens in queries if not all(
            np.array_equal(a, b) for a, b in zip(full(index, tokens, k), pruned(index, tokens, k))))
        print(f"k={k}: top k identical for {len(queries) - differ} of {len(queries)} queries")
        if differ:
            raise SystemExit("the pruned top k differs from the full one")
    times: dict[str, list[float]] = {"full": [], "pruned": []}
    for _ in range(args.rounds):
        for tokens in queries:
            for name, search in (("full", full), ("pruned", pruned)):
                started = time.perf_counter()
                search(index, tokens, args.k[-1])
                times[name].append(time.perf_counter() - started)
    old, new = (statistics.median(times[name]) * 1e3 for name in ("full", "pruned"))
    p95 = {name: float(np.percentile(values, 95)) * 1e3 for name, values in times.items()}
    print(f"k={args.k[-1]}, {args.rounds} rounds: full p50 {old:.2f} ms (p95 {p95['full']:.2f}), "
          f"pruned p50 {new:.2f} ms (p95 {p95['pruned']:.2f}); ratio {new / old:.3f}; "
          f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
