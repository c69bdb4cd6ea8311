"""The equivalence table: every rewrite ``splice verify`` treats as exact, in one place.

A rule here lets two different PTX texts get the same canonical form, so each one is a claim
that the two forms give the same bits for every input (NaN, inf, -0 and subnormals included).
``docs/verify.md`` lists the same entries; ``tests/test_verify_table_gpu.py`` runs both forms
of each entry (``GPU_FORMS``) on a GPU and compares the bits.  Anything not in this table is
compared literally (opcode with every modifier, operands in written order).

NaN payloads: NVIDIA GPUs return the canonical NaN (0x7fffffff f32, 0x7fff f16) from
arithmetic on NaN operands rather than propagating a payload, so operand order cannot show in
the bits of add/mul/fma; the GPU tests feed NaNs with different payloads to confirm it.
``min``/``max`` on floats are *not* listed: the sign of a zero result and NaN handling are the
kind of detail that could depend on operand order, and nothing in the stand-ins needs them.
"""
from __future__ import annotations

from dataclasses import dataclass

INT_TYPES = (".s8", ".s16", ".s32", ".s64", ".u8", ".u16", ".u32", ".u64", ".b8", ".b16", ".b32",
             ".b64")
FLOAT_TYPES = (".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64")


@dataclass(frozen=True)
class Rule:
    id: str
    what: str            # one line: the rewrite
    why: str             # why it is exact
    section: str = ""    # the PTX ISA 9.1 sections it relies on


_RULES = (
    Rule("comm-int", "integer add, mul.lo/.hi/.wide, and/or/xor, min/max, mad a·b: operands a, b commute",
         "two's-complement arithmetic and bitwise logic are commutative bit for bit"),
    Rule("comm-float", "add and mul (f16, f16x2, bf16, bf16x2, f32, f64; any rounding, .ftz, .sat): "
         "operands commute", "IEEE 754 addition and multiplication are commutative; NaN results are "
         "the canonical NaN on NVIDIA GPUs, so no payload depends on operand order"),
    Rule("comm-fma", "fma a, b, c: a and b commute (c does not; fma is never re-associated)",
         "a·b is exact inside fma and commutative; one rounding of a·b + c either way"),
    Rule("comm-setp-eq", "setp.eq / setp.ne (integer and float): operands commute",
         "equality is symmetric; a NaN compares unequal either way"),
    Rule("mov-copy", "mov of a register or immediate is removed (the destination is the source)",
         "mov copies bits"),
    Rule("pack", "mov.bW {x0, x1, …}, r and mov.bW r, {x0, …} become element selects / a pack; "
         "pack(elements of r) = r, element k of pack(x…) = xk", "mov between a register and a brace "
         "list only moves bits (element 0 is the least significant)"),
    Rule("int-add", "integer add/sub of one width are one operation whatever the .s/.u/.b type; "
         "constants folded: (x + c1) + c2 = x + (c1 + c2) mod 2^W, sub x, c = x + (-c)",
         "two's-complement addition ignores signedness and wraps mod 2^W (no .sat, no .cc)"),
    Rule("addr-offset", "an address [r + o] with r = x + c (integer add of the register's width) is "
         "[x + c + o]", "address arithmetic wraps in the address register's width"),
    Rule("modifier-order", "qualifiers other than types, layouts (.row/.col) and state spaces may be "
         "written in any order (movmatrix.sync.trans.aligned = movmatrix.sync.aligned.trans); those "
         "three keep their order", "ptxas reads the other qualifiers as a set; the order of types "
         "(cvt's destination and source, mma's D.A.B.C), layouts and cp.*'s spaces carries meaning"),
    Rule("weak-default", "ld.weak / st.weak are ld / st", "the PTX ISA: .weak is the default"),
    Rule("st-type", "st.bW, st.uW, st.sW, st.fW store the same W bits", "a store moves bits"),
    Rule("select", "@p op d, … is d = select(p, new d, old d); selp d, a, b, p is select(p, a, b); "
         "select(!p, a, b) = select(p, b, a); select(p, a, a) = a",
         "a guarded instruction does not write its destination when the guard is false"),
    Rule("not-not", "not.pred (not.pred p) = p; a !p operand is not(p)", "boolean negation"),
    Rule("tid-bound", "setp.lt (setp.ge) of %tid.d against %ntid.d, 32-bit integer compare, is true "
         "(false), and so is setp.gt (setp.le) of %ntid.d against %tid.d; a select or guard on a "
         "constant predicate is its chosen side", "the PTX ISA: %tid.d ranges over 0 … %ntid.d - 1, "
         "and %ntid.d <= 1024 so signed and unsigned compares agree"),
    Rule("mem-commute", "a load moves past a store, and two stores swap, when both are plain weak ld/st "
         "of this thread's own bytes (footprint.py: no collective, asynchronous, atomic, texture, "
         "surface or non-coherent access), in one state space, off one base value that is the same in "
         "every thread of the CTA (lanes.py; any base in .local), with disjoint constant byte ranges "
         "(bytes from the type and vector modifiers), and no other memory event between them",
         "the byte ranges of every thread are then the same disjoint ranges, so no thread's access "
         "overlaps another's (PTX ISA 8.7.1: no conflict); a vector access is its elements (8.2.4); "
         "weak accesses of one thread to other locations are unordered for other threads without a "
         "fence (8.9)"),
    Rule("splice-private", "the call ABIs' glue: .param arguments and return slots, and "
         "call-shared's per-thread __splice_ret slots, are forwarded store→load and are not part "
         "of the memory compared", "they are splice's own storage, private to the thread "
         "(slot tid·4 of a region of 4·threads bytes, threads as the recipe declares)"),
    Rule("provenance", "a live-in whose provenance (splice.analysis) is a bare special register "
         "(laneid, tid.x, …) is that special register, on both sides", "the analysis proved the "
         "register a copy of it on every path into the cut (named values bind %laneid to it)"),
    Rule("if-convert", "forward branches inside a cut become selects on the branch predicate",
         "a straight-line program with selects computes the same values as the branchy one"),
)

