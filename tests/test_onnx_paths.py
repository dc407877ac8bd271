"""The onnxruntime paths (issues 16 and 29): float32 and int8 graphs built once in the cache
folder, by a child process; ``precision = "auto"`` takes int8 on CPUs with int8 dot products or
x86 AVX2 and float32 elsewhere, both on onnxruntime (float32 gives torch's vectors, and neither imports
torch); int8, rebalanced by a calibration text before rounding, stays close to float32."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vecbook
from vecbook import cpu, embed, onnx_build, onnx_int8, onnx_mapped, onnx_model
from conftest import DATA, ROOT, torch_embedder

SENTENCES = [
    "the walrus hid the golden key under the pier",
    "Bought a second-hand kayak and paddle for the summer.",
    "Meeting moved to Thursday; bring the budget spreadsheet.",
    "How do I reset my router password?",
    "Grandma's recipe: two cups flour, one egg, a pinch of salt, bake 40 minutes.",
    "ok",
    "Die Fähre zur Insel fährt um acht Uhr ab.",
    "word " * 300,  # longer than one window: truncated to the model's limit, like float32
]


@pytest.fixture(scope="module")
def torch32() -> vecbook.Embedder:
    """float32 on torch, as on a machine where onnxruntime cannot run the model."""
    return torch_embedder(bfloat16=False)


def test_building_holds_back_only_the_build_libraries_records(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)

    def from_file(logger: logging.Logger, *parts: str) -> None:
        logger.handle(logger.makeRecord(logger.name, logging.WARNING, os.path.join("site-packages", *parts), 1,
                                        f"from {parts[-1]}", (), None))

    with onnx_build._quiet_build():
        from_file(logging.getLogger(), "onnxruntime", "quantization", "onnx_quantizer.py")  # logging.info(...)
        from_file(logging.getLogger("fusion_base"), "onnxruntime", "transformers", "fusion_base.py")
        logging.warning("another thread's warning")
        logging.getLogger("vecbook").info("our own line")
    from_file(logging.getLogger("fusion_base"), "onnxruntime", "transformers", "fusion_base.py")  # after: shown
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["another thread's warning", "our own line", "from fusion_base.py"]


def test_building_holds_back_the_quantizers_root_warnings_where_no_handler_is_set() -> None:
    """A script that configures no logging gets Python's last-resort handler, outside the
    root logger's handlers: the root logger's own filter drops the build's records."""
    root = logging.getLogger()
    quantizer = root.makeRecord("root", logging.WARNING, os.path.join("site-packages", "onnxruntime", "quantization",
                                                                      "quantize.py"), 1, "pre-process", (), None)
    with onnx_build._quiet_build():
        assert not root.filter(quantizer)
    assert root.filter(quantizer)


@pytest.mark.parametrize("cores, sessions", [(2, 1), (8, 2)])
def test_queries_share_the_records_session_where_the_cores_are_few(float32: vecbook.Embedder, cores: int,
                                                                   sessions: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_model.os, "cpu_count", lambda: cores)
    built = float32.load()
    model = onnx_model.OnnxModel(float32._path, built.folder, onnx_model.check_supported(float32._path))
    records = model.run([model.prepare(SENTENCES[:3])[0]], model.threads)[0]
    query = model.run([model.prepare(SENTENCES[:1])[0]], model.query_threads, query=True)[0]
    assert len(model._sessions) == sessions  # one float32 graph in memory on a 2-core machine
    assert np.allclose(query[0], records[0], atol=1e-5)


