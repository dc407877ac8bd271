"""Configuration: spec defaults, path resolution, precedence and every error a user can see."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Callable

import pytest

import vecbook
from conftest import ROOT
from vecbook import Config, ConfigError, load_config
from vecbook.config import COLLECTION_NAME_RULE


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No VECBOOK_* variable from the developer's shell leaks into these tests."""
    for name in list(os.environ):
        if name.startswith("VECBOOK_"):
            monkeypatch.delenv(name)


@pytest.fixture
def config_file(tmp_path: Path) -> Callable[[str], Path]:
    """Write tmp_path/project/vecbook.toml with the given text; returns its path."""

    def write(text: str) -> Path:
        folder = tmp_path / "project"
        folder.mkdir(exist_ok=True)
        path = folder / "vecbook.toml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


# -- defaults --

SPEC_DEFAULTS = {
    "data_directory": Path("data"),
    "max_results": 10,
    "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
    "similarity_metric": "cosine",
}


@pytest.mark.parametrize("key, value", SPEC_DEFAULTS.items())
def test_defaults_are_the_spec_defaults(key: str, value: object) -> None:
    assert getattr(Config(), key) == value


@pytest.mark.parametrize("key", [k for k in SPEC_DEFAULTS if k != "data_directory"])
def test_an_empty_config_file_gives_the_defaults(config_file: Callable[[str], Path], key: str) -> None:
    config = load_config(config_file(""))
    assert getattr(config, key) == SPEC_DEFAULTS[key]
    assert config.collections == ()
    assert config.config_file == config_file("")