# the PTX ISA 9.1 sections each rule relies on (docs/verify.md's last column)
SECTIONS = {
    "comm-int": "9.7.1.1 add, 9.7.1.3 mul, 9.7.1.4 mad, 9.7.8.1-3 and/or/xor",
    "comm-float": "9.7.3.3 add, 9.7.3.5 mul, 9.7.4.1 add, 9.7.4.3 mul (half)",
    "comm-fma": "9.7.3.6 fma, 9.7.4.4 fma (half)",
    "comm-setp-eq": "9.7.6.2 setp",
    "mov-copy": "9.7.9.3 mov",
    "pack": "9.7.9.4 mov (packing and unpacking)",
    "int-add": "9.7.1.1 add, 9.7.1.2 sub",
    "addr-offset": "6.4.1 Addresses as Operands",
    "modifier-order": "9.1 Format and Semantics of Instruction Descriptions (checked by ptxas, "
                      "GPU_FORMS)",
    "weak-default": "9.7.9.8 ld, 9.7.9.11 st (.weak is the default); 8.4 Operation types",
    "st-type": "9.7.9.11 st",
    "select": "9.3 Predicated Execution, 9.7.6.3 selp",
    "not-not": "9.7.8.4 not",
    "tid-bound": "10.1 %tid, 10.2 %ntid",
    "mem-commute": "8.7.1 Conflict and Data-races, 8.2.4 vector data types, 8.9 Ordering of memory "
                   "operations; the footprint table above",
    "splice-private": "5.1.6 Parameter State Space, 7 Abstracting the ABI",
    "provenance": "10 Special Registers (splice's provenance analysis)",
    "if-convert": "9.3 Predicated Execution, 9.7.12.3 bra",
}
RULES: tuple = tuple(Rule(r.id, r.what, r.why, SECTIONS[r.id]) for r in _RULES)
RULE_IDS = tuple(r.id for r in RULES)

# opcode (first word) -> operand positions (after the destination) that commute, per type class
COMM_INT = {"add": (0, 1), "mul": (0, 1), "and": (0, 1), "or": (0, 1), "xor": (0, 1),
            "min": (0, 1), "max": (0, 1), "mad": (0, 1)}
COMM_FLOAT = {"add": (0, 1), "mul": (0, 1), "fma": (0, 1)}
COMM_SETP = (".eq", ".ne", ".equ", ".neu")

