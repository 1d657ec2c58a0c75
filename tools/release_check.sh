#!/usr/bin/env bash
# Before publishing: build the sdist and, from it, the wheel (python -m build), check them
# with twine, install the wheel with every extra and the test requirements in a fresh venv,
# and run the whole suite from the unpacked sdist on the installed wheel (its src/ stays for
# mypy and ruff; the tests import and run the wheel's pyblosc2, which the script checks).
#   bash tools/release_check.sh [pytest args...]     (default: -q -n 2)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/build-env"
"$WORK/build-env/bin/pip" install -q build twine
env -u PYTHONDONTWRITEBYTECODE "$WORK/build-env/bin/python" -m build --outdir "$WORK/dist" . \
  2>&1 | tee "$WORK/build.log" | grep -E "^Successfully built"
if grep -i "warning" "$WORK/build.log"; then echo "release_check: the build warned"; exit 1; fi
"$WORK/build-env/bin/twine" check --strict "$WORK"/dist/*
SDIST=$(ls "$WORK"/dist/*.tar.gz)
WHEEL=$(ls "$WORK"/dist/*.whl)
tar xzf "$SDIST" -C "$WORK"
TREE="$WORK/$(basename "$SDIST" .tar.gz)"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$WHEEL[all]" -r "$TREE/requirements-test.txt"
ARGS=("$@")
[ ${#ARGS[@]} -eq 0 ] && ARGS=(-q -n 2)
cd "$TREE"
"$WORK/venv/bin/python" -c "
import pyblosc2, sys
assert pyblosc2.__file__.startswith(sys.prefix), pyblosc2.__file__
print('release_check: testing', pyblosc2.__file__)"
"$WORK/venv/bin/python" -m pytest -p no:cacheprovider "${ARGS[@]}" tests
