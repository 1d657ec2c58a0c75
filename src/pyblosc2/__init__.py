"""pyblosc2: the Blosc/Blosc2 storage formats in pure Python + numpy, byte-compatible with
C-Blosc2 and C-Blosc 1.x.

``import pyblosc2 as blosc2`` works for code using python-blosc2's

* chunk-level core: ``compress2``/``decompress2``, ``compress``/``decompress``, ``getitem``,
  ``CParams``/``DParams`` and the enums (plus ``compress_blosc1`` for C-Blosc 1.x chunks);
* super-chunks: ``SChunk`` on contiguous frames (``.b2frame``: in memory, in a file, at an
  offset, memory-mapped) and sparse frames (directories), with ``meta`` and ``vlmeta``;
* N-d arrays (``.b2nd``): ``NDArray`` and its constructors (``asarray``, ``zeros``,
  ``full``, ``arange``, ...), lazy slicing, ``resize``, ``evaluate``, ``open``;
* packing: ``pack_array2``/``unpack_array2``, ``save_array``/``load_array``.

zarr's and numcodecs' ``blosc`` codecs are in :mod:`pyblosc2.compat`. Bad input bytes raise
:class:`FormatError`, bad arguments :class:`ParamError` (both ``ValueError``).

>>> import numpy as np
>>> import pyblosc2 as blosc2
>>> a = blosc2.asarray(np.arange(12).reshape(3, 4))
>>> a[1:, ::2]
array([[ 4,  6],
       [ 8, 10]])
"""

import builtins as _builtins
import importlib as _importlib
import importlib.util as _importlib_util
import os as _os
from dataclasses import fields as _fields
from typing import Any as _Any

# -- stores (issue 21): DictStore/TreeStore/EmbedStore; open/from_cframe recognise them ---------
from . import blosc2_ext as blosc2_ext  # python-blosc2's C-extension names
from ._engine_list import ENGINE_NAMES as _ENGINE_NAMES
from ._lazyattrs import lazy_getattr as _lazy_getattr_of
from .api import (
    compress,
    compress2,
    compress_blosc1,
    compressor_list,
    decompress,
    decompress2,
    get_cbuffer_sizes,
    get_chunk_header,
    getitem,
    make_special_chunk,
    set_nthreads,
    set_releasegil,
)
from .clib import (
    VERSION_DATE,
    VERSION_STRING,
    clib_info,
    cpu_info,
    detect_number_of_cores,
    free_resources,
    get_blocksize,
    get_clib,
    get_compressor,
    get_cpu_info,
    print_versions,
    set_blocksize,
    set_compressor,
)
from .constants import (
    EXTENDED_HEADER_LENGTH,
    MAX_BLOCKSIZE,
    MAX_BUFFERSIZE,
    MAX_OVERHEAD,
    MAX_TYPESIZE,
    MIN_HEADER_LENGTH,
    VERSION,
    Codec,
    Filter,
    SpecialValue,
    SplitMode,
    Tuner,
)
from .errors import (
    Blosc2Error,
    CodecError,
    FormatError,
    FrameChangedError,
    MemoryBudgetError,
    ParamError,
    TruncatedError,
)
from .ndarray import indexhook as _indexhook
from .ndarray import lazyhook as _lazyhook
from .ndarray import linalg_members as _linalg_members
from .ndarray.b2nd_meta import MAX_DIM
from .ndarray.combine import astype, concat, stack
from .ndarray.constructors import copy, ndarray_from_cframe
from .ndarray.dask_io import from_dask
from .ndarray.extra import arange, frombuffer, linspace
from .ndarray.io import get_slice_nchunks, load, save
from .ndarray.members import NDField  # NDArray indexing (issue 11)
from .ndarray.ndarray import NDArray
from .ndarray.numpylike import (
    are_partitions_aligned,
    are_partitions_behaved,
    argsort,
    array,
    broadcast_to,
    compute_chunks_blocks,
    empty_like,
    expand_dims,
    eye,
    fromiter,
    full_like,
    meshgrid,
    nans,
    ones_like,
    reshape,
    sort,
    take,
    take_along_axis,
    uninit,
    zeros_like,
)
from .packing import (
    load_array,
    load_tensor,
    pack,
    pack_array,
    pack_array2,
    pack_tensor,
    save_array,
    save_tensor,
    unpack,
    unpack_array,
    unpack_array2,
    unpack_tensor,
)
from .params import CParams, DParams
from .plugins import register_codec, register_filter, ucodecs_registry, ufilters_registry
from .schunk import SChunk, Storage, remove_urlpath, schunk_from_cframe
from .stores import (
    DictStore,
    EmbedStore,
    TreeStore,
    URLPath,
    estore_from_cframe,
    from_cframe,
    open,
)
from .utf8_dispatch import asarray, empty, full, ones, zeros  # StringDType: UTF8Array
from .vlarrays import (
    Batch,
    BatchArray,
    DeserializeMode,
    ListArray,
    ObjectArray,
    Ref,
    UnsafeDeserializationError,
    objectarray_from_cframe,
)
from .vlarrays.kinds import set_object_loader as _set_object_loader

