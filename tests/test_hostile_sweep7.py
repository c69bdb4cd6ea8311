"""A seventh hostile user: the features merged in the last stop (probe pointer tables and module
globals, image geometries, the round-6 analyses, cuts in ``{ }`` scopes and ``.b128`` registers,
builder-made call ABIs, re-splicing) attacked with cases their own tests did not try.  Each
class names the fix it guards (``regression:``); every case failed before its fix.
docs/hostile-inputs.md, "Sweep 7", lists the classes, their causes and their fixes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from splice.cli import main

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "tests/data/ptx/probe/globals_hidden.ptx"
TABLES = ROOT / "tests/data/ptx/probe/tables.ptx"


def _probe(tmp_path, monkeypatch, capsys, text: str, ptx: Path) -> tuple:
    """``splice probe s.yaml PTX`` without cupy: (exit status, stderr).  A spec that passes every
    check stops at "needs cupy"; one that does not is exit 2 at its line."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    spec = tmp_path / "s.yaml"
    spec.write_text(text.replace("PTX", str(ptx)))
    rc = main(["probe", str(spec), str(ptx)])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return rc, err


# ---- a global role: input the entry writes where its own def-use does not look ------------------

HIDDEN_SPEC = """name: t
ptx: PTX
entry: k
launch: {grid: [1], block: [32]}
params:
- {name: out, kind: buffer, dtype: u32, shape: [2], role: output}
globals:
- {name: NAME, dtype: u8, bytes: BYTES, role: input, fill: {rule: zeros}}
"""


@pytest.mark.parametrize("name, size, says", [
    ("counter", 4, "role input, but it is named in a function the entry calls (not traced)"),
    ("gbuf", 64, "role input, but gptr's initialiser holds its address (line 11: not traced)"),
    ("g_or", 16, "role input, but its address reaches xor.b64 s10, not followed"),
])
def test_a_global_written_out_of_the_entrys_sight_is_not_an_input(tmp_path, monkeypatch, capsys, name, size, says):
    """regression: ``role: input`` was refused only for a global the entry's own statements
    store to; one bumped by a ``.func`` the entry calls, written through an address def-use does
    not follow (``xor``/``or``), or reached through another variable holding its address was
    accepted: set before each launch and never compared, so a splice that wrote it wrongly
    passed.  (``probe init`` already made these ``inout``.)"""
    text = HIDDEN_SPEC.replace("NAME", name).replace("BYTES", str(size))
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, HIDDEN)
    assert rc == 2 and f"s.yaml:8:3: globals: {name}: {says}" in err, err
    assert "give role inout" in err and f"PTX: {HIDDEN}:" in err


def test_a_global_the_entry_only_reads_is_still_an_input(tmp_path, monkeypatch, capsys):
    text = HIDDEN_SPEC.replace("NAME", "g_alone").replace("BYTES", "16")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, HIDDEN)
    assert "needs cupy" in err, err
    rc, err = _probe(tmp_path, monkeypatch, capsys, text.replace("role: input", "role: inout")
                     .replace("g_alone", "counter").replace("16", "4"), HIDDEN)
    assert "needs cupy" in err, err
    rc, err = _probe(tmp_path, monkeypatch, capsys, text.replace("g_alone", "c_tab"), HIDDEN)
    assert "needs cupy" in err, err             # a .const one the called .func reads: nothing writes it


# ---- a buffer's or a table's align: bounded ----------------------------------------------------

SUM = """name: t
ptx: PTX
entry: table_sum
launch: {grid: [1], block: [64]}
params:
- {name: srcs, kind: table, ALIGN_T entries: [{dtype: f32, shape: [64], ALIGN_E fill: {rule: zeros}}]}
- {name: nsrc, kind: scalar, dtype: s32, value: 1}
- {name: out, kind: buffer, dtype: f32, shape: [64], role: output}
- {name: dsts, kind: table, count: 1, each: {dtype: f32, shape: [64], role: output}}
- {name: n, kind: scalar, dtype: s32, value: 64}
"""


