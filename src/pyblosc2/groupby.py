"""python-blosc2's ``blosc2.groupby`` module name: :mod:`pyblosc2.ctable.groupkeys` itself
(text group keys factorized by hashing: ``_factorize_fixed_width_str``, ``_HASH_MIX``; a UDF
result as a scalar: ``_python_scalar``). The group-by proper is ``CTable.group_by``
(:mod:`pyblosc2.ctable.groupby`).

This name *is* that module (``sys.modules`` points here to it), whatever name pyblosc2 is
imported under: a name set on ``pyblosc2.groupby`` (python-blosc2's tests set ``_HASH_MIX``
and ``_python_scalar``) is the one ``group_by`` uses.
"""

import sys

from pyblosc2.ctable import groupkeys as _module

sys.modules[__name__] = _module
