"""Write the record cases whose exact bytes an editor would mangle.

CRLF endings, a BOM, bytes that are not UTF-8, trailing spaces and a missing final
newline do not survive "strip trailing whitespace" or "convert line endings", so
these inputs are generated here instead of edited by hand. Run it from anywhere:

    python tests/data/records/make_cases.py

Their expected ``.json`` files are written by hand, like every other case.
``test_records.py`` checks that the files on disk still match CASES.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

CASES: dict[str, bytes] = {
    # Windows line endings: "---\r" is still a separator, "\r" never reaches text.
    "crlf": b"Author: ana\r\n\r\nFirst body line.\r\nSecond body line.\r\n---\r\nSecond record.\r\n",
    # A leading BOM is dropped, so the first header is still a header.
    "bom": b"\xef\xbb\xbfTitle: with a BOM\nBody text.\n---\nSecond record.\n",
    "bom_crlf": b"\xef\xbb\xbfOnly record, BOM and CRLF.\r\n---\r\n",
    # \xff on line 2 and a truncated 3-byte sequence on line 6: records kept, U+FFFD in text.
    "invalid_utf8": b"Good line.\nBad \xff byte.\n---\nClean record.\n---\nEnds badly \xe2\x82\n",
    # "--- " and "---\t" are not separators: the text stays in one record.
    "separator_trailing_spaces": b"Before.\n---  \nStill the same record.\n---\t\nAnd this.\n",
    # An LF file with one CRLF separator line, and no newline at the end.
    "mixed_endings_no_final_newline": b"One.\n---\r\nTwo.\n---\nThree, no final newline.",
}


def write_cases(folder: Path = HERE) -> list[Path]:
    """Write every case as ``NAME.txt`` in folder; returns the paths written."""
    written = []
    for name, data in CASES.items():
        path = folder / f"{name}.txt"
        path.write_bytes(data)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_cases():
        print(path)
