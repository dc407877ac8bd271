"""What ``stats`` reports about a book: its records, files and sources, the problems found, the
model and index it searches with, and how far indexing has come (and at what pace, for the
progress lines)."""

from __future__ import annotations

import time
from typing import Any

from .build import Snapshot
from .config import Config, counted
from .embed import Embedder, unavailable
from .languages import model_languages
from .source_counts import chat_facts, report_chats
from .source_state import DATA_SOURCE
from .sources import LoadReport


def index_stats(config: Config, embedder: Embedder, snapshot: Snapshot | None, progress: dict[str, Any],
                watching: bool) -> dict[str, Any]:
    """The ``stats`` dictionary of a book whose current index is ``snapshot`` (None before its first)."""
    report = snapshot.report if snapshot else LoadReport()
    vectors = snapshot.vectors if snapshot else None
    started, finished = progress.get("started"), progress.get("finished")
    by_source = report.counts_by_source()
    chats = report_chats(report)
    return {
        "state": progress["state"],
        "records": len(report.records),
        **chat_facts(chats),  # the records that are a chat's conversation windows, and their messages
        "files": report.files,
        "sources": {"files": by_source.get("files", 0), **{n: by_source.get(n, 0) for n in report.collections}},
        "records_embedded": progress["records_embedded"],
        "records_total": progress["records_total"],
        "elapsed_seconds": round((finished or time.time()) - started, 3) if started else 0.0,
        "index_seconds": round(snapshot.index_seconds, 3) if snapshot else 0.0,
        "skipped": [p.to_dict() for p in report.problems if p.skipped and not p.left_out],
        "warnings": [p.to_dict() for p in report.problems if not p.skipped and not p.left_out],
        # what the sources leave out on purpose (an app's trash, Spam), each saying the setting that keeps it
        "left_out": [p.to_dict() for p in report.problems if p.left_out],
        "collections": {name: {**facts, **chat_facts(chats, name)}
                        for name, facts in report.collections.items()},
        "outside_links": report.outside_links,
        "data_directory": str(config.data_directory) if config.data_directory else None,
        "model": config.embedding_model,
        "model_languages": sorted(model_languages(config) or ["all"]),
        "dimensions": int(vectors.vectors.shape[1]) if vectors is not None else None,
        "precision": embedder.precision if vectors is not None else None,
        "runtime": embedder.runtime if vectors is not None else None,
        "metric": config.similarity_metric,
        "index_type": vectors.index_type if vectors is not None else None,
        "keyword_index": f"BM25Okapi (k1={config.bm25_k1}, b={config.bm25_b}, "
                         f"language={config.language}{'' if config.stemming else ', no stemming'})",
        "search_mode": config.search_mode,
        "fusion": config.fusion,
        "cache": snapshot.cache() if snapshot is not None and snapshot.cache is not None else None,
        "last_update": dict(snapshot.update) if snapshot else None,
        "watching": watching,
        "error": stated_error(progress.get("error")),
    }


def stated_error(error: str | None) -> str | None:
    """``stats``' ``error``: why the index has no vectors, and that keyword search works all the
    same. Its state reads "failed", and an assistant reading that and the package's name alone
    told its user VecBook could not search at all, though every keyword search answers."""
    return None if error is None else str(unavailable("semantic", error))


def indexed_line(report: LoadReport, update: dict[str, Any]) -> str:
    """'indexed 46 records in 0.3s: 30 from 7 files, 16 from collection family (40 messages); in
    all: 7 files read, 12 texts embedded, 34 reused' for the log, from a build's ``update``."""
    by_source, chats = report.counts_by_source(), report_chats(report)
    said = {name: f" ({counted(chats[name][1], 'message')})" if name in chats else ""
            for name in (DATA_SOURCE, *report.collections)}
    # (no "0 from 0 files" where collections alone are searched: it named a folder there is none of)
    parts = [f"{by_source.get(DATA_SOURCE, 0)} from {counted(report.files, 'file')}{said[DATA_SOURCE]}"] \
        if report.files or not report.collections else []
    parts += [f"{by_source.get(name, 0)} from collection {name}{said[name]}" for name in report.collections]
    read = counted(update["files_read"], "file")
    if update.get("collections_read"):  # exports and databases read whole
        read += f" and {counted(update['collections_read'], 'collection')}"
    # "in all" after a semicolon: in parentheses after the last source they read as its own counts
    return (f"indexed {counted(len(report.records), 'record')} in {update['seconds']:.1f}s: {', '.join(parts)}; "
            f"in all: {read} read, {counted(update.get('embedded', 0), 'text')} embedded, "
            f"{update.get('reused', 0) + update.get('from_cache', 0)} reused")
