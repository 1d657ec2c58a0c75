"""zlib: complete RFC 1950 streams (2-byte header, deflate, Adler-32), spec §10, §10.4."""

from __future__ import annotations

import zlib

from ..constants import Codec
from .base import BaseCodec, stream_error

__all__ = ["ZlibCodec"]


class ZlibCodec(BaseCodec):
    """zlib (codec id 4, compformat 3); C-Blosc2 uses ``compress2(level = clevel)``."""

    compcode = Codec.ZLIB
    compformat = 3
    name = "zlib"

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        out = zlib.compress(src, clevel)
        return out if len(out) <= maxout else b""

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        d = zlib.decompressobj()
        try:
            # max_length bounds the output: a hostile stream cannot make us allocate more.
            out = d.decompress(src, nbytes)
        except zlib.error as exc:
            raise stream_error(self.name, "a valid zlib stream", f"undecodable ({exc})") from None
        if len(out) != nbytes or not d.eof:
            raise stream_error(
                self.name,
                f"a complete stream of {nbytes} bytes",
                f"{len(out)} bytes{'' if d.eof else ' and an unfinished stream'}",
            )
        if d.unused_data:
            raise stream_error(
                self.name, "no bytes after the stream end", f"{len(d.unused_data)} bytes"
            )
        return out
