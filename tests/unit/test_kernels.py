"""kernels/: one protocol for the hot loops, the numpy set as the reference, the choice made
once (environment, `use_kernels`), a set that fails to load falling back to numpy with one
warning. Every known set is checked byte-identical to the numpy set on random inputs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyblosc2.errors import CodecError, ParamError
from pyblosc2.kernels import (
    active,
    kernel_sets,
    kernels_in_use,
    select,
    use_kernels,
    wait_for_kernels,
)
from pyblosc2.kernels.base import KernelSet
from pyblosc2.kernels.numpy_set import NUMPY
from tests.bounded import run_child

FAST = settings(
    max_examples=60,
    deadline=None,
    # the kernel set is the same for every input: the fixture need not be reset
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
OTHER_SETS = [n for n in kernel_sets() if n != "numpy"]


def _blocks() -> st.SearchStrategy[tuple[np.ndarray, int]]:
    """A block of random-ish bytes (sizes with leftovers) and a typesize."""

    def build(args: tuple[int, int, int, int]) -> tuple[np.ndarray, int]:
        n, typesize, seed, kind = args
        rng = np.random.default_rng(seed)
        if kind == 0:
            data = rng.integers(0, 256, n, dtype=np.uint8)
        elif kind == 1:  # smooth: what shuffles and BloscLZ see in practice
            data = np.linspace(0, 1, n // 8 + 1).view(np.uint8)[:n].copy()
        else:  # long runs
            data = np.repeat(rng.integers(0, 4, n // 64 + 1, dtype=np.uint8), 64)[:n].copy()
        return data, typesize

    return st.tuples(
        st.integers(0, 5000), st.integers(1, 20), st.integers(0, 2**32 - 1), st.integers(0, 2)
    ).map(build)


@pytest.fixture(params=kernel_sets())
def kset(request) -> KernelSet:
    with kernels_in_use(request.param) as ks:
        yield ks


def test_the_numpy_set_is_known_and_chosen_by_default() -> None:
    assert kernel_sets()[-1] == "numpy"  # the fallback, last in order of preference
    code = "import pyblosc2.kernels as k; print(k.active().name, k.wait_for_kernels().name)"
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYBLOSC2_KERNELS"}
    out = run_child(
        [sys.executable, "-c", code],
        "choose the kernels and wait for the background load",
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    # numpy serves the first calls; then the first known set that loads: numba with the
    # [fast] extra (loaded in the background), else numpy (the floors run)
    first = kernel_sets()[0] if importlib.util.find_spec("numba") is not None else "numpy"
    assert out.stdout.split() == ["numpy", first]


@FAST
@given(_blocks())
def test_shuffles_are_byte_identical_to_numpy(kset: KernelSet, block) -> None:
    data, t = block
    for fwd, back in (("shuffle", "unshuffle"), ("bitshuffle", "bitunshuffle")):
        extra = () if fwd == "shuffle" else (False,)
        want = np.empty_like(data)
        got = np.empty_like(data)
        getattr(NUMPY, fwd)(data, want, t, *extra)
        getattr(kset, fwd)(data, got, t, *extra)
        assert bytes(got) == bytes(want), fwd
        back_got = np.empty_like(data)
        getattr(kset, back)(want, back_got, t, *extra)
        if fwd == "shuffle" or len(data) // t % 8 == 0 or t == 1:
            assert bytes(back_got) == bytes(data), back


@FAST
@given(_blocks())
def test_delta_prefixes_are_byte_identical_to_numpy(kset: KernelSet, block) -> None:
    data, t = block
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(t, np.uint8)
    y = data[: len(data) // np.dtype(width).itemsize * np.dtype(width).itemsize].view(width)
    want, got = np.empty_like(y), np.empty_like(y)
    NUMPY.prefix_xor(y, want)
    kset.prefix_xor(y, got)
    assert np.array_equal(got, np.bitwise_xor.accumulate(y)) and np.array_equal(got, want)
    ch = data[: len(data) // t * t].reshape(t, -1)
    want2, got2 = np.empty_like(ch), np.empty_like(ch)
    NUMPY.channel_cumsum(ch, want2)
    kset.channel_cumsum(ch, got2)
    assert np.array_equal(got2, np.cumsum(ch, axis=1, dtype=np.uint8))
    assert np.array_equal(got2, want2)


@FAST
@given(_blocks(), st.integers(1, 9))
def test_blosclz_is_byte_identical_to_numpy(kset: KernelSet, block, clevel: int) -> None:
    data, _ = block
    maxout = max(len(data), 66)
    stream = kset.blosclz_compress(data, clevel, maxout)
    assert stream == NUMPY.blosclz_compress(data, clevel, maxout)
    if stream:
        assert bytes(kset.blosclz_decompress(stream, len(data))) == bytes(data)
        into = np.full(len(data), 0xA5, np.uint8)
        kset.blosclz_decompress_into(stream, into)
        assert bytes(into) == bytes(data)


@pytest.mark.parametrize("period", [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64, 300, 9000])
def test_blosclz_decodes_matches_overlapping_their_source(kset: KernelSet, period: int) -> None:
    """Repeats of a short random pattern become matches longer than their distance (each
    copied a period or 8 bytes at a time by the numba decoder: periods of 8 and more by
    words), far and near (distances past 8191 take the long form); both decoders give the
    data back."""
    rng = np.random.default_rng(period)
    pattern = rng.integers(0, 256, period, np.uint8)
    data = np.concatenate([rng.integers(0, 256, 50, np.uint8), np.tile(pattern, 40_000 // period)])
    stream = NUMPY.blosclz_compress(data, 9, len(data))
    assert stream
    assert bytes(kset.blosclz_decompress(stream, len(data))) == data.tobytes()


@pytest.mark.parametrize("period", range(1, 18))
@pytest.mark.parametrize("length", [9, 15, 16, 17, 200])
def test_blosclz_decodes_a_hand_made_match_of_each_period(
    kset: KernelSet, period: int, length: int
) -> None:
    """A literal run of ``period`` random bytes, one long match ``length`` bytes long at
    distance ``period`` (§10.1: control 0xE0 | distance >> 8, extra length, distance & 255),
    then 12 literal bytes: the match repeats the pattern, whatever the decoder's copy width."""
    rng = np.random.default_rng(period * 1000 + length)
    pattern = rng.integers(0, 256, period, np.uint8).tobytes()
    tail = rng.integers(0, 256, 12, np.uint8).tobytes()
    d = period - 1
    stream = (
        bytes([0x20 | (period - 1)])
        + pattern
        + bytes([0xE0 | (d >> 8), length - 9, d & 255, 11])
        + tail
    )
    want = (pattern * (length // period + 2))[: period + length] + tail
    assert bytes(kset.blosclz_decompress(stream, len(want))) == want
    into = np.empty(len(want), np.uint8)
    kset.blosclz_decompress_into(stream, into)
    assert bytes(into) == want


def test_blosclz_refuses_a_stream_that_ends_early(kset: KernelSet) -> None:
    stream = NUMPY.blosclz_compress(b"abcd" * 500, 5, 2000)
    with pytest.raises(CodecError, match="blosclz"):
        kset.blosclz_decompress(stream[:-3], 2000)


def test_use_kernels_refuses_an_unknown_name() -> None:
    with pytest.raises(ParamError, match="kernels must be one of"):
        use_kernels("fortran")


def test_kernels_in_use_restores_the_choice() -> None:
    before = wait_for_kernels()  # settled: a background load would replace it on restore
    with kernels_in_use("numpy") as ks:
        assert active() is ks
    assert active() is before


def test_a_set_that_fails_to_load_falls_back_to_numpy_with_one_warning(monkeypatch) -> None:
    def broken() -> KernelSet:
        raise ImportError("no such JIT here")

    monkeypatch.setitem(select._LOADERS, "broken", broken)
    with kernels_in_use("numpy"):
        with pytest.warns(RuntimeWarning, match="'broken' kernels are not usable") as rec:
            ks = use_kernels("broken")
        assert ks is NUMPY and len(rec) == 1


def _fresh_choice(env: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import warnings; warnings.simplefilter('always');"
        "import pyblosc2.kernels as k; print(k.active().name); print(k.active().name)"
    )
    return run_child(
        [sys.executable, "-c", code],
        "choose the kernels from the environment",
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "PYBLOSC2_KERNELS": env},
    )


def test_the_environment_picks_a_set() -> None:
    out = _fresh_choice("numpy")
    assert out.stdout.split() == ["numpy", "numpy"] and "Warning" not in out.stderr


def test_an_unknown_set_in_the_environment_warns_once_and_uses_numpy() -> None:
    out = _fresh_choice("fortran")
    assert out.stdout.split() == ["numpy", "numpy"]
    assert out.stderr.count("RuntimeWarning") == 1 and "PYBLOSC2_KERNELS" in out.stderr


def test_import_pyblosc2_loads_no_optional_kernel_dependency() -> None:
    code = (
        "import sys, pyblosc2; print(sorted(m for m in ('numba', 'llvmlite') if m in sys.modules))"
    )
    out = run_child(
        [sys.executable, "-c", code], "import pyblosc2", capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_filters_and_codecs_run_the_active_set(monkeypatch) -> None:
    """The filter and codec modules ask the protocol on every call (no implementation bound
    at import): a set swapped in is the one that runs."""
    import pyblosc2

    calls: list[str] = []

    def spy(name: str):
        real = getattr(NUMPY, name)

        def run(*args):
            calls.append(name)
            return real(*args)

        return run

    names = [f for f in KernelSet.__dataclass_fields__ if f != "name"]
    traced = KernelSet("traced", *(spy(n) for n in names))
    monkeypatch.setitem(select._LOADERS, "traced", lambda: traced)
    a = np.linspace(0, 1, 50_000)
    with kernels_in_use("traced"), warnings.catch_warnings():
        warnings.simplefilter("error")
        for codec, flt in (
            (pyblosc2.Codec.BLOSCLZ, pyblosc2.Filter.SHUFFLE),
            (pyblosc2.Codec.LZ4, pyblosc2.Filter.BITSHUFFLE),
            (pyblosc2.Codec.LZ4, pyblosc2.Filter.DELTA),
        ):
            c = pyblosc2.compress2(a, typesize=8, codec=codec, filters=[flt])
            assert np.array_equal(np.frombuffer(pyblosc2.decompress2(c), a.dtype), a)
    assert "unshuffle" in calls or "unshuffle_blocks" in calls
    for name in (
        "shuffle",
        "bitshuffle",
        "bitunshuffle",
        "prefix_xor",
        "blosclz_compress",
        "blosclz_decompress_streams",  # a chunk's BloscLZ streams, a block per call
    ):
        assert name in calls, name


@FAST
@given(_blocks(), st.booleans())
def test_blosc1_bitshuffle_and_block_runs_are_byte_identical(kset: KernelSet, block, b1) -> None:
    data, t = block
    for name in ("bitshuffle", "bitunshuffle"):
        want, got = np.empty_like(data), np.empty_like(data)
        getattr(NUMPY, name)(data, want, t, b1)
        getattr(kset, name)(data, got, t, b1)
        assert bytes(got) == bytes(want), name
    rows = len(data) // (4 * t)
    if rows:
        src = data[: rows * 4 * t].reshape(4, rows * t)
        want, got = np.empty_like(src), np.empty_like(src)
        NUMPY.unshuffle_blocks(src, want, t)
        kset.unshuffle_blocks(src, got, t)
        assert bytes(got) == bytes(want)
        fwd, one = np.empty_like(src), np.empty(src.shape[1], np.uint8)
        kset.shuffle_blocks(src, fwd, t)
        for row, out in zip(src, fwd, strict=True):  # each row as one shuffled block
            NUMPY.shuffle(row, one, t)
            assert bytes(out) == bytes(one)


@FAST
@given(
    _blocks(),
    st.lists(
        st.tuples(st.integers(0, 2**16), st.integers(0, 2**16), st.integers(0, 300)), max_size=6
    ),
    st.integers(0, 2),
)
def test_unshuffle_runs_is_numpys_bytes_and_refuses_a_run_out_of_bounds(
    kset: KernelSet, block, picks, bad: int
) -> None:
    """Runs of items out of byte planes (a run's items picked by their planes' positions)
    into places of the result: the numpy set's bytes, the same as unshuffling the planes
    whole and copying the run; a run that would read or write out of bounds is refused
    (returned, nothing of it written) by every set at the same row."""
    data, t = block
    q = len(data) // t
    if not q:
        return
    whole = np.empty(q * t, np.uint8)
    NUMPY.unshuffle(data[: q * t], whole, t)
    dst_len = 4096
    rows = []
    for a, b, m in picks:
        m = min(m, q, dst_len // t)
        s0 = a % (q - m + 1)
        d0 = b % max(1, (dst_len - m * t) // t + 1) * t
        rows.append((s0, d0, m))
    if bad and rows:  # one run past the end of the planes (1) or of the result (2)
        s0, d0, m = rows[-1]
        past = len(data) - (t - 1) * q - m + 1
        rows[-1] = (past, d0, m) if bad == 1 else (s0, dst_len - m * t + 1, m)
    table = np.array(rows, np.int64).reshape(-1, 3)
    want, got = np.zeros(dst_len, np.uint8), np.zeros(dst_len, np.uint8)
    r_want = NUMPY.unshuffle_runs(data, q, want, table, t)
    r_got = kset.unshuffle_runs(data, q, got, table, t)
    assert r_got == r_want == (len(rows) - 1 if bad and rows else -1)
    assert bytes(got) == bytes(want)
    check = np.zeros(dst_len, np.uint8)
    for s0, d0, m in rows[: len(rows) - (1 if bad and rows else 0)]:
        check[d0 : d0 + m * t] = whole[s0 * t : (s0 + m) * t]
    assert bytes(want) == bytes(check)


@FAST
@given(_blocks(), st.integers(1, 9), st.integers(0, 4000))
def test_blosclz_output_bounds_are_byte_identical(kset: KernelSet, block, clevel, maxout) -> None:
    data, _ = block
    assert kset.blosclz_compress(data, clevel, maxout) == NUMPY.blosclz_compress(
        data, clevel, maxout
    )


@FAST
@given(_blocks(), st.integers(0, 2**32 - 1))
def test_blosclz_decoders_refuse_the_same_streams(kset: KernelSet, block, seed: int) -> None:
    data, _ = block
    stream = NUMPY.blosclz_compress(data, 5, max(len(data), 66))
    if not stream:
        return
    rng = np.random.default_rng(seed)
    bad = bytearray(stream)
    for _ in range(3):
        bad[int(rng.integers(0, len(bad)))] = int(rng.integers(0, 256))
    size = len(data) + int(rng.integers(-2, 3))
    try:
        want: bytes | type = bytes(NUMPY.blosclz_decompress(bytes(bad), max(size, 0)))
    except CodecError as exc:
        want = type(exc)
        with pytest.raises(CodecError, match=str(exc).split(":")[0]):
            kset.blosclz_decompress(bytes(bad), max(size, 0))
        with pytest.raises(CodecError, match=str(exc).split(":")[0]):
            kset.blosclz_decompress_into(bytes(bad), np.empty(max(size, 0), np.uint8))
        return
    assert bytes(kset.blosclz_decompress(bytes(bad), max(size, 0))) == want
    into = np.empty(max(size, 0), np.uint8)
    kset.blosclz_decompress_into(bytes(bad), into)
    assert bytes(into) == want


def test_without_numba_the_numpy_set_is_chosen_quietly_and_asking_for_it_warns() -> None:
    hide = "import sys; sys.modules['numba'] = None; import importlib.util as u; "
    hide += (
        "u.find_spec = (lambda f: (lambda n, *a: None if n == 'numba' else f(n, *a)))(u.find_spec);"
    )
    code = hide + (
        "import warnings; warnings.simplefilter('always');"
        "import pyblosc2.kernels as k; print(k.active().name)"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYBLOSC2_KERNELS"}
    out = run_child(
        [sys.executable, "-c", code],
        "choose the kernels without numba",
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.stdout.strip() == "numpy" and "Warning" not in out.stderr
    env["PYBLOSC2_KERNELS"] = "numba"
    out = run_child(
        [sys.executable, "-c", code],
        "ask for numba without numba",
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.stdout.strip() == "numpy"
    assert (
        out.stderr.count("RuntimeWarning") == 1 and "'numba' kernels are not usable" in out.stderr
    )


@pytest.mark.skipif("numba" not in kernel_sets(), reason="no numba set")
def test_the_chosen_set_is_named_by_clib_info() -> None:
    import pyblosc2

    with kernels_in_use("numba") as ks:
        assert ks.name in ("numba", "numpy")
        assert f"({ks.name} kernels)" in str(pyblosc2.clib_info(pyblosc2.Codec.BLOSCLZ))


def test_a_bound_blosclz_stream_decoder_uses_the_set_active_at_each_call(monkeypatch) -> None:
    """A reader binds its stream decoder once (an index picker: once per open frame); the
    BloscLZ decoder still asks for the active set per stream, so numba serves it once swapped
    in."""
    import dataclasses

    from pyblosc2.codecs.registry import get_codec

    dec = get_codec(0).stream_decoder()  # bound while another set serves
    calls: list[int] = []

    def into(src, dst) -> None:
        calls.append(len(dst))
        NUMPY.blosclz_decompress_into(src, dst)

    traced = dataclasses.replace(NUMPY, name="traced", blosclz_decompress_into=into)
    monkeypatch.setitem(select._LOADERS, "traced", lambda: traced)
    src = memoryview(bytes.fromhex("2361616161e00603016162"))
    with kernels_in_use("traced"):
        got = dec(src, memoryview(bytearray(21)))
        assert dec(memoryview(b"junk"), memoryview(bytearray(21))) is None
    assert got is not None and bytes(got) == b"a" * 20 + b"b"
    assert calls == [21, 21]
