"""``LazyArray``: python-blosc2's base of lazy arrays (``LazyExpr``; ``LazyUDF`` builds on it
too). A subclass says what it computes by giving a *source* (:meth:`LazyArray._source`: an
object with ``shape``, ``dtype``, ``chunks``, ``blocks``, ``nthreads``,
``piece_bytes(items)`` and ``read(key)``, as :class:`~.blockwise.Source`); everything else —
``compute`` into an NDArray (streamed, into a file with ``urlpath=``), ``__getitem__`` and
``np.asarray`` into numpy, the reductions, ``get_chunk``, ``to_dask`` — works on that source
piece by piece under the memory bound (:mod:`.plan`).

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> e = asarray(np.arange(6.0)) * 2
>>> isinstance(e, LazyArray), e.compute()[1:3].tolist(), float(e.sum())
(True, [2.0, 4.0], 30.0)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from ..ndarray.build import new_array
from ..ndarray.constructors import asarray
from ..ndarray.ndarray import NDArray
from ..ndarray.operand import Operand
from ..ndarray.partition import parse_geometry
from .blockwise import Source, into_ndarray, to_ndarray, to_numpy
from .dask_adapter import to_dask
from .operands import operand_key
from .plan import memory_bound
from .reductions import cumulate, reduce
from .saved.mixin import SavedMixin
from .selection import Selection, split_fancy
from .tree import Name

__all__ = ["COMPUTE_KEYWORDS", "LazyArray"]

#: keywords of compute() that are not storage arguments (accepted for python-blosc2's sake)
COMPUTE_KEYWORDS = frozenset({"fp_accuracy", "strict_miniexpr", "jit", "jit_backend", "max_memory"})
_STORAGE_KEYS = frozenset(
    {
        "urlpath",
        "contiguous",
        "mode",
        "mmap_mode",
        "initial_mapping_size",
        "cparams",
        "dparams",
        "storage",
        "meta",
        "chunks",
        "blocks",
        "locking",
        "fingerprint",
        "storage_options",
        "codec",
        "clevel",
        "filters",
        "filters_meta",
        "nthreads",
        "typesize",
        "splitmode",
        "use_dict",
        "blocksize",
        "tuner",
    }
)


def _is_basic(item: Any) -> bool:
    items = item if isinstance(item, tuple) else (item,)
    return all(
        k is None
        or k is Ellipsis
        or isinstance(k, slice)
        or (isinstance(k, int | np.integer) and not isinstance(k, bool))
        for k in items
    )


def _compute_kwargs(kwargs: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The memory bound and the storage arguments of a compute() call."""
    bound = memory_bound(kwargs.pop("max_memory", None))
    # python-blosc2's tuning of its miniexpr kernels: an expression is numexpr's or numpy's
    # here (jit= and jit_backend= choose the route of DSL kernels, in LazyUDF.compute)
    for k in ("fp_accuracy", "strict_miniexpr", "jit", "jit_backend"):
        kwargs.pop(k, None)
    unknown = set(kwargs) - _STORAGE_KEYS
    if unknown:
        raise ParamError(f"unknown compute() arguments {sorted(unknown)}")
    return bound, kwargs


