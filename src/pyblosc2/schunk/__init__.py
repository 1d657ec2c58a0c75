"""Super-chunks: a sequence of chunks stored as a frame (python-blosc2's ``SChunk``).

One module per concern: the object model (:mod:`.schunk`), chunk-list edits (:mod:`.edits`),
Python pre/postfilters and fillers (:mod:`.hooks`), the further python-blosc2 members
(:mod:`.members`), the read/write guards every method runs under (:mod:`.guards`) and the
opening of frame files and URLs (:mod:`.opener`).
"""

from typing import Any

from ..meta import Meta, VLMeta
from ..params import DParams
from ..storage import Storage
from .members import format_nbytes
from .opener import open
from .schunk import ChunkInfo, SChunk, remove_urlpath, schunk_from_cframe

__all__ = [
    "ChunkInfo",
    "Meta",
    "SChunk",
    "Storage",
    "VLMeta",
    "format_nbytes",
    "open",
    "remove_urlpath",
    "schunk_from_cframe",
]


def _set_default_dparams(kwargs: dict[str, Any]) -> None:
    """python-blosc2's private helper its tests call before ``blosc2_ext.open``: the default
    ``dparams`` when none are given."""
    if kwargs.get("dparams") is None:
        kwargs["dparams"] = DParams()
