"""python-blosc2's ``blosc2.dictionary_column`` module name: the physical rows of a
``dictionary`` CTable column live in :mod:`pyblosc2.ctable.strings`; absolute imports keep
one class when pyblosc2 is imported as ``blosc2``."""

from pyblosc2.ctable.strings import DictionaryColumn

__all__ = ["DictionaryColumn"]
