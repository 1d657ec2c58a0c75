"""NDArray arithmetic, comparisons and reductions, evaluated chunk by chunk.

Operators (``a + 1``, ``a == b``, ``-a``, ...) and numpy ufuncs called on NDArrays
(``np.sin(a)``) return numpy arrays computed one output chunk at a time, so only the operands'
parts for that chunk are decompressed at once. Reductions (``a.sum(axis=0)``, ``np.max(a)``)
read one chunk at a time and combine partial results, so the array never has to fit in memory;
only the result does. Dtypes follow numpy's rules (python scalars are "weak": ``int8 + 1`` stays
``int8``).

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(20).reshape(4, 5), chunks=(2, 3), blocks=(1, 3))
>>> int(np.sum(a == 7)), (a + 1)[0, :3].tolist(), a.sum(axis=0).tolist()
(1, [1, 2, 3], [30, 34, 38, 42, 46])
"""

from __future__ import annotations

import contextvars
import itertools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._threads import run_parallel
from ..errors import ParamError

__all__ = ["NDArrayOperators", "broadcast_parts", "map_chunks", "normalize_axis"]

#: items per output piece when the output is not partitioned like an operand
_PIECE_ITEMS = 1 << 20


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(v.shape) if isinstance(v, NDArrayOperators | np.ndarray) else np.shape(v)


def normalize_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints, negative counting from the end) as a
    sorted tuple of distinct non-negative axes.

    >>> normalize_axis(None, 3), normalize_axis(-1, 3), normalize_axis((2, 0), 3)
    ((0, 1, 2), (2,), (0, 2))
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int | np.integer):
        axes: tuple[Any, ...] = (axis,)
    elif isinstance(axis, tuple | list):
        axes = tuple(axis)
    else:
        raise ParamError(f"axis must be None, an int or a tuple of ints, got {axis!r}")
    out = []
    for ax in axes:
        if not isinstance(ax, int | np.integer) or not -ndim <= ax < ndim:
            raise ParamError(f"axis {ax!r} is out of bounds for an array of {ndim} dimensions")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ParamError(f"axis {axis!r} repeats an axis")
    return tuple(sorted(out))


def _boxes(shape: tuple[int, ...], chunks: tuple[int, ...]) -> Iterator[tuple[slice, ...]]:
    grid = [range(0, s, c) for s, c in zip(shape, chunks, strict=True)]
    for origin in itertools.product(*grid):
        yield tuple(slice(o, min(o + c, s)) for o, c, s in zip(origin, chunks, shape, strict=True))


