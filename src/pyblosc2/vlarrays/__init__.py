"""python-blosc2's containers of variable-length values: ObjectArray (one value per chunk),
BatchArray (batches of values in VL-block chunks), ListArray (typed list rows over either),
their msgpack rules, references and deserialization policy, and the dispatch of frames to
them by metalayer (``open``, ``from_cframe``, and :func:`open_member` for stores)."""

from .batch import Batch, BatchArrayItems
from .batcharray import BatchArray, batcharray_from_cframe
from .kinds import (
    Origin,
    from_cframe,
    open_member,
    open_object,
    register_kind,
    register_object,
    wrap,
)
from .listarray import ListArray
from .objectarray import ObjectArray, objectarray_from_cframe
from .opener import open
from .policy import DeserializeMode, UnsafeDeserializationError
from .ref import Ref, register_ref_opener
from .serial import packb, unpackb

__all__ = [
    "Batch",
    "BatchArray",
    "BatchArrayItems",
    "DeserializeMode",
    "ListArray",
    "ObjectArray",
    "Origin",
    "Ref",
    "UnsafeDeserializationError",
    "batcharray_from_cframe",
    "from_cframe",
    "objectarray_from_cframe",
    "open",
    "open_member",
    "open_object",
    "packb",
    "register_kind",
    "register_object",
    "register_ref_opener",
    "unpackb",
    "wrap",
]
