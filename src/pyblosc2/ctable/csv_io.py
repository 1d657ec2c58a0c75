"""CSV for CTable (python-blosc2's ``to_csv`` and ``from_csv``), with the stdlib ``csv``
module: no extra dependency.

``to_csv`` writes the live rows, a header of column names first; numbers as Python
writes them (``repr`` of a float round-trips), bools ``True``/``False``, bytes decoded
as UTF-8. ``from_csv`` reads a file into a table of a dataclass row type, fields in the
row type's order: bools from ``True``/``true``/``1`` (anything else false), numbers
parsed by NumPy. A field that is not a number of its column, a row with the wrong number
of fields or a field over :data:`MAX_FIELD` characters is a :class:`~pyblosc2.errors.
FormatError` naming the line and the column, raised before the table is made.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import os
from typing import Any

import numpy as np

from ..errors import FormatError, ParamError
from .build import resolve_nulls
from .schema import TableColumn, compile_row_type

__all__ = ["MAX_FIELD", "TableCSV"]

MAX_FIELD = 1 << 20  # characters of one CSV field at most (the csv module's limit is 128 KiB)


def _cell_texts(values: np.ndarray) -> list[Any]:
    """A column's values as the csv writer takes them."""
    if values.dtype.kind == "S":
        return [v.decode("utf-8", "backslashreplace") for v in values.tolist()]
    if values.dtype.kind == "M":
        return [str(v) for v in values]
    return values.tolist()


def _parse_nullable(col: TableColumn, raw: list[str], where: str) -> Any:
    """A nullable column's values: an empty field is a null (its ``null_value`` in a
    sentinel column, None in a mask column)."""
    if col.dtype.kind in "US":
        raise NotImplementedError(f"from_csv of nullable text columns (column {col.name!r})")
    missing = np.array([not v.strip() for v in raw], dtype=bool)
    present = [v for v, m in zip(raw, missing.tolist(), strict=True) if not m]
    values = _parse(dataclasses.replace(col, spec=_not_null(col.spec)), present, where)
    null_value = getattr(col.spec, "null_value", None)
    if null_value is not None:
        out = np.full(len(raw), null_value, dtype=col.dtype)
        out[~missing] = values
        return out
    cells: list[Any] = [None] * len(raw)
    for i, v in zip(np.flatnonzero(~missing).tolist(), values.tolist(), strict=True):
        cells[i] = v
    return cells


def _parse_utf8(col: TableColumn, raw: list[str]) -> np.ndarray:
    """A utf8 column's fields as they are (an empty field is the sentinel of a nullable
    one: python-blosc2 writes its sentinel, so only a hand-made file has one)."""
    out = np.empty(len(raw), dtype=object)
    out[:] = raw
    null_value = getattr(col.spec, "null_value", None)
    if getattr(col.spec, "nullable", False):
        if null_value is None:
            raise NotImplementedError(f"from_csv of mask-stored utf8 columns ({col.name!r})")
        out[np.array([v == "" for v in raw], dtype=bool)] = null_value
    return out


def _not_null(spec: Any) -> Any:
    """A copy of ``spec`` that is not nullable (its values parsed as the plain kind's)."""
    out = copy.copy(spec)
    out.nullable, out.null_value, out.null_storage = False, None, None
    return out


def _parse(col: TableColumn, raw: list[str], where: str) -> Any:
    """The values of column ``col`` from its CSV fields; FormatError naming the first field
    (data row, column) that is not a value of the column."""
    kind = getattr(col.spec, "kind", "")
    if kind == "utf8":
        return _parse_utf8(col, raw)
    if kind not in _PARSED:  # python-blosc2 reads none of these kinds either
        raise ParamError(f"from_csv does not support {kind} columns (column {col.name!r})")
    if getattr(col.spec, "nullable", False):
        return _parse_nullable(col, raw, where)
    try:
        return _convert(col, raw)
    except (ValueError, OverflowError, TypeError):
        pass
    for i, v in enumerate(raw):  # only after a failure: name the first bad field
        try:
            _convert(col, [v])
        except (ValueError, OverflowError, TypeError):  # noqa: PERF203
            what = "non-nullable column got empty cell" if not v.strip() else f"{col.dtype}"
            raise FormatError(
                "CSV",
                f"{where} data row {i + 1} column {col.name!r}",
                0,
                f"a value of {col.dtype}",
                f"{v[:80]!r} ({what})",
            ) from None
    raise AssertionError("a column failed to parse but none of its fields did")  # pragma: no cover