def test_the_untruncated_tokenizer_is_read_only_when_windows_are_cut(float32: vecbook.Embedder,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm start whose cache holds every window embeds only the query: it never reads
    tokenizer.json a second time (~0.06 s of CPU) for the offsets that cut windows."""
    from tokenizers import Tokenizer

    reads: list[str] = []
    original = Tokenizer.from_file
    monkeypatch.setattr("tokenizers.Tokenizer", type("Counting", (), {
        "from_file": staticmethod(lambda path: reads.append(path) or original(path))}))
    built = float32.load()
    model = onnx_model.OnnxModel(float32._path, built.folder, onnx_model.check_supported(float32._path))
    model.run([model.prepare(["budget meeting"])[0]], model.query_threads, query=True)
    assert len(reads) == 1
    long_text = "word " * 600
    spans = model.offsets([long_text])[0]
    assert len(reads) == 2 and len(spans) == 600  # untruncated, unlike the batches' tokenizer
    assert spans[-1] == (len(long_text) - 5, len(long_text) - 1)
    model.offsets(["again"])
    assert len(reads) == 2


def test_the_query_graph_loads_with_its_weights_mapped_and_gives_the_same_vectors(
        float32: vecbook.Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime parsed and copied the float32 graph's 90 MB of weights at every start (0.26 s
    of CPU on the AVX2 EPYC); from a copy whose weights lie in a file of their own it maps them."""
    built = float32.load()
    graph = tmp_path / onnx_model.FLOAT_FILE
    shutil.copy2(built.folder / onnx_model.FLOAT_FILE, graph)
    mapped = onnx_mapped.mapped_graph(graph)
    assert mapped != graph and mapped.stat().st_size < 1_000_000  # the weights live beside it
    assert onnx_mapped.mapped_graph(graph) == mapped  # made once
    model = onnx_model.OnnxModel(float32._path, tmp_path, onnx_model.check_supported(float32._path))
    assert Path(model.session(onnx_model.FLOAT_FILE, model.query_threads)._model_path) == mapped
    ids = model.prepare(SENTENCES)[0]
    ort = onnx_model._runtime()
    whole = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    assert np.array_equal(model.run([ids], model.query_threads, query=True)[0], model._forward(whole, ids))
    # A rebuilt graph (another size or time) gets a copy of its own, and the old one goes, as do
    # the leftovers of a write killed midway; one under way in another process stays.
    killed, writing = tmp_path / ".mapped-killed", tmp_path / ".mapped-writing"
    for temp in (killed, writing):
        temp.mkdir()
        (temp / "part.weights").write_bytes(b"w")
    os.utime(killed, (time.time() - 3600, time.time() - 3600))
    later = graph.stat().st_mtime_ns + 10**9
    os.utime(graph, ns=(later, later))
    again = onnx_mapped.mapped_graph(graph)
    assert again != mapped and again.is_file() and not mapped.exists()
    assert not killed.exists() and writing.exists()
    shutil.rmtree(writing)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("mapped-")) == \
        sorted([again.name, f"{again.name}.json", f"{again.stem}.weights"])
    # Damaged weights (another size) are written again; where no copy can be written the graph loads as it is.
    with open(again.with_suffix(".weights"), "ab") as weights:
        weights.write(b"x")
    assert onnx_mapped.mapped_graph(graph) == again and onnx_mapped._complete(tmp_path, again.name,
                                                                              again.with_suffix(".weights").name)
    again.unlink()

    def full(*args: Any) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(onnx_mapped, "_write", full)
    assert onnx_mapped.mapped_graph(graph) == graph


def test_float32_runs_on_onnxruntime_with_torchs_vectors(float32: vecbook.Embedder,
                                                         torch32: vecbook.Embedder) -> None:
    assert (float32.precision, float32.runtime) == ("float32", "onnxruntime")
    assert (torch32.precision, torch32.runtime) == ("float32", "torch")
    a, b = float32.encode(SENTENCES), torch32.encode(SENTENCES)
    assert ((a * b).sum(axis=1) > 0.99999).all()
    assert float(float32.encode_query("ok") @ torch32.encode_query("ok")) > 0.99999
    assert float32.identity == torch32.identity  # one cache serves both runtimes


def test_int8_vectors_agree_with_float32(int8: vecbook.Embedder, float32: vecbook.Embedder) -> None:
    a, b = int8.encode(SENTENCES), float32.encode(SENTENCES)
    cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert int8.precision == "int8" and a.dtype == np.float32 and a.shape == b.shape
    # int8 errs most on the shortest texts ("ok": 0.986 batched with the others, 0.994 with 7-bit
    # weights alone); without the rebalancing "ok" fell to 0.94, and a wrong graph scores far lower
    assert cosine.min() > 0.97 and cosine.mean() > 0.99, cosine
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)  # the model's Normalize module


