"""HDF5 datasets as command-line inputs: ``file.h5:/group/dataset`` (an HDF5 file, told by
its signature, then the dataset's path), read by :mod:`pyblosc2.hdf5` (no filter plugin)."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import numpy as np

from .arrays import ArraySource

__all__ = ["Hdf5Array", "split_hdf5"]

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def split_hdf5(path: str) -> tuple[str, str] | None:
    """``(file, dataset)`` when ``path`` is ``<HDF5 file>:<dataset>``, else None."""
    file, sep, name = path.rpartition(":")
    if not sep or not name or not os.path.isfile(file):
        return None
    with open(file, "rb") as f:
        return (file, name) if f.read(8) == HDF5_SIGNATURE else None


class Hdf5Array(ArraySource):
    """An HDF5 dataset read chunk row by chunk row through pyblosc2.hdf5."""

    def __init__(self, file: str, name: str, stack: contextlib.ExitStack) -> None:
        from ..hdf5 import open as open_hdf5

        self.dataset = stack.enter_context(open_hdf5(file, name))
        self.shape = self.dataset.shape
        self.dtype = self.dataset.dtype
        self.chunks = self.dataset.chunks

    def rows(self, r0: int, r1: int) -> np.ndarray:
        if not self.shape:
            return np.asarray(self.dataset[()]).reshape(1)
        return np.asarray(self.dataset[r0:r1])

    def describe(self) -> dict[str, Any]:
        codec = self.dataset.codec
        return {
            "name": self.dataset.name,
            "shape": self.shape,
            "dtype": str(self.dtype),
            "chunks": self.chunks,
            "filter": None if codec is None else codec.values,
        }
