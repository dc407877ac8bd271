"""The partition a large vector index searches instead of every row: rows grouped by their
nearest of about sqrt(n) centroids (k-means on a sample, an inverted file as FAISS's IVF keeps
one), so that a query scores only the rows of the lists whose centroids lie nearest it (a
fifth of them, or more where the index's own rows show that a fifth misses neighbours:
``VectorIndex._tuned``).

It holds no vectors: only the centroids and each row's list, so the float16 rows stay where
the exact index keeps them (one copy), and the rows a query scores are picked out of them by
a bitmap. An update carries the partition over: a row copied from the previous index keeps
its list, a new row joins its nearest, and only a corpus grown to twice the size it was
trained on is trained again.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

# sqrt(n) lists of about sqrt(n) rows each (1,000 at a million windows). On real
# all-MiniLM-L6-v2 vectors (bench/ann_recall.py, 60,000 texts) finer lists found more of the
# exact top 10 for the same rows scanned (61 lists: 0.965 at 16%; 245: 0.980; 490: 0.986),
# but cost more to train and assign; sqrt(n) is FAISS's usual starting point.
MIN_LISTS = 16
# The share of the lists a query probes. On those vectors, with 245 lists, recall@10 against
# exact search was 0.952 at 8%, 0.980 at 16% and 0.988 at 20%: the issue asks for 0.98 or more.
PROBE_SHARE = 0.2
# Training sample: this many rows per list (k-means wants 39 or more to place a centroid).
SAMPLE_PER_LIST = 40
KMEANS_ITERATIONS = 12
SEED = 1234  # the same rows give the same partition, so a restart answers as the last run did
# Rows decoded to float32 at a time while assigning (16k x 384 x 4 bytes: 25 MB).
ASSIGN_BLOCK = 16_384
# A partition carried through updates is trained again once the rows have grown this much
# since it was trained: its lists would otherwise grow long and its scans slow.
RETRAIN_GROWTH = 2.0

Decoder = Callable[[np.ndarray], np.ndarray]  # row numbers -> their float32 vectors


class Partition:
    """Each row's list (``assignment``), the lists' ``centroids``, and the rows of each list
    (``order``, cut at ``starts``). ``metric`` is the index's: "cosine" (rows and centroids are
    unit vectors: the nearest centroid has the highest inner product) or "l2"."""

    def __init__(self, centroids: np.ndarray, assignment: np.ndarray, metric: str, trained_on: int) -> None:
        self.centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        self.metric = metric
        self.trained_on = trained_on
        self.assignment = assignment.astype(np.int32, copy=False)
        self.order = np.argsort(self.assignment, kind="stable").astype(np.int32)
        self.starts = np.searchsorted(self.assignment[self.order], np.arange(len(self.centroids) + 1)).astype(np.int64)
        # For l2 the nearest centroid maximises x.c - |c|^2 / 2; for cosine, x.c.
        self._offsets = (-0.5 * (self.centroids ** 2).sum(axis=1) if metric == "l2"
                         else np.zeros(len(self.centroids), dtype=np.float32))
        self.probes = max(1, math.ceil(len(self.centroids) * PROBE_SHARE))

    @property
    def lists(self) -> int:
        """How many lists the rows are grouped into."""
        return len(self.centroids)

    @classmethod
    def train(cls, rows: int, decode: Decoder, metric: str) -> Partition:
        """k-means over a seeded sample of the ``rows`` rows, then every row assigned to its
        nearest centroid. FAISS runs on the calling thread's OpenMP team; the caller (a
        background thread) keeps it to one, so searches keep the other cores."""
        import faiss

        lists = max(MIN_LISTS, round(math.sqrt(rows)))
        rng = np.random.default_rng(SEED)
        sample = np.sort(rng.choice(rows, size=min(rows, lists * SAMPLE_PER_LIST), replace=False))
        points = decode(sample)
        kmeans = faiss.Kmeans(points.shape[1], lists, niter=KMEANS_ITERATIONS, seed=SEED,
                              spherical=metric == "cosine", verbose=False,
                              max_points_per_centroid=SAMPLE_PER_LIST)
        kmeans.train(points)
        partition = cls(kmeans.centroids, np.zeros(0, dtype=np.int32), metric, rows)
        assignment = np.concatenate([partition.nearest(decode(np.arange(start, min(start + ASSIGN_BLOCK, rows))))
                                     for start in range(0, rows, ASSIGN_BLOCK)]) if rows else np.zeros(0, np.int32)
        return cls(partition.centroids, assignment, metric, rows)

    def nearest(self, vectors: np.ndarray) -> np.ndarray:
        """Each vector's nearest centroid."""
        if not len(vectors):
            return np.zeros(0, dtype=np.int32)
        return np.argmax(vectors @ self.centroids.T + self._offsets, axis=1).astype(np.int32)

    def carried(self, source: np.ndarray, decode: Decoder) -> Partition | None:
        """The partition of an index whose row r was this index's row ``source[r]`` (-1: a new
        row, assigned here by ``decode``-ing it); None once the rows have outgrown it."""
        if len(source) > RETRAIN_GROWTH * self.trained_on:
            return None
        assignment = np.empty(len(source), dtype=np.int32)
        copied = source >= 0
        assignment[copied] = self.assignment[source[copied]]
        fresh = np.flatnonzero(~copied)
        for start in range(0, len(fresh), ASSIGN_BLOCK):
            part = fresh[start:start + ASSIGN_BLOCK]
            assignment[part] = self.nearest(decode(part))
        carried = Partition(self.centroids, assignment, self.metric, self.trained_on)
        carried.probes = self.probes  # as tuned for these lists
        return carried

    def probed(self, query: np.ndarray, probes: int) -> np.ndarray:
        """The rows of the ``probes`` lists nearest ``query`` (a prepared float32 vector), sorted."""
        probes = min(max(probes, 1), self.lists)
        affinity = self.centroids @ query + self._offsets
        chosen = np.argpartition(-affinity, probes - 1)[:probes] if probes < self.lists else np.arange(self.lists)
        rows = np.concatenate([self.order[self.starts[c]:self.starts[c + 1]] for c in chosen.tolist()])
        rows.sort()
        return rows
