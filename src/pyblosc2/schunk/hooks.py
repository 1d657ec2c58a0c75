"""Python prefilters, postfilters and fillers on an SChunk (python-blosc2's
``SChunk.prefilter``/``postfilter``/``filler`` decorators).

These are not part of the format: nothing is stored, the functions only change the data on its
way into compression (prefilter, filler) or out of decompression (postfilter). As in C-Blosc2,
a function is called once per block with ``(input, output, offset)``: ``input`` the block's
items viewed as the input dtype, ``output`` the same bytes viewed as the output dtype (to be
filled), ``offset`` the index in the SChunk of the block's first item. A filler receives a
tuple of its operands' parts for that block instead of ``input``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._bytes import as_view, writable_view
from ..chunk.blocksize import compute_blocksize
from ..chunk.decode import ChunkReader
from ..errors import ParamError, ParamTypeError

__all__ = [
    "BlockFunction",
    "FilterHooks",
    "apply_prefilter",
    "postfiltered_chunk",
    "postfiltered_decompress",
    "postfiltered_read",
]

#: what a filter function is called with: (input block, output block, item offset)
FilterFunc = Callable[[Any, np.ndarray, int], None]


@dataclass(frozen=True, slots=True)
class BlockFunction:
    """A user function and the dtypes its blocks are viewed as."""

    func: FilterFunc
    input_dtype: np.dtype
    output_dtype: np.dtype

    @classmethod
    def make(cls, func: FilterFunc, input_dtype: Any, output_dtype: Any) -> BlockFunction:
        ind = np.dtype(input_dtype)
        outd = ind if output_dtype is None else np.dtype(output_dtype)
        if not callable(func):
            raise ParamTypeError(f"a filter must be callable, got {type(func).__name__}")
        return cls(func, ind, outd)

    def run(self, src: np.ndarray, dst: np.ndarray, blocksize: int, first_item: int) -> None:
        """Call the function on each block of the byte arrays ``src`` -> ``dst``."""
        isz, osz = self.input_dtype.itemsize, self.output_dtype.itemsize
        for b0 in range(0, len(src), blocksize):
            b1 = min(b0 + blocksize, len(src))
            if (b1 - b0) % isz or (b1 - b0) % osz:
                raise ParamError(
                    f"a block of {b1 - b0} bytes is not a whole number of items of "
                    f"{self.input_dtype} and {self.output_dtype}"
                )
            self.func(
                src[b0:b1].view(self.input_dtype),
                dst[b0:b1].view(self.output_dtype),
                first_item + b0 // isz,
            )


class _Host(Protocol):
    """The SChunk members the hooks use."""

    _frame: Any
    cparams: Any
    dparams: Any

    @property
    def typesize(self) -> int: ...
    @property
    def chunksize(self) -> int: ...
    @property
    def nchunks(self) -> int: ...
    @property
    def variable_chunks(self) -> bool: ...
    def _chunk_index(self, n: int) -> int: ...


def _chunk_first_byte(s: _Host, n: int) -> int:
    """Where chunk ``n`` starts in the SChunk's bytes (``n`` may be past the end)."""
    if not s.variable_chunks or not s.nchunks:
        return n * s.chunksize
    sizes = s._frame.chunk_sizes()
    return int(sum(sizes[:n])) + max(0, n - len(sizes)) * s.chunksize


