"""Ranking: score fusion (RRF and linear) and the per-query ranking of candidates (filters: vecbook.filters).
The functions are pure (indexes and arrays in, scores out)."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable, Sequence

import numpy as np

from .conflicts import CONFLICT_KEY
from .index import KeywordIndex
from .keyword_prune import top_of_scores, top_records
from .search_rows import SearchRows
from .vector_files import joined_runs
from .vector_index import VectorIndex, top_k

# Each retriever contributes this many candidates (or max_results, if larger)
# to fusion; deeper lists only add tail noise to RRF.
FUSION_DEPTH = 100
# Linear fusion scales each list by its candidates' range, but never to a top below these
# (see floored_minmax): a best cosine under 0.6 or a best keyword score under 0.4 is a
# weak match and stays one. Chosen with the keyword weight on SciFact's 809 train
# queries (bench/fusion.py: nDCG@10 0.7428 against 0.7403 for plain min-max).
SEMANTIC_CEILING = 0.6
KEYWORD_CEILING = 0.4
# A query in a language the embedding model does not read (vecbook.languages) leans on keywords
# in hybrid search: linear fusion weighs keywords at least this much, and RRF gives the keyword
# list this share. Its meaning scores are then noise that favours other text the model cannot
# read either (a German query put lorem-ipsum chat lines above the German note holding both of
# its words); at 0.9 a record holding a ninth of the best keyword match outranks the best
# record by meaning alone, which still orders close keyword matches and fills in after them
# (at 0.8 a chat message sharing one question word passed the note holding the query's subject).
LEAN_KEYWORD_WEIGHT = 0.9
# RRF's share for the keyword list of such a query: its terms differ little between neighbouring
# ranks (1/61 against 1/62 at rrf_k 60), so at 0.9 the meaning list's noise still put a chat
# message holding one question word (second by keywords, first by meaning) above the note
# holding three (bench/multilingual.py's Indonesian questions); at 0.97 it no longer does.
LEAN_RRF_SHARE = 0.97
# A query whose words do not tell its language (vecbook.languages: a few Latin-script nouns, or
# a language without a function-word list, such as Indonesian) leans on keywords when the best
# keyword match holds more of its distinct words than any of the meaning side's first
# UNREAD_DEPTH candidates, and at least UNREAD_TERMS times as many (any, where they hold none):
# the model's idea of it shares little with what was typed. Of SciFact's English claims 67 are
# undecided; at 2 one of them leans (train hybrid-linear 0.7507 either way, hybrid-rrf 0.7320 ->
# 0.7317; test unchanged); at 2 over the first 3 candidates only, three of the test split's did
# (hybrid-linear 0.7482 -> 0.7469).
UNREAD_DEPTH = 10
UNREAD_TERMS = 2
# Linear fusion scores the meaning side twice: the candidates are fused once, then their cosines
# are taken again for the query moved towards the best fused hit (its windows' mean vector, this
# share of a unit step: Rocchio's pseudo-relevance feedback with one record) and fused again.
# The best hit agrees with both the words and the meaning of the query, so the records close to
# it rise among those the query alone left level. Chosen with the keyword weight and the title
# weight (vecbook.build) on SciFact's 809 train queries: hybrid nDCG@10 0.7423 -> 0.7479 (0.25 and
# 0.35 alike; the mean of the best 2 or 3 hits lost 0.002-0.004). Candidates stay those of the
# query itself, so the cost is one more cosine per candidate; the moved cosines are scaled to the
# top the query's own reach, so a query nothing is close to still scores low. A chat window as
# the best hit moves nothing (``rank``'s ``feeds_back``): the evidence for a question about a chat
# lies in several conversations, and moving towards one (measured together with other BM25 settings)
# lost RealMem's held-out personas 0.024 of evidence at 10 hits and a share of the sessions reached
# in every budget (bench/chat_recall.py).
FEEDBACK_WEIGHT = 0.35
# Linear fusion's keyword weight moves with how peaked each list is: PEAK_SHIFT x (the keyword
# list's drop from its best to its 5th score, in its [0, 1] scale, minus the semantic list's drop
# in cosine from its best to its 5th), within [WEIGHT_LOW, WEIGHT_HIGH]. A list whose best match
# stands clear of the next ones has found something; a flat list has only ranked look-alikes.
# Fitted with RECORD_SHARE on SciFact's 809 train queries: hybrid nDCG@10 0.7479 -> 0.7507 (the
# shift alone 0.7490; 0.75 and 1.25 gave 0.7500 and 0.7497). A weight of exactly 0 or 1 (one side
# only) and a query that leans on keywords keep their weight, and so does a query whose lists'
# first PEAK_RANK hold a chat window: on chats this shift and RECORD_SHARE together lost a question
# or two in several budgets (bench/chat_quality.py hybrid R@10 0.900 -> 0.889; bench/chat_recall.py
# phone, held-out personas, 0.372 -> 0.370 within 8,000 characters), so chat search keeps its weight.
PEAK_SHIFT = 1.0
PEAK_RANK = 5
WEIGHT_LOW, WEIGHT_HIGH = 0.1, 0.9
# A record split into several keyword passages (a long note, a chat window's message pieces)
# is scored in linear fusion by its best passage plus this share of its other passages' scores:
# words of the query met in several of its passages are evidence that one passage misses.
# SciFact train, with PEAK_SHIFT: the share alone 0.7479 -> 0.7496 (0.25: 0.7485, 0.5: 0.7481).
# A chat window's message pieces are left out: summing them favours long windows, which take more
# of an assistant's text budget (``rank``'s ``feeds_back`` tells chat windows).
RECORD_SHARE = 0.1
# The least linear score of a candidate that matched the query. Min-max scaling puts the bottom
# of each list at 0, which a record holding a query word reaches where every candidate holds one
# (a small folder, a filter), so a hit with its word in the snippet showed 0.000000. A score of
# exactly 0 is kept for a record that matched nothing (no query word, the least close in meaning:
# hits.unmatched); every other candidate's s becomes s + MATCHED_FLOOR x (1 - s), the smallest
# score six decimals show, at the least. That keeps the order of the candidates (the one holding
# a query word goes first of two at 0) and every score to within 1e-6, as OpenSearch's min-max
# normalization gives a matched document at least 0.001.
MATCHED_FLOOR = 1e-6


@dataclass(frozen=True)
class Scored:
    """A ranked record index with its fused score and components (None: not computed)."""

    index: int
    score: float
    semantic: float | None
    keyword: float | None


def rrf_scores(rankings: Sequence[Sequence[int]], k: int,
               weights: Sequence[float] | None = None) -> dict[int, float]:
    """Reciprocal rank fusion, each list's terms times its weight (1 each unless given), divided
    by its maximum (first in every list) to lie in [0, 1]."""
    shares = weights or [1.0] * len(rankings)
    fused: dict[int, float] = {}
    for ranking, share in zip(rankings, shares):
        for rank, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + share / (k + rank)
    best = sum(shares) / (k + 1)
    return {item: score / best for item, score in fused.items()}


def linear_scores(cosine: np.ndarray, keyword: np.ndarray, keyword_weight: float,
                  core: np.ndarray | None = None, semantic_top: float = 1.0) -> np.ndarray:
    """``keyword_weight`` x keyword + (1 - ``keyword_weight``) x semantic, each scaled to
    [0, 1] by :func:`floored_minmax` over the ``core`` candidates (the top FUSION_DEPTH of
    each list, so asking for more results never changes the first ones' scores); the semantic
    side then times ``semantic_top`` (the feedback pass: the top the query's own cosines reach)."""
    return (keyword_weight * floored_minmax(keyword, keyword if core is None else keyword[core], KEYWORD_CEILING)
            + (1.0 - keyword_weight) * semantic_top * _semantic_scaled(cosine, core))


def matched_floor(total: np.ndarray, keyword: np.ndarray) -> np.ndarray:
    """Linear scores with every candidate that matched the query (a score above 0, or a query
    word) at MATCHED_FLOOR or above, in the same order; a record that matched nothing stays 0."""
    matched = (total > 0) | (keyword > 0)
    return np.where(matched, total + MATCHED_FLOOR * (1.0 - total), total)


def _semantic_scaled(cosine: np.ndarray, core: np.ndarray | None) -> np.ndarray:
    """Cosines scaled by :func:`floored_minmax` over the ``core`` candidates."""
    return floored_minmax(cosine, cosine if core is None else cosine[core], SEMANTIC_CEILING)


def floored_minmax(values: np.ndarray, reference: np.ndarray, ceiling: float) -> np.ndarray:
    """Min-max scaling by ``reference``'s range, except that the top of the range is at least
    ``ceiling``: a list whose best value is weak (nothing close in meaning, only a common
    word shared) is not stretched to 1 over a strong match in the other list."""
    if not len(values):
        return values
    ref = reference if len(reference) else values
    low, high = float(ref.min()), float(ref.max())
    if high - low < 1e-9:
        low = min(low, 0.0)  # one candidate (or all equal): measure it from zero, not from itself
    span = max(high - low, ceiling - low, 1e-12)
    return np.clip((values - low) / span, 0.0, 1.0)


def cosine_of(scores: np.ndarray, metric: str) -> np.ndarray:
    """The cosine behind semantic scores: (1 + c) / 2 for cosine; 1 / (1 + d) for l2, with
    d = 2 - 2c between the model's unit vectors."""
    if metric == "cosine":
        return 2.0 * scores - 1.0
    return 1.0 - (1.0 / np.maximum(scores, 1e-12) - 1.0) / 2.0


def _rrf_within_depth(sem_ids: list[int], kw_ids: list[int], candidates: np.ndarray, rrf_k: int,
                      weights: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
    """RRF over the top FUSION_DEPTH of each list (``weights``: semantic, keyword); deeper
    candidates (k > depth) rank after all of those.

    Counting only the first FUSION_DEPTH ranks keeps a record's score the same
    whatever max_results is, so asking for more never reorders the first hits.
    """
    core = rrf_scores([sem_ids[:FUSION_DEPTH], kw_ids[:FUSION_DEPTH]], rrf_k, weights)
    deep = rrf_scores([sem_ids, kw_ids], rrf_k, weights)
    # The lowest score a core record can have (in the lighter list alone, at its last rank), and
    # the highest a deeper one can, both normalised.
    floor = min(weights) * (rrf_k + 1) / (sum(weights) * (rrf_k + FUSION_DEPTH))
    ceiling = (rrf_k + 1) / (rrf_k + FUSION_DEPTH + 1)
    return np.array([core[i] if i in core else deep.get(i, 0.0) * floor / ceiling * 0.999
                     for i in candidates.tolist()])


def keyword_top(index: KeywordIndex, tokens: Sequence[str], k: int, mask: np.ndarray | None,
                passage_scores: np.ndarray | None = None, every: bool = True,
                bound: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Top keyword matches (indices, scores in [0, 1]) plus all normalised scores (None unless
    ``every``: keyword mode and hybrid fusion need only the top, and skip passes over every
    record). ``passage_scores`` is ``index.scores(tokens)`` where the caller has it already;
    without it and without ``every``, the top is found without scoring every passage
    (vecbook.keyword_prune), the same. ``bound``: ``index.upper_bound(tokens)``, where the caller
    has it."""
    bound = index.upper_bound(tokens) if bound is None else bound
    if not every and passage_scores is None and bound > 0:
        pruned = top_records(index, tokens, k, mask)
        if pruned is not None:
            return pruned[0], pruned[1] / bound, None
    if bound <= 0:
        best = np.zeros(index.size)
    else:
        scores = index.scores(tokens) if passage_scores is None else passage_scores
        if not every:
            found = top_of_scores(index, scores, k, mask)  # the top without every record's best
            if found is not None:
                return found[0], found[1] / bound, None
        best = index.best_per_record(scores)
    candidates = best if mask is None else np.where(mask, best, 0.0)
    ids = np.flatnonzero(candidates > 0)  # a bool array: numpy finds its nonzeros ~8x faster than a float one's
    top_ids, top_scores = top_k(ids, candidates[ids], k)
    scale = bound if bound > 0 else 1.0  # dividing by one constant keeps the order
    return top_ids, top_scores / scale, (best / scale if every else None)


def rank(mode: str, k: int, *, vectors: VectorIndex | None, keywords: KeywordIndex,
         query_vector: np.ndarray | None, tokens: Sequence[str], mask: np.ndarray | None,
         fusion: str = "rrf", rrf_k: int = 60, keyword_weight: float = 0.5,
         passage_scores: np.ndarray | None = None, model_reads: bool | None = True,
         feeds_back: Callable[[int], bool] | None = None) -> list[Scored]:
    """Score records for one query; returns candidates (at least the top k), unsorted by id.
    ``passage_scores``: ``keywords.scores(tokens)``, where the caller has computed it.
    ``model_reads``: whether the embedding model reads the query's language (None: its words do
    not tell, see vecbook.languages); where it does not, hybrid search leans on keywords.
    ``feeds_back``: whether linear fusion may move the query towards a record that is its best
    hit (None: any record; see FEEDBACK_WEIGHT); the records it refuses (chat windows) are also
    left out of the shape weight and the other passages (PEAK_SHIFT, RECORD_SHARE)."""
    if mode == "keyword":
        ids, scores, _ = keyword_top(keywords, tokens, k, mask, passage_scores, every=False)
        return [Scored(int(i), float(s), None, float(s)) for i, s in zip(ids, scores)]
    assert vectors is not None and query_vector is not None  # the facade guarantees this
    if mode == "semantic":
        ids, scores = vectors.top(query_vector, k, mask)
        return [Scored(int(i), float(s), float(s), None) for i, s in zip(ids, scores)]
    depth = max(k, FUSION_DEPTH)
    if passage_scores is None:
        passage_scores = keywords.scores(tokens)  # once: the top, the candidates' best and their other passages
    bound = keywords.upper_bound(tokens)
    # Each vector row this search scores is read once: the scan's candidates, the fused
    # candidates' windows (most of them among those), again for the feedback query.
    held = vectors.search_rows()
    sem_ids, _ = vectors.top(query_vector, depth, mask, held=held)
    kw_ids, _, _ = keyword_top(keywords, tokens, depth, mask, passage_scores, every=False, bound=bound)
    candidates = np.union1d(sem_ids, kw_ids).astype(np.int64)
    found_ids, found_scores = vectors.scores_of(query_vector, candidates, held)
    semantic = dict(zip(found_ids.tolist(), found_scores.tolist()))
    numbers = candidates.tolist()  # Python ints and floats: the loops below skip numpy's scalars
    sem = np.array([semantic.get(i, 0.0) for i in numbers])
    kw = kw_best = keyword_of(keywords, passage_scores, candidates, bound)
    lean = not model_reads and (model_reads is False or _meaning_missed_the_words(
        keywords, tokens, kw_ids[:1], sem_ids[:UNREAD_DEPTH]))
    if fusion == "rrf":
        weights = (1.0 - LEAN_RRF_SHARE, LEAN_RRF_SHARE) if lean else (1.0, 1.0)
        total = _rrf_within_depth(sem_ids.tolist(), kw_ids.tolist(), candidates, rrf_k, weights)
    else:
        core = np.isin(candidates, np.union1d(sem_ids[:FUSION_DEPTH], kw_ids[:FUSION_DEPTH]))
        cosine = cosine_of(sem, vectors.metric)
        plain = feeds_back or (lambda _: True)
        if lean:
            weight = max(keyword_weight, LEAN_KEYWORD_WEIGHT)
        elif PEAK_SHIFT and all(map(plain, _tops(candidates[core], cosine[core], kw[core]))):
            weight = peaked_weight(keyword_weight, cosine[core], kw[core])
        else:
            weight = keyword_weight
        if RECORD_SHARE > 0:
            kw = kw + RECORD_SHARE * other_passages(keywords, passage_scores, candidates, tokens, plain, bound)
        total = linear_scores(cosine, kw, weight, core)
        best = numbers[int(np.argmax(total))] if len(numbers) else None
        if not lean and FEEDBACK_WEIGHT > 0 and best is not None and plain(best):
            moved = feedback_query(vectors, query_vector, best, held)
            again_ids, again_scores = vectors.scores_of(moved, candidates, held)
            again = dict(zip(again_ids.tolist(), again_scores.tolist()))
            sem_moved = np.array([again.get(i, 0.0) for i in numbers])
            # The moved query is close to its best hit by construction: its cosines order the
            # candidates, while the query's own set how strong the list is (a query nothing is
            # close to keeps a weak semantic list, and its hits a low score).
            own_top = float(_semantic_scaled(cosine_of(sem, vectors.metric), core).max())
            total = linear_scores(cosine_of(sem_moved, vectors.metric), kw, weight, core, own_top)
        total = matched_floor(total, kw_best)
    return [Scored(i, t, semantic.get(i), w) for i, t, w in zip(numbers, total.tolist(), kw_best.tolist())]


def peaked_weight(keyword_weight: float, cosine: np.ndarray, keyword: np.ndarray) -> float:
    """The keyword weight moved PEAK_SHIFT x (the keyword list's drop from its best score to its
    PEAK_RANK-th minus the cosines' drop), kept within [WEIGHT_LOW, WEIGHT_HIGH] (or the weight
    itself where it lies outside); a weight of 0 or 1 asks for one side only and stays. Where no
    candidate holds a query word the weight stays too: a flat keyword list of zeros found nothing
    to weigh against meaning, and moving weight to a weak semantic list would lift a nonsense
    query's scores (``min_score`` reads them)."""
    if keyword_weight <= 0.0 or keyword_weight >= 1.0 or PEAK_SHIFT == 0 or not keyword.any():
        return keyword_weight
    moved = keyword_weight + PEAK_SHIFT * (_drop(keyword) - _drop(cosine))
    return float(np.clip(moved, min(keyword_weight, WEIGHT_LOW), max(keyword_weight, WEIGHT_HIGH)))


def _drop(values: np.ndarray) -> float:
    """The best of ``values`` minus its PEAK_RANK-th best (its last, in a shorter list)."""
    rank = min(PEAK_RANK, len(values))
    top = -np.partition(-values, rank - 1)[:rank]
    return float(top.max() - top.min())


def _tops(candidates: np.ndarray, cosine: np.ndarray, keyword: np.ndarray) -> list[int]:
    """The first PEAK_RANK candidates of each list (the records whose scores make its shape)."""
    rank = min(PEAK_RANK, len(candidates))
    if not rank:
        return []
    picked = np.union1d(np.argpartition(-cosine, rank - 1)[:rank], np.argpartition(-keyword, rank - 1)[:rank])
    return candidates[picked].tolist()


def other_passages(keywords: KeywordIndex, passage_scores: np.ndarray, candidates: np.ndarray,
                   tokens: Sequence[str], counts: Callable[[int], bool] = lambda _: True,
                   bound: float | None = None) -> np.ndarray:
    """Each candidate's keyword score in its passages other than its best, on the [0, 1] scale of
    ``keyword_top`` (0 for a record of one passage, most records, and for one ``counts`` refuses).
    ``bound``: ``keywords.upper_bound(tokens)``, where the caller has it."""
    extra = np.zeros(len(candidates))
    if keywords.n_passages == keywords.size or not len(candidates):
        return extra
    first = np.searchsorted(keywords.owners, candidates)
    end = np.searchsorted(keywords.owners, candidates + 1)
    split = np.flatnonzero(end - first > 1)
    if not len(split):
        return extra
    for at in split.tolist():
        if not counts(int(candidates[at])):
            continue
        own = passage_scores[first[at]:end[at]]
        extra[at] = float(own.sum() - own.max())
    bound = keywords.upper_bound(tokens) if bound is None else bound
    return extra / (bound if bound > 0 else 1.0)


def keyword_of(keywords: KeywordIndex, passage_scores: np.ndarray, records: np.ndarray,
               bound: float) -> np.ndarray:
    """The keyword scores of ``records`` (sorted, distinct) on ``keyword_top``'s [0, 1] scale:
    each one's best passage of ``passage_scores`` over ``bound`` (0 where ``bound`` is not
    positive, as there), without a best for every record."""
    if bound <= 0 or not len(records):
        return np.zeros(len(records))
    if keywords.n_passages == keywords.size:
        return passage_scores[records] / bound
    first = np.searchsorted(keywords.owners, records)
    counts = np.searchsorted(keywords.owners, records + 1) - first
    if not bool(counts.all()):
        return keywords.best_per_record(passage_scores)[records] / bound  # a record of no passage
    runs = np.cumsum(counts) - counts  # where each record's passages begin among those gathered
    return np.maximum.reduceat(passage_scores[joined_runs(first, counts)], runs) / bound


def feedback_query(vectors: VectorIndex, query_vector: np.ndarray, record: int,
                   held: SearchRows | None = None) -> np.ndarray:
    """The query's unit vector moved FEEDBACK_WEIGHT of a unit step towards ``record``'s mean
    window vector, as a unit vector (the query itself where the record has no vector); its rows
    taken from ``held`` (the search's) when given."""
    query = np.asarray(query_vector, dtype=np.float32).ravel()
    query = query / max(float(np.linalg.norm(query)), 1e-12)
    rows = vectors.windows_of(record)
    centre = (vectors.decode if held is None else held)(rows).mean(axis=0) if rows.size else None
    if centre is None or float(np.linalg.norm(centre)) < 1e-12:
        return query
    moved = query + FEEDBACK_WEIGHT * centre / float(np.linalg.norm(centre))
    return moved / max(float(np.linalg.norm(moved)), 1e-12)


def _meaning_missed_the_words(keywords: KeywordIndex, tokens: Sequence[str], keyword_best: np.ndarray,
                              semantic_firsts: np.ndarray) -> bool:
    """Whether the best keyword match (``keyword_best``: its record, empty for none) holds more of
    the query's distinct words than any of the meaning side's first UNREAD_DEPTH candidates
    (``semantic_firsts``), and at least UNREAD_TERMS times as many: the sign of a query the model
    did not read (vecbook.languages leaves a query without function words of a known list
    undecided). Counted in words rather than in keyword scores: a short chat message holding one
    common question word ("kapan", when) scores nearly as high as the note holding the rest."""
    if not len(keyword_best):
        return False
    held = terms_held(keywords, tokens, np.concatenate([keyword_best, semantic_firsts]))
    best, firsts = int(held[0]), int(held[1:].max(initial=0))
    return best > firsts and best >= UNREAD_TERMS * firsts


def terms_held(keywords: KeywordIndex, tokens: Sequence[str], records: np.ndarray) -> np.ndarray:
    """How many of the query's distinct terms each of ``records`` holds in any of its passages."""
    records = np.asarray(records, dtype=np.int64)
    first = np.searchsorted(keywords.owners, records)
    end = np.searchsorted(keywords.owners, records + 1)
    held = np.zeros(len(records), dtype=np.int64)
    for term in keywords.sorted_postings(keywords.postings_of(tokens)):
        held += np.searchsorted(term.docs, first) < np.searchsorted(term.docs, end)
    return held


def best_first(scored: list[Scored], records: Sequence[Any]) -> list[Scored]:
    """``scored`` by score, highest first, equal scores by record id, a note before its sync-conflict
    copies (which it would sort after: ``note (conflicted copy ...).md`` < ``note.md``): a sort on the
    score alone (a key made in C), then each run of equal scores. Ties are rare, and making every
    candidate's id for the sort key had cost ~0.15 ms of a 2 ms keyword search at 100k."""
    scored = sorted(scored, key=attrgetter("score"), reverse=True)  # stable: ties keep their order
    start = 0
    while start < len(scored):
        end = start + 1
        while end < len(scored) and scored[end].score == scored[start].score:
            end += 1
        if end - start > 1:
            scored[start:end] = sorted(scored[start:end], key=lambda s: (
                records[s.index].metadata_value(CONFLICT_KEY) is not None, records[s.index].id))
        start = end
    return scored
