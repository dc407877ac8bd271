"""Which rows of a SQLite database ``vecbook add`` reads: the table (one with ``id`` and
``content`` columns is used as it is) or, for another text column, the query it writes, every
other column kept as metadata; ConfigError listing the tables and columns where it cannot tell."""

from __future__ import annotations

import re
import shlex
import sqlite3
from pathlib import Path
from typing import Sequence

from . import sqlite_ro
from .config import ConfigError
from .records import Record
from .sqlite_ro import BUSY_MESSAGES, open_readonly, row_key

# The columns apps keep a row's creation time in, first found first: Joplin's user_created_time
# (the time the user gave the note, which it shows) before its created_time; Bear's and other
# Core Data apps' ZCREATIONDATE; the usual names elsewhere (Rails' created_at).
CREATED_COLUMNS = ("user_created_time", "created_time", "created_at", "created", "creation_date", "date_created",
                   "createdate", "zcreationdate", "zcreationdate1", "zdatecreated")
# Names of columns that look like a row's date but are not read as one by themselves (a "day"
# may hold a weekday's name): ``add`` names the first in what it says of a table without dates.
_DATE_LIKE = re.compile(r"date|time|day|^ts$|_at$|_on$", re.IGNORECASE)
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
# The tables SQLite's FTS3/4, FTS5 and R-tree virtual tables keep their index in, after their name.
_SHADOW_TABLES = ("content", "segments", "segdir", "docsize", "stat", "data", "idx", "config", "node", "parent",
                  "rowid")
# The note apps whose database is plain SQLite: the table of notes, its text column, the columns
# that tell it apart, and the app's name (what a profile folder is said to be, and the source's
# name): Bear's Core Data ZSFNOTE; Joplin's database.sqlite in its profile folder; Day One's Core
# Data ZENTRY, in DayOne.sqlite; Anki's collection.anki2, whose notes table is named as Joplin's.
# `vecbook add database.sqlite` reads them as `--table T --text-column C` would.
JOPLIN, CALIBRE, FIREFOX, SAFARI = "Joplin", "Calibre", "Firefox", "Safari"
KNOWN_NOTES = (("ZSFNOTE", "ZTEXT", ("ZTITLE", "ZUNIQUEIDENTIFIER"), "Bear"),
               ("notes", "body", ("parent_id", "is_todo"), JOPLIN),
               ("ZENTRY", "ZMARKDOWNTEXT", ("ZUUID", "ZCREATIONDATE", "Z_PK"), "Day One"),
               ("notes", "flds", ("mid", "sfld", "csum"), "Anki"),
               ("books", "title", ("author_sort", "series_index", "has_cover"), CALIBRE),
               ("moz_places", "title", ("url", "rev_host", "frecency"), FIREFOX),
               ("history_items", "url", ("domain_expansion", "should_recompute_derived_visit_counts"),
                SAFARI))
# A Calibre library's books (metadata.db): each book's description (HTML, in comments: read as the text
# it shows, ``sqlite_rows.HTML_APPS``), else its title, with its title, its authors in the order Calibre
# keeps them, and the time it was added as its date (``{date}``: or the column --date-column names);
# ``path`` is its folder in the library. A date Calibre does not know it writes as the year 101 (its
# UNDEFINED_DATE, ``0101-01-01 00:00:00+00:00``; a year up to 101 is taken so): no date.
CALIBRE_TABLES = {"comments", "authors", "books_authors_link"}
CALIBRE_BOOKS = ("SELECT id, COALESCE(NULLIF((SELECT text FROM comments WHERE book = books.id), ''), title) AS content, "
                 "title, (SELECT group_concat(name, ' & ') FROM (SELECT a.name FROM books_authors_link AS l JOIN "
                 "authors AS a ON a.id = l.author WHERE l.book = books.id ORDER BY l.id)) AS author, CASE WHEN "
                 "substr({date}, 1, 4) < '0102' THEN NULL ELSE {date} END AS date, CASE WHEN substr(pubdate, 1, 4) "
                 "< '0102' THEN NULL ELSE pubdate END AS pubdate, series_index, isbn, path FROM books")
