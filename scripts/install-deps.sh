#!/usr/bin/env bash
# Install the Debian packages ricochet needs to build and test.
# Run as root (CI, `make demo`, `make check` call it); as another user it
# only reports what is missing.
#
# Optional packages (gnuplot-nox, for `ricochet plot`) are installed the
# same way when possible, but their absence never fails the script: the
# build and the tests work without them (test_plot is then skipped).
set -euo pipefail
# python3-venv and python3-dev: the Python package and its test (tests/test_python.sh)
# libopenmpi-dev and openmpi-bin: ensembles across MPI processes
# (mpirun -np K ricochet run) and their test (tests/test_ensemble_mpi.c)
pkgs=(build-essential cmake pkg-config libyaml-dev libcjson-dev libhdf5-dev liblapack-dev zlib1g-dev libmatheval-dev libdouble-conversion-dev python3-venv python3-dev libopenmpi-dev openmpi-bin)
optional=(gnuplot-nox help2man)
# `make fuzz` (scripts/fuzz.sh): clang, its libFuzzer/sanitizer runtimes
# and its OpenMP runtime; like the optional packages, never a failure.
fuzz=(clang-14 libclang-rt-14-dev libomp-14-dev)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${pkgs[@]}"; do
  installed "$p" || missing+=("$p")
done
missing_opt=()
for p in "${optional[@]}"; do
  installed "$p" || missing_opt+=("$p")
done
missing_fuzz=()
for p in "${fuzz[@]}"; do
  installed "$p" || missing_fuzz+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_opt[@]} -eq 0 ] &&
  [ ${#missing_fuzz[@]} -eq 0 ] && exit 0

note_optional() {
  echo "ricochet: note: optional package ${missing_opt[*]} is not installed;" \
       "'ricochet plot' needs it (sudo apt-get install ${missing_opt[*]})" >&2
}
note_fuzz() {
  echo "ricochet: note: ${missing_fuzz[*]} not installed; 'make fuzz' needs" \
       "them (sudo apt-get install ${missing_fuzz[*]})" >&2
}

if [ "$(id -u)" -ne 0 ]; then
  [ ${#missing_opt[@]} -gt 0 ] && note_optional
  [ ${#missing_fuzz[@]} -gt 0 ] && note_fuzz
  if [ ${#missing[@]} -gt 0 ]; then
    echo "ricochet: missing Debian packages: ${missing[*]}" >&2
    echo "ricochet: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
if [ ${#missing[@]} -gt 0 ]; then
  echo "ricochet: installing ${missing[*]}" >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_opt[@]} -gt 0 ]; then
  echo "ricochet: installing optional ${missing_opt[*]}" >&2
  if ! apt-get install -y -qq --no-install-recommends "${missing_opt[@]}" >/dev/null; then
    note_optional
  fi
fi
if [ ${#missing_fuzz[@]} -gt 0 ]; then
  echo "ricochet: installing ${missing_fuzz[*]} (for make fuzz)" >&2
  if ! apt-get install -y -qq --no-install-recommends "${missing_fuzz[@]}" >/dev/null; then
    note_fuzz
  fi
fi
exit 0