@pytest.mark.parametrize("where", ["ALIGN_T", "ALIGN_E"])
@pytest.mark.parametrize("align", [1 << 64, 1 << 40, 1 << 22])
def test_an_align_past_a_page_is_refused_at_its_key(tmp_path, monkeypatch, capsys, where, align):
    """regression: ``align:`` had no upper bound: the device allocates ``bytes + align - 1`` for
    each buffer, so ``align: 18446744073709551616`` (a power of two) passed every check and failed
    on the GPU (an allocation past 2^64; 2^40 one of a terabyte per buffer)."""
    text = SUM.replace(where, f"align: {align},").replace("ALIGN_T", "").replace("ALIGN_E", "")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    key = "params[0].align" if where == "ALIGN_T" else "params[0].entries[0].align"
    assert rc == 2 and "s.yaml:6:" in err and f"{key}: {align}:" in err and "2097152" in err, err


def test_an_align_of_a_page_still_loads(tmp_path, monkeypatch, capsys):
    text = SUM.replace("ALIGN_T", "align: 2097152,").replace("ALIGN_E", "align: 2097152,")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert "needs cupy" in err, err


# ---- an image's texels together: bounded like a buffer -------------------------------------------

QUERY = ROOT / "tests/data/ptx/probe/images_query.ptx"
IMAGE = """name: q
ptx: PTX
entry: img_query
launch: {grid: [1], block: [1]}
params:
- {name: t, kind: texture, KEYS, format: FMT, fill: {rule: zeros}}
- {name: s, kind: surface, geometry: a1d, width: 8, layers: 3, format: rgba32f}
- {name: out, kind: buffer, dtype: u32, shape: [6], role: output}
"""


@pytest.mark.parametrize("keys, fmt, size", [
    ("geometry: 3d, width: 16384, height: 16384, depth: 16384", "rgba32f", 16 << 40 << 2),
    ("geometry: a2d, width: 32768, height: 32768, layers: 2048", "r32f", 8 << 40),
    ("geometry: 3d, width: 16384, height: 16384, depth: 4097", "r32f", 16384 * 16384 * 4097 * 4),
])
def test_an_image_of_more_bytes_than_a_buffer_is_refused_at_the_field(tmp_path, monkeypatch, capsys,
                                                                      keys, fmt, size):
    """regression: each extent was held to CUDA's limit for the geometry, the product to
    nothing: a 3-D texture of 16384^3 rgba32f texels (64 TiB) passed the check, then the probe
    built its texels on the host: an out-of-memory that names no spec, on the GPU run."""
    rc, err = _probe(tmp_path, monkeypatch, capsys, IMAGE.replace("KEYS", keys).replace("FMT", fmt), QUERY)
    assert rc == 2 and "s.yaml:6:3: params[0]:" in err and f"texels are {size} bytes" in err, err


def test_an_image_of_a_terabyte_still_loads(tmp_path, monkeypatch, capsys):
    rc, err = _probe(tmp_path, monkeypatch, capsys, IMAGE.replace(
        "KEYS", "geometry: 3d, width: 16384, height: 16384, depth: 1024").replace("FMT", "r32f"), QUERY)
    assert "needs cupy" in err, err


# ---- a .b128 register under abi: call / call-shared -------------------------------------------

B128 = ROOT / "tests/data/ptx/modern/atomics_b128_hints.ptx"


