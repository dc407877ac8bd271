"""Search in every language: keyword search with CJK and Thai runs as character bigrams, accents
folded, Snowball stemmers and stop words by ``language`` (global and per collection), snippets
and highlighting of what was matched, as written; bad input indexed without errors or giant
terms. Meaning: the packaged model reads English only, so a query in another language leans on
keywords in hybrid search; a local multilingual model folder works end to end."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import vecbook
from bench.multilingual import QUERIES as MULTILINGUAL_QUERIES
from bench.multilingual import NOTES, QUESTIONS, RECORDS, UNLISTED_QUESTIONS, write_notes, write_unlisted
from vecbook.config import EMBEDDING_LANGUAGES, ConfigError, ModelNotFoundError, config_without_file, load_config
from vecbook.languages import SCRIPTS, model_languages, reads_query
from vecbook.tokens import MAX_TERM_CHARS, Analysis, Vocabulary, analyses, analysis_of, fold, tokenize

# One record per language and queries that must find it first: issue 28's table, then more
# scripts and the cases folding and bigrams exist for (bench/multilingual.py prints the table).
QUERIES = [(query, expected) for query, expected, _ in MULTILINGUAL_QUERIES]


def write_records(root: Path) -> Path:
    for name, text in RECORDS.items():
        (root / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def languages_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_records(tmp_path_factory.mktemp("languages"))


@pytest.fixture(scope="module")
def languages_book(languages_folder: Path, embedder: vecbook.Embedder) -> vecbook.VecBook:
    return vecbook.VecBook(data_directory=languages_folder, embedder=embedder)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize("query, expected", QUERIES)
def test_each_language_is_found_at_rank_1(languages_book: vecbook.VecBook, mode: str, query: str,
                                          expected: str) -> None:
    hits = languages_book.search(query, mode=mode, max_results=3)
    assert hits and hits[0].file_path == f"{expected}.txt", [h.file_path for h in hits]
    if mode == "keyword":
        assert len(hits) == 1  # matched by its own words only, not by a bigram it shares by chance


@pytest.mark.parametrize("text, terms", [
    ("今天我们去北京看长城", ["今天", "天我", "我们", "们去", "去北", "北京", "京看", "看长", "长城"]),
    ("東京で寿司", ["东京", "京で", "で寿", "寿司"]),  # kanji and kana bigram across the change of script (東 folds to 东)
    ("서울에서 친구", ["서울", "울에", "에서", "친구"]),
    ("我的iPhone坏了", ["我的", "iphon", "坏了"]),  # the Latin word in between is a word, stemmed
    ("猫", ["猫"]),  # a lone character is a unigram
    ("สวัสดี", ["สวั", "วัส", "สดี"]),  # a mark stays with its letter
])
def test_runs_without_spaces_are_cut_into_overlapping_bigrams(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


@pytest.mark.parametrize("text, terms", [
    ("pizza🍕tonight", ["pizza", "🍕", "tonight"]),  # an emoji is a word, and parts the words beside it
    ("🎉🎉 我的🍕", ["🎉", "🎉", "我的", "🍕"]),  # each one a word: repeated, and between bigrams
    ("👍🏽 👍🏿", ["👍", "👍"]),  # without its skin tone
    ("❤️ 1️⃣", ["❤", "1"]),  # without its variation selector, a keycap's digit
    ("🇩🇪🇫🇷 🇮", ["🇩🇪", "🇫🇷", "🇮"]),  # regional indicators pair into flags
    ("👨‍👩‍👧", ["👨", "👩", "👧"]),  # the zero-width joiner parts a sequence
    ("⌘K ⏰ ✈ ⭐ ✓ ➡", ["⌘", "k", "⏰", "✈", "⭐", "✓", "➡"]),
    ("x → y ■ z ─── w", ["x", "y", "z", "w"]),  # arrows, bullets and rules are no words
    ("©️ ▶️ ↔️ #️⃣ ©", ["©", "▶", "↔", "#"]),  # unless a sign comes with the emoji variation selector
    ("💪🏿💪", ["💪", "💪"]),
])
def test_each_emoji_is_a_word_of_its_own(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


@pytest.mark.parametrize("written, typed", [
    ("Café", "cafe"), ("reunión", "reunion"), ("Müller", "muller"), ("Straße", "strasse"), ("naïve", "naive"),
    ("İstanbul", "istanbul"), ("ıstanbul", "ISTANBUL"), ("Ærø", "aero"), ("Łódź", "lodz"), ("ÉTÉ", "ete"),
    ("cafe\u0301", "café"),  # a decomposed accent (e + combining acute) folds like the composed one
    ("καφές", "καφεσ"), ("ёлка", "елка"), ("שָׁלוֹם", "שלום"), ("الْمَكْتَبَة", "المكتبة"),
])
def test_accents_fold_for_matching(written: str, typed: str) -> None:
    assert tokenize(written) == tokenize(typed)


@pytest.mark.parametrize("written, typed", [
    ("the ﬁnal ﬂight", "the final flight"), ("Schiﬀ", "schiff"),  # ligatures, as text copied from a PDF holds them
    ("ﺍﻟﻤﻜﺘﺒﺔ", "المكتبة"), ("ﻻ", "لا"),  # Arabic presentation forms, as PDFs of Arabic text hold them
    ("80 m²", "80 m2"), ("5 µg", "5 μg"), ("Kapitel Ⅻ", "kapitel xii"),  # superscripts, micro sign, numerals
])
def test_compatibility_forms_fold_to_the_letters_they_stand_for(written: str, typed: str) -> None:
    """Compatibility characters are their letters (NFKC, as ICU's folding in Lucene has them): a
    word copied out of a PDF is found as it is typed."""
    assert tokenize(written) == tokenize(typed)


@pytest.mark.parametrize("written, typed", [
    ("مستشفى", "مستشفي"),  # alef maksura for a final yeh, as Egyptian chats write it
    ("مدرسة", "مدرسه"),  # teh marbuta typed as heh
    ("کتاب", "كتاب"), ("ایران", "ايران"),  # Persian keheh and yeh, typed on an Arabic keyboard
    ("خانۀ ما", "خانه ما"), ("خانۀ", "خانهٔ"),  # Persian heh with yeh above (ezafe), and heh + hamza
    ("ہم پاکستان", "هم پاكستان"),  # Urdu heh goal, typed on an Arabic or Persian keyboard
])
def test_arabic_and_persian_letter_forms_fold_as_lucenes_normalizers_do(written: str, typed: str) -> None:
    assert tokenize(written) == tokenize(typed)


@pytest.mark.parametrize("written, typed", [
    ("बाज़ार", "बाजार"), ("ज़िंदगी", "जिंदगी"), ("लड़का", "लडका"),  # the nukta, often left untyped
    ("\u0915\u093c\u0932", "\u0958\u0932"),  # क़ typed as क + nukta or as the one letter
    ("हाँ", "हां"), ("सब्ज़ियाँ", "सब्जियां"),  # chandrabindu typed as anusvara
    ("हिन्दी", "हिंदी"), ("अन्त", "अंत"),  # a dead n (न्) written as anusvara
])
def test_devanagari_spellings_fold_as_lucenes_hindi_normalizer_does(written: str, typed: str) -> None:
    """Hindi is written both ways: the nukta of Urdu and English sounds (ज़, फ़, ड़) is often
    left out, chandrabindu and anusvara stand for one another, and न् before a consonant is also
    written as anusvara; Lucene's Hindi normalizer folds each, and so does every language here."""
    assert tokenize(written) == tokenize(typed)


@pytest.mark.parametrize("written, typed", [
    ("الساعة ١٠:٣٠", "الساعة 10:30"),  # Arabic-Indic digits, as Arabic phones type them
    ("ساعت ۱۰ شب", "ساعت 10 شب"), ("ساعت ۱۰", "ساعت ١٠"),  # Persian digits, and the Arabic ones for them
    ("१० बजे", "10 बजे"), ("๑๐ โมง", "10 โมง"), ("১২ টা", "12 টা"),  # Devanagari, Thai, Bengali
    # beyond the Basic Multilingual Plane: Adlam (Fula phones), Hanifi Rohingya, and the bold digits
    # of "fancy text" posts
    ("𞤤𞤢𞤦𞤭 𞥑𞥐", "𞤤𞤢𞤦𞤭 10"), ("𐴱𐴰", "10"), ("𝟏𝟎 𝐭𝐢𝐩𝐬", "10 𝐭𝐢𝐩𝐬"),
])
def test_digits_of_every_script_fold_to_ascii(written: str, typed: str) -> None:
    """A number typed on another keyboard is the same number, as Lucene's decimal digit filter has it."""
    assert tokenize(written) == tokenize(typed)


def test_a_chinese_run_is_cut_without_a_python_step_per_character(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword indexing cuts every record's Chinese, Japanese or Thai runs into units (a character
    with its marks): the test of each character for a mark or a Hangul jamo, in Python, was a
    fifth of a Chinese text's indexing; the units must come from a match in C."""
    from vecbook import tokens

    tokens.tokenize("北京")  # the tables, read once
    calls = []
    real = unicodedata.category
    monkeypatch.setattr(unicodedata, "category", lambda char: calls.append(char) or real(char))
    text = "我们明天去北京看长城，然后吃烤鸭。" * 100
    assert tokens._units("北京看长城") == list("北京看长城")
    assert "长城" in tokenize(text) and calls == []
    decomposed = unicodedata.normalize("NFD", "서울에서")
    assert tokens._units(decomposed) == [unicodedata.normalize("NFD", c) for c in "서울에서"]
    assert tokens._units("ครั้งที่") == ["ค", "รั้", "ง", "ที่"]


@pytest.mark.parametrize("written, typed", [
    ("ปี ๒๕๖๗", "ปี 2567"), ("ราคา๑๐๐บาท", "ราคา100บาท"),  # Thai: a Buddhist year, a price inside a run
    ("ປີ ໒໐໒໔", "ປີ 2024"), ("ឆ្នាំ ២០២៤", "ឆ្នាំ 2024"), ("၂၀၂၄ ခုနှစ်", "2024 ခုနှစ်"),  # Lao, Khmer, Myanmar
])
def test_digits_of_a_script_cut_into_bigrams_stay_one_number(written: str, typed: str) -> None:
    """Thai, Lao, Khmer and Myanmar runs are cut into bigrams, but their digits are a number, as
    ASCII digits inside a Chinese run are: ๒๕๖๗ is the term 2567, not 25 56 67 (which found no
    2567, and matched every 25 and 56 of any other language)."""
    assert tokenize(written) == tokenize(typed)
    assert "2567" in tokenize("ปี ๒๕๖๗") and "25" not in tokenize("ปี ๒๕๖๗")


@pytest.mark.parametrize("written, typed", [
    ("ｉＰｈｏｎｅ", "iphone"), ("ＡＢＣ商事", "abc商事"), ("１０時", "10時"), ("ｶﾀｶﾅ", "カタカナ"),
    ("ｶﾞｿﾘﾝ", "ガソリン"), ("ﾊﾟｿｺﾝ", "パソコン"), ("ﾃﾞｰﾀ", "データ"), ("会議　室", "会議 室"),
])
def test_widths_fold_for_matching(written: str, typed: str) -> None:
    """Full-width Latin letters and digits are ASCII, half-width katakana (with its own voicing
    marks) full-width, as Lucene's CJK width folding has them: phones write both widths."""
    assert tokenize(written) == tokenize(typed)


@pytest.mark.parametrize("written, typed", [
    ("ｉＰｈｏｎｅ１５", "iPhone 15"), ("ｉＰｈｏｎｅ１５", "iPhone15"),  # as a Japanese phone keyboard types it
    ("新しいiPhone15を買った", "iPhone 15"), ("新しいiPhone15を買った", "iphone"),  # glued to the Japanese
    ("我的iPhone15坏了", "15"), ("ＰＳ５で遊ぶ", "PS5"), ("ＰＳ５で遊ぶ", "PS 5"), ("5G网络很快", "5G"),
    ("会议在3pm开始", "3 pm"),
])
def test_letters_and_digits_written_together_in_cjk_text_are_also_found_apart(written: str, typed: str) -> None:
    """Chinese and Japanese write a model's name and number together (iPhone15, ＰＳ５) where a note
    or a query in English spaces them: in a text holding a script written without spaces, or
    full-width forms, such a word is also its letters and its digits, each a term."""
    assert set(tokenize(typed)) <= set(tokenize(written))


@pytest.mark.parametrize("text, terms", [
    ("iPhone15 covid19 p53 IL6", ["iphone15", "covid19", "p53", "il6"]),  # English: as it always was
    ("β2 receptors bind IL6 in CD4 cells", ["β2", "receptor", "bind", "il6", "cd4", "cell"]),
])
def test_letters_and_digits_written_together_stay_one_term_elsewhere(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


def test_a_fullwidth_query_finds_the_english_note_and_the_other_way_round(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Bought the new iPhone 15 today\n---\n新しいｉＰｈｏｎｅ１５を買った\n", encoding="utf-8")
    book = vecbook.VecBook(data_directory=tmp_path, keyword_only=True)
    assert {h.line_number for h in book.search("ｉＰｈｏｎｅ１５")} == {1, 3}
    hits = book.search("iPhone 15")
    assert {h.line_number for h in hits} == {1, 3}
    assert [h.matched_terms for h in hits if h.line_number == 3] == [["iPhone", "15"]]


@pytest.mark.parametrize("written, typed", [
    ("カメラ", "かめら"), ("ｶﾒﾗ", "かめら"), ("リンゴ", "りんご"), ("ネコ", "ねこ"),  # one word in either kana
    ("ガッコウ", "がっこう"), ("パン", "ぱん"), ("ヴァイオリン", "ゔぁいおりん"), ("コーヒー", "こーひー"),
    ("ヶ月", "ゖ月"), ("イスヾ", "いすゞ"),  # small ke, the voiced iteration mark
    ("新しいカメラを買う", "新しいかめらを買う"),  # kanji between them stay
])
def test_hiragana_and_katakana_spellings_of_a_word_match(written: str, typed: str) -> None:
    """Japanese writes one word in either kana (りんご and リンゴ, a word typed before its
    conversion to katakana): they fold together, as Groonga's unify_kana does, voicing marks kept."""
    assert tokenize(written) == tokenize(typed)
    assert tokenize("カメラ") != tokenize("ガメラ") and tokenize("寿司") == ["寿司"]


@pytest.mark.parametrize("written, typed", [
    ("我們在臺灣買了一台新電腦", "台湾"), ("我們在臺灣買了一台新電腦", "电脑"),  # traditional text, simplified query
    ("我们在台湾买了一台新电脑", "臺灣"), ("我们在台湾买了一台新电脑", "電腦"),  # and the other way
    ("给银行打电话", "銀行"), ("給銀行打電話", "银行"), ("给银行打电话", "電話"),
    ("我們去圖書館還書", "图书馆"), ("後來他發現", "后来"),  # 後 is one of OpenCC's several-choice characters
])
def test_traditional_and_simplified_chinese_find_each_other(written: str, typed: str) -> None:
    """Each traditional character folds to its simplified form, one for one (OpenCC's
    TSCharacters, its first choice): the query's terms are the text's, in either script."""
    assert set(tokenize(typed)) <= set(tokenize(written))
    assert tokenize("臺灣電腦") == tokenize("台湾电脑") == ["台湾", "湾电", "电脑"]


def test_the_chinese_table_folds_one_character_to_one_and_twice_as_once() -> None:
    """Every pair of the vendored table is two ideographs, kept whole by the rest of folding
    (NFKC changes none), and no simplified form folds again: folding twice is folding once."""
    from vecbook import han_variants

    table = han_variants.simplified()
    assert len(table) > 4000 and all(fold(chr(code)) == fold(simple) != chr(code) for code, simple in table.items())
    assert all(han_variants.HAN_RE.fullmatch(chr(code)) for code in table)
    assert all(fold(fold(simple)) == fold(simple) for simple in table.values())
    assert fold("戱") == fold("戲") == "戏"  # TSCharacters' 戱 is 戯, the Japanese form of 戲


@pytest.mark.parametrize("written, typed", [
    ("我在图书馆看地图", "地図"), ("我們去圖書館還書", "図書館"), ("図書館で本を借りました", "图书馆"),  # 図: 圖 and 图
    ("东京驿", "東京駅"), ("驛前", "駅前"), ("在车站对面", "対面"), ("经济", "経済"),
    ("我们去看樱花", "桜花"), ("禁止步行", "歩行"), ("自动贩卖机", "販売"),
])
def test_japanese_new_forms_find_their_chinese_characters(written: str, typed: str) -> None:
    """A Japanese new form (shinjitai) folds as its traditional character does (OpenCC's
    JPVariants, where one for one and safe): 図 finds 图 and 圖, 駅 finds 驿, in either direction."""
    assert set(tokenize(typed)) <= set(tokenize(written))


@pytest.mark.parametrize("one, other", [
    ("麺", "面"), ("闘", "斗"), ("嬢", "娘"), ("徴", "征"), ("麹", "曲"),  # a common Japanese character of another meaning
    ("発", "髪"), ("暦", "歴"),  # two Japanese characters that would fold together
    ("芸", "艺"), ("糸", "丝"),  # a Japanese form that is a Chinese character of its own
])
def test_japanese_new_forms_fold_only_where_safe(one: str, other: str) -> None:
    assert fold(one) != fold(other)


def test_the_japanese_table_folds_one_character_to_one_and_twice_as_once() -> None:
    """Each vendored pair is two ideographs; the Japanese form is no Chinese character (neither
    GB2312 nor Big5 holds it), no two fold together, and what they fold to folds to itself."""
    from vecbook import han_variants

    table = han_variants.japanese()
    assert len(table) > 200 and all(len(folded) == 1 and fold(chr(code)) == folded for code, folded in table.items())
    assert len(set(table.values())) == len(table)
    for code, folded in table.items():
        assert fold(folded) == folded and han_variants.HAN_RE.fullmatch(chr(code))
        for codec in ("gb2312", "big5"):
            with pytest.raises(UnicodeEncodeError):
                chr(code).encode(codec)


def test_the_chinese_table_is_read_only_for_a_word_holding_an_ideograph() -> None:
    """Latin, Cyrillic, Arabic, kana, Hangul, Thai and emoji words never read the tables."""
    from vecbook import han_variants, tokens

    for cached in (han_variants.simplified, han_variants.japanese, han_variants.han_folds, tokens._han_fold_table):
        cached.cache_clear()
    for word in ["café", "кафе", "المكتبة", "かめら", "カメラ", "서울에서", "ตลาดน้ำ", "🍕", "ｅｔｃ", "m²"]:
        fold(word)
    assert han_variants.simplified.cache_info().currsize == 0
    assert fold("臺灣") == "台湾" and han_variants.simplified.cache_info().currsize == 1
    assert han_variants.japanese.cache_info().currsize == 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ＡｂＣ１ｶﾞﾟﾀｰ我的İı iPhone　_-", max_size=60))
@example("İ我们")  # İ lengthens when lower-cased: the bigrams after it must keep their place
@example("ｉＰｈｏｎｅ我的ｶﾞｿﾘﾝ")
def test_width_folded_words_keep_their_place_in_the_text(text: str) -> None:
    spans = list(vecbook.tokens.word_spans(text))
    assert all(0 <= a < b <= len(text) for a, b, _ in spans)
    assert [t for t in map(Analysis().term, (w for _, _, w in spans)) if t is not None] == tokenize(text)
    together, alone = Vocabulary(), Vocabulary()
    assert [i.tolist() for i in together.encode_texts([text, text[::-1]])] == \
           [alone.encode_text(text).tolist(), alone.encode_text(text[::-1]).tolist()]


@pytest.mark.parametrize("written, typed", [
    ("Steuer\u00aderklärung", "Steuererklärung"), ("Donau\u00addampf\u00adschiff", "Donaudampfschiff"),
    ("Aus\u2060gabe", "Ausgabe"),  # a word joiner, as some editors write it
])
def test_a_soft_hyphen_inside_a_word_leaves_it_one_word(written: str, typed: str) -> None:
    """Web pages and e-books hyphenate with invisible soft hyphens, which copied text keeps: as
    in Unicode's word boundaries (UAX #29, format characters join), the word stays whole."""
    assert tokenize(written) == tokenize(typed)
    shown = vecbook.hit_lines.highlight(f"die {written}.", [typed])
    assert shown.split(vecbook.hit_lines.BOLD)[1].split(vecbook.hit_lines.RESET)[0] == written


@pytest.mark.parametrize("one, other", [("й", "и"), ("नमस्ते", "नमसत"), ("が", "か")])
def test_folding_keeps_letters_that_are_not_accented_forms(one: str, other: str) -> None:
    # Russian й is a letter of its own; Devanagari vowel signs and the Japanese voicing mark are
    # parts of the word, not accents.
    assert fold(one) != fold(other)


@pytest.mark.parametrize("text", [
    "오늘 서울에서 친구를 만났어요", "한강 공원", "ガソリン代はパソコンで", "Tiếng Việt phở Hà Nội", "Zażółć gęślą jaźń",
    "İstanbul'da kırmızı", "Ёлка и счёт", "Noël à l'été", "Straße Grüße Öl",
])
def test_decomposed_text_gets_the_terms_of_the_composed_text(text: str) -> None:
    """macOS writes file names, and some apps text, decomposed (NFD): a Hangul syllable as its
    two or three jamo, an accent after its letter. Both forms are found by either form."""
    decomposed = unicodedata.normalize("NFD", text)
    assert decomposed != text
    assert tokenize(decomposed) == tokenize(text)
    assert [fold(w) for _, _, w in vecbook.tokens.word_spans(decomposed)] == \
           [fold(w) for _, _, w in vecbook.tokens.word_spans(text)]


def test_decomposed_korean_is_found_and_highlighted_as_written(tmp_path: Path) -> None:
    note = unicodedata.normalize("NFD", "오늘 서울에서 친구를 만났어요.")
    (tmp_path / "korean.txt").write_text(note + "\n", encoding="utf-8")
    book = vecbook.VecBook(data_directory=tmp_path, keyword_only=True)
    for query in ("서울", unicodedata.normalize("NFD", "서울")):
        hits = book.search(query)
        assert [h.file_path for h in hits] == ["korean.txt"]
        marked = vecbook.hits.mark_matches(hits[0].snippet, hits[0].matched_terms, lambda w: f"[{w}]")
        assert marked.startswith(unicodedata.normalize("NFD", "오늘 [서울][울에][에서]")) or \
            marked.startswith(unicodedata.normalize("NFD", "오늘 [서울]")), marked


def test_words_keep_their_marks_where_backslash_w_drops_them() -> None:
    assert tokenize("नमस्ते दुनिया", stemming=False) == ["नमस्ते", "दुनिया"]
    assert tokenize("caf\u0065\u0301 ok") == ["cafe", "ok"]


@pytest.mark.parametrize("language, words, same", [
    ("spanish", "reuniones reunión", True), ("german", "Häuser Haus", True), ("french", "chanteuse chanteuses", True),
    ("russian", "встречи встреча", True), ("turkish", "kitaplar kitap", True), ("english", "running runs", True),
    ("german", "Müller mueller", True), ("german", "Häuser haeuser", True),  # umlauts typed as ae, oe, ue
    ("english", "Müller mueller", False),
])
def test_a_language_stems_its_own_words(language: str, words: str, same: bool) -> None:
    first, second = tokenize(words, language=language)
    assert (first == second) is same


@pytest.mark.parametrize("language, text, kept", [
    ("english", "the house of the rising sun", ["hous", "rise", "sun"]),
    ("english", "grandma's birthday, it’s Ana's", ["grandma", "birthdai", "ana"]),  # a possessive's 's, as Lucene
    ("german", "Die Wohnung und der Garten", ["wohnung", "gart"]),
    ("french", "l'été de la mer", ["ete", "mer"]),  # elision: l' is a stop word of its own
    ("spanish", "el tiempo y el trabajo", ["tiemp", "trabaj"]),  # a short list keeps words people search
    ("none", "the Running men", ["the", "running", "men"]),
])
def test_each_language_drops_its_stop_words(language: str, text: str, kept: list[str]) -> None:
    assert tokenize(text, language=language) == kept


def test_snowball_porter_stems_as_the_porter_1980_paper() -> None:
    # Examples of Porter's paper (steps 1a-5); 'porter' is Snowball's original Porter stemmer.
    cases = {"caresses": "caress", "ponies": "poni", "feed": "feed", "agreed": "agre", "plastered": "plaster",
             "motoring": "motor", "hopping": "hop", "filing": "file", "happy": "happi", "relational": "relat",
             "conditional": "condit", "generalization": "gener", "hopefulness": "hope", "revival": "reviv",
             "adjustable": "adjust", "controll": "control", "roll": "roll", "generate": "gener", "as": "as"}
    assert {w: vecbook.tokens.porter_stem(w) for w in cases} == cases


def test_every_language_has_a_snowball_stemmer() -> None:
    import Stemmer

    algorithms = set(Stemmer.algorithms())
    assert all(algorithm is None or algorithm in algorithms for algorithm in vecbook.tokens.STEMMERS.values())
    assert set(vecbook.tokens.STEMMERS) == set(vecbook.config.LANGUAGES)


def test_language_is_a_global_and_a_per_collection_setting(tmp_path: Path) -> None:
    (tmp_path / "chat").mkdir()
    file = tmp_path / "vecbook.toml"
    file.write_text('language = "german"\n[[collections]]\nname = "chat"\npath = "chat"\nlanguage = "spanish"\n'
                    '[[collections]]\nname = "other"\npath = "chat"\n'
                    '[[collections]]\nname = "rows"\ndatabase = "x.db"\nlanguage = "french"\n', encoding="utf-8")
    config = load_config(file)
    assert analysis_of(config) == Analysis("german") and analysis_of(config, "other") == Analysis("german")
    assert analysis_of(config, "chat") == Analysis("spanish") and analysis_of(config, "rows") == Analysis("french")
    assert analyses(config) == [Analysis("german"), Analysis("spanish"), Analysis("french")]
    assert config_without_file(language="french", stemming=False).language == "french"


@pytest.mark.parametrize("toml, message", [
    ('language = "klingon"', "config key 'language' in {f}:1 must be one of none, arabic"),
    ('language = 1', "config key 'language' in {f}:1 must be str, got 1"),
    ('[[collections]]\nname = "c"\npath = "x"\nlanguage = "klingon"',
     "config key 'language' in [[collections]] #1 in {f}:4 must be one of none, arabic"),
])
def test_an_unknown_language_is_a_config_error(tmp_path: Path, toml: str, message: str) -> None:
    file = tmp_path / "vecbook.toml"
    file.write_text(toml + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="^" + re.escape(message.format(f=file))):
        load_config(file)


def test_a_query_is_cut_once_per_language_in_use() -> None:
    # Each language's terms, a term both give counted as often as one of them repeats it (not twice).
    assert vecbook.tokens.query_tokens("Häuser houses houses", [Analysis(), Analysis("german")]) == \
        ["hauser", "hous", "hous", "haus"]
    assert vecbook.tokens.query_tokens("the running runs", [Analysis()]) == tokenize("the running runs")


def test_a_collection_in_its_own_language_is_indexed_and_queried_in_it(tmp_path: Path) -> None:
    # The .txt files are English, the notes collection Spanish: each is stemmed by its own rules,
    # and a query is cut both ways, so each meets the records in the terms they were indexed in.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "en.txt").write_text("The meetings were moved to Friday.\n", encoding="utf-8")
    (tmp_path / "notas").mkdir()
    (tmp_path / "notas" / "es.md").write_text("Las reuniones fueron en Madrid.\n", encoding="utf-8")
    file = tmp_path / "vecbook.toml"
    file.write_text('cache_directory = false\n[[collections]]\nname = "notas"\npath = "notas"\n'
                    'format = "markdown"\nlanguage = "spanish"\n', encoding="utf-8")
    book = vecbook.VecBook(config=load_config(file), embedder=vecbook.Embedder("unused"), keyword_only=True)
    assert [h.source for h in book.search("reunión", mode="keyword")] == ["notas"]
    assert [h.file_path for h in book.search("meeting", mode="keyword")] == ["en.txt"]
    hit = book.search("REUNION Madrid", mode="keyword")[0]
    assert hit.matched_terms == ["REUNION", "Madrid"] and "reuniones" in hit.snippet
    # An update lays the changed source out again in its own language, beside the carried ones.
    (tmp_path / "notas" / "mas.md").write_text("Nuevas canciones del verano.\n", encoding="utf-8")
    book.reindex()
    assert [h.file_path for h in book.search("canción", mode="keyword")] == ["notas/mas.md"]
    assert [h.source for h in book.search("reunión", mode="keyword")] == ["notas"]
    assert [h.file_path for h in book.search("meeting", mode="keyword")] == ["en.txt"]


ONE_CHARACTER_NOTES = {
    "rain.txt": "下雨了，记得带伞。", "cat.txt": "我家的猫很可爱，每天都睡在窗边。", "umbrella.txt": "Left the umbrella in the car.",
    "station.txt": "駅前の猫カフェに行った。", "home.txt": "어제는 집에서 푹 쉬었어요.", "weather.txt": "今天天气很好。",
    "plan.txt": "３月の予定：iPhone手机を買う",
}


@pytest.fixture(scope="module")
def one_character_book(tmp_path_factory: pytest.TempPathFactory) -> vecbook.VecBook:
    folder = tmp_path_factory.mktemp("one-character")
    for name, text in ONE_CHARACTER_NOTES.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return vecbook.VecBook(data_directory=folder, keyword_only=True)


@pytest.mark.parametrize("query, found", [
    ("伞", {"rain.txt": "带[伞]。"}), ("傘", {"rain.txt": "带[伞]。"}),  # the traditional (and Japanese) form folds to it
    ("雨", {"rain.txt": "下[雨]了"}), ("駅", {"station.txt": "[駅]前"}), ("집", {"home.txt": "[집]에서"}),
    ("猫", {"cat.txt": "的[猫]很", "station.txt": "の[猫]カフェ"}),  # in a Chinese clause and between kana
    ("带伞 rain", {"rain.txt": "[带伞]。"}), ("伞 umbrella", {"rain.txt": "带[伞]。", "umbrella.txt": "[umbrella]"}),
    ("伞。", {"rain.txt": "带[伞]。"}), ("🌂伞", {"rain.txt": "带[伞]。"}),  # punctuation and an emoji beside it
    ("3月", {"plan.txt": "[３月]の"}), ("買", {"plan.txt": "を[買]う"}),  # a full-width digit, kanji between kana
    ("iPhone手机", {"plan.txt": "[iPhone手机]"}),
])
def test_one_character_finds_the_runs_that_hold_it(one_character_book: vecbook.VecBook, query: str,
                                                   found: dict[str, str]) -> None:
    """People search 伞, 猫, 雨, 駅 or 집 alone: a one-character query finds the texts whose runs
    hold the character (indexed only inside bigrams: 带伞), and shows it marked, alone."""
    hits = one_character_book.search(query, mode="keyword")
    assert sorted(h.file_path for h in hits) == sorted(found)
    for hit in hits:
        assert found[hit.file_path] in vecbook.hits.mark_matches(hit.snippet, hit.matched_terms, lambda w: f"[{w}]")


def test_a_word_character_is_told_by_its_block_as_the_scan_for_it_finds_it() -> None:
    # A query term is told by comparisons (no pattern compiled at each start); the scan of a
    # text for such characters must take the same ones, to each block's first and last.
    from vecbook.keyword_chars import WORD_CHARACTERS, is_word_character, word_characters

    for low, high in WORD_CHARACTERS:
        for character in (low, high, chr(ord(low) - 1), chr(ord(high) + 1)):
            assert is_word_character(character) is (word_characters().fullmatch(character) is not None)
    assert [is_word_character(term) for term in ("伞", "集", "집", "𠀋", "a", "ア", "伞伞")] == [True] * 4 + [False] * 3


@pytest.mark.parametrize("query, found", [
    ("집에서", {"house.txt": "우리 [집] 앞", "home.txt": "[집에서]"}),  # a one-syllable noun and its particle
    ("차까지", {"car.txt": "[차]를 샀어요"}), ("집으로", {"house.txt": "우리 [집] 앞", "home.txt": "[집]에서"}),
])
def test_a_korean_query_with_a_particle_finds_its_one_syllable_noun_alone(tmp_path: Path, query: str,
                                                                        found: dict[str, str]) -> None:
    """Korean sticks a particle to its noun (집에서: at home): a query word of one syllable and a
    two-syllable particle finds the noun alone too (우리 집), which none of its bigrams is."""
    notes = {"house.txt": "우리 집 앞에 공원이 있어요.", "home.txt": "어제는 집에서 푹 쉬었어요.", "car.txt": "새 차를 샀어요.",
             "school.txt": "학교 도서관은 늦게까지 열어요."}
    for name, text in notes.items():
        (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    hits = vecbook.VecBook(data_directory=tmp_path, keyword_only=True).search(query)
    for name, marked in found.items():
        hit = next(h for h in hits if h.file_path == name)
        assert marked in vecbook.hits.mark_matches(hit.snippet, hit.matched_terms, lambda w: f"[{w}]")
    assert tokenize("도서관까지") == tokenize("도서관") + ["관까", "까지"]  # longer nouns: their bigrams find them


def test_one_character_is_scored_as_a_word_of_its_own() -> None:
    """The character's joined postings score as BM25 scores a word: found where it is, alone or
    in a run, more often ranking higher; a character no text holds finds nothing."""
    texts = ["记得带伞", "伞伞伞", "伞", "我家的猫", "天气很好", "下雨带伞了伞"]
    index = vecbook.index.KeywordIndex([tokenize(t) for t in texts])
    scores = index.scores(["伞"])
    assert [bool(s) for s in scores] == ["伞" in t for t in texts]
    assert scores[1] > scores[0] and scores[5] > scores[0]  # three and two 伞 against one, at similar lengths
    assert not index.scores(["鱼"]).any() and not index.postings_of(["鱼"])
    assert index.upper_bound(["伞"]) >= scores.max()


def test_one_characters_hits_are_exact_and_its_count_a_lower_bound() -> None:
    """Every text holding the character is found (the hits and their number are exact); its count
    in a text is the larger of its bigrams' counts that begin and that end with it, so a character
    ending one clause and beginning the next counts once for the two, as search.md says."""
    texts = ["带伞。伞很好用", "下雨带伞了伞", "记得带伞", "伞", "天气很好"]
    index = vecbook.index.KeywordIndex([tokenize(t) for t in texts])
    docs, tf, _ = index.character_postings(index._state(), "伞")
    assert docs.tolist() == [0, 1, 2, 3]
    assert tf.tolist() == [1, 2, 1, 1]  # 带伞。伞很好用 holds two: the bigrams 带伞 and 伞很 say one


def test_a_query_looks_for_a_bounded_number_of_characters_inside_runs() -> None:
    """Each character looked for inside runs costs a scan and a join: a pasted text with a space
    between its characters looks for its first QUERY_CHARACTERS so, the rest where they stand alone."""
    index = vecbook.index.KeywordIndex([tokenize("记得带伞"), tokenize("丁")])
    others = " ".join(chr(0x4E00 + i) for i in range(vecbook.index.QUERY_CHARACTERS))  # 一 丁 丂 ...: not in the runs
    assert index.scores(tokenize(f"伞 {others}"))[0] > 0
    assert index.scores(tokenize(f"{others} 伞"))[0] == 0 and index.scores(tokenize(f"{others} 伞"))[1] > 0


def test_a_snippet_centres_on_the_bigram_match_and_shows_the_words_as_written() -> None:
    content = "天气很好。" * 150 + "我们去北京看长城。" + "明天下雨。" * 150
    terms = vecbook.snippets.query_terms("长城")
    snippet = vecbook.snippets.make_snippet(content, (0, len(content)), terms)
    assert "长城" in snippet.text and snippet.matched_terms == ["长城"]
    middle = content.index("长城")
    assert snippet.start < middle < snippet.end and abs((snippet.start + snippet.end) / 2 - middle) < 60
    accented = vecbook.snippets.make_snippet("Wir trafen uns im Café am Bahnhof.", (0, 34),
                                             vecbook.snippets.query_terms("cafe bahnhof"))
    assert accented.text == "Wir trafen uns im Café am Bahnhof." and accented.matched_terms == ["cafe", "bahnhof"]


@pytest.mark.parametrize("snippet, terms, marked", [
    ("今天我们去北京看长城，天气很好。", ["长城"], ["长城"]),
    ("今天我们去北京看长城", ["北京长城"], ["北京", "长城"]),  # 京看 and 看长 are not the query's
    ("Wir trafen uns im Café am Bahnhof.", ["cafe"], ["Café"]),
    ("İstanbul'da kırmızı", ["KIRMIZI"], ["kırmızı"]),
    ("The boilers 🔥 need service", ["boiler"], ["boilers"]),
    ("Pizza 🍕🍺 tonight 👍🏽 ❤️", ["🍕👍❤"], ["🍕", "👍🏽", "❤️"]),  # each emoji with its skin tone, selector
    ("Press #️⃣ then 1", ["#"], ["#️⃣"]),  # a sign's keycap frame
    ("נפגשנו בספרייה העירונית", ["בספרייה"], ["בספרייה"]),
    ("我的ｉＰｈｏｎｅ坏了", ["iphone"], ["ｉＰｈｏｎｅ"]),  # the full-width word as written
    ("ｶﾞｿﾘﾝ代", ["ガソリン"], ["ｶﾞｿﾘﾝ"]),  # half-width, voicing mark and all: its bigrams, one mark
    ("新しいカメラを買う", ["かめら"], ["カメラ"]),  # the word in the kana it was written in
    ("我們在臺灣買了一台新電腦", ["台湾", "电脑"], ["臺灣", "電腦"]),  # in the script it was written in
    ("给银行打电话", ["銀行"], ["银行"]),
    ("図書館で本を借りました", ["図書館"], ["図書館"]),  # Japanese kanji, folded alike on both sides
    # an emoji inside a sequence shown as one picture marks the whole picture: a mark inside it
    # would part it (a family drawn as four people, a flag as a black flag and invisible tags)
    ("Family 👨\u200d👩\u200d👧\u200d👦 photo", ["👩"], ["👨\u200d👩\u200d👧\u200d👦"]),
    ("Family 👨\u200d👩\u200d👧\u200d👦 photo", ["👨\u200d👩\u200d👧\u200d👦"], ["👨\u200d👩\u200d👧\u200d👦"]),
    ("pride 🏳️\u200d🌈 parade", ["🌈"], ["🏳️\u200d🌈"]),
    ("doc 👩🏽\u200d⚕️ here", ["👩"], ["👩🏽\u200d⚕️"]),
    ("go 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f team", ["🏴"],
     ["🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"]),
])
def test_the_cli_highlights_what_was_matched_as_written(snippet: str, terms: list[str], marked: list[str]) -> None:
    shown = vecbook.hit_lines.highlight(snippet, terms)
    bold = vecbook.hit_lines.BOLD
    found = [part.split(vecbook.hit_lines.RESET)[0] for part in shown.split(bold)[1:]]
    assert found == marked and shown.replace(bold, "").replace(vecbook.hit_lines.RESET, "") == snippet


BAD_INPUT = [
    "สวัสดีครับวันนี้อากาศดีมากเราจะไปเที่ยวทะเลกัน" * 50,  # Thai: no spaces at all
    "ជំរាបសួរពិភពលោក" * 40,  # Khmer
    "a" * 100_000,  # one run without spaces
    "x\u0301" * 5_000,  # a letter under thousands of marks
    "e" + "\u0301" * 5_000,  # one letter, thousands of marks ("Zalgo")
    "🎉🔥😂👍🏽" * 200,  # emoji only
    "\u202eשלום עולם\u202c مرحبا بالعالم",  # right-to-left with direction controls
    "\ufeff\u200b\u200d\u00ad",  # invisible characters only
]


@pytest.mark.parametrize("text", BAD_INPUT)
def test_bad_input_is_indexed_without_errors_or_giant_terms(text: str) -> None:
    vocabulary = Vocabulary()
    ids = vocabulary.encode_text(text)
    assert all(len(term) <= MAX_TERM_CHARS for term in vocabulary.ids)
    assert len(ids) <= len(text)
    terms = vecbook.snippets.query_terms(text[:200])
    vecbook.snippets.make_snippet(text, (0, len(text)), terms)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80), max_size=6),
       st.sampled_from([Analysis(), Analysis("german"), Analysis("none", False), Analysis("turkish")]))
@example(["\u0300"], Analysis())  # a combining accent alone folded to an empty term (found by this test)
@example(["a \u0301\u0301 b", "\u0300" * 120], Analysis("none", False))
@example(["新しいiPhone15", "covid19 p53", "ＰＳ５ x1", "a1 b2", "我的3pm"], Analysis())  # letters and digits apart in CJK text only
def test_any_text_gets_the_same_terms_together_and_alone_and_none_giant(texts: list[str], analysis: Analysis) -> None:
    together, alone = Vocabulary(), Vocabulary()
    assert [ids.tolist() for ids in together.encode_texts(texts, analysis)] == \
           [alone.encode_text(text, analysis).tolist() for text in texts]
    assert together.ids == alone.ids and all(0 < len(term) <= MAX_TERM_CHARS for term in together.ids)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=120))
