"""Index parsing (ast, never eval) and ``pyblosc2 slice``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2
from pyblosc2.cli.slicing import parse_index
from tests.cli.conftest import ARRAY


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[0:10, ::2, 5]", (slice(0, 10), slice(None, None, 2), 5)),
        ("3", (3,)),
        ("[-1]", (-1,)),
        ("[..., 1:-1]", (Ellipsis, slice(1, -1))),
        ("[::-3]", (slice(None, None, -3),)),
        ("[]", ()),
        ("[+2, None:4]", (2, slice(None, 4))),
    ],
)
def test_parse_index(text: str, key: tuple) -> None:
    assert parse_index(text) == key


@pytest.mark.parametrize(
    "text",
    ["[__import__('os').system('x')]", "[1.5]", "[a]", "[1+1]", "[0:10", "[None]", "['x']"],
)
def test_parse_index_refuses_everything_else(text: str) -> None:
    with pytest.raises(ValueError, match="index"):
        parse_index(text)


@pytest.mark.parametrize("index", ["[0:10, ::7]", "[5, 3]", "[-3:, 10]", "[::-9, -1]", "[...]"])
def test_slice_of_a_python_blosc2_b2nd(cli, c_b2nd: Path, index: str) -> None:
    r = cli("slice", c_b2nd.name, index, "--out", "s.npy")
    assert r.returncode == 0, r.stderr
    expected = ARRAY[eval(f"np.s_{index}")]  # the test's own reference, trusted text
    np.testing.assert_array_equal(np.load(c_b2nd.parent / "s.npy"), expected)


def test_slice_prints(cli, c_b2nd: Path, c_b2frame: Path) -> None:
    r = cli("slice", c_b2nd.name, "[1, :3]")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.array(eval(r.stdout)), ARRAY[1, :3], rtol=1e-6)
    r = cli("slice", c_b2frame.name, "[998:1003:2]", "--dtype", "i4")
    assert r.stdout.strip() == "[998,   1,   3]"  # chunk k holds arange(1000) + k


def test_slice_errors(cli, c_b2nd: Path) -> None:
    r = cli("slice", c_b2nd.name, "[exec('x')]")
    assert r.returncode == 2
    assert r.stderr.startswith(f"pyblosc2: error: {c_b2nd.name}: index: expected integers")
    r = cli("slice", c_b2nd.name, "[100]", "--out", "x.npy")
    assert r.returncode == 2 and not (c_b2nd.parent / "x.npy").exists()


def test_schunk_slice_says_it_shows_raw_integers(cli, tmp_path: Path) -> None:
    """An SChunk records only its typesize: slice shows raw unsigned ints and says how to pass
    --dtype; with --dtype, or on an NDArray (which records its dtype), no note."""
    s = pyblosc2.SChunk(
        chunksize=800, urlpath=str(tmp_path / "f.b2frame"), mode="w", cparams={"typesize": 8}
    )
    s.append_data(np.linspace(0, 1, 100))
    r = cli("slice", "f.b2frame", "[0:3]")
    assert r.returncode == 0, r.stderr
    raw = np.linspace(0, 1, 100)[:3].view(np.uint64)
    assert np.array_equal(np.array(eval(r.stdout), dtype=np.uint64), raw)
    assert r.stderr.strip() == (
        "note: an SChunk records only its typesize (8 bytes), not a dtype: showing raw uint64 "
        "items; pass --dtype (e.g. --dtype float64) to read them as another type"
    )
    r = cli("slice", "f.b2frame", "[0:3]", "--dtype", "float64")
    assert r.stderr == ""
    np.testing.assert_allclose(np.array(eval(r.stdout)), np.linspace(0, 1, 100)[:3], rtol=1e-7)
    pyblosc2.asarray(np.linspace(0, 1, 100), urlpath=str(tmp_path / "a.b2nd"), mode="w")
    r = cli("slice", "a.b2nd", "[0:3]")
    assert r.stderr == "" and "0.01010101" in r.stdout
