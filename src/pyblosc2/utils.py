"""python-blosc2's ``blosc2.utils`` names that scripts and tests import (index keys, the
chunk grid, numpy names by version, the linear-algebra names and switch).

>>> process_key(2, (5,))
((slice(2, 3, None),), (True,))
>>> get_chunks_idx((10, 8), (4, 8))
((3, 1), 3)
"""

import sys

from .ndarray.keys import get_chunks_idx, process_key
from .ndarray.linalg_members import LINALG_FUNCS
from .ndarray.npnames import NUMPY_GE_2_0, nptranspose, npvecdot

__all__ = [
    "NUMPY_GE_2_0",
    "get_chunks_idx",
    "linalg_funcs",
    "nptranspose",
    "npvecdot",
    "process_key",
    "try_miniexpr",
]

#: python-blosc2's ``linalg_funcs``
linalg_funcs = list(LINALG_FUNCS)

#: python-blosc2's switch of its "miniexpr" engine: pyblosc2 has no such engine, the flag
#: changes nothing (see :data:`pyblosc2.linalg.try_miniexpr`)
try_miniexpr = True


def _toggle_miniexpr(flag: bool) -> None:
    """Set ``try_miniexpr`` here and in the ``linalg`` module of this package when it is
    loaded (looked up by name, as python-blosc2 does, so no module is imported for it).

    >>> import pyblosc2.linalg
    >>> _toggle_miniexpr(False); pyblosc2.linalg.try_miniexpr
    False
    >>> _toggle_miniexpr(True)
    """
    global try_miniexpr
    try_miniexpr = bool(flag)
    module = sys.modules.get(f"{__package__}.linalg")
    if module is not None:
        module.try_miniexpr = try_miniexpr  # type: ignore[attr-defined]
