"""How :mod:`pyblosc2` stands in for python-blosc2's package: submodules named like functions
(``blosc2.lazyexpr`` is both) and ``import pyblosc2 as blosc2`` made permanent."""

import importlib as _importlib
import importlib.abc as _importlib_abc
import importlib.machinery as _importlib_machinery
import importlib.util as _importlib_util
import sys as _sys
import types as _types
from collections import abc as _abc

__all__ = ["install"]


class _Package(_types.ModuleType):
    """python-blosc2 has submodules named like its functions (``blosc2.lazyexpr`` is both):
    importing such a submodule must not replace the function the package exports."""

    def __setattr__(self, name: str, value: object) -> None:
        have = self.__dict__.get(name)
        if isinstance(value, _types.ModuleType) and (
            (callable(have) and not isinstance(have, _types.ModuleType))
            or (have is None and self.__dict__.get("_LAZY", {}).get(name, ("", None))[1])
        ):  # a function, or the name of one not loaded yet (pyblosc2.__getattr__ gives it)
            return
        super().__setattr__(name, value)


class _AliasLoader(_importlib_abc.Loader):
    def __init__(self, real: str) -> None:
        self.real = real

    def create_module(self, spec: _importlib_machinery.ModuleSpec) -> _types.ModuleType:
        return _importlib.import_module(self.real)

    def exec_module(self, module: _types.ModuleType) -> None:
        pass


class _AliasFinder(_importlib_abc.MetaPathFinder):
    """``import pyblosc2 as blosc2`` made permanent (``sys.modules["blosc2"] = pyblosc2``, as
    scripts moving from python-blosc2 do): ``import blosc2.lazyexpr`` is then
    ``pyblosc2.lazyexpr`` itself, not a second copy of the package's modules under another
    name (whose classes would not be pyblosc2's)."""

    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(
        self,
        fullname: str,
        path: _abc.Sequence[str] | None = None,
        target: _types.ModuleType | None = None,
    ) -> _importlib_machinery.ModuleSpec | None:
        head, _, tail = fullname.partition(".")
        package = self.package
        if not tail or head == package or _sys.modules.get(head) is not _sys.modules[package]:
            return None
        return _importlib_util.spec_from_loader(fullname, _AliasLoader(f"{package}.{tail}"))


def install(package: str) -> None:
    """Give ``package`` (pyblosc2) its module class and put its alias finder first."""
    _sys.modules[package].__class__ = _Package
    _sys.meta_path.insert(0, _AliasFinder(package))
