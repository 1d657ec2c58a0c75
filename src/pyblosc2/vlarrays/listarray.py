"""``ListArray``: rows that are lists of typed items, or None (python-blosc2's ``ListArray``).

On disk (python-blosc2 4.x): the metalayer ``listarray`` = the list spec's metadata
(:meth:`~pyblosc2.schema.ListSpec.to_listarray_metadata`: version, item spec, nullability,
serializer, ``batch_rows``, ``items_per_block``, backend) on the super-chunk of its backend:

* ``backend="batch"`` (default): a BatchArray whose batches hold ``batch_rows`` rows each
  (rows appended since the last full batch wait in memory until :meth:`ListArray.flush`,
  :meth:`close` or the end of a ``with`` block; they are visible to reads meanwhile);
* ``backend="vl"``: an ObjectArray, one row per entry.

Every cell is checked and converted by the item spec on the way in (``None`` only when the
spec is nullable; strings and bytes are not lists). ``serializer="arrow"`` is python-blosc2's
optional Arrow IPC form and is not implemented by pyblosc2.
"""

from __future__ import annotations

import copy as _copy
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import Any, Literal

import numpy as np

from .. import schema as b2s
from ..errors import ParamError, ParamTypeError
from ..schema import ListSpec, SchemaSpec, StructSpec
from ..schunk import SChunk, format_nbytes
from ..schunk.members import InfoReport
from .batcharray import BatchArray
from .chunklist import storage_of
from .kinds import register_kind
from .objectarray import ObjectArray
from .policy import get_deserialize, set_deserialize

__all__ = ["ListArray", "coerce_list_cell"]

TAG = "listarray"
_MAX_DEPTH = 32


def _check_spec(spec: ListSpec, depth: int = 0) -> None:
    if depth >= _MAX_DEPTH:
        raise ParamError(f"ListArray nesting exceeds the supported depth of {_MAX_DEPTH}")
    if spec.serializer != "msgpack":
        raise NotImplementedError(
            "ListArray serializer='arrow' (Arrow IPC batches) is not implemented by pyblosc2"
        )
    for name, value in (("batch_rows", spec.batch_rows), ("items_per_block", spec.items_per_block)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value <= 0
        ):
            raise ParamError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(spec.item_spec, ListSpec):
        _check_spec(spec.item_spec, depth + 1)


def _bounded(spec: SchemaSpec, value: Any) -> Any:
    for attr, ok in (
        ("ge", lambda v, b: v >= b),
        ("gt", lambda v, b: v > b),
        ("le", lambda v, b: v <= b),
        ("lt", lambda v, b: v < b),
    ):
        bound = getattr(spec, attr, None)
        if bound is not None and not ok(value, bound):
            raise ParamError(f"List item {value!r} violates {attr}={bound}")
    lo, hi = getattr(spec, "min_length", None), getattr(spec, "max_length", None)
    if hi is not None and len(value) > hi:
        raise ParamError(f"List item {value!r} exceeds max_length={hi}")
    if lo is not None and len(value) < lo:
        raise ParamError(f"List item {value!r} is shorter than min_length={lo}")
    return value


def _coerce_item(spec: SchemaSpec, value: Any) -> Any:
    """One list item checked and converted as python-blosc2 does."""
    if value is None:
        if getattr(spec, "nullable", False):
            return None
        raise ParamError(f"Null {spec.display_label()} list items are not allowed")
    if isinstance(spec, StructSpec):
        value = value if isinstance(value, dict) else dict(value)
        missing = [name for name in spec.fields if name not in value]
        if missing:
            raise ParamError(f"Struct list item is missing field {missing[0]!r}")
        return {name: _coerce_item(s, value[name]) for name, s in spec.fields.items()}
    if isinstance(spec, ListSpec):
        return coerce_list_cell(spec, value)
    if spec.python_type is str:
        value = value if isinstance(value, str) else str(value)
    elif spec.python_type is bytes:
        value = value.encode() if isinstance(value, str) else bytes(value)
    elif isinstance(spec, b2s.timestamp) and (
        isinstance(value, np.datetime64 | str) or hasattr(value, "isoformat")
    ):
        value = np.datetime64(value).astype(f"datetime64[{spec.unit}]").astype(np.int64).item()
    else:
        try:
            value = np.array(value, dtype=spec.dtype).item()
        except (TypeError, ValueError, OverflowError) as exc:
            label = spec.display_label()
            raise ParamTypeError(f"list item {value!r} is not a {label}: {exc}") from None
    return _bounded(spec, value)


