"""The keyword cache: what the last build read and laid out (each source's records, problems
and signature, every passage's range and keyword token count, the vocabulary and the keyword
index's term counts), kept in the cache folder so that a restart reads and tokenizes only the sources that
changed since, and answers its first keyword query that much sooner.

One file per data scope, beside the vector cache and pruned by the same rule. It holds JSON
and plain arrays (``numpy.load`` with ``allow_pickle=False``), never pickled objects, and is
trusted only when it was written by this very VecBook code (a hash of the package's source
files) for the same sources and settings; anything else, a damaged file included, is ignored
with a WARN and the sources are read as on a first start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Sequence

import numpy as np

from .blocks import Block, Keys, Windows
from .build import Builder
from .config import Config
from .index import TermCounts
from .records import Problem, Record
from .record_columns import RECORD_ARRAYS, StoredRecords, record_columns
from .keyword_trust import fingerprint, from_json, settings_by_source, storable
from .sources import SourceState, block_source
from .stored_texts import (REF_SHIFT, FileTexts, Replaced, adopt_texts, file_identity, opened_texts, text_size,
                           write_npz)
from .tokens import Vocabulary
from .vector_cache import cache_scope
from .key_rows import KEY_BYTES
from .file_writes import failed_write_level, write_atomically

log = logging.getLogger("vecbook")

# 2: contents as UTF-8 beside the records' JSON rows; 3: those rows a source at a time with metadata
# keys shared, contents read back from the file, token counts and each term's postings count (no ids);
# 4: each source's model windows (keys, ranges, passage numbers) and the embedder that cut them;
# 5: the records as columns (numbers into tables of paths, sources, key sets and values), not JSON rows;
# 6: each problem says whether it is what a source leaves out on purpose (``Problem.left_out``), and
# a notes folder's Logseq pages whether they show or name blocks (``block_refs``, ``block_ids``)
FORMAT = 6
# The windows kept with the sources cut into them (as one array each, for every such source).
WINDOW_ARRAYS = ("window_keys", "window_counts", "window_spans", "window_passages")
# Whether restored records read their texts back from the file (``StoredTexts``) rather than
# hold them: not on Windows, where a file held open cannot be replaced by the next save.
READ_TEXTS_BACK = os.name != "nt"
# How long a restore waits for this process's save of the same file in flight (a million
# records take ~5 s); past it the older file is read, which is still whole (and what changed
# since is read again).
SAVE_WAIT_SECONDS = 120.0

# Saves in flight in this process, by file: a restore waits for them, so a second book opened
# while the first one's restart still saves reads the file that save writes, not the older one
# (whose changed sources it would read and tokenize again).
_in_flight: dict[Path, int] = {}
_in_flight_changed = threading.Condition()


def _announce(path: Path) -> None:
    """A save of ``path`` is in flight (``_retire`` when it is done)."""
    with _in_flight_changed:
        _in_flight[path] = _in_flight.get(path, 0) + 1


def _retire(path: Path) -> None:
    """The save announced by ``_announce`` is done (or failed)."""
    with _in_flight_changed:
        _in_flight[path] -= 1
        if not _in_flight[path]:
            del _in_flight[path]
        _in_flight_changed.notify_all()


def wait_for_saves(path: Path, timeout: float = SAVE_WAIT_SECONDS) -> bool:
    """Wait until no save of ``path`` is in flight in this process; False when ``timeout`` passed first."""
    with _in_flight_changed:
        return _in_flight_changed.wait_for(lambda: path not in _in_flight, timeout=timeout)


_captures = itertools.count(1)


@dataclass(frozen=True)
class Captured:
    """One build's keyword state, taken when its snapshot was made (cheap: references to
    what the next build replaces rather than mutates, and a copy of the growing vocabulary)."""

    blocks: list[tuple[str, Block]]
    sources: SourceState
    terms: list[str]
    counts: TermCounts
    # Which capture came later (a strict order: a clock may tick too coarsely): a save never
    # replaces a newer capture.
    taken: int = dataclasses.field(default_factory=lambda: next(_captures))


class KeywordCache:
    """The keyword cache file of one data scope (see the module's docstring)."""

    MAGIC = "VECBOOK-KEYWORDS"

    def __init__(self, directory: Path, config: Config) -> None:
        self.config = config
        scope = hashlib.sha256(cache_scope(config).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self.path = directory / f"keywords-{scope}.vbk"
        # Each source the file holds, with its records and the windows it holds of them.
        self._held: list[tuple[str, list[Record], Windows | None]] = []
        self._lock = threading.Lock()
        self._pending: Captured | None = None
        self._saver: threading.Thread | None = None
        self._write_lock = threading.Lock()  # one write at a time, from a saver thread or a flush
        self._written = 0  # ``taken`` of the capture the file holds

    def _holds(self, blocks: Sequence[tuple[str, Block]]) -> bool:
        """Whether the file holds exactly these sources' records lists (the lists, not equal ones),
        and the windows of each that has them (a first build's are cut after its first save)."""
        return len(blocks) == len(self._held) and all(
            key == held and block.records is records and (block.windowed is None or block.windowed is windows)
            for (key, block), (held, records, windows) in zip(blocks, self._held))

    @staticmethod
    def capture(builder: Builder) -> Captured | None:
        """The state ``builder``'s last keyword snapshot was made from (None before one)."""
        if builder.term_counts is None:
            return None
        sources = builder.sources.copy()
        return Captured(list(builder.blocks.items()), sources, list(builder.vocabulary.ids), builder.term_counts)

    # -- writing --

    def save_in_background(self, captured: Captured | None) -> None:
        """Save ``captured`` in a thread; a newer capture replaces one no save has taken yet.
        Not a daemon thread: a process that exits finishes the file first (``wait``)."""
        if captured is None:
            return
        with self._lock:
            self._pending = captured
            if self._saver is not None:
                return  # the running saver takes it next
            if self._start_saver():
                return
            _announce(self.path)
        self._save_pending()  # no new threads while the interpreter exits: save here

    def _start_saver(self) -> bool:
        """(Under ``_lock``.) Start a saver thread, announced as in flight until it ends (a
        restore in this process waits for it); False if the interpreter allows no new one."""
        saver = threading.Thread(target=self._save_pending, name="vecbook-keyword-cache")
        _announce(self.path)
        try:
            saver.start()  # before it is recorded: wait() never joins a thread that did not start
        except RuntimeError:
            _retire(self.path)
            return False
        self._saver = saver
        return True

    def wait(self) -> None:
        """Return when no save is in flight (a save's thread may hand over to another)."""
        while True:
            with self._lock:
                saver = self._saver
            if saver is None or saver is threading.current_thread():
                return
            saver.join()

    def _save_pending(self) -> None:
        captured: Captured | None = None
        try:
            while True:
                with self._lock:
                    captured, self._pending = self._pending, None
                    if captured is None:
                        return
                self.save_logged(captured)
        finally:
            with self._lock:
                # Whatever ended this thread, the next save starts a new one (and takes a
                # capture this one left), announced before this one's announcement ends.
                self._saver = None
                if self._pending is not None:
                    self._start_saver()
            _retire(self.path)

    def save_logged(self, captured: Captured) -> None:
        """``save``, with a failure to write logged (a WARN) rather than raised."""
        try:
            self.save(captured)
        except (OSError, ValueError) as exc:
            log.log(failed_write_level(self.path, exc), "cannot write the keyword cache %s (%s); continuing without it",
                    self.path, exc)

    def save(self, captured: Captured) -> None:
        """Atomically replace the file with ``captured``'s settled, storable sources, unless
        it holds a newer capture (saves come from a saver thread and from flushes)."""
        _announce(self.path)  # a flush's or a timer's save too: a restore meanwhile waits for it
        try:
            with self._write_lock:
                if captured.taken >= self._written:
                    self._write(captured)
                    self._written = captured.taken
        finally:
            _retire(self.path)

    def stale(self, blocks: dict[str, Block]) -> tuple[int, int]:
        """(records of ``blocks`` the file does not hold as they are: re-read, or with windows
        it lacks, plus those of sources gone since; all of ``blocks``' records)."""
        held = {key: (records, windows) for key, records, windows in self._held}
        total = stale = 0
        for key, block in blocks.items():
            total += len(block.records)
            records, windows = held.pop(key, (None, None))
            if block.records is not records or (block.windowed is not None and block.windowed is not windows):
                stale += len(block.records)
        return stale + sum(len(records) for records, _ in held.values()), total

    def touch(self) -> None:
        """Mark the file as in use (caches of any scope are pruned by their last use)."""
        with contextlib.suppress(OSError):
            os.utime(self.path)

    def _write(self, captured: Captured) -> None:
        if self._held and self._holds(captured.blocks) and self.path.exists():
            os.utime(self.path)  # the file holds this already (a restart that found nothing new): still in use
            return
        kept = [(key, block, entry) for key, block in captured.blocks
                if (entry := _entry(captured.sources, key, block)) is not None
                and storable(entry, block)]
        stored = {key for key, _, _ in kept}
        counts = _kept_counts(captured.counts, captured.blocks, stored)
        layouts = _layout_arrays([block for _, block, _ in kept])
        terms = _compact_terms(captured.terms, counts)
        # Read once: another thread may set a block's windows meanwhile (in one assignment).
        windowed = [block.windowed for _, block, _ in kept]
        identity = next((w.identity for w in windowed if w is not None), None)
        windowed = [w if w is not None and w.identity == identity else None for w in windowed]
        settings = settings_by_source(self.config)
        header = {"magic": self.MAGIC, "format": FORMAT, "fingerprint": fingerprint(self.config),
                  "terms": terms, "windows_of": identity,
                  "sources": [dict(_source_facts(key, block, entry, captured.sources.read_at.get(key)),
                                   windows=windows is not None, settings=settings(key))
                              for (key, block, entry), windows in zip(kept, windowed)]}
        columns, tables = record_columns([block.records for _, block, _ in kept])
        header.update(tables)
        every = [record for _, block, _ in kept for record in block.records]
        sizes = np.fromiter(map(text_size, every), dtype=np.int64, count=len(every))
        arrays = {"header": _bytes_array(json.dumps(header)), **columns, "text_sizes": sizes, **layouts, **counts,
                  **_window_arrays([w for w in windowed if w is not None])}
        written: list[tuple[int, int]] = []

        def write(out: BinaryIO) -> None:
            write_npz(out, arrays, every, int(sizes.sum()))
            written.append(file_identity(out))  # what the records adopt must be this very file

        write_atomically(self.path, ".keywords-", write)
        self._held = [(key, block.records, windows) for (key, block, _), windows in zip(kept, windowed)]
        if READ_TEXTS_BACK:
            adopt_texts(every, sizes, self.path, written[0])

    # -- reading --

    def restore(self, builder: Builder) -> int:
        """Load the file into an empty ``builder`` (its next read re-reads only what changed);
        returns the records restored, 0 when there is no usable file."""
        if not wait_for_saves(self.path):
            log.info("keyword cache %s: a save of it is still in flight; reading the file as it is", self.path)
        if not self.path.exists():
            return 0
        started = time.perf_counter()
        try:
            try:
                header, state = self._read()
            except Replaced:  # another process saved it between our two opens: read its new file
                header, state = self._read()
        except Exception as exc:  # a damaged file can fail in zipfile, numpy, json or here: never fatal
            log.warning("keyword cache %s is unusable (%s: %s); reading every source", self.path,
                        type(exc).__name__, exc)
            return 0
        if state is None:  # made by other code or settings: only when each source was read still holds
            builder.sources.earlier = _earlier_reads(header)
            return 0
        sources, blocks, vocabulary, counts = state
        builder.reset()
        builder.sources, builder.blocks, builder.vocabulary, builder.term_counts = sources, blocks, vocabulary, counts
        self._held = [(key, block.records, block.windowed) for key, block in blocks.items()]
        # Sources the file holds that this config no longer lists as they were are left to the read.
        kept = [block for key, block in blocks.items() if sources.entry(key) is not None]
        restored = sum(len(b.records) for b in kept)
        others = f" ({len(blocks) - len(kept)} more gone or changed in the config)" if len(kept) < len(blocks) else ""
        log.info("keyword cache: %d record%s of %d source%s from %s in %.2f s%s", restored,
                 "" if restored == 1 else "s", len(kept), "" if len(kept) == 1 else "s", self.path,
                 time.perf_counter() - started, others)
        return restored

    def _read(self) -> tuple[dict[str, Any], tuple[SourceState, dict[str, Block], Vocabulary, TermCounts] | None]:
        """The file's header, and what it holds (None when other code or settings made it)."""
        with np.load(self.path, allow_pickle=False) as data:
            header = json.loads(data["header"].tobytes())
            if header.get("magic") != self.MAGIC:
                raise ValueError("not a VecBook keyword cache")
            if header.get("format") != FORMAT or header["fingerprint"] != fingerprint(self.config):
                log.info("keyword cache %s was made by other code or settings; reading every source", self.path)
                return header, None
            arrays = {name: data[name] for name in ("token_lengths", "passages", "passage_counts", "term_postings",
                                                     "doc_ids", "tf", "text_sizes", *WINDOW_ARRAYS, *RECORD_ARRAYS)}
            texts = opened_texts(self.path, int(arrays["text_sizes"].sum()), file_identity(data.zip.fp))
        vocabulary = Vocabulary()
        vocabulary.ids = dict(zip(header["terms"], range(len(header["terms"]))))
        stored = StoredRecords.read(header, arrays, len(header["sources"]))
        blocks = _blocks(header["sources"], stored, arrays, texts)
        _restore_windows(header, list(blocks.values()), arrays)
        sources = SourceState(announce=True)
        sources.read_at = {key: at for key, (_, at) in _earlier_reads(header).items()}
        settings = settings_by_source(self.config)
        for facts, (key, block) in zip(header["sources"], blocks.items()):
            now = settings(key)
            if now is None:
                continue  # a collection removed since: the next read leaves its block out
            if facts.get("settings") is None or facts["settings"]["language"] != now["language"]:
                # Another analysis made its terms: every source is read again (as for a change of
                # the global language), so no term of the old analysis is taken over.
                log.info("keyword cache %s: the language of source %s changed; reading every source", self.path,
                         block_source(key))
                return header, None
            if facts["settings"] != now:
                continue  # its collection's settings changed: the next read reads it again
            sources.put(key, (from_json(facts["signature"]), block.records, [Problem(*p) for p in facts["problems"]],
                              facts["facts"]))
        n_passages = len(arrays["token_lengths"])
        postings = arrays["term_postings"].astype(np.int64)
        if len(postings) != len(vocabulary) or (len(postings) and int(postings.min()) < 0) \
                or int(postings.sum()) != len(arrays["doc_ids"]) or len(arrays["doc_ids"]) != len(arrays["tf"]) \
                or (len(arrays["doc_ids"]) and (int(arrays["doc_ids"].max()) >= n_passages
                                                or int(arrays["doc_ids"].min()) < 0)):
            raise ValueError("term counts out of range")
        counts = TermCounts(vocabulary, n_passages, None, arrays["doc_ids"].astype(np.int32, copy=False),
                            arrays["tf"], indptr=np.concatenate([[0], np.cumsum(postings)]))
        # Their totals, not each passage's (a weighted bincount of every posting: ~0.7 s and a
        # float64 copy of them, 450 MB at a million records); a damaged member fails its CRC.
        if int(counts.tf.sum(dtype=np.int64)) != int(arrays["token_lengths"].sum(dtype=np.int64)):
            raise ValueError("term counts and passage lengths do not agree")
        return header, (sources, blocks, vocabulary, counts)


def _earlier_reads(header: dict[str, Any]) -> dict[str, tuple[Any, int]]:
    """Each stored source's signature and read time (ns since the epoch), by key; sources a
    file of an older layout stored without a time are left out."""
    return {facts["key"]: (from_json(facts["signature"]), facts["read_at"]) for facts in header.get("sources", [])
            if isinstance(facts, dict) and type(facts.get("read_at")) is int and isinstance(facts.get("key"), str)}


def _entry(sources: SourceState, key: str, block: Block) -> tuple[Any, ...] | None:
    """The source state entry ``block`` was laid out from (None if the state moved on)."""
    entry = sources.entry(key)
    return entry if entry is not None and entry[1] is block.records else None


def _source_facts(key: str, block: Block, entry: tuple[Any, ...], read_at: int | None) -> dict[str, Any]:
    problems = [[p.where, p.line, p.reason, p.skipped, p.left_out] for p in entry[2]]
    return {"key": key, "signature": entry[0], "problems": problems,
            "records": len(block.records), "read_at": read_at, "facts": entry[3]}


def _bytes_array(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _layout_arrays(blocks: Sequence[Block]) -> dict[str, np.ndarray]:
    """Every stored passage's character range and keyword token count, and passages per record."""
    return {"token_lengths": _concatenated([b.lengths for b in blocks], np.int32),
            "passages": _concatenated([b.passages for b in blocks], np.int32).reshape(-1, 2),
            "passage_counts": _concatenated([b.counts for b in blocks], np.int32)}


def _window_arrays(windowed: Sequence[Windows]) -> dict[str, np.ndarray]:
    """The windows of the sources stored with them, in order: each window's key (16 bytes, as
    one array), range in its record's content and passage number, and windows per record."""
    return {"window_keys": np.frombuffer(b"".join(w.keys.joined for w in windowed), dtype=np.uint8),
            "window_counts": _concatenated([w.counts for w in windowed], np.int32),
            "window_spans": _concatenated([w.spans for w in windowed], np.int32).reshape(-1, 2),
            "window_passages": _concatenated([w.passages for w in windowed], np.int32)}


def _restore_windows(header: dict[str, Any], blocks: Sequence[Block], arrays: dict[str, np.ndarray]) -> None:
    """Give the blocks stored with windows their windows back (checked against each other and
    their passages: a mismatch raises ValueError), noted as cut by the header's embedder; the
    build checks that against its own before using them."""
    stored = [block for facts, block in zip(header["sources"], blocks) if facts.get("windows") is True]
    identity = header.get("windows_of")
    keys, counts = arrays["window_keys"], arrays["window_counts"].astype(np.int64)
    spans, numbers = arrays["window_spans"].reshape(-1, 2), arrays["window_passages"]
    total = int(counts.sum())
    if (stored and type(identity) is not str) or len(counts) != sum(len(b.records) for b in stored) \
            or (len(counts) and int(counts.min()) < 0) or len(keys) != KEY_BYTES * total \
            or len(spans) != total or len(numbers) != total:
        raise ValueError("its windows do not agree")
    passages = np.concatenate([b.counts for b in stored]).astype(np.int64) if stored else np.zeros(0, np.int64)
    if total and (int(numbers.min()) < 0 or bool((numbers >= np.repeat(passages, counts)).any())
                  or int(spans.min()) < 0 or bool((spans[:, 0] > spans[:, 1]).any())):
        raise ValueError("its windows do not agree with its passages")
    joined = keys.tobytes()
    record = window = 0
    for block in stored:
        end = record + len(block.records)
        here = counts[record:end]
        last = window + int(here.sum())
        block.windowed = Windows(Keys(joined[KEY_BYTES * window:KEY_BYTES * last]), here.astype(np.int32),
                                 spans[window:last].astype(np.int32, copy=False),
                                 numbers[window:last].astype(np.int32, copy=False), str(identity))
        record, window = end, last


def _concatenated(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _kept_counts(counts: TermCounts, blocks: Sequence[tuple[str, Block]], stored: set[str]) -> dict[str, np.ndarray]:
    """The term counts of the stored sources' passages, renumbered as stored (in order): each
    posting's passage and count, and each term's number of postings (the file holds no term id
    per posting, and none is made: 256 MB at a million records)."""
    kept = np.concatenate([np.full(len(b.passages), key in stored) for key, b in blocks]) if blocks \
        else np.zeros(0, dtype=bool)
    per_term = np.diff(counts.indptr)
    if bool(kept.all()):
        return {"doc_ids": counts.doc_ids.astype(np.int32, copy=False), "tf": counts.tf, "term_postings": per_term}
    number = (np.cumsum(kept) - 1).astype(np.int32)
    pairs = kept[counts.doc_ids]
    gone = np.flatnonzero(~pairs)  # the postings of passages not stored, each taken from its term
    per_term = per_term - np.bincount(np.searchsorted(counts.indptr, gone, "right") - 1, minlength=len(per_term))
    return {"doc_ids": number[counts.doc_ids[pairs]], "tf": counts.tf[pairs], "term_postings": per_term}


def _compact_terms(terms: list[str], counts: dict[str, np.ndarray]) -> list[str]:
    """Only the terms some stored passage holds, in order (``counts`` is rewritten to them): the
    vocabulary in memory keeps every term it ever learnt (ids never change there), and a restart
    should not inherit those of deleted sources."""
    used = np.flatnonzero(counts["term_postings"])
    counts["term_postings"] = counts["term_postings"][used].astype(np.int64)
    return [terms[t] for t in used.tolist()]


def _blocks(sources: list[dict[str, Any]], stored: StoredRecords, arrays: dict[str, np.ndarray],
            texts: FileTexts) -> dict[str, Block]:
    """The stored blocks, checked against each other (a mismatch raises ValueError)."""
    lengths = arrays["token_lengths"].astype(np.int32, copy=False)
    passages, counts = arrays["passages"].reshape(-1, 2).astype(np.int32, copy=False), arrays["passage_counts"]
    sizes = arrays["text_sizes"]
    if sum(s["records"] for s in sources) != len(counts) or len(counts) != len(sizes) \
            or len(counts) != len(stored.columns["record_paths"]) \
            or int(counts.sum()) != len(passages) or len(passages) != len(lengths) \
            or (len(lengths) and int(lengths.min()) < 0) or (len(sizes) and int(sizes.min()) < 0):
        raise ValueError("its parts do not agree")
    passage_ends = np.concatenate([[0], np.cumsum(counts)])  # record r's passages: passage_ends[r]..[r + 1]
    text_starts = np.concatenate([[0], np.cumsum(sizes)])
    blocks: dict[str, Block] = {}
    # Only settled sources were stored: settled they stay, until their signature changes.
    restored_ns = time.time_ns()
    record = 0
    for number, facts in enumerate(sources):
        end = record + facts["records"]
        refs = [(start << REF_SHIFT) | size
                for start, size in zip(text_starts[record:end].tolist(), sizes[record:end].tolist())]
        records = stored.of(number, record, end, texts, refs)
        if not READ_TEXTS_BACK:
            _hold_contents(records, texts)
        first, last = int(passage_ends[record]), int(passage_ends[end])
        blocks[facts["key"]] = Block(records, counts[record:end].astype(np.int32), passages[first:last],
                                     lengths[first:last], read_ns=restored_ns, facts=stored.facts(record, end))
        record = end
    return blocks


def _hold_contents(records: Sequence[Record], texts: FileTexts) -> None:
    """Let restored records hold their contents, read here (READ_TEXTS_BACK off)."""
    put = object.__setattr__
    for record in records:
        stored = record.stored_in
        assert stored is not None
        put(record, "_content", texts.read(stored[1]))
        put(record, "_texts", None)
