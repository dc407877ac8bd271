"""WhatsApp chat exports (.txt, .zip): locales' date formats, day/month order, multi-line
messages, system lines, citations read back, detection and filters."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import FORMATS, detect_format, load_export, reader
from vecbook.exports.base import Export

from conftest import EXPORTS, FakeEmbedder, assert_messages_cited, cited_lines

WHATSAPP = EXPORTS / "whatsapp"


def collection(path: Path, name: str = "wa", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def load(path: Path, fmt: str | None = None) -> tuple[list[vecbook.Record], list[str]]:
    records, problems, _ = load_export(collection(path, fmt=fmt))
    return records, [str(p) for p in problems]


def chat(tmp_path: Path, text: str, name: str = "WhatsApp Chat with Ana.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


# -- the fixtures, exactly --

def test_an_android_export_is_one_window_with_each_message_on_its_line() -> None:
    records, problems = load(WHATSAPP / "chat-analytics_2A_5M.txt")
    assert problems == []  # 1/1/21 reads the same either way: nothing to warn about
    record, reordered = records  # the last line steps back a minute: a window of its own
    assert record.text == "A: Hi\nB: Whats up?\nA: All good\nB: <media omitted>"
    assert record.metadata == {"date": "2021-01-01T12:00:00", "end_date": "2021-01-01T12:03:00",
                               "participants": ["A", "B"], "conversation": "chat-analytics_2A_5M",
                               "format": "whatsapp", "message_count": 4}
    assert (reordered.citation, reordered.metadata["date"]) == ("wa/chat-analytics_2A_5M.txt:5-5", "2021-01-01T12:02:00")
    digest = hashlib.sha1(b"chat-analytics_2A_5M|2021-01-01T12:00:00|A|Hi").hexdigest()[:12]
    assert record.id == f"wa:chat-analytics_2A_5M.txt#{digest}"
    assert record.citation == "wa/chat-analytics_2A_5M.txt:1-4"  # no message ids: no anchor
    assert [s[1:] for s in record.segments] == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_system_lines_are_skipped_and_dotted_dates_are_day_first() -> None:
    records, problems = load(WHATSAPP / "whatstk_pokemon.txt")
    assert problems == []
    first = records[0]
    assert first.citation == "wa/whatstk_pokemon.txt:3-6"  # lines 1-2: encryption notices
    assert first.text.startswith("Ash Ketchum: Hey guys!\nBrock: Hey Ash")
    assert (first.metadata["date"], records[-1].metadata["date"]) == ("2016-08-06T13:23:00", "2016-10-31T12:23:00")
    assert not any("encrypted" in r.text for r in records)


def test_a_zip_export_is_read_in_place_and_named_after_the_archive() -> None:
    records, problems = load(WHATSAPP / "chat-analytics_4A_11M.zip")
    (record,) = records
    assert record.citation == "wa/chat-analytics_4A_11M.zip!/_chat.txt:4-14"
    assert record.metadata["conversation"] == "chat-analytics_4A_11M"
    assert record.metadata["participants"] == ["Bob", "Eve", "Alice", "Mallory", "Trent"]
    assert cited_lines(WHATSAPP / "chat-analytics_4A_11M.zip", record)[0] == "12/9/20, 23:55 - Bob: hello"
    # 12/9/20 only: both readings are possible and differ, so it says which it chose, on which
    # date, and the key and value that read them the other way, in which table
    assert problems == ["wa/chat-analytics_4A_11M.zip!/_chat.txt: collection 'wa': cannot tell day/month from "
                        "month/day (no date field past 12, both readings in order); dates read as day/month/year "
                        "('12/9/20' as 2020-09-12, not 2020-12-09): if they are month/day, set date_order = \"mdy\" "
                        "in this collection's [[collections]] table (name = \"wa\")"]
    assert record.metadata["date"] == "2020-09-12T23:55:00"


def test_undecidable_dates_in_the_data_folder_say_to_add_the_chat_as_a_source(tmp_path: Path) -> None:
    # The data folder has no table to set date_order in: the way is to add the chat as a source.
    path = tmp_path / "WhatsApp Chat with Ana.txt"
    path.write_bytes(zipfile.ZipFile(WHATSAPP / "chat-analytics_4A_11M.zip").read("_chat.txt"))
    _, problems = vecbook.sources.load_file(path.name, path)
    assert [p.reason for p in problems] == [
        "cannot tell day/month from month/day (no date field past 12, both readings in order); dates read as "
        "day/month/year ('12/9/20' as 2020-09-12, not 2020-12-09): if they are month/day, add the chat as a source "
        "of its own (vecbook add PATH) and set date_order = \"mdy\" in its table"]


@pytest.mark.parametrize("name, first_date, count", [
    ("whatstk_lorem.txt", "2020-01-15T02:22:56", 500),  # [15-01-20 02:22:56] Mary: ...
    ("whatstk_lorem-merge-part1.txt", "2019-10-20T10:16:00", 300),  # 2019-10-20, 10:16 - John: ...
    ("whatstk_lorem-merge-part2.txt", "2020-06-20T10:16:00", 300),
])
def test_other_date_formats_of_the_fixtures(name: str, first_date: str, count: int) -> None:
    records, problems = load(WHATSAPP / name)
    assert problems == []
    assert records[0].metadata["date"] == first_date
    assert sum(r.metadata["message_count"] for r in records) == count
    dates = [r.metadata["date"] for r in records]
    assert dates == sorted(dates)


def test_every_fixture_message_is_found_at_its_cited_lines() -> None:
    records, problems = load(WHATSAPP)
    # chat-analytics_4A_11M.txt is the chat its .zip holds: read once, in the zip
    assert {r.file_path for r in records} == {f"wa/{p.name}" for p in WHATSAPP.glob("*.txt")} - {
        "wa/chat-analytics_4A_11M.txt"} | {"wa/chat-analytics_4A_11M.zip!/_chat.txt"}
    assert "wa/chat-analytics_4A_11M.txt: collection 'wa': the same chat as 'chat-analytics_4A_11M.zip!/_chat.txt', " \
           "exported again: all 11 of its messages are read there" in problems
    for record in records:
        assert_messages_cited(WHATSAPP, record)
    assert len({r.id for r in records}) == len(records)


# -- locales --

@pytest.mark.parametrize("line, date", [
    ("[31/12/2023, 13:05:09] Ana: hi", "2023-12-31T13:05:09"),  # iOS, 24 h, seconds
    ("31/12/2023, 13:05 - Ana: hi", "2023-12-31T13:05:00"),  # Android
    ("12/31/23, 1:05 PM - Ana: hi", "2023-12-31T13:05:00"),  # en-US Android
    ("[12/31/23, 1:05:09\u202fPM] Ana: hi", "2023-12-31T13:05:09"),  # en-US iOS: U+202F before PM
    ("\u200e[12/31/23, 12:05:09\u202fAM] Ana: hi", "2023-12-31T00:05:09"),  # U+200E first; 12 AM
    ("31.12.23, 13:05 - Ana: hi", "2023-12-31T13:05:00"),  # de
    ("[31.12.23, 13:05:09] Ana: hi", "2023-12-31T13:05:09"),
    ("31-12-2023 13:05 - Ana: hi", "2023-12-31T13:05:00"),
    ("2023-12-31, 13:05 - Ana: hi", "2023-12-31T13:05:00"),  # year first
    ("31/12/2023, 1:05 p. m. - Ana: hi", "2023-12-31T13:05:00"),  # es
    ("31/12/2023, 1:05\u202fam - Ana: hi", "2023-12-31T01:05:00"),  # en-GB 12 h
    ("31/12/2023, 13:05 \u2013 Ana: hi", "2023-12-31T13:05:00"),  # an en dash for the hyphen
    ("31\u200f/12\u200f/2023\u060c 1:05 \u0645 - Ana: hi", "2023-12-31T13:05:00"),  # ar: U+200F, an Arabic comma
    ("\u0663\u0661/\u0661\u0662/\u0662\u0660\u0662\u0663\u060c \u0661:\u0660\u0665 \u0645 - Ana: hi",
     "2023-12-31T13:05:00"),  # Arabic-Indic digits
    ("02.05.18 \u00e0 18:00 - Ana: hi", "2018-05-02T18:00:00"),  # fr, an older Android
    ("31.12.23 \u0433., 13:05 - Ana: hi", "2023-12-31T13:05:00"),  # bg: "г." (year) after the date
    ("[31.12.23 \u0433., 1:05:09 \u0441\u043b.\u043e\u0431.] Ana: hi", "2023-12-31T13:05:09"),  # bg iPhone, 12 h
    ("31/12/2566 13:05 - Ana: hi", "2023-12-31T13:05:00"),  # th: the Buddhist Era's year
    ("31/12/66 13:05 - Ana: hi", "2023-12-31T13:05:00"),  # th, the year in two digits (2066 is yet to come)
    ("[2023/12/31 \u665a\u4e0a9:05:09] Ana: hi", "2023-12-31T21:05:09"),  # zh-Hant iPhone: 晚上, evening
    ("[2023/12/31 \u51cc\u66681:05:09] Ana: hi", "2023-12-31T01:05:09"),  # 凌晨, small hours
    ("[2023/12/31 午夜12:05:09] Ana: hi", "2023-12-31T00:05:09"),  # Cantonese (yue, Hong Kong): midnight
    ("[2023/12/31 朝早9:05:09] Ana: hi", "2023-12-31T09:05:09"),  # morning
    ("[2023/12/31 下晝3:05:09] Ana: hi", "2023-12-31T15:05:09"),  # afternoon
    ("2023/12/31 夜晚9:05 - Ana: hi", "2023-12-31T21:05:00"),  # evening
    ("[2023/12/31 上晝10:05:09] Ana: hi", "2023-12-31T10:05:09"),  # colloquial: before noon
    ("2023/12/31 晏晝1:05 - Ana: hi", "2023-12-31T13:05:00"),  # colloquial: midday, early afternoon
    ("[2023/12/31 晏晝12:35:09] Ana: hi", "2023-12-31T12:35:09"),
])
def test_a_locale_s_header_gives_the_date_as_written(tmp_path: Path, line: str, date: str) -> None:
    records, problems = load(chat(tmp_path, line + "\n"))
    assert problems == []
    assert [(r.text, r.metadata["date"]) for r in records] == [("Ana: hi", date)]


@pytest.mark.parametrize("am, pm", [
    ("PG", "PTG"),  # Malay (pagi, petang)
    ("\u05dc\u05e4\u05e0\u05d4\u05f4\u05e6", "\u05d0\u05d7\u05d4\u05f4\u05e6"),  # Hebrew, gershayim: לפנה״צ, אחה״צ
    ('\u05dc\u05e4\u05e0\u05d4"\u05e6', '\u05d0\u05d7\u05d4"\u05e6'),  # Hebrew, an ASCII quote for it
    ("\u0642.\u0638", "\u0628.\u0638"),  # Persian: ق.ظ, ب.ظ
    ("SA", "CH"),  # Vietnamese (sáng, chiều)
    ("\u00d6\u00d6", "\u00d6S"),  # Turkish: ÖÖ, ÖS
    ("\u0434\u043f", "\u043f\u043f"),  # Ukrainian: дп, пп
    ("fm", "em"),  # Swedish
    ("de.", "du."),  # Hungarian
    ("dop.", "odp."),  # Czech
    ("\u043f\u0440.\u043e\u0431.", "\u0441\u043b.\u043e\u0431."),  # Bulgarian: пр.об., сл.об.
    ("a.m.", "p.m."),  # Canadian English, Irish, Dutch
    ("পূর্বাহ্ণ", "অপরাহ্ণ"),  # Bengali
    ("म.पू.", "म.उ."),  # Marathi
    ("ਪੂ.ਦੁ.", "ਬਾ.ਦੁ."),  # Punjabi
    ("ಪೂರ್ವಾಹ್ನ", "ಅಪರಾಹ್ನ"),  # Kannada
    ("පෙ.ව.", "ප.ව."),  # Sinhala
    ("နံနက်", "ညနေ"),  # Burmese
    ("ກ່ອນທ່ຽງ", "ຫຼັງທ່ຽງ"),  # Lao
    ("ጥዋት", "ከሰዓት"),  # Amharic
    ("претпл.", "попл."),  # Macedonian
    ("priekšpusdienā", "pēcpusdienā"),  # Latvian
    ("ү.ө.", "ү.х."),  # Mongolian
    ("غ.م.", "غ.و."),  # Pashto
])
@pytest.mark.parametrize("shape", [
    "{d}, {t} {m} - Ana: {x}",  # Android
    "[{d}, {t}:09\u202f{m}] Ana: {x}",  # iOS: a narrow no-break space before the marker
    "\u200f{d}, {t}\u00a0\u200f{m}\u200e - Ana: {x}",  # right-to-left marks around the marker
])
def test_twelve_hour_markers_of_more_languages_give_the_24_hour_time(tmp_path: Path, am: str, pm: str,
                                                                      shape: str) -> None:
    lines = [("12:30", am, "after midnight"), ("9:05", am, "morning"), ("12:00", pm, "noon"), ("1:05", pm, "lunch"),
             ("11:59", pm, "late")]
    text = "".join(shape.format(d="31/12/2023", t=t, m=m, x=x) + "\n" for t, m, x in lines)
    records, problems = load(chat(tmp_path, text))
    assert problems == []
    assert [r.metadata["date"][11:16] for r in records] == ["00:30", "09:05", "12:00", "13:05", "23:59"]


@pytest.mark.parametrize("first, second", [
    ("3/24/14, 1:59:59 PM: Ana: hi", "3/24/14, 2:00:10 PM: Ben: the ferry leaves at noon"),  # iOS before 2017
    ("2016-06-27, 8:04:08 AM: Ana: hi", "2016-06-27, 8:04:09 AM: Ben: the ferry leaves at noon"),
    ("24/03/2014, 13:59:59: Ana: hi", "24/03/2014, 14:00:10: Ben: the ferry leaves at noon"),
])
def test_an_export_from_before_2017_with_a_colon_after_the_time_is_read(tmp_path: Path, first: str,
                                                                        second: str) -> None:
    # Old exports (kept for years) put ": " after the time, where today's have "] " or " - ".
    system = first.split(": ", 1)[0] + ": Ana created group \u201cTrip\u201d"
    path = chat(tmp_path, f"{system}\n{first}\n{second}\nsee you there\n")
    assert detect_format(collection(path)) == "whatsapp"
    records, problems = load(path)
    assert problems == []
    (record,) = records
    assert record.text == "Ana: hi\nBen: the ferry leaves at noon\nsee you there"
    assert (record.citation, record.metadata["participants"]) == ("wa/WhatsApp Chat with Ana.txt:2-4", ["Ana", "Ben"])
    assert record.metadata["date"].startswith(("2014-03-24T13:59:59", "2016-06-27T08:04:08"))


def test_a_korean_android_export_is_detected_and_read_across_the_day(tmp_path: Path) -> None:
    path = chat(tmp_path, "2020년 1월 12일 오전 9:41 - 메시지와 전화는 종단간 암호화됩니다.\n"
                          "2020년 1월 12일 오전 11:58 - 지민: 점심 뭐 먹을까? 🍜\n"
                          "2020년 1월 12일 오후 12:03 - Ana: 비빔밥!\n그리고 커피 ☕\n"
                          "2020년 1월 13일 오후 1:05 - 지민: 좋아\n", name="WhatsApp Chat with 지민.txt")
    assert detect_format(collection(path)) == "whatsapp"
    records, problems = load(path)
    assert problems == []
    assert [(r.text, r.metadata["date"], r.citation) for r in records] == [
        ("지민: 점심 뭐 먹을까? 🍜\nAna: 비빔밥!\n그리고 커피 ☕", "2020-01-12T11:58:00", "wa/WhatsApp Chat with 지민.txt:2-4"),
        ("지민: 좋아", "2020-01-13T13:05:00", "wa/WhatsApp Chat with 지민.txt:5-5")]


@pytest.mark.parametrize("text", [
    "24. 3. 5. 오후 3:05 - 홍길동: 안녕\n24. 3. 5. 오후 3:06 - Ana: 반가워\n",  # Android in Korean: yy. M. d.
    "[24. 3. 5. 오후 3:05:00] 홍길동: 안녕\n[24. 3. 5. 오후 3:06:00] Ana: 반가워\n",  # iPhone
    "24. 3. 5. 15:05 - 홍길동: 안녕\n24. 3. 5. 15:06 - Ana: 반가워\n",  # a 24-hour clock
    "[2024. 3. 5. 오후 3:05:00] 홍길동: 안녕\n[2024. 3. 5. 오후 3:06:00] Ana: 반가워\n",  # a 4-digit year
])
def test_a_korean_phone_s_year_first_dates_with_a_2_digit_year_are_read_year_first(tmp_path: Path, text: str) -> None:
    # Korean phones write the short date year first, "yy. M. d." (a dot after the day too):
    # "24. 3. 5." is 5 March 2024, not 24 March 2005
    records, problems = load(chat(tmp_path, text, name="WhatsApp Chat with 홍길동.txt"))
    assert problems == []
    assert [(r.text, r.metadata["date"][:16]) for r in records] == [("홍길동: 안녕\nAna: 반가워", "2024-03-05T15:05")]


def test_croatian_day_first_dates_with_a_dot_after_the_year_stay_day_first(tmp_path: Path) -> None:
    # Croatian in Bosnia writes "d. M. yy.": the Korean shape, day first; a first field that
    # cannot be a year of WhatsApp's (before 2009) tells it apart
    text = "5. 3. 24. 15:05 - Ana: bok\n24. 3. 24. 15:06 - Ana: kako si\n"
    records, problems = load(chat(tmp_path, text))
    assert problems == []
    assert [r.metadata["date"][:10] for r in records] == ["2024-03-05", "2024-03-24"]


def test_a_collections_date_order_reads_croatian_dates_that_could_be_korean(tmp_path: Path) -> None:
    # "12. 3. 24." is 2012-03-24 read as Korean, 12 March 2024 as Croatian: the setting decides
    text = "12. 3. 24. 15:05 - Ana: bok\n12. 3. 24. 15:06 - Ana: kako si\n"
    config = CollectionConfig(name="wa", path=chat(tmp_path, text), database_label="wa", date_order="dmy")
    records, problems, _ = load_export(config)
    assert [r.metadata["date"][:10] for r in records] == ["2024-03-12"] and problems == []


def test_kakaotalk_lines_are_not_taken_for_whatsapp_messages(tmp_path: Path) -> None:
    # KakaoTalk's export ("2020. 1. 12. 오후 1:05, Name : text") is another app's format.
    path = chat(tmp_path, "2020. 1. 12. 오후 1:05, 지민 : 안녕\n2020. 1. 12. 오후 1:06, Ana : 안녕하세요\n",
                name="KakaoTalk_Chat.txt")
    assert "whatsapp" not in vecbook.exports.recognising_formats(collection(path))
    records, problems = load(path, "whatsapp")
    assert records == [] and "in a date or time format not read (line 1: '2020. 1. 12. 오후 1:05, 지민 : 안녕')" \
        in problems[0]


@pytest.mark.parametrize("dates, expected, warning", [
    (["03/04/23", "13/04/23"], "2023-04-03", None),  # a first field past 12: day-first
    (["04/03/23", "04/13/23"], "2023-04-03", None),  # a second field past 12: month-first
    (["12/01/23", "01/02/23"], "2023-01-12", None),  # month-first would go back in time
    (["03/04/23", "04/04/23"], "2023-04-03", "cannot tell day/month"),  # undecidable: day-first
    # neither reading in order (a message delivered late): the one that steps back in time the least
    (["01/10/24", "01/11/24", "02/02/24", "02/03/24", "01/09/24"], "2024-01-10", None),  # Jan 9 late: month-first
    (["10/01/24", "11/01/24", "02/02/24", "03/02/24", "09/01/24"], "2024-01-10", None),  # day-first
    (["03/04/24", "05/06/24", "04/05/24"], "2024-04-03", "cannot tell day/month"),  # a month back either way
    (["13/04/23", "04/13/23"], "2023-04-13", "mixes day/month and month/day"),  # + 04/13: no such day
])
def test_day_month_order_is_judged_from_the_whole_file(tmp_path: Path, dates: list[str], expected: str,
                                                        warning: str | None) -> None:
    text = "".join(f"{d}, 10:{n:02d} - Ana: message {n}\n" for n, d in enumerate(dates))
    records, problems = load(chat(tmp_path, text))
    assert records[0].metadata["date"][:10] == expected
    assert (warning in problems[0]) if warning else problems == []


@pytest.mark.parametrize("order, dates, expected", [
    ("mdy", ["03/04/23", "04/04/23"], "2023-03-04"),  # undecidable: the setting decides, without a WARN
    ("dmy", ["03/04/23", "04/04/23"], "2023-04-03"),
    ("mdy", ["12.01.23", "13.01.23"], "2023-01-12"),  # a field past 12 settles it whatever the setting
    ("mdy", ["12/01/23", "01/02/23"], "2023-12-01"),  # the setting outranks the chronological guess (dmy)
])
def test_a_collections_date_order_reads_the_dates_its_file_leaves_open(tmp_path: Path, order: str,
                                                                        dates: list[str], expected: str) -> None:
    text = "".join(f"{d}, 10:{n:02d} - Ana: message {n}\n" for n, d in enumerate(dates))
    config = CollectionConfig(name="wa", path=chat(tmp_path, text), database_label="wa", date_order=order)
    records, problems, _ = load_export(config)
    assert records[0].metadata["date"][:10] == expected and problems == []


def test_a_config_names_the_date_order_of_an_export_only(tmp_path: Path) -> None:
    from vecbook.config import ConfigError, load_config

    path = chat(tmp_path, "03/04/23, 10:00 - Ana: hi\n")
    toml = tmp_path / "vecbook.toml"
    toml.write_text(f'[[collections]]\nname = "wa"\npath = "{path.name}"\ndate_order = "mdy"\n', encoding="utf-8")
    assert load_config(toml).collections[0].date_order == "mdy"
    toml.write_text(f'[[collections]]\nname = "wa"\npath = "{path.name}"\ndate_order = "m/d"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'date_order' .* must be \"dmy\" .* or \"mdy\" .*got 'm/d'"):
        load_config(toml)
    toml.write_text('[[collections]]\nname = "db"\ndatabase = "x.db"\ndate_order = "mdy"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'date_order' applies to exports"):
        load_config(toml)


# -- message shapes --

IOS = ("[14/01/2024, 09:00:00] Family: \u200eMessages and calls are end-to-end encrypted. No one outside "
       "of this chat, not even WhatsApp, can read or listen to them.\n"
       "\u200e[14/01/2024, 09:00:01] Family: \u200eAna added Bo\n"
       "[14/01/2024, 09:01:00] Ana: the recipe:\n"
       "200 g flour\n"
       "\n"
       "3 eggs\n"
       "\u200e[14/01/2024, 09:02:00] Bo: \u200eimage omitted\n"
       "\u200e[14/01/2024, 09:03:00] Bo: \u200e<attached: 00000012-PHOTO-2024-01-02.jpg>\n"
       "[14/01/2024, 09:04:00] Bo: thanks: see you on 13/01\n")


def test_multi_line_messages_cite_all_their_lines_and_attachments_stay(tmp_path: Path) -> None:
    zipped = tmp_path / "WhatsApp Chat - Family.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("_chat.txt", IOS)
        archive.writestr("00000012-PHOTO-2024-01-02.jpg", b"\xff\xd8")
    records, problems = load(zipped)
    assert problems == []
    (record,) = records
    assert record.text == ("Ana: the recipe:\n200 g flour\n\n3 eggs\nBo: image omitted\n"
                           "Bo: <attached: 00000012-PHOTO-2024-01-02.jpg>\nBo: thanks: see you on 13/01")
    assert record.metadata["conversation"] == "Family"
    assert record.citation == "wa/WhatsApp Chat - Family.zip!/_chat.txt:3-9"
    assert [s[1:] for s in record.segments] == [(3, 6), (7, 7), (8, 8), (9, 9)]
    assert record.lines_of(record.text.index("3 eggs"), record.text.index("3 eggs") + 6) == (3, 6)
    assert_messages_cited(zipped, record)


def test_a_message_listing_dates_and_times_on_its_lines_reads_without_a_warning(tmp_path: Path) -> None:
    # A pasted schedule is the text of its message: its lines name no sender after a separator, as
    # a header in a form not read would ("14/12/2022 @ 13:35 -- Ana: ..."), so nothing is to warn.
    text = ("[12/03/2024, 14:05:00] Ana: Schedule for the week:\n12/03/2024 14:00 dentist\n"
            "13/03/2024, 9:00 school play: bring the costume\n[13/03/2024, 14:06:00] Bo: thanks\n")
    records, problems = load(chat(tmp_path, text))
    assert problems == []
    assert records[0].text == ("Ana: Schedule for the week:\n12/03/2024 14:00 dentist\n"
                               "13/03/2024, 9:00 school play: bring the costume")


def test_windows_line_endings_keep_lines_and_text_clean(tmp_path: Path) -> None:
    text = "14/02/2024, 10:00 - Ana: two\r\nlines\r\n14/02/2024, 10:01 - Bo: one\r\n"
    (record,), _ = load(chat(tmp_path, text))
    assert record.text == "Ana: two\nlines\nBo: one"
    assert [s[1:] for s in record.segments] == [(1, 2), (3, 3)]


@pytest.mark.parametrize("written, date", [
    ("1402/10/10, 13:05 - Ana: salam", "2023-12-31T13:05:00"),  # Android, ASCII digits
    ("[۱۴۰۲/۱۲/۱۵، ۳:۰۵:۰۷ ب.ظ] Ana: سلام", "2024-03-05T15:05:07"),  # iPhone, Persian digits, 12 h
    ("۱۴۰۳/۱/۱، ۱۰:۰۰ - Ana: نوروز مبارک", "2024-03-20T10:00:00"),  # Nowruz, the year's first day
    ("۱۳۹۹/۱۲/۳۰، ۱۰:۰۰ - Ana: hi", "2021-03-20T10:00:00"),  # a leap year's 30 Esfand
    ("1388/1/1, 10:00 - Ana: hi", "2009-03-21T10:00:00"),
])
def test_a_persian_phone_s_solar_hijri_date_is_made_the_gregorian_one(tmp_path: Path, written: str, date: str) -> None:
    # A Persian phone (an iPhone set to the Persian calendar) writes the Solar Hijri year: 1402 is 2023-24.
    # WhatsApp's years (2009 to next year) are 1387 to 1406 there: no other calendar's fall so.
    records, problems = load(chat(tmp_path, written + "\n"))
    assert problems == []
    assert [r.metadata["date"] for r in records] == [date]


def test_a_year_before_whatsapp_existed_is_kept_as_written_with_a_warning(tmp_path: Path) -> None:
    # an Arabic phone set to the Islamic calendar writes 1445 (2023-24): a lunar year, not converted;
    # and no Solar Hijri day 30 of Esfand in a year that is not leap
    records, problems = load(chat(tmp_path, "1445/08/24, 13:05 - Ana: salam\n1402/12/30, 13:06 - Ana: hi\n"))
    assert [r.metadata["date"] for r in records] == ["1445-08-24T13:05:00"]
    assert problems == ["wa/WhatsApp Chat with Ana.txt: collection 'wa': dates such as '1445/08/24' lie before "
                        "WhatsApp existed (2009): the phone writes another calendar than the Gregorian; kept as written",
                        "wa/WhatsApp Chat with Ana.txt:2: collection 'wa': impossible date or time '1402/12/30 13:06'; "
                        "message skipped"]


IOS_SENT = ("[31/12/2023, 13:00:00] Ana: \u200eMessages and calls are end-to-end encrypted.\n"
            "[31/12/2023, 13:05:00] Ana: \u200eMissed voice call\n"
            "\u200e[31/12/2023, 13:06:00] Bo: \u200eBudget.pdf \u2022 \u200e3 pages \u200e<attached: 00000013-Budget.pdf>\n"
            "[31/12/2023, 13:07:00] Bo: \u200eLocation: https://maps.google.com/?q=51.501,-0.142\n"
            "[31/12/2023, 13:08:00] Bo: \u200eThis message was deleted.\n"
            "[31/12/2023, 13:09:00] Ana: \u200f\u05e9\u05dc\u05d5\u05dd\n"
            "[31/12/2023, 13:10:00] Ana: \u200eLocation: https://maps.google.com/?q=1,2\n")


def test_ios_marks_what_people_sent_as_it_marks_system_lines_and_both_are_told_apart(tmp_path: Path) -> None:
    # iOS puts U+200E before its own lines, written under the chat's name, which writes nothing
    # unmarked (its first line is the encryption notice), and before what people sent: documents,
    # locations, deletions, and in a chat of two the other's missed calls
    group = ("[31/12/2023, 12:59:00] Trip: \u200eAna added Bo\n"
             "[31/12/2023, 12:59:30] Trip: \u200eAna changed the group description\n")
    (record,), problems = load(chat(tmp_path, group + IOS_SENT, name="_chat.txt"))
    assert problems == []
    assert record.text == ("Ana: Missed voice call\n"
                           "Bo: Budget.pdf \u2022 \u200e3 pages \u200e<attached: 00000013-Budget.pdf>\n"
                           "Bo: Location: https://maps.google.com/?q=51.501,-0.142\nBo: This message was deleted.\n"
                           "Ana: \u05e9\u05dc\u05d5\u05dd\nAna: Location: https://maps.google.com/?q=1,2")
    assert [s[1:] for s in record.segments] == [(4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (9, 9)]
    assert record.metadata["participants"] == ["Ana", "Bo"]


def test_ios_notices_under_the_other_person_s_name_in_a_chat_of_two_are_skipped(tmp_path: Path) -> None:
    # In a chat of two, iOS writes its notices under the other person's name, marked with U+200E:
    # a changed security code, a block, a new number, disappearing messages. They are the app's
    # words, not Ana's ("what was the security code" must not find them); the same words unmarked,
    # typed by someone, stay.
    notices = ["Your security code with Ana changed. Tap to learn more.", "You blocked this contact. Tap to unblock.",
               "You unblocked this contact.", "Ana changed their phone number to a new number. Tap to message or "
               "add the new number.", "Ana turned on disappearing messages. New messages will disappear from this "
               "chat 7 days after they\u2019re sent, except when kept.", "Ana turned off disappearing messages.",
               "Ana joined using this group\u2019s invite link", "Ana is a contact."]
    lines = [f"[31/12/2023, 13:{i:02d}:00] Ana: \u200e{notice}" for i, notice in enumerate(notices)]
    text = "\n".join(["[31/12/2023, 12:58:00] Ana: the alarm code is 4512", *lines,
                      "[31/12/2023, 13:20:00] Bo: You blocked this contact? ha"]) + "\n"
    (record,), problems = load(chat(tmp_path, text, name="_chat.txt"))
    assert problems == []
    assert record.text == "Ana: the alarm code is 4512\nBo: You blocked this contact? ha"


@pytest.mark.parametrize("security, encryption, image", [
    ("Dein Sicherheitscode für Ana hat sich geändert. Tippe, um mehr zu erfahren.",  # de
     "Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt. Niemand außerhalb dieses Chats kann sie lesen.",
     "Bild weggelassen"),
    ("Tu código de seguridad con Ana cambió. Toca para obtener más información.",  # es
     "Los mensajes y las llamadas están cifrados de extremo a extremo.", "imagen omitida"),
    ("O seu código de segurança com Ana mudou. Toque para saber mais.",  # pt
     "As mensagens e as chamadas são protegidas com a criptografia de ponta a ponta.", "imagem não revelada"),
    ("Votre code de sécurité avec Ana a changé. Appuyez pour en savoir plus.",  # fr
     "Les messages et les appels sont chiffrés de bout en bout.", "image absente"),
    ("Код безопасности Ana изменился. Нажмите, чтобы узнать подробнее.",  # ru
     "Сообщения и звонки защищены сквозным шифрованием.", "изображение отсутствует"),
    ("Anaのセキュリティコードが変更されました。タップして詳細を表示。",  # ja
     "メッセージと通話はエンドツーエンドで暗号化されています。", None),
    ("你与Ana的安全码已更改。轻触了解详情。", "消息和通话都进行端到端加密。", None),  # zh
    ("تم تغيير رمز الأمان الخاص بـ Ana. انقر لمعرفة المزيد.",  # ar
     "الرسائل والمكالمات مشفرة تمامًا بين الطرفين.", "لم يتم إدراج الصورة"),
])
def test_ios_notices_in_other_languages_are_nobody_s_words(tmp_path: Path, security: str, encryption: str,
                                                             image: str | None) -> None:
    # iOS in another language marks its notices (U+200E) under the other person's name in a chat
    # of two as it does in English: a changed security code, the encryption notice (here not the
    # first line) are the app's words, not Ana's; a photo placeholder is what someone sent, kept
    # as "image omitted" is, even from a member who wrote nothing else
    lines = ["[31/12/2023, 12:58:00] Ana: hola 👋", f"[31/12/2023, 12:59:00] Ana: \u200e{encryption}",
             f"[31/12/2023, 13:00:00] Ana: \u200e{security}", "[31/12/2023, 13:01:00] Bo: ok"]
    if image:
        lines.append(f"\u200e[31/12/2023, 13:02:00] Cy: \u200e{image}")
    (record,), problems = load(chat(tmp_path, "\n".join(lines) + "\n", name="_chat.txt"))
    assert problems == []
    assert record.text == "Ana: hola 👋\nBo: ok" + (f"\nCy: {image}" if image else "")


@pytest.mark.parametrize("notices", [
    ["Desbloqueaste a este contacto.", "Desbloqueaste a esta persona.", "Ana es un contacto.",  # es
     "Ana activó los mensajes temporales. Los mensajes nuevos desaparecerán de este chat 7 días después de "
     "enviarse, a menos que se conserven.", "Ana desactivó los mensajes temporales.",
     "Ana se unió usando el enlace de invitación de este grupo"],
    ["Du hast diesen Kontakt freigegeben.", "Ana ist ein Kontakt.",  # de
     "Ana hat selbstlöschende Nachrichten aktiviert.", "Ana ist über den Einladungslink dieser Gruppe beigetreten"],
    ["Você desbloqueou este contato.", "Ana é um contato.", "Ana ativou as mensagens temporárias.",  # pt
     "Ana desativou as mensagens temporárias.", "Ana entrou usando o link de convite deste grupo"],
    ["Vous avez débloqué ce contact.", "Ana est un contact.", "Ana a activé les messages éphémères.",  # fr
     "Ana a rejoint ce groupe via le lien d’invitation"],
    ["Hai sbloccato questo contatto.", "Ana è un contatto.", "Ana ha attivato i messaggi effimeri.",  # it
     "Ana si è unito/a tramite il link d'invito al gruppo"],
    ["Вы разблокировали этот контакт.", "Ana включил(а) исчезающие сообщения.",  # ru
     "Ana присоединился(-ась) по ссылке-приглашению в эту группу"],
    ["Ana开启了限时消息。", "Ana 已透過此群組的邀請連結加入"],  # zh
    ["Anaが消えるメッセージをオンにしました。", "Anaがこのグループの招待リンクから参加しました"],  # ja
    ["قام Ana بتشغيل الرسائل المؤقتة.", "انضم Ana باستخدام رابط الدعوة لهذه المجموعة"],  # ar
    ["मैसेज और कॉल एंड-टू-एंड एन्क्रिप्टेड हैं. इस चैट के बाहर कोई भी उन्हें पढ़ या सुन नहीं सकता.",  # hi
     "Ana ने गायब होने वाले मैसेज चालू किए."],
    ["Anda membuka blokir kontak ini.", "Ana mengaktifkan pesan sementara.",  # id
     "Ana bergabung menggunakan tautan undangan grup ini"],
    ["Bu kişinin engelini kaldırdınız.", "Ana süreli mesajları açtı.", "Ana kaybolan mesajları açtı.",  # tr
     "Ana bu grubun davet bağlantısını kullanarak katıldı"],
], ids=["es", "de", "pt", "fr", "it", "ru", "zh", "ja", "ar", "hi", "id", "tr"])
def test_ios_notices_in_other_languages_that_say_nothing_of_tapping_are_nobody_s_words(tmp_path: Path,
                                                                                    notices: list[str]) -> None:
    # Marked (U+200E) under the other person's name in a chat of two, without the sentence that says
    # to tap nor the words "end-to-end encrypted": an unblocked contact, "Ana is a contact.", disappearing
    # messages turned on or off, a join by a group's link. A photo is still what Ana sent.
    lines = [f"[31/12/2023, 13:{i:02d}:00] Ana: \u200e{notice}" for i, notice in enumerate(notices)]
    text = "\n".join(["[31/12/2023, 12:58:00] Ana: hola 👋", *lines, "[31/12/2023, 13:20:00] Ana: \u200eimage omitted",
                      "[31/12/2023, 13:21:00] Bo: ok"]) + "\n"
    (record,), problems = load(chat(tmp_path, text, name="_chat.txt"))
    assert problems == []
    assert record.text == "Ana: hola 👋\nAna: image omitted\nBo: ok"


@pytest.mark.parametrize("call", ["Missed voice call, \u200eTap to call back", "Missed video call, \u200eTap to call back",
                                  "Verpasster Sprachanruf, \u200eTippe, um zur\u00fcckzurufen",
                                  "Llamada de voz perdida, \u200eToca para devolver la llamada"])
def test_a_missed_call_that_says_to_tap_to_call_back_stays_as_the_caller_s_line(tmp_path: Path, call: str) -> None:
    # iOS adds "Tap to call back" to a missed call, after a comma and a second mark: it is a
    # call, kept as "Missed voice call" is, not a notice telling to tap
    text = f"[31/12/2023, 12:58:00] Ana: hola\n[31/12/2023, 13:00:00] Ana: \u200e{call}\n[31/12/2023, 13:01:00] Bo: ok\n"
    (record,), problems = load(chat(tmp_path, text, name="_chat.txt"))
    assert record.text == f"Ana: hola\nAna: {call}\nBo: ok"


def test_an_unzipped_ios_export_is_named_after_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "WhatsApp Chat - Trip"
    folder.mkdir()
    (record,), _ = load(chat(folder, "[31/12/2023, 13:05:00] Ana: see you at the station\n", name="_chat.txt"))
    assert record.metadata["conversation"] == "Trip"


def test_unzipped_ios_exports_in_folders_the_user_named_are_each_named_after_its_folder(tmp_path: Path) -> None:
    # each iOS zip unzipped into a folder renamed for the chat: every chat is its own conversation,
    # on disk and zipped again (before, all were "_chat", or the outer zip's name)
    for name in ("Ana", "Bo trip"):
        (tmp_path / "Chats" / name).mkdir(parents=True)
        chat(tmp_path / "Chats" / name, f"[31/12/2023, 13:05:00] {name.split()[0]}: hi\n", name="_chat.txt")
    with zipfile.ZipFile(tmp_path / "Chats.zip", "w") as archive:
        for name in ("Ana", "Bo trip"):
            archive.write(tmp_path / "Chats" / name / "_chat.txt", f"{name}/_chat.txt")
    for path in (tmp_path / "Chats", tmp_path / "Chats.zip"):
        records, _ = load(path, "whatsapp")
        assert sorted((r.metadata["conversation"], r.text) for r in records) == [("Ana", "Ana: hi"),
                                                                                ("Bo trip", "Bo: hi")]


def test_an_unzipped_ios_export_zipped_again_is_named_after_its_folder(tmp_path: Path) -> None:
    # the folder Finder unzipped, compressed again (Finder's Compress, for a backup or to send on)
    with zipfile.ZipFile(tmp_path / "Archive.zip", "w") as archive:
        archive.writestr("WhatsApp Chat - Trip/_chat.txt", "[31/12/2023, 13:05:00] Ana: see you at the station\n")
    (record,), _ = load(tmp_path / "Archive.zip")
    assert record.metadata["conversation"] == "Trip"


def test_a_zip_of_several_exported_chats_reads_every_chat_inside(tmp_path: Path) -> None:
    # a user zipped together what each phone exported: an Android .txt, iOS zips holding _chat.txt
    def zipped(members: dict[str, str]) -> bytes:
        path = tmp_path / "inner.zip"
        with zipfile.ZipFile(path, "w") as archive:
            for name, text in members.items():
                archive.writestr(name, text)
        return path.read_bytes()

    with zipfile.ZipFile(tmp_path / "Chats.zip", "w") as archive:
        archive.writestr("WhatsApp Chat with Bo.txt", "31/12/2023, 13:05 - Bo: the ferry\n")
        archive.writestr("WhatsApp Chat - Ana.zip", zipped({"_chat.txt": "[30/12/2023, 13:05:09] Ana: the train\n",
                                                            "00000001-PHOTO.jpg": "x"}))
        archive.writestr("WhatsApp Chat - Family.zip", zipped({"_chat.txt": "[29/12/2023, 09:00:00] Cy: dinner\n"}))
    records, problems = load(tmp_path / "Chats.zip")
    assert problems == []
    assert sorted((r.metadata["conversation"], r.text, r.citation) for r in records) == [
        ("Ana", "Ana: the train", "wa/Chats.zip!/WhatsApp Chat - Ana.zip!/_chat.txt:1-1"),
        ("Bo", "Bo: the ferry", "wa/Chats.zip!/WhatsApp Chat with Bo.txt:1-1"),
        ("Family", "Cy: dinner", "wa/Chats.zip!/WhatsApp Chat - Family.zip!/_chat.txt:1-1")]


@pytest.mark.parametrize("file_name", [
    "WhatsApp Chat with Ana Lima.txt", "WhatsApp Chat - Ana Lima.zip", "WhatsApp Chat mit Ana Lima.txt",
    "WhatsApp-Chat mit Ana Lima.txt", "WhatsApp-chat met Ana Lima.txt", "Discussion WhatsApp avec Ana Lima.txt",
    "Conversa do WhatsApp com Ana Lima.txt", "Chat de WhatsApp con Ana Lima.txt", "Chat WhatsApp con Ana Lima.txt",
    "Chat WhatsApp dengan Ana Lima.txt", "Чат WhatsApp с Ana Lima.txt", "Чат WhatsApp с контактом Ana Lima.txt",
    "WhatsApp Chat with Ana Lima (1).txt", "WhatsApp Chat - Ana Lima (2).zip",  # a browser's second download
    # Android's names in more languages, the name first in some: tr, ja, ko, hi, zh, fi, sq, cs, sk, ...
    "Ana Lima ile WhatsApp Sohbeti.txt", "Ana LimaとのWhatsAppチャット.txt", "Ana Lima님과의 WhatsApp 대화.txt",
    "Ana Lima के साथ WhatsApp चैट.txt", "WhatsApp 与 Ana Lima 的对话.txt", "WhatsApp 與 Ana Lima 的對話.txt",
    "WhatsApp-keskustelu henkilön Ana Lima kanssa.txt", "Biseda me Ana Lima në WhatsApp.txt",
    "Chat WhatsApp s uživatelem Ana Lima.txt", "WhatsApp chat s používateľom Ana Lima.txt", "Czat WhatsApp z Ana Lima.txt",
    "WhatsApp-chatt med Ana Lima.txt", "WhatsApp-samtale med Ana Lima.txt", "Conversa no WhatsApp com Ana Lima.txt",
    "Conversa\u021bie WhatsApp cu Ana Lima.txt", "Trò chuyện WhatsApp với Ana Lima.txt", "Бесіда WhatsApp з Ana Lima.txt",
    "\u062f\u0631\u062f\u0634\u0629 \u0648\u0627\u062a\u0633\u0627\u0628 \u0645\u0639 Ana Lima.txt",  # ar
    "\u05e6'\u05d0\u05d8 WhatsApp \u05e2\u05dd Ana Lima.txt", "\u06af\u0641\u062a\u06af\u0648\u06cc WhatsApp \u0628\u0627 Ana Lima.txt",
    "Συνομιλία WhatsApp με Ana Lima.txt", "แชท WhatsApp กับ Ana Lima.txt", "Sembang WhatsApp dengan Ana Lima.txt",
    "WhatsApp Gesprek met Ana Lima.txt", "Xat de WhatsApp amb Ana Lima.txt", "WhatsApp razgovor s Ana Lima.txt",
    "WhatsApp pokalbis su Ana Lima.txt", "WhatsApp Чат с Ana Lima.txt", "Ana Lima bilan WhatsApp chati.txt",
    "Tro\u0300 chuye\u0323\u0302n WhatsApp vo\u031b\u0301i Ana Lima.txt",  # decomposed, as macOS may write a name
])
def test_the_chat_is_named_from_the_file_name_the_phone_gave_in_its_language(tmp_path: Path, file_name: str) -> None:
    # the phone names the file in its own language: --filter conversation="Ana Lima" finds the chat in each
    line = "31/12/2023, 13:05 - Ana Lima: see you at the station\n"
    if file_name.endswith(".zip"):
        with zipfile.ZipFile(tmp_path / file_name, "w") as archive:
            archive.writestr("_chat.txt", line)
        path = tmp_path / file_name
    else:
        path = chat(tmp_path, line, name=file_name)
    (record,), _ = load(path)
    assert record.metadata["conversation"] == "Ana Lima"


@pytest.mark.parametrize("name", ['ד"ר כהן', 'עו"ד לוי', 'Bob "The" Builder'])
def test_a_name_holding_quotes_still_names_its_writer(tmp_path: Path, name: str) -> None:
    (record,), _ = load(chat(tmp_path, f"31/12/2023, 13:05 - {name}: the appointment: Tuesday\n"))
    assert record.metadata["participants"] == [name]


@pytest.mark.parametrize("line", [
    "31.12.23, 13:06 - Jan hat den Betreff von \u201eReise\u201c zu \u201eReise: Rom 2024\u201c ge\u00e4ndert",
    '31/12/23, 13:06 - Ana cambi\u00f3 el asunto de "Viaje" a "Viaje: Roma"',
    "31/12/23, 13:06 - Ana a chang\u00e9 le sujet de \u00ab Voyage \u00bb en \u00ab Voyage : Rome \u00bb",
    "31/12/23, 13:06 - Ana changed the subject to \u201cTrip: Rome\u201d",
])
def test_a_system_line_quoting_a_subject_with_a_colon_names_nobody(tmp_path: Path, line: str) -> None:
    records, _ = load(chat(tmp_path, f"31/12/23, 13:05 - Ana: hola\n{line}\n31/12/23, 13:07 - Bo: Bob \"The\" Builder\n"))
    assert [r.metadata["participants"] for r in records] == [["Ana", "Bo"]]


def test_a_chat_in_a_form_not_read_that_is_added_as_text_says_so(tmp_path: Path) -> None:
    path = chat(tmp_path, "02/05/2018 @ 18:00 -- Michel: bonjour\n02/05/2018 @ 18:01 -- Anne: salut\n")
    records, problems = load(path, fmt="text")
    assert [r.text for r in records] == ["02/05/2018 @ 18:00 -- Michel: bonjour\n02/05/2018 @ 18:01 -- Anne: salut"]
    assert problems == ["wa/WhatsApp Chat with Ana.txt:1: collection 'wa': starts like a WhatsApp chat, in a date or "
                        "time form not read ('02/05/2018 @ 18:00 -- Michel: bonjour'): read as text, without dates "
                        "or senders"]


@pytest.mark.parametrize("line", ["2024-03-05 10:30 Standup: budget is approved", "12.03.2024 08:15:02 ERROR: disk full"])
def test_a_journal_or_log_line_with_a_date_and_time_is_no_chat(tmp_path: Path, line: str) -> None:
    records, problems = load(chat(tmp_path, line + "\n", name="notes.txt"), fmt="text")
    assert len(records) == 1 and problems == []


def test_system_lines_of_android_are_skipped(tmp_path: Path) -> None:
    text = ("14/02/2024, 10:00 - Ana created group \"Trip: Lisbon\"\n"
            "14/02/2024, 10:00 - Ana added Bo\n"
            "14/02/2024, 10:01 - Ana changed the subject from \"Trip\" to \"Trip: Lisbon\"\n"
            "14/02/2024, 10:02 - Bo: hello\n"
            "14/02/2024, 10:03 - Bo left\n")
    records, _ = load(chat(tmp_path, text))
    assert [r.text for r in records] == ["Bo: hello"]


@pytest.mark.parametrize("pasted", [
    "12/03/2024, 14:00 - dentist\n13/03/2024, 09:00 - school meeting\nbring the forms",
    "12/03/2024, 14:00 - dentist\nnote: bring the card",
])
def test_a_pasted_line_that_looks_like_a_system_line_but_goes_on_is_text_of_the_message(tmp_path: Path,
                                                                                       pasted: str) -> None:
    # WhatsApp writes each of its notices on one line: a header naming nobody with lines under it
    # is what someone pasted (an agenda copied from a calendar), not a notice to leave out
    text = f"12/03/2024, 10:00 - Ana: the week:\n{pasted}\n12/03/2024, 10:05 - Bo: ok\n14/03/2024, 10:06 - Bo left\n"
    records, problems = load(chat(tmp_path, text))
    assert [r.text for r in records] == [f"Ana: the week:\n{pasted}\nBo: ok"]
    assert records[0].segments[0][1:] == (1, 1 + pasted.count("\n") + 1)
    assert problems == []


def test_a_group_whose_export_opens_with_many_joins_is_still_a_chat(tmp_path: Path) -> None:
    # a community group: the encryption notice, its creation, then a line for each of 60 joins
    # before anyone writes; Android's system lines name nobody, so no "Name: text" near the top
    text = ("12/01/2024, 10:00 - Messages and calls are end-to-end encrypted. Tap to learn more.\n"
            "12/01/2024, 10:00 - Ana created group \"Class of 2010\"\n"
            + "".join(f"12/01/2024, 10:{n:02d} - +44 7700 9000{n:02d} joined using this group's invite link\n"
                      for n in range(1, 60))
            + "13/01/2024, 09:00 - Bo: hello all\n13/01/2024, 09:05 - Cy: hi!\n")
    path = chat(tmp_path, text, name="WhatsApp Chat with Class of 2010.txt")
    assert detect_format(collection(path)) == "whatsapp"
    records, problems = load(path)
    assert problems == [] and [(r.text, r.citation) for r in records] == [
        ("Bo: hello all\nCy: hi!", "wa/WhatsApp Chat with Class of 2010.txt:62-63")]

MARCH = ("14/03/2024, 10:00 - Ana: the ferry to Porto leaves at noon\n14/03/2024, 10:01 - Bo: ok\n"
         "14/03/2024, 10:01 - Bo: ok\n")  # the same words twice in one minute: two messages
JUNE = MARCH + "20/06/2024, 09:00 - Ana: the ferry again?\n"


def test_a_chat_exported_twice_is_read_once_and_cited_in_the_newer_export(tmp_path: Path) -> None:
    # the March export and the June one (a browser's "(1)") of the same chat, both in the folder:
    # each message is read once, in the newer file, and the older file says so
    chat(tmp_path, MARCH)
    chat(tmp_path, JUNE, name="WhatsApp Chat with Ana (1).txt")
    records, problems = load(tmp_path)
    assert sorted((r.citation, r.text) for r in records) == [
        ("wa/WhatsApp Chat with Ana (1).txt:1-3", "Ana: the ferry to Porto leaves at noon\nBo: ok\nBo: ok"),
        ("wa/WhatsApp Chat with Ana (1).txt:4-4", "Ana: the ferry again?")]
    assert problems == ["wa/WhatsApp Chat with Ana.txt: collection 'wa': the same chat as 'WhatsApp Chat with Ana (1).txt', "
                        "exported again: all 3 of its messages are read there"]


def test_a_chat_exported_twice_into_the_data_folder_itself_is_a_warning_saying_how_to_read_it_once(
        tmp_path: Path) -> None:
    # The data folder reads each file on its own (an edit reads that file again, not the folder):
    # both exports are read, so the older one says where its windows are read again, and how to
    # read each message once; a chat exported once, beside them, says nothing
    from vecbook.sources import load_directory
    chat(tmp_path, MARCH)
    chat(tmp_path, JUNE, name="WhatsApp Chat with Ana (1).txt")
    chat(tmp_path, MARCH.replace("Ana", "Cy"), name="WhatsApp Chat with Cy.txt")
    report = load_directory(tmp_path)
    assert len(report.records) == 4
    told = ("WhatsApp Chat with Ana.txt: the same chat as 'WhatsApp Chat with Ana (1).txt', exported again (1 of its 1 "
            "conversation windows are there too): this folder reads each file on its own, so their messages are "
            "searched and counted twice; to read each once, move both into a folder of their own and add it "
            "(`vecbook add FOLDER`)")
    assert [str(p) for p in report.problems] == [told] and [str(p) for p in report.new_problems] == [told]
    again = load_directory(tmp_path, state := vecbook.sources.SourceState())
    assert [str(p) for p in again.problems] == [told]
    assert load_directory(tmp_path, state).new_problems == []  # told once, as any problem, until a file changes


def test_a_zip_and_its_unzipped_folder_side_by_side_are_read_once(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "WhatsApp Chat - Ana.zip", "w") as archive:
        archive.writestr("_chat.txt", MARCH)
    (tmp_path / "WhatsApp Chat - Ana").mkdir()
    chat(tmp_path / "WhatsApp Chat - Ana", MARCH, name="_chat.txt")
    records, _ = load(tmp_path, "whatsapp")
    assert [r.metadata["message_count"] for r in records] == [3]


def test_a_chat_exported_from_an_android_phone_and_later_from_an_iphone_is_read_once(tmp_path: Path) -> None:
    # a new iPhone took the chat over: its export writes seconds where Android's wrote minutes
    chat(tmp_path, MARCH)
    iphone = "".join(f"[{line[:10]}, {line[12:17]}:{n:02d}] {line[20:]}" for n, line in
                     enumerate(JUNE.splitlines(keepends=True)))
    with zipfile.ZipFile(tmp_path / "WhatsApp Chat - Ana.zip", "w") as archive:
        archive.writestr("_chat.txt", iphone)
    records, problems = load(tmp_path)
    assert sum(r.metadata["message_count"] for r in records) == 4
    assert {r.file_path for r in records} == {"wa/WhatsApp Chat - Ana.zip!/_chat.txt"}


def test_messages_only_an_older_export_holds_stay_cited_there(tmp_path: Path) -> None:
    # messages deleted on the phone between the exports are in the older file only: kept
    chat(tmp_path, "13/03/2024, 18:00 - Bo: the old plan\n" + MARCH)
    chat(tmp_path, JUNE, name="WhatsApp Chat with Ana (1).txt")
    records, problems = load(tmp_path)
    assert sorted((r.citation, r.text) for r in records)[0] == ("wa/WhatsApp Chat with Ana (1).txt:1-3",
                                                                 "Ana: the ferry to Porto leaves at noon\nBo: ok\nBo: ok")
    assert ("wa/WhatsApp Chat with Ana.txt:1-1", "Bo: the old plan") in [(r.citation, r.text) for r in records]
    assert len(records) == 3 and "3 of its messages are read there; the 1 it alone holds here" in problems[0]



def test_a_pause_longer_than_the_gap_starts_a_new_window(tmp_path: Path) -> None:
    text = ("14/02/2024, 10:00 - Ana: one\n14/02/2024, 10:20 - Bo: two\n"
            "14/02/2024, 11:00 - Ana: three\n")
    records, _ = load(chat(tmp_path, text))
    assert [r.text for r in records] == ["Ana: one\nBo: two", "Ana: three"]
    assert records[0].metadata["conversation"] == "Ana"  # "WhatsApp Chat with Ana.txt"


def test_repeated_messages_get_distinct_stable_ids(tmp_path: Path) -> None:
    long = " ".join(["blah"] * 250)  # a window of its own, so "ok" opens two windows in one minute
    text = f"14/02/2024, 10:00 - Ana: ok\n14/02/2024, 10:00 - Bo: {long}\n14/02/2024, 10:00 - Ana: ok\n"
    records, _ = load(chat(tmp_path, text))
    assert [r.text[:6] for r in records] == ["Ana: o", "Bo: bl", "Ana: o"]
    assert records[2].id == records[0].id + "~2"
    again, _ = load(chat(tmp_path, text + "14/02/2024, 18:00 - Bo: later\n"))
    assert [r.id for r in again[:3]] == [r.id for r in records]


# -- bad input --

def test_bad_dates_and_stray_lines_are_warnings_naming_the_line(tmp_path: Path) -> None:
    text = ("exported by a tool\n"  # not a chat's first line: detection says no, the format is named
            "31/02/2024, 10:00 - Ana: no such day\n"
            "14/02/2024, 10:01 - Bo: fine\n"
            "14/02/2024, 25:01 - Bo: no such hour\n")
    records, problems = load(chat(tmp_path, text), fmt="whatsapp")
    assert [r.text for r in records] == ["Bo: fine"]
    assert problems == [
        "wa/WhatsApp Chat with Ana.txt:1: collection 'wa': lines 1-1 come before the first message; skipped",
        "wa/WhatsApp Chat with Ana.txt:2: collection 'wa': impossible date or time '31/02/2024 10:00'; message skipped",
        "wa/WhatsApp Chat with Ana.txt:4: collection 'wa': impossible date or time '14/02/2024 25:01'; message skipped"]


def test_a_file_that_is_not_a_chat_is_ignored_beside_one_that_is(tmp_path: Path) -> None:
    chat(tmp_path, "14/02/2024, 10:00 - Ana: hello\n")
    (tmp_path / "notes.txt").write_text("shopping list\n14/02/2024, 10:00 - buy milk\n")
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Ana: hello"] and problems == []


# -- detection --

def test_whatsapp_is_detected_from_each_fixture_and_nothing_else() -> None:
    for path in [WHATSAPP, *WHATSAPP.iterdir()]:
        assert detect_format(collection(path)) == "whatsapp", path
    detector = reader("whatsapp")
    for folder in EXPORTS.iterdir():
        if folder.is_dir() and folder.name != "whatsapp":
            assert not detector.detect(Export("x", folder, "x")), folder
    assert "whatsapp" in FORMATS


# -- search --

def test_whatsapp_windows_are_searched_and_filtered(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("nothing about pokemon here\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "wa"\npath = "{WHATSAPP}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("smart pokeball", mode="keyword", filters={"source": "wa"})
    assert hits[0].citation.startswith("wa/whatstk_pokemon.txt:")
    hits = book.search("pokeball", mode="keyword", filters={"participants__contains": "Prof. Oak",
                                                            "date__gte": "2016-10-01"})
    assert [h.metadata["date"] for h in hits] == ["2016-10-31T11:45:00"]
    hits = book.search("hello", mode="keyword", filters={"conversation": "chat-analytics_4A_11M"})
    assert hits and all(h.metadata["conversation"] == "chat-analytics_4A_11M" for h in hits)