def test_int8_path_embeds_queries_in_float32(int8: vecbook.Embedder, torch32: vecbook.Embedder) -> None:
    """Queries are one short text, where int8 errs most: they run the float32 graph."""
    for text in ("ok", "kayak for the summer", SENTENCES[3]):
        assert float(int8.encode_query(text) @ torch32.encode_query(text)) > 0.9999


def test_onnxruntime_windows_equal_torch_windows(int8: vecbook.Embedder, torch32: vecbook.Embedder) -> None:
    """Both runtimes cut long texts at the same characters: the same tokenizer, run two ways."""
    texts = ["short", "alpha beta " * 400, "Straße, naïve café! " * 200]
    assert int8.window_spans_many(texts) == torch32.window_spans_many(texts)
    assert int8.window_tokens == torch32.window_tokens and int8.dimension == torch32.dimension == 384


def test_int8_and_float32_vectors_never_share_a_cache_key(int8: vecbook.Embedder,
                                                          float32: vecbook.Embedder) -> None:
    assert int8.identity != float32.identity
    assert onnx_model.recipe() in int8.identity  # a new recipe never reuses the old recipe's vectors


def test_int8_model_is_built_once_in_the_cache_folder(int8: vecbook.Embedder, user_cache: Path) -> None:
    folders = [p for p in (user_cache / "models").iterdir() if not p.name.startswith(".")]
    assert len(folders) == 1 and folders[0].name.endswith(onnx_model.recipe())
    manifest = json.loads((folders[0] / onnx_build.MANIFEST_FILE).read_text())
    assert manifest["recipe"] == onnx_model.recipe()
    assert set(manifest["files"]) == {onnx_model.FLOAT_FILE, onnx_model.INT8_FILE}
    again = vecbook.Embedder(precision="int8", model_cache=user_cache / "models")
    again.load()  # found intact: loads without a build (a build would leave a second folder or log)
    assert [p for p in (user_cache / "models").iterdir() if not p.name.startswith(".")] == folders


def test_damaged_int8_model_is_rebuilt_with_a_warning_in_a_process_of_its_own(
        int8: vecbook.Embedder, user_cache: Path, tmp_path: Path) -> None:
    """The rebuild runs in a child process: torch, transformers and onnx (about 1 GB while
    exporting) never enter the process that searches."""
    built = next(p for p in (user_cache / "models").iterdir() if not p.name.startswith("."))
    cache = tmp_path / "models"
    shutil.copytree(built, cache / built.name)
    model_file = cache / built.name / onnx_model.INT8_FILE
    with model_file.open("r+b") as handle:  # a disk error or an interrupted copy
        handle.truncate(model_file.stat().st_size // 2)
    code = f"""
import logging, sys
sys.path.insert(0, {str(ROOT)!r})
logging.basicConfig(level=logging.INFO, format="%(message)s")
import vecbook
rebuilt = vecbook.Embedder(precision="int8", model_cache=__import__("pathlib").Path({str(cache)!r}))
vector = rebuilt.encode_query({SENTENCES[0]!r})
records = rebuilt.encode({SENTENCES[:3]!r})
print(" ".join(str(float(v)) for v in vector))
print(" ".join(str(float(v)) for v in records.ravel()))
print("torch imported:", "torch" in sys.modules, "onnx imported:", "onnx" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "damaged" in out.stderr and "ONNX models built" in out.stderr
    # Only the int8 graph was damaged: it is made again from the float32 one, without an export.
    assert "building the int8 graph again from the intact float32 one" in out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "torch imported: False onnx imported: False"
    vector = np.array([float(v) for v in lines[-3].split()], dtype=np.float32)
    assert float(vector @ int8.encode_query(SENTENCES[0])) > 0.9999
    records = np.array([float(v) for v in lines[-2].split()], dtype=np.float32).reshape(3, -1)
    np.testing.assert_allclose(records, int8.encode(SENTENCES[:3]), rtol=0, atol=1e-6)  # the int8 graph as built
    assert [p.name for p in cache.iterdir()] == [built.name]  # the damaged copy and the build folder are gone


@pytest.mark.parametrize("damaged, kept", [(onnx_model.INT8_FILE, True), (onnx_model.FLOAT_FILE, False),
                                           (onnx_build.MANIFEST_FILE, False)])
def test_a_rebuild_keeps_the_float32_graph_only_when_it_is_intact(
        damaged: str, kept: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A damaged int8 graph is quantized again from the intact float32 graph (a few seconds, no
    torch); a damaged float32 graph or manifest gets the whole build (export, fusion, int8)."""
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}")
    folder = onnx_build.build_folder(model_dir, tmp_path / "models")
    folder.mkdir(parents=True)
    (folder / onnx_model.FLOAT_FILE).write_bytes(b"float32 graph")
    (folder / onnx_model.INT8_FILE).write_bytes(b"int8 graph")
    onnx_build.write_manifest(model_dir, folder)
    assert onnx_build.built_model(model_dir, tmp_path / "models", {}) == folder  # intact: no build
    with (folder / damaged).open("ab") as handle:
        handle.write(b"!")
    # The child lists what its build folder held when it started.
    monkeypatch.setattr(onnx_build, "BUILD_CHILD", "import os, sys, pathlib; "
                        "pathlib.Path(sys.argv[2], 'found').write_text(' '.join(sorted(os.listdir(sys.argv[2]))))")
    caplog.set_level(logging.WARNING, "vecbook")
    assert onnx_build.built_model(model_dir, tmp_path / "models", {}) == folder
    assert (folder / "found").read_text() == (onnx_model.FLOAT_FILE if kept else "")
    if kept:
        assert (folder / onnx_model.FLOAT_FILE).read_bytes() == b"float32 graph"
    assert ("from the intact float32 one" in caplog.text) is kept and "damaged or incomplete" in caplog.text
    assert [p.name for p in (tmp_path / "models").iterdir()] == [folder.name]


