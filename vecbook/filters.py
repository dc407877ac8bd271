"""Metadata filters: the filter syntax (``{"key__op": value}`` and the shorthand ones such as
sources, dates and participants) parsed into Conditions, and FilterColumns, which caches each
filtered key's column per index and turns Conditions into a mask of records."""

from __future__ import annotations

import difflib
import json
import math
import re
import threading
import time
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, Callable, NoReturn, Sequence

import numpy as np

from .config import FILTER_OPERATORS, QueryError
from .date_ranges import COMPARISONS as _COMPARISONS
from .date_ranges import SPAN_END, DateColumn, date_ranges, is_date_range, series_in_range
from .date_ranges import with_occurrences as with_occurrences  # where book.py and callers find it
from .filter_values import (ISO_DATE_RE, MISSING, NUMBER_RE, as_handle, as_text, composed, instant,
                            lookup_metadata, participant_matches, reaches, tag_matches, value_matches)
from .records import Record, iso_moment
from .snippets import date_days

# How close a typo must be to a known key, source or name to be suggested (difflib's ratio):
# at its default 0.6 "auther" suggested "date" (three letters of six in order).
HINT_CUTOFF = 0.75
# Filter keys a person might try for the people of a chat, mail or event (``participants``).
PERSON_KEYS = ("author", "from", "sender", "speaker", "person", "people", "user", "who", "with", "participant",
               "name", "to")


@dataclass(frozen=True)
class Condition:
    """One parsed filter: ``date__gte: "2024-01-01"`` -> field, path, op, value."""

    key: str
    field: str  # "metadata", "source" or "file_path"
    path: tuple[str, ...]
    op: str
    value: Any
    # Set for the shorthand filters (``since``, ``until``, ``participants``): how the user
    # wrote it, "since 30d", so that an error speaks of what was typed, not of "date__gte".
    shorthand: str = ""
    # A second key whose value may satisfy the condition instead (``since``: ``end_date``, so
    # that a record whose span reaches into the range is in it).
    or_path: tuple[str, ...] = ()


def parse_filters(filters: dict[str, Any] | None) -> list[Condition]:
    """Validate Django-style filters; raise QueryError naming the key at fault."""
    if filters is None:
        return []
    if not isinstance(filters, dict):
        raise QueryError(f"filters must be an object mapping keys to values, got {type(filters).__name__}")
    return [_parse_condition(str(key), value) for key, value in filters.items()]


def _parse_condition(key: str, value: Any) -> Condition:
    name, op = key, "exact"
    if "__" in key:
        name, op = key.rsplit("__", 1)
        if op not in FILTER_OPERATORS:
            raise QueryError(f"unknown filter operator '{op}' in '{key}' (use one of: {', '.join(FILTER_OPERATORS)})")
    if not name:
        raise QueryError(f"filter '{key}' has no key before the operator")
    lowered = name.lower()
    if lowered.startswith("metadata."):
        field_name, path = "metadata", tuple(name[len("metadata."):].split("."))
    elif lowered in ("source", "file_path"):
        field_name, path = lowered, ()
    else:
        field_name, path = "metadata", tuple(name.split("."))
    if any(not part for part in path):
        raise QueryError(f"filter key '{key}' has an empty path segment")
    value = _iso(value)
    _check_filter_value(key, op, value)
    if op == "in":
        value = list(value)
    return Condition(key, field_name, path, op, value)


def _iso(value: Any) -> Any:
    """A Python date or datetime (a pandas Timestamp too) as the ISO text it stands for, as
    records hold dates; each member of a list alike; any other value as it is."""
    if isinstance(value, (list, tuple)):
        return [_iso(member) for member in value]
    return value.isoformat() if isinstance(value, date) else value


# A span back from now: 30d, or as words, "30 days", "last 7 days", "the past 2 weeks" (m: months).
_SPAN_RE = re.compile(r"^\s*(?:(?:the\s+)?(?:last|past)\s+)?(\d+)\s*"
                      r"(h|hours?|hrs?|d|days?|w|weeks?|wks?|m|months?|mos?|y|years?|yrs?)\s*$", re.I)
