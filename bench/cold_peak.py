#!/usr/bin/env python3
"""Where a first build's memory peaks: one cold build (an empty cache folder) over
``bench/speed.py``'s seeded corpus of SIZE records, with synthetic vectors
(``bench/synthetic.py``), RSS sampled every INTERVAL seconds beside the stack of VecBook frames
each thread was in. Prints the peak (VmHWM), the highest samples with their stacks, the
highest sample per build stage, and a timeline. Linux only (RSS from /proc).

    python bench/cold_peak.py SIZE [--workdir bench/results] [--interval 0.25] [--keyword-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import speed  # noqa: E402  (bench/speed.py: the corpus)


def rss(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) / 1024 for line in lines if line.startswith(field + ":"))


def stacks() -> list[str]:
    """For each other thread in VecBook code: its innermost VecBook frames (file:line:function)."""
    found = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        names = [f"{Path(f.f_code.co_filename).name}:{line}:{f.f_code.co_name}"
                 for f, line in traceback.walk_stack(frame) if "vecbook" in f.f_code.co_filename]
        if names:
            found.append(" < ".join(names[:5]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", type=int)
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--interval", type=float, default=0.25)
    parser.add_argument("--keyword-only", action="store_true", help="stop after the keyword stage")
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    import vecbook
    from synthetic import synthetic_embedder
    from vecbook.cpu import cpu_description

    print(f"command: python bench/cold_peak.py {' '.join(sys.argv[1:])}")
    print(f"machine: {cpu_description()}, load average {os.getloadavg()[0]:.2f} at start")
    corpus = speed.make_corpus(args.workdir / f"corpus-{args.size}", args.size)
    embedder = synthetic_embedder("auto", args.workdir / "scale-models")
    samples: list[tuple[float, float, list[str]]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.perf_counter(), rss(), stacks()))
            time.sleep(args.interval)

    cache = Path(tempfile.mkdtemp(prefix="cold-peak-", dir=args.workdir))
    sampler = threading.Thread(target=sample, daemon=True)
    started = time.perf_counter()
    sampler.start()
    try:
        vecbook.VecBook(corpus, cache_directory=cache, embedder=embedder, precision="auto",
                        keyword_only=args.keyword_only).close()
        if hasattr(vecbook.vector_store, "wait_for_scans"):
            vecbook.vector_store.wait_for_scans()
    finally:
        done.set()
        sampler.join()
        shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps({"size": args.size, "seconds": round(time.perf_counter() - started, 1),
                      "peak_rss_mb": round(rss("VmHWM")), "load_average_end": round(os.getloadavg()[0], 2)}))
    print("highest samples:")
    for at, mb, where in sorted(samples, key=lambda s: -s[1])[:5]:
        print(f"  {at - started:7.1f} s {mb:7.0f} MB  {where}")
    print("timeline:")
    for at, mb, where in samples[::max(1, len(samples) // 40)]:
        print(f"  {at - started:7.1f} s {mb:7.0f} MB  {where[:1]}")


if __name__ == "__main__":
    main()
