"""Notebook use: results, hits and ``get``'s context as HTML tables in Jupyter (every value
escaped, any script or language shown as text), and examples/quickstart.ipynb, whose code cells
run here in-process as a kernel would run them."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import ROOT
from vecbook.hits import Context, Entry, Hit, Results

NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
# Text a record may hold: markup, Japanese, Hebrew and Arabic (right to left), emoji.
TRICKY = "<script>alert('x')</script> & 東京の会議 שלום عالم 🎉 boilers"


def hit(text: str = TRICKY, **fields: Any) -> Hit:
    values: dict[str, Any] = dict(
        text=text, file_path="a<b>.txt", line_number=3, end_line=4, similarity_score=0.87654321,
        metadata={"Date": "2024-03-05", "author": "<i>Ana</i>"}, source="files", id="a<b>.txt:3",
        citation="a<b>.txt:3-4", snippet=text, snippet_line=3, snippet_end_line=4, matched_terms=["boiler"])
    values.update(fields)
    return Hit(**values)


def cells(html: str) -> list[list[str]]:
    """The table's rows, each a list of its cells' inner HTML."""
    return [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)]


def test_results_show_as_a_table_of_rank_score_citation_snippet_source_and_date() -> None:
    html = Results([hit(), hit("Second line\nwith a break", matched_terms=[], citation="b.txt:1-2",
                           metadata={})])._repr_html_()
    assert cells(html) == [
        ["rank", "score", "citation", "snippet", "source", "date"],
        ["1", "0.877", "a&lt;b&gt;.txt:3-4",
         "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; 東京の会議 שלום عالم 🎉 <mark>boilers</mark>",
         "files", "2024-03-05"],
        ["2", "0.877", "b.txt:1-2", "Second line<br>with a break", "files", ""]]
    assert "<script>" not in html and 'dir="auto"' in html  # right-to-left text lays out by itself


def test_a_right_to_left_cell_starts_at_the_right() -> None:
    # Jupyter right-aligns table cells; a fixed `text-align:left` would put an Arabic or Hebrew
    # snippet at the left edge whatever its direction: `start` follows the direction `dir="auto"` finds
    html = Results([hit("اجتماع العائلة يوم الجمعة")])._repr_html_()
    styles = set(re.findall(r'<td dir="auto" style="([^"]*)"', html))
    assert styles == {"text-align:start; vertical-align:top"}


def test_matched_words_are_marked_by_stem_in_any_script() -> None:
    html = hit("Les chaudières 東京 boiler; BOILERS", matched_terms=["boiler", "東京"])._repr_html_()
    assert "<mark>boiler</mark>; <mark>BOILERS</mark>" in html and "<mark>東京</mark>" in html
    assert "chaudières" in html


def test_a_hit_alone_shows_as_one_row_without_rank() -> None:
    assert cells(hit()._repr_html_())[0] == ["score", "citation", "snippet", "source", "date"]


def test_no_results_say_so() -> None:
    assert Results()._repr_html_() == "<p>no results</p>"


def test_a_context_shows_the_record_in_bold_between_its_neighbours() -> None:
    def entry(text: str, line: int) -> Entry:
        return Entry(text, "chat.txt", line, line, {"date": f"2024-01-0{line}"}, "family-chat", f"c:{line}",
                     f"family-chat/chat.txt:{line}")

    html = Context(entry("مرحبا <b>", 2), [entry("Ana: 你好", 1)], [entry("Bo: 👋\nsee you", 3)])._repr_html_()
    assert cells(html) == [
        ["", "citation", "text", "source", "date"],
        ["-1", "family-chat/chat.txt:1", "Ana: 你好", "family-chat", "2024-01-01"],
        ["0", "family-chat/chat.txt:2", "<b>مرحبا &lt;b&gt;</b>", "family-chat", "2024-01-02"],
        ["+1", "family-chat/chat.txt:3", "Bo: 👋<br>see you", "family-chat", "2024-01-03"]]


def test_in_a_terminal_results_stay_plain_text() -> None:
    assert repr(Results([hit()])).startswith("[Hit(text=")


def code_cells() -> list[str]:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_the_notebook_is_shipped_with_its_outputs_cleared() -> None:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_the_quickstart_notebook_runs(embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Each code cell runs in one namespace from examples/, as a kernel runs them; the value of
    a cell's last line is rendered with ``_repr_html_`` where it has one, as Jupyter would."""
    original = vecbook.VecBook.__init__

    def init(self: vecbook.VecBook, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("embedder", embedder)  # the session's model: loading it again costs seconds
        original(self, *args, **kwargs)

    monkeypatch.setattr(vecbook.VecBook, "__init__", init)
    monkeypatch.chdir(NOTEBOOK.parent)
    shown: list[Any] = []
    namespace: dict[str, Any] = {"display": shown.append, "__name__": "__main__"}
    for source in code_cells():
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, NOTEBOOK.name, "exec"), namespace)
        if last is not None:
            shown.append(eval(compile(ast.Expression(last.value), NOTEBOOK.name, "eval"), namespace))
    rendered = [v._repr_html_() if hasattr(v, "_repr_html_") else repr(v) for v in shown if v is not None]
    assert any("family-chat/WhatsApp Chat with Family.txt:" in html and "<mark>" in html for html in rendered)
    assert any("<b>" in html and "<td dir=\"auto\"" in html for html in rendered)  # get's context
    out = capsys.readouterr().out
    assert "family-chat/WhatsApp Chat with Family.txt:" in out  # the cell that prints a citation


