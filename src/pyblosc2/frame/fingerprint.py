"""Opt-in integrity checking that C-Blosc2 reads without complaint (frame-format.md §5.4).

Scheme (pyblosc2's own; C-Blosc2 writes fingerprint type 0 and never reads the field):

* every chunk has an 8-byte XXH3-64 digest of its stored form: the chunk's bytes as they sit
  in the frame, or, for a special-offset chunk, the 8 little-endian bytes of the offset;
* the digests, in logical chunk order, are kept in the vlmeta entry ``_pyblosc2_fp`` (a
  msgpack ``bin``, stored as any vlmeta value), so C keeps them when it copies a frame;
* the trailer's fingerprint field holds type 3 (128-bit) and the XXH3-128 of that list, so a
  damaged or stale list is detected too.

An append hashes only the new chunk; ``verify()`` rehashes every chunk and names the damaged
ones. A frame later changed by a writer that does not maintain the list (e.g. C-Blosc2) is
reported as stale rather than damaged.
"""

from __future__ import annotations

import numpy as np
import xxhash

__all__ = ["FPT_128", "FP_KEY", "chunk_digest", "list_fingerprint", "offset_digest"]

FP_KEY = "_pyblosc2_fp"
FPT_128 = 3
DIGEST_LEN = 8


def chunk_digest(stored: bytes | memoryview) -> bytes:
    """Digest of a chunk's stored bytes."""
    return xxhash.xxh3_64_digest(stored)


def offset_digest(offset: int) -> bytes:
    """Digest of a special-offset chunk (its offset is all that is stored)."""
    return xxhash.xxh3_64_digest(np.int64(offset).tobytes())


def list_fingerprint(digests: bytes) -> bytes:
    """The 16-byte trailer fingerprint of a digest list."""
    return xxhash.xxh3_128_digest(digests)
