#!/usr/bin/env python3
"""What the keyword index's delta costs a query and saves an update: SIZE passages of
Zipf-distributed words (seeded), one passage edited and one added; CPU seconds of the update
(the delta beside the main postings, against the compaction the update made before: every
posting copied) and CPU milliseconds a query of four common words takes on the layered index
and on a whole one (best of 3 passes over 50 queries). Prints the CPU line.

    python bench/keyword_delta.py [SIZE]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from vecbook.cpu import cpu_description  # noqa: E402
from vecbook.index import KeywordIndex, compacted  # noqa: E402
from vecbook.tokens import Vocabulary  # noqa: E402


def query_ms(index: KeywordIndex, queries: list[list[str]]) -> float:
    best = []
    for _ in range(3):
        started = time.process_time()
        for query in queries:
            index.scores(query)
        best.append((time.process_time() - started) / len(queries) * 1000)
    return min(best)


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    rng = np.random.default_rng(0)
    vocabulary = Vocabulary()
    for word in range(50_000):
        vocabulary.encode([f"w{word}"])
    lengths = rng.integers(5, 40, size)
    words = (rng.zipf(1.2, int(lengths.sum())) % 50_000).astype(np.int64)
    documents = np.split(words, np.cumsum(lengths)[:-1])
    base = KeywordIndex(documents, vocabulary=vocabulary)
    source = np.arange(size + 1)
    source[5] = source[-1] = -1  # passage 5 edited, one passage added at the end
    update: list[np.ndarray | None] = [None] * (size + 1)
    update[5], update[-1] = documents[7], documents[9]
    new_lengths = np.concatenate([lengths, [len(documents[9])]])
    new_lengths[5] = len(documents[7])
    started = time.process_time()
    layered = KeywordIndex(update, vocabulary=vocabulary, reuse=(base.term_counts, source), lengths=new_lengths)
    update_s = time.process_time() - started
    started = time.process_time()
    compacted(*layered.term_counts.state)
    compact_s = time.process_time() - started
    queries = [[f"w{int(w)}" for w in rng.integers(0, 200, 4)] for _ in range(50)]
    layered_ms = query_ms(layered, queries)
    layered.term_counts.whole()
    print(f"{cpu_description()}\n{size:,} passages: update {update_s:.3f} s CPU layered, the compaction it "
          f"spares {compact_s:.3f} s; a query {layered_ms:.2f} ms CPU layered, {query_ms(layered, queries):.2f} ms "
          f"compacted")


if __name__ == "__main__":
    main()
