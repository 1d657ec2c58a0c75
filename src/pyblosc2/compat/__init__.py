"""Drop-in codecs for zarr and numcodecs, writing the Blosc1 chunks C-Blosc 1.x writes.

* :class:`Blosc` — numcodecs' ``Blosc`` interface (zarr v2 arrays, numcodecs users); needs
  neither numcodecs nor zarr.
* ``BloscCodec`` — the zarr v3 ``blosc`` codec (:mod:`pyblosc2.compat.zarr_codec`); needs
  zarr-python 3 (the ``zarr`` extra: ``pip install -e ".[zarr]"`` from a source tree) and is
  imported only when first used.

>>> from pyblosc2.compat import Blosc
>>> Blosc(cname="zstd").get_config()["cname"]
'zstd'
"""

from __future__ import annotations

from typing import Any

from .numcodecs_codec import Blosc

__all__ = ["Blosc", "BloscCodec"]

_LAZY = {"BloscCodec": "zarr_codec"}


def __getattr__(name: str) -> Any:
    """``BloscCodec`` is imported (with zarr) on first access only."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