# Firefox's history (places.sqlite): each page it shows (not a redirect's, hidden), its title or, for
# one without, its address, with its address, description, site, visits, the bookmarks the user named
# it by, and its last visit as its date (``{date}``: or the column --date-column names).
FIREFOX_PLACES = ("SELECT id, COALESCE(NULLIF(title, ''), url) AS content, url, description, site_name, visit_count, "
                  "{date} AS date, (SELECT group_concat(b.title, ' / ') FROM moz_bookmarks AS b WHERE b.fk = "
                  "moz_places.id AND b.title <> '') AS bookmark FROM moz_places WHERE hidden = 0")
# Safari's history (History.db): each page (history_items) with a visit that was not a redirect's, the title
# of its latest visit with one (history_visits) or its address, with its address, site and visits, and its
# last visit as its date (seconds since 2001, as Apple's apps count time, made Unix time).
SAFARI_PAGES = ("SELECT id, COALESCE((SELECT v.title FROM history_visits AS v WHERE v.history_item = history_items.id "
                "AND v.title <> '' ORDER BY v.visit_time DESC LIMIT 1), url) AS content, url, domain_expansion AS "
                "site, visit_count, {date} AS date FROM history_items WHERE EXISTS (SELECT 1 FROM history_visits AS "
                "v WHERE v.history_item = history_items.id AND v.redirect_destination IS NULL)")
SAFARI_LAST_VISIT = ("(SELECT max(v.visit_time) FROM history_visits AS v WHERE v.history_item = history_items.id) + "
                     "978307200")  # (CORE_DATA_EPOCH)
# The apps whose database is read by a query of their own: the tables it reads besides the app's
# known one, the query, and what dates a row unless --date-column names another column.
KNOWN_QUERIES = {CALIBRE: (CALIBRE_TABLES, CALIBRE_BOOKS, '"timestamp"'),
                 FIREFOX: ({"moz_bookmarks"}, FIREFOX_PLACES, '"last_visit_date"'),
                 SAFARI: ({"history_visits"}, SAFARI_PAGES, SAFARI_LAST_VISIT)}
# An Anki note's id is the time it was made, in milliseconds: its date.
ANKI_DATE = '"id" AS date'
# The columns of a known app's notes table that are not read: Day One's rich text, the entry's text
# again as JSON, which would make every hit's metadata that text twice over.
KNOWN_UNREAD = {"ZENTRY": ("ZRICHTEXTJSON",)}
# A Day One entry's journal (``journal``, as a filter names it) and whether it is the Trash journal,
# where Day One keeps an entry deleted until it is emptied (``trashed``: left out as a trash column is).
DAY_ONE_JOURNAL = ('(SELECT ZNAME FROM ZJOURNAL WHERE Z_PK = "ZENTRY".ZJOURNAL) AS journal',
                   '(SELECT ZISTRASHJOURNAL FROM ZJOURNAL WHERE Z_PK = "ZENTRY".ZJOURNAL) AS trashed')
# The file each keeps its notes in, in its profile folder (Joplin's ``~/.config/joplin-desktop``, Bear's
# Group Container's ``Application Data``), beside settings, logs and attachments, which are no notes;
# and where it lies under the folder above (Bear's group container ``9K33E3U3T4.net.shinyfrog.bear``).
PROFILE_DATABASE = "database.sqlite"
PROFILE_DATABASES = (PROFILE_DATABASE, f"Application Data/{PROFILE_DATABASE}")
# Joplin keeps each profile made after the first in ``profile-<id>`` inside the first's folder, and
# their names, by id, in ``profiles.json`` there (``{"profiles": [{"name": "Work", "id": "ab12cd34"}]}``).
JOPLIN_PROFILE_PREFIX, JOPLIN_PROFILES = "profile-", "profiles.json"
# A Joplin note's notebook path (its notebooks are nested, in ``folders``; ``notes.parent_id`` names the
# note's), as ``folder``, what a Markdown note's folder is named: ``Personal/Travel``. The walk up
# stops at 16 notebooks deep (a loop in the parents must end).
JOPLIN_NOTEBOOK = ('(WITH RECURSIVE up(id, parent_id, path, depth) AS (SELECT id, parent_id, title, 0 FROM folders '
                   'WHERE id = "notes".parent_id UNION ALL SELECT f.id, f.parent_id, f.title || \'/\' || up.path, '
                   'up.depth + 1 FROM folders f JOIN up ON f.id = up.parent_id WHERE up.depth < 16) '
                   'SELECT path FROM up ORDER BY depth DESC LIMIT 1) AS folder')
