"""How the command line prints hits and records: a rank, score and citation per hit, its
metadata, and the snippet or cut text under the lines it cites, matched words highlighted on a
terminal; and what stderr says of the hits a text budget left out."""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .graphemes import clip_columns

if TYPE_CHECKING:  # imported where used: ``vecbook serve`` imports this module before the handshake, without numpy
    from .hits import Hit
    from .tokens import Analysis

# Width of the metadata line in the human-readable search output.
PREVIEW_WIDTH = 100
BOLD, RESET = "\x1b[1;33m", "\x1b[0m"  # bold yellow: the matched words in a terminal
WINDOWS = os.name == "nt"
STD_OUTPUT_HANDLE = -11
ENABLE_VIRTUAL_TERMINAL_PROCESSING = 0x0004  # the console mode that reads ANSI codes (Windows 10 1511 on)


# Control characters other than tab and line feed, printed raw, would act on the terminal: an ESC
# in a record (a pasted ANSI colour, a crafted chat message) clears or retitles it, a bare CR
# prints a line over itself, a NEL (U+0085) ends the line in some terminals, so the printed lines
# would no longer be the cited ones. Each is shown as its picture (␛, ␍, ␤; U+FFFD for the other
# C1 controls), one character for one, so highlighting keeps its offsets.
_PICTURES = {**{code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)}, 0x7F: 0x2421,
             **{code: 0xFFFD for code in range(0x80, 0xA0)}, 0x85: 0x2424}
_BARE_CR = re.compile(r"\r(?!\n)")


def shown(text: str) -> str:
    """``text`` safe to print on a terminal: its control characters (but tab, line feed and the CR
    of a CR LF) as their pictures, at the same length."""
    if text.isprintable():
        return text
    return _BARE_CR.sub("\u240d", text).translate(_PICTURES)


def stdout_is_unicode() -> bool:
    """Whether stdout encodes every character: UTF-8 on a console and on Linux and macOS, but
    Windows writes a pipe or a file in its ANSI code page (cp1252 and the like)."""
    try:
        return codecs.lookup(getattr(sys.stdout, "encoding", None) or "ascii").name.startswith("utf")
    except LookupError:
        return False


def fit_stdout() -> None:
    """Where stdout cannot encode every character, print the ones it lacks as '?': an emoji in a
    hit must not end ``vecbook search ... > hits.txt`` on Windows with a UnicodeEncodeError."""
    if not stdout_is_unicode() and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON for stdout: characters as they are where stdout encodes them all, else
    escaped (``\\u...``), so the JSON is exact in any encoding."""
    return json.dumps(value, indent=indent, ensure_ascii=not stdout_is_unicode())


def text_lines(text: str) -> list[str]:
    """A text's lines as its citations count them: cut at newlines only (``str.splitlines`` also
    cuts at U+2028 and the like, which a message may hold inside one line of its file)."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return lines[:-1] if lines[-1] == "" else lines


def wants_color() -> bool:
    """Highlight only on a terminal, and never when NO_COLOR is set (no-color.org); on Windows,
    only on a console that reads ANSI codes or was made to (``_windows_console_reads_ansi``)."""
    return (sys.stdout is not None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            and (not WINDOWS or _windows_console_reads_ansi()))


def _windows_console_reads_ansi() -> bool:
    """Turn the console's virtual terminal processing on: Windows 10's console (cmd, PowerShell
    5) leaves it off for a program that does not ask, and prints the codes as text (Windows
    Terminal has it on). False where the console refuses (before Windows 10)."""
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.GetStdHandle.restype = ctypes.c_void_p
    handle = ctypes.c_void_p(kernel32.GetStdHandle(STD_OUTPUT_HANDLE))
    mode = ctypes.c_uint32()
    if not kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
        return False
    if mode.value & ENABLE_VIRTUAL_TERMINAL_PROCESSING:
        return True
    return bool(kernel32.SetConsoleMode(handle, mode.value | ENABLE_VIRTUAL_TERMINAL_PROCESSING))


