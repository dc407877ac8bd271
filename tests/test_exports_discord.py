"""DiscordChatExporter JSON: which messages are read, and what of each is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vecbook.config import CollectionConfig
from vecbook.exports import load_export


def author(name: str, bot: bool = False) -> dict[str, Any]:
    return {"id": str(len(name)), "name": name, "discriminator": "0000", "nickname": name, "color": None,
            "isBot": bot, "avatarUrl": "https://cdn.discordapp.com/embed/avatars/0.png"}


def message(number: int, kind: str, content: str, who: str = "ana", **fields: Any) -> dict[str, Any]:
    """One message as DiscordChatExporter writes it (``type`` is its MessageKind's name, or the
    number Discord sent where that enum has no name for it)."""
    item = {"id": str(1_100_000_000_000_000_000 + number), "type": kind,
            "timestamp": f"2024-03-01T10:{number:02d}:00.123+01:00", "timestampEdited": None,
            "callEndedTimestamp": None, "isPinned": False, "content": content,
            "author": author(who, bot=who.endswith("Bot")), "attachments": [], "embeds": [], "stickers": [],
            "reactions": [], "mentions": []}
    item.update(fields)
    return item


def write_channel(folder: Path, messages: list[dict[str, Any]]) -> Path:
    doc = {"guild": {"id": "1", "name": "Friends", "iconUrl": ""},
           "channel": {"id": "2", "type": "GuildTextChat", "categoryId": "3", "category": "Text Channels",
                       "name": "quiz-night", "topic": None},
           "dateRange": {"after": None, "before": None}, "messages": messages, "messageCount": len(messages)}
    path = folder / "Friends - Text Channels - quiz-night [2].json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return folder


def read(folder: Path) -> str:
    records, problems, _ = load_export(CollectionConfig(name="dc", path=folder, database_label=str(folder)))
    assert problems == []
    return "\n".join(r.text for r in records)


def test_replies_to_slash_commands_and_app_commands_are_read(tmp_path: Path) -> None:
    # DiscordChatExporter names only the kinds its enum knows; a bot's answer to a slash command
    # (Discord's type 20) or to a context-menu command (23) is written as the number: what the
    # bot said is a message like any other.
    text = read(write_channel(tmp_path, [
        message(1, "Default", "Anyone up for the pub quiz?"),
        message(2, "20", "Question 1: what is the capital of Mongolia?", "QuizBot",
                interaction={"id": "9", "name": "quiz", "user": author("ana")}),
        message(3, "Reply", "Ulaanbaatar, easy", "bo"),
        message(4, "23", "Translated: guten Morgen means good morning", "TranslateBot"),
    ]))
    assert text == ("ana: Anyone up for the pub quiz?\nQuizBot: Question 1: what is the capital of Mongolia?\n"
                    "bo: Ulaanbaatar, easy\nTranslateBot: Translated: guten Morgen means good morning")


def test_the_apps_notices_are_not_read_by_name_or_by_number(tmp_path: Path) -> None:
    text = read(write_channel(tmp_path, [
        message(1, "Default", "hello"),
        message(2, "ChannelPinnedMessage", "Pinned a message."),
        message(3, "GuildMemberJoin", "Joined the server.", "cy"),
        message(4, "ThreadCreated", "Started a thread."),
        message(5, "RecipientAdd", "Added bo to the group.", "ana"),
        message(6, "Call", "Started a call that lasted 5 minutes."),
        message(7, "8", "", "bo"),  # a server boost: a notice Discord numbers 8-18, the enum has no name for
        message(8, "12", "ana has added news to this channel."),
        # past 19 too: AutoMod's report (its embed holds the text it blocked), a stage's start
        message(9, "24", "", "bo", embeds=[{"title": "", "description": "the text AutoMod blocked"}]),
        message(10, "27", "Weekly sync", "cy"),
        message(11, "46", "", "cy", embeds=[{"title": "Poll results", "description": "Pizza won"}]),
    ]))
    assert text == "ana: hello"


def test_a_sticker_is_named_so_a_sticker_alone_is_not_dropped(tmp_path: Path) -> None:
    sticker = {"id": "7", "name": "Wumpus Wave", "format": "Lottie", "sourceUrl": "https://media.discordapp.net/s/7"}
    text = read(write_channel(tmp_path, [
        message(1, "Default", "good morning!"),
        message(2, "Default", "", "bo", stickers=[sticker]),
        message(3, "Default", "see you", "cy", stickers=[sticker],
                attachments=[{"id": "8", "url": "https://cdn/x.png", "fileName": "x.png", "fileSizeBytes": 10}]),
    ]))
    assert text == ("ana: good morning!\nbo: [sticker: Wumpus Wave]\n"
                    "cy: see you\n[attachment: x.png]\n[sticker: Wumpus Wave]")


def test_an_embeds_author_fields_and_footer_are_read_as_the_app_shows_them(tmp_path: Path) -> None:
    # A bot answers with an embed: its content is empty and everything it said is in the
    # embed's author line, title, description, fields (name over value) and footer.
    embed = {"title": "Weather in Lisbon", "url": None, "timestamp": None, "description": "Sunny all day ☀️",
             "color": "#3498DB", "author": {"name": "WeatherBot forecasts", "url": None},
             "fields": [{"name": "Wind", "value": "12 km/h from the north", "isInline": True},
                        {"name": "Température", "value": "24 °C", "isInline": True},
                        {"name": "", "value": "", "isInline": False}],
             "footer": {"text": "Data from IPMA", "iconUrl": None}, "images": [], "inlineEmojis": []}
    text = read(write_channel(tmp_path, [
        message(1, "Default", "!weather lisbon"),
        message(2, "Reply", "", "WeatherBot", embeds=[embed]),
    ]))
    assert text == ("ana: !weather lisbon\nWeatherBot: WeatherBot forecasts\nWeather in Lisbon\nSunny all day ☀️\n"
                    "Wind: 12 km/h from the north\nTempérature: 24 °C\nData from IPMA")


def test_an_embed_of_odd_shapes_is_read_as_far_as_it_holds_text(tmp_path: Path) -> None:
    # A hand-edited or older file: fields missing, null, or not objects are passed over.
    text = read(write_channel(tmp_path, [
        message(1, "Default", "", "bo", embeds=[{"title": None, "fields": None, "footer": None, "author": "x"},
                                                {"fields": [None, "x", {"name": "Only a name"}]},
                                                "not an embed"]),
    ]))
    assert text == "bo: Only a name"


def test_a_forwarded_message_shows_what_it_forwards(tmp_path: Path) -> None:
    # Discord's forwards (2024) leave the message's own content empty: DiscordChatExporter writes
    # what was forwarded under "forwardedMessage", and that is what the person sent
    forwarded = {"timestamp": "2024-02-28T08:00:00+01:00", "timestampEdited": None,
                 "content": "東京の集合場所はハチ公前です 🐕",
                 "attachments": [{"id": "8", "url": "https://cdn/map.png", "fileName": "map.png", "fileSizeBytes": 10}],
                 "embeds": [], "stickers": []}
    text = read(write_channel(tmp_path, [
        message(1, "Default", "where do we meet?"),
        message(2, "Default", "", "bo", reference={"type": "Forward", "messageId": "5", "channelId": "6",
                                                    "guildId": None},
                forwardedMessage=forwarded),
    ]))
    assert text == ("ana: where do we meet?\n"
                    "bo: [forwarded]\n東京の集合場所はハチ公前です 🐕\n[attachment: map.png]")


def test_a_message_of_an_odd_shape_is_read_as_far_as_it_holds_text(tmp_path: Path) -> None:
    # A hand-edited or converted file: an author or attachment that is not an object, content
    # that is not a string; the file's other messages still load
    text = read(write_channel(tmp_path, [
        message(1, "Default", "olá", author="bob", attachments=["a.png", None], embeds=5, stickers={"a": 1}),
        message(2, "Default", 5, "cy", stickers=[{"name": "Wave"}]),  # type: ignore[arg-type]
        message(3, "Default", "still here", author={"name": 7, "nickname": None}),
    ]))
    assert text == "bob: olá\ncy: [sticker: Wave]\n?: still here"


def test_a_message_with_nothing_to_read_is_a_warning_naming_its_line(tmp_path: Path) -> None:
    # DiscordChatExporter writes a poll, or a bot's embed of an image alone, with no words: such
    # a message is left out, and the file's WARN says how many and where the first is
    image = {"title": "", "description": "", "image": {"url": "https://cdn/cat.png"}, "fields": [], "images": []}
    folder = write_channel(tmp_path, [
        message(1, "Default", "كيف حالك؟"),
        message(2, "Default", "", "PollBot"),
        message(3, "Default", "", "CatBot", embeds=[image]),
    ])
    records, problems, _ = load_export(CollectionConfig(name="dc", path=folder, database_label=str(folder)))
    assert [r.text for r in records] == ["ana: كيف حالك؟"]
    assert [(p.where, p.line, p.reason) for p in problems] == [
        ("dc/Friends - Text Channels - quiz-night [2].json", 43,
         "collection 'dc': 2 messages without text skipped (a poll, an embed of an image alone: "
         "DiscordChatExporter writes no words for them)")]


def test_a_thread_is_a_thread_of_its_channel(tmp_path: Path) -> None:
    # DiscordChatExporter writes a thread as a file of its own, its parent channel as "category":
    # its windows are the channel's conversation, their thread the thread's name (and the same
    # words in the same minute in the channel and the thread are two messages, not one exported twice)
    doc = {"guild": {"id": "1", "name": "Friends", "iconUrl": ""},
           "channel": {"id": "9", "type": "GuildPublicThread", "categoryId": "2", "category": "quiz-night",
                       "name": "Round 2 答え", "topic": None},
           "dateRange": {"after": None, "before": None},
           "messages": [message(1, "Default", "Ulaanbaatar!"), message(3, "Default", "who's in?",
                                                                       timestamp="2024-03-01T10:02:30.000+01:00")],
           "messageCount": 2}
    (tmp_path / "Friends - quiz-night - Round 2 [9].json").write_text(json.dumps(doc, ensure_ascii=False))
    write_channel(tmp_path, [message(2, "Default", "who's in?")])
    records, problems, _ = load_export(CollectionConfig(name="dc", path=tmp_path, database_label=str(tmp_path)))
    assert problems == []
    assert [(r.metadata["conversation"], r.metadata.get("thread"), r.text) for r in records] == [
        ("Friends / quiz-night", None, "ana: who's in?"),
        ("Friends / quiz-night", "Round 2 答え", "ana: Ulaanbaatar!\nana: who's in?")]


def test_the_context_of_a_thread_message_is_its_thread_not_its_channel(tmp_path: Path) -> None:
    from conftest import export_book

    def at(number: int, hour: int, content: str) -> dict[str, Any]:  # hours apart: a window each
        return message(number, "Default", content, timestamp=f"2024-03-01T{hour:02d}:00:00.000+01:00")

    export = tmp_path / "export"
    export.mkdir()
    doc = {"guild": {"id": "1", "name": "Friends", "iconUrl": ""},
           "channel": {"id": "9", "type": "GuildPublicThread", "categoryId": "2", "category": "quiz-night",
                       "name": "Round 2", "topic": None},
           "dateRange": {"after": None, "before": None},
           "messages": [at(1, 10, "Ulaanbaatar!"), at(2, 13, "Canberra, surely"), at(3, 16, "Ottawa")],
           "messageCount": 3}
    (export / "Friends - quiz-night - Round 2 [9].json").write_text(json.dumps(doc), encoding="utf-8")
    write_channel(export, [at(4, 12, "who's in?"), at(5, 14, "pizza after")])
    book = export_book(tmp_path, "dc", export)
    around = book.get(book.search("canberra", mode="keyword")[0].citation, context=2)
    assert around.record.metadata["thread"] == "Round 2"
    assert [e.text for e in around.before] == ["ana: Ulaanbaatar!"]
    assert [e.text for e in around.after] == ["ana: Ottawa"]


def test_the_context_of_a_window_crosses_the_parts_of_a_partitioned_channel(tmp_path: Path) -> None:
    # DiscordChatExporter --partition writes "<channel> [2].json", then "<channel> [2] [part 2].json"...:
    # the first window of part 2 showed no neighbour before it, the one before being in part 1.
    from conftest import export_book

    def at(number: int, hour: int, content: str) -> dict[str, Any]:  # hours apart: a window each
        return message(number, "Default", content, timestamp=f"2024-03-01T{hour:02d}:00:00.000+01:00")

    export = tmp_path / "export"
    export.mkdir()
    channel = "Friends - Text Channels - quiz-night [2]"
    write_channel(export, [at(3, 14, "first question: ウランバートル"), at(4, 16, "pizza after")]).joinpath(
        f"{channel}.json").rename(export / f"{channel} [part 2].json")
    write_channel(export, [at(1, 10, "who's in?"), at(2, 12, "me! 🙋")])
    other = json.loads((export / f"{channel}.json").read_text(encoding="utf-8"))
    other["channel"] |= {"id": "5", "name": "general"}
    other["messages"] = [at(5, 13, "another channel")]
    (export / "Friends - Text Channels - general [5] [part 2].json").write_text(json.dumps(other), encoding="utf-8")
    book = export_book(tmp_path, "dc", export)
    around = book.get(book.search("ウランバートル", mode="keyword")[0].citation, context=2)
    assert [e.text for e in around.before] == ["ana: who's in?", "ana: me! 🙋"]
    assert [e.text for e in around.after] == ["ana: pizza after"]
    last = book.get(book.search("me", mode="keyword", filters={"date__lt": "2024-03-01T13:00"})[0].citation, context=1)
    assert [e.text for e in last.after] == ["ana: first question: ウランバートル"]


def test_a_channel_exported_twice_is_read_once_and_cited_in_the_newer_export(tmp_path: Path) -> None:
    # March's export of the channel and June's (which holds March's messages too) in folders of their
    # own; each message is read once, in the newer export, and the older says so. June's is
    # partitioned (--partition): its parts are one export, whose messages are all its own.
    march = [message(1, "Default", "quiz at eight?"), message(2, "Default", "yes 🎉", who="bo")]
    (tmp_path / "2024-03").mkdir()
    write_channel(tmp_path / "2024-03", march)
    june = tmp_path / "2024-06"
    june.mkdir()
    write_channel(june, [message(3, "Default", "quiz again?", timestamp="2024-06-01T10:00:00.000+01:00")])
    channel = "Friends - Text Channels - quiz-night [2]"
    (june / f"{channel}.json").rename(june / f"{channel} [part 2].json")
    write_channel(june, march)
    records, problems, _ = load_export(CollectionConfig(name="dc", path=tmp_path, database_label=str(tmp_path)))
    assert sorted((r.citation.split(":")[0], r.text) for r in records) == [
        (f"dc/2024-06/{channel} [part 2].json", "ana: quiz again?"),
        (f"dc/2024-06/{channel}.json", "ana: quiz at eight?\nbo: yes 🎉")]
    assert [str(p) for p in problems] == [f"dc/2024-03/{channel}.json: collection 'dc': the same chat as "
                                          f"'2024-06/{channel} [part 2].json', exported again: all 2 of its "
                                          "messages are read there"]


def test_a_channel_exported_as_html_beside_json_ones_is_a_warning_naming_it(tmp_path: Path) -> None:
    # DiscordChatExporter's GUI exports HTML unless told otherwise: a channel exported so among
    # JSON ones is named, not passed over unseen; one exported both ways is read from its JSON
    write_channel(tmp_path, [message(1, "Default", "Anyone up for the pub quiz?")])
    page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<style>\n.chatlog__message { padding: 0; }\n"
    for name in ("Friends - Text Channels - general [4].html", "Friends - Text Channels - quiz-night [2].html"):
        (tmp_path / name).write_text(page, encoding="utf-8")
    records, problems, _ = load_export(CollectionConfig(name="dc", path=tmp_path, database_label=str(tmp_path)))
    assert [r.text for r in records] == ["ana: Anyone up for the pub quiz?"]
    assert [(p.where, p.reason) for p in problems] == [(
        "dc/Friends - Text Channels - general [4].html", "collection 'dc': DiscordChatExporter's HTML export, which "
        "VecBook does not read: export the channel again choosing the JSON format")]


def test_a_channel_exported_as_csv_beside_json_ones_is_a_warning_naming_it(tmp_path: Path) -> None:
    # the CSV export writes no guild, channel or message ids, and its dates as the computer's
    # locale does: a channel exported so among JSON ones is named, as an HTML one is
    write_channel(tmp_path, [message(1, "Default", "Anyone up for the pub quiz?")])
    rows = 'AuthorID,Author,Date,Content,Attachments,Reactions\r\n"1","ana","3/1/2024 10:00 AM","hi","",""\r\n'
    (tmp_path / "Friends - Text Channels - general [4].csv").write_bytes(b"\xef\xbb\xbf" + rows.encode())
    (tmp_path / "Friends - Text Channels - quiz-night [2].csv").write_text(rows, encoding="utf-8")
    (tmp_path / "scores.csv").write_text("name,score\nana,3\n", encoding="utf-8")
    records, problems, _ = load_export(CollectionConfig(name="dc", path=tmp_path, database_label=str(tmp_path)))
    assert [r.text for r in records] == ["ana: Anyone up for the pub quiz?"]
    assert [(p.where, p.reason) for p in problems] == [(
        "dc/Friends - Text Channels - general [4].csv", "collection 'dc': DiscordChatExporter's CSV export, which "
        "VecBook does not read: export the channel again choosing the JSON format")]


def test_a_channel_exported_as_plain_text_is_read_as_text_and_says_so(tmp_path: Path) -> None:
    # DiscordChatExporter's TXT export is a .txt like any other: read as text records, whole, and
    # named, so that its user knows the JSON export reads by message, with dates and senders
    text = ("=" * 62 + "\r\nGuild: Friends\r\nChannel: Text Channels / general\r\n" + "=" * 62 + "\r\n\r\n"
            "[3/1/2024 10:00 AM] ana\r\nAnyone up for the pub quiz?\r\n\r\n\r\n")
    (tmp_path / "Friends - Text Channels - general [4].txt").write_text(text, encoding="utf-8", newline="")
    records, problems, _ = load_export(CollectionConfig(name="dc", path=tmp_path, database_label=str(tmp_path),
                                                        format="text"))
    assert len(records) == 1 and "Anyone up for the pub quiz?" in records[0].text
    assert [(p.where, p.line, p.reason) for p in problems] == [(
        "dc/Friends - Text Channels - general [4].txt", 1, "collection 'dc': DiscordChatExporter's plain-text export: "
        "read as text, without dates or senders (export the channel again choosing the JSON format to read it by "
        "message)")]
