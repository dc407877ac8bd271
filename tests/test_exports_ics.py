"""iCalendar exports: one record an event, zones resolved, rules in words, bad lines warned."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import FORMATS, detect_format, ics, load_export
from vecbook.exports.base import Export

from conftest import EXPORTS, FakeEmbedder, assert_linear, cited_lines

pytest.importorskip("icalendar", reason="icalendar is in requirements.txt; the ics reader needs it")

ICS = EXPORTS / "ics"


def collection(path: Path, name: str = "cal", fmt: str | None = None) -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path), format=fmt)


def load(path: Path, name: str = "cal") -> tuple[list[vecbook.Record], list[vecbook.records.Problem]]:
    records, problems, _ = load_export(collection(path, name))
    return records, problems


TEAM = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Hand written//VecBook tests//EN\r
X-WR-CALNAME:Team\r
BEGIN:VEVENT\r
UID:standup-1@example.com\r
SUMMARY:Weekly standup\r
DTSTART;TZID=Europe/Paris:20240506T093000\r
DTEND;TZID=Europe/Paris:20240506T094500\r
RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20240601T000000Z\r
EXDATE;TZID=Europe/Paris:20240520T093000\r
LOCATION:Room 4\\, second floor\r
ORGANIZER;CN=Cy Park:mailto:cy@example.com\r
ATTENDEE;CN="Lima, Ana";PARTSTAT=ACCEPTED:mailto:ana@example.com\r
ATTENDEE:mailto:bo@example.com\r
STATUS:CONFIRMED\r
DESCRIPTION:Round the table.\\nBlockers first\\, then plans.\r
BEGIN:VALARM\r
ACTION:DISPLAY\r
TRIGGER:-PT10M\r
DESCRIPTION:not the event's description\r
END:VALARM\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:offsite@example.com\r
SUMMARY:Offsite\r
DTSTART;VALUE=DATE:20240501\r
DTEND;VALUE=DATE:20240503\r
END:VEVENT\r
BEGIN:VTODO\r
UID:todo-1@example.com\r
SUMMARY:Book the venue\r
DUE;VALUE=DATE:20240420\r
STATUS:NEEDS-ACTION\r
END:VTODO\r
BEGIN:VJOURNAL\r
UID:journal-1@example.com\r
DTSTART;VALUE=DATE:20240502\r
SUMMARY:Offsite notes\r
DESCRIPTION:We chose the blue plan.\r
END:VJOURNAL\r
END:VCALENDAR\r
"""


