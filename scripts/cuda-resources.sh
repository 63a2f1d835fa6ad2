#!/usr/bin/env bash
# ptxas resource usage (registers, stack, spills) of every CUDA kernel,
# for the architectures the build targets, into
# bench/results/cuda_resources.txt.  Needs nvcc; no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || { echo "cuda-resources: nvcc not found" >&2; exit 1; }
out=bench/results/cuda_resources.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "# ptxas -v for src/kernels/rc_cuda.cu ($("$NVCC" --version | tail -1))"
  echo "# regenerate: make cuda-resources"
  for arch in 80 90; do
    echo
    echo "## sm_$arch"
    "$NVCC" -std=c++17 -O3 -arch=sm_$arch -Xptxas -v -I include -I src/kernels \
      -c src/kernels/rc_cuda.cu -o "$tmp/rc_cuda_$arch.o" 2>&1 |
      grep -E "Compiling entry|Function properties|spill|registers" |
      sed -e 's/^ptxas info *: //'
  done
} > "$out.partial"
mv "$out.partial" "$out"
if grep -E "[1-9][0-9]* bytes spill" "$out" >/dev/null; then
  echo "cuda-resources: a kernel spills registers (see $out)" >&2
  exit 1
fi
echo "wrote $out"
