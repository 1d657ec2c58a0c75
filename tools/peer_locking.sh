#!/usr/bin/env bash
# Run python-blosc2's own locking and SWMR tests (tests/test_locking.py, tests/test_swmr.py)
# against this checkout's pyblosc2, aliased as `blosc2` in the test process and in the child
# processes the tests start (a shim module on PYTHONPATH). The tests are read at run time
# from a git checkout or bare mirror of Blosc/python-blosc2 that you obtained; nothing of it
# is copied into this repository.
#
#   tools/peer_locking.sh PYTHON_BLOSC2_GIT_DIR [pytest args...]
#   PEER_REF=1 tools/peer_locking.sh ...   the same tests on python-blosc2 itself (calibration)
#   PYTHON=...                             the interpreter (python-blosc2 installed for PEER_REF)
#
# Every test must pass. Without a checkout it says so and exits 0 (nothing to measure).
set -u
MIRROR=${1:-}
if [ -z "$MIRROR" ] || [ ! -d "$MIRROR" ]; then
  echo "peer_locking: no python-blosc2 checkout given; skipped"; exit 0
fi
shift
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/tests" "$W/shim"
for f in tests/test_locking.py tests/test_swmr.py; do
  git -C "$MIRROR" show "HEAD:$f" > "$W/$f" || exit 2
done
: > "$W/tests/conftest.py"
if [ -z "${PEER_REF:-}" ]; then
  printf 'import sys, pyblosc2\nsys.modules[__name__] = pyblosc2\n' > "$W/shim/blosc2.py"
  cat > "$W/conftest.py" <<'PY'
import sys

import pyblosc2

sys.modules["blosc2"] = pyblosc2
if not hasattr(pyblosc2, "IS_WASM"):
    pyblosc2.IS_WASM = False
PY
  export PYTHONPATH="$W/shim:$HERE/src${PYTHONPATH:+:$PYTHONPATH}"
else
  : > "$W/conftest.py"
fi
# Every test runs (DictStore and EmbedStore included, since the stores landed); NOT_RUN="expr"
# deselects tests by pytest -k expression, listing them first.
if [ -n "${NOT_RUN:-}" ]; then
  echo "peer_locking: not run ($NOT_RUN):"
  (cd "$W/tests" && "$PY" -m pytest -q -p no:cacheprovider --rootdir "$W" -o addopts="" \
    --collect-only -k "$NOT_RUN" 2>/dev/null | grep "::" | sed 's/^/  /')
  set -- -k "not ($NOT_RUN)" "$@"
fi
cd "$W/tests" && "$PY" -m pytest -q -p no:cacheprovider --rootdir "$W" -o addopts="" -rf "$@"
