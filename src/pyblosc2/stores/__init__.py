"""Stores of many arrays in one place, as python-blosc2 4.x keeps them: ``EmbedStore``
(values inside one super-chunk, ``.b2e``), ``DictStore`` (a dict of arrays in a ``.b2d``
directory or a ``.b2z`` zip archive) and ``TreeStore`` (a DictStore with hierarchical keys,
subtrees and ``walk``); and ``open``/``from_cframe``, which recognise them.

Modules, from the bytes up: :mod:`.keys` (keys and file names), :mod:`.zipindex` (where the
members of an archive lie), :mod:`.archive` (writing and unpacking archives), :mod:`.leaves`
(what a stored frame holds), :mod:`.discovery` (which files are leaves), :mod:`.embed`,
:mod:`.forms` (packing, unpacking, the working copy), :mod:`.dictstore`, :mod:`.treevlmeta`,
:mod:`.treestore`, :mod:`.tables` (CTables in stores) and :mod:`.opener`.
"""

from typing import Any

from ..vlarrays import Ref, register_kind, register_ref_opener
from .dictstore import DictStore
from .embed import EmbedStore, estore_from_cframe
from .leaves import CONTAINER_OPENERS, URLPath, container_of
from .opener import from_cframe, open, store_class
from .tables import StoreLeaves
from .treestore import TreeStore


def _member_of(ref: Ref, deserialize: str) -> Any:
    """The value a ``dictstore_key`` (or ``b2z``) reference names: the store at its
    ``urlpath``, opened read-only, then its ``key``."""
    return open(ref.urlpath, mode="r", deserialize=deserialize)[ref.key]


# stores are values the variable-length containers can hold (msgpack ext 42, by their cframe)
# and the targets of their store references
register_kind(
    "b2embed",
    lambda schunk, mode: EmbedStore(_from_schunk=schunk, deserialize=mode.value),
    EmbedStore,
)
register_ref_opener("dictstore_key", _member_of)
register_ref_opener("b2z", _member_of)

__all__ = [
    "CONTAINER_OPENERS",
    "DictStore",
    "EmbedStore",
    "StoreLeaves",
    "TreeStore",
    "URLPath",
    "container_of",
    "estore_from_cframe",
    "from_cframe",
    "open",
    "store_class",
]
