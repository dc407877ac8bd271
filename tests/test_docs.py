"""The documentation says what the code does: README.md and docs/ against the config tables,
the CLI's parser, the MCP tools and the API, and their links against each other."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import unicodedata
from pathlib import Path
from typing import Any

import pytest

import vecbook
from conftest import ROOT
from vecbook.cli import build_parser
from vecbook.config import _COLLECTION_KEYS, _SCALAR_KEYS

DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
# The bound for a README a newcomer reads in five minutes.
README_MAX_BYTES = 25 * 1024
FENCE_RE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# Seven or more hex digits holding both a letter and a digit: how git abbreviates a commit.
COMMIT_RE = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
# Shell lines in the docs that are not VecBook's own command line (installing, testing,
# benchmarks, other tools): the first words each may start with.
OTHER_COMMANDS = ("pip install", "python -m pytest", "python bench/", "python samples/", "python -c",
                  "claude mcp add", "npx ", "python3 -m venv ", ". ~/.vecbook/bin/activate", "cd ")


def blocks(page: Path, *languages: str) -> list[str]:
    """The fenced code blocks of ``page`` in one of ``languages``."""
    return [m.group(2) for m in FENCE_RE.finditer(page.read_text(encoding="utf-8")) if m.group(1) in languages]


def prose(page: Path) -> str:
    """The page without its fenced code blocks (where `#` starts a comment, not a heading)."""
    return FENCE_RE.sub("", page.read_text(encoding="utf-8"))


def shell_commands(page: Path) -> list[str]:
    """Each command of the page's shell blocks: continuation lines joined, ``&&`` split."""
    commands = []
    for block in blocks(page, "sh", "bash", "shell"):
        for line in block.replace("\\\n", " ").splitlines():
            commands += [part.strip() for part in line.split("&&") if part.strip() and not part.startswith("#")]
    return commands


def vecbook_arguments(words: list[str]) -> list[str] | None:
    """The arguments after ``vecbook.py`` (or a ``vecbook`` command, by name or full path) in ``words``;
    None if absent."""
    for index, word in enumerate(words):
        if word.endswith("vecbook.py") or (index == 0 and (word == "vecbook" or word.endswith("/bin/vecbook"))):
            return words[index + 1:]
    return None


def parse(arguments: list[str]) -> None:
    """Parse as the CLI does; a rejected line fails the test with argparse's message."""
    try:
        build_parser().parse_args(arguments)
    except SystemExit as exc:
        pytest.fail(f"the CLI's parser rejects `{shlex.join(arguments)}` (exit {exc.code})")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in prose(page).splitlines() if re.match(r"#{1,6} ", line)}


# -- configuration.md holds every key the code accepts --

@pytest.mark.parametrize("key", sorted(_SCALAR_KEYS))
def test_every_config_key_and_its_variable_is_documented(key: str) -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert f"`{key}`" in text, f"config key {key!r} is missing from docs/configuration.md"
    assert f"`VECBOOK_{key.upper()}`" in text, f"VECBOOK_{key.upper()} is missing from docs/configuration.md"


@pytest.mark.parametrize("key", _COLLECTION_KEYS)
def test_every_collection_key_is_documented(key: str) -> None:
    assert f"`{key}`" in (DOCS / "configuration.md").read_text(encoding="utf-8")


def test_every_toml_example_is_a_valid_config(tmp_path: Path) -> None:
    examples = [block for page in PAGES for block in blocks(page, "toml")]
    assert len(examples) >= 10  # one per format at least: the check below must have something to check
    for number, block in enumerate(examples):
        file = tmp_path / f"example{number}.toml"
        file.write_text(block, encoding="utf-8")
        vecbook.load_config(file)  # raises ConfigError naming the key at fault


# -- command lines --

def test_readme_command_lines_are_accepted_by_the_cli() -> None:
    checked = 0
    for page in PAGES:
        for command in shell_commands(page):
            arguments = vecbook_arguments(shlex.split(command))
            if arguments is None:
                assert command.startswith(OTHER_COMMANDS), f"{page.name}: unexpected shell line `{command}`"
                continue
            parse(arguments)
            checked += 1
    assert checked >= 8


def test_mcp_client_configs_start_a_server_the_cli_accepts() -> None:
    configs = [json.loads(block) for page in PAGES for block in blocks(page, "json") if "mcpServers" in block]
    assert configs
    for config in configs:
        for server in config["mcpServers"].values():
            if "url" in server or server["command"] == "npx":  # serve --http's address, or a bridge to it
                url = server.get("url") or server["args"][-1]
                assert re.fullmatch(r"http://127\.0\.0\.1:8765/mcp", url), url
                continue
            # a client started from the desktop sees neither the shell's PATH nor a virtual environment
            assert server["command"].startswith("/"), f"{server['command']}: not the full path `which` prints"
            arguments = vecbook_arguments([server["command"], *server["args"]])
            assert arguments is not None and arguments[0] == "serve"
            parse(arguments)


def test_parse_catches_a_wrong_command_line() -> None:
    with pytest.raises(pytest.fail.Exception, match="rejects"):
        parse(["search", "x", "--mode", "fuzzy"])


def subcommands() -> dict[str, Any]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return dict(action.choices)


