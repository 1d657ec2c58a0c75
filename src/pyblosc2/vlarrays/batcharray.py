"""``BatchArray``: batches of Python items, one VL-block chunk per batch (python-blosc2's
``BatchArray``, files ``.b2b``).

On disk (python-blosc2 4.x):

* the metalayer ``batcharray`` = ``{"version": 1, "serializer": "msgpack",
  "items_per_block": n, "arrow_schema": None}``; typesize 1, chunks of any size;
* batch ``i`` is chunk ``i``, a VL-block chunk (spec §12) whose blocks hold the msgpack
  (:mod:`.serial`) of ``items_per_block`` consecutive items each (the last block fewer);
* the vlmeta entry ``_batch_array_metadata`` = ``{"batch_lengths": [...]}`` (removed when
  there is no batch), so lengths are known without decoding.

``items_per_block`` is fixed by the first batch unless given: as many items as fit in a byte
budget set by ``clevel`` (1 MiB for 1-3, 8 MiB for 4-6, 16 MiB for 7-8, the whole batch for
9), at least one. Fixing it rewrites the (still empty) super-chunk with the new metalayer, as
python-blosc2 does (a metalayer cannot change size in place); user vlmeta is kept.

``serializer="arrow"`` (Arrow IPC blocks) needs pyarrow and is not implemented by pyblosc2.
"""

from __future__ import annotations

import copy as _copy
import statistics
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._bytes import BufferLike
from ..api import get_cbuffer_sizes, vldecompress
from ..chunk.encode import EncodeSpec
from ..chunk.vlencode import encode_vl_chunk
from ..errors import BoundsError, ParamError, ParamTypeError
from ..schunk import SChunk, format_nbytes, schunk_from_cframe
from .batch import Batch, BatchArrayItems
from .chunklist import ChunkList, storage_of
from .kinds import register_kind
from .objectarray import check_serialized_size
from .policy import UnsafeDeserializationError, get_deserialize, set_deserialize
from .serial import packb, unpackb

__all__ = ["BatchArray", "guess_items_per_block"]

TAG = "batcharray"
LENGTHS_KEY = "_batch_array_metadata"
_SERIALIZERS = ("msgpack", "arrow")
#: clevel -> the byte budget of a block (python-blosc2's fixed tiers); None: the whole batch
_BUDGETS = {
    **dict.fromkeys((1, 2, 3), 2**20),
    **dict.fromkeys((4, 5, 6), 2**23),
    7: 2**24,
    8: 2**24,
}


def guess_items_per_block(payload_sizes: Sequence[int], clevel: int) -> int:
    """How many items of these serialized sizes go in a block at ``clevel``.

    >>> guess_items_per_block([300 * 1024] * 4, 3), guess_items_per_block([100] * 4, 9)
    (3, 4)
    """
    if not payload_sizes:
        raise ParamError("BatchArray entries cannot be empty")
    budget = _BUDGETS.get(clevel)
    if budget is None:
        return len(payload_sizes)
    total = count = 0
    for size in payload_sizes:
        if count and total + size > budget:
            break
        total += size
        count += 1
    return max(1, min(count, len(payload_sizes)))


