"""The chunk-level public API, mirroring python-blosc2 (``compress2``, ``decompress2``, ...).

>>> import numpy as np
>>> a = np.linspace(0, 1, 10_000)
>>> c = compress2(a, typesize=8, codec=Codec.LZ4, clevel=5)
>>> len(c) < a.nbytes
True
>>> np.array_equal(np.frombuffer(decompress2(c), dtype=a.dtype), a)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal, overload

import numpy as np

from ._bytes import BufferLike, as_view, writable_view
from ._threads import default_nthreads, set_default_nthreads
from .chunk.decode import ChunkReader
from .chunk.encode import EncodeSpec, encode_chunk
from .chunk.header import OFF_FLAGS2, ChunkHeader
from .chunk.layout import ChunkKind
from .chunk.special import make_special_chunk  # re-exported: the public name
from .chunk.vlblocks import decode_vl_block, decode_vl_blocks
from .chunk.vlencode import encode_vl_chunk
from .codecs.registry import registered_codecs
from .constants import BLOSC1_MIN_BUFFERSIZE, Codec, Filter, SplitMode
from .errors import FormatError, ParamError, ParamTypeError
from .params import (
    CParams,
    DParams,
    parse_blocksize,
    parse_bool,
    parse_enum,
    parse_int,
    parse_nthreads,
)

__all__ = [
    "compress",
    "compress2",
    "compress_blosc1",
    "compressor_list",
    "decompress",
    "decompress2",
    "get_cbuffer_sizes",
    "get_chunk_header",
    "getitem",
    "make_special_chunk",
    "set_nthreads",
    "set_releasegil",
    "vlcompress",
    "vldecompress",
    "vldecompress_block",
]

_state: dict[str, int | bool] = {
    "nthreads": default_nthreads(),
    "releasegil": False,
    # compress()'s forced block size (set_blocksize; 0: automatic) and last codec
    "blocksize": 0,
    "compressor": Codec.BLOSCLZ,
}
#: The shuffles a Blosc1 chunk can record.
_BLOSC1_SHUFFLES = (Filter.NOFILTER, Filter.SHUFFLE, Filter.BITSHUFFLE)


def set_nthreads(nthreads: int) -> int:
    """Set the thread count of :func:`compress`/:func:`decompress` and the default one of new
    ``CParams``/``DParams`` (as python-blosc2 does); returns the previous one.

    >>> old = set_nthreads(1); CParams().nthreads
    1
    >>> _ = set_nthreads(old)
    """
    new = parse_nthreads(nthreads)
    old, _state["nthreads"] = _state["nthreads"], new
    set_default_nthreads(new)
    return old


def set_releasegil(gilstate: bool) -> bool:
    """Record whether compression should release the GIL; returns the previous setting
    (python-blosc2's ``set_releasegil``).

    pyblosc2's codec libraries (lz4, zstandard, zlib) and numpy kernels release the GIL on their
    own, whatever this says, so the setting changes nothing here; it is kept so scripts and
    fixtures that toggle it run unchanged.

    >>> old = set_releasegil(True); set_releasegil(old)
    True
    """
    old, _state["releasegil"] = bool(_state["releasegil"]), parse_bool(gilstate, "gilstate")
    return old


def compressor_list(plugins: bool = False) -> list[Codec | int]:
    """The codecs pyblosc2 compresses with (python-blosc2's ``compressor_list``); with
    ``plugins`` also the registered plugin codec ids.

    >>> [c.name for c in compressor_list()]
    ['BLOSCLZ', 'LZ4', 'LZ4HC', 'ZLIB', 'ZSTD']
    """
    found: list[Codec | int] = [Codec.BLOSCLZ, Codec.LZ4, Codec.LZ4HC, Codec.ZLIB, Codec.ZSTD]
    if plugins:
        found += sorted(k for k in registered_codecs() if k > Codec.ZSTD and k != Codec.SNAPPY)
    return found


def _spec(cp: CParams, blosc1: bool = False) -> EncodeSpec:
    return EncodeSpec.from_cparams(cp, blosc1)


def compress2(src: BufferLike, **kwargs: Any) -> bytes:
    """Compress ``src`` into a Blosc2 chunk (32-byte header).

    Parameters are those of :class:`CParams`, given as ``cparams=`` (a ``CParams`` or dict) or
    as keyword arguments. The layout of the output does not depend on ``nthreads``.

    >>> c = compress2(b"abcd" * 20 + b"xyz", typesize=4, codec=Codec.BLOSCLZ,
    ...               splitmode=SplitMode.NEVER_SPLIT, nthreads=1)
    >>> len(c), decompress2(c)[-3:]
    (81, b'xyz')
    """
    cp = CParams.from_any(kwargs.pop("cparams", None), **kwargs)
    return encode_chunk(as_view(src), _spec(cp))


def _blosc1_filter(filter: Filter | int) -> Filter | int:
    """The filter C's ``blosc2_compress`` records for its ``doshuffle`` argument (its
    ``build_filters``): only NOFILTER, SHUFFLE and BITSHUFFLE are applied; any other id (DELTA,
    TRUNC_PREC, BYTEDELTA, ...) leaves the pipeline empty, so the data is stored unfiltered."""
    return filter if filter in _BLOSC1_SHUFFLES else Filter.NOFILTER


def _forced_blocksize(typesize: int) -> int:
    """The block size set_blocksize() forces, as a multiple of ``typesize``: C-Blosc2 uses a
    forced size as given and writes chunks it cannot decode when it is not a multiple
    (chunk-format.md §18); rounding down to whole items gives a valid chunk instead."""
    forced = int(_state["blocksize"])
    if not forced or typesize <= 0 or forced % typesize == 0:
        return forced
    return max(typesize, forced // typesize * typesize)


def compress(
    src: BufferLike,
    typesize: int | None = 8,
    clevel: int = 1,
    filter: Filter | int = Filter.SHUFFLE,
    codec: Codec | int = Codec.ZSTD,
    _ignore_multiple_size: bool = False,
) -> bytes:
    """Compress like python-blosc2's ``compress`` (one filter, in slot 5; the global thread
    count and :func:`~pyblosc2.set_blocksize` block size). As in C-Blosc2's
    ``blosc2_compress``, ``filter`` applies only when it is NOFILTER, SHUFFLE (typesize > 1) or
    BITSHUFFLE; other filter ids store the data unfiltered.

    >>> c = compress(np.arange(16, dtype=np.int32), typesize=4, clevel=5, codec=Codec.LZ4)
    >>> c.hex()[:16], len(c)
    ('0501350440000000', 72)
    """
    view = as_view(src)
    if typesize is None:
        typesize = getattr(src, "itemsize", 1)
    cp = CParams(
        typesize=typesize,
        clevel=clevel,
        codec=codec,
        nthreads=_state["nthreads"],
        filters=[0, 0, 0, 0, 0, _blosc1_filter(parse_enum(filter, Filter, "filter", 0, 255))],
        splitmode=SplitMode.FORWARD_COMPAT_SPLIT,
        blocksize=_forced_blocksize(int(typesize)),
    )
    _state["compressor"] = cp.codec  # python-blosc2's compress sets the global compressor
    if cp.filters[5] == Filter.SHUFFLE and cp.typesize == 1:
        cp.filters[5] = Filter.NOFILTER  # blosc2_compress drops it (build_filters)
    if not _ignore_multiple_size and len(view) % cp.typesize:
        raise ParamError(f"src length ({len(view)}) must be a multiple of typesize ({typesize})")
    return encode_chunk(view, _spec(cp))


def compress_blosc1(
    src: BufferLike,
    typesize: int = 8,
    clevel: int = 9,
    shuffle: Filter | int = Filter.SHUFFLE,
    codec: Codec | int = Codec.BLOSCLZ,
    blocksize: int = 0,
    nthreads: int = 1,
) -> bytes:
    """Compress into a Blosc1 chunk (16-byte header, format version 2) that C-Blosc 1.x,
    numcodecs and zarr's ``blosc`` codec decode.

    ``shuffle`` is NOFILTER, SHUFFLE or BITSHUFFLE; ``blocksize`` 0 picks C-Blosc 1.x's size.

    >>> c = compress_blosc1(np.arange(128, dtype=np.int32) % 8, typesize=4, clevel=5,
    ...                     codec=Codec.LZ4)
    >>> c[:4].hex(), decompress(c) == (np.arange(128, dtype=np.int32) % 8).tobytes()
    ('02012104', True)
    """
    shuffle = parse_enum(shuffle, Filter, "shuffle", 0, 255, allowed=_BLOSC1_SHUFFLES)
    # C-Blosc 1.x records a typesize above 255 as 1 (no shuffle across wider items).
    ts = parse_int(typesize, "typesize", 1, 2**31 - 1)
    ts = ts if ts <= 255 else 1
    cp = CParams(
        typesize=ts,
        clevel=clevel,
        codec=codec,
        nthreads=nthreads,
        filters=[0, 0, 0, 0, 0, shuffle],
        splitmode=SplitMode.AUTO_SPLIT,
    )
    view = as_view(src)
    if blocksize:
        # C-Blosc 1.x accepts any forced size (at least 128 bytes) and rounds it to the typesize.
        blocksize = max(parse_blocksize(blocksize), BLOSC1_MIN_BUFFERSIZE) // ts * ts
    return encode_chunk(view, replace(_spec(cp, blosc1=True), blocksize=blocksize))


def _reader(src: BufferLike) -> ChunkReader:
    return ChunkReader.open(as_view(src))


@overload
def decompress2(src: BufferLike, dst: None = None, **kwargs: Any) -> bytes: ...
@overload
def decompress2(src: BufferLike, dst: BufferLike, **kwargs: Any) -> None: ...
def decompress2(src: BufferLike, dst: BufferLike | None = None, **kwargs: Any) -> bytes | None:
    """Decompress a chunk; into ``dst`` (a writable buffer or array, returns ``None``) or
    into a new ``bytes`` object.

    >>> c = compress2(bytes(range(256)) * 4, typesize=1)
    >>> decompress2(c)[:4]
    b'\\x00\\x01\\x02\\x03'
    >>> out = bytearray(1024); decompress2(c, dst=out); out[-1]
    255
    """
    dp = DParams.from_any(kwargs.pop("dparams", None), **kwargs)
    reader = _reader(src)
    if dst is None:
        return reader.decode_bytes(dp.nthreads)
    out = _destination(dst, reader.header.nbytes)
    reader.decode(out, nthreads=dp.nthreads)
    return None


@overload
def decompress(
    src: BufferLike, dst: None = None, as_bytearray: Literal[False] = False
) -> bytes: ...
@overload
def decompress(src: BufferLike, dst: None, as_bytearray: Literal[True]) -> bytearray: ...
@overload
def decompress(src: BufferLike, dst: None = None, *, as_bytearray: Literal[True]) -> bytearray: ...
@overload
def decompress(src: BufferLike, dst: BufferLike, as_bytearray: bool = False) -> None: ...
@overload
def decompress(
    src: BufferLike, dst: BufferLike | None = None, as_bytearray: bool = False
) -> bytes | bytearray | None: ...
def decompress(
    src: BufferLike, dst: BufferLike | None = None, as_bytearray: bool = False
) -> bytes | bytearray | None:
    """Decompress like python-blosc2's ``decompress`` (global thread count): into ``dst``
    (returns ``None``), else into a new ``bytes`` (a ``bytearray`` with ``as_bytearray``).

    >>> c = compress(b"hello blosc" * 10, typesize=1)
    >>> decompress(c)[:11]
    b'hello blosc'
    >>> type(decompress(c, as_bytearray=True)).__name__
    'bytearray'
    >>> out = bytearray(110); decompress(c, out); bytes(out[-5:])
    b'blosc'
    """
    as_bytearray = parse_bool(as_bytearray, "as_bytearray")
    reader = _reader(src)
    if dst is not None:
        out = _destination(dst, reader.header.nbytes)
        reader.decode(out, nthreads=_state["nthreads"])
        return None
    if as_bytearray:
        ba = bytearray(reader.header.nbytes)
        reader.decode(np.frombuffer(ba, np.uint8), nthreads=_state["nthreads"])
        return ba
    return reader.decode_bytes(_state["nthreads"])


def _destination(dst: BufferLike, nbytes: int) -> np.ndarray:
    """``dst`` as a writable byte view with room for ``nbytes``; an empty destination is
    refused even for an empty chunk, as python-blosc2 does (C reports 0 bytes written, which
    it treats as a failure)."""
    out = writable_view(dst)
    if not len(out):
        raise ParamError("dst is empty: python-blosc2 refuses it; call without dst for b''")
    if len(out) < nbytes:
        raise ParamError(f"dst has {len(out)} bytes, the chunk needs {nbytes}")
    return out


def get_cbuffer_sizes(src: BufferLike) -> tuple[int, int, int]:
    """``(nbytes, cbytes, blocksize)`` from a chunk header.

    >>> get_cbuffer_sizes(compress2(bytes(1000), typesize=1))
    (1000, 32, 1000)
    """
    h = ChunkHeader.from_bytes(as_view(src))
    return h.nbytes, h.cbytes, h.blocksize


def get_chunk_header(src: BufferLike) -> ChunkHeader:
    """The parsed, validated header of a chunk (any Blosc1 or Blosc2 chunk).

    >>> h = get_chunk_header(compress2(np.arange(1000, dtype=np.int32), typesize=4,
    ...                                codec=Codec.LZ4))
    >>> h.nbytes, h.typesize, h.compformat, h.nblocks
    (4000, 4, 1, 1)
    """
    return ChunkHeader.from_bytes(as_view(src))


def getitem(src: BufferLike, start: int, stop: int, nthreads: int = 1) -> bytes:
    """Items ``[start, stop)`` (in units of the header typesize) of a chunk, decoding only the
    blocks they touch. Out-of-range bounds are clipped as in slicing.

    >>> c = compress2(np.arange(100_000, dtype=np.int32), typesize=4, blocksize=4096)
    >>> np.frombuffer(getitem(c, 50_000, 50_003), np.int32)
    array([50000, 50001, 50002], dtype=int32)
    """
    start = parse_int(start, "start", 0)
    stop = parse_int(stop, "stop")
    nthreads = parse_nthreads(nthreads)
    reader = _reader(src)
    ts = reader.header.typesize
    return reader.decode_range(start * ts, stop * ts, nthreads).tobytes()


# -- VL-block chunks (spec §12): python-blosc2's blosc2_ext functions -------------------------


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
