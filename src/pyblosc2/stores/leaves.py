"""The values a store holds (its *leaves*) and how each is opened from its frame.

A leaf is stored as a Blosc2 frame: embedded (its cframe inside an EmbedStore), or external
(a file of the store's directory, or a member of its zip archive opened where it lies). What
the frame holds is told by its metalayers, as python-blosc2 tells it
(``process_opened_object``): ``b2nd`` makes an :class:`~pyblosc2.NDArray`, no metalayer an
:class:`~pyblosc2.SChunk`; ``vlarray``, ``batcharray`` and ``listarray`` are python-blosc2's
variable-length containers (``ObjectArray``, ``BatchArray``, ``ListArray``), and ``b2o``,
``LazyArray`` and ``proxy-source`` mark serialized objects, lazy expressions and proxies.
Saved lazy expressions (``b2o``, ``LazyArray``) are opened by the opener the compute engine
registers (:func:`pyblosc2.vlarrays.open_object`), told which store holds them (``origin``)
so that their operands are looked for inside it. The containers pyblosc2 does not open
raise :class:`NotImplementedError` naming them (:data:`CONTAINER_OPENERS` is where an
implementation plugs in).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..backends.base import READ_ONLY, ByteStore
from ..errors import ParamError, ParamTypeError
from ..frame.frame import Frame
from ..ndarray.ndarray import NDArray
from ..params import DParams
from ..schunk import SChunk, schunk_from_cframe
from ..schunk import open as open_schunk
from ..storage import Storage
from ..vlarrays import Origin, open_member, open_object
from ..vlarrays.policy import normalize_deserialize
from .keys import EXTERNAL_SUFFIXES

__all__ = [
    "CONTAINER_OPENERS",
    "URLPath",
    "check_deserialize",
    "container_of",
    "leaf_at",
    "leaf_file",
    "leaf_from_cframe",
    "leaf_kind",
    "leaf_nbytes",
    "leaf_suffix",
    "leaf_urlpath",
    "schunk_in_window",
]

#: metalayer of a variable-length container -> (its python-blosc2 name, opener): the opener
#: (``opener(schunk, deserialize)``) is :func:`pyblosc2.vlarrays.open_member`
CONTAINER_OPENERS: dict[str, tuple[str, Callable[[SChunk, str], Any]]] = {
    "listarray": ("ListArray", open_member),
    "vlarray": ("ObjectArray", open_member),
    "batcharray": ("BatchArray", open_member),
}
# metalayers of objects pyblosc2 does not rebuild, checked first as python-blosc2 does
_OBJECT_LAYERS = {
    "proxy-source": "Proxy (a cached view of another source)",
}
DESERIALIZE_MODES = ("safe", "full")


@dataclass(frozen=True)
class URLPath:
    """python-blosc2's name of a dataset on a Caterva2 server (``path`` under ``urlbase``),
    which an EmbedStore may hold a reference to. pyblosc2 does not talk to Caterva2:
    opening one raises :class:`NotImplementedError`.

    >>> URLPath("@public/examples/ds-1d.b2nd", "https://cat2.cloud/demo").path
    '@public/examples/ds-1d.b2nd'
    """

    path: str
    urlbase: str | None = None
    auth_token: str | None = None


def check_deserialize(mode: Any) -> str:
    """python-blosc2's ``deserialize`` policy: ``"safe"`` or ``"full"``.

    >>> check_deserialize("full")
    'full'
    """
    return normalize_deserialize(mode).value


def container_of(schunk: SChunk, deserialize: str = "safe", origin: Origin | None = None) -> Any:
    """What the frame of ``schunk`` holds, by its metalayers (see the module docstring);
    ``deserialize`` is the policy of the values a variable-length container holds and of
    saved expressions, ``origin`` the store holding the frame (None: a file of its own).

    >>> container_of(SChunk(data=b"abc")).nbytes
    3
    """
    names = {name for name, _ in schunk.header.metalayers}
    for layer, what in _OBJECT_LAYERS.items():
        if layer in names:
            raise NotImplementedError(f"opening a {what}: pyblosc2 reads plain containers only")
    found = open_object(schunk, deserialize, "b2o", origin)
    if found is not NotImplemented:
        return found
    for layer, (_, opener) in CONTAINER_OPENERS.items():
        if layer in names:
            return opener(schunk, deserialize)
    if "b2nd" in names:
        found = open_object(schunk, deserialize, "LazyArray", origin)
        if found is not NotImplemented:
            return found
        return NDArray(schunk)
    return schunk


def leaf_from_cframe(cframe: bytes, deserialize: str = "safe", origin: Origin | None = None) -> Any:
    """An in-memory copy of the leaf in ``cframe`` (changes to it are not stored)."""
    return container_of(schunk_from_cframe(cframe, copy=True), deserialize, origin)


def leaf_at(
    path: str,
    offset: int = 0,
    *,
    mode: str = "r",
    mmap_mode: str | None = None,
    dparams: Any = None,
    options: dict[str, Any] | None = None,
    deserialize: str = "safe",
    origin: Origin | None = None,
) -> Any:
    """The leaf whose frame starts at ``offset`` of the file (or fsspec URL) ``path``: read
    where it lies, without copying (memory-mapped with ``mmap_mode='r'``)."""
    kwargs: dict[str, Any] = dict(options or {})
    if mmap_mode is not None:
        kwargs["mmap_mode"] = mmap_mode
    if dparams is not None:
        kwargs["dparams"] = dparams
    return container_of(open_schunk(path, mode, offset, **kwargs), deserialize, origin)


class Window:
    """The ``length`` bytes of ``inner`` from ``offset`` on, read-only: an archive member,
    so that a frame can never read past its member (a :class:`ByteStore`). ``owned``: closing
    the window closes ``inner`` (a store shared by the members of a remote archive is not)."""

    def __init__(self, inner: ByteStore, offset: int, length: int, *, owned: bool = True):
        self.inner, self.offset, self.length, self.owned = inner, offset, length, owned
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return max(0, min(self.inner.size - self.offset, self.length))

    @property
    def writable(self) -> bool:
        return False

    def read(self, pos: int, n: int) -> bytes | memoryview:
        data = self.inner.read(self.offset + pos, max(0, min(n, self.size - pos)))
        self.bytes_read += len(data)
        return data

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        fetch = getattr(self.inner, "prefetch", None)
        if fetch is not None:
            end = self.size
            fetch([(self.offset + a, self.offset + min(b, end)) for a, b in spans if a < end])

    def write(self, pos: int, data: bytes | memoryview) -> None:
        raise ParamError(READ_ONLY)

    def truncate(self, size: int) -> None:
        raise ParamError(READ_ONLY)

    def sync(self) -> None:
        pass

    def close(self) -> None:
        if self.owned:
            self.inner.close()


#: what a frame reader reads first: its header, and its index and trailer at its end
_HEAD, _TAIL = 1 << 12, 1 << 14


def schunk_in_window(
    inner: ByteStore,
    offset: int,
    length: int,
    path: str,
    dparams: Any = None,
    *,
    owned: bool = True,
    remote: dict[str, Any] | None = None,
) -> SChunk:
    """The super-chunk whose frame is the ``length`` bytes at ``offset`` of ``inner`` (the
    member of the archive ``path``), read where it lies; a remote archive's member has its
    head and tail fetched together first."""
    window = Window(inner, offset, length, owned=owned)
    if hasattr(inner, "prefetch"):
        window.prefetch([(0, min(_HEAD, length)), (max(0, length - _TAIL), length)])
    storage = Storage(urlpath=path, mode="r", contiguous=True)
    s = SChunk._from_frame(Frame(window), storage)
    s._offset = offset
    s._remote = dict(remote or {})
    if dparams is not None:
        s.dparams = DParams.from_any(dparams)
    return s


def _schunk_of(value: Any) -> SChunk:
    if isinstance(value, SChunk):
        return value
    inner = getattr(value, "schunk", None)
    if isinstance(inner, SChunk):
        return inner
    raise ParamTypeError(
        "a store holds NDArray, SChunk, numpy arrays and containers with a super-chunk, got "
        f"{type(value).__name__}"
    )


def leaf_kind(value: Any) -> str:
    """``'ndarray'``, ``'schunk'`` or the metalayer of a variable-length container (what
    decides the suffix of an external leaf).

    >>> leaf_kind(SChunk(data=b"abc"))
    'schunk'
    """
    if isinstance(value, NDArray):
        return "ndarray"
    names = {name for name, _ in _schunk_of(value).header.metalayers}
    for layer in CONTAINER_OPENERS:
        if layer in names:
            return layer
    return "ndarray" if "b2nd" in names else "schunk"


def leaf_suffix(kind: str) -> str:
    """The suffix python-blosc2 gives an external leaf of ``kind``: ``.b2nd`` for an
    NDArray, ``.b2b`` for a BatchArray or ListArray, ``.b2f`` for the rest.

    >>> leaf_suffix("ndarray"), leaf_suffix("listarray"), leaf_suffix("vlarray")
    ('.b2nd', '.b2b', '.b2f')
    """
    if kind in ("batcharray", "listarray"):
        return EXTERNAL_SUFFIXES["batcharray"]
    return EXTERNAL_SUFFIXES.get(kind, EXTERNAL_SUFFIXES["schunk"])


def leaf_nbytes(value: Any) -> int:
    """The uncompressed size that python-blosc2's ``threshold`` compares: ``nbytes`` of an
    NDArray or SChunk, of the super-chunk of another container."""
    if isinstance(value, NDArray | SChunk):
        return int(value.nbytes)
    return int(_schunk_of(value).nbytes)


def leaf_urlpath(value: Any) -> str | None:
    """Where a value is stored on disk (python-blosc2 puts such values in external files
    when ``threshold`` is None): its local path, None in memory or at a URL."""
    path = getattr(value, "urlpath", None)
    if path is None:
        return None
    path = os.fsdecode(path)
    return path if "://" not in path.split("::", 1)[0] else None


def leaf_file(value: Any) -> str | None:
    """The local file that is exactly the frame of ``value`` (copied as is when stored
    externally), None for a frame in memory, in a directory, at a URL or inside a file."""
    path = leaf_urlpath(value)
    schunk = value if isinstance(value, SChunk) else getattr(value, "schunk", None)
    if path is None or not isinstance(schunk, SChunk) or schunk._offset:
        return None
    return path if os.path.isfile(path) else None
