"""The NDArray members of linear algebra, as python-blosc2 has them: ``a @ b`` (also
``b @ a`` for a numpy array or another array-like ``b``, and ``np.matmul(a, b)``), ``a.T``
(the transpose of a 2-d array) and ``a.mT`` (each matrix of a stack transposed). They return
NDArrays computed chunk by chunk by :mod:`pyblosc2.linalg`.

That package sits a layer above this one: it puts its functions in :data:`LINALG` when it is
imported, so no import goes up the layers; ``import pyblosc2`` does not import it, but sets a
loader here (:func:`set_loader`) that the first of these members calls.
:class:`NDArrayLinalg` is a base of :class:`~pyblosc2.NDArray` placed before its operators'
mixin, whose ``__array_ufunc__`` it extends with ``np.matmul`` only.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParamError

__all__ = ["LINALG", "LINALG_FUNCS", "NDArrayLinalg", "set_loader"]

#: name -> function, filled by :mod:`pyblosc2.linalg` when it is imported
LINALG: dict[str, Callable[..., Any]] = {}
_loader: list[Callable[[], object]] = []

#: python-blosc2's ``linalg_funcs``: the names of its linear-algebra and shape functions
LINALG_FUNCS = [
    "concat",
    "diagonal",
    "expand_dims",
    "matmul",
    "matrix_transpose",
    "outer",
    "permute_dims",
    "squeeze",
    "stack",
    "tensordot",
    "transpose",
    "vecdot",
]


def set_loader(load: Callable[[], object]) -> None:
    """``load()`` imports :mod:`pyblosc2.linalg` (which fills :data:`LINALG`) the first time
    a member needs it."""
    _loader[:] = [load]


def _call(name: str, *args: Any) -> Any:
    fn = LINALG.get(name)
    if fn is None and _loader:
        _loader[0]()
        fn = LINALG.get(name)
    if fn is None:  # only when pyblosc2.ndarray is used without pyblosc2/__init__ (never)
        raise NotImplementedError(f"NDArray {name}: pyblosc2.linalg is not imported")
    return fn(*args)


def _product_operand(v: Any) -> bool:
    """Whether ``@`` takes ``v`` (arrays, sequences, numbers: numpy's rules decide the
    rest); other objects get ``NotImplemented``, so their own ``__rmatmul__`` may answer."""
    return hasattr(v, "shape") or isinstance(v, list | tuple | Number | np.generic)


class NDArrayLinalg:
    """``@``, ``.T`` and ``.mT``, mixed into :class:`~pyblosc2.NDArray`.

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> a = asarray(np.arange(6).reshape(2, 3))
    >>> (a @ a.T)[...]
    array([[ 5, 14],
           [14, 50]])
    >>> (np.ones((1, 2), int) @ a)[...], a.mT.shape
    (array([[3, 5, 7]]), (3, 2))
    """

    if TYPE_CHECKING:  # provided by NDArray

        @property
        def ndim(self) -> int: ...

    def __matmul__(self, other: Any) -> Any:
        if not _product_operand(other):
            return NotImplemented
        return _call("matmul", self, other)

    def __rmatmul__(self, other: Any) -> Any:
        if not _product_operand(other):
            return NotImplemented
        return _call("matmul", other, self)

    @property
    def T(self) -> Any:
        """The transpose of a 2-d array, as a new NDArray (python-blosc2 refuses other
        dimensions; see :attr:`mT`)."""
        if self.ndim != 2:
            raise ParamError(
                f"T only works for 2-dimensional arrays, got {self.ndim} dimensions "
                f"(use mT or permute_dims)"
            )
        return _call("permute_dims", self)

    @property
    def mT(self) -> Any:
        """Each matrix (the last two axes) transposed, as a new NDArray."""
        if self.ndim < 2:
            raise ParamError(
                f"mT only works for N-dimensional arrays with N>=2, got {self.ndim} dimensions"
            )
        return _call("matrix_transpose", self)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2:
            return _call("matmul", *inputs)
        return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)  # type: ignore[misc]
