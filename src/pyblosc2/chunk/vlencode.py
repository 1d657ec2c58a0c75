"""Writing a VL-block chunk (spec §12): blocks of any size, one codec stream each, as
C-Blosc2's ``blosc2_vlcompress_ctx`` writes them (python-blosc2's ``vlcompress``, used by
``BatchArray``).

Header: version 6, flags ``0x05`` | DELTA bit | ``0x10`` (never split) | compformat, the
chunk typesize, ``nbytes`` = the sum of the block sizes, ``blocksize`` = the number of blocks,
byte 30 = ``0x01``, byte 31 = the dictionary bit. Body: the block starts (strictly increasing,
blocks in order), an optional dictionary (§11), then for each block its int32 size and its
payload: the codec stream, or the block itself when the codec does not make it smaller. Each
block goes through the filter pipeline on its own (every block is its own DELTA reference).
There are no zero or run streams, and no memcpyed fallback.

A dictionary is trained (zstd) or taken (LZ4, LZ4HC: the filtered blocks, C's ``dsize``
quirk included) from the filtered blocks when ``use_dict`` is set, ``clevel > 0``, there are
at least 8 blocks, and the blocks are large enough (C's rules); else the chunk has none.

``clevel == 0``: C still calls the codec (undefined for BloscLZ); pyblosc2 stores every block
as it is, which every reader decodes.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from .._threads import run_parallel, threads_for
from ..codecs.base import BaseCodec
from ..codecs.registry import get_codec
from ..constants import (
    EXTENDED_HEADER_LENGTH,
    MAX_BUFFERSIZE,
    MAX_DICT_SIZE,
    MIN_USEFUL_DICT,
    Filter,
    header_typesize,
)
from ..errors import ParamError
from .encode import EncodeSpec, bound_filter, check_pipeline, context_for
from .header import (
    COMPFORMAT_SHIFT,
    DODELTA,
    DONT_SPLIT,
    EXTENDED_MARKER,
    USEDICT,
    VL_BLOCKS,
    VL_VERSION,
    ChunkHeader,
)
from .layout import BSTART_LEN, DSIZE_LEN, VL_SIZE_LEN
from .pipeline import Pipeline

__all__ = ["MIN_DICT_BLOCKS", "encode_vl_chunk"]

_I32 = struct.Struct("<i")
#: C trains a dictionary for a VL chunk only from this many blocks on
MIN_DICT_BLOCKS = 8


def encode_vl_chunk(blocks: Sequence[memoryview], spec: EncodeSpec) -> bytes:
    """Compress ``blocks`` (at least one, none empty) into one VL-block chunk.

    >>> from pyblosc2.constants import Codec
    >>> c = encode_vl_chunk([memoryview(b"hello world" * 3), memoryview(b"abc")],
    ...                     EncodeSpec(1, 5, Codec.LZ4, filters=(0,) * 6))
    >>> c[:4].hex(), int.from_bytes(c[8:12], "little"), len(c)
    ('06013501', 2, 71)
    """
    if not blocks:
        raise ParamError("a VL-block chunk needs at least one block, got none")
    sizes = [len(b) for b in blocks]
    empty = [i for i, n in enumerate(sizes) if n <= 0]
    if empty:
        raise ParamError(f"each VL block must have at least one byte; block {empty[0]} is empty")
    nbytes = sum(sizes)
    if nbytes > MAX_BUFFERSIZE:
        raise ParamError(f"the VL blocks must hold at most {MAX_BUFFERSIZE} bytes, got {nbytes}")
    ts = header_typesize(spec.typesize)
    ctx = context_for(spec, ts)
    codec = get_codec(spec.codec).bound(spec.codec_meta, ctx)
    slots = check_pipeline(spec, ts)
    use_dict = spec.use_dict and spec.clevel > 0
    if use_dict and not codec.supports_dict:
        raise ParamError(f"use_dict needs codec ZSTD, LZ4 or LZ4HC, got {codec.name}")
    pipeline = Pipeline(
        tuple((bound_filter(f, spec.context, ts), m) for f, m in slots if f),
        ts,
        VL_VERSION,
    )
    filters = tuple(f for f, _ in slots)
    flags = EXTENDED_MARKER | DONT_SPLIT | codec.compformat << COMPFORMAT_SHIFT
    flags |= DODELTA if Filter.DELTA in filters else 0
    header = ChunkHeader(
        version=VL_VERSION,
        versionlz=codec.version,
        flags=flags,
        typesize=ts,
        nbytes=nbytes,
        blocksize=len(blocks),
        cbytes=0,
        filters=filters,
        udcompcode=int(codec.compcode),
        compcode_meta=spec.codec_meta,
        filters_meta=tuple(m for _, m in slots),
        blosc2_flags2=VL_BLOCKS,
    )
    filtered = [pipeline.forward(np.frombuffer(b, np.uint8), None) for b in blocks]
    dict_ = _vl_dict(filtered, codec, nbytes) if use_dict else None
    clevel = spec.clevel

    def work(j: int) -> bytes:
        data = filtered[j]
        if clevel == 0:
            return data.tobytes()
        out = codec.compress(data.data, clevel, len(data), dict_)
        return out if out and len(out) < len(data) else data.tobytes()

    nthreads = threads_for(spec.nthreads, max(sizes))
    payloads = run_parallel(work, range(len(blocks)), nthreads)
    dict_section = b"" if dict_ is None else _I32.pack(len(dict_)) + dict_
    pos = EXTENDED_HEADER_LENGTH + BSTART_LEN * len(blocks) + len(dict_section)
    bstarts = np.empty(len(blocks), "<i4")
    pieces: list[bytes] = []
    for j, payload in enumerate(payloads):
        bstarts[j] = pos
        pieces += [_I32.pack(sizes[j]), payload]
        pos += VL_SIZE_LEN + len(payload)
    if dict_ is not None:
        header = header.with_sizes(blosc2_flags=USEDICT)
    header = header.with_sizes(cbytes=pos)
    return b"".join([header.to_bytes(), bstarts.tobytes(), dict_section, *pieces])


def _vl_dict(filtered: list[np.ndarray], codec: BaseCodec, nbytes: int) -> bytes | None:
    """The dictionary of a VL chunk (spec §11 for VL blocks), or None when C makes none."""
    nblocks = len(filtered)
    size = min(MAX_DICT_SIZE, nbytes // 20)
    if size < MIN_USEFUL_DICT or nblocks < MIN_DICT_BLOCKS or nbytes // nblocks // 16 == 0:
        return None
    samples = [f.tobytes() for f in filtered]
    d = codec.train_dictionary(samples, size)
    if d is None:
        return None
    training = b"".join(samples)
    if training[: len(d)] != d:
        return d
    # A raw dictionary (LZ4's): C writes dsize where the training data still lies, before
    # copying the dictionary out of it (the same quirk as regular chunks, spec §11).
    raw = bytearray(d)
    at = BSTART_LEN * nblocks
    if at < len(raw):
        raw[at : at + DSIZE_LEN] = _I32.pack(len(raw))[: len(raw) - at]
    return bytes(raw)
