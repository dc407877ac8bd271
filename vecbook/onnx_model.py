"""The onnxruntime path, which embeds every query and (in float32 or int8) the records: the
sentence-transformers model exported once to ONNX in the cache folder (a fused float32
graph, and the same graph with int8 weights), run with onnxruntime and tokenizers, so that
searching and indexing never import torch.

Building needs torch, transformers, onnx and onnxruntime (all in requirements.txt) and
takes about 20 s once per machine; running needs only onnxruntime, tokenizers and numpy.
The built files are checked against their recorded size and time (else sha256) on every
load and rebuilt when one is missing or damaged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

log = logging.getLogger("vecbook")

# Part of the built folder's name and of the vectors' identity: a changed recipe builds
# a new file and never reuses vectors made by the old one.
RECIPE = "int8-dynamic-v2"
# Whether RECIPE passed the quality gate that any path ``precision = "auto"`` takes must pass
# (SciFact test hybrid-linear nDCG@10 >= 0.735, semantic within 0.005 of float32, chat
# recall@10 within 0.01). It did not: semantic 0.6524 against 0.6621 (-0.0097) on an AVX2
# EPYC. VNNI, AMX and arm64 kernels round the same int8 weights and activations the same
# way; they only skip AVX2's 16-bit saturation of paired products, and avoiding that here
# (7-bit weights) gained 0.0005 in mean cosine to float32. So auto stays float32 there too.
RECIPE_PASSES_GATE = False
FLOAT_FILE = "model-float32.onnx"  # the fused graph: precision float32, and int8's queries
INT8_FILE = "model-int8.onnx"  # the same graph with int8 weights: precision int8's records
MANIFEST_FILE = "manifest.json"
# The model types whose fused graph onnxruntime's transformer optimizer knows (BERT
# encoders: MiniLM, BGE, E5, GTE...). Others keep the torch path.
FUSABLE_TYPES = ("bert",)
# Threads that embed one query. onnxruntime's calling thread runs shares of each operator
# itself, so a worker that wakes late costs little: on 2 cores, 200 queries alternating,
# 6.4 ms on one thread against 4.6 ms on two (p50), 6.8 against 5.9 ms beside a busy
# process; whole 100k hybrid searches 1.1 ms faster, and the same beside a busy process.
# The vectors were bit for bit those of one thread.
QUERY_THREADS = 2


class OnnxUnavailable(Exception):
    """onnxruntime cannot run the model here (a package is missing, or the model is not a
    kind it supports); the message says why. The embedder falls back to torch."""


def check_supported(model_dir: Path) -> dict[str, Any]:
    """The model's config (hidden size, heads, max tokens) when onnxruntime can run it;
    OnnxUnavailable says why not. Only a transformer, mean pooling and an optional
    normalisation are supported: other pipelines (a Dense layer, CLS pooling) would give
    different vectors."""
    try:
        import onnxruntime  # noqa: F401 - only whether it is installed
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise OnnxUnavailable(f"{exc.name} is not installed (pip install -r requirements.txt)") from None
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OnnxUnavailable(f"cannot read the model's configuration in {model_dir}: {exc}") from None
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise OnnxUnavailable(f"modules {kinds} (only Transformer, Pooling and Normalize are exported)")
    others = [value for key, value in pooling.items()
              if key.startswith("pooling_mode_") and key != "pooling_mode_mean_tokens"]
    mean_only = pooling.get("pooling_mode_mean_tokens") and not any(others)
    if not mean_only:
        raise OnnxUnavailable("pooling other than mean tokens")
    if config.get("model_type") not in FUSABLE_TYPES:
        raise OnnxUnavailable(f"model type {config.get('model_type')!r} (supported: {', '.join(FUSABLE_TYPES)})")
    if not (model_dir / "tokenizer.json").is_file():
        raise OnnxUnavailable(f"no tokenizer.json in {model_dir}")
    try:
        settings = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = {}
    return {"hidden_size": int(config["hidden_size"]), "heads": int(config["num_attention_heads"]),
            "max_tokens": int(settings.get("max_seq_length") or config.get("max_position_embeddings", 512)),
            "normalize": kinds[-1] == "Normalize"}


def model_files(model_dir: Path) -> list[tuple[str, int]]:
    """Names and sizes of the model folder's files: what identifies the weights in keys."""
    return sorted((p.name, p.stat().st_size) for p in model_dir.iterdir() if p.is_file())