# Apple Notes' NoteStore.sqlite, told by its tables: a note's text is a gzipped protobuf in ZICNOTEDATA's
# ZDATA, which no column holds as text (ZICCLOUDSYNCINGOBJECT's ZSNIPPET is its first line only).
APPLE_NOTES = {"ZICCLOUDSYNCINGOBJECT", "ZICNOTEDATA"}
# What --since and --until read of a row's date: an ISO day, with its time or not.
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
# The rows read to tell which column holds a table's text, when ``add`` is not told.
TEXT_SAMPLE_ROWS = 500
# Core Data counts time in seconds from 2001-01-01 UTC, which is this Unix time.
CORE_DATA_EPOCH = 978307200
# Apple's apps count time so outside Core Data too (Safari's History.db: history_visits.visit_time, a
# REAL). Such a time of a recent date read as Unix time falls from 1985 to 2001: a column --date-column
# names whose numbers all fall there as Unix time (in seconds, or the unit their size tells), and as
# seconds since 2001 no later than today, is read so, and `add` says so. A Unix time of the 1990s
# whose other reading would be after today stays one; one of 1985-1995, which would be 2016-2026,
# does not: the WARN says how to read it as Unix time.
MAC_TIME_FLOOR = 5e8  # 1985-11-05 as Unix time, 2016-11-05 as seconds since 2001
# What the query `add` writes says of such a column (and date_warnings finds there).
MAC_TIME_NOTE = "/* seconds since 2001 */"


def profile_database(folder: Path) -> tuple[Path, str] | None:
    """(database, app) where ``folder`` is the profile folder of a note app ``KNOWN_NOTES`` names,
    holding its database: ``vecbook add`` of the folder adds the notes in it, not the app's logs
    and settings as notes. None for any other folder (a database it cannot read included)."""
    for database in (folder / name for name in PROFILE_DATABASES):
        app = known_app(database) if database.is_file() else None
        if app is not None:
            return database, app
    return None


def other_profiles(folder: Path) -> list[tuple[str, Path]]:
    """(name, folder) of each profile Joplin keeps inside the profile folder ``folder`` besides its
    own (``profile-<id>``, holding a database of Joplin's), named as ``profiles.json`` names it."""
    found = []
    for sub in sorted(folder.glob(f"{JOPLIN_PROFILE_PREFIX}*")):
        if (sub / PROFILE_DATABASE).is_file() and known_app(sub / PROFILE_DATABASE) == JOPLIN:
            found.append((joplin_profile_name(sub) or sub.name, sub))
    return found


def joplin_profile_name(folder: Path) -> str | None:
    """The name Joplin gives the profile in ``folder`` (a ``profile-<id>``), from ``profiles.json`` in
    the folder above; None for another folder, or one it does not name."""
    import json

    if not folder.name.startswith(JOPLIN_PROFILE_PREFIX):
        return None
    try:
        profiles = json.loads((folder.parent / JOPLIN_PROFILES).read_text(encoding="utf-8")).get("profiles")
    except (OSError, ValueError, AttributeError):
        return None
    wanted = folder.name.removeprefix(JOPLIN_PROFILE_PREFIX)
    names = [p.get("name") for p in profiles or [] if isinstance(p, dict) and p.get("id") == wanted]
    return names[0] if names and isinstance(names[0], str) and names[0].strip() else None


def known_app(path: Path) -> str | None:
    """The note app whose database ``path`` is (``Bear``, ``Joplin``...), else None."""
    try:
        return _known_notes(_tables(path))[2]
    except ConfigError:
        return None


def sqlite_table(path: Path, table: str | None, text_column: str | None,
                 date_column: str | None = None) -> tuple[str | None, str | None]:
    """(table, query) for a SQLite source: a table with ``id`` and ``content`` columns is used
    as it is; another text column needs ``--text-column`` and becomes a query, and so does a
    ``date_column`` (``--date-column``), named ``date`` there. ConfigError listing the tables and
    their columns when the choice cannot be made."""
    table, query = _table_or_query(path, table, text_column, date_column)
    if date_column is None or table is None:
        return table, query
    # a table of id and content columns, read as it is but for the date
    columns = _tables(path)[table]
    _check_column(table, columns, date_column)
    content = next(c for c in columns if c.lower() == "content")
    return None, _text_column_query(table, content, columns, '"id"', date_column=date_column,
                                    since_2001=_since_2001(path, table, columns, date_column))


