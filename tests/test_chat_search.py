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
    """Words that share nothing with the query or with other chatter (no folding as duplicates)."""
    return " ".join(f"w{seed}x{i}" for i in range(words))


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


@pytest.mark.parametrize("text", ["今天我们去北京看长城，天气很好。", "🎉🎉🎉 party at ours 🎂🎈", "مرحبا بكم في المكتبة"])
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