class BatchArray(ChunkList):
    """Batches of Python items, each stored as one VL-block chunk.

    >>> ba = BatchArray(items_per_block=2)
    >>> ba.append([1, "two", 3.0]), ba.append([{"four": 4}])
    (1, 2)
    >>> ba[0][:], ba[0][2], len(ba[1]), list(ba.iter_items())
    ([1, 'two', 3.0], 3.0, 1, [1, 'two', 3.0, {'four': 4}])
    """

    _tag = TAG
    _label = "BatchArray"

    def __init__(
        self,
        items_per_block: int | None = None,
        serializer: str = "msgpack",
        _from_schunk: SChunk | None = None,
        deserialize: str | None = None,
        **kwargs: Any,
    ) -> None:
        if items_per_block is not None and (
            isinstance(items_per_block, bool)
            or not isinstance(items_per_block, int)
            or items_per_block <= 0
        ):
            raise ParamError("items_per_block must be a positive integer")
        if serializer not in _SERIALIZERS:
            raise ParamError(f"Unsupported BatchArray serializer: {serializer!r}")
        self._items_per_block = items_per_block
        self._serializer = serializer
        self._arrow_schema: bytes | None = None
        self._batch_lengths: list[int] | None = None
        if _from_schunk is not None:
            if kwargs:
                raise ParamError(
                    f"Cannot pass {', '.join(sorted(kwargs))} together with `_from_schunk`"
                )
            if deserialize is not None:
                set_deserialize(_from_schunk, deserialize)
            self._attach(_from_schunk)
            return
        self._create(self._layout_meta({}), kwargs, deserialize)

    def _layout_meta(self, base: dict[str, Any]) -> dict[str, Any]:
        return {
            "version": 1,
            **base,
            "serializer": self._serializer,
            "items_per_block": self._items_per_block,
            "arrow_schema": self._arrow_schema,
        }

    def _attach(self, schunk: SChunk) -> None:
        super()._attach(schunk)
        meta = self.schunk.meta[TAG]
        if not isinstance(meta, dict):
            raise ParamError(f"BatchArray metalayer must be a map, got {type(meta).__name__}")
        self._serializer = meta.get("serializer", self._serializer)
        self._items_per_block = meta.get("items_per_block", self._items_per_block)
        self._arrow_schema = meta.get("arrow_schema", self._arrow_schema)
        self._batch_lengths = self._load_batch_lengths()
        if self._batch_lengths is None and not len(self):
            self._batch_lengths = []  # nothing stored: the lengths are known
        self._items = BatchArrayItems(self)
        self._prefix: np.ndarray | None = None
        if self._serializer not in _SERIALIZERS:
            raise ParamError(f"Unsupported BatchArray serializer in metadata: {self._serializer!r}")
        ipb = self._items_per_block
        if ipb is not None and (isinstance(ipb, bool) or not isinstance(ipb, int) or ipb <= 0):
            raise ParamError(f"BatchArray items_per_block in metadata must be > 0, got {ipb!r}")

    def _require_msgpack(self) -> None:
        if self._serializer != "msgpack":
            raise NotImplementedError(
                "BatchArray serializer='arrow' (Arrow IPC blocks) is not implemented by pyblosc2"
            )

    # -- batch lengths (the vlmeta bookkeeping) -------------------------------------------
    def _load_batch_lengths(self) -> list[int] | None:
        try:
            stored = self.schunk.vlmeta[LENGTHS_KEY]
        except KeyError:
            return None
        lengths = stored.get("batch_lengths") if isinstance(stored, dict) else None
        if not isinstance(lengths, list) or len(lengths) != len(self):
            return None  # absent or stale: recomputed when needed
        return [int(n) for n in lengths]

    def _persist_batch_lengths(self) -> None:
        if self._batch_lengths is None:
            return
        if not self._batch_lengths:
            if LENGTHS_KEY in self.vlmeta:
                del self.vlmeta[LENGTHS_KEY]
            return
        self.schunk.vlmeta[LENGTHS_KEY] = {"batch_lengths": list(self._batch_lengths)}

    def _load_or_compute_batch_lengths(self) -> list[int]:
        if self._batch_lengths is None:
            self._batch_lengths = [len(self._decode_items(i)) for i in range(len(self))]
            if self.mode != "r":
                self._persist_batch_lengths()
        return self._batch_lengths

    def _batch_length(self, index: int) -> int | None:
        return None if self._batch_lengths is None else self._batch_lengths[index]

    def _inserted(self, index: int, info: Any) -> None:
        if self._batch_lengths is not None:  # (None: unknown, computed when needed)
            self._batch_lengths.insert(index, info)
        self._prefix = None

    def _replaced(self, index: int, info: Any) -> None:
        if self._batch_lengths is not None:
            self._batch_lengths[index] = info
        self._prefix = None

    def _deleted(self, index: int) -> None:
        if self._batch_lengths is not None:
            del self._batch_lengths[index]
        self._prefix = None

    def _changed(self) -> None:
        self._persist_batch_lengths()

    def _cleared(self) -> None:
        self._batch_lengths = []
        self._prefix = None

    # -- encoding ---------------------------------------------------------------------------
    def _normalize_batch(self, value: Any) -> list[Any]:
        self._require_msgpack()
        if isinstance(value, str | bytes | bytearray | memoryview) or not isinstance(
            value, Sequence
        ):
            raise ParamTypeError("BatchArray entries must be sequences of Python objects")
        items = list(value)
        if not items:
            raise ParamError("BatchArray entries cannot be empty")
        return items

    def _guess_blocksize(self, payload_sizes: Sequence[int]) -> int:
        return guess_items_per_block(payload_sizes, self.cparams.clevel)

    def _fix_layout(self, items: list[Any]) -> None:
        """Fix ``items_per_block`` from the first batch, rewriting the empty super-chunk's
        metalayer (with its user vlmeta)."""
        self._items_per_block = self._guess_blocksize([len(packb(x)) for x in items])
        if len(self):
            return
        user = {k: v for k, v in self.vlmeta.getall().items() if k != LENGTHS_KEY}
        storage = self._make_storage()
        storage.meta = {**(storage.meta or {}), TAG: self._layout_meta(dict(self.meta[TAG]))}
        self._recreate(storage, user)

    def _encode(self, value: Any) -> tuple[bytes, Any]:
        items = self._normalize_batch(value)
        if self._items_per_block is None:
            self._fix_layout(items)
        n = self._items_per_block
        assert n is not None
        blocks = [check_serialized_size(packb(items[i : i + n])) for i in range(0, len(items), n)]
        spec = EncodeSpec.from_cparams(self.schunk.cparams)
        return encode_vl_chunk([memoryview(b) for b in blocks], spec), len(items)

    # -- decoding ---------------------------------------------------------------------------
    def _deserialize_block_at(self, payload: bytes, nbatch: int) -> list[Any]:
        self._require_msgpack()
        try:
            block = unpackb(payload, get_deserialize(self.schunk))
        except UnsafeDeserializationError as exc:
            raise UnsafeDeserializationError(
                exc.kind, location=f"BatchArray batch {nbatch}"
            ) from exc
        if not isinstance(block, list):
            raise ParamError(f"BatchArray batch {nbatch}: a block must hold a list of items")
        return block

    def _decode_blocks(self, nbatch: int) -> list[list[Any]]:
        chunk = self.schunk.get_chunk(nbatch)
        payloads = vldecompress(chunk, nthreads=self.dparams.nthreads)
        return [self._deserialize_block_at(p, nbatch) for p in payloads]

    def _decode_items(self, nbatch: int) -> list[Any]:
        return [item for block in self._decode_blocks(nbatch) for item in block]

    def _entry(self, index: int) -> Batch:
        return Batch(self, index, self.schunk.get_lazychunk(index))

    def _value(self, index: int) -> list[Any]:
        return self._entry(index)[:]

    # -- items across batches ---------------------------------------------------------------
    def _prefix_sums(self) -> np.ndarray:
        if self._prefix is None:
            lengths = np.asarray(self._load_or_compute_batch_lengths(), np.int64)
            self._prefix = np.concatenate(([0], np.cumsum(lengths)))
        return self._prefix

    def _get_total_item_count(self) -> int:
        return int(self._prefix_sums()[-1])

    def _get_flat_item(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            try:
                span = range(*index.indices(self._get_total_item_count()))
            except ValueError as exc:
                raise ParamError(str(exc)) from None
            return [self._get_flat_item(i) for i in span]
        if isinstance(index, bool) or not isinstance(index, int):
            raise ParamTypeError("BatchArray item indices must be integers")
        total = self._get_total_item_count()
        if index < 0:
            index += total
        if not 0 <= index < total:
            raise BoundsError("BatchArray item index out of range")
        prefix = self._prefix_sums()
        nbatch = int(np.searchsorted(prefix, index, side="right")) - 1
        return self[nbatch][index - int(prefix[nbatch])]

    def iter_items(self) -> Iterator[Any]:
        """Every item of every batch, in order (each batch decoded whole, once)."""
        for nbatch in range(len(self)):
            yield from self._decode_items(nbatch)

    # -- properties -------------------------------------------------------------------------
    @property
    def items(self) -> BatchArrayItems:
        """A read-only flat view of all items."""
        return self._items

    @property
    def items_per_block(self) -> int | None:
        """Items per VL block (the last block of a batch may hold fewer)."""
        return self._items_per_block

    @property
    def serializer(self) -> str:
        """How items are serialized: ``"msgpack"``."""
        return self._serializer

    def _block_sizes(self, lengths: list[int]) -> list[int] | None:
        n = self._items_per_block
        if n is None:
            return None
        sizes: list[int] = []
        for i, length in enumerate(lengths):
            nblocks = get_cbuffer_sizes(self.schunk.get_lazychunk(i))[2]
            full, rest = divmod(length, n)
            these = [n] * full + ([rest] if rest else [])
            if len(these) != nblocks:
                return None
            sizes += these
        return sizes

    def _total_nblocks(self) -> int:
        return sum(get_cbuffer_sizes(self.schunk.get_lazychunk(i))[2] for i in range(len(self)))

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs describing the container (python-blosc2's)."""
        lengths = self._batch_lengths
        if lengths is None:
            lengths = [len(batch) for batch in self]
        blocks = self._block_sizes(lengths)

        def stats(v: list[int] | None) -> str:
            if not v:
                return "n/a"
            return f"mean={statistics.fmean(v):.2f}, max={max(v)}, min={min(v)}"

        return [
            ("type", "BatchArray"),
            ("serializer", self.serializer),
            ("items_per_block", self.items_per_block),
            ("nbatches", f"{len(self)} (items per batch: {stats(lengths)})"),
            ("nblocks", f"{self._total_nblocks()} (items per block: {stats(blocks)})"),
            ("nitems", sum(lengths)),
            ("nbytes", format_nbytes(self.nbytes)),
            ("cbytes", format_nbytes(self.cbytes)),
            ("cratio", f"{self.cratio:.2f}x"),
            ("cparams", self.cparams),
            ("dparams", self.dparams),
        ]

    # -- copies -----------------------------------------------------------------------------
    def _user_vlmeta(self) -> dict[str, Any]:
        return {k: v for k, v in self.vlmeta.getall().items() if k != LENGTHS_KEY}

    def chunk_copy(self, **kwargs: Any) -> BatchArray:
        """A copy made of this container's compressed chunks as they are (no decoding); the
        compression parameters cannot change (use :meth:`copy` for that)."""
        if "cparams" in kwargs:
            raise ParamError(
                "chunk_copy() does not support a cparams override because it transfers "
                "pre-compressed chunks as-is.  Use copy() if you need to change cparams."
            )
        if "meta" in kwargs:
            raise ParamError("meta should not be passed to chunk_copy")
        kwargs["cparams"] = _copy.deepcopy(self.cparams)
        kwargs.setdefault("dparams", _copy.deepcopy(self.dparams))
        kwargs.setdefault("items_per_block", self.items_per_block)
        kwargs.setdefault("serializer", self.serializer)
        kwargs.setdefault("deserialize", get_deserialize(self.schunk))
        kwargs.setdefault("contiguous", self.schunk.contiguous)
        if "urlpath" in kwargs:
            kwargs.setdefault("mode", "w")
        kwargs["meta"] = self._copy_meta()
        out = BatchArray(**kwargs)
        for i in range(len(self)):
            out.schunk.append_chunk(self.schunk.get_chunk(i))
        out._batch_lengths = list(self._load_or_compute_batch_lengths()) if len(self) else []
        out._persist_batch_lengths()
        for key, value in self._user_vlmeta().items():
            out.vlmeta[key] = value
        return out

    def copy(self, **kwargs: Any) -> BatchArray:
        """A copy, with constructor arguments overriding this container's."""
        if "meta" in kwargs:
            raise ParamError("meta should not be passed to copy")
        kwargs.setdefault("cparams", _copy.deepcopy(self.cparams))
        kwargs.setdefault("dparams", _copy.deepcopy(self.dparams))
        kwargs.setdefault("items_per_block", self.items_per_block)
        kwargs.setdefault("serializer", self.serializer)
        kwargs.setdefault("deserialize", get_deserialize(self.schunk))
        if "storage" in kwargs:
            storage = storage_of(kwargs["storage"], {})
            storage.meta = {**self._copy_meta(), **(storage.meta or {})}
            kwargs["storage"] = storage
        else:
            kwargs["meta"] = self._copy_meta()
            kwargs.setdefault("contiguous", self.schunk.contiguous)
            if "urlpath" in kwargs:
                kwargs.setdefault("mode", "w")
        out = BatchArray(**kwargs)
        for key, value in self._user_vlmeta().items():
            out.vlmeta[key] = value
        out.extend(batch[:] for batch in self)
        return out


def batcharray_from_cframe(
    cframe: BufferLike, copy: bool = True, *, deserialize: str = "safe"
) -> BatchArray:
    """The BatchArray held by an in-memory frame."""
    schunk = schunk_from_cframe(cframe, copy)
    set_deserialize(schunk, deserialize)
    return BatchArray(_from_schunk=schunk)


register_kind(
    TAG, lambda schunk, mode: BatchArray(_from_schunk=set_deserialize(schunk, mode)), BatchArray
)
