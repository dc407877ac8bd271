"""Building the ONNX files once per machine and model, in the cache folder: the model exported
with torch, fused with onnxruntime's transformer optimizer, and its int8 copy (RECIPE: the
float32 graph rebalanced on a calibration text, then quantized). Building needs torch,
transformers, onnx and onnxruntime (all in requirements.txt), runs in a child process (their
memory leaves with it) and takes 10-20 s. The built files are checked against their recorded
size and time (else sha256) on every load and rebuilt when one is missing or damaged.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from .config import VecBookError
from .onnx_model import FLOAT_FILE, INT8_FILE, RECIPE, _runtime, model_files, recipe

log = logging.getLogger("vecbook")

# SmoothQuant's migration strength: a product's input channel j is divided by
# max|x_j| ** alpha / max|w_j| ** (1 - alpha). Mean cosine to float32 over 400 SciFact
# abstracts: 0.3: 0.99876, 0.5: 0.99926, 0.6: 0.99937, 0.7: 0.99933, 0.8: 0.99929.
SMOOTHING_ALPHA = 0.6
# A down-projection input channel whose calibrated peak is this many times the median
# channel's (MiniLM: one channel at 14-25 against ~3 in layers 1-4, at one token per text)
# is computed in float32; at most this many channels per product.
OUTLIER_RATIO = 6.0
MAX_OUTLIER_CHANNELS = 8
# Texts the calibration runs (chat, notes, mail, a few other scripts), shipped with the package.
CALIBRATION_FILE = Path(__file__).with_name("calibration.txt")
CALIBRATION_BATCH = 8
MANIFEST_FILE = "manifest.json"


def source_digest(model_dir: Path) -> str:
    """The built folder's key: the model's files and the recipe (a changed model builds anew)."""
    return hashlib.sha256(json.dumps([model_files(model_dir), recipe()]).encode()).hexdigest()[:16]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stat(path: Path) -> list[int]:
    """Size and modification time: what a write to the file (a rebuild, a damaged copy) changes."""
    info = path.stat()
    return [info.st_size, info.st_mtime_ns]


def _intact(folder: Path, used: Sequence[str]) -> bool:
    """True when the folder was built by this recipe and the files ``used`` are those written
    at build: same size and modification time, or else the sha256 recorded then. Hashing the
    90 MB float32 graph cost every start 0.08 s of CPU (0.25-0.34 s wall on a busy 2-core
    machine); a file changed in place without a new size or time (a disk fault) is the one
    damage this misses."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        files, stats = manifest["files"], manifest.setdefault("stats", {})
        if manifest.get("recipe") != recipe() or set(files) != {FLOAT_FILE, INT8_FILE}:
            return False
        hashed = [name for name in used if stats.get(name) != _stat(folder / name)]
        if not all(files[name] == _sha256(folder / name) for name in hashed):
            return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    if hashed:  # verified by hash (a copied folder, or one built before stats were kept): hash once
        stats.update({name: _stat(folder / name) for name in hashed})
        with contextlib.suppress(OSError):  # a read-only cache folder still loads, hashing each time
            temp = folder / f".{MANIFEST_FILE}.{os.getpid()}"
            temp.write_text(json.dumps(manifest), encoding="utf-8")
            os.replace(temp, folder / MANIFEST_FILE)
    return True


_build_lock = threading.Lock()


def built_model(model_dir: Path, cache: Path, spec: dict[str, Any],
                used: Sequence[str] = (FLOAT_FILE, INT8_FILE)) -> Path:
    """The folder of built models for ``model_dir`` under ``cache``, built first when it is
    missing or a file of ``used`` fails its checksum. Two processes building at once each build in a temporary folder
    and the first to publish wins; a damaged folder is moved aside, then replaced."""
    folder = cache / f"{model_dir.name}-{source_digest(model_dir)}-{recipe()}"
    with _build_lock:
        if _intact(folder, used):
            return folder
        if folder.exists():
            log.warning("the ONNX models in %s are damaged or incomplete; building them again", folder)
            _discard(folder)
        cache.mkdir(parents=True, exist_ok=True)
        _sweep_stale_builds(cache)
        temp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
        try:
            # A WARNING, so a first search (quiet by default) says why it pauses.
            log.warning("building the ONNX models once for this machine (10-20 s) in %s", folder)
            started = time.perf_counter()
            _build_apart(model_dir, temp, spec)
            try:
                os.rename(temp, folder)
            except OSError:  # another process published first; theirs is as good
                if not _intact(folder, used):
                    raise
            log.info("ONNX models built in %.0f s", time.perf_counter() - started)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
    return folder


