"""``UTF8Array``: one ``str`` per row, stored as python-blosc2's utf8 columns are: an int64
NDArray of ``n + 1`` row offsets (``offsets[0] == 0``) and a uint8 NDArray of the rows'
UTF-8 bytes end to end (at least one byte: an empty blob keeps one slack byte).

Rows appended go to a pending list first and reach the arrays on :meth:`UTF8Array.flush`
(or when ``_FLUSH_ROWS`` rows or ``_FLUSH_CHARS`` characters are pending). Reads give
``numpy.dtypes.StringDType`` arrays. A nullable spec's ``None`` is stored as its sentinel
(``null_value``). A row that does not encode (a lone surrogate) fails the flush with
``UnicodeEncodeError`` and its batch is dropped, the rows already stored kept.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError, ParamTypeError
from ..ndarray.constructors import zeros
from ..ndarray.ndarray import NDArray
from .strings import DATA_CHUNKS, OFFSETS_CHUNKS, VarSpec, var_spec

__all__ = [
    "UTF8Array",
    "from_utf8",
    "have_string_dtype",
    "string_dtype",
    "to_utf8",
    "utf8_array",
]

_FLUSH_ROWS = 65536
_FLUSH_CHARS = 1 << 22
_OPS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _string_dtype() -> np.dtype[Any]:
    return np.dtypes.StringDType()


def have_string_dtype() -> bool:
    """Whether numpy has ``StringDType`` (numpy 2; numpy < 1.25 has no ``np.dtypes`` at all)."""
    return hasattr(getattr(np, "dtypes", None), "StringDType")


def string_dtype() -> np.dtype[Any]:
    """A ``StringDType`` instance; NotImplementedError on numpy 1 (no such dtype)."""
    if not have_string_dtype():
        raise NotImplementedError("utf8 columns need numpy >= 2 (StringDType)")
    return _string_dtype()


def _pack_utf8_kernel() -> None:
    """python-blosc2's compiled bulk reader: pyblosc2 has none (numpy does the work)."""
    return None


def _encode_utf8_kernel() -> None:
    """python-blosc2's compiled bulk encoder: pyblosc2 has none."""
    return None


