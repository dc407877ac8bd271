"""Indexes: BM25 keyword scoring from numpy postings (over the terms of ``tokens``), and the
FAISS vector index (``vector_index``, whose names are also found here).

An update's keyword index does not copy the postings it was built on: it keeps them as they
are (its main postings, in their own passage numbers), with where each of their passages is now
(-1: deleted or edited) and a small delta of the postings of passages counted since
(``LayeredCounts``). Scores add the delta's postings to the main ones, and the BM25 statistics
(N, the mean length, each query term's document frequency) are those of the live passages, so
they are the scores a build from scratch gives. The delta is folded into new main postings
(compacted) when it passes DELTA_SHARE of the passages, or by the keyword cache's background
save, never on the search path."""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import NamedTuple, Sequence

import numpy as np

from .keyword_chars import character_terms, character_tid, is_word_character
from .keyword_counts import Counts, LayeredCounts, Layers, TermCounts, compacted, narrowed, padded
from .tokens import Vocabulary
# Re-exported: the vector index lived here.
from .vector_index import APPROXIMATE_FROM, VectorIndex, encode_vectors, search_on_this_thread, top_k  # noqa: F401

# An update keeps its keyword postings layered (main + delta, deleted passages masked) while the
# passages of the delta and those masked in the main postings number at most this share of the
# main postings' passages (or DELTA_PASSAGES); past it the update compacts them into new main
# postings, which at a million records copies every posting (~1-2 s on a laptop core).
DELTA_SHARE = 0.05
DELTA_PASSAGES = 4096
# The word characters whose joined postings an index keeps (``KeywordIndex.character_postings``):
# 8 bytes a passage holding one, at most 25 MB for the most common 32 at a million passages.
CHARACTER_MEMO = 32
# The distinct one-character terms of a query looked for inside bigrams; those past it match only
# where they stand alone. Each costs a scan of the vocabulary's pairs and its postings joined (at
# 100,000 records up to ~20 ms): a pasted text with a space between its characters would else
# cost seconds.
QUERY_CHARACTERS = 16


class QueryTerm(NamedTuple):
    """A query term found in the index: its id, postings (passages, counts), idf, and how
    many times the query repeats it (its weights count that many times)."""

    tid: int
    docs: np.ndarray
    tf: np.ndarray
    idf: float
    repeat: int


