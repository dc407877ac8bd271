"""The keyword cache: what the last build read and laid out (each source's records, problems
and signature, every passage's keyword token ids, the vocabulary and the keyword index's term
counts), kept in the cache folder so that a restart reads and tokenizes only the sources that
changed since, and answers its first keyword query that much sooner.

One file per data scope, beside the vector cache and pruned by the same rule. It holds JSON
and plain arrays (``numpy.load`` with ``allow_pickle=False``), never pickled objects, and is
trusted only when it was written by this very VecBook code (a hash of the package's source
files) for the same sources and settings; anything else, a damaged file included, is ignored
with a WARN and the sources are read as on a first start.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import os
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from .build import Block, Builder, Layout
from .config import Config
from .index import TermCounts
from .records import Problem, Record
from .sources import SourceState
from .tokens import Vocabulary
from .vector_cache import cache_scope
from .vector_files import write_atomically

log = logging.getLogger("vecbook")

FORMAT = 2  # 2: the records' contents as UTF-8 beside their JSON rows, not inside them
# A source written this close to (or after) the moment its read began may have changed
# again within its timestamp's granularity (2 s on FAT) without its signature showing it:
# it is not kept, so the next start reads it again.
SETTLE_NS = 2_000_000_000
# Libraries whose output ends up in records: a new version may read the same export otherwise.
# PyStemmer too: a new Snowball release may stem a word otherwise, and the cached terms would
# no longer be those a query is cut into.
PARSING_LIBRARIES = ("icalendar", "python-dateutil", "tzdata", "pystemmer")


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of VecBook's own source files: a changed parser or tokenizer never reuses what
    an older one made (hashing the ~30 files takes about a millisecond)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(config: Config) -> str:
    """What the cached records depend on: the code, the Python and Unicode versions (lower-
    casing, ``\\w``, marks, folding), the libraries that parse exports and stem, the sources and
    the settings that shape reading and the keyword analysis (``stemming``, ``language``, each
    collection's ``language``; BM25's k1 and b are applied at each build, so they may differ)."""
    collections = [{key: str(value) for key, value in dataclasses.asdict(c).items()} for c in config.collections]
    facts = {"format": FORMAT, "code": code_digest(), "python": list(sys.version_info[:2]),
             "unicode": unicodedata.unidata_version, "libraries": _library_versions(),
             "scope": cache_scope(config), "stemming": config.stemming, "language": config.language,
             "collections": collections}
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


@lru_cache(maxsize=1)
def _library_versions() -> dict[str, str | None]:
    """Versions of the libraries whose parsing ends up in records (calendars and their zones)."""
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in PARSING_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


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
        self._held: list[tuple[str, list[Record]]] = []  # each source the file holds, with its records
        self._lock = threading.Lock()
        self._pending: Captured | None = None
        self._saver: threading.Thread | None = None
        self._write_lock = threading.Lock()  # one write at a time, from a saver thread or a flush
        self._written = 0  # ``taken`` of the capture the file holds

    def _holds(self, blocks: Sequence[tuple[str, Block]]) -> bool:
        """Whether the file holds exactly these sources' records lists (the lists, not equal ones)."""
        return len(blocks) == len(self._held) and all(
            key == held and block.records is records for (key, block), (held, records) in zip(blocks, self._held))

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
        self._save_pending()  # no new threads while the interpreter exits: save here

    def _start_saver(self) -> bool:
        """(Under ``_lock``.) Start a saver thread; False if the interpreter allows no new one."""
        saver = threading.Thread(target=self._save_pending, name="vecbook-keyword-cache")
        try:
            saver.start()  # before it is recorded: wait() never joins a thread that did not start
        except RuntimeError:
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
                # capture this one left).
                self._saver = None
                if self._pending is not None:
                    self._start_saver()

    def save_logged(self, captured: Captured) -> None:
        """``save``, with a failure to write logged (a WARN) rather than raised."""
        try:
            self.save(captured)
        except (OSError, ValueError) as exc:
            log.warning("cannot write the keyword cache %s (%s); continuing without it", self.path, exc)

    def save(self, captured: Captured) -> None:
        """Atomically replace the file with ``captured``'s settled, storable sources, unless
        it holds a newer capture (saves come from a saver thread and from flushes)."""
        with self._write_lock:
            if captured.taken >= self._written:
                self._write(captured)
                self._written = captured.taken

    def _write(self, captured: Captured) -> None:
        if self._held and self._holds(captured.blocks) and self.path.exists():
            os.utime(self.path)  # the file holds this already (a restart that found nothing new): still in use
            return
        kept = [(key, block, entry) for key, block in captured.blocks
                if (entry := _entry(captured.sources, key, block)) is not None
                and _storable(entry, block)]
        stored = {key for key, _, _ in kept}
        counts = _kept_counts(captured.counts, captured.blocks, stored)
        layouts = _layout_arrays([block for _, block, _ in kept])
        terms = _compact_terms(captured.terms, counts, layouts)
        header = {"magic": self.MAGIC, "format": FORMAT, "fingerprint": fingerprint(self.config),
                  "terms": terms, "sources": [_source_facts(key, block, entry, captured.sources.read_at.get(key))
                              for key, block, entry in kept]}
        # One dumps per source, so a save in a background thread lets searches in between,
        # each appended as UTF-8 to one buffer: joining the pieces, bracketing and encoding them
        # made three more copies of the JSON (50 MB each at 100k records) at once. The contents
        # go to a buffer of their own, as UTF-8: decoding them from JSON took 90 ms per 10 MB.
        records, contents, sizes = bytearray(b"["), bytearray(), []
        for number, (_, block, _) in enumerate(kept):
            records += (b"," if number else b"") + json.dumps(
                list(map(_record_row, block.records)), ensure_ascii=False).encode("utf-8", "surrogatepass")
            for record in block.records:
                encoded = record.content.encode("utf-8", "surrogatepass")
                contents += encoded
                sizes.append(len(encoded))
        records += b"]"
        arrays = {"header": _bytes_array(json.dumps(header)), "records": np.frombuffer(records, dtype=np.uint8),
                  "contents": np.frombuffer(contents, dtype=np.uint8), "content_bytes": np.array(sizes, dtype=np.int64),
                  **layouts, **counts}
        write_atomically(self.path, ".keywords-", lambda out: np.savez(out, **arrays))
        self._held = [(key, block.records) for key, block, _ in kept]

    # -- reading --

    def restore(self, builder: Builder) -> int:
        """Load the file into an empty ``builder`` (its next read re-reads only what changed);
        returns the records restored, 0 when there is no usable file."""
        if not self.path.exists():
            return 0
        started = time.perf_counter()
        try:
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
        self._held = [(key, block.records) for key, block in blocks.items()]
        restored = sum(len(b.records) for b in blocks.values())
        log.info("keyword cache: %d record%s of %d source%s from %s in %.2f s", restored, "" if restored == 1 else "s",
                 len(blocks), "" if len(blocks) == 1 else "s", self.path, time.perf_counter() - started)
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
            rows = json.loads(data["records"].tobytes())
            arrays = {name: data[name] for name in ("tokens", "token_lengths", "passages", "passage_counts",
                                                     "terms", "doc_ids", "tf", "contents", "content_bytes")}
        vocabulary = Vocabulary()
        vocabulary.ids = dict(zip(header["terms"], range(len(header["terms"]))))
        blocks = _blocks(header["sources"], rows, arrays, len(vocabulary))
        sources = SourceState(announce=True)
        sources.read_at = {key: at for key, (_, at) in _earlier_reads(header).items()}
        for facts, (key, block) in zip(header["sources"], blocks.items()):
            sources.put(key, (_tuples(facts["signature"]), block.records, [Problem(*p) for p in facts["problems"]],
                              facts["facts"]))
        n_passages = len(arrays["token_lengths"])
        counts = TermCounts(vocabulary, n_passages, *(arrays[name].astype(np.int32) for name in ("terms", "doc_ids", "tf")))
        if len(counts.doc_ids) and (int(counts.doc_ids.max()) >= n_passages or int(counts.terms.max()) >= len(vocabulary)):
            raise ValueError("term counts out of range")
        return header, (sources, blocks, vocabulary, counts)


