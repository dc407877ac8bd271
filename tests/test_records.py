"""Record parsing, table-driven: each tests/data/records/NAME.txt is read with load_file
(decode_text, then parse_records) and compared with NAME.json beside it.

NAME.json holds {"records": [{"text", "line_number", "end_line", "metadata"}],
"problems": [{"line", "reason_contains"}]}, both in file order. Inputs whose bytes an
editor would mangle (CRLF, BOM, invalid UTF-8, trailing spaces) come from make_cases.py.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import vecbook

CASES_DIR = Path(__file__).resolve().parent / "data" / "records"
CASES = sorted(path.stem for path in CASES_DIR.glob("*.txt"))


def _load_generator():
    spec = importlib.util.spec_from_file_location("make_cases", CASES_DIR / "make_cases.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_case_has_input_and_expectation() -> None:
    inputs = {path.stem for path in CASES_DIR.glob("*.txt")}
    expected = {path.stem for path in CASES_DIR.glob("*.json")}
    assert inputs == expected
    assert len(inputs) >= 15


def test_generated_inputs_are_byte_exact() -> None:
    """Files from make_cases.py still hold exactly the bytes it writes (no editor touched them)."""
    for name, data in _load_generator().CASES.items():
        assert (CASES_DIR / f"{name}.txt").read_bytes() == data, f"rerun make_cases.py: {name}.txt changed"


@pytest.mark.parametrize("name", CASES)
def test_record_case(name: str) -> None:
    rel = f"{name}.txt"
    expected = json.loads((CASES_DIR / f"{name}.json").read_text(encoding="utf-8"))

    records, problems = vecbook.sources.load_file(rel, CASES_DIR / rel)

    got = [{"text": r.text, "line_number": r.line_number, "end_line": r.end_line, "metadata": r.metadata}
           for r in records]
    assert got == expected["records"]
    assert [(p.line, p.where) for p in problems] == [(e["line"], rel) for e in expected["problems"]]
    for problem, want in zip(problems, expected["problems"]):
        assert want["reason_contains"] in problem.reason
    for record in records:
        assert record.file_path == rel
        assert record.source == "files"
        assert record.id == f"{rel}:{record.line_number}"
        assert record.citation == f"{rel}:{record.line_number}-{record.end_line}"
        assert record.text in record.content  # the embedded unit is the whole record


# -- the spec's sentences that a table row cannot say --


def test_headers_are_embedded_but_not_in_text() -> None:
    records, _ = vecbook.parse_records("Author: ana\nTags: work\nBody.\n", "a.txt")
    assert records[0].text == "Body."
    assert records[0].content == "Author: ana\nTags: work\nBody."
    assert records[0].metadata == {"Author": "ana", "Tags": ["work"]}


@pytest.mark.parametrize("written, iso", [
    ("2024-03-05", "2024-03-05"), ("March 5, 2024", "2024-03-05"), ("5 March 2024", "2024-03-05"),
    ("Tue, 5th Mar 2024 10:30", "2024-03-05T10:30:00"), ("2024/03/05", "2024-03-05"),
    ("05.03.2024", "2024-03-05"),  # a dot: day first everywhere
    ("5. März 2024", "2024-03-05"), ("Dezember 3, 2024", "2024-12-03"),  # mail's month names, one table
    ("5 марта 2024", "2024-03-05"), ("5 Μαρτίου 2024", "2024-03-05"),
    ("25/03/2024", "2024-03-25"), ("03/25/2024", "2024-03-25"),  # a field past 12 says which is the day
    ("05/05/2024", "2024-05-05"),  # both readings the same day
    ("2024-03-05 (Tuesday)", "2024-03-05 (Tuesday)"),  # an ISO date first: filters read it as it is
])
def test_a_date_header_as_people_write_it_is_read_as_an_iso_date(written: str, iso: str) -> None:
    (record,), problems = vecbook.parse_records(f"Date: {written}\nLunch with Mum.\n", "j.txt")
    assert record.metadata == {"Date": iso} and problems == [] and record.content.startswith(f"Date: {written}\n")


@pytest.mark.parametrize("written", ["05/03/2024", "next Tuesday", "Feb 30, 2024", "2024"])
def test_a_date_that_says_no_day_is_kept_as_written_and_warned(written: str) -> None:
    (record,), problems = vecbook.parse_records(f"Title: x\nDate: {written}\nLunch with Mum.\n", "j.txt")
    assert record.metadata["Date"] == written
    assert [(p.line, p.reason, p.skipped) for p in problems] == [
        (2, f"Date '{written}' is not a date VecBook can read (write it as YYYY-MM-DD): --since, --until and "
            f"recency do not see it", False)]


def test_each_date_header_of_a_record_is_read_when_one_cannot_be() -> None:
    (record,), problems = vecbook.parse_records("Date: 05/03/2024\nEnd_Date: March 7, 2024\nBody.\n", "j.txt")
    assert record.metadata == {"Date": "05/03/2024", "End_Date": "2024-03-07"} and len(problems) == 1


def test_a_date_that_is_not_iso_is_never_inside_or_outside_a_range() -> None:
    from vecbook.filters import value_matches

    assert value_matches("2024-03-05", "gte", "2024-01-01") and not value_matches("2024-03-05", "gte", "2030-01-01")
    assert not value_matches("05/03/2024", "gte", "2024-01-01") and not value_matches("05/03/2024", "lt", "2030-01-01")
    assert value_matches("150", "gt", "100")  # numbers still compare as numbers


def test_text_start_is_where_the_text_begins_after_the_headers() -> None:
    records, _ = vecbook.parse_records("Author: ana\nTags: work\nBody.\n", "a.txt")
    record = records[0]
    assert record.content[record.text_start:] == record.text == "Body."
    other = vecbook.Record("said elsewhere", "x.json", 1, 1, {}, content="Name: ana\nsaid")
    assert other.text_start == 0  # a text that is not the content's end begins nowhere in it


def test_list_headers_are_split_on_commas_and_stay_visible_in_the_embedded_text() -> None:
    records, _ = vecbook.parse_records("Tags: quick, leftovers\nNote: a, b\nFried rice.", "a.txt")
    assert records[0].metadata == {"Tags": ["quick", "leftovers"], "Note": "a, b"}
    assert records[0].content.startswith("Tags: quick, leftovers\n")


def test_header_keys_keep_their_spelling_and_values_are_stripped_strings() -> None:
    records, _ = vecbook.parse_records("due-DATE:   2024-01-02   \nEmpty:\nBody.", "a.txt")
    assert records[0].metadata == {"due-DATE": "2024-01-02", "Empty": ""}


@pytest.mark.parametrize("line", [
    "Note to self: x",   # key with spaces
    "http://x",          # no space after the colon
    "12:30 lunch",       # key starts with a digit
    "Key:value",         # no space after the colon
    "  Indented: no",    # header lines start at column 0
    "Ключ: значение",    # a key is ASCII letters, digits, _ - .
])
def test_body_lines_that_look_like_headers(line: str) -> None:
    records, problems = vecbook.parse_records(f"{line}\nmore", "a.txt")
    assert problems == []
    assert records[0].metadata == {}
    assert records[0].text == f"{line}\nmore"


def test_headers_end_at_the_first_line_that_is_not_one() -> None:
    records, _ = vecbook.parse_records("A: 1\n\nB: 2\nbody", "a.txt")
    assert records[0].metadata == {"A": "1"}
    assert records[0].text == "B: 2\nbody"


@pytest.mark.parametrize("data, message", [
    (b"a\n---\n---\nb\n", "f.txt:3: empty record skipped"),
    (b"Title: t\n", "f.txt:1: record has headers but no text; skipped"),
    (b"ok\nbad \xff\n", "f.txt:2: bytes that are not UTF-8 were replaced by U+FFFD (on this line); "
                         "save the file as UTF-8 to keep its letters"),
])
def test_warning_messages_name_file_and_line(data: bytes, message: str) -> None:
    problems = vecbook.records.read_record_file(data, "f.txt")[1]
    assert [str(p) for p in problems] == [message]


def test_invalid_utf8_keeps_the_record_and_skipped_records_are_marked() -> None:
    text, problems = vecbook.records.decode_text(b"bad \xff\n---\nTitle: t\n", "f.txt")
    assert [p.skipped for p in problems] == [False]
    _, parse_problems = vecbook.parse_records(text, "f.txt")
    assert [p.skipped for p in parse_problems] == [True]


def test_decode_drops_only_a_leading_bom() -> None:
    assert vecbook.records.decode_text(b"\xef\xbb\xbfhi", "f.txt") == ("hi", [])
    assert vecbook.records.decode_text(b"hi \xef\xbb\xbf", "f.txt") == ("hi \ufeff", [])


@pytest.mark.parametrize("written, read_by_3_10", [
    ("2024-01-01T10:00:44.21+00:00", "2024-01-01T10:00:44.210000+00:00"),  # DiscordChatExporter's trimmed zeros
    ("2020-09-04T17:01:52.4360000+00:00", "2020-09-04T17:01:52.436000+00:00"),  # .NET's seven digits
    ("2024-05-02T14:05:33Z", "2024-05-02T14:05:33+00:00"),
    ("2024-05-02T14:05:33.5+0530", "2024-05-02T14:05:33.500000+05:30"),
    ("2024-05-02T14:05:33.123456", "2024-05-02T14:05:33.123456"),
    ("2024-05-02", "2024-05-02"),
])
def test_an_iso_date_time_is_read_on_python_3_10_as_3_11_reads_it(written: str, read_by_3_10: str) -> None:
    # Python 3.10's fromisoformat reads a fraction of 3 or 6 digits only, and no Z.
    from datetime import datetime

    assert vecbook.records.fromisoformat_310(written) == read_by_3_10
    assert vecbook.records.iso_moment(written) == datetime.fromisoformat(written)