class LazyArray(SavedMixin, ABC, Operand):
    """A lazily computed array (python-blosc2's ``LazyArray``): subclasses give
    :meth:`_source`, ``shape`` and ``dtype``; ``save``, ``to_cframe``, ``vlmeta`` come from
    :class:`~.saved.mixin.SavedMixin`.

    >>> import numpy as np; from pyblosc2 import LazyExpr, asarray
    >>> e = asarray(np.arange(4)) * 3
    >>> isinstance(e, LazyArray), issubclass(LazyExpr, LazyArray), e.ndim, e[-1]
    (True, True, 1, np.int64(9))
    """

    @abstractmethod
    def _source(self, bound: int) -> Any:
        """The source computing this array, its pieces planned under ``bound`` bytes."""

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of items."""
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d lazy array")
        return self.shape[0]

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunks of the result: those of the first chunked operand of the same shape,
        else chosen automatically."""
        return self._partition()[0]

    @property
    def blocks(self) -> tuple[int, ...]:
        """The blocks of the result (see :attr:`chunks`)."""
        return self._partition()[1]

    def _partition(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        src = self._source(memory_bound())
        if src.chunks is not None and src.blocks is not None:
            return tuple(src.chunks), tuple(src.blocks)
        _, _, chunks, blocks = parse_geometry(self.shape, self.dtype, None, None)
        return tuple(chunks), tuple(blocks)

    # -- computing ------------------------------------------------------------------------------
    def compute(self, item: Any = (), **kwargs: Any) -> Any:
        """The array (``item``: a selection of it) computed into a new NDArray, chunk by
        chunk; ``kwargs`` are the storage arguments of the constructors (``urlpath=`` streams
        it into a file), ``out=`` an NDArray or numpy array to fill instead, and
        ``max_memory=`` the memory bound in bytes (default: the machine's available memory).

        >>> import numpy as np; from pyblosc2 import asarray
        >>> (asarray(np.arange(4)) + 1).compute(item=slice(1, 3))[:].tolist()
        [2, 3]
        """
        out = kwargs.pop("out", None)
        if out is None:
            out = getattr(self, "_output", None)
        bound, storage = _compute_kwargs(kwargs)
        if out is not None and not (hasattr(out, "shape") and hasattr(out, "__setitem__")):
            raise ParamTypeError(
                f"out must be an NDArray or a numpy array, got {type(out).__name__}"
            )
        src = self._source(bound)
        if not _is_basic(item):
            value = self._getitem(item, bound)
            if out is not None:
                out[...] = value
                return out
            return asarray(value, **storage)
        sel = Selection.of(item, self.shape)
        if out is not None and tuple(out.shape) != sel.result_shape:
            if math.prod(out.shape) != math.prod(sel.result_shape):
                raise ParamError(f"out has shape {tuple(out.shape)}, the result {sel.result_shape}")
            out[...] = np.reshape(to_numpy(src, sel, bound), out.shape)  # (1,) for a 0-d result
            return out
        if out is not None:
            if storage:
                raise ParamError(
                    f"compute(out=...) takes no storage arguments, got {sorted(storage)}"
                )
            if isinstance(out, np.ndarray):
                to_numpy(src, sel, bound, out=out)
                return out
            if isinstance(out, NDArray):
                return into_ndarray(src, sel, out, bound)
            out[...] = to_numpy(src, sel, bound)
            return out
        return to_ndarray(src, sel, bound, storage)

    def _getitem(self, item: Any, bound: int) -> Any:
        src = self._source(bound)
        if not self.shape and isinstance(item, slice) and item == slice(None):
            item = ()  # python-blosc2 reads expr[:] of a 0-d expression whole
        if _is_basic(item):
            return to_numpy(
                src, Selection.of(item, self.shape), bound, what=f"expr[{item!r}] as numpy"
            )
        sel, local = split_fancy(item, self.shape)
        box = to_numpy(src, sel, bound, what=f"expr[{item!r}] as numpy")
        return box[local]

    def __getitem__(self, item: Any) -> Any:
        return self._getitem(item, memory_bound())

    def slice(self, item: Any) -> NDArray:
        """``item`` of the array computed into a new NDArray (python-blosc2's ``slice``)."""
        return self.compute(item)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[()]
        out = np.asarray(out)
        return out if dtype is None else out.astype(dtype)

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]

    def get_chunk(self, nchunk: int) -> bytes:
        """Chunk ``nchunk`` of the result (in the grid of :attr:`chunks`), computed alone and
        compressed (python-blosc2's ``get_chunk``)."""
        chunks, blocks = self._partition()
        grid = [-(-n // c) for n, c in zip(self.shape, chunks, strict=True)]
        if not 0 <= nchunk < math.prod(grid):
            raise ParamError(f"nchunk {nchunk} is out of range for {math.prod(grid)} chunks")
        coords = np.unravel_index(nchunk, grid)
        region = tuple(
            slice(int(c) * k, min((int(c) + 1) * k, n))
            for c, k, n in zip(coords, chunks, self.shape, strict=True)
        )
        piece = np.asarray(self[region])
        tmp = new_array(NDArray, chunks, self.dtype, chunks, blocks, {})
        ext = np.zeros(tmp._geometry.ext, self.dtype)
        ext[tuple(slice(0, n) for n in piece.shape)] = piece
        return tmp._compress(ext)

    def to_dask(self, chunks: Any = None) -> Any:
        """This array as a dask array, each block computed with ``self[block]`` (needs the
        ``dask`` extra); ``chunks`` default to :attr:`chunks`."""
        return to_dask(self, chunks)

    # -- reductions ---------------------------------------------------------------------------
    def _reduce(self, name: str, **kwargs: Any) -> Any:
        """The reduction ``name`` (see :class:`~pyblosc2.ndarray.operand.Operand`)."""
        axis = kwargs.pop("axis", None)
        dtype = kwargs.pop("dtype", None)
        keepdims = bool(kwargs.pop("keepdims", False))
        out = kwargs.pop("out", None)
        ddof = kwargs.pop("ddof", 0)
        include_initial = bool(kwargs.pop("include_initial", False))
        where = kwargs.pop("where", None)
        item = kwargs.pop("item", ())
        bound, storage = _compute_kwargs(kwargs)
        src = self._source(bound)
        sel = Selection.of(item, self.shape)
        if name in ("cumulative_sum", "cumulative_prod", "cumsum", "cumprod"):
            if keepdims:
                raise ParamError(f"{name}() takes no keepdims")
            res = cumulate(src, sel, name, axis, include_initial, dtype, bound)
        else:
            mask = _mask(where, self.shape, bound)
            if name == "count_nonzero":
                res = reduce(src, sel, "count_nonzero", axis, keepdims, None, 0, bound, mask)
            else:
                res = reduce(src, sel, name, axis, keepdims, dtype, ddof, bound, mask)
        if out is not None:
            out[...] = res
            return out
        if storage and np.ndim(res):
            return asarray(res, **storage)
        return res


def _mask(where: Any, shape: tuple[int, ...], bound: int) -> Source | None:
    """A reduction's ``where=`` as a boolean source of ``shape``."""
    if where is None:
        return None
    if isinstance(where, LazyArray):
        src = where._source(bound)
    elif isinstance(where, np.ndarray | NDArray) or hasattr(where, "shape"):
        src = Source(Name("w"), {"w": where}, tuple(where.shape), np.dtype(bool))
    else:
        raise ParamError(f"where must be a boolean array or expression, got {type(where).__name__}")
    if np.dtype(src.dtype) != np.bool_:
        raise ParamError(f"where must be boolean, got dtype {src.dtype}")
    if tuple(src.shape) != tuple(shape):
        view = _Broadcast(src, shape)
        return Source(Name("w"), {"w": view}, shape, np.dtype(bool))
    return src


class _Broadcast:
    """A source broadcast to a larger shape (read as an array)."""

    def __init__(self, src: Any, shape: tuple[int, ...]) -> None:
        self.src, self.shape, self.dtype = src, shape, np.dtype(bool)

    def __getitem__(self, key: Any) -> np.ndarray:
        k = operand_key(tuple(self.src.shape), key)
        return self.src.read(
            tuple(slice(*s.indices(n)) for s, n in zip(k, self.src.shape, strict=True))
        )
