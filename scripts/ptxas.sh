#!/usr/bin/env bash
# Prints the path of the pinned ptxas (from the PyPI wheel nvidia-cuda-nvcc==13.0.88), fetching it
# into a cache first if needed (GPUPRIMS_CI_CACHE, default ~/.cache/gpuprims-ci). `cargo xtask
# kernels` assembles the prebuilt cubins with it:
#   GPUPRIMS_PTXAS=$(scripts/ptxas.sh) cargo xtask kernels
set -euo pipefail
version=13.0.88
cache=${GPUPRIMS_CI_CACHE:-$HOME/.cache/gpuprims-ci}
ptxas="$cache/nvcc-$version/nvidia/cu13/bin/ptxas"
if [ ! -x "$ptxas" ]; then
  wheel=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$wheel" "nvidia-cuda-nvcc==$version" >&2
  mkdir -p "$(dirname "$ptxas")"
  python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("nvidia/cu13/bin/ptxas"))' \
    "$(ls "$wheel"/nvidia_cuda_nvcc-"$version"-*.whl)" "$ptxas"
  rm -rf "$wheel"
  chmod +x "$ptxas"
fi
echo "$ptxas"