def test_a_failed_build_says_what_the_build_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_build, "BUILD_CHILD", "import sys; print('exporter: out of memory'); sys.exit(3)")
    with pytest.raises(onnx_build.OnnxBuildError, match=r"failed \(exit 3\):\nexporter: out of memory"):
        onnx_build._build_apart(Path("model"), tmp_path, {})


def test_the_build_child_imports_what_this_process_imports_not_files_where_it_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file named like a module (json.py, numbers.py) in the folder a search is run from never
    reaches the build: the child runs isolated, on this process's module path."""
    (tmp_path / "json.py").write_text("raise SystemExit('shadowed: json.py of the current folder')\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    # and where the child starts (its build folder), the first folder of a Python run without -I
    (tmp_path / "out" / "json.py").write_text("raise SystemExit('shadowed: json.py of the build folder')\n")
    with pytest.raises(onnx_build.OnnxBuildError) as failed:
        onnx_build._build_apart(tmp_path / "no-such-model", tmp_path / "out", {})
    assert "shadowed" not in str(failed.value) and "no-such-model" in str(failed.value)


def test_a_build_given_relative_folders_writes_into_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model cache named relative to the current folder (``Embedder(model_cache="cache/models")``)
    is built into: the child, started in its build folder, gets both folders as absolute paths."""
    monkeypatch.setattr(onnx_build, "BUILD_CHILD", "import sys, pathlib; "
                        "assert pathlib.Path(sys.argv[1], 'config.json').is_file(), sys.argv[1]; "
                        "pathlib.Path(sys.argv[2], 'built').write_text('yes')")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    (tmp_path / "cache" / ".build-1").mkdir(parents=True)
    onnx_build._build_apart(Path("model"), Path("cache/.build-1"), {})
    assert (tmp_path / "cache" / ".build-1" / "built").read_text() == "yes"


def test_stop_builds_ends_a_build_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """serve, stopped by SIGTERM during a first start, takes the build child (~1 GB) along."""
    import threading

    monkeypatch.setattr(onnx_build, "BUILD_CHILD", "import time; time.sleep(120)")
    errors: list[BaseException] = []

    def build() -> None:
        try:
            onnx_build._build_apart(Path("model"), tmp_path, {})
        except onnx_build.OnnxBuildError as exc:
            errors.append(exc)

    thread = threading.Thread(target=build)
    thread.start()
    deadline = time.monotonic() + 30
    while not onnx_build._children and time.monotonic() < deadline:
        time.sleep(0.05)
    onnx_build.stop_builds()
    thread.join(30)
    assert not thread.is_alive() and errors and "failed (exit" in str(errors[0])
    assert not onnx_build._children


def test_an_interrupted_build_takes_its_child_along(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The notebook's stop button (a KeyboardInterrupt in this process only, unlike a terminal's
    Ctrl-C) during the build: the child (~1 GB, 10-30 s) ends with it, rather than build on into
    a folder already deleted, beside the build the next start begins."""
    import signal

    monkeypatch.setattr(onnx_build, "BUILD_CHILD", "import time; time.sleep(120)")
    started: list[subprocess.Popen[str]] = []
    popen = subprocess.Popen

    def spy(*args: Any, **kwargs: Any) -> subprocess.Popen[str]:
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(onnx_build.subprocess, "Popen", spy)
    # Python's own Ctrl-C handler, as in a notebook: pytest started in the background by a
    # non-interactive shell (as CI may run it) inherits SIGINT ignored, and nothing would stop.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = threading.Event()
    threading.Thread(target=interrupt_once_inside, args=("communicate", done), daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            onnx_build._build_apart(Path("model"), tmp_path, {})
        [child] = started
        assert child.poll() is not None and not onnx_build._children
    finally:
        done.set()  # a test failed before the wait: no Ctrl-C lands in a later test
        signal.signal(signal.SIGINT, previous)
        for child in started:
            child.kill()


def interrupt_once_inside(function: str, done: threading.Event) -> None:
    """Ctrl-C this process once its main thread is inside ``function`` (at once, not after a
    guessed delay, which a loaded machine may overrun: the signal would land before the wait);
    never once ``done`` is set."""
    import signal
    import traceback

    main = threading.main_thread().ident
    while not done.wait(0.005):
        frame = sys._current_frames().get(main)
        if frame is not None and any(f.f_code.co_name == function for f, _ in traceback.walk_stack(frame)):
            os.kill(os.getpid(), signal.SIGINT)
            return


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="finds the child through /proc")
def test_a_build_child_ends_when_its_process_is_killed(tmp_path: Path) -> None:
    """``kill -9`` of a first start mid-build runs no exit handler: the child (~1 GB) must see its
    parent gone and end, rather than build on beside the build the next start begins."""
    parent = subprocess.Popen([sys.executable, "-c", (
        "import sys; from pathlib import Path\n"
        "from vecbook import onnx_build\n"
        "onnx_build.BUILD_CHILD = 'import time; time.sleep(120)'\n"
        "onnx_build._build_apart(Path('model'), Path(sys.argv[1]), {})\n"), str(tmp_path)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        children: list[int] = []
        while not children and time.monotonic() < deadline:
            time.sleep(0.005)
            children = [int(p.name) for p in Path("/proc").iterdir()
                        if p.name.isdigit() and _parent_of(p) == parent.pid]
        assert children, "the build child never started"
        parent.kill()  # at once: the child's interpreter may not have started yet
        parent.wait()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{children[0]}").exists() and _parent_of(Path(f"/proc/{children[0]}")) != 0 \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{children[0]}").exists() or _parent_of(Path(f"/proc/{children[0]}")) == 0
    finally:
        parent.kill()
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, 9)


def _parent_of(proc: Path) -> int | None:
    """The parent pid /proc gives for a process (0: a zombie, reaped by nobody yet; None: gone)."""
    try:
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return 0 if fields[0] == "Z" else int(fields[1])


def test_a_missing_calibration_text_is_a_clear_build_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calibration.txt").write_text("\n  \n", encoding="utf-8")
    monkeypatch.setattr(onnx_int8, "CALIBRATION_FILE", tmp_path / "calibration.txt")
    with pytest.raises(onnx_build.OnnxBuildError, match="calibration.txt is empty: reinstall vecbook"):
        onnx_int8._calibration_texts()
    monkeypatch.setattr(onnx_int8, "CALIBRATION_FILE", tmp_path / "gone.txt")
    with pytest.raises(onnx_build.OnnxBuildError, match="cannot read the calibration text .*gone.txt"):
        onnx_int8._calibration_texts()


@pytest.mark.parametrize("file, seven_bits", [("xeon-sapphire-rapids.txt", False), ("epyc-avx2.txt", True)])
def test_auto_takes_int8_for_the_model_the_recipe_was_measured_with_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str, seven_bits: bool) -> None:
    """With int8 dot products, and on AVX2 with the 7-bit weights (the recipe the vectors are keyed by)."""
    info = cpu.parse_cpuinfo((DATA / "cpuinfo" / file).read_text(encoding="utf-8"))
    monkeypatch.setattr(embed, "detect", lambda: info)
    monkeypatch.setattr(onnx_model, "detect", lambda: info)
    monkeypatch.setattr(onnx_model, "RECIPE_PASSES_GATE", True)
    assert vecbook.Embedder()._records_precision() == "int8"
    assert onnx_model.recipe() == onnx_model.RECIPE + ("-7bit" if seven_bits else "")
    other = _model_copy(tmp_path, {})  # another BERT model, as far as VecBook can tell
    assert vecbook.Embedder(str(other))._records_precision() == "float32"


