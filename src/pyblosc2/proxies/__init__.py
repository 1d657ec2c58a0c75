"""python-blosc2's caching proxies: :class:`Proxy` over a :class:`ProxySource` or
:class:`ProxyNDSource` (:mod:`.sources`), its cache (:mod:`.cache`, :mod:`.bitmap`), how it is
filled and shared (:mod:`.filler`, :mod:`.splice`, :mod:`.cells`), a frame read by byte ranges
(:mod:`.frameranges`, used by :mod:`pyblosc2.proxy_source`), and :class:`SimpleProxy`."""

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
