"""The edits ``vecbook add`` and ``vecbook remove`` make to a config file: a ``[[collections]]``
table appended or taken out with tomlkit, so the file keeps its text, comments and layout, each
result checked as any config before it replaces the file."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, Sequence

from .config import ConfigError, load_config
from .registry import checked_config


def add_source(config_file: Path, entry: dict[str, Any]) -> None:
    """Append ``entry`` as a ``[[collections]]`` table, keeping the file's text and comments; the
    result is checked like any config before it replaces the file (created with its folder)."""
    import tomlkit

    text = config_file.read_text(encoding="utf-8") if config_file.is_file() else ""
    document = tomlkit.parse(text)
    tables = document.get("collections")
    if tables is not None and not isinstance(tables, tomlkit.items.AoT):
        raise ConfigError(f"'collections' in {config_file} is not written as [[collections]] tables (an inline "
                          "array?), which `vecbook add` appends to: rewrite it as [[collections]] tables, or add "
                          "this source there by hand")
    if tables is None:
        if text.strip():
            document.add(tomlkit.nl())  # the first table apart from the settings above it
        tables = tomlkit.aot()
        document.append("collections", tables)
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = value
    table.add(tomlkit.nl())  # a blank line after it, as between hand-written tables
    tables.append(table)
    _replace_checked(config_file, _apart_from_above(tomlkit.dumps(document), len(tables) - 1))


def _apart_from_above(text: str, number: int) -> str:
    """``text`` with a blank line above its ``number``-th ``[[collections]]`` header where the line
    right above it is not blank: a hand-written table that ends in a comment keeps it (a comment
    right above a header describes that table, and ``remove`` takes such lines with it)."""
    lines = text.splitlines(keepends=True)
    headers = [i for i in _table_lines(lines) if COLLECTION_LINE.match(lines[i].rstrip("\r\n"))]
    if number < len(headers) and headers[number] > 0 and lines[headers[number] - 1].strip():
        lines.insert(headers[number], "\n")
    return "".join(lines)


def remove_source(config_file: Path, name: str) -> None:
    """Take the ``[[collections]]`` table named ``name`` out of the file, the rest untouched."""
    import tomlkit

    if not config_file.is_file():
        raise ConfigError(f"no source named '{name}': {config_file} does not exist")
    checked_config(config_file)
    text = config_file.read_text(encoding="utf-8")
    document = tomlkit.parse(text)
    tables = document.get("collections") or []
    names = [str(t.get("name")) for t in tables]
    if name not in names:
        raise ConfigError(f"no source named '{name}' in {config_file} (sources: {', '.join(names) or 'none'})")
    number = names.index(name)
    del tables[number]
    if not tables:
        del document["collections"]
    # tomlkit keeps the comment lines above a table with the table before it, so deleting the
    # table left its own comment on the next one and took the next one's away. Cut the text
    # instead where it reads the same as tomlkit's result; else (a table whose lines cannot be
    # told apart, such as a multi-line string holding "[") take tomlkit's.
    edited = _without_table(text, number)
    if edited is None or not _reads_as(edited, document):
        edited = tomlkit.dumps(document)
    _replace_checked(config_file, edited)


def _reads_as(text: str, document: Any) -> bool:
    """Whether ``text`` parses to the same data as the tomlkit ``document``."""
    import tomlkit

    try:
        return bool(tomlkit.parse(text).unwrap() == document.unwrap())
    except tomlkit.exceptions.TOMLKitError:
        return False


# A line that opens a table, and one that opens a [[collections]] table; a comment line; the
# quotes that open and close a multi-line string.
TABLE_LINE = re.compile(r"\s*\[")
COLLECTION_LINE = re.compile(r"\s*\[\[\s*collections\s*\]\]\s*(#.*)?$")
COMMENT_LINE = re.compile(r"\s*#")
MULTILINE_QUOTES = re.compile(r'"""|\'\'\'')


def _without_table(text: str, number: int) -> str | None:
    """``text`` without its ``number``-th ``[[collections]]`` table: from the comment lines
    right above its header (they describe it) to those right above the next table's header
    (they describe that one); None where it has no such table."""
    lines = text.splitlines(keepends=True)
    tables = _table_lines(lines)
    headers = [i for i in tables if COLLECTION_LINE.match(lines[i].rstrip("\r\n"))]
    if number >= len(headers):
        return None
    header = headers[number]
    following = next((i for i in tables if i > header), len(lines))
    kept = lines[:_comments_above(lines, header)] + lines[_comments_above(lines, following):]
    return "".join(kept).rstrip("\n") + "\n" if any(line.strip() for line in kept) else ""


def _table_lines(lines: Sequence[str]) -> list[int]:
    """The lines that open a table, those inside multi-line strings left out."""
    found, quote = [], None
    for number, line in enumerate(lines):
        if quote is None and TABLE_LINE.match(line):
            found.append(number)
        for mark in MULTILINE_QUOTES.findall(line):
            quote = mark if quote is None else (None if mark == quote else quote)
    return found


def _comments_above(lines: Sequence[str], line: int) -> int:
    """The first of the comment lines directly above ``line`` (``line`` itself where none is)."""
    while line > 0 and COMMENT_LINE.match(lines[line - 1]):
        line -= 1
    return line


def _replace_checked(config_file: Path, text: str) -> None:
    """Write ``text`` beside the file, load it as a config, then move it in place: a bad
    result never replaces the user's file."""
    config_file.parent.mkdir(parents=True, exist_ok=True)
    target = config_file.resolve()  # a linked config (dotfile managers) is edited where it lies
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        if target.exists():
            shutil.copymode(target, temporary)  # a private (0600) config stays private
        try:
            load_config(temporary)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(str(temporary), str(config_file))) from None
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
