"""meta/scan.py: the bounded walk over a msgpack value before it is decoded — nesting at most
MAX_DEPTH (arrays, maps and extension payloads together), declared lengths within the bytes,
extension payloads located for the innermost-first decode; and never more lenient than
msgpack itself."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2 import FormatError
from pyblosc2.meta import MAX_DEPTH, packb, unpackb
from pyblosc2.meta.scan import scan


def _arrays(depth: int) -> bytes:
    return b"\x91" * (depth - 1) + b"\x90"


def _maps(depth: int) -> bytes:
    return b"\x81\xa1k" * (depth - 1) + b"\x80"


def _sets(depth: int) -> bytes:
    """``depth`` (even) levels: sets in sets, each an ext 45 payload and the array in it."""
    inner = msgpack.packb(msgpack.ExtType(45, b"\x90"))
    for _ in range(depth // 2 - 1):
        inner = msgpack.packb(msgpack.ExtType(45, b"\x91" + inner))
    return inner


@pytest.mark.parametrize("nest", [_arrays, _maps], ids=["arrays", "maps"])
def test_depth_limit(nest) -> None:
    scan(nest(MAX_DEPTH), "v")
    depth_error = rf"^v: msgpack nesting depth at offset \d+ is {MAX_DEPTH + 1}, "
    with pytest.raises(FormatError, match=depth_error):
        scan(nest(MAX_DEPTH + 1), "v")


def test_extension_payloads_count_as_levels() -> None:
    """Each set is two levels (its payload and the array in it): 32 sets reach the limit."""
    assert len(scan(_sets(MAX_DEPTH), "v").spans) == MAX_DEPTH // 2
    with pytest.raises(FormatError, match="nesting depth"):
        scan(msgpack.packb(msgpack.ExtType(45, b"\x91" + _sets(MAX_DEPTH))), "v")


@pytest.mark.parametrize("depth", [200, 500, 10_000, 100_000])
def test_deep_values_are_refused_at_the_limit(depth: int) -> None:
    """The walk stops at the first level past the limit, whatever follows."""
    for data in (_arrays(depth), _maps(depth), _sets(min(depth, 2000))):
        with pytest.raises(FormatError, match=rf"depth at offset \d+ is {MAX_DEPTH + 1}"):
            unpackb(data)


def test_spans_children_and_top() -> None:
    """[set([set([])]), ndarray] → payloads in byte order, each with its direct children."""
    inner = msgpack.packb(msgpack.ExtType(45, b"\x90"))
    outer = msgpack.packb(msgpack.ExtType(45, b"\x91" + inner))
    arr = packb(np.arange(2))
    data = b"\x92" + outer + arr
    spans = scan(data, "v")
    assert [code for code, _, _ in spans.spans] == [45, 45, 46]
    assert spans.children == ((1,), (), ())
    assert spans.top == (0, 2)
    start, stop = spans.spans[1][1:]
    assert data[start:stop] == b"\x90"


def test_tuple_heads() -> None:
    assert scan(packb([(1,), ((),)]), "v").tuple_heads == 3
    assert scan(msgpack.packb(["__tuple__"]), "v").tuple_heads == 1
    assert scan(msgpack.packb({"__tuple__": 1}), "v").tuple_heads == 0


@pytest.mark.parametrize(
    "key", [b"\xa1k", b"\xc4\x01k", b"\xd9\x01k"], ids=["fixstr", "bin8", "str8"]
)
def test_str_and_bin_keys_pass(key: bytes) -> None:
    scan(b"\x81" + key + b"\x01", "v")


@given(st.binary(max_size=64))
def test_never_more_lenient_than_msgpack(data: bytes) -> None:
    """Bytes the walk accepts are whole msgpack that msgpack parses (up to string decoding
    and the extension hooks, which come later)."""
    try:
        scan(data, "v")
    except FormatError:
        return
    try:
        msgpack.unpackb(data, raw=True, strict_map_key=False, ext_hook=msgpack.ExtType)
    except (TypeError, ValueError) as exc:  # unhashable keys come later too
        assert "unhashable" in str(exc) or "ext" in str(exc).lower(), exc
