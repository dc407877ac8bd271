"""Chat search: windows scored by their message pieces, and the text budget (max_total_chars)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import FakeEmbedder

def whatsapp(tmp_path: Path, lines: list[tuple[str, str]]) -> Path:
    """A WhatsApp export of ``(author, text)`` messages a minute apart (one window: no pauses)."""
    text = "".join(f"15/01/2024, 09:{minute:02d} - {author}: {message}\n" for minute, (author, message)
                   in enumerate(lines))
    path = tmp_path / "chat.txt"
    path.write_text(text, encoding="utf-8")
    return path


def chat_book(tmp_path: Path, export: Path, **settings: Any) -> vecbook.VecBook:
    (tmp_path / "notes").mkdir(exist_ok=True)
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "chat"\npath = "{export}"\nformat = "whatsapp"\n',
        encoding="utf-8")
    return vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder(), **settings)


def test_a_chat_window_is_indexed_in_message_pieces_of_at_most_sixty_words() -> None:
    messages = ["Ana: " + " ".join(["word"] * 25), "Ben: short one", "Ana: " + " ".join(["more"] * 40),
                "Ben: " + " ".join(["long"] * 70)]
    content = "\n".join(messages)
    starts = [content.index(m) for m in messages]
    pieces = vecbook.records.message_pieces(content, starts)
    assert [content[a:b] for a, b in pieces] == [messages[0] + "\n" + messages[1], messages[2], messages[3]]
    assert all(len(content[a:b].split()) <= 60 for a, b in pieces[:2])  # the 71-word message is a piece alone


def chatter(seed: int, words: int) -> str:
    """Words that share nothing with the query or with other chatter (no folding as duplicates).
    Letters only: in a text holding CJK, a word of letters and digits is its parts too."""
    return " ".join(f"w{_letters(seed)}x{_letters(i)}" for i in range(words))


def _letters(number: int) -> str:
    """``number`` in letters (0 -> a, 25 -> z, 26 -> ba), as a word of chatter writes it."""
    out = ""
    while True:
        number, digit = divmod(number, 26)
        out = chr(ord("a") + digit) + out
        if number == 0:
            return out


def test_a_fact_said_in_one_line_of_a_long_window_outranks_a_shorter_window_mentioning_it_in_passing(
        tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    # One window of 173 words: the fact is a message of its own between messages of 55 words.
    messages = [("Ana", chatter(1, 55)), ("Ben", "the plumber comes thursday"), ("Ana", chatter(2, 55)),
                ("Ben", chatter(3, 55))]
    whatsapp(tmp_path, messages).rename(folder / "chat.txt")
    # Another chat: one window of 42 words naming the plumber in passing.
    (folder / "other.txt").write_text(f"16/01/2024, 10:00 - Cy: {chatter(4, 40)} plumber thursday\n", encoding="utf-8")
    book = chat_book(tmp_path, folder)
    assert len(book._snapshot.records) == 2
    hits = book.search("plumber thursday", mode="keyword")
    # Scored as a whole, the long window (173 words) ranks below the other (42 words); as its
    # best piece (the message alone, 5 words), above it.
    assert "the plumber comes thursday" in hits[0].text


@pytest.mark.parametrize("text", ["今天我们去北京看长城，天气很好。", "🎉🎉🎉 party at ours 🎂🎈", "مرحبا بكم في المكتبة",
                                  "👍🏽 🇯🇵 👨\u200d👩\u200d👧 cafe\u0301 שָׁלוֹם"])
def test_max_total_chars_is_never_passed_and_counts_characters_not_bytes(write_files: Any, fake_book: Any,
                                                                          text: str) -> None:
    root = write_files({f"n{i}.txt": f"{text} {i}\n" for i in range(6)})
    book = fake_book(root)
    every = book.search(text, mode="keyword", max_results=6)
    size = len(every[0].text)
    assert len(every[0].text.encode("utf-8")) > size  # the budget below would fit fewer hits in bytes
    budget = 3 * size + 1
    hits = book.search(text, mode="keyword", max_results=6, max_total_chars=budget)
    assert sum(len(h.text) for h in hits) <= budget
    assert len(hits) == 3 and hits.left_out == 3
    assert [h.id for h in hits] == [h.id for h in every[:3]]  # best first
    assert book.search(text, mode="keyword", max_results=6).left_out == 0


def test_a_hit_too_long_for_what_is_left_is_left_out_and_a_shorter_one_still_fills_the_budget(
        write_files: Any, fake_book: Any) -> None:
    root = write_files({"a.txt": "budget word " * 3, "b.txt": "budget word " * 30, "c.txt": "budget word"})
    book = fake_book(root)
    ranked = book.search("budget word", mode="keyword", max_results=3, dedupe=False)
    sizes = {h.file_path: len(h.text) for h in ranked}
    hits = book.search("budget word", mode="keyword", max_results=3, dedupe=False,
                       max_total_chars=sizes["a.txt"] + sizes["c.txt"])
    assert sorted(h.file_path for h in hits) == ["a.txt", "c.txt"] and hits.left_out == 1


@pytest.mark.parametrize("value", [0, -5, 1.5, True, "8000"])
def test_max_total_chars_must_be_a_whole_number_of_characters(write_files: Any, fake_book: Any, value: Any) -> None:
    book = fake_book(write_files({"a.txt": "hello"}))
    with pytest.raises(vecbook.QueryError, match="max_total_chars must be a whole number of characters from 1 to"):
        book.search("hello", max_total_chars=value)


def test_the_cli_says_on_stderr_how_many_hits_the_budget_left_out(write_files: Any,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = write_files({f"n{i}.txt": f"tea {chatter(i, 2 * i)}" for i in range(4)})
    code = vecbook.cli.main(["search", "tea", "--mode", "keyword", "--data-dir", str(root), "--max-total-chars", "20",
                             "--json"])
    captured = capsys.readouterr()
    assert code == 0
    import json

    shown = json.loads(captured.out)
    assert sum(len(h["text"]) for h in shown) <= 20
    left = 4 - len(shown)
    assert f"vecbook: {left} more hit{'s' if left > 1 else ''} left out to keep the text within 20 characters " \
           "(--max-total-chars)" in captured.err



def test_the_cli_says_when_the_budget_left_out_every_hit_and_what_to_do(write_files: Any,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = write_files({f"n{i}.txt": f"tea {chatter(i, 4)}" for i in range(3)})
    for budget in ("1", "5"):
        code = vecbook.cli.main(["search", "tea", "--mode", "keyword", "--data-dir", str(root),
                                 "--max-total-chars", budget])
        captured = capsys.readouterr()
        assert code == 0 and captured.out.strip() == "no results"
        # Not "3 more hits" (none was shown) nor "1 characters"; and the way out.
        unit = "character" if budget == "1" else "characters"
        assert captured.err.strip() == (f"vecbook: all 3 hits left out: none fits within {budget} {unit} "
                                        "(--max-total-chars; --max-chars N cuts each hit's text to N)")


def test_the_budget_line_for_a_single_hit_reads_as_one(write_files: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_files({"n0.txt": f"tea {chatter(0, 4)}"})
    code = vecbook.cli.main(["search", "tea", "--mode", "keyword", "--data-dir", str(root), "--max-total-chars", "5"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err.strip() == ("vecbook: the only hit left out: it does not fit within 5 characters "
                                                  "(--max-total-chars; --max-chars N cuts each hit's text to N)")


def _record_passages(book: vecbook.VecBook) -> list[list[str]]:
    """Each record's keyword passages, as texts, from the book's snapshot."""
    snapshot = book._snapshot
    texts: list[list[str]] = [[] for _ in snapshot.records]
    for owner, (a, b) in zip(snapshot.keywords.owners.tolist(), snapshot.passages.tolist()):
        texts[owner].append(snapshot.records[owner].content[a:b])
    return texts


def test_the_same_window_text_with_other_message_starts_is_cut_into_its_new_pieces_on_an_update(
        tmp_path: Path) -> None:
    # First one message of 110 words whose second line reads like another message: one piece.
    first, second = chatter(1, 55), chatter(2, 55)
    export = tmp_path / "chat.txt"
    export.write_text(f"15/01/2024, 09:00 - Ana: {first}\nBen: {second}\n", encoding="utf-8")
    book = chat_book(tmp_path, export)
    content = book._snapshot.records[0].content
    assert _record_passages(book) == [[content]]
    # Then the same text as two messages: the window's text is the same, its passages are not.
    export.write_text(f"15/01/2024, 09:00 - Ana: {first}\n15/01/2024, 09:01 - Ben: {second}\n", encoding="utf-8")
    book.reindex()
    record = book._snapshot.records[0]
    assert record.content == content and len(record.segments) == 2
    assert _record_passages(book) == [[content[a:b] for a, b in vecbook.records.record_passages(record)]]
    assert len(_record_passages(book)[0]) == 2


# -- chat hits merged where they touch, cut to the part that answers --

STAMP_CHARS = len("15/01/2024, 09:00 - ")


def timed_whatsapp(path: Path, messages: list[tuple[str, str, str]]) -> Path:
    """A WhatsApp export of ``(HH:MM, author, text)`` messages on one day."""
    path.write_text("".join(f"15/01/2024, {when} - {author}: {text}\n" for when, author, text in messages),
                    encoding="utf-8")
    return path


def read_back(export: Path, hit: vecbook.Hit) -> str:
    """The messages on the lines a hit cites, as a window's text shows them (``Name: text``)."""
    assert hit.line_number is not None and hit.end_line is not None
    lines = export.read_text(encoding="utf-8").splitlines()[hit.line_number - 1:hit.end_line]
    return "\n".join(line[STAMP_CHARS:] for line in lines)


