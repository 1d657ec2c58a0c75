"""python-blosc2's NDArray members beyond reading and writing boxes: parameters and
geometry (``cparams``, ``ext_shape``, ``chunksize``...), structured-dtype fields, ``slice``,
``reshape``, ``take``, ``oindex``, ``append``, ``tobytes``, ``argsort``, ``info_items`` and
the context manager.

:class:`NDArrayMembers` extends :class:`~.core.ArrayCore` and is a base of
:class:`~pyblosc2.NDArray`; its methods that make new arrays build them of the class of
``self`` (:mod:`.build`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import ParamError, ParamTypeError
from ..params import CParams, DParams
from ..schunk import format_nbytes
from .build import asarray_of, empty_of
from .core import ArrayCore
from .fancy import OIndex, gather_flat, take_numpy
from .geometry import Geometry
from .index_members import NDArrayIndexes
from .indexhook import provider
from .keys import detect_aligned_chunks, process_key
from .lazyhook import engine
from .operand import Operand
from .partition import resolve_shape
from .views import squeeze_view

__all__ = ["NDArrayMembers", "NDField"]

#: ``self``'s class: new arrays are made of it
_Self = TypeVar("_Self", bound="NDArrayMembers")

_FIELD_ASSIGN = 'assign through the field view, e.g. array.fields["{}"][:] = values'


class NDField(Operand):
    """A view of one field of a structured NDArray: reads return that field of the
    selection, writes update only that field; an operand of lazy expressions (``f > 0``,
    ``f[f > 0]``, ``f["f > 0"]``).

    >>> from pyblosc2 import zeros
    >>> a = zeros(3, dtype=[("x", "<f8"), ("n", "<i4")])
    >>> a.fields["n"][1:] = [5, 6]
    >>> a["n"][...], a.fields["x"].dtype
    (array([0, 5, 6], dtype=int32), dtype('float64'))
    """

    def __init__(self, arr: ArrayCore, name: str) -> None:
        self.ndarr = arr
        self.name = name

    @property
    def dtype(self) -> np.dtype:
        """The field's dtype."""
        fields = self.ndarr.dtype.fields
        assert fields is not None
        return fields[self.name][0]

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape (a field selects no items)."""
        return self.ndarr.shape

    @property
    def field(self) -> str:
        """The field's name (python-blosc2's attribute)."""
        return self.name

    @property
    def chunks(self) -> tuple[int, ...]:
        """The array's chunks."""
        return self.ndarr.chunks

    @property
    def blocks(self) -> tuple[int, ...]:
        """The array's blocks."""
        return self.ndarr.blocks

    @property
    def schunk(self) -> Any:
        """The array's super-chunk."""
        return self.ndarr.schunk

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.ndarr.ndim

    @property
    def size(self) -> int:
        """The number of items."""
        return self.ndarr.size

    def __len__(self) -> int:
        return len(self.ndarr)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str) or (isinstance(key, Operand) and not isinstance(key, ArrayCore)):
            return engine().select(self, key)  # a lazy filter of this field
        out = np.asarray(self.ndarr[key])[self.name]
        return out[()] if out.ndim == 0 else out

    def __setitem__(self, key: Any, value: Any) -> None:
        with self.ndarr.schunk.holding_lock():  # the other fields are read under the same hold
            data = np.asarray(self.ndarr[key])
            data[self.name] = value
            self.ndarr[key] = data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[...]
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"<NDField {self.name!r} shape={self.shape} dtype={self.dtype}>"


