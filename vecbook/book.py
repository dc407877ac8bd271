"""The VecBook facade: builds index snapshots (in the background if asked), searches them, reports stats."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .config import (
    Config,
    QueryError,
    VecBookError,
    config_without_file,
    load_config,
    replace_config,
)
from .blocks import Block
from .build import Builder, Snapshot
from .exports.base import collector_paused
from .hits import (Context, Query, Results, check_context, check_max_chars, check_max_total_chars, check_query,
                   within_budget)
from .around import context_around
from .embed import Embedder, _release_freed_memory, unavailable
from .vector_index import VectorIndex
from .vector_store import trainings_held
from .emoji_names import with_emoji
from .filters import Condition, convenience_conditions, parse_filters
from .search_settings import search_settings
from .snapshot_search import search_snapshot
from .status import index_stats, indexed_line
from .progress import Since, Work, progress_line, tell
from .registry import summarize_report
from .sources import LoadReport, check_collections, check_sources
from .caches import Caches, check_cache_directory

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"

# A background book's first build, once keyword search is ready, loads the model only after no
# search has run for this long (a server's first keyword query is usually on its way), and
# waits no longer than the limit in all: semantic search waits for the model meanwhile.
QUIET_SECONDS = 0.15
QUIET_WAIT_LIMIT_SECONDS = 2.0


# Log embedding progress at most this often when no progress bar is drawn.
PROGRESS_LOG_SECONDS = 5.0
ProgressCallback = Callable[..., None]  # (done, total), and work=Work where it takes the keyword


class VecBook:
    """Local search over a folder of ``.txt`` records and SQLite collections.

    ``VecBook(data_directory="notes")`` indexes at once and blocks until ready;
    ``background=True`` defers indexing to a thread started by ``start()`` (or
    the first search), so keyword search works while vectors are computed.
    ``watch=True`` keeps the index fresh: changes to the sources are applied in
    the background as they happen (``close()`` stops watching).
    """

    def __init__(self, data_directory: str | Path | None = None, *, config: Config | None = None,
                 background: bool = False, progress: ProgressCallback | None = None,
                 embedder: Embedder | None = None, keyword_only: bool = False, watch: bool = False,
                 **settings: Any) -> None:
        if config is None:
            config = config_without_file(data_directory=data_directory, **settings)
        elif data_directory is not None or settings:
            config = replace_config(config, data_directory=data_directory, **settings)
        check_sources(config)
        config = check_cache_directory(config)
        check_collections(config)
        self.config = config
        # The ONNX models are built in the cache folder; with the vector cache off, in the default one.
        models = config.cache_directory / "models" if config.cache_directory is not None else None
        self.embedder = embedder or Embedder(config.embedding_model, config.precision, config.batch_size, models)
        self._progress_callback = progress
        self.keyword_only = keyword_only  # skip embedding: keyword search at once, no model load
        self._cond = threading.Condition(threading.RLock())
        self._snapshot: Snapshot | None = None
        self._thread: threading.Thread | None = None
        self._building = False
        self._generation = 0
        self._requested = self._covered = 0  # reindex requests made, and covered by a finished build
        self._full_requested = False
        self._builder = Builder(config, self.embedder)
        self._caches = Caches(config)
        self._cache_facts: Callable[[], dict[str, Any]] | None = None
        self._watcher: Any = None  # a watch.Watcher while watching (see watch())
        self._watch_on_start = watch and background  # a background book watches from start() on
        self._background = background
        self._pace: Since | None = None  # (time.monotonic(), the Work) at a build's first progress
        self._searches = 0  # searches running on a snapshot now
        self._awaiting_vectors = 0  # searches waiting for the vectors (the model need not wait for quiet)
        self._quiet_since = 0.0  # time.monotonic() when the last one ended, or keyword search began
        self._progress: dict[str, Any] = {"state": "not started", "records_embedded": 0, "records_total": 0,
                                          "started": None, "finished": None}
        if not background:
            self._update()  # (not reindex(): its stats' cache facts are worked out after the save)
            if watch:
                self.watch()

    @classmethod
    def from_config(cls, path: str | Path | None = None, **settings: Any) -> VecBook:
        """Load ``path``, else ``./vecbook.toml``, else the user's config file (where ``vecbook add``
        writes), as the command line does; apply overrides such as ``max_results=...``
        (``data_directory=...`` without ``path`` searches that folder alone)."""
        background = bool(settings.pop("background", False))
        progress = settings.pop("progress", None)
        embedder = settings.pop("embedder", None)
        keyword_only = bool(settings.pop("keyword_only", False))
        watch = bool(settings.pop("watch", False))
        return cls(config=load_config(path, **settings), background=background, progress=progress,
                   embedder=embedder, keyword_only=keyword_only, watch=watch)

    def __repr__(self) -> str:
        return f"VecBook({str(self.config.data_directory)!r}, state={self._progress['state']!r})"

    @property
    def default_mode(self) -> str:
        """The mode of a search that names none: the config's ``search_mode``, except that a
        ``keyword_only`` book has no vectors, so keyword."""
        return "keyword" if self.keyword_only else self.config.search_mode

    # -- lifecycle --

    def start(self) -> None:
        """Start indexing in a background thread (once), and watching if asked; returns at once."""
        if self._watch_on_start:
            self._watch_on_start = False
            self.watch()
        with self._cond:
            if self._thread is not None or self._snapshot is not None or self._building:
                return
            self._thread = threading.Thread(target=self._background_build, name="vecbook-index", daemon=True)
            self._thread.start()

    def watch(self) -> None:
        """Watch the data directory and collection paths; apply changes as they happen, by
        incremental ``reindex()`` calls in a background thread (``close()`` stops it)."""
        from .watch import Watcher

        with self._cond:
            if self._watcher is None:
                self._watcher = Watcher(self)
                self._watcher.start()

    def close(self) -> None:
        """Stop watching (if this book watches) and write the caches' newest state (an update
        writes them at most once a minute); the index stays searchable."""
        with self._cond:
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        self._caches.flush()

    def __enter__(self) -> VecBook:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _background_build(self) -> None:
        try:
            self._update()
        except Exception:  # a thread has no caller to raise to: log it and keep serving
            log.exception("indexing failed")

    def wait_until_ready(self, timeout: float | None = None) -> bool:
        """Block until vectors are built (or failed); False on timeout."""
        self.start()
        with self._cond:
            return self._cond.wait_for(lambda: self._progress["state"] in ("ready", "failed"), timeout)

    def reindex(self, full: bool = False) -> dict[str, Any]:
        """Bring the index up to date with the sources; returns ``stats()``.

        Incremental: only files and collections that changed are read again, only new text is
        embedded (vectors are reused by the hash of their text), and a deleted record is gone
        from the next snapshot. ``full=True`` forgets all of that and rebuilds from scratch
        (vectors may still come from the on-disk cache, which holds what this model made of the
        same text). Searches keep using the old snapshot until the new one is complete. A call
        made while a build runs waits for it and then for one more build (shared by every call
        that waited), because the running build may have read a file before the change wanted.
        """
        self._caches.rewrite_stale = True  # a restart asked for writes all it re-read (restart_capture)
        self._update(full)
        return self.stats()

    def _update(self, full: bool = False) -> None:
        """``reindex`` without the stats it returns."""
        with self._cond:
            self._requested = ticket = self._requested + 1
            self._full_requested |= full
            while self._covered < ticket:
                if not self._building:
                    break
                self._cond.wait()
            else:
                return
            self._building = True
            covers, full, self._full_requested = self._requested, self._full_requested, False
        try:
            # No scan is trained until the caches are saved (a saved one is still read at once):
            # beside a first build's save, a training was its peak of memory at a million records.
            with trainings_held():
                built = self._build(full)
                # After the new snapshot is published: searches never wait on it. An update (the
                # watcher's usual case: one file changed) does not wait either, since writing
                # 100k vectors takes longer than the update, and writes at most once a minute; a
                # restart writes what changed at once, in the background too (restart_capture). A
                # first or full build saves before it returns: the CLI's reindex leaves it whole.
                {"update": self._caches.save_update, "restart": self._caches.save_restart}.get(
                    built, self._caches.save)()
                # A build frees what it read and gathered (hundreds of MB at 100k records) in
                # pieces glibc keeps unless told: the process would stay at its highest RSS.
                _release_freed_memory()
        except KeyboardInterrupt:
            # Ctrl-C (and the CLI's SIGTERM): what was embedded is kept for the next start.
            kept = self._keep_embedded()
            if kept is None:
                raise
            raise KeyboardInterrupt(kept) from None
        finally:
            with self._cond:
                self._building = False
                self._covered = covers
                self._generation += 1
                self._cond.notify_all()

    def _keep_embedded(self) -> str | None:
        """What an interrupted build saved of its vectors, as a sentence (None: nothing)."""
        try:
            kept = self._caches.keep_embedded()
        except OSError as exc:  # a journal that cannot be written was warned about already
            log.debug("cannot keep what was embedded: %s", exc)
            return None
        if not kept:
            return None
        with self._cond:
            done, total = self._progress["records_embedded"], self._progress["records_total"]
        return (f"kept the {kept:,} vector{'' if kept == 1 else 's'} embedded so far ({done:,} of {total:,} "
                f"record{'' if total == 1 else 's'} complete); the next start embeds only the rest")

    def _set_progress(self, **values: Any) -> None:
        with self._cond:
            self._progress.update(values)
            self._cond.notify_all()

    def _build(self, full: bool) -> str:
        """Build and publish a snapshot; "update" if it updated an earlier one, "restart" for a
        first build over the keyword cache, else "build" (a first or full build)."""
        started = time.perf_counter()
        self._pace = None
        with self._cond:
            served = {key: self._progress[key] for key in ("records_embedded", "records_total")}
        self._set_progress(state="loading" if self._snapshot is None else "updating", started=time.time(),
                           finished=None, records_embedded=0, error=None)
        if full:
            self._builder.reset()
        previous = self._snapshot
        restored: dict[str, Block] | None = None  # what the keyword cache held, on a restart that used it
        with collector_paused():
            if previous is None and not full and self._builder.term_counts is None:
                self._caches.restore_keywords(self._builder)  # a restart reads only what changed since
                restored = dict(self._builder.blocks) or None
            # An update's reading is told by its "indexed" line, and only if it changed something.
            log.log(logging.INFO if previous is None or full else logging.DEBUG, "reading %s",
                    self.config.data_directory or "the collections")
            report = self._builder.read()
            unchanged = self._unchanged(previous, report, full)
            if not unchanged:
                if not report.records:
                    log.warning("no records found in %s: searches will return nothing",
                                self.config.data_directory or "the collections")
                self._set_progress(state="indexing keywords", records_total=len(report.records))
                base = self._builder.keyword_snapshot(report)
                captured = self._caches.capture_keywords(self._builder) if restored is None else \
                    self._caches.restart_capture(self._builder)
        update = {"full": full, "files_read": report.files_read, "collections_read": report.collections_read}
        if unchanged:
            self._set_progress(**served)  # the counters describe the index still served
            # A watcher's or reindex()'s look that found nothing changed is no news at INFO.
            self._finish(previous, started, dict(update, changed=False), quiet=True)
            return "update"
        with self._cond:
            if self._snapshot is None or self._snapshot.vectors is None:
                self._snapshot = base  # keyword search works from here on
            self._progress["state"] = "embedding"
            self._quiet_since = time.monotonic()
            self._cond.notify_all()
        vectors, error, counts = None, None, {}
        try:
            if not self.keyword_only:
                if previous is None and self._background:
                    self._wait_for_a_quiet_moment()
                self.embedder.load()
        except VecBookError as exc:
            error = str(exc)
            self._report_vector_error(error)
        finally:
            # Saved once the model is loaded (a first keyword query, often sent at once, does not
            # share the interpreter with it) and before the vectors: a server stopped while it
            # embeds still restarts without reading and tokenizing every source again.
            self._caches.save_keywords(captured, update=previous is not None and not full)
        try:
            if not self.keyword_only and error is None:
                vectors, counts = self._embed(base, None if full or previous is None else previous.vectors)
                # Again, with the windows just cut (the next start takes them rather than reading
                # every record's text back and cutting it); a file holding them all is left alone.
                if captured is None and restored is not None:  # windows cut since count as changed
                    captured = self._caches.restart_capture(self._builder, again=True)
                self._caches.save_keywords(captured, update=previous is not None and not full)
        except VecBookError as exc:
            error = str(exc)
            self._report_vector_error(error)
        removed = report.removed_since(previous.report) if previous else 0
        # A restart that found every source as the keyword cache held it changed nothing.
        changed = restored is None or report.files_read + report.collections_read > 0 or \
            {key for key, _ in report.blocks} != restored.keys()
        update.update(changed=changed, records=len(report.records), removed=removed, **counts)
        snapshot = dataclasses.replace(base, vectors=vectors, vector_error=error,
                                       cache=self._cache_facts, index_seconds=time.perf_counter() - started)
        self._finish(snapshot, started, update)
        return "update" if previous is not None and not full else "restart" if restored is not None else "build"

    def _wait_for_a_quiet_moment(self) -> None:
        """Before the model loads in the background: wait until no search has run for
        QUIET_SECONDS (at most QUIET_WAIT_LIMIT_SECONDS in all). Importing and loading the
        model holds the interpreter for stretches of ~0.1 s, and a server's first keyword
        search, sent with the handshake, arrives just as keyword search opens: over MCP at
        20k records it started 0.31 s after keyword search was ready, and 0.07 s after with
        this wait (the request waits in fastmcp while the interpreter is busy). A search waiting
        for the vectors ends the wait: it waits on the model itself (a restart's first hybrid
        answer had waited QUIET_SECONDS more)."""
        deadline = time.monotonic() + QUIET_WAIT_LIMIT_SECONDS
        with self._cond:
            while (now := time.monotonic()) < deadline:
                if self._awaiting_vectors:  # a search waits on the model itself: no keyword answer to spare
                    return
                if self._searches:
                    self._cond.wait(deadline - now)
                elif now - self._quiet_since >= QUIET_SECONDS:
                    return
                else:
                    self._cond.wait(min(self._quiet_since + QUIET_SECONDS, deadline) - now)

    @contextlib.contextmanager
    def _serving(self) -> Iterator[None]:
        """Count a search while it runs on a snapshot (see ``_wait_for_a_quiet_moment``)."""
        with self._cond:
            self._searches += 1
        try:
            yield
        finally:
            with self._cond:
                self._searches -= 1
                self._quiet_since = time.monotonic()
                self._cond.notify_all()

    def _unchanged(self, previous: Snapshot | None, report: LoadReport, full: bool) -> bool:
        """Nothing was re-read and no file came or went: the current snapshot stands."""
        if full or previous is None:
            return False
        if not self.keyword_only and previous.vectors is None and previous.vector_error is None:
            return False  # the last build stopped before its vectors
        # Sources not re-read keep their records lists, so comparing the sources' lists (a
        # thousand at 100k records) says what comparing every record would.
        return (report.files_read == 0 and report.collections_read == 0
                and len(report.blocks) == len(previous.report.blocks)
                and all(k == j and a is b for (k, a), (j, b) in zip(report.blocks, previous.report.blocks)))

    def _report_vector_error(self, error: str) -> None:
        # Logged where only a log reaches a person (a server); a foreground caller gets it once,
        # in the exception its next search raises.
        log.log(logging.ERROR if self._background else logging.DEBUG, "semantic search unavailable: %s", error)

    def _finish(self, snapshot: Snapshot | None, started: float, update: dict[str, Any], quiet: bool = False) -> None:
        update["seconds"] = round(time.perf_counter() - started, 3)
        if snapshot is not None:
            snapshot = dataclasses.replace(snapshot, update=update)
        with self._cond:
            self._snapshot = snapshot
            error = snapshot.vector_error if snapshot is not None else None
            self._progress.update(state="failed" if error else "ready", finished=time.time(), error=error)
            self._cond.notify_all()
        report = snapshot.report if snapshot is not None else LoadReport()
        log.log(logging.DEBUG if quiet else logging.INFO, "%s", indexed_line(report, update))

    # -- embedding --

    def _embed(self, snapshot: Snapshot, previous: VectorIndex | None) -> tuple[VectorIndex, dict[str, int]]:
        """Vectors for every passage window: reused from ``previous`` and the cache, the rest embedded.

        The model loads here, after the keyword snapshot is published, not beside the reading
        and tokenizing: its import and load would hold the interpreter while the first keyword
        query waits (at 20k records over MCP, 5.2 s to the first keyword answer against 2.3 s
        for a bare fastmcp server, with the load overlapping)."""
        self.embedder.load()
        # What reading and tokenizing freed goes back before the index's rows are allocated:
        # at 100k records the process peaks at the end of this build.
        _release_freed_memory()
        cache = self._caches.vectors(self.embedder.identity)
        try:
            index, counts, live = self._builder.embed(snapshot, previous, cache, self._report_progress,
                                                      self._caches.checkpoints(cache))
        finally:
            if cache is not None:
                cache.release_vectors()  # the index holds them now; closed before a save replaces the file
        self._cache_facts = self._caches.vectors_built(cache, live)
        return index, counts

    def _report_progress(self, done: int, total: int, work: Work) -> None:
        self._set_progress(records_embedded=done, records_total=total)
        if self._progress_callback is not None:
            tell(self._progress_callback, done, total, work)
            return
        now = time.monotonic()
        if self._pace is None:
            self._pace = (now, work)  # the first report of this build: where its rate is counted from
            if done == total:  # nothing to embed (every vector reused): the "indexed" line says so
                return
        if done == total or now - self._progress.get("logged", 0.0) >= PROGRESS_LOG_SECONDS:
            self._progress["logged"] = now
            log.info("%s", progress_line(done, total, self._pace, now, work))

    # -- search --

    def search(self, query: str, max_results: int | None = None, mode: str | None = None,
               filters: dict[str, Any] | None = None, min_score: float | None = None, *,
               fusion: str | None = None, keyword_weight: float | None = None, rrf_k: int | None = None,
               keyword_query: str | None = None, dedupe: bool | None = None,
               recency_half_life_days: float | None = None, sources: Sequence[str] | None = None,
               since: str | date | None = None, until: str | date | None = None,
               participants: Sequence[str] | None = None, max_total_chars: int | None = None,
               max_chars: int | None = None) -> Results:
        """Search records; results are sorted by ``similarity_score`` (ties by id).

        Args:
            query: natural-language text (also the keyword text unless ``keyword_query`` is given).
            max_results: 1 to 1000; default from the config.
            mode: ``semantic``, ``keyword`` or ``hybrid``; default from the config (``keyword``
                for a ``keyword_only`` book).
            filters: Django-style metadata filters, applied before the top-k cut.
            min_score: drop hits whose ``similarity_score`` is below this. What it compares
                against depends on the mode: semantic, the cosine mapped to [0, 1] (a query
                unrelated to every record still has a best hit near 0.6); keyword, BM25 over its
                upper bound; hybrid with linear fusion (the default), the fused score, measured
                against a ceiling when the best candidate is weak (a nonsense query's best hit
                scores about 0.25, a real question's about 0.8) and relative to the query's other
                candidates among strong ones; hybrid with rrf, ranks only (a nonsense query's best
                hit scores 0.5 or more), so it cuts only the tail of a list there.
            fusion, keyword_weight, rrf_k: hybrid fusion settings for this query.
            dedupe: fold near-identical hits into the best one (its ``duplicates``); default on.
            recency_half_life_days: blend the age of each record's ``date`` into its score.
            sources, since, until, participants: shorthand filters (see ``convenience_conditions``).
            max_total_chars: a budget for the hits' text in all (characters, not bytes): hits are
                taken best first, a hit that does not fit in what is left is left out (a later,
                shorter one may still fit), and ``Results.left_out`` counts those left out.
            max_chars: cut each hit's text to at most this many characters around its snippet (at
                line ends where it can), its lines and citation those of the text shown
                (``truncated``); the budget counts the texts so cut.
        """
        query = check_query(query)
        keyword_text = check_query(keyword_query, "keyword_query") if keyword_query is not None else query
        keyword_text = with_emoji(keyword_text)  # ":tada:" finds 🎉 as keywords (the model reads either poorly)
        extra = convenience_conditions(sources, since, until, participants)
        budget = check_max_total_chars(max_total_chars)
        hits = self._search(query, keyword_text, max_results, mode, filters, min_score, fusion,
                            keyword_weight, rrf_k, dedupe, recency_half_life_days, extra, check_max_chars(max_chars))
        kept, left_out = within_budget(hits, budget, lambda hit: len(hit.text))
        return Results(kept, left_out, hits.mode, hits.analysis, hits.why_empty)

    def get(self, ref: str, context: int = 0) -> Context:
        """The whole record whose ``id`` or ``citation`` is ``ref``, with up to ``context``
        records before and after it from the same file (and conversation: chat windows
        around a hit, the neighbouring records of a journal)."""
        if not isinstance(ref, str) or not ref.strip():
            raise QueryError("get needs a hit's id or citation, e.g. 'journal/2024/03.txt:9-15'")
        check_context(context)
        snapshot, _ = self._snapshot_for("keyword")
        position = snapshot.columns.find(ref.strip())
        if position is None:
            raise QueryError(f"no record has the id or citation {ref!r}: pass a hit's 'id' or 'citation' "
                             "(after a reindex, citations of edited records may have moved)")
        return context_around(snapshot.records, position, context)

    def query(self) -> Query:
        """A fluent query builder: ``vb.query().semantic("...").keyword("...").limit(5).to_list()``."""
        return Query(self)

    def _search(self, semantic_text: str, keyword_text: str, max_results: int | None, mode: str | None,
                filters: dict[str, Any] | None, min_score: float | None, fusion: str | None,
                keyword_weight: float | None, rrf_k: int | None, dedupe: bool | None = None,
                recency_half_life_days: float | None = None, extra: Sequence[Condition] = (),
                max_chars: int | None = None) -> Results:
        settings = search_settings(self.config, self.default_mode, max_results, mode, fusion, keyword_weight,
                                   min_score, rrf_k, dedupe, recency_half_life_days)
        conditions = parse_filters(filters) + list(extra)
        snapshot, answering = self._snapshot_for(settings.mode)
        # Counted from here (not while waiting for a snapshot): the first build's model load
        # waits for a quiet moment (_wait_for_a_quiet_moment).
        with self._serving():
            return search_snapshot(snapshot, self.config, self.embedder, settings._replace(mode=answering),
                                   semantic_text, keyword_text, conditions, max_chars)

    def _snapshot_for(self, mode: str) -> tuple[Snapshot, str]:
        """The current snapshot, waiting (bounded) for vectors when the mode needs them;
        falls back to keyword mode if they are still being computed."""
        if self.keyword_only and mode != "keyword":
            raise QueryError(f"{mode} search needs vectors, and this VecBook was opened with keyword_only=True "
                             "(search in mode='keyword', its default, or open it without keyword_only)")
        self.start()
        wait = self.config.semantic_wait_seconds
        with self._cond:
            if not self._cond.wait_for(lambda: self._snapshot is not None, timeout=max(wait, 1.0)):
                raise VecBookError("the index is still loading; try again in a few seconds")
            if mode != "keyword":
                self._awaiting_vectors += 1
                self._cond.notify_all()  # a model load waiting for a quiet moment goes at once
                try:
                    self._cond.wait_for(lambda: self._snapshot is not None and (
                        self._snapshot.vectors is not None or self._snapshot.vector_error is not None), timeout=wait)
                finally:
                    self._awaiting_vectors -= 1
            snapshot = self._snapshot
            assert snapshot is not None  # guaranteed by the wait above
            progress = dict(self._progress)
        if mode == "keyword" or snapshot.vectors is not None:
            return snapshot, mode
        if snapshot.vector_error is not None:
            raise unavailable(mode, snapshot.vector_error)
        log.warning("vectors are still being computed (%d of %d records); answering %s search from the "
                    "keyword index", progress["records_embedded"], progress["records_total"], mode)
        return snapshot, "keyword"

    # -- stats --

    def sources(self) -> list[dict[str, Any]]:
        """Each source searched, as the last index read it: ``name`` (what ``sources=`` takes;
        ``files`` for the data directory), ``format``, ``path``, ``records``, ``first_date`` and
        ``last_date``, ``participants``, ``problems``, ``left_out``, the configured ``description``.
        A background book is read first (the keyword stage: no vectors needed)."""
        snapshot, _ = self._snapshot_for("keyword")
        return [summary.to_dict() for summary in summarize_report(self.config, snapshot.report)]

    def stats(self) -> dict[str, Any]:
        """Counts, problems, model and index facts, and indexing progress (``status.index_stats``)."""
        with self._cond:
            snapshot, progress = self._snapshot, dict(self._progress)
        return index_stats(self.config, self.embedder, snapshot, progress,
                           watching=self._watcher is not None and self._watcher.running)
