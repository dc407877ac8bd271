"""The onnxruntime path, which embeds every query and (in float32 or int8) the records: the
sentence-transformers model's ONNX files (built once in the cache folder by ``onnx_build``: a
fused float32 graph, and the same graph rebalanced and quantized to int8), run with
onnxruntime and tokenizers, so that searching and indexing never import torch. Running needs
only onnxruntime, tokenizers and numpy.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .config import VecBookError
from .cpu import CpuInfo, detect, has_int8_dot

log = logging.getLogger("vecbook")

# onnxruntime 1.32 collects usage events for Microsoft (a device id and an event store in
# ~/.cache/Microsoft/DeveloperTools/.onnxruntime/, uploaded when online) unless this is set
# when it is first imported: VecBook promises that nothing leaves the machine. Set here, before
# any import of onnxruntime below, unless the user set it; the build child inherits it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

# Part of the built folder's name and of the vectors' identity: a changed recipe builds
# a new file and never reuses vectors made by the old one. The recipe (onnx_int8): int8 weights
# per output channel, after two float32-exact rewrites that the calibration text sizes: each
# product fed by a LayerNorm gets per-channel scales moved from its input into its weights
# (SmoothQuant), and each feed-forward down-projection keeps the few input channels that carry
# the model's huge activations in a float32 product of their own. Then activation steps that
# never depend on the rest of the batch, so a text gets the same vector alone or among others:
# a static step (calibrated) where a LayerNorm feeds the product, one per token elsewhere. On a
# CPU without int8 dot products one operand of each product keeps 7 bits ("-7bit"): AVX2's int8
# kernels add pairs of products in 16 bits, which two 8-bit operands overflow.
RECIPE = "int8-smooth-v4"
# Whether RECIPE passed the quality gate that any path ``precision = "auto"`` takes must pass
# (SciFact test hybrid-linear nDCG@10 >= 0.735, semantic within 0.005 of float32, chat
# recall@10 within 0.01), measured with the packaged all-MiniLM-L6-v2 for both its 8-bit and
# its 7-bit operands (docs/performance.md); "auto" takes it for that model only.
RECIPE_PASSES_GATE = True
FLOAT_FILE = "model-float32.onnx"  # the fused graph: precision float32, and int8's queries
INT8_FILE = "model-int8.onnx"  # the same graph with int8 weights: precision int8's records
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


class OnnxBuildError(VecBookError):
    """Building the ONNX files failed; the message holds the end of the build's own report."""


def _runtime() -> Any:
    """onnxruntime, with its telemetry events off even where the host process imported it
    before ORT_DISABLE_TELEMETRY was set (a notebook that loaded it first)."""
    import onnxruntime

    disable = getattr(onnxruntime, "disable_telemetry_events", None)
    if disable is not None:
        disable()
    return onnxruntime


def check_supported(model_dir: Path) -> dict[str, Any]:
    """The model's config (hidden size, heads, max tokens) when onnxruntime can run it;
    OnnxUnavailable says why not. Only a transformer, mean pooling and an optional
    normalisation are supported: other pipelines (a Dense layer, CLS pooling) would give
    different vectors."""
    try:
        _runtime()
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


def recipe(info: CpuInfo | None = None) -> str:
    """The int8 recipe built on this CPU: RECIPE, with a 7-bit operand in each product ("-7bit")
    where the CPU has no int8 dot products (x86 without VNNI adds pairs of int8 products in 16
    bits, which two 8-bit operands can overflow; a 7-bit one cannot)."""
    return RECIPE if has_int8_dot(info or detect()) else f"{RECIPE}-7bit"


