#!/usr/bin/env bash
# Regenerate the nvcc-produced PTX in this folder (the Triton / CUTLASS files have their own
# generators: gen_triton.py (every Triton file), gen_cutlass_dsl.py; the
# handwritten_*.ptx files are written by hand).
#
# Sources are copied into a fixed build folder first so the absolute paths nvcc writes into
# `.file` directives (-lineinfo / -G) do not depend on where the repository is checked out;
# the PTX is then byte-for-byte reproducible with the same nvcc (13.0, V13.0.88).
# Each PTX is checked with ptxas for the arch recorded in manifest.yaml.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD=/tmp/splice-ptx-modern
NVCC="${NVCC:-nvcc}"
PTXAS="${PTXAS:-ptxas}"
rm -rf "$BUILD" && mkdir -p "$BUILD"
cp "$HERE"/*.cu "$HERE"/*.cuh "$BUILD"/
cd "$BUILD"

# name          nvcc arch   extra nvcc flags         ptxas arch  extra ptxas flags
JOBS=(
  "wgmma_sm90a            sm_90a  -O3                sm_90a  -"
  "tma_cluster_sm90a      sm_90a  -O3                sm_90a  -"
  "cp_async_pipeline      sm_90   -O3                sm_90   -"
  "ldmatrix_stmatrix_mma  sm_90   -O3                sm_90   -"
  "fp8_mma_sm89           sm_89   -O3                sm_90   -"
  "tex_surf_objects       sm_90   -O3                sm_90   -"
  "calls_params_globals   sm_90   -O3                sm_90   -"
  "rdc_linkage            sm_90   -O3,-rdc=true      sm_90   -c"
  "warp_atomics_preds     sm_90   -O3                sm_90   -"
  "lineinfo_inlined       sm_90   -O3,-lineinfo      sm_90   -"
  "debug_full_G           sm_90   -G                 sm_90   -"
  "coop_groups_misc       sm_90   -O3                sm_90   -"
  "half_bf16_math         sm_90   -O3                sm_90   -"
  "setmaxnreg_elect_sm90a sm_90a  -O3                sm_90a  -"
  "mma_shapes_misc        sm_90   -O3                sm_90   -"
  "mbarrier_scoped_labels_sm90 sm_90 -O3             sm_90   -"
  "control_misc           sm_90   -O3                sm_90   -"
  "mma_in_func            sm_90   -O3                sm_90   -"
  "wmma_gemm              sm_90   -O3                sm_90   -"
  "mma_sparse_int_f64     sm_90   -O3                sm_90   -"
  "atomics_b128_hints     sm_90   -O3                sm_90   -"
  "devlaunch_rdc          sm_90   -O3,-rdc=true      sm_90   -c"
  "mma_blockscale_sm120a  sm_120a -O3                sm_120a -"
  "wgmma_consumers_sm90a  sm_90a  -O3                sm_90a  -"
  "wmma_subbyte           sm_90   -O3                sm_90   -"
  "managed_virtual_heap   sm_90   -O3                sm_90   -"
  "many_params            sm_90   -O3                sm_90   -"
  "tex_layered_cube       sm_90   -O3                sm_90   -"
  "struct_params_dynsmem  sm_90   -O3                sm_90   -"
  "ptr_to_ptr             sm_90   -O3                sm_90   -"
  "tex_layered_cube_G     sm_90   -G                 sm_90   -"
  "struct_params_dynsmem_G sm_90  -G                 sm_90   -"
  "atomic_ref_orders      sm_90   -O3                sm_90   -"
  "dsmem_cluster_sm90     sm_90   -O3                sm_90   -"
  "inline_asm_loops       sm_90   -O3                sm_90   -"
  "int128_params          sm_90   -O3                sm_90   -"
  "mma_shapes_rare        sm_90   -O3                sm_90   -"
  "tcgen05_ldsm_b8_sm100a sm_100a -O3                sm_100a -"
  "wgmma_odd_n_sm90a      sm_90a  -O3                sm_90a  -"
  "bulk_dsmem_mbarrier_sm90 sm_90 -O3                sm_90   -"
  "carry_chain_misc       sm_90   -O3                sm_90   -"
  "mma_interleave_sm89    sm_89   -O3                sm_90   -"
  "mutual_recursion_local sm_90   -O3                sm_90   -"
  "ws_pipeline_tma_wgmma_sm90a sm_90a -O3            sm_90a  -"
  "tma_modes_sm90a        sm_90a  -O3                sm_90a  -"
  "int_bitops_lop3        sm_90   -O3                sm_90   -"
  "clc_persistent_sm100a  sm_100a -O3                sm_100a -"
  "mma_epilogues_sm90     sm_90   -O3                sm_90   -"
)
for job in "${JOBS[@]}"; do
  read -r name arch flags parch pflags <<<"$job"
  IFS=',' read -r -a fl <<<"$flags"
  "$NVCC" -arch="$arch" -ptx "${fl[@]}" "$name.cu" -o "$name.ptx"
  pf=(); [[ "$pflags" != "-" ]] && pf=("$pflags")
  "$PTXAS" -arch="$parch" "${pf[@]}" "$name.ptx" -o /dev/null
  cp "$name.ptx" "$HERE/$name.ptx"
  echo "ok $name ($arch -> ptxas $parch)"
done
