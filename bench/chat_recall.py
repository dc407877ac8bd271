#!/usr/bin/env python3
"""Chat evidence recall within a text budget: how much of a question's evidence the hits of
plain ``search(question, max_results=30)`` hold, taken best first, at 10 hits and within
4,000 / 8,000 / 12,000 characters of hit text.

Usage::

    python bench/chat_recall.py realmem [/work/shared/eval/realmem] --cache-dir DIR
        [--personas NAME ...] [--split tune|held-out|all] [--max-chars N] [--details FILE]
    python bench/chat_recall.py chatterbot [--pause MINUTES] --cache-dir DIR
    python bench/chat_recall.py phone [/work/shared/eval/realmem] --cache-dir DIR [--split ...]
    python bench/chat_recall.py short [/work/shared/eval/realmem] --cache-dir DIR [--split ...]
        [--telegram]

``--max-chars N`` asks each search with ``max_chars=N`` (each hit's text cut to N characters
around its match, its cited lines those shown).

Datasets:

* ``realmem``: RealMem (Apache-2.0; 10 personas of dated user-assistant sessions, with
  memory queries labelled by the earlier sessions and turns they need). Each persona's
  sessions are written as one ChatGPT ``conversations.json`` (one conversation a session,
  ``create_time`` from its ``current_time``, turns a minute apart) and read by VecBook's own
  reader as a collection. A query turn is searched over the sessions before its own in the
  file (by position: some files step back in date), with the filter ``thread__lt=POSITION``
  (each conversation's id is its position). Evidence: the gold sessions
  (``memory_session_uuids``) and the gold turns (each used memory point's
  ``source_content_snapshot``, matched to its session's turn by text). A hit covers a turn
  when its cited lines overlap the lines of the turn's message object.
* ``chatterbot``: the chat benchmark of ``bench/chat_quality.py`` (90 questions over
  chatterbot-corpus dialogues written as a WhatsApp export, each judged by one message).
  ``--pause 5`` re-times the same lines so that dialogues follow five minutes apart: a chat
  that never pauses, whose windows run over several dialogues.
* ``phone``: RealMem re-shaped as long two-person phone chats: each persona's sessions as one
  WhatsApp chat between two people, every turn sent as a burst of short messages (one a
  sentence or line), sessions days apart. Same queries and gold turns (now a run of
  messages), searched over the lines before the query's session.
* ``short``: the phone shape with both sides writing short messages, as two people do: the
  friend's replies cut to their first sentences (at most 160 characters), so messages average
  about 120 characters. Only the questions whose every gold turn is the persona's own are
  asked (the friend's long answers are cut away): the evidence is what the person said.

``--telegram`` writes the ``phone`` and ``short`` chats as a Telegram Desktop ``result.json``
rather than a WhatsApp ``.txt``: the same messages, cited by the lines of their JSON objects.

Kinds: RealMem questions are ``one session`` or ``several sessions`` (by their gold sessions:
the multi-hop case); chatterbot questions by whose message answers. Personas are split in
two halves fixed in ``TUNE``: choices are made on the tuning half, and the other half is
reported beside it, never tuned on.

Printed: the command, the CPU (name and flags), the settings, then per dataset and group
the evidence recall (a hit cites lines of the evidence), the held recall (a hit also shows at
least half of the evidence's distinct words: stricter where a message is one JSON line, as in
a ChatGPT export), the share of questions with any evidence, and the session recall (RealMem),
each at 10 hits and within each budget, with the characters the hits take.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vecbook  # noqa: E402  (needs the repository root on sys.path)
from vecbook.exports.base import clean_text  # noqa: E402

DEPTH = 30  # hits asked for: more than any budget takes
BUDGETS = (4_000, 8_000, 12_000)
TOP = 10
REALMEM = Path("/work/shared/eval/realmem")
QUESTIONS = ROOT / "bench" / "data" / "chat_questions.json"
# Personas choices are made on; the other five are held out (reported, never tuned on).
TUNE = ("Adeleke_Okonjo", "Kenta_Tanaka", "Liam_O_Connor", "Oliver_Smith", "Sarah_Miller")
# Gold turns whose snapshot text matches no turn exactly are matched by word overlap at least this.
SNAPSHOT_OVERLAP = 0.5
# A hit holds a piece of evidence when it shows at least this share of its distinct words.
HELD_SHARE = 0.5
_WORD_RE = re.compile(r"\w+")


# --- what is measured ---------------------------------------------------------

@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: the lines of a message (or turn) in the export file, and its text."""

    conversation: str
    first: int
    last: int
    text: str = ""


