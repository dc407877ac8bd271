#!/usr/bin/env python3
"""Records' int8 embedding speed of this version's recipe against another int8 build of the
same model: both graphs in one process, in alternating rounds, on bench/speed.py's seeded
records, timed in wall seconds and in the CPU seconds of the process (steadier on a shared
machine).

    python bench/recipe_speed.py OTHER_MODEL_FOLDER [--records 500] [--rounds 8] [--model-cache DIR]

OTHER_MODEL_FOLDER is a built ONNX folder of the same model, such as the one an earlier
version left in the cache (``~/.cache/vecbook/models/<model>-<hash>-int8-smooth-v3/``). This
version's recipe is built in ``--model-cache`` (default: the user cache) if it is not there yet.
The machine line comes first.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import vecbook  # noqa: E402  (needs the repository root on sys.path)
from speed import record_text  # noqa: E402
from vecbook.embed import cpu_description  # noqa: E402


def main() -> None:
    """Time both int8 graphs on the same records and print the medians and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="a built ONNX model folder of the same model (another recipe)")
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--model-cache", type=Path, help="where this version's ONNX files are (or get) built")
    args = parser.parse_args()
    print(f"{cpu_description()}; load average {open('/proc/loadavg').read().split()[0]}")
    rng = random.Random(1)
    texts = [record_text(rng) for _ in range(args.records)]
    ours, other = (vecbook.Embedder(precision="int8", model_cache=args.model_cache) for _ in range(2))
    print(f"this version: {ours.load().folder.name}; other: {args.other.name}")
    other.load().folder = args.other  # the same model code, over the other build's graph files
    other.load()._sessions.clear()
    for embedder in (ours, other):
        embedder.encode(texts[:64])  # sessions made and warm before timing
    wall: dict[str, list[float]] = {"ours": [], "other": []}
    cpu: dict[str, list[float]] = {"ours": [], "other": []}
    for round_ in range(args.rounds):
        pair = [("ours", ours), ("other", other)]
        for name, embedder in pair if round_ % 2 == 0 else pair[::-1]:
            started, cpu_started = time.perf_counter(), time.process_time()
            embedder.encode(texts)
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - cpu_started)
    for label, seconds in (("wall", wall), ("CPU", cpu)):
        ratios = [theirs / mine for mine, theirs in zip(seconds["ours"], seconds["other"])]
        print(f"{label} seconds for {args.records} records, median of {args.rounds} alternating rounds: "
              f"this version {statistics.median(seconds['ours']):.2f}, other {statistics.median(seconds['other']):.2f}; "
              f"speed of this version / other: {statistics.median(ratios):.2f} "
              f"(rounds {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
