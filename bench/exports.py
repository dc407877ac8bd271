#!/usr/bin/env python3
"""Export loading speed: generated exports of realistic shape, read and windowed by VecBook's
readers, each load timed in a fresh process (median of --runs), with its peak RSS.

    python bench/exports.py [--workdir DIR] [--runs 3] [--only slack,whatsapp,...]

Targets (issues 12 and 13): 200,000 chat messages parse and window in at most 10 s; a
50,000-message mbox loads in at most 30 s. The generators live beside this script
(bench/export_<format>.py, ``generate(folder, messages, seed)``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

# format -> (generator module, messages, target seconds or None); the run without --only
# times the formats the issues set targets for.
CASES = {
    "slack": ("export_slack", 200_000, 10.0),
    "whatsapp": ("export_whatsapp", 200_000, 10.0),
    "telegram": ("export_telegram", 200_000, 10.0),
    "imessage": ("export_imessage", 200_000, 10.0),
    "mbox": ("export_mail", 50_000, 30.0),
    "chatgpt": ("export_chatgpt", 100_000, None),
    "ics": ("export_ics", 10_000, None),
    "markdown": ("export_markdown", 50_000, None),
    "superwhisper": ("export_superwhisper", 5_000, None),
}
CHILD = """
import json, re, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from vecbook.config import CollectionConfig
from vecbook.exports import load_export
started, cpu = time.perf_counter(), time.process_time()
records, problems, facts = load_export(CollectionConfig(name="x", path=Path(sys.argv[2]), database_label="x",
                                                        format=sys.argv[3]))
# VmHWM: this process's own peak (ru_maxrss would carry the parent's RSS at fork across exec)
peak_kb = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1))
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
                  "records": len(records), "problems": len(problems), "rss_mb": peak_kb / 1024}))
"""


def cpu_line() -> str:
    """The CPU's model name and the flags that choose VecBook's code paths."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    flags = set(next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), []))
    shown = sorted(f for f in flags if f.startswith(("avx", "amx")))
    return f"{name}; {len(set(l for l in info.splitlines() if l.startswith('processor')))} CPUs; flags: {' '.join(shown)}"


def measure(path: Path, fmt: str, runs: int) -> dict[str, float]:
    results = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(path), fmt], capture_output=True,
                             text=True, check=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    median = statistics.median(r["seconds"] for r in results)
    chosen = min(results, key=lambda r: abs(r["seconds"] - median))
    return {**chosen, "seconds": median}


def run(workdir: Path | None = None, runs: int = 3, only: str | None = None, scale: float = 1.0) -> None:
    """Generate each export, load it ``runs`` times in fresh processes, print the table."""
    workdir = workdir or Path(tempfile.mkdtemp(prefix="vecbook-exports-"))
    wanted = only.split(",") if only else [fmt for fmt, case in CASES.items() if case[2] is not None]
    print("| format | messages | records | seconds (median) | CPU s | peak RSS | target |\n|---|---:|---:|---:|---:|---:|---|")
    for fmt in wanted:
        module, messages, target = CASES[fmt]
        messages = max(1, int(messages * scale))
        folder = workdir / fmt
        folder.mkdir(parents=True, exist_ok=True)
        path = importlib.import_module(module).generate(folder, messages)
        row = measure(path, fmt, runs)
        verdict = "-" if target is None else f"{target:.0f} s: {'met' if row['seconds'] <= target else 'missed'}"
        print(f"| {fmt} | {messages:,} | {row['records']:,} | {row['seconds']:.1f} | {row['cpu']:.1f} | "
              f"{row['rss_mb']:.0f} MB | {verdict} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, help="where the exports are generated (default: a temp folder)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="comma-separated formats (default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the message counts (smoke tests)")
    args = parser.parse_args(argv)
    print(f"$ python {' '.join(shlex.quote(a) for a in sys.argv)}\n{cpu_line()}\n")
    run(args.workdir, args.runs, args.only, args.scale)


if __name__ == "__main__":
    main()
