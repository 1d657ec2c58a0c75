"""``open``: a container file as the container python-blosc2 would give for it (an NDArray,
an ObjectArray, a BatchArray, a ListArray, a registered kind, or an SChunk), and the
``urlpath`` references of :class:`~.ref.Ref`."""

from __future__ import annotations

import os
from typing import Any

from ..schunk import open as open_schunk
from .kinds import wrap
from .policy import DeserializeMode, normalize_deserialize
from .ref import Ref, register_ref_opener

__all__ = ["open"]


def open(urlpath: str | os.PathLike[str], mode: str = "r", offset: int = 0, **kwargs: Any) -> Any:
    """Open a frame file: the container its metalayers name (``deserialize``: ``"safe"``,
    the default, or ``"full"``, the policy of the values it holds).

    >>> import os, tempfile
    >>> from pyblosc2.vlarrays import ObjectArray
    >>> path = os.path.join(tempfile.mkdtemp(), "values.b2frame")
    >>> ObjectArray(urlpath=path, mode="w").extend([{"a": 1}, (2, 3)])
    >>> obj = open(path)
    >>> type(obj).__name__, obj[1]
    ('ObjectArray', (2, 3))
    """
    mode_ = normalize_deserialize(kwargs.pop("deserialize", DeserializeMode.SAFE))
    return wrap(open_schunk(urlpath, mode, offset, **kwargs), mode_)


def _open_urlpath(ref: Ref, deserialize: str) -> Any:
    return open(str(ref.urlpath), mode="r", deserialize=deserialize)


register_ref_opener("urlpath", _open_urlpath)