# Both forms of every GPU-checkable entry: PTX over inputs %x, %y, %z of ``type`` into %o.
# tests/test_verify_table_gpu.py wraps each in a kernel, runs it over random and special inputs
# and compares the output bits.
GPU_FORMS = {
    "comm-int": [(".u32", "add.u32 %o, %x, %y;", "add.u32 %o, %y, %x;"),
                 (".u32", "mul.hi.u32 %o, %x, %y;", "mul.hi.u32 %o, %y, %x;"),
                 (".s32", "mad.lo.s32 %o, %x, %y, %z;", "mad.lo.s32 %o, %y, %x, %z;"),
                 (".s32", "min.s32 %o, %x, %y;", "min.s32 %o, %y, %x;"),
                 (".b32", "xor.b32 %o, %x, %y;", "xor.b32 %o, %y, %x;")],
    "comm-float": [(".f32", "add.rn.f32 %o, %x, %y;", "add.rn.f32 %o, %y, %x;"),
                   (".f32", "mul.rn.ftz.f32 %o, %x, %y;", "mul.rn.ftz.f32 %o, %y, %x;"),
                   (".b32", "add.rn.f16x2 %o, %x, %y;", "add.rn.f16x2 %o, %y, %x;"),
                   (".b32", "mul.rn.f16x2 %o, %x, %y;", "mul.rn.f16x2 %o, %y, %x;"),
                   (".b32", "add.rn.sat.f16x2 %o, %x, %y;", "add.rn.sat.f16x2 %o, %y, %x;")],
    "comm-fma": [(".f32", "fma.rn.f32 %o, %x, %y, %z;", "fma.rn.f32 %o, %y, %x, %z;"),
                 (".b32", "fma.rn.f16x2 %o, %x, %y, %z;", "fma.rn.f16x2 %o, %y, %x, %z;")],
    "comm-setp-eq": [(".f32", "setp.eq.f32 %p, %x, %y; selp.b32 %o, 1, 0, %p;",
                      "setp.eq.f32 %p, %y, %x; selp.b32 %o, 1, 0, %p;"),
                     (".u32", "setp.ne.u32 %p, %x, %y; selp.b32 %o, 1, 0, %p;",
                      "setp.ne.u32 %p, %y, %x; selp.b32 %o, 1, 0, %p;")],
    "mov-copy": [(".b32", "add.u32 %o, %x, %y;", "mov.b32 %t, %x; add.u32 %o, %t, %y;")],
    "pack": [(".b32", "mov.b32 {%h0, %h1}, %x; mov.b32 %o, {%h0, %h1};", "mov.b32 %o, %x;"),
             (".b32", "mov.b32 {%h0, %h1}, %x; mov.b32 {%h2, %h3}, %y; mov.b32 %o, {%h0, %h3};",
              "mov.b32 {%h2, %h3}, %y; mov.b32 {%h0, %h1}, %x; mov.b32 %t, {%h0, %h3}; mov.b32 %o, %t;")],
    "int-add": [(".u32", "add.s32 %t, %x, 5; add.u32 %o, %t, -7;", "sub.u32 %o, %x, 2;")],
    "addr-offset": [(".u32", "ADDR: ld.global.u32 %o, [%a+8];", "ADDR: add.s64 %s, %a, 4; ld.global.u32 %o, [%s+4];")],
    "modifier-order": [(".b32", "movmatrix.sync.aligned.m8n8.trans.b16 %o, %x;",
                        "movmatrix.sync.trans.aligned.m8n8.b16 %o, %x;"),
                       (".b32", "cvt.rn.satfinite.e4m3x2.f16x2 %h0, %x; mov.b32 %o, {%h0, %h0};",
                        "cvt.satfinite.rn.e4m3x2.f16x2 %h0, %x; mov.b32 %o, {%h0, %h0};")],
    "weak-default": [(".u32", "ADDR: ld.weak.global.u32 %o, [%a];", "ADDR: ld.global.u32 %o, [%a];")],
    "st-type": [(".f32", "ADDR: st.global.f32 [%a], %x; ld.global.u32 %o, [%a];",
                 "ADDR: st.global.b32 [%a], %x; ld.global.u32 %o, [%a];")],
    "select": [(".u32", "setp.lt.u32 %p, %x, %y; mov.b32 %o, %z; @%p add.u32 %o, %x, %y;",
                "setp.lt.u32 %p, %x, %y; add.u32 %t, %x, %y; selp.b32 %o, %t, %z, %p;"),
               (".u32", "setp.lt.u32 %p, %x, %y; selp.b32 %o, %x, %z, !%p;",
                "setp.lt.u32 %p, %x, %y; selp.b32 %o, %z, %x, %p;")],
    "not-not": [(".u32", "setp.lt.u32 %p, %x, %y; not.pred %q, %p; not.pred %q, %q; selp.b32 %o, %x, %z, %q;",
                 "setp.lt.u32 %p, %x, %y; selp.b32 %o, %x, %z, %p;")],
    "tid-bound": [(".u32", "mov.u32 %i, %tid.y; mov.u32 %t, %ntid.y; setp.ge.u32 %p, %i, %t; "
                   "selp.b32 %o, %x, %y, %p;", "mov.b32 %o, %y;"),
                  (".u32", "mov.u32 %i, %tid.x; mov.u32 %t, %ntid.x; setp.lt.s32 %p, %i, %t; "
                   "selp.b32 %o, %x, %y, %p;", "mov.b32 %o, %x;")],
    "mem-commute": [(".u32", "ADDR: st.global.u32 [%a], %x; st.global.u32 [%a+4], %y; ld.global.u32 %o, [%a+4];",
                     "ADDR: st.global.u32 [%a+4], %y; st.global.u32 [%a], %x; ld.global.u32 %o, [%a+4];")],
}
