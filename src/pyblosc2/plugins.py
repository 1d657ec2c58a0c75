"""python-blosc2's user codecs and filters: ``register_codec``, ``register_filter`` and the
``ucodecs_registry`` / ``ufilters_registry`` mappings, over pyblosc2's codec and filter
registries (spec §2.3 compformat 6, §9.0 user filter ids).

The rules are python-blosc2's (``blosc2/core.py``, ``blosc2_ext.pyx``) and C-Blosc2's
(``blosc2.c:register_codec_private``, ``register_filter_private``):

* ids are 160-255 for both codecs and filters; anything else is a :class:`ValueError`;
* both callables or none: none names a C plugin loaded from a shared library, which pyblosc2
  cannot load (using it raises :class:`NotImplementedError`, a ``RuntimeError``);
* a Python codec or filter already registered under the id is a ``ValueError`` ("Id already in
  use"); a C-level registration under the same id is kept when the name is the same (for a
  codec) and refused with a ``RuntimeError`` when it differs;
* Python plug-ins run with one thread only: a super-chunk whose compression or decompression
  parameters ask for more threads is refused with a ``ValueError``
  (:func:`check_python_plugins`).

The codec's ``version`` is written in the ``versionlz`` byte of its chunks, as C does.
Registrations are process-wide, as in python-blosc2; tests restore them with the registries'
``registry_snapshot``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .codecs import registry as codec_registry
from .codecs.user import CodecFunction, DynamicCodec, PythonCodec
from .constants import USER_REGISTERED_CODECS_STOP
from .errors import ParamError, RegistrationError
from .filters import registry as filter_registry
from .filters.user import DynamicFilter, FilterFunction, PythonFilter

__all__ = [
    "USER_IDS_START",
    "check_python_plugins",
    "register_codec",
    "register_filter",
    "ucodecs_registry",
    "ufilters_registry",
]

#: BLOSC2_USER_REGISTERED_CODECS_START == BLOSC2_USER_REGISTERED_FILTERS_START
USER_IDS_START = 160


def _check_id(kind: str, plugin_id: Any) -> int:
    if isinstance(plugin_id, bool) or not isinstance(plugin_id, int):
        raise ParamError(f"`id` must be an int in {USER_IDS_START}..255, got {plugin_id!r}")
    if not USER_IDS_START <= plugin_id <= USER_REGISTERED_CODECS_STOP:
        raise ParamError(
            f"`id` of a user {kind} must be between {USER_IDS_START} and "
            f"{USER_REGISTERED_CODECS_STOP}, got {plugin_id}"
        )
    return plugin_id


def register_codec(
    codec_name: str,
    id: int,
    encoder: CodecFunction | None = None,
    decoder: CodecFunction | None = None,
    version: int = 1,
) -> None:
    """Register a user codec: ``encoder(input, output, meta, schunk) -> int`` (bytes written,
    0 when it cannot compress) and ``decoder(input, output, meta, schunk) -> int`` (bytes
    decoded), applied to each stream of a chunk (python-blosc2's ``blosc2.register_codec``).

    >>> import numpy as np
    >>> from pyblosc2.codecs.registry import registry_snapshot
    >>> def enc(inp, out, meta, schunk):
    ...     out[: len(inp)] = inp[::-1]
    ...     return len(inp) if len(inp) < len(out) else 0
    >>> def dec(inp, out, meta, schunk):
    ...     out[:] = inp[::-1]
    ...     return len(out)
    >>> with registry_snapshot():
    ...     register_codec("reverse", 200, enc, dec)
    ...     200 in ucodecs_registry, ucodecs_registry[200][0]
    (True, 'reverse')
    """
    cid = _check_id("codec", id)
    if (encoder is None) != (decoder is None):
        raise ParamError("both encoder and decoder must be given, or none")
    if not isinstance(codec_name, str | bytes):
        raise ParamError(f"codec_name must be a str, got {type(codec_name).__name__}")
    name = codec_name.decode() if isinstance(codec_name, bytes) else codec_name
    current = codec_registry.registered_codecs().get(cid)
    if isinstance(current, PythonCodec):
        raise ParamError("Id already in use")
    if current is not None and current.name != name:
        raise RegistrationError(
            f"Error while registering codec: id {cid} is already registered as "
            f"{current.name!r}, not {name!r}"
        )
    if encoder is None or decoder is None:
        if current is None:
            codec_registry.register_codec(DynamicCodec(name, cid))
        return
    if current is not None:  # a dynamic registration of the same name: the functions win
        codec_registry.unregister_codec(cid)
    codec_registry.register_codec(PythonCodec(name, cid, encoder, decoder, int(version)))


def register_filter(
    id: int,
    forward: FilterFunction | None = None,
    backward: FilterFunction | None = None,
    name: str | None = None,
) -> None:
    """Register a user filter: ``forward(input, output, meta, schunk)`` and
    ``backward(input, output, meta, schunk)``, applied to each block of a chunk
    (python-blosc2's ``blosc2.register_filter``).

    >>> import numpy as np
    >>> from pyblosc2.filters.registry import registry_snapshot
    >>> def fwd(inp, out, meta, schunk):
    ...     np.bitwise_xor(inp, meta, out=out)
    >>> with registry_snapshot():
    ...     register_filter(170, fwd, fwd, "xor")
    ...     170 in ufilters_registry
    True
    """
    fid = _check_id("filter", id)
    if (forward is None) != (backward is None):
        raise ParamError("both forward and backward must be given, or none")
    if forward is None and not name:
        raise ParamError("You need to pass the filter name or the forward and backward functions")
    current = filter_registry.user_filters().get(fid)
    if isinstance(current, PythonFilter):
        raise ParamError("Id already in use")
    label = name or f"ufilter{fid}"
    if current is not None and name and current.name != name:
        raise RegistrationError(
            f"Error while registering filter: id {fid} is already registered as "
            f"{current.name!r}, not {name!r}"
        )
    if forward is None or backward is None:
        if current is None:
            filter_registry.register_filter(DynamicFilter(fid, label))
        return
    if current is not None:
        filter_registry.unregister_filter(fid)
    filter_registry.register_filter(PythonFilter(fid, forward, backward, label))


class _CodecsView(Mapping[int, tuple[str, CodecFunction, CodecFunction]]):
    """python-blosc2's ``ucodecs_registry``: id -> ``(name, encoder, decoder)`` of the Python
    codecs registered now (a live, read-only view)."""

    def _items(self) -> dict[int, tuple[str, CodecFunction, CodecFunction]]:
        return {
            cid: (c.name, c.encoder, c.decoder)
            for cid, c in codec_registry.registered_codecs().items()
            if isinstance(c, PythonCodec)
        }

    def __getitem__(self, key: int) -> tuple[str, CodecFunction, CodecFunction]:
        return self._items()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return repr(self._items())


class _FiltersView(Mapping[int, tuple[FilterFunction, FilterFunction]]):
    """python-blosc2's ``ufilters_registry``: id -> ``(forward, backward)`` of the Python
    filters registered now (a live, read-only view)."""

    def _items(self) -> dict[int, tuple[FilterFunction, FilterFunction]]:
        return {
            fid: (f.forward_fn, f.backward_fn)
            for fid, f in filter_registry.user_filters().items()
            if isinstance(f, PythonFilter)
        }

    def __getitem__(self, key: int) -> tuple[FilterFunction, FilterFunction]:
        return self._items()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return repr(self._items())


#: python-blosc2's ``ucodecs_registry``: id -> ``(name, encoder, decoder)`` of the Python
#: codecs registered now (a live, read-only view)
ucodecs_registry: Mapping[int, tuple[str, CodecFunction, CodecFunction]] = _CodecsView()
#: python-blosc2's ``ufilters_registry``: id -> ``(forward, backward)`` of the Python
#: filters registered now (a live, read-only view)
ufilters_registry: Mapping[int, tuple[FilterFunction, FilterFunction]] = _FiltersView()


def check_python_plugins(codec: int, filters: Any, nthreads: int, what: str) -> None:
    """python-blosc2's rule: Python codecs and filters run with one thread only.

    >>> check_python_plugins(5, [1], 4, "cparams")
    """
    if nthreads <= 1:
        return
    if codec in ucodecs_registry:
        raise ParamError(
            f"Cannot use multi-threading with user defined Python codecs ({what}.nthreads "
            f"is {nthreads})"
        )
    if any(int(f) in ufilters_registry for f in filters):
        raise ParamError(
            f"Cannot use multi-threading with user defined Python filters ({what}.nthreads "
            f"is {nthreads})"
        )
