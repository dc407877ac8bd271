"""An HTML note's text as a browser lays it out, each line knowing the file line it comes from.

Apple Notes writes a note's body one ``<div>`` a line (``<div><br></div>`` its blank line). A
browser shows a ``<div>`` as a line of its own, not as a paragraph (a ``<div>`` has no margin):
the ends of blocks that meet make one line break, not a blank line. ``html_text`` makes every
block a paragraph (a mail's ``<div>`` a line where it has no box: ``div_lines``); here every div is a line. Each line of text also notes the file
line its first words come from, so that a hit cites the very lines it shows (``html_note_lines``).
"""

from __future__ import annotations

import re

from .html_text import SOFT, _HtmlText, _line, _parsed, soft_breaks

# The file line a piece of text comes from rides in the text until lines are made.
LINE_MARK = re.compile("\x01(\\d+)\x01")


class _NoteText(_HtmlText):
    """``_HtmlText`` with a ``<div>`` a line and each piece of text marked with its file line."""

    PARAGRAPHS = _HtmlText.PARAGRAPHS - {"div"}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        super().handle_starttag(tag, attrs)
        if tag == "div":
            self.parts.append(SOFT)

    def handle_endtag(self, tag: str) -> None:
        super().handle_endtag(tag)
        if tag == "div":
            self.parts.append(SOFT)

    def handle_data(self, data: str) -> None:
        before = len(self.parts)
        super().handle_data(data)
        if len(self.parts) > before and self.parts[-1].strip():
            # (the parser's position is the data's start: its words begin after its leading line ends)
            line = self.getpos()[0] + data[:len(data) - len(data.lstrip())].count("\n")
            self.parts.insert(before, f"\x01{line}\x01")


def html_note_lines(html: str) -> list[tuple[str, int | None]]:
    """The note's text, line by line, each with the file line (1-based) its first words come from
    (None for a blank line, or a line of a ``<pre>`` after its first); blank lines at either end
    dropped, runs of them one."""
    parser = _parsed(html, drop_hidden=True, kind=_NoteText)
    if parser is None:
        return [(line, None) for line in re.sub(r"<[^>]*>", " ", html).strip().split("\n")]
    if parser.hidden_chars > parser.shown_chars:  # hidden until a <style> rule shows it: read it all
        parser = _parsed(html, drop_hidden=False, kind=_NoteText) or parser
    joined = soft_breaks("".join(parser.parts))
    lines: list[tuple[str, int | None]] = []
    for raw in joined.split("\n"):
        mark = LINE_MARK.search(raw)
        lines.append((_line(LINE_MARK.sub("", raw)), int(mark.group(1)) if mark else None))
    return _collapsed(lines)


def _collapsed(lines: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    """Runs of blank lines one, and none at either end (as ``html_to_text`` makes them)."""
    out: list[tuple[str, int | None]] = []
    for text, at in lines:
        if text or (out and out[-1][0]):
            out.append((text, at if text else None))
    while out and not out[-1][0]:
        out.pop()
    return out
