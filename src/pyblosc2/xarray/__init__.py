"""xarray datasets in xarray-blosc2's store layout, read and written by pyblosc2.

* ``xr.open_dataset(path, engine="pyblosc2")`` — the engine (entry point
  :class:`~.backend.PyBlosc2BackendEntrypoint`) opens ``.b2`` directories, ``.b2z`` zips and
  single ``.b2nd`` files lazily;
* :func:`to_blosc2` — writes a Dataset (numpy or dask backed) as a store xarray-blosc2 opens.

Needs the ``xarray`` extra (``pip install 'pyblosc2[xarray]'``; dask for dask-backed data);
``import pyblosc2`` never imports xarray. The store layout itself (:mod:`.layout`: what the
files hold, read with pyblosc2 alone) needs no xarray: the command line describes and
verifies stores with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazyattrs import lazy_getattr

if TYPE_CHECKING:
    from .backend import PyBlosc2Array, PyBlosc2BackendEntrypoint, open_store
    from .writer import to_blosc2

__all__ = ["PyBlosc2Array", "PyBlosc2BackendEntrypoint", "open_store", "to_blosc2"]

_HOMES = {
    "PyBlosc2Array": "backend",
    "PyBlosc2BackendEntrypoint": "backend",
    "open_store": "backend",
    "to_blosc2": "writer",
}


#: the xarray-facing names, imported (with xarray) when first used
__getattr__ = lazy_getattr({name: (f".{home}", name) for name, home in _HOMES.items()}, globals())