def _table_or_query(path: Path, table: str | None, text_column: str | None,
                    date_column: str | None) -> tuple[str | None, str | None]:
    """``sqlite_table``'s choice, a table of ``id`` and ``content`` columns given as it is."""
    columns = _tables(path)
    listing = "; ".join(f"{n} ({', '.join(c)})" for n, c in columns.items()) or "none"
    extra: list[str] = []
    app = None
    if table is None and text_column is None:
        table, text_column, app = _known_notes(columns)
        extra = _known_extra(app, columns, date_column)
        if table is None and APPLE_NOTES <= columns.keys():
            raise ConfigError(f"{path} is Apple Notes' database, which keeps each note's text compressed, in a form "
                              "VecBook does not read: export the notes as Markdown or HTML (Exporter, from the Mac "
                              "App Store, or an AppleScript export) and add that folder "
                              "(`--table ZICCLOUDSYNCINGOBJECT --text-column ZSNIPPET` reads each note's first "
                              "line only)")
    if table is None:
        fitting = [n for n, c in columns.items() if {"id", "content"} <= {x.lower() for x in c}]
        if len(fitting) != 1 or text_column is not None:
            likeliest = _likeliest_table(path, columns)
            hint = f"; `{likeliest}` reads the most text" if likeliest else ""
            raise ConfigError(f"which table of {path} holds the text? pass --table NAME (and --text-column "
                              f"NAME when it has no 'content' column{hint}); tables: {listing}")
        return fitting[0], None
    if table not in columns:
        raise ConfigError(f"no table '{table}' in {path}; tables: {listing}")
    if date_column is not None:
        _check_column(table, columns[table], date_column)
    lowered = [c.lower() for c in columns[table]]
    if text_column is None:
        if "content" in lowered and "id" in lowered:
            return table, None
        likeliest = _likeliest_text(path, table, columns[table])
        hint = f" ({likeliest} holds the most text)" if likeliest else ""
        raise ConfigError(f"which column of table '{table}' holds the text? pass --text-column NAME{hint}; "
                          f"columns: {', '.join(columns[table])}")
    _check_column(table, columns[table], text_column)
    if app in KNOWN_QUERIES and KNOWN_QUERIES[app][0] <= columns.keys():
        _, query, dated = KNOWN_QUERIES[app]
        return None, query.format(date=f'"{_quoted(date_column)}"' if date_column else dated)
    kept = [c for c in columns[table] if c not in KNOWN_UNREAD.get(table, ())]
    since_2001 = _since_2001(path, table, columns[table], date_column)
    if "id" in lowered:
        return None, _text_column_query(table, text_column, kept, '"id"', extra, date_column, since_2001)
    key = _row_key(path, table)
    if key is None:
        raise ConfigError(f"'{table}' is a view with no 'id' column, and a view's rows have no rowid to cite them "
                          f"by: add the view's underlying table instead, or write the [[collections]] table by "
                          f"hand with a 'query' that selects an id (docs/formats.md#sqlite-collections)")
    return None, _text_column_query(table, text_column, kept, key, extra, date_column, since_2001)


def _since_2001(path: Path, table: str, columns: list[str], column: str | None) -> float | None:
    """What the numbers of ``column`` (``--date-column``) are divided by to give seconds since 2001,
    where they are such times (``MAC_TIME_FLOOR``) outside a Core Data table; None else."""
    import time

    from .sqlite_rows import UNIX_TIME_FLOOR, time_unit

    if column is None or column.lower() == "date" or _core_data(columns, column):
        return None
    quoted = f'"{_quoted(column)}"'
    try:
        connection = open_readonly(path)
        try:
            least, most = connection.execute(
                f"SELECT min({quoted}), max({quoted}) FROM \"{_quoted(table)}\" WHERE typeof({quoted}) IN "
                f"('integer', 'real') AND {quoted} <> 0").fetchone()
        finally:
            connection.close()
    except (sqlite3.Error, OSError) as exc:
        raise _unreadable_database(path, exc) from None
    if least is None or least < UNIX_TIME_FLOOR or time_unit(least) != time_unit(most):
        return None
    unit = time_unit(least)
    if MAC_TIME_FLOOR <= least / unit and most / unit + CORE_DATA_EPOCH <= time.time() + 86400:
        return unit  # (below CORE_DATA_EPOCH as Unix time, or the reading since 2001 would be after 2032)
    return None


