"""Blosc (filter 32001) and Blosc2 (filter 32026) compressed HDF5 datasets, read and written
by pyblosc2 through h5py's direct chunk I/O: no HDF5 filter plugin, lazily.

* :func:`open` — a :class:`Dataset` (numpy-style slicing) over an ``h5py.Dataset`` or a file
  path and a dataset name; it fetches only the chunks a selection touches and decodes only
  the blocks it needs.
* :func:`create_dataset` — a new dataset compressed by pyblosc2 with the filter ids and
  ``cd_values`` hdf5plugin and PyTables write, so that they read it.

Needs the ``hdf5`` extra (``pip install 'pyblosc2[hdf5]'``); ``import pyblosc2`` never
imports h5py.
"""

from .cd_values import BLOSC2_FILTER_ID, BLOSC_FILTER_ID, Blosc2Values, BloscValues
from .create import create_dataset
from .dataset import Dataset, open
from .pipeline import UnsupportedPipelineError

__all__ = [
    "BLOSC2_FILTER_ID",
    "BLOSC_FILTER_ID",
    "Blosc2Values",
    "BloscValues",
    "Dataset",
    "UnsupportedPipelineError",
    "create_dataset",
    "open",
]