# The child process that builds: torch, transformers and onnx (about 1 GB while exporting) live
# and die with it, so a server or a first index never keeps them. Its arguments: the model
# folder, the output folder, the spec (JSON), the recipe the caller expects, and the caller's
# module path (JSON): run isolated (-I: no current folder, no PYTHON* variables) from the output
# folder, it imports what the caller imports, never a file that happens to lie where it started.
BUILD_CHILD = """
import json, sys
sys.path[:] = json.loads(sys.argv[5])
from pathlib import Path
from vecbook import onnx_build
onnx_build.recipe = lambda info=None: sys.argv[4]
onnx_build._build(Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]))
"""
BUILD_TIMEOUT_SECONDS = 1800
# Build children running now, so a server leaving mid-build takes them along (stop_builds).
_children: set[subprocess.Popen[str]] = set()
_children_lock = threading.Lock()


class OnnxBuildError(VecBookError):
    """Building the ONNX files failed; the message holds the end of the build's own report."""


def _build_apart(model_dir: Path, out: Path, spec: dict[str, Any]) -> None:
    """Build into ``out`` in a child Python process (see BUILD_CHILD), or in this one where no
    interpreter can be started: an embedded Python without ``sys.executable``, or a frozen app,
    whose executable is the app itself."""
    if not sys.executable or getattr(sys, "frozen", False):
        _build_here(model_dir, out, spec)
        return
    path = [os.path.abspath(entry) for entry in sys.path]  # "" (the current folder) as the folder it is
    arguments = [sys.executable, "-I", "-c", BUILD_CHILD, str(model_dir), str(out), json.dumps(spec), recipe(),
                 json.dumps(path)]
    # A server started by a desktop app has no console: a child console would flash open on Windows.
    flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) if sys.platform == "win32" else 0
    try:
        child = subprocess.Popen(arguments, cwd=out, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, errors="replace", creationflags=flags)
    except OSError:
        _build_here(model_dir, out, spec)
        return
    with _children_lock:
        _children.add(child)
    try:
        report, _ = child.communicate(timeout=BUILD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise OnnxBuildError(f"building the ONNX models took over {BUILD_TIMEOUT_SECONDS} s; stopped") from None
    finally:
        with _children_lock:
            _children.discard(child)
    if child.returncode != 0:
        last = "\n".join(report.strip().splitlines()[-8:])
        raise OnnxBuildError(f"building the ONNX models failed (exit {child.returncode}):\n{last}")


def stop_builds() -> None:
    """Kill the build children running now (a process leaving at once, as ``serve`` on SIGTERM):
    a child would otherwise go on for its 10-20 s, holding ~1 GB. What they left in the cache
    folder is swept by the next build."""
    with _children_lock:
        children = list(_children)
    for child in children:
        with contextlib.suppress(OSError):
            child.kill()


atexit.register(stop_builds)  # an interrupted shell search leaves no build running either


def _sweep_stale_builds(cache: Path) -> None:
    """Remove build folders older than any build can run (left by a killed process)."""
    limit = time.time() - BUILD_TIMEOUT_SECONDS - 60
    for folder in [*cache.glob(".build-*"), *cache.glob(".damaged-*")]:
        with contextlib.suppress(OSError):
            if folder.stat().st_mtime < limit:
                shutil.rmtree(folder, ignore_errors=True)


def _build_here(model_dir: Path, out: Path, spec: dict[str, Any]) -> None:
    with _quiet_build():
        _build(model_dir, out, spec)


# The packages a build runs: their log records would bury our two lines.
BUILD_PACKAGES = ("onnxruntime", "onnx", "torch", "transformers")


class _BuildRecords(logging.Filter):
    """Drops records logged from the build's packages' files, on any logger (onnxruntime's
    quantizer logs each tensor on the root logger, its optimizer on loggers named after bare
    module names such as ``fusion_base``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(f"{os.sep}{name}{os.sep}" in record.pathname for name in BUILD_PACKAGES)


@contextlib.contextmanager
def _quiet_build() -> Iterator[None]:
    """No tracer warnings from torch's exporter and no log records from the build's packages
    while it runs: the user sees our two lines. Only those are held back: records from the
    rest of the process (another thread's too) still reach the root logger's handlers."""
    root, noise = logging.getLogger(), _BuildRecords()
    # The root logger's own filter too: with no handler configured (a script), Python's
    # last-resort handler would print the quantizer's root-logged warnings.
    handlers = [root, *root.handlers]
    # The quantizer calls logging.warning(), which gives a root logger without handlers one of
    # its own (basicConfig) for good: every later line would print twice. With one here, it does not.
    root.addHandler(logging.NullHandler())
    for handler in handlers:
        handler.addFilter(noise)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for handler in handlers:
            handler.removeFilter(noise)
        for handler in root.handlers[:]:  # the root logger as it was found
            if handler not in handlers:
                root.removeHandler(handler)


def _discard(folder: Path) -> None:
    aside = folder.with_name(f".damaged-{folder.name}-{os.getpid()}")
    try:
        os.rename(folder, aside)
    except OSError:
        return  # another process moved or rebuilt it
    shutil.rmtree(aside, ignore_errors=True)


def _build(model_dir: Path, out: Path, spec: dict[str, Any]) -> None:
    """Export with torch, fuse with onnxruntime's transformer optimizer, then write the int8
    copy (see RECIPE and _quantize)."""
    fp32, fused = out / "fp32.onnx", out / "fused.onnx"
    _export(model_dir, fp32)
    from onnxruntime.transformers.optimizer import optimize_model

    # opt_level 1: fusions only (Attention, SkipLayerNorm, BiasGelu); the session applies
    # hardware-specific ones at load, so the file suits any CPU.
    fused_model = optimize_model(str(fp32), model_type="bert", num_heads=spec["heads"],
                                 hidden_size=spec["hidden_size"], opt_level=1)
    fused_model.save_model_to_file(str(fused))
    del fused_model
    fp32.unlink()
    _quantize(fused, out / INT8_FILE, model_dir, spec)
    fused.rename(out / FLOAT_FILE)
    names = (FLOAT_FILE, INT8_FILE)
    manifest = {"recipe": recipe(), "source": str(model_dir), "files": {name: _sha256(out / name) for name in names},
                "stats": {name: _stat(out / name) for name in names}}
    (out / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")


def _export(model_dir: Path, path: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager", local_files_only=True).eval()

    class LastHidden(torch.nn.Module):
        """The encoder's token states; called by keyword, as transformers' argument order changes."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones(2, 16, dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(LastHidden(model), (sample, sample, torch.zeros_like(sample)), str(path),
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]},
                          opset_version=17, do_constant_folding=True, dynamo=False)