class UTF8Array:
    """Variable-length UTF-8 strings over offsets + bytes NDArrays (python-blosc2's
    ``UTF8Array``).

    >>> a = utf8_array(["café", "", "x"])
    >>> a[:].tolist(), a[0], len(a), (a == "x").tolist()
    (['café', '', 'x'], 'café', 3, [False, False, True])
    """

    def __init__(
        self,
        spec: VarSpec | None = None,
        offsets: NDArray | None = None,
        data: NDArray | None = None,
    ) -> None:
        spec = var_spec("utf8") if spec is None else spec
        if getattr(spec, "kind", None) != "utf8":
            raise ParamTypeError(f"UTF8Array needs a utf8 spec, got {spec!r}")
        self.spec = spec
        if (offsets is None) != (data is None):
            raise ParamError("UTF8Array takes both offsets and data, or neither")
        if offsets is None or data is None:
            offsets = zeros((1,), dtype=np.int64, chunks=OFFSETS_CHUNKS)
            data = zeros((1,), dtype=np.uint8, chunks=DATA_CHUNKS)
        if offsets.dtype != np.int64 or data.dtype != np.uint8 or offsets.ndim != 1:
            raise ParamTypeError("UTF8Array offsets are 1-d int64 and data uint8")
        self._offsets, self._data = offsets, data
        self._persisted = int(offsets.shape[0]) - 1
        self._pending: list[str] = []

    # -- writing -----------------------------------------------------------------------------
    def _coerce(self, value: Any) -> str:
        if value is None:
            if self.spec.null_value is None:
                raise ParamTypeError("utf8 column is not nullable; received None")
            return str(self.spec.null_value)
        if not isinstance(value, str):
            raise ParamTypeError(f"Expected str for a utf8 column, got {type(value).__name__!r}")
        return value

    def append(self, value: Any) -> None:
        """Append one row."""
        self._pending.append(self._coerce(value))
        if len(self._pending) >= _FLUSH_ROWS:
            self.flush()

    def extend(self, values: Iterable[Any]) -> None:
        """Append many rows."""
        if isinstance(values, np.ndarray):
            values = values.tolist()
        for v in values:
            self._pending.append(self._coerce(v))
            if len(self._pending) >= _FLUSH_ROWS:
                self.flush()

    def flush(self) -> None:
        """Write the pending rows into the arrays."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        encoded = [v.encode("utf-8") for v in pending]  # UnicodeEncodeError: batch dropped
        lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
        end = int(self._offsets[self._persisted]) if self._persisted else 0
        new_offsets = end + np.cumsum(lengths)
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        n = self._persisted + len(encoded)
        self._offsets.resize((n + 1,))
        self._offsets[self._persisted + 1 : n + 1] = new_offsets
        total = int(new_offsets[-1]) if len(new_offsets) else end
        if total > self._data.shape[0]:
            self._data.resize((total,))
        if blob.size:
            self._data[end:total] = blob
        self._persisted = n

    def set_all(self, values: Iterable[Any]) -> None:
        """Replace every row, keeping the row count."""
        rows = [self._coerce(v) for v in values]
        if len(rows) != len(self):
            raise ParamError(f"set_all() expects {len(self)} values, got {len(rows)}")
        self._persisted = 0
        self._offsets.resize((1,))
        self._pending = rows
        self.flush()

    def __setitem__(self, index: Any, value: Any) -> None:
        n = len(self)
        if not isinstance(index, int | np.integer):
            raise NotImplementedError("UTF8Array item assignment by slice or array")
        i = int(index) + n if index < 0 else int(index)
        if not 0 <= i < n:
            raise BoundsError(f"index {index} out of range for {n} rows")
        rows = self[:].tolist()
        rows[i] = self._coerce(value)
        self.set_all(rows)

    # -- reading -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._persisted + len(self._pending)

    @property
    def dtype(self) -> np.dtype[Any]:
        """numpy's ``StringDType``."""
        return _string_dtype()

    @property
    def shape(self) -> tuple[int]:
        """``(len(self),)``."""
        return (len(self),)

    @property
    def offsets(self) -> NDArray:
        """The int64 row offsets (stored rows + 1)."""
        return self._offsets

    @property
    def data(self) -> NDArray:
        """The uint8 UTF-8 bytes of the stored rows."""
        return self._data

    def _stored(self, start: int, stop: int) -> list[str]:
        if start >= stop:
            return []
        offsets = np.asarray(self._offsets[start : stop + 1])
        blob = np.asarray(self._data[int(offsets[0]) : int(offsets[-1])]).tobytes()
        rel = offsets - offsets[0]
        return [blob[rel[i] : rel[i + 1]].decode("utf-8") for i in range(stop - start)]

    def _all(self) -> list[str]:
        return self._stored(0, self._persisted) + list(self._pending)

    def __getitem__(self, key: Any) -> Any:
        n = len(self)
        if isinstance(key, int | np.integer):
            i = int(key) + n if key < 0 else int(key)
            if not 0 <= i < n:
                raise IndexError(f"index {key} out of range for {n} rows")
            return (
                self._stored(i, i + 1)[0]
                if i < self._persisted
                else self._pending[i - self._persisted]
            )
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step == 1 and stop <= self._persisted:
                return np.array(self._stored(start, max(start, stop)), dtype=_string_dtype())
        rows = np.array(self._all(), dtype=_string_dtype())
        return rows[key]

    def __iter__(self) -> Any:
        return iter(self._all())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype)

    def _span_max_bytes(self, start: int, stop: int) -> int:
        """The longest row's UTF-8 length among rows ``[start, stop)``, read from offsets."""
        best = 0
        hi = min(stop, self._persisted)
        if start < hi:
            best = int(np.max(np.diff(np.asarray(self._offsets[start : hi + 1]))))
        lo = max(start, self._persisted) - self._persisted
        for v in self._pending[lo : stop - self._persisted]:
            best = max(best, len(v.encode("utf-8", "surrogatepass")))
        return best

    def astype(self, dtype: Any = None, *, span_rows: int | None = None) -> np.ndarray:
        """The rows as a fixed-width ``U`` array: ``dtype`` ``None``, ``"U"`` or ``"<U"``
        takes the longest row's width in code points; a narrower one truncates, as numpy.

        >>> utf8_array(["hello", "日本語"]).astype().dtype
        dtype('<U5')
        """
        return fixed_width(self[:], dtype)

    # -- comparisons -------------------------------------------------------------------------
    def _compare(self, op: str, other: Any) -> np.ndarray:
        left = self[:]
        if isinstance(other, UTF8Array):
            other = other[:]
        elif isinstance(other, list | tuple):
            other = np.array(other, dtype=_string_dtype())
        return np.asarray(_OPS[op](left, other), dtype=np.bool_)

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> Any:
        return self._compare("==", other)

    def __ne__(self, other: object) -> Any:
        return self._compare("!=", other)

    def __lt__(self, other: Any) -> np.ndarray:
        return self._compare("<", other)

    def __le__(self, other: Any) -> np.ndarray:
        return self._compare("<=", other)

    def __gt__(self, other: Any) -> np.ndarray:
        return self._compare(">", other)

    def __ge__(self, other: Any) -> np.ndarray:
        return self._compare(">=", other)

    def __repr__(self) -> str:
        return f"UTF8Array(len={len(self)}, spec={self.spec!r})"


def fixed_width(values: Any, dtype: Any = None) -> np.ndarray:
    """``values`` (strings) as a ``U`` array of ``dtype``, or of the longest one's width."""
    rows = np.asarray(values if not isinstance(values, list | tuple) else list(values))
    if rows.dtype.kind not in "UTO":
        rows = np.asarray(rows.tolist(), dtype=object)
    if dtype is not None:
        want = np.dtype(dtype)
        if want.kind != "U":
            raise ParamError(f"astype() needs a U dtype, got {want}")
        if want.itemsize:
            return rows.astype(want)
    width = max((len(v) for v in rows.tolist()), default=0)
    return rows.astype(f"<U{max(width, 1)}") if rows.size else np.empty(0, dtype="<U1")


def from_utf8(values: Any, dtype: Any = None) -> np.ndarray:
    """Strings (a UTF8Array, a text column, an array or a list) as a fixed-width array.

    >>> from_utf8(["a", "bcd"]).dtype
    dtype('<U3')
    """
    if isinstance(values, UTF8Array):
        values = values[:]
    elif hasattr(values, "_col_name"):  # a CTable column
        values = np.asarray(values[:])
    return fixed_width(values, dtype)


def to_utf8(values: Any, spec: VarSpec | None = None) -> UTF8Array:
    """Strings (fixed-width, ``StringDType`` or a list) as a :class:`UTF8Array`.

    >>> to_utf8(np.array(["ab", "c"]))[:].tolist()
    ['ab', 'c']
    """
    if isinstance(values, np.ndarray):
        values = values.tolist()
    return utf8_array(values, spec)


def utf8_array(values: Iterable[Any] = (), spec: VarSpec | None = None) -> UTF8Array:
    """A :class:`UTF8Array` of ``values`` (flushed).

    >>> utf8_array(["a", None], var_spec("utf8", null_value="<NA>"))[:].tolist()
    ['a', '<NA>']
    """
    out = UTF8Array(spec)
    out.extend(values)
    out.flush()
    return out
