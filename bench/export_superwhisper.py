#!/usr/bin/env python3
"""SuperWhisper reader benchmark: load a generated recordings folder of N recordings.

    python bench/export_superwhisper.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("the of and to in is was for on that with as it at by from this garden kitchen meeting budget project "
         "plan travel train hotel flight dinner recipe book note idea week month morning evening team client "
         "report invoice payment boiler window paint coffee bread garlic onion tomato remind call email").split()
MODES = [("Default", 0.6, (5, 40)), ("Email", 0.2, (30, 120)), ("Meeting", 0.1, (300, 1500)), ("Note", 0.1, (10, 80))]
MODELS = ["Ultra (Cloud)", "Pro (Local)", "Standard (Local)"]


def _recording(rng: random.Random, when: datetime) -> dict:
    mode, _, (low, high) = rng.choices(MODES, weights=[m[1] for m in MODES])[0]
    segments, clock, remaining = [], 0.0, rng.randint(low, high)
    while remaining > 0:
        count = min(remaining, rng.randint(6, 22))
        said = " ".join(rng.choice(WORDS) for _ in range(count)).capitalize() + "."
        length = round(count / 2.6, 2)
        segments.append({"start": round(clock, 2), "end": round(clock + length, 2), "text": said})
        clock += length + rng.uniform(0.1, 0.8)
        remaining -= count
    result = " ".join(s["text"] for s in segments)
    return {"appVersion": "1.44.6", "datetime": when.isoformat(timespec="seconds"), "duration": int(clock * 1000),
            "languageSelected": "en", "modeName": mode, "modelKey": "sw-model", "modelName": rng.choice(MODELS),
            "processingTime": rng.randint(200, 9000), "rawResult": result, "result": result, "segments": segments}


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write ``messages`` recording folders (each a pretty-printed meta.json; one in ten a
    long meeting that is windowed) into ``folder``."""
    rng = random.Random(seed)
    when = datetime(2023, 1, 1, 8, 0)
    for _ in range(messages):
        when += timedelta(minutes=rng.randint(5, 600))
        meta = _recording(rng, when)
        path = folder / str(int(when.timestamp())) / "meta.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(meta, indent=2, sort_keys=True, separators=(",", " : ")), encoding="utf-8")
    return folder


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "superwhisper", *sys.argv[1:]])
