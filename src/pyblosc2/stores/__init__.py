"""Stores of many arrays in one place, as python-blosc2 4.x keeps them: ``EmbedStore``
(values inside one super-chunk, ``.b2e``), ``DictStore`` (a dict of arrays in a ``.b2d``
directory or a ``.b2z`` zip archive) and ``TreeStore`` (a DictStore with hierarchical keys,
subtrees and ``walk``); and ``open``/``from_cframe``, which recognise them.

Modules, from the bytes up: :mod:`.keys` (keys and file names), :mod:`.zipindex` (where the
members of an archive lie), :mod:`.archive` (writing and unpacking archives), :mod:`.leaves`
(what a stored frame holds), :mod:`.discovery` (which files are leaves), :mod:`.embed`,
:mod:`.forms` (packing, unpacking, the working copy), :mod:`.dictstore`, :mod:`.treevlmeta`,
:mod:`.treestore`, :mod:`.opener`, and :mod:`.ext`
(python-blosc2's ``blosc2_ext.open``).
"""

from . import ext
from .dictstore import DictStore
from .embed import EmbedStore, estore_from_cframe
from .leaves import CONTAINER_OPENERS, URLPath, container_of
from .opener import from_cframe, open, store_class
from .treestore import TreeStore

__all__ = [
    "CONTAINER_OPENERS",
    "DictStore",
    "EmbedStore",
    "TreeStore",
    "URLPath",
    "container_of",
    "estore_from_cframe",
    "ext",
    "from_cframe",
    "open",
    "store_class",
]
