"""Telegram Desktop JSON exports: one chat, a whole account, entities, media, bad input."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export
from vecbook.exports import telegram
from vecbook.exports.base import Export, clean_text

from conftest import EXPORTS, FakeEmbedder, cited_lines

TELEGRAM = EXPORTS / "telegram"
DM = TELEGRAM / "chat-analytics_DM_2A_7M.json"
BIG = TELEGRAM / "chat-analytics_BIG_20A_5475M.json"


def collection(path: Path, name: str = "tg") -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path))


def load(path: Path, name: str = "tg") -> tuple[list[vecbook.Record], list[vecbook.Problem]]:
    records, problems, _ = load_export(collection(path, name))
    return records, problems


def assert_messages_cited(root: Path, record: vecbook.Record) -> None:
    """Each segment cites exactly one message object, and that object shown as the reader
    shows it (entities joined, media named) is the segment's text; the anchor is its id.
    (conftest's check compares raw text, which a list of entities never matches.)"""
    whole = _cited_lines(root, record)
    starts = [s[0] for s in record.segments] + [len(record.content) + 1]
    for (offset, first, last), end in zip(record.segments, starts[1:]):
        assert record.line_number <= first <= last <= record.end_line, record.citation
        span = "\n".join(whole[first - record.line_number:last - record.line_number + 1])
        item = json.loads(span.strip().rstrip(","))
        said = record.content[offset:end - 1].split(": ", 1)[1]
        assert said == telegram.shown_text(item), record.citation
        if offset == 0:
            assert record.citation.endswith(f"#{item['id']}") or record.citation.endswith(f":{item['id']}")


def _cited_lines(root: Path, record: vecbook.Record) -> list[str]:
    """conftest's ``cited_lines``, reading each file once (the big fixture has 4,904 windows)."""
    if root.is_file():
        lines = _file_lines(root)
        return lines[record.line_number - 1:record.end_line]
    return cited_lines(root, record)


@functools.lru_cache(maxsize=4)
def _file_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8-sig").splitlines()


def message(id: int, text: object, when: int, author: str = "Ana", **extra: object) -> dict:
    return {"id": id, "type": "message", "date": "2024-03-01T10:00:00", "date_unixtime": str(when),
            "from": author, "from_id": f"user{abs(hash(author)) % 1000}", "text": text, **extra}


def chat(name: str | None, kind: str, chat_id: int, messages: list[dict]) -> dict:
    return {**({"name": name} if name is not None else {}), "type": kind, "id": chat_id, "messages": messages}


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


# -- the fixtures --

def test_a_personal_chat_yields_windows_of_its_messages() -> None:
    records, problems = load(DM)
    assert problems == []
    assert [(r.citation, r.text) for r in records] == [
        ("tg/chat-analytics_DM_2A_7M.json:16-39#3644", "Bob: https://google.com 👀"),
        # "date" alone is local time, read at the exporting computer's offset: the one item
        # with both fields (a service message without text: a call) shows -03:00; its gap of
        # years to the next message, and two months' to an exact time, split
        ("tg/chat-analytics_DM_2A_7M.json:40-53#3645", "Alice: hello world"),
        ("tg/chat-analytics_DM_2A_7M.json:54-67#3662", "Bob: world?"),
        ("tg/chat-analytics_DM_2A_7M.json:68-81#3663", "Alice: blah blah"),
        ("tg/chat-analytics_DM_2A_7M.json:82-105#3672", "Alice: [photo]\nAlice: [photo]"),
    ]
    local = "2019-07-12T16:55:32-03:00"  # whatever this computer's zone
    assert records[0].metadata == {"chat_type": "personal_chat", "chat_id": 700000000, "date": local,
                                   "end_date": local, "participants": ["Bob"],
                                   "conversation": "Bob", "format": "telegram", "message_count": 1}
    assert records[3].metadata["date"] == "2022-05-09T23:26:09+00:00"  # from date_unixtime, UTC
    assert records[0].id == "tg:chat-analytics_DM_2A_7M.json#3644"


def test_a_big_group_keeps_every_message_and_cites_each() -> None:
    records, problems = load(BIG)
    assert problems == []
    assert sum(r.metadata["message_count"] for r in records) == 5475
    assert len({r.id for r in records}) == len(records)
    first = records[1]
    assert (first.citation, first.text) == ("tg/chat-analytics_BIG_20A_5475M.json:14-29#2",
                                            "Christelle61: Aperiam a eveniet provident nobis.\n"
                                            "Coy99: Quia neque accusantium qui debitis error.")
    assert first.metadata["date"] == "2017-01-01T10:03:04+00:00"  # "date" written with Z: aware
    assert len({p for r in records for p in r.metadata["participants"]}) == 20
    for record in records:
        assert_messages_cited(BIG, record)


def test_the_dm_cites_its_lines() -> None:
    for record in load(DM)[0]:
        assert_messages_cited(DM, record)


# -- entities, media, service messages, a whole account --

def test_entities_are_joined_and_media_named(tmp_path: Path) -> None:
    path = write(tmp_path / "result.json", chat("Book club ", "private_group", 42, [
        {"id": 1, "type": "service", "date_unixtime": "1709287200", "actor": "Ana", "action": "create_group",
         "title": "Book club", "text": ""},
        message(2, ["Read ", {"type": "bold", "text": "Dune"}, " by ", {"type": "mention", "text": "@bo"},
                    ", see ", {"type": "text_link", "text": "the list", "href": "https://x.org/list"}], 1709287260),
        message(3, "", 1709287320, "Bo", file="files/notes.pdf", file_name="notes.pdf", mime_type="application/pdf"),
        message(4, "", 1709287380, "Bo", media_type="sticker", sticker_emoji="👍",
                file="(File not included. Change data exporting settings to download.)"),
        message(5, "listen", 1709287440, "Cy", media_type="voice_message",
                file="(File not included. Change data exporting settings to download.)"),
        message(6, "", 1709287500, "Cy",
                poll={"question": "Next book?", "answers": [{"text": "Emma"}, {"text": "Ulysses"}]}),
        {**message(7, "from a deleted account", 1709287560), "from": None, "from_id": "user999"},
        message(8, "  multi\nline  \n", 1709287620, reply_to_message_id=2),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == [
        "Ana: Read Dune by @bo, see the list (https://x.org/list)\nBo: [file: notes.pdf]\nBo: [sticker 👍]\n"
        "Cy: listen\n[voice message]\nCy: [poll: Next book? (Emma, Ulysses)]\nuser999: from a deleted account\n"
        "Ana: multi\nline"]
    assert records[0].metadata["conversation"] == "Book club"
    assert records[0].metadata["participants"] == ["Ana", "Bo", "Cy", "user999"]
    assert records[0].citation == "tg/result.json:15-114#2"
    assert_messages_cited(path, records[0])


def test_a_forwarded_message_says_whose_words_it_forwards(tmp_path: Path) -> None:
    # Forwarded words are not the forwarder's: the line says whose they are, and a search for
    # the channel finds what was forwarded from it.
    path = write(tmp_path / "result.json", chat("Book club", "private_group", 42, [
        message(1, "Solaris was published in 1961", 1709287200, "Bo", forwarded_from="Lem Fans 📚",
                forwarded_from_id="channel1001"),
        message(2, "", 1709287260, "Bo", forwarded_from=None, photo="photos/photo_1.jpg", width=1, height=1),
        message(3, "great", 1709287320, "Cy", saved_from="Lem Fans 📚"),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == [
        "Bo: [forwarded from Lem Fans 📚]\nSolaris was published in 1961\nBo: [forwarded]\n[photo]\nCy: great"]
    assert_messages_cited(path, records[0])


def test_a_venue_a_game_and_an_invoice_say_what_they_are(tmp_path: Path) -> None:
    # Telegram Desktop writes a shared place's name and address beside its coordinates, and a
    # game's or an invoice's title: what was sent, and what one searches for.
    where = {"latitude": 38.697, "longitude": -9.203}
    path = write(tmp_path / "result.json", chat("Lisboa", "private_group", 42, [
        message(1, "", 1709287200, place_name="Pastéis de Belém", address="R. de Belém 84-92, Lisboa",
                location_information=where),
        message(2, "here!", 1709287260, "Bo", location_information=where, live_location_period_seconds=900),
        message(3, "", 1709287320, "Cy", game_title="Lumberjack", game_description="Chop the tree",
                game_link="https://t.me/gamebot?game=lumberjack"),
        message(4, "", 1709287380, "Shop", invoice_information={
            "title": "Pastel de nata ×6", "description": "fresh from the oven", "amount": 900, "currency": "EUR"}),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == [
        "Ana: [location: Pastéis de Belém, R. de Belém 84-92, Lisboa]\nBo: here!\n[location]\n"
        "Cy: [game: Lumberjack: Chop the tree]\nShop: [invoice: Pastel de nata ×6: fresh from the oven]"]
    assert_messages_cited(path, records[0])


def test_a_poll_with_formatting_shows_its_words_not_the_entities(tmp_path: Path) -> None:
    # Telegram Desktop writes a poll's question and answers as message text is written: a
    # string, or a list of strings and entities once any part is formatted (custom emoji, bold)
    path = write(tmp_path / "result.json", chat("Семья", "private_group", 42, [
        message(1, "", 1709287200, "Ана", poll={
            "question": [{"type": "bold", "text": "Куда"}, " едем? ",
                         {"type": "custom_emoji", "text": "🏖", "document_id": "5368324170671202286"}],
            "closed": False, "total_voters": 2,
            "answers": [{"text": [{"type": "italic", "text": "Лиссабон"}, " 🇵🇹"], "voters": 1, "chosen": True},
                        {"text": "東京", "voters": 1, "chosen": False}]}),
    ]))
    odd = write(tmp_path / "odd" / "result.json", chat("x", "private_group", 43, [
        message(1, "", 1709287200, poll={"question": "Why?", "answers": 5})]))
    assert [r.text for r in load(odd)[0]] == ["Ana: [poll: Why?]"]  # answers of an odd shape: the question alone
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == ["Ана: [poll: Куда едем? 🏖 (Лиссабон 🇵🇹, 東京)]"]
    assert_messages_cited(path, records[0])


def test_a_checklist_shows_its_title_and_items(tmp_path: Path) -> None:
    # Telegram's checklists (2025) are written as "todo_list", the message's text empty: it is
    # what was sent, not a message without text
    path = write(tmp_path / "result.json", chat("בית", "private_group", 42, [
        message(1, "", 1709287200, "דוד", todo_list={
            "title": "רשימת קניות", "others_can_append": True, "others_can_complete": True,
            "answers": [{"text": "חלב", "id": 1}, {"text": [{"type": "bold", "text": "passports"}], "id": 2}]}),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == ["דוד: [checklist: רשימת קניות (חלב, passports)]"]
    assert_messages_cited(path, records[0])


def test_a_channel_post_names_its_signer(tmp_path: Path) -> None:
    # A channel with signatures on writes the channel as "from" and the person as "author", as
    # the app shows a post: a search for the signer's posts finds them
    path = write(tmp_path / "result.json", chat("Lisboa Daily", "public_channel", 42, [
        {**message(1, "Os elétricos voltam amanhã 🚋", 1709287200, "Lisboa Daily"), "author": "Ana Lima"},
        {**message(2, "حالة الطقس: مشمس", 1709287260, "Lisboa Daily"), "author": "سارة"},
        message(3, "unsigned post", 1709287320, "Lisboa Daily"),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == [
        "Lisboa Daily (Ana Lima): Os elétricos voltam amanhã 🚋\nLisboa Daily (سارة): حالة الطقس: مشمس\n"
        "Lisboa Daily: unsigned post"]
    assert records[0].metadata["participants"] == ["Lisboa Daily (Ana Lima)", "Lisboa Daily (سارة)", "Lisboa Daily"]


def test_a_shared_contact_is_named_else_its_number_shown(tmp_path: Path) -> None:
    path = write(tmp_path / "result.json", chat("Lisboa", "private_group", 42, [
        message(1, "", 1709287200, contact_information={"first_name": "Ана", "last_name": "Ли",
                                                        "phone_number": "+351 912 345 678"}),
        message(2, "", 1709287260, contact_information={"first_name": "", "last_name": "",
                                                        "phone_number": "+351 912 345 679"}),
        message(3, "", 1709287320, contact_information={"first_name": "", "last_name": "", "phone_number": ""}),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == ["Ana: [contact: Ана Ли]\nAna: [contact: +351 912 345 679]\nAna: [contact]"]


def test_paid_media_and_a_giveaway_say_what_they_are(tmp_path: Path) -> None:
    # A channel's paid post (Telegram Desktop writes only its price in Stars) and giveaways carry
    # no text: named, they are not dropped as messages without text
    path = write(tmp_path / "result.json", chat("Lisboa Daily", "public_channel", 42, [
        message(1, "", 1709287200, "Lisboa Daily", paid_stars_amount=50),
        message(2, "bastidores 🎬", 1709287260, "Lisboa Daily", paid_stars_amount=25),
        message(3, "", 1709287320, "Lisboa Daily", giveaway_information={
            "quantity": 3, "months": 6, "until_date": "2024-03-08T10:00:00", "channels": ["42"], "countries": [],
            "additional_prize": "a pastel de nata", "stars": 0, "is_only_new_subscribers": False}),
        message(4, "", 1709287380, "Lisboa Daily", giveaway_results={
            "channel": "42", "winners": ["1", "2"], "additional_prize": "", "until_date": "2024-03-08T10:00:00",
            "launch_message_id": 3, "winners_count": 2}),
    ]))
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == [
        "Lisboa Daily: [paid media]\nLisboa Daily: bastidores 🎬\n[paid media]\n"
        "Lisboa Daily: [giveaway: a pastel de nata]\nLisboa Daily: [giveaway results]"]


def test_a_broken_emoji_a_lone_surrogate_escape_reads_as_a_replacement_character(tmp_path: Path) -> None:
    """An export can hold half of an emoji's UTF-16 pair (``"\\ud83d"``: a message cut inside it).
    It reads as U+FFFD, as invalid UTF-8 bytes in a note do: a lone surrogate cannot be written
    as UTF-8, so every hit holding it failed to print (``vecbook search`` ended in a traceback, the
    MCP search in "Error serializing to JSON ... surrogates not allowed"). A whole pair is its emoji."""
    path = tmp_path / "result.json"
    path.write_text(json.dumps(chat("Trip", "personal_chat", 7, [
        message(1, "the ferry \ud83d leaves at nine \ud83d\ude00", 1709287200),
        message(2, ["tickets ", {"type": "bold", "text": "\udc4d"}], 1709287260, "Bo")]), indent=1), encoding="utf-8")
    assert "\\ud83d" in path.read_text(encoding="utf-8")
    records, problems = load(path)
    assert problems == []
    assert [r.text for r in records] == ["Ana: the ferry \ufffd leaves at nine 😀\nBo: tickets \ufffd"]
    (tmp_path / "notes").mkdir()
    (tmp_path / "vecbook.toml").write_text(f'data_directory = "notes"\n[[collections]]\nname = "tg"\npath = "{path}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    for max_chars in (None, 12):
        hits = book.search("ferry", mode="keyword", max_chars=max_chars)
        json.dumps(hits.to_dicts(), ensure_ascii=False).encode("utf-8")  # what the CLI and MCP write


@pytest.mark.parametrize("pair", ["\\ud83d\\ude00", "\\uD83D\\uDE00"], ids=["python", "dotnet"])
def test_an_export_whose_emoji_are_whole_pairs_of_escapes_is_not_walked(pair: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's json and DiscordChatExporter (.NET) write every emoji as two escapes: only a lone
    one is mended, and the values of an export without one are used as decoded (walking each of
    them made reading such exports 2.5x slower)."""
    from vecbook.exports import jsonpos

    def walked(value: object) -> object:
        raise AssertionError("walked an export holding no lone surrogate")

    monkeypatch.setattr(jsonpos, "_without_lone_surrogates", walked)
    text = f'[{{"text": "nine {pair}"}},\n {{"text": "ok {pair}{pair}"}}]'
    assert [value["text"] for _, _, value in jsonpos.JsonText(text).elements(0)] == ["nine 😀", "ok 😀😀"]


def test_an_account_export_reads_every_chat_and_keeps_their_ids_apart(tmp_path: Path) -> None:
    path = write(tmp_path / "DataExport" / "result.json", {
        "about": "Here is the data you requested.",
        "personal_information": {"user_id": 1, "first_name": "Ana"},
        "chats": {"about": "This page lists all chats from this export.", "list": [
            chat("Bo", "personal_chat", 100, [message(1, "hi Bo", 1709287200), message(2, "hi!", 1709287260, "Bo")]),
            chat(None, "saved_messages", 1, [message(1, "buy milk", 1709290000)]),
            {"name": "no messages", "type": "private_group", "id": 7},
        ]},
        "left_chats": {"about": "Chats you left.", "list": [
            chat("Old team", "private_supergroup", 300, [message(1, "bye all", 1709300000)]),
        ]},
    })
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.metadata["conversation"], r.metadata["chat_type"], r.text, r.id) for r in records] == [
        ("Bo", "personal_chat", "Ana: hi Bo\nBo: hi!", "tg:DataExport/result.json#100:1"),
        ("Saved Messages", "saved_messages", "Ana: buy milk", "tg:DataExport/result.json#1:1"),
        ("Old team", "private_supergroup", "Ana: bye all", "tg:DataExport/result.json#300:1"),
    ]
    assert records[0].citation.startswith("tg/DataExport/result.json:") and records[0].citation.endswith("#100:1")
    for record in records:
        assert_messages_cited(path, record)


def test_a_chat_exported_twice_is_read_once_and_cited_in_the_newer_export(tmp_path: Path) -> None:
    # Telegram Desktop names each export's folder by its day: March's and June's side by side
    march = [message(1, "the ferry to Porto leaves at noon", 1709287200), message(2, "ok", 1709287260, "Bo")]
    write(tmp_path / "ChatExport_2024-03-01" / "result.json", chat("Bo", "personal_chat", 100, march))
    write(tmp_path / "ChatExport_2024-06-01" / "result.json",
          chat("Bo", "personal_chat", 100, [*march, message(3, "the ferry again?", 1718870400)]))
    records, problems = load(tmp_path)
    assert [(r.citation.split(":")[0], r.text) for r in records] == [
        ("tg/ChatExport_2024-06-01/result.json", "Ana: the ferry to Porto leaves at noon\nBo: ok"),
        ("tg/ChatExport_2024-06-01/result.json", "Ana: the ferry again?")]
    assert [p.reason for p in problems] == ["collection 'tg': the same chat as 'ChatExport_2024-06-01/result.json', "
                                            "exported again: all 2 of its messages are read there"]


def test_a_chat_exported_alone_and_in_the_account_export_is_read_once_though_renamed_since(tmp_path: Path) -> None:
    # the chat's name is the contact's as saved on the phone: "Bo" in March, "Bo Silva" by June; its id stays
    march = [message(1, "the ferry to Porto leaves at noon", 1709287200), message(2, "ok", 1709287260, "Bo")]
    write(tmp_path / "ChatExport_2024-03-01" / "result.json", chat("Bo", "personal_chat", 100, march))
    write(tmp_path / "DataExport_2024-06-01" / "result.json", {"about": "Here is the data you requested.", "chats": {
        "about": "All chats.", "list": [chat("Bo Silva", "personal_chat", 100, [*march, message(3, "again?", 1718870400)]),
                                        chat("Bo", "personal_chat", 200, [message(1, "another Bo", 1709287200)])]}})
    records, problems = load(tmp_path)
    assert [(r.id, r.text) for r in records] == [
        ("tg:DataExport_2024-06-01/result.json#100:1", "Ana: the ferry to Porto leaves at noon\nBo: ok"),
        ("tg:DataExport_2024-06-01/result.json#100:3", "Ana: again?"),
        ("tg:DataExport_2024-06-01/result.json#200:1", "Ana: another Bo")]
    assert [p.reason for p in problems] == ["collection 'tg': the same chat as 'DataExport_2024-06-01/result.json', "
                                            "exported again: all 2 of its messages are read there"]


def test_a_chat_exported_before_2021_and_again_since_is_read_once(tmp_path: Path) -> None:
    # Telegram Desktop wrote only "date" (the computer's local time, no zone) before 2021, and
    # "date_unixtime" (exact) since: the same messages, told by their ids
    march = [message(1, "the ferry to Porto leaves at noon", 1709287200), message(2, "ok", 1709287260, "Bo")]
    old = [{key: value for key, value in {**m, "date": f"2024-03-01T11:0{i}:00"}.items() if key != "date_unixtime"}
           for i, m in enumerate(march)]
    write(tmp_path / "ChatExport_old" / "result.json", chat("Bo", "personal_chat", 100, old))
    write(tmp_path / "ChatExport_new" / "result.json",
          chat("Bo", "personal_chat", 100, [*march, message(3, "the ferry again?", 1718870400)]))
    records, problems = load(tmp_path)
    assert [r.id for r in records] == ["tg:ChatExport_new/result.json#1", "tg:ChatExport_new/result.json#3"]
    assert [p.reason for p in problems] == ["collection 'tg': the same chat as 'ChatExport_new/result.json', "
                                            "exported again: all 2 of its messages are read there"]


def test_the_chats_telegram_writes_without_a_name_are_called_as_the_app_calls_them(tmp_path: Path) -> None:
    # Saved Messages, Replies and Verification Codes (the login codes Telegram sends) have no
    # "name" in the export: they are called as the app's chat list calls them
    path = write(tmp_path / "DataExport" / "result.json", {
        "about": "Here is the data you requested.",
        "chats": {"about": "This page lists all chats from this export.", "list": [
            chat(None, "saved_messages", 1, [message(1, "buy milk", 1709290000)]),
            chat(None, "replies", 1271266957, [message(1, "a reply to you", 1709290100, "Replies")]),
            chat(None, "verification_codes", 777000, [message(1, "Login code: 12345", 1709290200, "Telegram")]),
        ]},
    })
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.metadata["conversation"] for r in records] == ["Saved Messages", "Replies", "Verification Codes"]


def test_a_truncated_account_export_keeps_the_chats_before_the_break(tmp_path: Path) -> None:
    text = json.dumps({"about": "Here is the data you requested.", "chats": {"about": "", "list": [
        chat("Bo", "personal_chat", 100, [message(1, "first chat", 1709287200)]),
        chat("Cy", "personal_chat", 200, [message(1, "second chat", 1709287200), message(2, "cut", 1709287260)]),
    ]}}, indent=1)
    (tmp_path / "result.json").write_text(text[:text.index('"cut"')])
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Ana: first chat", "Ana: second chat"]
    assert [(p.where, p.line) for p in problems] == [("tg/result.json", text[:text.index('"cut"')].count("\n") + 1)]


# -- bad input --

def test_bad_messages_and_files_are_warnings_and_the_rest_loads(tmp_path: Path) -> None:
    write(tmp_path / "a" / "result.json", chat("Ana", "personal_chat", 5, [
        {"id": 1, "type": "message", "from": "Ana", "text": "no date"},
        message(2, "", 1709287200),
        message(3, "kept", 1709287260),
        message(4, {"odd": 1}, 1709287320, poll=[1], contact_information="x"),
        message(5, ["odd ", 7, {"type": "bold", "text": None}, {"type": "bold", "text": "shapes"}], 1709287380),
    ]))
    text = json.dumps(chat("Bo", "personal_chat", 6, [message(1, "whole", 1709287200)]), indent=1)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "result.json").write_text(text[:text.index('"text"')])
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Ana: kept\nAna: odd shapes"]
    assert [(p.where, p.line, p.reason) for p in problems] == [
        ("tg/a/result.json", 6, "collection 'tg': message 1 without a date skipped"),
        ("tg/a/result.json", 12, "collection 'tg': message 2 without text skipped"),
        ("tg/a/result.json", 30, "collection 'tg': message 4 without text skipped"),
        ("tg/b/result.json", 13,
         "collection 'tg': file skipped: invalid JSON: Expecting property name enclosed in double quotes (line 13, column 4)"
         ": the file ends there, cut short (a download, copy or export that did not finish: get it again)"),
    ]


def test_an_html_export_beside_json_ones_is_a_warning_naming_it(tmp_path: Path) -> None:
    # Telegram Desktop's download folder: one chat exported as JSON, another as HTML (its default
    # format); the HTML one is not read, and is named rather than passed over unseen
    write(tmp_path / "ChatExport_2024-03-01" / "result.json",
          chat("Ana", "personal_chat", 5, [message(1, "hi", 1709287200)]))
    page = '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8"/>\n</head>\n<body>\n<div class="page_wrap">\n'
    for folder in ("ChatExport_2024-03-02", "ChatExport_2024-03-03"):  # the second also as JSON (HTML and JSON)
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "messages.html").write_text(page, encoding="utf-8")
        (tmp_path / folder / "messages2.html").write_text(page, encoding="utf-8")
    write(tmp_path / "ChatExport_2024-03-03" / "result.json",
          chat("Bo", "personal_chat", 6, [message(1, "yo", 1709287200, "Bo")]))
    records, problems = load(tmp_path)
    assert sorted(r.text for r in records) == ["Ana: hi", "Bo: yo"]
    assert [(p.where, p.reason) for p in problems] == [(
        "tg/ChatExport_2024-03-02/messages.html", "collection 'tg': Telegram Desktop's HTML export, which VecBook does "
        "not read: export the chat again choosing Format: Machine-readable JSON")]


# -- detection --

@pytest.mark.parametrize("path", [DM, BIG, TELEGRAM])
def test_telegram_exports_are_detected_as_telegram(path: Path) -> None:
    assert detect_format(collection(path)) == "telegram"


def test_an_account_export_is_detected(tmp_path: Path) -> None:
    write(tmp_path / "result.json", {"about": "Here is the data you requested.",
                                     "personal_information": {"user_id": 1}, "chats": {"about": "", "list": []}})
    assert detect_format(collection(tmp_path)) == "telegram"


@pytest.mark.parametrize("other", sorted(p.name for p in EXPORTS.iterdir() if p.is_dir() and p.name != "telegram"))
def test_the_telegram_detector_says_no_to_other_formats(other: str) -> None:
    assert not telegram.detect(Export("x", EXPORTS / other, other))


# -- search and filters --

def test_telegram_is_searched_with_filters_over_its_metadata(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("hello from the notes\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "tg"\npath = "{TELEGRAM}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    assert book.stats()["collections"]["tg"]["format"] == "telegram"
    hits = book.search("hello world", mode="keyword", filters={"conversation": "Bob"})
    assert hits[0].citation == "tg/chat-analytics_DM_2A_7M.json:40-53#3645"
    hits = book.search("provident", mode="keyword", filters={"participants__contains": "Coy99",
                                                            "date__gte": "2017-01-01", "date__lt": "2017-01-02"})
    assert [h.citation for h in hits] == ["tg/chat-analytics_BIG_20A_5475M.json:14-29#2"]
