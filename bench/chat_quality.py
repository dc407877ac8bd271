#!/usr/bin/env python3
"""Chat retrieval quality: does a question about something said in a chat find the hit that
holds that message? Conversation windows against a pipeline that indexes single messages.

Usage::

    python bench/chat_quality.py [CORPUS] [--format FORMAT] [--questions JSON]
        [--modes semantic keyword hybrid] [--precision auto|float32|int8|bfloat16] [--cache-dir DIR] [--details]

CORPUS (default: the ``corpus`` of the questions file) is read as an export collection by
VecBook's own reader for ``--format``, twice:

* windows: as VecBook reads chats (``window_gap_minutes`` 30, ``MAX_WINDOW_WORDS`` 200);
* single messages: the same reader with ``window_gap_minutes`` 0.0001 and
  ``vecbook.exports.base.MAX_WINDOW_WORDS`` set to 1, so every message is a record of its
  own (checked: every record must have ``message_count`` 1).

The questions file (``bench/data/chat_questions.json``) judges each question by one message:
its first line in the corpus file. A hit holds the answer when one of its record's segments
(one per message) starts on that line. Per mode and pipeline, over the top 10 hits of
``book.search(question, max_results=100, mode=mode)`` (VecBook's default settings; hybrid is
the default linear fusion):

* R@1, R@10: share of questions whose answer is held by the first hit / one of the top 10;
* MRR@10: mean of 1/rank of the first hit holding the answer (0 past rank 10);
* chars@10: the characters of the top 10 hits' text (``len(hit.text)`` summed), averaged
  over the questions: what a reader (or an LLM given the hits) has to take in.

Windows return more text per hit, so two rows compare them at the same amount of text:
windows cut to the k' hits whose mean characters stay within single messages' chars@10,
and single messages given the k'' hits that reach windows' chars@10.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vecbook  # noqa: E402  (needs the repository root on sys.path)
import vecbook.exports.base as export_base  # noqa: E402

MODES = ("semantic", "keyword", "hybrid")
DEFAULT_QUESTIONS = ROOT / "bench" / "data" / "chat_questions.json"
K = 10
DEPTH = 100  # hits fetched per question: enough to give single messages the text windows get
SINGLE_GAP_MINUTES = 0.0001  # under any real pause between two messages


# --- metrics ----------------------------------------------------------------

@dataclass
class Ranked:
    """One question's hits: for each, whether it holds the answer, and its characters."""

    holds: list[bool]
    chars: list[int]


def first_rank(ranked: Ranked, k: int) -> int | None:
    """1-based rank of the first of the top ``k`` hits holding the answer, or None."""
    return next((i + 1 for i, hit in enumerate(ranked.holds[:k]) if hit), None)


def summary(runs: Sequence[Ranked], k: int = K) -> dict[str, float]:
    """R@1, R@k, MRR@k and mean characters of the top k hits over the questions."""
    ranks = [first_rank(r, k) for r in runs]
    n = len(runs)
    return {"r1": sum(r == 1 for r in ranks) / n, "rk": sum(r is not None for r in ranks) / n,
            "mrr": sum(1 / r for r in ranks if r) / n, "chars": sum(sum(r.chars[:k]) for r in runs) / n}


def k_within(runs: Sequence[Ranked], budget: float) -> int:
    """The largest k (at least 1) whose mean characters of the top k hits stay within ``budget``."""
    best = 1
    for k in range(1, DEPTH + 1):
        if summary(runs, k)["chars"] <= budget:
            best = k
        else:
            break
    return best


