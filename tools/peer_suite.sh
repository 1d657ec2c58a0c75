#!/usr/bin/env bash
# Run python-blosc2's own core tests against this checkout's pyblosc2 (aliased as `blosc2`).
# The tests are read at run time from a git checkout or bare mirror of Blosc/python-blosc2
# that you obtained; nothing of it is copied into this repository.
#   tools/peer_suite.sh PYTHON_BLOSC2_GIT_DIR [pytest args...]
#   PEER_FILES="tests/test_vlmeta.py ..." to run a selection; PYTHON=... the interpreter.
# Without a checkout it says so and exits 0 (nothing to measure).
set -u
MIRROR=${1:-}
if [ -z "$MIRROR" ] || [ ! -d "$MIRROR" ]; then
  echo "peer_suite: no python-blosc2 checkout given; skipped"; exit 0
fi
shift
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/tests/ndarray"
FILES=${PEER_FILES:-"tests/test_compress2.py tests/test_compressors.py tests/test_decompress.py
tests/test_comp_info.py tests/test_compression_parameters.py tests/test_python_blosc.py
tests/test_schunk.py tests/test_schunk_constructor.py tests/test_schunk_delete.py
tests/test_schunk_insert.py tests/test_schunk_update.py tests/test_schunk_get_slice.py
tests/test_schunk_set_slice.py tests/test_schunk_get_slice_nchunks.py
tests/test_schunk_reorder_offsets.py tests/test_iterchunks.py tests/test_vlmeta.py
tests/test_open.py tests/test_storage.py tests/test_pathlib.py tests/test_mmap.py
tests/ndarray/test_ndarray.py tests/ndarray/test_getitem.py tests/ndarray/test_slice.py
tests/ndarray/test_setitem.py tests/ndarray/test_zeros.py tests/ndarray/test_full.py
tests/ndarray/test_empty.py tests/ndarray/test_metalayers.py tests/ndarray/test_persistency.py
tests/ndarray/test_resize.py tests/ndarray/test_copy.py tests/ndarray/test_struct_dtype.py"}
for f in $FILES; do
  git -C "$MIRROR" show "HEAD:$f" > "$W/$f" 2>/dev/null || rm -f "$W/$f"
done
cat > "$W/conftest.py" <<'PY'
import sys

import pyblosc2

sys.modules["blosc2"] = pyblosc2
PY
cat > "$W/tests/conftest.py" <<'PY'
def expected_nthreads(nthreads: int) -> int:
    return nthreads
PY
cd "$W/tests" && PYTHONPATH="$HERE/src${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m pytest -q \
  -p no:cacheprovider --rootdir "$W" -o addopts="" --continue-on-collection-errors "$@"