# ``path:line``, ``path:line-end`` or either with ``#anchor``: a reference to lines of a file.
_LINE_REF_RE = re.compile(r"^(.*):(\d+)(?:-\d+)?(?:#.*)?$", re.S)
# A month (2024-03) or a year (2024) given as ``since``/``until``: ISO 8601's reduced precision.
_PERIOD_RE = re.compile(r"^(\d{4})(?:-(\d{2}))?$")
_LAST_DAY = "9999-12-31"  # whose next day no date can name: ``until`` then ends at its last moment
# --filter's KEY, sign and VALUE: the first sign splits them (a value may hold = or >: a URL's query).
_FILTER_ARGUMENT_RE = re.compile(r"^([^=<>!]*[^=<>!\s][^=<>!]*)(!=|>=|<=|==|=|>|<)(.*)$", re.S)
_SIGNS = {"=": "", "==": "", "!=": "__ne", ">=": "__gte", ">": "__gt", "<=": "__lte", "<": "__lt"}
_SPAN_DAYS = {"h": 1 / 24, "d": 1, "w": 7, "m": 30.4375, "y": 365.25}


def convenience_conditions(sources: Sequence[str] | None = None, since: str | date | None = None,
                           until: str | date | None = None, participants: Sequence[str] | None = None,
                           now: float | None = None) -> list[Condition]:
    """The assistants' shorthand as filters: ``sources`` (any of these collections, ``files``
    for the .txt records), ``since``/``until`` (an ISO date or date-time, a month ``2024-03`` or
    a year ``2024``, a span back from now such as ``30d``, ``2w``, ``6m``, ``1y``, ``12h``, or a
    Python date or datetime, a date as written or date words such as ``last week``:
    ``vecbook.typed_dates``; ``until`` a date, month or year includes the whole of it) and ``participants`` (each one
    named takes part: a whole-word match)."""
    conditions = []
    since, until = _iso(since), _iso(until)
    if sources:
        conditions.append(_parse_condition("source__in", list(_string_list("sources", sources))))
    if since:
        start = _moment("since", since, now)
        conditions.append(replace(_parse_condition("date__gte", start), shorthand=f"since {since}", or_path=SPAN_END))
    if until:
        moment = _moment("until", until, now, last=True)
        op = "lt" if len(moment) == 10 and moment != _LAST_DAY else "lte"
        end = _next_day(moment) if op == "lt" else moment if len(moment) > 10 else f"{moment}T23:59:59.999999"
        if since and date_days(start) >= date_days(end) + (0 if op == "lt" else 1e-9):
            raise QueryError(f"since {since} is later than until {until}: no record can be dated between them "
                             f"(swap them?)")
        conditions.append(replace(_parse_condition(f"date__{op}", end), shorthand=f"until {until}"))
    for person in _string_list("participants", participants or []):
        conditions.append(replace(_parse_condition("participants__contains", person),
                                  shorthand=f"participants {person}"))
    return conditions


def parse_filter_argument(text: str) -> tuple[str, Any]:
    """``KEY[__OP]=VALUE`` from the command line, or ``KEY>=VALUE`` (``>``, ``<=``, ``<``, ``!=``,
    ``==``) as people compare; spaces around the sign are no part of either; ``__in`` takes
    commas, ``__exists`` true/false."""
    found = _FILTER_ARGUMENT_RE.match(text)
    if found is None:
        raise QueryError(f"--filter needs KEY=VALUE (or KEY>=VALUE, >, <=, <, !=), got {text!r}")
    key, sign, value = found.group(1).strip(), found.group(2), found.group(3).strip()
    key += _SIGNS[sign]
    if key.endswith("__in"):
        return key, [v.strip() for v in value.split(",")]
    if key.endswith("__exists"):
        if value.lower() not in ("true", "false"):
            raise QueryError(f"--filter {key} needs true or false, got {value!r}")
        return key, value.lower() == "true"
    return key, value