class OnnxModel:
    """The built models in onnxruntime, with the model's own fast tokenizer; thread-safe.

    In float32 everything runs the fused float32 graph. In int8, records (the bulk of the
    work) run the int8 graph and queries the float32 one, which embeds one short text in a
    few milliseconds and keeps int8's error on one side of each comparison: a one-word text
    agreed 0.94 in cosine with float32 under int8.
    """

    # A batch pads to its longest text: both graphs give a text the same vector whatever the
    # padding and the batch (no step of the int8 recipe looks across rows; tested).
    fixed_padding = False

    def __init__(self, model_dir: Path, folder: Path, spec: dict[str, Any], int8: bool = False) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self.int8 = int8
        self.max_tokens = spec["max_tokens"]
        self.dimension = spec["hidden_size"]
        self.normalize = spec["normalize"]
        # Two tokenizers: one cut at the model's limit for batches, and one whole (offsets for
        # windows), read on first need (``plain``): a start whose cache holds every window only
        # embeds the query (each read of tokenizer.json costs ~0.06 s of CPU).
        self._tokenizer_file = model_dir / "tokenizer.json"
        self._plain: Any = None
        self._plain_lock = threading.Lock()  # not the sessions' lock: making one takes a while
        self.batching = Tokenizer.from_file(str(self._tokenizer_file))
        self.batching.enable_truncation(max_length=self.max_tokens)
        self.batching.no_padding()  # batches are padded by _forward, from ids tokenized once
        self.pad_id = self.batching.token_to_id("[PAD]") or 0
        self.threads = 0  # onnxruntime's default: one thread per physical core
        # Where the machine has no more cores than a query uses, queries run on the records'
        # session: one copy of the float32 graph in memory (~90 MB) rather than two.
        self.query_threads = 0 if (os.cpu_count() or 1) <= QUERY_THREADS else QUERY_THREADS
        self.forward_seconds = 0.0  # time inside session.run
        self._sessions: dict[tuple[str, int], Any] = {}
        self._lock = threading.Lock()
        # The query session now, so an unusable file fails at load. The int8 records' session
        # waits for records to embed: a warm start whose cache holds every vector never makes
        # it (0.08 s and ~60 MB saved; its file was checked by _intact like the float32 one).
        self.session(FLOAT_FILE, self.query_threads)

    def session(self, file: str, threads: int) -> Any:
        """A session of one built file on ``threads`` threads, 0 for one per physical core
        (made on first use: onnxruntime fixes the count per session)."""
        made = self._sessions.get((file, threads))
        if made is not None:  # the common case, without the lock: a query never waits while the
            return made       # int8 records' session is made on another thread
        with self._lock:
            if (file, threads) not in self._sessions:
                ort = _runtime()

                options = ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                # Spinning workers stall when another process loads the CPU, as OpenMP's do.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.log_severity_level = 3
                path = self.folder / file
                if file == FLOAT_FILE:  # the graph whose weights are mapped, not parsed (onnx_mapped)
                    from .onnx_mapped import mapped_graph

                    path = mapped_graph(path)
                self._sessions[file, threads] = ort.InferenceSession(str(path), options,
                                                                     providers=["CPUExecutionProvider"])
            return self._sessions[file, threads]

    @property
    def plain(self) -> Any:
        """The tokenizer without truncation or padding (read once, on first use)."""
        if self._plain is None:
            with self._plain_lock:
                if self._plain is None:
                    from tokenizers import Tokenizer

                    plain = Tokenizer.from_file(str(self._tokenizer_file))
                    plain.no_truncation()
                    plain.no_padding()
                    self._plain = plain  # last: the unlocked check sees a finished tokenizer
        return self._plain

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Each text's token character spans, without special tokens or truncation."""
        return [encoding.offsets for encoding in self.plain.encode_batch(list(texts), add_special_tokens=False)]

    def prepare(self, texts: Sequence[str]) -> tuple[list[list[int]], list[int]]:
        """What ``run`` takes for each text, its token ids (special tokens included, cut at the
        model's limit), and their counts: each text is tokenized once (sorting texts by length
        and then batching them had tokenized each twice, ~3% of int8 indexing)."""
        ids = [encoding.ids for encoding in self.batching.encode_batch(list(texts))]
        return ids, [len(tokens) for tokens in ids]

    def run(self, batches: Sequence[Sequence[list[int]]], threads: int, query: bool = False) -> list[np.ndarray]:
        """Vectors of each batch of ``prepare``'s token ids, on ``threads`` threads (0: one per
        physical core), by the float32 graph, or (precision int8) the int8 one for records."""
        session = self.session(INT8_FILE if self.int8 and not query else FLOAT_FILE, threads)
        return [self._forward(session, batch) for batch in batches]

    def _forward(self, session: Any, batch: Sequence[list[int]]) -> np.ndarray:
        """Mean-pooled (and, as the model says, normalised) float32 vectors of one batch, padded
        on the right as the tokenizer pads."""
        ids = np.full((len(batch), max(len(tokens) for tokens in batch)), self.pad_id, dtype=np.int64)
        mask = np.zeros(ids.shape, dtype=np.int64)
        for row, tokens in enumerate(batch):
            ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        started = time.perf_counter()
        states = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        self.forward_seconds += time.perf_counter() - started
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self.normalize:
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32, copy=False)
