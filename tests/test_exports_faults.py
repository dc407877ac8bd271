"""Faults seen with real exports: windows that ran backwards in time, Telegram's two date
fields, files and collections that loaded nothing without a word, WhatsApp's locale formats.
Each export here is a small file written for the test, of the shape the real one had."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import load_export


def load(path: Path, fmt: str | None = None, name: str = "c") -> tuple[list[vecbook.Record], list[vecbook.Problem]]:
    records, problems, _ = load_export(CollectionConfig(name=name, path=path, database_label=str(path), format=fmt))
    return records, problems


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def telegram_chat(messages: list[dict[str, object]]) -> str:
    items = [{"id": i, "type": "message", "from": "Ana", "text": f"message {i} 🎉", **m}
             for i, m in enumerate(messages, 1)]
    return json.dumps({"name": "Família", "type": "personal_chat", "id": 7, "messages": items},
                      ensure_ascii=False, indent=1)


def assert_windows_run_forward(records: list[vecbook.Record]) -> None:
    for record in records:
        date, end = (datetime.fromisoformat(record.metadata[k]) for k in ("date", "end_date"))
        assert date <= end, record.citation


# -- a step back in time --

def test_a_whatsapp_step_back_in_time_breaks_the_window(tmp_path: Path) -> None:
    path = write(tmp_path, "WhatsApp Chat with Ana.txt",
                 "18/01/2020, 14:53 - Ana: late delivery ✓\n"
                 "16/07/2017, 19:13 - Bob: مرحبا, stored first\n"
                 "16/07/2017, 19:14 - Ana: 你好\n")
    records, problems = load(path)
    assert [r.citation for r in records] == ["c/WhatsApp Chat with Ana.txt:1-1", "c/WhatsApp Chat with Ana.txt:2-3"]
    assert [(r.metadata["date"], r.metadata["end_date"]) for r in records] == [
        ("2020-01-18T14:53:00", "2020-01-18T14:53:00"), ("2017-07-16T19:13:00", "2017-07-16T19:14:00")]
    assert_windows_run_forward(records)


def test_a_telegram_step_back_in_time_breaks_the_window(tmp_path: Path) -> None:
    path = write(tmp_path, "result.json", telegram_chat([
        {"date": "2020-01-18T14:53:00", "date_unixtime": "1579359180"},
        {"date": "2017-07-16T19:13:00", "date_unixtime": "1500232380"}]))
    records, _ = load(path)
    assert len(records) == 2
    assert_windows_run_forward(records)


# -- Telegram's date and date_unixtime --

def test_telegram_messages_with_only_date_or_only_unixtime_get_one_kind_of_time(tmp_path: Path) -> None:
    # Both fields on the first message show the exporting computer at UTC+3: a bare date
    # (local time) is read at that offset, so the gap rule measures across the two kinds.
    path = write(tmp_path, "result.json", telegram_chat([
        {"date": "2022-03-08T13:07:42", "date_unixtime": "1646734062"},   # 10:07:42 UTC
        {"date": "2022-03-08T13:08:00"},                                   # bare: 10:08 UTC
        {"date_unixtime": "1652135033"}]))                                 # 2022-05-09T22:23:53 UTC
    records, problems = load(path)
    assert problems == []
    assert [(r.metadata["date"], r.metadata["end_date"]) for r in records] == [
        ("2022-03-08T10:07:42+00:00", "2022-03-08T13:08:00+03:00"),
        ("2022-05-09T22:23:53+00:00", "2022-05-09T22:23:53+00:00")]
    assert_windows_run_forward(records)


def test_every_telegram_item_with_both_times_shows_the_offset_text_or_not(tmp_path: Path) -> None:
    # The only items with both fields are a message without text and a service message (a
    # pinned message), neither of them read: both show UTC-03:00, which the bare dates take.
    path = write(tmp_path, "result.json", telegram_chat([
        {"date": "2022-03-08T13:07:42"},                                   # bare: 16:07:42 UTC
        {"date": "2022-03-08T13:08:00", "date_unixtime": "1646755680", "text": ""},
        {"date": "2022-03-08T13:09:00", "date_unixtime": "1646755740", "type": "service", "action": "pin_message"},
        {"date_unixtime": "1646755800"}]))                                 # 16:10 UTC
    records, _ = load(path)
    assert [(r.metadata["date"], r.metadata["end_date"]) for r in records] == [
        ("2022-03-08T13:07:42-03:00", "2022-03-08T16:10:00+00:00")]


def test_a_telegram_export_of_bare_dates_keeps_them_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "result.json", telegram_chat([{"date": "2019-01-01T10:00:00"},
                                                          {"date": "2019-01-01T10:05:00"}]))
    (record,) = load(path)[0]
    assert (record.metadata["date"], record.metadata["end_date"]) == ("2019-01-01T10:00:00", "2019-01-01T10:05:00")


# -- what is kept of a file that fails part way --

def test_a_truncated_telegram_export_keeps_its_first_messages_and_does_not_say_skipped(tmp_path: Path) -> None:
    whole = telegram_chat([{"date": "2022-03-08T13:07:42", "date_unixtime": "1646734062"},
                           {"date": "2022-03-08T13:08:00", "date_unixtime": "1646734080"},
                           {"date": "2022-03-08T13:09:00", "date_unixtime": "1646734140"}])
    path = write(tmp_path, "result.json", whole[: whole.index('"id": 3') - 10])
    records, problems = load(path, "telegram")
    assert records and "message 1" in records[0].text
    (problem,) = problems
    assert "file skipped" not in problem.reason and not problem.skipped
    assert "1 item kept; the rest of the file is unread: invalid JSON" in problem.reason


# -- WhatsApp's date and time formats --

@pytest.mark.parametrize("header, when", [
    ("14/12/2022, 13:34 - ", "2022-12-14T13:34:00"),                     # Android, most locales
    ("12/14/22, 1:34 PM - ", "2022-12-14T13:34:00"),                     # Android, en-US
    ("[14/12/2022, 13:34:05] ", "2022-12-14T13:34:05"),                  # iOS
    ("[12/14/22, 1:34:05\u202fPM] ", "2022-12-14T13:34:05"),             # iOS en-US, narrow space
    ("14/12/2022, 13:34. - ", "2022-12-14T13:34:00"),                    # a dot after the time
    ("2022/12/14, 13:34. - ", "2022-12-14T13:34:00"),                    # year first, slashes
    ("2022-12-14 13:34 - ", "2022-12-14T13:34:00"),                      # year first, no comma
    ("14.12.22, 13:34 - ", "2022-12-14T13:34:00"),                       # de
    ("14.12.2022 klo 13.34 - ", "2022-12-14T13:34:00"),                  # fi
    ("14/12/2022, 1:34 p. m. - ", "2022-12-14T13:34:00"),                # es
    ("[2022. 12. 14. 오후 1:34:05] ", "2022-12-14T13:34:05"),             # ko, iOS
    ("2022. 12. 14. 오후 1:34 - ", "2022-12-14T13:34:00"),                # ko, Android
    ("2022년 12월 14일 오후 1:34 - ", "2022-12-14T13:34:00"),             # ko, Android: the date in words
    ("2022년 12월 14일 오전 12:05 - ", "2022-12-14T00:05:00"),            # ko, 오전: 12 AM is midnight
    ("2022年12月14日 下午1:34 - ", "2022-12-14T13:34:00"),                # 年月日
    ("[2022/12/14 午後1:34:05] ", "2022-12-14T13:34:05"),                 # ja
    ("2022/12/14 下午1:34 - ", "2022-12-14T13:34:00"),                    # zh
    ("14/12/2022, 1:34 م - ", "2022-12-14T13:34:00"),                    # ar
    ("14/12/2022, 1:34 π.μ. - ", "2022-12-14T01:34:00"),                 # el, morning
])
def test_whatsapp_reads_the_date_formats_phones_write(tmp_path: Path, header: str, when: str) -> None:
    path = write(tmp_path, "WhatsApp Chat with Zoë.txt", f"{header}Zoë: ¿Qué tal? 👋\n{header}אנה: שלום\n")
    records, problems = load(path)
    assert problems == []
    (record,) = records
    assert record.text == "Zoë: ¿Qué tal? 👋\nאנה: שלום" and record.metadata["date"] == when


def test_a_line_that_looks_like_a_header_but_does_not_parse_is_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, "WhatsApp Chat with Ana.txt",
                 "14/12/2022, 13:34 - Ana: first\n14/12/2022 @ 13:35 -- Ana: odd header\n14/12/2022, 13:36 - Bo: ok\n")
    records, problems = load(path)
    assert "Ana: first\n14/12/2022 @ 13:35 -- Ana: odd header\nBo: ok" == records[0].text
    (problem,) = problems
    assert (problem.where, problem.line, problem.skipped) == ("c/WhatsApp Chat with Ana.txt", 2, False)
    assert "1 line start like a message header in a date or time format not read" in problem.reason
    assert "'14/12/2022 @ 13:35 -- Ana: odd header'" in problem.reason


def test_a_whatsapp_file_in_an_unread_format_says_so_and_the_collection_why(tmp_path: Path) -> None:
    path = write(tmp_path, "WhatsApp Chat with Ana.txt", "14/12/2022 @ 13:34 -- Ana: hola\n14/12/2022 @ 13:35 -- Bo: 你好\n")
    records, problems = load(path, "whatsapp", name="wa")
    assert records == []
    (problem,) = problems  # the file's WARN says why: no second one for the collection
    assert (problem.line, problem.skipped) == (1, True)
    assert "collection 'wa': file skipped: its lines start like WhatsApp messages, in a date or time format not " \
           "read (line 1: '14/12/2022 @ 13:34 -- Ana: hola')" == problem.reason


# -- a collection that loads nothing says why --

@pytest.mark.parametrize("name, content, fmt, why", [
    ("result.json", "", "telegram", "the file is empty"),
    ("empty.ics", "", "ics", "the file is empty"),
    ("WhatsApp Chat with Ana.txt", "", "whatsapp", "the file is empty"),
    ("notes.txt", "Shopping: eggs, café, 🍞\n", "ics",
     "not a ics export (iCalendar .ics and vCalendar .vcs files); no format VecBook reads recognises it"),
    ("result.json", telegram_chat([{"date": "2022-03-08T13:07:42"}]), "discord",
     'not a discord export (DiscordChatExporter JSON); it looks like telegram: name that format, or none '
     '(VecBook tells it by its content)'),
    ("result.json", telegram_chat([{"date": "2022-03-08T13:07:42"}]), "messenger",
     'not a messenger export (Facebook Messenger JSON); it looks like telegram: name that format, or none '
     '(VecBook tells it by its content)'),
    ("result.json", '{"name": "x", "type": "personal_chat", "id": 1, "messages": []}', "telegram",
     "no telegram messages or items found in it"),
])
def test_a_collection_that_yields_nothing_warns_naming_collection_file_and_why(
        tmp_path: Path, name: str, content: str, fmt: str, why: str) -> None:
    path = write(tmp_path, name, content)
    records, problems = load(path, fmt, name="tg")
    assert records == []
    last = problems[-1]
    assert last.reason == f"collection 'tg': nothing read from {path}: {why}" and last.skipped


# The HTML each app offers first (Telegram Desktop's and DiscordChatExporter's default format,
# Facebook's and Instagram's default download), as the apps write their pages.
TELEGRAM_HTML = ("ChatExport_2024-03-01/messages.html",
                 '<!DOCTYPE html>\n<html>\n <head>\n  <meta charset="utf-8"/>\n<title>Exported Data</title>\n'
                 ' </head>\n <body onload="CheckLocation();">\n  <div class="page_wrap">\n'
                 '   <div class="page_body chat_page">\n    <div class="history">\n'
                 '     <div class="message default clearfix" id="message2">\n'
                 '      <div class="text">\nOlá, café amanhã?\n      </div>\n')
DISCORD_HTML = ("Friends - general [1234].html",
                '<!DOCTYPE html>\n<html lang="en">\n<head>\n<title>Friends - general</title>\n<style>\n'
                '.chatlog { padding: 1rem 0; }\n.chatlog__message-group { display: grid; }\n</style>\n</head>\n'
                '<body>\n<div class="chatlog">\n<div class="chatlog__message-group">hello</div>\n')
DISCORD_CSV = ("Friends - Text Channels - general [1234].csv",  # DiscordChatExporter's CSV: no guild or channel in it
               'AuthorID,Author,Date,Content,Attachments,Reactions\n"1090","ana","3/1/2024 10:00 AM",'
               '"quiz at eight?","",""\n')
IMESSAGE_HTML = ("Ana Lima.html",  # imessage-exporter -f html: its stylesheet first in the page
                 '<html>\n<head>\n<meta charset="UTF-8">\n<style>body {\n\tfont-family: system-ui;\n}\n\n'
                 '.message {\n\tmargin: 1%;\n}\n\n.message .sent.imessage {\n\tbackground-color: #1982FC;\n}\n'
                 '</style>\n</head>\n<body>\n<div class="message">\n<div class="received">\n<p><span class="timestamp">'
                 'Jun 14, 2025 10:00:05 AM</span>\n<span class="sender">Ana Lima</span></p>\n')
MESSENGER_HTML = ("your_facebook_activity/messages/inbox/anasilva_10158/message_1.html",
                  '<html><head><meta charset="utf-8" /><title>Ana Silva</title></head><body>'
                  '<div class="_a6-g"><div class="_2ph_ _a6-h _a6-i">Ana Silva</div>'
                  '<div class="_2ph_ _a6-p">Olá</div></div></body></html>')


@pytest.mark.parametrize("name, page, fmt, app", [
    (*TELEGRAM_HTML, "telegram", "Telegram Desktop's HTML export, which VecBook does not read: export the chat "
                                 "again choosing Format: Machine-readable JSON"),
    (*DISCORD_HTML, "discord", "DiscordChatExporter's HTML export, which VecBook does not read: export the "
                               "channel again choosing the JSON format"),
    (*DISCORD_CSV, "discord", "DiscordChatExporter's CSV export, which VecBook does not read: export the "
                              "channel again choosing the JSON format"),
    (*MESSENGER_HTML, "messenger", "Facebook's (or Instagram's) HTML download, which VecBook does not read: "
                                   "request your messages again choosing Format: JSON"),
    (*IMESSAGE_HTML, "imessage-txt", "imessage-exporter's HTML export, which VecBook does not read: export "
                                     "again as text: imessage-exporter -f txt"),
], ids=["telegram", "discord", "discord-csv", "messenger", "imessage"])
def test_an_apps_html_export_is_named_with_how_to_get_the_json(
        tmp_path: Path, name: str, page: str, fmt: str, app: str) -> None:
    root = tmp_path / "export"
    (root / name).parent.mkdir(parents=True)
    (root / name).write_text(page, encoding="utf-8")
    why = f"it is {app}"
    # named as that format, or as another, it says so
    for forced in (fmt, "ics"):
        records, problems = load(root, forced, name="tg")
        assert records == []
        assert problems[-1].reason == f"collection 'tg': nothing read from {root}: not a {forced} export " \
                                      f"({vecbook.exports.FORMATS[forced][1]}); {why}"
    # and found by its content, in a config or by `vecbook add`
    with pytest.raises(vecbook.ConfigError, match=re.escape(f"cannot tell the format of {root}: {why}")):
        vecbook.exports.detect_format(CollectionConfig(name="tg", path=root, database_label=str(root)))
    with pytest.raises(vecbook.ConfigError, match=f"^{re.escape(f'cannot tell what {root} is: {why}')}$"):
        vecbook.registry.choose_format(root, "tg", None)


@pytest.mark.parametrize("name, head, what", [
    ("Angebot Dachsanierung.msg", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Outlook's .msg message files, which VecBook "
     "does not read: save the messages as .eml instead"),
    ("Outlook-Datendatei.pst", b"!BDN\x0e\x1a\x53\x4d", "an Outlook data file (.pst), which VecBook does not read: "
     "convert it with readpst -o <folder> <file>.pst"),
    ("Outlook for Mac Archive.olm", b"PK\x03\x04", "Outlook for Mac's archive (.olm), which VecBook does not read: "
     "drag the messages"),
], ids=["msg", "pst", "olm"])
def test_outlooks_own_mail_files_are_named_with_how_to_get_mail_vecbook_reads(
        tmp_path: Path, name: str, head: bytes, what: str) -> None:
    # classic Outlook saves and drags messages out as .msg and exports .pst, Outlook for Mac .olm:
    # "no format recognises it" and a list of every format left an Outlook user without a way on
    root = tmp_path / "outlook"
    root.mkdir()
    (root / name).write_bytes(head + bytes(504))
    for path in (root, root / name):
        with pytest.raises(vecbook.ConfigError, match=re.escape(f"cannot tell the format of {path}: it holds {what}")):
            vecbook.exports.detect_format(CollectionConfig(name="mail", path=path, database_label=str(path)))
    records, problems = load(root, "ics", name="mail")  # named as another format, it says so too
    assert records == [] and f"not a ics export (iCalendar .ics and vCalendar .vcs files); it holds {what}" in problems[-1].reason


def test_stats_lists_a_collection_that_loaded_nothing_as_skipped(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("Topic: x\nhello\n", encoding="utf-8")
    write(tmp_path, "result.json", "")
    (tmp_path / "vecbook.toml").write_text('data_directory = "notes"\n[[collections]]\nname = "tg"\n'
                                           'path = "result.json"\nformat = "telegram"\n', encoding="utf-8")
    from conftest import FakeEmbedder
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder(),
                           keyword_only=True)
    (skipped,) = book.stats()["skipped"]
    assert skipped["file_path"].endswith("result.json") and "the file is empty" in skipped["reason"]
    assert skipped["reason"].startswith("collection 'tg': nothing read from ")


# -- a chat export dropped into the data folder --

def test_a_whatsapp_export_dropped_among_the_records_is_read_as_the_chat_it_is(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import os
    import time
    import zipfile

    from conftest import FakeEmbedder

    root = tmp_path / "notes"
    root.mkdir()
    chat = "14/12/2022, 13:34 - Ana: ¿vamos al café? ☕\n14/12/2022, 13:35 - Bo: sí\n"
    (root / "WhatsApp Chat with Ana.txt").write_text(chat, encoding="utf-8")
    with zipfile.ZipFile(root / "WhatsApp Chat - Bo.zip", "w") as archive:
        archive.writestr("_chat.txt", chat)
        archive.writestr("IMG-0001.jpg", b"\xff\xd8")
    with zipfile.ZipFile(root / "photos.zip", "w") as archive:
        archive.writestr("readme.txt", "just photos")
    (root / "plain.txt").write_text("Topic: x\nA note.\n", encoding="utf-8")
    past = time.time() - 60  # settled: the keyword cache keeps them
    for path in root.iterdir():
        os.utime(path, (past, past))

    def open_book() -> vecbook.VecBook:
        return vecbook.VecBook(data_directory=root, embedder=FakeEmbedder(), keyword_only=True,
                               cache_directory=tmp_path / "cache")

    caplog.set_level(logging.WARNING, logger="vecbook")
    book = open_book()
    hits = book.search("café", mode="keyword", dedupe=False)
    assert sorted((h.citation, h.id, h.metadata["format"], h.metadata["conversation"]) for h in hits) == [
        ("WhatsApp Chat - Bo.zip!/_chat.txt:1-2", hits[0].id, "whatsapp", "Bo"),
        ("WhatsApp Chat with Ana.txt:1-2", hits[1].id, "whatsapp", "Ana")]
    assert [h.id.split("#")[0] for h in hits] == ["files:WhatsApp Chat - Bo.zip!/_chat.txt",
                                                  "files:WhatsApp Chat with Ana.txt"]
    assert all(h.source == "files" and h.text == "Ana: ¿vamos al café? ☕\nBo: sí" for h in hits)
    stats = book.stats()
    assert (stats["skipped"], stats["warnings"], caplog.records) == ([], [], [])
    [files] = book.sources()
    assert files["kinds"] == {"text": 1, "whatsapp": 2} and files["not_read"] == {".zip": 1}
    again = open_book()  # unchanged: nothing read again, the same records
    assert again.stats()["last_update"]["files_read"] == 0
    assert [h.id for h in again.search("café", mode="keyword", dedupe=False)] == [h.id for h in hits]
