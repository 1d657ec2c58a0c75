"""python-blosc2's caching proxies: :class:`Proxy` over a :class:`ProxySource` or
:class:`ProxyNDSource` (:mod:`.sources`), its cache (:mod:`.cache`, :mod:`.bitmap`), how it is
filled and shared (:mod:`.filler`, :mod:`.splice`, :mod:`.cells`), a frame read by byte ranges
(:mod:`.frameranges`, used by :mod:`pyblosc2.proxy_source`), and :class:`SimpleProxy`."""

from typing import TYPE_CHECKING

from .._lazyattrs import lazy_getattr

#: the names this package exports, ``name: module``, imported on first use: the stores and the
#: opener import the cache's constants without loading the proxy (and asyncio) with them
_FROM = {
    "NotRanged": "sources",
    "Proxy": "proxy",
    "ProxyNDField": "proxy",
    "ProxyNDSource": "sources",
    "ProxySource": "sources",
    "convert_dtype": "simple",
}


__getattr__ = lazy_getattr(
    {name: (f".{module}", name) for name, module in _FROM.items()}, globals()
)


if TYPE_CHECKING:  # what the names above are, for type checkers
    from .proxy import Proxy, ProxyNDField
    from .simple import convert_dtype
    from .sources import NotRanged, ProxyNDSource, ProxySource

__all__ = [
    "NotRanged",
    "Proxy",
    "ProxyNDField",
    "ProxyNDSource",
    "ProxySource",
    "convert_dtype",
]
