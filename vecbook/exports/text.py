"""A folder of ``.txt`` records (``---`` between records, ``Key: Value`` headers) read as a
collection: the data directory's format, for a second folder of notes (``vecbook add ~/notes``).

Never guessed from content (any chat or note export may hold ``.txt`` files): a collection is
in this format when its table says ``format = "text"``, as ``vecbook add`` writes it for a
folder that no other format recognises.
"""

from __future__ import annotations

from typing import Iterator

from ..conflicts import CONFLICT_KEY, conflict_original
from ..records import Problem, Record, read_record_file
from .base import Export, ExportFile
from .discord import plain_text_export
from .whatsapp import unread_chat


def detect(export: Export) -> bool:
    """Never: a folder of .txt files is this format only when the config says so."""
    return False


def read(export: Export) -> list[Record]:
    """The records of every ``.txt`` file of the export, cited as ``<collection>/<file>:<lines>``."""
    files = export.find(lambda f: f.name.lower().endswith(".txt"))
    return export.read_each(files, lambda file: _records(export, file))


def _records(export: Export, file: ExportFile) -> Iterator[Record]:
    data = file.read_bytes()
    head = data[:2000].decode("utf-8", "replace")
    if (first := unread_chat(head)) is not None:
        export.warn(file, first[0], f"starts like a WhatsApp chat, in a date or time form not read "
                                    f"({first[1][:80]!r}): read as text, without dates or senders", skipped=False)
    elif plain_text_export(head):
        export.warn(file, 1, "DiscordChatExporter's plain-text export: read as text, without dates or senders "
                             "(export the channel again choosing the JSON format to read it by message)", skipped=False)
    records, problems = read_record_file(data, file.label)
    for problem in problems:
        export.problems.append(Problem(problem.where, problem.line, f"{export.problem_prefix}{problem.reason}",
                                       problem.skipped) if export.problem_prefix else problem)
    copy_of = conflict_original(file.label)  # a sync tool's copy of another file: say so
    for record in records:
        changes = {} if record.source == export.name else {"source": export.name}
        if copy_of is not None:
            changes["metadata"] = {**record.metadata, CONFLICT_KEY: copy_of}
        yield record.replace(**changes) if changes else record

