"""Chat hits merged where they touch (pure functions over ranked records).

A chat export is searched in conversation windows, so the best hits of a question are often
consecutive windows of one conversation: the question asked and its answer, a fact and the
reply to it. Such hits become one hit that holds both windows' messages in file order, cites
the lines from the first window's first message to the last one's last, and takes the best
score; the merged hit takes the rank of the better one, so the next hit moves up.

A question that names a participant of a chat ("what did Ana say about the trip?") favours the
windows where that person writes (``named_windows``, weighed by NAME_WEIGHT in ``blends``): softly, as
a filter would lose the answers another person gave.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .records import Record
from .tokens import DEFAULT_LANGUAGE, SEGMENTED_RE, fold, lowered, stop_words, words, words_of

# The largest merged text (characters): a chat that never pauses would else chain its windows
# into one hit no budget holds. It is also MCP's default max_chars, so a merged hit comes whole
# to an assistant. Chosen on RealMem's tuning personas and their phone-shaped copy
# (bench/chat_recall.py): no merge cap at all lost half of the evidence within 4,000
# characters on the phone-shaped copy.
MERGE_MAX_CHARS = 2_000
# A touching hit is merged only when its score is at least this share of the better one's:
# a far weaker neighbour would be lifted above the distinct hits ranked between them (at 0.75,
# and with no such rule, the phone-shaped copy lost evidence within 4,000 and 8,000 characters).
MERGE_SCORE_SHARE = 0.9
# When a query names a participant of a chat, each candidate's score becomes (1 - NAME_WEIGHT) x
# its score, + NAME_WEIGHT where the named person writes in the window (scores stay in [0, 1]; a
# window of theirs gains ~0.11 on the rest). Whether they write, not how much: in a chat of two,
# both write in nearly every window, and lifting windows by the named person's share of their
# messages lifted noise (bench/chat_quality.py, whose questions name "the bot" in 59 of 90:
# semantic MRR@10 0.747 -> 0.727, keyword 0.597 -> 0.592), while taking part changes no hybrid
# figure there. The query's words also meet the name in each of that person's message lines
# ("Ana: ..."), which weighs little where they write often: the lift tips close matches, so a
# window where Ana speaks passes one where only Ben says the same, and a clearly better match
# from Ben (more than that above) stays first.
NAME_WEIGHT = 0.1
# Words that name nobody even where an export has a sender called so (iMessage exports write "Me",
# some apps "You" for the owner's own messages): a question says them of itself and its reader.
_PRONOUNS = frozenset({"i", "me", "my", "mine", "you", "your", "yours", "we", "us", "our"})
# Metadata keys that must agree for two windows to be parts of one conversation.
_CONVERSATION_KEYS = ("conversation", "thread")
# Formats whose messages are written line for line in the file, a message's later lines as the
# file's next lines (WhatsApp's text export): a line of such a message's text is a line of the
# file. In a JSON export a message is an object over several lines, its line breaks escaped
# inside one of them, so only the whole message can be cited.
LINE_FOR_LINE_FORMATS = frozenset({"whatsapp"})


def is_chat_window(record: Record) -> bool:
    """A window of chat messages: its text is its messages' lines, each a segment."""
    return (bool(record.segments) and record.metadata.get("message_count") == len(record.segments)
            and len(record.text) == len(record.content))


def touch(records: Sequence[Record], a: int, b: int) -> bool:
    """Whether records ``a`` and ``b`` are consecutive windows of one chat conversation."""
    if abs(a - b) != 1:
        return False
    first, second = records[min(a, b)], records[max(a, b)]
    return (is_chat_window(first) and is_chat_window(second) and first.file_path == second.file_path
            and all(first.metadata.get(k) == second.metadata.get(k) for k in _CONVERSATION_KEYS)
            and first.end_line is not None and second.line_number is not None
            and first.end_line < second.line_number)


def lines_shown(record: Record, start: int, end: int) -> tuple[int, int] | tuple[None, None]:
    """The file lines holding ``record.content[start:end]``, as ``Record.lines_of`` gives them,
    narrowed to the lines shown where a chat message written line for line is shown in part (a
    hit cut to ``max_chars`` around one line of a recipe sent as one message of ten lines cites
    that line, not ten): reading the cited lines gives the text shown."""
    first, last = record.lines_of(start, end)
    if (first is None or last is None or not is_chat_window(record)
            or record.metadata_value("format") not in LINE_FOR_LINE_FORMATS):
        return first, last
    content = record.content
    head, tail = _message_at(record, start), _message_at(record, max(start, end - 1))
    if head is not None:
        first = head[1] + content.count("\n", head[0], start)
    if tail is not None:
        last = tail[1] + content.count("\n", tail[0], max(tail[0], end - 1))
    return first, last


def _message_at(record: Record, at: int) -> tuple[int, int] | None:
    """(where its text starts, its first line) of the message of a chat window holding offset
    ``at``, where its text has a line for each of its lines in the file; None where it has not
    (a reader dropped a blank line at its edges): then only the whole message can be cited."""
    segments, content = record.segments, record.content
    index = max(bisect.bisect_right([s[0] for s in segments], at) - 1, 0)
    offset, line, end_line = segments[index]
    stop = segments[index + 1][0] - 1 if index + 1 < len(segments) else len(content)
    return (offset, line) if content.count("\n", offset, stop) == end_line - line else None