@dataclass
class Question:
    """A question with its evidence, the filters it is searched with, and its kind."""

    id: str
    text: str
    kind: str
    group: str
    evidence: list[Evidence]
    sessions: set[str] = field(default_factory=set)  # gold conversations (RealMem)
    filters: dict[str, Any] | None = None


@dataclass(frozen=True)
class Shown:
    """What a measure needs of one hit: its conversation, cited lines and text."""

    conversation: str
    first: int | None
    last: int | None
    text: str

    @property
    def chars(self) -> int:
        return len(self.text)


def taken(hits: Sequence[Shown], budget: int | None) -> list[Shown]:
    """The hits best first until the next one would pass ``budget`` characters (None: the top 10)."""
    if budget is None:
        return list(hits[:TOP])
    out, total = [], 0
    for hit in hits:
        if total + hit.chars > budget:
            break
        out.append(hit)
        total += hit.chars
    return out


def covers(hit: Shown, evidence: Evidence) -> bool:
    """A hit covers a piece of evidence when its cited lines overlap the evidence's."""
    return (hit.conversation == evidence.conversation and hit.first is not None and hit.last is not None
            and hit.first <= evidence.last and evidence.first <= hit.last)


def holds(hit: Shown, evidence: Evidence) -> bool:
    """Stricter: the hit covers the evidence's lines and its text holds at least half of the
    evidence's distinct words (a hit cut inside a long message, or touching only the end of
    one, cites its lines without showing what it says)."""
    if not covers(hit, evidence):
        return False
    wanted = set(_WORD_RE.findall(evidence.text.lower()))
    return not wanted or len(wanted & set(_WORD_RE.findall(hit.text.lower()))) >= HELD_SHARE * len(wanted)


def measure(question: Question, hits: Sequence[Shown], budget: int | None) -> dict[str, float]:
    """Evidence recall (by lines and by text), any evidence, session recall and characters of
    the hits within one cut."""
    kept = taken(hits, budget)
    found = [any(covers(h, e) for h in kept) for e in question.evidence]
    held = [any(holds(h, e) for h in kept) for e in question.evidence]
    sessions = {h.conversation for h in kept}
    return {"recall": sum(found) / len(found) if found else 0.0, "held": sum(held) / len(held) if held else 0.0,
            "any": float(any(found)),
            "sessions": len(question.sessions & sessions) / len(question.sessions) if question.sessions else 0.0,
            "chars": float(sum(h.chars for h in kept)), "hits": float(len(kept))}


def _self_check() -> None:
    """Toy cases worked by hand."""
    hits = [Shown("a", 1, 5, "x " * 1500), Shown("b", 10, 12, "y" * 4000), Shown("a", 20, 30, "z" * 2000),
            Shown("c", 1, 2, "w" * 10)]
    assert [h.chars for h in taken(hits, 4000)] == [3000]  # the second would pass: stop there
    assert len(taken(hits, 9000)) == 3 and len(taken(hits, None)) == 4
    question = Question("q", "?", "k", "g", [Evidence("a", 5, 6, "x q"), Evidence("b", 13, 14), Evidence("a", 30, 31, "z")],
                        {"a", "b"})
    assert measure(question, hits, 4000) == {"recall": 1 / 3, "held": 1 / 3, "any": 1.0, "sessions": 0.5,
                                             "chars": 3000.0, "hits": 1.0}
    assert measure(question, hits, None)["recall"] == 2 / 3 and measure(question, hits, None)["sessions"] == 1.0
    assert measure(question, hits, None)["held"] == 1 / 3  # "z" * 2000 is one word, not "z"
    assert not covers(Shown("a", None, None, "w"), Evidence("a", 1, 1))
    assert not holds(Shown("a", 1, 1, "one two"), Evidence("a", 1, 1, "one two three four five"))