def test_hits_on_touching_windows_of_one_conversation_merge_into_one_whose_lines_read_back_to_its_text(
        tmp_path: Path) -> None:
    export = timed_whatsapp(tmp_path / "chat.txt", [
        ("09:00", "Ana", "北京的长城 🧱 trip"), ("09:01", "Ben", "مرحبا, which weekend?"),
        ("09:02", "Ana", "the lantern festival 🏮"),
        # a pause of an hour: a second window, touching the first
        ("10:05", "Ben", "lantern festival tickets 🎟️"), ("10:06", "Ana", "שלום, great, booked"),
        ("10:07", "Ben", "北京 see you 👋"),
        # a pause: a third window matching nothing, and a fourth touching it
        ("12:00", "Cy", "unrelated chatter"), ("14:00", "Ana", "did the lantern festival sell out?")])
    book = chat_book(tmp_path, export)
    assert [(r.line_number, r.end_line) for r in book._snapshot.records] == [(1, 3), (4, 6), (7, 7), (8, 8)]
    hits = book.search("lantern festival", mode="keyword")
    # The first two windows are one hit; the fourth touches no other hit (the third is none).
    assert sorted((h.line_number, h.end_line) for h in hits) == [(1, 6), (8, 8)]
    merged = next(h for h in hits if h.line_number == 1)
    assert merged.text == "\n".join(line[STAMP_CHARS:] for line in export.read_text(encoding="utf-8").splitlines()[:6])
    # Its metadata tells of the messages it shows: the first's date, the last's, everyone who writes.
    assert {k: merged.metadata[k] for k in ("date", "end_date", "message_count")} == {
        "date": "2024-01-15T09:00:00", "end_date": "2024-01-15T10:07:00", "message_count": 6}
    assert sorted(merged.metadata["participants"]) == ["Ana", "Ben"]
    alone = book.search("lantern festival", mode="keyword", filters={"date__lt": "2024-01-15T10:00"})
    assert merged.similarity_score >= alone[0].similarity_score  # the best of the windows merged
    assert alone[0].metadata["message_count"] == 3  # a window alone keeps its own
    for hit in hits:
        assert read_back(export, hit) == hit.text
        assert hit.citation.startswith(f"chat/chat.txt:{hit.line_number}-{hit.end_line}")
        assert book.get(hit.citation).record.line_number == hit.line_number  # get opens the window it starts in


