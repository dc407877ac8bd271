"""Answers shaped for assistants: passages, snippets that cite their lines, get, folded
duplicates, recency and the shorthand filters."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

import vecbook
from vecbook.snippets import ELLIPSIS, fold, make_snippet, query_terms, recency_blend

from conftest import FakeEmbedder

WORDS = ("river stone garden window letter market bridge candle harbour lantern orchard meadow ladder "
         "kettle blanket pepper violin saddle copper thimble").split()


def filler(chars: int, seed: int = 0) -> str:
    """Sentences of unrelated words, ten to a line, about ``chars`` long."""
    rng = random.Random(seed)
    lines, size = [], 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(10)) + "."
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def short_notes(count: int) -> str:
    rng = random.Random(1)
    return "\n---\n".join(" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(count)) + "\n"


def lines_of(root: Path, hit: vecbook.Hit) -> str:
    text = (root / hit.file_path).read_text(encoding="utf-8").splitlines()
    return "\n".join(text[hit.snippet_line - 1:hit.snippet_end_line])


# -- passages --

def test_the_walrus_at_the_end_of_a_4_mb_record_is_the_first_hit(write_files: Any) -> None:
    """Every part of every record is reachable: one sentence at the end of 4 MB of filler,
    among 5,000 short records, by both indexes (a stand-in embedder keeps this fast)."""
    big = "Title: the long file\n\n" + filler(4_000_000) + "\nthe walrus hid the golden key under the pier.\n"
    root = write_files({"big.txt": big, "notes.txt": short_notes(5_000)})
    book = vecbook.VecBook(data_directory=root, embedder=FakeEmbedder())
    hit = book.search("where did the walrus hide the key")[0]
    assert hit.file_path == "big.txt" and hit.keyword_score and hit.semantic_score
    assert "the walrus hid the golden key under the pier." in hit.snippet
    assert lines_of(root, hit).endswith("the walrus hid the golden key under the pier.")
    assert hit.snippet_end_line == big.count("\n")


def test_the_real_model_finds_a_sentence_deep_in_a_long_record_in_the_default_mode(write_files: Any, make_book: Any) -> None:
    big = filler(120_000, seed=2) + "\nthe walrus hid the golden key under the pier.\n" + filler(20_000, seed=3)
    root = write_files({"big.txt": big, "notes.txt": short_notes(300)})
    hit = make_book(root).search("where did the walrus hide the key")[0]
    assert hit.file_path == "big.txt"
    assert "walrus" in hit.snippet and "walrus" in lines_of(root, hit)


def test_a_record_is_split_into_passages_with_their_own_lines() -> None:
    content = "\n".join(f"line {i} " + "word " * 40 for i in range(30))
    passages = vecbook.records.split_passages(content)
    assert len(passages) > 1 and passages[0][0] == 0 and passages[-1][1] == len(content.rstrip())
    assert all(len(content[a:b].split()) <= vecbook.records.PASSAGE_WORDS for a, b in passages)
    assert all(content[b:].lstrip(" ").startswith("\n") for _, b in passages[:-1])  # cut at line ends
    covered = " ".join(content[a:b] for a, b in passages).split()
    assert covered == content.split()


def test_a_line_longer_than_a_passage_is_cut_between_words_every_passage_of_words() -> None:
    """Whatever whitespace parts the words (tabs, no-break and ideographic spaces, a run of them)."""
    spaces = [" ", "\t", "\xa0", "\u3000", " \x1c ", "\u2028", "  \r "]
    words = [f"w{i}é" if i % 3 else f"東{i}🙂" for i in range(1000)]
    line = "\t " + "".join(word + spaces[i % len(spaces)] for i, word in enumerate(words))
    content = "Intro line.\n" + line + "\nlast line"
    passages = vecbook.records.split_passages(content)
    assert [content[a:b].split() for a, b in passages] == [["Intro", "line."], words[:400], words[400:800],
                                                          words[800:], ["last", "line"]]
    assert all(content[a:b] == content[a:b].strip() for a, b in passages)  # from a word to a word


def test_a_record_titled_with_the_query_word_outranks_one_that_says_it_twice_in_passing(
        write_files: Any, fake_book: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``Title:`` header weighs TITLE_WEIGHT times its words in keyword search; the record's
    text, lines and snippet stay as written."""
    titled = "Title: Volcano\n\nAsh fell on the town for three days and the river ran grey."
    passing = "The volcano tour was cancelled, so we saw the volcano museum and walked by the river."
    root = write_files({"a.txt": f"{passing}\n---\n{titled}\n"})
    hits = fake_book(root).search("volcano", mode="keyword")
    assert [h.metadata.get("Title") for h in hits] == ["Volcano", None]
    assert hits[0].text == "Ash fell on the town for three days and the river ran grey." and hits[0].line_number == 3
    monkeypatch.setattr(vecbook.build, "TITLE_WEIGHT", 1)  # a title counted once, as any line
    assert [h.metadata.get("Title") for h in fake_book(root).search("volcano", mode="keyword")] == [None, "Volcano"]


