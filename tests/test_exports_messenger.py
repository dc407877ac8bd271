"""Facebook Messenger JSON: mis-encoded text repaired, newest-first messages windowed oldest
first with exact lines, media named, bad messages as WARNs, detection and filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export, reader
from vecbook.exports.base import Export
from vecbook.exports.messenger import repair

from conftest import EXPORTS, FakeEmbedder, assert_messages_cited, cited_lines, export_book

MESSENGER = EXPORTS / "messenger"


def collection(path: Path, name: str = "fb") -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path))


def load(path: Path) -> tuple[list[vecbook.Record], list[str]]:
    records, problems, _ = load_export(collection(path))
    return records, [str(p) for p in problems]


def thread(tmp_path: Path, messages: list[dict], title: str = "Ana", rel: str = "inbox/ana_1/message_1.json",
           indent: int | None = 2) -> Path:
    """A thread file as Facebook writes it: ASCII JSON, text as UTF-8 bytes read as Latin-1."""
    doc = {"participants": [{"name": "Ana"}, {"name": "Bo"}], "messages": messages, "title": title,
           "is_still_participant": True, "thread_type": "Regular", "thread_path": "inbox/ana_1"}
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent), encoding="utf-8")
    return tmp_path


def mangle(text: str) -> str:
    """What Facebook's export does to text."""
    return text.encode("utf-8").decode("latin-1")


# -- the fixture, exactly --

def test_the_fixture_is_one_window_read_oldest_first_with_each_message_s_lines() -> None:
    records, problems = load(MESSENGER)
    assert problems == []
    (record,) = records
    assert record.text == ("Bob: [photo: 123123123123123.jpg]\nBob: [sticker: 123123123123123.png]\n"
                           "Alice: [audio: audioclip11111.mp4]\nBob: [file: blabla.docx]\nBob: you what\n"
                           "Bob: Whats up!\nAlice: Hello")
    assert record.metadata == {"date": "2014-11-05T00:27:20+00:00", "end_date": "2014-11-05T00:35:32+00:00",
                               "participants": ["Bob", "Alice"], "conversation": "Alice",
                               "thread": "inbox/alice_aaaaaaaaaa", "format": "messenger", "message_count": 7}
    assert record.citation == "fb/chat-analytics_2A_7M.json:11-79"
    # the file's last message object (lines 66-79) is the oldest, so it comes first
    assert [s[1:] for s in record.segments] == [(66, 79), (56, 65), (43, 55), (29, 42), (23, 28), (17, 22), (11, 16)]
    lines = cited_lines(MESSENGER, record)
    assert lines[0].strip() == "{" and lines[-1].strip() == "}"
    starts = [s[0] for s in record.segments] + [len(record.content) + 1]
    for (offset, first, last), end in zip(record.segments, starts[1:]):
        author = record.content[offset:end - 1].split(": ", 1)[0]
        assert f'"sender_name": "{author}"' in "\n".join(lines[first - 11:last - 10])


# -- text --

def test_mis_encoded_text_is_repaired_and_right_text_is_kept() -> None:
    assert repair(mangle("Café ☕ 😀")) == "Café ☕ 😀"
    assert repair("Café") == "Café"  # é alone is not valid UTF-8 bytes: kept
    assert repair("plain") == "plain"
    assert repair("ÿ☕") == "ÿ☕"  # not Latin-1 at all: kept


def test_names_titles_and_messages_are_repaired(tmp_path: Path) -> None:
    messages = [{"sender_name": mangle("Zoë"), "timestamp_ms": 1700000060000, "content": mangle("à bientôt 👋")},
                {"sender_name": "Bo", "timestamp_ms": 1700000000000, "content": mangle("on se voit au café ?"),
                 "share": {"link": "https://example.org/café", "share_text": mangle("Le café")},
                 "reactions": [{"reaction": mangle("❤"), "actor": "Ana"}]}]
    path = thread(tmp_path, messages, title=mangle("Zoë & Bo"))
    records, problems = load(path)
    assert problems == []
    (record,) = records
    assert record.text == ("Bo: on se voit au café ?\nLe café\nhttps://example.org/café\nZoë: à bientôt 👋")
    assert record.metadata["conversation"] == "Zoë & Bo" and record.metadata["participants"] == ["Bo", "Zoë"]
    assert record.metadata["date"] == "2023-11-14T22:13:20+00:00"
    # the cited lines hold the messages as Facebook wrote them
    lines = "\n".join(cited_lines(path, record))
    assert json.dumps(mangle("à bientôt 👋"))[1:-1] in lines


