"""python-blosc2's ``blosc2.proxy`` module name: :class:`Proxy` and its relatives live in
:mod:`pyblosc2.proxies`, the sources in :mod:`pyblosc2.proxy_source` (re-exported here, as
python-blosc2 does)."""

from pyblosc2.proxies import (
    Proxy,
    ProxyNDField,
    SimpleProxy,
    as_simpleproxy,
    convert_dtype,
)
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
    "as_simpleproxy",
    "convert_dtype",
]
