"""The codec protocol: one object per codec id, turning one stream into bytes and back.

A *stream* is the unit a Blosc chunk hands to a codec (spec §6.3, §10). Codecs know nothing of
chunks: the chunk layer gives them a stream, a compression level and an output budget, and
wraps their errors with the stream's location. Codecs that take a dictionary (spec §11) also
build one from sample streams (:meth:`BaseCodec.train_dictionary`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from ..errors import CodecError, stream_error

if TYPE_CHECKING:
    from ..context import ChunkContext

__all__ = ["BaseCodec", "StreamDecoder", "stream_error"]  # stream_error: for the codec modules

#: ``decode(src, buf)``: stream ``src`` decoded to exactly ``len(buf)`` bytes, into the
#: writable byte view ``buf`` (returned) or into a new buffer of the codec's (returned
#: instead), or None when the codec refuses the stream (the caller then decodes it through
#: :meth:`BaseCodec.decompress_into`, whose error names it). A decoder is used by the thread
#: that made it (it may hold that thread's codec context).
StreamDecoder = Callable[[memoryview, memoryview], "memoryview | bytes | bytearray | None"]


class BaseCodec(ABC):
    """A Blosc codec.

    ``compcode`` is the API id (``Codec`` value, or a plugin id 32-255) written in byte 22 of the
    extended header; ``compformat`` is the 3-bit format written in flags bits 5-7 (6 for plugins).
    """

    compcode: ClassVar[int]
    compformat: ClassVar[int]
    name: ClassVar[str]
    #: whether chunks may carry a dictionary for this codec (spec §11)
    supports_dict: ClassVar[bool] = False
    #: whether :meth:`decompress_into` writes into the caller's buffer itself (else it copies
    #: :meth:`decompress`'s result, and readers that can use a new buffer call that instead)
    writes_into: ClassVar[bool] = False
    #: the codec's format version, written in the chunk header's ``versionlz`` byte (C: 1 for
    #: the built-in codecs, the registered ``version`` for plug-ins)
    version: ClassVar[int] = 1

    def bound(self, meta: int, ctx: ChunkContext | None) -> BaseCodec:
        """This codec for the chunks of one super-chunk ``ctx`` (None: a chunk on its own),
        with the chunk's ``compcode_meta`` byte ``meta``. Codecs that need them (user codecs
        written in Python) return a copy bound to both; the others return themselves."""
        return self

    @abstractmethod
    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        """Compress ``src`` at ``clevel`` (1-9).

        Returns the stream, or ``b""`` when the result would exceed ``maxout`` bytes or the codec
        judges the data not worth compressing (the chunk layer then stores the stream raw).
        """

    @abstractmethod
    def decompress(
        self, src: memoryview, nbytes: int, dict_: bytes | None = None
    ) -> bytes | bytearray | memoryview:
        """Decode ``src`` to exactly ``nbytes`` bytes, or raise :class:`CodecError`."""

    def decompress_into(self, src: memoryview, dst: memoryview, dict_: bytes | None = None) -> None:
        """Decode ``src`` into all of ``dst`` (exactly ``len(dst)`` bytes).

        Codecs whose library can write into a caller's buffer override this to save a copy.
        """
        dst[:] = self.decompress(src, len(dst), dict_)

    def stream_decoder(self, dict_: bytes | None = None) -> StreamDecoder:
        """A :data:`StreamDecoder` for this codec's streams (with dictionary ``dict_``): what
        a reader binds once per chunk and calls per stream, with the least work per call.
        Codecs with a shorter path than :meth:`decompress_into` override it.

        >>> from pyblosc2.codecs.registry import get_codec
        >>> dec = get_codec(0).stream_decoder()
        >>> src = memoryview(bytes.fromhex("2361616161e00603016162"))
        >>> bytes(dec(src, memoryview(bytearray(21))))
        b'aaaaaaaaaaaaaaaaaaaab'
        >>> dec(memoryview(b"junk"), memoryview(bytearray(21))) is None
        True
        """
        decompress_into = self.decompress_into

        def decode(src: memoryview, buf: memoryview) -> memoryview | None:
            try:
                decompress_into(src, buf, dict_)
            except CodecError:
                return None
            return buf

        return decode

    def train_dictionary(self, samples: Sequence[bytes], size: int) -> bytes | None:
        """A dictionary of at most ``size`` bytes for streams like ``samples`` (spec §11), or
        ``None`` to compress without one (only called when :attr:`supports_dict`).

        The default is C-Blosc2's rule for LZ4 and LZ4HC: the samples themselves, joined and
        cut to ``size`` bytes. Codecs with a trainer (zstd) override it.

        >>> from pyblosc2.codecs.registry import get_codec
        >>> get_codec(1).train_dictionary([b"abc", b"def"], 4)
        b'abcd'
        """
        return b"".join(samples)[:size]

    def __repr__(self) -> str:
        return f"<codec {self.name} id={self.compcode}>"
