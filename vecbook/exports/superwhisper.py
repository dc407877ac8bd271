"""SuperWhisper: the recordings folder (one folder a recording, each holding ``meta.json``).

One record a recording, citing the ``result`` text's lines; a recording longer
than a model window is cut into windows of consecutive ``segments``, each citing
the lines of its own segment objects.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

from ..records import Record, iso_moment
from .base import MAX_WINDOW_WORDS, Export, ExportFile, clean_text, export_record, iso
from .jsonpos import JsonText

META_NAME = "meta.json"
# A recording folder is named by its Unix time in seconds (e.g. "1714558502"):
# the date when meta.json has no "datetime".
_STAMP_RE = re.compile(r"^\d{9,11}$")


# How much of a meta.json is looked at first to tell what it is.
HEAD_BYTES = 8192


def detect(export: Export) -> bool:
    """A ``meta.json`` holding SuperWhisper's ``result`` and ``datetime`` plus a mode, model or segments."""
    return any(_looks_like(_head(f)) for f in _meta_files(export))


def _head(file: ExportFile) -> bytes:
    """The file's first bytes, or all of it when they end before a ``result``: the app writes
    its keys sorted, so a long dictation's ``llmResult``, ``prompt`` and ``rawResult`` put
    ``result`` past any fixed number of bytes."""
    head = file.head(HEAD_BYTES)
    return file.read_bytes() if len(head) >= HEAD_BYTES and b'"result"' not in head else head


def _looks_like(head: bytes) -> bool:
    keys = (b'"modeName"', b'"modelName"', b'"segments"')
    return b'"result"' in head and b'"datetime"' in head and any(k in head for k in keys)


def _meta_files(export: Export) -> list[ExportFile]:
    return export.find(lambda f: f.name == META_NAME)


def read(export: Export) -> list[Record]:
    """Every recording's transcript: one record, or windows of segments when long."""
    # Once the export is known to be SuperWhisper's, a meta.json with only the
    # required fields (older app versions wrote fewer) is read too.
    # (one that cannot be read is read too, so that its WARN says so)
    files = [f for f in _meta_files(export)
             if b'"result"' in (head := _head(f)) or b'"segments"' in head or f.fault is not None]
    return export.read_each(files, lambda f: _records(export, f))


def _records(export: Export, file: ExportFile) -> Iterator[Record]:
    doc = JsonText(file.read_text())
    meta, _ = doc.decode(doc.skip_ws(0))
    if not isinstance(meta, dict):
        export.warn(file, 1, "meta.json is not an object; recording skipped")
        return
    recording = file.rel.replace("!/", "/").rsplit("/", 2)[-2] if "/" in file.rel.replace("!/", "/") else ""
    when = _when(meta.get("datetime"), recording)
    if when is None:
        export.warn(file, _line_of(doc, "datetime") or 1, "recording without a readable 'datetime'; kept undated",
                    skipped=False)
    mode = meta.get("modeName") if isinstance(meta.get("modeName"), str) and meta.get("modeName") else None
    metadata: dict[str, Any] = {
        "date": iso(when), "title": f"Voice note - {mode}" if mode else "Voice note",
        "tags": [mode] if mode else None, "duration_ms": _number(meta.get("duration")),
        "model": meta.get("modelName") or None, "format": export.format,
    }
    metadata = {k: v for k, v in metadata.items() if v is not None}
    text = clean_text(meta.get("result") or "") if isinstance(meta.get("result"), str) else ""
    spans = list(_segments(doc))
    if len(text.split()) > MAX_WINDOW_WORDS and spans:
        yield from _windows(export, file, spans, metadata, recording)
        return
    if not text:
        text = clean_text(" ".join(s[2] for s in spans))
    if not text:
        export.warn(file, 1, "recording without text ('result' and 'segments' are empty); skipped")
        return
    at = doc.path(["result"])
    line, end_line = doc.lines(at, doc.decode(at)[1]) if at is not None and meta.get("result") else (
        spans[0][0], spans[-1][1])
    yield export_record(export, file, text, line, end_line, metadata, recording or "recording",
                        anchor=recording or None, segments=((0, line, end_line),))


def _segments(doc: JsonText) -> Iterator[tuple[int, int, str, Any, Any]]:
    """(first line, last line, text, start s, end s) of each segment with text."""
    at = doc.path(["segments"])
    if at is None or doc.text[at] != "[":
        return
    for begin, end, item in doc.elements(at):
        if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip():
            line, end_line = doc.lines(begin, end)
            yield line, end_line, clean_text(item["text"]), item.get("start"), item.get("end")


def _windows(export: Export, file: ExportFile, spans: list[tuple[int, int, str, Any, Any]],
             metadata: dict[str, Any], recording: str) -> Iterator[Record]:
    """Consecutive segments up to MAX_WINDOW_WORDS words a window; each cites its segments' lines."""
    groups: list[list[tuple[int, int, str, Any, Any]]] = [[]]
    words = 0
    for span in spans:
        count = len(span[2].split())
        if groups[-1] and words + count > MAX_WINDOW_WORDS:
            groups.append([])
            words = 0
        groups[-1].append(span)
        words += count
    for number, group in enumerate(groups, 1):
        parts, segments, offset = [], [], 0
        for line, end_line, said, _, _ in group:
            segments.append((offset, line, end_line))
            parts.append(said)
            offset += len(said) + 1
        window = {**metadata, "part": f"{number} of {len(groups)}",
                  "start_s": _number(group[0][3]), "end_s": _number(group[-1][4])}
        window = {k: v for k, v in window.items() if v is not None}
        yield export_record(export, file, "\n".join(parts), group[0][0], group[-1][1], window,
                            f"{recording or 'recording'}/{number}", anchor=recording or None,
                            segments=tuple(segments))


def _when(value: Any, recording: str) -> datetime | None:
    """``datetime`` as written (naive stays naive, "Z" is UTC), else the folder's Unix time."""
    if isinstance(value, str) and value.strip():
        try:
            return iso_moment(value)
        except ValueError:
            pass
    if _STAMP_RE.match(recording):
        return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=int(recording))
    return None


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else value


def _line_of(doc: JsonText, key: str) -> int | None:
    at = doc.path([key])
    return doc.line_at(at) if at is not None else None
