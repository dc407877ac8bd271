"""Sync-conflict copies: the second file a sync tool leaves beside a note that two devices changed
before they heard from each other, named after the note.

Syncthing writes ``note.sync-conflict-20241203-101010-ABCDEFG.md`` (the date, the time and the
first seven characters of the device id), Dropbox ``note (conflicted copy 2024-12-03).md`` or
``note (Ana's conflicted copy 2024-12-03).md``, Nextcloud and ownCloud ``note (conflicted copy
2024-12-03 101010).md``. Such a copy may hold the only record of an edit, so it stays searchable;
it is read as its note (the same name and title, so a copy that did not drift is the same text)
and says whose copy it is (``CONFLICT_KEY``), and the note comes before it where they score alike.

iCloud's and Obsidian's ``note 2.md`` is no such name: Obsidian names new notes ``Untitled 1.md``,
``Untitled 2.md``, and ``Chapter 2.md`` beside ``Chapter.md`` is another note. Such a copy that
did not drift is folded into its note as any near-identical hit is.
"""

from __future__ import annotations

import re

# The metadata key of a copy's records: the path of the note it is a copy of, as the copy's own
# path is written (the folder's, "/"-separated).
CONFLICT_KEY = "conflict_copy_of"

_SYNCTHING = re.compile(r"(?P<stem>.+)\.sync-conflict-\d{8}-\d{6}-[0-9A-Z]{7}(?P<suffix>\.[^.]*)?")
_CONFLICTED_COPY = re.compile(r"(?P<stem>.+?) \([^()]*\bconflicted copy\b[^()]*\)(?P<suffix>\.[^.]*)?",
                              re.IGNORECASE)


def conflict_original(rel: str) -> str | None:
    """The path of the note whose sync-conflict copy ``rel`` (a "/"-separated path) is, in the same
    folder; None when ``rel`` is named as no such copy."""
    folder, _, name = rel.rpartition("/")
    for pattern in (_SYNCTHING, _CONFLICTED_COPY):
        match = pattern.fullmatch(name)
        if match:
            original = match["stem"] + (match["suffix"] or "")
            return f"{folder}/{original}" if folder else original
    return None
