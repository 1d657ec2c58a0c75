"""Writers fed by an :class:`~.arrays.ArraySource`, slab by slab (``.b2nd``, ``.b2frame``,
``.npy``, raw bytes), and the ``compress`` / ``decompress`` commands built on them.

``compress`` streams: raw bytes or a C-order ``.npy`` are read one chunk (``.b2frame``) or
one row of chunks (``.b2nd``) at a time, also from standard input.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

import numpy as np

import pyblosc2

from ..errors import ParamError
from .arrays import (
    ArraySource,
    FrameArray,
    MappedArray,
    StreamArray,
    Tracked,
    default_dtype,
    read_npy_header,
)
from .progress import progress
from .sources import STDIO, CliError, Source, about, spool_stdin

__all__ = [
    "compress_input",
    "cparams_from_args",
    "write_b2frame",
    "write_b2nd",
    "write_npy",
    "write_raw",
]

DEFAULT_FRAME_CHUNK = 4 << 20  # bytes per .b2frame chunk unless --chunks says otherwise
#: codecs a file may inherit from its source (what C-Blosc2 reads); others become zstd
WRITABLE_CODECS = ("zstd", "lz4", "lz4hc", "blosclz", "zlib")


def parse_filters(names: list[str] | None) -> list[Any]:
    """``--filter`` values as a python-blosc2 filter pipeline (last slot first, as
    python-blosc2's default ``[0, 0, 0, 0, 0, SHUFFLE]``)."""
    if names is None:
        return [pyblosc2.Filter.NOFILTER] * 5 + [pyblosc2.Filter.SHUFFLE]
    chosen = [pyblosc2.Filter[n.upper()] for n in names if n != "nofilter"]
    return [pyblosc2.Filter.NOFILTER] * (6 - len(chosen)) + chosen


def cparams_from_args(args: Any, typesize: int) -> pyblosc2.CParams:
    """The CParams of ``--codec --clevel --filter --typesize --nthreads`` (ParamError on
    bad values)."""
    kw: dict[str, Any] = {
        "codec": pyblosc2.Codec[args.codec.upper()],
        "clevel": args.clevel,
        "typesize": typesize,
        "filters": parse_filters(args.filter),
    }
    if args.nthreads is not None:
        kw["nthreads"] = args.nthreads
    return pyblosc2.CParams(**kw)


def write_b2nd(
    src: ArraySource,
    path: str,
    cparams: pyblosc2.CParams,
    chunks: tuple[int, ...] | None,
    blocks: tuple[int, ...] | None,
    *,
    fingerprint: bool = False,
    meta: dict | None = None,
) -> pyblosc2.NDArray:
    """``src`` as a new ``.b2nd`` file, one row of chunks at a time."""
    for name, given in (("chunks", chunks), ("blocks", blocks)):
        if given is not None and len(given) != len(src.shape):
            raise pyblosc2.ParamError(
                f"--{name} needs {len(src.shape)} values for shape {src.shape}, got {given}"
            )
    kw: dict[str, Any] = {"urlpath": path, "mode": "w", "cparams": cparams}
    if fingerprint:
        kw["fingerprint"] = True
    if meta:
        kw["meta"] = meta
    if not src.shape:  # one item (NDArray.__setitem__ refuses 0-d arrays)
        return pyblosc2.asarray(src.rows(0, 1), **kw)
    dst = pyblosc2.empty(src.shape, src.dtype, chunks=chunks, blocks=blocks, **kw)
    if not all(src.shape):
        return dst
    step = dst.chunks[0]
    for r0 in range(0, src.shape[0], step):
        r1 = min(r0 + step, src.shape[0])
        dst[r0:r1] = src.rows(r0, r1)
    return dst


def write_b2frame(
    pieces: Iterable[bytes],
    path: str,
    cparams: pyblosc2.CParams,
    chunk_bytes: int,
    *,
    fingerprint: bool = False,
) -> pyblosc2.SChunk:
    """The byte stream ``pieces`` as a new ``.b2frame``, in chunks of ``chunk_bytes``."""
    s = pyblosc2.SChunk(
        chunksize=chunk_bytes, urlpath=path, mode="w", cparams=cparams, fingerprint=fingerprint
    )
    pending = bytearray()
    for piece in pieces:
        pending += piece
        while len(pending) >= chunk_bytes:
            s.append_data(bytes(pending[:chunk_bytes]))
            del pending[:chunk_bytes]
    if pending:
        s.append_data(bytes(pending))
    return s


def write_npy(src: ArraySource, f: IO[bytes]) -> None:
    """``src`` as a ``.npy`` stream: the header, then C-order rows."""
    header = {
        "descr": np.lib.format.dtype_to_descr(src.dtype),
        "fortran_order": False,
        "shape": src.shape,
    }
    try:
        np.lib.format.write_array_header_1_0(f, header)
    except ValueError:  # a header over 64 KiB needs format 2.0
        np.lib.format.write_array_header_2_0(f, header)
    write_raw(src, f)


def write_raw(src: ArraySource, f: IO[bytes]) -> None:
    for piece in src.iter_bytes():
        f.write(piece)


class RawStream(StreamArray):
    """Raw bytes of unknown length (a pipe): only ``iter_bytes`` (what ``.b2frame`` and raw
    outputs read); the writers that need a shape get a spooled file instead."""

    def __init__(self, f: IO[bytes], dtype: np.dtype) -> None:
        super().__init__(f, (0,), dtype)

    @property
    def nbytes(self) -> int | None:
        return None

    def iter_bytes(self) -> Iterator[bytes]:
        while piece := self.f.read(1 << 20):
            yield piece


def parse_dtype(text: str) -> np.dtype:
    """``--dtype`` as a numpy dtype (ParamError when numpy does not know it).

    >>> parse_dtype("<f4")
    dtype('float32')
    """
    try:
        return np.dtype(text)
    except TypeError:
        raise pyblosc2.ParamError(f"--dtype: data type {text!r} not understood") from None


def _typesize(args: Any, dtype: np.dtype | None) -> int:
    if args.typesize is not None:
        return int(args.typesize)
    return dtype.itemsize if dtype is not None else 1


def _ints(text: str | None, name: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(int(v) for v in text.replace(" ", "").strip("()[]").split(",") if v)
    except ValueError:
        raise pyblosc2.ParamError(
            f"--{name} must be integers separated by commas, got {text!r}"
        ) from None
    if not values or any(v <= 0 for v in values):
        raise pyblosc2.ParamError(f"--{name} must be positive integers, got {text!r}")
    return values


def compress_input(args: Any, stack: contextlib.ExitStack, need_shape: bool) -> ArraySource:
    """The input of ``compress``: a ``.npy`` (by its magic) or raw bytes of ``--dtype``,
    streamed; raw standard input is spooled only when the shape must be known first."""
    path = args.input
    f: IO[bytes]
    if path == STDIO:
        f = sys.stdin.buffer
        head = f.peek(6)[:6] if hasattr(f, "peek") else b""
        size = None
    else:
        f = stack.enter_context(open(path, "rb"))  # noqa: SIM115
        head, size = f.read(6), os.fstat(f.fileno()).st_size
        f.seek(0)
    if head == b"\x93NUMPY":
        shape, dtype, fortran = read_npy_header(f)
        if fortran:
            if path == STDIO:
                raise ParamError("a Fortran-order .npy cannot be read from a pipe")
            return MappedArray(np.load(path, mmap_mode="r"))
        return StreamArray(f, shape, dtype)
    dtype = parse_dtype(args.dtype) if args.dtype else default_dtype(_typesize(args, None))
    if size is None and need_shape:
        spooled = spool_stdin(stack)
        f = stack.enter_context(open(spooled, "rb"))  # noqa: SIM115
        size = os.path.getsize(spooled)
    if size is None:
        return RawStream(f, dtype)
    if size % dtype.itemsize:
        raise ParamError(f"{size} bytes are not a whole number of {dtype} items")
    return StreamArray(f, (size // dtype.itemsize,), dtype)


def tracked(src: ArraySource, desc: str, args: Any) -> Tracked:
    """``src`` with a progress bar of the bytes read (shown on a terminal unless ``-q``)."""
    return Tracked(src, progress(src.nbytes, desc, enabled=not args.quiet, unit="B"))


def write_array(src: ArraySource, out: str, args: Any, *, meta: dict | None = None) -> None:
    """Write ``src`` to ``out`` (a temporary path) in the format ``args.format`` names,
    showing progress (on a terminal, unless ``-q``)."""
    schunk_bytes = src.obj.chunksize if isinstance(src, FrameArray) and src.kind == "schunk" else 0
    src = tracked(src, args.command, args)
    try:
        _write(src, out, args, meta, schunk_bytes)
    finally:
        src.bar.close()


def _write(src: ArraySource, out: str, args: Any, meta: dict | None, schunk_bytes: int) -> None:
    fmt = args.format
    if fmt == "b2nd":
        cp = cparams_from_args(args, src.dtype.itemsize)
        write_b2nd(
            src,
            out,
            cp,
            _ints(args.chunks, "chunks"),
            _ints(args.blocks, "blocks"),
            fingerprint=args.fingerprint,
            meta=meta,
        )
    elif fmt == "b2frame":
        ts = _typesize(args, src.dtype)
        chunks = _ints(args.chunks, "chunks")
        blocks = _ints(args.blocks, "blocks")
        cp = cparams_from_args(args, ts)
        if blocks:
            cp = pyblosc2.CParams(**{**cp.to_dict(), "blocksize": math.prod(blocks) * ts})
        if chunks:
            nbytes = math.prod(chunks) * ts
        elif schunk_bytes:
            nbytes = schunk_bytes
        else:
            nbytes = DEFAULT_FRAME_CHUNK // ts * ts
        write_b2frame(src.iter_bytes(), out, cp, nbytes, fingerprint=args.fingerprint)
    else:
        with open(out, "wb") as f:
            (write_npy if fmt == "npy" else write_raw)(src, f)


def source_array(source: Source, dtype: str | None) -> ArraySource:
    """A frame or chunk :class:`Source` as an :class:`ArraySource`."""
    with about(source.path):
        if source.kind == "ndarray" and dtype is not None:
            raise CliError(source.path, "--dtype applies to SChunk and chunk inputs only")
        return FrameArray(source.kind, source.obj, parse_dtype(dtype) if dtype else None)


def fill_defaults(args: Any, cparams: Any) -> None:
    """Unset ``--codec/--clevel/--filter`` take the source frame's values (so ``convert``
    only changes what it is asked to), else python-blosc2's defaults (zstd, 5, shuffle)."""
    if cparams is None:
        cparams = pyblosc2.CParams()
    if args.codec is None:
        try:
            args.codec = pyblosc2.Codec(int(cparams.codec)).name.lower()
        except ValueError:
            args.codec = "zstd"
        if args.codec not in WRITABLE_CODECS:  # e.g. a plugin, or snappy: what C reads
            args.codec = "zstd"
    if args.codec == "snappy" and not getattr(args, "allow_snappy", False):
        raise ParamError(
            "snappy writes files C-Blosc2 (python-blosc2) cannot read; "
            "pass --allow-snappy to write it anyway"
        )
    if args.clevel is None:
        args.clevel = cparams.clevel
    if args.filter is None:
        names = [pyblosc2.Filter(int(f)).name.lower() for f in cparams.filters if int(f)]
        args.filter = names or ["nofilter"]