def test_a_merged_hit_counts_whole_in_the_budget_which_is_never_passed(tmp_path: Path) -> None:
    export = timed_whatsapp(tmp_path / "chat.txt", [
        ("09:00", "Ana", "ramen 🍜 tonight?"), ("10:00", "Ben", "ramen place on 长安街"),
        ("13:00", "Cy", "ramen again lol"), ("16:00", "Dee", "أحب ramen")])
    book = chat_book(tmp_path, export)
    every = book.search("ramen", mode="keyword")
    assert all(read_back(export, h) == h.text for h in every)
    for budget in range(1, sum(len(h.text) for h in every) + 2):
        hits = book.search("ramen", mode="keyword", max_total_chars=budget)
        assert sum(len(h.text) for h in hits) <= budget
        assert len(hits) + hits.left_out == len(every)


def test_a_run_of_touching_windows_merges_only_up_to_the_merge_cap(tmp_path: Path) -> None:
    # 40 windows (a pause of 31 minutes after every second message), each of about 130
    # characters naming the festival: every window touches the next.
    def clock(minutes: int) -> str:
        return f"{minutes // 60:02d}:{minutes % 60:02d}"
    messages = []
    for i in range(40):
        messages += [(clock(32 * i), "Ana", f"lantern festival 🏮 北京 {chatter(i, 6)}"),
                     (clock(32 * i + 1), "Ben", f"مرحبا {chatter(100 + i, 6)}")]
    export = timed_whatsapp(tmp_path / "chat.txt", messages)
    book = chat_book(tmp_path, export)
    assert len(book._snapshot.records) == 40
    hits = book.search("lantern festival", mode="keyword", max_results=20)
    assert all(len(h.text) <= vecbook.chat_hits.MERGE_MAX_CHARS for h in hits)
    # Every window is shown once, in hits of consecutive windows, no two of which fit together.
    spans = sorted((h.line_number, h.end_line, len(h.text)) for h in hits)
    assert spans[0][0] == 1 and spans[-1][1] == 80 and len(hits) < 20
    for (_, end, size), (start, _, following) in zip(spans, spans[1:]):
        assert start == end + 1 and size + 1 + following > vecbook.chat_hits.MERGE_MAX_CHARS
    for hit in hits:
        assert read_back(export, hit) == hit.text