def _partition(shape: tuple[int, ...], operands: Sequence[Any]) -> tuple[int, ...]:
    """The piece shape used to walk an output of ``shape``: the chunks of an NDArray operand of
    that very shape when there is one (so each piece decodes one chunk of it), else slabs
    along the first axis of about ``_PIECE_ITEMS`` items."""
    for v in operands:
        if isinstance(v, NDArrayOperators) and v.shape == shape and all(v.chunks):
            return tuple(v.chunks)
    row = math.prod(shape[1:]) or 1
    return (max(1, _PIECE_ITEMS // row), *shape[1:])


def broadcast_parts(operands: Sequence[Any], box: tuple[slice, ...]) -> list[Any]:
    """Each operand's part that broadcasts onto the output region ``box`` (NDArray parts are
    read, numpy parts are views, scalars stay scalars)."""
    parts = []
    for v in operands:
        vs = _shape(v)
        if not vs:
            parts.append(v[()] if isinstance(v, NDArrayOperators) else v)
            continue
        sub = tuple(
            slice(None) if n == 1 else b for b, n in zip(box[len(box) - len(vs) :], vs, strict=True)
        )
        parts.append(v[sub])
    return parts


def map_chunks(
    fn: Callable[..., Any],
    operands: Sequence[Any],
    out: np.ndarray | None = None,
    nthreads: int = 1,
    chunks: tuple[int, ...] | None = None,
) -> np.ndarray:
    """``fn(*operands)`` (broadcasting, numpy semantics) computed one output piece at a time on
    ``nthreads`` threads, into ``out`` or a new numpy array.

    >>> map_chunks(np.add, [np.arange(3), 10]).tolist()
    [10, 11, 12]
    """
    shape = tuple(np.broadcast_shapes(*[_shape(v) for v in operands]))
    if not shape or math.prod(shape) == 0:
        whole = [v[()] if isinstance(v, NDArrayOperators) else v for v in operands]
        res = np.asarray(fn(*whole))
        if out is None:
            return res
        out[...] = res
        return out
    boxes = list(_boxes(shape, chunks or _partition(shape, operands)))
    if out is None:
        # the result dtype is the one numpy gives for these operand dtypes (weak scalars)
        first = np.asarray(fn(*broadcast_parts(operands, boxes[0])))
        out = np.empty(shape, first.dtype)
        out[boxes[0]] = first
        boxes = boxes[1:]
    elif out.shape != shape:
        raise ParamError(f"out has shape {out.shape}, the operation gives {shape}")
    target = out

    ctx = contextvars.copy_context()  # the caller's np.errstate holds in the workers too

    def compute(box: tuple[slice, ...]) -> None:
        target[box] = fn(*broadcast_parts(operands, box))

    def piece(box: tuple[slice, ...]) -> None:
        ctx.copy().run(compute, box)

    run_parallel(piece, boxes, nthreads)
    return target


#: reducing ufunc -> the NDArray method that computes its reduction
_REDUCERS = {
    np.add: "sum",
    np.multiply: "prod",
    np.minimum: "min",
    np.maximum: "max",
    np.fmin: "min",
    np.fmax: "max",
    np.logical_or: "any",
    np.logical_and: "all",
}
#: reduction name -> (the per-chunk numpy function, the ufunc combining partial results)
_PARTIALS: dict[str, tuple[Callable[..., Any], np.ufunc]] = {
    "sum": (np.sum, np.add),
    "prod": (np.prod, np.multiply),
    "min": (np.min, np.minimum),
    "max": (np.max, np.maximum),
    "any": (np.any, np.logical_or),
    "all": (np.all, np.logical_and),
}


def _binary(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[..., Any]:
    def method(self: NDArrayOperators, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        operands = [other, self] if reflected else [self, other]
        return map_chunks(op, operands, nthreads=self._op_nthreads())

    method.__name__ = f"__{'r' if reflected else ''}{op.__name__.strip('_')}__"
    return method


def _operand_ok(v: Any) -> bool:
    return isinstance(v, NDArrayOperators | np.ndarray | np.generic | int | float | complex | bool)


class NDArrayOperators:
    """Operators and reductions, mixed into :class:`~pyblosc2.NDArray` (which provides
    ``shape``, ``chunks``, ``dtype``, ``schunk`` and basic-slice ``__getitem__``).

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> a = asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> (a * a - 1).tolist(), a.mean(axis=1).tolist(), float(a.std())
    ([[0.0, 3.0], [8.0, 15.0]], [1.5, 3.5], 1.118033988749895)
    """

    schunk: Any
    if TYPE_CHECKING:  # provided by NDArray

        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def chunks(self) -> tuple[int, ...]: ...
        @property
        def dtype(self) -> np.dtype: ...

    __hash__ = object.__hash__  # defining __eq__ would otherwise make NDArrays unhashable

    def __getitem__(self, key: Any) -> Any:  # provided by NDArray
        raise NotImplementedError

    def _op_nthreads(self) -> int:
        return int(self.schunk.dparams.nthreads)

    # -- numpy protocol ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if not all(_operand_ok(v) for v in inputs):
            return NotImplemented
        out = kwargs.pop("out", None)
        if method == "__call__" and ufunc.nout == 1 and out is None:
            return map_chunks(
                lambda *xs: ufunc(*xs, **kwargs), list(inputs), nthreads=self._op_nthreads()
            )
        if (
            method == "reduce"
            and ufunc in _REDUCERS
            and out is None
            and len(inputs) == 1
            and set(kwargs) <= {"axis", "dtype", "keepdims"}
        ):
            kwargs.setdefault("axis", 0)  # ufunc.reduce's default, unlike the methods'
            return getattr(self, _REDUCERS[ufunc])(**kwargs)
        # anything else (other methods, several outputs, out=): numpy on decompressed operands
        args = [np.asarray(v) if isinstance(v, NDArrayOperators) else v for v in inputs]
        if out is not None:
            kwargs["out"] = tuple(
                np.asarray(o) if isinstance(o, NDArrayOperators) else o for o in out
            )
            if any(isinstance(o, NDArrayOperators) for o in out):
                raise NotImplementedError("ufuncs writing into an NDArray out=")
        return getattr(ufunc, method)(*args, **kwargs)

    # -- operators --------------------------------------------------------------------------
    __add__ = _binary(operator.add)
    __radd__ = _binary(operator.add, reflected=True)
    __sub__ = _binary(operator.sub)
    __rsub__ = _binary(operator.sub, reflected=True)
    __mul__ = _binary(operator.mul)
    __rmul__ = _binary(operator.mul, reflected=True)
    __truediv__ = _binary(operator.truediv)
    __rtruediv__ = _binary(operator.truediv, reflected=True)
    __floordiv__ = _binary(operator.floordiv)
    __rfloordiv__ = _binary(operator.floordiv, reflected=True)
    __mod__ = _binary(operator.mod)
    __rmod__ = _binary(operator.mod, reflected=True)
    __pow__ = _binary(operator.pow)
    __rpow__ = _binary(operator.pow, reflected=True)
    __and__ = _binary(operator.and_)
    __rand__ = _binary(operator.and_, reflected=True)
    __or__ = _binary(operator.or_)
    __ror__ = _binary(operator.or_, reflected=True)
    __xor__ = _binary(operator.xor)
    __rxor__ = _binary(operator.xor, reflected=True)
    __lt__ = _binary(operator.lt)
    __le__ = _binary(operator.le)
    __gt__ = _binary(operator.gt)
    __ge__ = _binary(operator.ge)
    __eq__ = _binary(operator.eq)
    __ne__ = _binary(operator.ne)

    def __neg__(self) -> np.ndarray:
        return map_chunks(np.negative, [self], nthreads=self._op_nthreads())

    def __pos__(self) -> np.ndarray:
        return map_chunks(np.positive, [self], nthreads=self._op_nthreads())

    def __abs__(self) -> np.ndarray:
        return map_chunks(np.absolute, [self], nthreads=self._op_nthreads())

    def __invert__(self) -> np.ndarray:
        return map_chunks(np.invert, [self], nthreads=self._op_nthreads())

    # -- layout (``.T``, ``.mT`` and ``@``: ndarray/linalg_members.py) ------------------------
    def transpose(self, *axes: Any) -> np.ndarray:
        """The array with its axes permuted (reversed by default), as ``np.transpose``."""
        nd = len(self.shape)
        perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], int | np.integer) else axes
        perm = tuple(range(nd))[::-1] if perm in ((), None) else tuple(perm)
        ok = all(isinstance(p, int | np.integer) and -nd <= p < nd for p in perm)
        if not ok or sorted(int(p) % nd for p in perm) != list(range(nd)):
            raise ParamError(f"axes must be a permutation of {nd} axes, got {perm}")
        return np.transpose(self[...], perm)

    # -- reductions -------------------------------------------------------------------------
    def _reduce(
        self, name: str, axis: Any, dtype: Any, out: Any, keepdims: bool, **unsupported: Any
    ) -> Any:
        if unsupported:
            raise NotImplementedError(f"{name}() with {sorted(unsupported)}")
        axes = normalize_axis(axis, len(self.shape))
        func, combine = _PARTIALS[name]
        extra = {} if name in ("min", "max", "any", "all") else {"dtype": dtype}
        if not self.shape or 0 in self.shape:  # no chunk to walk: numpy on the (tiny) array
            res = func(self[...], axis=axes, keepdims=keepdims, **extra)
            return _into(res, out)
        kept = tuple(1 if d in axes else n for d, n in enumerate(self.shape))
        if name in ("min", "max"):
            # any member of each reduced set is a valid start: take index 0 of reduced axes
            acc = np.array(
                self[
                    tuple(slice(0, 1) if d in axes else slice(None) for d in range(len(self.shape)))
                ]
            )
            acc = acc.reshape(kept)
        else:
            res_dtype = func(np.zeros((1,) * len(self.shape), self.dtype), **extra).dtype
            acc = np.full(kept, name in ("prod", "all"), res_dtype)
            extra = {"dtype": res_dtype} if name in ("sum", "prod") else {}

        def partial(box: tuple[slice, ...]) -> tuple[tuple[slice, ...], Any]:
            region = tuple(slice(0, 1) if d in axes else b for d, b in enumerate(box))
            return region, func(self[box], axis=axes, keepdims=True, **extra)

        boxes = _boxes(self.shape, tuple(self.chunks))
        for region, value in run_parallel(partial, boxes, self._op_nthreads()):
            combine(acc[region], value, out=acc[region])
        res = acc if keepdims else acc.reshape([n for d, n in enumerate(kept) if d not in axes])
        return _into(res if res.ndim else res[()], out)

    def sum(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        """The sum over ``axis`` (all axes by default), as ``np.sum``.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> a = asarray(np.arange(6, dtype=np.int8).reshape(2, 3))
        >>> int(a.sum()), a.sum(axis=1).tolist(), a.sum(axis=0, keepdims=True).shape
        (15, [3, 12], (1, 3))
        """
        return self._reduce("sum", axis, dtype, out, keepdims, **kw)

    def prod(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        """The product over ``axis``, as ``np.prod``.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> asarray(np.arange(1, 7).reshape(2, 3)).prod(axis=0).tolist()
        [4, 10, 18]
        """
        return self._reduce("prod", axis, dtype, out, keepdims, **kw)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        """The minimum over ``axis``, as ``np.min`` (NaN propagates).

        >>> import numpy as np; from pyblosc2 import asarray
        >>> asarray(np.array([[3, 1], [2, 5]])).min(axis=1).tolist()
        [1, 2]
        """
        return self._reduce("min", axis, None, out, keepdims, **kw)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        """The maximum over ``axis``, as ``np.max`` (NaN propagates).

        >>> import numpy as np; from pyblosc2 import asarray
        >>> int(asarray(np.array([[3, 1], [2, 5]])).max())
        5
        """
        return self._reduce("max", axis, None, out, keepdims, **kw)

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        """Whether any item over ``axis`` is true, as ``np.any``.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> asarray(np.array([[0, 0], [0, 3]])).any(axis=1).tolist()
        [False, True]
        """
        return self._reduce("any", axis, None, out, keepdims, **kw)

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        """Whether all items over ``axis`` are true, as ``np.all``.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> bool(asarray(np.array([1, 2, 0])).all())
        False
        """
        return self._reduce("all", axis, None, out, keepdims, **kw)

    def mean(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        """The mean over ``axis``, as ``np.mean`` (accumulated in float64 for integers and
        low-precision floats).

        >>> import numpy as np; from pyblosc2 import asarray
        >>> asarray(np.arange(6).reshape(2, 3)).mean(axis=0).tolist()
        [1.5, 2.5, 3.5]
        """
        axes = normalize_axis(axis, len(self.shape))
        count = math.prod(self.shape[d] for d in axes)
        res_dtype = np.mean(np.zeros(1, self.dtype), dtype=dtype).dtype
        acc_dtype = np.result_type(res_dtype, np.float64) if res_dtype.kind in "fc" else res_dtype
        total = self._reduce("sum", axes, acc_dtype, None, keepdims, **kw)
        with np.errstate(invalid="ignore", divide="ignore"):
            res = np.asarray(np.true_divide(total, count)).astype(res_dtype)
        return _into(res if res.ndim else res[()], out)

    def var(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: int = 0,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        """The variance over ``axis`` (two passes: the mean, then squared deviations chunk by
        chunk), as ``np.var``.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> asarray(np.array([[1.0, 3.0], [2.0, 2.0]])).var(axis=1).tolist()
        [1.0, 0.0]
        """
        if kw:
            raise NotImplementedError(f"var() with {sorted(kw)}")
        axes = normalize_axis(axis, len(self.shape))
        count = math.prod(self.shape[d] for d in axes)
        res_dtype = np.var(np.zeros(2, self.dtype), dtype=dtype).dtype
        if not self.shape or 0 in self.shape:
            with np.errstate(invalid="ignore", divide="ignore"):
                res = np.var(self[...], axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims)
            return _into(res, out)
        mean = np.asarray(self.mean(axes, np.result_type(self.dtype, np.float64), keepdims=True))
        acc = np.zeros(
            mean.shape,
            np.float64 if res_dtype.kind != "f" else np.result_type(res_dtype, np.float64),
        )
        acc_dtype = acc.dtype

        def partial(box: tuple[slice, ...]) -> tuple[tuple[slice, ...], Any]:
            region = tuple(slice(0, 1) if d in axes else b for d, b in enumerate(box))
            dev = self[box] - mean[region]
            sq = (dev * np.conj(dev)).real if dev.dtype.kind == "c" else dev * dev
            return region, np.sum(sq, axis=axes, keepdims=True, dtype=acc_dtype)

        for region, value in run_parallel(
            partial, _boxes(self.shape, tuple(self.chunks)), self._op_nthreads()
        ):
            acc[region] += value
        with np.errstate(invalid="ignore", divide="ignore"):
            res = (acc / max(count - ddof, 0)).astype(res_dtype)
        if not keepdims:
            res = res.reshape([n for d, n in enumerate(res.shape) if d not in axes])
        return _into(res if res.ndim else res[()], out)

    def std(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: int = 0,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        """The standard deviation over ``axis``, as ``np.std``.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> float(asarray(np.array([1.0, 3.0])).std())
        1.0
        """
        res = np.sqrt(self.var(axis, dtype, None, ddof, keepdims, **kw))
        return _into(res, out)


def _into(res: Any, out: Any) -> Any:
    if out is None:
        return res
    if isinstance(out, NDArrayOperators):
        raise NotImplementedError("reductions into an NDArray out= (pass a numpy array)")
    out[...] = res
    return out