def test_every_subcommand_and_option_has_help_text() -> None:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    assert set(helps) == set(subcommands())
    for name, sub in subcommands().items():
        assert helps[name] and sub.description, f"subcommand {name!r} has no help or description"
        for option in sub._actions:
            assert option.help, f"{name} {option.option_strings or option.dest} has no help text"


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_and_option_is_in_cli_md(name: str) -> None:
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert f"## `{name}`" in text
    for option in subcommands()[name]._actions:
        for flag in option.option_strings:
            if flag not in ("-h", "--help"):
                assert re.search(rf"`{re.escape(flag)}[` ]", text), f"{name} {flag} is missing from docs/cli.md"


# -- MCP tools --

def test_every_mcp_tool_and_argument_is_described_and_documented(tmp_path: Path) -> None:
    from fastmcp import Client

    (tmp_path / "notes.txt").write_text("A note.\n", encoding="utf-8")
    book = vecbook.VecBook(tmp_path, keyword_only=True, cache_directory=False)

    async def run() -> Any:
        async with Client(vecbook.mcp.build_server(book)) as client:
            return await client.list_tools()

    tools = asyncio.run(run())
    text = (DOCS / "mcp.md").read_text(encoding="utf-8")
    assert len(tools) >= 4
    for tool in tools:
        assert tool.description, f"MCP tool {tool.name!r} has no description"
        assert f"### `{tool.name}`" in text, f"MCP tool {tool.name!r} is missing from docs/mcp.md"
        for argument, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"MCP tool {tool.name!r}: argument {argument!r} has no description"
            assert f"`{argument}" in text, f"MCP tool {tool.name!r}: argument {argument!r} is missing from docs/mcp.md"


# -- Python examples run against the samples --

@pytest.mark.parametrize("page", [README, DOCS / "python.md"], ids=lambda p: p.name)
def test_python_examples_run(page: Path, embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    # The examples build their own VecBook: hand it the session's loaded model, not a new one.
    monkeypatch.setattr(vecbook.book, "Embedder", lambda *args, **kwargs: embedder)
    monkeypatch.chdir(ROOT)  # "samples" as a newcomer's notebook in the checkout sees it
    examples = blocks(page, "python")
    assert examples
    for block in examples:
        namespace: dict[str, Any] = {}
        exec(compile(block, f"{page.name} example", "exec"), namespace)
        book = namespace["vb"]
        assert namespace["hits"] and namespace["hits"][0].citation
        book.close()


# -- links and size --

@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_internal_links_resolve(page: Path) -> None:
    # (a link shown in a code span, `[Trip](Trip%20<id>.md)`, is an example, not a link)
    for target in LINK_RE.findall(re.sub(r"`[^`\n]+`", "", prose(page))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: outside the repository
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.name}: link to {target} names no file"
        if anchor:
            assert file.suffix == ".md" and anchor in anchors(file), f"{page.name}: no heading for #{anchor} in {file.name}"


# A path in backticks that starts with one of the repository's folders names a file of it
# (`bench/avx2_only.sh`, `tests/data/cpuinfo/`); bench/results/ is what the benchmarks write.
REPO_PATH_RE = re.compile(r"(?<![\w/.~-])((?:bench|tests|examples|samples|vecbook|docs|\.ci)/[\w./<>*-]*)")
GENERATED = ("bench/results/",)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_paths_named_in_code_spans_exist(page: Path) -> None:
    for span in re.findall(r"`([^`\n]+)`", page.read_text(encoding="utf-8")):
        for path in REPO_PATH_RE.findall(span):
            path = path.rstrip(".")
            if not any(c in path for c in "*<") and not path.startswith(GENERATED):
                assert (ROOT / path).exists(), f"{page.name}: `{span}` names {path}, which the repository lacks"


def inline_commands(page: Path) -> list[list[str]]:
    """The words after ``vecbook`` (or ``python vecbook.py``) of each command in the page's
    inline code spans, such as `vecbook search "boiler" --mode keyword`."""
    text = " ".join(prose(page).split())  # a span may be wrapped over two lines
    return [span.split() for span in re.findall(r"`(?:python vecbook\.py|vecbook|python -m vecbook) ([^`]+)`", text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_options_of_inline_commands_exist(page: Path) -> None:
    commands = subcommands()
    top = {flag for action in build_parser()._actions for flag in action.option_strings}
    for words in inline_commands(page):
        command = commands.get(words[0])
        if words[0] == "config" and words[1:2] == ["path"]:
            command = next(a for a in command._actions if a.dest == "action").choices["path"]
        known = {flag for action in command._actions for flag in action.option_strings} if command else top
        for word in words[1:] if command else words:
            option = word.strip("(),;:'\"").split("=")[0]
            if re.fullmatch(r"--?[a-zA-Z][\w-]*", option):
                assert option in known, f"{page.name}: `vecbook {' '.join(words)}`: {words[0]} takes no {option}"


def test_every_docs_page_is_linked_from_the_index() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in DOCS.glob("*.md"):
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/{page.name} is missing from docs/README.md"


def test_readme_stays_short() -> None:
    assert README.stat().st_size <= README_MAX_BYTES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_commit_hashes(page: Path) -> None:
    found = COMMIT_RE.findall(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name} names commits {found}: state today's behaviour, not history"


def test_slug_follows_github() -> None:
    assert slug(" Slack (`format = \"slack\"`)") == "slack-format--slack"
    assert slug("What `--min-score` compares against") == "what---min-score-compares-against"
    assert slug("Résumé: 日本語 notes") == "résumé-日本語-notes"
