"""Names a package exports but imports on first use (PEP 562's module ``__getattr__``): the
one way pyblosc2's packages do it (the top level, ``ctable``, ``proxies``, ``xarray``,
``blosc2_ext``), so that ``import pyblosc2`` loads only what reading arrays needs.

>>> import sys
>>> ns = {"__name__": "json", "__package__": "json"}
>>> getattr_ = lazy_getattr({"dumps": ("json", "dumps"), "dec": (".decoder", None)}, ns)
>>> getattr_("dumps") is sys.modules["json"].dumps, "dumps" in ns, getattr_("dec").__name__
(True, True, 'json.decoder')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(
    homes: Mapping[str, tuple[str, str | None]],
    namespace: dict[str, Any],
    together: Iterable[str] = (),
) -> Callable[[str], Any]:
    """The ``__getattr__`` of the module whose globals are ``namespace``: ``name`` in ``homes``
    is ``(module, attribute)`` (``module`` relative to the module's package when it starts with
    a dot; ``attribute`` None: the module itself), imported on first access and kept in
    ``namespace`` so that the next access is a plain lookup; the modules of ``together`` are
    imported first (modules that register something the names rely on)."""
    together = tuple(together)
    package, me = namespace["__package__"], namespace["__name__"]

    def __getattr__(name: str) -> Any:
        where = homes.get(name)
        if where is None:
            raise AttributeError(f"module {me!r} has no attribute {name!r}")
        for module in together:
            importlib.import_module(module, package)
        home = importlib.import_module(where[0], package)
        value = home if where[1] is None else getattr(home, where[1])
        namespace[name] = value
        return value

    return __getattr__
