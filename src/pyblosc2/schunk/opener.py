"""Opening frame files as SChunks: local paths (at an offset too), fsspec URLs (the pickle
reopener lives with SChunk)."""

from __future__ import annotations

import os
from typing import Any

from ..backends.fileobj import is_binary_file
from ..errors import ParamError, ParamTypeError
from ..frame.location import (
    REMOTE_OPTIONS,
    as_urlpath,
    exists,
    is_url,
    open_file_object,
    open_frame,
)
from ..params import DParams, parse_int
from ..storage import MODES, Storage
from .members import open_members
from .schunk import SChunk

__all__ = ["open"]


def open(
    urlpath: str | os.PathLike[str], mode: str = "r", offset: int = 0, **kwargs: Any
) -> SChunk:
    """Open a frame file (at ``offset``) as an SChunk."""
    if isinstance(urlpath, bytes | bytearray | memoryview) and (
        len(urlpath) > 4096 or bytes(urlpath[:10]) == b"\x9e\xa8b2frame\x00"
    ):
        raise ParamTypeError(
            f"urlpath must be a path, got {len(urlpath)} bytes of data "
            "(open in-memory frames with schunk_from_cframe or ndarray_from_cframe)"
        )
    if mode is not None and mode not in MODES:
        raise ParamError(f"mode must be one of {MODES}, got {mode!r}")
    urlpath, kwargs = as_urlpath(urlpath, kwargs)  # an fsspec file object: by its URL
    if is_binary_file(urlpath):  # another binary file object: read in place, read-only
        return SChunk._from_frame(open_file_object(urlpath, offset, mode), Storage(mode="r"))
    offset = parse_int(offset, "offset", 0)
    path = os.fsdecode(urlpath)
    remote = {k: kwargs.pop(k) for k in REMOTE_OPTIONS if k in kwargs}
    if is_url(path):  # fsspec URLs: lazy, read-only unless a sparse frame
        storage = Storage(urlpath=path, mode="r" if mode == "r" else "a", contiguous=True)
        s = SChunk._from_frame(open_frame(path, storage, offset, remote), storage)
        s._offset, s._remote = offset, remote
        if "cparams" in kwargs or "dparams" in kwargs:
            s.cparams = s._cparams_from_header(kwargs.get("cparams"))
            s.dparams = DParams.from_any(kwargs.get("dparams"))
        return s
    if remote.get("storage_options"):
        raise ParamError(f"storage_options apply to URLs, not to the local path {path!r}")
    if not exists(path):
        raise FileNotFoundError(f"No such file or directory: {path}")
    if kwargs.get("mmap_mode") == "w+":
        raise ParamError(
            f"w+ mmap_mode cannot be used to open an existing file ({path}): it creates one"
        )
    if offset:
        storage = Storage(urlpath=path, mode="r", contiguous=True)
        if (mode, kwargs.get("mmap_mode")) not in (("r", None), (None, "r"), ("r", "r")):
            raise NotImplementedError("writing to a frame embedded at an offset")
        s = SChunk._from_frame(open_frame(path, storage, offset), storage, kwargs.get("cparams"))
        s._offset = offset
        return s
    return open_members(SChunk, path, mode, kwargs)
