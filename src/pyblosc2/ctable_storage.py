"""python-blosc2's ``blosc2.ctable_storage`` module names: the key suffix of a column's
validity sidecar (``_NOTNULL_SUFFIX``) and ``FileTableStorage``, the leaves of a table
stored at a path (:class:`pyblosc2.ctable.storage.TableStorage` over them).

>>> from pyblosc2.ctable_storage import _NOTNULL_SUFFIX
>>> _NOTNULL_SUFFIX
'.notnull'
"""

from __future__ import annotations

import os

from pyblosc2.ctable.nulls import NOTNULL_SUFFIX as _NOTNULL_SUFFIX
from pyblosc2.ctable.storage import TableStorage, open_tree

__all__ = ["_NOTNULL_SUFFIX", "FileTableStorage"]


class FileTableStorage(TableStorage):
    """The leaves of the table stored at ``urlpath`` (a ``.b2d`` directory or ``.b2z``);
    the sidecar names (``has_null_mask``, ``delete_null_mask``) are every storage's."""

    def __init__(self, urlpath: str | os.PathLike[str], mode: str = "r") -> None:
        super().__init__(open_tree(os.fspath(urlpath), mode), owns_leaves=True)