def test_touching_windows_merge_only_within_a_smaller_max_chars_so_no_part_is_cut_away(tmp_path: Path) -> None:
    # Two touching windows (a pause of an hour), each naming the festival, together ~150 characters.
    export = timed_whatsapp(tmp_path / "chat.txt", [
        ("09:00", "Ana", f"lantern festival 🏮 北京 {chatter(1, 6)}"), ("09:01", "Ben", f"مرحبا {chatter(2, 4)}"),
        ("10:05", "Ben", f"lantern festival tickets 🎟️ {chatter(3, 6)}"), ("10:06", "Ana", "שלום, booked")])
    book = chat_book(tmp_path, export)
    whole = book.search("lantern festival", mode="keyword")
    assert [(h.line_number, h.end_line) for h in whole] == [(1, 4)]
    sizes = sorted(len(r.text) for r in book._snapshot.records)
    # max_chars holds either window but not both: each stays a hit of its own, whole, rather
    # than one merged hit cut down to the part around its best window.
    hits = book.search("lantern festival", mode="keyword", max_chars=sizes[-1] + 1)
    assert sorted((h.line_number, h.end_line) for h in hits) == [(1, 2), (3, 4)]
    assert not any(h.truncated for h in hits)
    for hit in hits:
        assert read_back(export, hit) == hit.text