#: pyblosc2's version
__version__ = VERSION

#: python-blosc2's default parameter dicts (the fields of ``CParams()``, ``DParams()`` and
#: ``Storage()``), for scripts that build on them
cparams_dflts = {f.name: getattr(CParams(), f.name) for f in _fields(CParams)}
#: python-blosc2's default decompression parameters (the fields of ``DParams()``)
dparams_dflts = {f.name: getattr(DParams(), f.name) for f in _fields(DParams)}
#: python-blosc2's default storage parameters (the fields of ``Storage()``)
storage_dflts = {f.name: getattr(Storage(), f.name) for f in _fields(Storage)}
#: the number of cores (python-blosc2's ``ncores``)
ncores = _os.cpu_count() or 1
#: python-blosc2's flag for a WebAssembly build (pure Python + numpy: never one here).
IS_WASM = False


#: names resolved on first use, ``name: (module, attribute)`` (attribute None: the module
#: itself): the compute engine, the tables, the indexes and the proxies are not imported by
#: ``import pyblosc2`` (a process that only reads arrays loads none of them), and are imported
#: by the first access to one of their names (``blosc2.lazyexpr``, ``blosc2.CTable``, ...) or
#: by the first use that needs them (an NDArray operator asks the engine, a write the indexes)
_LAZY: dict[str, tuple[str, str | None]] = {
    **{name: ("._engine_names", name) for name in _ENGINE_NAMES},
    "bool_": ("._engine_names", "bool_"),
    "compute": (".compute", None),
    "linalg": (".linalg", None),
    "exceptions": (".exceptions", None),
    "indexing": (".indexing", None),
    "IndexKind": (".indexes", "IndexKind"),
    "CTable": (".ctable", "CTable"),
    "Column": (".ctable", "Column"),
    "col": (".ctable", "col"),
    "ctable_from_cframe": (".ctable", "ctable_from_cframe"),
    "schema_compiler": (".schema_compiler", None),
    "proxy": (".proxy", None),
    "proxy_source": (".proxy_source", None),
    "Proxy": (".proxies", "Proxy"),
    "ProxyNDField": (".proxies", "ProxyNDField"),
    "ProxyNDSource": (".proxies", "ProxyNDSource"),
    "ProxySource": (".proxies", "ProxySource"),
    "ByteRangeNDSource": (".proxies.byterange", "ByteRangeNDSource"),
    "FsspecNDSource": (".proxies.byterange", "FsspecNDSource"),
}


_lazy_getattr = _lazy_getattr_of(_LAZY, globals())


def __getattr__(name: str) -> _Any:
    # ``blosc2.nthreads``: the thread count set_nthreads() last set
    if name == "nthreads":
        from .api import _state

        return int(_state["nthreads"])
    return _lazy_getattr(name)


def __dir__() -> _builtins.list[str]:  # (``list`` is the schema spec here)
    return sorted(set(globals()) | set(_LAZY) | {"nthreads"})


def _load_engine() -> None:
    """The compute engine and the functions it computes (``linalg`` registers its own)."""
    _importlib.import_module(".linalg", __name__)  # imports pyblosc2.compute first


def _load_indexes() -> None:
    _importlib.import_module(".indexes", __name__)


_lazyhook.set_loader(_load_engine)  # an NDArray operator, ufunc or reduction
_linalg_members.set_loader(_load_engine)  # ``a @ b``, ``a.T``, ``a.mT``
_set_object_loader(_load_engine)  # a saved expression opened (python-blosc2's b2o, _LazyArray)
_indexhook.set_loader(_load_indexes)  # an index asked for, or a write that may make one stale


__all__ = [
    "EXTENDED_HEADER_LENGTH",
    "IS_WASM",
    "MAX_BLOCKSIZE",
    "MAX_BUFFERSIZE",
    "MAX_OVERHEAD",
    "MAX_TYPESIZE",
    "MIN_HEADER_LENGTH",
    "Blosc2Error",
    "CParams",
    "Codec",
    "CodecError",
    "DParams",
    "Filter",
    "FormatError",
    "FrameChangedError",
    "MemoryBudgetError",
    "NDArray",
    "NDField",
    "ParamError",
    "SChunk",
    "SpecialValue",
    "SplitMode",
    "Storage",
    "TruncatedError",
    "Tuner",
    "__version__",
    "arange",
    "argsort",
    "asarray",
    "compress",
    "compress2",
    "compress_blosc1",
    "compressor_list",
    "cparams_dflts",
    "decompress",
    "decompress2",
    "dparams_dflts",
    "empty",
    "from_dask",
    "frombuffer",
    "full",
    "get_cbuffer_sizes",
    "get_chunk_header",
    "getitem",
    "linspace",
    "load_array",
    "make_special_chunk",
    "ncores",
    "ndarray_from_cframe",
    "ones",
    "open",
    "pack_array2",
    "remove_urlpath",
    "save_array",
    "schunk_from_cframe",
    "set_nthreads",
    "set_releasegil",
    "sort",
    "storage_dflts",
    "take",
    "take_along_axis",
    "unpack_array2",
    "zeros",
]

