"""A folder of ``.txt`` records (``---`` between records, ``Key: Value`` headers) read as a
collection: the data directory's format, for a second folder of notes (``vecbook add ~/notes``).

Never guessed from content (any chat or note export may hold ``.txt`` files): a collection is
in this format when its table says ``format = "text"``, as ``vecbook add`` writes it for a
folder that no other format recognises.
"""

from __future__ import annotations

import re
from typing import Iterator

from ..records import Problem, Record, read_record_file
from .base import Export, ExportFile
from .whatsapp import HEADER, LIKE_HEADER

# After a message header's time, a separator before the name: "] ", " - ", " -- " (a journal's
# "2024-03-05 10:30 Standup: ..." or a log's "08:15:02 ERROR: ..." has none).
_CHAT_LIKE = re.compile(r"\d[:.]\d{2}(?:[:.]\d{2})?[^:\n]{0,8}?(?:\]|\s[-\u2013\u2014]{1,2}\s)[^\n]*?: ")


def detect(export: Export) -> bool:
    """Never: a folder of .txt files is this format only when the config says so."""
    return False


def read(export: Export) -> list[Record]:
    """The records of every ``.txt`` file of the export, cited as ``<collection>/<file>:<lines>``."""
    files = export.find(lambda f: f.name.lower().endswith(".txt"))
    return export.read_each(files, lambda file: _records(export, file))


def _records(export: Export, file: ExportFile) -> Iterator[Record]:
    data = file.read_bytes()
    _unread_chat(export, file, data)
    records, problems = read_record_file(data, file.label)
    for problem in problems:
        export.problems.append(Problem(problem.where, problem.line, f"{export.problem_prefix}{problem.reason}",
                                       problem.skipped) if export.problem_prefix else problem)
    for record in records:
        yield record if record.source == export.name else record.replace(source=export.name)


def _unread_chat(export: Export, file: ExportFile, data: bytes) -> None:
    """A WARN when the file's first line starts like a WhatsApp message whose date or time form
    the WhatsApp reader does not read: read as text, the chat has no dates or senders."""
    first = next(((number, line) for number, line in enumerate(data[:2000].decode("utf-8", "replace").split("\n"), 1)
                  if line.strip()), None)
    if first is not None and LIKE_HEADER.match(first[1]) and not HEADER.match(first[1]) and _CHAT_LIKE.search(first[1]):
        export.warn(file, first[0], f"starts like a WhatsApp chat, in a date or time form not read "
                                    f"({first[1].strip()[:80]!r}): read as text, without dates or senders",
                    skipped=False)
