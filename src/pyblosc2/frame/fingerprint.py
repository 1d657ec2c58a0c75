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

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import xxhash

from ..errors import FormatError
from ..meta import pack_vlmeta, unpack_vlmeta
from .trailer import Trailer

__all__ = [
    "FPT_128",
    "FP_KEY",
    "DigestList",
    "chunk_digest",
    "list_fingerprint",
    "offset_digest",
]

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


@dataclass(frozen=True, slots=True)
class DigestList:
    """The per-chunk digests of a fingerprinted frame, in logical chunk order."""

    digests: bytes = b""

    @classmethod
    def from_trailer(cls, trailer: Trailer) -> DigestList | None:
        """The list a trailer holds, or None when fingerprinting is off."""
        raw = dict(trailer.vlmeta).get(FP_KEY)
        if raw is None:
            return None
        digests = unpack_vlmeta(raw, f"vlmeta {FP_KEY!r}")
        if not isinstance(digests, bytes) or len(digests) % DIGEST_LEN:
            got = f"{len(digests)} bytes" if isinstance(digests, bytes) else type(digests).__name__
            raise FormatError(
                "frame trailer", f"vlmeta {FP_KEY!r}", None, "a bin of 8-byte digests", got
            )
        return cls(digests)

    def __len__(self) -> int:
        return len(self.digests) // DIGEST_LEN

    def __getitem__(self, n: int) -> bytes:
        return self.digests[DIGEST_LEN * n : DIGEST_LEN * (n + 1)]

    def in_trailer(self, trailer: Trailer) -> Trailer:
        """``trailer`` holding this list (entry + XXH3-128 fingerprint of type 3)."""
        others = tuple((k, v) for k, v in trailer.vlmeta if k != FP_KEY)
        entry = (FP_KEY, pack_vlmeta(self.digests))
        return replace(
            trailer,
            vlmeta=(*others, entry),
            fingerprint_type=FPT_128,
            fingerprint=list_fingerprint(self.digests),
        )

    def describes(self, trailer: Trailer, nchunks: int) -> bool:
        """Whether this list (from ``trailer``) is current for a frame of ``nchunks``: the
        trailer fingerprint is its hash and it has one digest per chunk. A writer that does
        not keep the list (C-Blosc2) leaves it stale: a different count, or a fingerprint
        type other than 3."""
        return (
            trailer.fingerprint_type == FPT_128
            and trailer.fingerprint == list_fingerprint(self.digests)
            and len(self) == nchunks
        )

    @staticmethod
    def of(offsets: np.ndarray, stored: Callable[[int, int], bytes | memoryview]) -> DigestList:
        """Hash every chunk: ``stored(n, offset)`` gives the stored bytes of chunk ``n``."""
        out = bytearray()
        for n, off in enumerate(offsets.tolist()):
            out += offset_digest(off) if off < 0 else chunk_digest(stored(n, off))
        return DigestList(bytes(out))

    def damaged(
        self,
        trailer: Trailer,
        offsets: np.ndarray,
        stored: Callable[[int, int], bytes | memoryview],
    ) -> list[int]:
        """Indices of chunks whose stored bytes no longer match their digest; raises
        :class:`FormatError` when the list itself does not match the trailer fingerprint or
        the chunk count (a frame changed by a writer that does not keep the list is *stale*)."""
        if trailer.fingerprint_type != FPT_128 or trailer.fingerprint != list_fingerprint(
            self.digests
        ):
            raise FormatError(
                "frame trailer",
                "fingerprint",
                None,
                "the XXH3-128 of the chunk digest list",
                "a different value (stale or damaged digest list)",
            )
        if len(self) != len(offsets):
            raise FormatError(
                "frame trailer", "fingerprint", None, f"{len(offsets)} chunk digests", len(self)
            )
        bad = []
        for n, off in enumerate(offsets.tolist()):
            if off < 0:
                got = offset_digest(off)
            else:
                try:
                    got = chunk_digest(stored(n, off))
                except FormatError:
                    got = b""
            if got != self[n]:
                bad.append(n)
        return bad
