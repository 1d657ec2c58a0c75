"""``_ScalarVarLenArray``: one ``str`` or ``bytes`` (or ``None``) per row over a BatchArray of
``batch_rows``-item batches, as python-blosc2's vlstring/vlbytes columns are stored
(:mod:`.strings` has the layout and the ``ctable_varlen_scalar`` metalayer).

Rows appended wait in a pending list until a batch is full (or :meth:`flush`); a row of a
stored batch is rewritten by rewriting its batch.
"""

from __future__ import annotations

import bisect
import builtins
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamTypeError
from ..vlarrays.batcharray import BatchArray
from .strings import ROLE_KEY, VarSpec, role_meta

__all__ = ["_ScalarVarLenArray"]


class _ScalarVarLenArray:
    """Rows of a vlstring or vlbytes spec over a BatchArray (python-blosc2's name).

    >>> from pyblosc2.ctable.kinds import vlstring
    >>> a = _ScalarVarLenArray(vlstring(batch_rows=2))
    >>> a.extend(["x", "y", "z"]); a._persisted_row_count, a[:]
    (2, ['x', 'y', 'z'])
    """

    def __init__(self, spec: VarSpec, backend: BatchArray | None = None) -> None:
        if getattr(spec, "kind", None) not in ("vlstring", "vlbytes"):
            raise ParamTypeError(f"_ScalarVarLenArray needs a vlstring or vlbytes spec: {spec!r}")
        self._spec = spec
        self._py_type = builtins.bytes if spec.kind == "vlbytes" else builtins.str
        self._nullable = bool(spec.nullable)
        self._batch_rows = int(getattr(spec, "batch_rows", None) or 2048)
        if backend is None:
            py_type = "bytes" if spec.kind == "vlbytes" else "str"
            backend = BatchArray(
                items_per_block=getattr(spec, "items_per_block", None),
                meta={ROLE_KEY: role_meta(spec, py_type, self._nullable)},
            )
        self._backend = backend
        self._pending: list[Any] = []
        self._prefix = self._prefix_sums()
        self._persisted_row_count = self._prefix[-1]

    def _prefix_sums(self) -> list[int]:
        out = [0]
        for n in self._backend._load_or_compute_batch_lengths():
            out.append(out[-1] + int(n))
        return out

    def _coerce(self, value: Any) -> Any:
        if value is None:
            if not self._nullable:
                raise ParamTypeError(f"Column {self._spec.kind!r} is not nullable; received None.")
            return None
        if self._py_type is builtins.bytes and isinstance(value, bytearray | memoryview):
            return bytes(value)
        if not isinstance(value, self._py_type):
            raise ParamTypeError(
                f"Expected {self._py_type.__name__} for a {self._spec.kind} column, "
                f"got {type(value).__name__!r}"
            )
        return value

    def _flush_full(self) -> None:
        while len(self._pending) >= self._batch_rows:
            batch, self._pending = (
                self._pending[: self._batch_rows],
                self._pending[self._batch_rows :],
            )
            self._store(batch)

    def _store(self, batch: list[Any]) -> None:
        self._backend.append(batch)
        self._persisted_row_count += len(batch)
        self._prefix.append(self._persisted_row_count)

    def append(self, value: Any) -> None:
        """Append one row."""
        self._pending.append(self._coerce(value))
        self._flush_full()

    def extend(self, values: Iterable[Any]) -> None:
        """Append many rows."""
        for v in values:
            self._pending.append(self._coerce(v))
            if len(self._pending) >= self._batch_rows:
                self._flush_full()

    def flush(self) -> None:
        """Store the pending rows as one batch."""
        if self._pending:
            batch, self._pending = self._pending, []
            self._store(batch)

    def __len__(self) -> int:
        return self._persisted_row_count + len(self._pending)

    def _locate(self, i: int) -> tuple[int, int]:
        b = bisect.bisect_right(self._prefix, i) - 1
        return b, i - self._prefix[b]

    def _get(self, i: int) -> Any:
        if i >= self._persisted_row_count:
            return self._pending[i - self._persisted_row_count]
        b, j = self._locate(i)
        return self._backend[b][j]

    def __getitem__(self, key: Any) -> Any:
        n = len(self)
        if isinstance(key, int | np.integer):
            i = int(key) + n if key < 0 else int(key)
            if not 0 <= i < n:
                raise IndexError(f"index {key} out of range for {n} rows")
            return self._get(i)
        if isinstance(key, slice):
            rows = list(range(*key.indices(n)))
        else:
            arr = np.asarray(key)
            rows = np.flatnonzero(arr).tolist() if arr.dtype == np.bool_ else arr.tolist()
        if rows and (min(rows) < -n or max(rows) >= n):
            raise BoundsError(f"rows {key!r} out of range for {n} rows")
        everything = list(self._backend.iter_items()) + self._pending
        return [everything[i] for i in rows]

    def __setitem__(self, key: Any, value: Any) -> None:
        n = len(self)
        i = int(key) + n if int(key) < 0 else int(key)
        if not 0 <= i < n:
            raise IndexError(f"index {key} out of range for {n} rows")
        value = self._coerce(value)
        if i >= self._persisted_row_count:
            self._pending[i - self._persisted_row_count] = value
            return
        b, j = self._locate(i)
        batch = list(self._backend[b][:])
        batch[j] = value
        self._backend[b] = batch

    def __iter__(self) -> Iterator[Any]:
        yield from self[:]