@pytest.mark.parametrize("abi", ["call", "call-shared"])
@pytest.mark.parametrize("statements, at, sym", [("s13-s14", 11, "%out0"), ("s15-s15", 10, "%in1")])
def test_a_b128_live_value_under_a_call_abi_is_refused(tmp_path, capsys, abi, statements, at, sym):
    """regression: a cut whose live-out (or live-in) is a ``.b128`` register (nvcc's 128-bit
    atomics' inline asm) under ``abi: call``/``call-shared`` was passed through a ``.b32`` slot:
    ``st.param.b32 [ret], %out0`` / ``ld.shared.b32 c, [slot]``, 4 of its 16 bytes, which ptxas
    takes without a word; ``verify`` said "proved equal" and apply exit 0."""
    import shutil

    shutil.copy(B128, tmp_path / "m.ptx")
    assert main(["extract", str(tmp_path / "m.ptx"), "--entry", "cas128", "--statements", statements,
                 "-o", str(tmp_path / "n.ptx")]) == 0
    threads = "    threads: 32\n" if abi == "call-shared" else ""
    (tmp_path / "r.yaml").write_text(f"name: b\nmodule: m.ptx\nentry: cas128\noutput: out.ptx\ncuts:\n"
                                     f"  - statements: {statements}\n    native: n.ptx\n    abi: {abi}\n{threads}")
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert f"n.ptx:{at}: abi {abi} cannot pass {sym} (c, .b128) through .param" in err, err
    assert "use abi: inline" in err and "Traceback" not in err
    assert not (tmp_path / "out.ptx").exists()
    (tmp_path / "r.yaml").write_text((tmp_path / "r.yaml").read_text().replace(f"abi: {abi}", "abi: inline")
                                     .replace("    threads: 32\n", ""))
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 0


# ---- numba's mangled argument names: nesting without recursion ---------------------------------

@pytest.mark.parametrize("args", ["5ArrayI" * 3000 + "f", "8UniTupleI" * 3000 + "f", "5TupleI" * 3000,
                                  "5ArrayI8UniTupleI" * 1500 + "f"])
def test_a_numba_name_nested_thousands_deep_is_unreadable_not_a_traceback(tmp_path, capsys, args):
    """regression: an Array's element and a tuple's members were read by recursing into the
    whole type grammar before checking they are scalars: an entry named ``_ZN1kE`` +
    ``5ArrayI`` x 3000 (21 KB, a legal PTX name in a module numba's environment marks) was a
    RecursionError traceback from ``probe init``.  Now: not a builtin scalar, no labels."""
    from splice.probe.language.numba_args import describe

    assert describe("_ZN1kE" + args, 1)[0] == {}
    (tmp_path / "deep.ptx").write_text(
        ".version 8.0\n.target sm_80\n.address_size 64\n.common .global .align 8 .u64 _ZN08NumbaEnv1kE;\n"
        f".visible .entry _ZN1kE{args}(\n\t.param .u64 p0\n)\n{{\n\t.reg .b64 %rd<3>;\n"
        "\tld.param.u64 %rd1, [p0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u64 [%rd2], %rd1;\n\tret;\n}\n")
    assert main(["probe", "init", str(tmp_path / "deep.ptx"), "-o", str(tmp_path / "s.yaml")]) == 0
    assert "mangled argument types could not be read" in (tmp_path / "s.yaml").read_text()


def test_numba_names_of_scalars_arrays_and_tuples_still_read():
    from splice.probe.language.numba_args import describe

    labels, why = describe("_ZN1kE5ArrayIfLi2E1A7mutable7alignedE8UniTupleIiLi3EE5TupleIdfEj", 5 + 4 + 3 + 2 + 1)
    assert why is None, why
    assert labels[4].startswith("array argument 1 (Array(float32, 2, 'A')): data")
    assert labels[9] == "tuple argument 2, member 0 (int32)" and labels[12] == "tuple argument 3, member 0 (float64)"
    assert labels[14] == "scalar argument 4 (uint32)"


# ---- the carry flag past a plain addc -----------------------------------------------------------

CARRY = ROOT / "tests/data/ptx/handwritten/carry_past_addc.ptx"


