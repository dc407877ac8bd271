#!/usr/bin/env python3
"""Date-range filters over many records, each with its own moment (chat windows): the time of
one ``since``/``until`` mask, the first (which lays each date column out once) and the median
of the later ones.

Usage::

    python bench/date_filters.py [--records N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from vecbook.cpu import cpu_description
    from vecbook.filters import FilterColumns, convenience_conditions

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {cpu_description()}; {' '.join(sys.argv)}")
    rng, start = random.Random(0), datetime(2020, 1, 1)
    records = []
    for number in range(args.records):  # a window of up to 10 hours, starting at any minute of 6 years
        first = start + timedelta(minutes=rng.randrange(3_000_000))
        last = first + timedelta(minutes=rng.randrange(600))
        records.append(SimpleNamespace(metadata={"date": first.isoformat(), "end_date": last.isoformat()},
                                       metadata_keys=("date", "end_date"), source="chat"))
    columns = FilterColumns(records)
    conditions = convenience_conditions(since="2023-01-01", until="2023-06-30")
    times = []
    for _ in range(args.rounds + 1):
        started = time.perf_counter()
        found = int(columns.mask(conditions).sum())
        times.append(time.perf_counter() - started)
    print(f"{args.records:,} records, since 2023-01-01 until 2023-06-30: {found:,} in range; "
          f"first mask {times[0] * 1000:.0f} ms, later median {statistics.median(times[1:]) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
