"""Shared fixtures: one real model for the whole session, and record folders in tmp_path."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vecbook  # noqa: E402

# Property tests draw the same examples on every run (derandomized), so CI and a user's run
# agree and a failure reproduces; HYPOTHESIS_PROFILE=explore draws new ones while working.
settings.register_profile("vecbook", derandomize=True, database=None)
settings.register_profile("explore", max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "vecbook"))

SAMPLES = ROOT / "samples"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The vector cache is on by default, in the user's cache folder: point it (and, for tests
    that clear VECBOOK_* variables, the platform's cache home) at a folder of this session,
    so the suite never writes into the real one. Subprocesses inherit both."""
    folder = tmp_path_factory.mktemp("user-cache")
    saved = {name: os.environ.get(name) for name in ("VECBOOK_CACHE_DIRECTORY", "XDG_CACHE_HOME")}
    os.environ["VECBOOK_CACHE_DIRECTORY"] = str(folder / "vecbook")
    os.environ["XDG_CACHE_HOME"] = str(folder / "xdg")
    # One ONNX model build per session (on CPUs that take that path): the configured
    # cache folder and the platform's default share their models folder.
    (folder / "vecbook" / "models").mkdir(parents=True)
    (folder / "xdg" / "vecbook").mkdir(parents=True)
    (folder / "xdg" / "vecbook" / "models").symlink_to(folder / "vecbook" / "models", target_is_directory=True)
    yield folder / "vecbook"
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session", autouse=True)
def runtime_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where ``serve --http`` leaves its record and the CLI looks for it (platformdirs' runtime
    folder, from XDG_RUNTIME_DIR): a folder of this session, never the user's, so a server the
    user runs is never asked by a test. Subprocesses inherit it."""
    folder = tmp_path_factory.mktemp("runtime")
    folder.chmod(0o700)  # platformdirs takes XDG_RUNTIME_DIR only as the XDG spec has it
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(folder)
    yield folder / "vecbook"
    if saved is None:
        os.environ.pop("XDG_RUNTIME_DIR", None)
    else:
        os.environ["XDG_RUNTIME_DIR"] = saved


@pytest.fixture(autouse=True)
def vecbook_log_level_restored() -> Iterator[None]:
    """The CLI sets the "vecbook" logger's level (WARNING for a one-shot command): a later
    test's caplog at INFO must not depend on which CLI test ran before it."""
    logger = logging.getLogger("vecbook")
    level = logger.level
    yield
    logger.setLevel(level)


@pytest.fixture(autouse=True)
def user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's config file (``vecbook add`` writes it; a run without --config reads it) lies
    in a fresh folder of each test, never the real one: platformdirs is pointed there in this
    process, and XDG_CONFIG_HOME for subprocesses (platformdirs' Linux and BSD rule). Yields
    the file's path (not created). A MonkeyPatch of its own: a test's ``monkeypatch.undo()``
    leaves it in place."""
    import platformdirs

    folder = tmp_path_factory.mktemp("user-config")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(folder))
        patch.setattr(platformdirs, "user_config_dir", lambda appname=None, *a, **k: str(folder / appname))
        yield folder / "vecbook" / "vecbook.toml"


@pytest.fixture(autouse=True)
def no_put_off_writes_outlive_a_test() -> Iterator[None]:
    """A book updated within a minute of its last cache write leaves a timer that writes later:
    written at the test's end, not during a later test (which may watch the cache's writes)."""
    yield
    vecbook.caches.write_put_off()


@pytest.fixture(scope="session")
def embedder(user_cache: Path) -> vecbook.Embedder:
    """The real all-MiniLM-L6-v2 on the path this CPU takes by default (bfloat16, int8 or
    float32), loaded once: loading costs seconds, tests share it."""
    model = vecbook.Embedder(model_cache=user_cache / "models")
    model.load()
    return model


@pytest.fixture(scope="module")
def int8(user_cache: Path) -> vecbook.Embedder:
    """The real model on int8 (onnxruntime), records and queries, whatever this CPU's default."""
    model = vecbook.Embedder(precision="int8", model_cache=user_cache / "models")
    model.load()
    return model


@pytest.fixture(scope="module")
def float32(user_cache: Path) -> vecbook.Embedder:
    """The real model on float32 (onnxruntime, where it runs the model)."""
    model = vecbook.Embedder(precision="float32", model_cache=user_cache / "models")
    model.load()
    return model


