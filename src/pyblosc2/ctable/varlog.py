"""The change log of a stored table's variable-length columns (``/_varlog``).

A table keeps its text, list and object columns in memory (:mod:`.strings`) and writes
python-blosc2's layout of them when it closes. So that a writer killed before that loses
nothing it already stored, every write into such a column of a table with files is first
appended to this log, an ObjectArray leaf of the table; the fixed-width columns are written
in place, and a new row shows once ``_valid_rows`` says so (after its log entry). Each entry
is one chunk, committed whole (msgpack lists)::

    ["set", name, start, enc, values]      rows start .. start + len(values) - 1
    ["at",  name, [positions], enc, values]

``enc`` is ``"t"`` (text: UTF-8 bytes, ``surrogatepass``, or None) or ``"v"`` (the values as
msgpack holds them). At most :data:`PIECE_ROWS` rows per entry.

Opening a table replays the log over the stored layout (each value checked as an append
checks it), so a table a writer left open or was killed in reads as the writer saw it.
Closing (or a flush) writes the layout and then deletes the log. A ``utf8`` or
``dictionary`` column's layout is two leaves, replaced one after the other: before they are
rewritten, the log is made to hold every row of such a column, and its vlmeta ``full`` names
them; a replay then starts those columns empty, so a kill between the two leaves misreads
nothing. python-blosc2 does not know the log: it reads the layout of the last close (a
``CTable.open(..., mode="a")`` and close in pyblosc2 rewrites it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..constants import Codec
from ..errors import FormatError, ParamError, ParamTypeError
from ..vlarrays.objectarray import ObjectArray
from .base import TableBase
from .rows import to_column
from .schema import TableColumn
from .storage import TableStorage, col_key
from .strings import VarColumn, VarSpec, is_var, save_var_column

__all__ = ["LOG_KEY", "PIECE_ROWS", "TableVarLog", "VarLog"]

LOG_KEY = "/_varlog"
ROLE = "ctable_varlog"
VERSION = 1
FULL = "full"  # the log's vlmeta: the columns whose every row it holds
PIECE_ROWS = 1 << 16
_TEXT_KINDS = ("utf8", "vlstring", "dictionary")
_PAIR_KINDS = ("utf8", "dictionary")  # two leaves each: not replaced in one step
_CPARAMS = {"codec": Codec.LZ4, "clevel": 1}  # the log is written on every change


def _is_text(spec: Any) -> bool:
    return isinstance(spec, VarSpec) and spec.kind in _TEXT_KINDS


def _is_pair(spec: Any) -> bool:
    return isinstance(spec, VarSpec) and spec.kind in _PAIR_KINDS


def _encode(spec: Any, values: np.ndarray) -> tuple[str, list[Any]]:
    if _is_text(spec):
        return "t", [None if v is None else str(v).encode("utf-8", "surrogatepass") for v in values]
    return "v", list(values)


def _fail(i: int, expected: str, got: Any) -> FormatError:
    return FormatError("CTable", f"{LOG_KEY} entry {i}", 0, expected, got)


def _decode(i: int, enc: Any, values: list[Any]) -> list[Any]:
    if enc == "v":
        return values
    if enc != "t":
        raise _fail(i, "encoding 't' or 'v'", enc)
    out: list[Any] = []
    for v in values:
        if v is not None and not isinstance(v, bytes):
            raise _fail(i, "UTF-8 bytes or None", type(v).__name__)
        try:
            out.append(None if v is None else v.decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError as exc:
            raise _fail(i, "UTF-8 text", exc) from None
    return out


def _where(key: Any, n: int) -> int | slice | np.ndarray:
    """``key`` of a column of ``n`` rows as an int, a step-1 slice or int64 positions."""
    if isinstance(key, int | np.integer):
        k = int(key)
        return k + n if k < 0 else k
    if isinstance(key, slice):
        start, stop, step = key.indices(n)
        if step == 1:
            return slice(start, max(start, stop))
    return np.arange(n, dtype=np.int64)[key].reshape(-1)


class VarLog:
    """The log of one stored table (``storage``: its
    :class:`~pyblosc2.ctable.storage.TableStorage`); ``log`` the leaf when it exists."""

    def __init__(self, storage: Any, log: ObjectArray | None, base_rows: int = 0) -> None:
        self.storage = storage
        self.log = log
        #: the rows of the layout the log is a change of (past them, the layout may hold
        #: anything: a dictionary column's codes are read there only from the log)
        self.base_rows = base_rows
        self.rewritten: set[str] = set()  # columns written in a row the layout holds
        self.covered: dict[str, int] = {}  # rows 0 .. covered-1 are all in the log

    @staticmethod
    def wanted(storage: Any) -> bool:
        """Whether a table on ``storage`` keeps a log: it has files and may change."""
        leaves = storage.leaves
        return leaves is not None and not storage.read_only and not hasattr(leaves, "to_cframe")

    @classmethod
    def open(cls, storage: Any) -> VarLog | None:
        """The log ``storage`` holds, checked; None when it holds none."""
        leaves = storage.leaves
        if leaves is None or not leaves.has(LOG_KEY):
            return None
        log = leaves.get(LOG_KEY)
        if not isinstance(log, ObjectArray):
            raise FormatError("CTable", LOG_KEY, 0, "an ObjectArray", type(log).__name__)
        role = log.schunk.meta.get(ROLE)
        base = role.get("base_rows") if isinstance(role, dict) else None
        if (
            not isinstance(role, dict)
            or role.get("version") != VERSION
            or not isinstance(base, int)
            or base < 0
        ):
            want = {"version": VERSION, "base_rows": ">= 0"}
            raise FormatError("CTable", f"{LOG_KEY} {ROLE}", 0, want, role)
        return cls(storage, log, base)

    @property
    def full(self) -> set[str]:
        """The columns whose every row the log holds (their layout is not read)."""
        if self.log is None or FULL not in self.log.vlmeta:
            return set()
        names = self.log.vlmeta[FULL]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise FormatError("CTable", f"{LOG_KEY} vlmeta {FULL!r}", 0, "column names", names)
        return set(names)

    # -- writing ----------------------------------------------------------------------------
    def hook(self, name: str, column: VarColumn) -> None:
        """Log every write into ``column`` (named ``name``) from now on."""

        def on_write(col: VarColumn, key: Any, values: Any) -> None:
            self._write(name, col, key, values)

        column._on_write = on_write

    def _write(self, name: str, column: VarColumn, key: Any, values: Any) -> None:
        where = _where(key, len(column._values))
        old = column._values[where]
        old = old.copy() if isinstance(old, np.ndarray) else old
        column._assign(key, values)
        try:
            self.record(name, column, where)
        except BaseException:
            column._values[where] = old  # the change is refused whole: memory as the log
            raise

    def record(self, name: str, column: VarColumn, where: int | slice | np.ndarray) -> None:
        """Append the entries of rows ``where`` of ``column`` (as it holds them now)."""
        spec = column.spec
        entries: list[list[Any]] = []
        if isinstance(where, int):
            enc, vals = _encode(spec, column._values[where : where + 1])
            entries.append(["set", name, where, enc, vals])
            self._cover(name, where, where + 1)
            first = where
        elif isinstance(where, slice):
            for start in range(where.start, where.stop, PIECE_ROWS):
                stop = min(start + PIECE_ROWS, where.stop)
                enc, vals = _encode(spec, column._values[start:stop])
                entries.append(["set", name, start, enc, vals])
            self._cover(name, where.start, where.stop)
            first = where.start if where.stop > where.start else self.base_rows
        else:
            for lo in range(0, where.size, PIECE_ROWS):
                pos = where[lo : lo + PIECE_ROWS]
                enc, vals = _encode(spec, column._values[pos])
                entries.append(["at", name, pos.tolist(), enc, vals])
            first = int(where.min()) if where.size else self.base_rows
        if not entries:
            return
        log = self._leaf()
        try:
            log.extend(entries)
        except (TypeError, ValueError, OverflowError) as exc:
            if isinstance(exc, ParamError | ParamTypeError):
                raise
            raise ParamTypeError(f"column {name!r}: a value msgpack cannot hold: {exc}") from None
        if first < self.base_rows:
            self.rewritten.add(name)

    def _cover(self, name: str, start: int, stop: int) -> None:
        if start <= self.covered.get(name, 0):
            self.covered[name] = max(self.covered.get(name, 0), stop)

    def _leaf(self) -> ObjectArray:
        if self.log is None:
            role = {"version": VERSION, "base_rows": self.base_rows}
            fresh = ObjectArray(cparams=_CPARAMS, meta={ROLE: role})
            self.log = self.storage.install(LOG_KEY, fresh)
        return self.log

    # -- the layout -------------------------------------------------------------------------
    def secure(self, columns: list[TableColumn], cols: dict[str, Any], n: int) -> None:
        """Before the layouts of ``columns`` are written with ``n`` rows: make the log hold
        every row of each two-leaf column whose stored rows change (a value set in them, or
        fewer rows), and say so in its vlmeta. A column only appended to needs nothing: its
        layout's second leaf (utf8 offsets, dictionary codes) is written last and describes
        a prefix of the first either way, and the log has the rows past it."""
        full: list[str] = []
        for c in columns:
            column = cols.get(c.name)
            if not isinstance(column, VarColumn) or not _is_pair(c.spec):
                continue
            if c.name not in self.rewritten and n >= self.base_rows:
                continue
            if self.covered.get(c.name, 0) < n:
                self.record(c.name, column, slice(0, n))
            full.append(c.name)
        if full:
            self._leaf().vlmeta[FULL] = full

    def clear(self) -> None:
        """The layouts hold every change: drop the log."""
        if self.log is not None:
            self.log = None
            self.storage.delete_array(LOG_KEY)
        self.rewritten.clear()
        self.covered.clear()

    def layout_live(self, valid: Any) -> np.ndarray:
        """The live rows of ``valid`` the layout holds (a dictionary column's codes are
        checked there; past them the log has the values)."""
        live = np.asarray(valid[:], dtype=np.bool_)
        live[self.base_rows :] = False
        return live

    # -- reading ----------------------------------------------------------------------------
    def replay(self, columns: list[TableColumn], cols: dict[str, Any], capacity: int) -> None:
        """Apply the log's entries to the in-memory ``cols`` of a table of ``capacity``
        physical rows, each checked before it is applied (a row past the capacity was
        never live: such values are dropped)."""
        if self.log is None:
            return
        specs = {c.name: c for c in columns if is_var(c.spec)}
        for i in range(len(self.log)):
            entry = self.log[i]
            if not isinstance(entry, list) or len(entry) != 5:
                raise _fail(i, "[op, name, rows, encoding, values]", type(entry).__name__)
            op, name, rows, enc, values = entry
            if not isinstance(name, str) or not isinstance(values, list):
                raise _fail(i, "a column name and a list of values", (name, type(values)))
            if len(values) > PIECE_ROWS:
                raise _fail(i, f"at most {PIECE_ROWS} values", len(values))
            col = specs.get(name)
            if col is None:  # a column renamed or dropped since: its layout was rewritten
                continue
            positions = self._positions(i, op, rows, len(values))
            if positions.size and int(positions.min()) < self.base_rows:
                self.rewritten.add(name)
            keep = positions < capacity
            if not keep.any():
                continue
            decoded = _decode(i, enc, values)
            try:
                checked = to_column(col, decoded)
            except (ParamError, ParamTypeError) as exc:
                raise _fail(i, f"values of column {name!r}", exc) from None
            column = cols[name]
            column._assign(positions[keep], np.asarray(checked, dtype=object)[keep])

    @staticmethod
    def _positions(i: int, op: Any, rows: Any, n: int) -> np.ndarray:
        if op == "set":
            if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
                raise _fail(i, "a first row >= 0", rows)
            return np.arange(rows, rows + n, dtype=np.int64)
        if op != "at":
            raise _fail(i, "op 'set' or 'at'", op)
        if not isinstance(rows, list) or len(rows) != n:
            raise _fail(i, f"{n} row positions", type(rows).__name__)
        if not all(isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in rows):
            raise _fail(i, "row positions >= 0", rows[:8])
        return np.asarray(rows, dtype=np.int64)


class TableVarLog(TableBase):
    """The layout writes of a table's variable-length columns and their change log (a
    mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def _flush_varlen_columns(self) -> None:
        """Write the text columns into the table's store now (python-blosc2's name)."""
        if not self._read_only and self.base is None:
            self._store_var_columns(self._storage, self._last_pos)

    def _store_var_columns(self, storage: TableStorage, n: int) -> None:
        """Write the variable-length columns' first ``n`` rows in python-blosc2's layout
        (then their change log is dropped: the layout holds every change)."""
        if storage.leaves is None:
            return
        varlog = self._varlog
        if varlog is not None:  # a kill between a column's two leaves misreads nothing
            varlog.secure(self._columns, self._cols, n)
        for c in self._columns:
            column = self._cols[c.name]
            if isinstance(column, VarColumn):
                save_var_column(storage, col_key(c.name), column, n)
        if varlog is not None:
            varlog.clear()
            varlog.base_rows = n

    def _flush_var_log(self) -> None:
        """Write the variable-length columns' layout now if their change log holds any."""
        if self._varlog is not None and self._varlog.log is not None:
            self._store_var_columns(self._storage, self._last_pos)

    def _hook_var_columns(self) -> None:
        """Log every write into the variable-length columns (a stored table's)."""
        if self._varlog is not None:
            for name, column in self._cols.items():
                if isinstance(column, VarColumn):
                    self._varlog.hook(name, column)
