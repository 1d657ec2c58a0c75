"""python-blosc2's ``blosc2.blosc2_ext`` names that scripts and python-blosc2's own tests call
directly: the VL-block chunk functions ``vlcompress``, ``vldecompress`` and
``vldecompress_block`` (chunk-level, in :mod:`pyblosc2.api`) and ``open``, the frame opener of
its C extension (the frame at an offset of a file as an SChunk, or an NDArray when it has a
``b2nd`` metalayer); the matmul block backend knobs of :mod:`pyblosc2.linalg.backend` and
``get_matmul_library``, which asks them through this module as python-blosc2's does.

>>> chunk = vlcompress([b"hello", b"variable", b"blocks"], typesize=1, nthreads=1)
>>> vldecompress(chunk), vldecompress_block(chunk, 1)
([b'hello', b'variable', b'blocks'], b'variable')
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._lazyattrs import lazy_getattr
from .api import vlcompress, vldecompress, vldecompress_block
from .errors import ParamError
from .ndarray.ndarray import NDArray
from .schunk import SChunk
from .schunk import open as open_schunk

__all__ = [
    "get_loaded_matmul_cblas_library",  # noqa: F822 - module __getattr__
    "get_matmul_block_backend",  # noqa: F822 - module __getattr__
    "get_matmul_library",
    "get_selected_matmul_block_backend",  # noqa: F822 - module __getattr__
    "me_output_dtype",
    "open",
    "set_matmul_block_backend",  # noqa: F822 - module __getattr__
    "vlcompress",
    "vldecompress",
    "vldecompress_block",
]


def open(urlpath: Any, mode: str, offset: int, **kwargs: Any) -> SChunk | NDArray:
    """The frame at ``offset`` of ``urlpath`` (``kwargs``: ``mmap_mode``, ``cparams``,
    ``dparams``, ``locking``), whatever it holds.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.b2frame")
    >>> _ = SChunk(data=b"abc", urlpath=path, mode="w")
    >>> open(path, "r", 0)[:]
    b'abc'
    """
    schunk = open_schunk(urlpath, mode, offset, **kwargs)
    if "b2nd" in {name for name, _ in schunk.metalayers}:
        return NDArray(schunk)
    return schunk


def me_output_dtype(expression: str, dtypes: dict[str, Any]) -> np.dtype | None:
    """The dtype of ``expression`` over operands of ``dtypes`` (name -> dtype), or None when
    it cannot be computed (python-blosc2's probe of its miniexpr compiler; here the compute
    engine's analysis answers: numpy's dtype, string widths included).

    >>> me_output_dtype("o0 * 1.5", {"o0": "i4"}), me_output_dtype("nosuch(o0)", {"o0": "f8"})
    (dtype('float64'), None)
    """
    from .compute.analysis import Analysis  # the engine, loaded on first use

    try:
        ops = {k: np.empty((1,), np.dtype(v)) for k, v in dtypes.items()}
        return Analysis.of(expression, ops).dtype
    except (ParamError, TypeError):
        return None


def get_matmul_library() -> str | None:
    """The library behind the selected matmul kernel (python-blosc2's
    ``get_matmul_library``): ``"Accelerate.framework"`` for Accelerate, numpy's BLAS (name and
    version) for ``"cblas"``, None for ``"naive"``. It asks this module's functions at call
    time, as python-blosc2 asks its extension.

    >>> lib = get_matmul_library()
    >>> lib is None or lib == "Accelerate.framework" or "blas" in lib.lower()
    True
    """
    this = sys.modules[__name__]
    selected = this.get_selected_matmul_block_backend()
    if selected == "accelerate":
        return "Accelerate.framework"
    if selected == "cblas":
        lib: str | None = this.get_loaded_matmul_cblas_library()
        return lib
    return None


#: the matmul backend knobs, from :mod:`pyblosc2.linalg.backend` on first use (importing
#: ``pyblosc2.linalg`` loads the compute engine it registers with)
_MATMUL_KNOBS = frozenset(
    {
        "get_loaded_matmul_cblas_library",
        "get_matmul_block_backend",
        "get_selected_matmul_block_backend",
        "set_matmul_block_backend",
    }
)


__getattr__ = lazy_getattr({name: (".linalg.backend", name) for name in _MATMUL_KNOBS}, globals())
