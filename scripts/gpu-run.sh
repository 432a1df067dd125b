#!/usr/bin/env bash
# One device call's worth of GPU work, for the `device` tool of this workplace or any GPU machine:
#   RESULTS=<dir> bash scripts/gpu-run.sh [tests] [examples] [sanitize] [benches] [peers W0 W1 ..]
# Runs the packed bundle (.gpu/, from ../shared/gpu-bundle.sh) mode by mode, each into its own results
# folder, prints every summary, the example/bench tables and the peers CSV, and packs everything into
# $RESULTS/results.tgz (one file: remote runs return few files).
set -u
out=${RESULTS:-/tmp/gpuprims-results}
work=$(mktemp -d)
modes=()
peers=()
for a in "$@"; do
  case "$a" in
    W*) peers+=("$a") ;;
    *) modes+=("$a") ;;
  esac
done
rc=0
for m in "${modes[@]}"; do
  args=()
  [ "$m" = peers ] && args=("${peers[@]}")
  RESULTS_DIR="$work/$m" timeout 500 bash .gpu/run.sh "$m" "${args[@]}" > "$work/$m.out" 2>&1 || rc=1
  echo "== $m"
  grep -E '^(test|example|bench|peers) ' "$work/$m/summary.txt"
  (cd "$work/$m" && tar xzf logs.tgz 2>/dev/null)
done
for m in "${modes[@]}"; do
  case "$m" in
    tests) grep -hE "^test result|FAILED|^n=" "$work/tests/logs/"*.log | head -20 ;;
    sanitize) grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$work/sanitize/logs/"*.log | sort | uniq -c ;;
    examples) for ex in reduction conv1d window_stats tour; do
                grep -hE "^\||^device|^CPU|^###|Summary|^moving|^tutorial|^Gpu::new|^\(" "$work/examples/logs/example-$ex.log"
              done ;;
    benches) grep -hE "^\| " "$work/benches/logs/"*.log | grep -E "8-shuffle|register|shared-tile|constant|global" ;;
    peers) grep -E "^W[0-9]|^!!!" "$work/peers/peers.txt" ;;
  esac
done
mkdir -p "$out" && tar czf "$out/results.tgz" -C "$work" . && echo "packed $out/results.tgz"
exit $rc