def test_a_bom_and_one_line_json_cite_line_one(tmp_path: Path) -> None:
    thread(tmp_path, [{"sender_name": "Ana", "timestamp_ms": 1700000000000, "content": "hello there"}], indent=None)
    path = tmp_path / "inbox/ana_1/message_1.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (record,), problems = load(tmp_path)
    assert record.citation == "fb/inbox/ana_1/message_1.json:1-1" and problems == []
    assert_messages_cited(tmp_path, record)


def test_each_part_of_a_thread_is_windowed_oldest_first(tmp_path: Path) -> None:
    base = 1700000000000
    newer = [{"sender_name": "Ana", "timestamp_ms": base + (10 - i) * 60_000, "content": f"newer {10 - i}"}
             for i in range(3)]
    older = [{"sender_name": "Bo", "timestamp_ms": base - i * 60_000, "content": f"older {i}"} for i in range(2)]
    thread(tmp_path, newer, rel="inbox/ana_1/message_1.json")
    thread(tmp_path, older, rel="inbox/ana_1/message_2.json")
    records, _ = load(tmp_path)
    assert [r.text for r in records] == ["Ana: newer 8\nAna: newer 9\nAna: newer 10", "Bo: older 1\nBo: older 0"]
    for record in records:
        assert_messages_cited(tmp_path, record)


def test_a_thread_downloaded_twice_is_read_once_and_cited_in_the_newer_download(tmp_path: Path) -> None:
    # "Download your information" in March and again in June, both unzipped into one folder; June's
    # thread holds March's messages, newest first, in two parts (each part's messages are its own)
    march = [{"sender_name": "Bo", "timestamp_ms": 1710410460000, "content": "ok"},
             {"sender_name": "Ana", "timestamp_ms": 1710410400000, "content": "the ferry to Porto leaves at noon"}]
    thread(tmp_path, march, rel="facebook-ana-2024-03/messages/inbox/ana_1/message_1.json")
    thread(tmp_path, [{"sender_name": "Ana", "timestamp_ms": 1718874000000, "content": "the ferry again?"}],
           rel="facebook-ana-2024-06/messages/inbox/ana_1/message_1.json")
    thread(tmp_path, march, rel="facebook-ana-2024-06/messages/inbox/ana_1/message_2.json")
    records, problems = load(tmp_path)
    assert sorted((r.citation.split(":")[0], r.text) for r in records) == [
        ("fb/facebook-ana-2024-06/messages/inbox/ana_1/message_1.json", "Ana: the ferry again?"),
        ("fb/facebook-ana-2024-06/messages/inbox/ana_1/message_2.json",
         "Ana: the ferry to Porto leaves at noon\nBo: ok")]
    assert problems == ["fb/facebook-ana-2024-03/messages/inbox/ana_1/message_1.json: collection 'fb': the same "
                        "chat as 'facebook-ana-2024-06/messages/inbox/ana_1/message_1.json', exported again: all 2 "
                        "of its messages are read there"]


