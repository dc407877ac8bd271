"""Markdown notes and Obsidian vaults: one record a heading section (H1-H3).

YAML front matter becomes metadata, inline ``#tags`` join the note's ``tags``,
wikilinks read as the words they show (``[[Note|alias]]`` as ``alias``), and
each record cites its section's lines. Folders whose names start with a dot
(``.obsidian``, ``.trash``, ``.git``) are not notes.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime
from typing import Any, Iterator

from ..conflicts import CONFLICT_KEY, conflict_original
from ..records import BINARY_REASON, DATE_KEYS, Problem, Record, date_value, is_binary, read_text, undecoded_reason
from .base import Export, ExportFile, export_record, iso
from . import excalidraw, joplin, logseq, notion
from .joplin import TIME_KEYS, epoch_time, raw_item
from .left_out import (LOGSEQ_RECYCLE, LOGSEQ_RECYCLE_FOLDER, OBSIDIAN_TRASH, OBSIDIAN_TRASH_FOLDER, TEMPLATES,
                       folder_left_out, keep_setting, leave_out)
from .toml_front import toml_front_matter

SUFFIXES = (".md", ".markdown")
# A vault's attachments do not count against it when detecting a folder of notes.
ATTACHMENTS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".pdf", ".mp3", ".m4a", ".wav", ".flac",
               ".ogg", ".mp4", ".mov", ".webm", ".canvas", ".base", ".excalidraw")
# Headings that start a record; deeper ones (H4-H6) stay inside their section,
# which keeps sections long enough to say something.
MAX_SECTION_LEVEL = 3
# What to do about a template's placeholder left in front matter (``description: {{description}}``),
# which YAML reads as a mapping inside a mapping and reports only as "found unhashable key".
PLACEHOLDER_HINT = "a template's {{placeholder}} left unquoted reads as a YAML mapping; quote it or fill it in"
TAB_HINT = "a tab indents this line, and YAML indents with spaces only: replace the tab with spaces"
# Keys the reader sets itself: front matter cannot overwrite them.
RESERVED_KEYS = frozenset({"title", "folder", "note", "format", "tags"})
_HEADING_RE = re.compile(r"^ {0,3}(#{1,%d})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$" % MAX_SECTION_LEVEL)
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_WIKILINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_INLINE_CODE_RE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# A tag: '#' then a letter, at the start of a line or after a space (not inside a
# word, a URL's fragment or "(#x"), as Obsidian reads them; nested tags (#a/b) stay whole.
# Bear's tags may hold spaces, closed by a second '#' ("#family dinner#"), and tags may start
# with an emoji ("#📚books"), as Bear and Obsidian allow. A '#' after a one-letter word closes
# nothing: it is C#'s or F#'s ("#dotnet code to F#" is the tag dotnet).
_EMOJI = "\u2600-\u27bf\U0001f000-\U0001faff"
_TAG_START = rf"(?<!\S)#(?:[^\W\d_]|[{_EMOJI}])"
_TAG_RE = re.compile(rf"(?={_TAG_START})#([^#\n]*?[^\s#])(?<!\s[^\W\d_])#(?![\w#])|(?={_TAG_START})#([\w/{_EMOJI}-]+)")
_URL_RE = re.compile(r"\b[a-zA-Z][\w+.-]*://\S+|\]\([^)\s]*\)")
# A Logseq property line: "key:: value" (a space after "::", or nothing: "Vector::reserve" is code).
_PROPERTY_RE = re.compile(r"^([A-Za-z][\w-]*)::(?:[ \t](.*))?$")
# A Logseq graph's own folder, beside its pages and journals, told by the config the app keeps in it.
LOGSEQ_FOLDER, LOGSEQ_CONFIG = "logseq", "config.edn"
# Logseq's own block properties, on an indented line under their block: "id:: <uuid>" (a block
# another references) and "collapsed:: true" (folded in the outline). Bookkeeping, not words.
# An Obsidian block id, " ^a1b2c3" at a line's end (or a line of its own, after a table or a list),
# which names the block for links to it and is not shown.
_BLOCK_ID_RE = re.compile(r"(?:^|[ \t]+)\^[A-Za-z0-9-]+[ \t]*$")
_BLOCK_BOOKKEEPING_RE = re.compile(r"^\s+(?:id:: [0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"
                                   r"|collapsed:: (?:true|false))\s*$")
# A daily note's name: Obsidian's YYYY-MM-DD, Logseq's journal yyyy_MM_dd (and YYYY.MM.DD).
_DAY_RE = re.compile(r"^(\d{4})([-_.])(\d{2})\2(\d{2})(?![\d])")
# A TextBundle (Bear's, Ulysses' and iA Writer's export of a note): a folder "<note>.textbundle" holding
# the note as text.md or text.markdown, beside its info.json and assets; a TextPack, "<note>.textpack", is
# one zipped (its files at the top, or in the bundle's folder), and the note where the pack lies.
TEXTBUNDLE, TEXTBUNDLE_TEXT, TEXTPACK = ".textbundle", "text", ".textpack"
# The keys that date a note without a ``date``, in order (Obsidian's and Joplin's creation times).
CREATED_KEYS = ("created", "created_time", "user_created_time")


def detect(export: Export) -> bool:
    """An Obsidian vault (a ``.obsidian`` folder), or a folder that is mostly ``.md`` notes."""
    if any(_in_folder(f.rel, ".obsidian") for f in export.files()):
        return True
    files = [f for f in export.files() if not _hidden(f.rel) and not f.name.lower().endswith(ATTACHMENTS)]
    notes = [f for f in files if _is_note(f)]
    # Most of the first notes are text: one picture saved under a .md name does not unmake a vault.
    text = sum(not is_binary(n.head(4096)) for n in notes[:5])  # UTF-16 and NUL padding are text
    return bool(notes) and 2 * len(notes) >= len(files) and 2 * text > len(notes[:5])


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.replace("!/", "/").split("/")[:-1])


def _in_folder(rel: str, name: str) -> bool:
    return name in rel.replace("!/", "/").split("/")[:-1]


def _is_note(file: ExportFile) -> bool:
    return file.name.lower().endswith(SUFFIXES) and not _hidden(file.rel)


def read(export: Export) -> list[Record]:
    """Every note's sections, one record each (the vault's templates folder and a Logseq graph's
    own folder left out, and Obsidian's trash, hidden; the templates, the trash and Logseq's
    recycle bin said so)."""
    templates, own = _template_folders(export), _logseq_folders(export)
    left_out = templates + own
    every = export.find(_is_note)
    for folder in templates:
        _say_left_out(export, folder, TEMPLATES, sum(f.rel.startswith(folder) for f in every))
    hidden = [(f"{vault}{OBSIDIAN_TRASH_FOLDER}/", OBSIDIAN_TRASH) for vault in
              {_vault_of(f.rel) for f in export.find(lambda f: _in_folder(f.rel, ".obsidian"))}]
    for folder, what in hidden + [(f"{graph}{LOGSEQ_RECYCLE_FOLDER}/", LOGSEQ_RECYCLE) for graph in own]:
        _say_left_out(export, folder, what, len(export.find(
            lambda f: f.rel.startswith(folder) and f.name.lower().endswith(SUFFIXES))))  # noqa: B023 - used at once
    return export.read_each([f for f in every if not f.rel.startswith(left_out)], lambda f: _records(export, f))


def _vault_of(rel: str) -> str:
    """The path of the vault a file of its ``.obsidian`` folder is in ("" for the export's own, else
    ending in "/"; "!/" ends a zip's name)."""
    parts = rel.split("/")  # (a zip's "a.zip!/.obsidian/..." splits as "a.zip!", ".obsidian", ...)
    at = parts.index(".obsidian")
    return "/".join(parts[:at]) + "/" if at else ""


def _say_left_out(export: Export, folder: str, what: str, count: int) -> None:
    """Say that the ``count`` notes of ``folder`` (its path inside the export, ending in "/"), a
    folder a vault keeps apart from its notes (``what``), were left out, with the line that reads
    them: one who looks for a template or a deleted note learns where it went."""
    if count:
        on_disk = export.path / folder if export.path.is_dir() and "!/" not in folder else None
        export.problems.append(Problem(export.label_prefix + folder.rstrip("/"), None,
                                       export.problem_prefix + folder_left_out(count, what, on_disk), left_out=True))


def _logseq_folders(export: Export) -> tuple[str, ...]:
    """The ``logseq`` folder of each Logseq graph (one holding ``config.edn``): the app's config,
    and in ``bak`` and ``version-files`` its copies of the pages it saved over, no notes."""
    config = f"{LOGSEQ_FOLDER}/{LOGSEQ_CONFIG}"
    return tuple(f.rel[:-len(LOGSEQ_CONFIG)] for f in export.find(
        lambda f: f.rel == config or f.rel.endswith((f"/{config}", f"!/{config}"))))


def _template_folders(export: Export) -> tuple[str, ...]:
    """The folders Obsidian's Templates plugin is set to (``.obsidian/templates.json``):
    templates hold placeholders such as ``{{date}}``, not notes."""
    import json

    folders = []
    for file in export.find(lambda f: f.rel == ".obsidian/templates.json"
                            or f.rel.endswith(("/.obsidian/templates.json", "!/.obsidian/templates.json"))):
        try:
            folder = json.loads(file.read_text()).get("folder")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(folder, str) and folder.strip("/"):
            folders.append(file.rel[: -len(".obsidian/templates.json")] + folder.strip("/") + "/")
    return tuple(folders)


# -- one note --


def note_records(export: Export, file: ExportFile, folder: str) -> Iterator[Record]:
    """One note's records, as a vault's are read, its ``folder`` given (a Joplin note's notebook
    path, which its file's path in a JEX archive does not hold)."""
    return _records(export, file, folder)


def _bundle_note(rel: str, note: str, folder: str) -> tuple[str, str]:
    """The name and folder of the note whose text is ``rel`` (``text.md``): in a TextPack, the pack's
    (where it lies); in a TextBundle, the bundle's; else ``note`` and ``folder`` as they are."""
    pack = rel.rsplit("!/", 2)[-2] if "!/" in rel else ""  # (where the pack lies: in a zip, its path there)
    if pack.lower().endswith(TEXTPACK) and (not folder or ("/" not in folder and folder.lower().endswith(TEXTBUNDLE))):
        return pack.rsplit("/", 1)[-1][:-len(TEXTPACK)], pack.rsplit("/", 1)[0] if "/" in pack else ""
    if folder.lower().endswith(TEXTBUNDLE):
        return folder.rsplit("/", 1)[-1][:-len(TEXTBUNDLE)], folder.rsplit("/", 1)[0] if "/" in folder else ""
    return note, folder


def _records(export: Export, file: ExportFile, folder_given: str | None = None) -> Iterator[Record]:
    read = read_text(file.read_bytes(), file.label)
    if read is None:  # a picture or a program under a .md name: no note, as no .txt is
        export.warn(file, None, BINARY_REASON)
        return
    text, bad = read
    if bad:  # (a note in Latin-1 or Windows-1252: its accents are lost, say where)
        export.warn(file, bad[0].line, undecoded_reason(bad, "note"), skipped=False)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    note = file.name.rsplit(".", 1)[0]
    inside = file.rel.rsplit("!/", 1)[-1]  # a zip member: its path inside the archive (the innermost)
    folder = inside.rsplit("/", 1)[0] if "/" in inside else ""
    folder = folder if folder_given is None else folder_given
    if note.lower() == TEXTBUNDLE_TEXT:  # a TextBundle's or a TextPack's text: the bundle is the note
        note, folder = _bundle_note(file.rel, note, folder)
    if notion.is_page(note):  # Notion's export: names end with page ids no one searches by
        note, folder = notion.without_id(note), "/".join(notion.without_id(part) for part in folder.split("/"))
    copy_of = conflict_original(file.label)  # a sync tool's copy: read as its note, saying so
    if copy_of is not None:
        note = copy_of.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    item = raw_item(file.name, lines)
    if item is not None and not item.is_note:
        if item.kind == joplin.NOTEBOOK_TYPE and export.shared is not None:  # (its notes are read again)
            export.shared.setdefault(joplin.NOTEBOOK_ITEMS, set()).add(export.rel)
        return  # a Joplin notebook, tag or resource: no note
    if item is not None and folder_given is None:  # a RAW note: in its notebook, as Joplin shows it
        parent = item.properties.get("parent_id", "")
        folder = joplin.notebook_path(parent, joplin.raw_notebooks(export, file)) or folder
        if export.shared is not None:
            export.shared.setdefault(joplin.FILED_NOTES, set()).add(export.rel)
    if item is not None and item.in_trash and not export.include_spam_and_trash:
        # as Joplin's search leaves it out; said, so one who looks for it learns where it went
        holder = "the archive" if "!/" in file.rel else "the folder"  # (a JEX's, a zip's; a RAW export's)
        leave_out(export, file, None, f"'{item.title or note}', a note in Joplin's trash; to search it, "
                                      f"{keep_setting(export, holder)}")
        return
    if item is None and export.shared is not None and "id:: " in text and logseq.holds_block_ids(lines):
        export.shared.setdefault(logseq.HOLDERS, set()).add(export.rel)  # (its referrers are read again)
    if item is None and logseq.has_references(text):  # Logseq shows a ((uuid)) as its block's text
        left_out = _logseq_folders(export)  # (its page backups hold the same ids, with older text)
        lines = logseq.resolve(lines, lambda: logseq.graph_blocks(
            export, lambda f: _is_note(f) and not f.rel.startswith(left_out)))  # type: ignore[attr-defined]
    drawing: int | None = None  # where an Excalidraw drawing's data starts
    if item is not None:  # a Joplin RAW note: its title line, its body, then its properties
        lines, note = lines[:item.body_end], item.title or note
        front, body_start = item.metadata(), 1
    else:
        front, body_start = _front_matter(export, file, lines)
        if not body_start:
            front, body_start = _page_properties(lines)
            note = _page_title(lines[:body_start]) or note
        if not front and notion.is_page(file.name.rsplit(".", 1)[0]):
            front = notion.page_properties(lines)  # (its lines stay the page's text)
        if excalidraw.is_drawing(front):  # the plugin's banner and scene data are no one's words
            lines, drawing = excalidraw.text_lines(lines, body_start)
    code = _code_lines(lines, body_start)
    metadata: dict[str, Any] = {**_front_metadata(front), "note": note, "folder": folder or None, CONFLICT_KEY: copy_of}
    _read_dates(export, file, lines, body_start, metadata)
    tags = _front_tags(front) + _inline_tags(lines, body_start, code)
    if tags:
        metadata["tags"] = list(dict.fromkeys(tags))
    if "date" not in metadata:
        created = next((metadata[k] for k in CREATED_KEYS if metadata.get(k)), None)
        day = created or _note_day(note)
        if day:
            metadata["date"] = day
    metadata["format"] = export.format
    metadata = {k: v for k, v in metadata.items() if v is not None}
    seen: dict[str, int] = {}
    if drawing is None:
        sections = list(_sections(lines, body_start, code, note))
    else:  # the notes on a drawing's back, then its text elements, apart
        sections = [*_sections(lines[:drawing], body_start, code, note), *_sections(lines, drawing, code, note)]
    # a note that is all properties (a book, a film); a drawing without words is none
    if not sections and front and body_start > 2 and not excalidraw.is_drawing(front):
        last = _last_filled(lines, 1, body_start - 1)
        sections = [(note, 1, last)] if last is not None else []
    for title, first, last in sections:
        record = _section_record(export, file, lines, code, title, first, last, metadata, seen)
        if record is not None:
            yield record


def _page_properties(lines: list[str]) -> tuple[dict[str, Any], int]:
    """Logseq's page properties: ``key:: value`` lines first in the page, up to a blank line or
    its first bullet (else none: "Ratio:: 3" then prose is text); ``tags`` and ``alias`` are
    lists written with commas, ``[[links]]`` or ``#tags``."""
    end = 0
    while end < len(lines) and _PROPERTY_RE.match(lines[end]):
        end += 1
    if not end or (end < len(lines) and lines[end].strip() and not lines[end].lstrip().startswith("- ")):
        return {}, 0
    front: dict[str, Any] = {}
    for line in lines[:end]:
        key, value = _PROPERTY_RE.match(line).groups("")  # type: ignore[union-attr]
        key = {"alias": "aliases"}.get(key.lower(), key)
        if key.lower() in ("tags", "aliases"):
            words = (w.strip().strip("[]#").strip() for w in value.split(","))
            front[key.lower()] = [w for w in words if w]
        elif key.lower() != "title":  # (a page's title is its name)
            front[key] = value.strip()
    return front, end


def _page_title(properties: list[str]) -> str | None:
    """A Logseq page's ``title::`` property: the page's name, which its file's name encodes where a
    file cannot hold it (``projects___garden.md`` or ``projects%2Fgarden.md`` for the namespaced
    page ``projects/garden``, ``What%3F.md`` for ``What?``)."""
    for line in properties:
        key, value = _PROPERTY_RE.match(line).groups("")  # type: ignore[union-attr]
        if key.lower() == "title" and value.strip():
            return value.strip()
    return None


def _note_day(note: str) -> str | None:
    """The day a daily note's name says, in ISO 8601 (None for a name that says no real day)."""
    found = _DAY_RE.match(note)
    if found is None:
        return None
    try:
        return date(int(found.group(1)), int(found.group(3)), int(found.group(4))).isoformat()
    except ValueError:
        return None


def _front_matter(export: Export, file: ExportFile, lines: list[str]) -> tuple[dict[str, Any], int]:
    """The front matter (a mapping) and the index of the first body line; an invalid block
    is a WARN and stays in the note's text."""
    import yaml

    if lines and lines[0].strip() == "+++":
        return toml_front_matter(export, file, lines)
    if not lines or lines[0].strip() != "---":
        return {}, 0
    close = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if close is None:
        return {}, 0
    # libyaml's loader where PyYAML has it: the pure-Python one costs ~1 ms a note
    loader = _as_obsidian_reads(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    try:
        try:
            data = yaml.load("\n".join(lines[1:close]), Loader=loader)  # noqa: S506 - a safe loader
        except ValueError as exc:  # an impossible date (2024-02-30): the block read again, dates as text
            data = yaml.load("\n".join(lines[1:close]), Loader=_as_obsidian_reads(_text_dates(yaml)))  # noqa: S506
            line = next((i + 1 for i in range(1, close) if _raises(yaml, loader, lines[i])), 2)
            export.warn(file, line, f"front matter holds an impossible date ({exc}); kept as written", skipped=False)
    except yaml.YAMLError as exc:  # (also one met when read again for its impossible date)
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        at = lines[line - 1] if 0 < line <= len(lines) else ""
        if "unhashable" in problem and "{{" in at:
            problem += f": {PLACEHOLDER_HINT}"
        elif "\t" in at[:len(at) - len(at.lstrip())]:
            problem = TAB_HINT
        export.warn(file, line, f"invalid front matter ({problem}); the note is kept as text", skipped=False)
        return {}, 0
    if data is None:
        return {}, close + 1
    if not isinstance(data, dict):
        export.warn(file, 2, f"front matter is not a mapping of keys to values (it is a {type(data).__name__}); "
                             f"the note is kept as text", skipped=False)
        return {}, 0
    return data, close + 1


def _read_dates(export: Export, file: ExportFile, lines: list[str], body_start: int,
                metadata: dict[str, Any]) -> None:
    """Front matter dates written as text ("March 5, 2024") in ISO 8601, as filters and recency
    read them; one that says no day is kept as written, with a WARN naming its line. A time
    written as milliseconds (or seconds) since 1970, as Joplin's tools write them, in ISO 8601."""
    for key in [k for k in metadata if k.lower() in TIME_KEYS]:
        metadata[key] = epoch_time(metadata[key]) or metadata[key]
    for key in [k for k in metadata if k.lower() in DATE_KEYS and isinstance(metadata[k], str)]:
        line = next((i + 1 for i in range(1, body_start) if lines[i].lstrip().startswith(f"{key}:")), 2)
        metadata[key], problem = date_value(metadata[key], file.label, line, key)
        if problem is not None:
            export.warn(file, line, problem.reason, skipped=False)


@functools.lru_cache(maxsize=None)  # (one class, not one a note: ``_as_obsidian_reads`` keeps each it is given)
def _text_dates(yaml: Any) -> Any:
    """PyYAML's safe loader that reads dates as the text they are."""
    timestamp = "tag:yaml.org,2002:timestamp"

    class TextDates(yaml.SafeLoader):  # type: ignore[misc,name-defined]
        yaml_implicit_resolvers = {first: [(tag, rule) for tag, rule in rules if tag != timestamp]
                                   for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    return TextDates


# Plain values as YAML 1.2 reads them, as Obsidian does (PyYAML reads YAML 1.1): only true and
# false are booleans (1.1's yes, no, on, off, y, n are text: Norway's code NO is no False),
# numbers have no base-60 form (a time 12:30 is text, not 750), and octal is written 0o17 (1.1's
# 017 made a zip code 01234 the number 668: a number with a leading zero stays the text written,
# as 0612345678 always did). The rest is PyYAML's.
_BOOL = r"^(?:true|True|TRUE|false|False|FALSE)$"
_INT = r"^(?:[-+]?0b[0-1_]+|[-+]?0o[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"
_FLOAT = (r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
          r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_loaders: dict[type, type] = {}


def _as_obsidian_reads(base: type) -> type:
    """The YAML loader ``base`` reading booleans and numbers as YAML 1.2 does (``_BOOL``...),
    made once per loader."""
    if base not in _loaders:
        redone = {f"tag:yaml.org,2002:{kind}" for kind in ("bool", "int", "float")}
        resolvers = {first: [(tag, rule) for tag, rule in rules if tag not in redone]
                     for first, rules in base.yaml_implicit_resolvers.items()}  # type: ignore[attr-defined]
        loader = type(f"Obsidian{base.__name__}", (base,), {"yaml_implicit_resolvers": resolvers})
        for kind, rule, first in (("bool", _BOOL, "tTfF"), ("int", _INT, "-+0123456789"),
                                  ("float", _FLOAT, "-+0123456789.")):
            loader.add_implicit_resolver(f"tag:yaml.org,2002:{kind}", re.compile(rule), list(first))  # type: ignore[attr-defined]
        _loaders[base] = loader
    return _loaders[base]


def _raises(yaml: Any, loader: Any, line: str) -> bool:
    """Whether one front matter line alone fails to load with an impossible value."""
    try:
        yaml.load(line, Loader=loader)  # noqa: S506 - a safe loader
    except ValueError:
        return True
    except yaml.YAMLError:
        return False
    return False


def _front_metadata(front: dict[str, Any]) -> dict[str, Any]:
    """Scalar values (dates as ISO text) and lists of scalars; nested mappings are left out."""
    out: dict[str, Any] = {}
    for key, value in front.items():
        key = str(key)
        if key in RESERVED_KEYS:
            continue
        if isinstance(value, list):
            items = [_scalar(v) for v in value]
            kept = [v for v in items if v is not None]
            if kept:
                out[key] = kept
        elif _scalar(value) is not None:
            out[key] = _scalar(value)
    if isinstance(out.get("aliases"), str):
        out["aliases"] = [out["aliases"]]
    return out


def _scalar(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return _render_links(value).strip() or None
    if isinstance(value, (bool, int, float)):
        return value
    return None


def _front_tags(front: dict[str, Any]) -> list[str]:
    """``tags`` (or ``tag``): a list, or a string split on commas and spaces; '#' dropped."""
    value = front.get("tags", front.get("tag"))
    items = value if isinstance(value, list) else re.split(r"[,\s]+", value) if isinstance(value, str) else []
    return [str(t).strip().lstrip("#") for t in items if t is not None and str(t).strip().lstrip("#")]


def _code_lines(lines: list[str], start: int) -> list[bool]:
    """Which lines are inside a fenced code block or a comment block, Obsidian's ``%%`` or
    HTML's ``<!--`` (fence and comment lines included): Obsidian shows neither's ``# line``
    as a heading nor its ``#word`` as a tag."""
    inside: list[bool] = [False] * len(lines)
    fence: str | None = None
    comment: str | None = None  # the text that closes the open comment block
    for i in range(start, len(lines)):
        match = _FENCE_RE.match(lines[i])
        if comment is not None:
            inside[i] = True
            plain = _INLINE_CODE_RE.sub(" ", lines[i])
            if (plain.count("%%") % 2 if comment == "%%" else comment in plain):
                comment = None
        elif fence is None and (opened := _comment_opened(lines[i])) is not None and not match:
            comment = opened
            inside[i] = True
        elif fence is None and match:
            fence = match.group(1)
            inside[i] = True
        elif fence is not None:
            inside[i] = True
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not lines[i].strip().strip(fence[0]):
                fence = None
    return inside


def _comment_opened(line: str) -> str | None:
    """What closes a comment block this line opens and leaves open (``%%`` or ``-->``), else
    None; a comment closed on its own line (``%%note%%``) or in inline code is no block."""
    plain = _INLINE_CODE_RE.sub(" ", line)
    if plain.count("%%") % 2:
        return "%%"
    html = plain.rfind("<!--")
    return "-->" if html >= 0 and "-->" not in plain[html:] else None


def _inline_tags(lines: list[str], start: int, code: list[bool]) -> list[str]:
    tags = []
    for i in range(start, len(lines)):
        if code[i] or "#" not in lines[i]:
            continue
        plain = _URL_RE.sub(" ", _INLINE_CODE_RE.sub(" ", lines[i]))
        tags += [(closed or open_).rstrip("/-") for closed, open_ in _TAG_RE.findall(plain)]
    return tags


def _sections(lines: list[str], start: int, code: list[bool], note: str) -> Iterator[tuple[str, int, int]]:
    """(heading path, first line index, last non-blank line index) of each section with
    text besides its heading; code fences never start a section."""
    path: list[tuple[int, str]] = []
    title, first, has_heading = note, start, False
    for i in range(start, len(lines) + 1):
        match = _HEADING_RE.match(lines[i]) if i < len(lines) and not code[i] else None
        if i < len(lines) and not match:
            continue
        last = _last_filled(lines, first, i)
        if last is not None and last >= first + has_heading:
            yield title, first, last
        if match:
            level, heading = len(match.group(1)), _render_links((match.group(2) or "").strip())
            path = [(lv, h) for lv, h in path if lv < level] + [(level, heading)]
            names = [h for _, h in path if h]
            if names and path[0] == (1, note):  # "# Note name" repeats the note's own name
                names = names[1:]
            title, first, has_heading = " > ".join([note, *names]), i, True


def _last_filled(lines: list[str], first: int, stop: int) -> int | None:
    return next((j for j in range(stop - 1, first - 1, -1) if lines[j].strip()), None)


def _section_record(export: Export, file: ExportFile, lines: list[str], code: list[bool], title: str,
                    first: int, last: int, metadata: dict[str, Any], seen: dict[str, int]) -> Record | None:
    while first <= last and not lines[first].strip():
        first += 1
    if first > last:
        return None
    header = title
    segments = [(0, first + 1, first + 1)]
    parts = []
    offset = len(header) + 1
    for i in range(first, last + 1):
        line = lines[i].rstrip()
        if not code[i]:
            if _BLOCK_BOOKKEEPING_RE.match(line):
                continue
            line = _render_links(_BLOCK_ID_RE.sub("", line) if "^" in line else line)
        segments.append((offset, i + 1, i + 1))
        parts.append(line)
        offset += len(line) + 1
    text = "\n".join(parts)
    seen[title] = seen.get(title, 0) + 1
    key = title if seen[title] == 1 else f"{title}~{seen[title]}"
    return export_record(export, file, text, first + 1, last + 1, {**metadata, "title": title}, key,
                         content=f"{header}\n{text}", segments=tuple(segments))


# -- wikilinks --


def _render_links(line: str) -> str:
    """Wikilinks, and links between the pages of Notion's export, as the words they show, outside
    inline code spans."""
    if "[[" not in line and not notion.has_paths(line):
        return line
    pieces, end = [], 0
    for match in _INLINE_CODE_RE.finditer(line):
        pieces.append(_linked_words(line[end:match.start()]))
        pieces.append(match.group(0))
        end = match.end()
    pieces.append(_linked_words(line[end:]))
    return "".join(pieces)


def _linked_words(text: str) -> str:
    text = _WIKILINK_RE.sub(_link_words, text) if "[[" in text else text
    return notion.link_words(text) if notion.has_paths(text) else text


def _link_words(match: re.Match[str]) -> str:
    """``[[Note|alias]]`` -> alias, ``[[Note#Heading]]`` -> "Note > Heading", ``![[a.png]]`` -> "[embed: a.png]"."""
    target, _, alias = re.sub(r"\\\|", "|", match.group(2)).partition("|")
    target, alias = target.strip(), alias.strip()
    if match.group(1):
        return f"[embed: {target}]"  # an embed's "alias" is an image size, not words
    if alias:
        return alias
    note, _, heading = target.partition("#")
    parts = [note.strip()] + [h.strip() for h in heading.split("#") if h.strip() and not h.strip().startswith("^")]
    return " > ".join(p for p in parts if p) or target
