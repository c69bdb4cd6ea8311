#!/bin/bash
# Session 8 probes on the H200 (run from the repository root, lark on PYTHONPATH)
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
# hu6's jump-table cut (extract of a brx.idx range, apply, probe, harness)
M=tests/data/ptx/modern
mkdir -p $OUT/hu6
run $S extract $M/handwritten_oddities.ptx --entry oddities --statements s32-s40 -o $OUT/hu6/n32.ptx
printf 'module: %s\nentry: oddities\noutput: %s/hu6/odd_s32.ptx\ncuts:\n  - statements: s32-s40\n    native: %s/hu6/n32.ptx\n' "$PWD/$M/handwritten_oddities.ptx" "$OUT" "$OUT" > r32_s8.yaml
run $S probe r32_s8.yaml --harness --runs 3 --json > $OUT/hu6_r32.json
run $S probe probes/numba_saxpy2d_sm80.yaml $M/numba_saxpy2d_sm80.ptx --runs 3 --json > $OUT/hu6_numba.json
run $S probe probes/llvm_packed_byval.yaml $M/llvm_packed_byval.ptx --runs 3 --json > $OUT/hu6_packed.json
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
