"""``Ref``: a durable reference to stored data (python-blosc2's ``blosc2.Ref``), which
ObjectArray and BatchArray store as msgpack ext 43 (:mod:`.serial`).

A reference is a kind and its fields: ``urlpath`` (a container file), ``dictstore_key`` (a
member of a DictStore: ``urlpath`` and ``key``), ``c2array`` (a Caterva2 array: ``path`` and
``urlbase``), ``fsspec``/``zarr`` (a URL), ``b2z``/``hdf5`` (a dataset of an archive:
``urlpath`` and ``key``). :meth:`Ref.to_dict` gives python-blosc2's payload (with
``"version": 1``). pyblosc2 opens ``urlpath`` references, and ``dictstore_key`` ones when a
store package has registered its opener (:func:`register_ref_opener`); the others name the
python-blosc2 feature they need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ParamError, ParamTypeError

__all__ = ["Ref", "register_ref_opener"]

_URL_KINDS = {"urlpath", "fsspec", "zarr"}
_KEY_KINDS = {"dictstore_key", "b2z", "hdf5"}
#: kind -> opener(ref, deserialize): registered by the packages that can open them
_OPENERS: dict[str, Callable[[Ref, str], Any]] = {}


def register_ref_opener(kind: str, opener: Callable[[Ref, str], Any]) -> None:
    """Open references of ``kind`` with ``opener(ref, deserialize)``."""
    _OPENERS[kind] = opener


@dataclass(frozen=True, slots=True)
class Ref:
    """A durable reference.

    >>> r = Ref.urlpath_ref("data/a.b2nd")
    >>> r.to_dict()
    {'kind': 'urlpath', 'version': 1, 'urlpath': 'data/a.b2nd'}
    >>> Ref.from_dict(r.to_dict()) == r
    True
    """

    #: what is referenced: ``urlpath``, ``dictstore_key``, ``c2array``, ``fsspec`` or ``zarr``
    kind: str
    #: the file or URL (every kind but ``c2array``)
    urlpath: str | None = None
    #: the key inside a DictStore or TreeStore (``dictstore_key``)
    key: str | None = None
    #: the dataset path on a Caterva2 server (``c2array``)
    path: str | None = None
    #: the Caterva2 server's URL (``c2array``)
    urlbase: str | None = None

    def __post_init__(self) -> None:
        if self.kind in _URL_KINDS:
            if not isinstance(self.urlpath, str):
                raise ParamTypeError(f"Ref(kind={self.kind!r}) requires a string 'urlpath'")
            if (self.key, self.path, self.urlbase) != (None, None, None):
                raise ParamError(f"Ref(kind={self.kind!r}) only supports the 'urlpath' field")
        elif self.kind in _KEY_KINDS:
            if not isinstance(self.urlpath, str) or not isinstance(self.key, str):
                raise ParamTypeError(f"Ref(kind={self.kind!r}) requires string 'urlpath' and 'key'")
            if (self.path, self.urlbase) != (None, None):
                raise ParamError(f"Ref(kind={self.kind!r}) only supports 'urlpath' and 'key'")
        elif self.kind == "c2array":
            if not isinstance(self.path, str):
                raise ParamTypeError("Ref(kind='c2array') requires a string 'path'")
            if self.urlbase is not None and not isinstance(self.urlbase, str):
                raise ParamTypeError(
                    "Ref(kind='c2array') requires 'urlbase' to be a string or None"
                )
            if (self.urlpath, self.key) != (None, None):
                raise ParamError("Ref(kind='c2array') only supports 'path' and 'urlbase'")
        else:
            raise ParamError(f"Unsupported Ref kind: {self.kind!r}")

    @classmethod
    def urlpath_ref(cls, urlpath: str) -> Ref:
        """A reference to the container stored at ``urlpath``."""
        return cls(kind="urlpath", urlpath=urlpath)

    @classmethod
    def dictstore_key(cls, urlpath: str, key: str) -> Ref:
        """A reference to the value at ``key`` of the DictStore or TreeStore at ``urlpath``."""
        return cls(kind="dictstore_key", urlpath=urlpath, key=key)

    @classmethod
    def c2array_ref(cls, path: str, urlbase: str | None = None) -> Ref:
        """A reference to a Caterva2 dataset ``path`` (on the server at ``urlbase``)."""
        return cls(kind="c2array", path=path, urlbase=urlbase)

    @classmethod
    def fsspec_ref(cls, urlpath: str) -> Ref:
        """A reference to an fsspec URL."""
        return cls(kind="fsspec", urlpath=urlpath)

    @classmethod
    def zarr_ref(cls, urlpath: str) -> Ref:
        """A reference to a zarr array at ``urlpath``."""
        return cls(kind="zarr", urlpath=urlpath)

    @classmethod
    def from_dict(cls, payload: Any) -> Ref:
        """The reference of python-blosc2's payload (``version`` must be 1)."""
        if not isinstance(payload, dict):
            raise ParamTypeError(f"Ref payload must be a mapping, got {type(payload).__name__}")
        if payload.get("version") != 1:
            raise ParamError(f"Unsupported Ref payload version: {payload.get('version')!r}")
        return cls(
            kind=payload.get("kind"),  # type: ignore[arg-type]
            urlpath=payload.get("urlpath"),
            key=payload.get("key"),
            path=payload.get("path"),
            urlbase=payload.get("urlbase"),
        )

    @classmethod
    def from_object(cls, obj: Any) -> Ref:
        """The reference of a stored container (an NDArray, SChunk, ObjectArray, ... with a
        ``urlpath``; a store member keeps the reference it was read with)."""
        ref = getattr(obj, "_blosc2_ref", None)
        if isinstance(ref, cls):
            return ref
        schunk = getattr(obj, "schunk", obj)
        urlpath = getattr(schunk, "urlpath", None)
        if not hasattr(schunk, "urlpath"):
            raise ParamTypeError(
                "Durable Blosc2 references require NDArray, SChunk or container operands"
            )
        if urlpath is None:
            raise ParamError(
                "Durable Blosc2 references require operands to be stored on disk/network"
            )
        return cls.urlpath_ref(str(urlpath))

    def to_dict(self) -> dict[str, Any]:
        """python-blosc2's payload of this reference."""
        payload: dict[str, Any] = {"kind": self.kind, "version": 1}
        if self.kind in _URL_KINDS:
            payload["urlpath"] = self.urlpath
        elif self.kind in _KEY_KINDS:
            payload["urlpath"] = self.urlpath
            payload["key"] = self.key
        else:
            payload["path"] = self.path
            payload["urlbase"] = self.urlbase
        return payload

    def open(self, *, deserialize: str = "safe") -> Any:
        """The data this reference names, opened read-only."""
        opener = _OPENERS.get(self.kind)
        if opener is None:
            raise NotImplementedError(
                f"opening Ref(kind={self.kind!r}) needs a python-blosc2 feature pyblosc2 lacks "
                "(remote and Caterva2 arrays)"
                if self.kind not in _KEY_KINDS or self.kind != "dictstore_key"
                else "opening DictStore member references needs the stores (DictStore)"
            )
        return opener(self, deserialize)
