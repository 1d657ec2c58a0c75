"""python-blosc2's ``blosc2.msgpack_utils``: values packed as its containers store them
(:mod:`pyblosc2.vlarrays.serial`).

>>> msgpack_unpackb(msgpack_packb({"t": (1, 2), "c": 2j}))
{'t': (1, 2), 'c': 2j}
"""

from __future__ import annotations

from typing import Any

from .vlarrays.policy import DeserializeMode
from .vlarrays.serial import packb, unpackb

__all__ = ["msgpack_packb", "msgpack_unpackb"]


def msgpack_packb(value: Any) -> bytes:
    """``value`` as python-blosc2's containers store it."""
    return packb(value)


def msgpack_unpackb(payload: Any, *, deserialize: Any = DeserializeMode.FULL) -> Any:
    """A stored value read back (``deserialize``: ``"full"``, the default here as in
    python-blosc2, or ``"safe"``)."""
    return unpackb(payload, deserialize)
