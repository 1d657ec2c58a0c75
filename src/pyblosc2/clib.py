"""python-blosc2's global-state and library-information helpers: ``set_blocksize``/
``get_blocksize``, ``set_compressor``/``get_compressor``, ``get_clib``, ``clib_info``,
``print_versions`` and ``VERSION_STRING``.

The "C library" of these names is here pyblosc2 and the Python codec libraries it uses; the
globals they set are those :func:`~pyblosc2.compress` reads.

>>> _ = set_compressor(Codec.LZ4); get_compressor()
'lz4'
>>> get_clib(compress2(b"a" * 100, typesize=1, codec=Codec.ZLIB))
'Zlib'
"""

from __future__ import annotations

import os
import platform
import sys
import zlib

import numpy as np

from ._bytes import BufferLike, as_view
from ._threads import default_nthreads
from .api import (
    _state,
    compress2,  # noqa: F401  (the examples use it)
    compressor_list,
)
from .chunk.header import ChunkHeader
from .codecs.registry import UDCODEC_FORMAT
from .constants import VERSION, Codec
from .errors import UnsupportedError
from .kernels import kernel_sets, kernels_status
from .params import parse_blocksize, parse_codec

__all__ = [
    "VERSION_DATE",
    "VERSION_STRING",
    "clib_info",
    "cpu_info",
    "detect_number_of_cores",
    "free_resources",
    "get_blocksize",
    "get_clib",
    "get_compressor",
    "get_cpu_info",
    "print_versions",
    "set_blocksize",
    "set_compressor",
]

#: the C-Blosc2 format version pyblosc2 reads and writes (python-blosc2's ``VERSION_STRING``
#: is the version of the C-Blosc2 it is built on)
VERSION_STRING = "3.3.5"
#: the date of the C-Blosc2 format version (python-blosc2's ``VERSION_DATE``)
VERSION_DATE = "$Date:: 2026-09-24 #$"

#: compformat (header flags bits 5-7) -> the library a chunk's codec belongs to (C's names)
_FORMAT_LIBS = {0: "BloscLZ", 1: "LZ4", 2: "Snappy", 3: "Zlib", 4: "Zstd"}
#: codec -> its library (LZ4HC is LZ4's)
_CODEC_LIBS = {
    Codec.BLOSCLZ: "BloscLZ",
    Codec.LZ4: "LZ4",
    Codec.LZ4HC: "LZ4",
    Codec.SNAPPY: "Snappy",
    Codec.ZLIB: "Zlib",
    Codec.ZSTD: "Zstd",
}


def set_blocksize(blocksize: int = 0) -> None:
    """Force the block size :func:`~pyblosc2.compress` uses (0: automatic, the default).

    >>> set_blocksize(512); get_blocksize()
    512
    >>> set_blocksize(0)
    """
    _state["blocksize"] = parse_blocksize(blocksize)


def get_blocksize() -> int:
    """The block size forced by :func:`set_blocksize` (0: automatic).

    >>> get_blocksize()
    0
    """
    return int(_state["blocksize"])


def set_compressor(codec: Codec | int) -> int:
    """Set the global compressor (the one :func:`get_compressor` names); returns its id.
    As in python-blosc2, :func:`~pyblosc2.compress` takes its own ``codec`` argument and
    makes that the global compressor.

    >>> set_compressor(Codec.ZSTD)
    5
    """
    codec = parse_codec(codec)
    if codec not in compressor_list():
        raise NotImplementedError(f"codec {codec!r} is not implemented by pyblosc2")
    _state["compressor"] = codec
    return int(codec)


def get_compressor() -> str:
    """The name of the global compressor, lower case (``"blosclz"`` until one is set).

    >>> _ = set_compressor(Codec.ZLIB); get_compressor()
    'zlib'
    """
    return Codec(int(_state["compressor"])).name.lower()


def get_clib(bytesobj: BufferLike) -> str:
    """The name of the compression library of the chunk ``bytesobj`` (``"LZ4"`` for LZ4 and
    LZ4HC chunks, ``"Zstd"``, ...; a plugin codec's id for plugin chunks).

    >>> get_clib(compress2(b"a" * 100, typesize=1, codec=Codec.LZ4HC))
    'LZ4'
    """
    header = ChunkHeader.from_bytes(as_view(bytesobj, "bytesobj"))
    if header.compformat == UDCODEC_FORMAT:
        return f"plugin codec {header.udcompcode}"
    return _FORMAT_LIBS.get(header.compformat, f"compformat {header.compformat}")