def test_a_much_weaker_touching_window_stays_a_hit_of_its_own(tmp_path: Path) -> None:
    export = timed_whatsapp(tmp_path / "chat.txt", [
        ("09:00", "Ana", "lantern festival lantern festival lantern 🏮"),
        ("10:00", "Ben", f"festival {chatter(1, 30)}")])
    book = chat_book(tmp_path, export)
    hits = book.search("lantern festival", mode="keyword")
    assert [(h.line_number, h.end_line) for h in hits] == [(1, 1), (2, 2)]
    assert hits[1].similarity_score < vecbook.chat_hits.MERGE_SCORE_SHARE * hits[0].similarity_score


def test_a_chat_window_as_the_best_hit_does_not_move_the_query_towards_it(tmp_path: Path) -> None:
    """Linear fusion's feedback (vecbook.rank.FEEDBACK_WEIGHT) lifts the records close to a
    note that is the best hit; the best chat window lifts nothing: a question about a chat has
    its evidence in several conversations, not beside the first one found."""
    export = timed_whatsapp(tmp_path / "chat.txt", [("08:00", "Ana", "plum quince rowan"),
                                                   ("12:00", "Ana", "apple cherry damson"),
                                                   ("18:00", "Ana", "cherry damson elder")])
    book = chat_book(tmp_path, export)
    assert len(book._snapshot.records) == 3  # hours apart: a window each
    hits = book.search("apple", mode="hybrid", fusion="linear")
    assert [h.text for h in hits] == ["Ana: apple cherry damson", "Ana: plum quince rowan", "Ana: cherry damson elder"]


# -- a question naming a chat participant --

def test_a_question_naming_ana_ranks_her_window_about_the_trip_above_one_where_she_does_not_write(
        tmp_path: Path) -> None:
    # A group chat where Ana and Ben write in most windows, an hour apart: to the keyword index
    # "ana" is a common word. Ben's message holds the trip's words in fewer words than Ana's.
    messages = []
    for hour in range(8, 16):
        messages += [(f"{hour:02d}:00", "Ana", chatter(hour, 5)), (f"{hour:02d}:01", "Ben", chatter(50 + hour, 5))]
    messages += [("16:00", "Ben", "the Lisbon trip 🚆 was long"), ("16:01", "Cy", "مرحبا 北京"),
                 ("17:00", "Ana", chatter(17, 5)), ("17:01", "Ben", chatter(67, 5)),
                 ("18:00", "Cy", "so how was it?"), ("18:01", "Ana", "Lisbon trip was lovely, Café Núñez 🌞")]
    export = timed_whatsapp(tmp_path / "chat.txt", messages)
    book = chat_book(tmp_path, export)
    assert len(book._snapshot.records) == 11
    unnamed = book.search("the Lisbon trip", mode="keyword")
    assert unnamed[0].text.startswith("Ben: the Lisbon trip")
    for mode in ("keyword", "hybrid"):
        hits = book.search("what did Ana say about the Lisbon trip", mode=mode)
        assert hits[0].text.endswith("Ana: Lisbon trip was lovely, Café Núñez 🌞"), mode
        assert hits[1].text.startswith("Ben: the Lisbon trip")  # softly: Ben's answer still comes next
        assert all(0.0 <= h.similarity_score <= 1.0 for h in hits)


def test_a_question_naming_ana_still_returns_a_clearly_better_match_from_ben_first(tmp_path: Path) -> None:
    export = timed_whatsapp(tmp_path / "chat.txt", [
        ("09:00", "Ben", "the plumber fixed the boiler on thursday 🔧"),
        ("12:00", "Ana", f"boiler {chatter(1, 40)}")])
    book = chat_book(tmp_path, export)
    hits = book.search("did Ana hear when the plumber fixed the boiler", mode="keyword")
    assert hits[0].text.startswith("Ben: ") and hits[1].text.startswith("Ana: ")


