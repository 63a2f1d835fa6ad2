#!/usr/bin/env bash
# cmake --install into a temporary prefix, then build the README's library
# example (examples/library/sextic.c) against the installed ricochet three
# ways: pkg-config (shared), find_package with ricochet::ricochet (shared)
# and with ricochet::ricochet_static; each program must run and report a
# bounded energy error.  Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail=0

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
for f in include/ricochet/ricochet.h lib/libricochet.a lib/libricochet.so \
         lib/pkgconfig/ricochet.pc lib/cmake/ricochet/ricochetConfig.cmake \
         bin/ricochet; do
  if [ ! -e "$prefix/$f" ]; then
    echo "test_install: $f was not installed" >&2
    fail=1
  fi
done

# the man page, where the build made one (help2man installed)
if [ -f "$build/ricochet.1" ] && [ ! -f "$prefix/share/man/man1/ricochet.1" ]; then
  echo "test_install: the man page was built but not installed" >&2
  fail=1
fi

# the example prints "... |H - H0|/|H0| = X"; GVI on this example keeps
# the relative energy error of the sextic well near 1e-2 (README's
# measured table: 2.4e-2 for two particles), far below 1
check_output() {
  local what=$1 out=$2
  if ! grep -q "ricochet 0\.\|ricochet [0-9]" <<<"$out"; then
    echo "test_install: $what: unexpected output: $out" >&2
    fail=1
    return
  fi
  local err
  err=$(sed -n 's/.*|H - H0|\/|H0| = \([0-9.e+-]*\).*/\1/p' <<<"$out")
  if ! awk -v e="$err" 'BEGIN { exit !(e != "" && e + 0 < 0.1) }'; then
    echo "test_install: $what: energy error '$err' not below 0.1" >&2
    fail=1
  fi
  echo "test_install: $what: $out"
}

# 1. pkg-config, shared library
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
if cc -o "$tmp/sextic_pc" "$src/examples/library/sextic.c" \
     $(pkg-config --cflags --libs ricochet) -lm 2>"$tmp/pc.log"; then
  check_output "pkg-config" "$(LD_LIBRARY_PATH=$prefix/lib "$tmp/sextic_pc")"
else
  echo "test_install: build with pkg-config failed:" >&2
  cat "$tmp/pc.log" >&2
  fail=1
fi

# 2. and 3. find_package(ricochet)
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(consumer C)
find_package(ricochet 0.1 REQUIRED)
add_executable(sextic_shared $src/examples/library/sextic.c)
target_link_libraries(sextic_shared PRIVATE ricochet::ricochet m)
add_executable(sextic_static $src/examples/library/sextic.c)
target_link_libraries(sextic_static PRIVATE ricochet::ricochet_static m)
CMAKE
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" \
     -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" 2>&1 &&
   cmake --build "$tmp/consumer/build" >>"$tmp/cmake.log" 2>&1; then
  check_output "find_package shared" \
    "$(LD_LIBRARY_PATH=$prefix/lib "$tmp/consumer/build/sextic_shared")"
  check_output "find_package static" "$("$tmp/consumer/build/sextic_static")"
  if ldd "$tmp/consumer/build/sextic_static" | grep -q libricochet; then
    echo "test_install: the static build links libricochet.so" >&2
    fail=1
  fi
else
  echo "test_install: find_package build failed:" >&2
  tail -30 "$tmp/cmake.log" >&2
  fail=1
fi
exit $fail
