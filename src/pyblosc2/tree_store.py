"""python-blosc2's ``blosc2.tree_store`` module name (``from blosc2.tree_store import ...``): the
store lives in :mod:`pyblosc2.stores`; absolute imports keep one class when pyblosc2 is
imported as ``blosc2``."""

from pyblosc2.stores import TreeStore

__all__ = ["TreeStore"]
