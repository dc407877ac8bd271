"""Traditional Chinese characters as their simplified forms, one character for one, for keyword
folding (``tokens.fold``): OpenCC's TSCharacters table (Apache-2.0), vendored as
``ts_characters.txt`` beside this module and read on the first word that holds an ideograph.

One character for one, not OpenCC's phrase tables: a text's offsets stay its own (snippets and
highlighting show it as written), and a query and a text fold alike whatever their words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .config import VecBookError

TS_CHARACTERS = Path(__file__).with_name("ts_characters.txt")
# The blocks the table's characters lie in (the unified ideographs, extension A and the astral
# extensions): a word without one of them never reads it. Compatibility ideographs (U+F900) are
# unified ones once NFKD has read them, before this is asked.
HAN_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0003134f]")


@lru_cache(maxsize=1)
def simplified() -> dict[int, str]:
    """The code point of each traditional character of ``TS_CHARACTERS`` -> its simplified form
    (a ``str.translate`` table of 4,137 pairs, read in a few milliseconds on first use);
    VecBookError naming the file and line where it cannot be read."""
    try:
        lines = TS_CHARACTERS.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise VecBookError(f"cannot read the Chinese character table {TS_CHARACTERS} ({exc}): "
                           "reinstall vecbook") from None
    table: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        if not line or line.startswith("#"):
            continue
        traditional, tab, simple = line.partition("\t")
        if not tab or len(traditional) != 1 or len(simple) != 1:
            raise VecBookError(f"{TS_CHARACTERS}, line {number}: not one character, a tab and one "
                               f"character ({line!r}): reinstall vecbook")
        table[ord(traditional)] = simple
    return table
