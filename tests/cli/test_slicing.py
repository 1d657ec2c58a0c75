"""Index parsing (ast, never eval) and ``pyblosc2 slice``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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
