"""Date words in a query: a soft preference for records of the days they name, counted back
from the newest record the search may return (vecbook.date_words)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

import vecbook
from vecbook.date_words import date_span
from conftest import export_book
from test_chat_search import chat_book, chatter

WEDNESDAY = date(2024, 7, 17)


@pytest.mark.parametrize("query, first, end", [
    ("what did we eat in March", date(2024, 3, 1), date(2024, 4, 1)),
    ("in December", date(2023, 12, 1), date(2024, 1, 1)),  # a month without a year: the latest one begun
    ("rent for March 2023", date(2023, 3, 1), date(2023, 4, 1)),
    ("the trip last summer", date(2023, 6, 1), date(2023, 9, 1)),  # mid-July: last summer is 2023's
    ("in the winter", date(2023, 12, 1), date(2024, 3, 1)),
    ("dinner 2 weeks ago", date(2024, 6, 30), date(2024, 7, 7)),  # the week around 14 days back
    ("a couple of days ago", date(2024, 7, 15), date(2024, 7, 16)),
    ("three months ago", date(2024, 4, 3), date(2024, 5, 4)),
    ("what did Ana say on Tuesday", date(2024, 7, 16), date(2024, 7, 17)),
    ("last Wednesday", date(2024, 7, 10), date(2024, 7, 11)),  # the latest one before the reference day
    ("YESTERDAY'S plan", date(2024, 7, 16), date(2024, 7, 17)),
    ("the day before yesterday's call", date(2024, 7, 15), date(2024, 7, 16)),  # not yesterday
    ("last week", date(2024, 7, 8), date(2024, 7, 15)),  # Monday to Sunday
    ("this month", date(2024, 7, 1), date(2024, 8, 1)),
    ("last year", date(2023, 1, 1), date(2024, 1, 1)),
    ("photos in 2022", date(2022, 1, 1), date(2023, 1, 1)),
])
def test_date_words_name_a_span_of_days_back_from_the_reference_day(query: str, first: date, end: date) -> None:
    assert date_span(query, WEDNESDAY) == (first, end)


@pytest.mark.parametrize("query, first, end", [
    ("what's on tomorrow?", date(2024, 7, 18), date(2024, 7, 19)),
    ("what's on the day after tomorrow", date(2024, 7, 19), date(2024, 7, 20)),  # not tomorrow
    ("next week's meetings", date(2024, 7, 22), date(2024, 7, 29)),  # Monday to Sunday, as --since reads it
    ("bills due next month", date(2024, 8, 1), date(2024, 9, 1)),
    ("holidays next year", date(2025, 1, 1), date(2026, 1, 1)),
])
def test_date_words_ahead_name_days_after_today_not_after_the_newest_record(query: str, first: date, end: date) -> None:
    """A calendar holds coming events: what is ahead is ahead of today (as --since and --until
    read these words), where what is past counts back from the newest record."""
    assert date_span(query, date(2025, 3, 1), today=WEDNESDAY) == (first, end)
    assert date_span(query, WEDNESDAY) == (first, end)  # today defaults to the reference day


@pytest.mark.parametrize("query", ["may I ask about the sun", "what about last time", "a second opinion",
                                   "三月的晚饭", "مارس", "🎂 party"])
def test_words_that_only_look_like_dates_name_no_span(query: str) -> None:
    assert date_span(query, WEDNESDAY) is None


@pytest.mark.parametrize("query, reference", [
    ("the boiler in March 0000", WEDNESDAY), ("boiler December 9999", WEDNESDAY),  # no such year, or none after
    ("notes from last week", date(1, 1, 3)),  # records dated in the year 1 (a database's zero date)
])
def test_a_date_phrase_past_the_calendars_ends_names_no_span(query: str, reference: date) -> None:
    # the search went on without it; before, ValueError: year 0 is out of range
    assert date_span(query, reference) is None
    assert vecbook.date_words.phrase_span(query.rsplit(" ", 2)[-2] + " " + query.rsplit(" ", 1)[-1],
                                          reference) is None


def whatsapp_days(path: Path, messages: list[tuple[str, str, str]]) -> Path:
    """A WhatsApp export of ``(DD/MM/YYYY, author, text)`` messages, each at 09:00."""
    path.write_text("".join(f"{day}, 09:00 - {author}: {text}\n" for day, author, text in messages), encoding="utf-8")
    return path


def test_in_march_prefers_marchs_messages_but_still_returns_a_better_match_from_may(tmp_path: Path) -> None:
    # Days apart and with other talk between: each message is a window, none merged with another.
    export = whatsapp_days(tmp_path / "chat.txt", [
        ("02/03/2024", "Ana", "Café Núñez dinner 🍷 was fine"),
        ("05/03/2024", "Ben", f"boiler {chatter(5, 30)}"),
        ("05/04/2024", "Cy", "مرحبا 北京 " + chatter(1, 5)),
        ("10/05/2024", "Ben", "dinner at Café Núñez 🍷"),
        ("15/05/2024", "Cy", chatter(2, 5)),
        ("20/05/2024", "Ana", "the plumber fixed the boiler 🔧"),
        ("01/06/2024", "Cy", chatter(3, 5))])
    book = chat_book(tmp_path, export)
    assert len(book._snapshot.records) == 7
    plain = book.search("dinner at Café Núñez", mode="keyword")
    assert plain[0].text == "Ben: dinner at Café Núñez 🍷"  # May's, the shorter message, ranks first
    march = book.search("dinner at cafe nunez in March", mode="keyword")
    assert [h.text for h in march[:2]] == ["Ana: Café Núñez dinner 🍷 was fine",
                                          "Ben: dinner at Café Núñez 🍷"]  # May's still next
    assert all(0.0 <= h.similarity_score <= 1.0 for h in march)
    # A far better match from May stays first: the preference only tips close ones.
    boiler = book.search("when the plumber fixed the boiler in March", mode="keyword")
    assert boiler[0].text == "Ana: the plumber fixed the boiler 🔧" and boiler[1].text.startswith("Ben: boiler")


def test_date_words_count_back_from_the_newest_record_the_filters_allow(tmp_path: Path) -> None:
    export = whatsapp_days(tmp_path / "chat.txt", [
        ("01/02/2024", "Ana", "the lantern festival 🏮 tickets"),
        ("10/02/2024", "Ben", "lantern festival 🏮 tickets, lantern festival"),
        ("20/02/2024", "Ana", f"{chatter(3, 4)}"),
        ("10/04/2024", "Ben", f"{chatter(4, 4)}")])
    book = chat_book(tmp_path, export)
    assert book.search("lantern festival", mode="keyword")[0].text.startswith("Ben: ")
    # The newest record it may return is 20 February: 3 weeks ago is around 30 January.
    hits = book.search("lantern festival 3 weeks ago", mode="keyword", filters={"date__lt": "2024-03-01"})
    assert hits[0].text.startswith("Ana: the lantern festival")
    # Without the filter the newest is 10 April: 3 weeks ago is around 20 March, which none is from.
    assert book.search("lantern festival 3 weeks ago", mode="keyword")[0].text.startswith("Ben: ")


def test_a_query_naming_no_date_is_scored_as_before(tmp_path: Path) -> None:
    export = whatsapp_days(tmp_path / "chat.txt", [("01/03/2024", "Ana", "lantern festival"),
                                                   ("01/05/2024", "Ben", "lantern festival tickets")])
    book = chat_book(tmp_path, export)
    columns = book._snapshot.columns
    def unread() -> Any:
        raise AssertionError("the records' dates were read for a query naming no date")
    assert vecbook.date_words.query_span("lantern festival", unread, None) is None  # costs nothing
    assert vecbook.date_words.query_span("lantern festival in March", columns.dates, None) == (
        (date(2024, 3, 1) - date(1970, 1, 1)).days, (date(2024, 4, 1) - date(1970, 1, 1)).days)


SPANNING_CALENDAR = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Hand written//VecBook tests//EN\r
BEGIN:VEVENT\r
UID:ski-plan@example.com\r
SUMMARY:ski trip budget\r
DTSTART;VALUE=DATE:20240115\r
DTEND;VALUE=DATE:20240116\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:ski-week@example.com\r
SUMMARY:Ski trip 🎿 Chamonix, Zoë's chalet\r
DTSTART;VALUE=DATE:20240226\r
DTEND;VALUE=DATE:20240304\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:cours@example.com\r
SUMMARY:cours de poterie\r
DTSTART;TZID=Europe/Paris:20240601T180000\r
DTEND;TZID=Europe/Paris:20240601T200000\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:pottery@example.com\r
SUMMARY:cours de poterie (hebdo)\r
DTSTART;TZID=Europe/Paris:20240104T180000\r
DTEND;TZID=Europe/Paris:20240104T200000\r
RRULE:FREQ=WEEKLY;UNTIL=20240530T000000Z\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:last@example.com\r
SUMMARY:{chatter}\r
DTSTART;VALUE=DATE:20240710\r
END:VEVENT\r
END:VCALENDAR\r
"""