def _string_list(name: str, values: Any) -> list[str]:
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in values):
        raise QueryError(f"{name} must be a list of names, got {values!r}")
    return [v.strip() for v in values]


def _moment(name: str, value: Any, now: float | None, last: bool = False) -> str:
    """An ISO date or date-time as given; a month or year as its first day (``last``: its last);
    or a span back from ``now`` as an ISO date-time in this machine's local time, with its
    offset: a chat's times (WhatsApp's) are written in local time without one, and compare as
    text against it; times with an offset compare as instants."""
    from datetime import date, datetime, timedelta, timezone

    if not isinstance(value, str):
        raise QueryError(f"{name} must be a date such as 2024-01-31 or a span such as 30d, got {value!r}")
    span = _SPAN_RE.match(value)
    if span:
        moment = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc).astimezone()
        try:
            moment -= timedelta(days=int(span.group(1)) * _SPAN_DAYS[span.group(2)[0].lower()])
        except OverflowError:  # (3000y: no datetime holds that moment)
            raise QueryError(f"{name} {value.strip()} reaches back before the year 1: give a shorter span "
                             "or a date") from None
        return moment.replace(microsecond=0).isoformat()
    text = value.strip()
    try:
        if period := _PERIOD_RE.match(text):
            return _period_day(int(period.group(1)), int(period.group(2)) if period.group(2) else None, last)
        (date.fromisoformat(text) if len(text) == 10 else iso_moment(text))
    except (ValueError, OverflowError):
        return _typed_day(name, text, now, last)
    return text


def _typed_day(name: str, text: str, now: float | None, last: bool) -> str:
    """The first (``last``: the last) day of a date typed in no ISO form (``5 March 2024``,
    ``last week``: ``vecbook.typed_dates``), counted from today in this machine's local time."""
    from datetime import date

    from .typed_dates import READ_TOO, typed_period

    period = typed_period(name, text, date.fromtimestamp(time.time() if now is None else now))
    if period is None:
        raise QueryError(f"{name} must be an ISO date (2024-01-31), a month (2024-03) or a year (2024), a "
                         f"date-time (2024-01-31T09:00) or a span back from now (30d, 2w, 6m, 1y, 12h); "
                         f"got {text!r} (read too: {READ_TOO})")
    return period[1 if last else 0].isoformat()


def _period_day(year: int, month: int | None, last: bool) -> str:
    """The first day of ``year``'s ``month`` (None: of the year), or with ``last`` its last day;
    ValueError for a month that is none (2024-13)."""
    from datetime import date, timedelta

    first = date(year, 1 if month is None else month, 1)
    if not last:
        return first.isoformat()
    if month in (None, 12):
        return date(year, 12, 31).isoformat()
    return (date(year, first.month + 1, 1) - timedelta(days=1)).isoformat()


def _next_day(day: str) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def _check_filter_value(key: str, op: str, value: Any) -> None:
    scalar = (str, int, float, bool)
    if op == "exists":
        if not isinstance(value, bool):
            raise QueryError(f"filter '{key}' needs true or false, got {value!r}")
    elif op == "in":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, scalar) for v in value):
            raise QueryError(f"filter '{key}' needs a list of values, got {value!r}")
    elif not isinstance(value, scalar) or (isinstance(value, float) and not math.isfinite(value)):
        raise QueryError(f"filter '{key}' needs a string or number, got {value!r}{_list_hint(key, op, value)}")
    elif op in _COMPARISONS and not _is_comparable(value):
        raise QueryError(f"filter '{key}' needs a number or an ISO date such as 2024-01-31 or "
                         f"2024-01-31T09:30:00+01:00, got {value!r}{_month_hint(key, value)}")


