"""python-blosc2's ``blosc2.dsl_kernel`` module names (``from blosc2.dsl_kernel import
DSLSyntaxError`` works): re-exports of :mod:`pyblosc2.dsl`.

The imports are absolute so that this module, imported under an alias of the package
(``blosc2.dsl_kernel`` when ``pyblosc2`` is installed as ``blosc2``), re-exports the very
objects of ``pyblosc2``.

>>> from pyblosc2.dsl_kernel import DSLSyntaxError, validate_dsl
>>> issubclass(DSLSyntaxError, ValueError)
True
"""

from pyblosc2.dsl import (
    DSLKernel,
    DSLRuntimeError,
    DSLSyntaxError,
    dsl_kernel,
    kernel_from_source,
    validate_dsl,
    validate_dsl_jit,
)

__all__ = [
    "DSLKernel",
    "DSLRuntimeError",
    "DSLSyntaxError",
    "dsl_kernel",
    "kernel_from_source",
    "validate_dsl",
    "validate_dsl_jit",
]