def test_rebalancing_for_int8_leaves_the_float32_vectors_as_they_were(float32: vecbook.Embedder) -> None:
    """The recipe's two rewrites (per-channel scales moved from a LayerNorm-fed product's input
    into its weights; the down-projections' outlier channels in a float32 product of their own)
    compute the same function: only the int8 rounding that follows sees a difference."""
    import onnx
    import onnxruntime as ort

    model = float32.load()
    spec = onnx_model.check_supported(float32._path)
    graph = onnx.load(str(model.folder / onnx_model.FLOAT_FILE))
    plan = onnx_int8._rebalance(graph.graph, onnx_int8._calibrate(graph, float32._path, spec))
    smoothed = [node for node in graph.graph.node if node.name.rsplit("/", 1)[-1].startswith("Smooth_")]
    assert len(smoothed) == 12  # MiniLM's 6 layers: the fused Attention and the up-projection of each
    # ... which take static steps, over a range holding 0 (the other products take a step per token)
    assert sorted(plan.static) == sorted(_fed(graph.graph, node).name for node in smoothed)
    assert all(low < 0 < high for low, high in plan.static.values())
    assert plan.in_float32 and all(name.endswith("/OutlierProduct") for name in plan.in_float32)  # huge activations
    session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    ids, _ = model.prepare(SENTENCES)
    rebalanced = np.concatenate([model._forward(session, [tokens]) for tokens in ids])
    assert ((rebalanced * float32.encode(SENTENCES)).sum(axis=1) > 0.99999).all()


