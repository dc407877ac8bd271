#!/usr/bin/env python3
"""What a one-character CJK keyword query costs (vecbook.keyword_chars): its bigram terms
joined at query time, over a mixed index of English and Chinese records.

    python bench/keyword_chars.py [--size 100000] [--k 100]

Half the records are ``bench/speed.py``'s synthetic English notes, half Chinese text of 20-300
characters drawn independently from the 3,755 common characters of GB2312 (level 1) at Zipf
frequencies. Independent characters make far more distinct bigrams than real text, where a
character meets a few hundred neighbours, not thousands: a hard case for the joining. Prints,
for characters of frequency rank 1, 10, 100 and 1,000: the bigram terms holding it, the passages
it is in, the first query's keyword top k and a later query's (the joined postings kept by the
index), against a two-character query's; before them, what mapping the vocabulary's two-character
terms costs (once a process, on its first one-character query).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import exports  # noqa: E402  (bench/exports.py: the CPU line)
import speed  # noqa: E402  (bench/speed.py: the synthetic English corpus)
from vecbook.index import KeywordIndex  # noqa: E402
from vecbook.keyword_chars import character_terms  # noqa: E402
from vecbook.rank import keyword_top  # noqa: E402
from vecbook.tokens import Vocabulary  # noqa: E402

COMMON = [bytes([high, low]).decode("gb2312") for high in range(0xB0, 0xD8) for low in range(0xA1, 0xFF)
          if not (high == 0xD7 and low > 0xF9)]


def chinese_text(rng: random.Random, ranked: list[str], weights: list[float]) -> str:
    """20-300 characters at Zipf frequencies, a comma or full stop every 5-15."""
    out: list[str] = []
    for _ in range(rng.randint(2, 20)):
        out += rng.choices(ranked, weights, k=rng.randint(5, 15)) + [rng.choice("，。")]
    return "".join(out)[:rng.randint(20, 300)]


def timed(index: KeywordIndex, tokens: list[str], k: int) -> float:
    """Milliseconds of one keyword top k (the search's keyword ranking, pruned)."""
    started = time.perf_counter()
    keyword_top(index, tokens, k, None, every=False)
    return (time.perf_counter() - started) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args()
    print(f"$ python {' '.join(sys.argv)}\n{exports.cpu_line()}; load average {os.getloadavg()[0]:.2f} at start")
    rng = random.Random(7)
    ranked = rng.sample(COMMON, len(COMMON))
    weights = [1 / rank for rank in range(1, len(ranked) + 1)]
    texts = [speed.record_text(rng) if i % 2 else chinese_text(rng, ranked, weights) for i in range(args.size)]
    started = time.perf_counter()
    vocabulary = Vocabulary()
    index = KeywordIndex(vocabulary.encode_texts(texts), vocabulary=vocabulary)
    print(f"built {args.size:,} records ({len(vocabulary):,} terms, {len(index.doc_ids):,} postings) "
          f"in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    character_terms(vocabulary).of(vocabulary, ranked[0], index.n_terms)
    print(f"the vocabulary's two-character terms mapped (once per process, on the first such query) in "
          f"{(time.perf_counter() - started) * 1e3:.0f} ms")
    print("| character | its frequency rank | bigram terms | passages | first query | later query | two characters |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for rank in (1, 10, 100, 1000):
        char = ranked[rank - 1]
        first = timed(index, [char], args.k)
        later = min(timed(index, [char], args.k) for _ in range(5))
        starting, ending = character_terms(vocabulary).of(vocabulary, char, index.n_terms)
        pair = char + ranked[rank]
        two = min(timed(index, [pair], args.k) for _ in range(5))
        passages = len(index.postings_of([char])[0].docs)
        print(f"| {char} | {rank:,} | {len(starting) + len(ending):,} | {passages:,} | {first:.1f} ms | "
              f"{later:.2f} ms | {two:.2f} ms |")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
