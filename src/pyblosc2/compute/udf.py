"""``LazyUDF`` and ``lazyudf``: a user function computing an array piece by piece, lazily
(python-blosc2's ``(inputs_tuple, output, offset)`` protocol), plugged into the engine as a
source (:class:`UDFSource`) so that ``compute`` (into a file with ``urlpath=``), slices,
``np.asarray``, the reductions, ``where`` and ``to_dask`` work on it under the memory bound.

The function is called once per piece of the result — the pieces follow the result's chunks
(``chunks=`` given to ``lazyudf``, else those of the first chunked input of the result's
shape, else the automatic ones), intersected with the selection being computed — with the
inputs' items over the piece (numpy arrays; an input of a smaller shape broadcasts, as
numpy's, and keeps its own axes), scalars and other objects as they are, an empty ``output``
of the piece's shape and ``offset``, the piece's first index. A plain Python function is
called by one thread at a time, as python-blosc2 calls it (the inputs are read and the
results compressed on the engine's threads); a :class:`~pyblosc2.dsl.DSLKernel` runs on
all of them, element by element (its index symbols and control flow as python-blosc2's),
by the numba route or the numpy one (``jit=``, ``jit_backend=``).

A ``LazyUDF`` keeps what it was made of — ``func``, ``inputs``, ``inputs_dict`` (the DSL's
input names, else ``o0``, ``o1``...), ``dtype``, ``shape`` and ``kwargs`` (the storage
arguments, with python-blosc2's bookkeeping keys ``dtype``, ``shape``, ``jit``,
``jit_backend``, ``in_place``) — for whoever saves it.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> def plus_position(inputs, output, offset):
...     (x,) = inputs
...     output[:] = x + np.arange(offset[0], offset[0] + len(x))
>>> u = lazyudf(plus_position, (asarray(np.zeros(10), chunks=(4,), blocks=(2,)),), np.float64)
>>> u[3:7].tolist(), float(u.sum()), type(u + 1).__name__
([3.0, 4.0, 5.0, 6.0], 45.0, 'LazyExpr')
"""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._threads import default_nthreads
from ..dsl import DSLKernel, DSLSyntaxError
from ..dsl.run import BACKENDS
from ..errors import ParamError, ParamTypeError
from ..ndarray.build import new_array
from ..ndarray.ndarray import NDArray
from ..ndarray.partition import parse_geometry
from .lazyarray import _STORAGE_KEYS, LazyArray
from .operands import chunks_of, dtype_of, is_array, part, shape_of
from .plan import Plan, memory_bound
from .selection import Selection, piece_boxes

__all__ = ["UDF_TEMPS", "LazyUDF", "UDFSource", "lazyudf"]

#: temporaries (of a piece's size) a plain Python function is allowed for in the memory plan
#: (``output[:] = a * 2 + b`` makes two)
UDF_TEMPS = 2
_TUNING = ("fp_accuracy", "strict_miniexpr")


def _as_input(v: Any) -> Any:
    """An input as the function gets it: lists and tuples as numpy arrays, an object with
    an ``_operand_`` method (a CTable column) as what it gives, the rest as is."""
    hook = getattr(type(v), "_operand_", None)
    if hook is not None:
        return hook(v)
    return np.asarray(v) if isinstance(v, list | tuple) else v