def test_the_end_to_end_encrypted_chats_json_is_read_too(tmp_path: Path) -> None:
    doc = {"participants": ["Ana", "Bo"], "threadName": "Ana_40",
           "messages": [{"senderName": "Bo", "timestamp": 1746073800000, "text": "see you", "type": "text",
                         "media": [], "reactions": [{"actor": "Ana", "reaction": "❤"}], "isUnsent": False},
                        {"senderName": "Ana", "timestamp": 1746073791906, "text": "", "type": "media",
                         "media": [{"uri": "./media/1b2c.jpeg"}], "reactions": [], "isUnsent": False},
                        {"senderName": "Ana", "timestamp": 1746073700000, "text": "gone", "type": "text",
                         "media": [], "reactions": [], "isUnsent": True}]}
    (tmp_path / "Ana_40.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    assert detect_format(collection(tmp_path)) == "messenger"
    (record,), problems = load(tmp_path)
    assert problems == [] and record.text == "Ana: [media: 1b2c.jpeg]\nBo: see you"
    assert record.metadata["conversation"] == "Ana_40" and record.metadata["date"] == "2025-05-01T04:29:51+00:00"


# -- bad input --

def test_instagram_s_notices_of_reactions_likes_and_unsent_messages_are_not_messages(tmp_path: Path) -> None:
    # Instagram writes a reaction twice: on the message (``reactions``, with the second it was
    # made) and as a message of the reactor's, "Reacted 😢 to your message " (in the account's
    # language); a like likewise, "Liked a message"; an unsent message as "José unsent a message".
    ms = 1718368145728
    thread(tmp_path, [
        {"sender_name": "Ana", "timestamp_ms": ms + 9000, "content": mangle("Fiquei sem palavras 👍")},
        {"sender_name": mangle("José"), "timestamp_ms": ms + 8000, "content": mangle("José unsent a message")},
        {"sender_name": "Ana", "timestamp_ms": ms + 7000, "content": "Liked a message",
         "is_geoblocked_for_viewer": False},
        {"sender_name": "Ana", "timestamp_ms": ms + 6000,  # a reaction's notice in another language
         "content": mangle("Reagiu com 😂 à sua mensagem")},
        {"sender_name": "Bo", "timestamp_ms": ms, "content": mangle("Reacted 😢 to your message "),
         "is_geoblocked_for_viewer": False, "is_unsent_image_by_messenger_kid_parent": False},
        {"sender_name": "Bo", "timestamp_ms": ms - 1000, "content": "Liked a message"},  # Bo's words: no like then
        {"sender_name": "Bo", "timestamp_ms": ms - 2000, "content": "Reacted angrily to your message"},
        {"sender_name": "Ana", "timestamp_ms": ms - 5000, "content": "Bo liked a message of mine, then left",
         "reactions": [{"reaction": mangle("😢"), "actor": "Bo", "timestamp": ms // 1000},
                       {"reaction": mangle("❤"), "actor": "Ana", "timestamp": (ms + 7000) // 1000},
                       {"reaction": mangle("😂"), "actor": "Ana", "timestamp": (ms + 6000) // 1000}]},
    ])
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text for r in records] == [
        "Ana: Bo liked a message of mine, then left\nBo: Reacted angrily to your message\nBo: Liked a message\n"
        "Ana: Fiquei sem palavras 👍"]


def test_bad_messages_are_warnings_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / "message_1.json").write_text(
        '{"participants": [{"name": "Ana"}], "title": "Ana", "messages": [\n'
        '{"sender_name": "Ana", "timestamp_ms": 1700000000000, "content": "fine"},\n'
        '{"sender_name": "Ana", "content": "no time"},\n'
        '"not an object",\n'
        '{"sender_name": "Bo", "timestamp_ms": 1699999990000},\n'  # nothing said: skipped quietly
        '{"sender_name": "Bo", "timestamp_ms": 1e30, "content": "far future"}\n'
        ']}\n')
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Ana: fine"]
    assert problems == [
        "fb/message_1.json:3: collection 'fb': a message without a valid 'timestamp_ms' (None); skipped",
        "fb/message_1.json:4: collection 'fb': a message that is not a JSON object; skipped",
        "fb/message_1.json:6: collection 'fb': a message without a valid 'timestamp_ms' (1e+30); skipped"]


def test_a_truncated_file_keeps_its_whole_messages_and_the_others_load(tmp_path: Path) -> None:
    thread(tmp_path, [{"sender_name": "Ana", "timestamp_ms": 1700000000000, "content": "fine"}])
    broken = tmp_path / "inbox/bo_2/message_1.json"
    broken.parent.mkdir(parents=True)
    thread(tmp_path, [{"sender_name": "Bo", "timestamp_ms": 1700000060000, "content": "newest"},
                      {"sender_name": "Bo", "timestamp_ms": 1700000000000, "content": "oldest"}],
           rel="inbox/bo_2/message_1.json")
    whole = broken.read_text()
    broken.write_text(whole[:whole.index('"oldest"')])
    records, problems = load(tmp_path)
    assert sorted(r.text for r in records) == ["Ana: fine", "Bo: newest"]
    cut = whole[:whole.index('"oldest"')]
    line, column = cut.count("\n") + 1, len(cut) - cut.rfind("\n")
    assert problems == [f"fb/inbox/bo_2/message_1.json:{line}: collection 'fb': rest of the file skipped: "
                        f"invalid JSON: Expecting value (line {line}, column {column}): the file ends there, cut short "
                        "(a download, "
                        "copy or export that did not finish: get it again)"]
    # the title comes after the messages: lost at the break, the thread's folder names it
    assert [r.metadata["conversation"] for r in records if r.text == "Bo: newest"] == ["bo_2"]


# -- detection --

def test_messenger_is_detected_from_its_fixture_and_nothing_else() -> None:
    assert detect_format(collection(MESSENGER)) == "messenger"
    detector = reader("messenger")
    for folder in EXPORTS.iterdir():
        if folder.is_dir() and folder.name != "messenger":
            assert not detector.detect(Export("x", folder, "x")), folder


# -- search --

@pytest.mark.parametrize("filters", [{"participants__contains": "Alice"}, {"conversation": "Alice"},
                                     {"thread": "inbox/alice_aaaaaaaaaa"}, {"date__gte": "2014-11-01"}])
def test_messenger_windows_are_searched_and_filtered(tmp_path: Path, filters: dict) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("hello from the notes\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "fb"\npath = "{MESSENGER}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("hello", mode="keyword", filters=filters)
    assert [h.citation for h in hits] == ["fb/chat-analytics_2A_7M.json:11-79"]


def test_the_context_of_a_window_crosses_the_parts_of_its_thread_in_time_order(tmp_path: Path) -> None:
    # Facebook splits a long chat into message_1.json (newest), message_2.json (older)...: the
    # oldest window of message_1 had no neighbour before it, the one before it being in message_2.
    hour = 3_600_000

    def said(who: str, hours: int, text: str) -> dict:  # hours apart: a window each
        return {"sender_name": who, "timestamp_ms": 1_700_000_000_000 + hours * hour, "content": mangle(text)}

    thread(tmp_path, [said("Ana", 6, "ramen tonight?"), said("Bo", 5, "sí, a las ocho 🍜")], rel="inbox/ana_1/message_1.json")
    thread(tmp_path, [said("Ana", 4, "train delayed"), said("Bo", 3, "café first?")], rel="inbox/ana_1/message_2.json")
    thread(tmp_path, [said("Ana", 2, "hello from Lisbon")], rel="inbox/ana_1/message_3.json")
    thread(tmp_path, [said("Cy", 5, "other chat, same hour")], title="Cy", rel="inbox/cy_2/message_1.json")
    book = export_book(tmp_path, "fb", tmp_path / "inbox")
    around = book.get(book.search("ocho", mode="keyword")[0].citation, context=2)
    assert [e.text for e in around.before] == ["Bo: café first?", "Ana: train delayed"]
    assert [e.text for e in around.after] == ["Ana: ramen tonight?"]
    around = book.get(book.search("delayed", mode="keyword")[0].citation, context=1)
    assert [e.text for e in around.before] == ["Bo: café first?"]
    assert [e.text for e in around.after] == ["Bo: sí, a las ocho 🍜"]
    oldest = book.get(book.search("lisbon", mode="keyword")[0].citation, context=5)
    assert oldest.before == [] and [e.text for e in oldest.after][:2] == ["Bo: café first?", "Ana: train delayed"]
    assert all("Cy" not in e.text for e in oldest.after)
