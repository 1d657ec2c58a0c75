"""Repository-wide pytest configuration (applies to ``tests/`` and to the doctests in ``src/``).

zarr is an optional extra: without it the doctests of ``pyblosc2.compat.zarr_codec`` (which
imports zarr) are not collected instead of stopping the run with a collection error. In CI
(``CI=true``) nothing is ignored, so a missing zarr is a failure there.
"""

from __future__ import annotations

import os

collect_ignore: list[str] = []

if os.environ.get("CI", "").lower() != "true":
    try:
        import zarr  # noqa: F401
    except ImportError:
        collect_ignore.append("src/pyblosc2/compat/zarr_codec.py")
