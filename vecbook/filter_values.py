"""One metadata value against one filter condition: how values compare (numbers as numbers, text
case-folded and composed, ISO dates as text or, both with an offset, as moments), what each
operator means for a scalar, a list or an object, and a metadata value looked up by its key."""

from __future__ import annotations

import fnmatch
import functools
import json
import re
import unicodedata
from typing import Any

from .date_ranges import DATE_START
from .records import iso_moment
from .tokens import SEGMENTED_RE, fold

# Stands for a key the record does not have (None is a value a record may hold).
MISSING = object()
NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
# What gt/gte/lt/lte accept besides numbers: an ISO-8601 date, optionally with a time and
# an offset. ISO text sorts chronologically, so such values keep comparing as text; any
# other text would compare alphabetically, which is never what a range filter means.
ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
_OFFSET_END = re.compile(r"(?:[Zz]|[+-]\d{2}:?\d{2})$")  # a date-time's offset from UTC
# YAML 1.1's words for a boolean (PyYAML's, any case): front matter is read as YAML 1.2, as Obsidian
# shows it, so `draft: yes` is the text "yes" (Norway's code NO stays text); a filter asking for a
# boolean (``draft=true``) finds these words, while a text filter (``draft=yes``) matches text alone.
# SQLite keeps a flag as 1 or 0 (it has no boolean type), some apps as that text, others as Y and N,
# and a PostgreSQL dump's copy as t and f: booleans too.
_TRUTHS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False, "1": True, "0": False,
           "y": True, "n": False, "t": True, "f": False}
# The words that stand for false (a SQLite table's trash column holding one marks no row).
FALSE_WORDS = frozenset(word for word, truth in _TRUTHS.items() if not truth)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and NUMBER_RE.match(value.strip()):
        return float(value)
    return None


def as_text(value: Any) -> str:
    """``value`` as filters compare text: case-folded and composed; a boolean ``true`` or
    ``false``, a list or object its JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return composed(value).casefold()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True).casefold()
    return composed(str(value)).casefold()


def composed(text: str) -> str:
    """``text`` in NFC: macOS writes file names, and some apps text, decomposed (``é`` as e and a
    combining accent, a Hangul syllable as its jamo), which a filter or citation typed composed
    would otherwise never equal."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def compare_values(a: Any, b: Any) -> int:
    """-1, 0 or 1: numbers compare as numbers, everything else (ISO dates too) as case-folded text."""
    na, nb = _as_number(a), _as_number(b)
    left, right = (na, nb) if na is not None and nb is not None else (as_text(a), as_text(b))
    return (left > right) - (left < right)


def value_matches(value: Any, op: str, target: Any, glob: bool = False) -> bool:
    """Whether one metadata value satisfies ``op target``; ``MISSING`` means the key is absent."""
    if value is MISSING:
        return op == "ne" or (op == "exists" and not target)
    if op == "exists":
        return bool(target)
    items = value if isinstance(value, list) else [value]
    if op in ("exact", "ne", "in"):
        targets = target if op == "in" else [target]
        found = any(_equal(v, t, glob) for v in items for t in targets)
        return not found if op == "ne" else found
    if op == "contains":
        if isinstance(value, list):
            return any(_equal(v, target, False) or _has_word(v, target) for v in value)
        if isinstance(value, dict):
            return as_text(target) in {as_text(k) for k in value}
        return as_text(target) in as_text(value)
    if op == "startswith":
        return any(as_text(v).startswith(as_text(target)) for v in items)
    sign = {"gt": (1,), "gte": (0, 1), "lt": (-1,), "lte": (-1, 0)}[op]
    if isinstance(target, str) and ISO_DATE_RE.match(target):
        # a date written otherwise (March 5, 2024) cannot be placed: never in or out of a range
        items = [v for v in items if isinstance(v, str) and DATE_START.match(v)]
        when = instant(target)
        if when is not None:  # a moment with its offset: where a value has one too, compare the moments
            return any(_order(moment, when) in sign if (moment := instant(v)) is not None
                       else compare_values(v, target) in sign for v in items)
    return any(compare_values(v, target) in sign for v in items)


