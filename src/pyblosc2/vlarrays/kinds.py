"""Which container a frame holds, by its metalayers (python-blosc2's ``from_cframe`` and
``open`` dispatch), and the containers msgpack ext 42 embeds.

A frame tagged ``listarray`` is a ListArray, ``vlarray`` an ObjectArray, ``batcharray`` a
BatchArray (checked in that order, as python-blosc2 does: a ListArray also carries its
backend's tag); a frame with ``b2nd`` is an NDArray, anything else an SChunk. The container
classes register themselves here when their module is imported (:func:`register_kind`), and
so can containers of higher layers (a store registers ``b2embed``): this module imports none
of them. Serialized objects — python-blosc2's b2o carriers (metalayer ``b2o``) and legacy
saved lazy arrays (``LazyArray``) — are opened by the opener a higher layer registers
(:func:`register_object`: the compute engine's saved expressions; ``import pyblosc2`` sets
a loader that imports the engine when the first one is met, :func:`set_object_loader`),
after the deserialization policy: ``"safe"`` refuses them with
:class:`UnsafeDeserializationError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._bytes import BufferLike
from ..ndarray.ndarray import NDArray
from ..schunk import SChunk, schunk_from_cframe
from .policy import DeserializeMode, UnsafeDeserializationError, normalize_deserialize

__all__ = [
    "Origin",
    "cframe_types",
    "from_cframe",
    "open_member",
    "open_object",
    "register_kind",
    "register_object",
    "set_object_loader",
    "wrap",
]

#: metalayer tag -> opener(schunk, policy), in dispatch order
_KINDS: dict[str, Callable[[SChunk, DeserializeMode], Any]] = {}
#: classes whose instances msgpack stores as their cframe (ext 42)
_CFRAME_TYPES: list[type] = [NDArray, SChunk]
#: python-blosc2's order of checks
_ORDER = ("b2embed", "listarray", "vlarray", "batcharray")


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a frame being opened lies when it is a member of a store: the store's path,
    the member's key and, for a member that is a file of a directory store, that file."""

    store: str
    key: str
    member_file: str | None = None


#: metalayer tag -> opener(schunk, policy, origin) of serialized objects (b2o, LazyArray)
_OBJECTS: dict[str, Callable[[SChunk, DeserializeMode, Origin | None], Any]] = {}
#: imports the layer that registers those openers, the first time one is missing
_OBJECT_LOADER: list[Callable[[], object]] = []


def set_object_loader(load: Callable[[], object]) -> None:
    """``load()`` imports the openers of serialized objects (they register themselves) the
    first time a frame tagged with one is opened and none is registered."""
    _OBJECT_LOADER[:] = [load]


def register_object(
    tag: str, opener: Callable[[SChunk, DeserializeMode, Origin | None], Any]
) -> None:
    """Open frames tagged ``tag`` (``"b2o"``, ``"LazyArray"``) with ``opener(schunk,
    policy, origin)``; the opener applies the policy itself (it knows the object's kind)."""
    _OBJECTS[tag] = opener


def open_object(schunk: SChunk, deserialize: Any, tag: str, origin: Origin | None = None) -> Any:
    """The serialized object the frame of ``schunk`` holds when it carries metalayer ``tag``
    (``LazyArray`` counts on a ``b2nd`` frame only), else ``NotImplemented``."""
    tags = _tags(schunk)
    if tag not in tags or (tag == "LazyArray" and "b2nd" not in tags):
        return NotImplemented
    mode = normalize_deserialize(deserialize)
    opener = _OBJECTS.get(tag)
    if opener is None and _OBJECT_LOADER:
        _OBJECT_LOADER[0]()
        opener = _OBJECTS.get(tag)
    if opener is None:
        if mode is DeserializeMode.SAFE:
            raise UnsafeDeserializationError(tag)
        raise NotImplementedError(f"opening a serialized object (metalayer {tag!r})")
    return opener(schunk, mode, origin)


def register_kind(
    tag: str, opener: Callable[[SChunk, DeserializeMode], Any], cls: type | None = None
) -> None:
    """Open frames tagged with metalayer ``tag`` with ``opener(schunk, policy)``; instances of
    ``cls`` (when given) are stored by msgpack as their cframe."""
    _KINDS[tag] = opener
    if cls is not None and cls not in _CFRAME_TYPES:
        _CFRAME_TYPES.append(cls)


def cframe_types() -> tuple[type, ...]:
    """The classes msgpack ext 42 stores (each has ``to_cframe``)."""
    return tuple(_CFRAME_TYPES)


def _tags(schunk: SChunk) -> set[str]:
    return {name for name, _ in schunk.header.metalayers}


def wrap(schunk: SChunk, deserialize: Any = DeserializeMode.SAFE) -> Any:
    """The container a super-chunk holds, by its metalayers: a registered kind, an NDArray
    (``b2nd``) or the SChunk itself.

    >>> import numpy as np
    >>> type(wrap(SChunk(chunksize=40, data=np.arange(10)))).__name__
    'SChunk'
    """
    mode = normalize_deserialize(deserialize)
    tags = _tags(schunk)
    found = open_object(schunk, mode, "b2o")
    if found is not NotImplemented:
        return found
    for tag in (*_ORDER, *_KINDS):
        if tag in tags and tag in _KINDS:
            return _KINDS[tag](schunk, mode)
    found = open_object(schunk, mode, "LazyArray")
    if found is not NotImplemented:
        return found
    if "b2nd" in tags:
        return NDArray(schunk)
    return schunk


def open_member(schunk: SChunk, deserialize: Any = DeserializeMode.SAFE) -> Any:
    """What a store holding ``schunk`` (a member read from its archive or directory) gives
    for it: a ListArray, ObjectArray or BatchArray when tagged so, an NDArray for ``b2nd``,
    else the SChunk (:func:`wrap`)."""
    return wrap(schunk, deserialize)


def from_cframe(cframe: BufferLike, copy: bool = True, *, deserialize: Any = "safe") -> Any:
    """The container held by an in-memory frame (python-blosc2's ``blosc2.from_cframe``).

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> from_cframe(asarray(np.arange(3)).to_cframe())[:]
    array([0, 1, 2])
    """
    if isinstance(cframe, str):
        cframe = cframe.encode("latin-1")
    return wrap(schunk_from_cframe(cframe, copy), deserialize)