def postfiltered_chunk(
    s: _Host, pf: BlockFunction, nchunk: int, lo: int = 0, hi: int | None = None
) -> np.ndarray:
    """Bytes ``[lo, hi)`` of chunk ``nchunk`` decompressed and postfiltered (only the blocks
    overlapping the range go through the function)."""
    n = s._chunk_index(nchunk)
    reader = ChunkReader.open(s._frame.get_chunk(n), s._frame.reader.context)
    raw = reader.decode(nthreads=s.dparams.nthreads).view(np.uint8)
    hi = len(raw) if hi is None else hi
    bs = max(int(reader.header.effective_blocksize), 1)
    b_lo, b_hi = lo - lo % bs, min(len(raw), -(-hi // bs) * bs)
    out = np.empty(b_hi - b_lo, np.uint8)
    first = (_chunk_first_byte(s, n) + b_lo) // s.typesize
    pf.run(raw[b_lo:b_hi], out, bs, first)
    return out[lo - b_lo : hi - b_lo]


def apply_prefilter(s: _Host, pre: BlockFunction, data: Any, nchunk: int) -> np.ndarray:
    """``data`` (the uncompressed items of chunk ``nchunk``) after the prefilter, block by
    block with the block size the chunk will be compressed with."""
    src = np.frombuffer(as_view(data), np.uint8)
    cp = s.cparams
    bs = compute_blocksize(
        len(src),
        cp.typesize,
        cp.clevel,
        int(cp.codec),
        cp.blocksize,
        tuple(int(f) for f in cp.filters),
        int(cp.splitmode),
    )
    out = np.empty(len(src), np.uint8)
    pre.run(src, out, max(bs, 1), _chunk_first_byte(s, nchunk) // s.typesize)
    return out


def _is_schunk(op: Any) -> bool:
    # duck-typed: SChunk sits above this module
    return hasattr(op, "get_slice") and hasattr(op, "typesize") and hasattr(op, "nchunks")


def _operand_part(op: Any, dtype: np.dtype, start: int, stop: int) -> Any:
    if _is_schunk(op):
        raw = op.get_slice(start, stop) or b""
        return np.frombuffer(raw, dtype)
    if isinstance(op, np.ndarray):
        return op.reshape(-1)[start:stop].astype(dtype, copy=False)
    return dtype.type(op)


def filler_function(func: Callable[..., None], inputs: Sequence[tuple[Any, Any]]) -> FilterFunc:
    """A prefilter function that calls the filler ``func`` with the operands' parts."""
    ops = [(op, np.dtype(dt)) for op, dt in inputs]

    def fill(_input: Any, output: np.ndarray, offset: int) -> None:
        parts = tuple(_operand_part(op, dt, offset, offset + output.size) for op, dt in ops)
        func(parts, output, offset)

    return fill


def filler_nelem(inputs: Sequence[tuple[Any, Any]], nelem: int | None) -> int:
    """The number of items a filler writes: ``nelem``, else the operands' common length."""
    lengths = {
        len(op) if _is_schunk(op) else op.size
        for op, _ in inputs
        if _is_schunk(op) or isinstance(op, np.ndarray)
    }
    if nelem is not None:
        if not isinstance(nelem, int | np.integer) or nelem < 0:
            raise ParamError(f"nelem must be a non-negative int, got {nelem!r}")
        if any(n < nelem for n in lengths):
            raise ParamError(f"nelem {nelem} is larger than an operand ({min(lengths)} items)")
        return int(nelem)
    if len(lengths) != 1:
        raise ParamError(
            "nelem must be given when the operands are only scalars or differ in length, "
            f"got lengths {sorted(lengths)}"
        )
    return lengths.pop()


class FilterHooks:
    """The decorators python-blosc2's SChunk has, mixed into :class:`~pyblosc2.SChunk`.

    >>> import numpy as np, pyblosc2 as blosc2
    >>> s = blosc2.SChunk(chunksize=40, data=np.arange(20, dtype=np.int32))
    >>> @s.postfilter(np.int32)
    ... def plus_one(inp, out, offset):
    ...     out[:] = inp + 1
    >>> np.frombuffer(s[0:3], np.int32).tolist()
    [1, 2, 3]
    >>> s.remove_postfilter("plus_one"); np.frombuffer(s[0:3], np.int32).tolist()
    [0, 1, 2]
    """

    _postfilter: BlockFunction | None = None
    _prefilter: BlockFunction | None = None

    def postfilter(
        self, input_dtype: Any, output_dtype: Any = None
    ) -> Callable[[FilterFunc], FilterFunc]:
        """Decorator: call the function on every block decompressed from now on (its output is
        what reads return)."""

        def install(func: FilterFunc) -> FilterFunc:
            self._postfilter = BlockFunction.make(func, input_dtype, output_dtype)
            return func

        return install

    def remove_postfilter(self, func_name: str | None = None, _new_ctx: bool = True) -> None:
        """Stop postfiltering (``func_name`` is accepted for python-blosc2 compatibility)."""
        self._postfilter = None

    def prefilter(
        self, input_dtype: Any, output_dtype: Any = None
    ) -> Callable[[FilterFunc], FilterFunc]:
        """Decorator: call the function on every block before it is compressed from now on (its
        output is what is stored).

        >>> import numpy as np, pyblosc2 as blosc2
        >>> s = blosc2.SChunk(chunksize=16, cparams={"typesize": 4})
        >>> @s.prefilter(np.int32, np.float32)
        ... def half(inp, out, offset):
        ...     out[:] = inp / 2
        >>> s.append_data(np.arange(4, dtype=np.int32))
        1
        >>> np.frombuffer(s.decompress_chunk(0), np.float32).tolist()
        [0.0, 0.5, 1.0, 1.5]
        """

        def install(func: FilterFunc) -> FilterFunc:
            self._prefilter = BlockFunction.make(func, input_dtype, output_dtype)
            return func

        return install

    def remove_prefilter(self, func_name: str | None = None, _new_ctx: bool = True) -> None:
        """Stop prefiltering (``func_name`` is accepted for python-blosc2 compatibility)."""
        self._prefilter = None

    def filler(
        self, inputs_tuple: Sequence[tuple[Any, Any]], schunk_dtype: Any, nelem: int | None = None
    ) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """Decorator: fill this empty SChunk with ``nelem`` items (default: the operands'
        length) computed block by block by the function from ``inputs_tuple``, a tuple of
        ``(operand, dtype)`` (operands: SChunks, numpy arrays, scalars).

        >>> import numpy as np, pyblosc2 as blosc2
        >>> s = blosc2.SChunk(chunksize=32, cparams={"typesize": 8})
        >>> @s.filler(((np.arange(6), np.int64), (10, np.int64)), np.int64)
        ... def add(inputs, out, offset):
        ...     out[:] = inputs[0] + inputs[1]
        >>> np.frombuffer(s[:], np.int64).tolist()
        [10, 11, 12, 13, 14, 15]
        """
        host: Any = self

        def install(func: Callable[..., None]) -> Callable[..., None]:
            if host.nbytes:
                raise ParamError("Cannot apply a filler to a non empty SChunk")
            total = filler_nelem(inputs_tuple, nelem) * host.typesize
            fill = filler_function(func, inputs_tuple)
            self._prefilter = BlockFunction.make(fill, schunk_dtype, schunk_dtype)
            try:
                for pos in range(0, total, host.chunksize):
                    host.append_data(np.zeros(min(host.chunksize, total - pos), np.uint8))
            finally:
                self._prefilter = None
            return func

        return install


def postfiltered_read(
    s: Any, pf: BlockFunction, start: int, stop: int | None, out: Any
) -> bytes | None:
    """``SChunk.get_slice`` with a postfilter: items ``[start, stop)`` postfiltered, into
    ``out`` (returns None) or as bytes."""
    start, stop, _ = slice(start, stop).indices(len(s))
    stop = max(stop, start)
    ts = s.typesize
    pos, end = start * ts, stop * ts
    result = np.empty(end - pos, np.uint8) if out is None else writable_view(out, "out")
    if len(result) < end - pos:
        raise ParamError(
            f"Not enough space in out: {len(result)} bytes, the slice needs {end - pos}"
        )
    for k, (c0, c1) in s._chunk_spans(pos, end):
        lo, hi = max(pos, c0) - c0, min(end, c1) - c0
        result[c0 + lo - pos : c0 + hi - pos] = postfiltered_chunk(s, pf, k, lo, hi)
    return result[: end - pos].tobytes() if out is None else None


def postfiltered_decompress(s: Any, pf: BlockFunction, nchunk: int, dst: Any) -> bytes | None:
    """``SChunk.decompress_chunk`` with a postfilter."""
    data = postfiltered_chunk(s, pf, nchunk)
    if dst is None:
        return data.tobytes()
    view = writable_view(dst)
    if len(view) < len(data):
        raise ParamError(f"dst has {len(view)} bytes, the chunk needs {len(data)}")
    view[: len(data)] = data
    return None