def _earlier_reads(header: dict[str, Any]) -> dict[str, tuple[Any, int]]:
    """Each stored source's signature and read time (ns since the epoch), by key; sources a
    file of an older layout stored without a time are left out."""
    return {facts["key"]: (_tuples(facts["signature"]), facts["read_at"]) for facts in header.get("sources", [])
            if isinstance(facts, dict) and type(facts.get("read_at")) is int and isinstance(facts.get("key"), str)}


def _entry(sources: SourceState, key: str, block: Block) -> tuple[Any, ...] | None:
    """The source state entry ``block`` was laid out from (None if the state moved on)."""
    entry = sources.entry(key)
    return entry if entry is not None and entry[1] is block.records else None


def _storable(entry: tuple[Any, ...], block: Block) -> bool:
    """Whether a source may be kept: settled before the read its records came from began, and
    every value JSON gives back as it was (metadata of str, numbers, booleans, None and lists)."""
    signature = entry[0]
    mtimes = list(_mtimes(signature))
    if not mtimes or max(mtimes) >= block.read_ns - SETTLE_NS or not _plain(signature, tuples=True):
        return False
    return _plain(entry[3]) and all(_plain(r.metadata) for r in block.records)


def _mtimes(signature: Any) -> Iterator[int]:
    """The modification times in a signature: each (size, mtime_ns, inode, device) in it."""
    if isinstance(signature, tuple):
        if len(signature) == 4 and all(type(v) is int for v in signature):
            yield signature[1]
        else:
            for part in signature:
                yield from _mtimes(part)