def _list_hint(key: str, op: str, value: Any) -> str:
    """Where one value was given a list (``tags: ["#family"]``, as an assistant writes a list-valued
    key): ``__in`` takes a list, a record holding any of its values."""
    if op != "exact" or not isinstance(value, (list, tuple)) or \
            not all(isinstance(v, (str, int, float)) for v in value):
        return ""
    use = f"{key[:-len('__exact')] if key.lower().endswith('__exact') else key}__in"
    example = json.dumps({use: list(value)}, ensure_ascii=False)
    return f"; for a record holding any of several values use '{use}': {example}"


def _month_hint(key: str, value: Any) -> str:
    """Where a date key is compared with a month (``date__gte: "2024-03"``): since and until take
    one, the whole of it (MCP's tool says so of them; a filter holds one instant)."""
    if key.split("__")[0].lower() not in ("date", "end_date") or not _PERIOD_RE.match(str(value).strip()):
        return ""
    return f'; a month or a year goes in since or until (since="{value}", until="{value}" for the whole month)'


def _is_comparable(value: Any) -> bool:
    """A number, or text that is a number or an ISO-8601 date/datetime."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    text = value.strip()
    return bool(NUMBER_RE.match(text) or ISO_DATE_RE.match(text))


class FilterColumns:
    """Per-index filter evaluation: each key's values are factorised once, and a
    predicate is evaluated over distinct values only, then spread with numpy."""

    def __init__(self, records: Sequence[Record], known_keys: frozenset[str] | None = None,
                 known_sources: list[str] | None = None) -> None:
        """``known_keys`` (casefolded metadata keys) and ``known_sources`` (sorted) may be
        given when the caller has them, rather than found by a pass over every record."""
        self.records = records
        self.known_keys = known_keys if known_keys is not None else {k.casefold() for r in records for k in r.metadata_keys}
        self.known_sources = known_sources if known_sources is not None else sorted({r.source for r in records})
        self._columns: dict[tuple[str, tuple[str, ...]], tuple[np.ndarray, list[Any]]] = {}
        self._date_columns: dict[tuple[str, tuple[str, ...]], DateColumn] = {}
        self._lock = threading.Lock()
        self._dates: np.ndarray | None = None
        self._refs: dict[str, int] | None = None
        self._having: dict[str, set[str]] = {}  # metadata key -> the sources some of whose records have it

    def find(self, ref: str) -> int | None:
        """The position of the record whose id or citation is ``ref`` (a citation without its
        ``#anchor``, ``path:line`` for a line inside a record, or ``path:line-end`` for lines
        starting inside one, also works)."""
        with self._lock:
            if self._refs is None:
                self._refs = {}
                for position, record in enumerate(self.records):
                    for key in (record.citation, record.citation.split("#", 1)[0], record.id):
                        self._refs.setdefault(composed(key), position)
            refs = self._refs
        ref = composed(ref)
        if ref in refs:
            return refs[ref]
        # A line inside a record, or a range of lines starting inside one (a chat hit merged
        # across windows cites its own lines).
        match = _LINE_REF_RE.match(ref)
        if match is None:
            return None
        path, line = match.group(1), int(match.group(2))
        return next((i for i, r in enumerate(self.records) if composed(r.file_path) == path and r.line_number is not None
                     and r.end_line is not None and r.line_number <= line <= r.end_line), None)

    def dates(self) -> np.ndarray:
        """Each record's ``date`` metadata as days since 1970 (NaN where it has none), computed once."""
        with self._lock:
            if self._dates is None:
                self._dates = np.array([date_days(lookup_metadata(r.metadata, ("date",))) for r in self.records],
                                       dtype=np.float64)
            return self._dates

    def mask(self, conditions: Sequence[Condition]) -> np.ndarray | None:
        """Records matching every condition, or None when there are no conditions."""
        if not conditions:
            return None
        result = np.ones(len(self.records), dtype=bool)
        dated = np.ones(len(self.records), dtype=bool)  # the date range's verdict, which a series may change
        self._check_shorthand(conditions)
        for condition in conditions:
            self._check_known(condition)
            codes, uniques = self._column(condition)
            glob = condition.field == "file_path" and condition.op in ("exact", "in")
            test = self._test(condition)
            verdict = self._verdicts(condition, uniques, lambda v: test(v, condition.op, condition.value, glob))
            verdict = np.append(verdict, value_matches(MISSING, condition.op, condition.value))
            if condition.shorthand.startswith("participants") and not verdict.any():
                self._no_such_participant(condition, uniques)
            if is_date_range(condition):
                dated &= verdict[codes] | self._reaching(condition)
            else:
                result &= verdict[codes]
        if date_ranges(conditions) and "rrule" in self.known_keys:
            self._date_series(dated, conditions)
        return result & dated

    @staticmethod
    def _test(condition: Condition) -> Callable[[Any, str, Any, bool], bool]:
        """How a value meets ``condition``: a tag typed with or without its #, a participant by a
        whole word of the name, any other value as ``value_matches`` says."""
        key = _folded(condition.path) if condition.field == "metadata" else ()
        return {("tags",): tag_matches, ("participants",): participant_matches}.get(key, value_matches)

    def _reaching(self, condition: Condition) -> np.ndarray | bool:
        """Which records' ``or_path`` value (a span's end) satisfies ``condition``: False for all
        where it has none, or no ``path`` value (its start), or where no record has that key."""
        if not condition.or_path or ".".join(condition.or_path).casefold() not in self.known_keys:
            return False
        reaching = replace(condition, path=condition.or_path)
        codes, uniques = self._column(reaching)
        verdict = self._verdicts(reaching, uniques, lambda v: reaches(v, condition.op, str(condition.value)), True)
        starts, dates = self._column(condition)  # an end without a start (no date) is no span
        return np.append(verdict, False)[codes] & (starts < len(dates))

    def _verdicts(self, condition: Condition, uniques: list[Any], matches: Callable[[Any], bool],
                  reaching: bool = False) -> np.ndarray:
        """``matches`` over a column's distinct values: under an ISO date bound, in numpy over the
        column's ``DateColumn`` (made once), with one call each only for the values it leaves slow;
        ``reaching``: the values end spans (``reaches``)."""
        bound = condition.value
        if condition.op not in _COMPARISONS or not isinstance(bound, str) or not ISO_DATE_RE.match(bound):
            return np.array([matches(v) for v in uniques], dtype=bool)
        key = (condition.field, tuple(p.casefold() for p in condition.path))
        with self._lock:
            column = self._date_columns.get(key)
        if column is None or len(column.texts) != len(uniques):
            column = DateColumn(uniques, instant)
            with self._lock:
                self._date_columns[key] = column
        sign = {"gt": (1,), "gte": (0, 1), "lt": (-1,), "lte": (-1, 0)}[condition.op]
        day = as_text(bound[:10]) if reaching and len(bound) > 10 else None
        verdict = column.verdict(sign, as_text(bound), instant(bound), day)
        for position in np.flatnonzero(column.slow).tolist():
            verdict[position] = matches(uniques[position])
        return verdict

    def _date_series(self, dated: np.ndarray, conditions: Sequence[Condition]) -> None:
        """A recurring event (``rrule`` metadata) is in a date range when one of its occurrences
        is (or, under ``since``, lasts into it), not only its first: its verdict in ``dated`` is
        replaced by that."""
        codes, rules = self._column(Condition("rrule", "metadata", ("rrule",), "exists", True))
        ends, _ends = self._column(Condition("end_date", "metadata", ("end_date",), "exists", True))
        series_in_range(dated, codes, rules, ends, self.records, conditions)

    def _check_known(self, condition: Condition) -> None:
        """A key no record has, or a source no record comes from, is a typo: say so rather
        than return nothing."""
        if not self.records:
            return
        if condition.field == "source":
            self._check_source(condition)
        if condition.field != "metadata" or condition.shorthand:  # (see _check_shorthand)
            return
        whole, head = ".".join(condition.path).casefold(), condition.path[0].casefold()
        if whole in self.known_keys or head in self.known_keys:
            return
        name = ".".join(condition.path)
        hint = self._key_hint(whole, condition.op)
        known = ", ".join(sorted(self.known_keys)[:20]) or "none"
        where = f" in '{condition.key}'" if condition.key != name else ""
        raise QueryError(f"unknown filter key '{name}'{where}: no record has it{hint} (known keys: {known})")

    def _key_hint(self, key: str, op: str) -> str:
        """What an unknown (casefolded) filter key was likely meant to be: a known key with an
        operator after one underscore (``tags_contains``), a close spelling of a known key, or,
        for a word for a person, the participants chats, mail and events name."""
        head, _, tail = key.rpartition("_")
        head = head.rstrip("_")
        if op == "exact" and tail in FILTER_OPERATORS and head in self.known_keys:
            return f"; did you mean '{head}__{tail}'? (an operator follows two underscores)"
        close = difflib.get_close_matches(key, sorted(self.known_keys), n=1, cutoff=HINT_CUTOFF)
        if close:
            return f"; did you mean '{close[0]}'?"
        if "participants" in self.known_keys and difflib.get_close_matches(key, PERSON_KEYS, n=1, cutoff=HINT_CUTOFF):
            return "; the people of a chat, mail or event are filtered with participants__contains (--participant)"
        return ""

    def _check_shorthand(self, conditions: Sequence[Condition]) -> None:
        """``since``, ``until`` or ``participants`` over sources none of whose records has a
        date (or names participants) can match nothing: say which sources, in the words the
        user typed, rather than return no results (or name the filter key behind the shorthand)."""
        if not self.records:
            return
        for condition in conditions:
            if condition.field == "source":
                self._check_source(condition)  # a misspelt source is said as such, not as "no record of  has..."
        searched = self._searched_sources(conditions)
        for condition in conditions:
            if not condition.shorthand:
                continue
            key = condition.path[0]
            having = self._sources_with(key)
            if any(source.casefold() in having for source in searched):
                continue
            dated = key == "date"
            what, kinds, others = (("has a date", "a Date: header, a database row's 'date' column, or the time "
                                                  "of a message, mail or event", "sources with dates") if dated else
                                   ("names its participants", "chats, mail and calendars name them",
                                    "sources that name them"))
            having_them = [s for s in self.known_sources if s.casefold() in having]
            raise QueryError(f"{condition.shorthand}: no record of {', '.join(searched)} {what} ({kinds}), so none "
                             f"can match; {others}: {', '.join(having_them) or 'none'}")

    @staticmethod
    def _no_such_participant(condition: Condition, uniques: list[Any]) -> NoReturn:
        """A participant no record names is a typo, not an empty result: say so, with the closest
        names (by whole name, else by one of its words)."""
        names = sorted({str(p) for value in uniques for p in (value if isinstance(value, (list, tuple)) else [value])})
        spelled = {w.casefold(): n for n in names for w in n.split()} | {n.casefold(): n for n in names}
        handle = as_handle(condition.value) if isinstance(condition.value, str) else None
        close = difflib.get_close_matches(as_text(condition.value if handle is None else handle), list(spelled),
                                          n=3, cutoff=HINT_CUTOFF)
        meant = list(dict.fromkeys(spelled[c] for c in close))  # a name close by whole and by a word, once
        hint = f"; did you mean {' or '.join(map(repr, meant))}?" if meant else ""
        # @ana_b is read two ways (a chat handle, a mail domain): say both, so neither is a surprise
        read = (f"'{condition.value}'" if handle is None else
                f"'{handle}' or '@{handle}' (a handle), nor an address at the domain {handle}")
        raise QueryError(f"{condition.shorthand}: no chat, mail or event names a participant {read}{hint} "
                         f"({len(names)} names known)")

    def _searched_sources(self, conditions: Sequence[Condition]) -> list[str]:
        """The sources a search covers: those its ``source`` conditions name, else all."""
        searched = list(self.known_sources)
        for condition in conditions:
            if condition.field == "source" and condition.op in ("exact", "in"):
                wanted = {as_text(v) for v in (condition.value if condition.op == "in" else [condition.value])}
                searched = [s for s in searched if s.casefold() in wanted]
        return searched

    def _sources_with(self, key: str) -> set[str]:
        """The sources (casefolded) of which some record has metadata ``key``; computed once a key."""
        with self._lock:
            having = self._having.get(key.casefold())
        if having is None:
            having = {r.source.casefold() for r in self.records
                      if lookup_metadata(r.metadata, (key,)) not in (MISSING, None)}
            with self._lock:
                self._having[key.casefold()] = having
        return having

    def _check_source(self, condition: Condition) -> None:
        if condition.op not in ("exact", "ne", "in"):
            return
        known = {s.casefold() for s in self.known_sources}
        wanted = condition.value if condition.op == "in" else [condition.value]
        unknown = [v for v in wanted if as_text(v) not in known]
        if unknown:
            close = difflib.get_close_matches(as_text(unknown[0]), sorted(known), n=1, cutoff=HINT_CUTOFF)
            hint = f"did you mean '{next(s for s in self.known_sources if s.casefold() == close[0])}'? " if close else ""
            field = (f"; 'source' is the collection a record came from: for the metadata field named source, "
                     f"filter on metadata.source={unknown[0]}" if "source" in self.known_keys else "")
            raise QueryError(f"no record comes from source '{unknown[0]}' ({hint}sources: "
                             f"{', '.join(self.known_sources)}){self._format_hint(unknown[0])}{field}")

    def _format_hint(self, typed: Any) -> str:
        """Where an unknown source is the format of some (``--source whatsapp``: the app, where
        ``vecbook add`` named the source family-chat), those sources."""
        wanted = as_text(typed)
        having = sorted({r.source for r in self.records if as_text(r.metadata.get("format") or "") == wanted})
        if not having:
            return ""
        return f"; {typed} is the format of {', '.join(having)}: name one, or filter on format={typed} for all"

    def _column(self, condition: Condition) -> tuple[np.ndarray, list[Any]]:
        """Codes per record into a list of distinct values; the last code means 'missing'."""
        cache_key = (condition.field, tuple(p.casefold() for p in condition.path))
        with self._lock:
            if cache_key in self._columns:
                return self._columns[cache_key]
        index: dict[Any, int] = {}
        uniques: list[Any] = []
        raw_codes = []
        for record in self.records:
            value = self._value(record, condition)
            if value is MISSING:
                raw_codes.append(-1)
                continue
            token = _value_token(value)
            code = index.get(token)
            if code is None:
                code = index[token] = len(uniques)
                uniques.append(value)
            raw_codes.append(code)
        codes = np.asarray(raw_codes, dtype=np.int32)  # 4 bytes a record a key filtered on
        codes[codes < 0] = len(uniques)
        with self._lock:
            self._columns[cache_key] = (codes, uniques)
        return codes, uniques

    @staticmethod
    def _value(record: Record, condition: Condition) -> Any:
        if condition.field == "source":
            return record.source
        if condition.field == "file_path":
            return record.file_path
        return lookup_metadata(record.metadata, condition.path)


def _value_token(value: Any) -> Any:
    """A hashable stand-in for a metadata value, equal for equal values of one type: the
    value itself (with its type, so 1, 1.0, True and "1" stay apart) for a scalar, JSON for
    a list or table. The JSON encoding of every value took ~0.4 s a column at 100k records."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return type(value), value
    return json.dumps(value, sort_keys=True, default=str)


def _folded(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.casefold() for part in path)
