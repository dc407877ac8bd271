"""HTML as the text its reader sees: a mail's HTML part (or a calendar's HTML description)
turned into readable lines, without what a mail app would not show.

A newsletter's first words are often its preheader: the line an inbox shows as the preview,
hidden in the mail itself by inline styles (``display:none``, ``max-height:0; overflow:hidden``,
``opacity:0``, ``font-size:0``...) or by its ``<style>`` sheet's rules for a class or id
(``style_sheet``), and padded with invisible spacers. It is read only where the reader would see
it; a mail whose whole content hides until its CSS shows it (a rule this parser does not apply)
is read whole instead (``html_to_text``).

A reply's quoted history is written as a plain-text reply writes it, each line after ``>``
(``>>`` a level deeper), so ``mail_quotes.new_part`` leaves it out of what is indexed as it does
a plain reply's: the quote elements mail apps mark as such (``QUOTE_CLASSES``), and all that
follows the marker Outlook puts above its history (``HISTORY_IDS``, ``HISTORY_RULE``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from html.parser import HTMLParser

from .style_sheet import Rules, element_style, sheet_rules

BLANK_LINES = re.compile(r"\n{3,}")
# Elements that hold no text and have no end tag: a hiding style on them hides nothing.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                  "wbr"})
# Inline styles that hide an element and all it holds, whatever its children say (display and
# opacity cover the subtree; a zero height with its overflow hidden clips it). mso-hide:all alone
# is not among them: it hides only from Outlook on Windows, every other app shows the text.
HIDES_SUBTREE = (re.compile(r"(?:^|;)\s*display\s*:\s*none\b"),
                 re.compile(r"(?:^|;)\s*opacity\s*:\s*(?:0+\.?0*|\.0+)\s*(?:!|;|$)"))
ZERO_HEIGHT = re.compile(r"(?:^|;)\s*(?:max-)?height\s*:\s*0(?:\.0*)?(?:px|pt|em|rem|%)?\s*(?:!|;|$)")
OVERFLOW_HIDDEN = re.compile(r"(?:^|;)\s*overflow(?:-y)?\s*:\s*hidden\b")
# Inherited ones a child can undo: visibility:hidden (a child's visibility:visible shows it) and
# font-size:0 (fluid templates set it on a layout cell to close gaps and reset it in its columns).
VISIBILITY = re.compile(r"(?:^|;)\s*visibility\s*:\s*(hidden|collapse|visible)\b")
FONT_SIZE = re.compile(r"(?:^|;)\s*font-size\s*:\s*([0-9.]+)")
# (one never closed ends at the end, as CSS reads it: each opening searched to the end was quadratic)
CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
# The elements that hold a quoted mail: <blockquote type="cite"> (Apple Mail, Thunderbird, Proton),
# Gmail's and Proton's blockquote (not the div around it: in a forward it holds the forwarded mail
# under its "Forwarded message" line), Yahoo's div.yahoo_quoted (its class prefixed,
# "ydp1a2yahoo_quoted"), Outlook for Mac's reference container. Not every blockquote: Gmail's
# "indent" writes a bare one.
QUOTE_BLOCK_CLASSES = re.compile(r"(?:^|\s)(?:gmail_quote|protonmail_quote)(?:\s|$)")
QUOTE_CLASSES = re.compile(r"(?:^|\s)\w*yahoo_quoted(?:\s|$)")
QUOTE_IDS = frozenset({"mail-editor-reference-message-container"})
# Outlook on the web's marker around a reply's or forward's header, whose history runs to the end of
# the mail (its From/Sent/To/Subject lines are in the user's language, not all of which mime.py knows).
# Not the empty "appendonsend" div before it: templates copied from Outlook carry it above new text.
HISTORY_IDS = frozenset({"divrplyfwdmsg"})
# Outlook for Windows' (and Windows Mail's) line above the history's header: a div with only a thin
# grey top border, "border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0in 0in 0in"
# (#B5C4DF before Outlook 2013), a shape the writer's own text does not take.
HISTORY_RULE = re.compile(r"^\s*border\s*:\s*none\s*;\s*border-top\s*:\s*solid\s+#(?:e1e1e1|b5c4df)\s+1\.0pt\s*;"
                          r"\s*padding\s*:\s*3\.0pt\s+0")
NOT_LETTERS = re.compile(r"[\W_]+")
# How many open elements an end tag searches for its start tag (real mail nests some 30 deep).
CLOSE_REACH = 128
# A quoted line's depth rides in the text until lines are made (NUL is no text HTML can carry)
DEPTH_MARK = re.compile("\x00(\\d+)\x00")
# A block's edge where it is laid out as a line, not a paragraph: where two meet, or one meets a line break,
# they are one line break (``soft_breaks``).
SOFT = "\x02"
_SOFT_RUN = re.compile("[ \x02]*\x02[ \x02]*")
# A mail's <div> is a line, as a browser lays one out (it has no margin), unless it has a box of its own: a
# margin, padding or border in its style, or a class other than a mail app's own, which a template's style
# sheet may space (Gmail's gmail_default, Outlook on the web's elementToProof, Apple Mail's empty one).
BOXED = re.compile(r"(?:^|;)\s*(?:margin|padding|border)(?:-[a-z]+)?\s*:\s*(?!0(?:px|pt|em)?\s*(?:!|;|$))", re.I)
LINE_CLASSES = re.compile(r"^(?:\s*(?:gmail_default|gmail_signature|elementtoproof)\s*)*$", re.I)


class _HtmlText(HTMLParser):
    """HTML as readable text: paragraphs apart, lines and list items on lines of their own,
    scripts and styles dropped, and (``drop_hidden``) what inline styles hide."""

    PARAGRAPHS = frozenset({"p", "div", "table", "ul", "ol", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5",
                            "h6", "section", "article", "header", "footer", "dl"})
    LINES = frozenset({"br", "tr", "hr", "dt", "dd"})
    HIDDEN = frozenset({"script", "style", "head", "title"})

    def __init__(self, drop_hidden: bool = True, div_lines: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.div_lines = div_lines  # a mail's <div>s as lines, where they have no box (``_line_div``)
        self.line_divs: list[bool] = []  # for each open <div>: whether it is a line
        self.parts: list[str] = []
        self.hidden = 0
        self.drop_hidden = drop_hidden
        # the open elements, each with what it leaves its content: (tag, hidden, visible, zero font, quote depth)
        self.open: list[tuple[str, bool, bool, bool, int]] = []
        self.history = False  # past Outlook's history marker: quoted to the end
        self.shown_chars = self.hidden_chars = 0
        # the <style> sheets read so far (a template's are in its <head>, before what they hide)
        self.rules: Rules = {}
        self.shown: set[tuple[tuple[str, str], str]] = set()
        self.in_style = False
        self.pre = 0  # inside how many <pre>: their line breaks are lines, as a browser shows them

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self._push(tag, attrs)
        if tag == "pre":
            self.pre += 1
        if tag in self.HIDDEN:
            self.hidden += 1
            self.in_style = tag == "style"
        elif tag == "div" and self.div_lines:
            self.line_divs.append(_line_div(attrs))
            self.parts.append(SOFT if self.line_divs[-1] else "\n\n")
        elif tag in self.PARAGRAPHS:
            self.parts.append("\n\n")
        elif tag in self.LINES:
            self.parts.append("\n")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "td":
            self.parts.append(" ")
        elif tag == "img" and (emoji := _emoji(attrs)):
            self.handle_data(emoji)

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
            self.in_style = False
        elif tag == "div" and self.div_lines:
            self.parts.append(SOFT if not self.line_divs or self.line_divs.pop() else "\n\n")
        elif tag in self.PARAGRAPHS:
            self.parts.append("\n\n")
        # close it and whatever was left open inside it; a stray end tag under thousands of unclosed
        # <p>s would search them all, each time: quadratic, so only the innermost few are searched
        for at in range(len(self.open) - 1, max(-1, len(self.open) - 1 - CLOSE_REACH), -1):
            if self.open[at][0] == tag:
                del self.open[at:]
                break

    def handle_data(self, data: str) -> None:
        if self.in_style:
            sheet_rules(data, self.rules, self.shown)
        if self.hidden:
            return
        words = " ".join(data.split())  # runs of whitespace are one space, as a browser shows them
        # letters and digits are counted, not a preheader's hundreds of invisible spacers (&zwnj;, U+034F)
        if self._unseen():
            self.hidden_chars += _letters(words)
            if self.drop_hidden:
                return
        else:
            self.shown_chars += _letters(words)
        before, after = " " if data[:1].isspace() else "", " " if data[-1:].isspace() and words else ""
        depth = max(self.open[-1][4] if self.open else 0, int(self.history))
        mark = f"\x00{depth}\x00" if depth and words else ""
        if self.pre and "\n" in data:  # each line of it a line, quoted as deep as the others
            self.parts.append("\n".join(_pre_line(line, mark) for line in data.split("\n")))
            return
        self.parts.append(before + mark + words.replace("\x00", "") + after)

    def _push(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Open an element with what its inline style makes of its content's visibility."""
        hidden, visible, zero_font, depth = self.open[-1][1:] if self.open else (False, True, False, 0)
        values = {name: value or "" for name, value in attrs}
        element_id = values.get("id", "").lower()
        if _quotes(tag, values) or element_id in QUOTE_IDS:
            depth += 1
        style = values.get("style", "")
        self.history = self.history or element_id in HISTORY_IDS or bool(style and HISTORY_RULE.search(style.lower()))
        if self.rules:
            style = element_style(values, self.rules, self.shown)
        if style:
            hides, sets_visible, sets_zero_font = _style_effects(style)
            hidden = hidden or hides
            visible = visible if sets_visible is None else sets_visible
            zero_font = zero_font if sets_zero_font is None else sets_zero_font
        self.open.append((tag, hidden, visible, zero_font, depth))

    def _unseen(self) -> bool:
        """Text here is not shown: a hiding element holds it, or it is invisible or zero-sized."""
        return bool(self.open) and (self.open[-1][1] or not self.open[-1][2] or self.open[-1][3])