_self_check()


# --- RealMem ----------------------------------------------------------------------

def read_persona(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """A persona's name and its sessions, in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    return str(data["_metadata"]["person_name"]), data["dialogues"]


def session_start(session: dict[str, Any], position: int) -> float:
    """Unix seconds of a session's start: its date at 09:00 UTC, plus its position in minutes
    (two sessions of one day keep their order)."""
    day = datetime.strptime(session["current_time"][:10], "%Y-%m-%d").replace(hour=9, tzinfo=timezone.utc)
    return (day + timedelta(minutes=position)).timestamp()


def chatgpt_export(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sessions as a ChatGPT ``conversations.json``: a conversation a session, its turns one
    branch of the ``mapping`` tree, a minute apart; the conversation's id is its position."""
    conversations = []
    for position, session in enumerate(sessions):
        start = session_start(session, position)
        root = f"root-{position}"
        mapping: dict[str, Any] = {root: {"id": root, "message": None, "parent": None, "children": []}}
        parent = root
        for number, turn in enumerate(session["dialogue_turns"]):
            node = f"n{position}-{number}"
            role = "user" if turn["speaker"] == "User" else "assistant"
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": f"m{position}-{number}", "author": {"role": role, "name": None, "metadata": {}},
                "create_time": start + 60 * number, "content": {"content_type": "text", "parts": [turn["content"]]},
                "status": "finished_successfully", "metadata": {}}}
            mapping[parent]["children"].append(node)
            parent = node
        conversations.append({"title": session["session_identifier"], "create_time": start,
                              "update_time": start + 60 * len(session["dialogue_turns"]), "mapping": mapping,
                              "current_node": parent, "conversation_id": str(position), "id": str(position)})
    return conversations


def gold_turns(sessions: list[dict[str, Any]], used: Iterable[dict[str, Any]]) -> tuple[list[tuple[int, int]], int]:
    """(session position, turn number) of each memory point used (once each), and how many
    found no turn. A point's turn is the one whose text is its ``source_content_snapshot``
    (exactly, else containing it or contained, else the most word overlap above
    SNAPSHOT_OVERLAP)."""
    position_of = {s["session_uuid"]: i for i, s in enumerate(sessions)}
    found: dict[tuple[int, int], None] = {}
    lost = 0
    for point in used:
        position = position_of.get(point.get("session_uuid"))
        if position is None:
            lost += 1
            continue
        session = sessions[position]
        snapshot = next((m.get("source_content_snapshot") for m in session.get("extracted_memory") or []
                         if m.get("content") == point.get("content")), None)
        turn = _turn_of(session["dialogue_turns"], snapshot) if snapshot else None
        if turn is None:
            lost += 1
        else:
            found[position, turn] = None
    return list(found), lost


def _turn_of(turns: list[dict[str, Any]], snapshot: str) -> int | None:
    texts = [t["content"] for t in turns]
    if snapshot in texts:
        return texts.index(snapshot)
    core = snapshot.strip()
    for number, text in enumerate(texts):
        if core and (core in text or (text.strip() and text.strip() in core)):
            return number
    words = set(re.findall(r"\w+", core.lower()))
    best, best_overlap = None, SNAPSHOT_OVERLAP
    for number, text in enumerate(texts):
        other = set(re.findall(r"\w+", text.lower()))
        overlap = len(words & other) / max(len(words | other), 1)
        if overlap >= best_overlap:
            best, best_overlap = number, overlap
    return best


