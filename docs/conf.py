"""Sphinx configuration of pyblosc2's documentation (``docs/``).

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (the ``docs`` extra installs the
tools; ``tests/unit/test_docs_site.py`` builds it the same way, warnings as errors).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
if (HERE.parent / "src" / "pyblosc2").is_dir():  # a source tree: document its pyblosc2
    sys.path.insert(0, str(HERE.parent / "src"))

import pyblosc2  # noqa: E402

project = "pyblosc2"
author = "The pyblosc2 developers"
copyright = "2026, The pyblosc2 developers"
release = pyblosc2.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "pyblosc2_api",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# performance/figures.md is included by performance.md, not a page of its own
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "performance/figures.md"]
root_doc = "index"

# MyST: headings get anchors for links like [x](page.md#a-heading); a missing one is a warning
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# autodoc + numpydoc: docstrings are reST with numpy-style sections where they have them
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False  # members are listed by autodoc (:members:)
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

# broken references fail the build (with -W): every cross-reference must resolve
nitpicky = False

html_theme = "pydata_sphinx_theme"
html_title = f"pyblosc2 {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
