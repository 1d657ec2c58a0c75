"""A lazy array as a dask array (the optional ``dask`` extra: dask is imported here, when
``to_dask`` runs, never by ``import pyblosc2``).

Each dask task computes one block of the expression with ``expr[block]`` (the engine decodes
only the operand chunks that block covers), so dask's schedulers — threads, processes, a
``distributed`` cluster — spread the evaluation; the default blocks are the expression's
chunks.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> d = to_dask(asarray(np.arange(6.0), chunks=(3,), blocks=(3,)) * 2)
>>> d.chunks, float(d.sum().compute())
(((3, 3),), 30.0)
"""

from __future__ import annotations

from typing import Any

__all__ = ["to_dask"]


def to_dask(lazy: Any, chunks: Any = None) -> Any:
    """``lazy`` (a lazy array) as a dask array of ``chunks`` (default: its own)."""
    try:
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - dask is an optional extra
        raise NotImplementedError("to_dask needs dask: pip install 'pyblosc2[dask]'") from exc
    return da.from_array(
        lazy, chunks=lazy.chunks if chunks is None else chunks, asarray=False, fancy=False
    )