def _broadcasts(op_shape: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    lead = len(shape) - len(op_shape)
    return lead >= 0 and all(n in (1, m) for n, m in zip(op_shape, shape[lead:], strict=True))


def _merge(base: Any, new: Any) -> Any:
    """python-blosc2's merge of compression parameters (a dict update; objects as dicts)."""
    if base is None or new is None:
        return new if base is None else base
    as_dict = [v.to_dict() if hasattr(v, "to_dict") else dict(v) for v in (base, new)]
    return {**as_dict[0], **as_dict[1]}


class UDFSource:
    """A :class:`LazyUDF` as the engine reads it (the protocol of
    :class:`~pyblosc2.compute.blockwise.Source`)."""

    def __init__(self, udf: LazyUDF, jit: bool | None, backend: str | None) -> None:
        self.udf = udf
        self.shape = udf.shape
        self.dtype = udf.dtype
        self.jit, self.backend = jit, backend
        self.chunks, self.blocks = udf._grid()
        self.arrays = [v for v in udf.inputs if is_array(v)]

    @property
    def nthreads(self) -> int:
        """The largest ``dparams.nthreads`` of the NDArray inputs, else the default."""
        counts = [
            int(v.schunk.dparams.nthreads)
            for v in self.arrays
            if hasattr(getattr(v, "schunk", None), "dparams")
        ]
        return max(counts) if counts else default_nthreads()

    def piece_bytes(self, items: int) -> int:
        """A piece's working set: the inputs' parts (and the chunk each chunked input
        decodes), the function's temporaries, the output piece and its copy."""
        out = 0
        for v in self.arrays:
            itemsize = dtype_of(v).itemsize
            out += min(items, math.prod(shape_of(v))) * max(itemsize, 8)
            chunks = chunks_of(v)
            if chunks is not None:
                out += 2 * math.prod(chunks) * itemsize
        wide = 16 if self.dtype.kind == "c" else 8  # the DSL computes on 64-bit items
        program = self.udf._program
        if program is not None:  # the numpy route: its inputs, locals, a few temporaries
            temps = len(program.locals) + len(program.inputs) + 3
            return out + items * (wide * temps + self.dtype.itemsize)
        return out + items * (wide * UDF_TEMPS + 2 * self.dtype.itemsize)

    def _part(self, v: Any, box: tuple[slice, ...]) -> Any:
        if not is_array(v):
            return v
        if _broadcasts(shape_of(v), self.shape):
            return part(v, box, self.shape)
        got = v[box]  # an input with more axes: its leading ones follow the result's
        return got if isinstance(got, np.ndarray) else np.asarray(got)

    def read(self, key: tuple[slice, ...], cache: dict[Any, Any] | None = None) -> np.ndarray:
        """The result's items at ``key`` (a slice per axis, steps allowed): the function is
        called on their bounding box (``cache``, a piece's buffers, is not used: the
        function's operands are read as it asks)."""
        ranges = [range(*k.indices(n)) for k, n in zip(key, self.shape, strict=True)]
        box = tuple(
            slice(min(r[0], r[-1]), max(r[0], r[-1]) + 1) if len(r) else slice(0, 0) for r in ranges
        )
        shape = tuple(b.stop - b.start for b in box)
        out = self.compute_box(box, shape)
        local = tuple(
            slice(r.start - b.start, None if r.stop - b.start < 0 else r.stop - b.start, r.step)
            for r, b in zip(ranges, box, strict=True)
        )
        if all(r.step == 1 for r in ranges):
            return out
        return np.ascontiguousarray(out[local])

    def compute_box(self, box: tuple[slice, ...], shape: tuple[int, ...]) -> np.ndarray:
        """The function's output over ``box`` (unit steps)."""
        if 0 in shape:
            return np.empty(shape, self.dtype)
        udf = self.udf
        offset = tuple(b.start for b in box)
        parts = tuple(self._part(v, box) for v in udf.inputs)
        if udf._program is not None:
            res = udf.func.evaluate(
                parts, self.dtype, shape, offset, self.shape, self.jit, self.backend
            )
            return np.asarray(res, self.dtype)
        out = np.empty(shape, self.dtype)
        with udf._lock:
            udf.func(parts, out, offset=offset)
        return out


class LazyUDF(LazyArray):
    """A lazily computed user function (python-blosc2's ``LazyUDF``; see :func:`lazyudf`).

    >>> import numpy as np
    >>> def ones(inputs, output, offset):
    ...     output[:] = 1
    >>> LazyUDF(ones, (), np.int8, shape=(2, 3))[1].tolist()
    [1, 1, 1]
    """

    def __init__(
        self,
        func: Any,
        inputs: Sequence[Any] | None,
        dtype: Any,
        shape: Any = None,
        chunked_eval: bool = True,
        jit: bool | None = None,
        jit_backend: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not callable(func):
            raise ParamTypeError(f"a UDF must be callable, got {type(func).__name__}")
        if isinstance(func, DSLKernel) and func.dsl_error is not None:
            raise DSLSyntaxError(
                f"Invalid DSL kernel '{func.__name__}'.\n{func.dsl_error}"
            ) from None
        if inputs is None:
            inputs = ()
        if not isinstance(inputs, Sequence) or isinstance(inputs, str | bytes):
            raise ParamTypeError(f"inputs must be a sequence, got {type(inputs).__name__}")
        unknown = set(kwargs) - _STORAGE_KEYS - {"in_place"}
        if unknown:
            raise ParamError(f"unknown lazyudf() arguments {sorted(unknown)}")
        if jit is not None and not isinstance(jit, bool):
            raise ParamTypeError(f"jit must be None, True or False, got {jit!r}")
        if jit_backend not in BACKENDS:
            raise ParamError(f"jit_backend must be one of {BACKENDS}, got {jit_backend!r}")
        self.func = func
        self.inputs = [_as_input(v) for v in inputs]
        arrays = [shape_of(v) for v in self.inputs if is_array(v)]
        if shape is None:
            if not arrays:
                raise ParamError(
                    "If all inputs are scalars, pass a `shape` argument to indicate the "
                    "output shape"
                )
            try:
                shape = np.broadcast_shapes(*arrays)
            except ValueError:
                raise ParamError(f"the inputs' shapes {arrays} do not broadcast together") from None
        self._shape, self._dtype, _, _ = parse_geometry(shape, dtype, None, None)
        for s in arrays:
            if not _broadcasts(s, self._shape) and len(s) < len(self._shape):
                raise ParamError(
                    f"an input of shape {s} does not fit the result's shape {self._shape}"
                )
        self._program = func.program if isinstance(func, DSLKernel) else None
        names = func.input_names if isinstance(func, DSLKernel) and func.input_names else None
        if self._program is not None and len(self._program.inputs) != len(self.inputs):
            raise ParamError(
                f"DSL kernel {func.__name__!r} takes {len(self._program.inputs)} operand(s) "
                f"({', '.join(self._program.inputs)}), but {len(self.inputs)} were passed."
            )
        if names is None or len(names) != len(self.inputs):
            names = [f"o{i}" for i in range(len(self.inputs))]
        self.inputs_dict = dict(zip(names, self.inputs, strict=True))
        self.chunked_eval = chunked_eval
        self.kwargs = dict(kwargs)
        self.kwargs.update(
            dtype=self._dtype,
            shape=self._shape,
            jit=jit,
            jit_backend=jit_backend,
            in_place=bool(kwargs.get("in_place", False)),
        )
        self._lock = threading.Lock()

    # -- what it is ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the result."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the result."""
        return self._dtype

    def _storage(self) -> dict[str, Any]:
        return {k: v for k, v in self.kwargs.items() if k in _STORAGE_KEYS}

    def _grid(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The chunks and blocks of the result (and of the pieces the function sees)."""
        chunks, blocks = self.kwargs.get("chunks"), self.kwargs.get("blocks")
        if chunks is None and blocks is None:
            for v in self.inputs:
                c = chunks_of(v) if is_array(v) and shape_of(v) == self._shape else None
                b = getattr(v, "blocks", None)
                if c is not None and b is not None and all(c):
                    return tuple(c), tuple(int(x) for x in b)
        _, _, chunks, blocks = parse_geometry(self._shape, self._dtype, chunks, blocks)
        return tuple(chunks), tuple(blocks)

    def _source(self, bound: int) -> UDFSource:
        return UDFSource(self, self.kwargs["jit"], self.kwargs["jit_backend"])

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs describing the UDF."""
        inputs = {
            k: f"<{type(v).__name__}> {shape_of(v)} {dtype_of(v)}" if is_array(v) else str(v)
            for k, v in self.inputs_dict.items()
        }
        return [
            ("type", type(self).__name__),
            ("inputs", inputs),
            ("shape", self.shape),
            ("dtype", self.dtype),
        ]

    @property
    def info(self) -> str:
        """A readable summary (python-blosc2's ``info``)."""
        return "\n".join(f"{k:<7}: {v}" for k, v in self.info_items)

    def __repr__(self) -> str:
        name = getattr(self.func, "__name__", type(self.func).__name__)
        return f"LazyUDF({name}, shape={self.shape}, dtype={self.dtype})"

    # -- computing ------------------------------------------------------------------------------
    def _tuned(self, jit: Any, backend: Any) -> LazyUDF:
        if jit is None and backend is None:
            return self
        if jit is not None and not isinstance(jit, bool):
            raise ParamTypeError(f"jit must be None, True or False, got {jit!r}")
        if backend not in BACKENDS:
            raise ParamError(f"jit_backend must be one of {BACKENDS}, got {backend!r}")
        new = copy.copy(self)
        new.kwargs = dict(self.kwargs)
        if jit is not None:
            new.kwargs["jit"] = jit
        if backend is not None:
            new.kwargs["jit_backend"] = backend
        return new

    def compute(self, item: Any = (), **kwargs: Any) -> Any:
        """The result (``item``: a selection of it) computed into a new NDArray, piece by
        piece; storage arguments are those given to :func:`lazyudf` (all but ``urlpath``)
        updated by ``kwargs`` (``urlpath=`` streams it into a file, which must not be the
        UDF's own), ``out=`` an array to fill, ``max_memory=`` the memory bound, ``jit=``
        and ``jit_backend=`` the route of a DSL kernel.

        >>> import numpy as np
        >>> def double(inputs, output, offset):
        ...     output[:] = inputs[0] * 2
        >>> lazyudf(double, (np.arange(5),), np.int64).compute(item=slice(1, 4))[:].tolist()
        [2, 4, 6]
        """
        for k in _TUNING:
            kwargs.pop(k, None)
        udf = self._tuned(kwargs.pop("jit", None), kwargs.pop("jit_backend", None))
        urlpath = kwargs.get("urlpath")
        if urlpath is not None and urlpath == self.kwargs.get("urlpath"):
            raise ParamError("Cannot use the same urlpath for the LazyUDF and its result")
        storage = {k: v for k, v in self._storage().items() if k != "urlpath"}
        if kwargs.get("out") is not None:
            storage = {}  # an output of its own: the UDF's storage arguments do not apply
        elif item not in ((), Ellipsis):  # a selection has a shape of its own
            storage = {k: v for k, v in storage.items() if k not in ("chunks", "blocks")}
        for k in ("cparams", "dparams"):
            if k in kwargs and k in storage:
                kwargs[k] = _merge(storage[k], kwargs[k])
        storage.update(kwargs)
        if self.kwargs["in_place"]:
            return udf._in_place(item, storage)
        return LazyArray.compute(udf, item, **storage)

    def __getitem__(self, item: Any) -> Any:
        if self.kwargs["in_place"]:
            return self._in_place(item, None)
        return self._getitem(item, memory_bound())

    def _in_place(self, item: Any, storage: dict[str, Any] | None) -> Any:
        """python-blosc2's ``in_place=True``: the function writes into the whole output
        (``output``) at ``offset`` itself, once per chunk, one call at a time. ``storage``
        None: ``udf[item]`` (a numpy array, computed whole)."""
        storage = None if storage is None else dict(storage)
        out = None if storage is None else storage.pop("out", None)
        bound = memory_bound(None if storage is None else storage.pop("max_memory", None))
        nbytes = math.prod(self.shape) * self.dtype.itemsize
        chunks, blocks = self._grid()
        target: Any
        if storage is None or out is not None:
            Plan.make("an in-place UDF as numpy", nbytes if out is None else 0, 0, 1, bound)
            target = out if out is not None else np.zeros(self.shape, self.dtype)
        else:
            if item not in ((), Ellipsis, slice(None)):
                raise NotImplementedError("compute(item=...) of an in_place LazyUDF")
            if not storage.get("urlpath"):
                Plan.make("an in-place UDF into memory", nbytes, 0, 1, bound)
            chunks = storage.pop("chunks", None) or chunks
            blocks = storage.pop("blocks", None) or blocks
            target = new_array(NDArray, self.shape, self.dtype, chunks, blocks, storage)
        src = self._source(bound)
        for region in piece_boxes(Selection.everything(self.shape), chunks, 1):
            parts = tuple(src._part(v, region) for v in self.inputs)
            with self._lock:
                self.func(parts, target, offset=tuple(r.start for r in region))
        if storage is not None:
            return target
        return target if item in ((), Ellipsis) else target[item]

    def to_dask(self, chunks: Any = None) -> Any:
        """The UDF as a dask array computing it piece by piece (needs dask)."""
        from .dask_adapter import to_dask

        return to_dask(self, chunks)

    # -- not here -------------------------------------------------------------------------------
    def sort(self, order: Any = None) -> Any:
        """python-blosc2 sorts filters only: a UDF has none."""
        raise NotImplementedError("sort() of a LazyUDF (only filters of structured arrays sort)")

    def argsort(self, order: Any = None) -> Any:
        """python-blosc2 sorts filters only: a UDF has none."""
        raise NotImplementedError("argsort() of a LazyUDF (only filters of structured arrays sort)")


def lazyudf(
    func: Any,
    inputs: Sequence[Any] | None,
    dtype: Any = None,
    shape: Any = None,
    chunked_eval: bool = True,
    jit: bool | None = None,
    jit_backend: str | None = None,
    **kwargs: Any,
) -> LazyUDF:
    """A :class:`LazyUDF` of ``func`` (``func(inputs_tuple, output, offset)`` fills
    ``output``, or a :class:`~pyblosc2.dsl.DSLKernel`) over ``inputs`` (arrays, scalars,
    other objects). ``dtype`` is required unless ``func`` is a DSL kernel (then numpy's
    promotion of the inputs' dtypes); ``shape`` defaults to the inputs' broadcast shape;
    ``kwargs`` are storage arguments (``chunks``, ``blocks``, ``cparams``...) and
    ``in_place``; ``jit``/``jit_backend`` choose a DSL kernel's route.

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> def add(inputs, output, offset):
    ...     a, b = inputs
    ...     output[:] = a + b
    >>> a = asarray(np.linspace(0, 10, 9).reshape(3, 3))
    >>> lazyudf(add, [a, a], np.float64)[:].tolist()[1]
    [7.5, 10.0, 12.5]
    """
    if isinstance(func, DSLKernel) and func.dsl_error is not None:
        raise DSLSyntaxError(f"Invalid DSL kernel '{func.__name__}'.\n{func.dsl_error}") from None
    if dtype is None:
        if not isinstance(func, DSLKernel):
            raise ParamTypeError("dtype is required for non-DSL UDFs.")
        dtypes = [np.dtype(v.dtype) for v in (inputs or ()) if hasattr(v, "dtype")]
        if not dtypes:
            raise ParamTypeError(
                "Cannot infer dtype for DSL kernel with no array inputs; pass dtype= explicitly."
            )
        dtype = np.result_type(*dtypes)
    return LazyUDF(func, inputs, dtype, shape, chunked_eval, jit, jit_backend, **kwargs)
