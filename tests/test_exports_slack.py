"""Slack workspace exports: both layouts, folders and zips, names, markup, threads, bad input."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export
from vecbook.exports import slack
from vecbook.exports.base import Export

from conftest import EXPORTS, FakeEmbedder, cited_lines, export_book

SLACK = EXPORTS / "slack"
CLASSIC = SLACK / "slack-export-viewer_testarchive"
CURRENT = SLACK / "slackdump_source_export"


def collection(path: Path, name: str = "slack", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def load(path: Path, name: str = "slack") -> tuple[list[vecbook.Record], list[vecbook.Problem]]:
    records, problems, _ = load_export(collection(path, name))
    return records, problems


def by_citation(records: list[vecbook.Record], citation: str) -> vecbook.Record:
    return next(r for r in records if r.citation == citation)


def assert_messages_cited(root: Path, record: vecbook.Record) -> None:
    """Each message's segment cites exactly the lines of one message object, and that object
    shown as the reader shows it (names for ids, markup resolved) is the segment's text.
    (conftest's check compares raw text, which Slack's <@U123> markup never matches.)"""
    rel = record.file_path.split("/", 1)[1]
    space = slack.Workspace.load(Export("slack", root, "slack"), rel[:slack.DAY_FILE.search(rel).start(1)])
    whole = cited_lines(root, record)
    starts = [s[0] for s in record.segments] + [len(record.content) + 1]
    for (offset, first, last), end in zip(record.segments, starts[1:]):
        assert record.line_number <= first <= last <= record.end_line, record.citation
        span = "\n".join(whole[first - record.line_number:last - record.line_number + 1])
        item = json.loads(span.strip().rstrip(","))
        said = record.content[offset:end - 1].split(": ", 1)[1]
        assert said == slack.shown_text(space, item), record.citation
        if offset == 0:
            assert record.citation.endswith("#" + item["ts"])


def write_export(root: Path, days: dict[str, list[dict]], **listings: list[dict]) -> Path:
    """A Slack export folder: ``days`` maps "folder/YYYY-MM-DD" to its messages."""
    root.mkdir(parents=True, exist_ok=True)
    for name, items in listings.items():
        (root / f"{name}.json").write_text(json.dumps(items, indent=4), encoding="utf-8")
    for day, messages in days.items():
        path = root / f"{day}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(messages, indent=4), encoding="utf-8")
    return root


USERS = [
    {"id": "U1", "name": "ana.l", "real_name": "Ana Lima",
     "profile": {"display_name": "Ana", "real_name": "Ana Lima"}},
    {"id": "U2", "name": "bo", "profile": {"display_name": "", "real_name": "Bo Berg "}},
    {"id": "U3", "name": "cy", "profile": {}},
]


# -- the current layout (slackdump): exact records --

def test_the_current_layout_yields_channel_windows_and_thread_windows() -> None:
    records, problems = load(CURRENT)
    assert problems == []
    assert [(r.citation, r.text) for r in records] == [
        ("slack/B75B4C7/2025-01-10.json:2-29#1736478514.897649", "WgO268Xc0KtFylJ: CYmxt38hm"),
        ("slack/B75B4C7/2025-01-10.json:30-77#1736478630.905399", "WgO268Xc0KtFylJ: dtUeWsjQpQO8 TFoFBeQ"),
        ("slack/B75B4C7/2025-01-11.json:27-86#1736554746.482349",
         "YTX35tuC1zyFhKZL: V360Tq4QS6YZsODngkVaYehvZ7y9cBwcRZYRVTylAqxW8qRo5oQlBegR\n"
         "WgO268Xc0KtFylJ: n3S3KfdGJ6w ZVIJ3hTX9OH kAWzI7xKke14XtOvTCbHSr33nZeA4bw"),
        ("slack/B75B4C7/2025-01-11.json:87-159#1736554801.872639",
         "YTX35tuC1zyFhKZL: h2rMV808qT9SyxsdgCtzLnupD0hCIkla7 7Gssu1DiRVIXlotkbjYFNYy44jd\n"
         "WgO268Xc0KtFylJ: KxJU9MCVIGfruLkU5IOHKxRcSG1XHW1z1ElgU ke8TocXkTtnUCgfmTC7XiFrWqP7RLTFtHFvlm6pQ"),
        ("slack/B75B4C7/2025-01-11.json:202-231#1736554838.911679",
         "YTX35tuC1zyFhKZL: oWfrTa6T5UHMawe2KXhnEUP7VbkvruWf7EH1T8VSHTvdB1f9 93xT0R11FuhvTcQAigeOGVS8VAQq"),
        ("slack/B75B4C7/2025-01-11.json:232-376#1736560955.039969",
         "WgO268Xc0KtFylJ: KHqjZ BOwAksRyucZV4Vmrgo2iM74Cdh\n"
         "WgO268Xc0KtFylJ: cZKd73xRR8vIPEV5c60tVwk hsXxjRgGZcMvKU1OTpCOGAJzyZWTqpBvdPit3RfJ8usrWyVgc2Aj00adIb4HjDBHJIaqx"
         "nX6B7AKRAR1fbd6krqET46MSOr3CtFrxvwiR7W\n[file: UYt6OUsnR7j1SfHiJNZr8nvykMlRPheYNHLmEsOgRi27CyoQqusJrRksBRvrSx4CW]\n"
         "WgO268Xc0KtFylJ: sTJipC5Rkn7fG2HqELHmBB0xiqZ5lsRKEFX4teeI3dG Uy5t nw9DFnJ1tKdCjnZ96Zyq"),
        ("slack/B75B4C7/2025-01-11.json:377-464#1736582524.607359",
         "WgO268Xc0KtFylJ: [file: befvnsUNVjwGzKFcKxuIlJ2dYo5z59neCfT8P2Y3t]"),
        ("slack/B75B4C7/2025-01-18.json:2-33#1737160363.583369",
         "2NR0w: VTqHcBWssWFAUWgO268Xc0KtFylJJ4Uxax9flaVZ5EO9sMzz45ztMvr4suyWyeFoNwn3l uVm0gCleRuqUKjRuycupE0OEwo2upTQ"),
        ("slack/B75B4C7/2025-01-24.json:2-57#1737714849.675319",
         "WgO268Xc0KtFylJ: 2CmwhKHbqi1 rwd5wvayRMZ81aX7WX4l9XIoj0LSNfDbyUy6T5Mk\n"
         "WgO268Xc0KtFylJ: 9b0OqQlrnlthrXFilJeZPoCnD yyn3yNcsmxUKZd tiFr8nSEbNdWd8BaaZV8tiW2HLY8qjVPrlYb9CAGunStiV3zyBvhnUKh0"
         " PI5YmGb3gBlfpad6aybnndsr1Afm"),
    ]
    reply = records[2]
    assert reply.metadata == {
        "channel_id": "CO69735E8A", "channel_type": "channel", "date": "2025-01-11T00:19:06+00:00",
        "end_date": "2025-01-11T00:19:43+00:00", "participants": ["YTX35tuC1zyFhKZL", "WgO268Xc0KtFylJ"],
        "conversation": "B75B4C7", "thread": "1736478630.905399", "format": "slack", "message_count": 2}
    assert reply.id == "slack:B75B4C7/2025-01-11.json#1736554746.482349"
    assert records[1].metadata["thread"] == "1736478630.905399"  # the parent belongs to its thread
    assert "thread" not in records[0].metadata


def test_the_current_layout_zip_reads_like_its_folder() -> None:
    folder, _ = load(CURRENT)
    archive, problems = load(SLACK / "slackdump_source_export.zip")
    assert problems == []
    assert [(r.text, r.metadata) for r in archive] == [(r.text, r.metadata) for r in folder]
    assert archive[0].citation == "slack/slackdump_source_export.zip!/B75B4C7/2025-01-10.json:2-29#1736478514.897649"


# -- the classic layout (Slack's own export of 2016) --

def test_the_classic_layout_names_people_bots_files_and_skips_joins() -> None:
    records, problems = load(CLASSIC)
    assert problems == []
    assert sum(r.metadata["message_count"] for r in records) == 147  # 158 less 8 joins and 3 integrations added
    first = records[0]
    assert first.text == ("hamza: @abilinski: Created an issue for a setup.py so that it can be installed to a "
                          "standard place\nhamza: Need that done before it can be used in victoria")
    assert first.citation == "slack/enrique/2016-01-14.json:33-44#1452837352.000006"
    assert first.metadata == {"channel_id": "C0JGLMMNX", "channel_type": "channel",
                              "date": "2016-01-15T05:55:52+00:00", "end_date": "2016-01-15T05:55:59+00:00",
                              "participants": ["hamza"], "conversation": "enrique", "format": "slack",
                              "message_count": 2}
    bot = by_citation(records, "slack/enrique/2016-02-07.json:276-295#1454912455.000022")
    assert bot.text.startswith(  # a bot named by the integration that added it; its card's text shown
        "github: [enrique:master] 3 new commits "
        "(https://github.com/mesos-magellan/enrique/compare/230894e1920c...8f210d67a07c) by Anthony Bilinski:\n"
        "e0c7a4b (https://github.com/mesos-magellan/enrique/commit/e0c7a4b8af2e7e477426debee25fdeb8a4e4cafc):")
    shared = by_citation(records, "slack/traveling-sailor/2016-03-27.json:2-95#1459105865.000017")
    assert shared.text.startswith(
        "doubledeez: @doubledeez uploaded a file: 10 cities "
        "(https://mesos-magellan.slack.com/files/U0BMS113R/F0VQ4C4BT/10_cities.js)\n[file: 10_cities.js]\n"
        "doubledeez: @doubledeez commented on @doubledeez’s file 10 cities")
    names = {name for r in records for name in r.metadata["participants"]}
    assert names == {"hamza", "abilinski", "doubledeez", "heroeshannibal", "github"}


def test_slack_autolinks_show_what_was_typed() -> None:
    records, _ = load(CLASSIC)
    terminal = by_citation(records, "slack/traveling-sailor/2016-03-27.json:96-101#1459113341.000019")
    assert "28919.8689279\n" in terminal.text and "tel:" not in terminal.text


@pytest.mark.parametrize("root", [CLASSIC, CURRENT, SLACK / "slackdump_source_export.zip",
                                  SLACK / "slack-export-viewer_testarchive.zip"])
def test_every_window_cites_the_lines_of_its_messages(root: Path) -> None:
    records, _ = load(root)
    assert records
    for record in records:
        assert_messages_cited(root, record)


def test_a_folder_holding_several_exports_reads_each_with_its_own_names() -> None:
    # two workspaces, each zipped beside the folder it was unzipped to: each message read once
    records, problems = load(SLACK)
    assert sum(r.metadata["message_count"] for r in records) == 147 + 14
    assert {r.file_path.split("/")[1] for r in records} == {CLASSIC.name, CURRENT.name}
    assert records[0].text.startswith("hamza: @abilinski: Created an issue")
    assert [(p.where, p.reason) for p in problems] == [
        (f"slack/{folder.name}.zip", f"collection 'slack': the same workspace as '{folder.name}', exported again: "
                                     f"all {count} of its messages are read there")
        for folder, count in ((CLASSIC, 147), (CURRENT, 14))]


# -- names, markup, DMs, threads (a small export written here) --

@pytest.mark.parametrize("text, shown", [
    ("<@U1> and <@U2|bo>", "@Ana and @Bo Berg"),
    ("<@U9|old.name> left", "@old.name left"),
    ("<@U9>", "@U9"),
    ("see <#C1|general> and <#C1>", "see #general and #general"),
    ("<!here> <!channel> <!subteam^S1|@designers>", "@here @channel @designers"),
    ("<!date^1392734382^{date}|Feb 18, 2014>", "Feb 18, 2014"),
    ("<https://x.org/a?b=1&amp;c=2|the docs>", "the docs (https://x.org/a?b=1&c=2)"),
    ("<https://x.org>", "https://x.org"),
    ("<http://x.org|x.org>", "x.org"),
    ("<mailto:a@b.org|a@b.org> <tel:555|555>", "a@b.org 555"),
    ("1 &lt; 2 &amp;&amp; 3 &gt; 2; &amp;lt; stays", "1 < 2 && 3 > 2; &lt; stays"),
    # Slack writes emoji as their short names; they read as the emoji Slack shows
    ("Shipped! :tada: :+1::skin-tone-4: :heart::heart: :flag-pt:", "Shipped! 🎉 👍🏽 ❤️❤️ 🇵🇹"),
    ("ok :white_check_mark: <@U1> :thinking_face:", "ok ✅ @Ana 🤔"),
    # a workspace's own emoji, times and paths stay as written
    # code shows shortcodes as typed, as Slack does
    ("set `:white_check_mark:` as the approval, then :tada:\n```\nreaction: :+1:\n```",
     "set `:white_check_mark:` as the approval, then 🎉\n```\nreaction: :+1:\n```"),
    (":partyparrot: at 10:100:00, see <https://x.org/:tada:|docs>",
     ":partyparrot: at 10:100:00, see docs (https://x.org/:tada:)"),
    # nor do a path of code (Rust's, C++'s) or an IPv6 address, whose colons come in pairs
    ("use serde::de::Visitor; std::it::x, Foo::Bar::new::x and fe80::100:1 :ok:",
     "use serde::de::Visitor; std::it::x, Foo::Bar::new::x and fe80::100:1 🆗"),
])
def test_markup_is_shown_as_people_read_it(text: str, shown: str) -> None:
    space = slack.Workspace(users={"U1": "Ana", "U2": "Bo Berg"}, channels={"C1": "general"})
    assert space.format(text) == shown


def small_export(root: Path) -> Path:
    return write_export(root, {
        "general/2024-03-01": [
            {"type": "message", "subtype": "channel_join", "user": "U3", "text": "<@U3> has joined",
             "ts": "1709283600.000100"},
            {"type": "message", "user": "U1", "text": "Standup moved to 10, <@U2>", "ts": "1709283660.000200",
             "edited": {"user": "U1", "ts": "1709283700.000000"}},
            {"type": "message", "user": "U2", "text": "Deploy plan?", "ts": "1709283720.000300",
             "thread_ts": "1709283720.000300", "reply_count": 2},
            {"type": "message", "user": "U1", "text": "Friday &amp; after the freeze", "ts": "1709283780.000400",
             "thread_ts": "1709283720.000300", "parent_user_id": "U2"},
            {"type": "message", "subtype": "bot_message", "username": "Deploy Bot", "bot_id": "B1", "text": "",
             "attachments": [{"fallback": "build 42 passed", "color": "good"}], "ts": "1709283840.000500"},
            {"type": "message", "user": "U3", "text": "report attached", "ts": "1709283900.000600",
             "files": [{"id": "F1", "name": "q1-report.pdf", "title": "Q1 report"}],
             "thread_ts": "1709283720.000300"},
        ],
        "D0DM/2024-03-02": [
            {"type": "message", "user": "U1", "text": "lunch?", "ts": "1709370000.000100"},
            {"type": "message", "user": "U2", "text": "sure", "ts": "1709370060.000200"},
        ],
        "mpdm-ana--bo--cy-1/2024-03-02": [
            {"type": "message", "user": "U3", "text": "gift for Dee", "ts": "1709371000.000100"},
        ],
        "secret/2024-03-02": [
            {"type": "message", "user": "U2", "text": "budget draft", "ts": "1709372000.000100"},
        ],
    }, users=USERS, channels=[{"id": "C1", "name": "general"}], groups=[{"id": "G1", "name": "secret"}],
        dms=[{"id": "D0DM", "members": ["U1", "U2"]}],
        mpims=[{"id": "G2", "name": "mpdm-ana--bo--cy-1", "members": ["U1", "U2", "U3"]}])


def test_dms_are_named_by_members_and_threads_are_windowed_apart(tmp_path: Path) -> None:
    records, problems = load(small_export(tmp_path / "export"), "work")
    assert problems == []
    shown = [(r.metadata["conversation"], r.metadata.get("thread"), r.metadata["channel_type"], r.text)
             for r in records]
    assert shown == [
        ("Ana, Bo Berg", None, "dm", "Ana: lunch?\nBo Berg: sure"),
        ("general", None, "channel", "Ana: Standup moved to 10, @Bo Berg\nDeploy Bot: build 42 passed"),
        ("general", "1709283720.000300", "channel",
         "Bo Berg: Deploy plan?\nAna: Friday & after the freeze\ncy: report attached\n[file: q1-report.pdf]"),
        ("Ana, Bo Berg, cy", None, "group dm", "cy: gift for Dee"),
        ("secret", None, "private channel", "Bo Berg: budget draft"),
    ]
    thread = records[2]
    assert thread.citation == "work/general/2024-03-01.json:19-62#1709283720.000300"
    assert thread.metadata["participants"] == ["Bo Berg", "Ana", "cy"]
    for record in records:
        assert_messages_cited(tmp_path / "export", record)


def test_a_shared_message_says_whose_words_it_shares(tmp_path: Path) -> None:
    # A message shared from another channel, or a pasted link to one, comes as an attachment
    # with its author and channel: the words are not the sharer's, as a forward's are not
    shared = {"ts": "1709283660.000200", "channel_id": "C1", "channel_name": "general", "is_share": True,
              "is_msg_unfurl": True, "author_id": "U2", "author_name": "Bo Berg", "author_subname": "Bo Berg",
              "text": "東京 offsite is on <!date^1709283660^{date}|March 1st>",
              "fallback": "[March 1st, 2024 10:01 AM] bo: 東京 offsite is on March 1st",
              "from_url": "https://acme.slack.com/archives/C1/p1709283660000200", "footer": "Posted in #general",
              "mrkdwn_in": ["text"], "id": 1}
    root = write_export(tmp_path / "export", {"random/2024-03-02": [
        {"type": "message", "user": "U1", "text": "FYI", "ts": "1709370000.000100", "attachments": [shared]},
        {"type": "message", "user": "U3", "text": "", "ts": "1709370060.000200",
         "attachments": [{**shared, "channel_name": None, "author_name": None, "author_subname": None,
                          "author_id": None}]},
    ]}, users=USERS, channels=[{"id": "C1", "name": "general"}, {"id": "C2", "name": "random"}])
    records, problems = load(root)
    assert problems == []
    assert [r.text for r in records] == [
        "Ana: FYI\n[shared from Bo Berg in #general]\n東京 offsite is on March 1st\n"
        "cy: [shared in #general]\n東京 offsite is on March 1st"]
    assert_messages_cited(root, records[0])


def test_a_bot_named_later_in_the_export_is_named_everywhere(tmp_path: Path) -> None:
    root = write_export(tmp_path / "x", {
        "alpha/2024-01-02": [{"type": "message", "subtype": "bot_message", "bot_id": "B7", "text": "deployed",
                              "ts": "1704153600.000100"}],
        "beta/2024-01-01": [{"type": "message", "subtype": "bot_add", "bot_id": "B7", "user": "U1",
                             "ts": "1704067200.000100",
                             "text": "added an integration to this channel: <https://x.slack.com/services/B7|jenkins>"}],
    }, users=USERS)
    records, _ = load(root)
    assert [r.text for r in records] == ["jenkins: deployed"]


def test_a_message_whose_text_is_empty_is_read_from_its_blocks(tmp_path: Path) -> None:
    # Apps post Block Kit alone (alerting and monitoring bots, the e-mail integration, workflow
    # steps): "text" is empty and what the message says is in its blocks, on its attachments too.
    rich = {"type": "rich_text", "elements": [
        {"type": "rich_text_section", "elements": [
            {"type": "text", "text": "Réunion déplacée, "}, {"type": "user", "user_id": "U2"},
            {"type": "text", "text": " see "}, {"type": "channel", "channel_id": "C1"},
            {"type": "text", "text": " and "}, {"type": "link", "url": "https://x.org/a", "text": "the agenda"},
            {"type": "text", "text": " "}, {"type": "emoji", "name": "tada", "unicode": "1f389"},
            {"type": "text", "text": " "}, {"type": "emoji", "name": "partyparrot"},
            {"type": "text", "text": " "}, {"type": "emoji", "name": "rocket"}]},
        {"type": "rich_text_list", "style": "bullet", "elements": [
            {"type": "rich_text_section", "elements": [{"type": "text", "text": "会議は木曜日"}]},
            {"type": "rich_text_section", "elements": [{"type": "broadcast", "range": "here"}]}]},
        {"type": "rich_text_preformatted", "elements": [{"type": "text", "text": "make deploy"}]}]}
    alert = [{"type": "header", "text": {"type": "plain_text", "text": "Disk almost full"}},
             {"type": "section", "text": {"type": "mrkdwn", "text": "*db-1* at 93%, <@U1>"},
              "fields": [{"type": "mrkdwn", "text": "*Severity*\nwarning"}]},
             {"type": "context", "elements": [{"type": "image", "image_url": "https://x/i.png", "alt_text": "logo"},
                                              {"type": "mrkdwn", "text": "Grafana"}]},
             {"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "Ack"}}]}]
    root = write_export(tmp_path / "x", {"general/2024-03-01": [
        {"type": "message", "user": "U1", "text": "", "ts": "1709283600.000100", "blocks": [rich]},
        {"type": "message", "subtype": "bot_message", "username": "Grafana", "bot_id": "B1", "text": "",
         "ts": "1709283660.000200", "blocks": alert},
        {"type": "message", "subtype": "bot_message", "username": "Mail", "bot_id": "B2", "text": "",
         "ts": "1709283720.000300", "attachments": [{"blocks": [
             {"type": "section", "text": {"type": "plain_text", "text": "Invoice 42 is due"}}]}]},
        {"type": "message", "user": "U2", "text": "the text wins", "ts": "1709283780.000400",
         "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "the text wins"}}]},
    ]}, users=USERS, channels=[{"id": "C1", "name": "general"}])
    records, problems = load(root)
    assert problems == []
    assert [r.text for r in records] == [
        "Ana: Réunion déplacée, @Bo Berg see #general and the agenda (https://x.org/a) 🎉 :partyparrot: 🚀\n"
        "会議は木曜日\n@here\nmake deploy\n"
        "Grafana: Disk almost full\n*db-1* at 93%, @Ana\n*Severity*\nwarning\nGrafana\n"
        "Mail: Invoice 42 is due\n"
        "Bo Berg: the text wins"]
    assert_messages_cited(root, records[0])


def test_a_huddle_is_a_notice_and_what_was_said_in_its_thread_is_read(tmp_path: Path) -> None:
    # Slackbot posts a "huddle_thread" notice for each huddle (an empty text, sometimes a block
    # saying it happened); the chat beside the huddle is that notice's thread.
    notice = {"type": "message", "subtype": "huddle_thread", "user": "USLACKBOT", "text": "",
              "ts": "1709283600.000100", "thread_ts": "1709283600.000100", "no_notifications": True,
              "room": {"id": "R1", "call_family": "huddle", "has_ended": True, "created_by": "U1",
                       "participant_history": ["U1", "U2"], "date_start": 1709283600, "date_end": 1709284600},
              "blocks": [{"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": [
                  {"type": "text", "text": "A huddle happened"}]}]}]}
    root = write_export(tmp_path / "x", {"general/2024-03-01": [
        notice,
        {"type": "message", "user": "U1", "text": "sharing the roadmap link", "ts": "1709283660.000200",
         "thread_ts": "1709283600.000100", "parent_user_id": "USLACKBOT"},
        {"type": "message", "subtype": "sh_room_created", "user": "U2", "text": "", "ts": "1709290000.000300",
         "room": {"id": "R2", "name": "", "participants": ["U2"]}},
    ]}, users=USERS, channels=[{"id": "C1", "name": "general"}])
    records, problems = load(root)
    assert problems == []
    assert [r.text for r in records] == ["Ana: sharing the roadmap link"]


# -- a workspace exported twice --

def test_a_workspace_exported_twice_is_read_once_and_cited_in_the_newer_export(tmp_path: Path) -> None:
    # March's export beside June's: June's holds March's messages, one edited since, and Bo has
    # renamed himself since (a message's identity is its channel and ts, not the names shown)
    small_export(tmp_path / "slack-2024-03")
    june = small_export(tmp_path / "slack-2024-06")
    (june / "users.json").write_text(json.dumps([*USERS[:1], {"id": "U2", "profile": {"display_name": "Bo"}},
                                                 USERS[2]]), encoding="utf-8")
    days = json.loads((june / "secret" / "2024-03-02.json").read_text(encoding="utf-8"))
    days[0].update(text="budget draft v2", edited={"user": "U2", "ts": "1709372999.000000"})
    (june / "secret" / "2024-03-02.json").write_text(json.dumps(days, indent=4), encoding="utf-8")
    write_export(june, {"general/2024-06-03": [{"type": "message", "user": "U1", "text": "summer hours?",
                                                 "ts": "1717405200.000100"}]})
    records, problems = load(tmp_path, "work")
    assert [(r.file_path.split("/")[1], r.text) for r in records] == [
        ("slack-2024-06", "Ana: lunch?\nBo: sure"),
        ("slack-2024-06", "Ana: Standup moved to 10, @Bo\nDeploy Bot: build 42 passed"),
        ("slack-2024-06", "Bo: Deploy plan?\nAna: Friday & after the freeze\ncy: report attached\n"
                          "[file: q1-report.pdf]"),
        ("slack-2024-06", "Ana: summer hours?"),
        ("slack-2024-06", "cy: gift for Dee"),
        ("slack-2024-06", "Bo: budget draft v2"),
        ("slack-2024-03", "Bo Berg: budget draft"),  # the words June's export no longer holds
    ]
    assert [(p.where, p.reason) for p in problems] == [
        ("work/slack-2024-03", "collection 'work': the same workspace as 'slack-2024-06', exported again: 8 of "
                               "its messages are read there; the 1 it alone holds here")]


def test_a_workspace_zip_beside_the_folder_it_was_unzipped_to_is_read_once(tmp_path: Path) -> None:
    source = small_export(tmp_path / "Acme Slack export")
    with zipfile.ZipFile(tmp_path / "Acme Slack export.zip", "w") as zipped:
        for path in sorted(source.rglob("*.json")):
            zipped.write(path, path.relative_to(source).as_posix())
    records, problems = load(tmp_path, "work")
    assert len(records) == 5 and {r.file_path.split("/")[1] for r in records} == {"Acme Slack export"}
    assert [(p.where, p.reason) for p in problems] == [
        ("work/Acme Slack export.zip", "collection 'work': the same workspace as 'Acme Slack export', exported "
                                       "again: all 9 of its messages are read there")]


def test_two_exports_in_the_data_folder_are_a_warning_saying_how_to_read_each_message_once(tmp_path: Path) -> None:
    # the data folder (and a notes folder) reads each export on its own: both are read, so the
    # older says where its windows are read again, as a WhatsApp chat exported twice there does
    from vecbook.sources import load_directory
    small_export(tmp_path / "work" / "slack-2024-03")
    small_export(tmp_path / "work" / "slack-2024-06")
    report = load_directory(tmp_path)
    assert [str(p) for p in report.problems] == [
        "work/slack-2024-03: the same chat as 'work/slack-2024-06', exported again (5 of its 5 conversation windows "
        "are there too): this folder reads each file on its own, so their messages are searched and counted twice; "
        "to read each once, move both into a folder of their own and add it (`vecbook add FOLDER`)"]

# -- bad input --

def test_bad_files_and_messages_are_warnings_and_the_rest_loads(tmp_path: Path) -> None:
    root = small_export(tmp_path / "export")
    (root / "general" / "2024-03-03.json").write_text(
        '[\n  {"type": "message", "user": "U2", "ts": "1709456400.1", "text": "before the break"},\n  {oops\n]')
    (root / "secret" / "2024-03-04.json").write_text(json.dumps([
        {"type": "message", "user": "U1", "text": "no time"},
        {"type": "message", "user": "U1", "ts": "1709542800.000100", "text": ""},
        {"type": "message", "user": "U1", "ts": "1709542860.000200", "text": "kept"},
        {"type": "message", "bot_id": "B9", "bot_profile": "odd", "comment": 3, "attachments": {"a": 1},
         "files": "x", "ts": "1709542920.000300", "text": "odd shapes"},
    ], indent=2))
    records, problems = load(root, "work")
    texts = [r.text for r in records]
    assert "Ana: kept\nB9: odd shapes" in texts and "Bo Berg: before the break" in texts and len(records) == 7
    assert [(p.where, p.line, p.reason) for p in problems] == [
        ("work/general/2024-03-03.json", 3,
         "collection 'work': 1 item kept; the rest of the file is unread: invalid JSON: Expecting property name "
         "enclosed in double quotes (line 3, column 4, at 'oops ]')"),  # "before the break" is kept: not "file skipped"
        ("work/secret/2024-03-04.json", 2, "collection 'work': message without a 'ts' timestamp skipped"),
        ("work/secret/2024-03-04.json", 7, "collection 'work': message 1709542800.000100 without text skipped"),
    ]


def test_an_unreadable_users_file_leaves_ids_and_warns(tmp_path: Path) -> None:
    root = small_export(tmp_path / "export")
    (root / "users.json").write_text("[{")
    records, problems = load(root, "work")
    assert records[0].text == "U1: lunch?\nU2: sure"
    assert records[0].metadata["conversation"] == "U1, U2"
    assert [(p.where, p.line) for p in problems] == [("work/users.json", 1)]
    assert "cannot read users.json (names left as ids)" in problems[0].reason


def test_reading_never_writes_into_the_export(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    source = small_export(tmp_path / "src")
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(source.rglob("*.json")):
            zipped.write(path, path.relative_to(source).as_posix())
    before = archive.read_bytes()
    records, problems = load(archive)
    assert len(records) == 5 and problems == []
    assert archive.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["export.zip", "src"]


def test_a_zip_made_with_backslashes_reads_like_its_folder(tmp_path: Path) -> None:
    """Windows tools (PowerShell 5's Compress-Archive, older .NET) write member paths with
    backslashes, which the zip spec forbids and every unzip reads as folders."""
    source = small_export(tmp_path / "src")
    with zipfile.ZipFile(tmp_path / "export.zip", "w") as zipped:
        for path in sorted(source.rglob("*.json")):
            zipped.writestr(str(path.relative_to(source)).replace("/", "\\"), path.read_bytes())
    assert detect_format(collection(tmp_path / "export.zip")) == "slack"
    records, problems = load(tmp_path / "export.zip")
    folder, _ = load(source)
    assert problems == [] and [r.text for r in records] == [r.text for r in folder]
    assert all("\\" not in r.citation and r.citation.startswith("slack/export.zip!/") for r in records)


# -- detection --

@pytest.mark.parametrize("root", [CLASSIC, CURRENT, SLACK, SLACK / "slackdump_source_export.zip",
                                  SLACK / "slack-export-viewer_testarchive.zip"])
def test_slack_exports_are_detected_as_slack(root: Path) -> None:
    assert detect_format(collection(root)) == "slack"


@pytest.mark.parametrize("other", sorted(p.name for p in EXPORTS.iterdir() if p.is_dir() and p.name != "slack"))
def test_the_slack_detector_says_no_to_other_formats(other: str) -> None:
    assert not slack.detect(Export("x", EXPORTS / other, other))


def test_a_folder_of_dated_json_that_is_not_slack_is_not_slack(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "2024-01-01.json").write_text('[{"level": "info", "msg": "started"}]')
    assert not slack.detect(Export("x", tmp_path, "x"))


# -- search and filters --

def test_slack_is_searched_with_filters_over_its_metadata(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("a note about the freeze\n")
    root = small_export(tmp_path / "export")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "work"\npath = "{root}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    assert book.stats()["collections"]["work"]["format"] == "slack"
    hits = book.search("freeze", mode="keyword", filters={"source": "work"})
    assert hits[0].metadata["thread"] == "1709283720.000300"
    assert hits[0].citation == "work/general/2024-03-01.json:19-62#1709283720.000300"
    in_thread = book.search("report", mode="keyword", filters={"thread": "1709283720.000300"})
    assert [h.metadata["conversation"] for h in in_thread] == ["general"]
    dms = book.search("lunch", mode="keyword", filters={"participants__contains": "Bo Berg",
                                                        "date__gte": "2024-03-02"})
    assert {h.metadata["conversation"] for h in dms} <= {"Ana, Bo Berg", "secret"} and dms
    private = book.search("budget", mode="keyword", filters={"conversation": "secret"})
    assert [h.text for h in private] == ["Bo Berg: budget draft"]


def test_an_emoji_written_as_a_shortcode_is_found_by_the_emoji(tmp_path: Path) -> None:
    root = write_export(tmp_path / "export", {"general/2024-03-01": [
        {"type": "message", "user": "U1", "text": "v2 is live :tada:", "ts": "1709283600.000100"},
        {"type": "message", "user": "U2", "text": "the build is red", "ts": "1709290000.000100"},
    ]}, users=USERS, channels=[{"id": "C1", "name": "general"}])
    (tmp_path / "vecbook.toml").write_text(f'[[collections]]\nname = "work"\npath = "{root}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    assert [h.text for h in book.search("🎉", mode="keyword")] == ["Ana: v2 is live 🎉"]


def test_a_day_file_that_cannot_be_read_is_a_warn_and_the_other_days_load(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # a day the user may not read (copied from another account, macOS privacy settings) was
    # left out without a word: its first bytes, empty, did not look like a day of messages
    import vecbook.exports.base

    (tmp_path / "general").mkdir()
    (tmp_path / "channels.json").write_text('[{"id": "C1", "name": "general"}]', encoding="utf-8")
    (tmp_path / "users.json").write_text("[]", encoding="utf-8")
    for day in (1, 2):
        (tmp_path / "general" / f"2024-03-0{day}.json").write_text(
            '[{"type": "message", "user": "U1", "text": "Kayak day %d", "ts": "170920%d000.000100"}]' % (day, day),
            encoding="utf-8")
    real = vecbook.exports.base._read_file

    def denied(path: Path, limit: int) -> bytes:
        if path.name == "2024-03-02.json":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    monkeypatch.setattr(vecbook.exports.base, "_read_file", denied)
    records, problems = load(tmp_path, "team")
    assert [r.text for r in records] == ["U1: Kayak day 1"]
    assert [str(p) for p in problems] == ["team/general/2024-03-02.json: collection 'team': cannot read file: "
                                          "Permission denied"]


def test_reading_leaves_the_garbage_collector_as_it_was() -> None:
    import gc

    assert gc.isenabled()
    load(CURRENT)
    assert gc.isenabled()
    gc.disable()
    try:
        load(CURRENT)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_context_of_a_thread_reply_is_its_thread_across_day_files(tmp_path: Path) -> None:
    # Slack writes a reply into the file of the day it was sent: a reply the next day is in the
    # next day's file, apart from its parent. `get -C` showed such a reply alone.
    parent = "1709283720.000300"
    root = write_export(tmp_path / "export", {
        "general/2024-03-01": [
            {"type": "message", "user": "U1", "text": "Morning all", "ts": "1709283600.000100"},
            {"type": "message", "user": "U2", "text": "Deploy plan?", "ts": parent, "thread_ts": parent,
             "reply_count": 3},
            {"type": "message", "user": "U1", "text": "Friday after the freeze", "ts": "1709283780.000400",
             "thread_ts": parent},
        ],
        "general/2024-03-02": [
            {"type": "message", "user": "U2", "text": "Coffee machine broke", "ts": "1709370000.000100"},
            {"type": "message", "user": "U2", "text": "Rollback plan ready too", "ts": "1709370060.000200",
             "thread_ts": parent},
        ],
        "general/2024-03-04": [
            {"type": "message", "user": "U1", "text": "Shipped, thanks all", "ts": "1709540000.000100",
             "thread_ts": parent},
        ],
        "random/2024-03-05": [
            {"type": "message", "user": "U1", "text": "Cake in the kitchen", "ts": "1709630000.000100"},
        ],
    }, users=USERS, channels=[{"id": "C1", "name": "general"}, {"id": "C2", "name": "random"}])
    book = export_book(tmp_path, "work", root)
    reply = book.search("rollback", mode="keyword")[0]
    assert reply.citation == "work/general/2024-03-02.json:8-14#1709370060.000200"
    around = book.get(reply.citation, context=2)
    assert [e.text for e in around.before] == ["Bo Berg: Deploy plan?\nAna: Friday after the freeze"]
    assert [e.text for e in around.after] == ["Ana: Shipped, thanks all"]
    # A channel window's context is the channel's windows around it, the day files crossed too
    # (never its threads, never another channel).
    coffee = book.get(book.search("coffee", mode="keyword")[0].citation, context=2)
    assert [e.text for e in coffee.before] == ["Ana: Morning all"] and coffee.after == []


def test_the_context_of_a_reply_in_a_busy_channel_is_found_quickly() -> None:
    # A thread with a reply a month after its parent: get -C walks the channel's windows between
    # them, 100,000 here (the same window object over and over, to build the list quickly).
    import time

    from vecbook.around import context_around
    from vecbook.records import Record

    def window(day: str, text: str, thread: str | None) -> Record:
        metadata = {"format": "slack", "conversation": "general", "date": day, **({"thread": thread} if thread else {})}
        return Record(text, f"work/general/{day}.json", 1, 5, metadata, source="work")

    chatter = window("2024-03-02", "Coffee machine broke", None)
    records = [window("2024-03-01", "Deploy plan?", "1"), *[chatter] * 100_000, window("2024-04-01", "Shipped", "1")]
    context_around(records, len(records) - 1, 2)  # (the file names' folders, once)
    started = time.process_time()  # (CPU time: other processes on a busy machine do not count)
    around = context_around(records, len(records) - 1, 2)
    assert time.process_time() - started < 0.25  # each window's metadata made as a dict: 0.4-0.6 s
    assert [e.text for e in around.before] == ["Deploy plan?"] and around.after == []