def torch_embedder(bfloat16: bool) -> vecbook.Embedder:
    """The real model on torch, float32 or bfloat16, queries included: as on a machine where
    onnxruntime cannot run the model."""
    model = vecbook.Embedder(precision="bfloat16" if bfloat16 else "float32")
    path = vecbook.embed.resolve_model(model.model_name)
    model._model, model._path = model._load_torch(path, bfloat16=bfloat16), path
    return model


@pytest.fixture
def shared_model(embedder: vecbook.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each CLI call builds a VecBook; give them the already-loaded model."""
    original = vecbook.VecBook.__init__

    def init(self: vecbook.VecBook, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("embedder", embedder)
        original(self, *args, **kwargs)

    monkeypatch.setattr(vecbook.VecBook, "__init__", init)


@pytest.fixture(scope="session")
def sample_book(embedder: vecbook.Embedder) -> vecbook.VecBook:
    """The shipped samples and their SQLite collection, indexed once (read-only use)."""
    return vecbook.VecBook.from_config(ROOT / "vecbook.toml", embedder=embedder)


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files under ``root`` from {relative path: text or bytes}; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root


@pytest.fixture
def write_files(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Create files under tmp_path/data from {relative path: text or bytes}; returns the folder."""
    root = tmp_path / "data"
    root.mkdir(exist_ok=True)
    return lambda files: write_tree(root, files)


@pytest.fixture
def make_book(embedder: vecbook.Embedder) -> Callable[..., vecbook.VecBook]:
    """Build a VecBook over a folder with the shared model; keyword args are config keys."""

    def make(data_directory: Path, **settings: Any) -> vecbook.VecBook:
        return vecbook.VecBook(data_directory=data_directory, embedder=embedder, **settings)

    return make


class FakeEmbedder(vecbook.Embedder):
    """Deterministic bag-of-words vectors: fast enough for ranking tests over thousands of records.

    Each word hashes to one of 256 dimensions, so records sharing words are
    similar; it is no language model, only a stand-in where ranking logic, not
    meaning, is under test.
    """

    DIM = 256

    def __init__(self) -> None:
        super().__init__("fake-bag-of-words")
        self.precision = "float32"

    def load(self) -> Any:
        return None

    @property
    def dimension(self) -> int:
        return self.DIM

    @property
    def identity(self) -> str:
        return "fake-bag-of-words|256"

    def windows_many(self, texts: Any) -> list[tuple[list[str], bool]]:
        return [([text], False) for text in texts]

    def window_spans_many(self, texts: Any) -> list[tuple[list[tuple[int, int]], bool]]:
        return [([(0, len(text))], False) for text in texts]

    # Text -> the dimension of each of its words. Tests embed the same texts again and again
    # (rebuilds, updates, queries) and tokenizing was most of the cost of a fake embedding;
    # the vectors are the same either way (tests/test_fake_embedder.py pins them).
    _dimensions: ClassVar[dict[str, tuple[int, ...]]] = {}
    REMEMBERED_CHARS, REMEMBERED_TEXTS = 2000, 100_000

    @classmethod
    def dimensions(cls, text: str) -> tuple[int, ...]:
        """The dimension each word of ``text`` counts in (a word hashes to one)."""
        import zlib

        known = cls._dimensions.get(text)
        if known is None:
            words = vecbook.tokens.tokenize(text, stemming=False)
            known = tuple(zlib.crc32(word.encode()) % cls.DIM for word in words)
            if len(text) <= cls.REMEMBERED_CHARS:  # a long text is rarely embedded twice
                if len(cls._dimensions) >= cls.REMEMBERED_TEXTS:  # bounds the memory of a session
                    cls._dimensions.clear()
                cls._dimensions[text] = known
        return known

    def encode(self, texts: Any) -> Any:
        import numpy as np

        # One bincount over all rows' words instead of a numpy scalar add per word.
        flat = [row * self.DIM + dim for row, text in enumerate(texts) for dim in self.dimensions(text)]
        counts = np.bincount(np.asarray(flat, dtype=np.intp), minlength=len(texts) * self.DIM)
        out = counts.astype(np.float32).reshape(len(texts), self.DIM)
        out[:, -1] += 0.01  # no all-zero vectors
        return out

    def encode_query(self, text: str) -> Any:
        return self.encode([text])[0]


@pytest.fixture
def fake_book() -> Callable[..., vecbook.VecBook]:
    """A VecBook over a folder with the fake embedder (no model load, instant embedding)."""

    def make(data_directory: Path, **settings: Any) -> vecbook.VecBook:
        return vecbook.VecBook(data_directory=data_directory, embedder=FakeEmbedder(), **settings)

    return make


EXPORTS = DATA / "exports"


def export_book(folder: Path, name: str, export: Path) -> vecbook.VecBook:
    """A VecBook (fake embedder, no caches) over one export ``export`` as collection ``name``,
    its config and empty data folder written in ``folder``."""
    (folder / "notes").mkdir(exist_ok=True)
    (folder / "vecbook.toml").write_text(
        f'data_directory = "notes"\ncache_directory = false\n[[collections]]\nname = "{name}"\npath = "{export}"\n')
    return vecbook.VecBook(config=vecbook.load_config(folder / "vecbook.toml"), embedder=FakeEmbedder())


def cited_lines(root: Path, record: vecbook.Record) -> list[str]:
    """The lines a record's citation points at, read back from the export under ``root``
    (``root`` is the collection's path; zip members are read from the archive)."""
    import zipfile

    rel = record.file_path.split("/", 1)[1]
    if "!/" in rel:
        archive, member = rel.split("!/", 1)
        data = zipfile.ZipFile(root / archive if root.is_dir() else root).read(member)
    else:
        data = (root / rel if root.is_dir() else root).read_bytes()
    lines = data.decode("utf-8-sig", errors="replace").splitlines()
    assert record.line_number is not None and record.end_line is not None
    return lines[record.line_number - 1:record.end_line]


def assert_messages_cited(root: Path, record: vecbook.Record) -> None:
    """Every message of a window is found (as written, or JSON-escaped) in the lines of
    the file its segment cites, and those lines lie within the record's citation."""
    import json

    whole = cited_lines(root, record)
    starts = [s[0] for s in record.segments] + [len(record.content) + 1]
    for (offset, first, last), end in zip(record.segments, starts[1:]):
        assert record.line_number <= first <= last <= record.end_line, record.citation
        said = record.content[offset:end - 1].split(": ", 1)[-1].splitlines()[0][:40]
        span = "\n".join(whole[first - record.line_number:last - record.line_number + 1])
        escaped = json.dumps(said, ensure_ascii=False)[1:-1]
        assert said in span or escaped in span or json.dumps(said)[1:-1] in span, (record.citation, said)


# The records a served book holds in the server and page tests: dated notes (one holding markup
# that must stay text, one in Japanese, Hebrew and emoji) and the sample WhatsApp export.
SERVED_NOTES = {
    "journal.txt": "Date: 2024-03-14\nTags: home\n\nBoiler broke overnight, no hot water. The plumber came at 4pm.\n"
                   "---\nDate: 2024-03-20\n\nMum's birthday lunch at Little Lisbon; she ordered the bacalhau.\n"
                   "---\nDate: 2024-05-02\n\nBooked the train to Porto for the summer holiday.\n",
    "hostile.txt": "Date: 2024-04-01\n\nPasted from a web page about the boiler manual: "
                   "<script>window.vecbookPwned = 1</script> and <img src=x onerror=\"window.vecbookPwned = 2\"> end.\n",
    "world.txt": "Date: 2024-04-10\n\n東京で新しいボイラーを買った 🔥 — בוילר חדש במטבח\n",
}


def write_served_corpus(folder: Path) -> Path:
    """The notes above and the sample WhatsApp chat as ``family-chat`` under ``folder``; returns its vecbook.toml."""
    import json

    notes = folder / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for name, text in SERVED_NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    chat = SAMPLES / "exports" / "WhatsApp Chat with Family.txt"
    config = folder / "vecbook.toml"
    config.write_text(f'data_directory = "notes"\n\n[[collections]]\nname = "family-chat"\n'
                      f'path = {json.dumps(str(chat))}\nformat = "whatsapp"\n', encoding="utf-8")
    return config


def assert_linear(run: Callable[[int], Any], n: int) -> None:
    """``run(4 * n)`` takes less than 8 times ``run(n)`` (best of three each): linear work takes
    4 times, quadratic 16. A ratio, not a limit in seconds, so that a machine busy with other jobs
    slows both sizes alike rather than failing the test."""
    import time

    def best(size: int) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            run(size)
            times.append(time.perf_counter() - started)
        return min(times)

    small, large = best(n), best(4 * n)
    assert large < 8 * max(small, 1e-3), f"{4 * n:,}: {large:.3f} s against {small:.3f} s at {n:,}"