def test_to_pandas_keeps_each_column_one_type_whatever_the_hits() -> None:
    """Scores stay floats with no hits at all, and lines stay whole numbers (missing for a SQLite
    row) when file hits and rows mix: a frame's types must not depend on which hits came back."""
    pd = pytest.importorskip("pandas")
    row = hit(file_path="chats.db", line_number=None, end_line=None, snippet_line=None, snippet_end_line=None,
              semantic_score=None, keyword_score=0.5, citation="chats.db#messages:7")
    mixed = Results([hit(semantic_score=0.7), row]).to_pandas()
    empty = Results().to_pandas()
    for frame in (mixed, empty):
        assert str(frame["similarity_score"].dtype) == "float64" and str(frame["semantic_score"].dtype) == "float64"
        assert str(frame["line_number"].dtype) == "Int64" and str(frame["snippet_end_line"].dtype) == "Int64"
        assert str(frame["truncated"].dtype) == "bool" and str(frame["matches_query"].dtype) == "bool"
    assert list(mixed["line_number"].astype(object)) == [3, pd.NA] and mixed["line_number"][0] == 3
    # every column, text ones too (pandas 3 gives text its own `str` type, but not to no rows)
    assert {c: str(t) for c, t in empty.dtypes.items()} == {c: str(t) for c, t in mixed.dtypes.items()}
    assert pd.isna(mixed["semantic_score"][1]) and mixed["keyword_score"][1] == 0.5


@pytest.fixture(scope="module")
def keyword_book(tmp_path_factory: pytest.TempPathFactory) -> vecbook.VecBook:
    folder = tmp_path_factory.mktemp("builder")
    (folder / "notes.txt").write_text("Date: 2024-03-14\nBoiler broke\n---\nBread recipe\n", encoding="utf-8")
    return vecbook.VecBook(folder, keyword_only=True, cache_directory=False)


@pytest.mark.parametrize("build, message", [
    (lambda q: q.hybrid(method="linear", keyword_weight=2), "keyword_weight must be a number between 0 and 1, got 2"),
    (lambda q: q.hybrid(keyword_weight="0.3"), "keyword_weight must be a number between 0 and 1, got '0.3'"),
    (lambda q: q.hybrid(method="rrf", rrf_k=0), "rrf_k must be a positive integer, got 0"),
    (lambda q: q.filter(None), "filters must be an object mapping keys to values, got NoneType"),
])
def test_the_builder_refuses_a_bad_argument_where_it_is_given(keyword_book: vecbook.VecBook, build: Any,
                                                               message: str) -> None:
    """As ``.limit`` and ``.filter`` do: the cell that made the mistake raises, and a builder
    never shows (in its repr) a search that could not run."""
    with pytest.raises(vecbook.QueryError) as error:
        build(keyword_book.query().keyword("boiler"))
    assert message in str(error.value)


def test_results_mark_words_by_the_language_their_source_is_indexed_in(tmp_path: Path) -> None:
    """A German book matches ``Hauses`` to ``Haus`` and ``Häuser`` (German stems): the table marks
    them as the page and the command line do, not by English stems, which mark nothing here."""
    (tmp_path / "n.txt").write_text("Die Häuser am See sind alt.\n---\nEin Haus mit Garten.\n", encoding="utf-8")
    book = vecbook.VecBook(tmp_path, keyword_only=True, cache_directory=False, language="german")
    html = book.search("Hauses")._repr_html_()
    assert "<mark>Haus</mark> mit Garten" in html and "Die <mark>Häuser</mark> am See" in html
    assert "<mark>Haus</mark>" in book.search("Hauses", max_total_chars=1000)._repr_html_()  # a budget keeps it


def test_a_slice_of_results_is_results_that_still_shows_as_a_table_marked_by_its_language(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("Die Häuser am See sind alt.\n---\nEin Haus mit Garten.\n", encoding="utf-8")
    book = vecbook.VecBook(tmp_path, keyword_only=True, cache_directory=False, language="german")
    hits = book.search("Hauses")
    top = hits[:1]
    assert isinstance(top, vecbook.Results) and list(top) == list(hits)[:1]
    assert top.mode == hits.mode and top.left_out == 0
    assert "<table>" in top._repr_html_() and "<mark>" in top._repr_html_()
    assert isinstance(hits[0], vecbook.Hit) and isinstance(hits[::-1], vecbook.Results)
