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
# rc_cuda_ensemble.cu inlines a whole GVI member run into one kernel:
# a few minutes of ptxas per architecture.
files="src/kernels/rc_cuda.cu src/kernels/rc_cuda_ensemble.cu"
files="$files src/kernels/rc_cuda_md.cu src/kernels/rc_cuda_nnls_batch.cu"
files="$files src/kernels/rc_cuda_vi.cu"
{
  echo "# ptxas -v for $files ($("$NVCC" --version | tail -1))"
  echo "# regenerate: make cuda-resources"
  for arch in 80 90; do
    echo
    echo "## sm_$arch"
    for f in $files; do
      "$NVCC" -std=c++17 -O3 -arch=sm_$arch -Xptxas -v -I include -I src \
        -I src/kernels -c "$f" -o "$tmp/$(basename "$f" .cu)_$arch.o" 2>&1 |
        grep -E "Compiling entry|Function properties|spill|registers" |
        sed -e 's/^ptxas info *: //'
    done
  done
} > "$out.partial"
mv "$out.partial" "$out"
if grep -E "[1-9][0-9]* bytes spill" "$out" >/dev/null; then
  echo "cuda-resources: a kernel spills registers (see $out)" >&2
  exit 1
fi
echo "wrote $out"
