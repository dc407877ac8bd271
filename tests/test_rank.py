"""Filters (every operator), fusion formulas, and filters applied before the top-k cut."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import vecbook


def record(rid: str, source: str = "files", path: str = "a.txt", **metadata: Any) -> vecbook.Record:
    return vecbook.Record(text=rid, file_path=path, line_number=1, end_line=1, metadata=metadata,
                          source=source, id=rid, citation=rid, content=rid)


RECORDS = [
    record("r0", path="journal/2024/a.txt", Author="Ana", date="2024-09-01", Priority="2", Tags="work, budget"),
    record("r1", path="journal/b.txt", author="Ben", date="2024-08-15", priority="10", tags="home"),
    record("r2", path="notes.txt", author="ana", date="2023-12-31", priority="1.5"),
    record("r3", source="slack", path="s.db", author="Cy", date="2024-10-02", priority=7,
           tags=["work", "urgent"], user={"name": "Dee", "team": {"id": 5}}, done=True),
    record("r4", source="slack", path="s.db", channel="general"),
]
# Lists as `.txt` list headers (Tags, Participants...) and JSON metadata give them.
LISTS = [
    record("m0", Participants=["Ana Lopez", "Ben"], tags=["homework", "quick"]),
    record("m1", Participants=["Anabel"], tags=["work", "c++"]),
    record("m2", participants="Ana Lopez, Ben"),  # a plain string: substring semantics
]


def matching(filters: dict[str, Any]) -> list[str]:
    mask = vecbook.filters.FilterColumns(RECORDS).mask(vecbook.filters.parse_filters(filters))
    return [r.id for r, keep in zip(RECORDS, mask) if keep]


@pytest.mark.parametrize("filters, expected", [
    ({"author": "ana"}, ["r0", "r2"]),                        # keys and values match case-insensitively
    ({"AUTHOR__exact": "ANA"}, ["r0", "r2"]),
    ({"metadata.author": "Ben"}, ["r1"]),                     # metadata. prefix is a synonym
    ({"author__ne": "ana"}, ["r1", "r3", "r4"]),              # a missing key is "not equal"
    ({"priority__gt": 2}, ["r1", "r3"]),                      # numbers compare as numbers: "10" > 2
    ({"priority__gte": "2"}, ["r0", "r1", "r3"]),
    ({"priority__lt": 2}, ["r2"]),
    ({"priority__lte": 1.5}, ["r2"]),
    ({"date__gte": "2024-09-01"}, ["r0", "r3"]),              # ISO dates compare as strings
    ({"date__lt": "2024"}, ["r2"]),
    ({"author__in": ["Ben", "cy"]}, ["r1", "r3"]),
    ({"tags__contains": "work"}, ["r0", "r3"]),               # substring of a string, member of a list
    ({"tags__contains": "urg"}, []),                          # list membership is exact
    ({"author__startswith": "a"}, ["r0", "r2"]),
    ({"channel__exists": True}, ["r4"]),
    ({"tags__exists": False}, ["r2", "r4"]),
    ({"user.name": "dee"}, ["r3"]),                           # nested JSON paths
    ({"metadata.user.team.id__gte": 5}, ["r3"]),
    ({"user__contains": "team"}, ["r3"]),                     # a dict contains its keys
    ({"done": True}, ["r3"]),
    ({"done": "true"}, ["r3"]),
    ({"source": "slack"}, ["r3", "r4"]),
    ({"source__ne": "slack"}, ["r0", "r1", "r2"]),
    ({"file_path": "journal/*"}, ["r0", "r1"]),               # globs; * crosses folders
    ({"file_path": "journal/**"}, ["r0", "r1"]),
    ({"file_path__in": ["notes.txt", "*.db"]}, ["r2", "r3", "r4"]),
    ({"author": "ana", "date__gte": "2024-01-01"}, ["r0"]),   # conditions combine with AND
])
def test_filter_operators(filters: dict[str, Any], expected: list[str]) -> None:
    assert matching(filters) == expected


@pytest.mark.parametrize("filters, expected", [
    ({"tags__in": ["quick", "leftovers"]}, ["m0"]),          # any member equals any listed value
    ({"tags": "QUICK"}, ["m0"]),                               # equal: a member equals it
    ({"participants__contains": "ana"}, ["m0", "m2"]),         # a whole word of a member ("Ana Lopez")
    ({"participants__contains": "ana lopez"}, ["m0", "m2"]),
    ({"participants__contains": "anab"}, []),                   # not part of a word ("Anabel")
    ({"tags__contains": "work"}, ["m1"]),                      # "homework" does not hold the word "work"
    ({"tags__contains": "c++"}, ["m1"]),
    ({"participants__startswith": "ben"}, ["m0"]),             # a member starts with it
    ({"tags__ne": "work"}, ["m0", "m2"]),                      # no member equals it
])
def test_list_values_match_member_by_member(filters: dict[str, Any], expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(LISTS).mask(vecbook.filters.parse_filters(filters))
    assert [r.id for r, keep in zip(LISTS, mask) if keep] == expected


# A tag as Obsidian and Bear write it in the text (#work) is kept without its #, while a `.txt`
# header `Tags: #work, #日本` keeps what was typed: a tag filter finds both, typed with or without it.
TAGGED = [record("t0", tags=["#work", "#日本", "#C#"]), record("t1", tags=["work", "日本", "C#"]),
          record("t2", tags=["homework", "#旅行"]), record("t3", tags="#work, #home"), record("t4")]


@pytest.mark.parametrize("filters, expected", [
    ({"tags": "work"}, ["t0", "t1"]),
    ({"tags": "#work"}, ["t0", "t1"]),
    ({"Tags": "#WORK"}, ["t0", "t1"]),
    ({"tags__contains": "#日本"}, ["t0", "t1"]),
    ({"tags__contains": "日本"}, ["t0", "t1"]),
    ({"tags__in": ["#旅行", "c#"]}, ["t0", "t1", "t2"]),             # only a leading # is dropped
    ({"tags__startswith": "#wo"}, ["t0", "t1", "t3"]),
    ({"tags__ne": "#work"}, ["t2", "t3", "t4"]),
    ({"tags__contains": "#home"}, ["t3"]),                            # a string: its text, # and all
])
def test_a_tag_filter_matches_tags_written_with_or_without_their_hash(filters: dict[str, Any],
                                                                      expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(TAGGED).mask(vecbook.filters.parse_filters(filters))
    assert [r.id for r, keep in zip(TAGGED, mask) if keep] == expected


# Front matter is read as YAML 1.2, as Obsidian shows it: `draft: yes` is the text "yes", and a
# `.txt` header `Draft: on` is text too; a filter asking for a boolean finds YAML 1.1's words for one.
FLAGS = [record("f0", draft="yes"), record("f1", draft="No"), record("f2", draft=" ON"), record("f3", draft="off"),
         record("f4", draft=True), record("f5", draft=False), record("f6", draft="maybe"), record("f7"),
         record("f8", draft="TRUE"), record("f9", draft=["yes", "später"]), record("f10", draft="oui")]


@pytest.mark.parametrize("filters, expected", [
    ({"draft": True}, ["f0", "f2", "f4", "f8", "f9"]),
    ({"draft": "true"}, ["f0", "f2", "f4", "f8", "f9"]),           # the CLI's --filter draft=true is text
    ({"draft": "True "}, ["f0", "f2", "f4", "f8", "f9"]),
    ({"draft": False}, ["f1", "f3", "f5"]),
    ({"draft__exact": "false"}, ["f1", "f3", "f5"]),
    ({"draft__ne": True}, ["f1", "f3", "f5", "f6", "f7", "f10"]),
    ({"draft__in": [False, "maybe"]}, ["f1", "f3", "f5", "f6"]),
    ({"draft": "yes"}, ["f0", "f9"]),                               # a text filter keeps matching text
    ({"draft": "no"}, ["f1"]),
    ({"draft": "oui"}, ["f10"]),                                    # only YAML 1.1's English words are booleans
])
def test_a_boolean_filter_finds_yes_no_on_off_written_as_text(filters: dict[str, Any], expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(FLAGS).mask(vecbook.filters.parse_filters(filters))
    assert [r.id for r, keep in zip(FLAGS, mask) if keep] == expected


# SQLite has no boolean type: apps keep a flag as the integer 1 or 0 (Bear's ZTRASHED, Joplin's
# is_todo), and some as the text '1' or '0'; a filter asking for a boolean finds them, while a
# number asked for (count=1) stays a number.
NUMBERED = [record("n0", done=1), record("n1", done=0), record("n2", done="1"), record("n3", done="0 "),
            record("n4", done=2), record("n5", done=1.0), record("n6", done=True), record("n7", count=1),
            record("n8", count="1"), record("n9", count=10), record("n10", done="Y"), record("n11", done="n"),
            record("n12", done="t"), record("n13", done="F")]  # a Y/N flag; PostgreSQL's t and f, as a dump copies them


@pytest.mark.parametrize("filters, expected", [
    ({"done": True}, ["n0", "n2", "n5", "n6", "n10", "n12"]),
    ({"done": "true"}, ["n0", "n2", "n5", "n6", "n10", "n12"]),
    ({"done": False}, ["n1", "n3", "n11", "n13"]),
    ({"done__ne": "true"}, ["n1", "n3", "n4", "n7", "n8", "n9", "n11", "n13"]),
    ({"done": "Y"}, ["n10"]),                                # a text filter keeps matching text
    ({"done": "1"}, ["n0", "n2", "n5"]),                     # a number asked for: numbers alone
    ({"count": "1"}, ["n7", "n8"]),
    ({"count": 1}, ["n7", "n8"]),
    ({"count__gte": 1}, ["n7", "n8", "n9"]),
])
def test_a_boolean_filter_finds_the_1_and_0_sqlite_keeps_flags_as(filters: dict[str, Any], expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(NUMBERED).mask(vecbook.filters.parse_filters(filters))
    assert [r.id for r, keep in zip(NUMBERED, mask) if keep] == expected


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# macOS writes file names decomposed (NFD), and some apps text; people type filters composed.
DECOMPOSED = [
    record("d0", path=nfd("Café/서울 일기.txt"), author=nfd("José Núñez"), tags=[nfd("été"), "work"]),
    record("d1", path="Café/plain.txt", author="José Núñez", tags=["été"]),
    record("d2", path="other.txt", author="Jose Nunez"),
]


@pytest.mark.parametrize("filters, expected", [
    ({"file_path": "Café/*"}, ["d0", "d1"]),
    ({"file_path": nfd("Café/*")}, ["d0", "d1"]),
    ({"file_path": "*서울*"}, ["d0"]),
    ({"file_path__in": ["Café/서울 일기.txt"]}, ["d0"]),
    ({"author": "josé núñez"}, ["d0", "d1"]),
    ({"author": nfd("José Núñez")}, ["d0", "d1"]),
    ({"author__contains": "Núñez"}, ["d0", "d1"]),
    ({"author__startswith": "José"}, ["d0", "d1"]),
    ({"tags": "été"}, ["d0", "d1"]),
    ({"tags__contains": "été"}, ["d0", "d1"]),
])
def test_decomposed_paths_and_values_match_filters_typed_either_way(filters: dict[str, Any],
                                                                   expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(DECOMPOSED).mask(vecbook.filters.parse_filters(filters))
    assert [r.id for r, keep in zip(DECOMPOSED, mask) if keep] == expected


def test_a_citation_typed_composed_finds_a_record_of_a_decomposed_file_name() -> None:
    path = nfd("Café/서울 일기.txt")
    records = [vecbook.Record(text="t", file_path=path, line_number=3, end_line=9, metadata={}, source="files",
                              id=f"{path}:3", citation=f"{path}:3-9", content="t")]
    columns = vecbook.filters.FilterColumns(records)
    for ref in ("Café/서울 일기.txt:3-9", "Café/서울 일기.txt:3", "Café/서울 일기.txt:5", f"{path}:5"):
        assert columns.find(ref) == 0, ref


@pytest.mark.parametrize("value", [3, -2.5, "10", "1e3", "2024-01-31", "2024-01-31T09:30", "2024-01-31 09:30:15",
                                   "2024-01-31T09:30:00.5Z", "2024-01-31T09:30:00+01:00", "2024-01-31T09:30+0100"])
def test_range_filters_take_numbers_and_iso_dates(value: Any) -> None:
    assert vecbook.filters.parse_filters({"date__gte": value})[0].value == value


def test_moments_with_offsets_compare_as_moments_and_a_span_counts_back_in_local_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    from datetime import datetime, timezone

    # 23:30 in Los Angeles on March 5 is 07:30 UTC on March 6: their text orders them the other way.
    late = "2024-03-05T23:30:00-08:00"
    assert vecbook.filters.value_matches(late, "gte", "2024-03-06T07:00:00+00:00")
    assert not vecbook.filters.value_matches(late, "gte", "2024-03-06T08:00:00+00:00")
    assert vecbook.filters.value_matches("2024-03-06T07:30:00Z", "lte", late)  # the same moment
    assert vecbook.filters.value_matches("2024-03-05T23:30:00", "gte", "2024-03-05T23:00:00+00:00")  # no offset: text
    # "12h" counts back in this machine's local time, with its offset, which a chat's times
    # (written in local time, without one) compare with as text.
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        now = datetime(2024, 3, 6, 7, 30, tzinfo=timezone.utc).timestamp()
        [since] = vecbook.filters.convenience_conditions(since="12h", now=now)
        assert since.value == "2024-03-05T11:30:00-08:00"
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("since, until, first, end", [
    ("2024-03", "2024-03", ("gte", "2024-03-01"), ("lt", "2024-04-01")),     # a month, as people say "since March"
    ("2024", "2024", ("gte", "2024-01-01"), ("lt", "2025-01-01")),           # a year
    (" 2024-12 ", "2024-12", ("gte", "2024-12-01"), ("lt", "2025-01-01")),
    ("2024-02", "2024-02-10", ("gte", "2024-02-01"), ("lt", "2024-02-11")),
    ("2023-12-24", "2024-02", ("gte", "2023-12-24"), ("lt", "2024-03-01")),  # to February's last day, 29th included
    ("9999-12", "9999", ("gte", "9999-12-01"), ("lte", "9999-12-31T23:59:59.999999")),  # no day after it to name
])
def test_since_and_until_take_a_month_or_a_year_whole(since: str, until: str, first: tuple[str, str],
                                                      end: tuple[str, str]) -> None:
    start, stop = vecbook.filters.convenience_conditions(since=since, until=until)
    assert ((start.op, start.value), (stop.op, stop.value)) == (first, end)
    assert (start.shorthand, stop.shorthand) == (f"since {since}", f"until {until}")


def test_python_dates_and_times_are_taken_as_the_iso_text_they_stand_for() -> None:
    from datetime import date, datetime, timedelta, timezone

    start, stop = vecbook.filters.convenience_conditions(since=date(2024, 3, 1), until=date(2024, 3, 31))
    assert ((start.value, start.shorthand), (stop.op, stop.value)) == (("2024-03-01", "since 2024-03-01"),
                                                                       ("lt", "2024-04-01"))  # the whole day
    pacific = timezone(timedelta(hours=-8))
    [moment] = vecbook.filters.convenience_conditions(until=datetime(2024, 3, 5, 23, 30, tzinfo=pacific))
    assert (moment.op, moment.value) == ("lte", "2024-03-05T23:30:00-08:00")
    assert matching({"date__gte": date(2024, 9, 1)}) == ["r0", "r3"]
    assert matching({"date__lt": datetime(2024, 1, 1, 0, 0)}) == ["r2"]
    assert matching({"date__in": [date(2024, 8, 15), "2024-09-01"]}) == ["r0", "r1"]


@pytest.mark.parametrize("since, until, first, end", [
    ("2024-3-5", "2024-3-5", "2024-03-05", "2024-03-06"),            # ISO without its zeros
    ("2024/03/05", "5 March 2024", "2024-03-05", "2024-03-06"),      # dates as people write them
    ("05.03.2024", "March 5, 2024", "2024-03-05", "2024-03-06"),     # (a dot: the day first)
    ("25/12/2023", "2024-2", "2023-12-25", "2024-03-01"),            # a day past 12 tells the order
    ("March 2024", "März 2024", "2024-03-01", "2024-04-01"),         # a month by its name, any language
    ("today", "today", "2024-03-06", "2024-03-07"),                  # words, counted back from today (a Wednesday)
    ("yesterday", "Yesterday", "2024-03-05", "2024-03-06"),
    ("last week", "last week", "2024-02-26", "2024-03-04"),          # Monday to Sunday
    ("this month", "this year", "2024-03-01", "2025-01-01"),
    ("2 weeks ago", "a month ago", "2024-02-21", "2024-02-06"),      # that day
    ("last summer", "last  summer", "2023-06-01", "2023-09-01"),
    ("march", "in February", "2024-03-01", "2024-03-01"),
    ("Tuesday", "last tuesday", "2024-03-05", "2024-03-06"),
    ("March 5", "5 March", "2024-03-05", "2024-03-06"),              # a day without its year: the latest one
    ("2024年3月5日", "2024년 3월 5일", "2024-03-05", "2024-03-06"),   # Chinese, Japanese and Korean: the year first
    ("2023年12月", "3月5日", "2023-12-01", "2024-03-06"),
    ("5 de marzo de 2024", "março de 2024", "2024-03-05", "2024-04-01"),  # Spanish, Portuguese, Catalan: "de"
    ("Dec 24th", "24. Dezember", "2023-12-24", "2023-12-25"),
    ("tomorrow", "tomorrow", "2024-03-07", "2024-03-08"),            # ahead, for a calendar's coming events
    ("next week", "next week", "2024-03-11", "2024-03-18"),
    ("next month", "next year", "2024-04-01", "2026-01-01"),
    ("in 3 days", "in two weeks", "2024-03-09", "2024-03-21"),
    ("the day before yesterday", "day after tomorrow", "2024-03-04", "2024-03-09"),
])
def test_since_and_until_read_dates_and_date_words_as_people_type_them(since: str, until: str, first: str,
                                                                       end: str) -> None:
    from datetime import datetime

    now = datetime(2024, 3, 6, 12, 0).timestamp()  # this machine's local noon
    try:
        start, stop = vecbook.filters.convenience_conditions(since=since, now=now) + \
            vecbook.filters.convenience_conditions(until=until, now=now)
    except vecbook.QueryError as error:
        pytest.fail(str(error))
    assert ((start.op, start.value), (stop.op, stop.value)) == (("gte", first), ("lt", end))
    assert (start.shorthand, stop.shorthand) == (f"since {since}", f"until {until}")


def test_a_leap_day_without_its_year_is_the_latest_one_years_back_too() -> None:
    from datetime import datetime

    now = datetime(2026, 11, 28, 12, 0).timestamp()  # 2026 and 2025 have no 29 February
    [since] = vecbook.filters.convenience_conditions(since="29 February", now=now)
    assert since.value == "2024-02-29"


def test_the_calendars_last_month_by_its_name_is_read_as_its_iso_form() -> None:
    def values(when: str) -> list[tuple[str, str]]:
        return [(c.op, c.value) for c in vecbook.filters.convenience_conditions(since=when, until=when)]

    assert values("December 9999") == values("9999年12月") == values("9999-12")


@pytest.mark.parametrize("typed, short", [
    ("30 days", "30d"), ("last 7 days", "7d"), ("past 2 weeks", "2w"), ("3 Months", "3m"), ("1 year", "1y"),
    ("12 hours", "12h"), ("the last 24 hours", "24h"), ("2 wks", "2w"),
])
def test_a_span_back_from_now_may_be_written_in_words(typed: str, short: str) -> None:
    from datetime import datetime

    now = datetime(2024, 3, 6, 12, 0).timestamp()
    [since] = vecbook.filters.convenience_conditions(since=typed, now=now)
    assert since.value == vecbook.filters.convenience_conditions(since=short, now=now)[0].value


@pytest.mark.parametrize("since, until, message", [
    ("2024-13", None, "since must be an ISO date (2024-01-31), a month (2024-03) or a year (2024), a date-time "
                      "(2024-01-31T09:00) or a span back from now (30d, 2w, 6m, 1y, 12h); got '2024-13'"),
    (None, "2024-00", "until must be an ISO date"),
    ("0000", None, "got '0000'"),
    # the words ahead too, for a calendar's coming events: "next weekend" did not say "next week" is read
    ("Märzz 2024", None, "got 'Märzz 2024' (read too: 5 March 2024, 2024/3/5, yesterday, last week, "
                         "2 weeks ago, March, tomorrow, next week, in 3 days)"),
    ("05/03/2024", None, "since 05/03/2024 could be the day 2024-03-05 or 2024-05-03 (the day or the "
                     "month first): write it year first"),
    ("last fortnight", None, "got 'last fortnight'"),
    ("2024-02-30", None, "got '2024-02-30'"), (None, "0000-01-01", "got '0000-01-01'"),  # ISO's form, no day
    ("00/05/2024", None, "got '00/05/2024'"), (None, "05/00/2024", "got '05/00/2024'"),  # a day or month 0
    ("3000y", None, "since 3000y reaches back before the year 1: give a shorter span or a date"),
    ("March 0000", None, "got 'March 0000'"), (None, "0000年3月", "got '0000年3月'"),  # no year 0
    (None, "99999999999999999999 days", "until 99999999999999999999 days reaches back before the year 1"),
    ("2024-04", "2024-03", "since 2024-04 is later than until 2024-03: no record can be dated between them"),
])
def test_a_month_or_year_that_is_none_is_an_error(since: str | None, until: str | None, message: str) -> None:
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.convenience_conditions(since=since, until=until)
    assert message in str(error.value)


@pytest.mark.parametrize("value", ["abc", "", "2024-1-5", "31/01/2024", "2024-01-31T9", "2024-01", True])
def test_any_other_range_value_is_an_error_saying_what_is_accepted(value: Any) -> None:
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.parse_filters({"priority__gt": value})
    assert str(error.value) == ("filter 'priority__gt' needs a number or an ISO date such as 2024-01-31 or "
                                f"2024-01-31T09:30:00+01:00, got {value!r}")


@pytest.mark.parametrize("key", ["date__gte", "end_date__lt", "Date__lte"])
def test_a_month_compared_with_a_date_is_pointed_at_since_and_until(key: str) -> None:
    # since and until take a month; an assistant that wrote one in filters ("date__gte": "2024-03")
    # was told only what a date looks like, and not where a month is taken.
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.parse_filters({key: "2024-03"})
    assert str(error.value) == (f"filter '{key}' needs a number or an ISO date such as 2024-01-31 or "
                                "2024-01-31T09:30:00+01:00, got '2024-03'; a month or a year goes in since or "
                                "until (since=\"2024-03\", until=\"2024-03\" for the whole month)")


@pytest.mark.parametrize("filters, message", [
    ({"date__after": "x"}, "unknown filter operator 'after' in 'date__after' (use one of: exact, ne, gt"),
    ({"__gt": 1}, "filter '__gt' has no key before the operator"),
    ({"author__in": "ana"}, "filter 'author__in' needs a list of values, got 'ana'"),
    ({"author__exists": "yes"}, "filter 'author__exists' needs true or false, got 'yes'"),
    ({"author": None}, "filter 'author' needs a string or number, got None"),
    ({"author": {"a": 1}}, "filter 'author' needs a string or number"),
    ({"priority__gt": float("nan")}, "filter 'priority__gt' needs a string or number"),
    ({"user..name": "x"}, "filter key 'user..name' has an empty path segment"),
])
def test_malformed_filters_are_query_errors_naming_them(filters: dict[str, Any], message: str) -> None:
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.parse_filters(filters)
    assert message in str(error.value)


@pytest.mark.parametrize("key, use", [("tags", "tags__in"), ("Tags__exact", "Tags__in")])
def test_a_list_given_for_one_value_is_pointed_at_in(key: str, use: str) -> None:
    # {"tags": ["#family"]}, as an assistant writes a list-valued key, was told only that it
    # needs a string; __in takes a list (a record holding any of its values).
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.parse_filters({key: ["#family", "home"]})
    assert str(error.value) == (f"filter '{key}' needs a string or number, got ['#family', 'home']; for a record "
                                f"holding any of several values use '{use}': {{\"{use}\": [\"#family\", \"home\"]}}")


def test_unknown_filter_keys_are_errors_with_a_suggestion() -> None:
    with pytest.raises(vecbook.QueryError, match="unknown filter key 'athor': no record has it; did you mean "
                                                 "'author'"):
        matching({"athor": "ana"})


def test_an_unknown_key_with_an_operator_is_named_without_it() -> None:
    with pytest.raises(vecbook.QueryError, match="unknown filter key 'tagz' in 'tagz__contains': no record has it; "
                                                 "did you mean 'tags'"):
        matching({"tagz__contains": "work"})


@pytest.mark.parametrize("filters", [{"source": "whatsapp"}, {"source__ne": "whatsapp"},
                                     {"source__in": ["slack", "whatsapp"]}])
def test_a_source_no_record_comes_from_is_an_error_naming_the_sources(filters: dict[str, Any]) -> None:
    with pytest.raises(vecbook.QueryError) as error:
        matching(filters)
    assert str(error.value) == "no record comes from source 'whatsapp' (sources: files, slack)"
    assert matching({"source": "SLACK"}) == ["r3", "r4"]  # names match case-insensitively, like other values


def test_a_misspelt_source_is_an_error_suggesting_the_source_meant() -> None:
    with pytest.raises(vecbook.QueryError, match=r"no record comes from source 'slakc' \(did you mean 'slack'\? "
                                                 r"sources: files, slack\)$"):
        matching({"source": "slakc"})


@pytest.mark.parametrize("typed", ["WhatsApp", "whatsapp"])
def test_a_source_named_by_its_app_points_to_the_sources_of_that_format(typed: str) -> None:
    # `vecbook add` names a source as its user says (family-chat); the app is its records' format
    chats = [record(f"c{i}", source=name, format="whatsapp") for i, name in enumerate(["family-chat", "work-chat"])]
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.FilterColumns([*RECORDS, *chats]).mask(vecbook.filters.convenience_conditions(sources=[typed]))
    assert str(error.value) == (f"no record comes from source '{typed}' (sources: family-chat, files, slack, "
                                f"work-chat); {typed} is the format of family-chat, work-chat: name one, or filter on "
                                f"format={typed} for all")


def test_a_source_filter_points_to_metadata_source_where_records_have_such_a_field() -> None:
    # Toolbox-store rows carry a `source` column (e.g. "whatsapp") in their metadata, while the
    # `source` filter is the collection: a user mixing them up gets told, not an empty result.
    row = vecbook.Record(text="t0", file_path="t.db", line_number=1, end_line=1, metadata={"source": "whatsapp"},
                         source="toolbox", id="t0", citation="t0", content="t0")
    with pytest.raises(vecbook.QueryError, match=r"no record comes from source 'whatsapp' \(sources: files, slack, "
                                                 r"toolbox\); .*metadata\.source=whatsapp"):
        vecbook.filters.FilterColumns([*RECORDS, row]).mask(vecbook.filters.parse_filters({"source": "whatsapp"}))


@pytest.mark.parametrize("filters, hint", [
    ({"tags_contains": "work"}, "did you mean 'tags__contains'? (an operator follows two underscores)"),
    ({"date_gte": "2024-01-01"}, "did you mean 'date__gte'?"),
    ({"channle": "general"}, "did you mean 'channel'?"),
    ({"auther": "ana"}, "did you mean 'author'?"),
])
def test_an_unknown_key_suggests_the_key_or_operator_meant(filters: dict[str, Any], hint: str) -> None:
    with pytest.raises(vecbook.QueryError) as error:
        matching(filters)
    assert hint in str(error.value)


def test_a_word_for_a_person_points_to_participants_not_to_a_key_sharing_a_few_letters() -> None:
    chat = [record("c0", date="2024-01-01", participants=["Ana", "Ben"])]
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.FilterColumns(chat).mask(vecbook.filters.parse_filters({"auther": "ana"}))
    assert "did you mean" not in str(error.value)  # not 'date', three of its six letters in order
    assert "the people of a chat, mail or event are filtered with participants__contains (--participant)" in str(
        error.value)


def test_a_participant_no_record_names_is_an_error_suggesting_close_names() -> None:
    columns = vecbook.filters.FilterColumns(LISTS)
    with pytest.raises(vecbook.QueryError) as error:
        columns.mask(vecbook.filters.convenience_conditions(participants=["Lopes"]))
    assert str(error.value) == ("participants Lopes: no chat, mail or event names a participant 'Lopes'; "
                                "did you mean 'Ana Lopez'? (4 names known)")
    assert list(columns.mask(vecbook.filters.convenience_conditions(participants=["lopez"]))) == [True, False, True]


def test_a_misspelt_participant_is_offered_the_whole_name_it_is_close_to_once() -> None:
    columns = vecbook.filters.FilterColumns([record("c0", participants=["Ana", "Ana Lopez", "Ben"])])
    with pytest.raises(vecbook.QueryError, match=r"'Anaa'; did you mean 'Ana'\? \(3 names known\)$"):
        columns.mask(vecbook.filters.convenience_conditions(participants=["Anaa"]))


@pytest.mark.parametrize("typed", ["Zoe", "zoë", "Jose Muller", "+1 (777) 777-7777", "777-7777", "Mama ❤"])
def test_a_participant_is_found_as_a_keyboard_types_the_name(typed: str) -> None:
    # A phone writes "Zoë", a sender's number with non-breaking hyphens (U+2011) and no-break
    # spaces between direction marks, an emoji with its variation selector; people type neither.
    people = ["Zoë", "José Müller", "\u202a+1\u00a0(777)\u00a0777\u20117777\u202c", "Mama \u2764\ufe0f"]
    columns = vecbook.filters.FilterColumns([record(f"c{i}", participants=[p]) for i, p in enumerate(people)])
    assert sum(columns.mask(vecbook.filters.convenience_conditions(participants=[typed]))) == 1


PEOPLE = [record("p0", participants=["Ana Souza", "Bruno"]), record("p1", participants=["王小明", "李华"]),
          record("p2", participants=["محمد علي", "Sara"]), record("p3", participants="José Álvarez, Mariana"),
          record("p4", participants=["山田太郎"]), record("p5", participants=["김민수"]),
          record("p6", participants=["Wang Lei (王磊)"])]


@pytest.mark.parametrize("typed, expected", [
    ("Ana", ["p0"]), ("souza", ["p0"]), ("ANA SOUZA", ["p0"]),
    ("王", ["p1", "p6"]), ("王小明", ["p1"]), ("李", ["p1"]), ("山田", ["p4"]), ("김", ["p5"]),
    ("محمد", ["p2"]), ("علي", ["p2"]),
    ("jose", ["p3"]), ("alvarez", ["p3"]), ("mariana", ["p3"]),   # a row's names as one text
])
def test_a_participant_is_found_by_a_whole_word_of_the_name(typed: str, expected: list[str]) -> None:
    # Names in a script written without spaces (Chinese, Japanese, Korean) start with the family
    # name: a leading run of their characters is a word of them.
    mask = vecbook.filters.FilterColumns(PEOPLE).mask(vecbook.filters.convenience_conditions(participants=[typed]))
    assert [r.id for r, keep in zip(PEOPLE, mask) if keep] == expected


@pytest.mark.parametrize("typed", ["An", "小明", "ouza", "ana souz", "iana"])
def test_a_participant_is_not_found_by_part_of_a_word(typed: str) -> None:
    with pytest.raises(vecbook.QueryError, match="names a participant"):
        vecbook.filters.FilterColumns(PEOPLE).mask(vecbook.filters.convenience_conditions(participants=[typed]))


MAIL_PEOPLE = [record("m0", participants=["Ana Lopez", "ana@example.com", "Ben", "ben@work.example.org"]),
               record("m1", participants=["Carla", "carla.ana@example.com"]),
               record("m2", participants="Dan <dan@example.com.au>, Eve <EVE@Example.COM>"),
               record("m3", participants=["+1 555 0100", "fay@mail.example.com"])]


@pytest.mark.parametrize("typed, expected", [
    ("ana@example.com", ["m0"]), ("ANA@Example.com", ["m0"]),  # the whole address, in any case
    ("eve@example.com", ["m2"]),                                # inside a row's text of names
    ("dan@example.com.au", ["m2"]),
    ("@example.com", ["m0", "m1", "m2", "m3"]),                 # a domain: its addresses and its subdomains'
    ("@Example.ORG", ["m0"]), ("@work.example.org", ["m0"]), ("@example.com.au", ["m2"]),
    ("Ana Lopez <ana@example.com>", ["m0"]), ("<eve@example.com>", ["m2"]),  # pasted from a mail's header
])
def test_a_participant_is_found_by_mail_address_or_by_domain_with_a_leading_at(typed: str, expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(MAIL_PEOPLE).mask(vecbook.filters.convenience_conditions(participants=[typed]))
    assert [r.id for r, keep in zip(MAIL_PEOPLE, mask) if keep] == expected


HANDLES = [record("h0", participants=["@ana_b", "Ben"]), record("h1", participants=["ana_b"]),
           record("h2", participants=["Bjarni", "bre@slinky"]), record("h3", participants=["Ana Lopez (@ana.lopez)"])]


@pytest.mark.parametrize("typed, expected", [
    ("@ana_b", ["h0", "h1"]), ("@ANA_B", ["h0", "h1"]),  # a chat app's handle, with or without its @ in the export
    ("@Ben", ["h0"]), ("@ana.lopez", ["h3"]),            # a mention of a name as Slack and Discord write it
    ("@slinky", ["h2"]),                                  # still a mail domain (bre@slinky)
])
def test_a_participant_typed_with_a_leading_at_is_a_handle_or_a_mail_domain(typed: str, expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(HANDLES).mask(vecbook.filters.convenience_conditions(participants=[typed]))
    assert [r.id for r, keep in zip(HANDLES, mask) if keep] == expected


def test_a_handle_no_record_names_is_told_how_it_was_read() -> None:
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.FilterColumns(HANDLES).mask(vecbook.filters.convenience_conditions(participants=["@ana_c"]))
    assert str(error.value) == ("participants @ana_c: no chat, mail or event names a participant 'ana_c' or '@ana_c' "
                                "(a handle), nor an address at the domain ana_c; did you mean 'ana_b' or "
                                "'Ana Lopez (@ana.lopez)'? (6 names known)")


@pytest.mark.parametrize("typed, expected", [
    ("fay", ["m3"]), ("carla", ["m1"]), ("EVE", ["m2"]),  # an address's name part names its person
])
def test_a_participant_known_by_an_address_is_found_by_a_word_of_its_name_part(
        typed: str, expected: list[str]) -> None:
    mask = vecbook.filters.FilterColumns(MAIL_PEOPLE).mask(vecbook.filters.convenience_conditions(participants=[typed]))
    assert [r.id for r, keep in zip(MAIL_PEOPLE, mask) if keep] == expected


@pytest.mark.parametrize("typed", ["a@example.com", "ana@example", "@ample.com", "@example", "@",
                                   "com", "example", "example.com", "org", "au", "mail"])  # a domain names no one
def test_an_address_is_not_found_by_the_end_of_another_address(typed: str) -> None:
    # "a@example.com" is not carla.ana@example.com's tail, nor "@ample.com" example.com's
    with pytest.raises(vecbook.QueryError, match="names a participant"):
        vecbook.filters.FilterColumns(MAIL_PEOPLE).mask(vecbook.filters.convenience_conditions(participants=[typed]))


def test_a_participant_filter_folds_each_name_once_however_many_lists_hold_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # a mail index holds tens of thousands of recipient lists of a few hundred people: folding
    # every name of every list at every search made a --participant search 2.6 times as slow
    folded: list[str] = []
    fold = vecbook.filter_values.fold
    monkeypatch.setattr(vecbook.filter_values, "fold", lambda text: folded.append(text) or fold(text))
    people = ["Zoë Ørsted", "José Núñez", "Ana Lopez", "Łucja Wąs"]
    records = [record(f"m{i}", participants=[people[i % 4], people[(i + 1) % 4], f"N{i}"]) for i in range(400)]
    columns = vecbook.filters.FilterColumns(records)
    for _ in range(3):
        assert sum(columns.mask(vecbook.filters.convenience_conditions(participants=["zoe orsted"]))) == 200
    assert sorted(set(folded)) == sorted(folded)  # (each once: "Ana Lopez" and the N<i> are ASCII)


@pytest.mark.parametrize("typed, parsed", [
    ("date>=2024-01-01", ("date__gte", "2024-01-01")), ("priority>2", ("priority__gt", "2")),  # as people compare
    ("priority <= 3", ("priority__lte", "3")), ("priority<3", ("priority__lt", "3")),
    ("author!=ana", ("author__ne", "ana")), ("author==ana", ("author", "ana")),
    ("tags = family", ("tags", "family")), ("tags__in = a, b", ("tags__in", ["a", "b"])),   # spaces around
    ("title=a>b", ("title", "a>b")), ("url=https://x.org/?a=b", ("url", "https://x.org/?a=b")),  # the first sign
])
def test_a_command_line_filter_reads_comparison_signs(typed: str, parsed: tuple[str, Any]) -> None:
    assert vecbook.filters.parse_filter_argument(typed) == parsed


@pytest.mark.parametrize("typed", ["tags:family", "nokey", "=x", ">2"])
def test_a_command_line_filter_without_a_key_and_a_sign_says_what_it_takes(typed: str) -> None:
    with pytest.raises(vecbook.QueryError) as error:
        vecbook.filters.parse_filter_argument(typed)
    assert str(error.value) == f"--filter needs KEY=VALUE (or KEY>=VALUE, >, <=, <, !=), got {typed!r}"


def test_filters_must_be_an_object() -> None:
    with pytest.raises(vecbook.QueryError, match="filters must be an object"):
        vecbook.filters.parse_filters(["author=ana"])  # type: ignore[arg-type]


def test_rrf_is_normalised_to_one_for_first_in_every_list() -> None:
    fused = vecbook.rank.rrf_scores([[1, 2, 3], [1, 3]], k=60)
    assert fused[1] == pytest.approx(1.0)
    assert fused[3] == pytest.approx((1 / 63 + 1 / 62) / (2 / 61))
    assert fused[2] == pytest.approx((1 / 62) / (2 / 61))
    assert all(0 <= v <= 1 for v in fused.values())


def test_linear_fusion_scales_each_list_by_its_range_but_not_a_weak_one_to_one() -> None:
    rank = vecbook.rank
    cosine = np.array([0.2, 0.8, 0.5])  # a strong list: plain min-max over its range
    keyword = np.array([0.2, 0.0, 0.1])  # a weak list (best 0.2 < KEYWORD_CEILING): its top stays below 1
    kw_top = 0.2 / rank.KEYWORD_CEILING
    np.testing.assert_allclose(rank.linear_scores(cosine, keyword, 0.3),
                               [0.3 * kw_top, 0.7 * 1.0, 0.3 * kw_top / 2 + 0.7 * 0.5])
    single = np.array([0.3])  # one candidate: measured from zero against the ceiling, not from itself
    np.testing.assert_allclose(rank.floored_minmax(single, single, 0.6), [0.5])


def test_fusion_does_not_stretch_a_poor_semantic_match_over_the_record_holding_the_words() -> None:
    """Nothing is close in meaning (cosines near 0.2): the only record with the query's
    words must win, which min-max normalisation (best cosine -> 1) got wrong."""
    cosine = np.array([0.24, 0.22, 0.21, 0.20])
    keyword = np.array([0.0, 0.0, 0.0, 0.35])
    fused = vecbook.rank.linear_scores(cosine, keyword, 0.4)
    assert int(np.argmax(fused)) == 3 and fused.max() < 0.6  # and it reads as a middling match


def test_the_cosine_behind_semantic_scores() -> None:
    np.testing.assert_allclose(vecbook.rank.cosine_of(np.array([0.5, 1.0, 0.75]), "cosine"), [0.0, 1.0, 0.5])
    np.testing.assert_allclose(vecbook.rank.cosine_of(np.array([1.0, 1 / 3]), "l2"), [1.0, 0.0])


# -- filters are applied before the top-k cut --

@pytest.fixture(scope="module")
def haystack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5,000 records about boats; exactly one has Owner: needle (and it does not mention boats)."""
    root = tmp_path_factory.mktemp("haystack")
    blocks = [f"Owner: crew{i % 50}\nSail boat number {i} moored at the harbour, berth {i}." for i in range(4999)]
    blocks.insert(2500, "Owner: needle\nA sail boat with a red hull and a broken mast.")
    for part in range(5):
        (root / f"part{part}.txt").write_text("\n---\n".join(blocks[part * 1000:(part + 1) * 1000]) + "\n",
                                              encoding="utf-8")
    return root