def test_in_march_prefers_an_event_that_spans_into_march_or_recurs_in_it(tmp_path: Path) -> None:
    pytest.importorskip("icalendar", reason="icalendar is in requirements.txt; the ics reader needs it")
    calendar = tmp_path / "cal.ics"
    calendar.write_text(SPANNING_CALENDAR.format(chatter=chatter(1, 3)), encoding="utf-8")
    book = export_book(tmp_path, "cal", calendar)
    # Without a date word January's plan ranks first; the week in Chamonix runs 26 February
    # to 3 March, so it lies in March as `--since 2024-03-01 --until 2024-03-31` has it.
    assert book.search("ski trip", mode="keyword")[0].metadata["date"] == "2024-01-15"
    in_march = {"since": "2024-03-01", "until": "2024-03-31"}
    assert [h.metadata["date"] for h in book.search("ski trip", mode="keyword", **in_march)] == ["2024-02-26"]
    assert book.search("ski trip in March", mode="keyword")[0].metadata["date"] == "2024-02-26"
    # A weekly class first held in January recurs in March: it is March's, as the filters find it.
    assert book.search("cours de poterie", mode="keyword")[0].metadata["date"].startswith("2024-06-01")
    assert [h.metadata["date"][:10] for h in book.search("poterie", mode="keyword", **in_march)] == ["2024-01-04"]
    assert book.search("cours de poterie in March", mode="keyword")[0].metadata["date"].startswith("2024-01-04")


