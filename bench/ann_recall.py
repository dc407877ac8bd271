#!/usr/bin/env python3
"""Recall of VecBook's approximate vector search against exact search, on vectors the real
model made of real text.

    python bench/ann_recall.py --scifact /path/to/scifact [--realmem /path/to/realmem]
        --workdir DIR [--precision auto|float32|int8] [--limit 60000]

The texts: BEIR SciFact's 5,183 abstracts whole, then their sentences (a record a sentence,
as short notes and messages are), then RealMem's user and assistant turns, up to ``--limit``
texts in all; the queries: SciFact's 1,109 queries and RealMem's query turns. Each is embedded
once by VecBook's own ``Embedder`` (records on the ``--precision`` path, queries in float32, as
a search embeds them) and kept in WORKDIR, so a rerun only searches.

For each query the top 10 records of the approximate index (``VectorIndex`` with its quantized
scan forced on, whatever the size: ``APPROXIMATE_FROM`` set to 0) are compared with exact search
over the same float16 rows: recall@10 is the share of the exact top 10 found, averaged over the
queries. It also checks that a record's own text finds that record first (1,000 records
sampled, each searched with its own vector as a query is embedded: the float32 query model).
Then the same at other numbers of the scan's candidates rescored (``RESCORED``), to show the margin.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def texts_and_queries(scifact: Path, realmem: Path | None, limit: int) -> tuple[list[str], list[str]]:
    """The record texts (abstracts, their sentences, RealMem turns; distinct, up to ``limit``)
    and the query texts."""
    abstracts = [json.loads(line) for line in (scifact / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [f"{a['title']}\n{a['text']}" for a in abstracts]
    texts += [s for a in abstracts for s in SENTENCE.split(a["text"]) if len(s.split()) >= 6]
    queries = [json.loads(line)["text"] for line in (scifact / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    if realmem is not None:
        for path in sorted(realmem.glob("*_dialogues_256k.json.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for session in json.load(handle)["dialogues"]:
                    for turn in session["dialogue_turns"]:
                        (queries if turn.get("is_query") else texts).append(turn["content"])
    return list(dict.fromkeys(texts))[:limit], list(dict.fromkeys(queries))


def embedded(workdir: Path, name: str, texts: list[str], precision: str, query: bool) -> np.ndarray:
    """The vectors of ``texts``, made once and kept in ``workdir``."""
    path = workdir / f"{name}-{precision}-{len(texts)}.npy"
    if path.exists():
        return np.load(path)
    import vecbook

    embedder = vecbook.Embedder(precision=precision, model_cache=workdir / "models")
    embedder.load()
    started, parts = time.perf_counter(), []
    for start in range(0, len(texts), 2048):
        chunk = texts[start:start + 2048]
        parts.append(np.stack([embedder.encode_query(t) for t in chunk]) if query else embedder.encode(chunk))
        print(f"  {name}: {start + len(chunk)} of {len(texts)} ({time.perf_counter() - started:.0f} s)",
              file=sys.stderr, flush=True)
    vectors = np.concatenate(parts).astype(np.float32)
    np.save(path, vectors)
    return vectors


def recall_at(index: object, queries: np.ndarray, exact: list[np.ndarray], k: int) -> float:
    """Mean share of each query's exact top ``k`` that the approximate search returns."""
    found = []
    for query, truth in zip(queries, exact):
        ids, _ = index.top(query, k)  # type: ignore[attr-defined]
        found.append(len(set(ids.tolist()) & set(truth.tolist())) / max(len(truth), 1))
    return float(np.mean(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, required=True)
    parser.add_argument("--realmem", type=Path)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--precision", default="auto", choices=("auto", "float32", "int8"))
    parser.add_argument("--limit", type=int, default=60_000)
    parser.add_argument("--embed-only", action="store_true", help="embed and keep the vectors, then stop")
    parser.add_argument("--vectors", nargs=2, type=Path, metavar=("RECORDS.npy", "QUERIES.npy"),
                        help="vectors the same model made of the same texts elsewhere (a GPU), in their order")
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()  # the ONNX build runs in a child process
    args.workdir.mkdir(parents=True, exist_ok=True)
    from vecbook.cpu import cpu_description

    print(f"machine: {cpu_description()}; {' '.join(sys.argv)}")
    texts, query_texts = texts_and_queries(args.scifact, args.realmem, args.limit)
    if args.vectors:
        records, queries = (np.load(path).astype(np.float32) for path in args.vectors)
        if (len(records), len(queries)) != (len(texts), len(query_texts)):
            raise SystemExit(f"--vectors hold {len(records)} and {len(queries)} vectors, for "
                             f"{len(texts)} texts and {len(query_texts)} queries")
    else:
        records = embedded(args.workdir, "records", texts, args.precision, query=False)
        queries = embedded(args.workdir, "queries", query_texts, args.precision, query=True)
    if args.embed_only:
        return
    report(records, queries)


def report(records: np.ndarray, queries: np.ndarray, k: int = 10) -> None:
    """Recall@k of the approximate index against exact search, and own-text-first."""
    from vecbook import vector_index
    from vecbook.index import VectorIndex

    vector_index.APPROXIMATE_FROM = 0  # the quantized scan whatever the size
    index = VectorIndex(records, np.arange(len(records)), len(records))
    assert index.store is not None and index.store.wait_for_scan()  # made in the background
    exact = [index.top(q, k, exact=True)[0] for q in queries]
    print(f"{len(records):,} record vectors, {len(queries):,} queries; {index.index_type}")
    recall = recall_at(index, queries, exact, k)
    print(f"recall@{k} against exact search: {recall:.4f}")
    rng = np.random.default_rng(0)
    own = rng.choice(len(records), size=min(1000, len(records)), replace=False)
    first = [int(index.top(records[i], 1)[0][0]) == i or index.top(records[i], 1)[1][0] >= 1.0 - 1e-6 for i in own]
    print(f"own vector finds its record first: {np.mean(first):.4f} of {len(own)}")
    default = vector_index.RESCORED
    for rescored in sorted({8 * k, 128, 256, default, 2 * default}):
        vector_index.RESCORED = rescored
        started = time.perf_counter()
        value = recall_at(index, queries, exact, k)
        ms = (time.perf_counter() - started) / len(queries) * 1000
        print(f"  {max(rescored, 8 * k):5d} candidates rescored: recall@{k} {value:.4f}, {ms:.2f} ms a query")
    vector_index.RESCORED = default


if __name__ == "__main__":
    main()