@pytest.mark.parametrize("abi", ["inline", "call"])
def test_a_cut_the_carry_flows_through_past_a_plain_addc_is_refused(tmp_path, capsys, abi):
    """regression: ``add.cc`` s4; ``addc`` s5 (reads the carry, leaves it set); ``mov`` s6;
    ``addc`` s7 reads the carry s4 set.  The "through" check took the nearest carry statement
    before the range (s5), saw no ``.cc`` on it and let a cut of s6 be spliced: under
    ``abi: call`` a call sat between s4 and s7 (exit 0), and a native setting the carry would
    have fed s7.  ``spec --abi s7`` named s5, which sets nothing, as the writer."""
    import shutil

    shutil.copy(CARRY, tmp_path / "c.ptx")
    (tmp_path / "n.ptx").write_text("// splice-native:\n//   params: {}\n//   scratch: {}\nmov.u32 %out0, 5;\n")
    (tmp_path / "r.yaml").write_text("module: c.ptx\nentry: carry_skip\noutput: o.ptx\ncuts:\n"
                                     f"  - statements: s6-s6\n    native: n.ptx\n    abi: {abi}\n")
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 2
    err = capsys.readouterr().err
    assert "c.ptx:19: s7 (addc.u32) (after the range) reads the carry flag that s4 (add.cc.u32) sets before it" in err
    assert "carry chain s4-s7" in err and not (tmp_path / "o.ptx").exists()
    assert main(["extract", str(tmp_path / "c.ptx"), "--statements", "s6-s6", "-o", str(tmp_path / "x.ptx")]) == 2
    assert "carry chain s4-s7" in capsys.readouterr().err
    assert main(["spec", str(tmp_path / "c.ptx"), "--abi", "s7-s7"]) == 0
    assert "s7 (addc.u32) reads the carry s4 (add.cc.u32) sets" in capsys.readouterr().out


def test_a_cut_of_the_whole_chain_past_a_plain_addc_still_splices(tmp_path, capsys):
    import shutil

    shutil.copy(CARRY, tmp_path / "c.ptx")
    assert main(["extract", str(tmp_path / "c.ptx"), "--statements", "s4-s7", "-o", str(tmp_path / "n.ptx")]) == 0
    (tmp_path / "r.yaml").write_text("module: c.ptx\nentry: carry_skip\noutput: o.ptx\ncuts:\n"
                                     "  - statements: s4-s7\n    native: n.ptx\n    abi: call\n")
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 0


# ---- extract of a jump table at the function's top level -----------------------------------------

BRX = ROOT / "tests/data/ptx/handwritten/brx_idx.ptx"


@pytest.mark.parametrize("abi", ["inline", "call", "call-shared"])
def test_extracts_native_of_a_top_level_jump_table_is_one_apply_takes(tmp_path, capsys, abi):
    """regression: a range holding ``$L_tbl: .branchtargets …; brx.idx`` at the function's top
    level (LLVM's dense switch: brx_idx.ptx s9-s22) was extracted bare, and apply refused
    extract's own native: ".branchtargets is not allowed in a native phase outside a { } scope
    (… as extract does)".  extract now writes the range inside a { } scope."""
    import shutil

    shutil.copy(BRX, tmp_path / "m.ptx")
    assert main(["extract", str(tmp_path / "m.ptx"), "--statements", "s9-s22", "-o", str(tmp_path / "n.ptx")]) == 0
    body = (tmp_path / "n.ptx").read_text().split("//   scratch: {}\n", 1)[1]
    assert body.startswith("{\n$L_tbl:\n\t.branchtargets $L_c0, $L_c1, $L_c2, $L_c3;\n") and body.endswith("}\n")
    threads = "    threads: 32\n" if abi == "call-shared" else ""
    (tmp_path / "r.yaml").write_text("module: m.ptx\nentry: brx_table\noutput: o.ptx\ncuts:\n"
                                     f"  - statements: s9-s22\n    native: n.ptx\n    abi: {abi}\n{threads}")
    capsys.readouterr()
    assert main(["apply", str(tmp_path / "r.yaml"), "--no-ptxas"]) == 0, capsys.readouterr().err
    assert "brx.idx" in (tmp_path / "o.ptx").read_text()


