#!/usr/bin/env bash
# peer-wheels.sh DIR [cucim|dask]... — downloads, for a CPython 3.12 x86-64 GPU machine that has
# numpy, scipy, cupy and torch but no pip or network, the wheels of what python/bench/peers.py,
# scripts/peers_nd.py and the Dask tests add: cuCIM (cucim-cu13 and the scikit-image it imports)
# and Dask (dask, distributed and their dependencies). Without names: both. On that machine a
# wheel installs by unzipping it onto PYTHONPATH:
#
#     for w in DIR/*.whl; do python3 -m zipfile -e "$w" site; done; PYTHONPATH=$PWD/site python3 ...
#
# Leaves out what cuCIM's filters and morphology never import (pillow, imageio, tifffile:
# scikit-image's I/O) so that the wheels fit beside a test bundle.
set -eu
dir=$1
shift
[ $# -eq 0 ] && set -- cucim dask
mkdir -p "$dir"
get() {
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$dir" "$@"
}
for what in "$@"; do
    case $what in
        cucim) get cucim-cu13 "scikit-image<0.27,>=0.23.2" lazy-loader networkx ;;
        dask) get dask distributed click cloudpickle fsspec importlib-metadata jinja2 lazy-importer locket markupsafe msgpack \
            packaging partd psutil pyyaml sortedcontainers tblib toolz tornado zict zipp ;;
        *) echo "peer-wheels.sh: unknown set $what (cucim, dask)" >&2; exit 2 ;;
    esac
done
ls -la "$dir"