@pytest.mark.parametrize("mode", vecbook.config.MODES)
def test_a_rare_filter_match_is_found_in_every_mode(haystack: Path, fake_book: Any, mode: str) -> None:
    book = fake_book(haystack)
    assert book.stats()["records"] == 5000
    hits = book.search("sail boat harbour", max_results=10, mode=mode, filters={"owner": "needle"})
    assert [h.metadata["Owner"] for h in hits] == ["needle"]
    crew = book.search("sail boat harbour", max_results=10, mode=mode, filters={"owner": "crew7"})
    assert len(crew) == 10 and all(h.metadata["Owner"] == "crew7" for h in crew)
    few = book.search("sail boat", max_results=500, mode=mode, filters={"owner__in": ["crew7", "needle"]})
    assert len(few) == 101  # min(max_results, matching records)


# -- asking for more results never reorders the first ones --

@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 seeded records of random words, so semantic and keyword ranks disagree deep down."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(300)]
    root = tmp_path_factory.mktemp("varied")
    blocks = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 40))) for _ in range(2000)]
    (root / "words.txt").write_text("\n---\n".join(blocks) + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
def test_more_results_keep_the_first_hits_and_their_scores(varied: Path, fake_book: Any, fusion: str) -> None:
    book = fake_book(varied, fusion=fusion)
    for query in ("w1 w2 w3", "w10 w200", "w7 w8 w9 w150 w299"):
        few = book.search(query, max_results=10, mode="hybrid")
        many = book.search(query, max_results=400, mode="hybrid")
        assert len(many) == 400
        assert [(h.id, h.similarity_score) for h in many[:10]] == [(h.id, h.similarity_score) for h in few]
        assert [h.similarity_score for h in many] == sorted((h.similarity_score for h in many), reverse=True)


# -- linear fusion takes the meaning of its best hit into account (pseudo-relevance feedback) --

def test_the_feedback_query_is_the_query_moved_a_set_step_towards_the_best_hit() -> None:
    rows = np.array([[1, 0, 0], [0, 1, 0], [0, 0.6, 0.8]], dtype=np.float32)  # record 1: two windows
    index = vecbook.index.VectorIndex(rows, np.array([0, 1, 1]), 2)
    moved = vecbook.rank.feedback_query(index, np.array([2.0, 0.0, 0.0]), 1)
    centre = np.array([0.0, 0.8, 0.4]) / np.linalg.norm([0.0, 0.8, 0.4])  # its windows' mean, as a unit vector
    expected = np.array([1.0, 0.0, 0.0]) + vecbook.rank.FEEDBACK_WEIGHT * centre
    np.testing.assert_allclose(moved, expected / np.linalg.norm(expected), rtol=1e-3)


@pytest.fixture
def neighbours(tmp_path: Path) -> Path:
    """The best hit for "apple", a record sharing its other words but not the query's, and one
    sharing nothing, written first so that it wins the tie without feedback."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "a.txt").write_text("apple cherry damson\n---\nplum quince rowan\n---\ncherry damson elder\n",
                                encoding="utf-8")
    return root


def test_a_record_close_in_meaning_to_the_best_hit_rises_above_an_unrelated_one(
        neighbours: Path, fake_book: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    book = fake_book(neighbours)
    assert [h.text for h in book.search("apple", mode="hybrid", fusion="linear")] == [
        "apple cherry damson", "cherry damson elder", "plum quince rowan"]
    monkeypatch.setattr(vecbook.rank, "FEEDBACK_WEIGHT", 0.0)  # without it, the two tie on nothing
    assert [h.text for h in book.search("apple", mode="hybrid", fusion="linear")] == [
        "apple cherry damson", "plum quince rowan", "cherry damson elder"]


def fused(passages: list[list[str]], vectors: np.ndarray, query: str, query_vector: np.ndarray,
          keyword_weight: float = 0.4, chats: bool = False) -> dict[int, float]:
    """Linear hybrid scores of records made of ``passages`` (each record's passages' texts, one a
    keyword passage) with one model window each (``vectors``); ``chats``: every record is taken
    for a chat window (as ``VecBook.search`` tells rank with ``feeds_back``)."""
    tokenize = vecbook.tokens.tokenize
    documents = [tokenize(text) for texts in passages for text in texts]
    owners = np.array([i for i, texts in enumerate(passages) for _ in texts])
    keywords = vecbook.index.KeywordIndex(documents, k1=1.2, b=0.5, owners=owners)
    store = vecbook.index.VectorIndex(vectors.astype(np.float32), np.arange(len(passages)), len(passages))
    scored = vecbook.rank.rank("hybrid", 10, vectors=store, keywords=keywords, query_vector=query_vector,
                               tokens=tokenize(query), mask=None, fusion="linear", keyword_weight=keyword_weight,
                               feeds_back=(lambda _: False) if chats else None)
    return {s.index: s.score for s in scored}


def filler(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def test_a_record_holding_the_query_words_in_several_passages_ranks_above_one_holding_them_once() -> None:
    # Two long notes alike in meaning (the same window vector) whose best passages match the
    # query equally; the first meets the query's words again in another passage.
    query = "東京 café שלום 🍣"
    twice = ["東京 café שלום 🍣 " + filler(30, "a"), "東京 café " + filler(30, "b")]
    once = ["東京 café שלום 🍣 " + filler(30, "a"), filler(32, "c")]
    unrelated = [filler(34, "d")]
    vectors = np.array([[1.0, 0.2, 0.0], [1.0, 0.2, 0.0], [0.0, 0.0, 1.0]])
    query_vector = np.array([1.0, 0.0, 0.0])
    scores = fused([once, twice, unrelated], vectors, query, query_vector)
    assert scores[1] > scores[0] > scores[2]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vecbook.rank, "RECORD_SHARE", 0.0)
        alone = fused([once, twice, unrelated], vectors, query, query_vector)
    assert alone[1] == pytest.approx(alone[0])  # without the other passages the two tie
    # A chat window's message pieces are not added up: long windows would take the budget.
    windows = fused([once, twice, unrelated], vectors, query, query_vector, chats=True)
    assert windows[1] == pytest.approx(windows[0])


def test_a_record_of_one_passage_has_no_other_passages_to_count() -> None:
    tokenize = vecbook.tokens.tokenize
    keywords = vecbook.index.KeywordIndex([tokenize("crème brûlée"), tokenize("crème"), tokenize("brûlée")],
                                          owners=np.array([0, 1, 1]))
    tokens = tokenize("crème brûlée")
    extra = vecbook.rank.other_passages(keywords, keywords.scores(tokens), np.array([0, 1]), tokens)
    assert extra[0] == 0.0
    passage = keywords.scores(tokens)
    assert extra[1] == pytest.approx(min(passage[1], passage[2]) / keywords.upper_bound(tokens))


def test_the_keyword_weight_rises_when_the_keyword_list_has_a_clear_best_and_falls_when_meaning_has() -> None:
    flat = np.array([0.5, 0.49, 0.49, 0.48, 0.48, 0.1])
    peaked = np.array([0.7, 0.5, 0.49, 0.48, 0.48, 0.1])  # its best 0.22 above its 5th; the flat one's 0.02
    weight = vecbook.rank.peaked_weight
    assert weight(0.4, flat, peaked) == pytest.approx(0.6)
    assert weight(0.4, peaked, flat) == pytest.approx(0.2)
    assert weight(0.4, flat, flat) == pytest.approx(0.4)
    very = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    assert weight(0.4, flat, very) == pytest.approx(vecbook.rank.WEIGHT_HIGH)
    assert weight(0.4, very, flat) == pytest.approx(vecbook.rank.WEIGHT_LOW)


def test_a_weight_asking_for_one_side_only_or_past_the_bounds_or_without_keyword_matches_is_kept() -> None:
    flat = np.array([0.5, 0.5, 0.5, 0.5, 0.5])
    very = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    weight = vecbook.rank.peaked_weight
    assert weight(0.0, flat, very) == 0.0 and weight(1.0, very, flat) == 1.0
    assert weight(0.95, flat, very) == pytest.approx(0.95)  # a user's weight above the bound stays reachable
    assert weight(0.05, very, flat) == pytest.approx(0.05)
    assert weight(0.4, np.array([0.7]), np.array([0.2])) == pytest.approx(0.4)  # one candidate: no drop
    assert weight(0.4, very, np.zeros(5)) == 0.4  # no candidate holds a query word: nothing to weigh


def test_a_query_whose_keyword_list_has_one_clear_match_follows_it_over_a_flat_meaning_list() -> None:
    # The first record holds the rare words the query names (niño, Ωmega); the meaning list is
    # flat, its best (the second record) barely above the rest: at the fixed weight 0.4 meaning
    # decides, with the weight moved by the lists' shapes the keyword match comes first.
    query = "niño Ωmega"
    texts = [["niño Ωmega " + filler(20, "x")], [filler(22, "y")]] + [[filler(22, f"z{i}_")] for i in range(6)]
    vectors = np.array([[0.70, 0.714, 0]] + [[0.80, 0.6, 0]] + [[0.78, 0.626, 0]] * 6)
    query_vector = np.array([1.0, 0.0, 0.0])
    scores = fused(texts, vectors, query, query_vector)
    assert max(scores, key=scores.get) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vecbook.rank, "PEAK_SHIFT", 0.0)
        fixed = fused(texts, vectors, query, query_vector)
    assert max(fixed, key=fixed.get) == 1
    # Chat windows at the top of the lists keep the fixed weight (measured: chats lost with the shift).
    windows = fused(texts, vectors, query, query_vector, chats=True)
    assert max(windows, key=windows.get) == 1


# -- a hybrid search reads each vector row it scores once, with the same results --

def hybrid_corpus(seed: int) -> tuple[vecbook.index.KeywordIndex, vecbook.index.VectorIndex, np.ndarray]:
    """Random records of 1-3 keyword passages (CJK, emoji, Hebrew, accents) and 1-3 model windows
    each, in a store with its scan, and a delta of rows added after it (an update that re-embedded
    every 7th window); and the windows' vectors."""
    from test_index import clustered_vectors, scanned
    from test_keyword_prune import random_corpus

    rng = random.Random(seed)
    documents, owners = random_corpus(rng, 1500)
    keywords = vecbook.index.KeywordIndex(documents, owners=owners)
    n = keywords.size
    windows = np.repeat(np.arange(n), np.random.default_rng(seed).integers(1, 4, n))
    vectors = clustered_vectors(len(windows), seed=seed)
    first = scanned(vecbook.index.VectorIndex(vectors, windows, n))
    source = np.arange(len(windows))
    source[::7] = -1
    fresh = np.flatnonzero(source < 0)
    vectors[fresh] = clustered_vectors(len(fresh), seed=seed + 1)
    encoded = vecbook.index.encode_vectors(vectors[fresh], "cosine")
    index = vecbook.index.VectorIndex.updated(first, windows, n, "cosine", np.zeros((len(windows), 2)), [], {},
                                              vectors.shape[1], source,
                                              lambda rows: encoded[np.searchsorted(fresh, rows)])
    assert index.store is first.store and len(index.delta) == len(fresh)
    return keywords, index, vectors


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
def test_a_hybrid_search_reads_each_row_once_and_ranks_as_reading_them_again_did(
        fusion: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecbook.vector_index, "APPROXIMATE_FROM", 400)
    monkeypatch.setattr(vecbook.vector_index, "RESCORED", 30)
    monkeypatch.setattr(vecbook.vector_index, "EXACT_SUBSET", 10)  # a filter's candidates come from the scan too
    monkeypatch.setattr(vecbook.rank, "FUSION_DEPTH", 12)  # the cut finds the keyword top among the passages
    monkeypatch.setattr(vecbook.keyword_prune, "SAMPLE_STEP", 3)
    from test_keyword_prune import random_query

    keywords, index, vectors = hybrid_corpus(4)
    decoded: list[list[int]] = []
    decode = vecbook.index.VectorIndex.decode

    def counted(self: Any, rows: np.ndarray) -> np.ndarray:
        decoded[-1].extend(np.asarray(rows).tolist())
        return decode(self, rows)
    monkeypatch.setattr(vecbook.index.VectorIndex, "decode", counted)
    answered: list[bool] = []

    def cut(*args: Any) -> Any:
        found = vecbook.keyword_prune.top_of_scores(*args)
        answered.append(found is not None)
        return found
    monkeypatch.setattr(vecbook.rank, "top_of_scores", cut)
    rng = random.Random(8)
    noise = np.random.default_rng(8)
    for number in range(20):
        tokens = random_query(rng)
        query = vectors[rng.randrange(len(vectors))] + 0.3 * noise.normal(size=vectors.shape[1]).astype(np.float32)
        mask = noise.random(keywords.size) < 0.6 if number % 4 == 3 else None

        def search() -> list[tuple[int, float, float | None, float | None]]:
            decoded.append([])
            scored = vecbook.rank.rank("hybrid", 10, vectors=index, keywords=keywords, query_vector=query,
                                       tokens=tokens, mask=mask, fusion=fusion)
            return sorted((s.index, s.score, s.semantic, s.keyword) for s in scored)
        found = search()
        assert len(decoded[-1]) == len(set(decoded[-1]))  # no row read twice
        with monkeypatch.context() as patch:  # the search before: every row read each time it is scored
            patch.setattr(vecbook.search_rows, "HELD_ROWS", 0)
            patch.setattr(vecbook.rank, "top_of_scores", lambda *args: None)
            assert search() == found
        if fusion == "linear" and keywords.upper_bound(tokens) > 0:
            assert len(decoded[-1]) > len(set(decoded[-1]))  # (the feedback query's scores read them again)
        # Each candidate's keyword score is its best passage's, over the bound, as every record's.
        bound = keywords.upper_bound(tokens)
        best = keywords.record_scores(tokens) / (bound if bound > 0 else 1.0) if bound > 0 else np.zeros(keywords.size)
        assert [keyword for _, _, _, keyword in found] == [float(best[i]) for i, _, _, _ in found]
    assert any(answered)  # the keyword top came from the passages above the cut


def test_a_date_range_over_many_series_is_one_pass_over_the_records() -> None:
    import time

    # 1,000 weekly series (each its own rule: every week or every other, at its own minute), 200 records
    # of each, and 50k records without one
    series = [record(f"s{i}", date="2020-01-06", rrule=f"DTSTART:20200106T{i // 60:02d}{i % 60:02d}00\n"
                     f"RRULE:FREQ=WEEKLY;INTERVAL={1 + i % 2}") for i in range(1000)]
    many = series * 200 + [record("n", date="2024-03-04")] * 50_000
    columns = vecbook.filters.FilterColumns(many)
    conditions = vecbook.filters.convenience_conditions(since="2024-03-04", until="2024-03-04")
    mask = columns.mask(conditions)  # each series counted out once (and kept)
    # every Monday, but not every other one from 2020-01-06; a record without a rule keeps its own date
    assert mask[0] and mask[1000] and not mask[1] and not mask[1001] and bool(mask[200_000:].all())
    assert np.array_equal(columns.mask(conditions), mask)

    def fastest(run: Callable[[], object]) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            run()
            times.append(time.perf_counter() - started)
        return min(times)

    # not a pass over the records for each series: timed against 1,000 bare such passes in the same
    # run (the mask takes about half as long), so a machine busy with other work slows both alike
    codes = np.arange(len(many)) % 1000
    assert fastest(lambda: columns.mask(conditions)) < fastest(lambda: sum(bool((codes == s)[0]) for s in range(1000)))
