"""``Operand``: python-blosc2's base class of everything that can take part in a lazy
expression (``NDArray``, ``NDField``, ``LazyExpr``...): the operators, numpy's ufunc protocol,
the reductions and ``where``.

Every operator returns a lazy expression built by the compute engine, reached through
:mod:`.lazyhook` (the engine sits above this package). ``a + 1`` reads nothing; the result is
computed chunk by chunk when it is sliced, converted (``np.asarray``) or ``compute()``-d.
Reductions read the operands chunk by chunk at once and return numpy values (an NDArray when
storage arguments are given), as python-blosc2's do.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(6).reshape(2, 3))
>>> expr = (a + 1) * 2
>>> type(expr).__name__, expr[1].tolist(), int(a.sum()), a.max(axis=0).tolist()
('LazyExpr', [8, 10, 12], 15, [3, 4, 5])
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ..errors import ParamError
from .lazyhook import engine

__all__ = ["Operand"]


def _binary(op: str, reflected: bool = False) -> Any:
    def method(self: Operand, other: Any) -> Any:
        defers = getattr(other, "_defers_nulls", 0) is True  # a nullable CTable operand
        if defers and not reflected and not getattr(self, "_defers_nulls", 0):
            return NotImplemented  # a nullable CTable expression combines by its own rules
        return engine().binary(op, other, self) if reflected else engine().binary(op, self, other)

    method.__name__ = f"__{'r' if reflected else ''}{op}__"
    method.__doc__ = (
        f"``{'other ' + op + ' self' if reflected else 'self ' + op + ' other'}``, lazily."
    )
    return method


def _reduction(name: str) -> Any:
    def method(self: Operand, *args: Any, **kwargs: Any) -> Any:
        params: tuple[str, ...] = ("axis", "dtype", "out", "keepdims")
        if name in ("min", "max", "any", "all", "argmin", "argmax"):
            params = ("axis", "out", "keepdims")
        if name in ("std", "var"):
            params = ("axis", "dtype", "out", "ddof", "keepdims")
        if name in ("cumulative_sum", "cumulative_prod"):
            params = ("axis", "dtype", "include_initial")
        if len(args) > len(params):
            raise ParamError(f"{name}() takes at most {len(params)} positional arguments")
        for p, v in zip(params, args, strict=False):
            if p in kwargs:
                raise ParamError(f"{name}() got {p!r} twice")
            kwargs[p] = v
        return engine().reduce(name, self, kwargs)

    method.__name__ = name
    method.__doc__ = (
        f"The ``{name}`` of the items (over ``axis``; all of them by default), read chunk by "
        "chunk; as python-blosc2's (``keepdims``, ``dtype``, ``out``, ``where``, ``item`` and "
        "storage keywords, which give an NDArray result)."
    )
    return method


class Operand:
    """The operators of python-blosc2's operands: each returns a lazy expression.

    Subclasses provide ``shape``, ``dtype``, ``ndim`` and ``__getitem__``.

    >>> from pyblosc2 import asarray
    >>> a = asarray([1.0, 2.0, 3.0])
    >>> (a > 1.5)[:].tolist(), (-a + a).compute()[:].tolist()
    ([False, True, True], [0.0, 0.0, 0.0])
    """

    _device = "cpu"

    def __getitem__(self, key: Any) -> Any:  # provided by subclasses
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:  # provided by subclasses
        """The shape of the operand (of the result, for an expression)."""
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:  # provided by subclasses
        """The dtype of the operand (of the result, for an expression)."""
        raise NotImplementedError

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        """The module with the array API functions (``pyblosc2``)."""
        return sys.modules[__name__.split(".")[0]]

    @property
    def device(self) -> str:
        """The device the data lives on: always ``"cpu"``."""
        return self._device

    def to_device(self, device: str) -> Any:
        """This operand (only ``"cpu"`` is a device here)."""
        if device != "cpu":
            raise ParamError(f"Unsupported device: {device}. Only 'cpu' is accepted.")
        return self

    # -- numpy protocol ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return engine().ufunc(ufunc, method, inputs, kwargs)

    # -- operators --------------------------------------------------------------------------
    __add__ = _binary("+")
    __radd__ = _binary("+", reflected=True)
    __sub__ = _binary("-")
    __rsub__ = _binary("-", reflected=True)
    __mul__ = _binary("*")
    __rmul__ = __mul__  # python-blosc2 writes ``3 * a`` as ``(o0 * 3)``
    __truediv__ = _binary("/")
    __rtruediv__ = _binary("/", reflected=True)
    __floordiv__ = _binary("//")
    __rfloordiv__ = _binary("//", reflected=True)
    __mod__ = _binary("%")
    __rmod__ = _binary("%", reflected=True)
    __pow__ = _binary("**")
    __rpow__ = _binary("**", reflected=True)
    __and__ = _binary("&")
    __rand__ = _binary("&", reflected=True)
    __or__ = _binary("|")
    __ror__ = _binary("|", reflected=True)
    __xor__ = _binary("^")
    __rxor__ = _binary("^", reflected=True)
    __lshift__ = _binary("<<")
    __rlshift__ = _binary("<<", reflected=True)
    __rshift__ = _binary(">>")
    __rrshift__ = _binary(">>", reflected=True)
    __lt__ = _binary("<")
    __le__ = _binary("<=")
    __gt__ = _binary(">")
    __ge__ = _binary(">=")
    __eq__ = _binary("==")
    __ne__ = _binary("!=")
    # in-place operators build a new expression (the name is rebound), as in python-blosc2
    __iadd__ = __add__
    __isub__ = __sub__
    __imul__ = __mul__
    __itruediv__ = __truediv__
    __ifloordiv__ = __floordiv__
    __imod__ = __mod__
    __ipow__ = __pow__
    __iand__ = __and__
    __ior__ = __or__
    __ixor__ = __xor__
    __ilshift__ = __lshift__
    __irshift__ = __rshift__

    __hash__ = object.__hash__  # defining __eq__ would otherwise make operands unhashable

    def __neg__(self) -> Any:
        return engine().call("negative", self)

    def __pos__(self) -> Any:
        return engine().call("positive", self)

    def __abs__(self) -> Any:
        return engine().call("abs", self)

    def __invert__(self) -> Any:
        return engine().call("bitwise_invert", self)

    # -- scalars ------------------------------------------------------------------------------
    def _one(self, what: str) -> Any:
        if math.prod(self.shape) != 1:
            raise ParamError(f"Cannot convert an array of shape {self.shape} to {what}")
        return np.asarray(self[()]).reshape(())[()]

    def __bool__(self) -> bool:
        if math.prod(self.shape) != 1:
            raise ParamError(f"The truth value of an array of shape {self.shape} is ambiguous.")
        return bool(self._one("bool"))

    def __float__(self) -> float:
        return float(self._one("float"))

    def __int__(self) -> int:
        return int(self._one("int"))

    def __complex__(self) -> complex:
        return complex(self._one("complex"))

    def __index__(self) -> int:
        if not np.issubdtype(self.dtype, np.integer):
            raise ParamError(f"Cannot use an array of dtype {self.dtype} as an index")
        return int(self._one("index"))

    def item(self) -> Any:
        """The only item as a Python scalar (the array must hold one item)."""
        return self._one("a Python scalar").item()

    # -- where and reductions -------------------------------------------------------------------
    def where(self, value1: Any = None, value2: Any = None) -> Any:
        """``value1`` where this boolean operand is true, else ``value2`` (lazily); with
        ``value1`` only, the items of ``value1`` where it is true (a filter).

        >>> from pyblosc2 import asarray
        >>> c = asarray([True, False, True])
        >>> c.where(1, 0)[:].tolist(), c.where(asarray([5, 6, 7]))[:].tolist()
        ([1, 0, 1], [5, 7])
        """
        return engine().where(self, value1, value2)

    sum = _reduction("sum")
    prod = _reduction("prod")
    mean = _reduction("mean")
    std = _reduction("std")
    var = _reduction("var")
    min = _reduction("min")
    max = _reduction("max")
    any = _reduction("any")
    all = _reduction("all")
    argmin = _reduction("argmin")
    argmax = _reduction("argmax")
    cumulative_sum = _reduction("cumulative_sum")
    cumulative_prod = _reduction("cumulative_prod")
