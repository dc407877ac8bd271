"""Building the ONNX files once per machine and model, in the cache folder: the model exported
with torch, fused with onnxruntime's transformer optimizer, and its int8 copy (RECIPE, made by
``onnx_int8``: the float32 graph rebalanced on a calibration text, then quantized). Building needs torch,
transformers, onnx and onnxruntime (all in requirements.txt), runs in a child process (their
memory leaves with it) and takes 10-30 s. The built files are checked against their recorded
size and time (else sha256) on every load and rebuilt when one is missing or damaged (a
damaged int8 graph alone is quantized again from the intact float32 graph, without torch).
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

from .onnx_int8 import quantize
from .onnx_model import FLOAT_FILE, INT8_FILE, RECIPE, OnnxBuildError, model_files, recipe

log = logging.getLogger("vecbook")

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


def build_folder(model_dir: Path, cache: Path) -> Path:
    """Where the built models of ``model_dir`` under ``cache`` lie (the recipe in its name)."""
    return cache / f"{model_dir.name}-{source_digest(model_dir)}-{recipe()}"


def built_model(model_dir: Path, cache: Path, spec: dict[str, Any],
                used: Sequence[str] = (FLOAT_FILE, INT8_FILE)) -> Path:
    """The folder of built models for ``model_dir`` under ``cache``, built first when it is
    missing or a file of ``used`` fails its checksum. Two processes building at once each build in a temporary folder
    and the first to publish wins; a damaged folder is moved aside, then replaced. Where only
    the int8 graph is damaged, the rebuild starts from the intact float32 graph: no export."""
    folder = build_folder(model_dir, cache)
    with _build_lock:
        if _intact(folder, used):
            return folder
        cache.mkdir(parents=True, exist_ok=True)
        _sweep_stale_builds(cache)
        temp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
        try:
            kept = folder.exists() and _kept_float_graph(folder, temp)
            if folder.exists():
                log.warning("the ONNX models in %s are damaged or incomplete; %s", folder,
                            "building the int8 graph again from the intact float32 one" if kept
                            else "building them again")
                _discard(folder)
            # A WARNING, so a first search (quiet by default) says why it pauses.
            log.warning("building the ONNX models once for this machine (%s) in %s",
                        "a few seconds" if kept else "10-30 s", folder)
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
# Run before BUILD_CHILD: the child ends once its parent is gone. A parent killed outright
# (`kill -9`, the OOM killer) runs no exit handler to stop it (stop_builds), and the child
# built on for its 10-30 s (~1 GB) beside the build the next start begins, into a folder no
# one would publish. (Windows keeps a dead parent's pid: there the child builds on.)
# The parent's pid is written in (``%d``), not read by the child at its start: a parent killed
# while the child's interpreter still started would leave it reading its new parent's.
ORPHAN_GUARD = """
import os as _os, threading as _threading, time as _time
def _guard(parent=%d):
    while _os.getppid() == parent:
        _time.sleep(0.5)
    _os._exit(1)
_threading.Thread(target=_guard, daemon=True).start()
"""
BUILD_TIMEOUT_SECONDS = 1800
# Build children running now, so a server leaving mid-build takes them along (stop_builds).
_children: set[subprocess.Popen[str]] = set()
_children_lock = threading.Lock()


def _build_apart(model_dir: Path, out: Path, spec: dict[str, Any]) -> None:
    """Build into ``out`` in a child Python process (see BUILD_CHILD), or in this one where no
    interpreter can be started: an embedded Python without ``sys.executable``, or a frozen app,
    whose executable is the app itself."""
    if not sys.executable or getattr(sys, "frozen", False):
        _build_here(model_dir, out, spec)
        return
    path = [os.path.abspath(entry) for entry in sys.path]  # "" (the current folder) as the folder it is
    # The folders as absolute paths: the child starts in ``out``, where a relative path (a
    # model_cache given as "cache/models") would name another folder and the build would fail.
    arguments = [sys.executable, "-I", "-c", ORPHAN_GUARD % os.getpid() + BUILD_CHILD, os.path.abspath(model_dir),
                 os.path.abspath(out), json.dumps(spec), recipe(), json.dumps(path)]
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
    except BaseException:
        # Interrupted (a notebook's stop button reaches this process only, unlike a terminal's
        # Ctrl-C): the child goes too. Left alone it built on, ~1 GB for 10-30 s, into a folder
        # deleted under it, beside the build the next start begins.
        child.kill()
        child.communicate()
        raise
    finally:
        with _children_lock:
            _children.discard(child)
    if child.returncode != 0:
        last = "\n".join(report.strip().splitlines()[-8:])
        raise OnnxBuildError(f"building the ONNX models failed (exit {child.returncode}):\n{last}")


def stop_builds() -> None:
    """Kill the build children running now (a process leaving at once, as ``serve`` on SIGTERM):
    a child would otherwise go on for its 10-30 s, holding ~1 GB. What they left in the cache
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


def _kept_float_graph(folder: Path, temp: Path) -> bool:
    """Copy ``folder``'s float32 graph into the build folder ``temp`` where it is intact (built
    by this recipe, with its recorded size and time or sha256): the build then quantizes it
    only, which skips torch's import, the export and the fusion (about three quarters of a build)."""
    if not _intact(folder, (FLOAT_FILE,)):
        return False
    try:
        shutil.copyfile(folder / FLOAT_FILE, temp / FLOAT_FILE)
    except OSError:  # another process moved the folder aside meanwhile: build it all
        (temp / FLOAT_FILE).unlink(missing_ok=True)
        return False
    return True


def _discard(folder: Path) -> None:
    aside = folder.with_name(f".damaged-{folder.name}-{os.getpid()}")
    try:
        os.rename(folder, aside)
    except OSError:
        return  # another process moved or rebuilt it
    shutil.rmtree(aside, ignore_errors=True)


def _build(model_dir: Path, out: Path, spec: dict[str, Any]) -> None:
    """Export with torch and fuse with onnxruntime's transformer optimizer (unless ``out`` holds
    the float32 graph already: kept from a folder whose int8 graph was damaged), then write the
    int8 copy (see RECIPE and onnx_int8.quantize)."""
    if not (out / FLOAT_FILE).is_file():
        _export_fused(model_dir, out, spec)
    quantize(out / FLOAT_FILE, out / INT8_FILE, model_dir, spec, seven_bit=recipe() != RECIPE)
    write_manifest(model_dir, out)


def write_manifest(model_dir: Path, out: Path) -> None:
    """Record the recipe and the built files' sha256, size and time (what each load checks)."""
    names = (FLOAT_FILE, INT8_FILE)
    manifest = {"recipe": recipe(), "source": str(model_dir), "files": {name: _sha256(out / name) for name in names},
                "stats": {name: _stat(out / name) for name in names}}
    (out / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")


def _export_fused(model_dir: Path, out: Path, spec: dict[str, Any]) -> None:
    """Write ``out``/FLOAT_FILE: the model exported with torch, then fused."""
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
    fused.rename(out / FLOAT_FILE)


def _export(model_dir: Path, path: Path) -> None:
    # A model folder gone since the caller read it: said before torch's import (seconds).
    if not (model_dir / "config.json").is_file():
        raise OnnxBuildError(f"no model to export in {model_dir} (its config.json is missing)")
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
