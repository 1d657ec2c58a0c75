"""schunk/hooks.py: Python postfilters, prefilters and fillers, called once per block with
``(input, output, offset)`` as python-blosc2 calls them."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.errors import ParamError, ParamTypeError

N = 1000  # items per chunk


def _schunk(tmp_path=None, nchunks: int = 3, **kw) -> blosc2.SChunk:
    data = np.arange(N * nchunks, dtype=np.int32)
    if tmp_path is not None:
        kw.update(urlpath=str(tmp_path / "f.b2frame"), mode="w")
    cparams = {"typesize": 4, "blocksize": 1024}
    return blosc2.SChunk(chunksize=N * 4, data=data, cparams=cparams, **kw)


@pytest.mark.parametrize("on_disk", [False, True])
def test_postfilter_applies_to_every_read_path(tmp_path, on_disk) -> None:
    s = _schunk(tmp_path if on_disk else None)
    calls = []

    @s.postfilter(np.int32, np.float32)
    def double(inp, out, offset):
        calls.append((inp.size, offset))
        out[:] = inp * 2

    want = np.arange(3 * N, dtype=np.float32) * 2
    np.testing.assert_array_equal(np.frombuffer(s.decompress_chunk(1), np.float32), want[N : 2 * N])
    # one call per block (1024-byte blocks: 256 items, the last one shorter), global offsets
    assert calls == [(256, 1000), (256, 1256), (256, 1512), (232, 1768)]
    calls.clear()
    np.testing.assert_array_equal(np.frombuffer(s[1500:1502], np.float32), want[1500:1502])
    assert calls == [(256, 1256)]  # only the block the slice touches
    out = np.empty(3 * N, np.float32)
    s.get_slice(out=out)
    np.testing.assert_array_equal(out, want)
    dst = np.empty(N, np.float32)
    s.decompress_chunk(2, dst)
    np.testing.assert_array_equal(dst, want[2 * N :])
    chunks = list(s.iterchunks(np.float32))
    np.testing.assert_array_equal(np.concatenate(chunks), want)
    s.remove_postfilter("double")
    np.testing.assert_array_equal(np.frombuffer(s[0:3], np.int32), [0, 1, 2])


def test_postfilter_is_not_stored(tmp_path) -> None:
    s = _schunk(tmp_path)

    @s.postfilter(np.int32)
    def zero(inp, out, offset):
        out[:] = 0

    assert np.frombuffer(s[1:2], np.int32)[0] == 0  # this handle postfilters
    other = blosc2.open(str(tmp_path / "f.b2frame"))
    assert np.frombuffer(other[1:2], np.int32)[0] == 1  # the stored data is unchanged


@pytest.mark.parametrize("write", ["append", "setitem", "update_data", "insert_data"])
def test_prefilter_sees_the_position_the_data_goes_to(write) -> None:
    s = blosc2.SChunk(chunksize=N * 4, cparams={"typesize": 4, "blocksize": 1024})
    s.append_data(np.zeros(N, np.int32))
    s.append_data(np.zeros(N, np.int32))

    @s.prefilter(np.int32, np.float32)
    def position(inp, out, offset):
        out[:] = offset + np.arange(inp.size)

    data = np.zeros(N, np.int32)
    target = 1
    if write == "append":
        s.append_data(data)
        target = 2
    elif write == "setitem":
        s[N : 2 * N] = data
    elif write == "update_data":
        s.update_data(1, data, True)
    else:
        s.insert_data(1, data, True)
    got = np.frombuffer(s.decompress_chunk(target), np.float32)
    np.testing.assert_array_equal(got, np.arange(target * N, (target + 1) * N, dtype=np.float32))
    s.remove_prefilter("position")
    s.update_data(0, np.full(N, 5, np.int32), True)
    assert np.frombuffer(s.decompress_chunk(0), np.int32)[0] == 5


def test_prefilter_on_an_empty_schunk_grown_by_setitem() -> None:
    s = blosc2.SChunk(chunksize=N * 8, cparams={"typesize": 8})

    @s.prefilter(np.float64)
    def shift(inp, out, offset):
        out[:] = inp - 0.5

    s[: 3 * N] = np.arange(3 * N, dtype=np.float64)
    out = np.empty(3 * N)
    s.get_slice(out=out)
    np.testing.assert_array_equal(out, np.arange(3 * N) - 0.5)


@pytest.mark.parametrize("nelem", [None, 2500])
def test_filler_with_schunk_array_and_scalar_operands(nelem) -> None:
    total = 3 * N
    op = blosc2.SChunk(chunksize=N * 4, data=np.arange(total, dtype=np.int32))
    arr = np.full(total, 3, np.int16)
    s = blosc2.SChunk(chunksize=N * 8, cparams={"typesize": 8})

    @s.filler(((op, np.int32), (arr, np.int16), (0.5, np.float32)), np.float64, nelem)
    def fill(inputs, out, offset):
        out[:] = inputs[0] * inputs[1] + inputs[2]

    n = total if nelem is None else nelem
    assert len(s) == n
    got = np.frombuffer(s[:], np.float64)
    np.testing.assert_array_equal(got, np.arange(n) * 3 + 0.5)
    # the filler is gone: later writes are stored as given
    s[0:2] = np.array([7.0, 8.0])
    np.testing.assert_array_equal(np.frombuffer(s[0:2], np.float64), [7.0, 8.0])


def test_filler_errors() -> None:
    s = blosc2.SChunk(chunksize=16, cparams={"typesize": 4})
    with pytest.raises(ParamError, match="nelem must be given"):
        s.filler(((1, np.int32),), np.int32)(lambda i, o, off: None)
    with pytest.raises(ParamError, match="larger than an operand"):
        s.filler(((np.arange(3), np.int32),), np.int32, 10)(lambda i, o, off: None)
    s.append_data(np.zeros(4, np.int32))
    with pytest.raises(ParamError, match="non empty"):
        s.filler(((np.arange(3), np.int32),), np.int32)(lambda i, o, off: None)


def test_filter_arguments_are_checked() -> None:
    s = _schunk()
    with pytest.raises(ParamTypeError, match="callable"):
        s.postfilter(np.int32)(42)
    with pytest.raises(TypeError):
        s.postfilter("not a dtype")(lambda i, o, off: None)

    @s.postfilter(np.dtype("V3"))  # 1024-byte blocks are not whole 3-byte items
    def odd(inp, out, offset):
        out[:] = inp

    with pytest.raises(ParamError, match="whole number of items"):
        s.decompress_chunk(0)
