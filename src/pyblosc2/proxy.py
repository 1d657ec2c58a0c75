"""python-blosc2's ``blosc2.proxy`` module name: :class:`Proxy` and its relatives live in
:mod:`pyblosc2.proxies`, the sources in :mod:`pyblosc2.proxy_source`, ``SimpleProxy`` and
``jit`` in :mod:`pyblosc2.compute` (all re-exported here, as python-blosc2 does).

The imports are absolute so that this module, imported under an alias of the package
(``blosc2.proxy``), re-exports the very objects of ``pyblosc2``.

>>> from pyblosc2.proxy import SimpleProxy, jit
>>> SimpleProxy([1, 2]).shape
(2,)
"""

from pyblosc2.compute.jit import _jit_dsl_wrapper, jit
from pyblosc2.compute.simpleproxy import SimpleProxy, as_simpleproxy
from pyblosc2.proxies import Proxy, ProxyNDField, convert_dtype
from pyblosc2.proxies.byterange import (
    REMOTE_MAX_CONCURRENCY,
    ByteRangeNDSource,
    FsspecNDSource,
    NotRanged,
    ProxyNDSource,
    ProxySource,
)
from pyblosc2.proxies.filler import BLOCK_HOT_CHUNKS

__all__ = [
    "BLOCK_HOT_CHUNKS",
    "REMOTE_MAX_CONCURRENCY",
    "ByteRangeNDSource",
    "FsspecNDSource",
    "NotRanged",
    "Proxy",
    "ProxyNDField",
    "ProxyNDSource",
    "ProxySource",
    "SimpleProxy",
    "_jit_dsl_wrapper",
    "as_simpleproxy",
    "convert_dtype",
    "jit",
]
