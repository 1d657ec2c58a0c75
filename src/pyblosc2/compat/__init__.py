"""Drop-in codecs for zarr and numcodecs.

* :class:`Blosc` — numcodecs' ``Blosc`` interface (zarr v2 arrays, numcodecs users), writing
  the Blosc1 chunks C-Blosc 1.x writes; needs neither numcodecs nor zarr.
* :class:`Blosc2` — the numcodecs codec ``blosc2`` (:mod:`pyblosc2.compat.numcodecs_blosc2`):
  one Blosc2 chunk per buffer, python-blosc2's parameters; found by numcodecs through its entry
  point; needs neither numcodecs nor zarr.
* ``BloscCodec`` — the zarr v3 ``blosc`` codec (:mod:`pyblosc2.compat.zarr_codec`), and
  ``Blosc2Codec`` — ``blosc2`` in zarr v3 arrays (:mod:`pyblosc2.compat.zarr_blosc2`); they
  need zarr-python 3 (the ``zarr`` extra) and are imported only when first used.

>>> from pyblosc2.compat import Blosc, Blosc2
>>> Blosc(cname="zstd").get_config()["cname"], Blosc2(codec="lz4").get_config()["codec"]
('zstd', 'lz4')
"""

from __future__ import annotations

from typing import Any

from .numcodecs_blosc2 import Blosc2
from .numcodecs_codec import Blosc

__all__ = ["Blosc", "Blosc2", "Blosc2Codec", "BloscCodec"]

_LAZY = {"BloscCodec": "zarr_codec", "Blosc2Codec": "zarr_blosc2"}


def __getattr__(name: str) -> Any:
    """``BloscCodec`` and ``Blosc2Codec`` are imported (with zarr) on first access only."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