def _line_div(attrs: list[tuple[str, str | None]]) -> bool:
    """A <div> laid out as a line: no margin, padding or border of its own, no class a style sheet may space."""
    values = {name: value or "" for name, value in attrs}
    return not BOXED.search(values.get("style", "")) and bool(LINE_CLASSES.match(values.get("class", "")))


def soft_breaks(text: str) -> str:
    """Each run of block edges laid out as lines (``SOFT``) one line break, or none where a line has just begun."""
    return _SOFT_RUN.sub(_soft_break, text) if SOFT in text else text


def _soft_break(match: re.Match[str]) -> str:
    """A run of block edges: one line break, or none where a line has just begun (a ``<br>`` before
    it, or the start). One before a ``<br>`` breaks still: ``<div><br></div>`` is a blank line."""
    at_start = match.start() == 0 or match.string[match.start() - 1] == "\n"
    return "" if at_start else "\n"


def _pre_line(line: str, mark: str) -> str:
    """One line of a <pre> block's text, its runs of whitespace one space, and a space kept at either
    end: the link or bold word beside it (``see <a>url</a> for``) is another piece of text."""
    words = " ".join(line.split()).replace("\x00", "")
    if not words:
        return ""
    return (" " if line[:1].isspace() else "") + mark + words + (" " if line[-1:].isspace() else "")


