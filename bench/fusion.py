#!/usr/bin/env python3
"""Hybrid fusion candidates measured on BEIR SciFact: min-max normalisation (each list
stretched to [0, 1] per query) against fixed anchors (a cosine and a BM25 level that
mean the same thing for every query), over a grid of anchors and keyword weights; then
VecBook's floored min-max with pseudo-relevance feedback (the query moved towards the best
fused hit, ``vecbook.rank.FEEDBACK_WEIGHT``) over a grid of steps and weights.

Usage::

    python bench/fusion.py PATH_TO_SCIFACT --workdir DIR --cache-dir DIR [--split train|test]
        [--anchors LO,HI,KW_HI ...] [--weights W ...] [--steps S ...]
        [--bm25-k1 X] [--bm25-b X] [--title-weight N]

Each query's candidates (the top 100 of each retriever, as VecBook fuses them) are
scored once with both components; every fusion is then computed from those arrays,
so a grid costs seconds. The corpus goes through VecBook's loader as in quality.py.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import quality  # noqa: E402  (bench/quality.py: corpus writing, metrics)
import vecbook  # noqa: E402
from vecbook.rank import FUSION_DEPTH, keyword_top  # noqa: E402


def components(book: vecbook.VecBook, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates of one query (record indices) with their cosine and normalised BM25."""
    snapshot = book._snapshot
    vector = book.embedder.encode_query(text)
    tokens = vecbook.tokens.tokenize(text, book.config.stemming, book.config.language)
    sem_ids, _ = snapshot.vectors.top(vector, FUSION_DEPTH)
    kw_ids, _, kw_all = keyword_top(snapshot.keywords, tokens, FUSION_DEPTH, None)
    candidates = np.union1d(sem_ids, kw_ids).astype(np.int64)
    chosen = np.zeros(snapshot.vectors.n_records, dtype=bool)
    chosen[candidates] = True
    found_ids, found_scores = snapshot.vectors.scores_within(vector, chosen)
    semantic = dict(zip(found_ids.tolist(), found_scores.tolist()))
    cosine = np.array([2.0 * semantic.get(int(i), 0.5) - 1.0 for i in candidates])
    return candidates, cosine, kw_all[candidates]


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] by the values' own range (VecBook's linear fusion before the anchors)."""
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return np.where(values >= high, 1.0 if high > 0 else 0.0, 0.0)
    return (values - low) / (high - low)


def fuse_minmax(cosine: np.ndarray, keyword: np.ndarray, weight: float) -> np.ndarray:
    return weight * minmax(keyword) + (1 - weight) * minmax(cosine)


def fuse_anchored(cosine: np.ndarray, keyword: np.ndarray, weight: float, low: float, high: float,
                  kw_high: float) -> np.ndarray:
    sem = np.clip((cosine - low) / (high - low), 0.0, 1.0)
    kw = np.clip(keyword / kw_high, 0.0, 1.0)
    return weight * kw + (1 - weight) * sem


def floored(values: np.ndarray, ceiling: float) -> np.ndarray:
    """Min-max, except that the top of the range is at least ``ceiling``: a list whose best
    value is weak is not stretched to 1."""
    low = float(values.min())
    return np.clip((values - low) / max(float(values.max()) - low, ceiling - low, 1e-12), 0.0, 1.0)


def fuse_floored(cosine: np.ndarray, keyword: np.ndarray, weight: float, sem_ceiling: float,
                 kw_ceiling: float) -> np.ndarray:
    return weight * floored(keyword, kw_ceiling) + (1 - weight) * floored(cosine, sem_ceiling)


def fuse_feedback(book: vecbook.VecBook, vector: np.ndarray, candidates: np.ndarray, cosine: np.ndarray,
                  keyword: np.ndarray, weight: float, step: float) -> np.ndarray:
    """VecBook's linear fusion, then again with the cosines of the query moved ``step`` towards
    the best fused hit (as ``vecbook.rank.rank`` does with FEEDBACK_WEIGHT)."""
    rank = vecbook.rank
    scores = rank.linear_scores(cosine, keyword, weight)
    if step <= 0:
        return scores
    saved, rank.FEEDBACK_WEIGHT = rank.FEEDBACK_WEIGHT, step
    try:
        moved = rank.feedback_query(book._snapshot.vectors, vector, int(candidates[int(np.argmax(scores))]))
    finally:
        rank.FEEDBACK_WEIGHT = saved
    found_ids, found = book._snapshot.vectors.scores_of(moved, candidates)
    again = dict(zip(found_ids.tolist(), found.tolist()))
    own_top = float(rank.floored_minmax(cosine, cosine, rank.SEMANTIC_CEILING).max())
    return rank.linear_scores(np.array([2.0 * again.get(int(i), 0.5) - 1.0 for i in candidates]), keyword, weight,
                              semantic_top=own_top)


def evaluate(rows: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]], ids: list[str],
             qrels: dict[str, dict[str, int]], fuse: Any) -> float:
    total = 0.0
    for query_id, candidates, cosine, keyword in rows:
        scores = fuse(cosine, keyword)
        order = np.lexsort((candidates, -scores))[:10]
        total += quality.ndcg_at_k([ids[candidates[i]] for i in order], qrels[query_id])
    return total / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scifact", type=Path)
    parser.add_argument("--split", choices=("train", "test"), default="train")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--anchors", nargs="*", default=[
        f"{lo},{hi},{kh}" for lo, hi, kh in itertools.product((0.0, 0.1, 0.2), (0.6, 0.7, 0.8), (0.3, 0.5, 0.7))])
    parser.add_argument("--weights", nargs="*", type=float, default=[0.3, 0.4, 0.5])
    parser.add_argument("--ceilings", nargs="*", default=[
        f"{s},{k}" for s, k in itertools.product((0.4, 0.5, 0.6, 0.7), (0.1, 0.2, 0.3, 0.4))],
        help="floored min-max: SEM_CEILING,KW_CEILING pairs")
    parser.add_argument("--steps", nargs="*", type=float, default=[0.0, 0.15, 0.25, 0.35, 0.5],
                        help="feedback: the query's step towards the best fused hit (0: none)")
    parser.add_argument("--feedback-weights", nargs="*", type=float, default=[0.3, 0.35, 0.4, 0.45])
    parser.add_argument("--bm25-k1", type=float, help="default: bench/quality.py's TUNED")
    parser.add_argument("--bm25-b", type=float, help="default: bench/quality.py's TUNED")
    parser.add_argument("--title-weight", type=int, help="vecbook.build.TITLE_WEIGHT (default: VecBook's)")
    args = parser.parse_args()
    settings = dict(quality.TUNED, **{k: v for k, v in (("bm25_k1", args.bm25_k1), ("bm25_b", args.bm25_b))
                                      if v is not None})
    if args.title_weight is not None:
        vecbook.build.TITLE_WEIGHT = args.title_weight
    print(f"$ python {' '.join(shlex.quote(a) for a in sys.argv)}\n{platform.processor() or platform.machine()}")
    corpus = quality.read_jsonl(args.scifact / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in quality.read_jsonl(args.scifact / "queries.jsonl")}
    qrels = quality.read_qrels(args.scifact / "qrels" / f"{args.split}.tsv")
    folder = args.workdir / "records"
    quality.write_corpus(corpus, folder)
    book, _ = quality.build_book(folder, "auto", settings, args.cache_dir)
    print(f"bm25 k1 {settings['bm25_k1']}, b {settings['bm25_b']}, title weight {vecbook.build.TITLE_WEIGHT}")
    ids = [r.metadata["Id"] for r in book._snapshot.records]
    rows = [(qid, *components(book, queries[qid])) for qid in qrels]
    print(f"| fusion | weight | anchors (cos low, cos high, bm25 high) | nDCG@10 ({args.split}) |\n|---|---|---|---|")
    for weight in args.weights:
        print(f"| min-max | {weight} | - | {evaluate(rows, ids, qrels, lambda c, k: fuse_minmax(c, k, weight)):.4f} |")
    results = []
    for anchors in args.anchors:
        low, high, kw_high = (float(x) for x in anchors.split(","))
        for weight in args.weights:
            score = evaluate(rows, ids, qrels, lambda c, k: fuse_anchored(c, k, weight, low, high, kw_high))
            results.append((score, weight, anchors))
    for score, weight, anchors in sorted(results, reverse=True)[:15]:
        print(f"| anchored | {weight} | {anchors} | {score:.4f} |")
    results = []
    for pair in args.ceilings:
        sem_ceiling, kw_ceiling = (float(x) for x in pair.split(","))
        for weight in args.weights:
            score = evaluate(rows, ids, qrels, lambda c, k: fuse_floored(c, k, weight, sem_ceiling, kw_ceiling))
            results.append((score, weight, pair))
    for score, weight, pair in sorted(results, reverse=True)[:15]:
        print(f"| floored min-max | {weight} | ceilings {pair} | {score:.4f} |")
    vectors = {qid: book.embedder.encode_query(queries[qid]) for qid in qrels}
    results = []
    for step, weight in itertools.product(args.steps, args.feedback_weights):
        total = 0.0
        for query_id, candidates, cosine, keyword in rows:
            scores = fuse_feedback(book, vectors[query_id], candidates, cosine, keyword, weight, step)
            order = np.lexsort((candidates, -scores))[:10]
            total += quality.ndcg_at_k([ids[candidates[i]] for i in order], qrels[query_id])
        results.append((total / len(rows), weight, step))
    for score, weight, step in sorted(results, reverse=True)[:15]:
        print(f"| floored min-max, feedback | {weight} | step {step} | {score:.4f} |")


if __name__ == "__main__":
    main()