def test_extract_of_statements_without_a_jump_table_is_not_wrapped(tmp_path):
    import shutil

    shutil.copy(BRX, tmp_path / "m.ptx")
    assert main(["extract", str(tmp_path / "m.ptx"), "--statements", "s11-s13", "-o", str(tmp_path / "n.ptx")]) == 0
    assert (tmp_path / "n.ptx").read_text().split("//   scratch: {}\n", 1)[1].startswith("$L_c0:\n")


# ---- module variables named like registers (%g) ---------------------------------------------------

PERCENT = ROOT / "tests/data/ptx/probe/globals_percent.ptx"


def test_probe_init_lists_a_variable_named_like_a_register(tmp_path, capsys):
    """regression: ``.global .u32 %g`` (a PTX name may start with %) read as ``[%g]`` is a
    register operand to the parser: probe init left it out of ``globals:`` (the kernel read a
    variable the spec never set, and a write to one was never compared)."""
    out = tmp_path / "s.yaml"
    assert main(["probe", "init", str(PERCENT), "-o", str(out)]) == 0
    text = out.read_text()
    assert "- name: '%g'\n" in text and "- name: '%h'\n" in text and "- name: 'on'\n" in text
    h = text.split("- name: '%h'\n", 1)[1]
    assert "  role: output" in h.split("\n- ", 1)[0]        # only written, through mov %rd3, %h


def test_role_input_on_a_variable_named_like_a_register_that_the_entry_writes_is_refused(
        tmp_path, monkeypatch, capsys):
    text = ("name: t\nptx: PTX\nentry: k\nlaunch: {grid: [1], block: [32]}\nparams:\n"
            "- {name: out, kind: buffer, dtype: u32, shape: [1], role: output}\nglobals:\n"
            "- {name: '%h', dtype: u32, shape: [1], role: input, fill: {rule: zeros}}\n")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, PERCENT)
    assert rc == 2 and "s.yaml:8:3: globals: %h: role input, but k writes it (1 store(s)" in err, err
    rc, err = _probe(tmp_path, monkeypatch, capsys, text.replace("'%h'", "'%g'"), PERCENT)
    assert "needs cupy" in err, err


# ---- an element poison {value: x}: a value of the element type ------------------------------------

GLOBALS_ONLY = """name: g
ptx: PTX
entry: globals_only
launch: {grid: [2], block: [128]}
params: []
globals:
- {name: g_in, dtype: f32, shape: [256], role: input, fill: {rule: zeros}}
- {name: g_out, dtype: DTYPE, bytes: 1024, role: output, poison: {value: VALUE}}
"""


@pytest.mark.parametrize("dtype, value, says", [
    ("f32", "[1]", "expected a number, got [1]"),
    ("f32", "null", "expected a number, got None"),
    ("f32", "1.0e+40", "1e+40 does not fit f32 (it would be inf)"),
    ("f16", "70000.0", "70000.0 does not fit f16 (it would be inf)"),
    ("bf16", "3.4e+38", "3.4e+38 does not fit bf16 (it would be inf)"),
    ("u32", ".nan", "expected an integer, got nan"),
    ("u32", "340282366920938463463374607431768211456", "340282366920938463463374607431768211456 does not fit .u32"),
    ("s8", "1.5", "expected an integer, got 1.5"),
    ("e4m3", "0.3", "0.3 is no e4m3 value (give its byte: poison: {byte: N})"),
])
def test_an_element_poison_that_is_no_value_of_the_type_is_refused_at_its_key(
        tmp_path, monkeypatch, capsys, dtype, value, says):
    """regression: ``poison: {value: x}`` went to numpy unchecked: a list, null or 2^128 were a
    numpy traceback, 1e40 in an f32 a silent inf, .nan in a u32 and 0.3 in an e4m3 (cast to the
    integer storage) some other bits -- for every buffer, table entry and global."""
    text = GLOBALS_ONLY.replace("DTYPE", dtype).replace("VALUE", value)
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert rc == 2 and "s.yaml:8:" in err and f"globals[1].poison.value: {says}" in err, err


