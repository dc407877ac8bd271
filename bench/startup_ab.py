#!/usr/bin/env python3
"""Start-up of two (or more) checkouts, alternating fresh processes: a warm one-off
`vecbook.py search --mode semantic` (wall and CPU seconds of the whole process, its peak RSS)
and `vecbook.py serve` to its answer to `initialize` (wall, and the process's CPU seconds when
the answer came).

    python bench/startup_ab.py CONFIG CACHE CHECKOUT [CHECKOUT...] [--rounds 9] [--what semantic init]

CONFIG names the corpus (e.g. bench/speed.py's corpus-10000.toml) and CACHE a cache folder
warm for it; each checkout gets a copy of CACHE of its own (hard links: caches are replaced
whole, never written in place), as the keyword cache holds one code's records. One untimed run
of each first (its keyword cache, its .pyc files); then rounds in alternating order. Prints the
load average at start and end, the CPU line, and medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "garden budget meeting"
TICK = os.sysconf("SC_CLK_TCK")


def environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "VECBOOK_CACHE_DIRECTORY": str(cache), "HF_HUB_OFFLINE": "1"}


def initialize(checkout: Path, config: Path, cache: Path) -> dict[str, float]:
    """Launch to the answer to ``initialize``; CPU seconds of the process (its threads) then."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "vecbook.py", "serve", "--config", str(config)], cwd=checkout,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=environment(cache))
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        + "\n").encode())
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    wall = time.perf_counter() - started
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    proc.kill()
    proc.wait()
    if "result" not in answer:
        raise SystemExit(f"initialize failed: {answer}")
    return {"wall": wall, "cpu": (int(fields[11]) + int(fields[12])) / TICK}


def search(checkout: Path, config: Path, cache: Path, mode: str) -> dict[str, float]:
    """One shell search, timed from here around the whole process, with its peak RSS."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "vecbook.py", "search", QUERY, "--mode", mode, "--config", str(config)],
                                cwd=checkout, stdout=subprocess.DEVNULL, stderr=err, env=environment(cache))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(err.read().decode(errors="replace")[-3000:])
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("cache", type=Path)
    parser.add_argument("checkouts", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--what", nargs="+", default=["semantic", "init"], choices=["semantic", "keyword", "init"])
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from vecbook.embed import cpu_description

    print(cpu_description(), "| load average at start:", os.getloadavg())
    work = Path(tempfile.mkdtemp(prefix="startup-ab-"))
    caches = {}
    for number, checkout in enumerate(args.checkouts):
        caches[checkout] = work / f"cache-{number}"
        shutil.copytree(args.cache, caches[checkout], copy_function=os.link)

    def measure(checkout: Path, what: str) -> dict[str, float]:
        if what == "init":
            return initialize(checkout.resolve(), args.config.resolve(), caches[checkout])
        return search(checkout.resolve(), args.config.resolve(), caches[checkout], what)

    runs: dict[tuple[Path, str], list[dict[str, float]]] = {(c, w): [] for c in args.checkouts for w in args.what}
    for checkout, what in runs:
        measure(checkout, what)
    for number in range(args.rounds):
        order = args.checkouts if number % 2 == 0 else list(reversed(args.checkouts))
        for what in args.what:
            for checkout in order:
                runs[checkout, what].append(measure(checkout, what))
    print("load average at end:", os.getloadavg())
    for (checkout, what), found in runs.items():
        medians = {key: round(statistics.median(run[key] for run in found), 3) for key in found[0]}
        print(f"{checkout} {what}: medians of {len(found)} {medians}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
