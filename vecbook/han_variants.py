"""Traditional Chinese characters as their simplified forms, and Japanese new forms (shinjitai)
as their traditional characters' simplified forms, one character for one, for keyword folding
(``tokens.fold``): OpenCC's TSCharacters and JPVariants tables (Apache-2.0), vendored as
``ts_characters.txt`` and ``jp_characters.txt`` beside this module (the second only where
folding is safe: its header says which) and read on the first word that holds an ideograph.

One character for one, not OpenCC's phrase tables: a text's offsets stay its own (snippets and
highlighting show it as written), and a query and a text fold alike whatever their words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .config import VecBookError

TS_CHARACTERS = Path(__file__).with_name("ts_characters.txt")
JP_CHARACTERS = Path(__file__).with_name("jp_characters.txt")
# The blocks the table's characters lie in (the unified ideographs, extension A and the astral
# extensions): a word without one of them never reads it. Compatibility ideographs (U+F900) are
# unified ones once NFKD has read them, before this is asked.
HAN_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0003134f]")


@lru_cache(maxsize=1)
def simplified() -> dict[int, str]:
    """The code point of each traditional character of ``TS_CHARACTERS`` -> its simplified form
    (a ``str.translate`` table of 4,137 pairs, read in a few milliseconds on first use);
    VecBookError naming the file and line where it cannot be read."""
    return {ord(traditional): simple for traditional, simple in _pairs(TS_CHARACTERS, "Chinese")}


@lru_cache(maxsize=1)
def japanese() -> dict[int, str]:
    """The code point of each Japanese new form of ``JP_CHARACTERS`` (図, 駅) -> what its
    traditional character folds to (圖 -> 图, 驛 -> 驿; itself where it has no simplified form):
    227 pairs, one character for one; VecBookError naming the file and line where it cannot be
    read."""
    table = simplified()
    return {ord(new_form): table.get(ord(traditional), traditional)
            for traditional, new_form in _pairs(JP_CHARACTERS, "Japanese")}


@lru_cache(maxsize=1)
def han_folds() -> dict[int, str]:
    """Each ideograph folding changes -> its fold: ``simplified`` and ``japanese`` in one table,
    chains followed so folding twice is folding once (TSCharacters has 戱 as 戯, the Japanese
    form of 戲: 戱 is 戏)."""
    forms = japanese()
    return {**{code: forms.get(ord(simple), simple) for code, simple in simplified().items()}, **forms}


def _pairs(path: Path, what: str) -> list[tuple[str, str]]:
    """The (first, second) character of each line of the table ``path`` (a tab between; ``#``
    opens a comment line)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise VecBookError(f"cannot read the {what} character table {path} ({exc}): reinstall vecbook") from None
    pairs = []
    for number, line in enumerate(lines, 1):
        if not line or line.startswith("#"):
            continue
        first, tab, second = line.partition("\t")
        if not tab or len(first) != 1 or len(second) != 1:
            raise VecBookError(f"{path}, line {number}: not one character, a tab and one "
                               f"character ({line!r}): reinstall vecbook")
        pairs.append((first, second))
    return pairs
