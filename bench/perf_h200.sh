#!/bin/sh
# GPU proof of the perf recipes (docs/results/perf-enc5.md); writes everything under $OUT (or ./out).
# Run from the repository root on a GPU machine with cupy, ptxas and (optionally) ncu.
OUT=${OUT:-out}; mkdir -p "$OUT"
export SPLICE_PROBE_CACHE=${SPLICE_PROBE_CACHE:-/tmp/splice-probe}
P="python3 -m splice.cli probe"
nvidia-smi -L > "$OUT/gpu.txt" 2>&1; command -v ncu >> "$OUT/gpu.txt"
timeout 150 $P recipes/perf/enc5_fence.yaml --runs 60 --profile --json --report-dir "$OUT/enc5_fence" \
  > "$OUT/enc5_fence.json" 2> "$OUT/enc5_fence.err"
timeout 60 $P recipes/perf/enc5_fence_start.yaml --runs 60 --json --report-dir "$OUT/enc5_fence_start" \
  > "$OUT/enc5_fence_start.json" 2> "$OUT/enc5_fence_start.err"
timeout 50 $P recipes/perf/dec1_fence.yaml --runs 60 --json --report-dir "$OUT/dec1_fence" \
  > "$OUT/dec1_fence.json" 2> "$OUT/dec1_fence.err"
timeout 100 $P recipes/perf/enc5_fence.yaml --runs 5 --ncu --json --report-dir "$OUT/enc5_ncu" \
  > "$OUT/enc5_ncu.json" 2> "$OUT/enc5_ncu.err"
python3 bench/perf_summary.py "$OUT"/enc5_fence.json "$OUT"/enc5_fence_start.json "$OUT"/dec1_fence.json \
  "$OUT"/enc5_ncu.json | tee "$OUT/summary.txt"