class KeywordIndex:
    """BM25Okapi scores (rank-bm25's term weighting) answered from numpy postings.

    The documents are passages; ``owners`` maps each passage to its record
    (non-decreasing, at least one passage a record), and a record scores as its
    best passage. Without ``owners`` every document is a record of its own.

    rank-bm25's ``get_scores`` loops in Python over every document; here each
    term keeps a postings array of (document, count), weighed when a query reads it,
    so a query costs one vectorised add per query term. With ``idf="okapi"`` the scores
    equal ``BM25Okapi.get_scores`` exactly (``tests/test_index.py`` checks it).

    The default ``idf="lucene"`` is log(1 + (N - n + 0.5) / (n + 0.5)), Lucene's
    and Wikipedia's smoothed form. rank-bm25's own idf is zero for a term in
    exactly half the documents and negative above that (rank_bm25 issues #39,
    #43), so in a folder of two notes a word found in one of them scores
    nothing. Everything else (k1, b, length normalisation) is BM25Okapi's.
    """

    def __init__(self, documents: Sequence[Sequence[str]] | Sequence[np.ndarray | None], k1: float = 1.5,
                 b: float = 0.75, epsilon: float = 0.25, idf: str = "lucene",
                 vocabulary: Vocabulary | None = None, owners: np.ndarray | None = None,
                 reuse: tuple[Counts, np.ndarray] | None = None, lengths: np.ndarray | None = None) -> None:
        """``documents`` are token lists, or token-id arrays of ``vocabulary`` (None for a passage
        whose counts ``reuse`` copies: then ``lengths`` gives every passage's token count).

        Args:
            reuse: (an earlier index's ``term_counts`` over the same ``vocabulary``, ``source``): passage
                p has the tokens of that index's passage ``source[p]`` (-1: new tokens), each earlier passage
                named at most once. Those passages' term counts are taken over instead of recounted
                (kept in place beside a delta of the new ones, ``LayeredCounts``); the scores equal a
                build from scratch, since idf and lengths are those of the passages now.
        """
        self.k1, self.b, self.epsilon, self.idf_kind = k1, b, epsilon, idf
        if vocabulary is None:
            vocabulary = Vocabulary()
            documents = [vocabulary.encode(list(d)) for d in documents]
        self.vocabulary = vocabulary
        self.n_passages = len(documents)
        self.owners = np.arange(self.n_passages) if owners is None else np.asarray(owners, dtype=np.int64)
        self.size = int(self.owners[-1]) + 1 if len(self.owners) else 0  # records
        self._starts = np.searchsorted(self.owners, np.arange(self.size))  # each record's first passage
        self.lengths = np.asarray(lengths, dtype=np.int64) if lengths is not None else \
            np.fromiter(map(len, documents), dtype=np.int64, count=self.n_passages)
        self.n_terms = len(vocabulary)
        if reuse is not None and reuse[0].vocabulary is vocabulary:
            counts = self._updated_counts(documents, *reuse)
        else:
            terms, docs, tf = self._count_pairs(documents, np.arange(self.n_passages, dtype=np.int64))
            indptr = np.concatenate([[0], np.cumsum(np.bincount(terms, minlength=self.n_terms))])
            counts = TermCounts(vocabulary, self.n_passages, None, docs.astype(np.int32, copy=False), narrowed(tf),
                                indptr.astype(np.int64))
        self._counts: Counts = counts
        lengths_f = self.lengths.astype(np.float64)
        avgdl = lengths_f.mean() if self.n_passages and lengths_f.sum() else 1.0
        # Each passage's length normalisation; a posting's weight is made from it, its count
        # and its term's idf when a query reads the posting, rather than kept (8 bytes a
        # posting: 40 MB at 100k records); the same operations give the same numbers.
        self.norms = self.k1 * (1 - self.b + self.b * lengths_f / avgdl)
        self._whole_idf: tuple[TermCounts, np.ndarray] | None = None
        if isinstance(counts, TermCounts):
            self._idf_of(counts)

    def _count_pairs(self, documents: Sequence[np.ndarray],
                     numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term, document, count) of every distinct pair in the documents ``numbers`` (ascending),
        ordered by term, then document: the postings order, so no second sort is needed. Counted
        COUNT_BLOCK tokens of documents at a time, each block's pairs placed by a counting sort
        on their terms: one np.unique over every token's int64 key held ~45 bytes a token at once
        (~1.7 GB for a first build of a million records)."""
        lengths = self.lengths[numbers]
        if not len(numbers) or not int(lengths.sum()):
            empty = np.zeros(0, dtype=np.int32)
            return empty, empty, empty
        width = max(self.n_passages, 1)
        ends = np.cumsum(lengths)
        cuts = np.unique(np.concatenate([[0], np.searchsorted(ends, np.arange(COUNT_BLOCK, int(ends[-1]), COUNT_BLOCK),
                                                              "right"), [len(numbers)]]))
        blocks = []  # each block's (per-term pair counts, documents, counts): its terms follow from the first
        for first, end in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            token_ids = np.concatenate([np.asarray(documents[i], dtype=np.int64) for i in numbers[first:end].tolist()])
            # Count pairs with one np.unique over term-major keys rather than a Counter per
            # document: 5x faster at 100k, and the sorted keys are the block's postings order.
            keys, counts = np.unique(token_ids * width + np.repeat(numbers[first:end], lengths[first:end]),
                                     return_counts=True)
            del token_ids
            terms, docs = np.divmod(keys, width)
            blocks.append((np.bincount(terms, minlength=self.n_terms), docs.astype(np.int32), counts.astype(np.int32)))
        # Blocks hold ascending documents, so each term's pairs go block after block.
        per_term = np.sum([here for here, _, _ in blocks], axis=0)
        out_terms = np.repeat(np.arange(self.n_terms, dtype=np.int32), per_term)
        placed = np.concatenate([[0], np.cumsum(per_term)])[:-1]  # each term's next free slot
        out_docs, out_counts = np.empty(len(out_terms), dtype=np.int32), np.empty(len(out_terms), dtype=np.int32)
        blocks.reverse()
        while blocks:  # each block let go once placed
            here, docs, counts = blocks.pop()
            terms = np.repeat(np.arange(self.n_terms), here)
            at = placed[terms] + np.arange(len(terms)) - (np.cumsum(here) - here)[terms]
            out_docs[at], out_counts[at] = docs, counts
            placed += here
        return out_terms, out_docs, out_counts

    def _updated_counts(self, documents: Sequence[np.ndarray | None], previous: Counts,
                        source: np.ndarray) -> Counts:
        """This index's counts from ``previous``'s (see ``reuse``): the main postings ``previous``
        was built on kept as they are, their passages renumbered (``placed``) and a delta of the
        passages laid out since; compacted into whole counts once the delta and the gone passages
        pass DELTA_SHARE of the main passages (and always for okapi idf, whose floor is a mean
        over every term's idf)."""
        source = np.asarray(source, dtype=np.int64)
        state = previous.state if isinstance(previous, LayeredCounts) else previous
        if isinstance(state, TermCounts) and len(source) == state.n_passages and \
                bool(np.all(source == np.arange(len(source)))):
            # Every passage as it was (a restart from the keyword cache): the counts as they are.
            return padded(state, self.n_terms)
        main, placed, delta = (state, None, None) if isinstance(state, TermCounts) else state
        to_new = np.full(previous.n_passages, -1, dtype=np.int32)  # earlier passage -> its number now
        copied = np.flatnonzero(source >= 0)
        to_new[source[copied]] = copied
        if placed is None:
            placed = to_new
        else:  # a main passage still live takes its number now; one gone before stays gone
            live = placed >= 0
            renumbered = np.full(len(placed), -1, dtype=np.int32)
            renumbered[live] = to_new[placed[live]]  # none live when every passage was deleted
            placed = renumbered
        fresh = self._count_pairs(documents, np.flatnonzero(source < 0))
        new_delta = self._delta(delta, to_new, fresh)
        live = int(np.count_nonzero(placed >= 0))
        changed = (self.n_passages - live) + (main.n_passages - live)  # delta passages, and main ones masked
        if self.idf_kind != "lucene" or changed > max(DELTA_PASSAGES, DELTA_SHARE * main.n_passages):
            return compacted(main, placed, new_delta)
        return LayeredCounts(main, placed, new_delta)

    def _delta(self, delta: TermCounts | None, to_new: np.ndarray,
               fresh: tuple[np.ndarray, np.ndarray, np.ndarray]) -> TermCounts:
        """The delta counts of this index: the earlier delta's pairs of passages still here
        (renumbered), with ``fresh``'s (term, passage, count) triples, in postings order."""
        terms, docs, tf = (np.asarray(part, dtype=np.int64) for part in fresh)
        if delta is not None and len(delta.doc_ids):
            carried = to_new[delta.doc_ids]
            kept = carried >= 0
            terms = np.concatenate([delta.terms[kept].astype(np.int64), terms])
            docs = np.concatenate([carried[kept].astype(np.int64), docs])
            tf = np.concatenate([delta.tf[kept].astype(np.int64), tf])
            order = np.lexsort((docs, terms))
            terms, docs, tf = terms[order], docs[order], tf[order]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(terms, minlength=self.n_terms))]).astype(np.int64)
        return TermCounts(self.vocabulary, self.n_passages, None, docs.astype(np.int32), narrowed(tf), indptr)

    def _idf_of(self, counts: TermCounts) -> np.ndarray:
        """Every term's idf for whole ``counts`` (kept for the counts last asked about)."""
        held = self._whole_idf
        if held is not None and held[0] is counts:
            return held[1]
        idf = self._idf(np.diff(counts.indptr).astype(np.float64))
        if self.idf_kind != "lucene" and len(idf):
            # rank-bm25 floors negative idf (terms in over half the documents)
            # at epsilon times the mean idf.
            idf[idf < 0] = self.epsilon * idf.mean()
        self._whole_idf = (counts, idf)
        return idf

    def _idf(self, df: np.ndarray) -> np.ndarray:
        """The idf of terms in ``df`` passages (float64; okapi's before its floor)."""
        if self.idf_kind == "lucene":
            return np.log1p((self.n_passages - df + 0.5) / (df + 0.5))
        return np.log(self.n_passages - df + 0.5) - np.log(df + 0.5)

    def _state(self) -> TermCounts | Layers:
        """The counts searches read now: whole, or layers (read once per query)."""
        counts = self._counts
        return counts.state if isinstance(counts, LayeredCounts) else counts

    def _whole(self) -> TermCounts:
        """This index's counts, compacted if layered."""
        counts = self._counts
        return counts.whole() if isinstance(counts, LayeredCounts) else counts

    @property
    def doc_ids(self) -> np.ndarray:
        """Every posting's passage, in postings order (of the counts compacted, if layered)."""
        return self._whole().doc_ids

    @property
    def tf(self) -> np.ndarray:
        """Every posting's count, in postings order."""
        return self._whole().tf

    @property
    def indptr(self) -> np.ndarray:
        """Each term's first posting (and one past the last)."""
        return np.asarray(self._whole().indptr, dtype=np.int64)

    @property
    def idf(self) -> np.ndarray:
        """Every term's idf (tests and tools)."""
        return self._idf_of(self._whole())

    @property
    def layered(self) -> bool:
        """Whether this index's postings are still main + delta (not compacted)."""
        return isinstance(self._state(), tuple)

    def _term_postings(self, state: TermCounts | Layers, tid: int) -> tuple[np.ndarray, np.ndarray, float]:
        """The (passages, counts) of term ``tid`` in the passages now, and its idf."""
        if isinstance(state, TermCounts):
            docs, tf = state.postings(tid)
            return docs, tf, float(self._idf_of(state)[tid]) if len(docs) else 0.0
        main, placed, delta = state
        docs, tf = main.postings(tid)
        docs = np.take(placed, docs)  # np.take: faster than fancy indexing, as in _weights
        kept = docs >= 0
        if not bool(kept.all()):
            docs, tf = docs[kept], tf[kept]
        more_docs, more_tf = delta.postings(tid)
        if len(more_docs):
            docs, tf = np.concatenate([docs, more_docs]), np.concatenate([tf, more_tf.astype(tf.dtype)])
        # The idf of the live passages' frequency, made as a whole build makes it (an array).
        return docs, tf, float(self._idf(np.array([len(docs)], dtype=np.float64))[0]) if len(docs) else 0.0

    def _weights(self, docs: np.ndarray, tf: np.ndarray, idf: float, out: np.ndarray | None = None) -> np.ndarray:
        """The BM25 weights of one term's postings (passages ``docs``, counts ``tf``), into ``out`` if given."""
        # counts / (counts + norm) * (idf * (k1 + 1)) in place: two temporaries and four passes,
        # and np.take, which gathers faster than fancy indexing (0.34 -> 0.22 ms for a query's
        # terms at 100k records; the weights agree with rank-bm25's to 1e-12).
        counts = np.empty(len(tf), dtype=np.float64) if out is None else out
        counts[:] = tf
        denominator = np.take(self.norms, docs)
        denominator += counts
        np.divide(counts, denominator, out=counts)
        counts *= idf * (self.k1 + 1)
        return counts

    @property
    def weights(self) -> np.ndarray:
        """Every posting's weight, in postings order (made on demand: tests and tools)."""
        whole = self._whole()
        idf = self._idf_of(whole)
        parts = [self._weights(*whole.postings(t), float(idf[t])) for t in range(len(whole.indptr) - 1)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)

    @property
    def term_counts(self) -> Counts:
        """This index's term counts, for a later index's ``reuse`` (and the keyword cache)."""
        return self._counts

    def _term(self, term: str) -> int | None:
        """The term's id if the vocabulary holds it (ids stay valid across builds: it also names
        terms added since this index was built, and terms whose every passage has since been
        deleted, which score nothing, as in an index built from scratch)."""
        tid = self.vocabulary.ids.get(term)
        return tid if tid is not None and tid < self.n_terms else None

    def postings_of(self, tokens: Sequence[str]) -> list[QueryTerm]:
        """The query's distinct terms that occur in some passage now, in the order of their
        first token (the order their weights are added in), each with its postings and idf; the
        first QUERY_CHARACTERS ideographs and Hangul syllables alone joined with the bigrams
        holding them (``character_postings``)."""
        state = self._state()
        found = []
        characters = 0
        for term, repeat in Counter(tokens).items():
            if is_word_character(term) and characters < QUERY_CHARACTERS:  # 伞 alone: its bigrams too
                characters += 1
                tid = character_tid(term)
                docs, tf, idf = self.character_postings(state, term)
            else:
                tid = self._term(term)
                if tid is None:
                    continue
                docs, tf, idf = self._term_postings(state, tid)
            if len(docs):
                found.append(QueryTerm(tid, docs, tf, idf, repeat))
        return found

    def character_postings(self, state: TermCounts | Layers, char: str) -> tuple[np.ndarray, np.ndarray, float]:
        """The postings of one word character (an ideograph, a Hangul syllable) as one term: every
        passage holding it alone or in a bigram (exactly those), its count there the larger of its
        bigrams' counts that begin and that end with it, plus its lone occurrences (a lower bound:
        a character ending one run and beginning the next, 带伞。伞很, counts once; bigrams do not
        say where a run ends); and its idf. Kept for the last
        CHARACTER_MEMO characters queried (the index never changes: an update is a new index)."""
        memo = self._characters
        if char in memo:
            return memo[char]
        starting, ending = character_terms(self.vocabulary).of(self.vocabulary, char, self.n_terms)
        lone = self._term(char)
        counts = [self._summed_counts(state, tids) for tids in (starting, ending, [] if lone is None else [lone])]
        tf = np.maximum(counts[0], counts[1]) + counts[2]
        docs = np.flatnonzero(tf).astype(np.int32)
        idf = float(self._idf(np.array([len(docs)], dtype=np.float64))[0]) if len(docs) else 0.0
        found = memo[char] = (docs, tf[docs].astype(np.int32), idf)
        while len(memo) > CHARACTER_MEMO:
            memo.pop(next(iter(memo)), None)  # another search may have let it go
        return found

    def _summed_counts(self, state: TermCounts | Layers, tids: Sequence[int]) -> np.ndarray:
        """Each passage's count of the terms ``tids`` together (a dense array over the passages)."""
        if isinstance(state, TermCounts):  # every term's postings gathered at once, not term by term
            docs, tf = state.gathered(tids)
        else:  # the main postings' (renumbered, those of gone passages dropped) and the delta's
            main, placed, delta = state
            docs, tf = main.gathered(tids)
            docs = np.take(placed, docs)
            kept = docs >= 0
            more_docs, more_tf = delta.gathered(tids)
            docs, tf = np.concatenate([docs[kept], more_docs]), np.concatenate([tf[kept], more_tf])
        return np.bincount(docs, weights=tf, minlength=self.n_passages).astype(np.int64)

    @cached_property
    def _characters(self) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
        """``character_postings`` of the characters queried lately, oldest first."""
        return {}

    def term_weights(self, term: QueryTerm, docs: np.ndarray | None = None,
                     tf: np.ndarray | None = None) -> np.ndarray:
        """``term``'s BM25 weights (times its repeats in the query) at its postings, or at the
        postings (passages ``docs``, counts ``tf``) given: the same numbers either way."""
        weights = self._weights(term.docs if docs is None else docs, term.tf if tf is None else tf, term.idf)
        return weights if term.repeat == 1 else term.repeat * weights

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document (passage) for the query tokens (0 where no token occurs)."""
        terms = self.postings_of(tokens)
        if not terms:
            return np.zeros(self.n_passages, dtype=np.float64)
        # One bincount over the query's postings makes the same additions in the same order
        # (from zero, term by term) as adding each term's postings into a zeroed array, so the
        # sums are bit for bit the same, in half the time: at 100k passages 0.34 ms against
        # 0.67 ms (a fancy-indexed add gathers and scatters once per term). The passages are joined
        # in numpy's index type (gathers convert to it) and weighed in place: 7% less at a million.
        docs = np.concatenate([term.docs for term in terms], dtype=np.intp)
        weights = np.empty(len(docs), dtype=np.float64)
        start = 0
        for term in terms:
            end = start + len(term.docs)
            part = self._weights(docs[start:end], term.tf, term.idf, weights[start:end])
            if term.repeat != 1:
                part *= term.repeat  # as term_weights multiplies them
            start = end
        return np.bincount(docs, weights=weights, minlength=self.n_passages)

    def scores_at(self, terms: Sequence[QueryTerm], passages: np.ndarray) -> np.ndarray:
        """The ``scores`` of the passages ``passages`` (ascending) alone, bit for bit: each term's
        weight where it occurs, added from zero in the query's term order, as ``scores`` adds them.
        Each term's postings are searched (ascending passages: see ``sorted_postings``)."""
        total = np.zeros(len(passages), dtype=np.float64)
        for term in terms:
            at = np.searchsorted(term.docs, passages.astype(term.docs.dtype, copy=False))
            found = np.flatnonzero(np.take(term.docs, np.minimum(at, len(term.docs) - 1)) == passages)
            if len(found):
                total[found] += self.term_weights(term, passages[found], term.tf[at[found]])
        return total

    def sorted_postings(self, terms: list[QueryTerm]) -> list[QueryTerm]:
        """``terms`` with their postings by ascending passage (a layered index's are main's
        renumbered, then the delta's: sorted here; whole counts are sorted already)."""
        if not self.layered:
            return terms
        out = []
        for term in terms:
            if len(term.docs) > 1 and not bool(np.all(term.docs[1:] > term.docs[:-1])):
                order = np.argsort(term.docs, kind="stable")
                term = QueryTerm(term.tid, term.docs[order], term.tf[order], term.idf, term.repeat)
            out.append(term)
        return out

    def ratio_bounds(self, term: QueryTerm) -> tuple[float, float, int]:
        """Bounds of count / (count + length norm) over ``term``'s postings counted once (its
        shortest passage's 1 / (1 + norm)) and more than once (their highest; 0: none): its weights
        are at most these times idf (k1 + 1); and its highest count. Kept from a term's first query
        (a term in 218,000 passages: 1.3 ms, 3.8 ms with every posting's ratio)."""
        bounds = self._ratio_bounds.get(term.tid)
        if bounds is None:
            norms = np.take(self.norms, term.docs)
            many = np.flatnonzero(term.tf > 1)
            counts = term.tf[many].astype(np.float64)
            ratios = counts / (norms[many] + counts)  # as _weights divides
            bounds = (1.0 / (float(norms.min()) + 1.0) if len(many) < len(norms) else 0.0,
                      float(ratios.max()) if len(many) else 0.0, int(counts.max()) if len(many) else 1)
            self._ratio_bounds[term.tid] = bounds
        return bounds

    @cached_property
    def _ratio_bounds(self) -> dict[int, tuple[float, float, int]]:
        """Each queried term's ``ratio_bounds`` (this index's postings and lengths: an update is a new index)."""
        return {}

    def record_scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Each record's best passage score."""
        return self.best_per_record(self.scores(tokens))

    def best_per_record(self, scores: np.ndarray) -> np.ndarray:
        """Each record's best of its passages' ``scores`` (as ``scores`` returns them)."""
        if self.n_passages == self.size or not self.size:
            return scores
        # Each record's first passage, raised by its later ones: few records have more than
        # one, so this is a gather and a short maximum.at, against a reduceat over every
        # passage (at 100k: 0.11 ms against 0.49 ms; a maximum is exact either way).
        records = scores[self._starts]
        later = self._later_passages
        np.maximum.at(records, self.owners[later], scores[later])
        return records

    @cached_property
    def _later_passages(self) -> np.ndarray:
        """The passages that are not their record's first, found on first use."""
        later = np.ones(self.n_passages, dtype=bool)
        later[self._starts] = False
        return np.flatnonzero(later)

    def passages_of(self, record: int) -> range:
        """The passage numbers of one record."""
        end = self._starts[record + 1] if record + 1 < self.size else self.n_passages
        return range(int(self._starts[record]), int(end))

    def upper_bound(self, tokens: Sequence[str]) -> float:
        """A score no document can reach: each term's idf times (k1 + 1); used to map scores into [0, 1]."""
        bound = 0.0
        for term in self.postings_of(tokens):
            bound += term.repeat * term.idf
        return float(bound * (self.k1 + 1))


# Tokens counted at a time (a document is never split): ~45 bytes of temporaries each, ~180 MB.
COUNT_BLOCK = 1 << 20
