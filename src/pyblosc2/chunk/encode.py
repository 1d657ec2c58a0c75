"""Writing a chunk: C-Blosc2's serial algorithm (spec §7), Blosc1 output (§2.4), memcpyed
chunks (§5) and dictionaries (§11); special-value chunks are made by :mod:`.special`.

Blocks are filtered and compressed on a thread pool, then laid out in order with the serial
writer's output budget, so the bytes do not depend on the thread count.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._threads import run_parallel, scratch, threads_for
from ..codecs.base import BaseCodec
from ..codecs.registry import get_codec
from ..constants import (
    BLOSC1_MIN_BUFFERSIZE,
    EXTENDED_HEADER_LENGTH,
    MAX_BUFFERSIZE,
    MAX_DICT_SIZE,
    MAX_FILTERS,
    MIN_BUFFERSIZE,
    MIN_HEADER_LENGTH,
    MIN_USEFUL_DICT,
    Codec,
    Filter,
    SpecialValue,
    header_typesize,
)
from ..context import ChunkContext
from ..errors import ParamError
from ..filters.base import BaseFilter
from ..filters.registry import get_filter
from ..kernels import active
from .blockout import Run, Stream, budgeted_layout, fast_layout, lay_out_run
from .blocksize import blosc1_blocksize, blosc1_split, compute_blocksize, split_block
from .header import (
    BLOSC1_VERSION,
    BLOSC2_VERSION,
    COMPFORMAT_SHIFT,
    DOBITSHUFFLE,
    DODELTA,
    DONT_SPLIT,
    DOSHUFFLE,
    EXTENDED_MARKER,
    MEMCPYED,
    SPECIAL_SHIFT,
    USEDICT,
    ChunkHeader,
)
from .layout import BSTART_LEN, DSIZE_LEN
from .pipeline import Pipeline
from .special import special_chunk

if TYPE_CHECKING:
    from ..params import CParams

__all__ = [
    "ChunkPlan",
    "EncodeSpec",
    "bound_filter",
    "check_pipeline",
    "chunk_pipeline",
    "compress_block",
    "context_for",
    "encode_chunk",
    "filtered_streams",
    "plan_chunk",
    "special_chunk",
]

_I32 = struct.Struct("<i")


@dataclass(frozen=True, slots=True)
class EncodeSpec:
    """Resolved compression settings for one chunk."""

    typesize: int
    clevel: int
    codec: int
    codec_meta: int = 0
    filters: tuple[int, ...] = (0, 0, 0, 0, 0, Filter.SHUFFLE)
    filters_meta: tuple[int, ...] = (0,) * MAX_FILTERS
    splitmode: int = 3
    blocksize: int = 0
    use_dict: bool = False
    nthreads: int = 1
    blosc1: bool = False  # 16-byte header, version 2: readable by C-Blosc 1.x
    #: the super-chunk the chunk is written for (its plug-ins see it); None: a chunk alone
    context: ChunkContext | None = field(default=None, compare=False)

    @classmethod
    def from_cparams(
        cls, cp: CParams, blosc1: bool = False, context: ChunkContext | None = None
    ) -> EncodeSpec:
        """The settings of :class:`~pyblosc2.params.CParams` ``cp``, filter slots padded to
        six and metas taken as bytes (``context``: the super-chunk the chunk is for).

        >>> from pyblosc2.params import CParams
        >>> s = EncodeSpec.from_cparams(CParams(typesize=4, filters=[1], filters_meta=[-1]))
        >>> s.filters, s.filters_meta
        ((1, 0, 0, 0, 0, 0), (255, 0, 0, 0, 0, 0))
        """
        pad = (0,) * MAX_FILTERS
        filters = (*(int(f) for f in cp.filters), *pad)[:MAX_FILTERS]
        metas = (*(m & 0xFF for m in cp.filters_meta), *pad)[:MAX_FILTERS]
        return cls(
            typesize=cp.typesize,
            clevel=cp.clevel,
            codec=int(cp.codec),
            codec_meta=cp.codec_meta,
            filters=filters,
            filters_meta=metas,
            splitmode=int(cp.splitmode),
            blocksize=cp.blocksize,
            use_dict=cp.use_dict,
            nthreads=cp.nthreads,
            blosc1=blosc1,
            context=context,
        )


def check_pipeline(spec: EncodeSpec, typesize: int) -> tuple[tuple[int, int], ...]:
    """Validate the filter slots (each filter bound to the chunk's super-chunk, see
    :func:`bound_filter`); returns the (id, meta byte) of the 6 slots."""
    slots = list(zip(spec.filters, spec.filters_meta, strict=True))
    seen_lossy = None
    for i, (fid, meta) in enumerate(slots):
        if fid == Filter.NOFILTER:
            continue
        if fid == Filter.BYTEDELTA and typesize == 1:  # python-blosc2 drops it (a no-op)
            slots[i] = (0, 0)
            continue
        if fid == Filter.BYTEDELTA_BUGGY:
            raise ParamError("filter 34 (BYTEDELTA_BUGGY) is read-only; use BYTEDELTA (35)")
        flt = bound_filter(fid, spec.context, typesize)
        flt.check(typesize, meta & 0xFF)
        if flt.lossy or flt.drops_data:
            seen_lossy = flt.name.upper()
        if fid == Filter.DELTA and seen_lossy:
            raise ParamError(
                f"DELTA after {seen_lossy} corrupts data in C-Blosc2 (spec §9.3); put DELTA first"
            )
    if spec.blosc1:
        extra = [Filter(f).name if f in Filter._value2member_map_ else f for f, _ in slots[:5] if f]
        if extra or slots[5][0] not in (0, Filter.SHUFFLE, Filter.BITSHUFFLE):
            raise ParamError("Blosc1 chunks can only carry SHUFFLE or BITSHUFFLE (slot 5)")
    return tuple((f, m & 0xFF) for f, m in slots)


def context_for(spec: EncodeSpec, typesize: int) -> ChunkContext:
    """The super-chunk plug-ins see: ``spec.context``, or the chunk's typesize alone."""
    return spec.context if spec.context is not None else ChunkContext(typesize)


