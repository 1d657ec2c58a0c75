"""python-blosc2's ``blosc2.linalg``: matrix products, contractions, axis permutations and
diagonals of arrays larger than memory, computed chunk by chunk into new NDArrays.

Operands are NDArrays, numpy arrays, or any array with ``shape``, ``dtype`` and a
``__getitem__`` returning numpy (:mod:`.operands`); results follow numpy's shapes and dtypes
and take the constructors' keywords (``chunks``, ``blocks``, ``urlpath``, ``mode``,
``cparams``...). How the work is cut to fit in memory: :mod:`.plan`.

>>> import numpy as np
>>> import pyblosc2.linalg as la
>>> a = np.arange(6).reshape(2, 3)
>>> la.matmul(a, la.permute_dims(a))[...]
array([[ 5, 14],
       [14, 50]])
"""

from ..compute.registry import is_eager as _is_eager
from ..compute.registry import register_function as _register_function
from ..ndarray.linalg_members import LINALG as _LINALG
from ..ndarray.linalg_members import LINALG_FUNCS
from ..ndarray.npnames import nptranspose, npvecdot
from .backend import (
    get_loaded_matmul_cblas_library,
    get_matmul_block_backend,
    get_selected_matmul_block_backend,
    set_matmul_block_backend,
)
from .contract import outer, tensordot, vecdot
from .layout import diagonal, matrix_transpose, permute_dims, transpose
from .matmul import matmul

#: python-blosc2's switch of its "miniexpr" fast path for 2-d float products. pyblosc2 has no
#: such path: the flag is kept here and in :mod:`pyblosc2.utils` (whose ``_toggle_miniexpr``
#: sets both, as python-blosc2's does) and changes nothing.
try_miniexpr = True

# NDArray's ``@``, ``.T`` and ``.mT`` call these (ndarray/linalg_members.py)
_LINALG.update(matmul=matmul, permute_dims=permute_dims, matrix_transpose=matrix_transpose)

#: python-blosc2's ``linalg_funcs``: the names of its linear-algebra and shape functions
linalg_funcs = list(LINALG_FUNCS)

# expression strings call them as python-blosc2's do (``lazyexpr("matmul(A, B) + 1")``):
# computed whole when the expression is analysed, their result an operand of the rest
for _fn in (diagonal, matmul, matrix_transpose, outer, permute_dims, tensordot, vecdot):
    if not _is_eager(_fn.__name__):
        _register_function(_fn.__name__, _fn)

__all__ = [
    "diagonal",
    "get_loaded_matmul_cblas_library",
    "get_matmul_block_backend",
    "get_selected_matmul_block_backend",
    "linalg_funcs",
    "matmul",
    "matrix_transpose",
    "nptranspose",
    "npvecdot",
    "outer",
    "permute_dims",
    "set_matmul_block_backend",
    "tensordot",
    "transpose",
    "try_miniexpr",
    "vecdot",
]
