"""python-blosc2's ``blosc2.proxy`` module names for the compute engine (``SimpleProxy``,
``as_simpleproxy``, ``jit``): re-exports of :mod:`pyblosc2.compute` (python-blosc2's caching
``Proxy`` is not implemented).

The imports are absolute so that this module, imported under an alias of the package
(``blosc2.proxy``), re-exports the very objects of ``pyblosc2``.

>>> from pyblosc2.proxy import SimpleProxy, jit
>>> SimpleProxy([1, 2]).shape
(2,)
"""

from pyblosc2.compute.jit import _jit_dsl_wrapper, jit
from pyblosc2.compute.simpleproxy import SimpleProxy, as_simpleproxy

__all__ = ["SimpleProxy", "_jit_dsl_wrapper", "as_simpleproxy", "jit"]
