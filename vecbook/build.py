"""Building index snapshots, incrementally: sources are re-read only where they changed, a
source that was not re-read is carried into the next build whole (its passages, tokens and
vector rows), a re-read one is laid out again only where its text is new, and vectors are
reused by the hash of the text they embed (from the index in memory, then the on-disk cache)
so that only new text meets the model."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol, Sequence

import numpy as np

from .config import Config
from .embed import EMBED_CHUNK, MAX_WINDOWS, Embedder
from .exports.base import collector_paused
from .index import Counts, KeywordIndex
from .filters import FilterColumns
from .blocks import Block, Keys, Windows, reused_records, taken_windows
from .key_rows import KEY_BYTES
from .records import Record, header_title, record_passages
from .sources import LoadReport, SourceState, block_source, load_sources
from .tokens import Vocabulary, analysis_of, without_sender_emoji
from .rows_file import RowsFile
from .scan_file import ScanFile
from .vector_cache import VectorCache
from .progress import Work
from .spill import LiveVectors, MadeVectors, Todo, todo_of
from .vector_files import FileRows, SplitEntry, SplitPassages, rows_from
from .vector_index import VectorIndex, encode_vectors

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"

ProgressCallback = Callable[[int, int, Work], None]  # records done, of total; the texts embedded
# How one passage's windows were found: (passage number, start, end, text hash, its windows,
# whether they were capped and their text hashes, or None where the tokenizer must cut them,
# and the number of the table that held them, -1 for none).
Planned = tuple[int, int, int, bytes, tuple[Sequence[Sequence[int]], bool, list[bytes]] | None, int]
# A record's model windows packed in one bytes object (``_packed``): their text hashes, then
# each window's (passage number, start, end) in its content as int32. Lists of tuples, ints and
# keys took ~535 bytes a one-window record while a first build cut every record (~0.5 GB at a
# million records); packed, ~180.
Windowed = bytes
# Model windows embedded for one record, at most (~2.2M tokens, some 9 MB of English
# text: minutes of CPU). Past it the rest of the record is found by keyword only,
# with a WARN; without a bound one 500 MB log file would take a day to embed.
MAX_RECORD_WINDOWS = 10_000
# A record's ``Title:`` header counts this many times in the keyword index (its first passage
# holds it once as text and TITLE_WEIGHT - 1 times more): a title names what the record is
# about, as field weights do in BM25F. Chosen with the feedback weight (vecbook.rank) on SciFact's
# 809 train queries (hybrid nDCG@10 0.7423 -> 0.7434 alone, 0.7467 -> 0.7479 beside it; 2 and 3
# alike); records without a title header (chat windows, most notes) are unchanged.
TITLE_WEIGHT = 3
# Records whose passages are cut into model windows at a time (their texts handed to the
# tokenizer together, in its own batches): bounds what the windowing holds beside the records.
WINDOW_CHUNK = 8192


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
    cache: Callable[[], dict[str, Any]] | None = None  # what saving its vectors does to the cache (stats)
    update: dict[str, Any] = field(default_factory=dict)

    def passage_span(self, passage: int) -> tuple[int, int]:
        """(start, end) of a passage in its record's content."""
        return int(self.passages[passage, 0]), int(self.passages[passage, 1])


