"""A VecBook's on-disk caches in its cache folder: the vector cache and the keyword cache, where
the folder may lie, and when each is written (a first or full build before ``reindex()``
returns; an update in the background after its snapshot is published, at most once a minute;
what a long build embedded so far, to a journal every CHECKPOINT_SECONDS and when it is
interrupted; whatever is still unwritten when the book closes or the process exits)."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import threading
import time
import weakref
from typing import Any

import numpy as np

from .build import Builder
from .embed import _release_freed_memory
from .file_writes import failed_write_level
from .spill import LiveVectors
from .config import Config, ConfigError
from .index import LayeredCounts
from .keyword_cache import Captured, KeywordCache
from .vector_cache import VectorCache, cache_scope, seed_scopes
from .key_rows import KeyRows, overlap_after
from .vector_files import KeyedVectors, SplitPassages, StreamedVectors
from .vector_index import VectorIndex
from .vector_store import trainings_held

log = logging.getLogger("vecbook")

# An update (a watched edit) writes the caches only if their last write began this long ago,
# else when that time is up: at 100k records each file is ~150 MB and ~1 s of CPU to write, and
# a burst of edits would rewrite both for every save of a note.
UPDATE_WRITE_SECONDS = 60.0
# ... and never sooner than this after the update (nor than UPDATE_WRITE_SECONDS): the searches
# that follow an edit (the edited note looked up) do not share two cores with the write. At a
# million records the write compacts the keyword postings and writes a 1.5 GB vector cache,
# seconds of CPU, and began at once, beside the rest of the reindex() that started it.
UPDATE_SETTLE_SECONDS = 5.0
# A build that embeds for longer appends what it made to a journal at least this often, so a
# process killed midway (kill -9, a power cut) loses at most this much of its embedding. Each
# append writes only the vectors made since the last (~1.5 KB each, ~5 MB per 30 s on a laptop);
# rewriting the whole cache file instead would write ~150 MB each time at 100k records.
CHECKPOINT_SECONDS = 30.0
# ... or sooner, once this many vectors wait (~100 MB of float32, held twice while appended): a
# model that embeds fast (synthetic vectors, a GPU) made ~400,000 in 30 s at a million records,
# and holding them, then their copy for the append, made a first build's peak (+1.2 GB).
CHECKPOINT_VECTORS = 65_536
# A restart over the keyword cache rewrites it only when more than this share of the records
# it serves are not in the file as they are (re-read, gone, or windows the file lacks): at a
# million records one changed note otherwise rewrote a ~1 GB file, ~5 s of CPU and ~300 MB held
# while searches ran; the next start re-reads that note again, in milliseconds.
RESTART_REWRITE_SHARE = 0.01

# Every book's caches, so that the exit writes what updates put off (the timer that would write
# them is a daemon, so that a finished script does not wait a minute for it) and a server's
# SIGTERM waits for writes in flight.
_books: weakref.WeakSet[Caches] = weakref.WeakSet()
_books_lock = threading.Lock()
_flushing = threading.Lock()  # held while write_put_off writes
_exiting = False  # set by write_before_exit: later updates write at once, on their own thread


class Caches:
    """One book's vector and keyword caches (both off when ``config.cache_directory`` is None)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        # What the last build read and tokenized, kept for the next start.
        self.keywords = KeywordCache(config.cache_directory, config) if config.cache_directory else None
        self._vectors: VectorCache | None = None
        self._lock = threading.Lock()
        self._pending: tuple[VectorCache, LiveVectors, list[Checkpoints]] | None = None
        self._save_lock = threading.Lock()  # one save at a time, so the newest live set is written last
        self._saver: threading.Thread | None = None
        self._last_write = -UPDATE_WRITE_SECONDS  # time.monotonic() when the last write began
        self._due_keywords: Captured | None = None  # an update's keyword state, written with its vectors
        self._timer: threading.Timer | None = None  # the put-off write of an update
        # The journals of builds whose vectors no save has taken in yet, oldest first.
        self._journaling: list[Checkpoints] = []
        self._facts: CacheFacts | None = None  # the last build's (an update's are worked out from them)
        # A restart the user asked for (``reindex``) writes what it re-read however little.
        self.rewrite_stale = False
        with _books_lock:
            _books.add(self)

    # -- keywords --

    def restore_keywords(self, builder: Builder) -> None:
        """Load the keyword cache into an empty ``builder``: its next read re-reads only what changed."""
        if self.keywords is not None:
            self.keywords.restore(builder)

    def capture_keywords(self, builder: Builder) -> Captured | None:
        """The keyword state of ``builder``'s last snapshot, to save later (None when off)."""
        return KeywordCache.capture(builder) if self.keywords is not None else None

    def save_keywords(self, captured: Captured | None, update: bool) -> None:
        """Save ``captured`` in the background; an ``update``'s only with its vectors (``save_update``)."""
        if self.keywords is None or captured is None:
            return
        with self._lock:
            # A first or full build's capture is newer than one an update left waiting.
            self._due_keywords = captured if update else None
        if not update:
            self.keywords.save_in_background(captured)

    def restart_capture(self, builder: Builder, again: bool = False) -> Captured | None:
        """What a restart (a first build over the keyword cache) saves of its keyword state:
        nothing when at most RESTART_REWRITE_SHARE of its records are not in the file as they
        are (``KeywordCache.stale``: re-read, gone, or windows the file lacks, cut since by this
        model), unless ``rewrite_stale``: a ``vecbook reindex`` that wrote nothing would read the
        same records again, and say they changed, each time it is run. Its counts, then layered over the file's, are compacted in the background, as a
        save would (a layered index scores ~1.3x slower at a million records)."""
        if self.keywords is None:
            return None
        stale, total = self.keywords.stale(builder.blocks)
        if stale > (0 if self.rewrite_stale else RESTART_REWRITE_SHARE * total):
            return self.capture_keywords(builder)
        self.keywords.touch()
        # ``again``: after embedding, told once already; none changed: no news ("0 of 81 ... kept")
        log.log(logging.DEBUG if again or not stale else logging.INFO,
                "keyword cache: %d of %d records changed since %s was written; it is kept (those are read "
                "again at the next start)", stale, total, self.keywords.path)
        counts = builder.term_counts
        if isinstance(counts, LayeredCounts):
            threading.Thread(target=counts.whole, name="vecbook-compact", daemon=True).start()
        return None

    # -- vectors --

    def vectors(self, identity: str) -> VectorCache | None:
        """The vector cache of this model ``identity`` (loaded on first use; None when off)."""
        if self.config.cache_directory is None:
            return None
        if self._vectors is None or self._vectors.identity != identity:
            self._vectors = VectorCache(self.config.cache_directory, identity, cache_scope(self.config),
                                        seed_scopes(self.config))
            self._vectors.load()
        return self._vectors

    def checkpoints(self, cache: VectorCache | None) -> Checkpoints | None:
        """The journal of a build about to embed (None when the cache is off): it saves what the
        build makes as it goes, until the build's own save takes it in."""
        if cache is None:
            return None
        checkpoints = Checkpoints(cache)
        with self._lock:
            self._journaling.append(checkpoints)
        return checkpoints

    def keep_embedded(self) -> int:
        """Write to their journals what the builds in flight embedded and no file holds yet (on
        Ctrl-C, SIGTERM, at exit); returns how many vectors the journals of those builds hold.
        A build whose save is waiting (an update's, put off) is left to that save."""
        with self._lock:
            covered = self._pending[2] if self._pending is not None else []
            journaling = [checkpoints for checkpoints in self._journaling if checkpoints not in covered]
        kept = sum(checkpoints.write() for checkpoints in journaling)
        if kept:
            log.info("vector cache: kept %d vectors embedded since the last save, for the next start", kept)
        return kept

    def vectors_built(self, cache: VectorCache | None, live: LiveVectors) -> CacheFacts | None:
        """Note ``live`` as the vectors to save (replacing an older set no save has taken yet);
        returns what saving it does to the cache, for stats (worked out when first asked for)."""
        # Without a cache nothing asks for the lookup: the index lets the previous one's keys go.
        carried = live.index.carried_from(keep=cache is not None)
        if cache is None:
            return None
        with self._lock:
            # Its save takes in the journals of this build and the builds before it.
            self._pending = (cache, live, list(self._journaling))
            facts = self._facts = CacheFacts(cache, live, self._facts, carried)
        return facts

    # -- saving --

    def save(self) -> None:
        """Save what the last build made, and wait for the keyword cache's save: a first or full
        build does this before it returns, so the process that ran it leaves both caches whole."""
        with self._lock:
            self._last_write = time.monotonic()
        try:
            self._save_pending_vectors()
        finally:
            # Even when the vector write fails: the keyword save this build started is in flight.
            if self.keywords is not None:
                self.keywords.wait()

    def save_restart(self) -> None:
        """After a restart's snapshot is published (a start that took the keyword cache): write
        what changed in the background, as an update does but at once. Its keyword save is in
        flight already; a book opened meanwhile in this process waits for both files
        (``KeywordCache.restore``, ``VectorCache.load``), and the process's exit finishes them
        (the threads are not daemons; each file is replaced atomically)."""
        with self._lock:
            self._last_write = time.monotonic()
        # No scan is trained until both are written, as for a first build: the training's sample
        # and codes beside the writes' buffers made a build's peak of memory (see book.reindex).
        held = trainings_held()
        held.__enter__()
        try:
            self._save_vectors_in_background(held)
        except BaseException:
            held.__exit__(None, None, None)
            raise

    def save_update(self) -> None:
        """After an update's snapshot is published: write both caches in the background once
        UPDATE_SETTLE_SECONDS have passed, and UPDATE_WRITE_SECONDS since their last write began
        (the newest state then; ``flush`` and the process's exit write it sooner)."""
        with self._lock:
            if self._pending is None and self._due_keywords is None:
                return  # nothing changed
            if self._timer is not None:
                return  # the timer writes the newest state
            delay = max(self._last_write + UPDATE_WRITE_SECONDS - time.monotonic(),
                        min(UPDATE_SETTLE_SECONDS, UPDATE_WRITE_SECONDS))
            if delay > 0 and not _exiting:
                self._start_timer(delay)
                return
            self._last_write = time.monotonic()
            captured, self._due_keywords = self._due_keywords, None
        if _exiting:  # a late update while the process exits: no new threads now
            self._write(captured)
            return
        if self.keywords is not None:
            self.keywords.save_in_background(captured)
        self._save_vectors_in_background()

    def flush(self) -> None:
        """Write now whatever an update put off, and return when no write is in flight."""
        with self._lock:
            timer, self._timer = self._timer, None
            captured, self._due_keywords = self._due_keywords, None
        if timer is not None:
            timer.cancel()  # one still waiting ends; one already writing is waited for
            if timer is not threading.current_thread():
                timer.join()
        self.keep_embedded()  # first: a build in flight has no other save, and this one is quick
        if captured is not None or self._pending is not None:
            with self._lock:
                self._last_write = time.monotonic()
            self._write(captured)
        self.wait()

    def _start_timer(self, delay: float) -> None:
        """(Under ``_lock``.) A daemon, so that a finished script does not wait for it: the
        exit's ``write_before_exit`` writes instead."""
        timer = threading.Timer(delay, self._timer_fired)
        timer.daemon = True
        timer.name = "vecbook-cache-timer"
        try:
            timer.start()
        except RuntimeError:  # no new threads while the interpreter exits: the exit writes it
            return
        self._timer = timer

    def _timer_fired(self) -> None:
        """Write both caches' newest state on the timer's own thread (it starts no other, so a
        timer that fires while the process exits writes all the same), then schedule the next
        write if an update came meanwhile."""
        me = threading.current_thread()
        with self._lock:
            if self._timer is not me:
                return  # flushed meanwhile
            self._last_write = time.monotonic()
            captured, self._due_keywords = self._due_keywords, None
        try:
            self._write(captured)
        finally:
            with self._lock:
                if self._timer is me:
                    self._timer = None
                    if self._pending is not None or self._due_keywords is not None:
                        self._start_timer(max(self._last_write + UPDATE_WRITE_SECONDS - time.monotonic(), 0.0))

    def _write(self, captured: Captured | None) -> None:
        """Write ``captured`` and the pending vectors on this thread."""
        try:
            if self.keywords is not None and captured is not None:
                self.keywords.save_logged(captured)  # never over a newer capture (see KeywordCache.save)
        finally:
            with self._lock:
                cache = self._pending[0] if self._pending is not None else None
            if cache is None:
                return
            cache.begin_save()  # a book opening this cache meanwhile waits for the file
            try:
                self._save_pending_vectors()
            finally:
                cache.end_save()

    def _save_vectors_in_background(self, held: contextlib.AbstractContextManager[None] | None = None) -> None:
        """Save the pending vectors in a thread. Not a daemon: a process that exits still
        finishes the file (the rename keeps it whole either way); ``wait()`` waits for it too.
        ``held`` (entered) is left once both caches' writes have ended (at once when there are
        no vectors to write: a keyword-only book trains no scan)."""
        with self._lock:
            if self._pending is None:
                if held is not None:
                    held.__exit__(None, None, None)
                return
            cache = self._pending[0]
            saver = threading.Thread(target=self._save_announced, args=(cache, held), name="vecbook-cache")
            cache.begin_save()  # a book opening this cache from now on waits for the file
            try:
                saver.start()  # before it is recorded: wait() never joins a thread that did not start
            except RuntimeError:  # no new threads while the interpreter exits: write here
                saver = None
            if saver is not None:
                self._saver = saver
                return
        self._save_announced(cache, held)

    def wait(self) -> None:
        """Return when no write of either cache is in flight (a put-off write is not in flight)."""
        saver = self._saver
        if saver is not None:
            saver.join()
        if self.keywords is not None:
            self.keywords.wait()

    def _save_announced(self, cache: VectorCache, held: contextlib.AbstractContextManager[None] | None = None) -> None:
        try:
            self._save_pending_vectors()
        finally:
            cache.end_save()
            self._after_keywords(held)
        with self._lock:
            facts = self._facts
        if facts is not None:
            # Worked out here rather than by the start that made them (a start's reindex() returns
            # no stats): an overlap of every key, ~0.3 s at a million, which the first update's
            # facts are then worked out from.
            facts()

    def _after_keywords(self, held: contextlib.AbstractContextManager[None] | None) -> None:
        """Once the keyword write in flight has ended: give what the writes gathered back to the
        system, as a build's own save does (a server would otherwise keep it, as glibc holds
        freed pieces, while it serves), and leave ``held``."""
        try:
            if self.keywords is not None:
                self.keywords.wait()
            _release_freed_memory()
        finally:
            if held is not None:
                held.__exit__(None, None, None)

    def _save_pending_vectors(self) -> None:
        """Keep exactly the live vectors of the last build (which prunes the stale ones), if
        anything changed or the cache was started from another scope's file. Runs after the
        snapshot is published."""
        # The pending save is taken under the lock, so a later build's live set is never
        # overwritten by an earlier one still being written.
        with self._save_lock:
            with self._lock:
                pending, self._pending = self._pending, None
            if pending is None:
                return
            cache, live, journaling = pending
            try:
                # Nothing new or stale: leave the file alone (unless it is a seed's, of an older
                # format, or has journals beside it).
                if cache.needs_rewrite or not _same_keys(live.windows, cache.entries.rows) \
                        or not live.splits.same_keys(cache.entries.splits):
                    cache.save(live.vectors())
                    with self._lock:
                        facts = self._facts
                    if facts is not None:  # the next update's facts are worked out against the file now
                        facts.saved(live.index, cache.entries.rows)
            except OSError as exc:
                log.log(failed_write_level(cache.path, exc), "cannot write the vector cache %s (%s); continuing "
                        "without it", cache.path, exc)
                return
            # The file holds every live vector the journals did: they go.
            for checkpoints in journaling:
                checkpoints.retire()
            with self._lock:
                self._journaling = [c for c in self._journaling if c not in journaling]


