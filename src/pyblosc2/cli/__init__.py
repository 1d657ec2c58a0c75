"""The ``pyblosc2`` command line tool (also ``python -m pyblosc2``).

One module per command (``info``, ``verify``, ``codec_io`` for compress/decompress,
``convert``, ``slicing``), plus what they share: ``sources`` (open any input), ``outputs``
(write to a temporary name, rename at the end), ``progress``, ``plot`` and ``zarr_v3`` (a
zarr v3 directory store read and written without zarr-python). Containers that are not frames
have their own ``info``/``verify`` modules, tried in turn by ``main``: ``hdf5_info`` (HDF5
files and datasets), ``xarray_store`` (xarray-blosc2 stores) and ``stores`` (python-blosc2's
stores); ``tables`` prints their tables. Everything here goes through pyblosc2's public API,
except :func:`pyblosc2.cli.sources.frame_layout`.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line tool with ``argv`` (default ``sys.argv[1:]``); returns the exit
    status."""
    from .main import main as _main

    return _main(argv)
