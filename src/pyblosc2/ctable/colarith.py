"""The arithmetic, bitwise and logical operators of a CTable column (a mixin of
:class:`~pyblosc2.ctable.column.Column`): lazy expressions over the column's operand (its
physical rows; a nullable column's null-aware form). Comparisons stay with the column."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ColumnArithmetic"]


class ColumnArithmetic:
    """``+ - * / // % **``, unary ``- + abs``, ``& | ^ ~`` of a column."""

    _operand: Callable[[], Any]  # the column's operand (Column._operand)
    _other: Callable[[Any], Any]  # another operand as the engine takes it (Column._other)

    def __add__(self, other: Any) -> Any:
        return self._operand() + self._other(other)

    def __radd__(self, other: Any) -> Any:
        return self._other(other) + self._operand()

    def __sub__(self, other: Any) -> Any:
        return self._operand() - self._other(other)

    def __rsub__(self, other: Any) -> Any:
        return self._other(other) - self._operand()

    def __mul__(self, other: Any) -> Any:
        return self._operand() * self._other(other)

    def __rmul__(self, other: Any) -> Any:
        return self._other(other) * self._operand()

    def __truediv__(self, other: Any) -> Any:
        return self._operand() / self._other(other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._other(other) / self._operand()

    def __floordiv__(self, other: Any) -> Any:
        return self._operand() // self._other(other)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._other(other) // self._operand()

    def __mod__(self, other: Any) -> Any:
        return self._operand() % self._other(other)

    def __rmod__(self, other: Any) -> Any:
        return self._other(other) % self._operand()

    def __pow__(self, other: Any) -> Any:
        return self._operand() ** self._other(other)

    def __rpow__(self, other: Any) -> Any:
        return self._other(other) ** self._operand()

    def __neg__(self) -> Any:
        return -self._operand()

    def __pos__(self) -> Any:
        return +self._operand()

    def __abs__(self) -> Any:
        return abs(self._operand())

    def __and__(self, other: Any) -> Any:
        return self._operand() & self._other(other)

    def __rand__(self, other: Any) -> Any:
        return self._other(other) & self._operand()

    def __or__(self, other: Any) -> Any:
        return self._operand() | self._other(other)

    def __ror__(self, other: Any) -> Any:
        return self._other(other) | self._operand()

    def __xor__(self, other: Any) -> Any:
        return self._operand() ^ self._other(other)

    def __rxor__(self, other: Any) -> Any:
        return self._other(other) ^ self._operand()

    def __invert__(self) -> Any:
        return ~self._operand()
