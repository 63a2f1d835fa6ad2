#!/usr/bin/env bash
# Builds DynamO (https://github.com/toastedcrumpets/DynamO), the
# event-driven hard-sphere MD code, as a peer for the large-system
# benchmark (bench/peers/dynamo_hs.sh runs it).
#
#   build_dynamo.sh SRC_DIR BUILD_DIR
#
#   SRC_DIR    a DynamO source tree (git clone, or `git archive` of one);
#              the extern/stator submodule is not needed (only the
#              visualiser uses it, and the visualiser is not built)
#   BUILD_DIR  CMake build directory (created; re-running is incremental)
#
# What it does:
#   1. On Debian/Ubuntu, installs the -dev packages DynamO needs when they
#      are missing and we are root (apt-get): cmake g++ make libbz2-dev
#      libeigen3-dev libboost-{program-options,filesystem,system,test}-dev
#      (Boost.Test because the CMakeLists asks for unit_test_framework even
#      when no test is built).  Not root and missing: exit 77.
#   2. Configures a Release build with the visualiser off and the optional
#      packages it would pick up (OpenGL, GLUT, GLEW, PNG, libavcodec)
#      hidden from CMake, so the binaries do not depend on what else is
#      installed.  libJudy is used by DynamO if present; it is not installed.
#   3. Builds only dynarun, dynamod and dynahist_rw (not the unit tests),
#      under `nice -n 19` with one job (the benchmark machines are small and
#      shared).  About 7 min of one core on a 2-core Debian 12 box.
#
# Patches: none are needed for Debian 12 (g++ 12.2, Boost 1.74, CMake 3.25;
# DynamO master 78d4ee1, July 2024); the build gives a handful of
# -Warray-bounds / -Wmaybe-uninitialized warnings only.  Outside a git
# checkout CMake prints "Git description is HEAD-HASH-NOTFOUND" and an
# empty build number; that only affects the CPack package name.
#
# Prints the absolute paths of dynarun, dynamod and dynahist_rw on stdout,
# one a line (their directory is dynamo_hs.sh's DYNAMO_BIN_DIR); everything
# else goes to stderr.
#
# Exit status: 0 built, 2 bad arguments, 77 cannot be built (missing source,
# packages that cannot be installed, configure or compile failure): the
# tests' skip code, so a benchmark can skip the DynamO peer.
set -u

if [ $# -ne 2 ]; then
    echo "usage: $0 SRC_DIR BUILD_DIR" >&2
    exit 2
fi
SRC=$1 BUILD=$2

skip() {
    echo "build_dynamo.sh: $*; DynamO peer skipped" >&2
    exit 77
}

[ -f "$SRC/CMakeLists.txt" ] && [ -d "$SRC/src/dynamo/programs" ] ||
    skip "'$SRC' is not a DynamO source tree (no CMakeLists.txt / src/dynamo/programs)"
SRC=$(cd "$SRC" && pwd) || skip "cannot enter '$SRC'"

# 1. packages
PKGS="cmake g++ make libbz2-dev libeigen3-dev libboost-program-options-dev
      libboost-filesystem-dev libboost-system-dev libboost-test-dev"
if command -v dpkg-query >/dev/null 2>&1; then
    MISSING=
    for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
            MISSING="$MISSING $p"
    done
    if [ -n "$MISSING" ]; then
        if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
            skip "missing packages:$MISSING (as root: apt-get install$MISSING)"
        fi
        echo "build_dynamo.sh: apt-get install$MISSING" >&2
        export DEBIAN_FRONTEND=noninteractive
        # shellcheck disable=SC2086
        if ! apt-get install -y --no-install-recommends $MISSING >&2; then
            apt-get update >&2 &&
                apt-get install -y --no-install-recommends $MISSING >&2 ||
                skip "apt-get install$MISSING failed"
        fi
    fi
else
    echo "build_dynamo.sh: not a Debian system; assuming the build" \
         "dependencies (CMake, a C++14 compiler, Boost, Eigen 3, bzip2) are" \
         "installed" >&2
fi
command -v cmake >/dev/null 2>&1 || skip "cmake not found"

# 2. configure
mkdir -p "$BUILD" && BUILD=$(cd "$BUILD" && pwd) || skip "cannot create '$BUILD'"
if ! cmake -S "$SRC" -B "$BUILD" \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_TESTING=OFF \
        -DVISUALIZER_SUPPORT=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_OpenGL=ON \
        -DCMAKE_DISABLE_FIND_PACKAGE_GLUT=ON \
        -DCMAKE_DISABLE_FIND_PACKAGE_GLEW=ON \
        -DCMAKE_DISABLE_FIND_PACKAGE_PNG=ON \
        -DCMAKE_DISABLE_FIND_PACKAGE_AVCodec=ON \
        >"$BUILD/build_dynamo.configure.log" 2>&1; then
    tail -n 30 "$BUILD/build_dynamo.configure.log" >&2
    skip "CMake configure failed (log: $BUILD/build_dynamo.configure.log)"
fi

# 3. build: one job, lowest priority
T0=$(date +%s)
if ! nice -n 19 cmake --build "$BUILD" --target dynarun dynamod dynahist_rw \
        --parallel 1 >"$BUILD/build_dynamo.build.log" 2>&1; then
    grep -E "error|Error" "$BUILD/build_dynamo.build.log" | head -n 30 >&2
    skip "compile failed (log: $BUILD/build_dynamo.build.log)"
fi
echo "build_dynamo.sh: built in $(( $(date +%s) - T0 )) s" >&2

for b in dynarun dynamod dynahist_rw; do
    [ -x "$BUILD/$b" ] || skip "$BUILD/$b was not produced"
done
for b in dynarun dynamod dynahist_rw; do
    echo "$BUILD/$b"
done
