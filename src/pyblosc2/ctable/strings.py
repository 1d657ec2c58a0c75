"""python-blosc2 4.x's variable-length text columns of a CTable: ``utf8``, ``vlstring``,
``vlbytes`` and ``dictionary``, with their stored layouts.

A table holds such a column in memory as a :class:`VarColumn` (one Python value per
physical row, the table's capacity long, ``None`` for a null or an unused row) and writes
python-blosc2's layout when it is closed or saved (:func:`save_var_column`); a stored table
logs every write into it until then (:mod:`.varlog`)::

    utf8        /_cols/<name>        int64 NDArray, n + 1 row offsets (offsets[0] == 0)
                /_cols/<name>.utf8   uint8 NDArray, the rows' UTF-8 bytes end to end
    vlstring    /_cols/<name>        BatchArray (.b2b): batches of ``batch_rows`` str/None
    vlbytes     /_cols/<name>        BatchArray (.b2b): batches of bytes/None
    dictionary  /_cols/<name>        int32 NDArray of codes, one per physical row (-1: null)
                /_cols/<name>_dict   BatchArray (.b2b): the distinct values (vlstring)

``n`` is the table's physical row count (``_last_pos``). The BatchArrays carry the fixed
metalayer ``ctable_varlen_scalar`` = ``{"version": 1, "py_type", "nullable",
"batch_rows"}`` beside the ``batcharray`` one. Reading a stored column checks it before
anything is allocated from it (:func:`load_var_column`): offsets that start at 0, never
decrease and stay inside the bytes, valid UTF-8, items of the column's type, codes inside
the dictionary, row counts within the table's.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..errors import FormatError, ParamError, ParamTypeError
from ..ndarray.constructors import asarray, zeros
from ..ndarray.ndarray import NDArray
from ..vlarrays.batcharray import BatchArray
from .nulls import is_na
from .textspecs import (
    VAR_KINDS,
    DictionarySpec,
    UTF8Spec,
    VarSpec,
    VLBytesSpec,
    VLStringSpec,
    var_spec,
)

__all__ = [
    "VAR_KINDS",
    "DictionaryColumn",
    "DictionarySpec",
    "UTF8Spec",
    "VLBytesSpec",
    "VLStringSpec",
    "VarColumn",
    "VarSpec",
    "is_var",
    "load_var_column",
    "new_var_column",
    "save_var_column",
    "var_spec",
]

UTF8_SUFFIX = ".utf8"
DICT_SUFFIX = "_dict"
ROLE_KEY = "ctable_varlen_scalar"
OFFSETS_CHUNKS = (2**17,)
DATA_CHUNKS = (2**21,)
_OBJ = np.dtype(object)


def null_mask(values: Any) -> np.ndarray:
    """Where an object array holds ``None``.

    >>> null_mask(np.array(["a", None], dtype=object)).tolist()
    [False, True]
    """
    arr = np.asarray(values)
    if arr.dtype != _OBJ:
        return np.zeros(arr.shape, dtype=np.bool_)
    return np.asarray(arr == None, dtype=np.bool_)  # noqa: E711  (elementwise)


def _string_dtype() -> np.dtype[Any]:
    """The dtype a utf8 column reads as: numpy's ``StringDType`` (python-blosc2's), or Python
    strings in an object array on numpy 1.x, which has no such dtype."""
    if hasattr(getattr(np, "dtypes", None), "StringDType"):
        return np.dtypes.StringDType()
    return _OBJ


#: other column kinds kept in memory as this module's are (spec type -> a handler with
#: ``new``, ``coerce``, ``save`` and ``load``), registered by their modules (:mod:`.listcol`,
#: :mod:`.objcol`)
_MEMORY_KINDS: dict[type, Any] = {}


def register_memory_kind(spec_type: type, handler: Any) -> None:
    """Keep the columns of ``spec_type`` in memory and store them with ``handler``."""
    _MEMORY_KINDS[spec_type] = handler


def is_var(spec: Any) -> bool:
    """Whether ``spec`` is one of this module's column kinds or a registered memory kind."""
    return isinstance(spec, VarSpec) or type(spec) in _MEMORY_KINDS


