#!/bin/sh
# splice tune on one GPU (docs/tune.md): the enc5 proof in one command, from the repository root
# of an H200 machine (cupy, ptxas 13.0, 16 cores; lark from the carried wheel directory):
#
#     PYTHONPATH=/tmp/site:. sh bench/tune_gpu.sh                  # about 3-5 minutes
#
# Two enc5 searches, each with the hand-made recipes/perf/enc5_fence_start.yaml (the fastest
# phase recipe so far, 0.861) and recipes/perf/enc5_stream.yaml (148 registers, no spill) timed
# as references in the same rounds as the variants:
#   recipes/tune/enc5.yaml         64 variants of the extracted phase natives: schedule fences per
#                                  group of phases, the 16x32x160 phases' mma order
#   recipes/tune/enc5_stream.yaml  32 variants of the streamed recipe: fenced natives, a fence
#                                  after the out-projection, maxnreg 128, minblocks 3
# Each run screens (apply, verify, ptxas) what is not screened yet, then times the survivors by
# successive halving with the probe's timing method (A/A control, intervals, verdicts), writes
# best.yaml, and `splice probe` times that best recipe again on its own (outputs compared).  The
# leaderboard of both runs is printed last (bench/tune_board.py, read from the stores).
#
# The CPU screens of docs/results/tune-cpu-screen-2026-12-02.md are taken when carried (then the
# GPU run only times): build/tune/enc5-screen/{tune.db,cubins} and
# build/tune/enc5_stream-screen/{tune.db,cubins} (the variants' recipes are written again).
# Without them each run screens on the machine's cores first (a minute or two more).
#
# $OUT (default build/tune-gpu-out) gets at most 8 files: status.txt, board.txt, gpu.txt,
# leaderboard-<space>.json for each space, and tune-gpu.tgz (the stores, logs, best recipes,
# plots and probe reports; the variants' natives and cubins left out).
#   PYTHONPATH=/tmp/site:. sh bench/tune_gpu.sh recipes/tune/dec1.yaml recipes/tune/gemm.yaml
# times other spaces the same way (the references are enc5's only for enc5 spaces).
set -u
OUT=${OUT:-build/tune-gpu-out}; mkdir -p "$OUT"
WORK=${TUNE_WORK:-build/tune-gpu}; mkdir -p "$WORK"
PY=${PYTHON:-python3}
export SPLICE_PROBE_CACHE=${SPLICE_PROBE_CACHE:-$WORK/probe-cache}
TUNE_LIMIT=${TUNE_LIMIT:-140}      # seconds per tune run (the first may screen: it gets the most)
nvidia-smi -L > "$OUT/gpu.txt" 2>&1; ptxas --version >> "$OUT/gpu.txt" 2>&1; nproc >> "$OUT/gpu.txt"
: > "$OUT/status.txt"
[ $# -eq 0 ] && set -- recipes/tune/enc5.yaml recipes/tune/enc5_stream.yaml
FOLDERS=""
for SPACE in "$@"; do
  NAME=$(basename "$SPACE" .yaml)
  DIR="$WORK/tune-$NAME"; mkdir -p "$DIR"; FOLDERS="$FOLDERS $DIR"
  REF=""
  case "$NAME" in enc5*) REF="--reference recipes/perf/enc5_fence_start.yaml --reference recipes/perf/enc5_stream.yaml";; esac
  if [ -f "build/tune/$NAME-screen/tune.db" ] && [ ! -f "$DIR/tune.db" ]; then
    cp "build/tune/$NAME-screen/tune.db" "$DIR/" && cp -r "build/tune/$NAME-screen/cubins" "$DIR/"
    echo "splice tune $SPACE: starting from the CPU screen in build/tune/$NAME-screen" >> "$OUT/status.txt"
  fi
  T0=$(date +%s)
  timeout -k 10 "$TUNE_LIMIT" $PY -m splice.cli tune "$SPACE" -o "$DIR" --jobs "$(nproc)" $REF \
    > "$DIR/tune.txt" 2> "$DIR/tune.err"
  echo "splice tune $SPACE: exit $? after $(( $(date +%s) - T0 )) s" >> "$OUT/status.txt"
  [ -f "$DIR/leaderboard.json" ] && cp "$DIR/leaderboard.json" "$OUT/leaderboard-$NAME.json"
  if [ -f "$DIR/best.yaml" ]; then
    timeout -k 5 40 $PY -m splice.cli probe "$DIR/best.yaml" --runs 60 --json --report-dir "$DIR/probe-best" \
      > "$DIR/probe-best.json" 2> "$DIR/probe-best.err"
    echo "splice probe $DIR/best.yaml: exit $?" >> "$OUT/status.txt"
  fi
  TUNE_LIMIT=${TUNE_LIMIT_NEXT:-110}
done
$PY bench/tune_board.py $FOLDERS > "$OUT/board.txt" 2>&1
tar -czf "$OUT/tune-gpu.tgz" -C "$(dirname "$WORK")" --exclude='*/cubins' --exclude='*/variants' \
  --exclude='probe-cache' "$(basename "$WORK")" 2>> "$OUT/status.txt"
cat "$OUT/gpu.txt" "$OUT/status.txt" "$OUT/board.txt"
