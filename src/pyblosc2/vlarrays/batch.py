"""The views a BatchArray gives: one :class:`Batch` (a lazy sequence of the items of one
chunk) and :class:`BatchArrayItems` (all items across batches, flat).

A batch reads an item by decoding only the VL block that holds it (item ``i`` is in block
``i // items_per_block``), and keeps the last block it decoded; slicing or negative indices
decode the whole batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, overload

from ..api import get_cbuffer_sizes
from ..errors import BoundsError, ParamTypeError

__all__ = ["Batch", "BatchArrayItems"]


class _Parent(Protocol):
    """What the views need of their BatchArray."""

    schunk: Any

    @property
    def items_per_block(self) -> int | None: ...
    def _decode_blocks(self, nbatch: int) -> list[list[Any]]: ...
    def _deserialize_block_at(self, payload: bytes, nbatch: int) -> list[Any]: ...
    def _batch_length(self, index: int) -> int | None: ...
    def _get_flat_item(self, index: int | slice) -> Any: ...
    def _get_total_item_count(self) -> int: ...


class Batch(Sequence[Any]):
    """The items of batch ``nbatch`` of a BatchArray (python-blosc2's ``Batch``).

    >>> from pyblosc2.vlarrays import BatchArray
    >>> ba = BatchArray(items_per_block=2); ba.extend([["a", "b", "c"]])
    >>> batch = ba[0]
    >>> batch[2], batch[:2], len(batch), batch.nbytes > 0
    ('c', ['a', 'b'], 3, True)
    """

    def __init__(self, parent: _Parent, nbatch: int, lazybatch: bytes) -> None:
        self._parent = parent
        self._nbatch = nbatch
        self._lazybatch = lazybatch
        self._items: list[Any] | None = None
        self._cached: tuple[int, list[Any]] | None = None
        self._nbytes, self._cbytes, self._nblocks = get_cbuffer_sizes(lazybatch)

    def _decode_items(self) -> list[Any]:
        if self._items is None:
            blocks = self._parent._decode_blocks(self._nbatch)
            self._items = [item for block in blocks for item in block]
        return self._items

    def _block(self, j: int) -> list[Any]:
        if self._cached is None or self._cached[0] != j:
            payload = self._parent.schunk.get_vlblock(self._nbatch, j)
            self._cached = (j, self._parent._deserialize_block_at(payload, self._nbatch))
        return self._cached[1]

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._decode_items()[index]
        if isinstance(index, bool) or not isinstance(index, int):
            raise ParamTypeError("Batch indices must be integers")
        per_block = self._parent.items_per_block
        if index < 0 or per_block is None:
            items = self._decode_items()
            if not -len(items) <= index < len(items):
                raise BoundsError("Batch index out of range")
            return items[index]
        j, k = divmod(index, per_block)
        if j >= self._nblocks:
            raise BoundsError("Batch index out of range")
        block = self._block(j)
        if k >= len(block):
            raise BoundsError("Batch index out of range")
        return block[k]

    def __len__(self) -> int:
        known = self._parent._batch_length(self._nbatch)
        return known if known is not None else len(self._decode_items())

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    @property
    def lazybatch(self) -> bytes:
        """The batch's chunk as ``SChunk.get_lazychunk`` gives it."""
        return self._lazybatch

    @property
    def nbytes(self) -> int:
        """Uncompressed bytes of the batch's items."""
        return self._nbytes

    @property
    def cbytes(self) -> int:
        """Compressed bytes of the batch's chunk."""
        return self._cbytes

    @property
    def cratio(self) -> float:
        """``nbytes / cbytes``."""
        return self._nbytes / self._cbytes

    def __repr__(self) -> str:
        return f"Batch(len={len(self)}, nbytes={self.nbytes}, cbytes={self.cbytes})"


class BatchArrayItems(Sequence[Any]):
    """A read-only flat view of all the items of a BatchArray."""

    def __init__(self, parent: _Parent) -> None:
        self._parent = parent

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        return self._parent._get_flat_item(index)

    def __len__(self) -> int:
        return self._parent._get_total_item_count()