def coerce_values(name: str, spec: VarSpec, values: Any) -> np.ndarray:
    """``values`` as a 1-d object array of ``spec``'s Python type (``None`` for nulls),
    checked: a wrong type or a null in a column that is not nullable is refused. A utf8
    column with mask storage gets ``""`` at its nulls, in a ``numpy.ma.MaskedArray``
    masked there (the nulls go to its validity sidecar, :mod:`.nullstore`)."""
    if type(spec) in _MEMORY_KINDS:
        return _MEMORY_KINDS[type(spec)].coerce(name, spec, values)
    if isinstance(values, NDArray):
        values = values[:]
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ParamError(f"column {name!r}: expected 1-d values, got shape {values.shape}")
        items = values.tolist()
    elif isinstance(values, str | bytes):
        raise ParamTypeError(f"column {name!r}: expected a sequence of values, got {values!r}")
    else:
        items = list(values)
    want = spec.python_type
    out = np.empty(len(items), dtype=_OBJ)
    masked = spec.kind == "utf8" and spec.null_storage == "mask"
    nulls = np.zeros(len(items), dtype=np.bool_) if masked else None
    for i, v in enumerate(items):
        if nulls is not None and is_na(v):  # a utf8 mask column: "" here, the null aside
            nulls[i], v = True, ""
        elif v is None and spec.null_value is not None:  # a utf8 sentinel
            v = spec.null_value
        elif v is None:
            if not spec.nullable:
                raise ParamTypeError(f"column {name!r} ({spec.kind}) is not nullable; got None")
        elif want is builtins.bytes and isinstance(v, bytearray | memoryview):
            v = bytes(v)
        elif not isinstance(v, want):
            raise ParamTypeError(
                f"column {name!r} ({spec.kind}): expected {want.__name__}, "
                f"got {type(v).__name__} {v!r}"
            )
        out[i] = v
    if nulls is not None and nulls.any():  # the nulls ride along to the sidecar (.nullstore)
        return np.ma.MaskedArray(out, mask=nulls)
    return out


