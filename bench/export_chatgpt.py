#!/usr/bin/env python3
"""Time the ChatGPT reader on a generated ``conversations.json``.

Usage::

    python bench/export_chatgpt.py [--runs N] [--scale S] [--workdir DIR]   (timed by bench/exports.py)

Conversations of 2 to 60 turns, each a ``mapping`` tree as ChatGPT writes it (a root, a
hidden system node, user and assistant turns with metadata, now and then an edited prompt
that opens a second branch, a code cell and its tool output), pretty-printed with the
export's two-space indent. ``N`` counts user and assistant turns on the branches read.
"""

from __future__ import annotations

import json
import random
import sys
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


WORDS = ("the model a function returns list value error python data test run file we can use this "
         "because when each then loop index memory speed result query table column string number "
         "explain why how what is should could would example step first second finally").split()


def generate(folder: Path, messages: int, seed: int = 0) -> Path:
    """Write ``conversations.json`` with about ``messages`` turns into ``folder``; returns the file."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    conversations, left, start = [], messages, 1_680_000_000.0
    while left > 0:
        turns = min(left, rng.randint(1, 30) * 2)
        conversations.append(_conversation(rng, turns, start))
        left -= turns
        start += rng.expovariate(1 / 86400)
    path = folder / "conversations.json"
    path.write_text(json.dumps(conversations, indent=2), encoding="utf-8")
    return path


def _conversation(rng: random.Random, turns: int, start: float) -> dict[str, Any]:
    ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(turns * 4 + 2)]
    mapping: dict[str, Any] = {ids[0]: {"id": ids[0], "message": None, "parent": None, "children": [ids[1]]}}
    mapping[ids[1]] = _node(ids[1], ids[0], "system", "", start, hidden=True)
    parent, when, spare = ids[1], start, iter(ids[2 + turns:])
    for n in range(turns):
        role = "user" if n % 2 == 0 else "assistant"
        when += rng.expovariate(1 / 30) if role == "assistant" else rng.expovariate(1 / 300)
        if role == "user" and rng.random() < 0.1:  # an edited prompt: the old one stays on a side branch
            old = next(spare)
            mapping[old] = _node(old, parent, "user", _text(rng, 12), when - 60)
            mapping[parent]["children"].append(old)
        if role == "assistant" and rng.random() < 0.15:  # a code cell and its output
            code, out = next(spare), next(spare)
            mapping[code] = _node(code, parent, "assistant", "", when, code=_text(rng, 30))
            mapping[out] = _node(out, code, "tool", "42", when + 1)
            mapping[parent]["children"].append(code)
            mapping[code]["children"].append(out)
            parent = out
        node = ids[2 + n]
        mapping[node] = _node(node, parent, role, _text(rng, 15 if role == "user" else 120), when)
        mapping[parent]["children"].insert(0, node)
        parent = node
    conversation_id = str(uuid.UUID(int=rng.getrandbits(128)))
    return {"title": _text(rng, 4).title(), "create_time": start, "update_time": when, "mapping": mapping,
            "moderation_results": [], "current_node": parent, "plugin_ids": None,
            "conversation_id": conversation_id, "default_model_slug": "gpt-4o", "id": conversation_id}


def _node(node_id: str, parent: str, role: str, text: str, when: float, hidden: bool = False,
          code: str | None = None) -> dict[str, Any]:
    content = ({"content_type": "code", "language": "python", "text": code} if code is not None
               else {"content_type": "text", "parts": [text]})
    metadata: dict[str, Any] = {"is_visually_hidden_from_conversation": True} if hidden else {
        "model_slug": "gpt-4o", "timestamp_": "absolute"} if role == "assistant" else {"timestamp_": "absolute"}
    message = {"id": node_id, "author": {"role": role, "name": None, "metadata": {}}, "create_time": when,
               "update_time": None, "content": content, "status": "finished_successfully", "end_turn": True,
               "weight": 1.0, "metadata": metadata, "recipient": "python" if code else "all", "channel": None}
    return {"id": node_id, "message": message, "parent": parent, "children": []}


def _text(rng: random.Random, mean: int) -> str:
    words = [rng.choice(WORDS) for _ in range(max(1, int(rng.expovariate(1 / mean))))]
    return " ".join(words).capitalize() + "."


if __name__ == "__main__":
    import exports  # bench/exports.py: every format generated and timed the same way

    exports.main(["--only", "chatgpt", *sys.argv[1:]])
