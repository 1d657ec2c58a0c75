"""Snappy raw format (no framing): C-Blosc 1.x only, compformat 2 (spec §10.3).

C-Blosc2 cannot decode these chunks; pyblosc2 reads and writes them for Blosc1 consumers whose
C-Blosc build includes snappy.
"""

from __future__ import annotations

import cramjam

from ..constants import Codec
from .base import BaseCodec, stream_error

__all__ = ["SnappyCodec"]


class SnappyCodec(BaseCodec):
    """Snappy (Blosc1 compcode 3, compformat 2)."""

    compcode = Codec.SNAPPY
    compformat = 2
    name = "snappy"

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        out = bytes(cramjam.snappy.compress_raw(src))
        return out if len(out) <= maxout else b""

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        try:
            declared = cramjam.snappy.decompress_raw_len(src)
        except Exception as exc:  # cramjam raises its own DecompressionError
            raise stream_error(
                self.name, "a snappy length prefix", f"undecodable ({exc})"
            ) from None
        if declared != nbytes:
            raise stream_error(self.name, f"a declared length of {nbytes}", declared)
        try:
            out = bytes(cramjam.snappy.decompress_raw(src))
        except Exception as exc:
            raise stream_error(self.name, "a valid snappy stream", f"undecodable ({exc})") from None
        if len(out) != nbytes:
            raise stream_error(self.name, f"{nbytes} decoded bytes", f"{len(out)} bytes")
        return out