@pytest.mark.parametrize("dtype, value, bits", [
    ("f32", "-0.0", 0x80000000), ("f16", "1.0", 0x3C00), ("bf16", ".nan", 0x7FC0),
    ("u32", "-1", 0xFFFFFFFF), ("s16", "-2", 0xFFFE), ("e4m3", "0.5", 0x30), ("e4m3", "448.0", 0x7E),
    ("e5m2", ".inf", 0x7C), ("f32", ".inf", 0x7F800000),
])
def test_element_poisons_of_the_type_keep_their_bits(tmp_path, dtype, value, bits):
    from splice.probe.language.document import load_spec

    p = tmp_path / "s.yaml"
    p.write_text(GLOBALS_ONLY.replace("DTYPE", dtype).replace("VALUE", value).replace("PTX", str(TABLES)))
    g = load_spec(p).globals[1]
    assert g.poison == bits and g.poison_is_byte is False


# ---- the bound harness and the spec's module globals ----------------------------------------------

def _harness_cases(tmp_path, spec_name: str, entry: str, ranges: list, edit=lambda text: text) -> list:
    import shutil

    from splice.analysis import Kernel
    from splice.probe.instrument.harness import cases
    from splice.probe.run.modules import resolve
    from splice.probe.language.document import load_spec

    shutil.copy(TABLES, tmp_path / "m.ptx")
    (tmp_path / "probes").mkdir()
    spec_text = edit((ROOT / "tests/data/probe" / spec_name).read_text())
    (tmp_path / "probes" / "m.yaml").write_text(spec_text.replace("ptx: ../ptx/probe/tables.ptx", "ptx: m.ptx"))
    cuts = ""
    for k, rng in enumerate(ranges):
        assert main(["extract", str(tmp_path / "m.ptx"), "--entry", entry, "--statements", rng,
                     "-o", str(tmp_path / f"n{k}.ptx")]) == 0
        cuts += f"  - statements: {rng}\n    native: n{k}.ptx\n"
    (tmp_path / "r.yaml").write_text(f"name: hg\nmodule: m.ptx\nentry: {entry}\ncuts:\n{cuts}")
    pair = resolve(str(tmp_path / "r.yaml"))
    return cases(pair, Kernel.load(str(pair.original_path), pair.entry), load_spec(pair.spec_path))


def test_a_bound_harness_case_reaching_a_spec_global_is_skipped_with_the_reason(tmp_path):
    """regression: a cut that stores into a module global (globals_only s18-s20: ``mov.u64
    %rd8, g_out; …; st.global.f32 [%rd9]``) or reads one through an address it is handed
    (s16-s17: ``ld.global.f32 [%rd3]``, %rd3 = g_in + i) ran in the bound harness, whose module
    neither sets the spec's globals nor compares them: a native storing a wrong value into
    g_out came out "equal"."""
    hcs = _harness_cases(tmp_path, "tables_globals_only.yaml", "globals_only", ["s18-s20", "s16-s17"])
    assert [h.skipped.split(":")[0] for h in hcs] == ["the cut reaches the spec's module global(s) g_out",
                                                      "the cut reaches the spec's module global(s) g_in"]
    assert "neither set from the spec nor compared" in hcs[0].skipped


def test_a_bound_harness_case_reaching_no_spec_global_still_runs(tmp_path):
    (hc,) = _harness_cases(tmp_path, "tables_lut.yaml", "lut_count", ["s25-s27"])    # st.global into out
    assert hc.skipped is None and hc.orig_ptx


# ---- numbers no float holds, constants no float type holds ----------------------------------------

BIG = "9" * 400