# -- API parity (issue 11): module-level API, constructors, compression API --------------------
__all__ += [
    "MAX_DIM",
    "VERSION_DATE",
    "VERSION_STRING",
    "are_partitions_aligned",
    "are_partitions_behaved",
    "array",
    "astype",
    "broadcast_to",
    "clib_info",
    "compute_chunks_blocks",
    "concat",
    "copy",
    "detect_number_of_cores",
    "empty_like",
    "expand_dims",
    "eye",
    "free_resources",
    "from_cframe",
    "fromiter",
    "full_like",
    "get_blocksize",
    "get_clib",
    "get_compressor",
    "get_slice_nchunks",
    "load",
    "load_tensor",
    "meshgrid",
    "nans",
    "ones_like",
    "pack",
    "pack_array",
    "pack_tensor",
    "print_versions",
    "reshape",
    "save",
    "save_tensor",
    "set_blocksize",
    "set_compressor",
    "stack",
    "uninit",
    "unpack",
    "unpack_array",
    "unpack_tensor",
    "zeros_like",
]

# -- stores (issue 21) ------------------------------------------------------------------------
__all__ += ["DictStore", "EmbedStore", "TreeStore", "URLPath", "estore_from_cframe"]

# -- issue 21: user codecs and filters, variable-length containers -------------------------------
__all__ += [
    "Batch",
    "BatchArray",
    "DeserializeMode",
    "ListArray",
    "ObjectArray",
    "Ref",
    "UnsafeDeserializationError",
    "blosc2_ext",
    "cpu_info",
    "get_cpu_info",
    "msgpack_utils",
    "objectarray_from_cframe",
    "register_codec",
    "register_filter",
    "schema",
    "ucodecs_registry",
    "ufilters_registry",
]

# python-blosc2's schema specs (ListArray item types); ``bool``, ``bytes`` and ``list`` shadow
# the builtins in this namespace only, as in python-blosc2
from . import c2array as c2array  # noqa: E402
from . import core as core  # noqa: E402
from . import msgpack_utils as msgpack_utils  # noqa: E402
from . import random as random  # noqa: E402
from . import schema as schema  # noqa: E402
from .c2array import C2Array  # noqa: E402
from .schema import (  # noqa: E402
    bool,
    bytes,
    complex64,
    complex128,
    field,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    list,
    string,
    struct,
    timestamp,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ += [
    "C2Array",
    "CTable",
    "bool",
    "bytes",
    "c2array",
    "complex64",
    "complex128",
    "field",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "list",
    "string",
    "struct",
    "timestamp",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

# -- issue 34: python-blosc2's caching proxies ----------------------------------------------------
__all__ += [
    "ByteRangeNDSource",
    "FsspecNDSource",
    "Proxy",
    "ProxyNDField",
    "ProxyNDSource",
    "ProxySource",
]

# -- issue 33: the compute engine (lazy expressions, reductions, where, UDFs, jit, linalg) -----
#: python-blosc2's flag: whether numba is installed (the DSL's numba route, pyblosc2[fast])
_HAS_NUMBA = _importlib_util.find_spec("numba") is not None

__all__ += [*_ENGINE_NAMES]
__all__ += ["compute", "linalg"]

from ._aliasing import install as _install_aliasing  # noqa: E402

_install_aliasing(__name__)

# -- issue 34: NDArray indexes (python-blosc2's IndexKind, NDArray.create_index & co.) ------------
__all__ += ["IndexKind", "indexing"]

# python-blosc2's CTable-only column kinds (declared; CTable refuses them by name), and the
# column classes; ``object`` shadows the builtin in this namespace only, as in python-blosc2
from . import _utf8_array as _utf8_array  # noqa: E402
from . import dictionary_column as dictionary_column  # noqa: E402
from . import scalar_array as scalar_array  # noqa: E402
from .ctable.kinds import dictionary, utf8, vlbytes, vlstring  # noqa: E402
from .ctable.kinds import object as object  # noqa: E402
from .ctable.nulls import NullPolicy, get_null_policy, null_policy  # noqa: E402
from .ctable.strings import DictionarySpec, UTF8Spec, VLBytesSpec, VLStringSpec  # noqa: E402
from .ctable.utf8array import UTF8Array, from_utf8, to_utf8, utf8_array  # noqa: E402

__all__ += ["NullPolicy", "get_null_policy", "null_policy"]

# -- issue 34: CTable display options (python-blosc2's set_printoptions & co.) ---------------
from .ctable.printopts import get_printoptions, printoptions, set_printoptions  # noqa: E402

__all__ += ["get_printoptions", "printoptions", "set_printoptions"]

__all__ += [
    "Column",
    "DictionarySpec",
    "UTF8Array",
    "UTF8Spec",
    "VLBytesSpec",
    "VLStringSpec",
    "col",
    "ctable_from_cframe",
    "dictionary",
    "dictionary_column",
    "from_utf8",
    "object",
    "schema_compiler",
    "to_utf8",
    "utf8",
    "utf8_array",
    "vlbytes",
    "vlstring",
]