class EmbeddingObserver(Protocol):
    """What a build tells of its vectors as it makes them (the caches' checkpoints)."""

    def windowed(self, splits: SplitPassages) -> None:
        """The split passages this build cut with the tokenizer or took from the cache file."""

    def embedded(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Vectors the model just made, by the key of their text."""


class Builder:
    """The state one VecBook keeps between builds: what each source held, each distinct
    text's layout, and the keyword vocabulary."""

    def __init__(self, config: Config, embedder: Embedder) -> None:
        self.config = config
        self.embedder = embedder
        self.sources = SourceState()
        self.vocabulary = Vocabulary()
        self.blocks: dict[str, Block] = {}  # by source, as the last keyword snapshot laid them out
        # The last keyword index's term counts (over ``blocks``, in their order): the next
        # build copies those of unchanged sources instead of recounting them.
        self.term_counts: Counts | None = None
        self.read_started_ns = 0  # when the last read began (time.time_ns): see keyword_cache
        # The windows of the split passages of the last build's index (those longer than one
        # model window), so an edited record is not cut by the tokenizer again where its text
        # was not edited; the cache file keeps them for the next start.
        self.splits = SplitPassages()

    def reset(self) -> None:
        """Forget everything read and laid out: the next build starts from scratch."""
        self.sources = SourceState()
        self.blocks = {}
        self.vocabulary = Vocabulary()
        self.term_counts = None
        self.splits = SplitPassages()

    # -- reading and keywords --

    def read(self) -> LoadReport:
        """Re-read what changed since the last read; the rest comes from the state."""
        self.read_started_ns = time.time_ns()
        return load_sources(self.config, self.sources)

    def keyword_snapshot(self, report: LoadReport) -> Snapshot:
        """Passages and the keyword index for ``report``'s records (no vectors yet)."""
        ordered = [(key, self._block(key, records)) for key, records in report.blocks]
        records = report.records
        counts = _concatenate([b.counts for _, b in ordered], np.int64)
        owners = np.repeat(np.arange(len(records)), counts)
        passages = _concatenate([b.passages for _, b in ordered], np.int32).reshape(-1, 2)
        lengths = _concatenate([b.lengths for _, b in ordered], np.int64)
        tokens = [t for _, block in ordered for t in block.tokens or [None] * len(block.passages)]
        reuse = (self.term_counts, self._passage_sources(ordered)) if self.term_counts is not None else None
        keywords = KeywordIndex(tokens, self.config.bm25_k1, self.config.bm25_b, vocabulary=self.vocabulary,
                                owners=owners, reuse=reuse, lengths=lengths)
        for _, block in ordered:
            block.tokens = None  # counted: the index's term counts hold them now
            if block.previous is not None and block.previous.keys is None:
                block.previous = block.origin = None  # no windows to take over (keyword search only, or not yet)
        self.blocks = dict(ordered)  # a source that is gone takes its layout with it
        self.term_counts = keywords.term_counts
        columns = FilterColumns(records, frozenset().union(*(b.metadata_keys for b in self.blocks.values())),
                                sorted(frozenset().union(*(b.sources for b in self.blocks.values()))))
        return Snapshot(records, keywords, columns, report, passages)

    def _block(self, key: str, records: list[Record]) -> Block:
        """The block of one source: the last build's if the source was not re-read; else
        laid out anew, taking each record whose text the source held before as it was (its
        passages; its term counts and windows are taken over from the previous block)."""
        old = self.blocks.get(key)
        if old is not None and old.records is records:
            return old
        reused = reused_records(old, records)
        fresh = [i for i, r in enumerate(reused) if r < 0]
        laid = iter(self._layouts([records[i] for i in fresh], block_source(key)))
        old_firsts = old.firsts if old is not None else np.zeros(1, dtype=np.int64)
        cuts: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        tokens: list[np.ndarray | None] = []
        origin: list[np.ndarray] = []
        for r in reused:
            if r < 0:
                spans, ids = next(laid)
                cuts.append(spans)
                lengths.append(np.fromiter(map(len, ids), dtype=np.int32, count=len(ids)))
                tokens += ids
                origin.append(np.full(len(ids), -1, dtype=np.int64))
            else:
                first, end = int(old_firsts[r]), int(old_firsts[r + 1])
                cuts.append(old.passages[first:end])  # type: ignore[union-attr]
                lengths.append(old.lengths[first:end])  # type: ignore[union-attr]
                tokens += [None] * (end - first)
                origin.append(np.arange(first, end, dtype=np.int64))
        counts = np.fromiter(map(len, cuts), dtype=np.int32, count=len(cuts))
        return Block(records, counts, _concatenate(cuts, np.int32).reshape(-1, 2), _concatenate(lengths, np.int32),
                     tokens, _concatenate(origin, np.int64), old if fresh != list(range(len(records))) else None,
                     read_ns=self.read_started_ns)

    def _layouts(self, records: Sequence[Record], source: str) -> list[tuple[np.ndarray, list[np.ndarray]]]:
        """Passages (an int32 array of character ranges: ``record_passages``, message pieces for
        a chat window) and their token ids for each of ``records`` (tokenized together, with the
        analysis of their ``source``: its collection's language)."""
        cuts = [record_passages(record) for record in records]
        views = [without_sender_emoji(record.content, record.metadata_value("participants")) for record in records]
        texts = [view[a:b] for view, passages in zip(views, cuts) for a, b in passages]
        titled = [(i, title) for i, record in enumerate(records) if (title := header_title(record))]
        encoded = self.vocabulary.encode_texts(texts + [title for _, title in titled], analysis_of(self.config, source))
        tokens = iter(encoded[:len(texts)])
        layouts = [(np.array(passages, dtype=np.int32).reshape(-1, 2), [next(tokens) for _ in passages])
                   for passages in cuts]
        for (i, _), title_ids in zip(titled, encoded[len(texts):]):
            first = layouts[i][1]  # the headers open the record: its first passage holds the title
            first[0] = np.concatenate([first[0], *[title_ids] * (TITLE_WEIGHT - 1)])
        return layouts

    def _passage_sources(self, ordered: Sequence[tuple[str, Block]]) -> np.ndarray:
        """For each passage of ``ordered``, its passage in the last keyword index (an unchanged
        source's passages, in order; a re-read source's passages taken over from its previous
        block), or -1 for a passage laid out anew."""
        firsts, first = {}, 0
        for key, block in self.blocks.items():  # the last index's sources, in its order
            firsts[key] = first
            first += len(block.passages)
        parts = []
        for key, block in ordered:
            if self.blocks.get(key) is block:
                parts.append(np.arange(firsts[key], firsts[key] + len(block.passages)))
            elif block.origin is not None and key in firsts and self.blocks[key] is block.previous:
                parts.append(np.where(block.origin >= 0, block.origin + firsts[key], -1))
            else:
                parts.append(np.full(len(block.passages), -1, dtype=np.int64))
        return _concatenate(parts, np.int64)

    # -- vectors --

    def embed(self, snapshot: Snapshot, previous: VectorIndex | None, cache: VectorCache | None,
              progress: ProgressCallback, observer: EmbeddingObserver | None = None
              ) -> tuple[VectorIndex, dict[str, int], LiveVectors]:
        """The vector index for ``snapshot``: windows of every passage, their vectors taken
        from ``previous`` (same text, same model), then ``cache``, then the model (told to
        ``observer`` as they come). Also returns counts (reused, from_cache, embedded) and
        every live vector by key."""
        records = snapshot.records
        ordered = [(key, self.blocks[key]) for key, _ in snapshot.report.blocks]
        identity = self.embedder.identity
        _forget_foreign_windows([b for _, b in ordered], identity)
        if cache is not None and previous is None:
            # Windows restored from the keyword cache looked no split passage up: the cache's
            # table is kept as it is (those still in use), not written again without them.
            self.splits = self.splits.merged(cache.entries.splits)
        with collector_paused():  # long-lived windows and keys, made by the hundred thousand
            self._window_blocks([b for _, b in ordered if b.keys is None], previous, cache, identity, observer)
        keys = Keys(b"".join(block.keys.joined for _, block in ordered if block.keys is not None))
        owners = np.repeat(np.arange(len(records)), _concatenate([b.windows for _, b in ordered], np.int64))
        spans = _concatenate([b.spans for _, b in ordered], np.int64).reshape(-1, 2)
        # Each window's row in the previous index (-1: not there): an unchanged source's
        # rows are one range, so everything past this line is proportional to the windows
        # that changed, plus numpy passes over the rest.
        reused = _concatenate([_previous_rows(previous, key, block) for key, block in ordered], np.int64) \
            if previous is not None else np.full(len(keys), -1, dtype=np.int64)  # (a first build: one array)
        missing = np.flatnonzero(reused < 0)
        # Each window's row in the cache (-1: none, or in the previous index), looked up at once.
        in_cache, cached = cache.rows_of(keys.at(missing)) if cache is not None else \
            (np.full(len(missing), -1, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
        cache_rows = np.full(len(keys), -1, dtype=np.int64)
        cache_rows[missing] = in_cache
        uncached = missing[in_cache < 0]
        todo = todo_of([keys[w] for w in uncached.tolist()], (), uncached, spans)
        counts = {"reused": _distinct(reused), "from_cache": _distinct(in_cache), "embedded": len(todo.first)}
        # What the model makes, in a temporary file beside the cache (not held in float32).
        found = MadeVectors(len(todo.first), cache.directory if cache is not None else None)
        self._embed_missing(todo, found, records, keys, owners, spans, progress, observer)
        keep = (reused >= 0) | (cache_rows >= 0)
        made = uncached[found.rows_of(keys.at(uncached)) >= 0]
        keep[made] = True
        source = reused[keep]
        dim = self._dimension(reused, keep, cache_rows, cached, keys, found, previous)
        index = VectorIndex.updated(previous, owners[keep], len(records), self.config.similarity_metric,
                                    spans[keep], keys.at(np.flatnonzero(keep)), _placements(ordered, keep), dim,
                                    source, self._fresh_rows(keys, keep, found, cache_rows, cached),
                                    ScanFile(cache.scan_path, cache.identity) if cache is not None else None,
                                    RowsFile(cache.rows_path, cache.identity) if cache is not None else None)
        live = LiveVectors(keys, keep, index, found, made)
        # A split passage is in use while its first window's vector is: the others go.
        # (Looked up in the new index's keys: a dict of every live key is made only by the save.)
        self.splits = live.splits = self.splits.kept(index)
        self.splits.release()  # its lookup tables, until an update looks a passage up again
        return index, counts, live

    def _dimension(self, reused: np.ndarray, keep: np.ndarray, cache_rows: np.ndarray, cached: FileRows | np.ndarray,
                   keys: Keys, found: MadeVectors, previous: VectorIndex | None) -> int:
        """The vectors' dimension: the previous index's, else that of a new vector, else the model's."""
        if previous is not None and bool((reused >= 0).any()):
            return int(previous.vectors.shape[1])
        windows = np.flatnonzero(keep & (reused < 0))
        if not len(windows):
            return self.embedder.dimension
        return int(cached.shape[1]) if cache_rows[int(windows[0])] >= 0 else found.dimension

    def _fresh_rows(self, keys: Keys, keep: np.ndarray, found: MadeVectors, cache_rows: np.ndarray,
                    cached: FileRows | np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """The float16 rows of kept windows the previous index lacks (by their row in the new
        index), made from ``found`` or the cache's rows (``cache_rows``, read from ``cached``),
        normalised and encoded a block at a time: gathering all of them first held three float32
        copies of every new vector at once (450 MB at the end of a first build of 100k records),
        and a warm start reads the cache file's vectors only a block at a time."""
        kept = np.flatnonzero(keep)
        metric = self.config.similarity_metric

        def rows(positions: np.ndarray) -> np.ndarray:
            windows = kept[positions]
            stored = cache_rows[windows]
            from_cache = stored >= 0
            model = np.flatnonzero(~from_cache)
            dim = int(cached.shape[1]) if bool(from_cache.any()) else found.dimension
            vectors = np.empty((len(windows), dim), dtype=np.float32)
            if bool(from_cache.any()):
                vectors[from_cache] = rows_from(cached, stored[from_cache])
            if len(model):
                vectors[model] = found.take([keys[int(w)] for w in windows[model].tolist()])
            return encode_vectors(vectors, metric)

        return rows

    def _window_blocks(self, blocks: Sequence[Block], previous: VectorIndex | None, cache: VectorCache | None,
                       identity: str, observer: EmbeddingObserver | None = None) -> None:
        """Cut the passages of ``blocks`` into model windows (a record taken over from its
        source's previous block keeps the windows it had there) and note each block's window
        keys, counts and spans, cut by the embedder of ``identity``."""
        def known(keys: list[bytes]) -> np.ndarray:
            found = np.zeros(len(keys), dtype=bool)
            if cache is not None:
                found |= cache.entries.rows.rows_of(keys) >= 0
            if previous is not None:
                found |= previous.rows_of(keys) >= 0
            return found

        plans = [taken_windows(block) for block in blocks]
        todo = []
        for block, taken_over in zip(blocks, plans):
            firsts = block.firsts
            todo += [(record, block.passages[firsts[i]:firsts[i + 1]])
                     for i, (record, window_range) in enumerate(zip(block.records, taken_over)) if window_range is None]
        tables = [self.splits, cache.entries.splits] if cache is not None else [self.splits]
        made, taken, cut = self._window(todo, known, tables)
        self.splits = self.splits.merged(SplitPassages.of(taken + cut))
        if observer is not None:
            observer.windowed(SplitPassages.of(cut))
        windowed = iter(made)
        for block, taken_over in zip(blocks, plans):
            old = block.previous
            keys: list[bytes] = []
            counts, spans, numbers = [], [], []
            for window_range in taken_over:
                if window_range is None:
                    window_keys, table = _unpacked(next(windowed))
                    spans.append(table[:, 1:])
                    numbers.append(table[:, 0])
                    keys.append(window_keys)
                    counts.append(len(table))
                else:
                    first, end = window_range
                    keys.append(old.keys[first:end].joined)  # type: ignore[union-attr,index]
                    spans.append(old.spans[first:end])  # type: ignore[union-attr,index]
                    numbers.append(old.window_passages[first:end])  # type: ignore[union-attr,index]
                    counts.append(end - first)
            block.windowed = Windows(Keys(b"".join(keys)), np.array(counts, dtype=np.int32),
                                     _concatenate(spans, np.int32).reshape(-1, 2), _concatenate(numbers, np.int32),
                                     identity)
            block.previous = block.origin = None  # taken over: the previous block can go

    def _window(self, todo: Sequence[tuple[Record, np.ndarray]], known: Callable[[list[bytes]], np.ndarray],
                tables: Sequence[SplitPassages]) -> tuple[list[Windowed], list[SplitEntry], list[SplitEntry]]:
        """Model windows ((passage number, start, end) in the content) and their keys for each
        (record, passages) of ``todo``. The tokenizer runs once per distinct text, and not at all
        for a passage whose whole text ``known`` has a vector for (it was embedded as one window),
        whose windows one of ``tables`` holds (a split passage embedded before), or that lies
        past the record's MAX_RECORD_WINDOWS. Also returns the split passages met that
        ``tables[0]`` (the builder's own) lacks: those another table held, and those the
        tokenizer cut."""
        # Keyed by a hash of the text and the passages: a chat window's passages are its message
        # pieces, so the same text with other message starts is cut apart. (Keyed by the text
        # itself, a first build held every record's content at once, read back from the keyword
        # cache: ~0.8 GB at a million records.)
        key_of = VectorCache.key
        names = [key_of(record.content) + passages.tobytes() for record, passages in todo]
        distinct = list(dict(zip(names, todo)).items())
        taken: list[SplitEntry] = []
        cut: list[SplitEntry] = []
        made: dict[bytes, Windowed] = {}
        # A chunk of records at a time: the texts handed to the tokenizer at once were every
        # passage's at a first build (~0.8 GB more).
        for start in range(0, len(distinct), WINDOW_CHUNK):
            self._window_chunk(distinct[start:start + WINDOW_CHUNK], known, tables, made, taken, cut)
        return [made[name] for name in names], taken, cut

    def _window_chunk(self, distinct: Sequence[tuple[bytes, tuple[Record, np.ndarray]]],
                      known: Callable[[list[bytes]], np.ndarray], tables: Sequence[SplitPassages],
                      made: dict[bytes, Windowed], taken: list[SplitEntry], cut: list[SplitEntry]) -> None:
        """``_window`` for some distinct (name, (record, passages)): their windows into ``made``
        by name, the split passages they meet into ``taken`` and ``cut``."""
        key_of = VectorCache.key
        contents = [record.content for _, (record, _) in distinct]  # once each (a stored one is read back)
        # Every passage makes at least one window, so passages past the bound are never embedded.
        cuts = [passages[:MAX_RECORD_WINDOWS].tolist() for _, (_, passages) in distinct]
        keys = [key_of(content[a:b]) for content, spans in zip(contents, cuts) for a, b in spans]
        whole = iter(known(keys).tolist())
        passage_keys = iter(keys)
        plans = [_planned(spans, passage_keys, whole, tables) for spans in cuts]
        split = iter(self.embedder.window_spans_many(
            [content[a:b] for content, plan in zip(contents, plans) for _, a, b, _, found, _ in plan if found is None]))
        for (name, (record, passages)), content, plan in zip(distinct, contents, plans):
            windows: list[tuple[int, int, int]] = []
            window_keys: list[bytes] = []
            for number, a, b, key, found, table in plan:
                if found is None:
                    pieces, capped = next(split)
                    # A window that is the whole passage has the passage's hash, taken already.
                    hashes = [key] if pieces == [(0, b - a)] else \
                        [key_of(content[a + start:a + end]) for start, end in pieces]
                else:
                    pieces, capped, hashes = found
                if capped:
                    log.warning("%s: a passage is longer than %d model windows; only its first part is "
                                "embedded (the keyword index covers all of it)", record.citation, MAX_WINDOWS)
                if len(pieces) > 1 and table != 0:
                    (cut if table < 0 else taken).append((key, pieces, hashes, capped))
                windows += [(number, a + start, a + end) for start, end in pieces]
                window_keys += hashes
            if len(windows) > MAX_RECORD_WINDOWS or len(plan) < len(passages):
                bound = windows[MAX_RECORD_WINDOWS][1] if len(windows) > MAX_RECORD_WINDOWS else \
                    int(passages[len(plan)][0])
                line, _ = record.lines_of(bound, bound + 1)
                log.warning("%s: the record is longer than %d model windows; from line %s on it is found by "
                            "keyword search only (MAX_RECORD_WINDOWS)", record.citation, MAX_RECORD_WINDOWS, line)
                windows, window_keys = windows[:MAX_RECORD_WINDOWS], window_keys[:MAX_RECORD_WINDOWS]
            made[name] = _packed(windows, window_keys)

    def _embed_missing(self, todo: Todo, found: MadeVectors, records: Sequence[Record], keys: Sequence[bytes],
                       owners: np.ndarray, spans: np.ndarray, progress: ProgressCallback,
                       observer: EmbeddingObserver | None = None) -> None:
        """Embed the texts of ``todo`` in chunks into ``found``, reporting records completed (and
        the texts embedded, ``Work``) and telling ``observer`` each chunk's vectors. Each chunk's texts are cut from their records
        as it is embedded: a dict of every text to embed held ~0.5 GB at a million records."""
        remaining = np.bincount(owners[todo.windows], minlength=len(records))
        # A record is done when all its windows have vectors (a record without windows never is).
        done = int(np.count_nonzero((remaining == 0) & (np.bincount(owners, minlength=len(records)) > 0)))
        # The pace is counted in texts and characters: one long record is thousands of windows.
        chars = np.concatenate([[0], np.cumsum(spans[todo.first, 1] - spans[todo.first, 0])]).tolist()
        work = Work(0, len(todo.first), 0, int(chars[-1]))
        progress(done, len(records), work)
        starts = np.concatenate([[0], todo.ends])
        for start in range(0, len(todo.first), EMBED_CHUNK):
            end = min(start + EMBED_CHUNK, len(todo.first))
            vectors = self._encode_isolating_failures(todo.first[start:end].tolist(), records, keys, owners, spans)
            found.add(vectors)
            done += _count_done(remaining, owners, todo.windows[starts[start]:starts[end]].tolist())
            work = Work(end, work.windows_total, int(chars[end]), work.chars_total)
            progress(done, len(records), work)
            if observer is not None:
                observer.embedded(vectors)

    def _encode_isolating_failures(self, windows: list[int], records: Sequence[Record], keys: Sequence[bytes],
                                   owners: np.ndarray, spans: np.ndarray) -> dict[bytes, np.ndarray]:
        """Embed the texts of ``windows`` (one window per text); if that fails, embed text by
        text so one bad record costs only itself."""
        contents: dict[int, str] = {}  # a record's content once per chunk (a stored one is read back)

        def text(window: int) -> str:
            owner = int(owners[window])
            if owner not in contents:
                contents[owner] = records[owner].content
            return contents[owner][int(spans[window, 0]):int(spans[window, 1])]

        texts = [text(w) for w in windows]
        chunk = [keys[w] for w in windows]
        try:
            return dict(zip(chunk, self.embedder.encode(texts)))
        except Exception as exc:  # the model may raise anything; the spec says keep going
            log.warning("embedding a batch failed (%s); retrying its records one by one", exc)
        vectors: dict[bytes, np.ndarray] = {}
        for window, key, one in zip(windows, chunk, texts):
            try:
                vectors[key] = self.embedder.encode([one])[0]
            except Exception as exc:
                log.warning("%s: record could not be embedded (%s); it is found by keyword search only",
                            records[int(owners[window])].citation, exc)
        return vectors


def _planned(spans: Sequence[Sequence[int]], keys: Iterator[bytes], whole: Iterator[bool],
             tables: Sequence[SplitPassages]) -> list[Planned]:
    """How each passage of a record (``spans``, with the next of ``keys`` and ``whole`` for
    each) finds its windows: one window where ``whole`` says a vector for its whole text is
    known (windows never exceed the model's limit), those of the first of ``tables`` that holds
    it, else the tokenizer's (None). Passages whose windows would all lie past the record's
    MAX_RECORD_WINDOWS are left out: a huge record's tail is never embedded, and so never
    tokenized either once the windows before it are known (their keys and flags are still
    taken from the iterators, which run over every passage of ``spans``)."""
    plan: list[Planned] = []
    lookups = [(number, splits.get) for number, splits in enumerate(tables) if len(splits)]
    windows = 0  # the record's windows so far, at least (a passage left to the tokenizer makes one or more)
    for number, ((a, b), key, hit) in enumerate(zip(spans, keys, whole)):
        if windows >= MAX_RECORD_WINDOWS:
            continue
        found, table = (([(0, b - a)], False, [key]), -1) if hit else (None, -1)
        for number_of_table, get in lookups if found is None else ():
            found = get(key)
            if found is not None:
                table = number_of_table
                break
        plan.append((number, a, b, key, found, table))
        windows += len(found[0]) if found is not None else 1
    return plan


def _packed(windows: Sequence[tuple[int, int, int]], keys: Sequence[bytes]) -> Windowed:
    """A record's windows and their keys in one bytes object (see ``Windowed``)."""
    return b"".join(keys) + np.array(windows, dtype=np.int32).reshape(-1, 3).tobytes()


def _unpacked(packed: Windowed) -> tuple[bytes, np.ndarray]:
    """(the keys joined, an int32 (windows, 3) array of passage number, start, end) of ``_packed``."""
    count = len(packed) // (KEY_BYTES + 12)
    return packed[:KEY_BYTES * count], np.frombuffer(packed, dtype=np.int32, offset=KEY_BYTES * count).reshape(-1, 3)


def _forget_foreign_windows(blocks: Sequence[Block], identity: str) -> None:
    """Drop the windows another embedder cut (restored from a keyword cache written with another
    model, precision or window size) from ``blocks`` and their previous blocks: they are cut again."""
    for block in blocks:
        for laid in (block, block.previous):
            if laid is not None and laid.windowed is not None and laid.windowed.identity != identity:
                laid.windowed = None


def _previous_rows(previous: VectorIndex | None, key: str, block: Block) -> np.ndarray:
    """The row in ``previous`` of each window of ``block`` (-1 where it has none): one range
    when the source is unchanged since ``previous`` was built, else a lookup per window."""
    keys = block.keys or Keys()
    placed = previous.placed.get(key) if previous is not None else None
    if placed is not None and placed[0] is block.records and placed[2] == len(keys):
        return np.arange(placed[1], placed[1] + placed[2], dtype=np.int64)
    if previous is None:
        return np.full(len(keys), -1, dtype=np.int64)
    # An edited source: its windows are looked up among its own earlier rows first (an edit
    # leaves most of a file as it was), then anywhere (a text moved in from another file).
    own = {} if placed is None else dict(zip(previous.keys_of(placed[1], placed[1] + placed[2]),
                                             range(placed[1], placed[1] + placed[2])))

    def row(key: bytes) -> int:
        found = own.get(key)
        if found is None:
            found = previous.row_of(key)
        return -1 if found is None else found

    return np.fromiter(map(row, keys), dtype=np.int64, count=len(keys))


def _placements(ordered: Sequence[tuple[str, Block]], keep: np.ndarray) -> dict[str, tuple[list[Record], int, int]]:
    """Each source's (records, first row, rows) in the index being built, for sources all of whose
    windows have vectors (the next build copies such a source's rows as one range)."""
    sizes = np.array([len(b.keys or ()) for _, b in ordered], dtype=np.int64)
    ends = np.cumsum(sizes)
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    placed = {}
    for (key, block), size, end in zip(ordered, sizes.tolist(), ends.tolist()):
        first_row, rows = int(kept_before[end - size]), int(kept_before[end] - kept_before[end - size])
        if rows == size:
            placed[key] = (block.records, first_row, rows)
    return placed


def _distinct(rows: np.ndarray) -> int:
    """How many distinct rows ``rows`` names (-1: none), counted by marking each rather than
    sorting (a million of a warm start's cache rows)."""
    named = rows[rows >= 0]
    if not len(named):
        return 0
    marked = np.zeros(int(named.max()) + 1, dtype=bool)
    marked[named] = True
    return int(np.count_nonzero(marked))


def _concatenate(parts: Sequence[np.ndarray | None], dtype: type) -> np.ndarray:
    """``np.concatenate`` that also takes no parts (an empty build)."""
    arrays = [p for p in parts if p is not None]
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)


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