def date_warnings(query: str | None, records: Sequence[Record], config_file: Path, name: str,
                  date_column: str | None = None) -> list[str]:
    """What ``add`` says of the rows it read with a query it wrote (``query``; one given by hand
    says what it dates itself) when none has a date: the column ``--date-column`` named holds no
    date VecBook reads, or the table has no date column (``undated``)."""
    dates = [r.metadata["date"] for r in records if r.metadata.get("date") not in (None, "")]
    read = [d for d in dates if isinstance(d, str) and _ISO_DAY.match(d)]
    if query is not None and read and date_column is not None and MAC_TIME_NOTE in query:
        return [_since_2001_said(query, read, config_file, date_column)]
    if query is None or read:
        return []
    if date_column is None:
        return [undated(query, config_file, name)] if not dates else []
    like = f"its values are like {dates[0]!r}" if dates else "it holds none"
    return [f"no dates: --date-column {date_column} holds no date VecBook reads ({like}): an ISO date or "
            f"date-time, or a Unix time in seconds, milliseconds, microseconds or nanoseconds; "
            f"--since, --until and recency pass its rows by"]


def _since_2001_said(query: str, dates: list[str], config_file: Path, column: str) -> str:
    """What ``add`` says of ``column``, read as seconds since 2001 (``_since_2001``): the years its
    rows (``dates``, read so) would be dated as Unix time, and how to read it so."""
    from datetime import datetime, timezone

    read = sorted(datetime.fromisoformat(d) for d in dates)
    since = _years(read[0].year, read[-1].year)
    unix = _years(*(datetime.fromtimestamp(d.timestamp() - CORE_DATA_EPOCH, timezone.utc).year
                    for d in (read[0], read[-1])))
    end = query.index(f"{MAC_TIME_NOTE} AS date") + len(MAC_TIME_NOTE)
    written = query[query.rindex(f'"{_quoted(column)}"', 0, end):end]
    return (f"--date-column {column} is read as seconds since 2001-01-01, as Apple's apps count time: read as Unix "
            f"time, its rows would be dated {unix}, not {since}; if they are Unix times of {unix}, replace "
            f"`{written}` by `\"{column}\"` in its query in {config_file}")


def _years(first: int, last: int) -> str:
    return str(first) if first == last else f"{first} to {last}"


def undated(query: str, config_file: Path, name: str) -> str:
    """What ``add`` says of the source ``name``, a table it read with ``--text-column`` (``query``,
    which it wrote) whose rows have no date: why, and how to date them (``--date-column``, or the
    edit of the query), by the first column whose name looks like a date."""
    columns = [name.replace('""', '"') for name in _QUOTED.findall(query.split(" FROM ")[0])]
    like = next((name for name in columns if _DATE_LIKE.search(name)), None)
    option, named = (f"--date-column {shlex.quote(like)}", f'"{like}"') if like else ("--date-column COLUMN",
                                                                                       "<column>")
    return (f"no dates: the table has no date column VecBook reads (date, or a creation time such as created_at), "
            f"so --since, --until and recency pass its rows by; to date them, add it with `{option}` (after "
            f"`vecbook remove {name}`: an ISO date, or a Unix or Core Data time), or add `, {named} AS date` "
            f"before FROM in its query in {config_file}")


def _check_column(table: str, columns: list[str], column: str) -> None:
    """ConfigError, listing the columns, where ``table`` has no ``column``."""
    if column not in columns:
        raise ConfigError(f"no column '{column}' in table '{table}'; columns: {', '.join(columns)}")


