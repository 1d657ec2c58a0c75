"""Which HDF5 filter pipelines pyblosc2 serves, read from a dataset's filter list.

Served: ``[blosc]`` or ``[blosc2]``, each optionally followed by ``fletcher32`` (PyTables'
``fletcher32=True``). A pipeline without Blosc that HDF5 decodes by itself (deflate, shuffle,
fletcher32, scale-offset, n-bit, szip when built in) is left to h5py. Anything else (another
filter before or after Blosc, a plugin filter other than Blosc) raises
:class:`UnsupportedPipelineError`, naming the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .cd_values import BLOSC2_FILTER_ID, BLOSC_FILTER_ID, Blosc2Values, BloscValues
from .fletcher32 import FLETCHER32_FILTER_ID
from .storedchunk import ChunkCodec

__all__ = ["FilterInfo", "UnsupportedPipelineError", "chunk_codec"]

#: ``(filter id, flags, cd_values, name)``, as ``h5py``'s ``get_filter`` returns them
FilterInfo = tuple[int, int, Sequence[int], bytes | str]

_NAMES = {
    1: "deflate",
    2: "shuffle",
    3: "fletcher32",
    4: "szip",
    5: "nbit",
    6: "scaleoffset",
    BLOSC_FILTER_ID: "blosc",
    BLOSC2_FILTER_ID: "blosc2",
    32004: "lz4",
    32008: "bitshuffle",
    32015: "zstd",
}


class UnsupportedPipelineError(NotImplementedError):
    """A dataset's filter pipeline that pyblosc2 cannot decode without HDF5 plugins."""


def describe(filters: Sequence[FilterInfo]) -> str:
    """``[blosc(32001), fletcher32(3)]``."""
    return "[" + ", ".join(f"{_NAMES.get(f[0], 'filter')}({f[0]})" for f in filters) + "]"


def chunk_codec(
    filters: Sequence[FilterInfo],
    dtype: np.dtype,
    chunks: tuple[int, ...] | None,
    name: str = "dataset",
    available: Callable[[int], bool] = lambda fid: fid <= 6,
) -> ChunkCodec | None:
    """The :class:`ChunkCodec` of a Blosc/Blosc2 pipeline (``cd_values`` checked against the
    dataset), or None for a pipeline HDF5 decodes by itself (``available(id)`` for each).

    >>> c = chunk_codec([(32001, 1, (2, 2, 8, 4096, 5, 1, 5), b"blosc")], np.dtype("f8"), (512,))
    >>> c.values.codec, c.codec_bit, c.fletcher_bit
    (5, 0, None)
    >>> chunk_codec([(1, 0, (4,), b"deflate")], np.dtype("f8"), (512,)) is None
    True
    """
    ids = [int(f[0]) for f in filters]
    blosc = [i for i, fid in enumerate(ids) if fid in (BLOSC_FILTER_ID, BLOSC2_FILTER_ID)]
    if not blosc:
        missing = [fid for fid in ids if not available(fid)]
        if missing:
            raise UnsupportedPipelineError(
                f"HDF5 {name}: filter pipeline {describe(filters)} needs HDF5 filter plugins "
                f"{missing}, which pyblosc2 does not implement"
            )
        return None
    tail_ok = ids[blosc[0] + 1 :] in ([], [FLETCHER32_FILTER_ID])
    if len(blosc) > 1 or blosc[0] != 0 or not tail_ok:
        raise UnsupportedPipelineError(
            f"HDF5 {name}: filter pipeline {describe(filters)} is not supported: pyblosc2 reads "
            "[blosc] or [blosc2], optionally followed by fletcher32"
        )
    if chunks is None:
        raise UnsupportedPipelineError(f"HDF5 {name}: filters on a dataset without chunks")
    if dtype.hasobject or dtype.kind == "O":
        raise UnsupportedPipelineError(
            f"HDF5 {name}: variable-length or reference dtype {dtype} in a Blosc dataset"
        )
    fid, _, cd, _ = filters[0]
    values: BloscValues | Blosc2Values
    if fid == BLOSC_FILTER_ID:
        values = BloscValues.from_cd_values(cd)
    else:
        values = Blosc2Values.from_cd_values(cd)
    values.check_dataset(dtype, chunks)
    return ChunkCodec(values, 0, 1 if len(ids) == 2 else None, dtype, tuple(chunks), name)
