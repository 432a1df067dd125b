#!/usr/bin/env bash
# peers-extra.sh PEERS_DIR [W0 W10 W11 W12] — builds benches/peers/peers_w10_w12.cu on the device
# against PEERS_DIR/peers.cu's harness (../shared/peers) and runs it: the CUDA C and NPP rows of
# W10–W12, in peers.cu's CSV.
set -eu
peers=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")/.." && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
out=$(mktemp -d)
nvcc -O3 -std=c++17 -arch=sm_90 -I"$peers" "$here/benches/peers/peers_w10_w12.cu" -o "$out/peers_w10_w12" \
  -lnppif -lnppim -lnppial -lnppist -lnpps -lnppc 2>&1 | grep -v "declared but never referenced\|^$\|^Remark\|^\s*$" || true
"$out/peers_w10_w12" "$@"
