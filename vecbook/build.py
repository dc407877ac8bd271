"""Building index snapshots, incrementally: sources are re-read only where they changed,
records are cut into passages and tokenized once per distinct text, and vectors are
reused by the hash of the text they embed (from the index in memory, then the on-disk
cache) so that only new text meets the model."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .config import Config
from .embed import EMBED_CHUNK, MAX_WINDOWS, Embedder
from .index import KeywordIndex, VectorIndex, Vocabulary
from .rank import FilterColumns
from .records import Record, split_passages
from .sources import LoadReport, SourceState, load_sources
from .vector_cache import VectorCache

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"

ProgressCallback = Callable[[int, int], None]
# Model windows embedded for one record, at most (~2.2M tokens, some 9 MB of English
# text: minutes of CPU). Past it the rest of the record is found by keyword only,
# with a WARN; without a bound one 500 MB log file would take a day to embed.
MAX_RECORD_WINDOWS = 10_000


@dataclass
class Layout:
    """How one distinct record text is indexed: its passages, their keyword tokens, and
    (once embedded) the model windows of each passage with the hashes of their text."""

    passages: list[tuple[int, int]]
    tokens: list[np.ndarray]
    windows: list[tuple[int, int, int]] | None = None  # (passage number, start, end) in the content
    keys: list[bytes] | None = None


@dataclass(frozen=True)
class Snapshot:
    """One complete, immutable index generation; searches read one snapshot only."""

    records: list[Record]
    keywords: KeywordIndex
    columns: FilterColumns
    report: LoadReport
    passages: np.ndarray  # (passages, 2): character ranges in each record's content, by keyword document
    vectors: VectorIndex | None = None
    vector_error: str | None = None
    index_seconds: float = 0.0
    cache: dict[str, Any] | None = None
    update: dict[str, Any] = field(default_factory=dict)

    def passage_span(self, passage: int) -> tuple[int, int]:
        """(start, end) of a passage in its record's content."""
        return int(self.passages[passage, 0]), int(self.passages[passage, 1])


class LiveVectors:
    """Every vector a build holds, by the key of its text: what the vector cache keeps.
    Gathered only when the cache is saved, which runs after the update is published
    (a dict of 100k vectors takes longer than the update of one file)."""

    def __init__(self, keys: Sequence[bytes], reused: np.ndarray, keep: np.ndarray, previous: VectorIndex | None,
                 found: dict[bytes, np.ndarray]) -> None:
        self._keys, self._reused, self._keep = keys, reused, keep
        self._previous = previous  # held: its float16 rows are a view of FAISS memory it owns
        self._found = found
        self._rows: dict[bytes, int] | None = None

    @property
    def rows(self) -> dict[bytes, int]:
        """Each live key, in window order, with its row in the previous index (-1: in ``found``)."""
        if self._rows is None:
            self._rows = {k: r for k, r, kept in zip(self._keys, self._reused.tolist(), self._keep.tolist()) if kept}
        return self._rows

    def as_dict(self) -> dict[bytes, np.ndarray]:
        """Key -> float32 vector, as the cache stores them."""
        rows = self.rows
        taken = np.fromiter(rows.values(), dtype=np.int64, count=len(rows))
        vectors: list[np.ndarray] = [np.zeros(0)] * len(rows)
        if self._previous is not None and bool((taken >= 0).any()):
            copied = np.flatnonzero(taken >= 0)
            decoded = self._previous.vectors[taken[copied]].astype(np.float32)
            for position, vector in zip(copied.tolist(), decoded):
                vectors[position] = vector
        for position, (key, row) in enumerate(zip(rows, taken.tolist())):
            if row < 0:
                vectors[position] = self._found[key]
        return dict(zip(rows, vectors))


