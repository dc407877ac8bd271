"""The records of the keyword cache file as columns: each record's file path, source and metadata
keys as numbers into tables of the distinct ones, its lines and where its text begins in its
content as integers, and its metadata values as numbers into one table of values (the short
strings among them once each), so that a restart makes a million records from a few numpy
arrays and lists rather than a JSON row each. The few fields that are not their usual form (a
text that is not the end of its content, an id, a citation, a chat window's segments) are JSON,
a source at a time.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .records import INTERNED_CHARS, Record, StoredTexts, shared_keys

# The file's arrays of the records' columns, each over every stored record in order (but
# ``record_values``, over their values, and ``extra_ends``, one per source).
RECORD_ARRAYS = ("record_paths", "record_lines", "record_ends", "record_keys", "record_origins", "record_bodies",
                 "record_values", "value_table", "record_extras", "extra_ends")
NONE = -1  # a line (an end line) of None: SQLite rows have none


def storable_lines(record: Record) -> bool:
    """Whether a record's lines fit their columns (None or a non-negative int, as every reader
    gives them)."""
    return all(line is None or (type(line) is int and 0 <= line < 1 << 62)
               for line in (record.line_number, record.end_line))


def record_columns(sources: Sequence[Sequence[Record]]) -> tuple[dict[str, np.ndarray], dict[str, list[Any]]]:
    """The columns of the records of ``sources`` (each a list of records; their lines must be
    ``storable_lines``) as the file's arrays, and the tables they number into (metadata key sets,
    paths, sources: JSON for the file's header)."""
    total = sum(map(len, sources))
    paths, keys, origins = (np.empty(total, dtype=np.int32) for _ in range(3))
    lines, ends, bodies = (np.empty(total, dtype=np.int64) for _ in range(3))
    key_sets: dict[tuple[str, ...], int] = {}
    path_ids: dict[str, int] = {}
    origin_ids: dict[str, int] = {}
    shared: dict[tuple[type, Any], int] = {}  # each hashable value's number in ``table``
    table: list[Any] = []
    value_ids: list[int] = []
    extras = bytearray()
    extra_ends = np.zeros(len(sources), dtype=np.int64)  # a source's extras end here
    row = 0
    for number, records in enumerate(sources):
        unusual = []
        for position, record in enumerate(records):
            keys[row] = key_sets.setdefault(record.metadata_keys, len(key_sets))
            paths[row] = path_ids.setdefault(record.file_path, len(path_ids))
            origins[row] = origin_ids.setdefault(record.source, len(origin_ids))
            lines[row] = NONE if record.line_number is None else record.line_number
            ends[row] = NONE if record.end_line is None else record.end_line
            body = record._text
            bodies[row] = body if type(body) is int else NONE
            value_ids += [_value_id(value, shared, table) for value in record._values]
            if type(body) is not int or record._id is not None or record._citation is not None or record.segments:
                unusual.append([position, None if type(body) is int else body, record._id, record._citation,
                                record.segments])
            row += 1
        if unusual:
            extras += _json(unusual)
        extra_ends[number] = len(extras)
    arrays = {"record_paths": paths, "record_lines": lines, "record_ends": ends, "record_keys": keys,
              "record_origins": origins, "record_bodies": bodies,
              "record_values": np.array(value_ids, dtype=np.int32), "value_table": np.frombuffer(_json(table), np.uint8),
              "record_extras": np.frombuffer(bytes(extras), dtype=np.uint8), "extra_ends": extra_ends}
    return arrays, {"key_sets": list(key_sets), "paths": list(path_ids), "origins": list(origin_ids)}


