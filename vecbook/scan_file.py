"""The saved quantized scan of a large vector index's store: FAISS's trained quantizer and the
codes of every row (``faiss.serialize_index``), one file per model and data scope beside the
vector cache, so a warm start over the same rows reads it (~100 MB at a million rows) rather
than training it again (~40-55 s on two laptop cores).

A file is used only for the rows it was made from: its key hashes the model identity, the
metric, the dimension, every row's text key in order, the FAISS version and the scan's own
settings (``vector_store``), so changed rows, another FAISS or other settings train anew. It is
written atomically (mode 0600, like the other caches) and carries a digest of its payload: a
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

from .vector_files import write_atomically
from .vector_store import DIMS_PER_SUBQUANTIZER, TRAIN_ROWS, TRAIN_SEED, Scan

log = logging.getLogger("vecbook")

SCAN_MAGIC = b"VBSCAN\x00\x01"
# The file's layout, and how the key is made: a change to either gets a new number.
SCAN_FORMAT = 1


class ScanFile:
    """Where a data scope's scan is saved (``path``), for vectors of one model ``identity``."""

    def __init__(self, path: Path, identity: str) -> None:
        self.path = path
        self.identity = identity

    def key_for(self, joined: bytes, metric: str, dimension: int) -> str:
        """The key of a scan over rows whose text keys are ``joined`` (in row order)."""
        import faiss

        digest = hashlib.sha256(json.dumps([SCAN_FORMAT, self.identity, metric, dimension, faiss.__version__,
                                            DIMS_PER_SUBQUANTIZER, TRAIN_ROWS, TRAIN_SEED]).encode())
        digest.update(joined)
        return digest.hexdigest()

    def load(self, key: str, rows: int) -> Scan | None:
        """The saved scan when the file holds the one of ``key`` (None: no file, a file of other
        rows, or one that fails a check, reported with a WARN)."""
        import faiss

        try:
            with open(self.path, "rb") as handle:
                header, payload = _read(handle)
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
        if header.get("key") != key:
            # Routine after any change to the rows since it was saved: not worth a warning.
            log.info("saved vector scan %s is of other rows; it will be trained again", self.path)
            return None
        try:
            index = faiss.deserialize_index(np.frombuffer(payload, dtype=np.uint8))
        except RuntimeError as exc:
            log.warning("saved vector scan %s is unusable (FAISS could not read it: %s); it will be trained again",
                        self.path, str(exc).splitlines()[0] if str(exc) else exc)
            return None
        if int(index.ntotal) != rows:
            log.warning("saved vector scan %s is unusable (it holds %d rows, not %d); it will be trained again",
                        self.path, index.ntotal, rows)
            return None
        try:
            os.utime(self.path)  # in use: saves of other scopes prune by last use
        except OSError:
            pass
        return Scan(index)

    def save(self, key: str, scan: Scan) -> None:
        """Atomically replace the file with ``scan``, of the rows of ``key`` (a failure is reported:
        the next start trains again)."""
        import faiss

        payload = faiss.serialize_index(scan.index)
        header = json.dumps({"format": SCAN_FORMAT, "faiss": faiss.__version__, "key": key,
                             "rows": len(scan), "bytes": int(payload.nbytes),
                             "digest": hashlib.blake2b(payload.data, digest_size=16).hexdigest()}).encode()

        def write(out: BinaryIO) -> None:
            out.write(SCAN_MAGIC + struct.pack("<I", len(header)) + header)
            out.write(payload.data)

        try:
            write_atomically(self.path, ".scan-", write)
        except OSError as exc:
            log.warning("could not save the vector scan to %s (%s); the next start trains it again", self.path, exc)


def _read(handle: BinaryIO) -> tuple[dict, bytes]:
    """The header and payload of a scan file, checked against the header's size and digest."""
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
    payload = handle.read()
    if len(payload) != header.get("bytes"):
        raise ValueError(f"{len(payload)} bytes of payload, not {header.get('bytes')}")
    if hashlib.blake2b(payload, digest_size=16).hexdigest() != header.get("digest"):
        raise ValueError("its payload does not match its digest")
    return header, payload
