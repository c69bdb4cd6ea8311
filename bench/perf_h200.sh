#!/bin/sh
# GPU proof of the perf recipes (docs/results/perf-enc5.md, issue 30); everything goes under $OUT
# (default ./out).  One command from the repository root on an H200 (cupy, ptxas, ncu):
#     sh bench/perf_h200.sh
# (with lark from the carried wheel directory: PYTHONPATH=/tmp/site:. sh bench/perf_h200.sh).
# Budget: under 5 minutes (the timeouts add up to 285 s; a step that runs out leaves its .err
# and the summary says so).  Only `splice probe` flags that exist today: --runs, --json,
# --report-dir, --ncu.
#
# 1. ptxas for every module at once (the probes then find the cubins in the compile cache)
# 2. per recipe, 60 interleaved runs against the original: byte-identical 4K frames and the ratio
#    (enc5_stream*, dec1_stream, and enc5_fence_start, the best recipe before, as a reference
#    measured in the same run)
# 3. Nsight Compute on enc5_stream and dec1_stream: registers, block limit from registers
#    (enc5: 3 blocks of 128 threads, 18.75 % theoretical occupancy), spills, stalls
# 4. bench/perf_summary.py: one table, printed last
OUT=${OUT:-out}; mkdir -p "$OUT"
export SPLICE_PROBE_CACHE=${SPLICE_PROBE_CACHE:-/tmp/splice-probe}
PY=${PYTHON:-python3}
P="$PY -m splice.cli probe"
R=recipes/perf
nvidia-smi -L > "$OUT/gpu.txt" 2>&1; command -v ncu >> "$OUT/gpu.txt"; ptxas --version >> "$OUT/gpu.txt" 2>&1

# 1. warm the compile cache: every spliced module and the two originals, in parallel
for r in enc5_stream enc5_stream_fenced enc5_stream_minblocks enc5_fence_start dec1_stream; do
  timeout 60 $PY -m splice.cli apply "$R/$r.yaml" -o "$OUT/$r.ptx" --json > "$OUT/apply_$r.json" 2> "$OUT/apply_$r.err" &
done
wait

# 2. frames and timing (interleaved original/spliced runs)
probe() {  # name recipe timeout [flags...]
  name=$1; recipe=$2; t=$3; shift 3
  timeout "$t" $P "$R/$recipe.yaml" --json --report-dir "$OUT/$name" "$@" > "$OUT/$name.json" 2> "$OUT/$name.err"
  echo "$name: exit $?" >> "$OUT/status.txt"
}
probe enc5_stream enc5_stream 35 --runs 60
probe enc5_stream_fenced enc5_stream_fenced 30 --runs 60
probe enc5_stream_minblocks enc5_stream_minblocks 30 --runs 60
probe enc5_fence_start enc5_fence_start 30 --runs 60
probe dec1_stream dec1_stream 25 --runs 60

# 3. occupancy and spills as Nsight Compute reads them
probe enc5_stream_ncu enc5_stream 45 --runs 5 --ncu
probe dec1_stream_ncu dec1_stream 30 --runs 5 --ncu

# 4. the table
$PY bench/perf_summary.py "$OUT"/apply_*.json "$OUT"/enc5_stream.json "$OUT"/enc5_stream_fenced.json \
  "$OUT"/enc5_stream_minblocks.json "$OUT"/enc5_fence_start.json "$OUT"/dec1_stream.json \
  "$OUT"/enc5_stream_ncu.json "$OUT"/dec1_stream_ncu.json > "$OUT/summary.txt" 2>&1
cat "$OUT/status.txt" "$OUT/summary.txt"
