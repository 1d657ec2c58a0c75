"""Store keys and the file names they become (stores/keys.py)."""

from __future__ import annotations

import pytest

from pyblosc2.errors import ParamError, ParamTypeError
from pyblosc2.stores.keys import check_key, key_of_path, path_of_key, tree_key

GOOD = ["/a", "/dir1/node3", "/a.b/c-d_e", "/__vlmeta__", "/x/y/z/w"]
BAD = [
    ("a", "start with '/'"),
    ("/a/", "end with '/'"),
    ("/a//b", "consecutive slashes"),
    ("/a/../b", r"'\.' or '\.\.'"),
    ("/..", r"'\.' or '\.\.'"),
    ("/./a", r"'\.' or '\.\.'"),
    ("/a:b", "character"),
    ("/a\0b", "character"),
    ("/a\nb", "character"),
    ("/a\tb", "character"),
]


@pytest.mark.parametrize("key", GOOD)
def test_good_keys(key: str) -> None:
    assert check_key(key) == key
    assert key_of_path(path_of_key(key, ".b2nd")) == key


@pytest.mark.parametrize(("key", "match"), BAD)
def test_bad_keys_refused(key: str, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        check_key(key)


@pytest.mark.parametrize("key", [1, None, b"/a", ("/a",)])
def test_key_types(key: object) -> None:
    with pytest.raises(ParamTypeError):
        check_key(key)
    with pytest.raises(TypeError):  # python-blosc2's EmbedStore raises TypeError
        check_key(key)
    with pytest.raises(ValueError):  # ... and its TreeStore ValueError: both hold
        tree_key(key)


@pytest.mark.parametrize(
    ("given", "normal"), [("a", "/a"), ("a/b", "/a/b"), ("/a/b", "/a/b"), ("/", "/")]
)
def test_tree_keys_get_a_leading_slash(given: str, normal: str) -> None:
    assert tree_key(given) == normal


def test_tree_keys_allow_colons_as_python_blosc2() -> None:
    assert tree_key("/a:b") == "/a:b"


@pytest.mark.parametrize("key", ["/a/", "a//b", "/x/..", "/a\tb"])
def test_tree_keys_refused(key: str) -> None:
    with pytest.raises(ParamError):
        tree_key(key)


def test_paths_of_keys() -> None:
    assert path_of_key("/dir1/node3", ".b2nd") == "dir1/node3.b2nd"
    assert key_of_path("dir1/node3.weird") == "/dir1/node3"
    assert key_of_path("dir.x/leaf") == "/dir.x/leaf"