def k_reaching(runs: Sequence[Ranked], budget: float) -> int:
    """The smallest k whose mean characters of the top k hits reach ``budget`` (at most DEPTH)."""
    return next((k for k in range(1, DEPTH + 1) if summary(runs, k)["chars"] >= budget), DEPTH)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (McNemar's exact test) on the questions only one side finds."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def _self_check() -> None:
    """Toy cases worked by hand."""
    a = Ranked([False, True, False], [10, 20, 30])
    b = Ranked([True, False, False], [5, 5, 5])
    c = Ranked([False, False, False], [1, 1, 1])
    s = summary([a, b, c], 2)
    assert s == {"r1": 1 / 3, "rk": 2 / 3, "mrr": (1 / 2 + 1) / 3, "chars": (30 + 10 + 2) / 3}, s
    assert summary([a], 1)["rk"] == 0 and first_rank(a, 3) == 2
    assert k_within([a], 30) == 2 and k_within([a], 5) == 1 and k_reaching([a], 31) == 3
    assert sign_test(0, 0) == 1.0 and abs(sign_test(5, 0) - 2 / 32) < 1e-12 and sign_test(3, 3) == 1.0


_self_check()


# --- building the two pipelines ------------------------------------------------

def build_book(corpus: Path, fmt: str, workdir: Path, cache_dir: Path | None, single: bool,
               keyword_only: bool, window_words: int | None = None, precision: str = "auto") -> vecbook.VecBook:
    """A VecBook over the corpus as one export collection, read by the real config loader."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "notes").mkdir(exist_ok=True)  # an empty data directory: the collection is all there is
    gap = SINGLE_GAP_MINUTES if single else vecbook.config.DEFAULT_WINDOW_GAP_MINUTES
    lines = ['data_directory = "notes"', 'log_level = "WARNING"', f"precision = {json.dumps(precision)}"]
    if cache_dir is not None:
        lines.append(f"cache_directory = {json.dumps(str(cache_dir.resolve()))}")
    lines += ["[[collections]]", 'name = "chat"', f"path = {json.dumps(str(corpus.resolve()))}",
              f"format = {json.dumps(fmt)}", f"window_gap_minutes = {gap}"]
    (workdir / "vecbook.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    saved = export_base.MAX_WINDOW_WORDS
    if single:
        export_base.MAX_WINDOW_WORDS = 1  # a window closes before any second message joins it
    elif window_words is not None:
        export_base.MAX_WINDOW_WORDS = window_words
    try:
        return vecbook.VecBook.from_config(workdir / "vecbook.toml", keyword_only=keyword_only)
    finally:
        export_base.MAX_WINDOW_WORDS = saved


def check_book(book: vecbook.VecBook, label: str, single: bool) -> dict[str, Any]:
    """The book loaded without problems; single messages really are one message a record."""
    stats = book.stats()
    if stats["state"] != "ready":
        raise SystemExit(f"{label}: indexing did not finish: {stats['state']} {stats.get('error')}")
    if stats["skipped"] or stats["warnings"]:
        raise SystemExit(f"{label}: the reader reported problems: {(stats['skipped'] + stats['warnings'])[:5]}")
    records = book._snapshot.records  # read-only: the reader's records, for their segments
    counts = [r.metadata.get("message_count") for r in records]
    if single and any(c != 1 for c in counts):
        raise SystemExit(f"{label}: {sum(c != 1 for c in counts)} records hold more than one message")
    if any(len(r.segments) != c for r, c in zip(records, counts)):
        raise SystemExit(f"{label}: a record's segments do not match its message_count")
    return {"records": len(records), "messages": sum(counts), "chars": sum(len(r.text) for r in records)}


# --- running ----------------------------------------------------------------

def run(book: vecbook.VecBook, questions: list[dict[str, Any]], mode: str) -> tuple[list[Ranked], float]:
    """Each question's top DEPTH hits, judged; and the seconds the searches took."""
    starts = {r.id: {line for _, line, _ in r.segments} for r in book._snapshot.records}
    runs = []
    started = time.perf_counter()
    for question in questions:
        hits = book.search(question["question"], max_results=DEPTH, mode=mode)
        line = question["answer"]["line"]
        runs.append(Ranked([line in starts[h.id] for h in hits], [len(h.text) for h in hits]))
    return runs, time.perf_counter() - started


def cpu_facts() -> str:
    """The CPU model and whether it has the bfloat16 instructions torch can use."""
    model, flags = platform.processor() or "unknown", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    found = [f for f in ("avx512_bf16", "amx_bf16", "amx_tile") if f in flags]
    return f"{model}; {', '.join(found) + ' present' if found else 'no avx512_bf16/amx flags'}"


# --- cli --------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, nargs="?",
                        help="the chat export (default: the questions file's corpus)")
    parser.add_argument("--format", help="the export's VecBook format (default: the questions file's)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--precision", choices=vecbook.config.PRECISIONS, default="auto",
                        help="the records' embedding path (queries are float32 in every one)")
    parser.add_argument("--cache-dir", type=Path,
                        help="VecBook vector caches (cache_directory), one subfolder a pipeline")
    parser.add_argument("--window-words", type=int,
                        help="words a window may hold (vecbook.exports.base.MAX_WINDOW_WORDS; default "
                             f"{export_base.MAX_WINDOW_WORDS}): to measure a smaller window")
    parser.add_argument("--workdir", type=Path, help="where the two configs are written (default: temporary)")
    parser.add_argument("--details", action="store_true",
                        help="list the questions that one pipeline finds in its top 10 and the other misses")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bench = json.loads(args.questions.read_text(encoding="utf-8"))
    corpus = args.corpus or ROOT / bench["corpus"]
    fmt = args.format or bench["format"]
    questions = bench["questions"]
    keyword_only = set(args.modes) == {"keyword"}
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vecbook-chatq-"))

    try:
        facts, runs = measure(args, corpus, fmt, questions, workdir, keyword_only)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    report(args, corpus, fmt, bench, facts, runs)
    return 0


