"""python-blosc2's ``blosc2.proxy_source`` module name: the sources of a
:class:`~pyblosc2.Proxy` (:class:`ProxySource`, :class:`ProxyNDSource`, :class:`ByteRangeNDSource`,
:class:`FsspecNDSource`) and the tunables of block-granular fetching, in
:mod:`pyblosc2.proxies.byterange`.

This name *is* that module (``sys.modules`` points here to it), whatever name pyblosc2 is
imported under (``import pyblosc2 as blosc2``, or a ``blosc2`` alias module): a tunable set on
``pyblosc2.proxy_source`` (``BLOCK_MIN_CBYTES``, as python-blosc2's tests do) is the one the
sources read, and the classes are the same objects.
"""

import sys

from pyblosc2.proxies import byterange as _module

sys.modules[__name__] = _module