def source_digest(model_dir: Path) -> str:
    """The built folder's key: the model's files and the recipe (a changed model builds anew)."""
    return hashlib.sha256(json.dumps([model_files(model_dir), RECIPE]).encode()).hexdigest()[:16]


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
        if manifest.get("recipe") != RECIPE or set(files) != {FLOAT_FILE, INT8_FILE}:
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
    folder = cache / f"{model_dir.name}-{source_digest(model_dir)}-{RECIPE}"
    with _build_lock:
        if _intact(folder, used):
            return folder
        if folder.exists():
            log.warning("the ONNX models in %s are damaged or incomplete; building them again", folder)
            _discard(folder)
        cache.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
        try:
            log.info("building the ONNX models once for this machine (about 20 s) in %s", folder)
            started = time.perf_counter()
            with _quiet_build():
                _build(model_dir, temp, spec)
            try:
                os.rename(temp, folder)
            except OSError:  # another process published first; theirs is as good
                if not _intact(folder, used):
                    raise
            log.info("ONNX models built in %.0f s", time.perf_counter() - started)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
    return folder


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
    """Export with torch, fuse with onnxruntime's transformer optimizer, quantize the
    weights to int8 (per output channel, activations quantized per batch at run time)."""
    fp32, fused = out / "fp32.onnx", out / "fused.onnx"
    _export(model_dir, fp32)
    from onnxruntime.transformers.optimizer import optimize_model

    # opt_level 1: fusions only (Attention, SkipLayerNorm, BiasGelu); the session applies
    # hardware-specific ones at load, so the file suits any CPU.
    fused_model = optimize_model(str(fp32), model_type="bert", num_heads=spec["heads"],
                                 hidden_size=spec["hidden_size"], opt_level=1)
    fused_model.save_model_to_file(str(fused))
    _quantize(fused, out / INT8_FILE)
    fp32.unlink()
    fused.rename(out / FLOAT_FILE)
    names = (FLOAT_FILE, INT8_FILE)
    manifest = {"recipe": RECIPE, "source": str(model_dir), "files": {name: _sha256(out / name) for name in names},
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


def _quantize(source: Path, target: Path) -> None:
    """int8 weights for the attention and the feed-forward up-projection; the feed-forward
    down-projections stay float32: their input is the GELU output, whose long tail a
    per-batch int8 scale cuts coarsely (cosine to float32 0.990 -> 0.995 on short texts)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source)).graph
    shapes = {tensor.name: tuple(tensor.dims) for tensor in graph.initializer}
    nodes = [node.name for node in graph.node if node.op_type == "Attention"
             or (node.op_type == "MatMul" and not _projects_down(shapes.get(node.input[1], ())))]
    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=False, op_types_to_quantize=["MatMul", "Attention"], nodes_to_quantize=nodes,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def _projects_down(weight_shape: tuple[int, ...]) -> bool:
    """A weight matrix from a wider space to a narrower one: in a BERT layer, only the
    feed-forward output (intermediate size -> hidden size) is one."""
    return len(weight_shape) == 2 and weight_shape[0] > weight_shape[1]


class OnnxModel:
    """The built models in onnxruntime, with the model's own fast tokenizer; thread-safe.

    In float32 everything runs the fused float32 graph. In int8, records (the bulk of the
    work) run the int8 graph and queries the float32 one, which embeds one short text in a
    few milliseconds and keeps int8's error on one side of each comparison: a one-word text
    agreed 0.94 in cosine with float32 under int8.
    """

    def __init__(self, model_dir: Path, folder: Path, spec: dict[str, Any], int8: bool = False) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self.int8 = int8
        self.max_tokens = spec["max_tokens"]
        self.dimension = spec["hidden_size"]
        self.normalize = spec["normalize"]
        # Two tokenizers: one whole (offsets for windows), one cut and padded for batches.
        self.plain = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.plain.no_truncation()
        self.plain.no_padding()
        self.batching = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.batching.enable_truncation(max_length=self.max_tokens)
        self.batching.enable_padding(pad_id=self.batching.token_to_id("[PAD]") or 0)
        self.threads = 0  # onnxruntime's default: one thread per physical core
        # Where the machine has no more cores than a query uses, queries run on the records'
        # session: one copy of the float32 graph in memory (~90 MB) rather than two.
        self.query_threads = 0 if (os.cpu_count() or 1) <= QUERY_THREADS else QUERY_THREADS
        self.forward_seconds = 0.0  # time inside session.run
        self._sessions: dict[tuple[str, int], Any] = {}
        self._lock = threading.Lock()
        # The sessions queries and (int8) records will use, made now so an unusable file fails
        # at load; a one-thread int8 session made only for that check was never used again.
        self.session(FLOAT_FILE, self.query_threads)
        if int8:
            self.session(INT8_FILE, self.threads)

    def session(self, file: str, threads: int) -> Any:
        """A session of one built file on ``threads`` threads, 0 for one per physical core
        (made on first use: onnxruntime fixes the count per session)."""
        with self._lock:
            if (file, threads) not in self._sessions:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                # Spinning workers stall when another process loads the CPU, as OpenMP's do.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.log_severity_level = 3
                self._sessions[file, threads] = ort.InferenceSession(str(self.folder / file), options,
                                                                     providers=["CPUExecutionProvider"])
            return self._sessions[file, threads]

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Each text's token character spans, without special tokens or truncation."""
        return [encoding.offsets for encoding in self.plain.encode_batch(list(texts), add_special_tokens=False)]

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts with special tokens, capped at the model's limit."""
        return [min(len(encoding.ids), self.max_tokens)
                for encoding in self.plain.encode_batch(list(texts), add_special_tokens=True)]

    def run(self, batches: Sequence[Sequence[str]], threads: int, query: bool = False) -> list[np.ndarray]:
        """Vectors of each batch, on ``threads`` threads (0: one per physical core), by the
        float32 graph, or (precision int8) the int8 one for records."""
        session = self.session(INT8_FILE if self.int8 and not query else FLOAT_FILE, threads)
        return [self._forward(session, batch) for batch in batches]

    def _forward(self, session: Any, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled (and, as the model says, normalised) float32 vectors of one batch."""
        encodings = self.batching.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        started = time.perf_counter()
        states = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        self.forward_seconds += time.perf_counter() - started
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self.normalize:
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32, copy=False)
