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
A read parses the stored chunk into a plan (:mod:`.chunkplan`: the frame and chunk layout,
kept per dataset while nothing can change them) and takes the selection out of it
(:mod:`.chunkread`), from the chunk's bytes or from byte ranges of the file
(:mod:`.chunkfile`), or fills the blocks it needs into a chunk the dataset holds
(:mod:`.chunkcache`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import compress_blosc1
from ..backends.base import ByteStore
from ..errors import Blosc2Error, FormatError
from ..ndarray.constructors import asarray
from ..params import CParams
from ..schunk import SChunk
from .blockshape import auto_blocksize, b2nd_block_shape
from .cd_values import Blosc2Values, BloscValues
from .chunkcache import HeldChunk
from .chunkfile import StoredChunk
from .chunkplan import ChunkPlan, PlanCache, plan_blosc, plan_frame
from .chunkread import decodes_most, fill_b2nd, fill_flat, read_b2nd, read_flat
from .fletcher32 import append_checksum, strip_checksum
from .selection import LocalKey

__all__ = ["ChunkCodec"]


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
    def plan(self, source: ByteStore) -> ChunkPlan:
        """Parse and check the stored chunk (without checksum) that ``source`` holds."""
        if isinstance(self.values, BloscValues):
            return plan_blosc(source, self.nbytes)
        return plan_frame(source, self.chunks, self.dtype, self.nbytes)

    def read_into(
        self,
        stored: StoredChunk,
        local: tuple[LocalKey, ...],
        index: tuple[int, ...],
        out: np.ndarray,
        cache: PlanCache | None = None,
    ) -> None:
        """``out[...]`` = the items ``local`` selects in chunk ``index`` (``out``: the shape
        of the selection plus the trailing axes of a subarray dtype, of ``item_dtype``).
        ``cache`` keeps the chunk's plan by its address, size and filter mask."""
        self._named(index, self._read_into, stored, local, out, cache)

    def fill(
        self,
        stored: StoredChunk,
        held: HeldChunk,
        local: tuple[LocalKey, ...],
        index: tuple[int, ...],
        cache: PlanCache | None = None,
    ) -> None:
        """Decode into the held chunk ``index`` (:mod:`.chunkcache`) the blocks of ``stored``
        holding the items ``local`` selects that it does not have yet (all of them for a
        chunk with a checksum or stored as is)."""
        self._named(index, self._fill, stored, held, local, cache)

    def decodes_most(
        self,
        stored: StoredChunk,
        local: tuple[LocalKey, ...],
        index: tuple[int, ...],
        cache: PlanCache | None = None,
    ) -> bool:
        """Whether a read of ``local`` out of ``stored`` decodes most of the chunk anyway
        (:func:`~.chunkread.decodes_most`; a chunk with a checksum or stored as is: always)."""
        return bool(self._named(index, self._decodes_most, stored, local, cache))

    def _decodes_most(
        self,
        stored: StoredChunk,
        local: tuple[LocalKey, ...],
        cache: PlanCache | None,
        where: str,
    ) -> bool:
        if self.checksummed(stored.mask) or stored.mask >> self.codec_bit & 1:
            return True
        _, plan = self._stored_plan(stored, cache, where)
        assert plan is not None
        return decodes_most(plan, local, self.full_shape, self.dtype.itemsize)

    def _named(self, index: tuple[int, ...], fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args, where)``, its format errors naming chunk ``index``."""
        where = self._where(index)
        try:
            return fn(*args, where)
        except FormatError as exc:
            if exc.where.startswith("HDF5 "):
                raise
            raise FormatError(
                f"{where}: {exc.where}", exc.field, exc.offset, exc.expected, exc.got
            ) from None

    def _stored_plan(
        self, stored: StoredChunk, cache: PlanCache | None, where: str
    ) -> tuple[StoredChunk, ChunkPlan | None]:
        """The stored chunk without its checksum, and its plan (None: stored as is)."""
        mask = stored.mask
        if self.checksummed(mask):
            assert stored.data is not None  # a checksum needs the whole chunk
            body = strip_checksum(stored.data, where)
            stored = StoredChunk(mask, len(body), stored.address, data=body)
        if mask >> self.codec_bit & 1:  # stored as is
            return stored, None
        source = stored.source()
        if cache is None or stored.address is None:
            return stored, self.plan(source)
        key = (stored.address, stored.size, mask)
        return stored, cache.get(key, lambda: self.plan(source))

    def _read_into(
        self,
        stored: StoredChunk,
        local: tuple[LocalKey, ...],
        out: np.ndarray,
        cache: PlanCache | None,
        where: str,
    ) -> None:
        stored, plan = self._stored_plan(stored, cache, where)
        if plan is None:
            assert stored.data is not None
            out[...] = self._view(np.frombuffer(stored.data, np.uint8), where)[local]
        elif plan.geometry is not None:
            read_b2nd(plan, stored.source(), local, out)
        else:
            read_flat(plan, stored.source(), local, out, self.full_shape, self.dtype.itemsize)

    def _fill(
        self,
        stored: StoredChunk,
        held: HeldChunk,
        local: tuple[LocalKey, ...],
        cache: PlanCache | None,
        where: str,
    ) -> None:
        if self.checksummed(stored.mask) or stored.mask >> self.codec_bit & 1:
            if not held.complete:  # only ever decoded whole
                full = tuple(slice(0, c, 1) for c in self.chunks)
                self._read_into(stored, full, held.items, cache, where)
                held.mark_all()
            return
        stored, plan = self._stored_plan(stored, cache, where)
        assert plan is not None
        if plan.geometry is not None:
            fill_b2nd(plan, stored.source(), held, local)
        else:
            fill_flat(plan, stored.source(), held, local, self.dtype.itemsize)

    def checksummed(self, mask: int) -> bool:
        """Whether a chunk stored with filter ``mask`` ends in a Fletcher-32 checksum."""
        return self.fletcher_bit is not None and not mask >> self.fletcher_bit & 1

    def ranged(self, mask: int) -> bool:
        """Whether a chunk stored with filter ``mask`` can be read by byte ranges (no
        checksum over the whole of it, not stored as is)."""
        return not self.checksummed(mask) and not mask >> self.codec_bit & 1

    def read(
        self, stored: bytes, mask: int, local: tuple[LocalKey, ...], index: tuple[int, ...]
    ) -> np.ndarray:
        """The items ``local`` selects in this stored chunk (with the trailing axes of a
        subarray dtype), as numpy indexing the decoded chunk with ``local`` would give."""
        out = np.empty(_key_shape(local) + self.dtype.shape, self.item_dtype)
        data = StoredChunk(mask, len(stored), None, data=memoryview(stored))
        self.read_into(data, local, index, out)
        return out

    def _view(self, raw: np.ndarray, where: str) -> np.ndarray:
        if len(raw) != self.nbytes:
            raise FormatError(where, "decoded size", None, self.nbytes, len(raw))
        return raw.view(self.item_dtype).reshape(self.full_shape)

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


def _key_shape(local: tuple[LocalKey, ...]) -> tuple[int, ...]:
    return tuple(
        len(range(k.start, k.stop, k.step)) if isinstance(k, slice) else len(k) for k in local
    )