def _quantize(source: Path, target: Path, model_dir: Path, spec: dict[str, Any]) -> None:
    """The int8 graph: the float32 graph rebalanced by the calibration text's activations
    (_rebalance, which leaves its vectors as they were), then every weight product but the
    outlier channels' quantized to int8 weights per output channel (activations per batch)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(source))
    in_float32 = _rebalance(model.graph, _calibrate(model, model_dir, spec))
    weights = _weights(model.graph)
    nodes = [node.name for node in model.graph.node if _is_product(node, weights) and node.name not in in_float32]
    rebalanced = target.with_name("rebalanced.onnx")
    onnx.save(model, str(rebalanced))
    del model, weights
    quantize_dynamic(str(rebalanced), str(target), weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=recipe() != RECIPE, op_types_to_quantize=["MatMul", "Attention"],
                     nodes_to_quantize=nodes, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    rebalanced.unlink()


def _weights(graph: Any) -> dict[str, Any]:
    """The graph's 2-D initializers (weight matrices) by name."""
    return {tensor.name: tensor for tensor in graph.initializer if len(tensor.dims) == 2}


def _is_product(node: Any, weights: dict[str, Any]) -> bool:
    """A product of an activation with a weight matrix: what int8 quantizes (a BERT layer's
    fused Attention holds the query, key and value weights; the other three are MatMuls)."""
    return node.op_type in ("MatMul", "Attention") and len(node.input) > 1 and node.input[1] in weights


