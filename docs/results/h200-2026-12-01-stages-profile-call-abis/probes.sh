#!/bin/bash
# The H200 probes of 2026-12-01 10:30-10:52 UTC (docs/results/h200-2026-11-30-proof-runs.md): stages, harness,
# profile, the call-shared ABI, a wrong cut, the pointer tables, the jump-table cut, numba and LLVM
# skeletons.  Run from the repository root with OUT set and lark on PYTHONPATH:
#   OUT=out bash docs/results/h200-2026-12-01-stages-profile-call-abis/probes.sh
# It writes every JSON of this folder under $OUT (enc5_wrong, enc5_p8_profile and dec1_p8_all are
# not kept here: summary.txt has what they said) and prints the summary last.
mkdir -p "${OUT:=out}"; OUT=$(cd "$OUT" && pwd)
S="python3 -m splice.cli"
run() { echo "== $*"; "$@"; echo "rc=$?"; }
run $S probe recipes/enc5_p8.yaml --stages cut --harness --runs 5 --json > $OUT/enc5_p8_stages_harness.json
run $S probe recipes/enc5_p8.yaml --profile --runs 3 --json > $OUT/enc5_p8_profile.json
run $S probe recipes/dec1_p8.yaml --stages all --harness --runs 5 --json > $OUT/dec1_p8_all.json
run $S probe tests/data/recipes/enc5_p8_call_shared.yaml --stages cut --harness --runs 3 --json > $OUT/enc5_call_shared.json
run $S probe tests/data/recipes/enc5_p8_wrong.yaml --stages all --harness --runs 3 --json > $OUT/enc5_wrong.json
run $S probe tests/data/probe/tables_sum.yaml tests/data/ptx/probe/tables.ptx --runs 3
run $S probe tests/data/probe/tables_sum.yaml tests/data/ptx/probe/tables_wrong.ptx --runs 3
run $S probe tests/data/probe/tables_lut.yaml tests/data/ptx/probe/tables_wrong.ptx --runs 3
run $S probe tests/data/probe/tables_globals_only.yaml tests/data/ptx/probe/tables_wrong.ptx --runs 3
# the jump-table cut of handwritten_oddities (extract of a brx.idx range, apply, probe, harness)
M=tests/data/ptx/modern
mkdir -p $OUT/jump_table
run $S extract $M/handwritten_oddities.ptx --entry oddities --statements s32-s40 -o $OUT/jump_table/n32.ptx
printf 'module: %s\nentry: oddities\noutput: %s/jump_table/odd_s32.ptx\ncuts:\n  - statements: s32-s40\n    native: %s/jump_table/n32.ptx\n' "$PWD/$M/handwritten_oddities.ptx" "$OUT" "$OUT" > $OUT/jump_table/r32.yaml
run $S probe $OUT/jump_table/r32.yaml --harness --runs 3 --json > $OUT/oddities_jump_table.json
run $S probe probes/numba_saxpy2d_sm80.yaml $M/numba_saxpy2d_sm80.ptx --runs 3 --json > $OUT/numba_saxpy2d.json
run $S probe probes/llvm_packed_byval.yaml $M/llvm_packed_byval.ptx --runs 3 --json > $OUT/llvm_packed_byval.json
python3 - <<'PY'
import json, os
for f in sorted(os.listdir(os.environ["OUT"])):
    if f.endswith(".json"):
        try:
            r = json.load(open(os.path.join(os.environ["OUT"], f)))
        except Exception as e:
            print(f, "unreadable", e); continue
        st = r.get("stages") or {}
        h = r.get("harness") or {}
        print(f, "ok", r.get("ok"), "identical", r.get("identical"), "ratio", (r.get("timing") or {}).get("ratio"),
              "stage fd", (st.get("first_divergence") or {}).get("name"),
              "harness rows", [(x.get("equal"), x.get("live_outs"), x.get("live_outs_differ")) for x in h.get("rows", [])],
              "profile", bool(r.get("profile")))
PY