def tag_matches(value: Any, op: str, target: Any, glob: bool = False) -> bool:
    """``value_matches`` under the ``tags`` key, where a leading # is no part of a tag: Obsidian's
    and Bear's tags in the text (#work) are read without it, while a ``.txt`` header ``Tags: #work``
    keeps what was typed, and a person may type either in a filter."""
    return value_matches(_untagged(value), op, _untagged(target), glob)


def participant_matches(value: Any, op: str, target: Any, glob: bool = False) -> bool:
    """``value_matches`` under the ``participants`` key, where ``contains`` (``--participant``)
    asks for a whole word of a name, in a list of names or in one text naming several (a table's
    column): "ana" finds "Ana Souza" but not "Mariana"; in a script written without spaces a
    leading run of the name's characters is a word of it, the family name first ("王" finds "王小明").
    A ``target`` holding @ is a mail address, found whole, or with a leading @ a domain or a
    handle (``as_handle``: ``@ana_b`` finds the participant ``ana_b`` or ``@ana_b``); an
    address in a name is a word of the name by its part before the @ alone (``_named``)."""
    if op != "contains" or value is MISSING or isinstance(value, dict):
        return value_matches(value, op, target, glob)
    names = value if isinstance(value, list) else [value]
    if isinstance(target, str) and "@" in target:
        handle = as_handle(target)
        return any(_has_address(name, target.strip()) or (handle is not None and _has_name(name, handle))
                   for name in names)
    return any(_has_name(name, target) for name in names)


def as_handle(target: str) -> str | None:
    """The name a ``target`` typed with one leading @ stands for as a chat app's handle or
    mention (``@ana_b``: ``ana_b``; Slack, Discord and Telegram write a person so), else None."""
    handle = target.strip()[1:]
    return handle if target.strip().startswith("@") and handle and "@" not in handle else None


def _has_name(name: Any, target: Any) -> bool:
    """Whether ``name`` is ``target`` or holds it as a whole word (``participant_matches``)."""
    return _equal(name, target, False) or _has_word(_named(name), target, runs=True)


# A mail address inside a name or a row's text ("Ana <ana@example.com>"): the characters RFC 5322
# allows in a local part, then a domain. Compared whole: b@example.com is not ana.b@example.com.
_ADDRESS_RE = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*")


def _has_address(name: Any, target: str) -> bool:
    """Whether ``name`` holds the mail address ``target`` (any case; the address of a ``target``
    pasted from a header, ``Ana <ana@example.com>``), or, for a ``target`` with a leading @, an
    address of that domain or of one under it (@example.com: mail.example.com)."""
    if not isinstance(name, str) or "@" not in name:
        return False
    wanted = target.casefold().rstrip(".")
    if not wanted.startswith("@"):
        wanted = next(iter(_ADDRESS_RE.findall(wanted)), wanted)
    for address in _ADDRESS_RE.findall(name.casefold()):
        if wanted.startswith("@"):
            domain = address.rsplit("@", 1)[1]
            if len(wanted) > 1 and (domain == wanted[1:] or domain.endswith("." + wanted[1:])):
                return True
        elif address == wanted:
            return True
    return False


def _named(name: Any) -> Any:
    """``name`` with each mail address in it as its name part: the words of a domain name no one
    (``com`` or ``example`` would find everyone with an address there), those of ``fay`` in
    ``fay@example.com`` and of ``carla.ana`` do."""
    return _without_domains(name) if isinstance(name, str) and "@" in name else name


@functools.lru_cache(maxsize=1 << 16)  # a name recurs in many lists (see ``typed``)
def _without_domains(text: str) -> str:
    return _ADDRESS_RE.sub(lambda address: address.group().rsplit("@", 1)[0], text)


def _untagged(value: Any) -> Any:
    if isinstance(value, str):
        return value[1:] if value.startswith("#") else value
    if isinstance(value, list):
        return [_untagged(v) for v in value]
    return value


