"""LZ4 and LZ4HC: the LZ4 *block* format, no frame and no size prefix (spec §10, §10.2).

C-Blosc2 calls ``LZ4_compress_fast`` with ``acceleration = 10 - clevel`` and ``LZ4_compress_HC``
with ``level = clevel``; both share compformat 1 and are decoded by ``LZ4_decompress_safe``.
"""

from __future__ import annotations

import cramjam
import lz4.block

from ..constants import Codec
from .base import BaseCodec, StreamDecoder, stream_error

__all__ = ["LZ4Codec", "LZ4HCCodec"]


def _decompress(name: str, src: memoryview, nbytes: int, dict_: bytes | None) -> bytes:
    try:
        if dict_:
            out = lz4.block.decompress(src, uncompressed_size=nbytes, dict=dict_)
        else:
            out = lz4.block.decompress(src, uncompressed_size=nbytes)
    except lz4.block.LZ4BlockError as exc:
        raise stream_error(
            name, f"a valid LZ4 block of {nbytes} bytes", f"undecodable ({exc})"
        ) from None
    if len(out) != nbytes:
        raise stream_error(name, f"{nbytes} decoded bytes", f"{len(out)} bytes")
    return out


class LZ4Codec(BaseCodec):
    """LZ4 fast mode (codec id 1)."""

    compcode = Codec.LZ4
    compformat = 1
    name = "lz4"
    supports_dict = True
    writes_into = True

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        if dict_:
            out = lz4.block.compress(
                src, mode="fast", acceleration=10 - clevel, store_size=False, dict=dict_
            )
        else:  # no keyword dict built per call (one call per stream)
            out = lz4.block.compress(src, mode="fast", acceleration=10 - clevel, store_size=False)
        return out if len(out) <= maxout else b""

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        return _decompress(self.name, src, nbytes, dict_)

    def decompress_into(self, src: memoryview, dst: memoryview, dict_: bytes | None = None) -> None:
        if dict_:
            dst[:] = _decompress(self.name, src, len(dst), dict_)
            return
        # cramjam writes straight into dst (and releases the GIL): no intermediate bytes.
        try:
            n = cramjam.lz4.decompress_block_into(src, dst)
        except cramjam.DecompressionError as exc:
            raise stream_error(
                self.name, f"a valid LZ4 block of {len(dst)} bytes", f"undecodable ({exc})"
            ) from None
        if n != len(dst):
            raise stream_error(self.name, f"{len(dst)} decoded bytes", f"{n} bytes")

    def stream_decoder(self, dict_: bytes | None = None) -> StreamDecoder:
        if dict_:
            return super().stream_decoder(dict_)
        into = cramjam.lz4.decompress_block_into
        error = cramjam.DecompressionError

        def decode(src: memoryview, buf: memoryview) -> memoryview | None:
            try:
                n = into(src, buf)
            except error:
                return None
            return buf if n == len(buf) else None

        return decode


class LZ4HCCodec(LZ4Codec):
    """LZ4 high-compression mode (codec id 2); same stream format as LZ4."""

    compcode = Codec.LZ4HC
    name = "lz4hc"

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        kw = {"dict": dict_} if dict_ else {}
        out = lz4.block.compress(
            src, mode="high_compression", compression=clevel, store_size=False, **kw
        )
        return out if len(out) <= maxout else b""