def _convert(col: TableColumn, raw: list[str]) -> np.ndarray:
    """``raw`` as values of ``col`` (ValueError/OverflowError when one is not)."""
    dtype = col.dtype
    if dtype == np.bool_:
        return np.isin(np.char.strip(np.asarray(raw, dtype=str)), ("True", "true", "1"))
    if dtype.kind in "US":
        cells: list[Any] = [v.encode("utf-8") for v in raw] if dtype.kind == "S" else raw
        limit = int(col.spec.max_length)  # type: ignore[attr-defined]
        if any(len(c) > limit for c in cells):
            raise ValueError(f"a value longer than max_length {limit}")
        return np.asarray(cells, dtype=dtype)
    text = np.asarray(raw, dtype=str)
    if dtype.kind in "iu":
        return _parse_ints(text, dtype)
    if getattr(col.spec, "kind", "") == "timestamp":
        return text.astype(f"datetime64[{col.spec.unit}]").astype(np.int64)  # type: ignore[attr-defined]
    return text.astype(dtype)


def _parse_ints(text: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Integers from their text, each checked to fit ``dtype`` (never wrapped)."""
    wide = text.astype(np.uint64 if dtype.kind == "u" else np.int64)
    info = np.iinfo(dtype)
    if wide.size and (wide.min() < info.min or wide.max() > info.max):
        raise OverflowError(f"a value out of {dtype}'s range")
    return wide.astype(dtype)


_PARSED = frozenset(
    {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "complex64", "complex128", "bool", "string", "bytes", "timestamp",
    }
)  # fmt: skip


class TableCSV:
    """CSV import and export of a table."""

    col_names: list[str]

    def to_csv(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        header: bool = True,
        sep: str = ",",
        encoding: str = "utf-8",
    ) -> str | None:
        """Write the live rows as CSV to ``path``, or return the text when ``path`` is None.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: float = 0.0
        >>> CTable(Row, new_data=[(1, 0.5), (2, 1.5)]).to_csv().splitlines()
        ['x,y', '1,0.5', '2,1.5']
        """
        if not isinstance(sep, str) or len(sep) != 1:
            raise ParamError(f"sep must be one character, got {sep!r}")
        columns = [self._csv_cells(n) for n in self.col_names]

        def write(f: Any) -> None:
            writer = csv.writer(f, delimiter=sep, lineterminator="\r\n")
            if header:
                writer.writerow(self.col_names)
            writer.writerows(zip(*columns, strict=True))

        if path is None:
            buf = io.StringIO(newline="")
            write(buf)
            return buf.getvalue()
        with open(path, "w", newline="", encoding=encoding) as f:
            write(f)
        return None

    def _csv_cells(self, name: str) -> list[Any]:
        """Column ``name``'s live values as CSV cells: a null of a mask-stored column is an
        empty field (a sentinel column writes its sentinel, as python-blosc2)."""
        col: Any = self[name]  # type: ignore[index]
        cells = _cell_texts(np.asarray(col[:]))
        if getattr(col, "null_storage", None) != "mask" or not col.null_count():
            return cells
        if col.dtype.kind in "US":
            raise NotImplementedError(f"to_csv of mask-stored nullable text columns ({name!r})")
        nulls = np.asarray(col.is_null(), dtype=bool).tolist()
        return ["" if n else c for c, n in zip(cells, nulls, strict=True)]

    @classmethod
    def from_csv(
        cls,
        path: str | os.PathLike[str],
        row_cls: Any,
        *,
        header: bool = True,
        sep: str = ",",
        encoding: str = "utf-8-sig",
    ) -> Any:
        """A table of the dataclass ``row_cls`` holding the rows of the CSV file ``path``
        (fields in ``row_cls``'s order; the header row, if any, skipped).

        >>> import dataclasses, os, tempfile
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
        >>> _ = open(path, "w").write("x\\n1\\n2\\n")
        >>> CTable.from_csv(path, Row).x[:]
        array([1, 2])
        """
        if not isinstance(sep, str) or len(sep) != 1:
            raise ParamError(f"sep must be one character, got {sep!r}")
        columns = resolve_nulls(compile_row_type(row_cls))
        where = os.fspath(path)
        raws: list[list[str]] = [[] for _ in columns]
        old = csv.field_size_limit()
        try:
            csv.field_size_limit(MAX_FIELD)
            with open(where, newline="", encoding=encoding) as f:
                reader = csv.reader(f, delimiter=sep)
                if header:
                    next(reader, None)
                for row in reader:
                    if len(row) != len(columns):
                        if not row:
                            continue  # a blank line
                        raise FormatError(
                            "CSV",
                            f"{where} line {reader.line_num}",
                            0,
                            f"{len(columns)} fields",
                            len(row),
                        )
                    for dest, v in zip(raws, row, strict=True):
                        dest.append(v)
        except csv.Error as exc:
            raise FormatError("CSV", where, 0, "CSV text", exc) from None
        except UnicodeDecodeError as exc:
            raise FormatError("CSV", where, exc.start, f"{encoding} text", exc.reason) from None
        finally:
            csv.field_size_limit(old)
        data = {c.name: _parse(c, raw, where) for c, raw in zip(columns, raws, strict=True)}
        factory: Any = cls
        return factory(row_cls, new_data=data if raws and raws[0] else None)
