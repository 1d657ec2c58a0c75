"""The compute engine's names at pyblosc2's top level (python-blosc2's ``blosc2.sin``,
``blosc2.lazyexpr``, ``blosc2.jit``, ``blosc2.matmul``, numpy's constants it re-exports):
:mod:`pyblosc2` takes them all from here (``__all__``)."""

# ruff: noqa: F401 - every name imported here is exported (``__all__`` is ENGINE_NAMES)

import numpy as _np
from numpy import finfo, iinfo  # numpy's names python-blosc2 re-exports for the array API

from ._engine_list import ENGINE_NAMES
from .blosc2_ext import get_matmul_library

# importing pyblosc2.compute registers the engine behind the NDArray operators
# -- issue 33: user functions (lazyudf, jit, DSL kernels) ------------------------------------------
from .compute import (
    FPAccuracy,
    LazyArray,
    LazyExpr,
    LazyUDF,
    MissingOperands,
    SimpleProxy,
    abs,
    acos,
    acosh,
    add,
    all,
    any,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    as_simpleproxy,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    can_cast,
    ceil,
    clip,
    conj,
    contains,
    copysign,
    cos,
    cosh,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    divide,
    endswith,
    equal,
    evaluate,
    exp,
    expm1,
    floor,
    floor_divide,
    get_expr_operands,
    greater,
    greater_equal,
    group_reduce,
    hypot,
    imag,
    isdtype,
    isfinite,
    isinf,
    isnan,
    jit,
    lazyexpr,
    lazyudf,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lower,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    nextafter,
    not_equal,
    positive,
    pow,
    prod,
    real,
    reciprocal,
    remainder,
    result_type,
    round,
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    startswith,
    std,
    subtract,
    sum,
    tan,
    tanh,
    trunc,
    upper,
    validate_expr,
    var,
    where,
)
from .dsl import (
    DSLKernel,
    DSLSyntaxError,
    dsl_kernel,
    validate_dsl,
    validate_dsl_jit,
)

# -- issue 33: linear algebra (python-blosc2's blosc2.linalg), squeeze -------------------------
from .linalg import (
    diagonal,
    matmul,
    matrix_transpose,
    outer,
    permute_dims,
    tensordot,
    transpose,
    vecdot,
)
from .linalg import linalg_funcs as _linalg_funcs
from .ndarray.numpylike import squeeze
from .ndarray.operand import Operand

#: Euler's number (numpy's ``e``)
e = _np.e  # type: ignore[misc]  # mypy 1.x reports "deleted variable" for this name here
#: positive infinity (numpy's ``inf``)
inf = _np.inf
#: not a number (numpy's ``nan``)
nan = _np.nan
#: an index that adds an axis of length 1 (numpy's ``newaxis``, ``None``)
newaxis = _np.newaxis
#: pi (numpy's ``pi``)
pi = _np.pi
#: numpy's bool type (python-blosc2's ``blosc2.bool_``)
bool_ = _np.bool_

#: the names of the linear-algebra functions (python-blosc2's ``linalg_funcs_list``)
linalg_funcs_list = _linalg_funcs

__all__ = list(ENGINE_NAMES)