@pytest.mark.parametrize("content, title", [
    ("Title: Volcano\n\nAsh fell.", "Volcano"),
    ("title:   Ash clouds  \nAuthor: Ana\n\nAsh fell.", "Ash clouds"),
    ("Author: Ana\n\nTitle: not a header here", None),  # a line of the text, past the headers
    ("Ash fell.", None),
])
def test_the_title_weighed_is_a_title_header_of_the_record_itself(content: str, title: str | None) -> None:
    root_records, _ = vecbook.records.parse_records(content + "\n", "a.txt")
    assert vecbook.records.header_title(root_records[0]) == title


# -- snippets --

def test_a_snippet_centres_on_the_most_query_words_and_marks_its_cuts() -> None:
    content = "x " * 400 + "the boiler service is due in March" + " y" * 400
    snippet = make_snippet(content, (0, len(content)), query_terms("boiler service due"))
    assert snippet.text.startswith(ELLIPSIS) and snippet.text.endswith(ELLIPSIS)
    assert "the boiler service is due in March" in snippet.text
    assert len(snippet.text) <= 482 and snippet.text[1:-1] == content[snippet.start:snippet.end]
    assert snippet.matched_terms == ["boiler", "service", "due"]



@pytest.mark.parametrize("around", ["👍🏽", "👨\u200d👩\u200d👧", "🇯🇵", "e\u0301", "东京", "क\u094dष\u093f"])
def test_a_snippet_cut_inside_text_without_spaces_never_splits_a_grapheme(around: str) -> None:
    """Text without spaces (Chinese, emoji side by side) is cut where the size ends, not at a
    space: never inside what a reader sees as one character (a skin tone, a ZWJ sequence, a flag,
    an accent written as a combining mark, a Devanagari conjunct)."""
    for pad in range(len(around)):
        content = "x" * pad + around * 300 + "水管工" + around * 300
        snippet = make_snippet(content, (0, len(content)), query_terms("水管工"))
        body = snippet.text.strip(ELLIPSIS)
        assert "水管工" in body and body == content[snippet.start:snippet.end]
        assert vecbook.graphemes.is_boundary(content, snippet.start), (pad, body[:3])
        assert vecbook.graphemes.is_boundary(content, snippet.end), (pad, body[-3:])


def test_snippets_cite_the_lines_they_show(write_files: Any, fake_book: Any) -> None:
    body = "\n".join(f"Line {i}: nothing to see here at all." for i in range(1, 60))
    body = body.replace("Line 41: nothing", "Line 41: the spare key is under the blue flowerpot")
    root = write_files({"a.txt": "Date: 2024-01-01\n\n" + body + "\n"})
    hit = fake_book(root).search("spare key flowerpot", mode="keyword")[0]
    assert hit.snippet_line <= 43 <= hit.snippet_end_line  # line 41 of the body is file line 43
    shown = hit.snippet.strip(ELLIPSIS)
    assert shown in lines_of(root, hit) and "flowerpot" in shown
    assert hit.matched_terms == ["spare", "key", "flowerpot"]


def test_a_semantic_hit_without_query_words_still_has_a_snippet(sample_book: vecbook.VecBook) -> None:
    hit = sample_book.search("no warm showers since the radiator system quit", mode="semantic", max_results=1)[0]
    assert hit.snippet and hit.snippet_line is not None and hit.matched_terms == []


