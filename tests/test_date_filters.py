"""A date range (``since``, ``until``, ``date__gte``...) over a whole index gives, for every
record, what that record's own value compared with the bound gives: the index compares a
column of dates at once, and must agree with the rule read one value at a time."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from vecbook.filter_values import reaches, value_matches
from vecbook.filters import Condition, FilterColumns

DAYS = st.dates(min_value=__import__("datetime").date(1, 1, 2), max_value=__import__("datetime").date(9999, 12, 30))
CLOCKS = st.sampled_from(["", "T00:00", "T09:30", " 23:59:59", "T12:00:00.250", "T00:00:00.000001", "t10:00"])
OFFSETS = st.sampled_from(["", "", "Z", "z", "+01:00", "-08:00", "+0530", "+14:00"])
DATED = st.builds(lambda day, clock, offset: f"{day.isoformat()}{clock}{offset if clock else ''}", DAYS, CLOCKS, OFFSETS)
VALUES = st.one_of(
    DATED,
    DATED.map(lambda text: f" {text}"),  # a space first: not a date to a range
    DATED.map(lambda text: text.replace("-", "\uff0d", 1)),  # not ASCII: compared alone
    st.sampled_from(["March 5, 2024", "2024", "yesterday", "", "\u0662\u0660\u0662\u0664-03-05"]),
    # the bounds' own day and moment, written otherwise: where text and moments order differently
    st.sampled_from(["2024-03-05", "2024-03-05 ", "2024-03-05T23:30-08:00", "2024-03-06T07:30Z", "2024-03-06T07:30+00:00",
                     "9999-12-30T23:59:59.000001+00:00"]),  # (a microsecond after a far bound)
    st.lists(DATED, max_size=3),
    st.integers(min_value=0, max_value=3000),
    st.booleans(),
)
BOUNDS = st.one_of(DATED, st.sampled_from(["2024-03-05", "2024-03-05T00:00", "2024-03-05T23:30-08:00",
                                           "9999-12-30T23:59:59+00:00"]))


def records(values: list[Any]) -> list[Any]:
    return [SimpleNamespace(metadata={"date": v, "end_date": v}, metadata_keys=("date", "end_date"), source="notes",
                            citation=f"n.txt:{i}", id=str(i), file_path="n.txt") for i, v in enumerate(values)]


@given(st.lists(VALUES, min_size=1, max_size=40), st.sampled_from(["gt", "gte", "lt", "lte"]), BOUNDS)
# a microsecond apart in the year 9999: as seconds in a float (2.5e11 s) the two are one moment
@example(["9999-12-30T23:59:59.000001+00:00"], "gt", "9999-12-30T23:59:59+00:00")
def test_a_date_range_over_an_index_agrees_with_each_value_compared_alone(values: list[Any], op: str,
                                                                           bound: str) -> None:
    columns = FilterColumns(records(values))
    condition = Condition(f"date__{op}", "metadata", ("date",), op, bound)
    _codes, uniques = columns._column(condition)
    at_once = columns._verdicts(condition, uniques, lambda v: value_matches(v, op, bound))
    assert at_once.tolist() == [value_matches(v, op, bound) for v in uniques]
    # a span's end (since's end_date): a date alone ends with its day
    ending = Condition(f"end_date__{op}", "metadata", ("end_date",), op, bound)
    _codes, ends = columns._column(ending)
    reached = columns._verdicts(ending, ends, lambda v: reaches(v, op, bound), True)
    assert reached.tolist() == [reaches(v, op, bound) for v in ends]


def test_one_moment_written_in_two_zones_is_one_moment_and_a_day_alone_ends_with_its_day() -> None:
    columns = FilterColumns(records(["2024-03-06T07:30Z", "2024-03-05T23:30-08:00", "2024-03-05", "2024-03-04"]))
    since = Condition("date__gte", "metadata", ("date",), "gt", "2024-03-05T23:30-08:00")
    _codes, uniques = columns._column(since)
    after = columns._verdicts(since, uniques, lambda v: value_matches(v, "gt", since.value))
    assert after.tolist() == [False, False, False, False]  # the same moment is not after itself
    ending = Condition("end_date__gte", "metadata", ("end_date",), "gte", "2024-03-05T09:00")
    _codes, ends = columns._column(ending)
    reached = columns._verdicts(ending, ends, lambda v: reaches(v, "gte", ending.value), True)
    assert reached.tolist() == [True, True, True, False]  # 5 March, all day, lasts past 09:00


def test_a_date_range_over_many_distinct_moments_is_quick() -> None:
    import time

    values = [f"2023-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}+01:00" for i in range(50_000)]
    columns = FilterColumns(records(values))
    condition = Condition("date__gte", "metadata", ("date",), "gte", "2023-06-01T00:00+00:00")
    _codes, uniques = columns._column(condition)
    columns._verdicts(condition, uniques, lambda v: value_matches(v, "gte", condition.value))  # the column, once
    started = time.perf_counter()
    verdict = columns._verdicts(condition, uniques, lambda v: value_matches(v, "gte", condition.value))
    assert time.perf_counter() - started < 0.25  # one by one: ~0.8 s on a laptop core
    assert verdict.sum() == sum(value_matches(v, "gte", condition.value) for v in uniques)
