#!/usr/bin/env python3
"""What a hybrid search saves by reading each vector row once and taking its keyword top from
the passages above a cut: hybrid (and semantic) latency with both on, against both off (every
row read and decoded each time it is scored: ``search_rows.HELD_ROWS`` 0; every record's best
passage taken: ``keyword_prune.top_of_scores`` answering None), alternating query by query in
one process over one index, so the machine's load falls on both. Checks first that both give the
same hits (records, order, scores and snippets) for every query, and prints the rows read per
hybrid search, the RSS and the rows file's pages resident after, the CPU line and the load.

    python bench/hybrid_reads.py CORPUS_DIR --cache-dir DIR [--queries 200] [--embedder MODELS]

CORPUS_DIR: e.g. ``bench/scale.py``'s ``corpus-1000000`` with its cache folder (nothing is
embedded); ``--embedder``: the folder of ``bench/synthetic.py``'s models (``scale-models``) for
a corpus of synthetic vectors. Linux only (RSS from /proc).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import exports  # noqa: E402  (bench/exports.py: the CPU line)
import speed  # noqa: E402  (bench/speed.py: its queries)
import vecbook  # noqa: E402
import vecbook.rank  # noqa: E402
import vecbook.search_rows  # noqa: E402
import vecbook.vector_index  # noqa: E402

CUT = vecbook.rank.top_of_scores
HELD = vecbook.search_rows.HELD_ROWS


def both(on: bool) -> None:
    """Reading each row once and the keyword cut on, or both off (the search before them)."""
    vecbook.search_rows.HELD_ROWS = HELD if on else 0
    vecbook.rank.top_of_scores = CUT if on else (lambda *args: None)


def shown(hits: Any) -> list[tuple[Any, ...]]:
    return [(h.id, h.similarity_score, h.semantic_score, h.keyword_score, h.snippet) for h in hits]


def memory(field: str) -> int:
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) // 1024 for line in lines if line.startswith(field + ":"))


def rows_file_mb() -> int:
    """MB of saved rows files (``.vbr``) resident in this process's mappings."""
    head, name, total = re.compile(r"^[0-9a-f]+-[0-9a-f]+ "), "", 0
    with open("/proc/self/smaps") as lines:
        for line in lines:
            if head.match(line):
                parts = line.split()
                name = parts[5] if len(parts) > 5 else ""
            elif line.startswith("Rss:") and name.endswith(".vbr"):
                total += int(line.split()[1])
    return total // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", type=Path, help="bench/synthetic.py's models folder (synthetic vectors)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(exports.cpu_line(), flush=True)
    extra: dict[str, Any] = {}
    if args.embedder is not None:
        from synthetic import synthetic_embedder
        extra = {"embedder": synthetic_embedder("auto", args.embedder), "precision": "auto"}
    book = vecbook.VecBook(args.corpus, cache_directory=args.cache_dir, **extra)
    store = getattr(book._snapshot.vectors, "store", None)
    if store is not None:
        store.wait_for_scan()
    queries = speed.queries(args.queries + 20)
    for query in queries[:20]:  # warm-up
        book.search(query, mode="hybrid")
    for query in queries[20:]:
        both(False)
        before = shown(book.search(query, mode="hybrid"))
        both(True)
        assert shown(book.search(query, mode="hybrid")) == before, f"different hits for {query!r}"
    print(f"the same hits with both and without, {args.queries} hybrid queries")
    for mode in ("semantic", "hybrid"):
        times: dict[bool, list[float]] = {True: [], False: []}
        for number, query in enumerate(queries[20:]):
            for on in ((True, False) if number % 2 else (False, True)):
                both(on)
                started = time.perf_counter()
                book.search(query, mode=mode)
                times[on].append((time.perf_counter() - started) * 1000)
        new, old = statistics.median(times[True]), statistics.median(times[False])
        print(f"{mode} p50: {new:.1f} ms against {old:.1f} ms without ({new / old:.3f}x); "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
    decode = vecbook.vector_index.VectorIndex.decode
    for on in (True, False):
        both(on)
        read = [0]

        def counted(self: Any, rows: Any, read: list[int] = read) -> Any:
            read[0] += len(rows)
            return decode(self, rows)
        vecbook.vector_index.VectorIndex.decode = counted  # type: ignore[method-assign]
        for query in queries[20:60]:
            book.search(query, mode="hybrid")
        vecbook.vector_index.VectorIndex.decode = decode  # type: ignore[method-assign]
        print(f"rows read a hybrid search {'with' if on else 'without'}: {read[0] / 40:.0f}")
    both(True)
    print(f"RSS {memory('VmRSS'):,} MB (anonymous {memory('RssAnon'):,}, files {memory('RssFile'):,}, of them the "
          f"rows file {rows_file_mb():,}); peak {memory('VmHWM'):,} MB")
    book.close()


if __name__ == "__main__":
    main()