def _value_id(value: Any, shared: dict[tuple[type, Any], int], table: list[Any]) -> int:
    """``value``'s number in ``table``: one number for equal strings, numbers, booleans and None
    (a float by its repr, so -0.0 stays itself), a number of its own for each list (a record's
    list is its own, as read)."""
    kind = type(value)
    if kind in (str, int, bool) or value is None:
        key = (kind, value)
    elif kind is float:
        key = (kind, repr(value))
    else:
        table.append(value)
        return len(table) - 1
    number = shared.get(key)
    if number is None:
        number = shared[key] = len(table)
        table.append(value)
    return number


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@dataclass
class StoredRecords:
    """The records of a keyword cache file, made a source at a time (``of``) from its columns,
    checked against each other and the tables (a mismatch raises ValueError)."""

    columns: dict[str, np.ndarray]
    key_sets: list[tuple[str, ...]]
    paths: list[str]
    origins: list[str]
    values: list[Any]
    value_starts: np.ndarray  # record r's values: record_values[value_starts[r]:value_starts[r + 1]]

    @classmethod
    def read(cls, header: dict[str, Any], arrays: dict[str, np.ndarray], sources: int) -> StoredRecords:
        """From the file's ``header`` tables and ``arrays`` (RECORD_ARRAYS), for ``sources`` sources."""
        intern = sys.intern
        key_sets = list(map(shared_keys, header["key_sets"]))
        paths, origins = [intern(p) for p in header["paths"]], [intern(o) for o in header["origins"]]
        table = json.loads(arrays["value_table"].tobytes())
        if not all(type(p) is str for p in paths + origins) or not isinstance(table, list):
            raise ValueError("its record tables are not what they should be")
        values = [intern(v) if type(v) is str and len(v) <= INTERNED_CHARS else v for v in table]
        columns = {name: arrays[name] for name in RECORD_ARRAYS if name not in ("value_table",)}
        count = len(columns["record_paths"])
        ids = columns["record_values"]
        if any(len(columns[name]) != count for name in ("record_lines", "record_ends", "record_keys",
                                                          "record_origins", "record_bodies")) \
                or len(columns["extra_ends"]) != sources \
                or (count and (not _within(columns["record_keys"], len(key_sets))
                               or not _within(columns["record_paths"], len(paths))
                               or not _within(columns["record_origins"], len(origins)))) \
                or (len(ids) and not _within(ids, len(values))) \
                or int(columns["extra_ends"][-1] if sources else 0) != len(columns["record_extras"]) \
                or (count and min(int(columns[name].min()) for name in ("record_lines", "record_ends",
                                                                         "record_bodies")) < NONE):
            raise ValueError("its record columns do not agree")
        sizes = np.fromiter(map(len, key_sets), dtype=np.int64, count=len(key_sets))
        value_starts = np.concatenate([[0], np.cumsum(sizes[columns["record_keys"]])]) if count else np.zeros(1, np.int64)
        if int(value_starts[-1]) != len(ids):
            raise ValueError("the records' metadata does not agree with their keys")
        return cls(columns, key_sets, paths, origins, values, value_starts)

    def of(self, number: int, first: int, end: int, texts: StoredTexts, refs: Sequence[int]) -> list[Record]:
        """The records ``first``..``end`` (those of source ``number``), their contents read back
        from ``texts`` by ``refs``."""
        column = self.columns
        ids = column["record_values"][int(self.value_starts[first]):int(self.value_starts[end])].tolist()
        extra_ends = column["extra_ends"]
        start = int(extra_ends[number - 1]) if number else 0
        extras = json.loads(column["record_extras"][start:int(extra_ends[number])].tobytes()) \
            if extra_ends[number] > start else []
        keys = list(map(self.key_sets.__getitem__, column["record_keys"][first:end].tolist()))
        bodies = column["record_bodies"][first:end]
        if any(not isinstance(e, list) or len(e) != 5 or type(e[0]) is not int or not 0 <= e[0] < end - first
               for e in extras) \
                or set(np.flatnonzero(bodies == NONE).tolist()) != {e[0] for e in extras if e[1] is not None}:
            raise ValueError("its records' extras do not agree")
        return Record.stored_many(texts, refs, bodies.tolist(),
                                  list(map(self.paths.__getitem__, column["record_paths"][first:end].tolist())),
                                  _lines(column["record_lines"][first:end]), _lines(column["record_ends"][first:end]),
                                  keys, _value_tuples(list(map(self.values.__getitem__, ids)), keys),
                                  list(map(self.origins.__getitem__, column["record_origins"][first:end].tolist())),
                                  extras)

    def facts(self, first: int, end: int) -> tuple[frozenset[str], frozenset[str]]:
        """The metadata keys (casefolded) and the sources of records ``first``..``end``, from the
        columns (no record looked at)."""
        keys = np.unique(self.columns["record_keys"][first:end]).tolist()
        origins = np.unique(self.columns["record_origins"][first:end]).tolist()
        return (frozenset(k.casefold() for number in keys for k in self.key_sets[number]),
                frozenset(self.origins[number] for number in origins))


def _value_tuples(values: list[Any], keys: list[tuple[str, ...]]) -> list[tuple[Any, ...]]:
    """Each record's metadata values as a tuple as long as its keys (``values`` holds them one
    after another): cut by zip where the records have as many keys each (a source's records
    mostly share their header lines), else one slice each."""
    sizes = set(map(len, keys))
    if len(sizes) == 1:
        size = sizes.pop()
        if not size:
            return [()] * len(keys)
        return list(zip(*[iter(values)] * size))
    tuples, start = [], 0
    for names in keys:
        tuples.append(tuple(values[start:start + len(names)]))
        start += len(names)
    return tuples


def _within(ids: np.ndarray, size: int) -> bool:
    return int(ids.min()) >= 0 and int(ids.max()) < size


def _lines(column: np.ndarray) -> list[int | None]:
    """A column of lines as a list, NONE as None."""
    lines: list[int | None] = column.tolist()
    for row in np.flatnonzero(column == NONE).tolist():
        lines[row] = None
    return lines
