"""User codecs written in Python (python-blosc2's ``register_codec``; spec §2.3 compformat 6).

The encoder and decoder are callables ``f(input, output, meta, schunk) -> int`` applied to each
stream, as C-Blosc2 applies a registered codec (``blosc2.c:blosc_c``, ``blosc_d``): ``input``
and ``output`` are ``uint8`` arrays (the output sized to the stream's budget when encoding, to
its decoded size when decoding), ``meta`` the chunk's ``compcode_meta`` byte and ``schunk`` the
:class:`~pyblosc2.context.ChunkContext` of the super-chunk. The encoder returns the number of
bytes it wrote, 0 when it cannot compress (the stream is then stored raw); the decoder returns
the number of bytes it decoded, which must be the stream's size.

A codec registered without callables names a C plugin that python-blosc2 would load from a
shared library; pyblosc2 cannot load C plugins and says so when the codec is used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..context import ChunkContext
from ..errors import CodecError
from .base import BaseCodec

__all__ = ["CodecFunction", "DynamicCodec", "PythonCodec"]

#: ``f(input, output, meta, schunk) -> int``
CodecFunction = Callable[[np.ndarray, np.ndarray, int, Any], Any]


class PythonCodec(BaseCodec):
    """A codec made of two Python callables, registered under a user id (160-255)."""

    compformat = 6
    # instance attributes shadow the protocol's class variables
    compcode: int  # type: ignore[misc]
    name: str  # type: ignore[misc]
    version: int  # type: ignore[misc]

    def __init__(
        self,
        name: str,
        compcode: int,
        encoder: CodecFunction,
        decoder: CodecFunction,
        version: int = 1,
        meta: int = 0,
        ctx: ChunkContext | None = None,
    ) -> None:
        self.name, self.compcode, self.version = name, compcode, version
        self.encoder, self.decoder = encoder, decoder
        self._meta, self._ctx = meta, ctx

    def bound(self, meta: int, ctx: ChunkContext | None) -> PythonCodec:
        return PythonCodec(
            self.name, self.compcode, self.encoder, self.decoder, self.version, meta, ctx
        )

    def _schunk(self, typesize: int) -> ChunkContext:
        return self._ctx if self._ctx is not None else ChunkContext(typesize)

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        if maxout <= 0:
            return b""
        inp = np.frombuffer(src, np.uint8)
        out = np.zeros(maxout, np.uint8)
        rc = self.encoder(inp, out, self._meta, self._schunk(1))
        if rc is None:
            raise CodecError(
                f"user codec {self.compcode} ({self.name})",
                "encoder result",
                None,
                "the number of compressed bytes",
                None,
            )
        n = int(rc)
        if not 0 <= n <= maxout:
            raise CodecError(
                f"user codec {self.compcode} ({self.name})",
                "encoder result",
                None,
                f"0..{maxout} bytes",
                n,
            )
        return out[:n].tobytes()

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        out = np.empty(nbytes, np.uint8)
        self._decode(src, out)
        return out.tobytes()

    def decompress_into(self, src: memoryview, dst: memoryview, dict_: bytes | None = None) -> None:
        self._decode(src, np.frombuffer(dst, np.uint8))

    def _decode(self, src: memoryview, out: np.ndarray) -> None:
        rc = self.decoder(np.frombuffer(src, np.uint8), out, self._meta, self._schunk(1))
        if rc is None or int(rc) != len(out):
            raise CodecError(
                f"user codec {self.compcode} ({self.name})",
                "decoder result",
                None,
                f"{len(out)} bytes",
                rc,
            )


class DynamicCodec(BaseCodec):
    """A codec registered by name only (a C plugin python-blosc2 loads dynamically)."""

    compformat = 6
    compcode: int  # type: ignore[misc]
    name: str  # type: ignore[misc]

    def __init__(self, name: str, compcode: int) -> None:
        self.name, self.compcode = name, compcode

    def _refuse(self) -> NotImplementedError:
        return NotImplementedError(
            f"codec {self.compcode} ({self.name!r}) is a dynamically loaded C plugin: pyblosc2 "
            "cannot load C plugins (register Python encoder and decoder functions instead)"
        )

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        raise self._refuse()

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        raise self._refuse()
