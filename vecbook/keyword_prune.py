"""The top records of a keyword search without scoring every passage: the exact top k of the
full BM25 scores (same records, order and scores), from far fewer weights.

Each passage is marked with the query terms it holds, a bit a term, and (for up to SPLIT_TERMS
terms) a bit a term it holds more than once. A mark's bound is the sum of its terms' highest
weights among postings of that kind (``KeywordIndex.ratio_bounds``: the highest count / (count +
length norm) counted once, and counted more than once, times idf (k1 + 1)); no passage with that
mark scores above it. Marks are taken best bound first, a round at a time: each round's passages
are scored exactly, as ``KeywordIndex.scores`` adds them, and once k records (within the filters'
mask) are scored, the k-th best of their scores is a score the true k-th best reaches. When the
next mark's bound is below it, no passage left can lift its record into the top k (a record's
best passage is among those scored), so the top k of the records scored is the full search's.
Within a round, each passage's own bound (``_Scorer.passage_bounds``: from its mark and its
length, exact for the terms it holds once) is read first: the best-bounded are scored, and of
the rest only those whose bound reaches the cut they give.

A query of common words at a million passages reads ~870,000 postings; the passages that can
reach its top 100 are the few thousand holding most of its words, most of their terms counted
once. Where pruning cannot save work (a query reading fewer than PRUNE_FROM postings, more than
MAX_TERMS terms, okapi's idf below zero, more than MAX_SHARE of the postings to score),
``top_records`` answers None and the caller scores every passage."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .index import KeywordIndex, QueryTerm
from .vector_index import top_k

# Pruning pays for its rounds (a pass over every passage's mark each, and numpy calls a term)
# once a query reads this many postings: at 100,000 records (~90,000 postings a query, in cache)
# scoring every posting took 1.35 ms against pruning's 2.5 ms; at a million (~870,000) 43 ms
# against 21 ms (bench/keyword_speed.py, load ~6).
PRUNE_FROM = 300_000
# Distinct query terms pruned at most (a bit or two each in a passage's mark, every mark bounded).
MAX_TERMS = 12
# Terms whose postings counted once and more than once are marked apart (2 bits a term).
SPLIT_TERMS = 8
# The first round scores the passages of the best-bounded marks until about SEED_FACTOR times k
# are expected; each later round GROWTH times more, while the next mark's bound reaches the cut.
# A round costs a pass over every passage's mark (~1 ms at a million) besides its scoring, so a
# few large rounds beat many small ones: at a million passages and k = 100, (4, 4) took 27 ms a
# query, (16, 16) 21 ms, (128, 8) 16 ms and (256, 8) 19 ms (one process, alternating, load ~5).
SEED_FACTOR = 128
GROWTH = 8
# A round of more than FIRST_SCORED x k passages scores its FIRST_SCORED x k best-bounded ones
# first, for a cut; of the others, only those whose own bound reaches it. At a million passages
# (k = 100) a round held ~20,000 passages, of which ~4,200 were then scored, against all of them
# (bench/keyword_speed.py --size 1000000: pruning 1.46x -> 1.18x the time of scoring every passage).
FIRST_SCORED = 4
# Rounding slack for bounds summed in another order than the scores: a mark is left out only when
# its bound is below the cut by more than this share of it.
SLACK = 1e-9
# Pruning pays while the passages scored exactly are few: past this share of the query's
# postings, the lookups cost more than scoring every posting.
MAX_SHARE = 0.25
# Marks whose passages are found one comparison at a time rather than by a lookup of every mark.
COMPARED_MARKS = 12
# Where every passage is scored already (hybrid search), ``top_of_scores`` cuts them at a score
# that about CUT_FACTOR x k passages reach, found in every SAMPLE_STEP-th passage's score.
SAMPLE_STEP = 32
CUT_FACTOR = 8


def top_records(index: KeywordIndex, tokens: Sequence[str], k: int,
                mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The k best records (ids, BM25 scores, best first; equal scores by record id) among those
    in ``mask`` with a positive score, exactly as the top k of ``index.record_scores(tokens)``;
    None where pruning would not save work (then score every passage)."""
    terms = index.postings_of(tokens)
    if not terms or len(terms) > MAX_TERMS or k < 1 or any(term.idf <= 0 for term in terms) or \
            sum(len(term.docs) for term in terms) < PRUNE_FROM:
        return None
    terms = index.sorted_postings(terms)
    scorer = _Scorer(index, terms)
    bounds, sizes = scorer.bounds_and_sizes()
    order = np.argsort(-bounds[1:], kind="stable") + 1  # every non-empty mark, best bound first
    ordered = bounds[order] * (1.0 + SLACK)
    reach = np.cumsum(sizes[order])
    budget = MAX_SHARE * sum(len(term.docs) for term in terms)
    records, best = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    taken, scored, want, cut = 0, 0, SEED_FACTOR * k, 0.0
    # Marks in order of their bound, more passages each round, until the next mark's bound is
    # below the k-th best score found: no passage left can lift its record into the top k (and
    # once every mark is taken, no passage holding a query term is left).
    while taken < len(order) and ordered[taken] >= cut:
        upto = max(taken + 1, int(np.searchsorted(reach, want)) + 1)
        if cut > 0:
            upto = min(upto, int(np.searchsorted(-ordered, -cut, "right")))
        chunk = np.zeros(len(bounds), dtype=bool)
        chunk[order[taken:upto]] = True
        passages = scorer.passages_of(chunk)
        scored += len(passages)
        if scored > budget:
            return None
        if mask is not None:
            passages = passages[mask[index.owners[passages]]]
        reach = scorer.passage_bounds(passages) * (1.0 + SLACK)
        for part in _parts(reach, FIRST_SCORED * k if cut <= 0 else None):
            found, found_best = scorer.records(passages[part & (reach >= cut)])
            records, best = _max_per_record(np.concatenate([records, found]), np.concatenate([best, found_best]))
            if len(records) >= k:
                cut = float(np.partition(best, len(best) - k)[len(best) - k])
        taken, want = upto, want * GROWTH
    return top_k(records, best, k)


