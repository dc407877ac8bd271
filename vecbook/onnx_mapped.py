"""The float32 graph with its weights in a file of their own beside it, which onnxruntime maps
into memory rather than parsing and copying them out of the graph: creating the query session
took 0.26 s of CPU from ``model-float32.onnx`` and 0.07 s from this copy on the AVX2 EPYC, with
~80 MB less resident memory, and the vectors are bit for bit the same (the same graph and
weights). The copy is made once, next to the built file, by onnxruntime itself (a session that
writes the graph as it read it, unoptimized, so the copy suits any CPU), and named after that
file's size and modification time and onnxruntime's version: a rebuilt or replaced file, or
another onnxruntime, never meets an old copy.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

log = logging.getLogger("vecbook")

MAPPED_PREFIX = "mapped-"
TEMP_PREFIX = ".mapped-"
# A temporary folder this old is a write that was killed (a write takes ~1.5 s): removed at the next.
STALE_TEMP_SECONDS = 600


def _names(graph: Path) -> tuple[str, str]:
    """The copy's graph and weights file names, keyed by ``graph``'s size and modification time
    and by onnxruntime's version."""
    from .onnx_model import _runtime

    info = graph.stat()
    stem = f"{MAPPED_PREFIX}{graph.stem}-{info.st_size}-{info.st_mtime_ns}-ort{_runtime().__version__}"
    return f"{stem}.onnx", f"{stem}.weights"


def mapped_graph(graph: Path) -> Path:
    """The copy of ``graph`` whose weights onnxruntime maps (made first when missing: ~1.5 s
    once), or ``graph`` itself where it cannot be made (a read-only or full cache folder)."""
    try:
        name, weights = _names(graph)
    except OSError:
        return graph
    folder = graph.parent
    if _complete(folder, name, weights):
        return folder / name
    try:
        _write(graph, folder, name, weights)
    except Exception as exc:  # noqa: BLE001 - the graph itself still loads, only slower
        log.info("cannot write the mapped copy of %s (%s); loading it as it is", graph, exc)
        return graph
    return folder / name


def _complete(folder: Path, name: str, weights: str) -> bool:
    """True when both files are there and the weights have the size written beside them."""
    try:
        expected = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))["weights_size"]
        return (folder / name).is_file() and (folder / weights).stat().st_size == expected
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _write(graph: Path, folder: Path, name: str, weights: str) -> None:
    """Write the copy in a temporary folder, then move its weights, its size note and last its
    graph into ``folder`` (a second process writing at once writes the same bytes)."""
    from .onnx_model import _runtime

    ort = _runtime()
    _remove_stale_temps(folder)
    temp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=folder))
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # Unoptimized: the graph as it was read. An optimized one may hold this CPU's own kernels.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.optimized_model_filepath = str(temp / name)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", weights)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        (temp / f"{name}.json").write_text(json.dumps({"weights_size": (temp / weights).stat().st_size}),
                                           encoding="utf-8")
        for part in (weights, f"{name}.json", name):
            os.replace(temp / part, folder / part)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    for old in folder.glob(f"{MAPPED_PREFIX}{graph.stem}-*"):  # copies of an earlier file or onnxruntime
        if not old.name.startswith(Path(name).stem):
            with contextlib.suppress(OSError):
                old.unlink()


def _remove_stale_temps(folder: Path) -> None:
    """Remove the temporary folders of writes killed midway (their ~90 MB of weights): nothing
    else would, as a finished write renames what it keeps."""
    for temp in folder.glob(f"{TEMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            if temp.is_dir() and time.time() - temp.stat().st_mtime > STALE_TEMP_SECONDS:
                shutil.rmtree(temp, ignore_errors=True)
