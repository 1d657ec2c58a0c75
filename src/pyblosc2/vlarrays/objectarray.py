"""``ObjectArray``: a list of Python values, one chunk each (python-blosc2's ``ObjectArray``).

On disk (python-blosc2 4.x): a super-chunk with the metalayer ``vlarray`` =
``{"version": 1, "serializer": "msgpack"}`` (the tag keeps its pre-4.0 name), typesize 1 and
chunks of any size; entry ``i`` is chunk ``i``: a regular Blosc2 chunk (``compress2`` with the
container's parameters) of the value's msgpack (:mod:`.serial`). With the default parameters
(ZSTD, ``clevel`` > 0) the chunks carry a zstd dictionary, as python-blosc2 turns ``use_dict``
on unless told otherwise.
"""

from __future__ import annotations

import copy as _copy
import sys
from dataclasses import replace
from typing import Any

from .._bytes import BufferLike
from ..chunk.encode import EncodeSpec, encode_chunk
from ..constants import MAX_BUFFERSIZE, Codec
from ..errors import ParamError
from ..params import CParams
from ..schunk import SChunk, format_nbytes, schunk_from_cframe
from .chunklist import ChunkList
from .kinds import register_kind
from .policy import UnsafeDeserializationError, get_deserialize, set_deserialize
from .serial import packb, unpackb

__all__ = ["ObjectArray", "objectarray_from_cframe"]

TAG = "vlarray"
_META = {"version": 1, "serializer": "msgpack"}


def check_serialized_size(payload: bytes) -> bytes:
    """``payload``, refused when one chunk cannot hold it.

    The limit is read from the package at call time, as python-blosc2 reads
    ``blosc2.MAX_BUFFERSIZE``, so a test (or a user) may lower it; looked up in
    ``sys.modules`` rather than imported, which would be an import circle.
    """
    package = sys.modules.get(__name__.split(".")[0])
    limit = min(MAX_BUFFERSIZE, getattr(package, "MAX_BUFFERSIZE", MAX_BUFFERSIZE))
    if len(payload) > limit:
        raise ParamError(f"Serialized objects cannot be larger than {limit} bytes")
    return payload


class ObjectArray(ChunkList):
    """A list of Python values stored one chunk each.

    >>> oa = ObjectArray()
    >>> oa.extend([1, "two", (3, b"four"), {"five": [5.0]}])
    >>> len(oa), oa[2], oa[-1]
    (4, (3, b'four'), {'five': [5.0]})
    >>> oa[1:3] = ["x"]; list(oa)
    [1, 'x', {'five': [5.0]}]
    """

    _tag = TAG
    _label = "ObjectArray"

    def __init__(
        self,
        chunksize: int | None = None,
        _from_schunk: SChunk | None = None,
        deserialize: str | None = None,
        **kwargs: Any,
    ) -> None:
        if _from_schunk is not None:
            if chunksize is not None or kwargs:
                raise ValueError(
                    "Cannot pass `chunksize` or other arguments together with `_from_schunk`"
                )
            if deserialize is not None:
                set_deserialize(_from_schunk, deserialize)
            self._attach(_from_schunk)
            return
        self._auto_dict = kwargs.get("cparams") is None or (
            isinstance(kwargs["cparams"], dict) and "use_dict" not in kwargs["cparams"]
        )
        self._create(dict(_META), kwargs, deserialize, -1 if chunksize is None else chunksize)

    def _cparams(self, cparams: Any) -> CParams:
        cp = super()._cparams(cparams)
        # many small msgpack values: python-blosc2 turns zstd dictionaries on by default
        if getattr(self, "_auto_dict", False) and cp.codec == Codec.ZSTD and cp.clevel > 0:
            cp = replace(cp, use_dict=True)
        return cp

    # -- entries ------------------------------------------------------------------------
    def _encode(self, value: Any) -> tuple[bytes, Any]:
        payload = check_serialized_size(packb(value))
        spec = EncodeSpec.from_cparams(self.schunk.cparams)
        return encode_chunk(memoryview(payload), spec), None

    def _entry(self, index: int) -> Any:
        payload = self.schunk.decompress_chunk(index)
        try:
            return unpackb(payload, get_deserialize(self.schunk))
        except UnsafeDeserializationError as exc:
            raise UnsafeDeserializationError(
                exc.kind, location=f"ObjectArray index {index}"
            ) from exc

    # -- the container ------------------------------------------------------------------
    @property
    def chunksize(self) -> int:
        """The super-chunk's chunk size."""
        return self.schunk.chunksize

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs describing the container (python-blosc2's)."""
        nbytes, cbytes = [], []
        for i in range(len(self)):
            h = self.schunk.get_chunk(i)
            nbytes.append(int.from_bytes(h[4:8], "little"))
            cbytes.append(int.from_bytes(h[12:16], "little"))

        def avg(v: list[int]) -> str:
            return f"{sum(v) / len(v) if v else 0.0:.2f}"

        return [
            ("type", "ObjectArray"),
            ("entries", len(self)),
            ("item_nbytes_min", min(nbytes, default=0)),
            ("item_nbytes_max", max(nbytes, default=0)),
            ("item_nbytes_avg", avg(nbytes)),
            ("chunk_cbytes_min", min(cbytes, default=0)),
            ("chunk_cbytes_max", max(cbytes, default=0)),
            ("chunk_cbytes_avg", avg(cbytes)),
            ("nbytes", format_nbytes(self.nbytes)),
            ("cbytes", format_nbytes(self.cbytes)),
            ("cratio", f"{self.cratio:.2f}x"),
            ("cparams", self.cparams),
            ("dparams", self.dparams),
        ]

    def copy(self, **kwargs: Any) -> ObjectArray:
        """A copy, with constructor arguments overriding this container's."""
        if "meta" in kwargs:
            raise ValueError("meta should not be passed to copy")
        kwargs.setdefault("cparams", _copy.deepcopy(self.cparams))
        kwargs.setdefault("dparams", _copy.deepcopy(self.dparams))
        kwargs.setdefault("chunksize", -1)
        kwargs.setdefault("deserialize", get_deserialize(self.schunk))
        if "storage" not in kwargs:
            kwargs["meta"] = self._copy_meta()
            kwargs.setdefault("contiguous", self.schunk.contiguous)
            if "urlpath" in kwargs:
                kwargs.setdefault("mode", "w")
        out = ObjectArray(**kwargs)
        out.extend(self)
        return out


def objectarray_from_cframe(
    cframe: BufferLike, copy: bool = True, *, deserialize: str = "safe"
) -> ObjectArray:
    """The ObjectArray held by an in-memory frame (python-blosc2's
    ``objectarray_from_cframe``).

    >>> oa = ObjectArray(); oa.append({"k": [1, 2]})
    1
    >>> objectarray_from_cframe(oa.to_cframe())[0]
    {'k': [1, 2]}
    """
    schunk = schunk_from_cframe(cframe, copy)
    set_deserialize(schunk, deserialize)
    return ObjectArray(_from_schunk=schunk)


register_kind(
    TAG,
    lambda schunk, mode: ObjectArray(_from_schunk=set_deserialize(schunk, mode)),
    ObjectArray,
)