# -- duplicates --

def test_a_note_copied_into_two_files_shows_once_with_its_twin_cited(write_files: Any, fake_book: Any) -> None:
    note = "Remember the bins go out on Tuesday night and the recycling on Friday morning, every week.\n"
    root = write_files({"a.txt": note, "b.txt": note.replace("every week", "every single week"),
                        "c.txt": "The bins at the office are emptied daily.\n"})
    book = fake_book(root)
    hits = book.search("when do the bins go out", mode="keyword")
    assert [h.file_path for h in hits] == ["a.txt", "c.txt"] or [h.file_path for h in hits] == ["b.txt", "c.txt"]
    assert len(hits[0].duplicates) == 1 and hits[0].duplicates[0].split(":")[0] in ("a.txt", "b.txt")
    assert len(book.search("when do the bins go out", mode="keyword", dedupe=False)) == 3


def test_folding_is_defined_by_shared_word_triples() -> None:
    forwarded = "the quarterly numbers are in and revenue grew eleven percent over last year"
    texts = [f"Ana: {forwarded}", f"Bo: {forwarded}", "Ana: ok see you", "Bo: ok see you then",
             f"Reply: thanks, great news!\n> {forwarded}\n> sent from my phone"]
    assert fold(texts, 10) == [(0, [1, 4]), (2, []), (3, [])]  # short texts fold only when identical
    assert fold(texts, 2) == [(0, [1]), (2, [])]  # below the last hit shown, nothing is compared


def test_the_top_ten_hold_ten_different_things(write_files: Any, fake_book: Any) -> None:
    same = "Forwarded - the lease renewal letter arrived and the rent goes up in April by forty pounds.\n"
    files = {f"chat{i}.txt": same for i in range(12)}
    files.update({f"other{i}.txt": f"A different note {i} about the rent and the lease of flat {i}.\n"
                  for i in range(12)})
    hits = fake_book(write_files(files)).search("rent lease letter", mode="keyword", max_results=10)
    assert len(hits) == 10 and len({h.text for h in hits}) == 10
    assert sum(len(h.duplicates) for h in hits) == 11


# -- recency --

def test_recency_favours_the_newer_of_two_equal_records_and_leaves_undated_ones_alone(
        write_files: Any, fake_book: Any) -> None:
    today = time.strftime("%Y-%m-%d")
    root = write_files({"old.txt": "Date: 2019-05-01\n\nthe dentist appointment moved\n",
                        "new.txt": f"Date: {today}\n\nthe dentist appointment moved again\n",
                        "none.txt": "the dentist appointment moved, no date here\n"})
    book = fake_book(root)
    plain = {h.file_path: h.similarity_score for h in book.search("dentist appointment", mode="keyword")}
    recent = {h.file_path: h.similarity_score for h in book.search("dentist appointment", mode="keyword",
                                                                    recency_half_life_days=30)}
    assert recent["none.txt"] == pytest.approx(plain["none.txt"])
    assert recent["new.txt"] > plain["new.txt"] * 0.8 and recent["old.txt"] < plain["old.txt"]
    assert recency_blend(0.5, 100.0, 100.0, 30) == pytest.approx(0.8 * 0.5 + 0.2)
    with pytest.raises(vecbook.QueryError, match="recency_half_life_days must be a number of days above 0"):
        book.search("dentist", recency_half_life_days=0)


# -- get --

def test_get_returns_neighbours_from_the_same_file_only(write_files: Any, fake_book: Any) -> None:
    root = write_files({"j.txt": "one\n---\ntwo\n---\nthree\n---\nfour\n", "k.txt": "other\n"})
    book = fake_book(root)
    context = book.get("j.txt:5-5", context=1)
    assert (context.record.text, [e.text for e in context.before], [e.text for e in context.after]) == (
        "three", ["two"], ["four"])
    assert book.get("j.txt:7").record.text == "four"  # a line inside a record
    assert [e.text for e in book.get("j.txt:1", context=5).after] == ["two", "three", "four"]
    with pytest.raises(vecbook.QueryError, match="context must be a whole number"):
        book.get("j.txt:1", context=-1)