def test_default_data_directory_is_beside_the_config_file(
        config_file: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec puts vecbook.toml in the project root and data in "data": the project's, not the cwd's."""
    path = config_file("max_results = 3\n")
    monkeypatch.chdir(tmp_path)
    assert load_config(path).data_directory.resolve() == path.parent / "data"


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().max_results = 3  # type: ignore[misc]


# -- paths --


def test_relative_data_directory_resolves_against_the_config_folder(
        config_file: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = config_file('data_directory = "notes"\ncache_directory = "cache"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(path)
    assert config.data_directory == path.parent / "notes"
    assert config.cache_directory == path.parent / "cache"
    # the same when the config file itself is named relative to the cwd
    assert load_config(Path("..") / "project" / "vecbook.toml").data_directory.resolve() == path.parent / "notes"


def test_absolute_data_directory_is_kept(config_file: Callable[[str], Path], tmp_path: Path) -> None:
    target = tmp_path / "abs"
    assert load_config(config_file(f'data_directory = "{target.as_posix()}"')).data_directory == target


def test_relative_data_directory_argument_resolves_against_the_cwd(
        config_file: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(config_file('data_directory = "notes"'), data_directory="cli_notes")
    assert config.data_directory.resolve() == tmp_path / "cli_notes"


# -- which file: --config, else ./vecbook.toml, else the checkout's --


def test_without_a_path_the_working_directory_config_wins_over_the_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_config: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config().config_file is None  # no file anywhere: defaults (the checkout's is not used)
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[[collections]]\nname = "family-chat"\npath = "chat.txt"\n', encoding="utf-8")
    config = load_config()
    assert config.config_file == user_config and [c.name for c in config.collections] == ["family-chat"]
    # a user config that lists collections only, with no data folder beside it, searches them alone
    assert config.data_directory is None
    (tmp_path / "vecbook.toml").write_text("max_results = 3\n", encoding="utf-8")
    assert load_config().config_file == tmp_path / "vecbook.toml"


def test_the_checkouts_config_is_not_used_from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config().config_file is None
    monkeypatch.chdir(ROOT)
    assert load_config().config_file == ROOT / "vecbook.toml"


def test_a_named_data_folder_is_searched_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_config: Path) -> None:
    # `vecbook search ... --data-dir ~/notes` must not mix a config's collections into the notes.
    monkeypatch.chdir(tmp_path)
    for folder in (tmp_path, user_config.parent):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "vecbook.toml").write_text('[[collections]]\nname = "mine"\ndatabase = "mine.db"\n',
                                             encoding="utf-8")
    config = load_config(data_directory="notes")
    assert config.config_file is None and config.collections == ()
    assert config.data_directory == tmp_path / "notes"
    monkeypatch.setenv("VECBOOK_DATA_DIRECTORY", "notes")
    assert load_config().config_file is None
    # with --config the file is the one asked for: its collections stay, the folder replaces its own
    monkeypatch.delenv("VECBOOK_DATA_DIRECTORY")
    assert [c.name for c in load_config(tmp_path / "vecbook.toml", data_directory="notes").collections] == ["mine"]


@pytest.mark.parametrize("name", ["family-chat", "work_mail", "a", "2024", "x-1_y"])
def test_collection_names_are_what_the_user_types(config_file: Callable[[str], Path], name: str) -> None:
    path = config_file(f'[[collections]]\nname = "{name}"\ndatabase = "s.db"\n')
    assert load_config(path).collections[0].name == name


# -- precedence: defaults < file < environment < arguments --


def test_environment_overrides_file_and_arguments_override_environment(
        config_file: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = config_file("max_results = 5\nsimilarity_metric = \"cosine\"\n")
    assert load_config(path).max_results == 5
    monkeypatch.setenv("VECBOOK_MAX_RESULTS", "7")
    monkeypatch.setenv("VECBOOK_SIMILARITY_METRIC", "l2")
    assert load_config(path).max_results == 7
    assert load_config(path).similarity_metric == "l2"
    config = load_config(path, max_results=3, similarity_metric=None)  # None means "not given"
    assert (config.max_results, config.similarity_metric) == (3, "l2")


@pytest.mark.parametrize("name, text, key, value", [
    ("VECBOOK_STEMMING", "false", "stemming", False),
    ("VECBOOK_STEMMING", "1", "stemming", True),
    ("VECBOOK_KEYWORD_WEIGHT", "0.25", "keyword_weight", 0.25),
    ("VECBOOK_BATCH_SIZE", "16", "batch_size", 16),
    ("VECBOOK_EMBEDDING_MODEL", "all-MiniLM-L6-v2", "embedding_model", "all-MiniLM-L6-v2"),
    ("VECBOOK_LOG_LEVEL", "WARN", "log_level", "WARNING"),
])
def test_environment_values_take_the_key_type(config_file: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch,
                                               name: str, text: str, key: str, value: object) -> None:
    monkeypatch.setenv(name, text)
    assert getattr(load_config(config_file("")), key) == value


def test_environment_data_directory_resolves_against_the_cwd(
        config_file: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VECBOOK_DATA_DIRECTORY", "env_notes")
    assert load_config(config_file('data_directory = "x"')).data_directory.resolve() == tmp_path / "env_notes"


@pytest.mark.parametrize("name, text, message", [
    ("VECBOOK_MAX_RESULTS", "ten", "invalid value 'ten' for VECBOOK_MAX_RESULTS"),
    ("VECBOOK_STEMMING", "yes", "invalid value 'yes' for VECBOOK_STEMMING"),
    ("VECBOOK_KEYWORD_WEIGHT", "half", "invalid value 'half' for VECBOOK_KEYWORD_WEIGHT"),
    ("VECBOOK_MAX_RESULTS", "0",
     "config key 'max_results' in environment variable VECBOOK_MAX_RESULTS must be between 1 and 1000; got 0"),
    ("VECBOOK_SIMILARITY_METRIC", "dot",
     "config key 'similarity_metric' in environment variable VECBOOK_SIMILARITY_METRIC must be one of cosine, l2; "
     "got 'dot'"),
    ("VECBOOK_SEARCH_MODE", "fuzzy",
     "config key 'search_mode' in environment variable VECBOOK_SEARCH_MODE must be one of semantic, keyword, hybrid; "
     "got 'fuzzy'"),
])
def test_bad_environment_values(config_file: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch,
                                name: str, text: str, message: str) -> None:
    monkeypatch.setenv(name, text)
    with pytest.raises(ConfigError) as error:
        load_config(config_file(""))
    assert str(error.value) == message


def test_a_misspelt_environment_variable_is_named_in_a_warning_and_ignored(
        config_file: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("VECBOOK_MAX_RESULT", "5")
    monkeypatch.setenv("VECBOOK_Search_Mode", "keyword")  # names are read in capitals
    monkeypatch.setenv("vecbook_max_results", "3")  # the prefix too
    monkeypatch.setenv("VECBOOK_CACHE", "/tmp/elsewhere")  # a setting it begins
    monkeypatch.setenv("VECBOOK_TOKEN", "secret")  # the server's token: no setting, and near none
    config = load_config(config_file(""))
    assert (config.max_results, config.search_mode) == (10, "hybrid")
    assert sorted(r.getMessage() for r in caplog.records if r.levelname == "WARNING") == [
        f"environment variable {name} is no VecBook setting (did you mean {meant}?); it is ignored"
        for name, meant in [("VECBOOK_CACHE", "VECBOOK_CACHE_DIRECTORY"), ("VECBOOK_MAX_RESULT", "VECBOOK_MAX_RESULTS"),
                            ("VECBOOK_Search_Mode", "VECBOOK_SEARCH_MODE"),
                            ("vecbook_max_results", "VECBOOK_MAX_RESULTS")]]


def test_sources_given_in_an_environment_variable_are_ignored_with_a_warning_that_says_where_they_go(
        config_file: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("VECBOOK_COLLECTIONS", '[{"name": "chat", "path": "chat.txt"}]')
    assert list(load_config(config_file("")).collections) == []
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "environment variable VECBOOK_COLLECTIONS is ignored: sources are [[collections]] tables of the config "
        "file (`vecbook add PATH` writes one)"]


# -- errors in the file --


def test_unknown_key_names_the_key_and_suggests(config_file: Callable[[str], Path]) -> None:
    path = config_file("max_result = 5\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == f"unknown config key 'max_result' in {path}:1 (did you mean 'max_results'?)"


@pytest.mark.parametrize("bad, message", [
    ('max_results = "ten"', "config key 'max_results' in {f}:4 must be int, got 'ten'"),
    ('format = 3', "config key 'format' in [[collections]] #2 in {f}:14 must be str, got 3"),
    ('"date_order" = "ymd"', "config key 'date_order' in [[collections]] #2 in {f}:14 must be \"dmy\" (day/month/year) "
                             "or \"mdy\" (month/day/year); got 'ymd'"),
    ('colour = "blue"', "unknown config key 'colour' in [[collections]] #2 in {f}:14"),
])
def test_an_error_in_the_file_names_the_line_at_fault(config_file: Callable[[str], Path], bad: str, message: str) -> None:
    """tomllib keeps no positions: the line is found in the text, the key's own line in its table."""
    text = ("# my sources 📚\nsearch_mode = \"hybrid\"\n\n{top}\n[[collections]]\nname = \"chat\"  # WhatsApp\n"
            "path = \"chat.txt\"\n# max_results = \"ten\" in a comment is no key\n\n[[collections]]\n"
            "name = \"family\"\npath = \"family.txt\"\n\n{inner}\n")
    top = bad if bad.startswith("max_results") else ""
    path = config_file(text.format(top=top, inner="" if top else bad))
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == message.format(f=path)
    line = int(re.search(r"\.toml:(\d+)", str(error.value)).group(1))  # type: ignore[union-attr]
    assert path.read_text(encoding="utf-8").splitlines()[line - 1] == bad  # the line opens at the key


def test_unknown_key_without_a_close_match_has_no_hint(config_file: Callable[[str], Path]) -> None:
    path = config_file("colour = 'blue'\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == f"unknown config key 'colour' in {path}:1"


def test_unknown_table_is_an_unknown_key(config_file: Callable[[str], Path]) -> None:
    with pytest.raises(ConfigError, match=r"unknown config key 'search' in "):
        load_config(config_file("[search]\nmode = 'hybrid'\n"))


def test_unknown_argument_is_named(config_file: Callable[[str], Path]) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(config_file(""), max_reslts=3)
    assert str(error.value) == "unknown config key 'max_reslts' in arguments (did you mean 'max_results'?)"


def test_collections_given_as_an_argument_say_where_collections_come_from(tmp_path: Path) -> None:
    """``VecBook("notes", collections=[...])`` is no typo of a setting: the error says where
    sources are given rather than suggest the very key it refuses."""
    with pytest.raises(ConfigError) as error:
        vecbook.VecBook(tmp_path, collections=[{"name": "chat", "path": "chat.txt"}])
    assert str(error.value) == (
        "'collections' cannot be given in arguments: sources are [[collections]] tables of a config file "
        "(VecBook.from_config(path), which `vecbook add PATH` writes for you)")


@pytest.mark.parametrize("line, message", [
    ('max_results = "10"', "config key 'max_results' in {f}:1 must be int, got '10'"),
    ("max_results = 5.5", "config key 'max_results' in {f}:1 must be int, got 5.5"),
    ("max_results = true", "config key 'max_results' in {f}:1 must be int, got True"),
    ("stemming = 1", "config key 'stemming' in {f}:1 must be bool, got 1"),
    ('keyword_weight = "a"', "config key 'keyword_weight' in {f}:1 must be int or float, got 'a'"),
    ("keyword_weight = false", "config key 'keyword_weight' in {f}:1 must be int or float, got False"),
    ("data_directory = 5", "config key 'data_directory' in {f}:1 must be str, got 5"),
    ("similarity_metric = ['cosine']", "config key 'similarity_metric' in {f}:1 must be str, got ['cosine']"),
])
def test_wrong_types_name_the_key(config_file: Callable[[str], Path], line: str, message: str) -> None:
    path = config_file(line)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == message.format(f=path)


@pytest.mark.parametrize("line, message", [
    ("max_results = 0", "config key 'max_results' in {f}:1 must be between 1 and 1000; got 0"),
    ("max_results = 1001", "config key 'max_results' in {f}:1 must be between 1 and 1000; got 1001"),
    ("max_results = -3", "config key 'max_results' in {f}:1 must be between 1 and 1000; got -3"),
    ("keyword_weight = 1.5", "config key 'keyword_weight' in {f}:1 must be between 0 and 1; got 1.5"),
    ("bm25_b = -0.1", "config key 'bm25_b' in {f}:1 must be between 0 and 1; got -0.1"),
    ("bm25_k1 = 11", "config key 'bm25_k1' in {f}:1 must be between 0 and 10; got 11.0"),
    ("rrf_k = 0", "config key 'rrf_k' in {f}:1 must be between 1 and 10000; got 0"),
    ("batch_size = 5000", "config key 'batch_size' in {f}:1 must be between 1 and 4096; got 5000"),
    ("semantic_wait_seconds = -1", "config key 'semantic_wait_seconds' in {f}:1 must be between 0 and 3600; got -1.0"),
])
def test_out_of_range_values(config_file: Callable[[str], Path], line: str, message: str) -> None:
    path = config_file(line)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == message.format(f=path)


@pytest.mark.parametrize("key, value, choices", [
    ("similarity_metric", "dot", "cosine, l2"),
    ("similarity_metric", "Cosine", "cosine, l2"),
    ("search_mode", "fuzzy", "semantic, keyword, hybrid"),
    ("fusion", "max", "rrf, linear"),
    ("precision", "float16", "auto, float32, bfloat16, int8"),
    ("log_level", "VERBOSE", "DEBUG, INFO, WARNING, WARN, ERROR"),
])
def test_bad_enum_values(config_file: Callable[[str], Path], key: str, value: str, choices: str) -> None:
    path = config_file(f'{key} = "{value}"')
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == f"config key '{key}' in {path}:1 must be one of {choices}; got {value!r}"


@pytest.mark.parametrize("key, value", [
    ("similarity_metric", "l2"), ("search_mode", "keyword"), ("fusion", "linear"), ("precision", "float32"),
    ("log_level", "DEBUG"),
])
def test_good_enum_values(config_file: Callable[[str], Path], key: str, value: str) -> None:
    assert getattr(load_config(config_file(f'{key} = "{value}"')), key) == value


def test_a_windows_path_in_double_quotes_is_told_how_to_write_it(config_file: Callable[[str], Path]) -> None:
    """TOML reads backslashes in double quotes as escapes: ``"C:\\Users\\ana"`` is an invalid
    escape (``\\U`` wants 8 hex digits) and ``"D:\\notes\\today"`` silently holds a newline and
    a tab. Both say how to write the path."""
    with pytest.raises(ConfigError) as error:
        load_config(config_file('data_directory = "C:\\Users\\ana\\notes"\n'))
    assert "line 1" in str(error.value) and "single quotes ('C:\\Users\\ana\\notes')" in str(error.value)
    for text in ('data_directory = "D:\\notes\\today"\n',
                 '[[collections]]\nname = "chat"\npath = "D:\\telegram"\n'):
        with pytest.raises(ConfigError, match=r"holds a (newline|tab) \(TOML's .*single quotes \('D:\\(notes\\today|telegram)'\)"):
            load_config(config_file(text))
    config = load_config(config_file("data_directory = 'D:\\notes\\today'\n"))
    assert str(config.data_directory).endswith("D:\\notes\\today")


def test_integers_are_accepted_for_float_keys(config_file: Callable[[str], Path]) -> None:
    config = load_config(config_file("keyword_weight = 1\nbm25_k1 = 2"))
    assert (config.keyword_weight, config.bm25_k1) == (1.0, 2.0)
    assert isinstance(config.keyword_weight, float)


def test_invalid_toml_names_the_file(config_file: Callable[[str], Path]) -> None:
    path = config_file("max_results = \n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value).startswith(f"invalid TOML in {path}: ")
    assert "line 1" in str(error.value)


def test_missing_config_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == f"config file not found: {path}"


def test_config_path_that_is_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^cannot read config file "):
        load_config(tmp_path)


def test_config_errors_are_vecbook_errors() -> None:
    assert issubclass(ConfigError, vecbook.VecBookError)


# -- [[collections]] --


def test_collections_resolve_against_the_config_folder(
        config_file: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = config_file(
        '[[collections]]\nname = "slack"\ndatabase = "dbs/store.db"\n'
        '[[collections]]\nname = "mail"\ndatabase = "mail.db"\ntable = "messages"\n'
        '[[collections]]\nname = "notes_q"\ndatabase = "n.db"\nquery = "SELECT id, content FROM t"\n')
    monkeypatch.chdir(tmp_path)
    slack, mail, notes = load_config(path).collections
    assert slack.database == path.parent / "dbs" / "store.db"
    assert slack.database_label == "dbs/store.db"
    assert (slack.table, slack.label) == ("slack_documents", "slack_documents")
    assert (mail.table, mail.label) == ("messages", "messages")
    assert (notes.table, notes.query, notes.label) == (None, "SELECT id, content FROM t", "notes_q")


@pytest.mark.parametrize("tables, message", [
    ('[[collections]]\nname = "Slack"\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:2: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got 'Slack'"),
    ('[[collections]]\nname = "-chats"\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:2: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got '-chats'"),
    ('[[collections]]\nname = "my chats"\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:2: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got 'my chats'"),
    ('[[collections]]\nname = "../chats"\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:2: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got '../chats'"),
    ('[[collections]]\nname = "chät"\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:2: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got 'chät'"),
    ('[[collections]]\nname = "chats\\n"\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:2: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got 'chats\\n'"),
    ('[[collections]]\ndatabase = "s.db"',
     "[[collections]] #1 in {f}:1: 'name' is required and must be "
     f"{COLLECTION_NAME_RULE}, got None"),
    ('[[collections]]\nname = "a"\ndatabase = "a.db"\n[[collections]]\nname = "a"\ndatabase = "b.db"',
     "[[collections]] #2 in {f}:5: collection name 'a' is already used"),
    ('[[collections]]\nname = "files"\ndatabase = "a.db"',
     "[[collections]] #1 in {f}:2: collection name 'files' is already used (it names the data folder's notes)"),
    ('[[collections]]\nname = "a"',
     "[[collections]] #1 in {f}:1: give either 'database' (a SQLite file) or 'path' (an export file or folder)"),
    ('[[collections]]\nname = "a"\ndatabase = "a.db"\ntable = "t"\nquery = "SELECT 1"',
     "[[collections]] #1 in {f}:1: give either 'table' or 'query', not both"),
    ('[[collections]]\nname = "a"\ndatabase = "a.db"\ntabel = "t"',
     "unknown config key 'tabel' in [[collections]] #1 in {f}:4 (did you mean 'table'?)"),
    ('[[collections]]\nname = "a"\ndatabase = 3',
     "config key 'database' in [[collections]] #1 in {f}:3 must be str, got 3"),
    ('collections = "slack"', "'collections' in {f}:1 must be an array of tables ([[collections]])"),
    ("collections = [1]", "[[collections]] #1 in {f} must be a table"),
], ids=["uppercase-name", "leading-dash-name", "space-name", "path-name", "accented-name", "newline-name", "missing-name", "duplicate", "reserved-files",
        "missing-database", "table-and-query", "unknown-key", "non-string", "not-array", "not-table"])
def test_collection_errors(config_file: Callable[[str], Path], tables: str, message: str) -> None:
    path = config_file(tables + "\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == message.format(f=path)


# -- the data directory (checked by VecBook before any model is loaded) --


@pytest.mark.parametrize("as_type", [str, Path])
def test_missing_data_directory_names_the_path(tmp_path: Path, as_type: type) -> None:
    """VecBook(data_directory=...) takes ``str | Path``; both fail the same clear way."""
    missing = tmp_path / "no such folder"
    with pytest.raises(ConfigError) as error:
        vecbook.VecBook(data_directory=as_type(missing))
    assert str(error.value) == (f"data directory not found: {missing} (create it, or set data_directory "
                                "in vecbook.toml or pass --data-dir)")


@pytest.mark.parametrize("as_type", [str, Path])
def test_data_directory_that_is_a_file(tmp_path: Path, as_type: type) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(ConfigError) as error:
        vecbook.VecBook(data_directory=as_type(file))
    assert str(error.value) == f"data directory is not a folder: {file}"


def test_path_objects_are_accepted_for_path_keys(config_file: Callable[[str], Path], tmp_path: Path) -> None:
    config = load_config(config_file(""), data_directory=tmp_path / "notes", cache_directory=tmp_path / "c")
    assert (config.data_directory, config.cache_directory) == (tmp_path / "notes", tmp_path / "c")


def test_bad_argument_to_vecbook_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^config key 'max_results' in arguments must be between 1 and 1000"):
        vecbook.VecBook(data_directory=str(tmp_path), max_results=0)


@pytest.mark.parametrize("platform, cache", [("windows", r"C:\Users\ana\AppData\Local/vecbook/Cache"),
                                             ("macos", "~/Library/Caches/vecbook"), ("unix", "~/.cache/vecbook")])
def test_the_cache_folder_is_the_one_the_readme_names_on_each_system(
        monkeypatch: pytest.MonkeyPatch, platform: str, cache: str) -> None:
    """README: ``%LOCALAPPDATA%\\vecbook\\Cache`` on Windows, not platformdirs' default with the
    app's author (``vecbook\\vecbook\\Cache``)."""
    import importlib

    import platformdirs
    from platformdirs import windows

    from vecbook.config import default_cache_directory

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(windows, "get_win_folder", lambda _csidl: r"C:\Users\ana\AppData\Local", raising=False)
    kind = getattr(importlib.import_module(f"platformdirs.{platform}"), {"windows": "Windows", "macos": "MacOS",
                                                                          "unix": "Unix"}[platform])
    monkeypatch.setattr(platformdirs, "PlatformDirs", kind)
    home = str(Path("~").expanduser())
    assert str(default_cache_directory()).replace(home, "~") == cache
