#!/usr/bin/env bash
# The README's measured table from one run on one GPU: the vendor peers first (../shared/peers:
# NPP, CUB, the CUDA C kernels, PyTorch and CuPy on W0–W12; benches/peers: the CUDA C and NPP
# rows of W10–W12), then the headline bench, which writes the table from its own rows and the
# peers' CSV (benches/headline.rs), and the charts.
#
#   bash scripts/headline.sh BENCH PEERS_DIR OUT_DIR
#
# BENCH: the `ladder` bench binary (`.gpu/bin/bench-ladder` in a packed bundle); PEERS_DIR: the
# peers harness (`.gpu/peers`). Writes OUT_DIR/peers.txt (all the peers printed), peers.csv,
# bench.txt (the bench's whole output), headline.md (the table) and img/*.png (the charts).
# From a saved run, `ladder --from OUT_DIR/bench.txt` with GPUPRIMS_PEERS_CSV=OUT_DIR/peers.csv
# rebuilds the table and charts on any machine; `scripts/headline-readme.sh OUT_DIR COMMIT` then puts
# the table into README.md, the charts into docs/img and the run into docs/measurements.
set -u
bench=${1:?BENCH}
peers=$(cd "${2:?PEERS_DIR}" && pwd)
out=${3:?OUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
bash "$peers/build_and_run.sh" W0 W1 W2 W3 W4 W5 W6 W7 W8 W9 W10 W11 W12 > "$out/peers.txt" 2>&1
bash "$here/scripts/peers-extra.sh" "$peers" W10 W11 W12 >> "$out/peers.txt" 2>&1
grep -E '^W[0-9]+_' "$out/peers.txt" > "$out/peers.csv"
grep '^!!!' "$out/peers.txt" | head -5
GPUPRIMS_PEERS_CSV="$out/peers.csv" GPUPRIMS_BENCH_DIR="$out" GPUPRIMS_CHART_DIR="$out/img" \
  "$bench" --bench headline > "$out/bench.txt" 2>&1
rc=$?
grep -E '^Device:' "$out/bench.txt"
cat "$out/headline.md" 2>/dev/null || tail -n 20 "$out/bench.txt"
exit $rc
