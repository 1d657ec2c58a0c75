"""BloscLZ (codec 0, compformat 0): C-Blosc2 3.3.5's ``blosclz.c`` stream format.

Implements spec §10.1 (``../shared/specs/chunk-format.md``): streams are decoded and encoded by
the active kernel set (:mod:`pyblosc2.kernels`; the numpy reference is
:mod:`pyblosc2.kernels.blosclz_np`), which decodes exactly the streams ``blosclz_decompress``
accepts and encodes byte for byte as ``blosclz_compress`` does.
"""

from __future__ import annotations

import numpy as np

from ..constants import Codec
from ..errors import CodecError
from ..kernels import active
from .base import BaseCodec, StreamDecoder

__all__ = ["BloscLZCodec", "compress", "decompress", "decompress_into"]


def compress(src: bytes | bytearray | memoryview | np.ndarray, clevel: int, maxout: int) -> bytes:
    """The BloscLZ stream of ``src``, or ``b""`` when C's ``blosclz_compress`` would return 0
    (not compressible, fewer than 16 bytes, ``maxout`` < 66 or too small).

    >>> len(compress(b"a" * 1000, 5, 1000)) < 100
    True
    """
    return active().blosclz_compress(src, clevel, maxout)


def decompress(src: bytes | bytearray | memoryview | np.ndarray, nbytes: int) -> bytearray:
    """Decode a BloscLZ stream to exactly ``nbytes`` bytes (else a ``CodecError``).

    >>> bytes(decompress(bytes.fromhex("2361616161e00603016162"), 21))  # 4 a, 15 more, "ab"
    b'aaaaaaaaaaaaaaaaaaaab'
    """
    return active().blosclz_decompress(src, nbytes)


def decompress_into(src: bytes | bytearray | memoryview | np.ndarray, dst: np.ndarray) -> None:
    """Decode a BloscLZ stream into all of ``dst`` (exactly its size; else a ``CodecError``).

    >>> out = np.empty(21, np.uint8); decompress_into(bytes.fromhex("2361616161e00603016162"), out)
    >>> out.tobytes()
    b'aaaaaaaaaaaaaaaaaaaab'
    """
    active().blosclz_decompress_into(src, dst)


class BloscLZCodec(BaseCodec):
    """BloscLZ (compcode 0, compformat 0)."""

    compcode = Codec.BLOSCLZ
    compformat = 0
    name = "blosclz"
    supports_dict = False
    writes_into = True

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        return compress(src, clevel, maxout)

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytearray:
        return decompress(src, nbytes)

    def decompress_into(self, src: memoryview, dst: memoryview, dict_: bytes | None = None) -> None:
        decompress_into(src, np.frombuffer(dst, np.uint8))

    def stream_decoder(self, dict_: bytes | None = None) -> StreamDecoder:
        """The kernel set's decoder called straight from the stream decoder (the kernel set
        looked up per call: a decoder bound before numba swaps in uses it after)."""
        frombuffer, u8 = np.frombuffer, np.uint8

        def decode(src: memoryview, buf: memoryview) -> memoryview | None:
            try:
                active().blosclz_decompress_into(src, frombuffer(buf, u8))
            except CodecError:
                return None
            return buf

        return decode