def merge_touching(records: Sequence[Record], ranked: Iterable[tuple[int, float]], limit: int,
                   max_chars: int | None = None, share: float | None = None) -> list[tuple[int, list[int]]]:
    """Ranked hits (record, score; best first) merged where they touch: at most ``limit``
    merged hits, as the position of the best hit of each with the positions merged into it.
    A hit joins a better one it touches when its score is at least ``share`` of the better
    one's and their texts together stay within ``max_chars``; else it stays a hit of its own."""
    most = MERGE_MAX_CHARS if max_chars is None else max_chars
    least = MERGE_SCORE_SHARE if share is None else share
    kept: list[_Merged] = []
    owner: dict[int, _Merged] = {}  # record -> the merged hit holding it
    for position, (record, score) in enumerate(ranked):
        size = len(records[record].text)
        near = sorted({id(m): m for r in (record - 1, record + 1) if (m := owner.get(r)) is not None
                       and touch(records, record, r)}.values(), key=lambda m: m.lead)
        homes = [m for m in near if score >= least * m.score and m.chars + 1 + size <= most]
        if not homes:
            if len(kept) == limit:
                break  # what ranks below the last hit shown is not merged in either
            homes = [_Merged(position, score, [], [], -1)]
            kept.append(homes[0])
        else:
            homes[0].merged.append(position)
        home = homes[0]
        home.records.append(record)
        home.chars += 1 + size
        if len(homes) > 1 and home.chars + 1 + homes[1].chars <= most:  # it joins the two
            other = homes[1]
            home.merged += [other.lead, *other.merged]
            home.records += other.records
            home.chars += 1 + other.chars
            kept.remove(other)
        for held in home.records:
            owner[held] = home
    return [(m.lead, sorted(m.merged)) for m in kept]


@dataclass
class _Merged:
    """A hit being merged: its best hit's position and score, the positions merged into it,
    the records it holds and the characters of their texts joined by newlines."""

    lead: int
    score: float
    merged: list[int]
    records: list[int]
    chars: int


def merged_text(records: Sequence[Record], held: Iterable[int]) -> str:
    """The text of a merged hit: its windows' messages in file order, a line each."""
    return "\n".join(records[r].text for r in sorted(held))


def merged_metadata(records: Sequence[Record], held: Iterable[int], lead: dict[str, Any]) -> dict[str, Any]:
    """The metadata of a merged hit: its best window's (``lead``), with what tells of the messages
    it shows taken from every window: the first's ``date``, the last's ``end_date``, everyone who
    writes (in order of their first message) and the messages counted together, so a hit holding
    five messages of three people is not said to hold one message of one."""
    windows = [records[r].metadata for r in sorted(held)]
    merged = dict(lead)
    if "date" in windows[0]:
        merged["date"] = windows[0]["date"]
    if "end_date" in windows[-1]:
        merged["end_date"] = windows[-1]["end_date"]
    if "participants" in lead:
        people = [p for w in windows for p in w.get("participants") or ()]
        merged["participants"] = list(dict.fromkeys(people))
    if "message_count" in lead:
        merged["message_count"] = sum(w.get("message_count") or 0 for w in windows)
    return merged


def merged_citation(records: Sequence[Record], held: Iterable[int]) -> str:
    """``file:first-last`` of a merged hit, with the first window's message id where it has one."""
    order = sorted(held)
    first, last = records[order[0]], records[order[-1]]
    anchor = first.citation.partition("#")[2]
    return f"{first.file_path}:{first.line_number}-{last.end_line}" + (f"#{anchor}" if anchor else "")


def named_windows(records: Sequence[Record], candidates: Iterable[int], query: str) -> set[int]:
    """The chat windows among ``candidates`` where someone the query names writes (empty when it
    names nobody): names are the candidates' participants (the export's senders), read from
    their metadata alone."""
    talk = {i: people for i in candidates
            if "message_count" in records[i].metadata_keys and (people := records[i].metadata_value("participants"))}
    named = named_people(query, {p for people in talk.values() for p in people if isinstance(p, str)})
    return {i for i, people in talk.items() if not named.isdisjoint(people)} if named else set()


def named_people(query: str, people: Iterable[str]) -> set[str]:
    """Those of ``people`` whom ``query`` names: a word of the name (folded, as the keyword index
    reads it: ``jose`` names José) is a word of the query; a name in a script written without
    spaces (王小明) is named by the whole of it. Stop words, pronouns (a sender called "You" or
    "Me") and one-letter words name nobody."""
    low = lowered(query)
    said = {fold(w) for w in words_of(query)}
    common = stop_words(DEFAULT_LANGUAGE) | _PRONOUNS
    named = set()
    for person in people:
        for word in words(lowered(person)):
            if SEGMENTED_RE.search(word):
                hit = word in low
            else:
                term = fold(word)  # a word of letters or digits: a flag in a name (🇪🇸) names nobody
                hit = len(term) > 1 and term not in common and term in said and any(c.isalnum() for c in term)
            if hit:
                named.add(person)
                break
    return named
