"""The saved quantized scan of a large vector index's store: FAISS's trained quantizer and the
codes of every row (``faiss.serialize_index``), with the text key of each of its rows, one file
per model and data scope beside the vector cache, so a warm start reads it (~100 MB at a million
rows) rather than training it again (~40-55 s on two laptop cores).

A file's key hashes the model identity, the metric, the dimension, the FAISS version and the
scan's own settings (``vector_store``), then every row's text key in order. A start over the
very rows uses the file as it is. A start over rows that changed since (an edit, a new note, a
deleted file) still uses it when the rows' keys differ little: each of its rows is matched to the
store row of the same text, the store rows it lacks are scored exactly beside it, and its rows
whose text is gone are dropped; past KEEP_SHARE changed rows it is trained anew
and saved again. Another model, FAISS or settings always train anew. The file is written
atomically (mode 0600, like the other caches) and carries a digest of its keys and payload: a
damaged file is reported and trained over.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .key_rows import KEY_BYTES, KeyRows
from .file_writes import write_atomically
from .vector_store import DIMS_PER_SUBQUANTIZER, TRAIN_ROWS, TRAIN_SEED, Scan

log = logging.getLogger("vecbook")

SCAN_MAGIC = b"VBSCAN\x00\x01"
# The file's layout, and how the key is made: a change to either gets a new number.
SCAN_FORMAT = 2
# A saved scan stays in use while the store rows it lacks and its rows no store row matches
# number at most this share of the store's rows: a search scores each of the first exactly, as
# it does the vector index's delta (vector_index.MERGE_SHARE), and passes over the second.
KEEP_SHARE = 0.05


class ScanFile:
    """Where a data scope's scan is saved (``path``), for vectors of one model ``identity``."""

    def __init__(self, path: Path, identity: str) -> None:
        self.path = path
        self.identity = identity

    def settings_for(self, metric: str, dimension: int) -> str:
        """What a scan's use depends on beside its rows (model, metric, dimension, FAISS, settings)."""
        import faiss

        return json.dumps([SCAN_FORMAT, self.identity, metric, dimension, faiss.__version__,
                           DIMS_PER_SUBQUANTIZER, TRAIN_ROWS, TRAIN_SEED])

    def key_for(self, joined: bytes, metric: str, dimension: int) -> str:
        """The key of a scan over rows whose text keys are ``joined`` (in row order)."""
        digest = hashlib.sha256(self.settings_for(metric, dimension).encode())
        digest.update(joined)
        return digest.hexdigest()

    def load(self, key: str, rows: int) -> Scan | None:
        """The saved scan when the file holds the one of ``key`` exactly (None: no file, a file of
        other rows, or one that fails a check, reported with a WARN)."""
        found = self._read()
        if found is None:
            return None
        header, _, index = found
        if header.get("key") != key:
            log.info("saved vector scan %s is of other rows; it will be trained again", self.path)
            return None
        return self._used(index, rows)

    def load_over(self, joined: bytes, metric: str, dimension: int) -> Scan | None:
        """The saved scan for a store whose rows' text keys are ``joined``: as it is when it was
        made of these very rows, else matched to them (``Scan.to_store``, ``Scan.uncovered``)
        when they changed by at most KEEP_SHARE; None otherwise (trained anew)."""
        rows = len(joined) // KEY_BYTES
        found = self._read()
        if found is None:
            return None
        header, keys, index = found
        settings = self.settings_for(metric, dimension)
        if header.get("key") == self.key_for(joined, metric, dimension):
            return self._used(index, rows)
        if header.get("settings") != hashlib.sha256(settings.encode()).hexdigest() or int(index.ntotal) != len(keys) // KEY_BYTES:
            log.info("saved vector scan %s is of other rows; it will be trained again", self.path)
            return None
        to_store = KeyRows(joined).rows_of(keys)
        # A store row two scan rows name (one text held twice) is kept for the first.
        order = np.argsort(to_store, kind="stable")
        ordered = to_store[order]
        twice = np.zeros(len(ordered), dtype=bool)
        twice[1:] = (ordered[1:] == ordered[:-1]) & (ordered[1:] >= 0)
        to_store[order[twice]] = -1
        covered = np.zeros(rows, dtype=bool)
        covered[to_store[to_store >= 0]] = True
        uncovered = np.flatnonzero(~covered)
        dropped = int(np.count_nonzero(to_store < 0))
        if len(uncovered) + dropped > KEEP_SHARE * rows:
            log.info("saved vector scan %s is of other rows (%d of %d rows changed since); it will be trained again",
                     self.path, len(uncovered) + dropped, rows)
            return None
        scan = self._used(index, int(index.ntotal))
        if scan is not None:
            scan.to_store, scan.uncovered = to_store.astype(np.int32), uncovered
            log.info("saved vector scan %s: %d rows changed since it was saved are scored exactly beside it",
                     self.path, len(uncovered))
        return scan

    def _read(self) -> tuple[dict, bytes, object] | None:
        """(header, its rows' keys joined, FAISS index) of the file (None: none, or unusable: told)."""
        import faiss

        try:
            with open(self.path, "rb") as handle:
                header, keys, payload = _read(handle)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("saved vector scan %s is unusable (%s); it will be trained again", self.path, exc)
            return None
        if header.get("format") != SCAN_FORMAT or header.get("faiss") != faiss.__version__:
            log.warning("saved vector scan %s was made by another version (format %s, FAISS %s; this is format %d, "
                        "FAISS %s); it will be trained again", self.path, header.get("format"), header.get("faiss"),
                        SCAN_FORMAT, faiss.__version__)
            return None
        try:
            index = faiss.deserialize_index(np.frombuffer(payload, dtype=np.uint8))
        except RuntimeError as exc:
            log.warning("saved vector scan %s is unusable (FAISS could not read it: %s); it will be trained again",
                        self.path, str(exc).splitlines()[0] if str(exc) else exc)
            return None
        return header, keys, index

    def _used(self, index: object, rows: int) -> Scan | None:
        """``index`` as a Scan when it holds ``rows`` rows (else told, None); the file marked in use."""
        if int(index.ntotal) != rows:  # type: ignore[attr-defined]
            log.warning("saved vector scan %s is unusable (it holds %d rows, not %d); it will be trained again",
                        self.path, index.ntotal, rows)  # type: ignore[attr-defined]
            return None
        try:
            os.utime(self.path)  # in use: saves of other scopes prune by last use
        except OSError:
            pass
        return Scan(index)

    def save(self, key: str, scan: Scan, joined: bytes = b"", metric: str = "", dimension: int = 0) -> None:
        """Atomically replace the file with ``scan``, of the rows of ``key`` whose text keys are
        ``joined`` (a failure is reported: the next start trains again)."""
        import faiss

        payload = faiss.serialize_index(scan.index)
        digest = hashlib.blake2b(joined, digest_size=16)
        digest.update(payload.data)
        header = json.dumps({"format": SCAN_FORMAT, "faiss": faiss.__version__, "key": key,
                             "settings": hashlib.sha256(self.settings_for(metric, dimension).encode()).hexdigest(),
                             "rows": len(scan), "key_bytes": len(joined), "bytes": int(payload.nbytes),
                             "digest": digest.hexdigest()}).encode()

        def write(out: BinaryIO) -> None:
            out.write(SCAN_MAGIC + struct.pack("<I", len(header)) + header)
            out.write(joined)
            out.write(payload.data)

        try:
            write_atomically(self.path, ".scan-", write)
        except OSError as exc:
            log.warning("could not save the vector scan to %s (%s); the next start trains it again", self.path, exc)


def _read(handle: BinaryIO) -> tuple[dict, bytes, bytes]:
    """The header, row keys and payload of a scan file, checked against the header's sizes and digest."""
    if handle.read(len(SCAN_MAGIC)) != SCAN_MAGIC:
        raise ValueError("not a VecBook scan file")
    size = handle.read(4)
    if len(size) != 4:
        raise ValueError("cut short")
    try:
        header = json.loads(handle.read(struct.unpack("<I", size)[0]))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError("damaged header") from exc
    if not isinstance(header, dict):
        raise ValueError("damaged header")
    key_bytes = header.get("key_bytes", 0)
    keys = handle.read(key_bytes if isinstance(key_bytes, int) and key_bytes >= 0 else 0)
    payload = handle.read()
    if len(keys) != key_bytes or len(keys) % KEY_BYTES:
        raise ValueError(f"{len(keys)} bytes of row keys, not {key_bytes}")
    if len(payload) != header.get("bytes"):
        raise ValueError(f"{len(payload)} bytes of payload, not {header.get('bytes')}")
    digest = hashlib.blake2b(keys, digest_size=16)
    digest.update(payload)
    if digest.hexdigest() != header.get("digest"):
        raise ValueError("its payload does not match its digest")
    return header, keys, payload
