#!/usr/bin/env bash
# Prove the dependency floors: install the LOWEST release of every runtime dependency that
# pyproject.toml's floors allow (uv's --resolution lowest-direct), then the test tools at their
# newest, and run the suite's core (unit and corrupt-input tests, the CLI) on that.
#
#   bash tools/floors.sh [pytest args...]      (default: -q -n 2)
#
# The reference libraries (python-blosc2, python-blosc, numcodecs, zarr, imagecodecs) are not
# installed here (python-blosc2 alone needs a newer numpy), so their tests skip: CI is unset
# for this run. The venv lives in .venv-floors (removed and made anew each run).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${FLOORS_VENV:-.venv-floors}
PY=${PYTHON:-python3}
rm -rf "$VENV"
"$PY" -m venv "$VENV"
# uv (a pip-compatible installer that can resolve to the lowest releases) runs from the venv
"$VENV/bin/python" -m pip install -q --disable-pip-version-check uv
UV=("$VENV/bin/python" -m uv)
export VIRTUAL_ENV="$PWD/$VENV"
# 1. the package and its runtime dependencies, each at the lowest release its floor allows
"${UV[@]}" pip install -q --resolution lowest-direct -e .
# 2. the test tools, newest (they do not constrain the runtime dependencies above)
"${UV[@]}" pip install -q -r requirements-floors.txt
echo "floors: runtime dependencies installed:"
"${UV[@]}" pip freeze | grep -i -E '^(numpy|lz4|zstandard|cramjam|msgpack|xxhash|numexpr)==' \
  | sed 's/^/  /'
ARGS=("$@")
[ ${#ARGS[@]} -eq 0 ] && ARGS=(-q -n 2)
# the suite's core: every module's unit tests, malformed input, the CLI and the doctests
env -u CI "$VENV/bin/python" -m pytest -p no:cacheprovider "${ARGS[@]}" \
  tests/unit tests/corrupt tests/cli src/pyblosc2 -m "not slow"
