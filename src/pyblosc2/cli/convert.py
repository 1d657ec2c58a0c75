"""``pyblosc2 convert IN OUT``: between ``.b2nd``, ``.b2frame``, ``.npy`` and zarr v3 stores
(written with pyblosc2's blosc codec; zarr v2 stores with blosc, blosc2 or no compressor are
read too), recompressing (``--codec --clevel --filter``) or
repartitioning (``--chunks --blocks``) on the way, one row of chunks at a time."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ..errors import ParamError
from .arrays import ArraySource
from .codec_io import compress_input, fill_defaults, source_array, tracked, write_array
from .hdf5_source import Hdf5Array, split_hdf5
from .outputs import atomic_output
from .sources import STDIO, about, open_source
from .xarray_store import split_variable, variable_source
from .zarr_v2 import ZarrV2Array, is_zarr_v2_store
from .zarr_v3 import ZarrArray, is_zarr_store, write_zarr

__all__ = ["FORMATS", "format_of", "open_any", "run_convert"]

FORMATS = ("b2nd", "b2frame", "npy", "zarr", "raw")
_EXTENSIONS = {
    ".b2nd": "b2nd",
    ".b2frame": "b2frame",
    ".b2": "b2frame",
    ".npy": "npy",
    ".zarr": "zarr",
}


def format_of(path: str, given: str | None, default: str | None = None) -> str:
    """The output format: ``--format``, else the extension, else ``default``."""
    if given:
        return given
    fmt = _EXTENSIONS.get(os.path.splitext(path.rstrip("/"))[1].lower(), default)
    if fmt is None:
        raise ParamError(
            f"cannot tell the format from the name; use --format {{{','.join(FORMATS)}}}"
        )
    return fmt


def open_any(path: str, args: Any, stack: contextlib.ExitStack) -> tuple[ArraySource, Any]:
    """Any input as an array, plus the frame it came from (None for npy/raw/zarr/HDF5)."""
    h5 = split_hdf5(path) if path != STDIO else None
    if h5 is not None:
        with about(path):
            return Hdf5Array(*h5, stack), None
    variable = split_variable(path) if path != STDIO else None
    if variable is not None:  # an xarray-blosc2 store's variable: STORE:NAME
        return variable_source(*variable)
    if path != STDIO and is_zarr_store(path):
        with about(path):
            return ZarrArray(path), None
    if path != STDIO and is_zarr_v2_store(path):
        with about(path):
            return ZarrV2Array(path), None
    if path != STDIO and (path.endswith(".npy") or _is_npy(path)):
        with about(path):
            return compress_input(args, stack, need_shape=True), None
    source = open_source(path, stack)
    return source_array(source, args.dtype), source


def _is_npy(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(6) == b"\x93NUMPY"


def run_convert(args: Any, stack: contextlib.ExitStack) -> None:
    """The ``convert`` command."""
    src, frame = open_any(args.input, args, stack)
    with about(args.output):
        fmt = format_of(args.output, args.format)
    if fmt == "b2nd" and args.chunks is None and src.chunks and len(src.chunks) == len(src.shape):
        args.chunks = ",".join(map(str, src.chunks))  # keep the partition unless asked
        if args.blocks is None and frame is not None and frame.kind == "ndarray":
            args.blocks = ",".join(map(str, frame.obj.blocks))
    args.format = fmt
    with about("--codec"):
        fill_defaults(
            args, frame.schunk.cparams if frame is not None and frame.kind != "chunk" else None
        )
    with about(args.output), atomic_output(args.output, directory=fmt == "zarr") as tmp:
        if fmt == "zarr":
            chunks = _chunks_for_zarr(src, args)
            shuffle = "noshuffle"
            for name in args.filter or ["shuffle"]:
                if name in ("shuffle", "bitshuffle"):
                    shuffle = name
            tracked_src = tracked(src, "convert", args)
            try:
                write_zarr(tracked_src, tmp, chunks, args.codec, args.clevel, shuffle)
            finally:
                tracked_src.bar.close()
            return
        write_array(src, tmp, args)
        if frame is not None and frame.kind != "chunk" and fmt in ("b2nd", "b2frame"):
            _copy_vlmeta(frame.schunk, tmp)


def _chunks_for_zarr(src: ArraySource, args: Any) -> tuple[int, ...]:
    from .codec_io import _ints

    given = _ints(args.chunks, "chunks")
    if given:
        return given
    if src.chunks and len(src.chunks) == len(src.shape):
        return src.chunks
    return (src.slab_rows(), *src.shape[1:]) if src.shape else ()


def _copy_vlmeta(schunk: Any, path: str) -> None:
    """Carry the source's vlmeta over to the new frame."""
    import pyblosc2

    items = dict(schunk.vlmeta.getall())
    if not items:
        return
    out = pyblosc2.open(path, mode="a")
    target = getattr(out, "schunk", out)  # an NDArray's or a container's frame
    for k, v in items.items():
        target.vlmeta[k] = v