def realmem_questions(name: str, sessions: list[dict[str, Any]], lines: dict[tuple[int, int], tuple[int, int]],
                      position_filter: str, persona_only: bool = False) -> tuple[list[Question], int]:
    """Each query turn with gold sessions as a Question (evidence: its gold turns' lines), and
    the number of memory points that matched no turn or message. ``persona_only``: only the
    questions whose every gold turn is the user's (the short shape cuts the other side)."""
    questions, lost = [], 0
    for position, session in enumerate(sessions):
        turns = session["dialogue_turns"]
        for number, turn in enumerate(turns):
            if not turn.get("is_query") or number + 1 >= len(turns):
                continue
            answer = turns[number + 1]
            gold_sessions = {sessions[i]["session_identifier"] for i, s in enumerate(sessions)
                             if s["session_uuid"] in set(answer.get("memory_session_uuids") or [])}
            if not gold_sessions:
                continue
            spots, missing = gold_turns(sessions, answer.get("memory_used") or [])
            evidence = [Evidence(sessions[p]["session_identifier"], *lines[p, t], sessions[p]["dialogue_turns"][t]["content"])
                        for p, t in spots if (p, t) in lines]
            lost += missing + sum((p, t) not in lines for p, t in spots)
            if not evidence or (persona_only and any(sessions[p]["dialogue_turns"][t]["speaker"] != "User"
                                                     for p, t in spots)):
                continue
            kind = "one session" if len(gold_sessions) == 1 else "several sessions"
            questions.append(Question(f"{name}/{turn.get('query_id') or f'{position}-{number}'}", turn["content"],
                                      kind, name, evidence, gold_sessions, {position_filter: position}))
    return questions, lost


def chatgpt_turn_lines(book: vecbook.VecBook, sessions: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[int, int]]:
    """(session position, turn number) -> the lines VecBook's reader cites for that turn's
    message, checked against the turn's text (a turn with no text is no message)."""
    by_thread: dict[int, list[tuple[int, int, int, str]]] = {}
    for record in book._snapshot.records:  # read-only: the reader's messages and their lines
        ends = [s[0] for s in record.segments[1:]] + [len(record.content) + 1]
        for (offset, first, last), end in zip(record.segments, ends):
            by_thread.setdefault(int(record.metadata["thread"]), []).append(
                (first, last, offset, record.content[offset:end - 1]))
    lines = {}
    for position, session in enumerate(sessions):
        spoken = [n for n, t in enumerate(session["dialogue_turns"]) if clean_text(t["content"])]
        messages = sorted(by_thread.get(position, []))
        if len(messages) != len(spoken):
            raise SystemExit(f"session {position}: {len(messages)} messages read for {len(spoken)} turns")
        for number, (first, last, _, text) in zip(spoken, messages):
            turn = session["dialogue_turns"][number]
            if text.split(": ", 1)[-1] != clean_text(turn["content"]):
                raise SystemExit(f"session {position} turn {number}: the reader's text differs from the turn")
            lines[position, number] = (first, last)
    return lines


# --- phone-shaped RealMem ---------------------------------------------------------

PHONE_NAMES = ("Alex", "Sam")  # who writes: the persona (the user) and a friend (the assistant)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'*(])")
PHONE_MESSAGE_CHARS = 280  # a message past this is cut at a sentence (phones send bursts)
SHORT_REPLY_CHARS = 160  # the short shape: a friend's reply is its first sentences up to this