class VarColumn:
    """The physical rows of one variable-length column, in memory (the NDArray interface a
    table uses: ``shape``, ``dtype``, slicing, ``resize``).

    >>> c = VarColumn(var_spec("dictionary"), 4)
    >>> c[0:3] = np.array(["a", None, "a"], dtype=object)
    >>> c[0:3].tolist(), c.dictionary, c.codes[:3].tolist()
    (['a', None, 'a'], ['a'], [0, -1, 0])
    """

    def __init__(self, spec: VarSpec, capacity: int, values: np.ndarray | None = None) -> None:
        self.spec = spec
        self._values = np.full(capacity, None, dtype=_OBJ)
        if values is not None:
            self._values[: len(values)] = values

    # -- the NDArray interface -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int]:
        return (len(self._values),)

    @property
    def ndim(self) -> int:
        return 1

    @property
    def dtype(self) -> np.dtype[Any]:
        return _string_dtype() if self.spec.kind == "utf8" else _OBJ

    @property
    def chunks(self) -> tuple[int]:
        return (max(len(self._values), 1),)

    @property
    def nbytes(self) -> int:
        return int(sum(len(v) for v in self._values if v is not None))

    @property
    def cbytes(self) -> int:
        return self.nbytes

    def __len__(self) -> int:
        return len(self._values)

    def resize(self, shape: tuple[int, ...]) -> None:
        (n,) = shape
        if n <= len(self._values):
            self._values = self._values[:n].copy()
        else:
            grown = np.full(n, None, dtype=_OBJ)
            grown[: len(self._values)] = self._values
            self._values = grown

    def _present(self, values: np.ndarray) -> np.ndarray:
        if self.spec.kind != "utf8":
            return values
        filled = values.copy()
        filled[null_mask(filled)] = ""
        return filled.astype(_string_dtype())

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int | np.integer):
            value = self._values[int(key)]
            return "" if value is None and self.spec.kind == "utf8" else value
        return self._present(self._values[key])

    #: the table's change log (:mod:`.varlog`) when its store has files: it assigns and logs
    _on_write: Any = None

    def __setitem__(self, key: Any, values: Any) -> None:
        if self._on_write is not None:
            self._on_write(self, key, values)
        else:
            self._assign(key, values)

    def _assign(self, key: Any, values: Any) -> None:
        if isinstance(key, int | np.integer):
            self._values[int(key)] = values
            return
        arr = np.asarray(values, dtype=_OBJ) if not isinstance(values, np.ndarray) else values
        if arr.dtype != _OBJ:
            arr = np.array(arr.tolist(), dtype=_OBJ)
        self._values[key] = arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype)

    # -- dictionary columns ------------------------------------------------------------------
    def _encode(self, n: int) -> tuple[np.ndarray, list[str]]:
        """(int32 codes of the first ``n`` rows, the distinct values in first-seen order)."""
        values = self._values[:n]
        nulls = null_mask(values)
        codes = np.full(n, self.spec.null_code, dtype=np.int32)
        present = values[~nulls]
        if present.size == 0:
            return codes, []
        # Python strings, not numpy's "U" (which drops trailing NUL characters: "\x00" -> "")
        uniq, first, inverse = np.unique(
            present.astype(object), return_index=True, return_inverse=True
        )
        order = np.argsort(first, kind="stable")  # first-seen order, as python-blosc2 keeps
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        codes[~nulls] = rank[inverse.ravel()]
        return codes, [str(v) for v in uniq[order]]

    @property
    def dictionary(self) -> list[str]:
        """A dictionary column's distinct values, in first-seen order."""
        return self._encode(len(self._values))[1]

    @property
    def codes(self) -> np.ndarray:
        """A dictionary column's int32 codes, one per physical row."""
        return self._encode(len(self._values))[0]


class DictionaryColumn(VarColumn):
    """The physical rows of a ``dictionary`` column (python-blosc2's ``DictionaryColumn``:
    ``codes`` and ``dictionary``); ``==`` and ``!=`` compare each physical row (a null
    matches neither a value nor, under ``!=``, is it unequal).

    >>> c = DictionaryColumn(var_spec("dictionary", nullable=True), 3)
    >>> c[0:3] = np.array(["a", None, "b"], dtype=object)
    >>> (c == "a").tolist(), (c != "a").tolist()
    ([True, False, False], [False, False, True])
    """

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> Any:
        return self._rows_equal(other)

    def __ne__(self, other: object) -> Any:
        present = ~null_mask(self._values)
        return present & ~self._rows_equal(other)

    def _rows_equal(self, other: object) -> np.ndarray:
        values = self._values
        return np.fromiter((v is not None and v == other for v in values), np.bool_, len(values))


def new_var_column(spec: VarSpec, capacity: int, values: np.ndarray | None = None) -> VarColumn:
    """An in-memory column of ``spec``'s kind, ``capacity`` rows (``values`` first)."""
    if type(spec) in _MEMORY_KINDS:
        return _MEMORY_KINDS[type(spec)].new(spec, capacity, values)
    cls = DictionaryColumn if spec.kind == "dictionary" else VarColumn
    return cls(spec, capacity, values)


# -- the stored layout ------------------------------------------------------------------------
def role_meta(spec: VarSpec, py_type: str, nullable: bool) -> dict[str, Any]:
    """The ``ctable_varlen_scalar`` metalayer of a vlstring/vlbytes column's BatchArray."""
    batch_rows = getattr(spec, "batch_rows", 2048)
    return {"version": 1, "py_type": py_type, "nullable": nullable, "batch_rows": batch_rows}