def test_whats_on_tomorrow_or_today_prefers_that_days_event_in_a_calendar_of_coming_events(tmp_path: Path) -> None:
    pytest.importorskip("icalendar", reason="icalendar is in requirements.txt; the ics reader needs it")
    today = date.today()
    events = [("past", today - timedelta(days=7), "team meeting"),
              ("now", today, "team meeting at the office with Ana"),
              ("coming", today + timedelta(days=1), "team meeting about the budget with Zoë"),
              ("later", today + timedelta(days=200), chatter(1, 3))]  # the newest record, months ahead
    calendar = tmp_path / "cal.ics"
    calendar.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Hand written//VecBook tests//EN\r\n" + "".join(
        f"BEGIN:VEVENT\r\nUID:{uid}@example.com\r\nSUMMARY:{summary}\r\nDTSTART;VALUE=DATE:{day:%Y%m%d}\r\n"
        f"END:VEVENT\r\n" for uid, day, summary in events) + "END:VCALENDAR\r\n", encoding="utf-8")
    book = export_book(tmp_path, "cal", calendar)
    assert book.search("team meeting", mode="keyword")[0].metadata["date"] == (today - timedelta(days=7)).isoformat()
    tomorrow = (today + timedelta(days=1)).isoformat()
    assert book.search("what's on tomorrow? team meeting", mode="keyword")[0].metadata["date"] == tomorrow
    # Words back count from the newest record, but not from one ahead of today: today is today.
    assert book.search("team meeting today", mode="keyword")[0].metadata["date"] == today.isoformat()


def test_the_span_is_checked_for_a_searchs_candidates_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # a question naming a span looks at the few hundred candidates a search ranks, not at every
    # record and series of the index (at 100,000 records each new span had cost seconds)
    from vecbook.date_words import in_span
    from vecbook.recurrence import series_matches

    def event(rid: str, **metadata: Any) -> vecbook.Record:
        return vecbook.Record(id=rid, text=rid, source="files", file_path="c.ics", line_number=1, end_line=1,
                              metadata=metadata)

    records = [event("trip", date="2024-02-26", end_date="2024-03-03"), event("may", date="2024-05-02"),
               event("class", date="2024-01-08", rrule="DTSTART:20240108T180000\nRRULE:FREQ=WEEKLY"),
               *[event(f"s{i}", date="2020-01-06", rrule=f"DTSTART:20200106T{i % 24:02d}0000\nRRULE:FREQ=DAILY;"
                       f"INTERVAL={2 + i}") for i in range(50)]]
    counted: list[str] = []
    monkeypatch.setattr("vecbook.date_ranges.series_matches", lambda rule, ranges: counted.append(rule)
                        or series_matches(rule, ranges))
    march = (vecbook.date_words.days_since_epoch(date(2024, 3, 1)), vecbook.date_words.days_since_epoch(date(2024, 4, 1)))
    assert in_span(records, [1, 0, 2], march) == {0, 2}
    assert len(counted) == 1  # the candidate's series alone, not the 50 others'
