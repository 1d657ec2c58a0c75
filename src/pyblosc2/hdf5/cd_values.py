"""The HDF5 filter parameters (``cd_values``) of the Blosc (32001) and Blosc2 (32026) filters.

The plugins that hdf5plugin and PyTables ship fill these in their ``set_local`` callback, and
a reader of their files only learns the stored chunk's layout from them (plus the chunk's own
header). The layouts, as the plugins write them:

Blosc (``hdf5-blosc``, filter revision 2)::

    [0] filter revision (2)      [1] Blosc format version (2)   [2] type size (1 if > 255)
    [3] chunk size in bytes      [4] clevel (opt., 5)           [5] shuffle 0/1/2 (opt., 1)
    [6] compressor code (opt., 0 = blosclz)

Blosc2 (``hdf5-blosc2``, filter revision 1)::

    [0] filter revision (1)      [1] block size in bytes (0: automatic)   [2] type size
    [3] chunk size in bytes      [4] clevel (5)     [5] filter id (1)     [6] compressor (0)
    [7] chunk rank, then [8 + i] chunk dimension i: present (b2nd chunks) when
        2 <= rank <= 8; without them a chunk is a plain one-chunk super-chunk

(The plugin's current source also records rank 1; hdf5plugin 7.1 and PyTables 3.11 do not,
and hdf5plugin 7.1 fails to read 1-d b2nd chunks: pyblosc2 writes what they write and reads
both.)

The "type size" is the size of the base type of an HDF5 array type (``('<f4', (3,))`` has
type size 4). A reader MUST NOT trust these values to size anything: the chunk's own header
gives its sizes, and they are checked against the dataset (see :mod:`.storedchunk`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..constants import MAX_HEADER_TYPESIZE, Codec, Filter
from ..errors import FormatError, ParamError

__all__ = [
    "BLOSC2_FILTER_ID",
    "BLOSC2_MAX_DIM",
    "BLOSC_FILTER_ID",
    "Blosc2Values",
    "BloscValues",
    "base_typesize",
]

BLOSC_FILTER_ID = 32001
BLOSC2_FILTER_ID = 32026
#: FILTER_BLOSC_VERSION and BLOSC_VERSION_FORMAT the Blosc plugin records in slots 0 and 1
BLOSC_REVISION = 2
BLOSC_FORMAT = 2
#: FILTER_BLOSC2_VERSION
BLOSC2_REVISION = 1
#: BLOSC2_MAX_DIM of the C build the plugins use: chunks of more dimensions are plain
BLOSC2_MAX_DIM = 8
#: the compressor codes C-Blosc 1.x knows (snappy is 3)
BLOSC_CODECS = frozenset({0, 1, 2, 3, 4, 5})
#: the compressor codes pyblosc2 writes into Blosc2 chunks
BLOSC2_CODECS = frozenset({0, 1, 2, 4, 5})
#: what slot 5 may hold when writing (the plugins put it in the last filter slot)
SHUFFLES = (Filter.NOFILTER, Filter.SHUFFLE, Filter.BITSHUFFLE)
DEFAULT_CLEVEL = 5
_FILTER_IDS = frozenset(int(f) for f in Filter)


def base_typesize(dtype: np.dtype) -> int:
    """The size of the type the plugins record: the base type of a subarray dtype.

    >>> base_typesize(np.dtype(("<f4", (3,)))), base_typesize(np.dtype("<i8"))
    (4, 8)
    """
    return dtype.base.itemsize if dtype.subdtype is not None else dtype.itemsize


def _err(filt: str, slot: int, name: str, expected: object, got: object) -> FormatError:
    return FormatError(f"HDF5 {filt} filter", f"cd_values[{slot}] ({name})", None, expected, got)


def _slot(values: Sequence[int], i: int, default: int) -> int:
    return int(values[i]) if len(values) > i else default


@dataclass(frozen=True, slots=True)
class BloscValues:
    """The Blosc filter's parameters.

    >>> v = BloscValues.for_dataset(np.dtype("<f8"), (32, 16), clevel=5, shuffle=2, codec=5)
    >>> v.to_cd_values()
    (2, 2, 8, 4096, 5, 2, 5)
    >>> BloscValues.from_cd_values(v.to_cd_values()) == v
    True
    """

    typesize: int
    chunk_nbytes: int
    clevel: int = DEFAULT_CLEVEL
    shuffle: int = 1
    codec: int = 0
    revision: int = BLOSC_REVISION
    format_version: int = BLOSC_FORMAT

    @classmethod
    def from_cd_values(cls, values: Sequence[int]) -> BloscValues:
        """Parse and check (``FormatError`` naming the slot)."""
        if len(values) < 4:
            raise _err("blosc", len(values), "length", "at least 4 values", len(values))
        v = cls(
            typesize=int(values[2]),
            chunk_nbytes=int(values[3]),
            clevel=_slot(values, 4, DEFAULT_CLEVEL),
            shuffle=_slot(values, 5, 1),
            codec=_slot(values, 6, 0),
            revision=int(values[0]),
            format_version=int(values[1]),
        )
        if v.revision not in (1, BLOSC_REVISION):
            raise _err("blosc", 0, "filter revision", f"1 or {BLOSC_REVISION}", v.revision)
        if not 1 <= v.typesize <= MAX_HEADER_TYPESIZE:
            raise _err("blosc", 2, "typesize", f"1..{MAX_HEADER_TYPESIZE}", v.typesize)
        _check_common("blosc", v.clevel, v.shuffle, v.codec, BLOSC_CODECS, SHUFFLES)
        return v

    @classmethod
    def for_dataset(
        cls, dtype: np.dtype, chunks: Sequence[int], clevel: int, shuffle: int, codec: int
    ) -> BloscValues:
        """The values the plugin's ``set_local`` records for a dataset (checked)."""
        ts = base_typesize(dtype)
        v = cls(
            typesize=ts if ts <= MAX_HEADER_TYPESIZE else 1,
            chunk_nbytes=dtype.itemsize * math.prod(chunks),
            clevel=clevel,
            shuffle=shuffle,
            codec=codec,
        )
        _check_params(v.clevel, v.shuffle, v.codec, BLOSC_CODECS - {3})
        return v

    def to_cd_values(self) -> tuple[int, ...]:
        return (
            self.revision,
            self.format_version,
            self.typesize,
            self.chunk_nbytes,
            self.clevel,
            self.shuffle,
            self.codec,
        )

    def check_dataset(self, dtype: np.dtype, chunks: Sequence[int]) -> None:
        """The recorded type and chunk sizes must be the dataset's."""
        ts = base_typesize(dtype)
        want = ts if ts <= MAX_HEADER_TYPESIZE else 1
        if self.typesize != want:
            raise _err("blosc", 2, "typesize", f"{want} (dtype {dtype})", self.typesize)
        _check_chunk_nbytes("blosc", self.chunk_nbytes, dtype, chunks)