def _plain(value: Any, tuples: bool = False) -> bool:
    """True for what json.loads(json.dumps(value)) gives back equal; with ``tuples``, tuples
    too (a signature's, which ``_tuples`` turns back from lists)."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) is list or (tuples and type(value) is tuple):
        return all(_plain(item, tuples) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v, tuples) for k, v in value.items())
    return False


def _tuples(value: Any) -> Any:
    """A signature as it was: JSON gives its tuples back as lists."""
    return tuple(map(_tuples, value)) if isinstance(value, list) else value


def _record_row(record: Record) -> list[Any]:
    """A record as a JSON row, without its content (stored apart). Its text is nearly always the
    end of its content (the body after the headers), and is then stored as the number of
    characters before it: half the size."""
    content, text = record.content, record.text
    body: str | int = len(content) - len(text) if content.endswith(text) else text
    return [body, record.file_path, record.line_number, record.end_line, record.metadata, record.source,
            record.id, record.citation, record.segments]


def _record(row: list[Any], content: str) -> Record:
    body, *fields, segments = row
    text = content[body:] if type(body) is int else body
    return Record(text, *fields, content=content, segments=tuple(map(tuple, segments)) if segments else ())


def _contents(arrays: dict[str, np.ndarray]) -> Iterator[str]:
    """Each record's content, decoded from the stored UTF-8 a record at a time (decoding all of
    it at once would widen every content to four bytes a character for one emoji among them)."""
    data = memoryview(arrays["contents"])
    ends = np.cumsum(arrays["content_bytes"]).tolist()
    if (ends[-1] if ends else 0) != len(data):
        raise ValueError("its contents do not agree")
    for start, end in zip([0, *ends[:-1]], ends):
        yield str(data[start:end], "utf-8", "surrogatepass")


def _source_facts(key: str, block: Block, entry: tuple[Any, ...], read_at: int | None) -> dict[str, Any]:
    return {"key": key, "signature": entry[0], "problems": [[p.where, p.line, p.reason, p.skipped] for p in entry[2]],
            "records": len(block.records), "read_at": read_at, "facts": entry[3]}


def _bytes_array(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _layout_arrays(blocks: Sequence[Block]) -> dict[str, np.ndarray]:
    """Every stored passage's character range and token ids, and passages per record."""
    tokens = [t for block in blocks for t in block.tokens]
    return {"tokens": np.concatenate(tokens).astype(np.int32) if tokens else np.zeros(0, dtype=np.int32),
            "token_lengths": np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)),
            "passages": np.concatenate([b.passages for b in blocks]) if blocks else np.zeros((0, 2), dtype=np.int64),
            "passage_counts": np.concatenate([b.counts for b in blocks]) if blocks else np.zeros(0, dtype=np.int64)}