def test_an_event_is_one_record_with_its_people_place_and_rule(tmp_path: Path) -> None:
    (tmp_path / "team.ics").write_text(TEAM, encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == []
    standup = records[0]
    assert standup.text == (
        "Weekly standup\n"
        "When: 2024-05-06 09:30 to 09:45 (Europe/Paris)\n"
        "Repeats weekly on Monday until 2024-06-01\n"
        "Except on: 2024-05-20 09:30 (Europe/Paris)\n"
        "Where: Room 4, second floor\n"
        "Organizer: Cy Park\n"
        "Attendees: Lima, Ana, bo@example.com\n"
        "\n"
        "Round the table.\nBlockers first, then plans.")
    assert standup.metadata == {
        "title": "Weekly standup", "date": "2024-05-06T09:30:00+02:00", "end_date": "2024-05-06T09:45:00+02:00",
        "kind": "event", "location": "Room 4, second floor", "organizer": "Cy Park",
        # The organizer takes part too (found by --participant), listed first, once; each person
        # by name and address, as mail lists them, so --participant ana@example.com finds it too.
        "participants": ["Cy Park", "cy@example.com", "Lima, Ana", "ana@example.com", "bo@example.com"],
        "emails": ["cy@example.com", "ana@example.com", "bo@example.com"],
        "conversation": "Team", "uid": "standup-1@example.com", "status": "CONFIRMED",
        "recurrence": "Repeats weekly on Monday until 2024-06-01",
        "rrule": ("DTSTART;TZID=Europe/Paris:20240506T093000\nRRULE:FREQ=WEEKLY;UNTIL=20240601T000000Z;BYDAY=MO\n"
                  "EXDATE:20240520T073000Z"), "format": "ics"}
    assert standup.citation == "cal/team.ics:5-23#standup-1@example.com"
    assert standup.id == "cal:team.ics#standup-1@example.com"
    lines = cited_lines(tmp_path, standup)
    assert lines[0] == "BEGIN:VEVENT" and lines[-1] == "END:VEVENT" and "SUMMARY:Weekly standup" in lines
    assert standup.lines_of(standup.text.index("Attendees"), len(standup.text)) == (5, 23)


def test_all_day_events_to_dos_and_journal_entries(tmp_path: Path) -> None:
    (tmp_path / "team.ics").write_text(TEAM, encoding="utf-8", newline="")
    records, _ = load(tmp_path)
    offsite, todo, journal = records[1:]
    assert offsite.text == "Offsite\nWhen: 2024-05-01 to 2024-05-02"
    assert (offsite.metadata["date"], offsite.metadata["end_date"], offsite.metadata["all_day"]) == (
        "2024-05-01", "2024-05-02", True)  # DTEND is the day after the last day
    assert todo.text == "Book the venue\nDue: 2024-04-20"
    assert (todo.metadata["kind"], todo.metadata["date"], todo.metadata["status"]) == ("to-do", "2024-04-20",
                                                                                       "NEEDS-ACTION")
    assert journal.text == "Offsite notes\nWhen: 2024-05-02\n\nWe chose the blue plan."
    assert journal.metadata["kind"] == "journal entry"
    assert [(r.line_number, r.end_line) for r in records[1:]] == [(24, 29), (30, 35), (36, 41)]


def test_a_duration_in_hours_across_a_change_of_clock_is_exact(tmp_path: Path) -> None:
    # RFC 5545: a DURATION's hours are exact, its days nominal. A night shift of ten hours begun at
    # 22:00 on the night summer time ends was said to end at 08:00 (eleven hours); a day stays a day
    (tmp_path / "d.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Night shift\r\nDTSTART;TZID=Europe/Berlin:20241026T220000\r\n"
        "DURATION:PT10H\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:d\r\nSUMMARY:Retreat\r\n"
        "DTSTART;TZID=Europe/Berlin:20241026T100000\r\nDURATION:P1DT2H\r\nEND:VEVENT\r\n"
        # 24 hours are 24 hours, not a day (the library reads PT24H as P1D): 09:00, an hour before the
        # clock's 10:00; an alarm's DURATION is its own
        "BEGIN:VEVENT\r\nUID:h\r\nSUMMARY:Fast\r\nDTSTART;TZID=Europe/Berlin:20241026T100000\r\n"
        "DURATION:PT24H\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:p\r\nSUMMARY:Visit\r\n"
        "DTSTART;TZID=Europe/Berlin:20241026T100000\r\nDURATION:P1D\r\n"
        "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT1H\r\nDURATION:PT15M\r\nREPEAT:1\r\nEND:VALARM\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    shift, retreat, fast, visit = load(tmp_path)[0]
    assert shift.metadata["end_date"] == "2024-10-27T07:00:00+01:00"
    assert "When: 2024-10-26 22:00 (Europe/Berlin) to 2024-10-27 07:00 (Europe/Berlin)" in shift.text
    assert retreat.metadata["end_date"] == "2024-10-27T12:00:00+01:00"
    assert (fast.metadata["end_date"], visit.metadata["end_date"]) == ("2024-10-27T09:00:00+01:00",
                                                                       "2024-10-27T10:00:00+01:00")


def test_a_journal_entry_of_several_descriptions_keeps_each(tmp_path: Path) -> None:
    # RFC 5545 lets a VJOURNAL hold several DESCRIPTIONs (a day's entries): the second was lost
    (tmp_path / "j.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VJOURNAL\r\nUID:j1\r\nDTSTART;VALUE=DATE:20240301\r\nSUMMARY:Diary\r\n"
        "DESCRIPTION:Morning: the ferry to Cacilhas\r\nDESCRIPTION:Evening: dinner with Ana\r\nEND:VJOURNAL\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.text == "Diary\nWhen: 2024-03-01\n\nMorning: the ferry to Cacilhas\n\nEvening: dinner with Ana"


def test_a_recurring_to_do_without_a_start_repeats_from_its_due_date(tmp_path: Path) -> None:
    # Thunderbird writes a repeating task given a due date alone with DUE and no DTSTART, and counts
    # its series from the due date: it said "Repeats yearly", and a date range found only its first
    from vecbook.recurrence import occurrence_within

    (tmp_path / "t.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:t1\r\nSUMMARY:Renew passport\r\nDUE;VALUE=DATE:20240510\r\n"
        "RRULE:FREQ=YEARLY\r\nEND:VTODO\r\nBEGIN:VTODO\r\nUID:t2\r\nSUMMARY:Pay rent\r\n"
        "DUE;TZID=Europe/Lisbon:20240131T180000\r\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1\r\nEND:VTODO\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    passport, rent = load(tmp_path)[0]
    assert passport.metadata["rrule"] == "DTSTART;VALUE=DATE:20240510\nRRULE:FREQ=YEARLY"
    assert rent.metadata["rrule"] == "DTSTART;TZID=Europe/Lisbon:20240131T180000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1"
    assert occurrence_within(rent.metadata["rrule"], (("gte", "2024-06-01"),)).isoformat() == "2024-06-30T18:00:00+01:00"


@pytest.mark.parametrize("rule, words", [
    ("FREQ=DAILY;COUNT=5", "Repeats daily 5 times"),
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE,FR", "Repeats every 2 weeks on Monday, Wednesday and Friday"),
    ("FREQ=MONTHLY;BYDAY=-1FR", "Repeats monthly on the last Friday"),
    ("FREQ=MONTHLY;BYMONTHDAY=1,15", "Repeats monthly on day 1 and 15 of the month"),
    ("FREQ=YEARLY;BYMONTH=3;BYDAY=2SU", "Repeats yearly on the second Sunday in March"),
    # Outlook writes "the second Tuesday", "the first weekday", "the last day" with BYSETPOS and
    # a negative BYMONTHDAY: they read "on Tuesday" (every one) and "on day -1"
    ("FREQ=MONTHLY;BYDAY=TU;BYSETPOS=2;COUNT=10", "Repeats monthly on the second Tuesday 10 times"),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1", "Repeats monthly on the first weekday"),
    ("FREQ=MONTHLY;BYDAY=SA,SU;BYSETPOS=-1", "Repeats monthly on the last weekend day"),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYSETPOS=-1", "Repeats monthly on the last day"),
    ("FREQ=MONTHLY;BYDAY=MO,FR;BYSETPOS=1,3", "Repeats monthly on the first and third of Monday and Friday"),
    ("FREQ=YEARLY;BYMONTH=6;BYDAY=TH;BYSETPOS=-1", "Repeats yearly on the last Thursday in June"),
    ("FREQ=MONTHLY;BYMONTHDAY=-1", "Repeats monthly on the last day of the month"),
    ("FREQ=MONTHLY;BYMONTHDAY=1,-2", "Repeats monthly on day 1 and the second to last day of the month"),
    # a rule that names no day repeats on its start's (Apple writes a weekly event so): the words said
    # "Repeats weekly", and a search for "every Monday" had no Monday to find
    ("FREQ=WEEKLY;INTERVAL=2", "Repeats every 2 weeks on Monday"),
    ("FREQ=MONTHLY;COUNT=6", "Repeats monthly on day 1 of the month 6 times"),
    ("FREQ=YEARLY", "Repeats yearly on 1 January"),
    ("RSCALE=CHINESE;FREQ=YEARLY", "Repeats yearly by the Chinese calendar"),  # (not on its start's Gregorian day)
])
def test_recurrence_rules_read_as_words(tmp_path: Path, rule: str, words: str) -> None:
    (tmp_path / "r.ics").write_text(
        f"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:r\nSUMMARY:x\nDTSTART:20240101T100000Z\nRRULE:{rule}\n"
        "END:VEVENT\nEND:VCALENDAR\n")
    (record,), _ = load(tmp_path)
    assert record.metadata["recurrence"] == words and words in record.text


def test_a_series_ends_in_words_on_its_own_clocks_day(tmp_path: Path) -> None:
    # UNTIL is in UTC: a Los Angeles series whose last day is 3 June ends at 06:59 UTC on the 4th,
    # and read "until 2024-06-04", a day late
    (tmp_path / "r.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:r\nSUMMARY:x\nDTSTART;TZID=America/Los_Angeles:20240506T170000\n"
        "RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20240604T065959Z\nEND:VEVENT\nEND:VCALENDAR\n")
    (record,), _ = load(tmp_path)
    assert record.metadata["recurrence"] == "Repeats weekly on Monday until 2024-06-03"


@pytest.mark.parametrize("zone, until, last", [
    ("X-WR-TIMEZONE:America/Los_Angeles\n", "20240510T065959Z", "2024-05-09"),  # Google, a user in Los Angeles
    ("X-WR-TIMEZONE:Europe/Berlin\n", "20240509T215959Z", "2024-05-09"),
    ("", "20240510T065959Z", "2024-05-09"),  # no calendar zone: the end of a day west of UTC
    ("", "20240509T215959Z", "2024-05-09"),
])
def test_an_all_day_series_ended_by_a_time_in_utc_ends_on_its_last_day(tmp_path: Path, zone: str, until: str,
                                                                       last: str) -> None:
    # Google ends an all-day series at the end of its last day on its user's clock, in UTC: for a
    # user west of UTC that is early on the next day, which a search by date counted as one more
    from vecbook.recurrence import series_matches

    (tmp_path / "d.ics").write_text(
        f"BEGIN:VCALENDAR\n{zone}BEGIN:VEVENT\nUID:d\nSUMMARY:Conference\nDTSTART;VALUE=DATE:20240506\n"
        f"RRULE:FREQ=DAILY;UNTIL={until}\nEND:VEVENT\nEND:VCALENDAR\n")
    (record,), _ = load(tmp_path)
    assert record.metadata["recurrence"] == f"Repeats daily until {last}"
    rule = record.metadata["rrule"]
    assert series_matches(rule, (("gte", "2024-05-09"), ("lt", "2024-05-10"))) is True
    assert series_matches(rule, (("gte", "2024-05-10"),)) is False


def test_an_event_of_several_rules_says_each_in_words(tmp_path: Path) -> None:
    # RFC 5545 lets an event have several RRULEs (old Apple and Lotus exports write them): the
    # text said Python's repr of the list, "Repeats ([vRecur({'FREQ': ['WEEKLY'], ...})])".
    (tmp_path / "r.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:r\nSUMMARY:Piano lesson\nDTSTART:20240102T170000Z\n"
        "RRULE:FREQ=WEEKLY;BYDAY=TU;UNTIL=20240331T000000Z\nRRULE:FREQ=MONTHLY;BYDAY=1SA;COUNT=12\n"
        "END:VEVENT\nEND:VCALENDAR\n")
    (record,), _ = load(tmp_path)
    words = "Repeats weekly on Tuesday until 2024-03-31; also monthly on the first Saturday 12 times"
    assert record.metadata["recurrence"] == words and words in record.text


def test_the_fixtures_load_with_zones_resolved() -> None:
    records, problems = load(ICS)
    assert problems == []
    assert len(records) == 180  # every VEVENT and VTODO of the seven files
    by_title = {r.metadata.get("title"): r for r in records}
    thunderbird = by_title["event with alarms"]  # its VTIMEZONE is Thunderbird's, its alarms are inside it
    assert thunderbird.metadata["date"] == "2024-10-23T15:00:00+01:00"
    assert thunderbird.citation == "cal/icalendar-tests_alarm_thunderbird_future.ics:603-623" \
                                   "#b9a23b47-f109-4e7a-908c-75e925b27def"
    assert cited_lines(ICS, thunderbird)[-2:] == ["END:VALARM", "END:VEVENT"]
    # no VTIMEZONE in the file, but the TZIDs are known zone names
    missing = by_title["an event with a custom tz name"]
    assert (missing.metadata["date"], missing.metadata["end_date"]) == (
        "2014-08-29T08:00:00-04:00", "2014-08-29T08:00:00-07:00")
    holiday = by_title["Orthodox Christmas"]
    assert holiday.metadata == {"title": "Orthodox Christmas", "date": "2022-01-07", "end_date": "2022-01-07",
                                "kind": "event", "all_day": True, "location": "Russia", "conversation": "Holidays",
                                "uid": "636a0cc1dbfd91667894465@icalendar", "status": "CONFIRMED",
                                "format": "ics"}
    keynote = by_title["Keynote: Van Lindberg, PSF Chair"]  # its UID is a folded line
    assert keynote.text == ("Keynote: Van Lindberg, PSF Chair\nWhen: 2015-09-18 09:30 to 10:30 (UTC)\n"
                            "Where: PythonAnywhere Room (CC1.3)")
    assert keynote.metadata["uid"] == "20160417T070217Z-1650@testing-worker-linux-docker-3ee836b9-3394-linux-5"
    assert keynote.metadata["conversation"] == "pyconuk2015_schedule"
    for record in records:
        lines = cited_lines(ICS, record)
        assert lines[0].startswith("BEGIN:V") and lines[-1].startswith("END:V"), record.citation
        title = record.metadata.get("title")
        if title and "," not in title and len(title) < 40:
            assert any(title in line for line in lines), record.citation
    assert len({r.id for r in records}) == len(records)


def test_rdate_only_events_are_dated_by_their_first_date() -> None:
    records, _ = load(ICS / "icalendar-tests_rfc_5545_RDATE_example.ics")
    assert [r.metadata.get("date") for r in records] == [
        "1997-07-14T12:30:00", "1997-07-14T12:30:00+00:00", "1997-07-14T08:30:00-04:00",
        "1996-04-03T02:00:00+00:00", "1997-01-01", "1997-01-01"]
    assert records[3].text == ("(untitled event)\nAlso on: 1996-04-03 02:00 (UTC) to 1996-04-03 04:00 (UTC), "
                               "1996-04-04 01:00 (UTC) for 3h")
    assert records[3].citation == "cal/icalendar-tests_rfc_5545_RDATE_example.ics:14-18#3"


def test_an_unknown_time_zone_is_floating_time_warned_once_per_file(tmp_path: Path) -> None:
    event = ("BEGIN:VEVENT\nUID:{0}\nSUMMARY:Call {0}\nDTSTART;TZID=Office Time:20240501T100000\n"
             "DTEND;TZID=Office Time:20240501T110000\nEND:VEVENT\n")
    (tmp_path / "office.ics").write_text(f"BEGIN:VCALENDAR\n{event.format('a')}{event.format('b')}END:VCALENDAR\n")
    records, problems = load(tmp_path)
    assert [r.metadata["date"] for r in records] == ["2024-05-01T10:00:00", "2024-05-01T10:00:00"]
    assert records[0].text == "Call a\nWhen: 2024-05-01 10:00 to 11:00"
    assert [(p.where, p.line, p.skipped) for p in problems] == [("cal/office.ics", 5, False)]
    assert "unknown time zone 'Office Time'" in problems[0].reason
    assert "read as floating local time" in problems[0].reason


def write_outlook_events(path: Path, events: list[tuple[str, str, str]]) -> None:
    """An Outlook calendar of events (uid, title, TZID) at 09:30 on 2024-07-01, with no VTIMEZONE."""
    path.write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n" + "".join(
            f"BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{title}\r\nDTSTART;TZID={zone}:20240701T093000\r\n"
            "END:VEVENT\r\n" for uid, title, zone in events) + "END:VCALENDAR\r\n", encoding="utf-8", newline="")


def test_windows_zone_names_without_a_vtimezone_are_the_zones_they_stand_for(tmp_path: Path) -> None:
    # Outlook and Exchange name zones the Windows way and may leave out their VTIMEZONE; each
    # unknown name is said once, by its name: only the first one of a file was named before
    events = [("w1", "Planung", "W. Europe Standard Time"), ("w2", "Standup", '"Pacific Standard Time"'),
              ("w3", "朝会", "Tokyo Standard Time"), ("w4", "Custom", "Customized Time Zone"),
              ("w5", "Custom again", "Customized Time Zone"), ("w6", "Other", "Customized Time Zone 1")]
    write_outlook_events(tmp_path / "o.ics", events)
    records, problems = load(tmp_path)
    assert [r.metadata["date"] for r in records] == [
        "2024-07-01T09:30:00+02:00", "2024-07-01T09:30:00-07:00", "2024-07-01T09:30:00+09:00",
        "2024-07-01T09:30:00", "2024-07-01T09:30:00", "2024-07-01T09:30:00"]
    assert records[0].text == "Planung\nWhen: 2024-07-01 09:30 (Europe/Berlin)"
    assert [p.line for p in problems] == [21, 31]
    assert [p.reason.split(": ", 1)[1] for p in problems] == [
        f"unknown time zone '{zone}' (no VTIMEZONE for it and not a known zone name): its times are read as "
        "floating local time" for zone in ("Customized Time Zone", "Customized Time Zone 1")]


def test_windows_display_names_without_a_vtimezone_are_the_zones_they_name(tmp_path: Path) -> None:
    # Outlook (and Exchange's invitations) may name a zone by its display name and leave out its
    # VTIMEZONE: each was read as floating time, with a WARN. The offset and a city it says (in
    # Windows' language: German, French), or the region Windows names, make the zone; a city
    # that keeps another clock than the name's offset is no match
    events = [("d1", "Planung", "(UTC+01:00) Amsterdam, Berlin, Bern, Rom, Stockholm, Wien"),
              ("d2", "Sync", '"(UTC-08:00) Pacific Time (US & Canada)"'),
              ("d3", "Réunion", "(UTC+01:00) Bruxelles, Copenhague, Madrid, Paris"),
              ("d4", "会議", "(UTC+09:00) Osaka, Sapporo, Tokyo"), ("d5", "XP", "(GMT-05:00) Eastern Time (US & Canada)"),
              ("d6", "Wrong", "(UTC+05:00) Paris")]
    write_outlook_events(tmp_path / "o.ics", events)
    records, problems = load(tmp_path)
    assert [r.metadata["date"] for r in records] == [
        "2024-07-01T09:30:00+02:00", "2024-07-01T09:30:00-07:00", "2024-07-01T09:30:00+02:00",
        "2024-07-01T09:30:00+09:00", "2024-07-01T09:30:00-04:00", "2024-07-01T09:30:00"]
    assert records[0].text == "Planung\nWhen: 2024-07-01 09:30 (Europe/Amsterdam)"
    assert records[1].text == "Sync\nWhen: 2024-07-01 09:30 (America/Los_Angeles)"
    assert [p.line for p in problems] == [31] and "unknown time zone '(UTC+05:00) Paris'" in problems[0].reason


def test_a_zone_is_shown_by_its_current_iana_name(tmp_path: Path) -> None:
    # a display name's first city may name an old alias (Chongqing: Asia/Chongqing, which tz keeps
    # only as another name of Asia/Shanghai), and the Windows names stand for CLDR's ids, several
    # of them old names (India Standard Time: Asia/Calcutta, FLE Standard Time: Europe/Kiev): the
    # zone is shown, and a series kept, by the name tz gives it now
    events = [("c1", "Beijing call", '"(UTC+08:00) Beijing, Chongqing, Hong Kong, Urumqi"'),
              ("c2", "Mumbai call", "India Standard Time"), ("c3", "Kyiv call", "FLE Standard Time"),
              ("c4", "Sydney call", "(UTC+10:00) Canberra, Melbourne, Sydney"),
              ("c5", "Amsterdam call", "Europe/Amsterdam")]  # (a current name, whatever tz links it to)
    write_outlook_events(tmp_path / "o.ics", events)
    (tmp_path / "o.ics").write_text((tmp_path / "o.ics").read_text().replace(
        "DTSTART;TZID=India Standard Time:20240701T093000", "DTSTART;TZID=India Standard Time:20240701T093000\r\n"
        "RRULE:FREQ=WEEKLY"), encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.text.splitlines()[1].split("(")[-1] for r in records] == [
        "Asia/Shanghai)", "Asia/Kolkata)", "Europe/Kyiv)", "Australia/Sydney)", "Europe/Amsterdam)"]
    assert records[1].metadata["rrule"] == "DTSTART;TZID=Asia/Kolkata:20240701T093000\nRRULE:FREQ=WEEKLY"


def test_a_bad_line_is_warned_and_the_rest_of_the_event_and_file_load(tmp_path: Path) -> None:
    (tmp_path / "bad.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nSUMMARY:Broken date\nDTSTART:2024garbage\nthis line is junk\n"
        "END:VEVENT\nBEGIN:VEVENT\nUID:b\nSUMMARY:Fine\nDTSTART:20240503T100000Z\nEND:VEVENT\nEND:VCALENDAR\n")
    records, problems = load(tmp_path)
    assert [(r.text, r.citation) for r in records] == [
        ("Broken date", "cal/bad.ics:2-7#a"), ("Fine\nWhen: 2024-05-03 10:00 (UTC)", "cal/bad.ics:8-12#b")]
    assert [(p.line, p.skipped) for p in problems] == [(5, False), (6, False)]
    assert "VEVENT line not read (Expected datetime, date, or time. Got: '2024garbage')" in problems[0].reason
    assert "this line is junk" in problems[1].reason and "the rest of it is kept" in problems[1].reason


def test_a_broken_date_or_rule_loses_its_line_not_the_file(tmp_path: Path) -> None:
    # icalendar 7 keeps a property it cannot read as a value that raises wherever it is used:
    # one bad RDATE, RRULE, DTEND or RECURRENCE-ID skipped the whole calendar file
    events = [("a", "Broken RDATE", "RDATE:1997010199"), ("b", "Broken RRULE", "RRULE:FREQ=WEEKL"),
              ("c", "Broken DTEND", "DTEND:2022010"), ("d", "Broken RECURRENCE-ID", "RECURRENCE-ID:2024010"),
              ("e", "Broken EXDATE", "EXDATE:2024-01-08"), ("f", "Fine", "DTEND:20240101T110000Z")]
    (tmp_path / "b.ics").write_text("BEGIN:VCALENDAR\r\n" + "".join(
        f"BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{title}\r\nDTSTART:20240101T100000Z\r\n"
        + ("" if line.startswith("RRULE") else "RRULE:FREQ=DAILY\r\n") + f"{line}\r\nEND:VEVENT\r\n"
        for uid, title, line in events) + "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert [r.metadata["title"] for r in records] == [title for _, title, _ in events]
    assert all("rrule" in r.metadata for r in records if r.metadata["title"] != "Broken RRULE")
    assert [(p.line, p.skipped) for p in problems] == [(7, False), (13, False), (20, False), (27, False),
                                                       (34, False)]
    assert all("line not read" in p.reason and "the rest of it is kept" in p.reason for p in problems)


def test_a_missing_end_or_a_truncated_file_still_yields_its_events(tmp_path: Path) -> None:
    (tmp_path / "cut.ics").write_text(
        "BEGIN:VCALENDAR\nX-WR-CALNAME:Trips\nBEGIN:VEVENT\nUID:a\nSUMMARY:No end line\n"
        "BEGIN:VEVENT\nUID:b\nSUMMARY:Whole\nEND:VEVENT\nBEGIN:VEVENT\nUID:c\nSUMMARY:Cut short\n")
    records, problems = load(tmp_path)
    assert [(r.text, r.line_number, r.end_line, r.metadata["conversation"]) for r in records] == [
        ("No end line", 3, 5, "Trips"), ("Whole", 6, 9, "Trips"), ("Cut short", 10, 12, "Trips")]
    assert len(problems) == 1 and problems[0].line == 3
    assert "BEGIN:VEVENT without its END; the file's events are read one by one" in problems[0].reason


def test_a_file_cut_short_after_an_event_says_so(tmp_path: Path) -> None:
    # a download or copy that stopped between two events: every event is whole, END:VCALENDAR is not
    (tmp_path / "cut.ics").write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a\r\nSUMMARY:First\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:b\r\nSUMMARY:Second\r\nEND:VEVENT\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["First", "Second"]
    assert len(problems) == 1 and problems[0].line == 10
    assert problems[0].reason.endswith("the file ends without END:VCALENDAR, cut short (a download, copy or export "
                                       "that did not finish: get it again); the file's events are read one by one")


def test_a_second_calendar_cut_short_says_so(tmp_path: Path) -> None:
    # several calendars in one file (an export of each appended, or a merge tool's): the last one's
    # end cut off, or a middle one's missing, was a WARN of "components the parser did not return",
    # with no line; the first calendar's END:VCALENDAR hid that the file was cut short
    one = "BEGIN:VCALENDAR\r\nX-WR-CALNAME:Casa\r\nBEGIN:VEVENT\r\nUID:a\r\nSUMMARY:Cena\r\nEND:VEVENT\r\n"
    two = "BEGIN:VCALENDAR\r\nX-WR-CALNAME:仕事\r\nBEGIN:VEVENT\r\nUID:b\r\nSUMMARY:会議\r\nEND:VEVENT\r\n"
    end = "END:VCALENDAR\r\n"
    (tmp_path / "cut.ics").write_text(one + end + two, encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert [(r.text, r.metadata["conversation"], r.line_number) for r in records] == [
        ("Cena", "Casa", 3), ("会議", "仕事", 10)]
    assert [(p.where, p.line) for p in problems] == [("cal/cut.ics", 13)]
    assert problems[0].reason.endswith("the file ends without END:VCALENDAR, cut short (a download, copy or "
                                       "export that did not finish: get it again); the file's events are read "
                                       "one by one")
    (tmp_path / "cut.ics").write_text(one + two + end, encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert [(r.text, r.metadata["conversation"]) for r in records] == [("Cena", "Casa"), ("会議", "仕事")]
    assert [(p.where, p.line) for p in problems] == [("cal/cut.ics", 7)]
    assert problems[0].reason.endswith("BEGIN:VCALENDAR of line 1 without its END:VCALENDAR before the next "
                                       "BEGIN:VCALENDAR; the file's events are read one by one")


def test_an_old_thunderbird_zone_name_reads_quietly(tmp_path: Path) -> None:
    # Lightning wrote TZID=/mozilla.org/20070129_1/Europe/Berlin (and no VTIMEZONE, at times):
    # the zone is the one it names, without the library's warning on the user's terminal
    import warnings

    (tmp_path / "tb.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:m1\r\nSUMMARY:Chorprobe\r\n"
        "DTSTART;TZID=/mozilla.org/20070129_1/Europe/Berlin:20090601T193000\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (record,), problems = load(tmp_path)
    assert problems == [] and record.metadata["date"] == "2009-06-01T19:30:00+02:00"
    assert [str(w.message) for w in caught] == []


def test_a_thunderbird_series_keeps_the_clock_of_the_zone_its_old_name_names(tmp_path: Path) -> None:
    # Thunderbird writes the zone's VTIMEZONE beside the old name: the series was counted on a fixed
    # +01:00 (Etc/GMT-1), so after the change to summer time each rehearsal was put an hour late.
    from vecbook.filters import FilterColumns, convenience_conditions

    zone = "/mozilla.org/20070129_1/Europe/Berlin"
    (tmp_path / "tb.ics").write_text(
        f"BEGIN:VCALENDAR\r\nBEGIN:VTIMEZONE\r\nTZID:{zone}\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\n"
        "TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r\nEND:STANDARD\r\n"
        "BEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\n"
        "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
        f"BEGIN:VEVENT\r\nUID:c1\r\nSUMMARY:Chorprobe\r\nDTSTART;TZID={zone}:20240305T180000\r\n"
        f"DTEND;TZID={zone}:20240305T193000\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == [] and record.metadata["rrule"].startswith("DTSTART;TZID=Europe/Berlin:20240305T180000")
    in_april = convenience_conditions(since="2024-04-09T18:00+02:00", until="2024-04-09T18:10+02:00")
    assert FilterColumns([record]).mask(in_april).tolist() == [True]


def test_a_junk_line_outside_the_events_falls_back_to_one_by_one(tmp_path: Path) -> None:
    (tmp_path / "j.ics").write_text("BEGIN:VCALENDAR\nnot a content line\nBEGIN:VEVENT\nUID:a\nSUMMARY:Kept\n"
                                    "END:VEVENT\nEND:VCALENDAR\n")
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Kept"]
    assert problems[0].line == 2 and "cannot be parsed whole" in problems[0].reason


def test_ids_are_stable_and_a_changed_occurrence_has_its_own(tmp_path: Path) -> None:
    (tmp_path / "m.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:s\nSUMMARY:Series\nDTSTART:20240101T100000Z\nRRULE:FREQ=DAILY\n"
        "END:VEVENT\nBEGIN:VEVENT\nUID:s\nRECURRENCE-ID:20240103T100000Z\nSUMMARY:Moved\n"
        "DTSTART:20240103T120000Z\nEND:VEVENT\nEND:VCALENDAR\n")
    records, _ = load(tmp_path)
    assert [r.id for r in records] == ["cal:m.ics#s", "cal:m.ics#s@2024-01-03T10:00:00+00:00"]
    assert "Changes the occurrence of 2024-01-03 10:00 (UTC)" in records[1].text
    assert [r.id for r in load(tmp_path)[0]] == [r.id for r in records]


def test_without_icalendar_the_calendar_files_are_a_warning(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    (tmp_path / "team.ics").write_text(TEAM)
    monkeypatch.setitem(sys.modules, "icalendar", None)  # import fails as if not installed
    records, problems = load(tmp_path)
    assert records == [] and 'pip install "icalendar>=6"' in problems[0].reason


def test_detection_knows_calendars_and_nothing_else() -> None:
    assert detect_format(collection(ICS)) == "ics"
    assert detect_format(collection(ICS / "pyconuk2015_schedule.ics")) == "ics"
    for other in sorted(p for p in EXPORTS.iterdir() if p.is_dir() and p.name != "ics"):
        export = Export("x", other, str(other))
        assert not ics.detect(export), other  # no double match with another format's export
    assert "ics" in FORMATS


def test_calendar_events_are_filtered_by_metadata(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("unrelated note\n")
    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / "team.ics").write_text(TEAM, encoding="utf-8", newline="")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "cal"\npath = "{tmp_path / "cal"}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("standup blockers", mode="keyword", filters={"participants__contains": "bo@example.com"})
    assert [h.metadata["title"] for h in hits] == ["Weekly standup"]
    # an attendee with a name (CN) is found by their address too, as in mail
    hits = book.search("standup blockers", mode="keyword", filters={"participants__contains": "ana@example.com"})
    assert [h.metadata["title"] for h in hits] == ["Weekly standup"]
    hits = book.search("offsite", mode="keyword", filters={"date__gte": "2024-05-02", "conversation": "Team"})
    assert [h.metadata["title"] for h in hits] == ["Offsite notes"]  # date__gte: the start, as written
    # --since/--until find the two-day offsite on its second day too: its span covers the day
    hits = book.search("offsite", mode="keyword", since="2024-05-02", until="2024-05-02")
    assert sorted(h.metadata["title"] for h in hits) == ["Offsite", "Offsite notes"]
    assert book.stats()["collections"]["cal"]["format"] == "ics"


def test_odd_but_seen_shapes_do_not_break_an_event(tmp_path: Path) -> None:
    (tmp_path / "odd.ics").write_bytes(
        "\ufeffBEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Day start\\, timed end\r\n"
        "DTSTART;VALUE=DATE:20240501\r\nDTEND:20240501T170000Z\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Same UID again\r\nDTSTART:20240502T090000Z\r\nDURATION:PT45M\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n".encode("utf-8"))
    records, problems = load(tmp_path)
    assert problems == []
    assert records[0].text == "Day start, timed end\nWhen: 2024-05-01 to 2024-05-01 17:00 (UTC)"
    assert records[1].metadata["end_date"] == "2024-05-02T09:45:00+00:00"
    assert [r.id for r in records] == ["cal:odd.ics#x", "cal:odd.ics#x~2"]


def test_a_date_with_a_zone_is_still_a_day(tmp_path: Path) -> None:
    # some calendar writers (spatie/icalendar-generator, behind many sites' feeds) put a TZID on an
    # all-day date: DTSTART;TZID=Europe/Berlin;VALUE=DATE:20240901 read as a time, midnight in Berlin
    (tmp_path / "d.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:d1\r\nSUMMARY:Sommerfest\r\n"
        "DTSTART;TZID=Europe/Berlin;VALUE=DATE:20240901\r\nDTEND;TZID=Europe/Berlin;VALUE=DATE:20240903\r\n"
        "RRULE:FREQ=YEARLY\r\nEXDATE;TZID=Europe/Berlin;VALUE=DATE:20250901\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.text == "Sommerfest\nWhen: 2024-09-01 to 2024-09-02\nRepeats yearly on 1 September\nExcept on: 2025-09-01"
    assert (record.metadata["date"], record.metadata["end_date"], record.metadata["all_day"]) == (
        "2024-09-01", "2024-09-02", True)
    assert record.metadata["rrule"] == "DTSTART;VALUE=DATE:20240901\nRRULE:FREQ=YEARLY\nEXDATE;VALUE=DATE:20250901"


@pytest.mark.parametrize("encode", [
    lambda text: text.encode("utf-16"),  # Windows PowerShell's Out-File and > write UTF-16, with its mark
    lambda text: text.replace("\r\n", "\r").encode("utf-8"),  # classic Mac OS's bare CR line ends
], ids=["utf-16", "bare-cr"])
def test_a_calendar_in_utf16_or_with_bare_cr_line_ends_reads_as_in_utf8(tmp_path: Path, encode) -> None:
    # each was "no format recognises it" (UTF-16) or "nothing read" (bare CR: one long line)
    (tmp_path / "cal.ics").write_bytes(encode(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Réunion à Genève 🇨🇭\r\nDTSTART:20240101T100000Z\r\n"
        "END:VEVENT\r\nBEGIN:VEVENT\r\nUID:y\r\nSUMMARY:Zweite Sitzung\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
    assert detect_format(collection(tmp_path)) == "ics"
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.text, r.line_number, r.end_line) for r in records] == [
        ("Réunion à Genève 🇨🇭\nWhen: 2024-01-01 10:00 (UTC)", 2, 6), ("Zweite Sitzung", 7, 10)]


def test_a_calendar_not_in_utf8_says_where_its_letters_were_lost(tmp_path: Path) -> None:
    # an old export in Windows-1252: its accents became U+FFFD without a word
    (tmp_path / "cal.ics").write_bytes(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Réunion à Genève\r\nLOCATION:Salle Léman\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n".encode("cp1252"))
    (record,), problems = load(tmp_path)
    assert record.text.startswith("R\ufffdunion")
    assert [(p.where, p.line, p.skipped) for p in problems] == [("cal/cal.ics", 4, False)]
    assert problems[0].reason.endswith("bytes that are not UTF-8 were replaced by U+FFFD (on 2 lines, the first "
                                       "here); save the calendar as UTF-8 to keep its letters")


def test_an_outlook_all_day_event_written_as_midnights_is_a_day(tmp_path: Path) -> None:
    # Outlook and Exchange may write an all-day event as midnight to midnight in the organizer's zone,
    # flagged X-MICROSOFT-CDO-ALLDAYEVENT:TRUE: it read as a timed event of 48 hours
    (tmp_path / "o.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n"
        "BEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Weihnachten\r\nDTSTART;TZID=W. Europe Standard Time:20261225T000000\r\n"
        "DTEND;TZID=W. Europe Standard Time:20261227T000000\r\nX-MICROSOFT-CDO-ALLDAYEVENT:TRUE\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:y\r\nSUMMARY:Ferien\r\nDTSTART:20260706T000000Z\r\nRRULE:FREQ=YEARLY\r\n"
        "EXDATE:20270706T000000Z\r\nX-MICROSOFT-MSNCALENDAR-ALLDAYEVENT:TRUE\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:z\r\nSUMMARY:Kein Tag\r\nDTSTART;TZID=W. Europe Standard Time:20261228T000000\r\n"
        "DTEND;TZID=W. Europe Standard Time:20261228T100000\r\nX-MICROSOFT-CDO-ALLDAYEVENT:TRUE\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    christmas, holidays, timed = load(tmp_path)[0]
    assert christmas.text == "Weihnachten\nWhen: 2026-12-25 to 2026-12-26"
    assert (christmas.metadata["date"], christmas.metadata["end_date"], christmas.metadata["all_day"]) == (
        "2026-12-25", "2026-12-26", True)
    assert holidays.metadata["rrule"] == "DTSTART;VALUE=DATE:20260706\nRRULE:FREQ=YEARLY\nEXDATE;VALUE=DATE:20270706"
    assert timed.metadata["date"] == "2026-12-28T00:00:00+01:00"  # (ends at 10:00: a timed event after all)


def test_a_line_folded_inside_a_character_reads_back_whole(tmp_path: Path) -> None:
    # RFC 5545 folds by octets: some writers cut a character's UTF-8 bytes across the fold
    path = tmp_path / "fold.ics"
    path.write_bytes(b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//y//EN\r\nBEGIN:VEVENT\r\nUID:f1@example.com\r\n"
                     b"DTSTART:20240611T080000Z\r\nSUMMARY:Gr\xc3\r\n \xb6\xc3\x9fenplanung Stra\xc3\x9f\r\n \xc3\xa9e\r\n"
                     b"END:VEVENT\r\nEND:VCALENDAR\r\n")
    (record,), problems = load(path)
    assert problems == [] and record.text.splitlines()[0] == "Größenplanung Straßée"
    assert (record.line_number, record.end_line) == (4, 10)


BROKEN_FOLDS = ("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:20240401T100000Z\r\nSUMMARY:Board meeting\r\n"
                "DESCRIPTION:Agenda for the quarterly board meeting with the finance te\r\nam and the auditors\\, "
                "join at \r\nhttps://teams.example.com/l/meetup-join/19%3ameeting\r\nATTENDEE;CN=Ana Lima;ROLE=REQ-\r\n"
                "PARTICIPANT;RSVP=TRUE:mailto:ana@example.com\r\nORGANIZER;CN=Bo Berg:\r\nmailto:bo@example.com\r\n"
                "END:VEVENT\r\nEND:VCALENDAR\r\n")


def test_a_fold_a_mail_client_broke_reads_back_whole(tmp_path: Path) -> None:
    # a calendar sent by mail may come back with its folds' leading spaces taken off (or its long
    # lines wrapped): the line after was not a content line, a WARN, and its text lost
    (tmp_path / "b.ics").write_text(BROKEN_FOLDS, encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.text == ("Board meeting\nWhen: 2024-04-01 10:00 (UTC)\nOrganizer: Bo Berg\nAttendees: Ana Lima\n\n"
                           "Agenda for the quarterly board meeting with the finance team and the auditors, join at "
                           "https://teams.example.com/l/meetup-join/19%3ameeting")
    assert record.metadata["emails"] == ["bo@example.com", "ana@example.com"]  # (each line of a person's too)
    assert (record.line_number, record.end_line) == (2, 13)
    assert "the finance team and the auditors" in ics.invitation_text(BROKEN_FOLDS)
    # a person's line without a value at all (a writer's fault) never takes the component's END with it
    from vecbook.exports.ics_lines import mended_folds

    assert mended_folds("BEGIN:VEVENT\r\nATTENDEE;CN=Ana\r\nEND:VEVENT\r\n") == "BEGIN:VEVENT\r\nATTENDEE;CN=Ana\r\nEND:VEVENT\r\n"


def test_a_description_written_in_html_reads_as_text(tmp_path: Path) -> None:
    # Google Calendar keeps a description formatted in its editor as HTML, and exports it so
    path = tmp_path / "g.ics"
    path.write_bytes(b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:g1@google.com\r\n"
                     b"DTSTART:20240710T160000Z\r\nSUMMARY:Planning\r\nDESCRIPTION:<b>Agenda</b><br><ul><li>Review th"
                     b"e&nbsp;gecko plan</li><li>Budget</li></ul>Join: <a href=\"https://meet.google.com/abc\">meet.goog\r\n"
                     b" le.com/abc</a>\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:p1\r\nDTSTART:20240711T160000Z\r\n"
                     b"SUMMARY:Plain\r\nDESCRIPTION:Mail <ana@example.com> if 2 < 3 and x>y\r\nEND:VEVENT\r\n"
                     b"END:VCALENDAR\r\n")
    (html, plain), problems = load(path)
    assert problems == []
    assert html.text == ("Planning\nWhen: 2024-07-10 16:00 (UTC)\n\n"
                         "Agenda\n\n- Review the gecko plan\n- Budget\n\nJoin: meet.google.com/abc")
    assert plain.text.endswith("\n\nMail <ana@example.com> if 2 < 3 and x>y")  # no markup: kept as written


def test_a_description_written_only_for_outlook_is_read(tmp_path: Path) -> None:
    # web sites' "add to calendar" files and some exporters write the description as Outlook's HTML
    # alone (X-ALT-DESC;FMTTYPE=text/html, no DESCRIPTION): the event was its summary and time alone
    (tmp_path / "t.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:t1\r\nDTSTART:20240710T180000Z\r\nSUMMARY:Concert\r\n"
        "X-ALT-DESC;FMTTYPE=text/html:<html><body><p>Bring your <b>e-ticket</b> and ID</p></body></html>\r\n"
        "END:VEVENT\r\nBEGIN:VEVENT\r\nUID:t2\r\nDTSTART:20240711T180000Z\r\nSUMMARY:Both\r\n"
        "DESCRIPTION:Plain words\r\nX-ALT-DESC;FMTTYPE=text/html:<p>Plain words</p>\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    (alone, both), problems = load(tmp_path)
    assert problems == []
    assert alone.text == "Concert\nWhen: 2024-07-10 18:00 (UTC)\n\nBring your e-ticket and ID"
    assert both.text == "Both\nWhen: 2024-07-11 18:00 (UTC)\n\nPlain words"  # (the plain one, once)


SERIES = """BEGIN:VCALENDAR\r
X-WR-CALNAME:Family\r
BEGIN:VEVENT\r
UID:birthday@example.com\r
SUMMARY:Ana's birthday\r
DTSTART;VALUE=DATE:19900612\r
DTEND;VALUE=DATE:19900613\r
RRULE:FREQ=YEARLY\r
EXDATE;VALUE=DATE:20230612\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:lessons@example.com\r
SUMMARY:Piano lessons\r
DTSTART;TZID=Europe/Berlin:20240105T170000\r
RRULE:FREQ=WEEKLY;UNTIL=20240301T235959Z\r
RDATE;TZID=Europe/Berlin:20240420T170000\r
END:VEVENT\r
END:VCALENDAR\r
"""


# (since, until, the series found): a series is in a range when one of its occurrences is.
OCCURRENCES = [
    ("2024-01-01", None, ["Ana's birthday", "Piano lessons"]),  # a yearly series begun in 1990
    ("2024-06-01", "2024-06-30", ["Ana's birthday"]),  # an occurrence inside the range
    ("2024-07-01", "2024-12-31", []),  # the series spans the range, no occurrence falls in it
    ("2023-06-01", "2023-06-30", []),  # EXDATE: not that year
    ("2024-03-02", "2024-04-19", []),  # after UNTIL, before the RDATE
    ("2024-04-20", "2024-04-20", ["Piano lessons"]),  # the RDATE
    ("2024-02-23", "2024-02-23", ["Piano lessons"]),  # a Friday of the weekly rule
    (None, "1989-12-31", []),
]


def test_a_recurring_event_is_dated_by_each_occurrence(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / "family.ics").write_text(SERIES, encoding="utf-8", newline="")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "cal"\npath = "{tmp_path / "cal"}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    for since, until, found in OCCURRENCES:
        hits = book.search("birthday lessons", mode="keyword", since=since, until=until)
        assert sorted(h.metadata["title"] for h in hits) == found, (since, until)
    # A hit says which occurrence put it in the range (the first there): an assistant that reads
    # "date": "1990-06-12" alone would answer with 1990.
    occurrences = {(since, until): {h.metadata["title"]: h.metadata["occurrence"] for h in book.search(
        "birthday lessons", mode="keyword", since=since, until=until)} for since, until in [
        ("2024-06-01", "2024-06-30"), ("2024-02-23", "2024-02-23"), ("2024-04-20", None)]}
    assert occurrences == {("2024-06-01", "2024-06-30"): {"Ana's birthday": "2024-06-12"},
                           ("2024-02-23", "2024-02-23"): {"Piano lessons": "2024-02-23T17:00:00+01:00"},
                           ("2024-04-20", None): {"Ana's birthday": "2024-06-12",
                                                  "Piano lessons": "2024-04-20T17:00:00+02:00"}}
    assert all("occurrence" not in h.metadata for h in book.search("birthday lessons", mode="keyword"))
    # it follows the date, so the one line of metadata the command line prints, cut to the terminal's
    # width, says it: it came last, after the rule, and was cut off, the series' first date shown alone
    from vecbook.hit_lines import metadata_line

    birthday, = book.search("birthday", mode="keyword", since="2024-06-01", until="2024-06-30")
    assert list(birthday.metadata)[:3] == ["title", "date", "occurrence"]
    assert "date: 1990-06-12, occurrence: 2024-06-12, " in metadata_line(birthday.metadata)
    # The record still carries its first date; the series is said in iCalendar's own words.
    birthday = next(r for r in load(tmp_path / "cal")[0] if r.metadata["title"] == "Ana's birthday")
    assert birthday.metadata["date"] == "1990-06-12"
    assert birthday.metadata["rrule"] == ("DTSTART;VALUE=DATE:19900612\nRRULE:FREQ=YEARLY\n"
                                          "EXDATE;VALUE=DATE:20230612")


def test_a_recurring_event_is_in_a_range_its_occurrence_lasts_into(tmp_path: Path) -> None:
    # A weekly late show (Saturday 23:00 to Sunday 01:00 UTC) and a yearly three-day festival were
    # missed by --since/--until on the Sunday, or the festival's second day, as a single such
    # event is found: only each occurrence's start was looked at.
    (tmp_path / "notes").mkdir()
    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / "fun.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:show\r\nSUMMARY:Late show\r\nDTSTART:20250301T230000Z\r\n"
        "DTEND:20250302T010000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:fest\r\nSUMMARY:Festa do Avante show\r\nDTSTART;VALUE=DATE:20200801\r\n"
        "DTEND;VALUE=DATE:20200804\r\nRRULE:FREQ=YEARLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "cal"\npath = "{tmp_path / "cal"}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())

    def found(since: str, until: str) -> dict[str, str]:
        return {h.metadata["title"]: h.metadata["occurrence"]
                for h in book.search("show", mode="keyword", since=since, until=until)}

    assert found("2025-04-13", "2025-04-13") == {"Late show": "2025-04-12T23:00:00+00:00"}
    assert found("2025-04-13T00:30:00+00:00", "2025-04-13T00:45:00+00:00") == {"Late show": "2025-04-12T23:00:00+00:00"}
    assert found("2025-04-13T01:30:00+00:00", "2025-04-13T02:00:00+00:00") == {}  # over by then
    assert found("2024-08-03", "2024-08-03") == {"Festa do Avante show": "2024-08-01"}
    assert found("2024-08-04", "2024-08-05") == {}


def test_two_series_of_one_start_and_rule_each_last_their_own_length(tmp_path: Path) -> None:
    # A 15-minute standup and a three-hour focus block, both weekly from Monday 09:00: a series'
    # length was read from the first record of its rule, so the block looked 15 minutes long.
    from vecbook.filters import FilterColumns, convenience_conditions

    (tmp_path / "a.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup\r\nDTSTART:20250303T090000Z\r\n"
        "DTEND:20250303T091500Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:f\r\nSUMMARY:Focus block\r\nDTSTART:20250303T090000Z\r\n"
        "DTEND:20250303T120000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == [] and records[0].metadata["rrule"] == records[1].metadata["rrule"]
    at_eleven = convenience_conditions(since="2025-04-14T11:00:00+00:00", until="2025-04-14T11:30:00+00:00")
    assert FilterColumns(records).mask(at_eleven).tolist() == [False, True]


def test_an_endless_series_is_counted_out_only_so_far() -> None:
    from vecbook.recurrence import MAX_OCCURRENCES, series_matches

    every_minute = "DTSTART:19900101T000000Z\nRRULE:FREQ=MINUTELY"
    assert series_matches(every_minute, (("gte", "1990-01-02"), ("lt", "1990-01-03"))) is True
    assert series_matches(every_minute, (("gte", "2024-01-01"),)) is True  # counted from near 2024
    # a COUNT counts from the first occurrence: 2024 lies 17 million on, not counted out (and quick)
    assert MAX_OCCURRENCES <= 10_000
    assert series_matches(every_minute + ";COUNT=20000000", (("gte", "2024-01-01"),)) is False
    # UNTIL in UTC with a floating start (dateutil refuses the pair) is read without zones
    assert series_matches("DTSTART:20240101T090000\nRRULE:FREQ=DAILY;UNTIL=20240105T000000Z",
                          (("gte", "2024-01-04"), ("lt", "2024-01-05"))) is True
    assert series_matches("DTSTART:20240101T090000\nRRULE:FREQ=SOMETIMES", (("gte", "2024-01-04"),)) is None
    # INTERVAL=0 (a broken file's) never moves on: dateutil would count it out forever
    assert series_matches("DTSTART:20240101T090000\nRRULE:FREQ=WEEKLY;INTERVAL=0",
                          (("gte", "2024-01-04"), ("lt", "2024-01-05"))) is None
    # a day no month named has (February 30th) never comes: dateutil would look for it day by day
    # to the year 9999, seconds of every dated search; the record's own date decides instead
    started = time.perf_counter()
    for rule in ("RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "RRULE:FREQ=YEARLY;BYMONTH=4,6;BYMONTHDAY=31"):
        assert series_matches(f"DTSTART:20200101T090000\n{rule}", (("gte", "2024-03-01"),)) is None
    assert time.perf_counter() - started < 0.5
    assert series_matches("DTSTART:20200101T090000\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
                          (("gte", "2024-01-01"), ("lt", "2024-12-31"))) is True  # a leap day comes
    assert series_matches("DTSTART:20200131T090000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1",
                          (("gte", "2024-02-01"), ("lt", "2024-03-01"))) is True  # the last day, counted back


def test_a_long_calendar_name_folded_over_lines_is_whole(tmp_path: Path) -> None:
    # a calendar name of some 25 Japanese characters passes 75 octets and is folded: the
    # conversation was cut at the fold, "プロジェクト管理チームの共有カレンダー（20"
    name = "プロジェクト管理チームの共有カレンダー（2024年度）"
    (tmp_path / "j.ics").write_text(
        "BEGIN:VCALENDAR\r\nX-WR-CALNAME:プロジェクト管理チームの共有カレンダー（20\r\n 24年度）\r\n"
        "BEGIN:VEVENT\r\nUID:j1\r\nSUMMARY:定例\r\nDTSTART:20240105T010000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.metadata["conversation"] == name
    assert (record.line_number, record.end_line) == (4, 8)


def test_a_calendar_zone_places_its_floating_times(tmp_path: Path) -> None:
    # Google and Apple name the calendar's zone in X-WR-TIMEZONE and may write times without
    # TZID or Z: those are in that zone. A TZID and an all-day date keep their own meaning;
    # a second calendar in the file has its own zone, or none.
    (tmp_path / "g.ics").write_text(
        "BEGIN:VCALENDAR\r\nX-WR-CALNAME:Casa\r\nX-WR-TIMEZONE:America/Sao_Paulo\r\n"
        "BEGIN:VEVENT\r\nUID:a\r\nSUMMARY:Almoço\r\nDTSTART:20240705T120000\r\nDTEND:20240705T133000\r\n"
        "RRULE:FREQ=WEEKLY;COUNT=2\r\nEXDATE:20240712T120000\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:b\r\nSUMMARY:Call\r\nDTSTART;TZID=Europe/Lisbon:20240705T090000\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:c\r\nSUMMARY:UTC\r\nDTSTART:20240705T090000Z\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:d\r\nSUMMARY:Feriado\r\nDTSTART;VALUE=DATE:20240709\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n"
        "BEGIN:VCALENDAR\r\nX-WR-CALNAME:Other\r\n"
        "BEGIN:VEVENT\r\nUID:e\r\nSUMMARY:Floating\r\nDTSTART:20240705T120000\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n"
        "BEGIN:VCALENDAR\r\nX-WR-TIMEZONE:Mars/Olympus\r\n"
        "BEGIN:VEVENT\r\nUID:f\r\nSUMMARY:Nowhere\r\nDTSTART:20240705T120000\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    dates = {r.metadata["title"]: (r.metadata["date"], r.metadata.get("end_date")) for r in records}
    assert dates == {
        "Almoço": ("2024-07-05T12:00:00-03:00", "2024-07-05T13:30:00-03:00"),
        # Google writes a single event's times in UTC: they read in the calendar's zone, the same instant
        "Call": ("2024-07-05T09:00:00+01:00", None), "UTC": ("2024-07-05T06:00:00-03:00", None),
        "Feriado": ("2024-07-09", None), "Floating": ("2024-07-05T12:00:00", None),
        "Nowhere": ("2024-07-05T12:00:00", None)}
    assert records[0].text.splitlines()[1] == "When: 2024-07-05 12:00 to 13:30 (America/Sao_Paulo)"
    assert records[2].text.splitlines()[1] == "When: 2024-07-05 06:00 (America/Sao_Paulo)"
    assert records[0].metadata["rrule"] == ("DTSTART;TZID=America/Sao_Paulo:20240705T120000\n"
                                            "RRULE:FREQ=WEEKLY;COUNT=2\nEXDATE:20240712T150000Z")
    assert [(p.line, p.reason) for p in problems] == [
        (37, "collection 'cal': unknown time zone 'Mars/Olympus' in X-WR-TIMEZONE: the calendar's times without a zone are "
             "read as floating local time")]


def test_a_series_written_in_utc_keeps_utcs_clock_in_a_zoned_calendar(tmp_path: Path) -> None:
    # a series whose DTSTART is in UTC repeats at that UTC time all year (RFC 5545): read in the
    # calendar's zone for its text, it was counted on that zone's clock, an hour early all summer
    from vecbook.recurrence import occurrence_within

    (tmp_path / "u.ics").write_text(
        "BEGIN:VCALENDAR\r\nX-WR-TIMEZONE:Europe/Berlin\r\nBEGIN:VEVENT\r\nUID:u\r\nSUMMARY:Sync\r\n"
        "DTSTART:20240104T090000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.text.splitlines()[1] == "When: 2024-01-04 10:00 (Europe/Berlin)"  # (as its people saw it)
    assert record.metadata["rrule"] == ("DTSTART;TZID=Etc/UTC:20240104T090000\nRRULE:FREQ=WEEKLY\n"
                                        "X-WR-TIMEZONE:Europe/Berlin")
    # the occurrence on the clock the text shows, where it was said in UTC (09:00+00:00 beside "10:00 (Europe/Berlin)")
    july = occurrence_within(record.metadata["rrule"], (("gte", "2024-07-04"), ("lt", "2024-07-05")))
    assert july.isoformat() == "2024-07-04T11:00:00+02:00"
    first = occurrence_within(record.metadata["rrule"], (("gte", "2024-01-04"),))
    assert first.isoformat() == "2024-01-04T10:00:00+01:00"


def test_a_calendar_zone_named_the_windows_way_places_its_times(tmp_path: Path) -> None:
    # Exchange's published calendars (a school's agenda) name the calendar's zone the Windows way:
    # it was "unknown time zone", its times left floating and its UTC times in UTC
    (tmp_path / "school.ics").write_text(
        "BEGIN:VCALENDAR\r\nX-WR-CALNAME:Schoolagenda\r\nX-WR-TIMEZONE:W. Europe Standard Time\r\n"
        "BEGIN:VEVENT\r\nUID:a\r\nSUMMARY:Ouderavond\r\nDTSTART:20260302T190000\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:b\r\nSUMMARY:Sportdag\r\nDTSTART:20260602T070000Z\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.metadata["date"] for r in records] == ["2026-03-02T19:00:00+01:00", "2026-06-02T09:00:00+02:00"]
    assert records[1].text == "Sportdag\nWhen: 2026-06-02 09:00 (Europe/Berlin)"


def test_a_calendar_zone_the_file_defines_places_its_times(tmp_path: Path) -> None:
    # X-WR-TIMEZONE may name a zone only the file's VTIMEZONE defines (as a feed writes its own):
    # it was "unknown time zone", its times left floating
    zone = US_ZONE.replace("Customized Time Zone", "Hora de la oficina")
    (tmp_path / "feed.ics").write_text(
        f"BEGIN:VCALENDAR\r\nX-WR-TIMEZONE:Hora de la oficina\r\n{zone}"
        "BEGIN:VEVENT\r\nUID:a\r\nSUMMARY:Reunión\r\nDTSTART:20240715T093000\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == [] and record.metadata["date"] == "2024-07-15T09:30:00-04:00"


OUTLOOK_ZONE = """BEGIN:VTIMEZONE\r
TZID:W. Europe Standard Time\r
BEGIN:STANDARD\r
DTSTART:16011028T030000\r
RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0100\r
END:STANDARD\r
BEGIN:DAYLIGHT\r
DTSTART:16010325T020000\r
RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r
TZOFFSETFROM:+0100\r
TZOFFSETTO:+0200\r
END:DAYLIGHT\r
END:VTIMEZONE\r
"""


def test_an_outlook_series_keeps_its_local_time_through_summer(tmp_path: Path) -> None:
    # Outlook names its zones the Windows way, each with its VTIMEZONE; the series is counted
    # out in the IANA zone that name stands for, so a Monday 00:30 stays a Monday in summer,
    # and a zone only the file defines in the IANA zone that keeps its clock.
    (tmp_path / "outlook.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n" + OUTLOOK_ZONE
        + OUTLOOK_ZONE.replace("W. Europe Standard Time", "Office Time")
        + "BEGIN:VEVENT\r\nUID:night\r\nSUMMARY:Backup check\r\n"
        "DTSTART;TZID=\"W. Europe Standard Time\":20240115T003000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:office\r\nSUMMARY:Office check\r\n"
        "DTSTART;TZID=Office Time:20240115T003000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    night, office = load(tmp_path)[0]
    assert night.metadata["rrule"] == "DTSTART;TZID=Europe/Berlin:20240115T003000\nRRULE:FREQ=WEEKLY;BYDAY=MO"
    assert office.metadata["rrule"] == "DTSTART;TZID=Europe/Budapest:20240115T003000\nRRULE:FREQ=WEEKLY;BYDAY=MO"
    from vecbook.recurrence import series_matches

    for rule in (night.metadata["rrule"], office.metadata["rrule"]):
        assert series_matches(rule, (("gte", "2024-07-15"), ("lt", "2024-07-16"))) is True
        assert series_matches(rule, (("gte", "2024-07-14"), ("lt", "2024-07-15"))) is False


def test_a_windows_zone_reads_the_same_with_its_vtimezone_or_without(tmp_path: Path) -> None:
    # Outlook writes each Windows zone's VTIMEZONE with rules from 1601, which were walked from
    # their start for every time of every event; the zone is the IANA one its name stands for
    event = ("BEGIN:VEVENT\r\nUID:{0}\r\nSUMMARY:Planung\r\nDTSTART;TZID=W. Europe Standard Time:20240715T093000\r\n"
             "DTEND;TZID=W. Europe Standard Time:20240715T103000\r\nEND:VEVENT\r\n")
    (tmp_path / "o.ics").write_text(
        "BEGIN:VCALENDAR\r\n" + OUTLOOK_ZONE + event.format("with") + "END:VCALENDAR\r\n"
        "BEGIN:VCALENDAR\r\n" + event.format("without") + "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    # (an Outlook invitation in a mail, its calendar part read as its event, first: the library
    # keeps the zone it made of a TZID for the next calendar it reads)
    invitation = ics.invitation_text("BEGIN:VCALENDAR\r\n" + OUTLOOK_ZONE + event.format("mail") + "END:VCALENDAR\r\n")
    with_zone, without = load(tmp_path)[0]
    assert with_zone.text == without.text == invitation == "Planung\nWhen: 2024-07-15 09:30 to 10:30 (Europe/Berlin)"
    assert with_zone.metadata["date"] == without.metadata["date"] == "2024-07-15T09:30:00+02:00"


def test_vtimezone_blocks_never_ended_are_read_in_linear_time() -> None:
    # a damaged or hostile file that opens VTIMEZONE blocks it never ends (beside a Windows zone
    # name) once took 24 s for 80 KB, each opening searched to the file's end for its END
    from vecbook.exports.ics_lines import without_windows_zones

    def opened(n: int) -> None:
        assert without_windows_zones("BEGIN:VTIMEZONE\n" * n + "W. Europe Standard Time") == (
            "BEGIN:VTIMEZONE\n" * n + "W. Europe Standard Time")

    assert_linear(opened, 5_000)
    # an ended block of a Windows zone still goes, an unended one after it stays
    zone = OUTLOOK_ZONE.replace("\r", "")
    assert without_windows_zones("A:1\n" + zone + "BEGIN:VTIMEZONE\nTZID:x\n") == "A:1\nBEGIN:VTIMEZONE\nTZID:x\n"


US_ZONE = """BEGIN:VTIMEZONE\r
TZID:Customized Time Zone\r
BEGIN:STANDARD\r
DTSTART:16010101T020000\r
TZOFFSETFROM:-0400\r
TZOFFSETTO:-0500\r
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=11\r
END:STANDARD\r
BEGIN:DAYLIGHT\r
DTSTART:16010101T020000\r
TZOFFSETFROM:-0500\r
TZOFFSETTO:-0400\r
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=2SU;BYMONTH=3\r
END:DAYLIGHT\r
END:VTIMEZONE\r
"""


def test_the_same_zone_defined_in_many_files_is_matched_once(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # a folder of Outlook invitations, each with its own copy of one "Customized Time Zone": its
    # clock was walked from the VTIMEZONE's 1601 for each file (0.2 s a file), as each file's zone
    # is a new object; a zone of the same name and rules keeps the clock of the first
    from vecbook.exports import ics_zones

    walked = []
    offset = ics_zones._offset
    monkeypatch.setattr(ics_zones, "_offset", lambda zone, when: walked.append(zone) or offset(zone, when))
    event = ("BEGIN:VEVENT\r\nUID:u{0}\r\nSUMMARY:call\r\nDTSTART;TZID=Customized Time Zone:20240{0}05T233000\r\n"
             "DTEND;TZID=Customized Time Zone:20240{0}05T235900\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n")
    for month in range(1, 4):
        (tmp_path / f"invite{month}.ics").write_text(
            "BEGIN:VCALENDAR\r\n" + US_ZONE + event.format(month) + "END:VCALENDAR\r\n", newline="")
    records, problems = load(tmp_path)
    assert problems == [] and len(records) == 3
    assert all(r.metadata["rrule"].startswith("DTSTART;TZID=America/New_York:20240") for r in records)
    assert len(set(map(id, walked))) <= 1  # (none where a test before read the zone)
    # another rule of the same name is another clock
    other = US_ZONE.replace("BYDAY=1SU;BYMONTH=11", "BYDAY=-1SU;BYMONTH=10")
    (tmp_path / "invite4.ics").write_text("BEGIN:VCALENDAR\r\n" + other + event.format(4) + "END:VCALENDAR\r\n",
                                          newline="")
    walked.clear()
    records, _ = load(tmp_path)
    assert len(set(map(id, walked))) == 1
    by_month = {r.metadata["date"][:7]: r.metadata["rrule"] for r in records}
    assert "America/New_York" in by_month["2024-03"] and "America/New_York" not in by_month["2024-04"]


def test_a_clock_no_zone_keeps_is_looked_for_without_reading_each_zone_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # a zone a file defines that no IANA zone keeps (an odd offset) is compared with each of the
    # system's ~600 zones: each was read from its file again for each such zone, 0.1 s a zone
    import zoneinfo
    from datetime import datetime, timedelta, timezone

    from vecbook.exports import ics_zones

    def clock(minutes: int) -> tuple[tuple[datetime, timedelta], ...]:
        start = datetime(2024, 1, 1, tzinfo=timezone.utc)
        return tuple((start + timedelta(weeks=week), timedelta(minutes=minutes)) for week in range(105))

    assert ics_zones._keeping("Odd one", clock(17)) is None
    loaded = []
    real = zoneinfo.ZoneInfo
    monkeypatch.setattr(zoneinfo, "ZoneInfo", lambda key: loaded.append(key) or real(key))
    assert ics_zones._keeping("Odd two", clock(18)) is None
    assert loaded == []


def test_two_calendars_read_at_once_keep_their_own_zones(tmp_path: Path) -> None:
    # two books built at once in one process (two threads) each read calendars whose zone is
    # called "Customized Time Zone": the library keeps zones by name for the whole process, and
    # a third of the events read the other thread's, nine or thirteen hours off without a word
    import threading

    tokyo = US_ZONE.replace("-0400", "+0900").replace("-0500", "+0900")
    found: dict[str, set[str]] = {}
    for name, zone in (("ny", US_ZONE), ("tokyo", tokyo)):
        (tmp_path / name).mkdir()
        for i in range(12):
            events = "".join(f"BEGIN:VEVENT\r\nUID:{i}-{j}\r\nSUMMARY:x\r\nDTSTART;TZID=Customized Time Zone:"
                             f"20240705T1{j % 10}0000\r\nEND:VEVENT\r\n" for j in range(20))
            (tmp_path / name / f"{i}.ics").write_text("BEGIN:VCALENDAR\r\n" + zone + events + "END:VCALENDAR\r\n",
                                                     newline="")

    def read(name: str) -> None:
        found[name] = {r.metadata["date"][19:] for r in load(tmp_path / name)[0]}

    threads = [threading.Thread(target=read, args=(name,)) for name in ("ny", "tokyo")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == {"ny": {"-04:00"}, "tokyo": {"+09:00"}}


@pytest.mark.parametrize("zone, defined, named", [
    ("(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna",
     OUTLOOK_ZONE.replace("W. Europe Standard Time", "(UTC+01:00) Amsterdam\\, Berlin\\, Bern\\, Rome\\, Stockholm\\, "
                                                     "Vienna"), "Europe/Amsterdam"),
    ("Customized Time Zone", US_ZONE, "America/New_York"),
    ("India", US_ZONE.replace("Customized Time Zone", "India").replace("-0400", "+0530").replace("-0500", "+0530"),
     "Asia/Kolkata"),
], ids=["display-name", "customized", "fixed-offset"])
def test_a_series_in_a_zone_only_the_file_defines_keeps_its_clock(tmp_path: Path, zone: str, defined: str,
                                                                 named: str) -> None:
    # Outlook 2010 and Exchange name a zone by its display name or "Customized Time Zone": no
    # IANA name, so the series was counted on its winter offset, each summer occurrence an hour
    # off (23:30 on the next day); it is counted in the IANA zone of the same clock, one whose
    # city the name says where it says one
    (tmp_path / "o.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n" + defined
        + f"BEGIN:VEVENT\r\nUID:r1\r\nSUMMARY:Late call\r\nDTSTART;TZID=\"{zone}\":20240108T233000\r\n"
        "RRULE:FREQ=WEEKLY;BYDAY=MO\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.metadata["rrule"] == f"DTSTART;TZID={named}:20240108T233000\nRRULE:FREQ=WEEKLY;BYDAY=MO"
    from vecbook.recurrence import occurrence_within

    found = occurrence_within(record.metadata["rrule"], (("gte", "2024-07-15"), ("lt", "2024-07-16")))
    assert found is not None and (found.day, found.hour, found.minute) == (15, 23, 30)


def test_two_files_zones_of_one_name_each_keep_their_own(tmp_path: Path) -> None:
    # Outlook names many a zone "Customized Time Zone"; the library kept the first file's for the
    # name, so a New York colleague's invitation read with Berlin's offsets: 09:30 was 03:30 there
    event = ("BEGIN:VEVENT\r\nUID:{0}\r\nSUMMARY:Call {0}\r\nDTSTART;TZID=Customized Time Zone:20240715T093000\r\n"
             "END:VEVENT\r\n")
    berlin = OUTLOOK_ZONE.replace("W. Europe Standard Time", "Customized Time Zone")
    (tmp_path / "a.ics").write_text(f"BEGIN:VCALENDAR\r\n{berlin}{event.format('berlin')}END:VCALENDAR\r\n",
                                    encoding="utf-8", newline="")
    (tmp_path / "b.ics").write_text(f"BEGIN:VCALENDAR\r\n{US_ZONE}{event.format('new-york')}END:VCALENDAR\r\n",
                                    encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.metadata["date"] for r in records] == ["2024-07-15T09:30:00+02:00", "2024-07-15T09:30:00-04:00"]
    (tmp_path / "a.ics").unlink()  # read again, the New York file alone: the same
    assert [r.metadata["date"] for r in load(tmp_path)[0]] == ["2024-07-15T09:30:00-04:00"]


def test_an_outlook_zone_named_by_its_display_name_reads_without_escapes(tmp_path: Path) -> None:
    # Outlook 2010 and Exchange name a zone by its display name, commas escaped in the VTIMEZONE's
    # TZID (a text value): the When: line showed "Amsterdam\\, Berlin\\, ..." with the backslashes
    zone = "(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna"
    (tmp_path / "o.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n"
        + OUTLOOK_ZONE.replace("W. Europe Standard Time", zone.replace(",", "\\,"))
        + f"BEGIN:VEVENT\r\nUID:r1\r\nSUMMARY:Riunione\r\nDTSTART;TZID=\"{zone}\":20240715T100000\r\n"
        f"DTEND;TZID=\"{zone}\":20240715T103000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == [] and record.metadata["date"] == "2024-07-15T10:00:00+02:00"
    assert record.text == f"Riunione\nWhen: 2024-07-15 10:00 to 10:30 ({zone})"


def test_a_zone_named_with_a_colon_left_unquoted_reads(tmp_path: Path) -> None:
    # RFC 5545 asks for quotes around a TZID with a colon; Google Calendar wrote GMT+05:30 without,
    # Outlook and Lotus exports a display name (libical and Thunderbird read the TZID up to the
    # value's colon, the line's last): the time was lost, with a WARN, and the event its date
    zone = "(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna"
    (tmp_path / "g.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\nBEGIN:VTIMEZONE\r\n"
        "TZID:GMT+05:30\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0530\r\nTZOFFSETTO:+0530\r\nTZNAME:IST\r\n"
        "DTSTART:19700101T000000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
        + OUTLOOK_ZONE.replace("W. Europe Standard Time", zone.replace(",", "\\,"))
        + "BEGIN:VEVENT\r\nUID:g1\r\nSUMMARY:Standup\r\nDTSTART;TZID=GMT+05:30:20120904T020000\r\n"
        "DTEND;TZID=GMT+05:30;VALUE=DATE-TIME:20120904T030000\r\nEND:VEVENT\r\n"
        f"BEGIN:VEVENT\r\nUID:o1\r\nSUMMARY:Riunione\r\nDTSTART;TZID={zone[:50]}\r\n {zone[50:]}:20240715T100000\r\n"
        f"DTEND;TZID={zone}:20240715T103000\r\nRRULE:FREQ=WEEKLY;COUNT=2\r\n"
        f"EXDATE;TZID={zone}:20240722T100000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (google, outlook), problems = load(tmp_path)
    assert problems == []
    assert (google.metadata["date"], google.metadata["end_date"]) == ("2012-09-04T02:00:00+05:30",
                                                                      "2012-09-04T03:00:00+05:30")
    assert outlook.metadata["date"] == "2024-07-15T10:00:00+02:00"
    assert outlook.text.splitlines()[1] == f"When: 2024-07-15 10:00 to 10:30 ({zone})"
    assert "Except on: 2024-07-22 10:00" in outlook.text


THIS_AND_FUTURE = """BEGIN:VCALENDAR\r
PRODID:Lotus Notes\r
BEGIN:VEVENT\r
UID:w@lotus\r
SUMMARY:Standup\r
DTSTART;TZID=Europe/Berlin:20240304T100000\r
DTEND;TZID=Europe/Berlin:20240304T103000\r
RRULE:FREQ=WEEKLY;BYDAY=MO{count}\r
EXDATE;TZID=Europe/Berlin:20240311T100000,20240422T100000\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:w@lotus\r
RECURRENCE-ID;RANGE=THISANDFUTURE;TZID=Europe/Berlin:20240401T100000\r
SUMMARY:Standup (afternoon)\r
DTSTART;TZID=Europe/Berlin:20240401T140000\r
DTEND;TZID=Europe/Berlin:20240401T143000\r
END:VEVENT\r
END:VCALENDAR\r
"""


@pytest.mark.parametrize("count, left", [("", None), (";COUNT=10", 6)])
def test_a_change_to_this_and_following_occurrences_moves_them_all(tmp_path: Path, count: str,
                                                                   left: int | None) -> None:
    # Lotus Notes, Apple and CalDAV servers write "this and following events" as a changed
    # occurrence with RANGE=THISANDFUTURE: every later occurrence takes its time and title. The
    # series still said 10:00 "Standup" for each later Monday, and the change was one afternoon
    from vecbook.recurrence import series_matches

    (tmp_path / "l.ics").write_text(THIS_AND_FUTURE.format(count=count), encoding="utf-8", newline="")
    (series, changed), problems = load(tmp_path)
    assert problems == []
    assert changed.metadata["title"] == "Standup (afternoon)"
    assert changed.metadata["recurrence"] == "Repeats weekly on Monday" + (f" {left} times" if left else "")
    assert "Changes the occurrence of 2024-04-01 10:00 (Europe/Berlin) and all later ones" in changed.text
    may_6, april_22, march_25 = ((("gte", f"2024-{day}"), ("lt", f"2024-{day}T23:59")) for day in
                                 ("05-06", "04-22", "03-25"))
    assert [series_matches(r.metadata["rrule"], may_6) for r in (series, changed)] == [False, True]
    assert [series_matches(r.metadata["rrule"], march_25) for r in (series, changed)] == [True, False]
    # an occurrence the series took out stays out, at its new time
    assert [series_matches(r.metadata["rrule"], april_22) for r in (series, changed)] == [False, False]
    assert series.metadata["recurrence"].startswith("Repeats weekly on Monday" + (" 4 times" if left else " until"))


@pytest.mark.parametrize("count", ["", ";COUNT=10"])
def test_a_change_from_the_first_occurrence_on_is_the_whole_series(tmp_path: Path, count: str) -> None:
    # "this and following events" chosen on a series' first occurrence: the change is every
    # occurrence. The series was left a record of no occurrence at all (COUNT=0, or an UNTIL
    # before its start), "Standup" at 10:00 beside the afternoon one that replaced it
    from vecbook.recurrence import series_matches

    first = THIS_AND_FUTURE.format(count=count).replace("20240401T", "20240304T")
    (tmp_path / "l.ics").write_text(first, encoding="utf-8", newline="")
    (changed,), problems = load(tmp_path)
    assert problems == []
    assert changed.metadata["title"] == "Standup (afternoon)"
    assert changed.metadata["recurrence"] == "Repeats weekly on Monday" + (" 10 times" if count else "")
    for day, found in (("03-04", True), ("03-11", False), ("03-18", True), ("05-06", True)):
        assert series_matches(changed.metadata["rrule"], (("gte", f"2024-{day}"), ("lt", f"2024-{day}T23:59"))) \
            is found, day


@pytest.mark.parametrize("change", ["RECURRENCE-ID;RANGE=THISANDFUTURE", "RECURRENCE-ID"])
def test_a_change_that_states_no_description_keeps_its_series_text(tmp_path: Path, change: str) -> None:
    # Lotus Notes and Outlook keep a changed occurrence as what differs, and may write it without the
    # series' description, place or people: "this and following" from the first occurrence left no
    # record holding the agenda (the series is the change), and a search on a moved day found the
    # change without it. What a change does not state is its series'; a cancelled one takes its title.
    (tmp_path / "l.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:w@lotus\r\nSUMMARY:Standup\r\n"
        "DESCRIPTION:Agenda: budget review\r\nLOCATION:Room 4\r\nORGANIZER;CN=Cy Park:mailto:cy@example.com\r\n"
        "ATTENDEE;CN=Ana Lima:mailto:ana@example.com\r\nDTSTART:20240304T090000Z\r\nRRULE:FREQ=WEEKLY\r\n"
        f"END:VEVENT\r\nBEGIN:VEVENT\r\nUID:w@lotus\r\n{change}:20240304T090000Z\r\n"
        "DTSTART:20240304T130000Z\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:w@lotus\r\n"
        "RECURRENCE-ID:20240311T090000Z\r\nDTSTART:20240311T090000Z\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == []
    changed, cancelled = records[-2:]
    assert changed.text.startswith("Standup\nWhen: 2024-03-04 13:00 (UTC)\n")
    assert changed.text.endswith("Where: Room 4\nOrganizer: Cy Park\nAttendees: Ana Lima\n\nAgenda: budget review")
    assert changed.metadata["participants"] == ["Cy Park", "cy@example.com", "Ana Lima", "ana@example.com"]
    assert cancelled.text == "Standup\nWhen: 2024-03-11 09:00 (UTC)\nStatus: cancelled\nChanges the occurrence " \
                             "of 2024-03-11 09:00 (UTC)"


def test_a_zone_named_by_its_offset_alone_is_that_offset(tmp_path: Path) -> None:
    # some writers name a zone by its offset and define no VTIMEZONE for it (a PHP generator's
    # TZID=+03:00, Lotus's GMT+01:00): the times were floating local time, with a WARN each
    events = "".join(f"BEGIN:VEVENT\r\nUID:{n}\r\nSUMMARY:x\r\nDTSTART;TZID={zone}:20240705T100000\r\n"
                     f"{'RRULE:FREQ=DAILY;COUNT=3' if n == 0 else ''}\r\nEND:VEVENT\r\n"
                     for n, zone in enumerate(["GMT+01:00", '"UTC+05:30"', "+03:00", "GMT-0500", "(GMT-03.00)", "UTC+14"]))
    (tmp_path / "o.ics").write_text(f"BEGIN:VCALENDAR\r\n{events}END:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert problems == []
    assert [r.metadata["date"][-6:] for r in records] == ["+01:00", "+05:30", "+03:00", "-05:00", "-03:00", "+14:00"]
    assert records[0].metadata["rrule"].startswith("DTSTART;TZID=Etc/GMT-1:20240705T100000")


def test_a_cancelled_or_tentative_event_says_so_in_its_text(tmp_path: Path) -> None:
    # Google and Outlook write a cancelled occurrence as a VEVENT with the series' summary and
    # STATUS:CANCELLED: its hit must not read as a meeting that took place.
    (tmp_path / "g.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:w@google.com\r\nSUMMARY:1:1 Ana / Bo\r\n"
        "DTSTART:20240305T100000Z\r\nRRULE:FREQ=WEEKLY\r\nSTATUS:CONFIRMED\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:w@google.com\r\nSUMMARY:1:1 Ana / Bo\r\nRECURRENCE-ID:20240326T100000Z\r\n"
        "DTSTART:20240326T100000Z\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:t\r\nSUMMARY:Maybe lunch\r\nDTSTART:20240401T120000Z\r\nSTATUS:TENTATIVE\r\n"
        "END:VEVENT\r\nBEGIN:VTODO\r\nUID:d\r\nSUMMARY:Book flights\r\nSTATUS:COMPLETED\r\nEND:VTODO\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    series, cancelled, tentative, done = load(tmp_path)[0]
    assert "Status" not in series.text  # confirmed: as an event is
    assert cancelled.text == ("1:1 Ana / Bo\nWhen: 2024-03-26 10:00 (UTC)\nStatus: cancelled\n"
                              "Changes the occurrence of 2024-03-26 10:00 (UTC)")
    assert tentative.text.splitlines()[-1] == "Status: tentative"
    assert done.text == "Book flights\nStatus: completed"


def test_a_person_without_a_mail_address_is_named_by_their_email_parameter_or_name(tmp_path: Path) -> None:
    # Apple's calendar server addresses people as urn:uuid:..., their mail in EMAIL (RFC 7986);
    # Outlook, and many calendar writers, give a person without an address the placeholder
    # invalid:nomail; Exchange may write its internal address (/o=ExchangeLabs/...). None is mail.
    (tmp_path / "a.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:u1\r\nSUMMARY:Plan\r\nDTSTART:20240601T090000Z\r\n"
        "ORGANIZER;CN=Ana Lima;EMAIL=ana@icloud.com:urn:uuid:10000000-0000-0000-0000-000000000001\r\n"
        "ATTENDEE;CUTYPE=INDIVIDUAL;EMAIL=\"bo@example.com\";PARTSTAT=ACCEPTED:urn:uuid:10000000-0000-0000-0000-00000\r\n"
        " 0000002\r\nATTENDEE;CN=Cy:urn:uuid:10000000-0000-0000-0000-000000000003\r\n"
        "ATTENDEE;CN=\"Tom Lee\";RSVP=TRUE:invalid:nomail\r\nATTENDEE;RSVP=TRUE:invalid:nomail\r\n"
        "ATTENDEE;CN=Di:/o=ExchangeLabs/ou=Exchange Administrative Group (FYDIBOHF23SPDLT)/cn=Recipients/cn=a1-Di\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.metadata["participants"] == ["Ana Lima", "ana@icloud.com", "bo@example.com", "Cy", "Tom Lee", "Di"]
    assert record.metadata["emails"] == ["ana@icloud.com", "bo@example.com"]
    assert "Attendees: bo@example.com, Cy, Tom Lee, Di" in record.text


def test_quotes_inside_a_quoted_name_keep_the_person(tmp_path: Path) -> None:
    # RFC 6868 writes a quote inside a quoted parameter as ^' (a caret as ^^); some exporters write
    # it with a backslash instead: the attendee was dropped, with a WARN, and the event read as if
    # they had not been invited. (A backslash before the closing quote is the value's own.)
    lines = ["BEGIN:VCALENDAR", "BEGIN:VEVENT", "UID:q1", "SUMMARY:Ensayo", "DTSTART:20240601T090000Z",
             "ORGANIZER;CN=\"Bo ^'Boss^' Lee ^^_^^\":mailto:bo@example.com",
             r'ATTENDEE;CN="Ana \"Nana\" Ruiz";PARTSTAT=ACCEPTED:mailto:ana@example.com',
             r'ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE;CN="José \"Pepe\" Álvarez-Fe',
             r' rnández";X-NUM-GUESTS=0:mailto:pepe@example.com',
             r'ATTENDEE;CN="\"Mimi\"":mailto:mimi@example.com',
             r'ATTENDEE;CN="C:\Users\":mailto:path@example.com', "END:VEVENT", "END:VCALENDAR", ""]
    (tmp_path / "q.ics").write_text("\r\n".join(lines), encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.metadata["participants"] == [
        'Bo "Boss" Lee ^_^', "bo@example.com", 'Ana "Nana" Ruiz', "ana@example.com",
        'José "Pepe" Álvarez-Fernández', "pepe@example.com", "Mimi", "mimi@example.com",
        "C:\\Users\\", "path@example.com"]
    assert 'Attendees: Ana "Nana" Ruiz, José "Pepe" Álvarez-Fernández, Mimi, C:\\Users\\' in record.text
    # the same invitation in a mail reads the same
    assert 'Attendees: Ana "Nana" Ruiz, José' in ics.invitation_text("\r\n".join(lines))


def test_a_fold_inside_an_escaped_quote_keeps_the_person(tmp_path: Path) -> None:
    # a writer that folds at 75 octets may fold between the backslash and its quote: the
    # attendee was dropped with a WARN
    (tmp_path / "f.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:f1\r\nSUMMARY:Ensayo\r\nDTSTART:20240601T090000Z\r\n"
        'ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE;CN="José \\\r\n "Pepe\\\r\n'
        '\t" Álvarez":mailto:pepe@example.com\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n', encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.metadata["participants"] == ['José "Pepe" Álvarez', "pepe@example.com"]


def test_a_quote_escaped_in_a_text_reads_as_a_quote(tmp_path: Path) -> None:
    # RFC 5545 escapes only a backslash, semicolon, comma and line break in a text; some writers
    # (PHP generators, Lotus) escape a quote too: the title read 'Say \\"hi\\"', its backslashes kept
    (tmp_path / "t.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:t1\r\n" r'SUMMARY:Say \"hi\" to \"Zoë\"' "\r\n"
        "DESCRIPTION:He said \\\"yes\r\n \\\" and \\\r\n \"no\\\"\r\n" r'LOCATION:Café \"Aux Amis\"' "\r\n"
        "DTSTART:20240601T090000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), problems = load(tmp_path)
    assert problems == [] and record.metadata["title"] == 'Say "hi" to "Zoë"'
    assert record.metadata["location"] == 'Café "Aux Amis"'
    assert record.text.endswith('\nHe said "yes" and "no"')


def test_a_line_of_many_escaped_quotes_is_read_in_linear_time() -> None:
    # each escaped quote once copied the rest of its line to look at the character after it:
    # 100,000 in one 300 KB line (a damaged or hostile file) took 2 s, a longer one minutes
    from vecbook.exports.ics_lines import escaped_quotes

    def quoted(n: int) -> None:
        assert escaped_quotes('ATTENDEE;CN="' + '\\"a' * n + '":mailto:x') == 'ATTENDEE;CN="' + "^'a" * n + '":mailto:x'

    assert_linear(quoted, 10_000)


def test_a_name_with_a_comma_left_unquoted_reads_whole(tmp_path: Path) -> None:
    # RFC 5545 asks for quotes around a CN with a comma; some writers leave them out, and the
    # library reads the name as a list: the Attendees: line said "['Müller', ' Anna']"
    (tmp_path / "c.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:c1\r\nSUMMARY:Abstimmung\r\nDTSTART:20240601T090000Z\r\n"
        "ORGANIZER;CN=Weiß, Jürgen, Dr.:mailto:jw@example.com\r\n"
        "ATTENDEE;CN=Müller, Anna;PARTSTAT=ACCEPTED:mailto:anna@example.com\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert "Organizer: Weiß, Jürgen, Dr.\nAttendees: Müller, Anna" in record.text
    assert record.metadata["participants"] == ["Weiß, Jürgen, Dr.", "jw@example.com", "Müller, Anna",
                                               "anna@example.com"]


def test_a_name_written_over_lines_reads_on_one(tmp_path: Path) -> None:
    # RFC 6868's ^n is a line break inside a parameter: a CN with one broke the Organizer: line
    # in two, and the participant's name no longer matched what --participant is given
    (tmp_path / "n.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:n1\r\nSUMMARY:Sync\r\nDTSTART:20240601T090000Z\r\n"
        "ORGANIZER;CN=\"Dr. Lee^nResearch  Office\":mailto:lee@example.com\r\n"
        "ATTENDEE;CN=\"  Zoë\tBrandão \":mailto:zoe@example.com\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.metadata["organizer"] == "Dr. Lee Research Office"
    assert "Organizer: Dr. Lee Research Office\nAttendees: Zoë Brandão" in record.text


def test_a_person_named_by_their_address_takes_the_name_the_file_gives_it(tmp_path: Path) -> None:
    # Google writes the organizer among the attendees with their address as CN (and anyone not
    # in the owner's contacts so): "Attendees: 山田太郎, hanako@gmail.com" named the organizer,
    # 山田花子, by her address only
    (tmp_path / "g.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\nBEGIN:VEVENT\r\nUID:g1\r\n"
        "SUMMARY:ピアノ教室\r\nDTSTART:20240108T100000Z\r\nORGANIZER;CN=山田花子:mailto:hanako@gmail.com\r\n"
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=山田太郎;X-NUM-GUESTS=0:mailto:taro@gmail\r\n"
        " .com\r\nATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Hanako@Gmail.com;X-NUM-GUES\r\n"
        " TS=0:mailto:h\r\n"
        " anako@gmail.com\r\nATTENDEE;CUTYPE=INDIVIDUAL;CN=kai@example.com:mailto:kai@example.com\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert "Organizer: 山田花子\nAttendees: 山田太郎, 山田花子, kai@example.com" in record.text
    assert record.metadata["participants"] == ["山田花子", "hanako@gmail.com", "山田太郎", "taro@gmail.com",
                                               "kai@example.com"]


def test_a_room_or_resource_attendee_is_where_the_event_is_not_a_person(tmp_path: Path) -> None:
    # Google books a room as an attendee (CUTYPE=RESOURCE, its address @resource.calendar.google.com),
    # Outlook and Exchange as CUTYPE=ROOM: "Room 4.01 (12)" was listed as a person at the meeting.
    (tmp_path / "a.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:g1\r\nSUMMARY:Planning\r\nDTSTART:20240601T090000Z\r\n"
        "ORGANIZER;CN=Ana Lima:mailto:ana@example.com\r\n"
        "ATTENDEE;CUTYPE=INDIVIDUAL;CN=Zoë Brandão:mailto:zoe@example.com\r\n"
        "ATTENDEE;CUTYPE=RESOURCE;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Room 4.01 (12);X-NUM-GUESTS=0:\r\n"
        " mailto:c_1882abc@resource.calendar.google.com\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:o1\r\nSUMMARY:会議\r\nDTSTART:20240602T090000Z\r\nLOCATION:Lisbon office\r\n"
        "ATTENDEE;CN=Bo:mailto:bo@example.com\r\n"
        "ATTENDEE;CUTYPE=ROOM;ROLE=NON-PARTICIPANT;CN=\"Sala Tejo\":mailto:sala.tejo@example.com\r\n"
        "ATTENDEE;CUTYPE=resource;CN=Projector 2:mailto:projector2@example.com\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:o2\r\nSUMMARY:Review\r\nDTSTART:20240603T090000Z\r\nLOCATION:Room 4.01 (12)\r\n"
        "ATTENDEE;CUTYPE=RESOURCE;CN=Room 4.01 (12):mailto:c_1882abc@resource.calendar.google.com\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (google, outlook, named), problems = load(tmp_path)
    assert problems == []
    assert google.text == ("Planning\nWhen: 2024-06-01 09:00 (UTC)\nWhere: Room 4.01 (12)\nOrganizer: Ana Lima\n"
                           "Attendees: Zoë Brandão")
    assert google.metadata["participants"] == ["Ana Lima", "ana@example.com", "Zoë Brandão", "zoe@example.com"]
    assert google.metadata["emails"] == ["ana@example.com", "zoe@example.com"]
    assert google.metadata["location"] == "Room 4.01 (12)" and google.metadata["rooms"] == ["Room 4.01 (12)"]
    assert "Where: Lisbon office; Sala Tejo; Projector 2\nAttendees: Bo" in outlook.text
    assert outlook.metadata["participants"] == ["Bo", "bo@example.com"]
    assert outlook.metadata["location"] == "Lisbon office; Sala Tejo; Projector 2"
    # a room the LOCATION already names is said once
    assert "Where: Room 4.01 (12)\n" in named.text + "\n" and "participants" not in named.metadata


def test_a_location_over_several_lines_reads_on_one(tmp_path: Path) -> None:
    # Apple Calendar writes a place as its name and address, a line each (LOCATION:Büro\\nStraße 7\\n...):
    # the Where: line broke into four, and the location metadata held the line breaks
    (tmp_path / "a.ics").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Apple Inc.//macOS 14.4//EN\r\nBEGIN:VEVENT\r\nUID:a1\r\n"
        "SUMMARY:Quartalsplanung\r\n"
        "DTSTART:20240417T080000Z\r\nLOCATION:Büro Hamburg\\nJungfernstieg 7\\n20354 Hamburg,\\n\\nDeutschland\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.text == ("Quartalsplanung\nWhen: 2024-04-17 08:00 (UTC)\n"
                           "Where: Büro Hamburg, Jungfernstieg 7, 20354 Hamburg, Deutschland")
    assert record.metadata["location"] == "Büro Hamburg, Jungfernstieg 7, 20354 Hamburg, Deutschland"


def test_google_meets_separator_lines_are_left_out(tmp_path: Path) -> None:
    # Google Calendar wraps the Meet block of a description in two lines of ":~" (some 150
    # characters each), which filled the hit's lines and the model's window with nothing
    separator = "-::~:~::~" + ":~" * 60 + "::~:~::-"
    (tmp_path / "g.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:m@google.com\r\nSUMMARY:Sync\r\nDTSTART:20240601T090000Z\r\n"
        f"DESCRIPTION:Bring the gecko numbers.\\n\\n{separator}\\nJoin with Google Meet: https://meet.google.com/abc-defg-hij"
        f"\\n\\nPlease do not edit this section.\\n{separator}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.text.split("\n\n", 1)[1] == (
        "Bring the gecko numbers.\n\nJoin with Google Meet: https://meet.google.com/abc-defg-hij\n\n"
        "Please do not edit this section.")


def test_a_teams_blocks_lines_of_underscores_are_left_out(tmp_path: Path) -> None:
    # Outlook wraps the Microsoft Teams block of an invitation in two lines of 80 underscores,
    # which filled a hit's lines (and the model's window) with nothing, as Google's ":~" lines did
    rule = "_" * 80
    (tmp_path / "o.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:t1\r\nSUMMARY:Riunione settimanale\r\nDTSTART:20240115T090000Z\r\n"
        f"DESCRIPTION:Ciao a tutti\\,\\nordine del giorno allegato.\\n\\n{rule}\\nRiunione di Microsoft Teams\\n"
        f"ID riunione: 123 456 789 0\\nPasscode: abc123\\n{rule}\\n\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    (record,), _ = load(tmp_path)
    assert record.text.split("\n\n", 1)[1] == ("Ciao a tutti,\nordine del giorno allegato.\n\n"
                                               "Riunione di Microsoft Teams\nID riunione: 123 456 789 0\n"
                                               "Passcode: abc123")
    # the same invitation in a mail with no text part (its calendar part read as its event) too
    assert rule not in ics.invitation_text((tmp_path / "o.ics").read_text(encoding="utf-8"))


def test_an_exception_written_as_the_other_kind_of_date_still_leaves_its_day(tmp_path: Path) -> None:
    # RFC 5545 asks an EXDATE for the kind of value DTSTART has; some writers put a time on an
    # all-day series' (or a date on a timed one's): the whole series could not be counted out, so
    # a date range found none of its occurrences past the first
    from vecbook.recurrence import series_matches

    (tmp_path / "x.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:bins\r\nSUMMARY:Müllabfuhr\r\nDTSTART;VALUE=DATE:20240603\r\n"
        "RRULE:FREQ=WEEKLY\r\nEXDATE:20240610T000000Z\r\nEXDATE;TZID=Europe/Berlin:20240617T000000\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:choir\r\nSUMMARY:Chorprobe\r\nDTSTART;TZID=Europe/Berlin:20240603T190000\r\n"
        "RRULE:FREQ=WEEKLY\r\nEXDATE;VALUE=DATE:20240610\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    bins, choir = load(tmp_path)[0]
    def on(record: vecbook.Record, day: int) -> bool | None:
        return series_matches(record.metadata["rrule"], (("gte", f"2024-06-{day:02d}"),
                                                         ("lt", f"2024-06-{day + 1:02d}")))

    assert [on(bins, day) for day in (3, 10, 17, 24)] == [True, False, False, True]
    assert [on(choir, day) for day in (3, 10, 17)] == [True, False, True]


def test_an_exception_with_or_without_a_zone_unlike_its_series_still_counts(tmp_path: Path) -> None:
    # a zoned series with an EXDATE or RDATE written without one (or a floating series with one
    # in UTC): dateutil cannot compare the two, so the series could not be counted out at all
    from vecbook.recurrence import series_matches

    (tmp_path / "x.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:z\r\nSUMMARY:Zoned\r\nDTSTART;TZID=Europe/Berlin:20240603T090000\r\n"
        "RRULE:FREQ=WEEKLY\r\nEXDATE:20240610T090000\r\nRDATE:20240612T090000\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:f\r\nSUMMARY:Floating\r\nDTSTART:20240603T090000\r\nRRULE:FREQ=WEEKLY\r\n"
        "EXDATE:20240610T090000Z\r\nRDATE;TZID=Asia/Tokyo:20240612T090000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8", newline="")
    for record in load(tmp_path)[0]:
        found = [series_matches(record.metadata["rrule"], (("gte", f"2024-06-{day:02d}"),
                                                           ("lt", f"2024-06-{day + 1:02d}")))
                 for day in (3, 10, 12, 17)]
        assert found == [True, False, True, True], record.metadata["title"]


def test_a_moved_occurrence_leaves_its_series_date(tmp_path: Path) -> None:
    # Google and Apple write a changed occurrence as its own VEVENT (the UID and RECURRENCE-ID of
    # the date it replaces): the series no longer occurs on that date, the change does.
    (tmp_path / "g.ics").write_text(
        "BEGIN:VCALENDAR\r\nX-WR-TIMEZONE:Europe/Madrid\r\n"
        "BEGIN:VEVENT\r\nUID:weekly@google.com\r\nSUMMARY:Reunión semanal\r\n"
        "DTSTART;TZID=Europe/Madrid:20240101T100000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO\r\nEND:VEVENT\r\n"
        "BEGIN:VEVENT\r\nUID:weekly@google.com\r\nSUMMARY:Reunión semanal (martes)\r\n"
        "RECURRENCE-ID;TZID=Europe/Madrid:20240115T100000\r\n"
        "DTSTART;TZID=Europe/Madrid:20240116T100000\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    series, moved = load(tmp_path)[0]
    assert series.metadata["rrule"] == ("DTSTART;TZID=Europe/Madrid:20240101T100000\nRRULE:FREQ=WEEKLY;BYDAY=MO\n"
                                        "EXDATE:20240115T090000Z")
    assert "rrule" not in moved.metadata and moved.metadata["date"] == "2024-01-16T10:00:00+01:00"
    from vecbook.recurrence import series_matches

    assert series_matches(series.metadata["rrule"], (("gte", "2024-01-15"), ("lt", "2024-01-16"))) is False
    assert series_matches(series.metadata["rrule"], (("gte", "2024-01-22"), ("lt", "2024-01-23"))) is True


@pytest.mark.parametrize("until", ["20240326", "20240326T090000", "20240326T140000Z"])
def test_a_zoned_series_ends_on_its_until_however_written(tmp_path: Path, until: str) -> None:
    # RFC 5545 wants UNTIL in UTC beside a zoned DTSTART; calendars also write a date, or a
    # local time, and mean the series' own day and clock: the series is found up to that day.
    (tmp_path / "y.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:yoga\nSUMMARY:Yoga\nDTSTART;TZID=America/New_York:20240305T090000\n"
        f"RRULE:FREQ=WEEKLY;UNTIL={until}\nEND:VEVENT\nEND:VCALENDAR\n")
    (record,), _ = load(tmp_path)
    from vecbook.recurrence import series_matches

    def on(day: str) -> bool | None:
        return series_matches(record.metadata["rrule"], (("gte", day), ("lte", f"{day}T23:59:59")))

    assert (on("2024-03-19"), on("2024-03-26"), on("2024-04-02")) == (True, True, False)


@pytest.mark.parametrize("rule", ["FREQ=MONTHLY;BYDAY=MO;BYSETPOS=40", "FREQ=MONTHLY;BYDAY=6MO",
                                  "FREQ=YEARLY;BYDAY=-60MO", "FREQ=YEARLY;BYYEARDAY=367", "FREQ=MONTHLY;BYMONTHDAY=-32",
                                  "FREQ=MONTHLY;BYMONTHDAY=40,-33", "FREQ=HOURLY;BYSETPOS=2", "FREQ=MINUTELY;BYSETPOS=-2",
                                  "FREQ=SECONDLY;BYSETPOS=40", "FREQ=HOURLY;BYMINUTE=0,30;BYSETPOS=3",
                                  "FREQ=DAILY;BYWEEKNO=-53;BYMONTH=4", "FREQ=MINUTELY;BYWEEKNO=-53;BYMONTH=4,6,9,11;BYHOUR=23",
                                  "FREQ=YEARLY;BYWEEKNO=20;BYMONTH=1"])
def test_a_rule_that_names_no_day_is_answered_at_once(rule: str) -> None:
    # dateutil looks for such a rule's occurrences to the year 9999: some 3 s a series and range,
    # and an hourly, minutely or secondly one (a period of one occurrence, or of as many as its
    # BYMINUTE and BYSECOND name) never answered: every search by date hung
    import time

    from vecbook.recurrence import series_matches

    began = time.perf_counter()
    assert series_matches(f"DTSTART:20240101T100000Z\nRRULE:{rule}", (("gte", "2024-06-01"), ("lt", "2024-06-02"))) \
        in (False, None)
    assert time.perf_counter() - began < 0.5


@pytest.mark.parametrize("rule", [
    "FREQ=DAILY;INTERVAL=7;BYDAY=TU",  # every seventh day from a Monday is a Monday
    "FREQ=MONTHLY;INTERVAL=12;BYMONTH=3",  # each January, in March only
    "FREQ=MONTHLY;BYMONTHDAY=-31;BYMONTH=2", "FREQ=YEARLY;BYWEEKNO=1;BYYEARDAY=200",
    "FREQ=MINUTELY;BYYEARDAY=-366;BYMONTH=12",  # 1 January of a leap year, in December
    "FREQ=SECONDLY;BYSECOND=5;BYMINUTE=5;BYHOUR=5;BYMONTHDAY=29;BYMONTH=2;BYDAY=MO",  # next in 2044
    "FREQ=HOURLY;BYWEEKNO=54", "FREQ=DAILY;INTERVAL=2;BYMONTHDAY=31;BYMONTH=4;COUNT=3"])
def test_no_rule_can_hang_a_search_by_date(monkeypatch: pytest.MonkeyPatch, rule: str) -> None:
    # dateutil steps through a rule's periods until one yields an occurrence, to the year 9999:
    # seconds a series and range, for ever a minutely one. Its search is cut short after a
    # number of steps (here fewer, to be quick), and the record's own date decides
    from vecbook import recurrence

    monkeypatch.setattr(recurrence, "MAX_STEPS", 5_000)
    series = f"DTSTART:20240101T100000Z\nRRULE:{rule}"
    began = time.perf_counter()
    for ranges in ((("gte", "2024-06-01"), ("lt", "2024-06-02")), (("gte", "2030-01-01"),), (("lt", "2024-01-01"),)):
        assert recurrence.series_matches(series, ranges) is None
    with pytest.raises(recurrence.TooRare):
        recurrence.first_occurrence(series)
    assert time.perf_counter() - began < 1


def test_a_rule_that_never_occurs_is_said_and_the_event_dated_by_its_start(tmp_path: Path) -> None:
    (tmp_path / "r.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:r\nSUMMARY:Sync\nDTSTART:20240101T100000Z\n"
        "RRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU\nEND:VEVENT\nEND:VCALENDAR\n")
    (record,), problems = load(tmp_path)
    assert "rrule" not in record.metadata and record.metadata["date"] == "2024-01-01T10:00:00+00:00"
    assert "Repeats" in record.text  # its rule is still said in words
    (problem,) = problems
    assert (problem.where.endswith("r.ics"), problem.line, problem.skipped) == (True, 6, False)
    assert ("the rule RRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU has no occurrence that can be "
            "found (none in 100,000 steps of the search): ") in problem.reason
    assert "dated by its start alone" in problem.reason


def test_a_rule_of_a_lunar_calendar_is_said_so(tmp_path: Path) -> None:
    # RFC 7529's RSCALE (Apple writes a Chinese lunar birthday so): the words said "Repeats yearly",
    # and the WARN "unknown parameter 'RSCALE'"; dateutil counts the Gregorian calendar alone
    (tmp_path / "l.ics").write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:l\nSUMMARY:奶奶生日\nDTSTART;VALUE=DATE:20240210\n"
        "RRULE:RSCALE=CHINESE;FREQ=YEARLY\nEND:VEVENT\nEND:VCALENDAR\n")
    (record,), (problem,) = load(tmp_path)
    assert record.metadata["recurrence"] == "Repeats yearly by the Chinese calendar" and "rrule" not in record.metadata
    assert problem.line == 6 and problem.reason.endswith(
        "the rule RRULE:RSCALE=CHINESE;FREQ=YEARLY repeats by the Chinese calendar (RSCALE), whose dates VecBook does "
        "not count: the event is dated by its start alone")


def test_an_invitation_saved_again_later_marks_the_earlier_one_superseded(tmp_path: Path) -> None:
    # each update of a meeting mails a new .ics (the same UID, a higher SEQUENCE): a folder of the
    # saved invitations held the 10:00 one and the 14:00 one alike, and the outdated 10:00 was
    # found as if it stood
    def invitation(sequence: int, hour: str, stamp: str) -> str:
        return (f"BEGIN:VCALENDAR\nMETHOD:REQUEST\nBEGIN:VEVENT\nUID:x\nSEQUENCE:{sequence}\nDTSTAMP:{stamp}\n"
                f"SUMMARY:Budget review\nDTSTART:20240506T{hour}0000Z\nEND:VEVENT\nEND:VCALENDAR\n")
    (tmp_path / "a.ics").write_text(invitation(0, "10", "20240501T090000Z"))
    (tmp_path / "b.ics").write_text(invitation(1, "14", "20240502T090000Z"))
    (tmp_path / "c.ics").write_text(invitation(0, "10", "20240503T090000Z").replace("UID:x", "UID:y"))
    records, _ = load(tmp_path)
    superseded = {r.file_path: r.metadata.get("superseded_by") for r in records}
    assert superseded == {"cal/a.ics": "cal/b.ics:3-9#x", "cal/b.ics": None, "cal/c.ics": None}
    # without a SEQUENCE the later DTSTAMP is the later version
    (tmp_path / "b.ics").write_text(invitation(0, "14", "20240502T090000Z"))
    (tmp_path / "c.ics").unlink()
    records, _ = load(tmp_path)
    assert [r.metadata.get("superseded_by") for r in records] == ["cal/b.ics:3-9#x", None]


@pytest.mark.parametrize("scale, words", [
    ("Hijri", "Repeats yearly by the Hijri calendar on day 10 of the month in Muharram"),
    ("Hebrew", "Repeats yearly by the Hebrew calendar on day 10 of the month in its month 1"),
])
def test_an_outlook_rule_of_another_calendar_is_said_so(tmp_path: Path, scale: str, words: str) -> None:
    # Outlook writes a Hijri or Hebrew series as X-MICROSOFT-RRULE (its calendar named once, at the
    # calendar's level): it read as a one-off event, with no Repeats line and no word of why
    (tmp_path / "o.ics").write_text(
        f"BEGIN:VCALENDAR\nX-MICROSOFT-CALSCALE:{scale}\nBEGIN:VEVENT\nUID:o\nSUMMARY:عاشوراء\n"
        "DTSTART;VALUE=DATE:20240716\nX-MICROSOFT-RRULE:FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=10\n"
        "END:VEVENT\nEND:VCALENDAR\n")
    (record,), (problem,) = load(tmp_path)
    assert record.metadata["recurrence"] == words and words in record.text and "rrule" not in record.metadata
    assert problem.line == 7 and problem.reason.endswith(
        f"the rule X-MICROSOFT-RRULE:FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=10 repeats by the {scale} calendar "
        "(X-MICROSOFT-CALSCALE), whose dates VecBook does not count: the event is dated by its start alone")


def test_a_count_a_search_by_date_cannot_follow_to_its_end_is_said(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    # a rule with COUNT is counted from its start (what comes before the range counts): an hourly
    # reminder begun decades ago was quietly never found this week, as if it had ended
    from vecbook import recurrence

    monkeypatch.setattr(recurrence, "MAX_OCCURRENCES", 100)  # (10,000: the same, slower)
    events = [("h", "DTSTART:19900101T090000Z", "FREQ=HOURLY;COUNT=500000"),
              ("w", "DTSTART:19900101T090000Z", "FREQ=WEEKLY;COUNT=10"),
              ("m", "DTSTART:20200101T090000Z", "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0;COUNT=3")]
    (tmp_path / "c.ics").write_text("BEGIN:VCALENDAR\r\n" + "".join(
        f"BEGIN:VEVENT\r\nUID:{uid}\r\nSUMMARY:{uid}\r\n{start}\r\nRRULE:{rule}\r\nEND:VEVENT\r\n"
        for uid, start, rule in events) + "END:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert all("rrule" in record.metadata for record in records)
    assert [(p.line, p.reason.split(": ", 1)[1]) for p in problems] == [
        (6, "the rule RRULE:FREQ=HOURLY;COUNT=500000 is counted from its start (it has a COUNT), and a search by date "
            "follows it only to 1990-01-05T12:00:00+00:00 (100 occurrences): a date range after that does not find "
            "the event")]
    # a minutely rule's leap days are counted a day at a time: all 3 are followed (the last in 2028)
    leap_2028 = (("gte", "2028-02-29"), ("lt", "2028-03-01"))
    assert recurrence.occurrence_within(records[2].metadata["rrule"], leap_2028).isoformat() == "2028-02-29T09:00:00+00:00"


def test_a_range_starting_after_a_days_last_time_skips_to_the_next_day() -> None:
    # a secondly rule's day looked at from a range's start late in it (23:46, its times 08:15-19:15)
    # counted every second to the next Monday's 08:15, past the search's steps: not found
    from vecbook import recurrence

    rule = "DTSTART:20240205T074600\nRRULE:FREQ=SECONDLY;BYHOUR=8,19;BYMINUTE=15;BYSECOND=0;BYDAY=MO"
    assert recurrence.occurrence_within(rule, (("gte", "2024-03-11T23:46"), ("lt", "2024-03-12T00:46"))) is None
    assert recurrence.occurrence_within(rule, (("gte", "2024-03-11T23:46"), ("lt", "2024-03-19"))).day == 18


def test_a_plain_rule_is_not_searched_when_the_calendar_is_read(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    # looking for each series' first occurrence (to say one that never occurs) cost ~0.3 ms a
    # series, a third more time to read a calendar of thousands: the plain shapes calendars
    # write occur in each period, and are not looked at
    from vecbook import recurrence

    searched: list[str] = []
    monkeypatch.setattr(recurrence, "first_occurrence", lambda rule: searched.append(rule))
    rules = ["FREQ=WEEKLY;BYDAY=MO,WE", "FREQ=MONTHLY;BYDAY=2TU", "FREQ=MONTHLY;BYMONTHDAY=15,-1", "FREQ=YEARLY",
             "FREQ=YEARLY;BYMONTH=6;BYDAY=-1TH", "FREQ=DAILY;COUNT=5", "FREQ=MONTHLY;BYDAY=5MO",
             "FREQ=DAILY;INTERVAL=7;BYDAY=TU", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"]
    events = "".join(f"BEGIN:VEVENT\r\nUID:{n}\r\nSUMMARY:x\r\nDTSTART:20240101T100000Z\r\nRRULE:{rule}\r\n"
                     "END:VEVENT\r\n" for n, rule in enumerate(rules))
    (tmp_path / "p.ics").write_text(f"BEGIN:VCALENDAR\r\n{events}END:VCALENDAR\r\n", encoding="utf-8", newline="")
    load(tmp_path)
    assert [rule.split("RRULE:")[1] for rule in searched] == rules[-3:]


def test_a_series_occurs_on_its_start_even_where_its_rule_names_another_day() -> None:
    # RFC 5545: the recurrence set is DTSTART's with the RRULE's and RDATE's (Apple and Google keep
    # a series begun on the Monday it was made, "every Tuesday and Thursday"; an event with RDATEs
    # occurs on its DTSTART too): dateutil counts only what the rule names, and a date search on
    # the record's own first day did not find it
    from vecbook.recurrence import occurrence_within, series_matches

    monday = (("gte", "2024-03-04"), ("lt", "2024-03-05"))
    for rule, later in (("DTSTART:20240304T100000Z\nRRULE:FREQ=WEEKLY;BYDAY=TU,TH", "5"),
                        ("DTSTART;TZID=Europe/Berlin:20240304T100000\nRDATE:20240311T090000Z", "11"),
                        ("DTSTART;VALUE=DATE:20240304\nRRULE:FREQ=MONTHLY;BYMONTHDAY=15", "15")):
        assert series_matches(rule, monday), rule
        assert occurrence_within(rule, monday).day == 4
        assert occurrence_within(rule, (("gte", "2024-03-05"), ("lt", "2024-03-30"))).day == int(later)
    assert occurrence_within("DTSTART;TZID=Europe/Berlin:20240304T100000\nRDATE:20240311T090000Z",
                             monday).isoformat() == "2024-03-04T10:00:00+01:00"
    # one its EXDATE takes out stays out
    assert not series_matches("DTSTART:20240304T100000Z\nRRULE:FREQ=WEEKLY;BYDAY=TU\nEXDATE:20240304T100000Z", monday)


def test_a_rule_dateutil_breaks_on_costs_only_its_series(tmp_path: Path) -> None:
    # dateutil raises IndexError on a 53rd Monday of a month beside a first (found by fuzzing):
    # the calendar's later events were lost, and every search by date failed
    from vecbook.recurrence import series_matches

    assert series_matches("DTSTART:20240404T060000Z\nRRULE:FREQ=MONTHLY;BYDAY=53MO,1MO",
                          (("gte", "2024-06-01"), ("lt", "2024-07-01"))) is None
    (tmp_path / "b.ics").write_text(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:b\r\nSUMMARY:Odd\r\nDTSTART:20240404T060000Z\r\n"
        "RRULE:FREQ=MONTHLY;BYDAY=53MO,1MO\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:c\r\nSUMMARY:Next\r\n"
        "DTSTART:20240405T060000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    records, problems = load(tmp_path)
    assert [r.metadata["title"] for r in records] == ["Odd", "Next"] and "rrule" not in records[0].metadata
    assert [p.line for p in problems] == [6]


def test_a_rare_rule_is_found_within_the_search() -> None:
    from vecbook.recurrence import first_occurrence, occurrence_within

    for rule in ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO",
                 "FREQ=WEEKLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=9",
                 "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=9;BYMINUTE=0",
                 "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0"):
        assert first_occurrence(f"DTSTART:20240301T090000Z\nRRULE:{rule}").date().isoformat() == "2044-02-29"
    # a minutely reminder each leap day begun in 1990, looked for this week and in 2028
    leap = "DTSTART:19900301T090000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0,30"
    assert occurrence_within(leap, (("gte", "2026-11-23"),)).isoformat() == "2028-02-29T09:00:00+00:00"
    assert occurrence_within(leap, (("gt", "2028-02-29T09:00:00+00:00"),)).isoformat() == "2028-02-29T09:30:00+00:00"


def test_an_event_of_several_rules_is_found_by_each_far_from_its_start() -> None:
    # an event of several RRULEs was counted out from its start, every rule's occurrences: one begun
    # in 1990 ran out of the search's 10,000 before 2024 (a weekday rule and a Saturday one), and an
    # hourly rule beside another was looked at hour by hour from its start, past the search's steps
    from vecbook.recurrence import occurrence_within

    def found(rule: str, day: str) -> str | None:
        when = occurrence_within(rule, (("gte", day), ("lt", f"{day}T23:59:59")))
        return when and when.isoformat()

    weekdays = ("DTSTART:19900101T090000Z\nRRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR\n"
                "RRULE:FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=30")
    assert [found(weekdays, f"2024-06-{day:02d}") for day in (7, 8, 9)] == [
        "2024-06-07T09:00:00+00:00", "2024-06-08T10:30:00+00:00", None]
    reminders = ("DTSTART:19950102T080000Z\nRRULE:FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=8\n"
                 "RRULE:FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=24")
    assert [found(reminders, day) for day in ("2028-02-29", "2027-12-24", "2027-12-25")] == [
        "2028-02-29T08:00:00+00:00", "2027-12-24T08:00:00+00:00", None]


def test_a_series_is_parsed_once_whatever_range_searches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # a series counted from near a range had its DTSTART moved in its text and the text parsed
    # again by dateutil for each new range: about a millisecond a series of each search by date
    import dateutil.rrule

    from vecbook.recurrence import occurrence_within

    rule = "DTSTART;TZID=Europe/Berlin:20080303T100000\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE\nEXDATE:20240603T080000Z"
    assert occurrence_within(rule, (("gte", "2023-06-01"),)).isoformat() == "2023-06-05T10:00:00+02:00"
    parsed: list[str] = []
    real = dateutil.rrule.rrulestr
    monkeypatch.setattr(dateutil.rrule, "rrulestr", lambda text, **kw: parsed.append(text) or real(text, **kw))
    assert occurrence_within(rule, (("gte", "2024-06-01"),)).isoformat() == "2024-06-05T10:00:00+02:00"
    assert occurrence_within(rule, (("gte", "2031-01-01"),)).isoformat() == "2031-01-01T10:00:00+01:00"
    assert parsed == []


def test_a_rule_with_a_day_it_can_name_still_occurs() -> None:
    from vecbook.recurrence import series_matches

    for rule, day in (("FREQ=MONTHLY;BYDAY=-60MO,1SA", "2024-06-01"), ("FREQ=MONTHLY;BYMONTHDAY=40,-1", "2024-06-30"),
                      ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "2024-06-28"),
                      ("FREQ=YEARLY;BYDAY=53MO", "2024-12-30"), ("FREQ=MONTHLY;BYDAY=5MO", "2024-07-29"),
                      ("FREQ=HOURLY;BYMINUTE=0,30;BYSETPOS=-1", "2024-06-02"),
                      ("FREQ=YEARLY;BYWEEKNO=1;BYMONTH=12;BYDAY=MO", "2024-12-30"),  # week 1 of 2025 begins in 2024
                      ("FREQ=YEARLY;BYWEEKNO=-1;BYMONTH=12;BYDAY=MO", "2024-12-23"),
                      ("FREQ=YEARLY;BYWEEKNO=23;BYMONTH=6;BYDAY=MO", "2024-06-03")):
        assert series_matches(f"DTSTART:20240101T100000Z\nRRULE:{rule}", (("gte", day), ("lt", f"{day}T23:59"))), rule


@pytest.mark.parametrize("until, last", [("20240326", True), ("20240326T090000", True), ("20240326T085959", False)])
def test_a_floating_series_ends_on_its_until_day_too(until: str, last: bool) -> None:
    # a series without a zone (a calendar that writes none) and an UNTIL written as a date ended
    # the day before: dateutil read the date as its midnight, before the day's 09:00
    from vecbook.recurrence import series_matches

    rule = f"DTSTART:20240305T090000\nRRULE:FREQ=WEEKLY;UNTIL={until}"
    assert series_matches(rule, (("gte", "2024-03-19"), ("lt", "2024-03-20"))) is True
    assert series_matches(rule, (("gte", "2024-03-26"), ("lt", "2024-03-27"))) is last
    assert series_matches(rule, (("gte", "2024-04-02"), ("lt", "2024-04-03"))) is False


@pytest.mark.parametrize(("rule", "since", "until", "found"), [
    # far past the start: counted from near the range, not from 1990
    ("DTSTART;TZID=Europe/Berlin:19900101T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO", "2300-01-01", "2300-01-08", True),
    ("DTSTART;TZID=Europe/Berlin:19900101T233000\nRRULE:FREQ=DAILY;INTERVAL=3", "2024-07-01", "2024-07-02", True),
    ("DTSTART;TZID=Europe/Berlin:19900101T233000\nRRULE:FREQ=DAILY;INTERVAL=3", "2024-07-02", "2024-07-03", False),
    ("DTSTART:19900101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=5", "2024-03-05T04:00:00+00:00", "2024-03-05T06:00:00+00:00",
     False),
    ("DTSTART:19900101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=5", "2024-03-05T00:00:00+00:00", "2024-03-05T01:00:00+00:00",
     False),
    ("DTSTART:19900101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=5", "2024-03-05T01:30:00+00:00", "2024-03-05T02:30:00+00:00",
     True),
    ("DTSTART;VALUE=DATE:19920229\nRRULE:FREQ=YEARLY", "2024-02-29", "2024-02-29", True),  # a leap day: not moved
    ("DTSTART;VALUE=DATE:19920229\nRRULE:FREQ=YEARLY", "2023-01-01", "2023-12-31", False),
    ("DTSTART;VALUE=DATE:19900131\nRRULE:FREQ=MONTHLY", "2024-04-01", "2024-04-30", False),  # no April 31st
    ("DTSTART;VALUE=DATE:19900115\nRRULE:FREQ=MONTHLY;INTERVAL=5", "2024-03-01", "2024-03-31", True),
    ("DTSTART;VALUE=DATE:19900115\nRRULE:FREQ=MONTHLY;INTERVAL=5", "2024-04-01", "2024-07-31", False),
    ("DTSTART;VALUE=DATE:19900115\nRRULE:FREQ=DAILY;COUNT=3", "2024-01-01", "2024-12-31", False),
    ("DTSTART;VALUE=DATE:19900612\nRRULE:FREQ=YEARLY\nEXDATE;VALUE=DATE:20240612", "2024-01-01", "2024-12-31", False),
    # an all-day series' extra dates (RDATE;VALUE=DATE, which dateutil does not read as written)
    ("DTSTART;VALUE=DATE:20240105\nRRULE:FREQ=WEEKLY;COUNT=3\nRDATE;VALUE=DATE:20240601", "2024-06-01", "2024-06-01",
     True),
    ("DTSTART;VALUE=DATE:20240105\nRRULE:FREQ=WEEKLY;COUNT=3\nRDATE;VALUE=DATE:20240601", "2024-01-12", "2024-01-12",
     True),
    ("DTSTART;VALUE=DATE:20240105\nRRULE:FREQ=WEEKLY;COUNT=3\nRDATE;VALUE=DATE:20240601", "2024-02-01", "2024-05-31",
     False),
    ("DTSTART;VALUE=DATE:20240105\nRDATE;VALUE=DATE:20240601,20240701", "2024-07-01", "2024-07-01", True),
    # an hourly or finer rule that names hours or days: looked for a day at a time, not second by
    # second from the start (a few days of a secondly rule took all 100,000 steps of a search)
    ("DTSTART:19900101T090000Z\nRRULE:FREQ=SECONDLY;BYHOUR=9;BYMINUTE=0;BYSECOND=0", "2026-11-23", "2026-11-29", True),
    ("DTSTART:19900101T090000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0", "2025-01-01",
     "2028-12-31", True),
    ("DTSTART:19900101T090000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0", "2025-01-01",
     "2027-12-31", False),
    ("DTSTART;TZID=Europe/Berlin:19950107T083000\nRRULE:FREQ=MINUTELY;INTERVAL=45;BYDAY=SA;BYHOUR=9,10\n"
     "RDATE:20261125T120000Z", "2026-11-25", "2026-11-25", True),
    ("DTSTART;TZID=Europe/Berlin:19950107T083000\nRRULE:FREQ=MINUTELY;INTERVAL=45;BYDAY=SA;BYHOUR=9,10",
     "2026-11-23", "2026-11-27", False),
    ("DTSTART;TZID=Europe/Berlin:19950107T083000\nRRULE:FREQ=MINUTELY;INTERVAL=45;BYDAY=SA;BYHOUR=9,10;"
     "UNTIL=20261101T000000Z", "2026-11-23", "2026-11-29", False),
])
def test_a_series_is_counted_out_from_near_the_range(rule: str, since: str, until: str, found: bool) -> None:
    from vecbook.recurrence import series_matches

    end = "lte" if "T" in until else "lt"
    if end == "lt":
        from datetime import date, timedelta
        until = (date.fromisoformat(until) + timedelta(days=1)).isoformat()
    assert series_matches(rule, (("gte", since), (end, until))) is found


VCALENDAR_1 = (
    "BEGIN:VCALENDAR\r\nVERSION:1.0\r\nPRODID:-//Nokia Mobile Phones//NONSGML v1.0//EN\r\nTZ:+01\r\n"
    "BEGIN:VEVENT\r\nUID:n1\r\n"
    "SUMMARY;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Caf=C3=A9 mit J=C3=BCrgen; Planung, Q2\r\n"
    "DESCRIPTION;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Erste Zeile=0D=0AZweite Zeile, die umbr=\r\n"
    "ochen wird\r\n"
    "LOCATION;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:B=FCro 3\r\n"
    "DTSTART:20240305T090000Z\r\nDTEND:20240305T100000Z\r\nRRULE:W1 TU TH #10\r\n"
    "EXDATE:20240312T090000Z;20240314T090000Z\r\n"
    "ATTENDEE;ROLE=OWNER;STATUS=CONFIRMED:Ana Lima <ana@example.com>\r\n"
    "ATTENDEE;ROLE=ATTENDEE:bo@example.com\r\nATTENDEE;CN=Cy Li:mailto:cy@example.com\r\n"
    "AALARM:20240305T084500Z;;1;\r\nX-EPOCAGENDAENTRYTYPE:APPOINTMENT\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nSUMMARY:Geburtstag Oma\r\nDTSTART:19500612T000000\r\nDTEND:19500612T235900\r\n"
    "RRULE:YM1 6 #0\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nSUMMARY:Miete\r\nDTSTART:20240101T080000\r\nRRULE:MD1 LD 1 #0\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nSUMMARY:Stammtisch\r\nDTSTART:20240104T190000\r\nRRULE:MP1 1+ 1- TH 20241231T000000\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nSUMMARY:Seltsam\r\nDTSTART:20240104T190000\r\nRRULE:W1 XX $ #3\r\nEND:VEVENT\r\n"
    "BEGIN:VTODO\r\nSUMMARY:Reifen wechseln\r\nDUE:20241015T000000\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")


def test_a_vcalendar_1_file_of_an_old_phone_reads(tmp_path: Path) -> None:
    # older phones, Lotus Notes and some Outlook versions export vCalendar 1.0 (.vcs): its texts in
    # quoted-printable, its rules in their own words (W1 TU TH #10), EXDATEs split by ";", attendees
    # as "Name <address>". A .vcs file was not read at all, without a word
    from vecbook.recurrence import series_matches

    (tmp_path / "Kalender.vcs").write_bytes(VCALENDAR_1.encode("utf-8"))
    assert detect_format(collection(tmp_path / "Kalender.vcs")) == "ics"
    records, problems = load(tmp_path)
    meeting, birthday, rent, regulars, odd, todo = records
    assert meeting.metadata["title"] == "Café mit Jürgen; Planung, Q2"
    assert meeting.metadata["location"] == "Büro 3"
    assert meeting.text.endswith("Erste Zeile\nZweite Zeile, die umbrochen wird")
    assert meeting.metadata["recurrence"] == "Repeats weekly on Tuesday and Thursday 10 times"
    assert "Except on: 2024-03-12 10:00 (UTC+01:00), 2024-03-14 10:00 (UTC+01:00)" in meeting.text  # TZ:+01
    assert meeting.metadata["organizer"] == "Ana Lima"
    assert meeting.metadata["emails"] == ["ana@example.com", "bo@example.com", "cy@example.com"]
    assert "Attendees: bo@example.com, Cy Li" in meeting.text
    assert meeting.citation == "cal/Kalender.vcs:5-20#n1"
    assert birthday.metadata["recurrence"] == "Repeats yearly in June"
    # a phone writes a birthday from 00:00 to 23:59 (vCalendar has no dates alone): a day
    assert (birthday.metadata["date"], birthday.metadata["all_day"]) == ("1950-06-12", True)
    assert birthday.text.splitlines()[1] == "When: 1950-06-12"
    assert series_matches(birthday.metadata["rrule"], (("gte", "2024-06-01"), ("lt", "2024-07-01")))
    assert rent.metadata["recurrence"] == "Repeats monthly on day 1 and the last day of the month"
    assert series_matches(regulars.metadata["rrule"], (("gte", "2024-05-30"), ("lt", "2024-05-31")))  # the last Thu
    assert "rrule" not in odd.metadata and todo.metadata["kind"] == "to-do"
    (problem,) = problems
    assert problem.line == 40 and "vCalendar 1.0 rule 'W1 XX $ #3' not read" in problem.reason


@pytest.mark.parametrize("zone, summer, winter, utc", [
    # an old Nokia's or Outlook's: its standard offset, and summer time's for each year
    ("TZ:+01\r\nDAYLIGHT:TRUE;+02;20240331T020000;20241027T030000;;\r\n"
     "DAYLIGHT:TRUE;+02;20250330T020000;20251026T030000;;\r\n", "+02:00", "+01:00", "10:00 (Europe/"),
    ("TZ:-05:00\r\nDAYLIGHT:TRUE; -04; 20240310T020000; 20241103T020000; EST; EDT\r\n", "-04:00", "-05:00", "04:00 (America/"),
    ("TZ:+0530\r\nDAYLIGHT:FALSE\r\n", "+05:30", "+05:30", "13:30 (UTC+05:30)"),  # a Palm's: no summer time
])
def test_a_vcalendar_1_files_zone_places_its_local_times(tmp_path: Path, zone: str, summer: str, winter: str,
                                                          utc: str) -> None:
    # vCalendar 1.0 says its zone in TZ and DAYLIGHT lines: its times written without Z were read
    # as floating, without an offset, and a weekly series did not keep its local time in summer
    from vecbook.recurrence import occurrence_within

    (tmp_path / "p.vcs").write_text(
        f"BEGIN:VCALENDAR\r\nVERSION:1.0\r\n{zone}BEGIN:VEVENT\r\nSUMMARY:Chor\r\nDTSTART:20240110T190000\r\n"
        "DTEND:20240110T210000\r\nRRULE:W1 WE #0\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Zahnarzt\r\n"
        "DTSTART:20240710T090000\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Call\r\nDTSTART:20240710T080000Z\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n", encoding="utf-8", newline="")
    (choir, dentist, call), problems = load(tmp_path)
    assert problems == []
    assert choir.metadata["date"] == f"2024-01-10T19:00:00{winter}"
    assert dentist.metadata["date"] == f"2024-07-10T09:00:00{summer}"
    july = occurrence_within(choir.metadata["rrule"], (("gte", "2024-07-10"), ("lt", "2024-07-11")))
    assert july.isoformat() == f"2024-07-10T19:00:00{summer}"
    assert utc in call.text.splitlines()[1]  # a time in UTC on the clock its people saw


def test_a_vcalendar_1_summer_time_no_zone_keeps_is_said(tmp_path: Path) -> None:
    (tmp_path / "x.vcs").write_text(
        "BEGIN:VCALENDAR\r\nVERSION:1.0\r\nTZ:+01\r\nDAYLIGHT:TRUE;+02;20240501T020000;20240601T030000;;\r\n"
        "BEGIN:VEVENT\r\nSUMMARY:x\r\nDTSTART:20240510T090000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", newline="")
    (record,), (problem,) = load(tmp_path)
    assert record.metadata["date"] == "2024-05-10T09:00:00+01:00"
    assert (problem.line, problem.reason.split(": ", 1)[1]) == (
        4, "vCalendar 1.0 summer time 'DAYLIGHT:TRUE;+02;20240501T020000;20240601T030000;;' is no known zone's: its "
           "times are read at UTC+01:00 all year")


def test_a_vcalendar_1_text_in_quoted_printable_without_a_charset_reads(tmp_path: Path) -> None:
    # Outlook 2003 wrote its .vcs texts in quoted-printable Windows-1252 without a CHARSET: each
    # accented letter was U+FFFD
    (tmp_path / "o.vcs").write_text(
        "BEGIN:VCALENDAR\r\nPRODID:-//Microsoft Corporation//Outlook 11.0 MIMEDIR//EN\r\nVERSION:1.0\r\n"
        "BEGIN:VEVENT\r\nDTSTART:20240305T090000Z\r\nSUMMARY;ENCODING=QUOTED-PRINTABLE:R=E9union =E0 l'h=F4tel\r\n"
        "LOCATION;ENCODING=QUOTED-PRINTABLE:Z=C3=BCrich\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", encoding="ascii",
        newline="")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert (record.metadata["title"], record.metadata["location"]) == ("Réunion à l'hôtel", "Zürich")