class CacheFacts:
    """What saving a build's live vectors does to the cache (``path``, ``entries``, ``reused``,
    ``embedded``, ``pruned``), worked out on the first call from the new index's sorted keys
    and the cache's as the build found them (``KeyRows.overlap``)."""

    def __init__(self, cache: VectorCache, live: LiveVectors, earlier: CacheFacts | None = None,
                 carried: tuple[KeyRows, np.ndarray] | None = None) -> None:
        """``earlier``: the facts of the index this one's was updated from (``carried``: that index's
        sorted keys and each row's row there), whose overlap with the same cache file this one's
        is worked out from (``key_rows.overlap_after``), if they were worked out already."""
        self._before: KeyRows | None = cache.entries.rows  # a save replaces the cache's keys
        self._index: VectorIndex | None = live.index
        self._path, self._seeded = str(cache.path), cache.seeded
        self._facts: dict[str, Any] | None = None
        self._lock = threading.Lock()
        # What the overlap was worked out from: the index's sorted keys and the cache's, by reference.
        self._against: tuple[weakref.ref[KeyRows], weakref.ref[KeyRows]] | None = None
        # (an index, the cache's keys once saved from it): see ``saved``
        self._saved: tuple[weakref.ref[VectorIndex], weakref.ref[KeyRows]] | None = None
        found = earlier._overlap_for(carried[0], self._before) if earlier is not None and carried is not None else None
        self._earlier: tuple[tuple[int, int], KeyRows, np.ndarray] | None = \
            (found[0], found[1], carried[1]) if found is not None and carried is not None else None

    def _overlap_for(self, lookup: KeyRows, before: KeyRows | None) -> tuple[tuple[int, int], KeyRows] | None:
        """(entries, reused) if worked out between ``lookup`` and ``before`` (both by reference),
        or known once ``before`` was saved from this index (``saved``)."""
        with self._lock:
            against, facts, saved = self._against, self._facts, self._saved
            if facts is None or against is None or against[0]() is not lookup:
                return None
            if against[1]() is before:
                return (facts["entries"], facts["reused"]), lookup
            index, rows = saved if saved is not None else (lambda: None, lambda: None)
            if rows() is before and before is not None and (held := index()) is not None \
                    and held._lookup is lookup and len(before) == facts["entries"]:
                return (facts["entries"], facts["entries"]), lookup  # the file holds every key of the index
            return None

    def saved(self, index: VectorIndex, rows: KeyRows) -> None:
        """The cache file now holds exactly the keys of ``index`` (``rows``): an update of it
        works its facts out against the new file, if these facts are ``index``'s."""
        with self._lock:
            self._saved = (weakref.ref(index), weakref.ref(rows))

    def __call__(self) -> dict[str, Any]:
        with self._lock:
            if self._facts is None:
                assert self._before is not None and self._index is not None
                lookup = self._index.lookup
                self._index.carried_from(keep=False)  # the previous index's keys: not needed from here on
                earlier, self._earlier = self._earlier, None
                derived = overlap_after(earlier[0], earlier[1], lookup, earlier[2], self._before) \
                    if earlier is not None else None
                entries, reused = derived if derived is not None else lookup.overlap(self._before)
                self._against = (weakref.ref(lookup), weakref.ref(self._before))
                # A cache started from another scope's file prunes nothing of its own.
                pruned = 0 if self._seeded else len(self._before) - reused
                self._facts = {"path": self._path, "entries": entries, "reused": reused,
                               "embedded": entries - reused, "pruned": pruned}
                self._before = self._index = None  # worked out: let them go
            return dict(self._facts)


