"""python-blosc2's ``blosc2.scalar_array`` module name (``_ScalarVarLenArray``): the array
lives in :mod:`pyblosc2.ctable.scalararray`; absolute imports keep one class when pyblosc2
is imported as ``blosc2``."""

from pyblosc2.ctable.scalararray import _ScalarVarLenArray

__all__ = ["_ScalarVarLenArray"]
