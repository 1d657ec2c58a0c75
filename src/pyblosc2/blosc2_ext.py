"""python-blosc2's ``blosc2.blosc2_ext`` functions for VL-block chunks (spec §12), which its
containers and tests call by that name: ``vlcompress``, ``vldecompress`` and
``vldecompress_block``.

>>> chunk = vlcompress([b"hello", b"variable", b"blocks"], typesize=1, nthreads=1)
>>> vldecompress(chunk), vldecompress_block(chunk, 1)
([b'hello', b'variable', b'blocks'], b'variable')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._bytes import BufferLike, as_view
from .chunk.decode import ChunkReader
from .chunk.encode import EncodeSpec
from .chunk.header import OFF_FLAGS2
from .chunk.layout import ChunkKind
from .chunk.vlblocks import decode_vl_block, decode_vl_blocks
from .chunk.vlencode import encode_vl_chunk
from .errors import FormatError, ParamTypeError
from .params import CParams, DParams, parse_int

__all__ = ["vlcompress", "vldecompress", "vldecompress_block"]


def vlcompress(srcs: Sequence[BufferLike], **kwargs: Any) -> bytes:
    """Compress the buffers ``srcs`` into one VL-block chunk, one block each, with the
    compression parameters of :class:`CParams` (as keywords or ``cparams=``)."""
    if isinstance(srcs, str | bytes | bytearray | memoryview) or not isinstance(srcs, Sequence):
        raise ParamTypeError(f"srcs must be a sequence of buffers, got {type(srcs).__name__}")
    cp = CParams.from_any(kwargs.pop("cparams", None), **kwargs)
    return encode_vl_chunk([as_view(s) for s in srcs], EncodeSpec.from_cparams(cp))


def _vl_reader(src: BufferLike) -> ChunkReader:
    reader = ChunkReader.open(as_view(src))
    if reader.layout.kind != ChunkKind.VL_BLOCKS:
        raise FormatError(
            "chunk header", "blosc2_flags2", OFF_FLAGS2, "the VL-blocks bit (0x01)", "a chunk"
        )
    return reader


def vldecompress(src: BufferLike, **kwargs: Any) -> list[bytes]:
    """The blocks of VL-block chunk ``src``, each decoded on its own (parameters of
    :class:`DParams`)."""
    dp = DParams.from_any(kwargs.pop("dparams", None), **kwargs)
    return decode_vl_blocks(_vl_reader(src), dp.nthreads)


def vldecompress_block(src: BufferLike, nblock: int, **kwargs: Any) -> bytes:
    """Block ``nblock`` of VL-block chunk ``src``, decoding only that block."""
    DParams.from_any(kwargs.pop("dparams", None), **kwargs)
    return decode_vl_block(_vl_reader(src), parse_int(nblock, "nblock", 0))