def text_key(text: str) -> bytes:
    """16 bytes of sha256: what a vector is stored under (collisions are out of reach)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


class Builder:
    """The state one VecBook keeps between builds: what each source held, each distinct
    text's layout, and the keyword vocabulary."""

    def __init__(self, config: Config, embedder: Embedder) -> None:
        self.config = config
        self.embedder = embedder
        self.sources = SourceState()
        self.vocabulary = Vocabulary()
        self.layouts: dict[str, Layout] = {}
        self._keywords: tuple[list[Record], KeywordIndex] | None = None  # the last build's, for reuse
        self._lock = threading.Lock()  # one build at a time touches the state

    def reset(self) -> None:
        """Forget everything read and laid out: the next build starts from scratch."""
        self.sources = SourceState()
        self.layouts = {}
        self.vocabulary = Vocabulary()
        self._keywords = None

    # -- reading and keywords --

    def read(self) -> LoadReport:
        """Re-read what changed since the last read; the rest comes from the state."""
        return load_sources(self.config, self.sources)

    def keyword_snapshot(self, report: LoadReport) -> Snapshot:
        """Passages and the keyword index for ``report``'s records (no vectors yet)."""
        layouts = [self._layout(r.content) for r in report.records]
        self.layouts = {r.content: layout for r, layout in zip(report.records, layouts)}  # drop stale texts
        counts = np.fromiter((len(layout.passages) for layout in layouts), dtype=np.int64, count=len(layouts))
        owners = np.repeat(np.arange(len(layouts)), counts)
        tokens = [t for layout in layouts for t in layout.tokens]
        passages = np.array([p for layout in layouts for p in layout.passages], dtype=np.int64).reshape(-1, 2)
        reuse = (self._keywords[1], _passage_sources(*self._keywords, report.records, counts)) if self._keywords else None
        keywords = KeywordIndex(tokens, self.config.bm25_k1, self.config.bm25_b, vocabulary=self.vocabulary,
                                owners=owners, reuse=reuse)
        self._keywords = (report.records, keywords)
        return Snapshot(report.records, keywords, FilterColumns(report.records), report, passages)

    def _layout(self, content: str) -> Layout:
        layout = self.layouts.get(content)
        if layout is None:
            passages = split_passages(content)
            layout = Layout(passages, [self.vocabulary.encode_text(content[a:b], self.config.stemming)
                                       for a, b in passages])
        return layout

    # -- vectors --

    def embed(self, snapshot: Snapshot, previous: VectorIndex | None, cache: VectorCache | None,
              progress: ProgressCallback) -> tuple[VectorIndex, dict[str, int], LiveVectors]:
        """The vector index for ``snapshot``: windows of every passage, their vectors taken
        from ``previous`` (same text, same model), then ``cache``, then the model. Also
        returns counts (reused, from_cache, embedded) and every live vector by key."""
        records = snapshot.records
        layouts = [self.layouts[r.content] for r in records]
        rows = {k: i for i, k in enumerate(previous.keys)} if previous is not None else {}
        self._window(records, layouts, lambda key: key in rows or (cache is not None and key in cache.entries))
        keys = [k for layout in layouts for k in (layout.keys or [])]
        owners = np.repeat(np.arange(len(records)), [len(layout.keys or []) for layout in layouts])
        spans = np.array([(a, b) for layout in layouts for _, a, b in (layout.windows or [])],
                         dtype=np.int64).reshape(-1, 2)
        # Each window's row in the previous index (-1: not there). An update changes a few
        # records, so everything after this line is proportional to those few windows,
        # plus numpy passes over the rest.
        reused = np.fromiter((rows.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        missing = np.flatnonzero(reused < 0)
        found = self._cached_vectors([keys[w] for w in missing.tolist()], cache)
        texts = {keys[w]: records[o].content[a:b] for w, o, (a, b)
                 in zip(missing.tolist(), owners[missing].tolist(), spans[missing].tolist()) if keys[w] not in found}
        counts = {"reused": int(len(np.unique(reused[reused >= 0]))), "from_cache": len(found),
                  "embedded": len(texts)}
        self._embed_missing(texts, found, records, keys, owners, missing, progress)
        keep = reused >= 0
        keep[missing] = [keys[w] in found for w in missing.tolist()]
        matrix = self._matrix(keys, reused, keep, found, previous)
        index = VectorIndex(matrix, owners[keep], len(records), self.config.similarity_metric, spans=spans[keep],
                            keys=keys if keep.all() else [k for k, kept in zip(keys, keep.tolist()) if kept])
        return index, counts, LiveVectors(keys, reused, keep, previous, found)

    def _matrix(self, keys: Sequence[bytes], reused: np.ndarray, keep: np.ndarray, found: dict[bytes, np.ndarray],
                previous: VectorIndex | None) -> np.ndarray:
        """The float32 vectors of the kept windows: rows copied from ``previous`` in one gather, the rest from ``found``."""
        if previous is not None and bool((reused >= 0).any()):
            dim = previous.vectors.shape[1]
        else:
            dim = len(next(iter(found.values()))) if found else self.embedder.dimension
        matrix = np.empty((int(keep.sum()), dim), dtype=np.float32)
        position = np.cumsum(keep) - 1
        copied = reused >= 0
        if previous is not None and bool(copied.any()):
            matrix[position[copied]] = previous.vectors[reused[copied]]  # float16 decoded as before
        fresh = np.flatnonzero(keep & ~copied)
        if len(fresh):
            matrix[position[fresh]] = np.array([found[keys[w]] for w in fresh.tolist()], dtype=np.float32)
        return matrix

    @staticmethod
    def _cached_vectors(keys: Sequence[bytes], cache: VectorCache | None) -> dict[bytes, np.ndarray]:
        """The cache's vectors for ``keys`` (those the previous index lacks)."""
        if cache is None:
            return {}
        entries = cache.entries
        return {key: entries[key] for key in dict.fromkeys(keys) if key in entries}

    def _window(self, records: Sequence[Record], layouts: Sequence[Layout], known: Callable[[bytes], bool]) -> None:
        """Model windows for every passage not windowed yet (the tokenizer runs once per text,
        and not at all for a passage whose whole text ``known`` has a vector for)."""
        todo = [(record, layout) for record, layout in zip(records, layouts) if layout.windows is None]
        todo = list({id(layout): (record, layout) for record, layout in todo}.values())
        # Every passage makes at least one window, so passages past the bound are never embedded.
        texts = [record.content[a:b] for record, layout in todo for a, b in layout.passages[:MAX_RECORD_WINDOWS]]
        # A passage whose whole text has a vector was embedded as one window (windows never
        # exceed the model's limit), so a warm start skips the tokenizer for it.
        whole = [known(text_key(text)) for text in texts]
        split = iter(self.embedder.window_spans_many([t for t, hit in zip(texts, whole) if not hit]))
        spans = iter([([(0, len(t))], False) if hit else next(split) for t, hit in zip(texts, whole)])
        for record, layout in todo:
            windows: list[tuple[int, int, int]] = []
            for number, (a, b) in enumerate(layout.passages[:MAX_RECORD_WINDOWS]):
                pieces, capped = next(spans)
                if capped:
                    log.warning("%s: a passage is longer than %d model windows; only its first part is "
                                "embedded (the keyword index covers all of it)", record.citation, MAX_WINDOWS)
                windows += [(number, a + start, a + end) for start, end in pieces]
            if len(windows) > MAX_RECORD_WINDOWS or len(layout.passages) > MAX_RECORD_WINDOWS:
                cut = windows[MAX_RECORD_WINDOWS][1] if len(windows) > MAX_RECORD_WINDOWS else \
                    layout.passages[MAX_RECORD_WINDOWS][0]
                line, _ = record.lines_of(cut, cut + 1)
                log.warning("%s: the record is longer than %d model windows; from line %s on it is found by "
                            "keyword search only (MAX_RECORD_WINDOWS)", record.citation, MAX_RECORD_WINDOWS, line)
                windows = windows[:MAX_RECORD_WINDOWS]
            layout.windows = windows
            layout.keys = [text_key(record.content[a:b]) for _, a, b in windows]

    def _embed_missing(self, texts: dict[bytes, str], found: dict[bytes, np.ndarray], records: Sequence[Record],
                       keys: Sequence[bytes], owners: np.ndarray, missing: np.ndarray,
                       progress: ProgressCallback) -> None:
        """Embed the texts no index or cache had, in chunks, reporting records completed
        (``missing``: the windows the previous index lacks, a superset of those of ``texts``)."""
        windows_of: dict[bytes, list[int]] = {}
        for window in missing.tolist():
            if keys[window] in texts:
                windows_of.setdefault(keys[window], []).append(window)
        todo_windows = np.fromiter((w for ws in windows_of.values() for w in ws), dtype=np.int64)
        remaining = np.bincount(owners[todo_windows], minlength=len(records))
        # A record is done when all its windows have vectors (a record without windows never is).
        done = int(np.count_nonzero((remaining == 0) & (np.bincount(owners, minlength=len(records)) > 0)))
        progress(done, len(records))
        todo = sorted(texts, key=lambda k: len(texts[k]))  # similar lengths batch with little padding
        for start in range(0, len(todo), EMBED_CHUNK):
            chunk = todo[start:start + EMBED_CHUNK]
            found.update(self._encode_isolating_failures(chunk, texts, records, owners, windows_of))
            done += _count_done(remaining, owners, [w for k in chunk for w in windows_of[k]])
            progress(done, len(records))

    def _encode_isolating_failures(self, chunk: list[bytes], texts: dict[bytes, str], records: Sequence[Record],
                                   owners: np.ndarray, windows_of: dict[bytes, list[int]]) -> dict[bytes, np.ndarray]:
        """Embed a chunk; if it fails, embed text by text so one bad record costs only itself."""
        try:
            return dict(zip(chunk, self.embedder.encode([texts[k] for k in chunk])))
        except Exception as exc:  # the model may raise anything; the spec says keep going
            log.warning("embedding a batch failed (%s); retrying its records one by one", exc)
        vectors: dict[bytes, np.ndarray] = {}
        for key in chunk:
            try:
                vectors[key] = self.embedder.encode([texts[key]])[0]
            except Exception as exc:
                record = records[int(owners[windows_of[key][0]])]
                log.warning("%s: record could not be embedded (%s); it is found by keyword search only",
                            record.citation, exc)
        return vectors


def _passage_sources(old_records: Sequence[Record], old_index: KeywordIndex, records: Sequence[Record],
                     counts: np.ndarray) -> np.ndarray:
    """For each passage of ``records`` (``counts`` a record), the passage of ``old_index`` with the
    same tokens (same record text), or -1: an update recounts only the records that changed."""
    old_of_text = {r.content: i for i, r in enumerate(old_records)}
    # pop: each earlier record lends its passages once (a duplicated text is counted afresh)
    sources = np.fromiter((old_of_text.pop(r.content, -1) for r in records), dtype=np.int64, count=len(records))
    firsts = np.cumsum(counts) - counts
    offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(firsts, counts)
    old_firsts = old_index.first_passages(np.maximum(sources, 0)) if old_index.size else np.zeros_like(sources)
    return np.where(np.repeat(sources, counts) >= 0, np.repeat(old_firsts, counts) + offsets, -1)


def _count_done(remaining: np.ndarray, owners: np.ndarray, windows: list[int]) -> int:
    """Mark windows embedded; return how many records just became complete."""
    if not windows:
        return 0
    records = owners[np.asarray(windows, dtype=np.int64)]
    np.subtract.at(remaining, records, 1)
    return int(np.count_nonzero(remaining[np.unique(records)] == 0))


def timed(started: float) -> float:
    """Seconds since ``started`` (perf_counter), rounded for stats."""
    return round(time.perf_counter() - started, 3)
