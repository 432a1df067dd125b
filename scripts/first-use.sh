#!/usr/bin/env bash
# First-use costs on a GPU machine, from release binaries built without SASS (the default build):
#   bash scripts/first-use.sh BIN_DIR [JOBS]
# BIN_DIR holds the examples `prewarm`, `first_use` and `tour` (and, optionally, `prewarm-edited`:
# prewarm built after an edit to one kernel). Prints:
#   1. the driver's JIT time per kernel (prewarm with the JIT cache disabled, JOBS processes);
#   2. every public op's first call in a fresh process, cold and warm (examples/first_use.rs);
#   3. `tour` end to end with an empty JIT cache;
#   4. with prewarm-edited: a cache filled by `prewarm`, then `prewarm-edited` on it, serially —
#      only the edited kernel should JIT.
set -u
bin=${1:?BIN_DIR}
jobs=${2:-8}
cache=$(mktemp -d)
echo "== JIT per kernel (CUDA_CACHE_DISABLE=1, $jobs processes)"
CUDA_CACHE_DISABLE=1 "$bin/prewarm" --jobs "$jobs" --quiet
echo "== first call of every op (fresh processes)"
"$bin/first_use"
echo "== tour, cold (empty CUDA_CACHE_PATH)"
start=$(date +%s%N)
CUDA_CACHE_PATH="$cache/tour" "$bin/tour" > "$cache/tour.log" 2>&1
rc=$?
echo "tour: rc=$rc, $(( ($(date +%s%N) - start) / 1000000 )) ms end to end"
grep -E "^Gpu::new|^device" "$cache/tour.log"
if [ -x "$bin/prewarm-edited" ]; then
  echo "== one kernel edited: fill the cache, then load the edited build serially from it"
  CUDA_CACHE_PATH="$cache/edit" "$bin/prewarm" --jobs "$jobs" --quiet | grep -E "kernels in"
  CUDA_CACHE_PATH="$cache/edit" "$bin/prewarm-edited" --jobs 1 --quiet
fi
rm -rf "$cache"