@pytest.mark.parametrize("query, people, named", [
    ("what did jose say", ["José Núñez", "Ben"], {"José Núñez"}),  # accents folded, either word of the name
    ("NÚÑEZ said?", ["José Núñez"], {"José Núñez"}),
    ("王小明说了什么", ["王小明", "李雷"], {"王小明"}),  # a name in a script without spaces: the whole of it
    ("王说了什么", ["王小明"], set()),
    ("ماذا قال محمد", ["محمد", "Ben"], {"محمد"}),  # right to left
    ("what did Ana say 🌸", ["Ana 🌸", "Anabel"], {"Ana 🌸"}),  # a word of the name, not a prefix of one
    ("what did you tell me", ["You", "Me", "Sam"], set()),  # senders called You or Me are stop words
    ("plan B for the trip", ["B", "Ben"], set()),  # one letter names nobody
])
def test_a_participant_is_named_by_a_word_of_their_name(query: str, people: list[str], named: set[str]) -> None:
    assert vecbook.chat_hits.named_people(query, people) == named


def test_a_query_naming_nobody_leaves_chat_scores_as_they_were(tmp_path: Path) -> None:
    export = timed_whatsapp(tmp_path / "chat.txt", [("09:00", "Ana", "lantern festival 🏮"),
                                                   ("12:00", "Ben", "lantern festival tickets")])
    book = chat_book(tmp_path, export)
    records = book._snapshot.records
    assert vecbook.chat_hits.named_windows(records, range(len(records)), "lantern festival") == set()
    assert vecbook.chat_hits.named_windows(records, range(len(records)), "Ana's lantern") == {0}


def test_an_emoji_finds_the_message_holding_it_with_any_skin_tone_and_cites_its_line(tmp_path: Path) -> None:
    export = tmp_path / "chat.txt"
    export.write_text("15/01/2024, 09:00 - Ana: Dinner at 8?\n15/01/2024, 09:01 - Ben: 👍🏽\n"
                      "16/01/2024, 18:00 - Ana: The 🍕 place on Elm Street ❤️\n16/01/2024, 18:02 - Ben: ok\n",
                      encoding="utf-8")
    book = chat_book(tmp_path, export)
    for query, line in (("👍", 2), ("🍕", 3), ("❤️", 3)):
        hits = book.search(query, mode="keyword")
        assert len(hits) == 1 and hits[0].line_number <= line <= hits[0].end_line, query
        assert query in export.read_text(encoding="utf-8").splitlines()[line - 1] or query == "👍"
        assert hits[0].matched_terms == [query]


def test_an_emoji_named_by_its_shortcode_in_the_query_is_found(tmp_path: Path) -> None:
    # people type :pizza: where the app turns it into the emoji (Slack, Discord, GitHub)
    export = tmp_path / "chat.txt"
    export.write_text("15/01/2024, 09:00 - Ana: Dinner at 8?\n16/01/2024, 18:00 - Ana: The 🍕 place on Elm ❤️\n",
                      encoding="utf-8")
    book = chat_book(tmp_path, export)
    for query, emoji in ((":pizza:", "🍕"), ("place :heart:", "❤️")):
        hits = book.search(query, mode="keyword")
        assert [h.line_number for h in hits] == [2], query
        assert emoji in hits[0].matched_terms, query
    assert book.search("10:30:00", mode="keyword") == []  # a time is not a shortcode


def test_an_emoji_in_a_sender_s_name_does_not_rank_their_windows_for_it(tmp_path: Path) -> None:
    export = tmp_path / "chat.txt"
    export.write_text("15/01/2024, 09:00 - Mum ❤️: Are you coming on Sunday?\n15/01/2024, 09:01 - Mum ❤️: Bring a cake\n"
                      "16/01/2024, 18:00 - Carlos 🇪🇸: See you at the station\n"
                      "17/01/2024, 20:00 - Ana: love you ❤️ 🇪🇸\n", encoding="utf-8")
    book = chat_book(tmp_path, export)
    for query in ("❤️", "🇪🇸"):
        hits = book.search(query, mode="keyword")
        assert [(h.line_number, h.matched_terms) for h in hits] == [(4, [query])], query
    assert book.search("Mum", mode="keyword")[0].line_number == 1  # the name's letters are still words
    assert vecbook.chat_hits.named_people("🇪🇸 cake", ["Carlos 🇪🇸", "Mum ❤️"]) == set()
