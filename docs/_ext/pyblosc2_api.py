"""The API reference, generated from ``pyblosc2.__all__``: every public name, by kind.

``.. pyblosc2-api:: KIND`` (KIND one of :data:`KINDS`) documents every name of ``__all__`` of
that kind with autodoc: functions, classes with their public members (those defined by
pyblosc2's classes, inherited ones included), enums with their members, exceptions, data
(documented by a ``#:`` comment where the name is assigned) and modules. A name added to
``__all__`` appears in the reference with no edit here; :func:`undocumented` lists what has
no docstring (``tests/unit/test_docs_site.py`` fails on it and on a name missing from the
built reference).
"""

from __future__ import annotations

import ast
import enum
import functools
import importlib
import inspect
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective

PACKAGE = "pyblosc2"
KINDS = ("functions", "classes", "enums", "exceptions", "data", "modules")


def _package() -> Any:
    return importlib.import_module(PACKAGE)


def kind_of(obj: Any) -> str:
    """Which page of the reference documents ``obj``."""
    if inspect.ismodule(obj):
        return "modules"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "exceptions"
        if issubclass(obj, enum.Enum):
            return "enums"
        return "classes"
    if callable(obj):
        return "functions"
    return "data"


def public_names(kind: str | None = None) -> list[str]:
    """The names of ``__all__`` (of one kind), sorted case-insensitively."""
    pkg = _package()
    names = [n for n in pkg.__all__ if kind is None or kind_of(getattr(pkg, n)) == kind]
    return sorted(names, key=lambda n: (n.lower(), n))


def _own(cls: type) -> bool:
    return (cls.__module__ or "").split(".")[0] == PACKAGE


def members(cls: type) -> list[str]:
    """The public members of ``cls`` that pyblosc2 defines (in it or an inherited pyblosc2
    base): methods, properties and other descriptors; not enum members, not plain data."""
    found: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        if not _own(base):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or isinstance(value, enum.Enum):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if (
                inspect.isfunction(value)
                or inspect.isdatadescriptor(value)
                or isinstance(value, functools.cached_property)
            ):
                found[name] = value
            else:
                found.pop(name, None)  # a subclass made it plain data
    return sorted(found)


@functools.cache
def _defining_modules(module: str = PACKAGE) -> dict[str, str]:
    """name -> the module ``pyblosc2/__init__.py`` imports it from (itself for its own); a
    name it takes by ``from .m import *``, or resolves on first use from ``m`` (its ``_LAZY``
    table), is looked up in ``m`` the same way."""
    mod = importlib.import_module(module)
    source = Path(mod.__file__ or "")
    package = module if source.name == "__init__.py" else module.rpartition(".")[0]
    where: dict[str, str] = {}
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                sub = f"{package}.{node.module}" if node.module else f"{package}.{alias.name}"
                if alias.name == "*":
                    inner = _defining_modules(sub)
                    names = importlib.import_module(sub).__all__
                    where.update({n: inner.get(n, sub) for n in names})
                else:
                    where[alias.asname or alias.name] = sub
    for name, (sub, attr) in getattr(mod, "_LAZY", {}).items():
        if attr is not None:
            inner = f"{package}{sub}"
            where[name] = _defining_modules(inner).get(name, inner)
    return where


def data_doc(name: str) -> str:
    """The ``#:`` comment (or string after the assignment) documenting ``name``, or ""."""
    module = _defining_modules().get(name, PACKAGE)
    docs = ModuleAnalyzer.for_module(module).find_attr_docs()
    return "\n".join(docs.get(("", name), [])).strip()


def docstring(name: str) -> str:
    """The documentation of the public name ``name``."""
    obj = getattr(_package(), name)
    if kind_of(obj) == "data":
        return data_doc(name)
    return inspect.getdoc(obj) or ""