class _Fields(Mapping[str, NDField]):
    def __init__(self, arr: ArrayCore) -> None:
        self._arr = arr
        self._names = tuple(arr.dtype.names or ())

    def __getitem__(self, name: str) -> NDField:
        if name not in self._names:
            raise KeyError(name)
        return NDField(self._arr, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __setitem__(self, name: str, value: Any) -> None:
        raise TypeError(_FIELD_ASSIGN.format(name))

    def __repr__(self) -> str:
        return f"fields({list(self._names)})"


class NDArrayMembers(NDArrayIndexes, ArrayCore):
    """The members :class:`~pyblosc2.NDArray` takes from this class."""

    if TYPE_CHECKING:  # provided by NDArray

        def resize(self, newshape: tuple[int, ...]) -> None: ...
        def _resized(
            self, old: Geometry, newshape: tuple[int, ...]
        ) -> tuple[list[int | bytes], Geometry]: ...
        def _place_box(
            self, geo: Geometry, refs: list[int | bytes], lo: tuple[int, ...], value: np.ndarray
        ) -> bool: ...
        def _commit_shape(self, refs: list[int | bytes], geo: Geometry) -> None: ...

    # -- parameters and geometry ----------------------------------------------------------
    @property
    def cparams(self) -> CParams:
        """The compression parameters (those of the super-chunk).

        >>> from pyblosc2 import asarray
        >>> asarray(np.arange(4), cparams={"clevel": 3}).cparams.clevel
        3
        """
        return self.schunk.cparams

    @property
    def dparams(self) -> DParams:
        """The decompression parameters (those of the super-chunk)."""
        return self.schunk.dparams

    @property
    def urlpath(self) -> str | None:
        """Where the array is stored (None in memory)."""
        return self.schunk.urlpath

    @property
    def ext_shape(self) -> tuple[int, ...]:
        """The shape padded to whole chunks.

        >>> from pyblosc2 import zeros
        >>> a = zeros((10, 7), chunks=(4, 4), blocks=(2, 2))
        >>> a.ext_shape, a.ext_chunks, a.chunksize, a.blocksize
        ((12, 8), (4, 4), 128, 32)
        """
        return self._geometry.ext_shape

    @property
    def ext_chunks(self) -> tuple[int, ...]:
        """The chunk shape padded to whole blocks."""
        return self._geometry.ext

    @property
    def chunksize(self) -> int:
        """Bytes per (padded) chunk, uncompressed."""
        return self._geometry.chunk_nbytes

    @property
    def blocksize(self) -> int:
        """Bytes per block, uncompressed."""
        return self._geometry.block_nbytes

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """The summary as ``(name, value)`` pairs, sizes also human readable.

        >>> from pyblosc2 import asarray
        >>> dict(asarray(np.arange(16, dtype=np.int32)).info_items)["nbytes"]
        '64 (64 B)'
        """
        return [
            ("type", type(self).__name__),
            ("shape", self.shape),
            ("chunks", self.chunks),
            ("blocks", self.blocks),
            ("dtype", self.dtype),
            ("nbytes", format_nbytes(self.nbytes)),
            ("cbytes", format_nbytes(self.cbytes)),
            ("cratio", f"{self.cratio:.2f}x"),
            ("cparams", self.cparams),
            ("dparams", self.dparams),
        ]

    def get_chunk(self, nchunk: int) -> bytes:
        """The compressed bytes of chunk ``nchunk`` (as the super-chunk's ``get_chunk``)."""
        return self.schunk.get_chunk(nchunk)

    # -- context manager ------------------------------------------------------------------
    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    # -- fields ---------------------------------------------------------------------------
    @property
    def fields(self) -> Mapping[str, NDField]:
        """The fields of a structured dtype as :class:`NDField` views (empty otherwise).

        >>> from pyblosc2 import asarray
        >>> a = asarray(np.array([(1, 2.0)], dtype=[("i", "<i8"), ("f", "<f8")]))
        >>> list(a.fields), a.fields["f"][0]
        (['i', 'f'], np.float64(2.0))
        """
        return _Fields(self)

    # -- new arrays from this one ---------------------------------------------------------
    def _same_cparams(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        if "cparams" not in kwargs:
            cp = self.cparams
            kwargs["cparams"] = {
                "codec": cp.codec,
                "clevel": cp.clevel,
                "filters": cp.filters,
                "filters_meta": cp.filters_meta,
                "nthreads": cp.nthreads,
            }
        return kwargs

    def slice(self: _Self, key: Any, **kwargs: Any) -> _Self:
        """``self[key]`` as a new NDArray (``kwargs`` as for :func:`~pyblosc2.empty`; codec,
        clevel and filters are this array's unless ``cparams`` is given). A selection of
        whole chunks, kept with the same partition, copies the compressed chunks.

        >>> from pyblosc2 import asarray
        >>> b = asarray(np.arange(24).reshape(4, 6), chunks=(2, 3), blocks=(1, 3))
        >>> c = b.slice((slice(2, 4), slice(0, 3)))
        >>> c.shape, c[...].tolist()
        ((2, 3), [[12, 13, 14], [18, 19, 20]])
        """
        recompress = "cparams" in kwargs  # new cparams: chunks cannot be copied as they are
        kwargs = self._same_cparams(kwargs)
        try:
            norm, mask = process_key(key, self.shape)
        except (TypeError, IndexError):
            norm, mask = (), ()
        same = kwargs.get("chunks") in (None, self.chunks) and kwargs.get("blocks") in (
            None,
            self.blocks,
        )
        if (
            norm
            and not any(mask)
            and all(isinstance(k, slice) and k.step in (None, 1) for k in norm)
            and same
            and not recompress
            and all(k.stop > k.start for k in norm)
        ):
            found = detect_aligned_chunks(norm, self.shape, self.chunks)
            if found:
                kwargs.pop("chunks", None)
                kwargs.pop("blocks", None)
                shape = tuple(k.stop - k.start for k in norm)
                out = empty_of(type(self), shape, self.dtype, self.chunks, self.blocks, **kwargs)
                refs: list[int | bytes] = [self.schunk.get_chunk(n) for n in found]
                if self.cparams.codec == out.cparams.codec and len(refs) == out.schunk.nchunks:
                    out.schunk.set_chunks(refs)
                    return out
                out[...] = self[tuple(norm)]
                return out
        return asarray_of(type(self), np.asarray(self[key]), **kwargs)

    def reshape(self: _Self, *shape: Any, c_order: bool = True, **kwargs: Any) -> _Self:
        """A new array with the same items in ``shape`` (a tuple, or the dimensions as
        arguments as numpy takes them; one entry may be -1), filled chunk by chunk;
        ``c_order=False`` fills the new chunks, in order, with consecutive runs of items
        (python-blosc2's insertion order). ``kwargs`` as for :func:`~pyblosc2.empty`.

        >>> from pyblosc2 import arange
        >>> arange(6).reshape((2, 3))[...]
        array([[0, 1, 2],
               [3, 4, 5]])
        >>> arange(6).reshape(3, -1).shape
        (3, 2)
        >>> arange(4).reshape((2, 2), c_order=False, chunks=(1, 2), blocks=(1, 1))[1]
        array([2, 3])
        """
        if not shape:
            raise ParamTypeError("reshape() needs a shape")
        shape = resolve_shape(self.size, shape[0] if len(shape) == 1 else shape)
        out = empty_of(type(self), shape, self.dtype, **self._same_cparams(kwargs))
        if not out.size:
            return out
        if not out.ndim:
            out[()] = self[(0,) * self.ndim] if self.ndim else self[()]
            return out
        done = 0
        for coords in itertools.product(*[range(g) for g in out._geometry.grid]):
            box = tuple(
                slice(c * k, min((c + 1) * k, n))
                for c, k, n in zip(coords, out.chunks, shape, strict=True)
            )
            dims = [b.stop - b.start for b in box]
            if c_order:
                flat = np.ravel_multi_index(
                    np.ix_(*[np.arange(b.start, b.stop) for b in box]), shape
                )
            else:
                flat = np.arange(done, done + math.prod(dims))
                done += flat.size
            out[box] = gather_flat(self, flat.reshape(-1)).reshape(dims)
        return out

    def tobytes(self) -> bytes:
        """The items as bytes in C order (as ``numpy.ndarray.tobytes``).

        >>> from pyblosc2 import asarray
        >>> asarray(np.arange(3, dtype=np.uint8)).tobytes()
        b'\\x00\\x01\\x02'
        """
        return np.ascontiguousarray(self[()]).tobytes()

    def argsort(self: _Self, order: str | list[str] | None = None, **kwargs: Any) -> _Self:
        """The stable sorting permutation of a 1-d array as a new NDArray (``order`` names
        fields of a structured dtype; ``kwargs`` as for :func:`~pyblosc2.asarray`). The
        items are sorted in memory.

        >>> from pyblosc2 import asarray
        >>> asarray(np.array([7, 2, 9, 2])).argsort()[...]
        array([1, 3, 0, 2])
        """
        return self._sorted(np.argsort, "argsort", order, kwargs)

    def sort(self: _Self, order: str | list[str] | None = None, **kwargs: Any) -> _Self:
        """The items of a 1-d array in stable sorted order as a new NDArray (``order`` names
        fields of a structured dtype; ``kwargs`` as for :func:`~pyblosc2.asarray`). The
        items are sorted in memory.

        >>> from pyblosc2 import asarray
        >>> asarray(np.array([7, 2, 9, 2])).sort()[...]
        array([2, 2, 7, 9])
        """
        return self._sorted(np.sort, "sort", order, kwargs)

    def _sorted(self: _Self, fn: Any, name: str, order: Any, kwargs: dict[str, Any]) -> _Self:
        if self.ndim != 1:
            raise ParamError(f"{name} needs a 1-d array, got {self.ndim} dimensions")
        keys = [order] if isinstance(order, str) else order
        p = provider()
        if keys is not None and p is not None and set(keys) - set(self.dtype.names or ()):
            pos = p.call("order", self, list(keys))  # an expression key (its FULL index)
            return asarray_of(type(self), pos if name == "argsort" else self[()][pos], **kwargs)
        return asarray_of(type(self), fn(self[()], kind="stable", order=order), **kwargs)

    # -- gathers --------------------------------------------------------------------------
    @property
    def oindex(self) -> OIndex:
        """Orthogonal indexing: ``a.oindex[[0, 2], [1, 3]]`` selects rows 0, 2 and columns
        1, 3 (see :class:`~pyblosc2.ndarray.fancy.OIndex`)."""
        return OIndex(self)

    def _take_sparse_normalized(self, indices: np.ndarray, out: np.ndarray | None = None) -> Any:
        return gather_flat(self, indices, out)

    def take(self: _Self, indices: Any, axis: int | None = None) -> _Self:
        """numpy's ``take`` as a new NDArray (see :func:`~pyblosc2.take`)."""
        return asarray_of(type(self), take_numpy(self, indices, axis))

    def squeeze(self: _Self, axis: int | tuple[int, ...] | None = None) -> _Self:
        """A view without the length-1 axes ``axis`` (all of them by default), as
        python-blosc2's ``squeeze`` (see :mod:`.views`).

        >>> from pyblosc2 import zeros
        >>> zeros((1, 3, 1)).squeeze(axis=(0, 2)).shape
        (3,)
        """
        return squeeze_view(self, axis)

    # -- growth ---------------------------------------------------------------------------
    def append(self, values: Any) -> int:
        """Append items to a 1-d array (scalars append one; arrays are flattened); returns
        the new length.

        >>> from pyblosc2 import zeros
        >>> a = zeros(0, dtype=np.int32, chunks=(4,), blocks=(2,))
        >>> a.append([1, 2, 3]), a.append(4), a[...]
        (3, 4, array([1, 2, 3, 4], dtype=int32))
        """
        if self.ndim != 1:
            raise ParamError(f"append needs a 1-d array, got {self.ndim} dimensions")
        if 0 in self.chunks or 0 in self.blocks:
            raise ParamError("cannot append to an array with zero-sized chunks or blocks")
        if isinstance(values, ArrayCore):
            values = values[()]
        new = np.asarray(values, dtype=self.dtype).reshape(-1)
        if not new.size:
            return self.shape[0]
        self.schunk._check_writable()
        with self.schunk.holding_lock():  # the length is read under the lock of the commit
            old = self._geometry
            n = old.shape[0]
            if any(old.shape[d] != 1 for d in self._axes) or not all(old.chunks):
                self._resized(old, (n + new.size,))  # raises the error that says why not
            # One commit that keeps the whole chunks and rewrites the rest (the partial last
            # chunk and the new ones), in time that does not grow with the array: the same
            # chunks as resize then assignment would write. The geometry follows the commit.
            c = old.chunks[0]
            keep = n // c
            data = np.concatenate([self[keep * c : n], new]) if n % c else new
            geo = old.resized((n + new.size,))
            chunks = []
            for i in range(0, data.size, c):
                arr = np.zeros(geo.ext, self.dtype)
                part = data[i : i + c]
                arr[: part.size] = part
                chunks.append(self._compress(arr))
            stored = self._stored_geometry(geo).to_meta().to_bytes()
            self.schunk.replace_tail(keep, chunks, {"b2nd": stored})
        # the length this append made, read under its lock: what the index hook reads next may
        # refresh the handle with appends of other processes (a shared, locked frame)
        size = n + new.size
        p = provider()
        if p is not None:
            p.appended(self, n, new)
        return size