def _fed(graph: object, smoothing: object) -> object:
    """The product a smoothing Mul feeds."""
    return next(node for node in graph.node if smoothing.output[0] in node.input)


@pytest.mark.parametrize("file, seven_bits", [("epyc-avx2.txt", True), ("xeon-sandy-bridge.txt", True),
                                              ("epyc-zen4.txt", False), ("graviton3-arm64.txt", False)])
def test_int8_weights_keep_7_bits_where_the_cpu_adds_int8_products_in_16_bits(file: str, seven_bits: bool) -> None:
    info = cpu.parse_cpuinfo((DATA / "cpuinfo" / file).read_text(encoding="utf-8"))
    assert onnx_model.recipe(info) == onnx_model.RECIPE + ("-7bit" if seven_bits else "")


def test_built_models_are_hashed_once_then_known_by_size_and_time(int8: vecbook.Embedder, user_cache: Path,
                                                                  tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    built = next(p for p in (user_cache / "models").iterdir() if not p.name.startswith("."))
    folder = tmp_path / built.name
    shutil.copytree(built, folder)
    for name in (onnx_model.FLOAT_FILE, onnx_model.INT8_FILE):
        os.utime(folder / name, ns=(1, 1))  # a copy that kept the bytes but not the times: hashed, then remembered
    used = (onnx_model.FLOAT_FILE,)
    assert onnx_build._intact(folder, used)
    monkeypatch.setattr(onnx_build, "_sha256", lambda path: pytest.fail(f"hashed {path} again"))
    assert onnx_build._intact(folder, used)
    with (folder / onnx_model.FLOAT_FILE).open("ab") as handle:
        handle.write(b"\0")  # damage that changes the size is hashed again, and fails
    monkeypatch.setattr(onnx_build, "_sha256", lambda path: "not the recorded digest")
    assert not onnx_build._intact(folder, used)


@pytest.mark.parametrize("passes_gate, precision", [(False, "float32"), (True, "int8")])
def test_auto_takes_int8_on_a_cpu_with_int8_dot_products_only_with_a_recipe_that_passed_the_gate(
        user_cache: Path, monkeypatch: pytest.MonkeyPatch, passes_gate: bool, precision: str) -> None:
    sapphire_rapids = cpu.parse_cpuinfo((DATA / "cpuinfo" / "xeon-sapphire-rapids.txt").read_text(encoding="utf-8"))
    monkeypatch.setattr(embed, "detect", lambda: sapphire_rapids)  # VNNI, AMX and bfloat16: never torch under auto
    monkeypatch.setattr(onnx_model, "RECIPE_PASSES_GATE", passes_gate)
    auto = vecbook.Embedder(model_cache=user_cache / "models")
    auto.load()
    assert (auto.precision, auto.runtime) == (precision, "onnxruntime")
    assert (onnx_model.recipe() in auto.identity) is passes_gate  # the cache keeps each path's vectors apart


def test_bfloat16_embeds_queries_on_onnxruntime_and_loads_torch_only_for_records(
        float32: vecbook.Embedder, user_cache: Path) -> None:
    bf16 = vecbook.Embedder(precision="bfloat16", model_cache=user_cache / "models")
    bf16.load()
    assert (bf16.precision, bf16.runtime) == ("bfloat16", "torch") and bf16._model is None
    assert "|bfloat16|" in bf16.identity and bf16._model is None
    np.testing.assert_array_equal(bf16.encode_query("kayak for the summer"), float32.encode_query("kayak for the summer"))
    assert bf16._model is None  # a query never loads torch
    records, exact = bf16.encode(SENTENCES), float32.encode(SENTENCES)
    assert isinstance(bf16._model, embed.TorchModel) and bf16._model.bfloat16
    cosine = (records * exact).sum(axis=1)
    assert cosine.min() > 0.97, cosine  # bfloat16 records stay comparable with float32 queries


def _model_copy(tmp_path: Path, pooling: dict[str, bool]) -> Path:
    """The packaged model in a folder of links, with its pooling configuration replaced."""
    source = embed.resolve_model(vecbook.config.DEFAULT_MODEL)
    target = tmp_path / "model"
    target.mkdir()
    for item in source.iterdir():
        if item.name != "1_Pooling":
            (target / item.name).symlink_to(item, target_is_directory=item.is_dir())
    (target / "1_Pooling").mkdir()
    config = json.loads((source / "1_Pooling" / "config.json").read_text())
    (target / "1_Pooling" / "config.json").write_text(json.dumps({**config, **pooling}))
    return target


def test_a_model_onnxruntime_cannot_run_falls_back_to_torch_under_auto(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    model = _model_copy(tmp_path, {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    with caplog.at_level(logging.WARNING, logger="vecbook"):
        auto = vecbook.Embedder(str(model), model_cache=tmp_path / "models")
        auto.load()
    assert (auto.precision, auto.runtime) == ("float32", "torch") and "pooling other than mean tokens" in caplog.text
    with pytest.raises(vecbook.ModelNotFoundError, match="precision int8 cannot run .*pooling"):
        vecbook.Embedder(str(model), precision="int8", model_cache=tmp_path / "models").load()
    assert not (tmp_path / "models").exists()  # nothing was built for a model it cannot run


@pytest.mark.parametrize("precision", ["float32", "int8"])
def test_searching_on_onnxruntime_never_imports_torch(int8: vecbook.Embedder, user_cache: Path, tmp_path: Path,
                                                      precision: str) -> None:
    """A served index answers without torch (whose import and load held the interpreter for
    seconds); the built model is reused from the cache folder."""
    (tmp_path / "notes.txt").write_text("Bought a second-hand kayak and paddle for the summer.\n---\n"
                                        "The boiler repair is booked for Tuesday.\n")
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import vecbook
book = vecbook.VecBook(data_directory={str(tmp_path)!r}, precision={precision!r}, cache_directory=False)
hit = book.search("boat for paddling", mode="semantic")[0]
print(hit.citation, book.stats()["precision"], "torch" in sys.modules, "sentence_transformers" in sys.modules)
"""
    env = {**os.environ, "XDG_CACHE_HOME": str(user_cache.parent / "xdg")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["notes.txt:1-1", precision, "False", "False"]


def test_onnxruntime_keeps_no_telemetry_and_sends_none(user_cache: Path, tmp_path: Path) -> None:
    """onnxruntime 1.32 keeps a device id and an event store for Microsoft under the user's cache
    folder (uploaded when online) unless ORT_DISABLE_TELEMETRY is set: VecBook sets it."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("Bought a second-hand kayak and paddle for the summer.\n")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "models").symlink_to(user_cache / "models", target_is_directory=True)  # built once
    code = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
import vecbook
book = vecbook.VecBook(data_directory={str(tmp_path / "data")!r}, cache_directory={str(tmp_path / "cache")!r})
print(book.search("boat", mode="semantic")[0].citation, os.environ.get("ORT_DISABLE_TELEMETRY"))
"""
    env = {name: value for name, value in os.environ.items() if name != "ORT_DISABLE_TELEMETRY"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["notes.txt:1-1", "1"]
    written = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if "Microsoft" in p.parts]
    assert written == []


def test_cpu_description_names_the_cpu_and_its_speed_flags() -> None:
    text = embed.cpu_description()
    assert f"{os.cpu_count()} logical cores" in text and "flags:" in text


@pytest.mark.parametrize("precision", ["auto", "bfloat16"])
def test_a_warm_start_and_a_semantic_search_never_import_torch(user_cache: Path, tmp_path: Path,
                                                               precision: str) -> None:
    """Queries run on onnxruntime whatever embeds the records: once the vector cache holds
    every record, a new process answers a semantic search without torch (bfloat16's records
    path loads torch only to embed what the cache lacks, as the first process did)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "models").symlink_to(user_cache / "models", target_is_directory=True)  # built once
    (tmp_path / "data" / "notes.txt").write_text("Bought a second-hand kayak and paddle for the summer.\n---\n"
                                                 "The boiler repair is booked for Tuesday.\n---\n"
                                                 "Die Fähre fährt um acht Uhr ab. 東京へのフェリー 🚢\n")
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import vecbook
book = vecbook.VecBook(data_directory={str(tmp_path / "data")!r}, precision={precision!r},
                       cache_directory={str(tmp_path / "cache")!r})
hit = book.search("boat for paddling", mode="semantic")[0]
print(hit.citation, book.stats()["cache"]["embedded"], "torch" in sys.modules)
"""
    if precision == "bfloat16":
        # The first start embeds the records with torch: here, where torch is imported already
        # (a fresh process spent 10-15 s of the test importing torch and sentence-transformers).
        with vecbook.VecBook(data_directory=tmp_path / "data", precision=precision,
                             cache_directory=tmp_path / "cache") as book:
            first = [book.search("boat for paddling", mode="semantic")[0].citation,
                     str(book.stats()["cache"]["embedded"]), book.stats()["runtime"]]
        assert first == ["notes.txt:1-1", "3", "torch"]
    else:  # a cold start on onnxruntime embeds the records without torch too
        first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
        assert first.returncode == 0, first.stderr
        assert first.stdout.split() == ["notes.txt:1-1", "3", "False"]
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.split() == ["notes.txt:1-1", "0", "False"]
