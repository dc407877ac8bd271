"""One search of one index snapshot: the query embedded and ranked (vecbook.rank), soft
preferences blended in, the k best shaped into hits, and why none, where none came.
``VecBook.search`` checks the arguments and picks the snapshot; this runs the rest."""

from __future__ import annotations

from functools import partial
from typing import Sequence

from .blends import blended
from .build import Snapshot
from .chat_hits import is_chat_window
from .config import MAX_RESULTS_LIMIT, Config
from .embed import Embedder
from .empty_results import holds_no_word, why_empty
from .filters import Condition, with_occurrences
from .hits import HitShaper, Results, unmatched
from .keyword_prune import PassageScores
from .languages import model_languages, reads_query
from .rank import FUSION_DEPTH, best_first, rank
from .search_settings import SearchSettings
from .snippets import folding, query_terms
from .tokens import analyses, analysis_of, query_tokens


def search_snapshot(snapshot: Snapshot, config: Config, embedder: Embedder, settings: SearchSettings,
                    semantic_text: str, keyword_text: str, conditions: Sequence[Condition],
                    max_chars: int | None) -> Results:
    """The hits of ``snapshot`` for a search run with ``settings`` (its ``mode`` the one that
    answers: keyword while a first index computes vectors), best first."""
    k, mode, fusion, weight, floor, rrf, fold, half_life = settings
    if holds_no_word(mode, semantic_text, keyword_text):  # "?!": nothing to look for, by meaning either
        why = why_empty(snapshot.columns, conditions, mode, keyword_text, [], None, words=False)
        return Results([], mode=mode, analysis=partial(analysis_of, config), why_empty=why)
    mask = snapshot.columns.mask(conditions)
    vector = embedder.encode_query(semantic_text) if mode != "keyword" else None
    in_use = analyses(config)  # a query meets each collection's records in their language
    tokens = query_tokens(keyword_text, in_use)
    # Folding duplicates and blending recency reorder candidates past the k-th, and
    # merging chat hits takes more than k: rank a deeper list so k are left after them.
    depth = min(MAX_RESULTS_LIMIT, max(k, FUSION_DEPTH) if fold or half_life else 2 * k)
    terms = query_terms(keyword_text, in_use)
    # Hybrid fusion reads every passage's keyword score (so do its snippets); keyword ranking
    # does not (vecbook.keyword_prune), and snippets then score their hits' passages alone.
    passage_scores = snapshot.keywords.scores(tokens) if mode == "hybrid" else None
    # Hybrid search leans on keywords for a query in a language the model does not read.
    reads = reads_query(semantic_text, model_languages(config)) if mode == "hybrid" else True
    scored = rank(mode, depth, vectors=snapshot.vectors, keywords=snapshot.keywords, query_vector=vector,
                  tokens=tokens, mask=mask, fusion=fusion, rrf_k=rrf, keyword_weight=weight,
                  passage_scores=passage_scores, model_reads=reads,
                  feeds_back=lambda i: not is_chat_window(snapshot.records[i]))
    records = snapshot.records
    nothing = unmatched(scored)  # before a recency blend lifts their score
    ranked = best_first(blended(snapshot, scored, semantic_text, mask, half_life), records)
    scored = [s for s in ranked if floor is None or s.score >= floor]
    # Read as far as merging chat hits needs to leave k: folded (lazily), or each alone.
    groups = (folding(records[s.index].text for s in scored) if fold
              else ((i, []) for i in range(len(scored))))
    shaper = HitShaper(snapshot, terms, PassageScores(snapshot.keywords, tokens) if passage_scores is None
                       else passage_scores, vector, partial(analysis_of, config), nothing)
    found = with_occurrences(shaper.hits(scored, groups, k, max_chars), conditions)
    cut = (floor, ranked[0].score) if ranked and not scored and floor is not None else None
    why = None if found else why_empty(snapshot.columns, conditions, mode, keyword_text, tokens, cut)
    return Results(found, mode=mode, analysis=partial(analysis_of, config), why_empty=why)