@dataclass(frozen=True, slots=True)
class Blosc2Values:
    """The Blosc2 filter's parameters; ``chunkshape`` is None for plain (non-b2nd) chunks.

    >>> v = Blosc2Values.for_dataset(np.dtype("<f8"), (32, 16), clevel=5, filter=1, codec=1)
    >>> v.to_cd_values()
    (1, 0, 8, 4096, 5, 1, 1, 2, 32, 16)
    >>> Blosc2Values.from_cd_values(v.to_cd_values()) == v
    True
    """

    typesize: int
    chunk_nbytes: int
    clevel: int = DEFAULT_CLEVEL
    filter: int = 1
    codec: int = 0
    blocksize: int = 0
    chunkshape: tuple[int, ...] | None = None
    revision: int = BLOSC2_REVISION

    @classmethod
    def from_cd_values(cls, values: Sequence[int]) -> Blosc2Values:
        """Parse and check (``FormatError`` naming the slot)."""
        if len(values) < 4:
            raise _err("blosc2", len(values), "length", "at least 4 values", len(values))
        shape = None
        if len(values) >= 8:
            nd = int(values[7])
            if not 1 <= nd <= BLOSC2_MAX_DIM:
                raise _err("blosc2", 7, "chunk rank", f"1..{BLOSC2_MAX_DIM}", nd)
            if len(values) < 8 + nd:
                raise _err("blosc2", len(values), "length", f"{8 + nd} values (rank {nd})", 0)
            shape = tuple(int(x) for x in values[8 : 8 + nd])
        v = cls(
            typesize=int(values[2]),
            chunk_nbytes=int(values[3]),
            clevel=_slot(values, 4, DEFAULT_CLEVEL),
            filter=_slot(values, 5, 1),
            codec=_slot(values, 6, 0),
            blocksize=int(values[1]),
            chunkshape=shape,
            revision=int(values[0]),
        )
        if v.revision != BLOSC2_REVISION:
            raise _err("blosc2", 0, "filter revision", BLOSC2_REVISION, v.revision)
        if v.typesize < 1:
            raise _err("blosc2", 2, "typesize", "at least 1", v.typesize)
        if v.blocksize < 0:
            raise _err("blosc2", 1, "blocksize", ">= 0", v.blocksize)
        _check_common("blosc2", v.clevel, v.filter, v.codec, None, _FILTER_IDS)
        return v

    @classmethod
    def for_dataset(
        cls,
        dtype: np.dtype,
        chunks: Sequence[int],
        clevel: int,
        filter: int,
        codec: int,
        blocksize: int = 0,
    ) -> Blosc2Values:
        """The values the released plugin's ``set_local`` records for a dataset (checked)."""
        ts = base_typesize(dtype)
        v = cls(
            typesize=ts,
            chunk_nbytes=dtype.itemsize * math.prod(chunks),
            clevel=clevel,
            filter=filter,
            codec=codec,
            blocksize=blocksize,
            chunkshape=tuple(chunks) if 2 <= len(chunks) <= BLOSC2_MAX_DIM else None,
        )
        _check_params(v.clevel, v.filter, v.codec, BLOSC2_CODECS)
        if blocksize < 0:
            raise ParamError(f"blocksize must be >= 0 (0: automatic), got {blocksize}")
        return v

    def to_cd_values(self) -> tuple[int, ...]:
        head = (
            self.revision,
            self.blocksize,
            self.typesize,
            self.chunk_nbytes,
            self.clevel,
            self.filter,
            self.codec,
        )
        if self.chunkshape is None:
            return head
        return (*head, len(self.chunkshape), *self.chunkshape)

    @property
    def b2nd(self) -> bool:
        """Whether the plugin writes this dataset's chunks as b2nd arrays: it has the chunk
        shape and the chunk holds exactly ``typesize * prod(chunkshape)`` bytes (not so for
        HDF5 array types)."""
        return (
            self.chunkshape is not None
            and self.typesize * math.prod(self.chunkshape) == self.chunk_nbytes
        )

    def check_dataset(self, dtype: np.dtype, chunks: Sequence[int]) -> None:
        """The recorded type size, chunk size and chunk shape must be the dataset's."""
        if self.typesize != base_typesize(dtype):
            raise _err(
                "blosc2", 2, "typesize", f"{base_typesize(dtype)} (dtype {dtype})", self.typesize
            )
        _check_chunk_nbytes("blosc2", self.chunk_nbytes, dtype, chunks)
        if self.chunkshape is not None and self.chunkshape != tuple(chunks):
            raise _err("blosc2", 8, "chunk shape", tuple(chunks), self.chunkshape)


