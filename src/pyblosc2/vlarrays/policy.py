"""The deserialization policy of stored containers (python-blosc2's ``deserialize``).

Values stored in an ObjectArray or a BatchArray are msgpack; some msgpack extensions are
*active*: ext 42 embeds a whole container (a cframe) and ext 43 a reference to other data
(a :class:`~pyblosc2.vlarrays.ref.Ref`, a remote array, a lazy expression). ``"safe"`` decodes
passive values only and raises :class:`UnsafeDeserializationError` on an active one;
``"full"`` decodes everything. As in python-blosc2, containers opened from storage default to
``"safe"`` and new containers to ``"full"``; the policy of an opened container is fixed.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from ..errors import Blosc2Error, ParamError, ParamTypeError

__all__ = [
    "DeserializeMode",
    "UnsafeDeserializationError",
    "get_deserialize",
    "normalize_deserialize",
    "set_deserialize",
]


class DeserializeMode(str, Enum):
    """How much of a stored value to reconstruct."""

    SAFE = "safe"
    FULL = "full"

    def __str__(self) -> str:
        return self.value


class UnsafeDeserializationError(Blosc2Error):
    """An active stored value met under ``deserialize="safe"`` (a ``ValueError``).

    >>> str(UnsafeDeserializationError("embedded cframe", location="ObjectArray index 3"))[:60]
    "Encountered active serialized value 'embedded cframe' in Obj"
    """

    def __init__(self, kind: str, *, location: str | None = None) -> None:
        where = f" in {location}" if location else ""
        super().__init__(
            f"Encountered active serialized value {kind!r}{where} while using "
            "deserialize='safe'. Reopen with deserialize='full' only if you trust "
            "this data and intend to allow reference resolution and lazy-object reconstruction."
        )
        self.kind = kind
        self.location = location


def normalize_deserialize(value: Any) -> DeserializeMode:
    """``value`` as a :class:`DeserializeMode`.

    >>> normalize_deserialize("full") is DeserializeMode.FULL
    True
    """
    if isinstance(value, bool):
        raise ParamTypeError("deserialize must be 'safe' or 'full', not a boolean")
    if isinstance(value, DeserializeMode):
        return value
    try:
        return DeserializeMode(value)
    except (TypeError, ValueError):
        raise ParamError(f"deserialize must be 'safe' or 'full', got {value!r}") from None


def get_deserialize(obj: Any, default: Any = DeserializeMode.FULL) -> DeserializeMode:
    """The policy attached to ``obj`` (or to its super-chunk), else ``default``."""
    carrier = getattr(obj, "schunk", obj)
    return normalize_deserialize(getattr(carrier, "_deserialize_mode", default))


def set_deserialize(obj: Any, value: Any) -> Any:
    """Attach policy ``value`` to ``obj`` and its super-chunk; a different policy already
    attached is refused (reopen the object instead)."""
    mode = normalize_deserialize(value)
    for target in {id(o): o for o in (getattr(obj, "schunk", obj), obj)}.values():
        current = getattr(target, "_deserialize_mode", None)
        if current is not None and normalize_deserialize(current) is not mode:
            raise ParamError(
                "The deserialization policy of an opened object cannot be changed; reopen it"
            )
        target._deserialize_mode = mode
    return obj
