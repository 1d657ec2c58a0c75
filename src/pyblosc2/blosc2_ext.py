"""python-blosc2's ``blosc2.blosc2_ext`` names that scripts and python-blosc2's own tests call
directly: the VL-block chunk functions ``vlcompress``, ``vldecompress`` and
``vldecompress_block`` (chunk-level, in :mod:`pyblosc2.api`) and ``open``, the frame opener of
its C extension (the frame at an offset of a file as an SChunk, or an NDArray when it has a
``b2nd`` metalayer).

>>> chunk = vlcompress([b"hello", b"variable", b"blocks"], typesize=1, nthreads=1)
>>> vldecompress(chunk), vldecompress_block(chunk, 1)
([b'hello', b'variable', b'blocks'], b'variable')
"""

from __future__ import annotations

from typing import Any

from .api import vlcompress, vldecompress, vldecompress_block
from .ndarray.ndarray import NDArray
from .schunk import SChunk
from .schunk import open as open_schunk

__all__ = ["open", "vlcompress", "vldecompress", "vldecompress_block"]


def open(urlpath: Any, mode: str, offset: int, **kwargs: Any) -> SChunk | NDArray:
    """The frame at ``offset`` of ``urlpath`` (``kwargs``: ``mmap_mode``, ``cparams``,
    ``dparams``, ``locking``), whatever it holds.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.b2frame")
    >>> _ = SChunk(data=b"abc", urlpath=path, mode="w")
    >>> open(path, "r", 0)[:]
    b'abc'
    """
    schunk = open_schunk(urlpath, mode, offset, **kwargs)
    if "b2nd" in {name for name, _ in schunk.metalayers}:
        return NDArray(schunk)
    return schunk