def phone_messages(text: str) -> list[str]:
    """A turn as a burst of short messages: its non-empty lines, a long line cut at sentence
    ends into pieces of at most ~PHONE_MESSAGE_CHARS characters."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        piece = ""
        for sentence in _SENTENCE_RE.split(line):
            if piece and len(piece) + 1 + len(sentence) > PHONE_MESSAGE_CHARS:
                out.append(piece)
                piece = sentence
            else:
                piece = f"{piece} {sentence}" if piece else sentence
        if piece:
            out.append(piece)
    return out


def short_reply(text: str) -> str:
    """A reply as a friend texts it: its first sentences, at most SHORT_REPLY_CHARS characters
    (the first sentence alone where it is longer; its first line where none ends)."""
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    out = ""
    for sentence in _SENTENCE_RE.split(first):
        if out and len(out) + 1 + len(sentence) > SHORT_REPLY_CHARS:
            break
        out = f"{out} {sentence}" if out else sentence
    return out


assert short_reply("Sure. I can help.\nA list:\n- one") == "Sure. I can help."
assert short_reply("A" * 300 + ". Then more.") == "A" * 300 + "."  # the first sentence, however long


Burst = tuple[int, int, datetime, str, str]  # session position, turn number, time, author, message


def phone_bursts(sessions: list[dict[str, Any]], short: bool = False) -> tuple[list[Burst], list[str]]:
    """The sessions as one phone chat between two people: each turn a burst of messages in one
    minute, turns two minutes apart, each session at 09:00 of its date or three hours after the
    one before, whichever is later (a phone's times never step back). ``short``: the friend's
    replies cut to ``short_reply``. Returns the messages in order and each session's start as
    ISO text."""
    out: list[Burst] = []
    starts: list[str] = []
    when = datetime(1970, 1, 1)
    for position, session in enumerate(sessions):
        day = datetime.strptime(session["current_time"][:10], "%Y-%m-%d").replace(hour=9)
        when = max(day, when + timedelta(hours=3))
        starts.append(when.isoformat())
        for number, turn in enumerate(session["dialogue_turns"]):
            author = PHONE_NAMES[0] if turn["speaker"] == "User" else PHONE_NAMES[1]
            said = short_reply(turn["content"]) if short and turn["speaker"] != "User" else turn["content"]
            out += [(position, number, when, author, message) for message in phone_messages(said)]
            when += timedelta(minutes=2)
    return out, starts


def whatsapp_export(bursts: Sequence[Burst]) -> tuple[str, dict[tuple[int, int], tuple[int, int]]]:
    """The messages as one Android WhatsApp chat: the text, and each turn's lines."""
    lines = [f"{when:%d/%m/%Y, %H:%M} - {author}: {message}" for _, _, when, author, message in bursts]
    return "\n".join(lines) + "\n", turn_spans(bursts, [(n, n) for n in range(1, len(lines) + 1)])


def telegram_export(bursts: Sequence[Burst]) -> str:
    """The messages as one Telegram Desktop ``result.json`` (a personal chat, one JSON line a
    key, as Telegram writes it)."""
    ids = {PHONE_NAMES[0]: "user1", PHONE_NAMES[1]: "user2"}
    messages = [{"id": number, "type": "message", "date": when.isoformat(), "from": author, "from_id": ids[author],
                 "text": message, "text_entities": [{"type": "plain", "text": message}]}
                for number, (_, _, when, author, message) in enumerate(bursts, 1)]
    chat = {"name": PHONE_NAMES[1], "type": "personal_chat", "id": 2, "messages": messages}
    return json.dumps(chat, indent=1, ensure_ascii=False) + "\n"


def turn_spans(bursts: Sequence[Burst], lines: Sequence[tuple[int, int]]) -> dict[tuple[int, int], tuple[int, int]]:
    """Each turn's lines: from its first message's first line to its last one's last (``lines``:
    each message's, in order)."""
    spans: dict[tuple[int, int], tuple[int, int]] = {}
    for (position, number, *_), (first, last) in zip(bursts, lines, strict=True):
        spans[position, number] = (spans.get((position, number), (first, last))[0], last)
    return spans


def read_message_lines(book: vecbook.VecBook) -> list[tuple[int, int]]:
    """Each message's lines as VecBook's reader cites them, in file order."""
    return sorted((first, last) for record in book._snapshot.records  # read-only: the reader's messages
                  for _, first, last in record.segments)


# --- running ----------------------------------------------------------------------

def open_book(folder: Path, export: Path, fmt: str, cache_dir: Path | None, gap: float | None = None) -> vecbook.VecBook:
    """A VecBook over the export as one collection (an empty data folder beside it), read by
    the real config loader, with the default settings."""
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    lines = ['data_directory = "notes"', 'log_level = "WARNING"']
    if cache_dir is not None:
        lines.append(f"cache_directory = {json.dumps(str(cache_dir.resolve()))}")
    lines += ["[[collections]]", 'name = "chat"', f"path = {json.dumps(str(export.resolve()))}",
              f"format = {json.dumps(fmt)}"]
    if gap is not None:
        lines.append(f"window_gap_minutes = {gap}")
    (folder / "vecbook.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    book = vecbook.VecBook.from_config(folder / "vecbook.toml")
    stats = book.stats()
    if stats["state"] != "ready" or stats["skipped"] or stats["warnings"]:
        raise SystemExit(f"{export}: {stats['state']} {(stats['skipped'] + stats['warnings'])[:3]}")
    return book


def ask(book: vecbook.VecBook, question: Question, conversation_of: Any, max_chars: int | None) -> list[Shown]:
    """Plain ``search(question, max_results=DEPTH)`` (with the question's position filter and
    ``max_chars`` where given)."""
    hits = book.search(question.text, max_results=DEPTH, filters=question.filters, max_chars=max_chars)
    return [Shown(conversation_of(h), h.line_number, h.end_line, h.text) for h in hits]


def run_realmem(args: argparse.Namespace, work: Path) -> list[tuple[Question, list[Shown]]]:
    """Every chosen persona: write its export, index it, ask its questions."""
    out = []
    phone = args.dataset in ("phone", "short")
    for path in persona_files(args):
        name, sessions = read_persona(path)
        folder = work / args.dataset / name
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        if phone:
            bursts, starts = phone_bursts(sessions, short=args.dataset == "short")
            if args.telegram:
                export = folder / "telegram" / "result.json"
                export.parent.mkdir(exist_ok=True)
                _write_if_changed(export, telegram_export(bursts))
                book = open_book(folder, export, "telegram", args.cache_dir)
                lines = turn_spans(bursts, read_message_lines(book))
            else:
                text, lines = whatsapp_export(bursts)
                export = folder / "WhatsApp Chat with Sam.txt"
                _write_if_changed(export, text)
                book = open_book(folder, export, "whatsapp", args.cache_dir)
            questions, lost = realmem_questions(name, sessions, lines, "date__lt",
                                                persona_only=args.dataset == "short")
            for q in questions:  # the chat before the query's session (each session hours after the last)
                assert q.filters is not None
                q.filters = {"date__lt": starts[q.filters["date__lt"]]}
            firsts = [min((a for (p, _), (a, _) in lines.items() if p == position), default=0)
                      for position in range(len(sessions))]
            session_of = _session_by_line(firsts, sessions)
            conversation_of = lambda h: session_of(h.line_number)  # noqa: E731
        else:
            export = folder / "conversations.json"
            _write_if_changed(export, json.dumps(chatgpt_export(sessions), indent=2, ensure_ascii=False))
            book = open_book(folder, export, "chatgpt", args.cache_dir)
            lines = chatgpt_turn_lines(book, sessions)
            questions, lost = realmem_questions(name, sessions, lines, "thread__lt")
            conversation_of = lambda h: h.metadata.get("conversation")  # noqa: E731
        built = time.perf_counter() - started
        started = time.perf_counter()
        for question in questions:
            out.append((question, ask(book, question, conversation_of, args.max_chars)))
        print(f"  {name}: {len(sessions)} sessions, {book.stats()['records']:,} records, {len(questions)} questions "
              f"({lost} memory points without a turn), built in {built:.0f} s, "
              f"{1000 * (time.perf_counter() - started) / max(len(questions), 1):.0f} ms/question",
              file=sys.stderr, flush=True)
        book.close()
    return out


def _session_by_line(firsts: list[int], sessions: list[dict[str, Any]]) -> Any:
    import bisect

    def session_of(line: int | None) -> str:
        if line is None:
            return ""
        return sessions[bisect.bisect_right(firsts, line) - 1]["session_identifier"]
    return session_of


def _write_if_changed(path: Path, text: str) -> None:
    """Write the export unless it already holds ``text`` (an unchanged file keeps its caches warm)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def persona_files(args: argparse.Namespace) -> list[Path]:
    files = sorted(args.data.glob("*_dialogues_256k.json.gz"))
    if not files:
        raise SystemExit(f"{args.data}: no RealMem persona files (*_dialogues_256k.json.gz)")
    named = [f for f in files if _persona(f) in args.personas] if args.personas else files
    if args.split == "tune":
        named = [f for f in named if _persona(f) in TUNE]
    elif args.split == "held-out":
        named = [f for f in named if _persona(f) not in TUNE]
    return named


def _persona(path: Path) -> str:
    return path.name.split("_dialogues")[0]


def run_chatterbot(args: argparse.Namespace, work: Path) -> list[tuple[Question, list[Shown]]]:
    """The chat benchmark's questions over its WhatsApp corpus (re-timed with ``--pause``)."""
    bench = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    corpus = ROOT / bench["corpus"]
    folder = work / f"chatterbot-{args.pause:g}" if args.pause is not None else work / "chatterbot"
    folder.mkdir(parents=True, exist_ok=True)
    export = folder / corpus.name
    text = corpus.read_text(encoding="utf-8")
    _write_if_changed(export, retimed(text, args.pause) if args.pause is not None else text)
    book = open_book(folder, export, bench["format"], args.cache_dir)
    out = []
    for q in bench["questions"]:
        answer = q["answer"]
        question = Question(q["id"], q["question"], f"answered by {answer['author']}", "chatterbot",
                            [Evidence("chat", answer["line"], answer.get("end_line", answer["line"]), answer["text"])])
        hits = book.search(question.text, max_results=DEPTH, max_chars=args.max_chars)
        out.append((question, [Shown("chat", h.line_number, h.end_line, h.text) for h in hits]))
    book.close()
    return out


_STAMP_RE = re.compile(r"^(\d{2}/\d{2}/\d{4}, \d{2}:\d{2}) - ")


def retimed(text: str, pause: float) -> str:
    """The WhatsApp text with every pause of over an hour (between dialogues) made ``pause``
    minutes; the lines stay the lines, so the judged line numbers hold."""
    out, shift, last = [], timedelta(0), None
    for line in text.split("\n"):
        match = _STAMP_RE.match(line)
        if match:
            when = datetime.strptime(match.group(1), "%d/%m/%Y, %H:%M")
            if last is not None and when - last > timedelta(hours=1):
                shift -= (when - last) - timedelta(minutes=pause)
            last = when
            line = f"{when + shift:%d/%m/%Y, %H:%M} - " + line[match.end():]
        out.append(line)
    return "\n".join(out)


# --- report -----------------------------------------------------------------------

CUTS: tuple[int | None, ...] = (None, *BUDGETS)


def cut_name(cut: int | None) -> str:
    return f"top {TOP}" if cut is None else f"{cut:,} chars"


def summarize(results: Sequence[tuple[Question, list[Shown]]]) -> dict[int | None, dict[str, float]]:
    """Mean of each measure over the questions, per cut."""
    out = {}
    for cut in CUTS:
        rows = [measure(q, hits, cut) for q, hits in results]
        out[cut] = {key: sum(r[key] for r in rows) / max(len(rows), 1) for key in rows[0]} if rows else {}
    return out


def table(results: Sequence[tuple[Question, list[Shown]]], title: str, sessions: bool) -> None:
    """One table: a row per group (and kind), evidence recall at each cut."""
    print(f"### {title}")
    print()
    head = " | ".join(f"{cut_name(c)}: recall / held / any{' / sessions' if sessions else ''} / chars" for c in CUTS)
    print(f"| group | questions | {head} |")
    print("|---|---:|" + "---:|" * len(CUTS))
    groups: dict[str, list[tuple[Question, list[Shown]]]] = {}
    for q, hits in results:
        groups.setdefault(q.group, []).append((q, hits))
    rows = list(groups.items()) if len(groups) > 1 else []
    rows.append(("all", list(results)))
    for kind in sorted({q.kind for q, _ in results}):
        rows.append((f"all: {kind}", [(q, h) for q, h in results if q.kind == kind]))
    for label, chosen in rows:
        s = summarize(chosen)
        cells = " | ".join(f"{s[c]['recall']:.3f} / {s[c]['held']:.3f} / {s[c]['any']:.3f}"
                           + (f" / {s[c]['sessions']:.3f}" if sessions else "") + f" / {s[c]['chars']:,.0f}"
                           for c in CUTS)
        print(f"| {label} | {len(chosen)} | {cells} |")
    print()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=("realmem", "phone", "short", "chatterbot"))
    parser.add_argument("data", type=Path, nargs="?", default=REALMEM, help="RealMem's folder (realmem, phone, short)")
    parser.add_argument("--cache-dir", type=Path, help="VecBook's cache folder; the exports are written "
                        "beside it (the same paths each run, so a rerun embeds nothing)")
    parser.add_argument("--personas", nargs="+", help="only these personas (RealMem names, e.g. Ethan_Hunt)")
    parser.add_argument("--split", choices=("tune", "held-out", "all"), default="all",
                        help=f"the tuning personas ({', '.join(TUNE)}), the other five, or all ten")
    parser.add_argument("--pause", type=float, help="chatterbot: minutes between dialogues (default: as written, 3 h)")
    parser.add_argument("--max-chars", type=int, metavar="N",
                        help="search with max_chars=N: each hit's text cut to N characters around its match")
    parser.add_argument("--telegram", action="store_true",
                        help="phone, short: write each persona's chat as a Telegram result.json, not a WhatsApp .txt")
    parser.add_argument("--details", type=Path, help="write each question's hits as JSON lines here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.telegram and args.dataset not in ("phone", "short"):
        parser.error("--telegram writes the phone and short chats; realmem is a ChatGPT export, chatterbot a WhatsApp one")
    vecbook.cli.configure_logging("WARNING")
    work = args.cache_dir.resolve() / "chat-recall" if args.cache_dir else Path(tempfile.mkdtemp(prefix="vecbook-recall-"))
    started = time.perf_counter()
    if args.dataset == "chatterbot":
        results = run_chatterbot(args, work)
    else:
        results = run_realmem(args, work)
    seconds = time.perf_counter() - started
    from vecbook.cpu import cpu_description

    print(f"Command: `{shlex.join(['python'] + sys.argv)}`")
    print()
    print(f"- CPU: {cpu_description()}; load average {os.getloadavg()[0]:.2f} at the end; {seconds:.0f} s in all")
    cut = f", max_chars={args.max_chars}" if args.max_chars is not None else ""
    print(f"- Search: plain `search(question, max_results={DEPTH}{cut})`, VecBook's default settings; hits taken best "
          f"first until the next would pass the budget (characters of `hit.text`)")
    print()
    if args.dataset == "chatterbot":
        table(results, f"chatterbot (pause {args.pause or 180:g} min)", sessions=False)
    else:
        tuned = [(q, h) for q, h in results if q.group in TUNE]
        held = [(q, h) for q, h in results if q.group not in TUNE]
        for label, chosen in (("tuning personas", tuned), ("held-out personas", held), ("all personas", results)):
            if chosen:
                table(chosen, f"{args.dataset}: {label}", sessions=True)
    if args.details:
        with args.details.open("w", encoding="utf-8") as handle:
            for q, hits in results:
                handle.write(json.dumps({"id": q.id, "kind": q.kind, "group": q.group,
                                         "evidence": [dataclasses.astuple(e) for e in q.evidence],
                                         "sessions": sorted(q.sessions),
                                         "hits": [dataclasses.astuple(h) for h in hits]}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
