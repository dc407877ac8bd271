#!/usr/bin/env python3
"""Multilingual keyword search: one record per language (issue 28's table, then more scripts),
and queries that must find their record at rank 1 in keyword and hybrid modes.

    python bench/multilingual.py [--modes keyword hybrid]

The records go into a temporary folder of ``.txt`` files read by VecBook's own loader, with
the default settings (``language = "english"``: folding and bigrams apply in every language).
Prints one row per query with the rank of its record in each mode (``-``: not found) and exits
1 when any is not first. ``tests/test_languages.py`` runs the same table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vecbook  # noqa: E402  (needs the repository root on sys.path)

# One record per language: the first six are issue 28's table.
RECORDS = {
    "zh": "今天我们去北京看长城，天气很好。",
    "ja": "東京で寿司を食べました。",
    "ko": "오늘 서울에서 친구를 만났어요.",
    "de": "Wir trafen uns im Café am Bahnhof.",
    "es": "La reunión fue en la ciudad de México.",
    "ru": "Привет, встретимся завтра в кафе.",
    "mixed": "我的iPhone坏了，明天去修。",
    "ar": "سنلتقي في المكتبة العامة يوم الخميس.",
    "he": "נפגשנו בספרייה העירונית ביום שלישי.",
    "th": "พรุ่งนี้เราจะไปตลาดน้ำด้วยกัน",
    "hi": "कल हम दिल्ली में संग्रहालय देखने गए।",
    "el": "Συναντηθήκαμε στο λιμάνι του Πειραιά.",
    "tr": "İstanbul'da kırmızı bir bisiklet aldım.",
    "de2": "Die Wohnung liegt an der Hauptstraße neben Herrn Müller.",
    "fr": "Nous partirons à la mer pour l'été prochain.",
    "en": "The boiler service is due in March; call the plumber.",
    "ja-width": "ｶﾞｿﾘﾝ代は１２０００円、ＥＴＣカードで払いました。",
}
# (query, the record it must find first, what it checks)
QUERIES = [
    ("长城", "zh", "Chinese word inside a clause"), ("北京", "zh", "Chinese word inside a clause"),
    ("寿司", "ja", "Japanese kanji between kana"), ("서울", "ko", "Korean noun with its particle"),
    ("cafe", "de", "accent folded"), ("reunion", "es", "accent folded"), ("кафе", "ru", "Cyrillic"),
    ("встретимся", "ru", "Cyrillic"), ("iPhone", "mixed", "Latin word inside Chinese"),
    ("坏了", "mixed", "Chinese after a Latin word"), ("المكتبة", "ar", "Arabic (right to left)"),
    ("בספרייה", "he", "Hebrew (right to left)"), ("ตลาดน้ำ", "th", "Thai: no spaces, tone marks"),
    ("दिल्ली", "hi", "Devanagari vowel signs kept in the word"), ("संग्रहालय", "hi", "Devanagari virama"),
    ("λιμανι", "el", "Greek without its tonos"), ("Πειραιά", "el", "Greek upper case"),
    ("istanbul", "tr", "Turkish dotted İ"), ("KIRMIZI", "tr", "Turkish dotless ı, upper case"),
    ("kirmizi", "tr", "Turkish ı typed as i"), ("Hauptstrasse", "de2", "German ß typed as ss"),
    ("Muller", "de2", "German ü typed as u"), ("ete", "fr", "French elision l'été, unaccented"),
    ("été", "fr", "French elision l'été"), ("plumbers", "en", "English stemming"),
    ("ガソリン", "ja-width", "half-width katakana (and its voicing mark) typed full-width"),
    ("ETC", "ja-width", "full-width Latin typed in ASCII"), ("12000", "ja-width", "full-width digits"),
]


def ranks(book: vecbook.VecBook, mode: str) -> list[int | None]:
    """The rank of each query's record in ``mode`` (None: not among the results)."""
    found = []
    for query, expected, _ in QUERIES:
        files = [hit.file_path for hit in book.search(query, mode=mode, max_results=10)]
        found.append(files.index(f"{expected}.txt") + 1 if f"{expected}.txt" in files else None)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["keyword", "hybrid"], choices=vecbook.config.MODES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for name, text in RECORDS.items():
            (Path(folder) / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
        book = vecbook.VecBook(data_directory=folder, cache_directory=False,
                               keyword_only=args.modes == ["keyword"])
        table = {mode: ranks(book, mode) for mode in args.modes}
    print(f"| query | record | checks | {' | '.join(args.modes)} |")
    print(f"|---|---|---|{'---:|' * len(args.modes)}")
    for row, (query, expected, checks) in enumerate(QUERIES):
        shown = " | ".join("-" if table[m][row] is None else str(table[m][row]) for m in args.modes)
        print(f"| `{query}` | {RECORDS[expected]} | {checks} | {shown} |")
    first = sum(rank == 1 for mode in args.modes for rank in table[mode])
    print(f"\n{first} of {len(QUERIES) * len(args.modes)} at rank 1")
    return 0 if first == len(QUERIES) * len(args.modes) else 1


if __name__ == "__main__":
    sys.exit(main())