class Checkpoints:
    """What one build embedded that no cache file holds yet, appended to a journal of its own
    (``VectorCache.append``) every CHECKPOINT_SECONDS while it embeds and when ``write`` is
    called (Ctrl-C, SIGTERM, the exit): never a rewrite of the cache file, and never a pruning,
    so a checkpoint costs only the new vectors and drops nothing another source still needs.
    The build's save takes the journal in and ``retire`` deletes it."""

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache
        self.path = cache.new_journal()
        self._lock = threading.Lock()  # one append at a time: the build's thread, or an exit's
        self._splits = SplitPassages()
        self._chunks: list[dict[bytes, np.ndarray]] = []  # what the build made since the last append
        self._waiting = 0  # the vectors in them
        self._size = 0  # the journal's bytes that hold whole chunks
        self._kept = 0  # vectors in the journal
        self._last = time.monotonic()
        self._closed = False  # retired, or a write failed: no more appends

    def windowed(self, splits: SplitPassages) -> None:
        """The split passages of the build: written with the first vectors."""
        with self._lock:
            self._splits = splits

    def embedded(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Vectors the build just made; appended to the journal when the last append is
        CHECKPOINT_SECONDS old or CHECKPOINT_VECTORS wait."""
        with self._lock:
            self._chunks.append(vectors)
            self._waiting += len(vectors)
            due = time.monotonic() - self._last >= CHECKPOINT_SECONDS or self._waiting >= CHECKPOINT_VECTORS
        if due:
            self.write()

    def write(self) -> int:
        """Append what the journal lacks; returns the vectors it holds."""
        with self._lock:
            chunks = self._chunks
            if self._closed or not (chunks or len(self._splits)):
                return self._kept
            vectors = {key: vector for chunk in chunks for key, vector in chunk.items()}
            keep = StreamedVectors.of(KeyedVectors.from_dict(vectors))
            keep.splits = self._splits
            started = time.perf_counter()
            try:
                self._size = self.cache.append(self.path, keep, self._size)
            except OSError as exc:
                self._closed = True
                log.warning("cannot write the vector cache journal %s (%s); what this build embeds is saved when "
                            "it ends", self.path, exc)
                return self._kept
            self._chunks, self._splits, self._waiting = [], SplitPassages(), 0
            self._kept += len(vectors)
            self._last = time.monotonic()
            log.debug("vector cache: %d vectors appended to %s in %.3f s", len(vectors), self.path,
                      time.perf_counter() - started)
            return self._kept

    def retire(self) -> None:
        """The build's save holds what the journal did: delete it, and append nothing more."""
        with self._lock:
            self._closed = True
            with contextlib.suppress(OSError):
                self.path.unlink(missing_ok=True)


def write_put_off() -> None:
    """Write now what updates put off, in every book of this process, and wait for writes in
    flight. Returns at once if a call is already writing (a SIGTERM that arrives during the
    exit's own call)."""
    if not _flushing.acquire(blocking=False):
        return
    try:
        with _books_lock:
            books = list(_books)
        for caches in books:
            try:
                caches.flush()
            except Exception:  # noqa: BLE001 - one book's failure must not cost the others their writes
                log.exception("cannot write the caches")
    finally:
        _flushing.release()


@atexit.register
def write_before_exit() -> None:
    """``write_put_off`` as the process exits (non-daemon writer threads have finished by then;
    a server calls it on SIGTERM too); updates from here on write at once, on their own thread."""
    global _exiting
    _exiting = True
    write_put_off()


def writing_put_off() -> bool:
    """Whether ``write_put_off`` is writing now (in any thread)."""
    return _flushing.locked()


def _same_keys(live: KeyRows, cached: KeyRows) -> bool:
    """Whether the live vectors are exactly the cached ones (by key)."""
    return len(live) == len(cached) and bool((cached.rows_of(live.joined) >= 0).all())


def check_cache_directory(config: Config) -> Config:
    """The caches never live inside the data directory (the watcher would see them and a
    backup of the notes would carry them): a configured folder there is an error, the
    default folder there (a data directory of ``~``) turns the caches off with a WARN."""
    cache = config.cache_directory
    if cache is None or config.data_directory is None:
        return config
    data, resolved = config.data_directory.resolve(), cache.resolve()
    if resolved != data and data not in resolved.parents:
        return config
    from .config import default_cache_directory

    if cache == default_cache_directory():
        log.warning("the default vector cache folder %s lies inside the data directory %s; the cache is off "
                    "(set cache_directory to a folder outside it)", cache, data)
        return dataclasses.replace(config, cache_directory=None)
    raise ConfigError(f"cache_directory {cache} lies inside the data directory {data}: the cache must not be "
                      f"stored among the records (choose a folder outside it, or set cache_directory = false)")
