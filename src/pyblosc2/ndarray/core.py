"""The state of an N-d array stored in a super-chunk with the ``b2nd`` metalayer
(frame-format.md §8.3-§8.5): the super-chunk and one :class:`~.geometry.Geometry`, the basic
properties, and the conversion between a chunk's buffer and its ``ext``-shaped array.

:class:`ArrayCore` is the base of :class:`~pyblosc2.NDArray`. The read path, the fillers,
advanced indexing and the storage builders work on it, below the class that adds indexing,
writes and the operators; that class supplies ``__getitem__``/``__setitem__``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import FormatError
from ..schunk import Meta, SChunk, VLMeta
from .b2nd_meta import B2NDMeta
from .blocklayout import buffer_to_chunk, chunk_to_buffer
from .geometry import Geometry

__all__ = ["ArrayCore"]


class ArrayCore:
    """A super-chunk read as an N-d array through its ``b2nd`` metalayer.

    The geometry is one immutable object, derived from the metalayer and derived again
    whenever this handle's view of the frame changes (its own commits, and what another
    handle wrote, re-read when a hold of the frame begins): code that takes ``_geometry``
    once sees one shape, grid and padding, the old or the new, never a mix. A view describes
    the stored array with other length-1 axes: ``squeeze`` hides stored axes of length, chunk
    and block 1 (``_dropped``, stored numbering), which changes no item's place in a chunk,
    then ``expand_dims`` adds axes (``_axes``, the view's numbering).
    """

    schunk: SChunk
    #: the length-1 axes this handle adds to the stored array (an ``expand_dims`` view)
    _axes: tuple[int, ...] = ()
    #: the stored axes (all of length, chunk and block 1) this handle hides (a ``squeeze`` view)
    _dropped: tuple[int, ...] = ()
    #: (the frame version the geometry was derived at, the geometry)
    _state: tuple[int, Geometry]

    def __init__(
        self,
        schunk: SChunk,
        meta: B2NDMeta | None = None,
        *,
        _validate: bool = True,
        _axes: tuple[int, ...] = (),
        _dropped: tuple[int, ...] = (),
    ) -> None:
        geo = Geometry.from_meta(_stored_meta(schunk) if meta is None else meta)
        self.schunk = schunk
        self._axes = _axes
        self._dropped = _dropped
        self._state = (schunk._frame.version, geo)
        if _validate and all(geo.shape) and schunk.nchunks != geo.nchunks:
            raise FormatError(
                "b2nd array", "nchunks", None, f"{geo.nchunks} (from the shape)", schunk.nchunks
            )
        if schunk.nchunks and schunk.chunksize != geo.chunk_nbytes:
            raise FormatError(
                "b2nd array",
                "chunksize",
                58,
                f"{geo.chunk_nbytes} (padded chunk * itemsize)",
                schunk.chunksize,
            )

    @property
    def _geometry(self) -> Geometry:
        """The geometry as this handle's view of the frame says now (see the class doc)."""
        version, geo = self._state
        now = self.schunk._frame.version  # read before the header it derives from
        if now != version:
            geo = self._derive(geo)
            self._state = (now, geo)
        return geo

    def _derive(self, current: Geometry) -> Geometry:
        """The geometry of the stored ``b2nd`` metalayer (without this view's hidden axes,
        with its added ones). Only the shape may change under a handle, as in python-blosc2:
        another partition, ndim or dtype (the file replaced by another array), or a hidden
        axis grown past length 1, is a :class:`FormatError`."""
        stored = Geometry.from_meta(_stored_meta(self.schunk))
        if not self._dropped and not self._axes:  # no view: the stored geometry itself
            if (stored.chunks, stored.blocks, stored.dtype) != (
                current.chunks,
                current.blocks,
                current.dtype,
            ):
                _changed_partition(current, stored)
            return stored
        hidden = [(stored.shape[d], stored.chunks[d], stored.blocks[d]) for d in self._dropped]
        if any(h != (1, 1, 1) for h in hidden):
            raise FormatError(
                "b2nd array",
                "shape/chunks/blocks",
                None,
                f"length, chunk and block 1 on the axes {self._dropped} a squeeze view hides",
                hidden,
            )
        keep = [d for d in range(stored.ndim) if d not in self._dropped]
        shape = [stored.shape[d] for d in keep]
        chunks = [stored.chunks[d] for d in keep]
        blocks = [stored.blocks[d] for d in keep]
        for axis in self._axes:
            for part in (shape, chunks, blocks):
                part.insert(axis, 1)
        geo = Geometry(tuple(shape), tuple(chunks), tuple(blocks), stored.dtype)
        if (geo.ndim, geo.chunks, geo.blocks, geo.dtype) != (
            current.ndim,
            current.chunks,
            current.blocks,
            current.dtype,
        ):
            _changed_partition(current, geo)
        return geo

    def _stored_geometry(self, geo: Geometry) -> Geometry:
        """``geo`` without this view's added axes and with its hidden ones: what the ``b2nd``
        metalayer stores."""
        keep = [d for d in range(geo.ndim) if d not in self._axes]
        shape = [geo.shape[d] for d in keep]
        chunks = [geo.chunks[d] for d in keep]
        blocks = [geo.blocks[d] for d in keep]
        for axis in self._dropped:
            for part in (shape, chunks, blocks):
                part.insert(axis, 1)
        return Geometry(tuple(shape), tuple(chunks), tuple(blocks), geo.dtype)

    if TYPE_CHECKING:  # item access: provided by NDArray (basic keys; advanced in fancy.py)

        def __getitem__(self, key: Any) -> Any: ...
        def __setitem__(self, key: Any, value: Any) -> None: ...

    # -- properties -----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the array.

        >>> from pyblosc2 import zeros
        >>> a = zeros((100, 30), np.int16, chunks=(50, 30), blocks=(10, 30))
        >>> a.shape, a.chunks, a.blocks, a.ndim, a.size, a.nbytes
        ((100, 30), (50, 30), (10, 30), 2, 3000, 6000)
        """
        return self._geometry.shape

    @property
    def chunks(self) -> tuple[int, ...]:
        """The shape of a chunk (the unit of compression and of the chunk grid)."""
        return self._geometry.chunks

    @property
    def blocks(self) -> tuple[int, ...]:
        """The shape of a block inside a chunk (the unit of partial decoding)."""
        return self._geometry.blocks

    @property
    def dtype(self) -> np.dtype:
        """The numpy data type of the items.

        >>> from pyblosc2 import asarray
        >>> asarray(np.arange(3, dtype=">u2")).dtype
        dtype('>u2')
        """
        return self._geometry.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar array)."""
        return self._geometry.ndim

    @property
    def size(self) -> int:
        """The number of items."""
        return self._geometry.size

    @property
    def nbytes(self) -> int:
        """The size of the items in bytes, uncompressed (``size * dtype.itemsize``)."""
        return self._geometry.nbytes

    @property
    def cbytes(self) -> int:
        """The compressed size in bytes (the super-chunk's chunks, as python-blosc2 counts).

        >>> from pyblosc2 import zeros
        >>> a = zeros((1000, 1000))
        >>> a.nbytes, a.cbytes < 1000, a.cratio > 1000
        (8000000, True, True)
        """
        return self.schunk.cbytes

    @property
    def cratio(self) -> float:
        """The compression ratio, ``nbytes / cbytes`` (infinite for an array of special
        chunks only)."""
        return self.nbytes / self.cbytes if self.cbytes else self.schunk.cratio

    @property
    def meta(self) -> Meta:
        """The fixed-length metalayers (mapping-like; ``"b2nd"`` holds the shape and dtype).

        >>> from pyblosc2 import asarray
        >>> a = asarray(np.arange(4), meta={"units": "m"})
        >>> a.meta["units"], "b2nd" in a.meta
        ('m', True)
        """
        return self.schunk.meta

    @property
    def vlmeta(self) -> VLMeta:
        """The variable-length metalayers (a mutable mapping of msgpack-able values).

        >>> from pyblosc2 import asarray
        >>> a = asarray(np.arange(4))
        >>> a.vlmeta["source"] = {"sensor": 7}
        >>> a.vlmeta["source"]
        {'sensor': 7}
        """
        return self.schunk.vlmeta

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    # -- chunk <-> array ------------------------------------------------------------------
    def _chunk_array(self, nchunk: int) -> np.ndarray:
        """Chunk ``nchunk`` as an ``ext``-shaped array."""
        geo = self._geometry
        raw = np.frombuffer(self.schunk.decompress_chunk(nchunk), geo.dtype)
        return buffer_to_chunk(raw, geo.ext, geo.blocks)

    def _compress(self, arr: np.ndarray) -> bytes:
        return self.schunk.compress_data(chunk_to_buffer(arr, self.blocks))

    # -- boxes ----------------------------------------------------------------------------
    def _chunks_in(
        self, lo: tuple[int, ...], hi: tuple[int, ...], geo: Geometry | None = None
    ) -> Iterator[tuple[tuple[int, ...], int]]:
        """The coordinates and flat index of every chunk the box ``[lo, hi)`` touches (in
        ``geo``'s chunk grid, by default this array's)."""
        geo = self._geometry if geo is None else geo
        ranges = [range(a // c, -(-b // c)) for a, b, c in zip(lo, hi, geo.chunks, strict=True)]
        for coords in itertools.product(*ranges):
            yield coords, int(np.ravel_multi_index(coords, geo.grid)) if geo.ndim else 0


def _changed_partition(current: Geometry, geo: Geometry) -> None:
    """Refuse the geometry ``geo`` another handle stored in place of ``current``: only the
    shape may change under a handle, as in python-blosc2."""
    was = (current.ndim, current.chunks, current.blocks, current.dtype)
    raise FormatError(
        "b2nd array",
        "chunks/blocks/dtype",
        None,
        f"ndim, chunks, blocks and dtype {was} (another handle may change the shape only)",
        (geo.ndim, geo.chunks, geo.blocks, geo.dtype),
    )


def _stored_meta(schunk: SChunk) -> B2NDMeta:
    """The ``b2nd`` metalayer of ``schunk`` as its frame holds it."""
    raw = dict(schunk.header.metalayers).get("b2nd")
    if raw is None:
        raise FormatError("frame", "metalayers", None, "a 'b2nd' metalayer", "none")
    return B2NDMeta.from_bytes(raw, schunk.typesize)