def test_get_walks_a_conversation_around_a_chat_window(tmp_path: Path) -> None:
    from conftest import EXPORTS

    (tmp_path / "notes").mkdir()
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "tg"\npath = "{EXPORTS / "whatsapp" / "whatstk_lorem.txt"}"\n'
        'window_gap_minutes = 0.001\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    records = book._snapshot.records
    middle = records[len(records) // 2]
    context = book.get(middle.citation, context=2)
    assert [e.citation for e in context.before + [context.record] + context.after] == [
        r.citation for r in records[len(records) // 2 - 2:len(records) // 2 + 3]]


def test_the_cli_get_prints_the_record_and_its_neighbours(write_files: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_files({"j.txt": "one\n---\ntwo\n---\nthree\n"})
    code = vecbook.cli.main(["get", "j.txt:3", "-C", "1", "--data-dir", str(root)])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines() == ["  j.txt:1-1", "    one", "", "> j.txt:3-3", "    two", "",
                                              "  j.txt:5-5", "    three"]


def test_hybrid_scores_are_absolute_so_min_score_drops_a_nonsense_query(sample_book: vecbook.VecBook) -> None:
    """The default (linear) fusion maps both components by fixed anchors: a query nothing
    relates to scores low, a real question high, and --min-score separates them."""
    nonsense = sample_book.search("purple elephant quantum banana", max_results=1)[0]
    real = sample_book.search("what can I cook with leftover rice", max_results=1)[0]
    assert nonsense.similarity_score < 0.3 < 0.5 < real.similarity_score
    assert sample_book.search("purple elephant quantum banana", min_score=0.3) == []


def test_equal_scores_are_ordered_by_record_id(write_files: Any) -> None:
    """The contract's order: score, highest first, then id; identical records score the same."""
    same = "The kayak club meets at the harbour on Sunday."
    root = write_files({"c.txt": same, "a.txt": f"{same}\n---\nkayak kayak kayak harbour\n", "b.txt": same,
                        "d.txt": "A kayak.\n"})
    book = vecbook.VecBook(root, keyword_only=True, cache_directory=False)
    hits = book.search("kayak harbour", mode="keyword", dedupe=False)
    scores = [hit.similarity_score for hit in hits]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) < len(scores)
    tied = [hit.id for hit in hits if hit.similarity_score == hits[1].similarity_score]
    assert tied == ["a.txt:1", "b.txt:1", "c.txt:1"]
    assert hits[0].id == "a.txt:3" and hits[-1].id == "d.txt:1"


def test_candidates_are_put_best_first_with_ties_by_id_whatever_order_they_come_in() -> None:
    from vecbook.rank import Scored, best_first

    records = [vecbook.Record("x", name.split(":")[0], int(name.split(":")[1]), None, {}, id=name)
               for name in ("notes.txt:9", "b.txt:1", "a.txt:4", "a.txt:10")]
    scored = [Scored(0, 0.5, None, 0.5), Scored(1, 0.5, None, 0.5), Scored(2, 0.9, None, 0.9),
              Scored(3, 0.5, None, 0.5)]
    ordered = [records[s.index].id for s in best_first(scored, records)]
    assert ordered == ["a.txt:4", "a.txt:10", "b.txt:1", "notes.txt:9"]  # ids compare as text, as citations do


def test_a_note_comes_before_its_sync_conflict_copies_where_they_score_alike() -> None:
    # The copies' names sort before the note's ("Trip (conflicted copy" < "Trip.md"), and a copy
    # that did not drift scores as its note does: the note is the hit, the copies its duplicates.
    from vecbook.rank import Scored, best_first

    copy = {"conflict_copy_of": "Trip.md"}
    records = [vecbook.Record("x", "Trip (conflicted copy 2024-12-03).md", 1, 1, copy, id="a"),
               vecbook.Record("x", "Trip.sync-conflict-20241203-101010-ABCDEFG.md", 1, 1, copy, id="b"),
               vecbook.Record("x", "Trip.md", 1, 1, {}, id="c")]
    ordered = [records[s.index].file_path for s in best_first([Scored(i, 0.5, None, 0.5) for i in range(3)],
                                                                records)]
    assert ordered == ["Trip.md", "Trip (conflicted copy 2024-12-03).md",
                       "Trip.sync-conflict-20241203-101010-ABCDEFG.md"]


# -- the shorthand filters --

def test_since_later_than_until_is_an_error_naming_both(write_files: Any, fake_book: Any) -> None:
    book = fake_book(write_files({"a.txt": "Date: 2024-03-09\n\nlunch with Mum\n"}))
    with pytest.raises(vecbook.QueryError, match=r"^since 2024-06-01 is later than until 2024-01-31: no record can "
                                                 r"be dated between them \(swap them\?\)$"):
        book.search("lunch", since="2024-06-01", until="2024-01-31")
    with pytest.raises(vecbook.QueryError, match=r"^since 30d is later than until 60d"):
        book.search("lunch", since="30d", until="60d")
    # one day is a range: until a date takes that whole day
    assert [h.citation for h in book.search("lunch", since="2024-03-09", until="2024-03-09", mode="keyword")] == [
        "a.txt:1-3"]


def test_since_over_sources_without_dates_says_so_in_the_users_words(write_files: Any, fake_book: Any) -> None:
    book = fake_book(write_files({"a.txt": "lunch with Mum 🍲\n---\nAlmoço com a avó\n"}))
    with pytest.raises(vecbook.QueryError) as raised:
        book.search("lunch", since="30d")
    assert str(raised.value) == ("since 30d: no record of files has a date (a Date: header, a database row's 'date' "
                                 "column, or the time of a message, mail or event), so none can match; sources with "
                                 "dates: none")
    with pytest.raises(vecbook.QueryError, match=r"^participants Ana: no record of files names its participants "
                                                 r"\(chats, mail and calendars name them\)"):
        book.search("lunch", participants=["Ana"])
    # a filter the user wrote keeps its own words
    with pytest.raises(vecbook.QueryError, match=r"^unknown filter key 'date' in 'date__gte'"):
        book.search("lunch", filters={"date__gte": "2024-01-01"})


def test_a_source_typo_beside_since_is_named_as_a_typo(write_files: Any, fake_book: Any) -> None:
    book = fake_book(write_files({"a.txt": "Date: 2024-03-09\n\nlunch with Mum\n"}))
    for shorthand in ({"since": "30d"}, {"participants": ["Ana"]}):
        with pytest.raises(vecbook.QueryError, match=r"^no record comes from source 'fils' \(did you mean 'files'\? "):
            book.search("lunch", sources=["fils"], **shorthand)


def test_the_cli_says_which_of_the_chosen_sources_have_no_dates(
        shared_model: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import ROOT

    monkeypatch.chdir(ROOT)
    code = vecbook.main(["search", "sourdough", "--source", "vault", "--since", "2024-01-01", "--mode", "keyword"])
    _, err = capsys.readouterr()
    assert code == 2 and err == (
        "vecbook: error: since 2024-01-01: no record of vault has a date (a Date: header, a database row's 'date' "
        "column, or the time of a message, mail or event), so none can match; sources with dates: calendar, family-chat, files, hiking-club, messages\n")
    code = vecbook.main(["search", "lunch", "--since", "2024-04-01", "--until", "2024-03-31"])
    assert code == 2 and capsys.readouterr()[1] == (
        "vecbook: error: since 2024-04-01 is later than until 2024-03-31: no record can be dated between them "
        "(swap them?)\n")


# -- hits that matched nothing of the query --

NOTES_TAGGED = {"family.txt": "Tags: family\n\nLunch with Mum at Little Lisbon 🍲\n---\nTags: family\n\n"
                              "Priya drove up from Bristol with the kids.\n---\nTags: family\n\n"
                              "Grandad's allotment, 1978: runner beans and a shed.\n---\nTags: work\n\nLunch meeting.\n"}


def test_a_filtered_hit_that_matched_nothing_of_the_query_says_so(write_files: Any, fake_book: Any) -> None:
    """Linear fusion puts the least close candidate at 0: with no query word either, it matched
    nothing, and is listed (filters keep min(max_results, matching records)) saying so."""
    book = fake_book(write_files(NOTES_TAGGED))
    hits = book.search("lunch", mode="hybrid", fusion="linear", filters={"tags": "family"}, max_results=5)
    assert len(hits) == 3 and hits[0].citation == "family.txt:1-3" and hits[0].matches_query
    nothing = [h for h in hits if not h.matches_query]
    assert nothing and all(h.similarity_score == 0.0 and h.keyword_score == 0.0 and not h.matched_terms
                           for h in nothing)
    assert all(h.similarity_score > 0 for h in hits if h.matches_query)
    assert nothing[0].to_dict()["matches_query"] is False and hits[0].to_dict()["matches_query"] is True
    # a recency blend lifts a score above 0, not what was matched
    blended = book.search("lunch", mode="hybrid", fusion="linear", filters={"tags": "family"},
                          recency_half_life_days=30)
    assert {h.citation for h in blended if not h.matches_query} == {h.citation for h in nothing}
    for mode, fusion in (("semantic", None), ("keyword", None), ("hybrid", "rrf")):
        assert all(h.matches_query for h in book.search("lunch", mode=mode, fusion=fusion, filters={"tags": "family"}))


def test_a_linear_hit_that_holds_a_query_word_never_scores_0(write_files: Any, fake_book: Any) -> None:
    """Every record holds "lunch": the least of them on both sides is scaled to the bottom of both
    lists, yet it matched, and says so with a score six decimals show above 0; the order stays."""
    folder = write_files({"n.txt": "Lunch with Mum at Little Lisbon\n---\nLunch lunch at the office canteen with "
                                   "Priya\n---\nA long note about gardening and runner beans and also lunch once in "
                                   "passing, with many more words after it\n---\nLunch.\n"})
    hits = fake_book(folder).search("lunch", mode="hybrid", fusion="linear")
    assert [h.citation for h in hits] == ["n.txt:7-7", "n.txt:3-3", "n.txt:1-1", "n.txt:5-5"]
    assert all(h.matches_query and h.keyword_score > 0 for h in hits)
    assert [h.to_dict()["similarity_score"] for h in hits][-1] == "0.000001"


def test_the_cli_marks_a_hit_that_matched_nothing_of_the_query(
        write_files: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.VecBook, "__init__", _with_fake_embedder(vecbook.VecBook.__init__))
    root = write_files(NOTES_TAGGED)
    assert vecbook.main(["search", "lunch", "--data-dir", str(root), "--mode", "hybrid", "--fusion", "linear",
                         "--filter", "tags=family"]) == 0
    out = capsys.readouterr()[0]
    ranked = [line for line in out.splitlines() if line[:3].strip().rstrip(".").isdigit()]
    assert ranked[0] == " 1. " + ranked[0][4:12] + "  family.txt:1-3"
    assert ranked[-1].endswith("  (matched nothing of the query; listed as it passed the filters)")
    assert " 0.000000  " in ranked[-1]


DATED_NOTES = {"journal.txt": "Date: 2024-03-09\nTags: family\n\nLunch with Mum at Little Lisbon.\n---\n"
                              "Date: 2024-05-01\nTags: work\n\nLunch meeting with the team.\n---\nTags: work, home\n\n"
                              "The boiler service is due.\n"}


@pytest.mark.parametrize("query, kwargs, why", [
    ("lunch", {"since": "2025-01-01"}, "since 2025-01-01 leaves no record; the records are dated 2024-03-09 to 2024-05-01 "
                                       "(1 of them has no date)"),
    ("lunch", {"filters": {"tags": "work"}, "until": "2024-04"},
     "until 2024-04 leaves no record of the 2 that pass tags=work; they are dated 2024-05-01 (1 of them has no date)"),
    ("lunch", {"filters": {"tags": "garden"}}, "tags=garden leaves no record; tags there: work, family, home"),
    ("lunch", {"sources": ["files"], "since": "2099"},
     "since 2099 leaves no record of the 3 that pass sources files; they are dated 2024-03-09 to 2024-05-01 "
     "(1 of them has no date)"),
    ("boiler", {"filters": {"tags": "family"}, "mode": "keyword"},
     "no record of the 1 that pass tags=family holds a word of the query"),
    ("the and of", {"mode": "keyword"}, "the query's words (the, and, of) are stop words, which keyword search "
                                        "leaves out"),
    ("?!", {"mode": "keyword"}, "the query holds no word to look for"),
    # By meaning too: "?!" or "..." found the records nearest the model's reading of punctuation,
    # every one marked as matching the query.
    ("?!", {"mode": "semantic"}, "the query holds no word to look for"),
    ("...", {"mode": "hybrid"}, "the query holds no word to look for"),
    ("¿—。", {}, "the query holds no word to look for"),
    ("lunch", {"min_score": 1.0, "mode": "keyword"}, "min_score 1 left no hit (the best scored 0.444840)"),
])
def test_a_search_without_hits_says_what_left_it_empty(write_files: Any, fake_book: Any, query: str,
                                                       kwargs: dict[str, Any], why: str) -> None:
    hits = fake_book(write_files(DATED_NOTES)).search(query, **kwargs)
    assert list(hits) == [] and hits.why_empty == why
    assert vecbook.cli.format_hits(hits) == f"no results: {why}"
    assert why.replace("'", "&#x27;") in hits._repr_html_()


def test_a_query_of_emoji_or_with_keywords_of_its_own_still_searches(write_files: Any, fake_book: Any) -> None:
    """Only a query with no word at all is answered empty: an emoji is a word (the keyword index
    holds it), and a question of punctuation given keywords searches them."""
    book = fake_book(write_files({**DATED_NOTES, "cake.txt": "Happy birthday 🎂\n"}))
    assert [hit.id for hit in book.search("🎂", mode="keyword")] == ["cake.txt:1"]
    assert book.search("🎂", mode="semantic")
    hits = book.search("?", keyword_query="boiler", mode="hybrid")
    assert hits and hits[0].matches_query and hits.why_empty is None


def test_a_search_with_hits_has_no_reason_to_be_empty(write_files: Any, fake_book: Any) -> None:
    hits = fake_book(write_files(DATED_NOTES)).search("lunch", filters={"tags": "family"})
    assert hits and hits.why_empty is None and hits[:1].why_empty is None


def _with_fake_embedder(original: Any) -> Any:
    def init(self: vecbook.VecBook, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("embedder", FakeEmbedder())
        original(self, *args, **kwargs)
    return init


def test_since_and_until_find_a_record_whose_span_covers_the_range(write_files: Any, fake_book: Any) -> None:
    """"What was on 16 April" finds the week's journal entry that spans that day (``date`` to
    ``end_date``, as chat windows, events and front matter set them), not only what began then;
    an explicit ``date__gte`` filter stays literal on ``date``."""
    entry = "---\ndate: {}\nend_date: {}\n---\nrowing on the river {}\n"
    root = write_files({"week.md": entry.format("2025-04-14", "2025-04-18", "all week"),
                        "before.md": entry.format("2025-04-10", "2025-04-15", "before"),
                        "after.md": entry.format("2025-04-17", "2025-04-20", "after"),
                        "day.md": "---\ndate: 2025-04-16T10:00\n---\nrowing on the river that day\n",
                        "timed.md": entry.format("2025-04-15T22:00:00+00:00", "2025-04-16T01:00:00+00:00", "night"),
                        # an end without a start is no span: undated, as for --until
                        "undated.md": "---\nend_date: 2025-04-18\n---\nrowing on the river, undated\n"})
    book = fake_book(root)

    def found(**filters: Any) -> list[str]:
        return sorted(h.file_path for h in book.search("rowing river", mode="keyword", **filters))

    assert found(since="2025-04-16", until="2025-04-16") == ["day.md", "timed.md", "week.md"]
    assert found(since="2025-04-16") == ["after.md", "day.md", "timed.md", "week.md"]
    assert found(until="2025-04-13") == ["before.md"]
    assert found(since="2025-04-19", until="2025-04-30") == ["after.md"]
    assert found(since="2025-04-16T00:30:00+00:00", until="2025-04-16T00:45:00+00:00") == ["timed.md", "week.md"]
    assert found(since="2025-04-18T12:00") == ["after.md", "week.md"]  # a plain end date: its whole day
    assert found(filters={"date__gte": "2025-04-16", "date__lt": "2025-04-17"}) == ["day.md"]
