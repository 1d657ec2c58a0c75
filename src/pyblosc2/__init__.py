"""pyblosc2: the Blosc/Blosc2 storage formats in pure Python + numpy.

``import pyblosc2 as blosc2`` works for code using python-blosc2's chunk-level core and the
contiguous-frame part of its SChunk API.
"""

from .api import (
    compress,
    compress2,
    compress_blosc1,
    decompress,
    decompress2,
    get_cbuffer_sizes,
    get_chunk_header,
    getitem,
    make_special_chunk,
    set_nthreads,
)
from .constants import (
    EXTENDED_HEADER_LENGTH,
    MAX_BLOCKSIZE,
    MAX_BUFFERSIZE,
    MAX_OVERHEAD,
    MAX_TYPESIZE,
    MIN_HEADER_LENGTH,
    Codec,
    Filter,
    SpecialValue,
    SplitMode,
    Tuner,
)
from .errors import Blosc2Error, CodecError, FormatError, FrameChangedError, ParamError
from .ndarray.extra import (
    arange,
    evaluate,
    frombuffer,
    linspace,
    load_array,
    pack_array2,
    save_array,
    unpack_array2,
)
from .ndarray.ndarray import (
    NDArray,
    asarray,
    empty,
    full,
    ndarray_from_cframe,
    ones,
    open,
    zeros,
)
from .params import CParams, DParams
from .schunk import SChunk, Storage, remove_urlpath, schunk_from_cframe

__version__ = "0.1.0.dev0"

__all__ = [
    "EXTENDED_HEADER_LENGTH",
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
    "NDArray",
    "ParamError",
    "SChunk",
    "SpecialValue",
    "SplitMode",
    "Storage",
    "Tuner",
    "__version__",
    "arange",
    "asarray",
    "compress",
    "compress2",
    "compress_blosc1",
    "decompress",
    "decompress2",
    "empty",
    "evaluate",
    "frombuffer",
    "full",
    "get_cbuffer_sizes",
    "get_chunk_header",
    "getitem",
    "linspace",
    "load_array",
    "make_special_chunk",
    "ndarray_from_cframe",
    "ones",
    "open",
    "pack_array2",
    "remove_urlpath",
    "save_array",
    "schunk_from_cframe",
    "set_nthreads",
    "unpack_array2",
    "zeros",
]
