"""python-blosc2's ``blosc2_ext.open``: the frame opener of its C extension, which scripts
(and python-blosc2's own tests) call directly to open the frame at an offset of a file, as an
:class:`~pyblosc2.SChunk` or, with a ``b2nd`` metalayer, an :class:`~pyblosc2.NDArray`.
``pyblosc2.blosc2_ext`` is this module.
"""

from __future__ import annotations

from typing import Any

from ..ndarray.ndarray import NDArray
from ..schunk import SChunk
from ..schunk import open as open_schunk

__all__ = ["open"]


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