def test_snippet_words_are_the_indexed_words_at_their_place_in_the_text(text: str) -> None:
    # Snippets and highlighting read words back from the text itself (offsets as written); they
    # must find the terms the index found.
    spans = list(vecbook.tokens.word_spans(text))
    assert all(0 <= a < b <= len(text) for a, b, _ in spans)
    from_spans = [t for t in map(Analysis().term, (w for _, _, w in spans)) if t is not None]
    assert from_spans == tokenize(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1_ -.Z\n", max_size=80), st.lists(st.sampled_from(["a", "ab", "b1", "zab", "1"]), max_size=3))
def test_ascii_snippet_matches_are_the_words_the_general_path_finds(text: str, query: list[str]) -> None:
    analysis = vecbook.tokens.ENGLISH
    terms = {t: w for w in query if (t := analysis.term(w)) is not None}
    general = [(p, t) for p, _, word in vecbook.tokens.word_spans(text) if (t := analysis.term(word)) in terms]
    assert vecbook.snippets._ascii_matches(text.lower(), 0, terms, analysis) == general


# -- the languages the embedding model reads --

ENGLISH_ONLY = frozenset({"english"})


@pytest.mark.parametrize("query, languages, reads", [
    ("什么时候去看牙医？", ENGLISH_ONLY, False),
    ("猫", ENGLISH_ONLY, False),  # one Han character is a word
    ("счёт за электричество", ENGLISH_ONLY, False),
    ("موعد طبيب الأسنان", ENGLISH_ONLY, False),
    ("בספרייה", ENGLISH_ONLY, False), ("Πειραιά", ENGLISH_ONLY, False), ("ตลาดน้ำ", ENGLISH_ONLY, False),
    ("दिल्ली", ENGLISH_ONLY, False), ("東京で寿司", ENGLISH_ONLY, False), ("서울", ENGLISH_ONLY, False),
    ("ｶﾞｿﾘﾝ", ENGLISH_ONLY, False),  # half-width katakana
    ("我的iPhone坏了", ENGLISH_ONLY, False), ("what does 长城 mean", ENGLISH_ONLY, False),
    ("🦷 牙医", ENGLISH_ONLY, False),
    ("Wann kommt die Erstattung vom Finanzamt?", ENGLISH_ONLY, False),  # die, vom
    ("WANN KOMMT DIE ERSTATTUNG VOM FINANZAMT", ENGLISH_ONLY, False),  # all in capitals: words all the same
    ("La reunión de vecinos es el jueves", ENGLISH_ONLY, False),
    ("Nous partirons à la mer pour l'été", ENGLISH_ONLY, False),
    ("when does the tax refund arrive", ENGLISH_ONLY, True),
    ("🦷 when is my dentist appointment", ENGLISH_ONLY, True),
    # SciFact claims: abbreviations in capitals and Greek letters as symbols stay English
    ("IL-6 signaling plays a major role in atherosclerotic cardiovascular disease.", ENGLISH_ONLY, True),
    ("Mice without IFN-γ or its receptor are resistant to EAM induced with α-MyHC/CFA.", ENGLISH_ONLY, True),
    ("Deletion of αvβ8 does not result in a spontaneous inflammatory phenotype.", ENGLISH_ONLY, True),
    ("MUC1-C activates the NF-κB p65 signaling pathway by interacting with IκB kinase ß.", ENGLISH_ONLY, True),
    ("In British Men, haplogroup I decreases risk of cardiovascular disease.", ENGLISH_ONLY, True),  # Dutch
    # "in", "of" and "men" are English words too: they count for English only
    ("Ik heb het boek in de kast gelegd", ENGLISH_ONLY, False),  # Dutch: ik, heb, het, de
    ("Ik heb het boek in de kast gelegd", frozenset({"english", "german"}), False),
    ("to die in vain", ENGLISH_ONLY, True),  # in: English; die alone does not outweigh it
    # words that do not tell: the keyword side decides (vecbook.rank)
    ("die hard", ENGLISH_ONLY, None), ("Steuererklärung Erstattung", ENGLISH_ONLY, None),
    ("🧾 Steuererklärung Erstattung 💶", ENGLISH_ONLY, None), ("🦷 wisdom tooth", ENGLISH_ONLY, None),
    ("Vitamin D deficiency effects birth weight.", ENGLISH_ONLY, None), ("2024", ENGLISH_ONLY, None),
    ("2023 1040", ENGLISH_ONLY, None),
    # emoji without a letter: the packaged model reads each as an unknown token
    ("🎉🎂", ENGLISH_ONLY, False), ("🎂 30", ENGLISH_ONLY, False), ("🎉🎂", None, True),
    # a model that reads more
    ("Wann kommt die Erstattung vom Finanzamt?", frozenset({"english", "german"}), True),
    ("牙医", frozenset({"english", "chinese"}), True), ("寿司", frozenset({"japanese"}), True),
    ("東京で寿司", frozenset({"chinese"}), False),  # kana: Japanese
    ("Steuererklärung Erstattung", frozenset({"german"}), None),
    ("счёт за электричество", None, True), ("Steuererklärung Erstattung", None, True),  # every language
])
def test_a_query_is_read_by_the_model_as_its_words_tell(query: str, languages: frozenset[str] | None,
                                                        reads: bool | None) -> None:
    assert reads_query(query, languages) is reads


def test_every_script_names_languages_the_config_accepts() -> None:
    assert {language for languages in SCRIPTS.values() for language in languages} <= set(EMBEDDING_LANGUAGES)
    listed = {language for language in vecbook.config.LANGUAGES if vecbook.tokens.stop_words(language)}
    assert set(vecbook.languages.FUNCTION_WORD_LANGUAGES) == listed - {"russian"}  # Cyrillic: its script tells


@pytest.mark.parametrize("settings, languages", [
    ({}, frozenset({"english"})),  # the packaged model reads English
    ({"embedding_model": "all-MiniLM-L6-v2"}, frozenset({"english"})),
    ({"embedding_model": "/models/multilingual-e5"}, None),  # another model: every language
    ({"embedding_model": "/models/bge-small-en", "embedding_languages": ["English"]}, frozenset({"english"})),
    ({"embedding_languages": "english, german"}, frozenset({"english", "german"})),
    ({"embedding_languages": "all"}, None),
])
def test_the_languages_a_model_reads(settings: dict[str, Any], languages: frozenset[str] | None) -> None:
    assert model_languages(config_without_file(**settings)) == languages


@pytest.mark.parametrize("value, message", [
    ('"germn"', "config key 'embedding_languages' in {f}:1: unknown language 'germn' (did you mean 'german'?); "
                'give "all" or names from: afrikaans, albanian,'),
    ('["english", "klingon"]', "config key 'embedding_languages' in {f}:1: unknown language 'klingon'; give \"all\""),
    ("[]", 'config key \'embedding_languages\' in {f}:1 names no language: give "all" or the languages the model '
           'reads, such as ["english"]'),
    ("[1]", 'config key \'embedding_languages\' in {f}:1 must be "all" or a list of language names such as '
            '["english", "german"], got [1]'),
    ("1", "config key 'embedding_languages' in {f}:1 must be str or list or tuple, got 1"),
])
def test_an_unknown_model_language_is_a_config_error(tmp_path: Path, value: str, message: str) -> None:
    file = tmp_path / "vecbook.toml"
    file.write_text(f"embedding_languages = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="^" + re.escape(message.format(f=file))):
        load_config(file)


def test_a_misspelt_key_for_the_model_languages_is_named(tmp_path: Path) -> None:
    file = tmp_path / "vecbook.toml"
    file.write_text('embedding_language = ["english"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(f"unknown config key 'embedding_language' in {file}:1 "
                                                    "(did you mean 'embedding_languages'?)")):
        load_config(file)


def test_the_model_languages_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VECBOOK_EMBEDDING_LANGUAGES", "english,german")
    assert config_without_file().embedding_languages == ("english", "german")
    monkeypatch.setenv("VECBOOK_EMBEDDING_LANGUAGES", "kinglish")
    with pytest.raises(ConfigError, match=re.escape("config key 'embedding_languages' in environment variable "
                                                    "VECBOOK_EMBEDDING_LANGUAGES: unknown language 'kinglish' "
                                                    "(did you mean 'english'?)")):
        config_without_file()


# -- hybrid search leans on keywords for a query the model does not read --

@pytest.fixture(scope="module")
def questions_book(tmp_path_factory: pytest.TempPathFactory, embedder: vecbook.Embedder) -> vecbook.VecBook:
    """Notes in several languages, short chats in Chinese, Russian and Arabic, and a chat of
    lorem-ipsum lines (bench/multilingual.py's second table), with the packaged model."""
    return vecbook.VecBook(data_directory=write_notes(tmp_path_factory.mktemp("questions")), embedder=embedder)


def hits_of(book: vecbook.VecBook, query: str, **options: Any) -> list[tuple[str, float]]:
    return [(hit.citation, hit.similarity_score) for hit in book.search(query, max_results=10, **options)]


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
@pytest.mark.parametrize("query, expected", [(query, expected) for query, expected, _ in QUESTIONS])
def test_a_question_in_a_language_the_model_does_not_read_finds_its_note_first(
        questions_book: vecbook.VecBook, query: str, expected: str, fusion: str) -> None:
    # German, Chinese, Russian and Arabic notes among chats whose text the model cannot read
    # either: by meaning, lorem ipsum and short chat messages lie closer to such a query than the
    # note holding its words (`Steuererklärung Erstattung` put the German note below 10 of them).
    hits = questions_book.search(query, mode="hybrid", fusion=fusion, max_results=5)
    assert hits[0].file_path == f"{expected}.txt", [h.citation for h in hits]


@pytest.fixture(scope="module")
def unlisted_book(tmp_path_factory: pytest.TempPathFactory, embedder: vecbook.Embedder) -> vecbook.VecBook:
    """Indonesian notes and an Indonesian family chat (bench/multilingual.py's third table): a
    language without a function-word list, so its questions are undecided."""
    return vecbook.VecBook(data_directory=write_unlisted(tmp_path_factory.mktemp("unlisted")), embedder=embedder)


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
@pytest.mark.parametrize("query, expected", [(query, expected) for query, expected, _ in UNLISTED_QUESTIONS])
def test_a_question_in_a_language_without_a_word_list_finds_its_note_first(
        unlisted_book: vecbook.VecBook, query: str, expected: str, fusion: str) -> None:
    # The chat's short messages hold one of the question's words each ("Kapan pulang?"): by
    # meaning they lie first, and by keywords nearly as high as the note holding three of them.
    assert vecbook.languages.reads_query(query, ("english",)) is None
    hits = unlisted_book.search(query, mode="hybrid", fusion=fusion, max_results=5)
    assert hits[0].file_path == f"{expected}.txt", [h.citation for h in hits]


def test_the_words_a_record_holds_are_counted_once_each_over_its_passages() -> None:
    index = vecbook.index.KeywordIndex([["kapan", "pulang"], ["pajak", "masuk"], ["restitusi", "pajak"],
                                        ["lorem"]], owners=[0, 1, 1, 2])
    held = vecbook.rank.terms_held(index, ["kapan", "restitusi", "pajak", "masuk"], np.array([0, 1, 2]))
    assert held.tolist() == [1, 3, 0]


@pytest.mark.parametrize("query", [
    "when does the tax refund arrive", "what should I ask the dentist", "🦷 wisdom tooth", "boiler plumber",
    "tax return receipts", "night guard 😬",
])
@pytest.mark.parametrize("fusion", ["linear", "rrf"])
def test_an_english_query_is_fused_as_before(questions_book: vecbook.VecBook, monkeypatch: pytest.MonkeyPatch,
                                             query: str, fusion: str) -> None:
    leaning = hits_of(questions_book, query, fusion=fusion)
    monkeypatch.setattr(vecbook.snapshot_search, "reads_query", lambda text, languages: True)
    assert leaning == hits_of(questions_book, query, fusion=fusion)


def test_a_model_that_reads_every_language_never_leans(questions_book: vecbook.VecBook,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    book = vecbook.VecBook(config=dataclasses.replace(questions_book.config, embedding_languages="all"),
                           embedder=questions_book.embedder)
    assert book.stats()["model_languages"] == ["all"] and questions_book.stats()["model_languages"] == ["english"]
    found = {query: hits_of(book, query) for query, _, _ in QUESTIONS}
    monkeypatch.setattr(vecbook.snapshot_search, "reads_query", lambda text, languages: True)
    assert found == {query: hits_of(questions_book, query) for query, _, _ in QUESTIONS}
    # without the lean, the weight moved with the lists' shapes (one clear keyword match, a flat
    # meaning list) lifts the German query's note to the top two; at the fixed weight it
    # lies lower (first, then lower, on the AMX Xeon; second, then below the fourth, on an AVX2
    # EPYC, whose int8 recipe keeps 7 bits of one operand: close meaning scores move a little)
    def place(hits: list[tuple[str, float]]) -> int:
        return next((i for i, (citation, _) in enumerate(hits) if citation == "de-steuer.txt:1-1"), len(hits))

    shaped = place(found["Steuererklärung Erstattung"])
    monkeypatch.setattr(vecbook.rank, "PEAK_SHIFT", 0.0)
    assert shaped <= 1 and place(hits_of(book, "Steuererklärung Erstattung")) > shaped


def test_semantic_mode_ranks_by_meaning_as_asked(questions_book: vecbook.VecBook,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    found = hits_of(questions_book, "Steuererklärung Erstattung", mode="semantic")
    monkeypatch.setattr(vecbook.snapshot_search, "reads_query", lambda text, languages: False)
    assert hits_of(questions_book, "Steuererklärung Erstattung", mode="semantic") == found


def test_weighted_rrf_keeps_every_core_candidate_above_the_deeper_ones() -> None:
    rank = vecbook.rank
    assert rank.rrf_scores([[1, 2], [2, 1]], 60) == rank.rrf_scores([[1, 2], [2, 1]], 60, [1.0, 1.0])
    assert rank.rrf_scores([[7], [7]], 60, [0.1, 0.9]) == {7: 1.0}
    depth = rank.FUSION_DEPTH
    semantic, keyword = list(range(depth + 50)), list(range(1000, 1000 + depth + 50))
    candidates = np.array(sorted(semantic + keyword))
    for weights in [(1.0, 1.0), (0.1, 0.9)]:
        scores = dict(zip(candidates.tolist(), rank._rrf_within_depth(semantic, keyword, candidates, 60, weights)))
        core = [scores[i] for i in semantic[:depth] + keyword[:depth]]
        deeper = [scores[i] for i in semantic[depth:] + keyword[depth:]]
        assert min(core) > max(deeper) > 0
    leaning = dict(zip(candidates.tolist(), rank._rrf_within_depth(semantic, keyword, candidates, 60, (0.1, 0.9))))
    assert leaning[1000 + depth - 1] > leaning[0]  # the last keyword candidate above the first by meaning


# -- a local multilingual model folder, end to end --

def save_tiny_model(folder: Path, texts: list[str]) -> Path:
    """A tiny multilingual BERT (2 layers, 32 dimensions, random weights) in the
    sentence-transformers layout: transformer files, mean pooling, normalisation, with a
    WordPiece vocabulary of the words and characters of ``texts`` in every script. Random weights
    test the plumbing, not the meaning."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    words = {w for text in texts for w in re.findall(r"\w+", text.lower())}
    characters = {c for text in texts for c in text.lower() if c.isalnum()}
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(words | characters),
                  *sorted(f"##{c}" for c in characters)]
    (folder / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab=str(folder / "vocab.txt"), strip_accents=False).save_pretrained(str(folder))
    torch.manual_seed(34)
    BertModel(BertConfig(vocab_size=len(vocabulary), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(str(folder))
    modules = [("0", "", "Transformer"), ("1", "1_Pooling", "Pooling"), ("2", "2_Normalize", "Normalize")]
    (folder / "modules.json").write_text(json.dumps([
        {"idx": i, "name": name, "path": path, "type": f"sentence_transformers.models.{kind}"}
        for i, (name, path, kind) in enumerate(modules)]), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 32, "pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False,
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}))
    (folder / "2_Normalize").mkdir()
    return folder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")  # nothing may come from a hub: the test makes its model
        return save_tiny_model(tmp_path_factory.mktemp("model") / "tiny-multilingual", list(NOTES.values()))


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's cache folder, apart from the session's (whose models/ holds the packaged
    model's ONNX files alone): its ONNX files are built once for the module."""
    return tmp_path_factory.mktemp("tiny-cache")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = vecbook.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_local_multilingual_model_folder_works_end_to_end(
        tiny_model: Path, tiny_cache: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, embedder: vecbook.Embedder) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("VECBOOK_CACHE_DIRECTORY", str(tiny_cache))
    shutil.copytree(tiny_model, tmp_path / "models" / tiny_model.name)  # the same name: one ONNX build
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("de-steuer", "zh-dentist", "ru-bill", "ar-dentist", "en-tax"):
        (notes / f"{name}.txt").write_text(NOTES[name] + "\n", encoding="utf-8")
    config = tmp_path / "vecbook.toml"
    # A relative model folder resolves against the config file's folder, wherever the command runs.
    config.write_text(f'embedding_model = "models/{tiny_model.name}"\n', encoding="utf-8")
    code, out, err = cli(capsys, "add", str(notes), "--config", str(config))
    assert code == 0 and "  records: 5" in out, err
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    code, out, err = cli(capsys, "reindex", "--config", str(config))
    assert code == 0 and json.loads(out)["embedded"] == 5, err
    for mode, query in [("semantic", "牙医"), ("keyword", "牙医"), ("hybrid", "Steuererklärung Erstattung"),
                        ("hybrid", "счёт за электричество"), ("keyword", "طبيب الأسنان")]:
        code, out, err = cli(capsys, "search", query, "--mode", mode, "--json", "--config", str(config))
        hits = json.loads(out)
        assert code == 0 and hits and all(hit["source"] == "notes" for hit in hits), err
        if mode == "keyword":
            assert hits[0]["file_path"].endswith("-dentist.txt")
    code, out, _ = cli(capsys, "stats", "--json", "--config", str(config))
    stats = json.loads(out)
    model = str((tmp_path / "models" / tiny_model.name).resolve())
    assert (stats["model"], stats["dimensions"], stats["model_languages"]) == (model, 32, ["all"])
    # `auto` gives a model other than the packaged one float32 on onnxruntime, on every CPU
    assert (stats["precision"], stats["runtime"]) == ("float32", "onnxruntime")
    assert stats["cache"]["reused"] == 5 and stats["cache"]["embedded"] == 0  # the reindex's vectors
    # The cache is keyed by the model: the packaged model over the same sources has its own file.
    settings = dataclasses.replace(load_config(config), embedding_model=vecbook.config.DEFAULT_MODEL)
    packaged = vecbook.VecBook(config=settings, embedder=embedder)
    assert packaged.stats()["cache"]["path"] != stats["cache"]["path"]
    assert packaged.stats()["cache"]["embedded"] == 5 and packaged.stats()["model_languages"] == ["english"]


def test_the_onnx_path_embeds_as_sentence_transformers_does(tiny_model: Path, tiny_cache: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from sentence_transformers import SentenceTransformer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = vecbook.Embedder(str(tiny_model), model_cache=tiny_cache / "models")
    texts = [NOTES["zh-dentist"], NOTES["ar-dentist"], "🧾 Steuererklärung", NOTES["ru-bill"]]
    ours = model.encode(texts)
    theirs = SentenceTransformer(str(tiny_model), device="cpu", local_files_only=True).encode(texts)
    assert (model.precision, model.runtime, model.dimension) == ("float32", "onnxruntime", 32)
    assert np.abs(ours - theirs).max() < 1e-4
    assert np.allclose(model.encode_query(texts[0]), theirs[0], atol=1e-4)


def test_a_folder_that_is_not_a_model_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    notes = write_notes(tmp_path)
    for name in [n for n in os.listdir(notes) if n.startswith("chat")]:
        (notes / name).unlink()
    monkeypatch.setenv("VECBOOK_EMBEDDING_MODEL", str(notes))
    code, _, err = cli(capsys, "search", "Steuererklärung", "--data-dir", str(notes))
    assert code == 1
    assert err.splitlines()[-1] == (
        f"vecbook: error: hybrid search is unavailable: embedding_model '{notes}' is a folder but not a "
        "sentence-transformers model (it has no modules.json or config.json): set embedding_model to the folder "
        "a model was saved to (SentenceTransformer.save), or to 'sentence-transformers/all-MiniLM-L6-v2' (the "
        "packaged model); keyword search works without the model: --mode keyword on the command line, "
        'mode="keyword" over MCP and in Python, keyword under Mode on the search page, or search_mode = "keyword" '
        'in vecbook.toml to make it the default')
    code, out, _ = cli(capsys, "search", "Steuererklärung", "--mode", "keyword", "--data-dir", str(notes), "--json")
    assert code == 0 and json.loads(out)[0]["file_path"] == "de-steuer.txt"
    with pytest.raises(ModelNotFoundError, match="is a folder but not a sentence-transformers model"):
        vecbook.Embedder(str(notes)).load()