def _lib_version(codec: Codec) -> str:
    if codec in (Codec.LZ4, Codec.LZ4HC):
        import lz4

        return str(lz4.library_version_string())
    if codec == Codec.ZSTD:
        import zstandard

        return str(zstandard.ZSTD_VERSION).strip("()").replace(", ", ".")
    if codec == Codec.ZLIB:
        return zlib.ZLIB_RUNTIME_VERSION
    if codec == Codec.SNAPPY:
        import cramjam

        return f"cramjam {cramjam.__version__}"
    return f"pyblosc2 {VERSION} ({kernels_status()} kernels)"


def clib_info(codec: Codec | int) -> tuple[bytes, bytes]:
    """``(library name, library version)`` of ``codec``, as bytes (python-blosc2's
    ``clib_info``); BloscLZ is pyblosc2's own implementation. Codecs pyblosc2 does not
    implement (C plugins: NDLZ, ZFP, HTJ2K) raise :class:`UnsupportedError`, a
    ``NotImplementedError`` and the ``ValueError`` python-blosc2 raises for a codec its build
    lacks.

    >>> clib_info(Codec.LZ4HC)[0]
    b'LZ4'
    """
    codec = parse_codec(codec)
    name = _CODEC_LIBS.get(codec)  # type: ignore[call-overload]
    if name is None:
        raise UnsupportedError(
            f"codec {codec!r} (a C-Blosc2 plugin) is not implemented by pyblosc2"
        )
    return name.encode(), _lib_version(Codec(codec)).encode()


def print_versions() -> None:
    """Print the versions of pyblosc2 and of the libraries it relies on.

    >>> print_versions()  # doctest: +ELLIPSIS
    -=-=...
    pyblosc2 version: ...
    """
    line = "-=" * 38
    print(line)
    print(f"pyblosc2 version: {VERSION}")
    print(f"Blosc2 format version (C-Blosc2): {VERSION_STRING}")
    codecs = [Codec(c) for c in compressor_list()]
    print(f"Codecs available: {', '.join(c.name for c in codecs)}")
    print("Codec library versions:")
    for codec in codecs:
        lib, lib_version = clib_info(codec)
        print(f"  {codec.name}: {lib.decode()} {lib_version.decode()}")
    print(f"Kernels: {kernels_status()} (known: {', '.join(kernel_sets())})")
    print(f"NumPy version: {np.__version__}")
    print(f"Python version: {sys.version}")
    sysname, _, release, version, machine, processor = platform.uname()
    print(f"Platform: {sysname}-{release}-{machine} ({version})")
    print(f"Processor: {processor or 'not recognized'}")
    print(f"Byte-ordering: {sys.byteorder}")
    print(f"Detected cores: {detect_number_of_cores()}")
    print(f"Number of threads to use by default: {default_nthreads()}")
    print(line)


def detect_number_of_cores() -> int:
    """The number of cores of this machine (python-blosc2's ``detect_number_of_cores``).

    >>> detect_number_of_cores() >= 1
    True
    """
    return os.cpu_count() or 1


def _cache_sizes() -> dict[str, int]:
    """L1 data, L2 and L3 cache sizes from Linux's sysfs (python-blosc2's defaults elsewhere)."""
    out = {"l1_data_cache_size": 32 * 1024, "l2_cache_size": 256 * 1024, "l3_cache_size": 2**20}
    root = "/sys/devices/system/cpu/cpu0/cache"
    names = {(1, "Data"): "l1_data_cache_size", (2, "Unified"): "l2_cache_size"}
    names[(3, "Unified")] = "l3_cache_size"
    for index in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        try:
            with open(os.path.join(root, index, "level")) as f:
                level = int(f.read())
            with open(os.path.join(root, index, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(root, index, "size")) as f:
                size = f.read().strip()
        except (OSError, ValueError):
            continue
        name = names.get((level, kind))
        if name and size[:-1].isdigit() and size[-1] in "KM":
            out[name] = int(size[:-1]) * (1024 if size[-1] == "K" else 2**20)
    return out


def get_cpu_info() -> dict[str, int]:
    """The CPU count and cache sizes (python-blosc2's ``get_cpu_info``; its ``cpu_info`` is
    this dict computed at import).

    >>> sorted(get_cpu_info())
    ['count', 'l1_data_cache_size', 'l2_cache_size', 'l3_cache_size']
    """
    return {"count": detect_number_of_cores(), **_cache_sizes()}


#: python-blosc2's ``blosc2.cpu_info``
cpu_info = get_cpu_info()


def free_resources() -> None:
    """Release cached resources (python-blosc2's ``free_resources``): pyblosc2 keeps only
    per-thread scratch buffers and codec contexts, reused by later calls, so there is
    nothing to free and this does nothing.

    >>> free_resources()
    """
