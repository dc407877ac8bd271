#!/usr/bin/env python3
"""Where a VecBook's memory goes: RSS at each step of a start (from the INFO log), the peak,
and the bytes each part of the index holds, found by walking its objects.

    python bench/memory.py DATA_DIR --cache-dir DIR [--mode hybrid|keyword] [--searches 40]
        [--precision auto|float32|int8]
    python bench/memory.py DATA_DIR --cache-dir DIR --random-vectors

DATA_DIR is any data folder (``bench/speed.py`` makes seeded ones under ``bench/results/``,
e.g. ``corpus-100000``). Run it twice with the same cache folder for a warm start (the first
run writes both caches). ``--random-vectors`` fills the vector cache with synthetic vectors
(``bench/synthetic.py``: a hashed bag of words per text, distinct for distinct texts) instead of
the model's (the real model still cuts the texts into windows, so the keys, shapes and file
are those of real vectors, and a warm start's memory is the same) in minutes rather than the
half hour 100k records take to embed on two cores: for memory figures only, never for quality. The records' path is ``--precision`` (default ``auto``, what a user gets: int8 on
onnxruntime with int8 dot products or x86 AVX2, else float32); torch is never imported.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
QUERIES = ["garden kitchen budget", "train hotel flight", "doctor appointment monday", "rain"]


def status(field: str) -> float:
    """A /proc/self/status figure (VmRSS, VmHWM) in MB (Linux only)."""
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


class WithRSS(logging.Filter):
    """Adds the RSS and its peak so far to each log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.rss, record.peak = status("VmRSS"), status("VmHWM")
        return True


def deep_size(root: Any, seen: set[int]) -> int:
    """Bytes reachable from ``root`` and not in ``seen`` (which it extends): objects by
    ``sys.getsizeof``, numpy arrays by the buffer they own, containers and instances walked."""
    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if obj is None or id(obj) in seen or isinstance(obj, (type, type(sys), type(deep_size))):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            total += sys.getsizeof(obj) if obj.base is None else 112
            if obj.base is not None:
                stack.append(obj.base)
            continue
        try:
            total += sys.getsizeof(obj)
        except TypeError:
            pass
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif not isinstance(obj, (str, bytes, int, float, bool, memoryview, bytearray)):
            if hasattr(obj, "__dict__"):
                stack.append(obj.__dict__)
            for name in getattr(type(obj), "__slots__", ()):
                stack.append(getattr(obj, name, None))
    return total


def parts(book: Any) -> dict[str, int]:
    """Bytes per part of a built book, each object counted once, in the first part reaching it."""
    snapshot, seen = book._snapshot, {id(book.embedder)}
    sizes = {"records": deep_size(snapshot.records, seen),
             "keyword vocabulary": deep_size(snapshot.keywords.vocabulary, seen),
             "keyword index (postings, idf, passages)": deep_size(snapshot.keywords, seen) + deep_size(
                 snapshot.passages, seen)}
    vectors = snapshot.vectors
    if vectors is not None:
        sizes["vector index: float16 rows (FAISS)"] = vectors.vectors.nbytes
        sizes["vector index: window keys, owners, spans"] = deep_size(vectors, seen)
    sizes["layouts (passages, token counts, window keys and spans) per source"] = deep_size(book._builder.blocks, seen)
    sizes["vector cache in memory (keys)"] = deep_size(book._caches.__dict__, seen)
    sizes["the rest of the book (sources state, filters, report)"] = deep_size(book.__dict__, seen)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the data folder")
    parser.add_argument("--cache-dir", type=Path, required=True, help="cache folder (vectors, keywords, models)")
    parser.add_argument("--mode", choices=("hybrid", "keyword"), default="hybrid")
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--random-vectors", action="store_true",
                        help="fill the vector cache with synthetic vectors (bench/synthetic.py) instead of the model's")
    parser.add_argument("--precision", choices=("auto", "float32", "int8"), default="auto",
                        help="the records' embedding path (onnxruntime either way)")
    args = parser.parse_args()
    handler = logging.StreamHandler(sys.stdout)
    handler.addFilter(WithRSS())
    handler.setFormatter(logging.Formatter("%(relativeCreated)8.0f ms  RSS %(rss)5.0f MB  peak %(peak)5.0f MB  "
                                           "%(message).110s"))
    logging.getLogger("vecbook").addHandler(handler)
    logging.getLogger("vecbook").setLevel(logging.INFO)
    import vecbook
    from vecbook.embed import cpu_description

    print(f"machine: {cpu_description()}; {' '.join(sys.argv)}")
    started, imported = time.perf_counter(), status("VmRSS")
    settings: dict[str, Any] = {"cache_directory": args.cache_dir, "precision": args.precision}
    if args.mode == "keyword":
        settings["keyword_only"] = True
    elif args.random_vectors:
        from synthetic import synthetic_embedder  # bench/synthetic.py

        settings["embedder"] = synthetic_embedder(args.precision, args.cache_dir / "models")
    book = vecbook.VecBook(args.data, **settings)
    built, built_peak = status("VmRSS"), status("VmHWM")
    for number in range(args.searches):
        book.search(QUERIES[number % len(QUERIES)], mode=args.mode)
    searched, peak = status("VmRSS"), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    gc.collect()
    sizes = parts(book)  # after the peak is taken: the walk's own bookkeeping takes hundreds of MB
    records = len(book._snapshot.records)
    path = "none" if args.mode == "keyword" else f"{book.embedder.precision} on {book.embedder.runtime}"
    print(f"\n{records:,} records, {args.mode}, records embedded in {path}; start to index ready "
          f"{time.perf_counter() - started:.1f} s; torch imported: {'torch' in sys.modules}")
    print(f"RSS after imports {imported:.0f} MB; built {built:.0f} MB (peak {built_peak:.0f} MB); after "
          f"{args.searches} searches {searched:.0f} MB; peak RSS {peak:.0f} MB")
    print("| part | MB | bytes per record |\n|---|---:|---:|")
    for name, size in sizes.items():
        print(f"| {name} | {size / 2 ** 20:.1f} | {size / max(records, 1):,.0f} |")
    print(json.dumps({"records": records, "peak_mb": peak, "parts": sizes}))


if __name__ == "__main__":
    main()
