"""Markdown notes and Obsidian vaults: a record per heading section, front matter as metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

import vecbook
from vecbook.config import CollectionConfig
from vecbook.exports import detect_format, load_export, markdown
from vecbook.exports.base import Export

from conftest import EXPORTS, FakeEmbedder, cited_lines

VAULTS = EXPORTS / "obsidian"

TRIP = """---
tags: travel, japan planning
aliases: Kyoto trip
date: 2023-09-12
created: 2023-09-01T08:30:00
rating: 4
done: false
people:
  - "[[Steph Ango]]"
nested:
  a: 1
title: ignored
---
Packing first. See [[Packing list|the list]].

# Trip
Arrive in [[Kyoto]] on day one. #kyoto
Links: https://example.com/page#anchor and `#notatag` and [site](https://x.org/#frag).

## Day one
Visit [[Fushimi Inari#Gates]] early.
#### Detail kept inside
Bring water. #food/snacks
```python
# Not a heading
print("[[not a link]]")  # #not_a_tag
```

## Empty heading

### Photos
![[torii.jpg|300]]
"""


def collection(path: Path, name: str = "vault") -> CollectionConfig:
    return CollectionConfig(name=name, path=path, database_label=str(path))


def load(path: Path, name: str = "vault") -> tuple[list[vecbook.Record], list]:
    records, problems, _ = load_export(collection(path, name))
    return records, problems


def test_sections_carry_their_heading_path_lines_and_front_matter(tmp_path: Path) -> None:
    (tmp_path / "Travel").mkdir()
    (tmp_path / "Travel" / "Japan.md").write_text(TRIP, encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.metadata["title"], r.line_number, r.end_line) for r in records] == [
        ("Japan", 14, 14), ("Japan > Trip", 16, 18), ("Japan > Trip > Day one", 20, 27),
        ("Japan > Trip > Empty heading > Photos", 31, 32)]
    preamble, trip, day, photos = records
    assert preamble.text == "Packing first. See the list."
    assert preamble.content == "Japan\nPacking first. See the list."
    assert day.text == ("## Day one\nVisit Fushimi Inari > Gates early.\n#### Detail kept inside\n"
                        "Bring water. #food/snacks\n```python\n# Not a heading\n"
                        "print(\"[[not a link]]\")  # #not_a_tag\n```")
    assert photos.text == "### Photos\n[embed: torii.jpg]"
    assert day.metadata == {
        "aliases": ["Kyoto trip"], "date": "2023-09-12", "created": "2023-09-01T08:30:00", "rating": 4,
        "done": False, "people": ["Steph Ango"], "note": "Japan", "folder": "Travel",
        "tags": ["travel", "japan", "planning", "kyoto", "food/snacks"], "format": "markdown",
        "title": "Japan > Trip > Day one"}
    assert day.citation == "vault/Travel/Japan.md:20-27"
    assert day.id == "vault:Travel/Japan.md#Japan > Trip > Day one"
    assert cited_lines(tmp_path, day)[0] == "## Day one"
    assert cited_lines(tmp_path, day)[-1] == "```"
    at = day.content.index("Bring water")
    assert day.lines_of(at, at + 5) == (23, 23)  # a window inside a long section cites its own line
    assert day.content.endswith(day.text)


def test_headings_and_tags_inside_comment_blocks_start_no_section(tmp_path: Path) -> None:
    # Obsidian hides %% ... %% and <!-- ... --> blocks (a template's instructions, a draft put
    # aside): a "# line" in them is no heading and "#word" no tag, as inside a code fence
    (tmp_path / "Plan.md").write_text(
        "# Plan\nBuy the `%%` kestrel feed. %%inline%% #real\n%%\n# Obsidian comment egret\n#hidden\n%%\n"
        "After the comment.\n<!--\n## HTML comment ibis\n-->\n## Next\nThe heron.\n", encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.metadata["title"], r.line_number, r.end_line) for r in records] == [("Plan", 1, 10),
                                                                                     ("Plan > Next", 11, 12)]
    assert "# Obsidian comment egret" in records[0].text and "## HTML comment ibis" in records[0].text
    assert records[0].metadata["tags"] == ["real"]


def test_obsidian_block_ids_are_not_the_note_s_text(tmp_path: Path) -> None:
    # "^a1b2c3" at a line's end names the block for [[Plan#^a1b2c3]] links; Obsidian shows none of it,
    # but it was text: random words in the index and in every snippet of the line
    (tmp_path / "Plan.md").write_text("# Plan\nBook the ryokan ^a1b2c3\n\n| Day | City |\n| 1 | 京都 |\n\n^table-1\n"
                                      "Keep `x ^code` and 2^10 and E = mc^2.\n", encoding="utf-8")
    [record], problems = load(tmp_path)
    assert problems == []
    assert record.text == "# Plan\nBook the ryokan\n\n| Day | City |\n| 1 | 京都 |\n\n\nKeep `x ^code` and 2^10 and E = mc^2."
    at = record.content.index("Keep")
    assert record.lines_of(at, at + 4) == (8, 8)


def test_wikilinks_embeds_and_tags_in_the_fixtures() -> None:
    records, _ = load(VAULTS / "obsidiantools_frontmatter-edge-cases")
    by_note = {r.metadata["note"]: r for r in records}
    assert by_note["wikilinks_extraction"].text == "A\nB\nsee\ndee\nee\nA"
    assert by_note["wikilinks_exclude-code"].text.count("[['column_name']]") == 2  # code is left alone
    assert by_note["embedded-files_in-body"].text == "[embed: test-image.png]\n[embed: test-audio.flac]"
    stub, _ = load(VAULTS / "obsidiantools_vault-stub")
    sussudio = next(r for r in stub if r.metadata["note"] == "Sussudio")
    assert sussudio.metadata["tags"] == ["y1982", "y_1982", "y-1982", "y1982/sep",
                                         "y2000/party-over/oops/out-of-time"]
    assert (sussudio.metadata["artist"], sussudio.metadata["year"]) == ("Phil Collins", 1985)
    assert sussudio.metadata["title"] == "Sussudio"  # its "# Sussudio" heading repeats the note name


@pytest.mark.parametrize("note, line, reason", [
    ("frontmatter_parse-double-curly.md", 2, "invalid front matter (found unhashable key: a template's {{placeholder}} left unquoted reads as a YAML mapping; quote it or fill it in)"),
    ("invalid-frontmatter_1.md", 6, "invalid front matter (could not find expected ':')"),
])
def test_invalid_front_matter_is_warned_and_the_note_kept_as_text(note: str, line: int, reason: str) -> None:
    records, problems = load(VAULTS / "obsidiantools_frontmatter-edge-cases")
    problem = next(p for p in problems if p.where == f"vault/{note}")
    assert (problem.line, problem.skipped) == (line, False)
    assert reason in problem.reason and "the note is kept as text" in problem.reason
    kept = next(r for r in records if r.file_path == f"vault/{note}")
    assert kept.line_number == 1 and kept.text.startswith("---")


def test_toml_front_matter_between_plus_lines_is_read_as_yaml_s_is(tmp_path: Path) -> None:
    # Hugo's and Zola's pages open with TOML between "+++" lines: it was the note's text, its tags
    # and date unread
    (tmp_path / "Kyoto.md").write_text('+++\ntitle = "Kyoto"\ndate = 2024-03-05T10:30:00+09:00\n'
                                       'tags = ["旅行", "japan"]\ndraft = false\n[params]\nmood = "calm"\n+++\n\n'
                                       "Temples at dawn 🦊.\n", encoding="utf-8")
    (tmp_path / "Bad.md").write_text('+++\ntitle = "Bad"\ndate = \n+++\nBody.\n', encoding="utf-8")
    records, problems = load(tmp_path)
    assert [(p.line, p.reason) for p in problems] == [
        (3, "collection 'vault': invalid front matter (Invalid value); the note is kept as text")]
    bad, kyoto = records
    assert bad.text.startswith("+++\ntitle")
    assert (kyoto.text, kyoto.citation) == ("Temples at dawn 🦊.", "vault/Kyoto.md:10-10")
    assert (kyoto.metadata["date"], kyoto.metadata["tags"], kyoto.metadata["draft"]) == (
        "2024-03-05T10:30:00+09:00", ["旅行", "japan"], False)
    assert "params" not in kyoto.metadata and "mood" not in kyoto.metadata  # (a table: nested, as in YAML)


def test_a_toml_time_of_day_is_kept_as_iso_text_as_yaml_keeps_12_30(tmp_path: Path) -> None:
    # tomllib reads 07:32:00 as a datetime.time, which metadata left out without a word
    (tmp_path / "Wake.md").write_text('+++\nalarm = 07:32:00\nalarms = [06:00:00, 06:30:15.5]\n'
                                      'seen = 2024-03-05T07:32:00\n[extra]\nx = 1\n+++\nUp.\n', encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == [] and records[0].text == "Up."
    metadata = records[0].metadata
    assert (metadata["alarm"], metadata["alarms"], metadata["seen"]) == (
        "07:32:00", ["06:00:00", "06:30:15.500000"], "2024-03-05T07:32:00")
    assert "extra" not in metadata and "x" not in metadata  # (a table: nested, left out as YAML's mappings are)


def test_front_matter_indented_with_a_tab_is_warned_saying_so(tmp_path: Path) -> None:
    # An editor that indents with tabs: PyYAML's "found character that cannot start any token" did
    # not say what to change
    (tmp_path / "Kyoto.md").write_text("---\ntitle: Kyoto\ntags:\n\t- 旅行\n---\nTemples.\n", encoding="utf-8")
    [record], [problem] = load(tmp_path)
    assert (problem.line, problem.reason) == (4, "collection 'vault': invalid front matter (a tab indents this "
                                                 "line, and YAML indents with spaces only: replace the tab with "
                                                 "spaces); the note is kept as text")
    assert record.text.startswith("---\ntitle: Kyoto")


def test_an_impossible_date_in_front_matter_is_warned_and_the_note_keeps_its_properties(tmp_path: Path) -> None:
    (tmp_path / "garden.md").write_text("---\ntags: [garden]\ndate: 2024-02-30\n---\nPlant the tomatoes.\n")
    (record,), problems = load(tmp_path)
    assert [(p.where, p.line, p.reason, p.skipped) for p in problems] == [
        ("vault/garden.md", 3, "collection 'vault': front matter holds an impossible date (day is out of range "
                               "for month); kept as written", False)]
    assert (record.text, record.metadata["date"], record.metadata["tags"]) == ("Plant the tomatoes.", "2024-02-30",
                                                                               ["garden"])


def test_an_excalidraw_drawing_is_read_as_its_text_elements(tmp_path: Path) -> None:
    # Obsidian's Excalidraw plugin: every drawing opened with the same banner (a hit for
    # "drawing", "view", "file"), and its text came with kilobytes of base64 scene data
    scene = "\n\n".join(["N4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7gfgWwqVgANQ" * 5] * 40)
    (tmp_path / "Kitchen plan.excalidraw.md").write_text(
        "---\n\nexcalidraw-plugin: parsed\ntags: [excalidraw, home]\n\n---\n==⚠  Switch to EXCALIDRAW VIEW in the "
        "MORE OPTIONS menu of this document. ⚠== You can decompress Drawing data with the command palette\n\n\n"
        "# Excalidraw Data\n\n## Text Elements\nKitchen layout: sink under the window ^aB3dE9fG\n\n"
        "Fridge moves left\nnext to the [[Pantry]] ^xY7zW2vQ\n\n## Embedded Files\n"
        "0a1b2c3d4e: [[sink photo.png]]\n\n%%\n## Drawing\n```compressed-json\n" + scene + "\n```\n%%",
        encoding="utf-8")
    (tmp_path / "Plain.md").write_text("# Plain\nA note's line ^abc123\n", encoding="utf-8")
    (tmp_path / "Doodle.excalidraw.md").write_text(  # no text at all: no record (not its front matter)
        "---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n---\n# Excalidraw Data\n## Text Elements\n%%\n"
        "## Drawing\n```json\n{\"type\": \"excalidraw\"}\n```\n%%", encoding="utf-8")
    records, problems = load(tmp_path)
    drawing = next(r for r in records if r.file_path.endswith(".excalidraw.md"))
    assert (drawing.text, drawing.citation) == (
        "Kitchen layout: sink under the window\n\nFridge moves left\nnext to the Pantry",
        "vault/Kitchen plan.excalidraw.md:13-16")
    assert drawing.metadata["tags"] == ["excalidraw", "home"] and len(records) == 2 and problems == []
    assert next(r for r in records if r.file_path.endswith("Plain.md")).text == "# Plain\nA note's line"  # (nor a note's)


def test_an_excalidraw_drawing_keeps_the_notes_written_on_its_back(tmp_path: Path) -> None:
    # the plugin's "back of the card": Markdown written under the banner, above the drawing's data
    # (a %% line hides that data in Obsidian's reading view), is the user's own note
    (tmp_path / "Garden.excalidraw.md").write_text(
        "---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n---\n==⚠  Switch to EXCALIDRAW VIEW in the MORE "
        "OPTIONS menu of this document. ⚠== You can decompress Drawing data with the command palette\n\n"
        "# Beds\nTomatoes go in the south bed.\n\n%%\n# Excalidraw Data\n\n## Text Elements\nCompost ^aB3dE9fG\n\n"
        "%%\n## Drawing\n```json\n{\"type\": \"excalidraw\"}\n```\n%%", encoding="utf-8")
    records, problems = load(tmp_path)
    assert [(r.citation, r.text) for r in records] == [
        ("vault/Garden.excalidraw.md:7-8", "# Beds\nTomatoes go in the south bed."),
        ("vault/Garden.excalidraw.md:14-14", "Compost")] and problems == []


def test_front_matter_values_are_read_as_obsidian_shows_them(tmp_path: Path) -> None:
    # PyYAML reads YAML 1.1: a time 12:30 was the number 750 (base 60), and yes, no, on, off
    # booleans, so Norway's code NO was False; Obsidian (YAML 1.2) shows them all as the text written
    (tmp_path / "meeting.md").write_text("---\ntime: 12:30\nstart: 9:05\nlength: 1:30:00.5\npublish: no\n"
                                         "reviewed: Yes\nlamp: on\ncountry: NO\ndone: true\nbig: false\n"
                                         "count: 12\nprice: 3.5\nhex: 0x1F\nzip: 01234\nroom: 0042\nmode: 0o17\n"
                                         "---\nAgenda.\n")
    (tmp_path / "fixed.md").write_text("---\ndate: 2024-02-30\ntime: 12:30\nok: yes\n---\nFixed.\n")
    records, _ = load(tmp_path)
    meeting = next(r for r in records if r.metadata["note"] == "meeting").metadata
    assert {key: meeting[key] for key in ("time", "start", "length", "publish", "reviewed", "lamp", "country", "done",
                                          "big", "count", "price", "hex", "zip", "room", "mode")} == {
        "time": "12:30", "start": "9:05", "length": "1:30:00.5", "publish": "no", "reviewed": "Yes", "lamp": "on",
        "country": "NO", "done": True, "big": False, "count": 12, "price": 3.5, "hex": 31,
        "zip": "01234", "room": "0042", "mode": 15}  # (YAML 1.1's octal made a zip code 01234 the number 668)
    fixed = next(r for r in records if r.metadata["note"] == "fixed").metadata  # read again for its date
    assert (fixed["date"], fixed["time"], fixed["ok"]) == ("2024-02-30", "12:30", "yes")


def test_front_matter_with_an_impossible_date_and_another_fault_is_kept_as_text(tmp_path: Path) -> None:
    # a note made from a template (a placeholder left as a key) with a typo in its date: the
    # note was skipped, its WARN a YAML traceback of four lines
    (tmp_path / "garden.md").write_text("---\ndate: 2024-02-30\n{{title}}: draft\n---\nPlant the tomatoes.\n")
    (record,), problems = load(tmp_path)
    assert [(p.where, p.line, p.reason, p.skipped) for p in problems] == [
        ("vault/garden.md", 3, "collection 'vault': invalid front matter (found unhashable key: a template's "
                               "{{placeholder}} left unquoted reads as a YAML mapping; quote it or fill it in); "
                               "the note is kept as text", False)]
    assert record.text.endswith("Plant the tomatoes.") and record.line_number == 1


@pytest.mark.parametrize("block, reason", [
    # a placeholder as a value, as an unfilled template leaves it: the line at fault says what to do
    ("author: Ovid\ndescription: {{description}}\n", "invalid front matter (found unhashable key: a template's "
     "{{placeholder}} left unquoted reads as a YAML mapping; quote it or fill it in)"),
    # the same fault with no placeholder: YAML's own words alone
    ("author: Ovid\n{a: 1}: x\n", "invalid front matter (found unhashable key); the note is kept as text"),
], ids=["placeholder", "mapping-key"])
def test_an_unhashable_key_in_front_matter_names_the_template_placeholder_at_fault(
        tmp_path: Path, block: str, reason: str) -> None:
    (tmp_path / "Causam mihi.md").write_text(f"---\n{block}---\n# Causam mihi\nText.\n", encoding="utf-8")
    _, (problem,) = load(tmp_path)
    assert problem.line == 3 and reason in problem.reason


def test_front_matter_dates_written_as_text_are_read_or_warned(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ntitle: Trip\ndate: March 5, 2024\n---\nPacked.\n")
    (tmp_path / "b.md").write_text("---\ncreated: 05/03/2024\n---\nUnpacked.\n")
    records, problems = load(tmp_path)
    assert [r.metadata.get("date") for r in records] == ["2024-03-05", "05/03/2024"]
    assert [(p.where, p.line) for p in problems] == [("vault/b.md", 2)]
    assert "created '05/03/2024' is not a date VecBook can read" in problems[0].reason


def test_a_note_that_is_not_utf8_is_warned_where_its_letters_were_lost(tmp_path: Path) -> None:
    (tmp_path / "latin1.md").write_bytes("# Brief\nM\u00fcller sagt\nok\nGr\u00f6\u00dfe\n".encode("latin-1"))
    (record,), problems = load(tmp_path)
    assert [(p.line, p.reason, p.skipped) for p in problems] == [
        (2, "collection 'vault': bytes that are not UTF-8 were replaced by U+FFFD (on 2 lines, the first here); "
            "save the note as UTF-8 to keep its letters", False)]
    assert record.text == "# Brief\nM\ufffdller sagt\nok\nGr\ufffd\ufffde"


def test_front_matter_that_is_not_a_mapping_is_warned(tmp_path: Path) -> None:
    (tmp_path / "list.md").write_text("---\n- a\n- b\n---\nBody text\n")
    records, problems = load(tmp_path)
    assert "front matter is not a mapping of keys to values (it is a list)" in problems[0].reason
    assert problems[0].where == "vault/list.md" and problems[0].line == 2
    assert records[0].text == "---\n- a\n- b\n---\nBody text"


def test_a_note_of_properties_only_is_one_record_of_them() -> None:
    records, problems = load(VAULTS / "kepano-obsidian-vault")
    film = next(r for r in records if r.metadata["note"] == "Blade Runner")
    assert film.citation == "vault/References/Blade Runner.md:2-14"
    assert film.text.splitlines()[:2] == ["categories:", '  - "Movies"']
    assert film.metadata["director"] == ["Ridley Scott"] and film.metadata["last"] == "2023-09-14"
    assert not any(r.file_path.startswith("vault/Templates/") for r in records)  # .obsidian/templates.json
    assert not any("/.obsidian/" in r.file_path for r in records)
    assert [(p.where, p.left_out) for p in problems] == [("vault/Templates", True)]
    daily = next(r for r in records if r.metadata["note"] == "2023-09-12")
    assert daily.metadata["date"] == "2023-09-12"  # a daily note is dated by its name
    for record in records:
        lines = cited_lines(VAULTS / "kepano-obsidian-vault", record)
        assert lines and lines[-1].strip(), record.citation
        assert len(lines) == record.text.count("\n") + 1, record.citation


def test_hidden_folders_and_a_single_file(tmp_path: Path) -> None:
    (tmp_path / ".trash").mkdir()
    (tmp_path / ".trash" / "old.md").write_text("# Old\ngone\n")
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text("{}")
    (tmp_path / "Kept.md").write_text("# Kept\nstill here\n")
    records, problems = load(tmp_path)
    assert [r.citation for r in records] == ["vault/Kept.md:1-2"]
    assert [(str(p), p.left_out) for p in problems] == [  # Obsidian's trash, said
        (f"vault/.trash: collection 'vault': 1 note in Obsidian's trash (.trash); `vecbook add {tmp_path / '.trash'}` "
         "reads it", True)]
    assert detect_format(collection(tmp_path / "Kept.md")) == "markdown"
    assert [r.text for r in load(tmp_path / "Kept.md")[0]] == ["# Kept\nstill here"]


def test_ids_stay_when_another_section_is_added(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("# A\none\n## B\ntwo\n")
    before = [r.id for r in load(tmp_path)[0]]
    (tmp_path / "n.md").write_text("intro\n# A\none\n## New\nnew\n## B\ntwo\n")
    after = [r.id for r in load(tmp_path)[0]]
    assert set(before) <= set(after)


def test_detection_knows_vaults_and_nothing_else() -> None:
    for vault in ("kepano-obsidian-vault", "obsidiantools_frontmatter-edge-cases", "obsidiantools_vault-stub"):
        assert detect_format(collection(VAULTS / vault)) == "markdown"
    assert detect_format(collection(VAULTS)) == "markdown"
    for other in sorted(p for p in EXPORTS.iterdir() if p.is_dir() and p.name != "obsidian"):
        export = Export("x", other, str(other))
        assert not markdown.detect(export), other  # no double match with another format's export


def test_a_vault_with_a_binary_file_under_a_note_s_name_is_still_a_vault(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")  # a picture saved as a note
    (tmp_path / "b.md").write_text("# Plans\nVisit Kyoto.\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("Grocery list\n", encoding="utf-16")  # Notepad's "Unicode": text all the same
    assert detect_format(collection(tmp_path)) == "markdown"
    (tmp_path / "c.md").write_bytes(b"Grocery list\n" + b"\x00" * 512)  # padded by a crash: text too
    assert markdown.detect(Export("vault", tmp_path, str(tmp_path)))
    (tmp_path / "b.md").write_bytes(b"\x00\x01")
    assert not markdown.detect(Export("vault", tmp_path, str(tmp_path)))  # mostly not text: no vault


def test_notes_are_filtered_by_tags_and_dates(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("unrelated note\n")
    (tmp_path / "vault" / "Travel").mkdir(parents=True)
    (tmp_path / "vault" / "Travel" / "Japan.md").write_text(TRIP, encoding="utf-8")
    (tmp_path / "vault" / "Other.md").write_text("---\ntags: [work]\ndate: 2020-01-01\n---\nWater the plants.\n")
    (tmp_path / "vecbook.toml").write_text(
        f'data_directory = "notes"\n[[collections]]\nname = "vault"\npath = "{tmp_path / "vault"}"\n')
    book = vecbook.VecBook(config=vecbook.load_config(tmp_path / "vecbook.toml"), embedder=FakeEmbedder())
    hits = book.search("water", mode="keyword", filters={"tags__contains": "food/snacks"})
    assert [h.metadata["title"] for h in hits] == ["Japan > Trip > Day one"]
    hits = book.search("water", mode="keyword", filters={"date__lt": "2023-01-01", "folder__exists": False})
    assert [h.citation for h in hits] == ["vault/Other.md:5-5"]
    facts = book.stats()["collections"]["vault"]  # a folder of notes, without format: read file by file
    assert (facts["format"], facts["kinds"]) == ("notes", {"markdown": 2})


def test_a_zipped_vault_with_many_attachments_is_still_notes(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "vault.zip", "w") as archive:
        archive.writestr("Vault/Notes/Plan.md", "# Plan\nShip it. #work\n")
        for number in range(5):
            archive.writestr(f"Vault/Attachments/photo{number}.png", b"\x89PNG")
    assert detect_format(collection(tmp_path / "vault.zip")) == "markdown"
    (record,), problems = load(tmp_path / "vault.zip")
    assert record.citation == "vault/vault.zip!/Vault/Notes/Plan.md:1-2"
    assert (record.metadata["folder"], record.metadata["tags"]) == ("Vault/Notes", ["work"])
    assert cited_lines(tmp_path / "vault.zip", record) == ["# Plan", "Ship it. #work"]


def test_joplin_front_matter_dates_as_text_or_milliseconds_date_the_note(tmp_path: Path) -> None:
    # Joplin's "MD - Markdown + Front Matter" export writes created/updated as UTC text; its API
    # and tools built on it write created_time/updated_time as milliseconds since 1970, or ISO.
    (tmp_path / "Trip to Kraków.md").write_text(
        "---\ntitle: Trip to Kraków\nupdated: 2021-03-21 16:22:39Z\ncreated: 2021-03-21 16:20:56Z\n"
        "tags:\n  - travel\n---\n\nBook the train.\n", encoding="utf-8")
    (tmp_path / "ms.md").write_text("---\ntitle: ms\ncreated_time: 1616343656000\nupdated_time: 1616343759123\n"
                                    "---\n\nTimes in milliseconds.\n")
    (tmp_path / "iso.md").write_text("---\ntitle: iso\ncreated_time: 2021-03-21T16:20:56.000Z\n---\n\nTimes as text.\n")
    records, problems = load(tmp_path)
    assert problems == []
    dated = {r.metadata["note"]: (r.metadata.get("date"), r.metadata.get("updated_time")) for r in records}
    assert dated == {"Trip to Kraków": ("2021-03-21T16:20:56+00:00", None),
                     "ms": ("2021-03-21T16:20:56+00:00", "2021-03-21T16:22:39+00:00"),
                     "iso": ("2021-03-21T16:20:56+00:00", None)}


JOPLIN_PROPERTIES = """id: {id}
parent_id: {parent}
created_time: 2021-03-21T16:20:56.123Z
updated_time: 2021-03-22T08:00:00.000Z
is_conflict: 0
latitude: 50.06465010
longitude: 19.94497990
altitude: 0.0000
author: 
source_url: 
is_todo: 0
todo_due: 0
todo_completed: 0
source: joplin-desktop
source_application: net.cozic.joplin-desktop
application_data: 
order: 0
user_created_time: 2021-03-20T10:00:00.000Z
user_updated_time: 2021-03-22T08:00:00.000Z
encryption_cipher_text: 
encryption_applied: 0
markup_language: 1
is_shared: 0
type_: {type}"""


def test_a_joplin_raw_export_is_its_notes_dated_and_cited_at_their_lines(tmp_path: Path) -> None:
    # The RAW export (and the JEX archive, a tar of it): one <id>.md an item, a note's title on
    # its first line, its body, a blank line, then its properties ending "type_: 1". Notebooks
    # (type_ 2), resources (4) and tags (5, 6) are files of the same shape.
    note, book = "8a3b3e1c2d4f4a5b9c8d7e6f5a4b3c2d", "5f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c"
    (tmp_path / f"{note}.md").write_text(
        "Trip to Kraków\n\nBook the train.\n\n## Hotel\nNear the Rynek.\n\n"
        + JOPLIN_PROPERTIES.format(id=note, parent=book, type=1) + "\n", encoding="utf-8")
    (tmp_path / f"{book}.md").write_text("Travel\n\n" + JOPLIN_PROPERTIES.format(id=book, parent="", type=2))
    (tmp_path / "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f.md").write_text(
        "travel\n\n" + JOPLIN_PROPERTIES.format(id="0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", parent="", type=5))
    records, problems = load(tmp_path)
    assert problems == []
    assert [(r.metadata["title"], r.text, r.citation) for r in records] == [
        ("Trip to Kraków", "Book the train.", f"vault/{note}.md:3-3"),
        ("Trip to Kraków > Hotel", "## Hotel\nNear the Rynek.", f"vault/{note}.md:5-6")]
    assert records[0].metadata["date"] == "2021-03-20T10:00:00+00:00"  # the time the user gave it
    assert records[0].metadata["updated"] == "2021-03-22T08:00:00+00:00"
    assert records[0].metadata["note"] == "Trip to Kraków"
    assert not any("is_conflict" in r.text or "type_" in r.text for r in records)


def test_a_joplin_raw_note_is_in_its_notebook_s_path_and_follows_a_renamed_notebook(tmp_path: Path) -> None:
    # The JEX reader named a note's notebook (folder "Personal/Travel"); the RAW export's notes,
    # the same items unpacked, had no folder, so --filter folder=... found none of them.
    import os

    from vecbook.config import Config
    from vecbook.source_state import SourceState
    from vecbook.sources import load_sources

    note, book, parent = "a" * 32, "b" * 32, "c" * 32
    item = JOPLIN_PROPERTIES.format
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / f"{note}.md").write_text("Viaje a Kraków\n\nReservar el tren 🚆.\n\n" + item(id=note, parent=book, type=1),
                                    encoding="utf-8")
    (raw / f"{book}.md").write_text("Travel/Trips\n\n" + item(id=book, parent=parent, type=2), encoding="utf-8")
    (raw / f"{parent}.md").write_text("Personal 🏠\n\n" + item(id=parent, parent="", type=2), encoding="utf-8")
    for path in raw.iterdir():  # written long ago: settled, so unchanged ones are not read again
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    [record], _ = load(raw)  # the export read whole
    assert record.metadata["folder"] == "Personal 🏠/Travel∕Trips"  # (a "/" in a title is no folder)
    config = Config(data_directory=None,
                    collections=[CollectionConfig(name="raw", path=raw, database_label="raw", format="notes")])
    state = SourceState()
    assert [r.metadata["folder"] for r in load_sources(config, state).records] == ["Personal 🏠/Travel∕Trips"]
    (raw / f"{parent}.md").write_text("Privado\n\n" + item(id=parent, parent="", type=2), encoding="utf-8")
    os.utime(raw / f"{parent}.md", ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    assert [r.metadata["folder"] for r in load_sources(config, state).records] == ["Privado/Travel∕Trips"]


def test_a_joplin_note_in_the_trash_is_no_record_and_is_said_to_be_left_out(tmp_path: Path) -> None:
    # Joplin 3 keeps a deleted note in its trash, its items (a sync target's folder is the RAW
    # format too) written with the time it was deleted; a live note's deleted_time is 0 or empty.
    # It was left out without a word: a person looking for it never learnt where it went.
    for name, deleted, title in (("1" * 32, "2024-05-01T09:00:00.000Z", "Lighthouse hotel"),
                                 ("2" * 32, "0", "Lighthouse tour"), ("3" * 32, "", "Lighthouse photos")):
        (tmp_path / f"{name}.md").write_text(
            f"{title}\n\nBody of {title}\n\n" + JOPLIN_PROPERTIES.format(id=name, parent="", type=1).replace(
                "type_:", f"deleted_time: {deleted}\ntype_:"), encoding="utf-8")
    records, problems = load(tmp_path)
    assert [r.text for r in records] == ["Body of Lighthouse tour", "Body of Lighthouse photos"]
    assert [(str(p), p.left_out) for p in problems] == [
        (f"vault/{'1' * 32}.md: collection 'vault': 'Lighthouse hotel', a note in Joplin's trash; to search it, "
         "set include_spam_and_trash = true in this collection's table", True)]
    records, problems, _ = load_export(CollectionConfig(name="vault", path=tmp_path, database_label="vault",
                                                        include_spam_and_trash=True))
    assert (len(records), problems) == (3, [])


def test_a_textbundle_is_its_note_named_by_the_bundle(tmp_path: Path) -> None:
    # Bear (and Ulysses, iA Writer) export a note as a TextBundle, a folder "Trip plan.textbundle"
    # holding text.markdown (or text.md) and its assets: every such note was named "text"
    bundle = tmp_path / "Reisen" / "Trip plan.textbundle"
    (bundle / "assets").mkdir(parents=True)
    (bundle / "info.json").write_text('{"version": 2, "creatorIdentifier": "net.shinyfrog.bear"}')
    (bundle / "text.markdown").write_text("# Trip plan\n\nVisit Kraków in May. #travel\n", encoding="utf-8")
    [record], problems = load(tmp_path)
    assert problems == []
    assert (record.metadata["note"], record.metadata["folder"], record.metadata["title"], record.citation) == (
        "Trip plan", "Reisen", "Trip plan", "vault/Reisen/Trip plan.textbundle/text.markdown:1-3")


def jex(path: Path, items: dict[str, str]) -> Path:
    """A JEX archive as Joplin writes it (File > Export all > JEX): a tar of the RAW export."""
    import io
    import tarfile

    with tarfile.open(path, "w") as archive:
        for name, text in items.items():
            data = text.encode("utf-8")
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return path


def test_a_joplin_jex_archive_is_read_in_place_its_notes_in_their_notebooks(tmp_path: Path) -> None:
    # A .jex was not read at all (the docs said to unpack it first): it is read from the archive,
    # nothing written beside it, each note cited as the archive's member, in its notebook's path
    note, trashed, book, parent = "a" * 32, "b" * 32, "c" * 32, "d" * 32
    item = JOPLIN_PROPERTIES.format
    archive = jex(tmp_path / "Joplin 2024.jex", {
        f"{note}.md": "Viaje a Kraków\n\nReservar el tren 🚆.\n\n" + item(id=note, parent=book, type=1),
        f"{trashed}.md": "Old plan\n\nThrown away.\n\n" + item(id=trashed, parent=book, type=1).replace(
            "type_:", "deleted_time: 2024-05-01T09:00:00.000Z\ntype_:"),
        f"{book}.md": "Viajes\n\n" + item(id=book, parent=parent, type=2),
        f"{parent}.md": "Personal\n\n" + item(id=parent, parent="", type=2),
        "resources/0123456789abcdef0123456789abcdef.png": "\x89PNG",
    })
    records, problems = load(archive)
    assert [(r.metadata["title"], r.text, r.citation, r.metadata["folder"]) for r in records] == [
        ("Viaje a Kraków", "Reservar el tren 🚆.", f"vault/Joplin 2024.jex!/{note}.md:3-3", "Personal/Viajes")]
    assert records[0].metadata["date"] == "2021-03-20T10:00:00+00:00"
    assert [(str(p), p.left_out) for p in problems] == [
        (f"vault/Joplin 2024.jex!/{trashed}.md: collection 'vault': 'Old plan', a note in Joplin's trash; to "
         "search it, set include_spam_and_trash = true in this collection's table", True)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Joplin 2024.jex"]  # nothing unpacked beside it
    _, problems = vecbook.sources.load_file(archive.name, archive)  # in the data folder, which has no table
    assert [p.reason for p in problems] == ["'Old plan', a note in Joplin's trash; to search it, add the archive as "
                                            "a source of its own (vecbook add PATH) and set include_spam_and_trash = "
                                            "true in its table"]
    (tmp_path / "Trip.md").write_text("# Trip\nPack light.\n")  # in a notes folder, beside notes, too
    records, _, facts = vecbook.sources.load_export(CollectionConfig(name="vault", path=tmp_path,
                                                                     database_label="vault", format="notes"))
    assert [r.citation for r in records] == [f"vault/Joplin 2024.jex!/{note}.md:3-3", "vault/Trip.md:1-2"]
    assert facts["kinds"] == {"markdown": 1, "jex": 1}


def test_a_logseq_journal_is_dated_by_its_file_name(tmp_path: Path) -> None:
    # Logseq names its journal pages yyyy_MM_dd (Obsidian's daily notes are YYYY-MM-DD)
    (tmp_path / "journals").mkdir()
    (tmp_path / "journals" / "2024_03_05.md").write_text("- Met [[Ana]] for coffee at Café Lumière #coffee\n",
                                                         encoding="utf-8")
    (tmp_path / "journals" / "2024_13_05.md").write_text("- not a day\n")
    (tmp_path / "2024-03-06.md").write_text("Daily note.\n")
    records, problems = load(tmp_path)
    assert problems == []
    assert {r.metadata["note"]: r.metadata.get("date") for r in records} == {
        "2024_03_05": "2024-03-05", "2024_13_05": None, "2024-03-06": "2024-03-06"}


def test_logseq_page_properties_are_metadata(tmp_path: Path) -> None:
    # Logseq writes a page's properties as its first lines, "key:: value" (no YAML front matter);
    # tags and alias are lists, written with commas, [[links]] or #tags.
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "Ana Lopez.md").write_text(
        "title:: Ana Lopez\ntags:: [[people]], #friends\nalias:: Ana, Anita\ntype:: person\n\n"
        "- Works at [[Acme]]\n- Birthday: [[Jun 12th, 1990]]\n", encoding="utf-8")
    (tmp_path / "pages" / "plain.md").write_text("Ratio:: 3\nnot a property line\n")
    # code's "::" is no property: Logseq writes a space after it
    (tmp_path / "pages" / "std.md").write_text("Vector::reserve avoids reallocation\n\n- std::move too\n")
    records, problems = load(tmp_path)
    assert problems == []
    ana, plain, code = records
    assert code.text == "Vector::reserve avoids reallocation\n\n- std::move too" and "Vector" not in code.metadata
    assert ana.text == "- Works at Acme\n- Birthday: Jun 12th, 1990"
    assert ana.citation == "vault/pages/Ana Lopez.md:6-7"
    assert (ana.metadata["tags"], ana.metadata["aliases"], ana.metadata["type"]) == (
        ["people", "friends"], ["Ana", "Anita"], "person")
    assert plain.text == "Ratio:: 3\nnot a property line"  # properties are a page's first block only


def logseq_graph(root: Path) -> Path:
    """A Logseq graph: its pages and journals, and its ``logseq`` folder, where the app keeps its
    config and, in ``bak`` and ``version-files``, copies of pages it saved over."""
    for rel, text in {"pages/Recipes.md": "- Shakshuka\n  - tomatoes, peppers, eggs\n",
                      "journals/2024_12_03.md": "- Booked the boiler service\n",
                      "logseq/config.edn": "{:meta/version 1}\n", "logseq/custom.css": "",
                      "logseq/bak/pages/Recipes/2024-12-03T10_10_10.000Z.Desktop.md": "- Shakshuka\n",
                      "logseq/version-files/base/pages/Recipes.md": "- Shakshuka\n  - tomatoes, peppers, eggs\n"
                      }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def referencing_graph(root: Path) -> Path:
    """A Logseq graph whose pages reference and embed blocks of other pages (``((uuid))``,
    ``{{embed ((uuid))}}``), one a block no page holds; the referenced blocks carry ``id::``."""
    logseq_graph(root)
    pages = {
        "pages/Recipes.md": "- Shakshuka\n  - tomatoes, peppers, eggs\n    id:: 64f0c1e2-1111-4a5b-9c8d-0123456789ab\n"
                            "- 北京烤鸭 needs a whole day\n  collapsed:: true\n  id:: 64f0c1e2-2222-4a5b-9c8d-0123456789ab\n",
        "pages/مطبخ.md": "- وصفة الحمص بالطحينة\n  id:: 64f0c1e2-3333-4a5b-9c8d-0123456789ab\n",
        "journals/2024_12_04.md": "- Shopping for ((64f0c1e2-1111-4a5b-9c8d-0123456789ab))\n"
                                  "- {{embed ((64f0c1e2-2222-4a5b-9c8d-0123456789ab))}}\n"
                                  "- Arabic: ((64f0c1e2-3333-4a5b-9c8d-0123456789ab))\n"
                                  "- Gone: ((64f0c1e2-9999-4a5b-9c8d-0123456789ab)) and {{embed ((64f0c1e2-9999-4a5b-9c8d-0123456789ab))}}\n",
        # the app's backup of a page it saved over holds the same id with the block's older text
        "logseq/bak/pages/Recipes/2024-12-01T10_10_10.000Z.Desktop.md":
            "- Shakshuka\n  - tomatoes only\n    id:: 64f0c1e2-1111-4a5b-9c8d-0123456789ab\n",
    }
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


REFERENCES_READ = ("- Shopping for tomatoes, peppers, eggs\n- 北京烤鸭 needs a whole day\n- Arabic: وصفة الحمص بالطحينة\n"
                   "- Gone: [block] and [embed: block]")


def test_logseq_block_references_and_embeds_read_as_the_blocks_text(tmp_path: Path) -> None:
    # ((uuid)) shows the referenced block's text in Logseq: indexed as a uuid, the journal's line
    # was "Shopping for ((64f0c1e2-...))", found by no word of the block and shown so in snippets
    records, problems = load(referencing_graph(tmp_path / "graph"))
    assert problems == []
    [journal] = [r for r in records if r.metadata["note"] == "2024_12_04"]
    assert journal.text == REFERENCES_READ
    assert journal.citation == "vault/journals/2024_12_04.md:1-4"


def test_a_notes_folder_read_gathers_its_graph_s_blocks_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each note holding a reference walked and stat'ed the whole graph: 500 journals over 3,000
    # pages took 2 minutes and a half to read instead of 5 s
    from vecbook.config import CollectionConfig
    from vecbook.exports import logseq
    from vecbook.sources import load_export

    graph = referencing_graph(tmp_path / "graph")
    for day in range(5, 9):
        (graph / "journals" / f"2024_12_0{day}.md").write_text("- again ((64f0c1e2-1111-4a5b-9c8d-0123456789ab))\n")
    walks: list[Path] = []
    walk = logseq._disk_graph_blocks
    monkeypatch.setattr(logseq, "_disk_graph_blocks", lambda root: walks.append(root) or walk(root))
    records, _, _ = load_export(CollectionConfig(name="graph", path=graph, database_label="graph", format="notes"))
    assert walks == [graph]
    assert sum(r.text == "- again tomatoes, peppers, eggs" for r in records) == 4


def test_a_page_s_blocks_are_gathered_in_one_pass_over_its_lines() -> None:
    # each id:: line looked back over the page's lines for its bullet: a long page whose blocks no
    # "- " bullet opens (written by another tool, "* " outlines) took 16 s for 20,000 lines
    import time

    from vecbook.exports import logseq

    lines = ["* item", "  id:: 64f0c1e2-1111-4a5b-9c8d-0123456789ab"] * 20_000
    started = time.perf_counter()
    assert logseq.block_texts(lines) == {}
    assert time.perf_counter() - started < 1.0
    page = ["- Shakshuka", "  tomatoes", "  collapsed:: true", "  id:: 64f0c1e2-1111-4a5b-9c8d-0123456789ab",
            "  - eggs", "    id:: 64f0c1e2-2222-4a5b-9c8d-0123456789ab", "- 北京烤鸭", "\tid:: 64f0c1e2-3333-4a5b-9c8d-0123456789ab"]
    assert logseq.block_texts(page) == {"64f0c1e2-1111-4a5b-9c8d-0123456789ab": "Shakshuka tomatoes",
                                        "64f0c1e2-2222-4a5b-9c8d-0123456789ab": "eggs",
                                        "64f0c1e2-3333-4a5b-9c8d-0123456789ab": "北京烤鸭"}


def test_a_logseq_page_embed_reads_as_an_obsidian_embed_does(tmp_path: Path) -> None:
    # {{embed [[page]]}} shows the page inside the block; its braces and "embed" are no words
    (tmp_path / "journals").mkdir()
    (tmp_path / "journals" / "2024_12_05.md").write_text("- {{embed [[東京]]}}\n- {{embed [[Recipes|food]]}} later\n",
                                                         encoding="utf-8")
    [journal], problems = load(tmp_path)
    assert problems == [] and journal.text == "- [embed: 東京]\n- [embed: Recipes] later"


def test_logseq_block_references_read_as_text_in_a_notes_folder_too(tmp_path: Path) -> None:
    # a notes folder reads file by file: the referenced block is in another file of the graph
    from vecbook.config import CollectionConfig
    from vecbook.sources import load_export

    graph = referencing_graph(tmp_path / "graph")
    records, problems, _ = load_export(CollectionConfig(name="graph", path=graph, database_label="graph",
                                                        format="notes"))
    assert problems == []
    [journal] = [r for r in records if r.metadata["note"] == "2024_12_04"]
    assert journal.text == REFERENCES_READ


def test_a_page_referencing_a_block_shows_its_new_text_once_only_the_block_s_page_changed(tmp_path: Path) -> None:
    # a notes folder reads again only the files that changed: the journal showing the block kept
    # its former text ("tomatoes, peppers, eggs") until the journal itself changed
    import os

    from vecbook.config import Config, CollectionConfig
    from vecbook.source_state import SourceState
    from vecbook.sources import load_sources

    graph = referencing_graph(tmp_path / "graph")
    for note in graph.rglob("*.md"):  # written long ago: settled, so unchanged ones are not read again
        os.utime(note, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    config = Config(data_directory=None,
                    collections=[CollectionConfig(name="graph", path=graph, database_label="graph", format="notes")])
    state = SourceState()

    def journal() -> str:
        report = load_sources(config, state)
        return next(r.text for r in report.records if r.metadata["note"] == "2024_12_04")

    assert journal() == REFERENCES_READ
    recipes = graph / "pages" / "Recipes.md"
    recipes.write_text(recipes.read_text(encoding="utf-8").replace("tomatoes, peppers, eggs", "tomates y huevos"),
                       encoding="utf-8")
    os.utime(recipes, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # settled, and a change of mtime
    assert journal() == REFERENCES_READ.replace("tomatoes, peppers, eggs", "tomates y huevos")
    (graph / "pages" / "Other.md").write_text("- a page holding no block id\n", encoding="utf-8")
    assert journal().startswith("- Shopping for tomates y huevos")  # (a page without ids changes nothing)
    recipes.unlink()  # the block gone: its references read as one the graph does not hold
    assert journal().startswith("- Shopping for [block]\n")


def test_a_logseq_graph_s_own_folder_is_not_read(tmp_path: Path) -> None:
    # Logseq keeps copies of pages in logseq/bak and logseq/version-files (up to ten a page, more
    # when a sync tool and the app disagree): read as notes, a page came back up to three times,
    # the backup cited first. A "logseq" folder without the app's config.edn is notes.
    records, problems = load(logseq_graph(tmp_path / "graph"))
    assert problems == []
    assert sorted(r.citation for r in records) == ["vault/journals/2024_12_03.md:1-1", "vault/pages/Recipes.md:1-2"]
    # a page deleted in Logseq goes to logseq/.recycle: left out, and said so (it was without a word)
    graph = tmp_path / "graph"
    (graph / "logseq" / ".recycle").mkdir()
    (graph / "logseq" / ".recycle" / "pages_Boiler.md").write_text("- Boiler manual\n")
    said = (f"vault/logseq/.recycle: collection 'vault': 1 note in Logseq's recycle bin (logseq/.recycle); "
            f"`vecbook add {graph / 'logseq' / '.recycle'}` reads it")
    for fmt in ("markdown", "notes"):
        records, problems, _ = vecbook.sources.load_export(CollectionConfig(name="vault", path=graph,
                                                                            database_label="vault", format=fmt))
        assert len(records) == 2 and [(str(p), p.left_out) for p in problems] == [(said, True)], fmt
    (tmp_path / "notes" / "logseq").mkdir(parents=True)
    (tmp_path / "notes" / "logseq" / "Logseq vs Obsidian.md").write_text("# Which one\nOutliner or files.\n")
    records, _ = load(tmp_path / "notes")
    assert [r.citation for r in records] == ["vault/logseq/Logseq vs Obsidian.md:1-2"]


def test_a_logseq_page_is_named_by_its_title_property(tmp_path: Path) -> None:
    # Logseq's file names encode what a file cannot hold: the namespaced page "projects/garden" is
    # "projects___garden.md" (or "projects%2Fgarden.md" in older graphs), and the page's name is
    # then written in its "title::" property. Its sections were titled "projects___garden".
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "projects___garden.md").write_text(
        "title:: projects/garden\ntags:: gardening\n\n- Raised beds along the south fence\n", encoding="utf-8")
    (tmp_path / "pages" / "What%3F.md").write_text("title:: What?\n\n- A page named with a question mark\n",
                                                    encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == []
    assert sorted((r.metadata["note"], r.metadata["title"], r.citation) for r in records) == [
        ("What?", "What?", "vault/pages/What%3F.md:3-3"),
        ("projects/garden", "projects/garden", "vault/pages/projects___garden.md:4-4")]
    assert all(r.content.startswith(r.metadata["title"] + "\n") for r in records)  # embedded by it


def test_logseq_s_own_block_properties_are_not_a_note_s_text(tmp_path: Path) -> None:
    # Logseq writes "id:: <uuid>" under a block another one references and "collapsed:: true"
    # under one folded in its outline: the app's bookkeeping, which filled snippets and the
    # embedded text with uuids. Other block properties, Dataview's inline fields too, are words.
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "garden.md").write_text(
        "- Raised beds along the south fence\n  id:: 6578a1b2-1c2d-4e5f-8a9b-0c1d2e3f4a5b\n  collapsed:: true\n"
        "\t- Fill with compost and topsoil\n\t  collapsed:: false\n- Order rhubarb crowns\n  rating:: 5\n",
        encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == []
    [garden] = records
    assert garden.text == ("- Raised beds along the south fence\n\t- Fill with compost and topsoil\n"
                           "- Order rhubarb crowns\n  rating:: 5")
    at = garden.content.index("Fill")
    assert garden.lines_of(at, at + 4) == (4, 4) and garden.citation == "vault/pages/garden.md:1-7"


def test_a_notion_export_is_named_without_its_ids_and_dated_by_its_properties(tmp_path: Path) -> None:
    # Notion's "Markdown & CSV" export: each page and folder name ends with the page's 32-digit
    # id; a database page opens with "# Title", a blank line, then "Property: value" lines.
    folder = tmp_path / "Projekte 0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    folder.mkdir()
    (folder / "Q2 planning 8f3e1c2d4b5a69788796a5b4c3d2e1f0.md").write_text(
        "# Q2 planning\n\nCreated: March 5, 2024 10:30 AM\nTags: planning, work\nStatus: Done\n"
        "Dates: May 1, 2024 → May 3, 2024\n\nWe agreed to ship the beta in May.\n", encoding="utf-8")
    (folder / "Notizen 1f3e1c2d4b5a69788796a5b4c3d2e1f0.md").write_text(
        "# Notizen\n\nEin Satz: kein Property.\n", encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == []
    notes, plan = records
    assert (plan.metadata["note"], plan.metadata["folder"], plan.metadata["title"]) == (
        "Q2 planning", "Projekte", "Q2 planning")
    assert plan.metadata["date"] == "2024-03-05T10:30:00"
    assert (plan.metadata["tags"], plan.metadata["Status"]) == (["planning", "work"], "Done")
    assert plan.metadata["Dates"] == "2024-05-01"
    assert plan.citation == "vault/Projekte 0a1b2c3d4e5f60718293a4b5c6d7e8f9/Q2 planning 8f3e1c2d4b5a69788796a5b4c3d2e1f0.md:1-8"
    assert notes.metadata["note"] == "Notizen" and "Ein Satz" not in notes.metadata


def test_a_notion_page_s_links_read_as_the_pages_they_name_without_their_ids(tmp_path: Path) -> None:
    # Notion links a page to another by its file's path, URL-encoded, each name ending with a page id
    # ("[Trip](Notes%20<id>/Trip%20<id>.md)"), and writes a relation property as such paths: the ids
    # and "%20"s were the note's text, in its snippet, and a heading's link was in its title.
    page, notes, trip, tasks = "1" * 32, "2" * 32, "3" * 32, "4" * 32
    (tmp_path / f"Kraków {page}.md").write_text(
        f"# Kraków\n\nCreated: March 5, 2024 10:30 AM\n"
        f"Related: ../Notes%20{notes}/Trip%20plan%20{trip}.md, ../Notes%20{notes}/Z%C3%BCrich%20{tasks}.md\n\n"
        f"See [the trip plan](Notes%20{notes}/Trip%20plan%20{trip}.md) and [Tasks](Tasks%20{tasks}.csv), "
        "or [the city site](https://www.krakow.pl/) and `[code](x%20" + "5" * 32 + ".md)`.\n\n"
        f"## [Hotels 🏨](Notes%20{notes}/Hotels%20{trip}.md)\nNear the Rynek.\n", encoding="utf-8")
    records, problems = load(tmp_path)
    assert problems == []
    top, hotels = records
    assert top.text == ("# Kraków\n\nCreated: March 5, 2024 10:30 AM\nRelated: Trip plan, Zürich\n\n"
                        "See the trip plan and Tasks, or [the city site](https://www.krakow.pl/) and "
                        "`[code](x%20" + "5" * 32 + ".md)`.")
    assert top.metadata["Related"] == "Trip plan, Zürich"
    assert (hotels.metadata["title"], hotels.text) == ("Kraków > Hotels 🏨", "## Hotels 🏨\nNear the Rynek.")


@pytest.mark.parametrize(("written", "read"), [
    ("March 5, 2024 10:30 AM", "2024-03-05T10:30:00"), ("2024/03/05", "2024-03-05"),
    # Notion writes Month/Day/Year or Day/Month/Year as the user chose: a day past 12 says which
    ("25/03/2024", "2024-03-25"), ("03/25/2024", "2024-03-25"), ("05/05/2024", "2024-05-05"),
    ("03/05/2024", None),  # March 5 or May 3: kept as written, as other notes' dates are
])
def test_a_notion_date_is_read_only_where_it_says_which_day(written: str, read: str | None) -> None:
    from vecbook.exports.notion import notion_date

    assert notion_date(written) == read


def test_bear_tags_with_spaces_and_emoji_are_whole(tmp_path: Path) -> None:
    # Bear closes a tag that holds spaces with a second '#' ("#family dinner#"), and a tag may
    # start with an emoji; nested tags stay whole as in Obsidian.
    (tmp_path / "Rezept Käsespätzle.md").write_text(
        "# Rezept: Käsespätzle\n\n#kochen/rezepte #family dinner# #📚books #2024 and #1 or #a b\n\n"
        "Zwiebeln goldbraun rösten. Issue #42 is not a tag.\n", encoding="utf-8")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.metadata["tags"] == ["kochen/rezepte", "family dinner", "📚books", "a"]


def test_a_language_named_with_a_sharp_does_not_close_a_tag(tmp_path: Path) -> None:
    # C#, F#, J#: the '#' after a one-letter word is the language's, not the end of a tag with
    # spaces, so "#dotnet code to F#" is the tag dotnet and the sentence stays words.
    (tmp_path / "dev log.md").write_text(
        "Ported #dotnet code to F# today 🚀\nLearning #csharp with C#. Also #family dinner# at 8\n",
        encoding="utf-8")
    (record,), problems = load(tmp_path)
    assert problems == []
    assert record.metadata["tags"] == ["dotnet", "csharp", "family dinner"]


def test_a_line_of_markup_alone_is_no_passage_of_its_own(tmp_path: Path) -> None:
    """A blockquote's empty ``>`` line between long paragraphs, a rule, a code fence: each stood as
    a passage and a model window of its own, whose near-empty vector met any vague question (in
    the Obsidian starter vault, ``hello`` found a quote by its ``>`` line, the snippet ``>``)."""
    paragraph = " ".join(["word"] * 70)
    body = [f"> {paragraph}", "> ", f"> {paragraph}", "---", paragraph, "```", paragraph, "```", "* * *", paragraph]
    (tmp_path / "Quotes.md").write_text("## Quotes\n" + "\n".join(body) + "\n", encoding="utf-8")
    [record], _ = load(tmp_path)
    pieces = [record.content[a:b] for a, b in vecbook.records.record_passages(record)]
    assert pieces[0] == "Quotes > Quotes\n## Quotes"  # the heading
    assert len(pieces) == 6 and all(piece.count("word") == 70 for piece in pieces[1:]), pieces