def _batch_array(items: list[Any], spec: VarSpec, py_type: str, nullable: bool) -> BatchArray:
    batch_rows = getattr(spec, "batch_rows", None) or 2048
    ba = BatchArray(
        items_per_block=getattr(spec, "items_per_block", None),
        meta={ROLE_KEY: role_meta(spec, py_type, nullable)},
        contiguous=True,
    )
    for start in range(0, len(items), batch_rows):
        ba.append(items[start : start + batch_rows])
    return ba


def save_var_column(storage: Any, key: str, column: VarColumn, n: int) -> None:
    """Write the first ``n`` physical rows of ``column`` at ``key`` of ``storage`` (a
    :class:`~pyblosc2.ctable.storage.TableStorage`) in python-blosc2's layout."""
    spec = column.spec
    if type(spec) in _MEMORY_KINDS:
        _MEMORY_KINDS[type(spec)].save(storage, key, column, n)
        return
    values = column._values[:n]
    if spec.kind == "utf8":
        texts = ["" if v is None else v for v in values.tolist()]
        joined = "".join(texts).encode("utf-8", "surrogatepass")
        if len(joined) == sum(map(len, texts)):  # ASCII: a character is a byte
            lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
        else:
            encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
            lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        blob = np.frombuffer(joined, dtype=np.uint8)
        if blob.size == 0:
            blob = np.zeros(1, dtype=np.uint8)  # python-blosc2 keeps one slack byte
        # the bytes first: a kill between the leaves leaves offsets of a prefix (varlog.py)
        storage.install(key + UTF8_SUFFIX, asarray(blob, chunks=DATA_CHUNKS))
        storage.install(key, asarray(offsets, chunks=OFFSETS_CHUNKS))
    elif spec.kind == "dictionary":
        codes, uniq = column._encode(n)
        codes_arr = zeros((max(n, len(column._values), 1),), dtype=np.int32)  # the capacity
        if n:
            codes_arr[:n] = codes
        # the values first: old codes still point into them (first-seen order) (varlog.py)
        storage.install(key + DICT_SUFFIX, _batch_array(uniq, spec.value_type, "str", False))
        storage.install(key, codes_arr)
    else:
        py_type = "bytes" if spec.kind == "vlbytes" else "str"
        storage.install(key, _batch_array(values.tolist(), spec, py_type, spec.nullable))


def _fail(key: str, field: str, expected: str, got: Any) -> FormatError:
    return FormatError("CTable", f"{key} {field}", 0, expected, got)


def _open(storage: Any, key: str, kind: type) -> Any:
    value = None
    leaves = storage.leaves
    if leaves is not None and leaves.has(key):
        value = leaves.get(key)
    if not isinstance(value, kind):
        raise _fail(key, "leaf", f"a stored {kind.__name__}", type(value).__name__)
    return value


def _read_batches(key: str, ba: BatchArray, capacity: int, kind: str) -> list[Any]:
    lengths = ba._load_or_compute_batch_lengths()
    total = sum(int(n) for n in lengths)
    if total > capacity:
        raise _fail(key, "rows", f"at most {capacity} rows (the table's)", total)
    items = list(ba.iter_items())
    if len(items) != total:
        raise _fail(key, "rows", f"{total} rows (its batch lengths)", len(items))
    return items


def _check_items(key: str, items: list[Any], want: type, nullable: bool) -> np.ndarray:
    out = np.empty(len(items), dtype=_OBJ)
    for i, v in enumerate(items):
        if v is None and nullable:
            pass
        elif not isinstance(v, want):
            raise _fail(key, f"row {i}", want.__name__, type(v).__name__)
        out[i] = v
    return out


