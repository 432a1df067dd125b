#!/usr/bin/env bash
# Puts a saved headline run (the OUT_DIR of scripts/headline.sh, brought back from the GPU machine)
# into the docs: the table into README.md between the headline markers, with one line naming the
# device, driver, date, commit and copy bandwidth; the charts into docs/img; the run into
# docs/measurements.
#
#   bash scripts/headline-readme.sh OUT_DIR COMMIT [DATE]
set -euo pipefail
out=${1:?OUT_DIR}
commit=${2:?COMMIT}
date=${3:-$(date -u +%F)}
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=$(cut -d, -f1 "$out/gpu.txt" | head -1)
driver=$(cut -d, -f2 "$out/gpu.txt" | head -1 | tr -d ' ')
copy=$(sed -n 's/.*1 GiB d2d): \([0-9]*\) GB\/s.*/\1/p' "$out/bench.txt" | head -1)
short=$(echo "$gpu" | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
m="$root/docs/measurements"
cp "$out/bench.txt" "$m/$date-$short-headline-bench-$commit.txt"
cp "$out/peers.txt" "$m/$date-$short-headline-peers-$commit.txt"
cp "$out/headline.md" "$m/$date-$short-headline-table-$commit.md"
cp "$out"/img/*.png "$root/docs/img/"
python3 - "$root/README.md" "$out/headline.md" "$gpu" "$driver" "$date" "$commit" "$copy" \
  "docs/measurements/$date-$short-headline-table-$commit.md" <<'PY'
import sys
readme, table, gpu, driver, date, commit, copy, saved = sys.argv[1:]
text = open(readme).read()
begin = text.index("<!-- headline:begin")
begin = text.index("\n", begin) + 1
end = text.index("<!-- headline:end -->")
head = (f"{gpu}, driver {driver}, {date}, commit {commit}: `scripts/headline.sh` — the\n"
        "vendor peers, then `cargo bench --bench ladder -- headline`, in one run. Median GPU time of `Auto`\n"
        "(CUDA events, rotating random inputs, outputs poisoned before each run, every result checked\n"
        f"against the CPU reference); % of the device-to-device copy bandwidth of the same run ({copy} GB/s,\n"
        "read + write); bytes = each input read once + each output written once. Saved in\n"
        f"[docs/measurements/]({saved}).\n\n")
open(readme, "w").write(text[:begin] + head + open(table).read() + text[end:])
PY
echo "README.md, docs/img and docs/measurements updated from $out"