def reaches(value: Any, op: str, start: str) -> bool:
    """Whether a span's end ``value`` satisfies ``op start``; a plain date ends with its day, so
    an all-day event's last day reaches a ``since`` that falls inside that day."""
    if isinstance(value, str) and len(value.strip()) == 10 and len(start) > 10:
        start = start[:10]  # the day's end is after any moment of it
    return value_matches(value, op, start)


def instant(text: str) -> Any:
    """An ISO date-time with its offset as an aware datetime (None for a date, a time without an
    offset, or text that is none): 2024-03-05T23:30-08:00 and 2024-03-06T07:30+00:00 are one
    moment, which their text does not order."""
    if len(text) <= 16 or not _OFFSET_END.search(text):
        return None
    try:
        return iso_moment(text)
    except ValueError:
        return None


def _order(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _has_word(member: Any, target: Any, runs: bool = False) -> bool:
    """Whether a list member holds ``target`` as a whole word: "ana" is in "Ana Lopez",
    but "work" is not in "homework" (a list holds names and labels, not prose); both as typed
    (``typed``): "zoe" is in "Zoë". ``runs``: a ``target`` ending in a script written without
    spaces may end inside a run of it (王 is in 王小明)."""
    if isinstance(member, (dict, list)):
        return False
    wanted = typed(as_text(target))
    end = "" if runs and wanted and SEGMENTED_RE.match(wanted[-1]) else r"(?!\w)"
    return re.search(rf"(?<!\w){re.escape(wanted)}{end}", typed(as_text(member))) is not None


# A name as a keyboard types it: phones write a sender's number with non-breaking hyphens
# (U+2011) and no-break spaces between direction marks ("\u202a+1 (777) 777\u20117777\u202c"),
# which look like "-" and " " and are never typed.
_TYPED = {**dict.fromkeys(range(0x2010, 0x2016), "-"), 0x2212: "-", 0xA0: " ", 0x2007: " ", 0x2009: " ",
          0x202F: " ", **dict.fromkeys([0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])}


# Names repeat across a column's values (a mail index's 50,000 lists of recipients hold a few
# hundred people): each is folded once, not once a list a search (that tripled a filter's time).
@functools.lru_cache(maxsize=1 << 16)
def typed(text: str) -> str:
    """``text`` without its accents, variation selectors and look-alike dashes and spaces."""
    return text if text.isascii() else fold(text.translate(_TYPED))


def _equal(value: Any, target: Any, glob: bool) -> bool:
    if glob:
        return fnmatch.fnmatchcase(composed(str(value)), composed(str(target)))
    wanted = _boolean(target)
    if wanted is not None:
        held = _held_boolean(value)
        if held is not None:
            return held == wanted
    return compare_values(value, target) == 0


def _held_boolean(value: Any) -> bool | None:
    """The boolean a record's value stands for, where it may stand for one: a boolean, YAML 1.1's
    words, or the 1 and 0 SQLite keeps a flag as (it has no boolean type), as a number or text."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _TRUTHS.get(value.strip().casefold())
    if isinstance(value, (int, float)) and value in (0, 1):
        return value == 1
    return None


def _boolean(target: Any) -> bool | None:
    """The boolean a filter value asks for: true or false (JSON, Python), or the text ``true`` or
    ``false`` (every value the CLI gives is text); None for any other value."""
    if isinstance(target, bool):
        return target
    if isinstance(target, str) and target.strip().casefold() in ("true", "false"):
        return target.strip().casefold() == "true"
    return None


def lookup_metadata(metadata: dict[str, Any], path: tuple[str, ...]) -> Any:
    """A metadata value by key, case-insensitively; dotted paths walk nested JSON objects."""
    whole = ".".join(path)
    for candidate in (whole, None):
        if candidate is not None:
            found = _get_casefold(metadata, candidate)
            if found is not MISSING or len(path) == 1:
                return found
    current: Any = metadata
    for part in path:
        if not isinstance(current, dict):
            return MISSING
        current = _get_casefold(current, part)
        if current is MISSING:
            return MISSING
    return current


def _get_casefold(mapping: dict[str, Any], key: str) -> Any:
    if key in mapping:
        return mapping[key]
    folded = key.casefold()
    for name, value in mapping.items():
        if name.casefold() == folded:
            return value
    return MISSING
