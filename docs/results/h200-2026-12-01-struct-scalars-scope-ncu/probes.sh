#!/bin/bash
# The H200 probes of 2026-12-01 06:09-06:16 UTC (docs/results/h200-2026-11-30-proof-runs.md): enc5's cut with
# stages and harness, the GEMM and enc5 spec probes, enc5 under Nsight Compute, the struct-scalar
# skeleton of int128_params (i128.yaml, filled: grid 4, block 128, n = 512) and the scope cut of
# handwritten_oddities s10-s18; then --ncu with no ncu on PATH.  Run from the repository root with
# lark on PYTHONPATH:  OUT=out bash docs/results/h200-2026-12-01-struct-scalars-scope-ncu/probes.sh
# It writes this folder's JSONs under $OUT; enc5_p8_ncu.json (thousands of lines of ncu output) is
# not kept here: summary.txt has what bench/perf_summary.py read from it.
mkdir -p "${OUT:=out}"; OUT=$(cd "$OUT" && pwd)
HERE=$(dirname "$0")
S="python3 -m splice.cli"
run() { echo "== $*"; "$@"; echo "rc=$?"; }
run $S probe recipes/enc5_p8.yaml --stages cut --harness --runs 5 --json > $OUT/enc5_p8_cut_harness.json
run $S probe probes/gemm_sm80.yaml corpus/gemm/gemm_sm80.ptx --runs 20 --json > $OUT/gemm_probe.json
run $S probe probes/enc5.yaml corpus/enc5.ptx --runs 3 --json > $OUT/enc5_probe.json
run $S probe recipes/enc5_p8.yaml --ncu --json > $OUT/enc5_p8_ncu.json
M=tests/data/ptx/modern
sed "s|^ptx: .*|ptx: $PWD/$M/int128_params.ptx|" $HERE/i128.yaml > $OUT/i128.yaml    # the skeleton, filled
run $S probe $OUT/i128.yaml $M/int128_params.ptx --json > $OUT/i128_probe.json
mkdir -p $OUT/scope_cut
run $S extract $M/handwritten_oddities.ptx --entry oddities --statements s10-s18 -o $OUT/scope_cut/n.ptx
printf 'module: %s\nentry: oddities\noutput: %s/scope_cut/out.ptx\ncuts:\n  - statements: s10-s18\n    native: %s/scope_cut/n.ptx\n' \
  "$PWD/$M/handwritten_oddities.ptx" "$OUT" "$OUT" > $OUT/scope_cut/r.yaml
run $S probe $OUT/scope_cut/r.yaml --json > $OUT/oddities_probe.json
run $S probe $OUT/scope_cut/r.yaml --harness --json > $OUT/oddities_harness.json
run env PATH=/usr/bin:/bin $(command -v python3) -m splice.cli probe recipes/enc5_p8.yaml --ncu   # exit 2, before any GPU work
python3 bench/perf_summary.py $OUT/*.json