def _parts(reach: np.ndarray, first: int | None) -> list[np.ndarray]:
    """A round's passages in the order they are scored (a bool per passage each): the ``first``
    best-bounded (``reach``) and then the others, or all of them at once (``first`` None, or
    no fewer passages than it)."""
    if first is None or len(reach) <= first:
        return [np.ones(len(reach), dtype=bool)]
    best = np.zeros(len(reach), dtype=bool)
    best[np.argpartition(-reach, first)[:first]] = True
    return [best, ~best]


def top_of_scores(index: KeywordIndex, scores: np.ndarray, k: int,
                  mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The k best records (ids, scores) of every passage's ``scores`` among those in ``mask``
    with a positive score, exactly as the top k of ``index.best_per_record(scores)``, from the
    passages at or above a cut rather than every record's best. The cut is a score about
    CUT_FACTOR x k passages reach, judged from a sample of them: a record's best passage is at
    or above it whenever any of its passages is, so once k records are found there, the k-th
    best is at or above it too, and every record that can be in the top k is among them. None
    where the cut finds fewer than k records (few matches, or a filter that keeps few), or
    where the passages do not outnumber what the cut saves (the caller takes every record's best)."""
    sample = scores[::SAMPLE_STEP]
    rank = -(-CUT_FACTOR * k // SAMPLE_STEP)
    if k < 1 or rank >= len(sample) // 2:
        return None
    cut = float(np.partition(sample, len(sample) - rank)[len(sample) - rank])
    if cut <= 0:
        return None
    passages = np.flatnonzero(scores >= cut)
    records, best = _best_of_records(index.owners[passages], scores[passages])
    if mask is not None:
        records, best = records[mask[records]], best[mask[records]]
    if len(records) < k:
        return None
    return top_k(records, best, k)


def _max_per_record(records: np.ndarray, best: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each record once (ascending), with the highest of its ``best``."""
    order = np.argsort(records, kind="stable")
    records, best = records[order], best[order]
    first = np.flatnonzero(np.diff(records, prepend=-1))
    return records[first], np.maximum.reduceat(best, first) if len(first) else best


class _Scorer:
    """Exact scores of chosen passages of one query. Each passage's terms are marked: bit j
    where it holds term j and, for up to SPLIT_TERMS terms, bit n + j where it holds it more
    than once. Most postings count 1 (85% in the bench corpus), and the bound of those is far
    below the highest (0.62 against 0.81 of idf (k1 + 1) there), which keeps most passages
    holding all but one of the query's words out of the top k; their weights are then made
    without looking up their counts."""

    def __init__(self, index: KeywordIndex, terms: list[QueryTerm]) -> None:
        self.index = index
        self.terms = terms
        n = len(terms)
        self.split = n <= SPLIT_TERMS
        self.marks = np.zeros(index.n_passages, dtype=np.uint8 if (2 * n if self.split else n) <= 8 else np.uint16)
        kind = self.marks.dtype.type
        shares = []
        for bit, term in enumerate(terms):
            many = term.tf > 1
            shares.append((len(many) - int(np.count_nonzero(many)), int(np.count_nonzero(many))))
            mark = kind(1 << bit)
            if self.split:
                mark = (many.astype(self.marks.dtype) << kind(n + bit)) | mark
            # numpy's index type: int32 passages are converted on every fancy index (a mark's
            # read-modify-write took 1.3 ms for 220,000 postings, 0.5 ms with intp).
            self.marks[term.docs.astype(np.intp)] |= mark  # a term's passages are distinct
        self._shares = np.array(shares, dtype=np.float64).reshape(-1, 2) / max(index.n_passages, 1)

    def bounds_and_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """For every mark: its bound (the sum of its terms' bounds, each that of its postings
        counted once or more than once where the mark tells them apart), and how many passages
        would hold it if the terms occurred independently (an estimate to take marks by)."""
        index, n = self.index, len(self.terms)
        once, more = np.array([[term.repeat * (bound * (term.idf * (index.k1 + 1)))
                                for bound in index.ratio_bounds(term)[:2]] for term in self.terms]).T
        marks = np.arange(1 << (2 * n if self.split else n))
        held = (marks[:, None] >> np.arange(n)) & 1
        share_once, share_more = self._shares.T
        if self.split:
            many = (marks[:, None] >> np.arange(n, 2 * n)) & 1
            bounds = (held * (1 - many)) @ once + (held * many) @ more
            odds = np.where(held == 0, 1 - share_once - share_more, np.where(many == 1, share_more, share_once))
        else:
            bounds = held @ np.maximum(once, more)
            odds = np.where(held == 0, 1 - share_once - share_more, share_once + share_more)
        return bounds, np.prod(odds, axis=1) * index.n_passages

    def passage_bounds(self, passages: np.ndarray) -> np.ndarray:
        """An upper bound of each of ``passages``' scores from its mark and its length alone: a
        term it holds once weighs idf (k1 + 1) / (1 + norm), its exact weight; one it holds more
        often (or any, where its mark does not tell) at most the weight of the term's highest count
        at that length, and never more than the term's bound. No count is looked up."""
        index, n = self.index, len(self.terms)
        held = self.marks[passages]
        norms = np.take(index.norms, passages)
        once = 1.0 / (1.0 + norms)
        total = np.zeros(len(passages), dtype=np.float64)
        for bit, term in enumerate(self.terms):
            *ratios, most = index.ratio_bounds(term)
            ratio = once
            if most > 1:
                more = np.minimum(most / (most + norms), max(ratios))
                many = (held & (1 << (n + bit))) != 0 if self.split else True
                ratio = np.where(many, more, once)
            weight = term.repeat * (term.idf * (index.k1 + 1))
            total += np.where(held & (1 << bit), ratio * weight, 0.0)
        return total

    def passages_of(self, chosen: np.ndarray) -> np.ndarray:
        """The passages (ascending) whose mark is one of ``chosen`` (a bool per mark)."""
        named = np.flatnonzero(chosen)
        if len(named) > COMPARED_MARKS:
            return np.flatnonzero(np.take(chosen, self.marks))  # np.take: 2.5x fancy indexing's speed here
        # A comparison a mark (0.04 ms at a million passages) against a lookup of every mark (1.1 ms).
        held = self.marks == named[0]
        for bits in named[1:].tolist():
            held |= self.marks == bits
        return np.flatnonzero(held)

    def scores(self, passages: np.ndarray) -> np.ndarray:
        """The passages' (ascending) scores, as ``KeywordIndex.scores`` adds them: each term's
        weight where it occurs, from zero, in the query's term order."""
        held = self.marks[passages]
        total = np.zeros(len(passages), dtype=np.float64)
        n = len(self.terms)
        for bit, term in enumerate(self.terms):
            found = np.flatnonzero(held & (1 << bit))
            if not len(found):
                continue
            docs = passages[found]
            if self.split:  # counted once unless marked: only the others are looked up
                tf = np.ones(len(found), dtype=term.tf.dtype)
                many = np.flatnonzero(held[found] & (1 << (n + bit)))
                tf[many] = term.tf[_positions(term.docs, docs[many])]
            else:
                tf = term.tf[_positions(term.docs, docs)]
            total[found] += self.index.term_weights(term, docs, tf)
        return total

    def records(self, passages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The records of ``passages`` (ascending) with a positive score, and each one's best
        score among those passages."""
        records, best = _best_of_records(self.index.owners[passages], self.scores(passages))
        keep = best > 0
        return records[keep], best[keep]


def _best_of_records(owners: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records of passages (ascending) whose ``owners`` and ``scores`` are given, each once,
    with its best score among them."""
    first = np.flatnonzero(np.diff(owners, prepend=-1))
    return owners[first], (np.maximum.reduceat(scores, first) if len(first) else scores)


def _positions(docs: np.ndarray, passages: np.ndarray) -> np.ndarray:
    """Where ``passages`` (each one of them) lie in a term's ascending ``docs``; searched in
    the postings' own type (a search with int64 passages converts every posting first)."""
    return np.searchsorted(docs, passages.astype(docs.dtype, copy=False))


class PassageScores:
    """A query's keyword score of any passage (``KeywordIndex.scores``, bit for bit), made a
    record's passages at a time on first read: a search that does not rank by every passage's
    score reads only the passages of the hits it shows (their best passage's snippet)."""

    def __init__(self, index: KeywordIndex, tokens: Sequence[str]) -> None:
        self.index = index
        self.terms = index.sorted_postings(index.postings_of(tokens))
        self._known: dict[int, float] = {}

    def __getitem__(self, passage: int) -> float:
        """The score of ``passage``."""
        score = self._known.get(passage)
        if score is None:
            span = self.index.passages_of(int(self.index.owners[passage]))
            passages = np.arange(span.start, span.stop)
            self._known.update(zip(passages.tolist(), self.index.scores_at(self.terms, passages).tolist()))
            score = self._known[passage]
        return score
