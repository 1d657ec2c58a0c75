"""python-blosc2's ``blosc2._utf8_array`` module names (``UTF8Array``, its flush bounds and
kernel hooks): the array lives in :mod:`pyblosc2.ctable.utf8array`; absolute imports keep
one class when pyblosc2 is imported as ``blosc2``."""

from pyblosc2.ctable.utf8array import (
    _FLUSH_CHARS,
    _FLUSH_ROWS,
    UTF8Array,
    _encode_utf8_kernel,
    _pack_utf8_kernel,
    have_string_dtype,
    string_dtype,
    utf8_array,
)

__all__ = [
    "_FLUSH_CHARS",
    "_FLUSH_ROWS",
    "UTF8Array",
    "_encode_utf8_kernel",
    "_pack_utf8_kernel",
    "have_string_dtype",
    "string_dtype",
    "utf8_array",
]