def coerce_list_cell(spec: ListSpec, value: Any) -> list[Any] | None:
    """One row checked and converted by ``spec`` (None when the spec allows nulls)."""
    if value is None:
        if not spec.nullable:
            raise ParamError("Null list cells are not allowed for this column")
        return None
    if isinstance(value, str | bytes | bytearray | memoryview):
        raise ParamTypeError("ListArray cells must be list-like, not strings or bytes")
    if not isinstance(value, Iterable):
        raise ParamTypeError("ListArray cells must be list-like")
    return [_coerce_item(spec.item_spec, item) for item in value]


class ListArray:
    """Rows that are lists of typed items (python-blosc2's ``ListArray``).

    >>> from pyblosc2 import schema
    >>> la = ListArray(item_spec=schema.int32(), nullable=True, batch_rows=2)
    >>> la.extend([[1, 2], None, [], [3]])
    >>> len(la), la[0], la[1], la[1:], la[[3, 0]]
    (4, [1, 2], None, [None, [], [3]], [[3], [1, 2]])
    """

    def __init__(
        self,
        spec: ListSpec | None = None,
        *,
        item_spec: SchemaSpec | None = None,
        nullable: bool = False,
        storage: str = "batch",
        serializer: str = "msgpack",
        batch_rows: int | None = 2048,
        items_per_block: int | None = None,
        _from_schunk: SChunk | None = None,
        **kwargs: Any,
    ) -> None:
        self._pending_cells: list[list[Any] | None] = []
        self._prefix: list[int] | None = None
        self._cached: tuple[int, list[Any]] | None = None
        if _from_schunk is not None:
            if spec is not None or item_spec is not None or kwargs:
                raise ParamError("Cannot pass schema/storage arguments together with _from_schunk")
            self._init_from_schunk(_from_schunk)
            return
        if spec is None:
            if item_spec is None:
                raise ParamError("ListArray requires either spec=... or item_spec=...")
            spec = b2s.list(
                item_spec,
                nullable=nullable,
                storage=storage,
                serializer=serializer,
                batch_rows=batch_rows,
                items_per_block=items_per_block,
            )
        _check_spec(spec)
        self.spec = spec
        where = storage_of(kwargs.pop("storage", None), kwargs)
        where.meta = {**(where.meta or {}), TAG: spec.to_listarray_metadata()}
        self._backend: ObjectArray | BatchArray
        if spec.storage == "vl":
            self._backend = ObjectArray(storage=where, **kwargs)
        else:
            self._backend = BatchArray(
                storage=where, items_per_block=spec.items_per_block, **kwargs
            )
        self._persisted = self._persisted_rows()

    def _init_from_schunk(self, schunk: SChunk) -> None:
        tags = dict(schunk.header.metalayers)
        if TAG not in tags:
            raise ParamError("The supplied SChunk is not tagged as a ListArray")
        self.spec = ListSpec.from_metadata_dict(schunk.meta[TAG])
        _check_spec(self.spec)
        backend_tag = "vlarray" if self.spec.storage == "vl" else "batcharray"
        if backend_tag not in tags:
            raise ParamError(
                f"ListArray metadata says backend={self.spec.storage!r} but the "
                f"{backend_tag!r} tag is missing"
            )
        self._backend = (
            ObjectArray(_from_schunk=schunk)
            if self.spec.storage == "vl"
            else BatchArray(_from_schunk=schunk)
        )
        self._persisted = self._persisted_rows()

    # -- rows ---------------------------------------------------------------------------
    def _persisted_rows(self) -> int:
        if isinstance(self._backend, ObjectArray):
            return len(self._backend)
        return int(sum(self._backend._load_or_compute_batch_lengths()))

    def _prefix_sums(self) -> list[int]:
        if self._prefix is None:
            assert isinstance(self._backend, BatchArray)
            lengths = self._backend._load_or_compute_batch_lengths()
            self._prefix = [0, *np.cumsum(lengths, dtype=np.int64).tolist()]
        return self._prefix

    def _invalidate(self) -> None:
        self._prefix = None
        self._cached = None

    def _batch(self, j: int) -> list[Any]:
        if self._cached is None or self._cached[0] != j:
            self._cached = (j, self._backend[j][:])
        return self._cached[1]

    @property
    def batch_rows(self) -> int | None:
        """Rows per stored batch (None: the caller decides with :meth:`flush`)."""
        return self.spec.batch_rows

    def _flush_full_batches(self) -> None:
        rows = self.batch_rows
        if self.spec.storage != "batch" or rows is None:
            return
        while len(self._pending_cells) >= rows:
            batch, self._pending_cells = self._pending_cells[:rows], self._pending_cells[rows:]
            self._backend.append(batch)
            self._persisted += len(batch)
            self._invalidate()

    def append(self, value: Any) -> int:
        """Append one row; returns the new number of rows."""
        self._backend._check_writable()
        cell = coerce_list_cell(self.spec, value)
        if self.spec.storage == "vl":
            self._backend.append(cell)
            self._persisted = len(self._backend)
            return len(self)
        self._pending_cells.append(cell)
        self._flush_full_batches()
        return len(self)

    def extend(self, values: Iterable[Any], *, validate: bool = True) -> None:
        """Append rows (``validate=False``: trusted rows already of the right types)."""
        self._backend._check_writable()
        cells = [coerce_list_cell(self.spec, v) for v in values] if validate else list(values)
        if self.spec.storage == "vl":
            self._backend.extend(cells)
            self._persisted = len(self._backend)
            return
        self._pending_cells.extend(cells)
        self._flush_full_batches()

    def flush(self) -> None:
        """Store the rows waiting for a full batch (batch backend)."""
        if self.spec.storage != "batch" or not self._pending_cells:
            return
        self._backend._check_writable()
        batch, self._pending_cells = list(self._pending_cells), []
        self._backend.append(batch)
        self._persisted += len(batch)
        self._invalidate()

    def close(self) -> None:
        """Flush the waiting rows."""
        self.flush()

    def __len__(self) -> int:
        if self.spec.storage == "vl":
            return len(self._backend)
        return self._persisted + len(self._pending_cells)

    def _normalize_index(self, index: Any) -> int:
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise ParamTypeError("ListArray indices must be integers")
        n = len(self)
        i = int(index) + n if index < 0 else int(index)
        if not 0 <= i < n:
            raise IndexError("ListArray index out of range")
        return i

    def _row(self, i: int) -> Any:
        if self.spec.storage == "vl":
            return self._backend[i]
        if i >= self._persisted:
            return self._pending_cells[i - self._persisted]
        prefix = self._prefix_sums()
        j = bisect_right(prefix, i) - 1
        return self._batch(j)[i - prefix[j]]

    def __getitem__(self, index: Any) -> Any:
        """One row, or a list of rows for a slice, a list of indices or a boolean mask."""
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(len(self)))]
        if isinstance(index, np.ndarray):
            if index.dtype == np.bool_:
                if len(index) != len(self):
                    raise IndexError(
                        f"Boolean mask length {len(index)} does not match ListArray length "
                        f"{len(self)}"
                    )
                return [self._row(int(i)) for i in np.flatnonzero(index)]
            return [self._row(self._normalize_index(i)) for i in index.tolist()]
        if isinstance(index, list | tuple):
            return [self._row(self._normalize_index(i)) for i in index]
        return self._row(self._normalize_index(index))

    def __setitem__(self, index: int, value: Any) -> None:
        """Replace one row."""
        self._backend._check_writable()
        cell = coerce_list_cell(self.spec, value)
        i = self._normalize_index(index)
        if self.spec.storage == "vl":
            self._backend[i] = cell
            return
        if i >= self._persisted:
            self._pending_cells[i - self._persisted] = cell
            return
        prefix = self._prefix_sums()
        j = bisect_right(prefix, i) - 1
        batch = list(self._batch(j))
        batch[i - prefix[j]] = cell
        self._backend[j] = batch
        self._cached = (j, batch)

    def __iter__(self) -> Iterator[Any]:
        yield from self[:]

    # -- the container ------------------------------------------------------------------
    def copy(self, **kwargs: Any) -> ListArray:
        """A copy; batch-backed rows are copied chunk by chunk (no decoding) unless
        ``cparams`` change or rows wait in memory."""
        kwargs.setdefault("deserialize", get_deserialize(self.schunk))
        if self.spec.storage == "batch" and not self._pending_cells and "cparams" not in kwargs:
            assert isinstance(self._backend, BatchArray)
            out = ListArray.__new__(ListArray)
            out.spec = self.spec
            out._backend = self._backend.chunk_copy(**kwargs)
            out._pending_cells = []
            out._persisted = self._persisted
            out._prefix = out._cached = None
            return out
        out = ListArray(spec=_copy.deepcopy(self.spec), **kwargs)
        out.extend(self, validate=False)
        out.flush()
        return out

    @property
    def schunk(self) -> SChunk:
        """The super-chunk holding the rows (of the backend container)."""
        return self._backend.schunk

    @property
    def meta(self) -> Any:
        """The frame's fixed-size metalayers."""
        return self._backend.meta

    @property
    def vlmeta(self) -> Any:
        """The frame's variable-length metadata."""
        return self._backend.vlmeta

    @property
    def attrs(self) -> Any:
        """User attributes: :attr:`vlmeta` under its recommended name."""
        return self.vlmeta

    @property
    def cparams(self) -> Any:
        """Compression parameters of the backend container."""
        return self._backend.cparams

    @property
    def dparams(self) -> Any:
        """Decompression parameters of the backend container."""
        return self._backend.dparams

    @property
    def urlpath(self) -> str | None:
        """The file or URL the rows are stored at (None in memory)."""
        return self._backend.urlpath

    @property
    def contiguous(self) -> bool:
        """Whether the frame is contiguous (one file) rather than sparse (a directory)."""
        return self._backend.contiguous

    @property
    def items_per_block(self) -> int | None:
        """Items per VL block with a BatchArray backend, None with an ObjectArray one."""
        if isinstance(self._backend, BatchArray):
            return self._backend.items_per_block
        return None

    @property
    def nbytes(self) -> int:
        """Uncompressed bytes of the stored rows."""
        return self._backend.nbytes

    @property
    def cbytes(self) -> int:
        """Compressed bytes of the stored rows."""
        return self._backend.cbytes

    @property
    def cratio(self) -> float:
        """``nbytes / cbytes``."""
        return self._backend.cratio

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """The rows :attr:`info` prints, as ``(name, value)`` pairs."""
        return [
            ("type", "ListArray"),
            ("logical_type", self.spec.display_label()),
            ("backend", self.spec.storage),
            ("serializer", self.spec.serializer),
            ("rows", len(self)),
            ("batch_rows", self.batch_rows),
            ("items_per_block", self.items_per_block),
            ("pending_rows", len(self._pending_cells)),
            ("nbytes", format_nbytes(self.nbytes)),
            ("cbytes", format_nbytes(self.cbytes)),
            ("cratio", f"{self.cratio:.2f}x"),
        ]

    @property
    def info(self) -> InfoReport:
        """A printable summary of the container (python-blosc2's ``info``)."""
        return InfoReport(self.info_items)

    def to_cframe(self) -> bytes:
        """The whole container (waiting rows flushed first) as an in-memory frame."""
        self.flush()
        return self._backend.to_cframe()

    def __enter__(self) -> ListArray:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False

    def __repr__(self) -> str:
        return (
            f"ListArray(type={self.spec.display_label()}, len={len(self)}, "
            f"urlpath={self.urlpath!r})"
        )


def _open(schunk: SChunk, mode: Any) -> ListArray:
    return ListArray(_from_schunk=set_deserialize(schunk, mode))


register_kind(TAG, _open)