@pytest.mark.parametrize("where, line, key", [
    ("- {name: g_in, dtype: f32, shape: [256], role: input, fill: {rule: constant, value: X}}", 7,
     "globals[0].fill.value"),
    ("- {name: g_out, dtype: f32, bytes: 1024, role: output, poison: {value: X}}", 8, "globals[1].poison.value"),
])
@pytest.mark.parametrize("value, says", [
    (BIG, "99999999999999999999... (400 digits): too large for a float"),
    ("1.0e+40", "1e+40 does not fit f32 (it would be inf)"),
])
def test_a_float_no_float_type_holds_is_refused_at_its_key(tmp_path, monkeypatch, capsys, where, line, key,
                                                          value, says):
    """regression: a 400-digit integer where a float goes (a poison value, a fill's range or
    constant, a float scalar's value) was ``float()``'s OverflowError traceback; a constant fill
    of 1e40 in an f32 buffer or global was accepted and stored as inf."""
    text = GLOBALS_ONLY.replace("DTYPE", "f32").replace("VALUE", "0")
    lines = text.splitlines()
    lines[line - 1] = where.replace("X", value)
    rc, err = _probe(tmp_path, monkeypatch, capsys, "\n".join(lines) + "\n", TABLES)
    assert rc == 2 and f"s.yaml:{line}:" in err and f"{key}: {says}" in err, err


def test_a_float_scalar_of_400_digits_is_refused_at_its_key(tmp_path, monkeypatch, capsys):
    text = SUM.replace("ALIGN_T", "").replace("ALIGN_E", "").replace(
        "{name: n, kind: scalar, dtype: s32, value: 64}", f"{{name: n, kind: scalar, dtype: f32, value: {BIG}}}")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert rc == 2 and "s.yaml:10:" in err and "params[4].value[0]: 99999999999999999999... (400 digits)" in err, err


def test_float_constants_that_fit_and_fp8_constants_that_saturate_still_load(tmp_path, monkeypatch, capsys):
    text = GLOBALS_ONLY.replace("DTYPE", "f32").replace("VALUE", "0").replace(
        "fill: {rule: zeros}", "fill: {rule: constant, value: 3.0e+38}")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert "needs cupy" in err, err
    text = text.replace("dtype: f32, shape: [256], role: input", "dtype: e4m3, shape: [1024], role: input")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text.replace("3.0e+38", "1.0e+40"), TABLES)
    assert "needs cupy" in err, err


# ---- a shape of more dimensions than an array may have -------------------------------------------

def test_a_shape_of_more_dimensions_than_numpy_has_is_refused_at_its_key(tmp_path, monkeypatch, capsys):
    """regression: ``shape: [1, 1, … x100]`` (4 bytes) was accepted; the read-back output is
    reshaped to the spec's shape after the GPU run: numpy's "maximum supported dimension"
    ValueError traceback (``compare.elements``)."""
    import numpy as np

    from splice.probe.run.compare import elements
    from splice.probe.language.context import MAX_DIMS
    from splice.probe.kinds.buffer import Buffer

    ok = Buffer(name="o", dtype="u8", bytes=4, shape=(1,) * (MAX_DIMS - 2) + (2, 2), role="output")
    assert elements(ok, np.zeros(4, dtype=np.uint8)).ndim == MAX_DIMS
    text = SUM.replace("ALIGN_T", "").replace("ALIGN_E", "").replace(
        "{name: out, kind: buffer, dtype: f32, shape: [64], role: output}",
        "{name: out, kind: buffer, dtype: f32, shape: [64" + ", 1" * 99 + "], role: output}")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert rc == 2 and "s.yaml:8:" in err and f"params[2].shape: 100 dimensions: more than the {MAX_DIMS}" in err, err


# ---- a surface the entry writes, given role: input -------------------------------------------------