def _calibrate(model: Any, model_dir: Path, spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each weight product's input: the largest magnitude of each channel over the calibration
    texts' tokens (padding excluded), from the float32 graph."""
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer

    ort = _runtime()
    texts = _calibration_texts()
    weights = _weights(model.graph)
    inputs = sorted({node.input[0] for node in model.graph.node if _is_product(node, weights)})
    outputs = len(model.graph.output)
    model.graph.output.extend(helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in inputs)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    del model.graph.output[outputs:]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=spec["max_tokens"])
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
    peaks: dict[str, np.ndarray] = {}
    for start in range(0, len(texts), CALIBRATION_BATCH):
        encodings = tokenizer.encode_batch(texts[start:start + CALIBRATION_BATCH])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        values = session.run(inputs, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        tokens = mask.astype(bool)
        for name, value in zip(inputs, values):
            peak = np.abs(value[tokens]).max(axis=0)
            peaks[name] = np.maximum(peaks[name], peak) if name in peaks else peak
    return peaks


def _calibration_texts() -> list[str]:
    """The non-blank lines of CALIBRATION_FILE; OnnxBuildError where it is missing or empty."""
    try:
        texts = [line for line in CALIBRATION_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise OnnxBuildError(f"cannot read the calibration text {CALIBRATION_FILE} ({exc}): "
                             "reinstall vecbook") from None
    if not texts:
        raise OnnxBuildError(f"the calibration text {CALIBRATION_FILE} is empty: reinstall vecbook")
    return texts


def _rebalance(graph: Any, peaks: dict[str, np.ndarray]) -> set[str]:
    """Rewrite the float32 graph in place so that per-batch int8 activations lose less, without
    changing what it computes; returns the products to keep in float32.

    A product whose input comes from a LayerNorm (the fused Attention's query/key/value, the
    feed-forward up-projection) sees a few channels far larger than the rest, which set the
    whole batch's int8 step: its input is divided per channel by a scale that the weights'
    rows are multiplied by (SmoothQuant). A feed-forward down-projection sees a channel or two
    with huge values at one token per text: those channels are zeroed in its int8 product and
    multiplied in a float32 product of their own, added back."""
    from onnx import NodeProto, numpy_helper

    weights = _weights(graph)
    producers = {output: node for node in graph.node for output in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    before: dict[int, list[Any]] = {}
    after: dict[int, list[Any]] = {}
    in_float32: set[str] = set()
    for number, node in enumerate(graph.node):
        if not _is_product(node, weights):
            continue
        node.name = node.name or f"{node.op_type}_product_{number}"  # quantize_dynamic picks nodes by name
        if uses[node.input[1]] > 1:  # a shared weight cannot take one product's scales
            continue
        weight = numpy_helper.to_array(weights[node.input[1]])
        source = producers.get(node.input[0])
        if source is not None and source.op_type.endswith("LayerNormalization"):
            before[number] = _smooth(graph, node, peaks[node.input[0]], weight, number)
        elif _projects_down(weight.shape):
            split = _split_outliers(graph, node, peaks[node.input[0]], weight, number)
            if split is not None:
                before[number], after[number] = split
                in_float32.add(before[number][-1].name)
    ordered = []
    for number, node in enumerate(graph.node):
        for part in (*before.get(number, []), node, *after.get(number, [])):
            ordered.append(NodeProto())
            ordered[-1].CopyFrom(part)  # a copy: the originals are cleared below
    del graph.node[:]
    graph.node.extend(ordered)
    return in_float32


def _smooth(graph: Any, node: Any, peak: np.ndarray, weight: np.ndarray, number: int) -> list[Any]:
    """Divide ``node``'s input by per-channel scales and multiply its weight rows by them: the
    Mul node to insert before it."""
    from onnx import helper, numpy_helper

    scales = (np.clip(peak, 1e-5, None) ** SMOOTHING_ALPHA
              / np.clip(np.abs(weight).max(axis=1), 1e-5, None) ** (1 - SMOOTHING_ALPHA))
    scales /= np.exp(np.log(scales).mean())  # geometric mean 1: the product's overall size stays
    graph_weight = next(tensor for tensor in graph.initializer if tensor.name == node.input[1])
    graph_weight.CopyFrom(numpy_helper.from_array((weight * scales[:, None]).astype(np.float32), node.input[1]))
    # Names carry the node's number: ONNX does not require node names to be unique.
    inverse, smoothed = f"{node.name}/smoothing_{number}", f"{node.input[0]}/smoothed_{number}"
    graph.initializer.append(numpy_helper.from_array((1 / scales).astype(np.float32), inverse))
    mul = helper.make_node("Mul", [node.input[0], inverse], [smoothed], name=f"{node.name}/Smooth_{number}")
    node.input[0] = smoothed
    return [mul]


def _split_outliers(graph: Any, node: Any, peak: np.ndarray, weight: np.ndarray,
                    number: int) -> tuple[list[Any], list[Any]] | None:
    """Take the input channels whose peak stands OUTLIER_RATIO times above the median channel's
    out of ``node``'s product into a float32 one: the nodes to insert before it (the float32
    product last) and after it (the sum), or None where no channel stands out."""
    from onnx import helper, numpy_helper

    channels = np.argsort(-peak, kind="stable")[:MAX_OUTLIER_CHANNELS]
    channels = np.sort(channels[peak[channels] > OUTLIER_RATIO * np.median(peak)])
    if not len(channels):
        return None
    keep = np.ones(len(peak), dtype=np.float32)
    keep[channels] = 0.0
    x, y, prefix = node.input[0], node.output[0], f"{node.name}/{number}"  # unique, as in _smooth
    graph.initializer.extend([numpy_helper.from_array(keep, f"{prefix}/kept"),
                              numpy_helper.from_array(channels.astype(np.int64), f"{prefix}/outliers"),
                              numpy_helper.from_array(weight[channels].astype(np.float32), f"{prefix}/outlier_weight")])
    inserted = [helper.make_node("Mul", [x, f"{prefix}/kept"], [f"{x}/kept_{number}"], name=f"{prefix}/Keep"),
                helper.make_node("Gather", [x, f"{prefix}/outliers"], [f"{x}/outliers_{number}"],
                                 name=f"{prefix}/Outliers", axis=-1),
                helper.make_node("MatMul", [f"{x}/outliers_{number}", f"{prefix}/outlier_weight"],
                                 [f"{y}/outliers_{number}"], name=f"{prefix}/OutlierProduct")]
    node.input[0], node.output[0] = f"{x}/kept_{number}", f"{y}/kept_{number}"
    join = helper.make_node("Add", [f"{y}/kept_{number}", f"{y}/outliers_{number}"], [y], name=f"{prefix}/Join")
    return inserted, [join]


def _projects_down(weight_shape: tuple[int, ...]) -> bool:
    """A weight matrix from a wider space to a narrower one: in a BERT layer, only the
    feed-forward output (intermediate size -> hidden size) is one."""
    return len(weight_shape) == 2 and weight_shape[0] > weight_shape[1]