def measure(args: argparse.Namespace, corpus: Path, fmt: str, questions: list[dict[str, Any]], workdir: Path,
            keyword_only: bool) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[list[Ranked], float]]]:
    """Build both pipelines and run every mode on each."""
    facts: dict[str, Any] = {}
    runs: dict[tuple[str, str], tuple[list[Ranked], float]] = {}
    for label, single in (("windows", False), ("single messages", True)):
        print(f"indexing {corpus} as {label} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        slug = label.replace(" ", "-")
        # one cache folder each: a book's cache keeps only its own live vectors, so a shared
        # one would drop the other pipeline's at every build
        cache = args.cache_dir / slug if args.cache_dir is not None else None
        book = build_book(corpus, fmt, workdir / slug, cache, single, keyword_only, args.window_words, args.precision)
        facts[label] = {**check_book(book, label, single), "seconds": time.perf_counter() - started,
                        "cache": book.stats().get("cache"),
                        "precision": "none (keyword only)" if keyword_only else book.embedder.precision}
        for mode in args.modes:
            runs[label, mode] = run(book, questions, mode)
    return facts, runs


def report(args: argparse.Namespace, corpus: Path, fmt: str, bench: dict[str, Any], facts: dict[str, Any],
           runs: dict[tuple[str, str], tuple[list[Ranked], float]]) -> None:
    questions = bench["questions"]
    print(f"Command: `{shlex.join(['python'] + sys.argv)}`")
    print()
    print(f"- CPU: {cpu_facts()}; Python {platform.python_version()}")
    shown = corpus.resolve().relative_to(ROOT) if corpus.resolve().is_relative_to(ROOT) else corpus
    print(f"- Corpus: {shown} (format {fmt}); {len(questions)} judged questions from {args.questions.name}")
    print(f"- Windows: window_gap_minutes {vecbook.config.DEFAULT_WINDOW_GAP_MINUTES:g}, at most "
          f"{args.window_words or export_base.MAX_WINDOW_WORDS} words; VecBook's default search settings")
    for label, fact in facts.items():
        cache = fact["cache"]
        cached = f", vector cache: {cache['reused']} reused, {cache['embedded']} embedded" if cache else ""
        print(f"- {label}: {fact['records']:,} records holding {fact['messages']:,} messages, "
              f"{fact['chars'] / fact['records']:.0f} characters a record; records embedded in {fact['precision']}; "
              f"built in {fact['seconds']:.1f} s{cached}")
    print()
    print("| mode | pipeline | hits | R@1 | R@k | MRR@k | chars of the k hits | ms/query |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for mode in args.modes:
        windows, w_seconds = runs["windows", mode]
        singles, s_seconds = runs["single messages", mode]
        w10, s10 = summary(windows), summary(singles)
        k_small = k_within(windows, s10["chars"])
        k_large = k_reaching(singles, w10["chars"])
        rows = [("windows", K, windows, w_seconds), ("single messages", K, singles, s_seconds),
                (f"windows, top {k_small} (text of single messages' 10)", k_small, windows, None),
                (f"single messages, top {k_large} " + ("(text of windows' 10)" if summary(singles, k_large)["chars"]
                 >= w10["chars"] else f"(all {DEPTH} fetched: less text than windows' 10)"), k_large, singles, None)]
        for label, k, ranked, seconds in rows:
            s = summary(ranked, k)
            ms = f"{1000 * seconds / len(questions):.1f}" if seconds is not None else ""
            print(f"| {mode} | {label} | {k} | {s['r1']:.3f} | {s['rk']:.3f} | {s['mrr']:.3f} "
                  f"| {s['chars']:,.0f} | {ms} |")
    print()
    authors = sorted({q["answer"]["author"] for q in questions})
    print("R@10 by whose message answers the question:")
    print()
    print("| mode | " + " | ".join(f"{a} ({sum(q['answer']['author'] == a for q in questions)} questions): "
                                  f"windows / single messages" for a in authors) + " |")
    print("|---|" + "---:|" * len(authors))
    for mode in args.modes:
        cells = []
        for author in authors:
            picked = [i for i, q in enumerate(questions) if q["answer"]["author"] == author]
            pair = [summary([runs[label, mode][0][i] for i in picked])["rk"] for label in ("windows", "single messages")]
            cells.append(f"{pair[0]:.3f} / {pair[1]:.3f}")
        print(f"| {mode} | " + " | ".join(cells) + " |")
    print()
    for mode in args.modes:
        windows, singles = runs["windows", mode][0], runs["single messages", mode][0]
        only_w = [q for q, w, s in zip(questions, windows, singles) if first_rank(w, K) and not first_rank(s, K)]
        only_s = [q for q, w, s in zip(questions, windows, singles) if first_rank(s, K) and not first_rank(w, K)]
        print(f"- {mode}, top 10: windows alone find {len(only_w)}, single messages alone find {len(only_s)}"
              + (f" ({', '.join(q['id'] for q in only_s)})" if only_s else "")
              + f"; exact sign test p = {sign_test(len(only_w), len(only_s)):.2g}")
        if args.details:
            for tag, found in (("windows only", only_w), ("single messages only", only_s)):
                for q in found:
                    text = " ".join(q["answer"]["text"].split())[:80]
                    print(f"  - {tag}: {q['id']} {q['question']!r} -> line {q['answer']['line']} "
                          f"{q['answer']['author']}: {text!r}")


if __name__ == "__main__":
    sys.exit(main())
