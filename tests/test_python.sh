#!/usr/bin/env bash
# The Python package (python/, issue 19) end to end: a virtual
# environment in the build directory, the package pip-installed from the
# source tree (scikit-build-core compiles libricochet, CPU only, into the
# cffi extension; its CMake build is kept in BUILD/python/skbuild so that
# a rerun recompiles only what changed), then the pytest suite
# python/tests.  Exit 77 (skipped), with the reason, only when no virtual
# environment can be made (Debian: python3-venv) or when PyPI, which
# gives cffi, scikit-build-core, numpy, pandas, pytest and the trajectory
# readers (ase, h5py, MDAnalysis; ovito optional), cannot be reached;
# every other failure fails.
# Usage: test_python.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
src=$(cd "$2" && pwd)
py=${RICOCHET_PYTHON:-python3}
venv=$build/python/venv
deps=(pip "scikit-build-core>=0.10" "cffi>=1.15" "numpy>=1.22" "pandas>=1.4" "pytest>=7"
      # the readers python/tests/test_trajectories.py opens trajectories with
      "ase>=3.22" "h5py>=3" "MDAnalysis>=2.0")
# best effort: a large wheel, not on every platform; test_trajectories.py
# skips its OVITO test without it
optional_deps=(ovito)

skip() {
  echo "test_python: skipped: $*"
  exit 77
}

if ! command -v "$py" >/dev/null; then
  skip "no $py on the PATH"
fi
if [ ! -x "$venv/bin/python" ]; then
  rm -rf "$venv"
  if ! "$py" -m venv "$venv" >"$build/python-venv.log" 2>&1; then
    cat "$build/python-venv.log"
    skip "$py -m venv failed (Debian: apt-get install python3-venv)"
  fi
fi
vpy=$venv/bin/python

# what the package needs from PyPI (nothing is fetched when they are
# already there, as on a rerun)
if ! "$vpy" -m pip install -q --disable-pip-version-check "${deps[@]}" \
       >"$build/python-deps.log" 2>&1; then
  index=${PIP_INDEX_URL:-https://pypi.org/simple}
  if ! "$vpy" - "$index" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/pip/", timeout=20)
PY
  then
    tail -5 "$build/python-deps.log"
    skip "PyPI ($index) cannot be reached to install ${deps[*]}"
  fi
  echo "test_python: pip install of the dependencies failed with PyPI reachable:" >&2
  cat "$build/python-deps.log" >&2
  exit 1
fi

if ! "$vpy" -m pip install -q --disable-pip-version-check \
       "${optional_deps[@]}" >"$build/python-optional-deps.log" 2>&1; then
  echo "test_python: note: optional ${optional_deps[*]} not installed" \
       "(see $build/python-optional-deps.log); its tests skip"
fi

# the package itself, from the source tree, with the build tools just
# installed (no isolated build environment: nothing more to download)
jobs=$(nproc 2>/dev/null || echo 2)
if ! CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$vpy" -m pip install -q \
       --disable-pip-version-check --no-build-isolation --no-deps \
       --force-reinstall -C build-dir="$build/python/skbuild" \
       "$src/python" >"$build/python-build.log" 2>&1; then
  echo "test_python: pip install $src/python failed:" >&2
  tail -60 "$build/python-build.log" >&2
  exit 1
fi

# from a directory of its own, so that only the installed package is
# importable
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
OMP_WAIT_POLICY=passive "$vpy" -m pytest -q -p no:cacheprovider \
  "$src/python/tests"
rc=$?
if [ $rc -ne 0 ]; then
  echo "test_python: pytest exited $rc" >&2
  exit 1
fi
exit 0
