"""Dotted (nested) column names, as python-blosc2 4.x has them: ``trip.begin.lon`` is the
leaf ``lon`` of the struct-like prefix ``trip.begin``; a backslash escapes a literal dot,
slash or backslash in a segment (``a\\.b`` is one segment ``a.b``).

A dotted column is stored hierarchically: ``_cols/trip/begin/lon``, each segment with
``%``, ``/``, ``.`` and ``\\`` percent-encoded (python-blosc2's storage path). Rows given
as nested mappings (``{"trip": {"begin": {"lon": 1.0}}}``) are flattened to dotted names,
and ``t.trip.begin.lon`` reaches the column through a :class:`NestedNamespace`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ParamError

__all__ = [
    "NestedNamespace",
    "flatten_mapping",
    "join_field_path",
    "namespace_of",
    "relpath",
    "split_field_path",
    "with_dotted_aliases",
]

MAX_DEPTH = 64  # nesting of a row mapping flattened (a deeper one is refused)


def split_field_path(path: str) -> tuple[str, ...]:
    """The segments of a dotted name (a backslash escapes the next character).

    >>> split_field_path("trip.begin.lon"), split_field_path("a\\\\.b.c"), split_field_path("")
    (('trip', 'begin', 'lon'), ('a.b', 'c'), ())
    """
    if path == "":
        return ()
    parts: list[str] = []
    buf: list[str] = []
    escaped = False
    for ch in path:
        if escaped:
            buf.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ".":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    if escaped:
        buf.append("\\")
    parts.append("".join(buf))
    return tuple(parts)


def join_field_path(parts: tuple[str, ...] | list[str]) -> str:
    """The dotted name of ``parts`` (dots, slashes and backslashes in them escaped).

    >>> join_field_path(["a.b", "c"])
    'a\\\\.b.c'
    """
    return ".".join("".join("\\" + ch if ch in "\\./" else ch for ch in p) for p in parts)


def _encode(segment: str) -> str:
    return segment.replace("%", "%25").replace("/", "%2F").replace(".", "%2E").replace("\\", "%5C")


def relpath(name: str) -> str:
    """The storage path of column ``name`` under ``_cols`` (python-blosc2's).

    >>> relpath("trip.begin.lon"), relpath("a/b"), relpath("x\\\\.y")
    ('trip/begin/lon', 'a%2Fb', 'x%2Ey')
    """
    parts = split_field_path(name)
    if not parts or any(p == "" for p in parts):
        raise ParamError(f"column name {name!r}: an empty segment in a dotted name")
    return "/".join(_encode(p) for p in parts)


def flatten_mapping(row: Mapping[Any, Any], names: list[str]) -> Mapping[Any, Any]:
    """``row`` with nested mappings flattened to the dotted names of ``names`` (``row`` itself
    when it has no such keys).

    >>> flatten_mapping({"trip": {"lon": 1.0}, "x": 2}, ["trip.lon", "x"])
    {'trip.lon': 1.0, 'x': 2}
    """
    known = set(names)
    if all(k in known for k in row):
        return row
    prefixes = {join_field_path(split_field_path(n)[:i]) for n in names for i in range(1, 64)}
    out: dict[Any, Any] = {}
    stack: list[tuple[str, Any, int]] = [(k, v, 0) for k, v in reversed(list(row.items()))]
    while stack:
        key, value, depth = stack.pop()
        if (
            isinstance(key, str)
            and key not in known
            and key in prefixes
            and isinstance(value, Mapping)
        ):
            if depth >= MAX_DEPTH:
                raise ParamError(f"a row nested deeper than {MAX_DEPTH} levels")
            for k, v in reversed(list(value.items())):
                child = join_field_path([*split_field_path(key), k]) if isinstance(k, str) else k
                stack.append((child, v, depth + 1))
        else:
            out[key] = value
    return out


class NestedNamespace:
    """``t.trip``: the columns under a dotted prefix (``t.trip.begin.lon`` is the column
    ``trip.begin.lon``).

    >>> import dataclasses, pyblosc2 as pb
    >>> @dataclasses.dataclass
    ... class R:
    ...     trip_lon: float = 0.0
    >>> t = pb.CTable(R, new_data=[(1.5,)])
    >>> t.rename_column("trip_lon", "trip.lon")
    >>> t.trip.lon[:]
    array([1.5])
    """

    def __init__(self, table: Any, prefix: tuple[str, ...]) -> None:
        self._table = table
        self._prefix = prefix

    @property
    def col_names(self) -> list[str]:
        """The names of the columns under this prefix, relative to it (``begin.lon``)."""
        n = len(self._prefix)
        parts = [split_field_path(c) for c in self._table.col_names]
        return [join_field_path(p[n:]) for p in parts if p[:n] == self._prefix and len(p) > n]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        out = namespace_of(self._table, (*self._prefix, name))
        if out is None:
            raise AttributeError(f"no column under {join_field_path([*self._prefix, name])!r}")
        return out

    def __getitem__(self, name: str) -> Any:
        return self.__getattr__(name)

    def __dir__(self) -> list[str]:
        return sorted({split_field_path(c)[0] for c in self.col_names})

    def __repr__(self) -> str:
        return f"NestedNamespace({join_field_path(list(self._prefix))!r}: {self.col_names})"


def namespace_of(table: Any, prefix: tuple[str, ...]) -> Any:
    """The column named by ``prefix`` or the namespace of the columns under it (None when
    there are none)."""
    name = join_field_path(list(prefix))
    names = table.col_names
    if name in names and len(prefix) > 1:
        return table[name]
    n = len(prefix)
    if any(split_field_path(c)[:n] == prefix and len(split_field_path(c)) > n for c in names):
        return NestedNamespace(table, prefix)
    return None


def with_dotted_aliases(expr: str, operands: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``expr`` with each dotted column name replaced by an identifier the expression engine
    takes, and the operands under those identifiers (dotted keys dropped).

    >>> with_dotted_aliases("trip.lon > 1", {"trip.lon": 7, "x": 8})
    ('_dotted0 > 1', {'x': 8, '_dotted0': 7})
    """
    dotted = sorted((n for n in operands if "." in n or "\\" in n), key=len, reverse=True)
    if not dotted:
        return expr, operands
    out = {n: a for n, a in operands.items() if n not in dotted}
    for i, name in enumerate(dotted):
        alias = f"_dotted{i}"
        pattern = r"(?<![\w.\\])" + re.escape(name) + r"(?![\w])"
        expr, found = re.subn(pattern, alias, expr)
        if found:
            out[alias] = operands[name]
    return expr, out