IMAGES = ROOT / "tests/data/ptx/probe/images.ptx"
SURFACES = """name: lay
ptx: PTX
entry: img_layered
launch: {grid: [4, 3], block: [8]}
params:
- {name: t1, kind: texture, geometry: a1d, width: 8, layers: 3, format: r32f, fill: {rule: arange}}
- {name: t2, kind: texture, geometry: a2d, width: 8, height: 4, layers: 3, format: r32f, fill: {rule: arange}}
- {name: s1, kind: surface, geometry: a1d, width: 8, layers: 3, format: r32f, ROLE1}
- {name: s2, kind: surface, geometry: a2d, width: 8, height: 4, layers: 3, format: r32f}
- {name: w, kind: scalar, dtype: s32, value: 8}
- {name: h, kind: scalar, dtype: s32, value: 4}
- {name: layers, kind: scalar, dtype: s32, value: 3}
"""


def test_a_surface_the_entry_writes_is_not_an_input(tmp_path, monkeypatch, capsys):
    """regression: ``role: input`` on a surface img_layered writes (``sust.b.a1d``) was
    accepted: an input is not an output, so what the kernel stored there was never compared (a
    splice that wrote it wrongly passed)."""
    rc, err = _probe(tmp_path, monkeypatch, capsys, SURFACES.replace("ROLE1", "role: input, fill: {rule: zeros}"),
                     IMAGES)
    assert rc == 2 and "s.yaml:8:3: params[2]: s1: role input, but img_layered writes this surface (1 sust" in err, err
    for role in ("role: output", "role: inout, fill: {rule: zeros}"):
        rc, err = _probe(tmp_path, monkeypatch, capsys, SURFACES.replace("ROLE1", role), IMAGES)
        assert "needs cupy" in err, err


# ---- a buffer or a table entry the entry writes, given role: input --------------------------------

@pytest.mark.parametrize("out_role, dsts_role, where, says", [
    ("input", "output", "s.yaml:8:3: params[2]: out", "role input, but table_sum stores to it (1 store(s)"),
    ("output", "input", "s.yaml:9:3: params[3]: dsts",
     "role input, but table_sum stores through its pointers (entries of role input: dsts_0)"),
])
def test_a_buffer_or_table_entry_the_entry_writes_is_not_an_input(tmp_path, monkeypatch, capsys,
                                                                  out_role, dsts_role, where, says):
    """regression: ``role: input`` on a buffer table_sum stores to (``out``), or on the entries
    of a table it stores through (``dsts``), was accepted: inputs are set and never compared,
    so a splice that wrote them wrongly passed (the same class as a global's or a surface's)."""
    text = ("name: t\nptx: PTX\nentry: table_sum\nlaunch: {grid: [1], block: [64]}\nparams:\n"
            "- {name: srcs, kind: table, count: 1, each: {dtype: f32, shape: [64], fill: {rule: zeros}}}\n"
            "- {name: nsrc, kind: scalar, dtype: s32, value: 1}\n"
            f"- {{name: out, kind: buffer, dtype: f32, shape: [64], role: {out_role}, fill: {{rule: zeros}}}}\n"
            f"- {{name: dsts, kind: table, count: 1, each: {{dtype: f32, shape: [64], role: {dsts_role}, "
            "fill: {rule: zeros}}}\n- {name: n, kind: scalar, dtype: s32, value: 64}\n")
    rc, err = _probe(tmp_path, monkeypatch, capsys, text, TABLES)
    assert rc == 2 and f"{where}: {says}" in err and "give role inout" in err, err
    rc, err = _probe(tmp_path, monkeypatch, capsys, text.replace("role: input", "role: inout"), TABLES)
    assert "needs cupy" in err, err


def test_a_bound_case_reading_only_module_initialised_inputs_still_runs(tmp_path):
    """An input global with ``fill: module`` holds the same bytes in the harness's module as in
    the frame run: a cut reading it (globals_only s16-s17 reading g_in) runs."""
    seeded = "role: input, fill: {rule: uniform, seed: 1, range: [-1, 1]}"
    (hc,) = _harness_cases(tmp_path, "tables_globals_only.yaml", "globals_only", ["s16-s17"],
                           lambda text: text.replace(seeded, "role: input, fill: module"))
    assert hc.skipped is None
