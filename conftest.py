"""Repository-wide pytest configuration (applies to ``tests/`` and to the doctests in ``src/``).

zarr, h5py and xarray are optional extras: without one, the doctests of the module that adapts
it (``pyblosc2.compat.zarr_codec``, ``pyblosc2.hdf5``, ``pyblosc2.xarray``) are not collected
instead of stopping the run with a collection error. In CI (``CI=true``) nothing is ignored,
so a missing extra is a failure there.
"""

from __future__ import annotations

import os

collect_ignore: list[str] = []

if os.environ.get("CI", "").lower() != "true":
    import importlib

    # the optional extras: their adapters' doctests need them
    for _mod, _path in [
        ("zarr", "src/pyblosc2/compat/zarr_codec.py"),
        ("h5py", "src/pyblosc2/hdf5"),
        ("xarray", "src/pyblosc2/xarray"),
    ]:
        try:
            importlib.import_module(_mod)
        except ImportError:
            collect_ignore.append(_path)