def load_var_column(
    storage: Any, key: str, spec: VarSpec, capacity: int, live: Any = None
) -> VarColumn:
    """The stored column at ``key`` of a table of ``capacity`` physical rows, checked
    (a dictionary's codes on the ``live`` rows, a bool NDArray of them: the others may hold
    anything, python-blosc2 leaves them as they were)."""
    if type(spec) in _MEMORY_KINDS:
        return _MEMORY_KINDS[type(spec)].load(storage, key, spec, capacity, live)
    if spec.kind == "utf8":
        offsets_arr = _open(storage, key, NDArray)
        data_arr = _open(storage, key + UTF8_SUFFIX, NDArray)
        if offsets_arr.ndim != 1 or offsets_arr.dtype != np.int64:
            raise _fail(key, "offsets", "a 1-d int64 array", f"{offsets_arr.dtype}")
        if data_arr.ndim != 1 or data_arr.dtype != np.uint8:
            raise _fail(key + UTF8_SUFFIX, "data", "a 1-d uint8 array", f"{data_arr.dtype}")
        n = offsets_arr.shape[0] - 1
        if not 0 <= n <= capacity:
            raise _fail(key, "offsets", f"1 to {capacity + 1} items", offsets_arr.shape[0])
        offsets = np.asarray(offsets_arr[:])
        if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > data_arr.shape[0]:
            raise _fail(key, "offsets", f"0, non-decreasing, at most {data_arr.shape[0]}", "others")
        blob = np.asarray(data_arr[: int(offsets[-1])]).tobytes()
        values = np.empty(n, dtype=_OBJ)
        try:
            for i in range(n):
                values[i] = blob[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise _fail(key + UTF8_SUFFIX, "data", "UTF-8 text", exc) from None
        return new_var_column(spec, capacity, values)
    if spec.kind == "dictionary":
        codes_arr = _open(storage, key, NDArray)
        live_rows = np.asarray(live[:capacity], dtype=np.bool_) if live is not None else None
        # every row the layout holds (its capacity when written); a table's change log
        # (varlog.py) holds the rows it grew by since, its live mask then stops before them
        found = np.flatnonzero(live_rows) if live_rows is not None else None
        need = capacity if found is None else int(found[-1]) + 1 if found.size else 0
        have = codes_arr.shape[0] if codes_arr.ndim == 1 else 0
        if codes_arr.ndim != 1 or codes_arr.dtype != np.int32 or have < min(need, capacity):
            raise _fail(key, "codes", f"a 1-d int32 array of {need}+ rows", codes_arr.dtype)
        dict_key = key + DICT_SUFFIX
        ba = _open(storage, dict_key, BatchArray)
        uniq = _check_items(dict_key, _read_batches(dict_key, ba, 2**31 - 1, "str"), str, False)
        codes = np.full(capacity, spec.null_code, dtype=np.int32)
        codes[: min(have, capacity)] = np.asarray(codes_arr[: min(have, capacity)])
        bad = (codes < 0) | (codes >= len(uniq))
        if live_rows is not None:
            codes[~live_rows & bad] = spec.null_code  # not a row: no value
        null = codes == spec.null_code
        bad &= ~null
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _fail(key, f"code {i}", f"in [0, {len(uniq)}) or {spec.null_code}", codes[i])
        values = np.full(capacity, None, dtype=_OBJ)
        values[~null] = uniq[codes[~null]]
        return new_var_column(spec, capacity, values)
    ba = _open(storage, key, BatchArray)
    want = builtins.bytes if spec.kind == "vlbytes" else builtins.str
    items = _read_batches(key, ba, capacity, spec.kind)
    return new_var_column(spec, capacity, _check_items(key, items, want, spec.nullable))


def delete_var_column(storage: Any, key: str, spec: VarSpec) -> None:
    """Remove the stored leaves of a variable-length column."""
    storage.delete_array(key)
    if spec.kind == "utf8":
        storage.delete_array(key + UTF8_SUFFIX)
    elif spec.kind == "dictionary":
        storage.delete_array(key + DICT_SUFFIX)
