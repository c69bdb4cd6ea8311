"""Write mojo_style_int8_gemm_sm80.ptx: int8 GEMMs in the style of Mojo's PTX (LLVM NVPTX).

Mojo compiles through LLVM's NVPTX back end; its GEMMs show what splice's notes had mislabeled
(issue 29): ``.ptr .global``-annotated pointer parameters, a ``__local_depot`` local array
written and read back with ``st.local``/``ld.local`` (an array, not a register spill),
``ld.global.s32`` buffers used only in integer arithmetic (per-row offsets, a per-column
integer bias), ``mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32`` over a K loop with in-place
s32 accumulators, and strided ``st.global.u32`` of C into a buffer nothing loads.

Each entry computes, per warp, a 16 x (8·NT) tile of C = A·B + bias over K (a run-time
parameter, a multiple of 32): A row-major s8 [M, K], B column-major s8 [N, K], C row-major s32.
The local array holds the NT per-column biases, written once and read in the epilogue.

    python tests/data/ptx/gemm/gen_mojo_style_int8.py      # rewrites the .ptx beside it
    ptxas -arch=sm_80 tests/data/ptx/gemm/mojo_style_int8_gemm_sm80.ptx -o /dev/null
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def entry(name: str, nt: int) -> str:
    p = [f"{name}_param_{i}" for i in range(6)]
    L = [f".visible .entry {name}(",
         f"\t.param .u64 .ptr .global .align 4 {p[0]},",
         f"\t.param .u64 .ptr .global .align 4 {p[1]},",
         f"\t.param .u64 .ptr .global .align 4 {p[2]},",
         f"\t.param .u64 .ptr .global .align 4 {p[3]},",
         f"\t.param .u64 .ptr .global .align 4 {p[4]},",
         f"\t.param .u32 {p[5]}",
         ")",
         ".reqntid 32, 1, 1",
         "{",
         f"\t.local .align 4 .b8 \t__local_depot_{name}[{4 * nt}];",
         "\t.reg .b64 \t%SPL;",
         "\t.reg .pred \t%p<3>;",
         "\t.reg .b32 \t%r<200>;",
         "\t.reg .b64 \t%rd<80>;",
         "",
         "// %bb.0:",
         f"\tmov.u64 \t%SPL, __local_depot_{name};",
         f"\tld.param.u64 \t%rd1, [{p[0]}];",
         f"\tld.param.u64 \t%rd2, [{p[1]}];",
         f"\tld.param.u64 \t%rd3, [{p[2]}];",
         f"\tld.param.u64 \t%rd4, [{p[3]}];",
         f"\tld.param.u64 \t%rd5, [{p[4]}];",
         f"\tld.param.u32 \t%r1, [{p[5]}];",
         "\tcvta.to.global.u64 \t%rd6, %rd1;",
         "\tcvta.to.global.u64 \t%rd7, %rd2;",
         "\tcvta.to.global.u64 \t%rd8, %rd3;",
         "\tcvta.to.global.u64 \t%rd9, %rd4;",
         "\tcvta.to.global.u64 \t%rd10, %rd5;",
         "\tmov.u32 \t%r2, %tid.x;",
         "\tmov.u32 \t%r3, %ctaid.x;",
         "\tshr.u32 \t%r4, %r2, 2;",          # group id g = lane/4
         "\tand.b32 \t%r5, %r2, 3;",          # t = lane%4
         # per-row offset table: s32 element offsets of rows g and g+8 (integer arithmetic only)
         "\tmul.wide.u32 \t%rd11, %r4, 4;",
         "\tadd.s64 \t%rd12, %rd9, %rd11;",
         "\tld.global.s32 \t%r6, [%rd12];",
         "\tld.global.s32 \t%r7, [%rd12+32];",
         "\tshl.b32 \t%r8, %r3, 4;",
         "\tadd.s32 \t%r9, %r6, %r8;",         # row g of this block's tile
         "\tadd.s32 \t%r10, %r7, %r8;",
         "\tmul.lo.s32 \t%r11, %r9, %r1;",     # row * K (bytes: s8)
         "\tmul.lo.s32 \t%r12, %r10, %r1;",
         "\tshl.b32 \t%r13, %r5, 2;",          # 4·t bytes into the k slice
         "\tadd.s32 \t%r14, %r11, %r13;",
         "\tadd.s32 \t%r15, %r12, %r13;",
         ]
    # the local array: per-column biases, written once
    for j in range(nt):
        L += [f"\tmul.wide.u32 \t%rd{13 + j}, %r4, 4;",
              f"\tadd.s64 \t%rd{20 + j}, %rd10, %rd{13 + j};",
              f"\tld.global.s32 \t%r{16 + j}, [%rd{20 + j}+{32 * j}];",
              f"\tst.local.u32 \t[%SPL+{4 * j}], %r{16 + j};"]
    acc = [[f"%r{40 + 4 * j + i}" for i in range(4)] for j in range(nt)]
    for j in range(nt):
        L += [f"\tmov.b32 \t{r}, 0;" for r in acc[j]]
    L += ["\tmov.u32 \t%r30, 0;",
          "$L__BB0_1:",
          "\tadd.s32 \t%r31, %r14, %r30;",
          "\tadd.s32 \t%r32, %r15, %r30;",
          "\tcvt.s64.s32 \t%rd30, %r31;",
          "\tcvt.s64.s32 \t%rd31, %r32;",
          "\tadd.s64 \t%rd32, %rd6, %rd30;",
          "\tadd.s64 \t%rd33, %rd6, %rd31;",
          "\tld.global.u32 \t%r33, [%rd32];",
          "\tld.global.u32 \t%r34, [%rd33];",
          "\tld.global.u32 \t%r35, [%rd32+16];",
          "\tld.global.u32 \t%r36, [%rd33+16];"]
    for j in range(nt):
        b0, b1 = f"%r{80 + 2 * j}", f"%r{81 + 2 * j}"
        L += [f"\tadd.s32 \t%r{100 + j}, %r4, {8 * j};",
              f"\tmul.lo.s32 \t%r{110 + j}, %r{100 + j}, %r1;",
              f"\tadd.s32 \t%r{120 + j}, %r{110 + j}, %r13;",
              f"\tadd.s32 \t%r{130 + j}, %r{120 + j}, %r30;",
              f"\tcvt.s64.s32 \t%rd{40 + j}, %r{130 + j};",
              f"\tadd.s64 \t%rd{50 + j}, %rd7, %rd{40 + j};",
              f"\tld.global.u32 \t{b0}, [%rd{50 + j}];",
              f"\tld.global.u32 \t{b1}, [%rd{50 + j}+16];"]
    for j in range(nt):
        d = ", ".join(acc[j])
        b0, b1 = f"%r{80 + 2 * j}", f"%r{81 + 2 * j}"
        L.append(f"\tmma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 \t{{{d}}}, "
                 f"{{%r33, %r34, %r35, %r36}}, {{{b0}, {b1}}}, {{{d}}};")
    L += ["\tadd.s32 \t%r30, %r30, 32;",
          "\tsetp.lt.s32 \t%p1, %r30, %r1;",
          "\t@%p1 bra \t$L__BB0_1;",
          "// %bb.2:",
          "\tmul.lo.s32 \t%r140, %r9, %r141;" if False else "\tshl.b32 \t%r140, %r9, 5;"]
    # epilogue: C[row, col] = acc + bias[col] (the local array read back), stored strided
    for j in range(nt):
        L += [f"\tld.local.u32 \t%r{150 + j}, [%SPL+{4 * j}];"]
        for i, r in enumerate(acc[j]):
            row = "%r9" if i < 2 else "%r10"
            L += [f"\tadd.s32 \t%r{160 + 4 * j + i}, {r}, %r{150 + j};",
                  f"\tshl.b32 \t%r{190 - (4 * j + i) % 8}, {row}, {5 + j % 2};",
                  f"\tmad.lo.s32 \t%r{170 + 4 * j + i}, %r5, 2, %r{190 - (4 * j + i) % 8};",
                  f"\tadd.s32 \t%r{170 + 4 * j + i}, %r{170 + 4 * j + i}, {8 * j + i % 2};",
                  f"\tmul.wide.s32 \t%rd{60 + (4 * j + i) % 16}, %r{170 + 4 * j + i}, 4;",
                  f"\tadd.s64 \t%rd{60 + (4 * j + i) % 16}, %rd8, %rd{60 + (4 * j + i) % 16};",
                  f"\tst.global.u32 \t[%rd{60 + (4 * j + i) % 16}], %r{160 + 4 * j + i};"]
    L += ["\tret;", "}", ""]
    return "\n".join(L)


def module() -> str:
    head = ["//", "// Generated by LLVM NVPTX Back-End (the style of Mojo's output; written by",
            "// tests/data/ptx/gemm/gen_mojo_style_int8.py)", "//", "",
            ".version 8.0", ".target sm_80", ".address_size 64", "",
            "\t// .globl\tgemm_int8_nt2", ""]
    return "\n".join(head) + "\n" + entry("gemm_int8_nt2", 2) + "\n" + entry("gemm_int8_nt4", 4)


if __name__ == "__main__":
    (HERE / "mojo_style_int8_gemm_sm80.ptx").write_text(module())