def member_doc(cls: type, name: str) -> str:
    """The docstring of ``cls.name``; for a slot or other plain field, the ``#:`` comment
    above its annotation in the class body of the pyblosc2 class defining it."""
    for base in cls.__mro__:
        if name in vars(base):
            break
    value = vars(base)[name]
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if inspect.isfunction(value) or isinstance(value, (property, functools.cached_property)):
        return (value.__doc__ or "").strip()
    docs = ModuleAnalyzer.for_module(base.__module__).find_attr_docs()
    return "\n".join(docs.get((base.__qualname__, name), [])).strip()


def undocumented() -> list[str]:
    """Public names and members without documentation, as ``name`` or ``Class.member``."""
    pkg = _package()
    missing = [n for n in public_names() if not docstring(n)]
    for name in public_names():
        obj = getattr(pkg, name)
        if kind_of(obj) in ("classes", "exceptions"):
            missing += [f"{name}.{m}" for m in members(obj) if not member_doc(obj, m)]
    return missing


def expected_targets() -> set[str]:
    """Every object the built reference must hold: ``pyblosc2.NAME`` and
    ``pyblosc2.Class.member``."""
    pkg = _package()
    out = set()
    for name in public_names():
        out.add(f"{PACKAGE}.{name}")
        obj = getattr(pkg, name)
        if kind_of(obj) in ("classes", "exceptions"):
            out |= {f"{PACKAGE}.{name}.{m}" for m in members(obj)}
    return out


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 and "\n" not in text else f"<{type(value).__name__}>"


def rst(kind: str) -> list[str]:
    """The reST of one kind's page."""
    pkg = _package()
    lines: list[str] = []
    for name in public_names(kind):
        obj = getattr(pkg, name)
        full = f"{PACKAGE}.{name}"
        if kind == "functions":
            lines += [f".. autofunction:: {full}", ""]
        elif kind in ("classes", "exceptions"):
            directive = "autoexception" if kind == "exceptions" else "autoclass"
            lines += [f".. {directive}:: {full}", "   :show-inheritance:"]
            own = members(obj)
            if own:
                lines.append(f"   :members: {', '.join(own)}")
            lines.append("")
        elif kind == "enums":
            lines += [f".. autoclass:: {full}", "   :members:", "   :undoc-members:", ""]
        elif kind == "modules":
            lines += [f".. automodule:: {obj.__name__}", "   :members:"]
            names = getattr(obj, "__all__", ())
            top = [m for m in names if getattr(pkg, m, None) is getattr(obj, m)]
            if top:  # documented under their top-level names already
                lines.append(f"   :exclude-members: {', '.join(top)}")
            lines.append("")
        else:
            lines += [f".. py:data:: {name}", f"   :module: {PACKAGE}"]
            lines += [f"   :value: {_short_repr(obj)}", ""]
            lines += ["   " + ln for ln in data_doc(name).splitlines()] + [""]
    return lines


class ApiDirective(SphinxDirective):
    """``.. pyblosc2-api:: KIND``"""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        kind = self.arguments[0]
        if kind not in KINDS:
            raise self.error(f"pyblosc2-api: kind must be one of {KINDS}, got {kind!r}")
        self.env.note_dependency(_package().__file__)
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(StringList(rst(kind), "<pyblosc2-api>"), 0, container)
        return list(container.children)


#: builtins that ``pyblosc2`` shadows with python-blosc2's schema specs (``blosc2.bool``...)
SHADOWED = frozenset(("bool", "bytes", "list"))


def builtin_types(app: Sphinx, doctree: nodes.document) -> None:
    """``bool``/``bytes``/``list`` in a signature or a docstring's ``:class:`` role mean the
    builtins, not the schema specs of the same name: drop the module context that would
    resolve them to ``pyblosc2.bool`` (and to ``pyblosc2.schema.bool``)."""
    for node in doctree.findall(addnodes.pending_xref):
        if node.get("refdomain") == "py" and node.get("reftarget") in SHADOWED:
            node["py:module"] = None
            node["py:class"] = None
            if "refspecific" in node.attributes:  # its mere presence asks for a fuzzy search
                del node["refspecific"]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("pyblosc2-api", ApiDirective)
    app.connect("doctree-read", builtin_types)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
