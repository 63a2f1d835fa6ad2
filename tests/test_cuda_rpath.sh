#!/bin/sh
# The CUDA build's binaries find the toolkit's libraries without
# LD_LIBRARY_PATH: their dynamic section carries the toolkit's library
# directory as a run path (RUNPATH or RPATH).  cuBLAS and cuSOLVER are
# not linked (they are dlopened when the GPU tier is first set up, from
# that directory; tests/test_cuda_libs.c), so a binary must not list
# them as NEEDED.  Exit 77 (skipped) in a build without CUDA or without
# readelf.
# usage: test_cuda_rpath.sh BINARY CUDA_ON TOOLKIT_LIBRARY_DIR
bin=$1 cuda=$2 dir=$3
if [ "$cuda" != "ON" ]; then
  echo "test_cuda_rpath: skipped (this build has no CUDA backend)"
  exit 77
fi
if ! command -v readelf >/dev/null 2>&1; then
  echo "test_cuda_rpath: skipped (readelf not found; apt-get install binutils)"
  exit 77
fi
fail=0
paths=$(readelf -d "$bin" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
case ":$paths:" in
  *":$dir:"*) echo "run path of $bin: $paths (has $dir)" ;;
  *) echo "FAILED: run path of $bin is '$paths', without $dir"; fail=1 ;;
esac
for lib in libcublas libcusolver; do
  if readelf -d "$bin" | grep -q "NEEDED.*\[$lib\."; then
    echo "FAILED: $bin links $lib (it must be loaded on first use)"; fail=1
  else
    echo "$bin does not link $lib"
  fi
done
[ $fail -eq 0 ] && echo "test_cuda_rpath: 1 passed, 0 failed"
exit $fail
