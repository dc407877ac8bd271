"""JSON with positions: walk a JSON text to the arrays that hold messages and get each
element's value together with the lines it occupies, so a citation can point at them.

Every value is decoded by the standard library's C scanner (``raw_decode``); only the
path down to the arrays is walked here, so a 100 MB export costs about one ``json.loads``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, Sequence

_WHITESPACE = frozenset(" \t\n\r")
_SPACE = re.compile(r"[ \t\n\r]*")
# A UTF-16 surrogate written as a JSON escape ("\ud83d"): a pair decodes to its character, one
# alone (a message cut inside an emoji) to a lone surrogate, which no UTF-8 output can write.
# Only a lone one is looked for: DiscordChatExporter (.NET) and Python's json write every emoji
# as a pair of escapes ("\uD83D\uDC46"), and walking each value of those exports for nothing
# made reading them 2.5x slower. A pair is a high escape and a low one next to it: an escape in
# none is lone (counted, not searched with a look-behind, which would try every offset).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_PAIR = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# Said of a file whose text ends inside its JSON: what happened, and what to do.
CUT_SHORT = ": the file ends there, cut short (a download, copy or export that did not finish: get it again)"


# How much of the text from a fault on its message quotes: enough to find the spot in a one-line
# export (ChatGPT's conversations.json is one line of megabytes), where a column alone is a number
# in the hundreds of thousands; it starts at the fault, so the spot is its first character.
QUOTED = 24


class JsonTextError(ValueError):
    """The text is not the JSON shape the reader expected; carries the line at fault."""

    def __init__(self, message: str, line: int, cut_short: bool = False, column: int | None = None,
                 at: str = "") -> None:
        where = f"line {line}" + (f", column {column}" if column else "") + (f", at {at!r}" if at else "")
        super().__init__(f"{message} ({where})" + (CUT_SHORT if cut_short else ""))
        self.line = line


class JsonText:
    """A JSON document kept as text, navigated by position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._decoder = json.JSONDecoder()
        # Looked for once, in C: most exports hold no lone surrogate escape, and their values
        # are then used as decoded, with no walk over them.
        self._surrogates = _SURROGATE_ESCAPE.search(text) is not None and \
            len(_SURROGATE_ESCAPE.findall(text)) != 2 * len(_SURROGATE_PAIR.findall(text))
        self._cursor = (0, 1)  # (offset, line at offset): lines are counted forward from here

    def line_at(self, offset: int) -> int:
        """1-based line of the character at ``offset``."""
        at, line = self._cursor
        if offset >= at:
            line += self.text.count("\n", at, offset)
        else:
            line -= self.text.count("\n", offset, at)
        self._cursor = (offset, line)
        return line

    def fault(self, message: str, offset: int, cut_short: bool = False) -> JsonTextError:
        """The error for a fault at ``offset``: its line, its column and the text around it."""
        offset = min(offset, len(self.text))
        column = offset - self.text.rfind("\n", 0, offset)
        at = "" if cut_short else " ".join(self.text[offset:offset + QUOTED].split())
        return JsonTextError(message, self.line_at(offset), cut_short, column, at)

    def lines(self, start: int, end: int) -> tuple[int, int]:
        """First and last line of the value spanning ``text[start:end]``."""
        return self.line_at(start), self.line_at(max(start, end - 1))

    def skip_ws(self, index: int) -> int:
        """The offset of the next non-whitespace character."""
        if self.text[index:index + 1] not in _WHITESPACE:  # compact JSON: nothing to skip
            return index
        # a regex, not a loop over characters: pretty-printed exports indent every key
        return _SPACE.match(self.text, index).end()  # type: ignore[union-attr]  # always matches

    def decode(self, index: int) -> tuple[Any, int]:
        """The value starting at (or after whitespace from) ``index``, and the offset after it."""
        index = self.skip_ws(index)
        try:
            value, end = self._decoder.raw_decode(self.text, index)
        except json.JSONDecodeError as exc:
            # the text ends inside the value: a string never closed, or nothing after the break
            ends = exc.msg.startswith("Unterminated string") or not self.text[exc.pos:].strip()
            raise self.fault(f"invalid JSON: {exc.msg}", exc.pos, cut_short=ends) from None
        return (_without_lone_surrogates(value) if self._surrogates else value), end

    def elements(self, index: int) -> Iterator[tuple[int, int, Any]]:
        """(start, end, value) of each element of the array starting at ``index``."""
        index = self._expect(index, "[")
        index = self.skip_ws(index)
        if self.text.startswith("]", index):
            return
        while True:
            start = self.skip_ws(index)
            value, end = self.decode(start)
            yield start, end, value
            index = self.skip_ws(end)
            if self.text.startswith("]", index):
                return
            index = self._expect(index, ",")

    def member(self, index: int, key: str) -> int | None:
        """Offset of the value of ``key`` in the object starting at ``index`` (None: absent)."""
        index = self._expect(index, "{")
        index = self.skip_ws(index)
        if self.text.startswith("}", index):
            return None
        while True:
            name, index = self.decode(index)
            if not isinstance(name, str):
                raise self.fault("an object key must be a string", index)
            index = self.skip_ws(self._expect(index, ":"))
            if name == key:
                return index
            _, index = self.decode(index)
            index = self.skip_ws(index)
            if self.text.startswith("}", index):
                return None
            index = self._expect(index, ",")

    def path(self, keys: Sequence[str], index: int = 0) -> int | None:
        """Offset of the value at ``keys`` (object keys, outermost first), or None."""
        for key in keys:
            index = self.skip_ws(index)
            if not self.text.startswith("{", index):
                return None
            found = self.member(index, key)
            if found is None:
                return None
            index = found
        return self.skip_ws(index)

    def _expect(self, index: int, char: str) -> int:
        index = self.skip_ws(index)
        if not self.text.startswith(char, index):
            found = self.text[index:index + 1] or "end of file"
            raise self.fault(f"expected '{char}', found {found!r}", index, cut_short=index >= len(self.text))
        return index + 1


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings (keys too) made U+FFFD, as a text file's
    invalid UTF-8 bytes read: one character for one, so offsets and lengths stay."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(key): _without_lone_surrogates(item) for key, item in value.items()}
    return value
