"""One search's settings: each argument checked (QueryError naming it), or the config's value
where the search does not give one."""

from __future__ import annotations

from typing import Any, NamedTuple

from .config import FUSIONS, MODES, Config
from .hits import check_bool, check_choice, check_half_life, check_max_results, check_rrf_k, check_unit


class SearchSettings(NamedTuple):
    """What one search runs with (``VecBook.search``'s arguments, checked)."""

    k: int
    mode: str
    fusion: str
    keyword_weight: float
    min_score: float | None
    rrf_k: int
    dedupe: bool
    half_life: float | None


def search_settings(config: Config, default_mode: str, max_results: Any, mode: Any, fusion: Any,
                    keyword_weight: Any, min_score: Any, rrf_k: Any, dedupe: Any,
                    recency_half_life_days: Any) -> SearchSettings:
    """The settings of a search given these arguments (None: the config's, ``default_mode`` for
    the mode)."""
    return SearchSettings(
        k=check_max_results(config.max_results if max_results is None else max_results),
        mode=check_choice("mode", mode or default_mode, MODES),
        fusion=check_choice("fusion", fusion or config.fusion, FUSIONS),
        keyword_weight=check_unit("keyword_weight", config.keyword_weight if keyword_weight is None
                                  else keyword_weight),
        min_score=None if min_score is None else check_unit("min_score", min_score),
        rrf_k=check_rrf_k(config.rrf_k if rrf_k is None else rrf_k),
        dedupe=config.dedupe if dedupe is None else check_bool("dedupe", dedupe),
        half_life=check_half_life(config.recency_half_life_days if recency_half_life_days is None
                                  else recency_half_life_days))
