"""One stored HDF5 chunk of a Blosc or Blosc2 dataset: decoding (whole or the part a selection
needs) and encoding, as the filter plugins do.

What the filters store in a chunk:

* Blosc (32001): one Blosc1 chunk (16-byte header) of the whole HDF5 chunk, items in C order.
* Blosc2 (32026): a contiguous frame. With a chunk rank in ``cd_values`` it is a b2nd array
  of shape = chunks = the HDF5 chunk shape, dtype ``|V<typesize>``, in blocks of the filter's
  block shape (:mod:`.blockshape`); without one, a super-chunk of one Blosc2 chunk holding
  the HDF5 chunk's bytes in C order.
* Fletcher-32 after the codec: 4 checksum bytes appended (:mod:`.fletcher32`).
* A bit set in the chunk's filter mask: that filter was skipped (HDF5 does so when an
  optional filter fails, as Blosc does when its output would not be smaller).

Edge chunks are whole chunks (HDF5 pads them). Every size is checked against the dataset
before anything is decoded: the chunk's own header, not ``cd_values``, drives the decoder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import compress_blosc1
from ..chunk.decode import ChunkReader
from ..errors import Blosc2Error, FormatError
from ..ndarray.constructors import asarray
from ..ndarray.ndarray import NDArray
from ..params import CParams
from ..schunk import SChunk, schunk_from_cframe
from .blockshape import auto_blocksize, b2nd_block_shape
from .cd_values import Blosc2Values, BloscValues
from .fletcher32 import append_checksum, strip_checksum
from .selection import LocalKey

__all__ = ["ChunkCodec"]

#: a selection of at most this fraction of a chunk's items decodes only the blocks it needs
_PARTIAL_FRACTION = 4


@dataclass(frozen=True)
class ChunkCodec:
    """How the chunks of one dataset are stored: the codec filter's values and its position
    in the pipeline (its filter-mask bit), the Fletcher-32 filter's position (or None), the
    item dtype and the chunk shape.

    ``dtype`` is the dataset's dtype; a subarray dtype (``('<f4', (3,))``) reads as an extra
    trailing axis of its base type, as h5py returns it.
    """

    values: BloscValues | Blosc2Values
    codec_bit: int
    fletcher_bit: int | None
    dtype: np.dtype
    chunks: tuple[int, ...]
    name: str = "dataset"

    # -- geometry ---------------------------------------------------------------------------
    @property
    def item_dtype(self) -> np.dtype:
        return self.dtype.base if self.dtype.subdtype is not None else self.dtype

    @property
    def full_shape(self) -> tuple[int, ...]:
        """The shape of one decoded chunk as an array of ``item_dtype``."""
        return self.chunks + self.dtype.shape

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * math.prod(self.chunks)

    @property
    def blockshape(self) -> tuple[int, ...]:
        """The b2nd block shape the plugin gives new chunks (Blosc2 with a chunk rank)."""
        v = self.values
        assert isinstance(v, Blosc2Values)
        size = v.blocksize or auto_blocksize(v.chunk_nbytes, v.typesize, v.clevel, v.codec)
        return b2nd_block_shape(size, v.typesize, self.chunks)

    def _where(self, index: tuple[int, ...]) -> str:
        return f"HDF5 {self.name} chunk {index}"

    # -- reading ----------------------------------------------------------------------------
    def read(
        self, stored: bytes, mask: int, local: tuple[LocalKey, ...], index: tuple[int, ...]
    ) -> np.ndarray:
        """The items ``local`` selects in this stored chunk (with the trailing axes of a
        subarray dtype), as numpy indexing the decoded chunk with ``local`` would give."""
        where = self._where(index)
        body: memoryview = memoryview(stored)
        if self.fletcher_bit is not None and not mask >> self.fletcher_bit & 1:
            body = strip_checksum(body, where)
        if mask >> self.codec_bit & 1:  # stored as is
            return self._view(np.frombuffer(body, np.uint8), where)[local]
        try:
            if isinstance(self.values, BloscValues):
                return self._read_flat(body, local, where)
            return self._read_frame(body, local, where)
        except FormatError as exc:
            if exc.where.startswith("HDF5 "):
                raise
            raise FormatError(
                f"{where}: {exc.where}", exc.field, exc.offset, exc.expected, exc.got
            ) from None

    def _view(self, raw: np.ndarray, where: str) -> np.ndarray:
        if len(raw) != self.nbytes:
            raise FormatError(where, "decoded size", None, self.nbytes, len(raw))
        return raw.view(self.item_dtype).reshape(self.full_shape)

    def _read_frame(self, body: memoryview, local: tuple[LocalKey, ...], where: str) -> np.ndarray:
        s = schunk_from_cframe(body)
        if "b2nd" in dict(s.header.metalayers):
            arr = NDArray(s)
            want = (self.chunks, self.dtype.itemsize)
            if self.dtype.subdtype is not None or (arr.shape, arr.dtype.itemsize) != want:
                got = (arr.shape, arr.dtype.itemsize)
                raise FormatError(where, "b2nd shape/itemsize", None, want, got)
            out = np.asarray(arr[local])
            return out.view(self.dtype) if out.dtype != self.dtype else out
        if s.nchunks != 1:
            raise FormatError(where, "super-chunk nchunks", None, 1, s.nchunks)
        return self._read_flat(memoryview(s.get_chunk(0)), local, where)

    def _read_flat(self, chunk: memoryview, local: tuple[LocalKey, ...], where: str) -> np.ndarray:
        """A chunk (Blosc1 or Blosc2 header) of the HDF5 chunk's bytes in C order: only the
        blocks holding the selected items are decoded when they are a small part."""
        reader = ChunkReader.open(chunk)
        h = reader.header
        if h.nbytes != self.nbytes:
            raise FormatError(where, "chunk nbytes", 4, self.nbytes, h.nbytes)
        buf = np.empty(self.nbytes, np.uint8)
        blocks = self._needed_blocks(local, h.effective_blocksize)
        if blocks is None:
            reader.decode(buf)
        else:
            bs = h.effective_blocksize
            for first, last in _runs(blocks):
                lo, hi = first * bs, min((last + 1) * bs, self.nbytes)
                reader.decode_range(lo, hi, out=buf[lo:hi])
        return self._view(buf, where)[local]

    def _needed_blocks(self, local: tuple[LocalKey, ...], bs: int) -> np.ndarray | None:
        """The sorted blocks of ``bs`` bytes holding the selected items, or None when the
        selection is a large part of the chunk (decode it whole)."""
        per_axis = [
            np.arange(k.start, k.stop, k.step) if isinstance(k, slice) else k for k in local
        ]
        count = math.prod(len(p) for p in per_axis)
        nitems = math.prod(self.chunks)
        if bs <= 0 or count * _PARTIAL_FRACTION > nitems:
            return None
        strides = np.cumprod([1, *self.chunks[:0:-1]])[::-1]
        flat = np.zeros((), np.int64)
        for p, st in zip(per_axis, strides, strict=True):
            flat = np.add.outer(flat, np.asarray(p, np.int64) * int(st))
        t = self.dtype.itemsize
        starts = flat.ravel() * t
        return np.union1d(starts // bs, (starts + t - 1) // bs)

    # -- writing ----------------------------------------------------------------------------
    def encode(self, chunk: np.ndarray) -> tuple[int, bytes]:
        """``(filter mask, stored bytes)`` for a whole chunk (``full_shape`` of
        ``item_dtype``, C-contiguous), as the plugins store it."""
        raw = np.ascontiguousarray(chunk).view(np.uint8).reshape(-1)
        if raw.nbytes != self.nbytes:
            raise Blosc2Error(f"a chunk of {self.nbytes} bytes expected, got {raw.nbytes}")
        mask = 0
        v = self.values
        if isinstance(v, BloscValues):
            data = compress_blosc1(raw, v.typesize, v.clevel, v.shuffle, v.codec)
            if len(data) > raw.nbytes:  # the plugin fails; HDF5 skips an optional filter
                data, mask = raw.tobytes(), 1 << self.codec_bit
        else:
            data = self._encode_frame(raw, v)
        if self.fletcher_bit is not None:
            data = append_checksum(data)
        return mask, data

    def _encode_frame(self, raw: np.ndarray, v: Blosc2Values) -> bytes:
        cparams: dict[str, Any] = {
            "codec": v.codec,
            "clevel": v.clevel,
            "typesize": v.typesize,
            "filters": [v.filter],
            "filters_meta": [0],
        }
        if v.b2nd:
            items = raw.view(f"V{v.typesize}").reshape(self.chunks)
            arr = asarray(items, chunks=self.chunks, blocks=self.blockshape, cparams=cparams)
            return arr.to_cframe()
        if v.blocksize:
            cparams["blocksize"] = v.blocksize
        s = SChunk(chunksize=raw.nbytes, cparams=CParams(**cparams))
        s.append_data(raw)
        return s.to_cframe()


def _runs(blocks: np.ndarray) -> list[tuple[int, int]]:
    """Runs of consecutive block numbers, as (first, last)."""
    if len(blocks) == 0:
        return []
    cuts = np.flatnonzero(np.diff(blocks) != 1)
    firsts = [int(blocks[0]), *(int(blocks[c + 1]) for c in cuts)]
    lasts = [*(int(blocks[c]) for c in cuts), int(blocks[-1])]
    return list(zip(firsts, lasts, strict=True))
