"""A hit's text cut to ``max_chars``: the part around its matched words, cited by the lines shown."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecbook
from conftest import EXPORTS, FakeEmbedder
from vecbook.graphemes import cluster_end, cluster_start
from vecbook.snippets import cut_around


def filler(seed: int, words: int) -> str:
    """Words that share nothing with the queries below."""
    return " ".join(f"w{seed}x{i}" for i in range(words))


def lines_of(path: Path, first: int | None, last: int | None) -> list[str]:
    assert first is not None and last is not None
    return path.read_text(encoding="utf-8").splitlines()[first - 1:last]


def test_a_long_note_cut_to_max_chars_shows_the_lines_around_its_match_and_cites_exactly_them(
        write_files: Any, fake_book: Any) -> None:
    lines = [f"line {i} {filler(i, 8)}" for i in range(60)]
    lines[47] = "the boiler was serviced in March by the plumber"
    root = write_files({"long.txt": "\n".join(lines) + "\n"})
    book = fake_book(root)
    whole = book.search("boiler serviced", mode="keyword")[0]
    assert not whole.truncated and whole.citation == "long.txt:1-60" and len(whole.text) > 2_000
    hit = book.search("boiler serviced", mode="keyword", max_chars=300)[0]
    assert hit.truncated and len(hit.text) <= 300 and lines[47] in hit.text
    # Cut at line ends, so the cited lines are the text shown, and they hold the fact (line 48).
    assert "\n".join(lines_of(root / "long.txt", hit.line_number, hit.end_line)) == hit.text
    assert hit.citation == f"long.txt:{hit.line_number}-{hit.end_line}" and hit.line_number <= 48 <= hit.end_line
    assert (hit.id, hit.snippet, hit.snippet_line) == (whole.id, whole.snippet, whole.snippet_line)
    assert book.get(hit.id).record.text == whole.text  # get gives the whole record back


@pytest.mark.parametrize("note, query, together", [
    ("we went to the dentist at the hospital. " * 6 + "appointment dentist friday morning. " + "x " * 40,
     "dentist friday", "dentist friday"),
    ("ไปหาหมอฟันที่โรงพยาบาล " * 6 + "นัดหมอฟันวันศุกร์ " + "ก " * 40, "หมอฟันวันศุกร์", "หมอฟันวันศุกร์"),
], ids=["english", "thai"])
def test_a_cut_shows_where_the_query_words_meet_not_where_the_first_one_is_repeated(
        write_files: Any, fake_book: Any, note: str, query: str, together: str) -> None:
    """A word said again and again before the one place that holds every query word: a cut
    smaller than the snippet shows that place (the snippet centres on it), in any language."""
    root = write_files({"note.txt": note + "\n"})
    hit = fake_book(root).search(query, mode="keyword", max_chars=60)[0]
    assert hit.truncated and together in hit.text


def test_a_note_with_headers_cites_the_lines_of_its_text_not_its_headers(write_files: Any, fake_book: Any) -> None:
    body = [filler(i, 10) for i in range(30)]
    body[3] = "the kettle descaler is under the sink"
    root = write_files({"home.txt": "Date: 2024-03-01\nTags: house\n\n" + "\n".join(body) + "\n"})
    hit = fake_book(root).search("kettle descaler", mode="keyword", max_chars=200)[0]
    assert hit.truncated and body[3] in hit.text
    assert "\n".join(lines_of(root / "home.txt", hit.line_number, hit.end_line)) == hit.text
    assert hit.line_number is not None and hit.line_number >= 4  # lines 1-3 are the headers and the blank line


def test_a_note_matched_by_its_title_header_alone_is_cut_at_whole_lines_it_cites(write_files: Any,
                                                                                fake_book: Any) -> None:
    body = [f"{filler(i, 6)} {filler(i + 100, 3)}" for i in range(40)]
    root = write_files({"trip.txt": "Title: Zanzibar itinerary\n\n" + "\n".join(body) + "\n"})
    hit = fake_book(root).search("zanzibar itinerary", mode="keyword", max_chars=200)[0]
    assert hit.truncated and 100 <= len(hit.text) <= 200
    assert "\n".join(lines_of(root / "trip.txt", hit.line_number, hit.end_line)) == hit.text


def whatsapp(tmp_path: Path, messages: list[tuple[str, str]]) -> Path:
    """A WhatsApp export of ``(author, text)`` messages a minute apart (one window: no pauses)."""
    path = tmp_path / "chat.txt"
    path.write_text("".join(f"15/01/2024, 09:{minute:02d} - {author}: {text}\n"
                            for minute, (author, text) in enumerate(messages)), encoding="utf-8")
    return path


def chat_book(tmp_path: Path, export: Path, fmt: str) -> vecbook.VecBook:
    (tmp_path / "notes").mkdir(exist_ok=True)
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "chat"\npath = "{export}"\nformat = "{fmt}"\n',
        encoding="utf-8")
    return vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())


@pytest.mark.parametrize("fact", ["the plumber comes thursday at nine", "水管工 plumber 星期四 thursday 来",
                                  "🔧 plumber thursday 🔧", "השרברב plumber מגיע thursday"])
def test_a_chat_hit_cut_to_max_chars_shows_whole_messages_around_the_answer_and_cites_their_lines(
        tmp_path: Path, fact: str) -> None:
    messages = [("Ana", filler(i, 10)) for i in range(14)]
    messages[9] = ("Ben", fact)
    export = whatsapp(tmp_path, messages)
    book = chat_book(tmp_path, export, "whatsapp")
    whole = book.search("plumber thursday", mode="keyword")[0]
    hit = book.search("plumber thursday", mode="keyword", max_chars=250)[0]
    assert hit.truncated and len(hit.text) <= 250 and f"Ben: {fact}" in hit.text.splitlines()
    # Each line shown is a message of the cited lines, in order, and nothing else is cited.
    cited = lines_of(export, hit.line_number, hit.end_line)
    assert [line.split(" - ", 1)[1] for line in cited] == hit.text.splitlines()
    assert whole.line_number is not None and hit.line_number is not None and hit.end_line is not None
    assert whole.line_number < hit.line_number <= 10 <= hit.end_line < whole.end_line  # type: ignore[operator]
    assert hit.citation == f"chat/chat.txt:{hit.line_number}-{hit.end_line}"



@pytest.mark.parametrize("where", [0, 3, 6])
def test_a_chat_hit_cut_inside_a_message_of_several_lines_cites_only_the_lines_it_shows(tmp_path: Path,
                                                                                      where: int) -> None:
    # A recipe sent as one message of seven lines: a cut around one of its lines shows that line
    # and its neighbours, and cites those lines, not the message's seven.
    lines = [f"{filler(i, 8)} 👨\u200d🍳" for i in range(7)]
    lines[where] = "the plum cake 🍰 needs 200 g of sugar"
    export = whatsapp(tmp_path, [("Ana", filler(20, 12)), ("Ben", "\n".join(lines)), ("Ana", filler(21, 12))])
    book = chat_book(tmp_path, export, "whatsapp")
    assert [s[1:] for s in book._snapshot.records[0].segments] == [(1, 1), (2, 8), (9, 9)]
    hit = book.search("plum cake sugar", mode="keyword", max_chars=120)[0]
    assert hit.truncated and lines[where] in hit.text
    cited = lines_of(export, hit.line_number, hit.end_line)
    # Each cited line as the text shows it: a message's first line after its date, later lines as they are.
    assert "\n".join(line.split(" - ", 1)[1] if line.startswith("15/01/2024") else line for line in cited) == hit.text
    assert hit.citation == f"chat/chat.txt:{hit.line_number}-{hit.end_line}" and hit.end_line - hit.line_number < 6


def test_a_cut_hit_of_a_json_export_cites_the_message_objects_it_shows(tmp_path: Path) -> None:
    export = EXPORTS / "telegram" / "chat-analytics_BIG_20A_5475M.json"
    book = chat_book(tmp_path, export, "telegram")
    longest = max(book._snapshot.records, key=lambda r: len(r.text))
    last = longest.text.splitlines()[-1]  # its last message, asked for word for word
    hit = next(h for h in book.search(last.split(": ", 1)[1], mode="keyword", max_results=50, max_chars=120)
               if h.id == longest.id)
    assert hit.truncated and hit.text.endswith(last) and len(hit.text) <= 120
    assert longest.line_number is not None and longest.end_line is not None
    assert longest.line_number < hit.line_number <= hit.end_line <= longest.end_line  # type: ignore[operator]
    # The window's #message id names its first message, which is not shown: the citation drops it.
    assert "#" in longest.citation and hit.citation == f"{hit.file_path}:{hit.line_number}-{hit.end_line}"
    cited = "\n".join(lines_of(export, hit.line_number, hit.end_line))
    for line in hit.text.splitlines():  # each message shown (its first 30 characters) is in the cited lines
        said = line.split(": ", 1)[-1][:30]
        assert said in cited or json.dumps(said)[1:-1] in cited, (hit.citation, said)


def test_the_budget_counts_the_cut_texts(write_files: Any, fake_book: Any) -> None:
    root = write_files({f"n{i}.txt": f"{filler(i, 100)} tulips {filler(i + 50, 100)}\n" for i in range(5)})
    book = fake_book(root)
    uncut = book.search("tulips", mode="keyword", max_total_chars=1_000)
    hits = book.search("tulips", mode="keyword", max_total_chars=1_000, max_chars=300)
    assert len(uncut) == 0 and uncut.left_out == 5  # each whole text is ~2,000 characters
    assert len(hits) == 3 and hits.left_out == 2 and all(h.truncated and "tulips" in h.text for h in hits)
    assert sum(len(h.text) for h in hits) <= 1_000


def test_a_hit_within_max_chars_comes_whole(write_files: Any, fake_book: Any) -> None:
    root = write_files({"a.txt": "short note about tulips\n"})
    hit = fake_book(root).search("tulips", mode="keyword", max_chars=100)[0]
    assert not hit.truncated and hit.text == "short note about tulips" and hit.citation == "a.txt:1-1"


@pytest.mark.parametrize("value", [-1, 1.5, True, "300", 1_000_001])
def test_max_chars_must_be_a_whole_number_of_characters(write_files: Any, fake_book: Any, value: Any) -> None:
    book = fake_book(write_files({"a.txt": "hello"}))
    with pytest.raises(vecbook.QueryError, match="max_chars must be a whole number of characters from 0 to"):
        book.search("hello", max_chars=value)


TEXT = st.text(alphabet=st.sampled_from(list("ab \n东京🎉שׁé")), max_size=300)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data(), st.integers(min_value=0, max_value=320))
def test_a_cut_is_within_the_limit_and_holds_as_much_of_its_focus_as_fits(text: str, data: Any, limit: int) -> None:
    first = data.draw(st.integers(min_value=0, max_value=len(text)))
    last = data.draw(st.integers(min_value=first, max_value=len(text)))
    # A focus is matched words, which begin and end between grapheme clusters (ש and its point are one).
    first, last = cluster_start(text, first), cluster_end(text, last)
    start, end = cut_around(text, (first, last), limit)
    assert 0 <= start <= end <= len(text) and end - start <= limit
    if len(text) <= limit:
        assert (start, end) == (0, len(text))
    elif limit >= (first_end := cluster_end(text, min(first + 1, len(text)))) - first:
        # the focus, or of a wide one (query words far apart, found by meaning) its first character
        assert start <= first and end >= (last if last - first <= limit // 2 else first_end)
        line_end = text.find("\n", last)
        lines = (text.rfind("\n", 0, first) + 1, len(text) if line_end < 0 else line_end)
        if "\n" not in text[first:last] and last - first <= limit // 2 and lines[1] - lines[0] <= limit:
            # the focus's lines fit: the cut is whole lines, and no further line (with the blank
            # lines before it) would fit beside them
            assert (start == 0 or text[start - 1] == "\n") and (end == len(text) or text[end] == "\n")
            before = text[:start].rstrip("\n")
            if before and start <= first:
                assert end - (before.rfind("\n") + 1) > limit
            after = text[end:].lstrip("\n")
            if after.split("\n")[0] and end >= last:
                assert len(text) - len(after) + len(after.split("\n")[0]) - start > limit


def test_a_cut_keeps_a_chat_line_whole_with_its_speaker_where_the_line_fits() -> None:
    text = "Ana: we meet at the station\nBen: ok\nAna: " + "blah " * 40
    start, end = cut_around(text, (text.index("station"), text.index("station") + 7), 40)
    assert text[start:end] == "Ana: we meet at the station\nBen: ok"


def test_a_cut_sheds_the_blank_lines_at_its_edges() -> None:
    text = "y " * 100 + "\n\n\nthe zeppelin hangar is here\n\n\n" + "y " * 100
    start, end = cut_around(text, (text.index("zeppelin"), text.index("zeppelin") + 8), 40)
    assert text[start:end] == "the zeppelin hangar is here"


def test_a_blank_line_never_takes_the_room_of_a_line_that_fits() -> None:
    text = "x" * 30 + "\n\nthe zeppelin hangar\nBen: see you there!!\n" + "y " * 40
    start, end = cut_around(text, (text.index("zeppelin"), text.index("zeppelin") + 8), 40)
    assert text[start:end] == "the zeppelin hangar\nBen: see you there!!"


def test_a_wide_focus_found_by_meaning_is_cut_at_line_ends_too() -> None:
    text = "\n".join(f"line {i} alpha bravo charlie delta" for i in range(40))
    start, end = cut_around(text, (300, 780), 100)
    assert text[start:end].splitlines() == [f"line {i} alpha bravo charlie delta" for i in (8, 9, 10)]


def test_the_cli_cuts_each_hit_with_max_chars_and_cites_the_lines_shown(write_files: Any,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    lines = [filler(i, 12) for i in range(40)]
    lines[30] = "the spare key is with the neighbour at number 12"
    root = write_files({"keys.txt": "\n".join(lines) + "\n"})
    code = vecbook.cli.main(["search", "spare key neighbour", "--mode", "keyword", "--data-dir", str(root),
                             "--max-chars", "200", "--json"])
    hit = json.loads(capsys.readouterr().out)[0]
    assert code == 0 and hit["truncated"] is True and lines[30] in hit["text"] and len(hit["text"]) <= 200
    assert hit["citation"] == f"keys.txt:{hit['line_number']}-{hit['end_line']}" and hit["line_number"] > 1
    # Without --json, a cut hit shows its cut text under the lines it cites (not its snippet).
    vecbook.cli.main(["search", "spare key neighbour", "--mode", "keyword", "--data-dir", str(root),
                      "--max-chars", "200"])
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith(hit["citation"]) and printed[1] == f"    lines {hit['line_number']}-{hit['end_line']}:"
    assert [line.strip() for line in printed[2:2 + len(hit["text"].splitlines())]] == hit["text"].splitlines()


def test_the_cli_prints_every_line_a_cut_hit_cites_blank_ones_too(write_files: Any,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    paragraphs = [filler(i, 8) for i in range(30)]
    paragraphs[20] = "the spare key is with the neighbour at number 12"
    root = write_files({"keys.md": "\n\n".join(paragraphs) + "\n"})
    vecbook.cli.main(["search", "spare key neighbour", "--mode", "keyword", "--data-dir", str(root),
                      "--max-chars", "200", "--max-results", "1"])
    printed = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(printed) if line.startswith("    lines "))
    first, last = (int(n) for n in printed[at].strip().removeprefix("lines ").rstrip(":").split("-"))
    body = printed[at + 1:]
    assert "" in body and len(body) == last - first + 1  # the blank lines between paragraphs count
    assert [line.strip() for line in body] == (root / "keys.md").read_text().splitlines()[first - 1:last]


def test_a_sqlite_row_cut_to_max_chars_keeps_citing_its_row(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "notes.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, content TEXT)")
        connection.execute("INSERT INTO notes VALUES ('n1', ?)", (f"{filler(1, 200)} the wifi password is on the fridge",))
    connection.close()
    (tmp_path / "data").mkdir()
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "data"\n[[collections]]\nname = "db"\ndatabase = "{db}"\ntable = "notes"\n', encoding="utf-8")
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    whole = book.search("wifi password", mode="keyword")[0]
    hit = book.search("wifi password", mode="keyword", max_chars=100)[0]
    assert hit.truncated and "the wifi password is on the fridge" in hit.text and len(hit.text) <= 100
    assert hit.line_number is None and hit.citation == whole.citation and whole.citation.endswith("#notes:n1")


def test_a_cut_ends_inside_a_giant_word_rather_than_showing_a_fraction_of_its_limit() -> None:
    text = "Ben: locksmith " + "z" * 1_000  # a pasted token with no space in it
    start, end = cut_around(text, (5, 14), 100)
    assert (start, end) == (0, 100)


def test_a_wide_focus_is_cut_between_words_and_keeps_its_first_word() -> None:
    # Query words far apart (wider than half the limit): the first line ends the cut, whole,
    # rather than a cut inside a word of the next line; at a small limit the first word shows whole.
    text = ("Ana: " + "abcd " * 9 + "golf bravo charlie\n" + "Ben: " + " ".join(["quebecromeosierra"] * 6)
            + " golf echo\nAna: the end " + "y " * 50)
    first = text.index("golf")
    start, end = cut_around(text, (first, text.rindex("echo") + 4), 120)
    assert text[start:end] == "Ana: " + "abcd " * 9 + "golf bravo charlie"
    party = "🙂🎉 party time 🙂🎉 party time 🙂🎉 party time"
    start, end = cut_around(party, (party.index("party"), party.rindex("party") + 5), 5)
    assert party[start:end] == "party"


# What a reader sees as one character, of one to seven code points: a skin tone, a family and a
# rainbow flag joined by ZWJ, a country flag, an accent written as a combining mark, a Hebrew
# point, a keycap, a Devanagari conjunct, a Hangul syllable in jamo, U+2028 inside a line.
GRAPHEMES = ["a", "b", " ", "\n", "东", "👍🏽", "👨\u200d👩\u200d👧", "🇯🇵", "e\u0301", "ש\u05c1",
             "🏳\ufe0f\u200d🌈", "1\ufe0f\u20e3", "क\u094dष\u093f", "\u1100\u1161\u11a8", "\u2028"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(GRAPHEMES), min_size=1, max_size=60), st.data(), st.integers(min_value=0, max_value=120))
def test_a_cut_never_splits_a_grapheme(parts: list[str], data: Any, limit: int) -> None:
    text = "".join(parts)
    bounds = [0, *itertools.accumulate(len(part) for part in parts)]
    first = data.draw(st.sampled_from(bounds))
    last = data.draw(st.sampled_from([b for b in bounds if b >= first]))
    start, end = cut_around(text, (first, last), limit)
    assert start in bounds and end in bounds and 0 <= end - start <= limit


def test_a_hit_cut_among_emoji_shows_whole_emoji(tmp_path: Path) -> None:
    export = whatsapp(tmp_path, [("Ana", "🍕 🏳\ufe0f\u200d🌈 👍🏽 🇮🇹 cafe\u0301 👨\u200d👩\u200d👧 " * 3)])
    book = chat_book(tmp_path, export, "whatsapp")
    hit = book.search("🍕", mode="keyword", max_chars=5)[0]
    assert hit.truncated and hit.text == "🍕"  # not "🍕 🏳️" and half of the rainbow flag's ZWJ sequence
    for limit in range(1, 40):
        text = book.search("🍕", mode="keyword", max_chars=limit)[0].text
        assert len(text) <= limit and not text.endswith(("\u200d", "\ufe0f", "🏳", "👍", "🇮", "e", "👨"))


@pytest.mark.parametrize("line", ["今天我们去北京看长城，天气很好。", "東京で寿司を食べました。", "สวัสดีครับ👍🏽🇯🇵"])
def test_a_cut_in_a_long_line_without_ascii_words_looks_only_near_it(line: str) -> None:
    # Clusters are found from a boundary close before the cut, not from the line's start: a line
    # of 100,000 characters of Chinese was scanned whole for every cut (0.2 s each).
    from vecbook import graphemes

    text = line * (100_000 // len(line))
    for at in (len(text) - 7, len(text) // 2 + 3):
        low = graphemes._known_boundary(text, at)
        assert 0 < at - low <= graphemes._REACH and graphemes.is_boundary(text[low - 300:], 300)
        assert cut_around(text, (at, at + 2), 40)[1] - cut_around(text, (at, at + 2), 40)[0] <= 40


def test_between_two_ascii_characters_a_cut_falls_where_unicode_puts_a_boundary() -> None:
    # Told without the regex module (~20 ms of a one-off search): only CR LF is one cluster there.
    from vecbook import graphemes

    every_cluster = graphemes._patterns()[0]
    for pair in (chr(a) + chr(b) for a in range(128) for b in range(128)):
        ends = [found.end() for found in every_cluster.finditer(pair)]
        assert graphemes.is_boundary(pair, 1) is (ends[0] == 1), repr(pair)
        assert (graphemes.cluster_start(pair, 1), graphemes.cluster_end(pair, 1)) == ((1, 1) if ends[0] == 1 else (0, 2))


@pytest.mark.parametrize("text, columns, shown", [
    ("Author: ana", 20, "Author: ana"),
    ("Tags: garden, budget, meeting", 12, "Tags: gar..."),
    ("tab\there and a bell \a inside", 14, "tab\there and..."),  # a control character takes no column
    ("a\r\nb", 2, "a\r\nb"),
    ("caf\u00e9 \u4e1c\u4eac", 8, "caf\u00e9 ..."),  # the wide characters take two columns each
])
def test_a_preview_is_clipped_to_its_columns(text: str, columns: int, shown: str) -> None:
    from vecbook.graphemes import clip_columns

    assert clip_columns(text, columns) == shown