def _kept_counts(counts: TermCounts, blocks: Sequence[tuple[str, Block]], stored: set[str]) -> dict[str, np.ndarray]:
    """The term counts of the stored sources' passages, renumbered as stored (in order)."""
    kept = np.concatenate([np.full(len(b.passages), key in stored) for key, b in blocks]) if blocks \
        else np.zeros(0, dtype=bool)
    number = np.cumsum(kept) - 1
    pairs = kept[counts.doc_ids]
    return {"terms": counts.terms[pairs], "doc_ids": number[counts.doc_ids[pairs]].astype(np.int32),
            "tf": counts.tf[pairs]}


def _compact_terms(terms: list[str], counts: dict[str, np.ndarray], layouts: dict[str, np.ndarray]) -> list[str]:
    """Only the terms some stored passage holds, renumbered in order (``counts`` and ``layouts``
    are rewritten to the new ids): the vocabulary in memory keeps every term it ever learnt
    (ids never change there), and a restart should not inherit those of deleted sources."""
    held = counts["terms"]  # in postings order, so each term's pairs are together
    used = held[np.flatnonzero(np.diff(held, prepend=-1))] if len(held) else np.zeros(0, dtype=np.int32)
    renumber = np.full(len(terms), -1, dtype=np.int32)
    renumber[used] = np.arange(len(used), dtype=np.int32)
    counts["terms"] = renumber[held]
    layouts["tokens"] = renumber[layouts["tokens"]]
    return [terms[t] for t in used.tolist()]


def _blocks(sources: list[dict[str, Any]], rows: list[list[Any]], arrays: dict[str, np.ndarray],
            n_terms: int) -> dict[str, Block]:
    """The stored blocks, checked against each other (a mismatch raises ValueError)."""
    tokens, lengths = arrays["tokens"], arrays["token_lengths"]
    passages, counts = arrays["passages"].reshape(-1, 2), arrays["passage_counts"]
    if len(rows) != len(sources) or any(len(r) != s["records"] for r, s in zip(rows, sources)) \
            or sum(s["records"] for s in sources) != len(counts) or len(arrays["content_bytes"]) != len(counts) \
            or int(counts.sum()) != len(passages) or len(passages) != len(lengths) or int(lengths.sum()) != len(tokens):
        raise ValueError("its parts do not agree")
    if len(tokens) and (int(tokens.min()) < 0 or int(tokens.max()) >= n_terms):
        raise ValueError("token ids out of range")
    ends = np.cumsum(lengths).tolist()
    per_passage = [tokens[a:b] for a, b in zip([0, *ends[:-1]], ends)]  # views: np.split took 5x as long
    spans = list(map(tuple, passages.tolist()))
    passage_ends = np.cumsum(counts).tolist()  # each record's passages end here
    contents = _contents(arrays)
    blocks: dict[str, Block] = {}
    # Only settled sources were stored: settled they stay, until their signature changes.
    restored_ns = time.time_ns()
    record = 0
    for facts, block_rows in zip(sources, rows):
        records = list(map(_record, block_rows, contents))
        bounds = passage_ends[record:record + len(records)]
        first = passage_ends[record - 1] if record else 0
        layouts = [Layout(spans[a:b], per_passage[a:b]) for a, b in zip([first, *bounds[:-1]], bounds)]
        last = bounds[-1] if bounds else first
        blocks[facts["key"]] = Block(records, layouts, counts[record:record + len(records)].astype(np.int64),
                                     passages[first:last].astype(np.int64), read_ns=restored_ns)
        record += len(records)
    return blocks