def format_hits(hits: Sequence[Hit], color: bool = False,
                analysis: Callable[[str], Analysis] | None = None, filtered: bool = False) -> str:
    """Human-readable results: rank, score and citation (a hit that matched nothing of the
    query says so, and, when the search was ``filtered``, that it passed the filters),
    metadata, then the snippet with the lines it comes from, or a text cut to ``max_chars`` with
    the lines it cites (matched words highlighted when ``color``, as ``analysis`` of the hit's
    source cuts them; English's by default)."""
    if not hits:
        why = getattr(hits, "why_empty", None)  # Results say what left them empty
        return f"no results: {shown(why)}" if why else "no results"
    why_listed = "; listed as it passed the filters" if filtered else ""
    blocks = []
    for rank_number, hit in enumerate(hits, 1):
        lines = [f"{rank_number:>2}. {hit.similarity_score:.6f}  {shown(hit.citation)}"
                 + ("" if hit.matches_query else f"  (matched nothing of the query{why_listed})")]
        if hit.metadata:
            lines.append(metadata_line(hit.metadata))
        # A hit cut to --max-chars shows its cut text, the lines it cites; any other its snippet.
        body, first, last = ((hit.text, hit.line_number, hit.end_line) if hit.truncated
                             else (hit.snippet, hit.snippet_line, hit.snippet_end_line))
        if first is not None:
            lines.append(f"    {f'line {first}' if first == last else f'lines {first}-{last}'}:")
        body = shown(body)
        body = highlight(body, hit.matched_terms, analysis(hit.source) if analysis else None) if color else body
        if hit.truncated:  # every cited line, blank ones too: the printed lines match the cited ones one for one
            lines += [f"      {line}" if line.strip() else "" for line in text_lines(body)]
        else:
            lines += ["      " + line for line in text_lines(body) if line.strip()]
        if hit.duplicates:
            lines.append(f"    also in: {', '.join(hit.duplicates)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def metadata_line(metadata: dict[str, Any]) -> str:
    """A record's metadata on one indented line (``    date: 2024-03-04, from: Zoë``), cut to
    PREVIEW_WIDTH terminal columns, its control characters shown as pictures."""
    return "    " + _clip(shown(", ".join(f"{k}: {_shown_value(v)}" for k, v in metadata.items())))


def highlight(text: str, terms: Sequence[str], analysis: Analysis | None = None) -> str:
    """Bold the words of ``text`` whose term is one of ``terms``' (as the keyword index matched them;
    ``analysis`` cuts them, English's by default)."""
    from .hits import mark_matches
    from .tokens import ENGLISH

    return mark_matches(text, terms, lambda word: f"{BOLD}{word}{RESET}",
                        analysis=ENGLISH if analysis is None else analysis)


def _shown_value(value: Any) -> str:
    """A metadata value as a person reads it: a list header (``Tags``) as "quick, leftovers", a
    value of several lines (a recurring event's ``rrule``) on one."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    return " ".join(str(value).splitlines())


def _clip(text: str) -> str:
    # columns, not characters: a line of Chinese names is twice as wide as its length, and a
    # family emoji or an accent written apart is never cut in half
    return clip_columns(text, PREVIEW_WIDTH)


def left_out_line(shown: int, left_out: int, budget: int) -> str:
    """What stderr says of the hits a ``--max-total-chars`` budget left out: with none shown, that
    none fits and how to make them fit (stdout says only "no results")."""
    within = f"within {budget:,} character{'s' if budget != 1 else ''}"
    if not shown:
        lost = "the only hit left out: it does not fit" if left_out == 1 else f"all {left_out} hits left out: none fits"
        return f"vecbook: {lost} {within} (--max-total-chars; --max-chars N cuts each hit's text to N)"
    return f"vecbook: {left_out} more hit{'s' if left_out > 1 else ''} left out to keep the text {within} (--max-total-chars)"