def _tables(path: Path) -> dict[str, list[str]]:
    """The tables and views of the database at ``path`` with their columns (those a full-text index
    keeps its words in left out); ConfigError for a database that cannot be read."""
    try:
        connection = open_readonly(path)
        try:
            listed = connection.execute("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view') "
                                        "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
            names = _without_index_tables(listed)
            # The read-only connection's authorizer allows SELECT only: no PRAGMA table_info.
            return {n: found for n in names if (found := _columns(connection, n)) is not None}
        finally:
            connection.close()
    except (sqlite3.Error, OSError) as exc:
        raise _unreadable_database(path, exc) from None


def _known_notes(columns: dict[str, list[str]]) -> tuple[str | None, str | None, str | None]:
    """(table, text column, app) of a note app's database ``KNOWN_NOTES`` names, else Nones."""
    for table, text, marks, app in KNOWN_NOTES:
        if table in columns and {text, *marks} <= set(columns[table]):
            return table, text, app
    return None, None, None


def _known_extra(app: str | None, columns: dict[str, list[str]], date_column: str | None) -> list[str]:
    """What a known app's notes table is read with besides its columns: a Joplin note's notebook
    path, a Day One entry's journal and trash (where the tables holding them are there), an Anki
    note's date (unless ``date_column`` names another)."""
    if app == JOPLIN and {"id", "title", "parent_id"} <= set(columns.get("folders", ())):
        return [JOPLIN_NOTEBOOK]
    if app == "Anki" and date_column is None:
        return [ANKI_DATE]
    if app == "Day One" and "ZJOURNAL" in columns["ZENTRY"]:
        journals = set(columns.get("ZJOURNAL", ()))
        return [DAY_ONE_JOURNAL[0]] * ({"Z_PK", "ZNAME"} <= journals) + \
            [DAY_ONE_JOURNAL[1]] * ({"Z_PK", "ZISTRASHJOURNAL"} <= journals)
    return []


def _without_index_tables(listed: list[tuple[str, str | None]]) -> list[str]:
    """The names of ``listed`` (name, CREATE statement) but the tables a virtual table keeps its
    index in (an FTS index's ``<name>_segments``, ``_docsize``...: words no one wrote as such)."""
    virtual = [name for name, sql in listed if (sql or "").lstrip().upper().startswith("CREATE VIRTUAL TABLE")]
    shadow = {f"{name}_{part}".lower() for name in virtual for part in _SHADOW_TABLES}
    return [name for name, _ in listed if name.lower() not in shadow]


def _likeliest_table(path: Path, columns: dict[str, list[str]]) -> str | None:
    """The options of ``add`` that read the table and column of the database at ``path`` holding
    the most text (``_text_sizes``): ``--table T --text-column C``, or ``--table T`` for a table
    of ``id`` and ``content`` columns; None where no column holds text, or none can be read."""
    sizes = _sizes(path, columns)
    found = [(size, table, column) for table, by_column in sizes.items() for column, size in by_column.items() if size]
    if not found:
        return None
    _, table, column = max(found, key=lambda entry: entry[0])  # (the first listed of equals)
    lowered = {c.lower() for c in columns[table]}
    plain = column.lower() == "content" and "id" in lowered
    return f"--table {shlex.quote(table)}" + ("" if plain else f" --text-column {shlex.quote(column)}")


def _likeliest_text(path: Path, table: str, columns: list[str]) -> str | None:
    """The column of ``table`` whose text is longest (``_text_sizes``); None where no column
    holds such text, or the table cannot be read."""
    by_column = _sizes(path, {table: columns}).get(table, {})
    best = max(columns, key=lambda c: by_column.get(c, 0))
    return best if by_column.get(best) else None


def _sizes(path: Path, columns: dict[str, list[str]]) -> dict[str, dict[str, int]]:
    """``_text_sizes`` of each table of ``columns`` (name: its columns) that can be read."""
    sizes: dict[str, dict[str, int]] = {}
    try:
        connection = open_readonly(path)
    except (sqlite3.Error, OSError):
        return sizes
    try:
        for table, names in columns.items():
            try:
                sizes[table] = dict(zip(names, _text_sizes(connection, table, names)))
            except sqlite3.Error:  # a view that fails to run (a function only its app defines)
                continue
    finally:
        connection.close()
    return sizes


def _text_sizes(connection: sqlite3.Connection, table: str, columns: list[str]) -> list[int]:
    """The characters of text (with a space, a line break or a letter past ASCII: not an id, a
    UUID or a hash; nor JSON, which an app keeps beside the words it holds, as Day One keeps each
    entry's rich text) each column of ``table`` holds in its first ``TEXT_SAMPLE_ROWS`` rows."""
    sums = ", ".join(f"""sum(CASE WHEN typeof("{_quoted(c)}") = 'text' AND ("{_quoted(c)}" GLOB '*[ {chr(10)}]*' """
                     f"""OR "{_quoted(c)}" GLOB '*[^ -~]*') AND NOT json_valid("{_quoted(c)}") """
                     f"""THEN length("{_quoted(c)}") END)""" for c in columns)
    found = connection.execute(f'SELECT {sums} FROM (SELECT * FROM "{_quoted(table)}" '
                               f'LIMIT {TEXT_SAMPLE_ROWS})').fetchone()
    return [size or 0 for size in found]


def _columns(connection: sqlite3.Connection, table: str) -> list[str] | None:
    """A table's or view's columns; None for one the read-only connection cannot open (a
    full-text or R-tree index's virtual table, as Joplin and Thunderbird keep beside their rows)."""
    try:
        return [d[0] for d in connection.execute(f'SELECT * FROM "{_quoted(table)}" LIMIT 0').description]
    except sqlite3.Error:
        return None


def _row_key(path: Path, table: str) -> str | None:
    """``sqlite_ro.row_key`` of ``table`` in the database at ``path``; a read that fails (a lock
    taken since the tables were listed) is the same ConfigError as that listing's."""
    try:
        connection = open_readonly(path)
        try:
            return row_key(connection, table)
        finally:
            connection.close()
    except (sqlite3.Error, OSError) as exc:
        raise _unreadable_database(path, exc) from None


def _unreadable_database(path: Path, exc: Exception) -> ConfigError:
    """The error of a database ``add`` cannot read, a lock held past the wait said with what to do."""
    message = sqlite_ro.busy(str(exc)) if str(exc) in BUSY_MESSAGES else sqlite_ro.explained(str(exc))
    return ConfigError(f"cannot read the SQLite database {path}: {message}")


def _quoted(identifier: str) -> str:
    return identifier.replace('"', '""')


def _text_column_query(table: str, text_column: str, columns: list[str], key: str, extra: Sequence[str] = (),
                       date_column: str | None = None, since_2001: float | None = None) -> str:
    """SELECT giving the rows ``id`` (``key``: the table's id column, else its rowid or primary
    key) and ``content``, the other columns kept as metadata (a ``date`` one but the column
    ``date_column`` names, which is the date, read as seconds since 2001 divided by ``since_2001``
    where given), and the ``extra`` expressions."""
    dropped = ("id", "content", "date") if date_column else ("id", "content")
    others = [c for c in columns if c != text_column and c.lower() not in dropped]
    picked = [f'"{_quoted(c)}"' for c in others]
    dated = _date_column(columns, date_column, since_2001)
    picked += [dated] if dated else []
    picked += extra
    return f'SELECT {key} AS id, "{_quoted(text_column)}" AS content{"".join(", " + p for p in picked)} ' \
           f'FROM "{_quoted(table)}"'


def _date_column(columns: list[str], named: str | None = None, since_2001: float | None = None) -> str | None:
    """The expression naming the column ``named`` ``date`` (which ``--since``, ``--until`` and
    recency read), or unnamed, the row's creation time where the table has no ``date`` column but
    one of ``CREATED_COLUMNS``; a Core Data table's time (Bear's, Day One's, Apple's apps'),
    counted from 2001, made Unix time, and so a time ``_since_2001`` found (divided by it)."""
    lowered = {c.lower(): c for c in columns}
    if named is not None and named.lower() == "date":
        return None  # selected as it is, with the other columns
    if named is None and "date" in lowered:
        return None
    found = named or next((lowered[name] for name in CREATED_COLUMNS if name in lowered), None)
    if found is None:
        return None
    if since_2001 is not None:
        scaled = f'"{_quoted(found)}"' + (f" / {since_2001:.1f}" if since_2001 != 1 else "")
        return f"{scaled} + {CORE_DATA_EPOCH} {MAC_TIME_NOTE} AS date"
    read = f'"{_quoted(found)}" + {CORE_DATA_EPOCH}' if _core_data(columns, found) else f'"{_quoted(found)}"'
    return f"{read} AS date"


def _core_data(columns: list[str], column: str) -> bool:
    """Whether ``column`` is a time of a Core Data table (``Z_PK`` and ``Z_ENT`` columns, a ``Z`` column)."""
    return {"z_pk", "z_ent"} <= {c.lower() for c in columns} and column.lower().startswith("z")
