"""python-blosc2's ``blosc2.random``: NumPy's random distributions drawn into NDArrays, one
chunk at a time.

Every call of a :class:`Generator` method spawns one child of the generator's root
:class:`numpy.random.SeedSequence`; that child spawns one stream per chunk (chunks in C order
of the chunk grid), and chunk ``i`` is ``numpy.random.default_rng(stream_i).<method>(...,
size=<chunk shape>)``, written into its chunk of the result. So a result depends on
``(seed, call order, shape, chunks)`` only, not on the thread count (chunks are drawn in
threads, at most ``2 * nthreads`` in flight), and it is exactly python-blosc2's for the same
seed, shape and chunks. It is *not* the stream a single ``numpy.random.default_rng(seed)``
would draw for the whole shape, and a different chunk shape gives different values
(``chunks`` left out is pyblosc2's automatic choice, which may differ from python-blosc2's).

:meth:`Generator.permutation`, :meth:`~Generator.permuted` and :meth:`~Generator.shuffle` hold
the whole array in memory, as python-blosc2's do.

>>> import pyblosc2 as blosc2
>>> a = blosc2.random.default_rng(42).random((4, 5), chunks=(2, 5))
>>> a.shape, a.chunks, bool(0 <= a[:].min() and a[:].max() < 1)
((4, 5), (2, 5), True)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from ._threads import default_nthreads
from .ndarray.constructors import asarray, empty
from .ndarray.ndarray import NDArray

__all__ = ["Generator", "default_rng"]

Slices = tuple[slice, ...]


def _chunk_slices(a: NDArray) -> list[Slices]:
    """The region of every chunk of ``a``, chunks in C order of the chunk grid."""
    if any(n == 0 for n in a.shape):
        return []
    grid = [range(-(-s // c)) for s, c in zip(a.shape, a.chunks, strict=True)]
    return [
        tuple(
            slice(i * c, min((i + 1) * c, s))
            for i, c, s in zip(idx, a.chunks, a.shape, strict=True)
        )
        for idx in itertools.product(*grid)
    ]


def _bounded_map(fn: Callable[[int], Any], n: int, workers: int) -> Iterator[Any]:
    """``fn(i)`` for ``i`` in ``range(n)`` (in any order), at most ``2 * workers`` pending;
    serially when no thread can be started (``submit`` raising ``RuntimeError``, as in
    sandboxes without OS threads)."""
    window = 2 * workers
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            pending = {pool.submit(fn, 0)}
        except RuntimeError:
            yield from map(fn, range(n))
            return
        nxt = 1
        while pending or nxt < n:
            while nxt < n and len(pending) < window:
                pending.add(pool.submit(fn, nxt))
                nxt += 1
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()


def _materialize(x: Any) -> np.ndarray[Any, Any]:
    return x[()] if isinstance(x, NDArray) else np.asarray(x)


def _draw_dtype(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> np.dtype[Any]:
    return getattr(np.random.default_rng(0), method)(*args, size=1, **kwargs).dtype


class Generator:
    """Chunk by chunk counterpart of :class:`numpy.random.Generator` (see the module
    docstring); made by :func:`default_rng`. Each method takes the result's ``shape`` and the
    keyword arguments of :func:`~pyblosc2.empty` (``chunks``, ``blocks``, ``cparams``,
    ``urlpath``, ...).

    >>> g = default_rng(0)
    >>> a, b = g.integers(0, 10, shape=(6,)), g.integers(0, 10, shape=(6,))
    >>> a.dtype, a[:].tolist() != b[:].tolist()  # each call draws new values
    (dtype('int64'), True)
    """

    def __init__(self, seed: Any = None) -> None:
        self._root = (
            seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        )

    def _fill_chunks(
        self,
        dst: NDArray,
        method: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        size_of: Callable[[Slices], tuple[int, ...]],
    ) -> NDArray:
        slices = _chunk_slices(dst)
        streams = self._root.spawn(1)[0].spawn(len(slices))

        def draw(i: int) -> tuple[int, Any]:
            rng = np.random.default_rng(streams[i])
            return i, getattr(rng, method)(*args, size=size_of(slices[i]), **kwargs)

        workers = default_nthreads()
        if len(slices) <= 1 or workers <= 1:
            results: Iterator[tuple[int, Any]] = map(draw, range(len(slices)))
        else:
            results = _bounded_map(draw, len(slices), workers)
        for i, values in results:
            dst[slices[i]] = values
        return dst

    def _fill(
        self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any], shape: Any, **b2: Any
    ) -> NDArray:
        if shape is None:
            raise TypeError("shape is required")
        dst = empty(shape, dtype=_draw_dtype(method, args, kwargs), **b2)
        return self._fill_chunks(
            dst, method, args, kwargs, lambda sl: tuple(s.stop - s.start for s in sl)
        )

    def _fill_vector(
        self,
        method: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        shape: Any,
        k: int,
        **b2: Any,
    ) -> NDArray:
        """A draw that is a vector of ``k`` values: the result is ``shape + (k,)``, and the
        last dimension is never split across chunks."""
        if shape is None:
            raise TypeError("shape is required")
        shape = (int(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
        full = (*shape, k)
        dtype = _draw_dtype(method, args, kwargs)
        chunks = b2.get("chunks")
        if chunks is not None:
            if tuple(chunks)[-1] != k:
                raise ValueError(f"chunks[-1] must equal the trailing vector length {k}")
        else:
            b2["chunks"] = (*empty(full, dtype=dtype).chunks[:-1], k)
        dst = empty(full, dtype=dtype, **b2)
        return self._fill_chunks(
            dst, method, args, kwargs, lambda sl: tuple(s.stop - s.start for s in sl[:-1])
        )

    # -- NumPy's distributions ----------------------------------------------------------------
    def random(self, shape: Any, dtype: Any = np.float64, **kwargs: Any) -> NDArray:
        """Uniform floats in [0, 1) (``numpy.random.Generator.random``)."""
        return self._fill("random", (), {"dtype": dtype}, shape, **kwargs)

    def integers(
        self,
        low: Any,
        high: Any = None,
        *,
        shape: Any,
        dtype: Any = np.int64,
        endpoint: bool = False,
        **kwargs: Any,
    ) -> NDArray:
        """Random integers (``numpy.random.Generator.integers``)."""
        return self._fill(
            "integers", (low, high), {"dtype": dtype, "endpoint": endpoint}, shape, **kwargs
        )

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("normal", (loc, scale), {}, shape, **kwargs)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("uniform", (low, high), {}, shape, **kwargs)

    def beta(self, a: Any, b: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("beta", (a, b), {}, shape, **kwargs)

    def binomial(self, n: Any, p: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("binomial", (n, p), {}, shape, **kwargs)

    def chisquare(self, df: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("chisquare", (df,), {}, shape, **kwargs)

    def exponential(self, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("exponential", (scale,), {}, shape, **kwargs)

    def f(self, dfnum: Any, dfden: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("f", (dfnum, dfden), {}, shape, **kwargs)

    def gamma(self, shape_param: Any, /, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        """Gamma samples; ``shape_param`` is NumPy's ``shape`` (the distribution's *k*)."""
        return self._fill("gamma", (shape_param, scale), {}, shape, **kwargs)

    def geometric(self, p: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("geometric", (p,), {}, shape, **kwargs)

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("gumbel", (loc, scale), {}, shape, **kwargs)

    def hypergeometric(
        self, ngood: Any, nbad: Any, nsample: Any, *, shape: Any, **kwargs: Any
    ) -> NDArray:
        return self._fill("hypergeometric", (ngood, nbad, nsample), {}, shape, **kwargs)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("laplace", (loc, scale), {}, shape, **kwargs)

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("logistic", (loc, scale), {}, shape, **kwargs)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("lognormal", (mean, sigma), {}, shape, **kwargs)

    def logseries(self, p: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("logseries", (p,), {}, shape, **kwargs)

    def negative_binomial(self, n: Any, p: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("negative_binomial", (n, p), {}, shape, **kwargs)

    def noncentral_chisquare(self, df: Any, nonc: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("noncentral_chisquare", (df, nonc), {}, shape, **kwargs)

    def noncentral_f(
        self, dfnum: Any, dfden: Any, nonc: Any, *, shape: Any, **kwargs: Any
    ) -> NDArray:
        return self._fill("noncentral_f", (dfnum, dfden, nonc), {}, shape, **kwargs)

    def pareto(self, a: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("pareto", (a,), {}, shape, **kwargs)

    def poisson(self, lam: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("poisson", (lam,), {}, shape, **kwargs)

    def power(self, a: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("power", (a,), {}, shape, **kwargs)

    def rayleigh(self, scale: Any = 1.0, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("rayleigh", (scale,), {}, shape, **kwargs)

    def standard_cauchy(self, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("standard_cauchy", (), {}, shape, **kwargs)

    def standard_exponential(
        self, *, shape: Any, dtype: Any = np.float64, method: str = "zig", **kwargs: Any
    ) -> NDArray:
        return self._fill(
            "standard_exponential", (), {"dtype": dtype, "method": method}, shape, **kwargs
        )

    def standard_gamma(
        self, shape_param: Any, /, *, shape: Any, dtype: Any = np.float64, **kwargs: Any
    ) -> NDArray:
        """Standard gamma samples; ``shape_param`` is NumPy's ``shape`` (see :meth:`gamma`)."""
        return self._fill("standard_gamma", (shape_param,), {"dtype": dtype}, shape, **kwargs)

    def standard_normal(self, *, shape: Any, dtype: Any = np.float64, **kwargs: Any) -> NDArray:
        return self._fill("standard_normal", (), {"dtype": dtype}, shape, **kwargs)

    def standard_t(self, df: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("standard_t", (df,), {}, shape, **kwargs)

    def triangular(self, left: Any, mode: Any, right: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("triangular", (left, mode, right), {}, shape, **kwargs)

    def vonmises(self, mu: Any, kappa: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("vonmises", (mu, kappa), {}, shape, **kwargs)

    def wald(self, mean: Any, scale: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("wald", (mean, scale), {}, shape, **kwargs)

    def weibull(self, a: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("weibull", (a,), {}, shape, **kwargs)

    def zipf(self, a: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        return self._fill("zipf", (a,), {}, shape, **kwargs)

    def choice(
        self, a: Any, *, shape: Any, p: Any = None, replace: bool = True, **kwargs: Any
    ) -> NDArray:
        """Samples of ``a`` (an int ``n`` for ``arange(n)``, or a 1-d array) with replacement;
        without replacement, or along an axis of an N-d ``a``, is not drawn chunk by chunk
        and raises :class:`NotImplementedError`."""
        if not replace:
            raise NotImplementedError(
                "pyblosc2.random.Generator.choice with replace=False (sampling without "
                "replacement needs the whole array at once)"
            )
        if np.ndim(a) > 1:
            raise NotImplementedError(
                "pyblosc2.random.Generator.choice of an N-d `a` (only 1-d or an int)"
            )
        return self._fill("choice", (a,), {"p": p, "replace": True}, shape, **kwargs)

    def dirichlet(self, alpha: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        """Dirichlet samples: the result is ``shape + (len(alpha),)``."""
        return self._fill_vector("dirichlet", (alpha,), {}, shape, len(alpha), **kwargs)

    def multinomial(self, n: Any, pvals: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        """Multinomial samples: the result is ``shape + (len(pvals),)``."""
        return self._fill_vector("multinomial", (n, pvals), {}, shape, len(pvals), **kwargs)

    def multivariate_hypergeometric(
        self, colors: Any, nsample: Any, *, shape: Any, **kwargs: Any
    ) -> NDArray:
        """Multivariate hypergeometric samples: the result is ``shape + (len(colors),)``."""
        return self._fill_vector(
            "multivariate_hypergeometric", (colors, nsample), {}, shape, len(colors), **kwargs
        )

    def multivariate_normal(self, mean: Any, cov: Any, *, shape: Any, **kwargs: Any) -> NDArray:
        """Multivariate normal samples: the result is ``shape + (len(mean),)``."""
        return self._fill_vector("multivariate_normal", (mean, cov), {}, shape, len(mean), **kwargs)

    # -- permutations (the whole array in memory) -------------------------------------------------
    def _one_rng(self) -> np.random.Generator:
        return np.random.default_rng(self._root.spawn(1)[0])

    def permutation(self, x: Any, *, axis: int = 0, **kwargs: Any) -> NDArray:
        """A shuffled copy of ``x`` (of ``arange(x)`` for an int)."""
        arr = np.arange(x) if isinstance(x, int | np.integer) else _materialize(x)
        return asarray(self._one_rng().permutation(arr, axis=axis), **kwargs)

    def permuted(self, x: Any, *, axis: int | None = None, **kwargs: Any) -> NDArray:
        """A copy of ``x`` permuted along ``axis`` (each slice independently; flattened for
        None)."""
        return asarray(self._one_rng().permuted(_materialize(x), axis=axis), **kwargs)

    def shuffle(self, x: NDArray, *, axis: int = 0) -> None:
        """Shuffle the NDArray ``x`` in place along ``axis``."""
        if not isinstance(x, NDArray):
            raise TypeError(
                "pyblosc2.random.Generator.shuffle requires an NDArray to shuffle in place"
            )
        arr = x[()]
        self._one_rng().shuffle(arr, axis=axis)
        x[...] = arr


def default_rng(seed: Any = None) -> Generator:
    """A :class:`Generator` seeded with ``seed`` (an int, a sequence of ints, a
    :class:`numpy.random.SeedSequence`, or None for fresh OS entropy).

    >>> default_rng(1).normal(shape=(3,)).dtype
    dtype('float64')
    """
    return Generator(seed)
