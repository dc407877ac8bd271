#!/usr/bin/env python3
"""Retrieval quality of VecBook on BEIR SciFact: nDCG@10 and recall@100 per search mode.

Usage::

    python bench/quality.py PATH_TO_SCIFACT [--split test|train] [--modes MODE ...]
        [--precision auto|float32|bfloat16|int8] [--compare-precision] [--workdir DIR]
        [--cache-dir DIR] [--bm25-k1 X] [--bm25-b X] [--stemming true|false]
        [--rrf-k N] [--keyword-weight X] [--fusion-depth N] [--vecbook-defaults]

The corpus goes through VecBook's real loader: every abstract is written as a
record of a ``.txt`` file (about 100 records per file, 50 files) with ``Id:`` and
``Title:`` headers, a blank line, then the abstract, and ``VecBook(data_directory=...)``
reads, embeds and indexes that folder exactly as it would a user's notes. Hits
are mapped back to corpus ids through ``hit.metadata["Id"]``.

Only queries with judgments in the chosen split are run (test: 300, train: 809).
Each mode asks ``book.search(query, max_results=100, ...)`` once per query.

Metrics follow BEIR / pytrec_eval (trec_eval ``ndcg_cut.10`` and ``recall.100``):

* nDCG@10: DCG = sum over the top 10 hits of grade / log2(rank + 1), gain = the
  qrels grade (not 2^grade - 1); the ideal DCG sorts the query's judged grades;
  a query whose hits miss every relevant document scores 0.
* recall@100: relevant documents in the top 100 / relevant documents judged.
Both are averaged over the queries. ``_self_check`` pins them on toy cases.

Tuning: the defaults below (``TUNED``) were chosen on the *train* split only
(``qrels/train.tsv``, 809 queries); the reported figure is the test split.
``--vecbook-defaults`` measures VecBook's own configuration defaults instead.
Each knob flag overrides one setting.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vecbook  # noqa: E402  (needs the repository root on sys.path)

MODES = ("semantic", "keyword", "hybrid-rrf", "hybrid-linear")
SPLITS = ("test", "train")
FILES = 50  # the corpus is spread over this many record files
SEPARATOR = vecbook.records.SEPARATOR

# Settings tuned on the train split (809 queries); see the module docstring.
# None means "VecBook's own default" (``vecbook.Config`` / ``vecbook.rank.FUSION_DEPTH``).
# Train nDCG@10 (int8 vectors): hybrid-linear 0.7423 -> 0.7479 with the title weight and the
# feedback step (vecbook.build.TITLE_WEIGHT, vecbook.rank.FEEDBACK_WEIGHT; bench/fusion.py); with
# them, bm25 k1 0.9, b 0.4 and keyword_weight 0.35 reached 0.7516 but lost evidence on the
# phone-shaped chats (bench/chat_recall.py), so the BM25 and weight settings stay. Earlier (bfloat16
# vectors): b 0.75 -> 0.5 (k1 0.9-1.5 and b 0.4-0.6 are one plateau, stemming off costs 0.03),
# keyword_weight 0.5 -> 0.4 (0.34-0.44 within 0.003); hybrid-rrf is best at rrf_k 1 (falling
# steadily with k). FUSION_DEPTH: 100 is best of 10-500 (max_results=10) and does not act at
# max_results=100. Semantic has no knob here.
TUNED: dict[str, Any] = {
    "bm25_k1": 1.2,
    "bm25_b": 0.5,
    "stemming": True,
    "rrf_k": 1,
    "keyword_weight": 0.4,
    "fusion_depth": 100,
}
KNOBS = tuple(TUNED)


# --- metrics ----------------------------------------------------------------

def ndcg_at_k(ranked: Sequence[str], judged: dict[str, int], k: int = 10) -> float:
    """nDCG@k as trec_eval's ndcg_cut: linear gain (the grade), log2(rank + 1) discount.

    ``ranked``: document ids, best first (a repeated id counts once, at its first rank).
    ``judged``: document id -> relevance grade; grades <= 0 add nothing.
    """
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0:
        return 0.0
    dcg = 0.0
    for i, doc in enumerate(_unique(ranked)[:k]):
        grade = judged.get(doc, 0)
        if grade > 0:
            dcg += grade / math.log2(i + 2)
    return dcg / idcg


def recall_at_k(ranked: Sequence[str], judged: dict[str, int], k: int = 100) -> float:
    """Share of the relevant (grade > 0) documents found in the top k."""
    relevant = {d for d, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(_unique(ranked)[:k])) / len(relevant)


def _unique(ranked: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    return [d for d in ranked if not (d in seen or seen.add(d))]


def _self_check() -> None:
    """Toy cases worked by hand (and matching pytrec_eval's ndcg_cut_10 / recall_100)."""
    close = lambda a, b: abs(a - b) < 1e-9  # noqa: E731
    qrels = {"d1": 1, "d3": 1, "d4": 1}
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) + 1/log2(4) = 2.130930
    assert close(ndcg_at_k(["d1", "d2", "d3"], qrels), 1.5 / (1 + 1 / math.log2(3) + 0.5))
    assert close(ndcg_at_k(["d1", "d3", "d4"], qrels), 1.0)
    assert ndcg_at_k(["x", "y"], qrels) == 0.0
    # Relevant document at rank 11 is outside the cut.
    assert ndcg_at_k([f"n{i}" for i in range(10)] + ["d1"], qrels) == 0.0
    # Graded: gain is the grade itself. Ranked d2(1), d1(2): DCG = 1 + 2/log2(3);
    # IDCG = 2 + 1/log2(3).
    graded = {"d1": 2, "d2": 1, "d3": 0}
    assert close(ndcg_at_k(["d2", "d1"], graded), (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    # A duplicate id does not earn its gain twice.
    assert close(ndcg_at_k(["d1", "d1", "d3"], qrels), ndcg_at_k(["d1", "d3"], qrels))
    assert close(recall_at_k(["d1", "x", "d4"], qrels), 2 / 3)
    assert recall_at_k([f"n{i}" for i in range(100)] + ["d1"], qrels) == 0.0


_self_check()


# --- data -------------------------------------------------------------------

def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            parts = line.rstrip("\n").split("\t")
            if number == 0 and parts[0] == "query-id":
                continue
            if len(parts) != 3:
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def _one_line(text: str) -> str:
    return " ".join(text.split())


def record_text(doc: dict[str, Any]) -> str:
    """One record: ``Id:`` and ``Title:`` headers, a blank line, the abstract.

    The blank line ends the headers, so a first abstract line such as
    ``Background: ...`` stays text; a line that is exactly ``---`` would end
    the record, so it is rewritten (SciFact has none, but the check is cheap).
    """
    body = []
    for line in doc["text"].replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        body.append("- - -" if line.strip() == SEPARATOR else line)
    text = "\n".join(body).strip() or _one_line(doc.get("title", "")) or "(no text)"
    return f"Id: {_one_line(doc['_id'])}\nTitle: {_one_line(doc.get('title', ''))}\n\n{text}\n"


def write_corpus(corpus: list[dict[str, Any]], folder: Path, files: int = FILES) -> int:
    """Write the corpus as ``scifact-NNN.txt`` record files; returns the number of files."""
    folder.mkdir(parents=True, exist_ok=True)
    strangers = [p.name for p in folder.rglob("*.txt") if not re.fullmatch(r"scifact-\d{3}\.txt", p.name)
                 or p.parent != folder]
    if strangers:
        raise SystemExit(f"{folder} holds other .txt files ({', '.join(strangers[:3])}...); "
                         "VecBook would index them too: use an empty --workdir")
    for old in folder.glob("scifact-*.txt"):
        old.unlink()
    per_file = math.ceil(len(corpus) / files)
    written = 0
    for start in range(0, len(corpus), per_file):
        chunk = corpus[start:start + per_file]
        text = f"\n{SEPARATOR}\n".join(record_text(doc) for doc in chunk)
        (folder / f"scifact-{written:03d}.txt").write_text(text, encoding="utf-8", errors="strict")
        written += 1
    return written


# --- running ----------------------------------------------------------------

class Progress:
    """Embedding progress on stderr, at most every 15 seconds."""

    def __init__(self, label: str) -> None:
        self.label, self.last, self.started = label, 0.0, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - self.last >= 15:
            self.last = now
            print(f"  [{self.label}] embedded {done:,}/{total:,} records ({now - self.started:.0f}s)",
                  file=sys.stderr, flush=True)


def build_book(folder: Path, precision: str, settings: dict[str, Any], cache_dir: Path | None,
               keyword_only: bool = False) -> tuple[vecbook.VecBook, float]:
    config = {k: v for k, v in settings.items() if k in ("bm25_k1", "bm25_b", "stemming", "rrf_k",
                                                          "keyword_weight") and v is not None}
    if cache_dir is not None:
        config["cache_directory"] = str(cache_dir)
    print(f"indexing {folder} (precision={precision}) ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    if keyword_only:  # nothing to embed: keyword search only
        config["keyword_only"] = True
    book = vecbook.VecBook(data_directory=str(folder), precision=precision, progress=Progress(precision), **config)
    seconds = time.perf_counter() - started
    book.index_forward_seconds = book.embedder.forward_seconds  # before queries add to it
    return book, seconds


def check_loaded(book: vecbook.VecBook, corpus: list[dict[str, Any]]) -> None:
    """Every corpus document must come back as exactly one record: its Id and Title headers,
    and the abstract as the record text (no body line taken for a header)."""
    stats = book.stats()
    if stats["state"] != "ready":
        raise SystemExit(f"indexing did not finish: {stats['state']} {stats.get('error')}")
    if stats["skipped"] or stats["warnings"]:
        raise SystemExit(f"the loader reported problems: {(stats['skipped'] + stats['warnings'])[:5]}")
    records = book._snapshot.records  # read-only use: the loader's view of the corpus
    by_id = {doc["_id"]: doc for doc in corpus}
    ids = [r.metadata.get("Id") for r in records]
    if len(ids) != len(by_id) or set(ids) != set(by_id):
        raise SystemExit(f"loaded {len(ids)} records for {len(by_id)} documents; ids do not match")
    for record in records:
        doc = by_id[record.metadata["Id"]]
        expected = record_text(doc).split("\n\n", 1)[1].rstrip("\n")
        if record.text != expected or record.metadata.get("Title") != _one_line(doc.get("title", "")):
            raise SystemExit(f"{record.citation}: the loader read document {doc['_id']} differently "
                             f"(metadata keys {sorted(record.metadata)})")


def search_kwargs(mode: str, settings: dict[str, Any]) -> dict[str, Any]:
    if mode in ("semantic", "keyword"):
        return {"mode": mode}
    fusion = mode.split("-", 1)[1]
    kwargs: dict[str, Any] = {"mode": "hybrid", "fusion": fusion}
    if fusion == "rrf" and settings.get("rrf_k") is not None:
        kwargs["rrf_k"] = settings["rrf_k"]
    if fusion == "linear" and settings.get("keyword_weight") is not None:
        kwargs["keyword_weight"] = settings["keyword_weight"]
    return kwargs


def run_mode(book: vecbook.VecBook, queries: list[tuple[str, str]], qrels: dict[str, dict[str, int]],
             mode: str, settings: dict[str, Any]) -> dict[str, Any]:
    kwargs = search_kwargs(mode, settings)
    runs: dict[str, list[str]] = {}
    started = time.perf_counter()
    for qid, text in queries:
        hits = book.search(text, max_results=100, **kwargs)
        runs[qid] = [hit.metadata["Id"] for hit in hits]
    seconds = time.perf_counter() - started
    ndcg = [ndcg_at_k(runs[q], qrels[q], 10) for q, _ in queries]
    recall = [recall_at_k(runs[q], qrels[q], 100) for q, _ in queries]
    return {"mode": mode, "ndcg": sum(ndcg) / len(ndcg), "recall": sum(recall) / len(recall),
            "seconds": seconds, "per_query": ndcg}


def paired_interval(a: Sequence[float], b: Sequence[float]) -> float:
    """Half-width of a 95% normal interval on the mean per-query difference b - a."""
    diffs = [y - x for x, y in zip(a, b)]
    n = len(diffs)
    if n < 2:
        return float("nan")
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return 1.96 * math.sqrt(var / n)


# --- cli --------------------------------------------------------------------

def parse_bool(text: str) -> bool:
    value = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scifact", type=Path, help="folder with corpus.jsonl, queries.jsonl, qrels/")
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--precision", choices=vecbook.config.PRECISIONS, default="auto")
    parser.add_argument("--compare-precision", action="store_true",
                        help="also index in the other precision and print the nDCG@10 delta "
                             "(float32 against bfloat16 or int8) for semantic and hybrid")
    parser.add_argument("--workdir", type=Path,
                        help="where the record files are written (kept); default: a temporary folder")
    parser.add_argument("--cache-dir", type=Path,
                        help="VecBook vector cache (cache_directory): a second run skips embedding, "
                             "so its index time is not the cold figure")
    parser.add_argument("--max-queries", type=int, help="only the first N queries (smoke tests)")
    parser.add_argument("--vecbook-defaults", action="store_true",
                        help="ignore the tuned settings in this script; use VecBook's config defaults")
    tuning = parser.add_argument_group("settings (default: the train-tuned TUNED values in this script)")
    tuning.add_argument("--bm25-k1", type=float)
    tuning.add_argument("--bm25-b", type=float)
    tuning.add_argument("--stemming", type=parse_bool)
    tuning.add_argument("--rrf-k", type=int)
    tuning.add_argument("--keyword-weight", type=float)
    tuning.add_argument("--fusion-depth", type=int, help="candidates per retriever in hybrid (vecbook.rank.FUSION_DEPTH)")
    parser.add_argument("--verbose", action="store_true", help="VecBook's INFO log on stderr")
    return parser


def effective_settings(args: argparse.Namespace) -> dict[str, Any]:
    settings = {k: None for k in KNOBS} if args.vecbook_defaults else dict(TUNED)
    for knob in KNOBS:
        value = getattr(args, knob)
        if value is not None:
            settings[knob] = value
    defaults = vecbook.Config()
    resolved = {k: getattr(defaults, k) for k in KNOBS if k != "fusion_depth"}
    resolved["fusion_depth"] = vecbook.rank.FUSION_DEPTH
    return {k: (resolved[k] if settings[k] is None else settings[k]) for k in KNOBS}


def code_version() -> str:
    """The commit of the checkout and whether the vecbook code differs from it (best effort)."""
    import subprocess

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "vecbook.py", "vecbook"], cwd=ROOT,
                               timeout=10).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return "(commit unknown)"
    return f"at commit {commit}{' with local changes' if dirty else ''}" if commit else "(not a git checkout)"


def fmt_seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds:.0f} s ({seconds / 60:.1f} min)"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.code_version = code_version()  # now: the module was imported from this checkout
    vecbook.cli.configure_logging("INFO" if args.verbose else "WARNING")
    settings = effective_settings(args)
    vecbook.rank.FUSION_DEPTH = int(settings["fusion_depth"])

    corpus = read_jsonl(args.scifact / "corpus.jsonl")
    all_queries = {q["_id"]: q["text"] for q in read_jsonl(args.scifact / "queries.jsonl")}
    qrels = read_qrels(args.scifact / "qrels" / f"{args.split}.tsv")
    queries = [(qid, all_queries[qid]) for qid in sorted(qrels, key=lambda q: (len(q), q)) if qid in all_queries]
    missing = len(qrels) - len(queries)
    if args.max_queries:
        queries = queries[:args.max_queries]

    temporary = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="vecbook-scifact-")) if temporary else args.workdir
    folder = workdir / "records"
    try:
        files = write_corpus(corpus, folder)
        keyword_only = set(args.modes) == {"keyword"} and not args.compare_precision
        book, index_seconds = build_book(folder, args.precision, settings, args.cache_dir, keyword_only)
        check_loaded(book, corpus)
        precision = book.embedder.precision if not keyword_only else "none (keyword_only: no vectors)"
        results = []
        for mode in args.modes:
            print(f"running {len(queries)} {args.split} queries: {mode} ...", file=sys.stderr, flush=True)
            results.append(run_mode(book, queries, qrels, mode, settings))

        other = None
        if args.compare_precision:
            other_precision = "bfloat16" if precision == "float32" else "float32"
            other_book, other_seconds = build_book(folder, other_precision, settings, args.cache_dir)
            check_loaded(other_book, corpus)
            other_results = []
            for mode in [m for m in MODES if m != "keyword"]:
                print(f"running {len(queries)} {args.split} queries: {mode} ({other_precision}) ...",
                      file=sys.stderr, flush=True)
                mine = next((r for r in results if r["mode"] == mode), None)
                if mine is None:
                    mine = run_mode(book, queries, qrels, mode, settings)
                other_results.append((mine, run_mode(other_book, queries, qrels, mode, settings)))
            other = (other_precision, other_seconds, other_book.stats(), other_results)

        report(args, settings, book, precision, index_seconds, files, queries, missing, results, other)
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(args: argparse.Namespace, settings: dict[str, Any], book: vecbook.VecBook, precision: str,
           index_seconds: float, files: int, queries: list[tuple[str, str]], missing: int,
           results: list[dict[str, Any]], other: tuple[Any, ...] | None) -> None:
    import torch

    stats = book.stats()
    origin = "VecBook defaults" if args.vecbook_defaults else "train-tuned defaults of bench/quality.py"
    print(f"Command: `{shlex.join(['python'] + sys.argv)}`")
    print()
    print(f"## VecBook on BEIR SciFact, {args.split} split ({len(queries)} queries with qrels"
          f"{f'; {missing} without query text' if missing else ''})")
    print()
    print(f"- Settings ({origin} unless given as flags): "
          + ", ".join(f"{k}={settings[k]}" for k in KNOBS)
          + f"; precision={precision} (asked: {args.precision}); search_mode/fusion per row")
    cache = stats.get("cache")
    cache_note = (f"; vector cache {cache['path']}: {cache['reused']} reused, {cache['embedded']} embedded"
                  if cache else "; no vector cache (cold build)")
    print(f"- Corpus: {stats['records']:,} records in {files} files, loaded by VecBook's .txt loader; "
          f"indexing (load + BM25 + embedding + FAISS) {fmt_seconds(index_seconds)}"
          + (f", of which model forward {book.index_forward_seconds:.0f} s" if book.index_forward_seconds
             else "") + cache_note)
    print(f"- Code: vecbook {args.code_version}")
    print(f"- Machine: {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} "
          f"with {torch.get_num_threads()} threads; Python {platform.python_version()}")
    print()
    print("| mode | nDCG@10 | recall@100 | query time | ms/query |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['mode']} | {r['ndcg']:.4f} | {r['recall']:.4f} | {r['seconds']:.1f} s | "
              f"{1000 * r['seconds'] / max(len(queries), 1):.1f} |")
    if other is None:
        return
    other_precision, other_seconds, other_stats, pairs = other
    fp32_first = precision == "float32"
    low = other_precision if fp32_first else precision  # bfloat16 or int8
    print()
    print(f"### float32 vs {low} (nDCG@10, {args.split})")
    print()
    print(f"Indexing: {precision} {fmt_seconds(index_seconds)}, {other_precision} {fmt_seconds(other_seconds)}"
          f" ({'vectors from the cache' if (other_stats.get('cache') or {}).get('reused') else 'cold build'}).")
    print()
    print(f"| mode | float32 | {low} | {low} - float32 | 95% CI (paired) | queries changed |")
    print("|---|---:|---:|---:|---:|---:|")
    for mine, theirs in pairs:
        fp32, reduced = (mine, theirs) if fp32_first else (theirs, mine)
        changed = sum(abs(a - b) > 1e-12 for a, b in zip(fp32["per_query"], reduced["per_query"]))
        print(f"| {mine['mode']} | {fp32['ndcg']:.4f} | {reduced['ndcg']:.4f} | "
              f"{reduced['ndcg'] - fp32['ndcg']:+.4f} | "
              f"±{paired_interval(fp32['per_query'], reduced['per_query']):.4f} | {changed} |")


if __name__ == "__main__":
    sys.exit(main())