def _check_chunk_nbytes(filt: str, got: int, dtype: np.dtype, chunks: Sequence[int]) -> None:
    want = dtype.itemsize * math.prod(chunks)
    if got != want:
        raise _err(filt, 3, "chunk size", f"{want} (dataset chunks {tuple(chunks)})", got)


def _check_common(
    filt: str,
    clevel: int,
    shuffle: int,
    codec: int,
    codecs: frozenset[int] | None,
    shuffles: frozenset[int] | Sequence[int],
) -> None:
    if not 0 <= clevel <= 9:
        raise _err(filt, 4, "clevel", "0..9", clevel)
    if shuffle not in shuffles:
        raise _err(filt, 5, "shuffle" if filt == "blosc" else "filter", sorted(shuffles), shuffle)
    if codecs is not None and codec not in codecs:
        raise _err(filt, 6, "compressor", sorted(codecs), codec)
    if codecs is None and codec < 0:
        raise _err(filt, 6, "compressor", "a codec id >= 0", codec)


def _check_params(clevel: int, shuffle: int, codec: int, codecs: frozenset[int]) -> None:
    """Arguments of a writer: ``ParamError`` naming the argument."""
    if not 0 <= clevel <= 9:
        raise ParamError(f"clevel must be in 0..9, got {clevel}")
    if shuffle not in SHUFFLES:
        raise ParamError(f"filter must be one of {[f.name for f in SHUFFLES]}, got {shuffle}")
    if codec not in codecs:
        names = [Codec(c).name for c in sorted(codecs)]
        raise ParamError(f"codec must be one of {names}, got {codec}")