def bound_filter(fid: int, ctx: ChunkContext | None, typesize: int) -> BaseFilter:
    """Filter ``fid`` bound to the super-chunk ``ctx`` (or to a chunk of ``typesize`` alone)."""
    return get_filter(fid).bound(ctx if ctx is not None else ChunkContext(typesize))


class ChunkPlan(NamedTuple):
    """What the writer decides for a chunk of ``nbytes`` bytes before reading its data: the
    header (``cbytes`` 0), the bound codec, the filter slots, whether blocks are split into
    streams, whether it is stored as a memcpy, the header length, the output budget
    (``nbytes + header``) and whether it trains a dictionary."""

    header: ChunkHeader
    codec: BaseCodec
    slots: tuple[tuple[int, int], ...]
    split: bool
    memcpyed: bool
    hl: int
    destsize: int
    use_dict: bool


def plan_chunk(nbytes: int, spec: EncodeSpec) -> ChunkPlan:
    """The :class:`ChunkPlan` of a chunk of ``nbytes`` bytes written with ``spec`` (its
    parameters checked).

    >>> p = plan_chunk(4096, EncodeSpec(typesize=4, clevel=5, codec=Codec.LZ4))
    >>> p.header.blocksize, p.split, p.memcpyed, p.destsize
    (4096, True, False, 4128)
    """
    if nbytes > MAX_BUFFERSIZE:
        raise ParamError(f"src must be at most {MAX_BUFFERSIZE} bytes, got {nbytes}")
    ts = spec.typesize
    ts_c = header_typesize(ts)
    codec = get_codec(spec.codec).bound(spec.codec_meta, context_for(spec, ts_c))
    if spec.blocksize and spec.blocksize % ts and nbytes >= ts:
        raise ParamError(
            f"blocksize must be a multiple of typesize {ts}, got {spec.blocksize} "
            f"(C-Blosc2 writes corrupt chunks for such sizes, spec §8.1)"
        )
    if spec.blosc1 and codec.compcode > Codec.ZSTD:
        raise ParamError(f"Blosc1 chunks cannot use codec {codec.name}")
    slots = check_pipeline(spec, ts_c)
    filters = tuple(f for f, _ in slots)
    use_dict = spec.use_dict and spec.clevel > 0
    if spec.use_dict and not codec.supports_dict:
        raise ParamError(f"use_dict needs codec ZSTD, LZ4 or LZ4HC, got {codec.name}")
    if spec.blosc1 and spec.use_dict:
        raise ParamError("Blosc1 chunks cannot carry a dictionary")

    if spec.blosc1:
        hl, version = MIN_HEADER_LENGTH, BLOSC1_VERSION
        blocksize = blosc1_blocksize(nbytes, ts, spec.clevel, codec.compcode, spec.blocksize)
        split = blosc1_split(codec.compcode, ts_c, blocksize)
        memcpyed = spec.clevel == 0 or nbytes < BLOSC1_MIN_BUFFERSIZE
    else:
        hl, version = EXTENDED_HEADER_LENGTH, BLOSC2_VERSION
        blocksize = compute_blocksize(
            nbytes, ts, spec.clevel, codec.compcode, spec.blocksize, filters, spec.splitmode
        )
        split = split_block(codec.compcode, spec.clevel, ts_c, blocksize, filters, spec.splitmode)
        memcpyed = spec.clevel == 0 or nbytes < MIN_BUFFERSIZE
    destsize = nbytes + hl
    nblocks = -(-nbytes // blocksize)
    if hl + BSTART_LEN * nblocks > destsize:
        memcpyed = True

    flags = 0 if spec.blosc1 else EXTENDED_MARKER
    comp_flags = flags
    comp_flags |= DOSHUFFLE if Filter.SHUFFLE in filters else 0
    comp_flags |= DOBITSHUFFLE if Filter.BITSHUFFLE in filters else 0
    comp_flags |= DODELTA if Filter.DELTA in filters else 0
    comp_flags |= 0 if split else DONT_SPLIT
    comp_flags |= codec.compformat << COMPFORMAT_SHIFT
    header = ChunkHeader(
        version=version,
        versionlz=codec.version,
        flags=comp_flags,
        typesize=ts_c,
        nbytes=nbytes,
        blocksize=blocksize,
        cbytes=0,
        filters=filters,
        udcompcode=int(codec.compcode),
        compcode_meta=spec.codec_meta,
        filters_meta=tuple(m for _, m in slots),
        extended=not spec.blosc1,
    )
    return ChunkPlan(header, codec, slots, split, memcpyed, hl, destsize, use_dict)


def encode_chunk(src: memoryview, spec: EncodeSpec) -> bytes:
    """Compress ``src`` into one chunk.

    >>> import numpy as np
    >>> c = encode_chunk(memoryview(np.arange(16, dtype=np.int32).tobytes()),
    ...                  EncodeSpec(typesize=4, clevel=5, codec=Codec.LZ4))
    >>> c.hex()[:32], len(c)
    ('05013504400000004000000048000000', 72)
    """
    header, codec, slots, split, memcpyed, hl, destsize, use_dict = plan_chunk(len(src), spec)
    flags = 0 if spec.blosc1 else EXTENDED_MARKER
    comp_flags = header.flags
    if memcpyed:
        # C-Blosc2 drops every bit but the marker; C-Blosc 1.x keeps its compression bits.
        mflags = (comp_flags if spec.blosc1 else flags) | MEMCPYED
        return _memcpy_chunk(header.with_sizes(flags=mflags), src)

    pipeline = chunk_pipeline(header, slots, spec)
    body = _encode_blocks(src, header, pipeline, codec, spec, split, hl, destsize, use_dict)
    if body is None:  # incompressible: raw copy with the compression flags
        return _memcpy_chunk(header.with_sizes(flags=comp_flags | MEMCPYED), src)
    if isinstance(body, ChunkHeader):  # every stream was a zero run
        return body.to_bytes()
    return body


def chunk_pipeline(
    header: ChunkHeader, slots: tuple[tuple[int, int], ...], spec: EncodeSpec
) -> Pipeline:
    """The filter pipeline of a chunk planned as ``header`` with filter ``slots``."""
    ts_c = header.typesize
    return Pipeline(
        tuple((bound_filter(f, spec.context, ts_c), m) for f, m in slots if f),
        ts_c,
        header.version,
    )


def _memcpy_chunk(header: ChunkHeader, src: memoryview) -> bytes:
    hdr = header.with_sizes(cbytes=len(src) + header.header_len)
    return hdr.to_bytes() + bytes(src)


def _constant_streams(streams: np.ndarray) -> np.ndarray:
    """Which rows of ``streams`` are one repeated byte (candidates for a run, §7 step 5.2).

    A few sampled positions rule out almost every stream before the full comparison.
    """
    n = streams.shape[1]
    probe = streams[:, [0, n // 3, n // 2, (2 * n) // 3, n - 1]]
    maybe = (probe == probe[:, :1]).all(axis=1)
    for s in np.flatnonzero(maybe):
        maybe[s] = _is_run(streams[s])
    return maybe


_EVERY_BYTE = np.uint64(0x0101010101010101)


def _is_run(row: np.ndarray) -> bool:
    """Whether the 1-d ``row`` is one repeated byte, compared 8 bytes at a time (a stream of a
    smooth float array's exponent bytes passes the probe and needs the whole comparison)."""
    n8 = len(row) // 8 * 8
    v = row[0]
    if n8 and row.flags.c_contiguous:
        if not (row[:n8].view(np.uint64) == np.uint64(v) * _EVERY_BYTE).all():
            return False
        row = row[n8:]
    return bool((row == v).all())


def filtered_streams(
    j: int,
    arr: np.ndarray,
    header: ChunkHeader,
    pipeline: Pipeline,
    split: bool,
    delta_ref: np.ndarray | None,
) -> np.ndarray:
    """Block ``j`` through the filters, as a (nstreams, neblock) array (§6.3, §9)."""
    bs = header.blocksize
    block = arr[j * bs : j * bs + bs]
    filtered = pipeline.forward(block, None if j == 0 else delta_ref)
    nstreams = header.typesize if split and len(block) == bs else 1
    neblock = len(block) // nstreams
    return filtered[: neblock * nstreams].reshape(nstreams, neblock)


class _Whole(NamedTuple):
    """The whole blocks of a chunk whose pipeline is at most one SHUFFLE: the input as
    (blocks, bs) rows, the rows the codec reads (a scratch buffer for shuffled blocks, the
    input itself for unfiltered ones), the shuffle's item size (1: none), streams per block."""

    src: np.ndarray
    every: np.ndarray
    g: int
    nst: int


def _whole_blocks(
    arr: np.ndarray, header: ChunkHeader, pipeline: Pipeline, split: bool
) -> _Whole | None:
    """The :class:`_Whole` of ``arr``, or None for other pipelines (or fewer than two whole
    blocks). Shuffled runs of whole blocks are a few long kernel calls instead of several
    short ones per block, so the codec calls of other threads do not wait for the GIL."""
    steps = pipeline.steps
    bs = header.blocksize
    full = len(arr) // bs
    if len(steps) > 1 or full < 2:
        return None
    g = 1
    if steps:
        flt, meta = steps[0]
        g = meta or header.typesize
        if flt.id != Filter.SHUFFLE or bs % g:
            return None
    nst = header.typesize if split else 1
    if bs % nst:
        return None
    src = arr[: full * bs].reshape(full, bs)
    every = scratch(full * bs, "enc-blocks").reshape(full, bs) if g > 1 else src
    return _Whole(src, every, g, nst)


def _fill_run(whole: _Whole, rows: slice, runs: bool) -> np.ndarray | None:
    """Shuffle the blocks ``rows`` of ``whole`` (one kernel call: numpy's is one transposed
    copy, 2 GB/s for 4-byte items against 0.9 for its per-block shuffle); returns, with
    ``runs``, the (blocks, nstreams) flags of their one-byte streams, found while the blocks
    are still in this thread's caches."""
    if whole.g > 1:
        active().shuffle_blocks(whole.src[rows], whole.every[rows], whole.g)
    if not runs:
        return None
    filled = whole.every[rows]
    nst = whole.nst
    return _constant_streams(filled.reshape(len(filled) * nst, -1)).reshape(len(filled), nst)


def compress_block(
    streams: np.ndarray,
    codec: BaseCodec,
    clevel: int,
    runs: bool,
    dict_: bytes | None,
    constant: np.ndarray | None = None,
) -> list[Stream]:
    """Compress one block's streams; ``constant`` flags the one-byte-value streams when
    already known."""
    neblock = streams.shape[1]
    if constant is None:
        constant = _constant_streams(streams) if runs else np.zeros(len(streams), bool)
    out = []
    compress = codec.compress
    for data, one_byte in zip(streams, constant.tolist(), strict=True):
        if one_byte:
            v = int(data[0])
            out.append(Stream("zero" if v == 0 else "run", neblock, b"", v))
            continue
        payload = compress(memoryview(data), clevel, neblock, dict_)
        if payload and len(payload) != neblock:
            out.append(Stream("codec", neblock, payload))
        else:
            out.append(Stream("raw", neblock, data.tobytes()))
    return out


def _encode_blocks(
    src: memoryview,
    header: ChunkHeader,
    pipeline: Pipeline,
    codec: BaseCodec,
    spec: EncodeSpec,
    split: bool,
    hl: int,
    destsize: int,
    use_dict: bool,
) -> bytes | ChunkHeader | None:
    arr = np.frombuffer(src, dtype=np.uint8)
    nbytes = len(arr)
    nblocks = -(-nbytes // header.blocksize)
    runs = not spec.blosc1  # zero/run streams need the 32-byte header
    delta_ref = arr[: header.blocksize] if pipeline.has_delta else None

    dict_: bytes | None = None
    if use_dict:
        dict_ = _build_dict(arr, header, pipeline, codec, split, nblocks, delta_ref)
    if dict_ is not None:
        header = header.with_sizes(blosc2_flags=USEDICT)

    # Each thread filters and compresses one run of consecutive blocks: one task per
    # thread, the shuffle of one run overlapping the codec calls of the other (a task per
    # block ran 2 threads slower than one: the pool's hand-offs take the GIL per block).
    per_call = header.blocksize // (header.typesize if split else 1)  # bytes per codec call
    nthreads = threads_for(spec.nthreads, per_call)
    whole = _whole_blocks(arr, header, pipeline, split)
    full = 0 if whole is None else len(whole.src)

    def streams_of(j: int) -> np.ndarray:
        if whole is not None and j < full:
            return whole.every[j].reshape(whole.nst, -1)
        return filtered_streams(j, arr, header, pipeline, split, delta_ref)

    step = -(-nblocks // nthreads)

    def run(first: int) -> Run:
        stop = min(first + step, nblocks)
        flags = None
        if whole is not None and first < full:
            flags = _fill_run(whole, slice(first, min(stop, full)), runs)
        out = []
        for j in range(first, stop):
            known = flags[j - first] if flags is not None and j < full else None
            out.append(compress_block(streams_of(j), codec, spec.clevel, runs, dict_, known))
        return lay_out_run(out)

    parts = run_parallel(run, range(0, nblocks, step), nthreads)
    dict_section = b"" if dict_ is None else _I32.pack(len(dict_)) + dict_
    first_block = hl + BSTART_LEN * nblocks + len(dict_section)

    def recompress(j: int, k: int, maxout: int) -> bytes:
        data = streams_of(j)[k]
        payload = codec.compress(memoryview(data), spec.clevel, maxout, dict_)
        if not payload or len(payload) == len(data) or len(payload) > maxout:
            return data.tobytes()
        return payload

    lay = fast_layout(parts, first_block, header.blocksize, destsize)
    if lay is None:
        blocks = [b for part in parts for b in part.blocks]
        lay = budgeted_layout(blocks, first_block, destsize, recompress)
        if lay is None:
            return None
    if lay.all_zero and runs:
        special = SpecialValue.ZERO << SPECIAL_SHIFT
        return header.with_sizes(cbytes=hl, blosc2_flags=header.blosc2_flags | special)
    hdr = header.with_sizes(cbytes=lay.cbytes)
    return b"".join([hdr.to_bytes(), lay.bstarts.tobytes(), dict_section, *lay.pieces])


def _build_dict(
    arr: np.ndarray,
    header: ChunkHeader,
    pipeline: Pipeline,
    codec: BaseCodec,
    split: bool,
    nblocks: int,
    delta_ref: np.ndarray | None,
) -> bytes | None:
    """The dictionary C-Blosc2 trains from the filtered blocks (spec §11), or None."""
    nbytes = len(arr)
    dict_maxsize = min(MAX_DICT_SIZE, nbytes // 20)
    ns = max(nblocks * (header.typesize if split else 1), 8)
    sample_size = nbytes // ns // 16
    if dict_maxsize < MIN_USEFUL_DICT or sample_size == 0:
        return None
    bs = header.blocksize
    training = np.concatenate(
        [
            pipeline.forward(arr[j * bs : j * bs + bs], None if j == 0 else delta_ref)
            for j in range(nblocks)
        ]
    )
    samples = [training[i * sample_size : (i + 1) * sample_size].tobytes() for i in range(ns)]
    d = codec.train_dictionary(samples, dict_maxsize)
    if d is None or bytes(training[: len(d)]) != d:
        return d
    # A raw dictionary (the training data itself, LZ4's): C writes dsize into its output, where
    # the training data lies, before copying the dictionary out of it (§11 step 3).
    raw = bytearray(d)
    pos = BSTART_LEN * nblocks
    if pos < len(raw):
        raw[pos : pos + DSIZE_LEN] = _I32.pack(len(raw))[: len(raw) - pos]
    return bytes(raw)
