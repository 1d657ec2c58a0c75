"""A CTable elsewhere: ``save``, ``copy``, ``to_b2d``, ``to_b2z``, ``load``, ``to_cframe``
and :func:`ctable_from_cframe`, ``compact`` and the table's user ``vlmeta`` (python-blosc2
4.x's semantics and layout).

A table is written elsewhere as its live rows, compacted: capacity the live-row count, every
row valid, ``n_rows`` recorded (python-blosc2's logical save path; it also has a physical
pack of a ``.b2d`` into a ``.b2z`` that keeps deleted rows and spare capacity: pyblosc2 always
writes the logical form, which python-blosc2 reads the same). A cframe is an EmbedStore
holding the same leaves (``/_meta``, ``/_valid_rows``, ``/_cols/<name>``, ``/_vlmeta``); the
table a cframe holds opens read-only. User vlmeta live in the ``/_vlmeta`` SChunk of the
table's store (created on first use), apart from the schema's ``/_meta``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from typing import Any

from ..errors import ParamError
from ..ndarray.constructors import zeros
from ..schunk import SChunk
from .base import TableBase
from .column import read_positions
from .ndcells import physical_shape
from .schema import schema_to_dict
from .storage import VALID_ROWS_KEY, TableStorage, col_key, new_valid_rows, open_embed, open_tree
from .strings import is_var, new_var_column, save_var_column

__all__ = ["VLMETA_KEY", "TablePersist"]

VLMETA_KEY = "/_vlmeta"


def _clear(path: str, overwrite: bool) -> None:
    if os.path.exists(path):
        if not overwrite:
            raise ParamError(f"Path {path!r} already exists. Use overwrite=True to replace.")
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


class TablePersist(TableBase):
    """Saving, copying, cframes and vlmeta (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    _user_vlmeta: SChunk | None = None

    # -- vlmeta -----------------------------------------------------------------------------
    def _vlmeta_schunk(self) -> SChunk:
        if self._user_vlmeta is not None:
            return self._user_vlmeta
        leaves = self._storage.leaves
        if leaves is not None and leaves.has(VLMETA_KEY):
            found = leaves.get(VLMETA_KEY)
            if not isinstance(found, SChunk):
                raise ParamError(f"the table's {VLMETA_KEY} is no SChunk")
            self._user_vlmeta = found
        elif leaves is not None and not self._read_only:
            self._user_vlmeta = leaves.put(VLMETA_KEY, SChunk())
        else:
            self._user_vlmeta = SChunk()
        if leaves is not None and not self._read_only:
            leaves.touch()  # a .b2z is packed again on close: vlmeta written through it
        return self._user_vlmeta

    @property
    def vlmeta(self) -> Any:
        """The table's user metadata (msgpack values by name), kept in its ``/_vlmeta``.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row)
        >>> t.vlmeta["author"] = "Alice"
        >>> t.vlmeta[:]
        {'author': 'Alice'}
        """
        if self.base is not None:
            return self.base.vlmeta
        return self._vlmeta_schunk().vlmeta

    # -- writing elsewhere ------------------------------------------------------------------
    def _save_into(self, storage: TableStorage) -> None:
        """Write the live rows, compacted, as a new table in ``storage`` (python-blosc2
        saves a table into a store so: capacity = live rows, all valid)."""
        n = len(self)
        capacity = max(n, 1)
        valid = new_valid_rows(capacity)
        if n:
            valid[:n] = True
        storage.install(VALID_ROWS_KEY, valid)
        live = self._live_positions()
        arrays = {}
        for c in self._columns:
            if is_var(c.spec):  # strings.py's layout
                values = read_positions(self._cols[c.name], live) if n else None
                var = new_var_column(c.spec, capacity, values)  # type: ignore[arg-type]
                save_var_column(storage, col_key(c.name), var, n)
                continue
            shape = physical_shape(c.spec, capacity)
            arr = zeros(shape, dtype=c.dtype, chunks=c.chunks, blocks=c.blocks)
            if n:
                arr[:n] = read_positions(self._cols[c.name], live)
            arrays[c.name] = storage.install(col_key(c.name), arr)
        self._save_null_masks(storage, live, arrays)
        doc = schema_to_dict(self._columns)
        doc.update(n_rows=n, create_summary_index=True, summary_indexes_built=False)
        if self._computed_cols:
            doc["computed_columns"] = self._computed_doc()
        storage.save_schema(doc)
        root = self._root_table()
        names = list(root._vlmeta_schunk().vlmeta) if root._has_user_vlmeta() else []
        if names and storage.leaves is not None:
            user = SChunk()
            for k in names:
                user.vlmeta[k] = root.vlmeta[k]
            storage.leaves.put(VLMETA_KEY, user)

    def _has_user_vlmeta(self) -> bool:
        leaves = self._storage.leaves
        return self._user_vlmeta is not None or (leaves is not None and leaves.has(VLMETA_KEY))

    def save(self, urlpath: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the live rows to a new ``.b2d``/``.b2z`` table at ``urlpath``.

        >>> import dataclasses, os, tempfile
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> path = os.path.join(tempfile.mkdtemp(), "t.b2z")
        >>> CTable(Row, new_data=[(1,), (2,)]).save(path)
        >>> CTable.open(path).x[:]
        array([1, 2])
        """
        path = os.fspath(urlpath)
        _clear(path, overwrite)
        storage = TableStorage(open_tree(path, "w"), owns_leaves=True)
        try:
            self._save_into(storage)
        finally:
            storage.close()

    def to_b2z(
        self, urlpath: str | os.PathLike[str], *, overwrite: bool = False, compact: bool = False
    ) -> str:
        """Write the live rows to a new ``.b2z`` table; its absolute path."""
        path = os.fspath(urlpath)
        if not path.endswith(".b2z"):
            raise ParamError("urlpath must have a .b2z extension")
        self.save(path, overwrite=overwrite)
        return os.path.abspath(path)

    def to_b2d(
        self, urlpath: str | os.PathLike[str], *, overwrite: bool = False, compact: bool = False
    ) -> str:
        """Write the live rows to a new directory table (any path not ending ``.b2z``)."""
        path = os.fspath(urlpath)
        if path.endswith(".b2z"):
            raise ParamError("to_b2d writes a directory store: urlpath must not end in .b2z")
        self.save(path, overwrite=overwrite)
        return os.path.abspath(path)

    def copy(
        self,
        compact: bool = True,
        *,
        urlpath: str | os.PathLike[str] | None = None,
        overwrite: bool = False,
        chunks: int | tuple[int, ...] | None = None,
        blocks: int | tuple[int, ...] | None = None,
        cparams: dict[str, Any] | None = None,
    ) -> Any:
        """A new standalone table of the live rows: in memory, or at ``urlpath`` (then
        opened read-only); ``chunks``/``blocks``/``cparams`` override the columns'.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(4)])
        >>> t.where(t.x > 1).copy().x[:]
        array([2, 3])
        """
        source: Any = self
        if chunks is not None or blocks is not None or cparams is not None:
            source = self._with_layout(chunks, blocks, cparams)
        if urlpath is not None:
            path = os.fspath(urlpath)
            source.save(path, overwrite=overwrite)
            return self.open(path, mode="r")
        out = source._gather(source._live_positions())
        root = self._root_table()
        if root._has_user_vlmeta():
            for k in list(root.vlmeta):
                out.vlmeta[k] = root.vlmeta[k]
        return out

    def _with_layout(self, chunks: Any, blocks: Any, cparams: Any) -> Any:
        chunks = (chunks,) if isinstance(chunks, int) else chunks
        blocks = (blocks,) if isinstance(blocks, int) else blocks
        view = self._make_view(self._valid_rows, self._live_positions())
        view._columns = [
            dataclasses.replace(
                c,
                chunks=tuple(chunks) if chunks is not None else c.chunks,
                blocks=tuple(blocks) if blocks is not None else c.blocks,
                cparams=cparams if cparams is not None else c.cparams,
            )
            for c in self._columns
        ]
        view._column_defs = {c.name: c for c in view._columns}
        if cparams is not None:
            view._cparams = cparams
        return view

    @classmethod
    def load(cls, urlpath: str | os.PathLike[str]) -> Any:
        """The table stored at ``urlpath``, read into a new in-memory (writable) table.

        >>> import dataclasses, os, tempfile
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> path = os.path.join(tempfile.mkdtemp(), "t.b2d")
        >>> CTable(Row, new_data=[(1,)]).save(path)
        >>> t = CTable.load(path); t.append((2,)); t.x[:]
        array([1, 2])
        """
        stored = cls.open(urlpath, mode="r")
        try:
            return stored.copy()
        finally:
            stored.close()

    def to_cframe(self) -> bytes:
        """The live rows as a cframe (an EmbedStore of the table's leaves).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable, ctable_from_cframe
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> ctable_from_cframe(CTable(Row, new_data=[(5,)]).to_cframe()).x[:]
        array([5])
        """
        leaves = open_embed(None)
        self._save_into(TableStorage(leaves))
        return leaves.to_cframe()

    # -- compaction -------------------------------------------------------------------------
    def compact(self) -> None:
        """Move the live rows to the front (deleted rows' places freed at the end).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row, new_data=[(i,) for i in range(4)])
        >>> t.delete([0, 2]); t.compact(); t._valid_rows[:3].tolist()
        [True, True, False]
        """
        if self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        if self.base is not None:
            raise ParamError("Cannot compact a view.")
        self._check_writable()
        if self._dense():
            return
        self._rewrite_rows(self._live_positions())