def _emoji(attrs: list[tuple[str, str | None]]) -> str:
    """The emoji an image shows ('' for any other image): Gmail sends one as an image with the emoji
    as its alt (and data-emoji); a logo's or a spacer's alt is no text of the mail."""
    values = {name: value or "" for name, value in attrs}
    alt = values.get("data-emoji") or values.get("alt", "")
    if len(alt) > 16 or any(char.isalnum() for char in alt):
        return ""
    return alt if any(unicodedata.category(char) == "So" for char in alt) else ""


@lru_cache(maxsize=4096)
def _style_effects(style: str) -> tuple[bool, bool | None, bool | None]:
    """What a style does to its element's content: hides it all, makes it visible or invisible
    (None: says nothing), gives it a zero font size or a real one (None: says nothing). Cached:
    a template repeats the same few styles on thousands of elements."""
    style = CSS_COMMENT.sub("", style).lower()
    hides = any(rule.search(style) for rule in HIDES_SUBTREE) or \
        bool(ZERO_HEIGHT.search(style) and OVERFLOW_HIDDEN.search(style))
    visibility, font_size = VISIBILITY.search(style), FONT_SIZE.search(style)
    return (hides, visibility.group(1) == "visible" if visibility else None,
            _is_zero(font_size.group(1)) if font_size else None)


def _quotes(tag: str, values: dict[str, str]) -> bool:
    """The element holds a quoted mail (``QUOTE_BLOCK_CLASSES``, ``QUOTE_CLASSES``)."""
    classes = values.get("class", "")
    if tag == "blockquote" and (values.get("type", "").lower() == "cite" or QUOTE_BLOCK_CLASSES.search(classes)):
        return True
    return bool(QUOTE_CLASSES.search(classes))


def _letters(words: str) -> int:
    """How many letters and digits (a regex's count: a generator over each character doubled the parse)."""
    return len(NOT_LETTERS.sub("", words))


def _is_zero(number: str) -> bool:
    try:
        return float(number) == 0
    except ValueError:
        return False


def html_to_text(html: str, div_lines: bool = False) -> str:
    """Readable text from an HTML body (the standard library's parser; no markup kept), without
    what its inline styles hide, unless that is most of it (``_HtmlText``); a mail's (``div_lines``)
    ``<div>`` a line where it has no box of its own, as Gmail and Apple Mail write a line."""
    parser = _parsed(html, drop_hidden=True, div_lines=div_lines)
    if parser is None:
        return re.sub(r"<[^>]*>", " ", html)
    if parser.hidden_chars > parser.shown_chars:  # hidden until a <style> rule shows it: not a preheader
        parser = _parsed(html, drop_hidden=False, div_lines=div_lines) or parser
    lines = [_line(line) for line in soft_breaks("".join(parser.parts)).split("\n")]
    return BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _line(line: str) -> str:
    """A line of text, whitespace collapsed, after ``>`` once a quote level where it is quoted."""
    depths = [int(depth) for depth in DEPTH_MARK.findall(line)] if "\x00" in line else []
    text = " ".join(DEPTH_MARK.sub("", line).split())
    return ">" * max(depths) + " " + text if depths and text else text


def _parsed(html: str, drop_hidden: bool, div_lines: bool = False,
            kind: type[_HtmlText] = _HtmlText) -> _HtmlText | None:
    """``html`` fed to a parser of ``kind``; None where it fails on the markup."""
    parser = kind(drop_hidden, div_lines)
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # noqa: BLE001 - html.parser is lenient; never lose a message or a note to markup
        return None
    return parser
