"""Pointer tables and module globals in probe specs, without a GPU: parsing and refusals (exit 2
at file:line:col with a caret, never a traceback), the check against the module, the device path
end to end through a fake cupy whose "device memory" is host memory (the fake kernels follow the
table's pointers and use the module's own variables, as the GPU would), and `splice probe init`
filling tables and globals in from def-use.  The GPU runs are tests/test_probe_tables_gpu.py."""
from __future__ import annotations

import ctypes
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests/data/probe"
PTX = ROOT / "tests/data/ptx/probe/tables.ptx"
WRONG = ROOT / "tests/data/ptx/probe/tables_wrong.ptx"


def _load(tmp_path, text: str, name: str = "s.yaml"):
    from splice.probe.language.document import load_spec

    p = tmp_path / name
    p.write_text(text.replace("PTX", str(PTX)))
    return load_spec(p)


def _refused(tmp_path, text: str, *needles, line=None):
    from splice.probe.language.context import SpecError

    with pytest.raises(SpecError) as e:
        _load(tmp_path, text)
    msg = str(e.value)
    for n in needles:
        assert n in msg, msg
    if line is not None:
        assert e.value.line == line, (e.value.line, msg)
    return e.value


HEAD = """name: t
ptx: PTX
entry: table_sum
launch: {grid: [1], block: [64]}
"""
SUM_PARAMS = """- {name: nsrc, kind: scalar, dtype: s32, value: 3}
- {name: out, kind: buffer, dtype: f32, shape: [64], role: output}
- name: dsts
  kind: table
  count: 3
  each: {dtype: f32, shape: [64], role: output}
- {name: n, kind: scalar, dtype: s32, value: 64}
"""


def _sum_spec(srcs: str) -> str:
    return HEAD + "params:\n" + srcs + SUM_PARAMS


# ---------------------------------------------------------------------------- the spec: tables

def test_table_entries_and_each_parse(tmp_path):
    s = _load(tmp_path, _sum_spec("""- name: srcs
  kind: table
  entries:
  - {dtype: f32, shape: [64], fill: {rule: uniform, seed: 1, range: [-1, 1]}}
  - {name: second, dtype: f16, shape: [8, 8], fill: {rule: uniform, seed: 2, range: [-1, 1]}}
"""))
    srcs = s.field("srcs")
    assert srcs.kind == "table" and srcs.bytes == 16 and srcs.shape == (2,) and srcs.role == "input"
    assert [e.name for e in srcs.entries] == ["srcs_0", "second"]
    assert [f.name for f in s.fields][:3] == ["srcs_0", "second", "srcs"]     # entries first
    dsts = s.field("dsts")
    assert [e.name for e in dsts.entries] == ["dsts_0", "dsts_1", "dsts_2"]
    assert s.frames == ("out", "dsts_0", "dsts_1", "dsts_2")                  # entries are outputs


def test_each_entry_gets_its_own_seed(tmp_path):
    from splice.probe.language.fill_data import buffer_bytes

    s = _load(tmp_path, _sum_spec("""- name: srcs
  kind: table
  count: 3
  each: {dtype: f32, shape: [64], fill: {rule: uniform, seed: 4, range: [-1, 1]}}
"""))
    e = s.field("srcs").entries
    assert [x.fill.seed for x in e] == [4, 5, 6]
    a, b = (buffer_bytes(x, s.seed) for x in e[:2])
    assert not np.array_equal(a, b)          # a splice that swaps two entries is caught


@pytest.mark.parametrize("srcs, needles, line", [
    ("- {name: srcs, kind: table, entries: []}\n", ("params[0].entries", "zero entries"), 6),
    ("- {name: srcs, kind: table, count: 0, each: {dtype: f32, shape: [4]}}\n", ("params[0].count", "zero entries"), 6),
    ("- {name: srcs, kind: table, count: null, each: {dtype: f32, shape: [4]}}\n", ("params[0].count", "integer"), 6),
    ("- {name: srcs, kind: table, count: 70000, each: {dtype: f32, shape: [4]}}\n", ("70000 entries",), 6),
    ("- {name: srcs, kind: table}\n", ("entries: [...]", "count: N"), 6),
    ("- {name: srcs, kind: table, count: 4096, each: {dtype: u8, bytes: 1099511627776}}\n",
     ("params[0].count", "bytes in its entries: more than"), 6),
    ("- {name: srcs, kind: table, entries: [{dtype: f32, shape: [4]}], count: 2}\n", ("entries: [...]",), 6),
    ("- {name: srcs, kind: table, role: output, entries: [{dtype: f32, shape: [4]}]}\n",
     ("params[0].role", "each entry"), 6),
    ("- {name: srcs, kind: table, entries: [{dtype: f32, shape: [4], colour: red}]}\n",
     ("entries[0].colour", "unknown key"), 6),
    ("- {name: srcs, kind: table, entries: [{dtype: f32}]}\n", ("entries[0].bytes", "missing"), 6),
    ("- {name: srcs, kind: table, entries: [7]}\n", ("entries[0]", "expected a buffer mapping"), 6),
    ("- {name: srcs, kind: table, entries: {a: 1}}\n", ("entries", "expected a list"), 6),
    ("- {name: srcs, kind: table, count: 2, each: {dtype: f32, shape: null}}\n", ("each.shape",), 6),
    ("- {name: srcs, kind: table, count: 2, each: {name: x, dtype: f32, shape: [4]}}\n",
     ("each.name", "unknown key"), 6),
    ("- {name: srcs, kind: table, entries: [{dtype: f32, shape: [4], fill: {rule: uniform, range: [1, 0]}}]}\n",
     ("entries[0].fill.range", "empty"), 6),
    ("- {name: srcs, kind: table, align: 4, entries: [{dtype: f32, shape: [4]}]}\n", ("align", "at least 8"), 6),
    ("- {name: srcs, kind: table, entries: [{name: out, dtype: f32, shape: [4]}]}\n", ("'out' repeats",), None),
])
def test_bad_tables_refused_at_their_line(tmp_path, srcs, needles, line):
    e = _refused(tmp_path, _sum_spec(srcs), *needles, line=line)
    assert e.path.endswith("s.yaml")


def test_table_in_a_struct_field(tmp_path):
    s = _load(tmp_path, """name: t
ptx: PTX
entry: table_sum
launch: {grid: [1], block: [64]}
params:
- name: cfg
  kind: struct
  size: 16
  fields:
  - {name: ptrs, offset: 8, kind: table, entries: [{dtype: u8, bytes: 16, role: output}]}
""")
    assert s.field("ptrs").offset == 8 and s.field("ptrs_0").is_output


def test_table_against_a_4_byte_parameter(tmp_path):
    from splice.probe.language.entry import check
    from splice.probe.language.context import SpecError

    bad = _sum_spec("- {name: srcs, kind: table, entries: [{dtype: f32, shape: [64]}]}\n").replace(
        "- {name: nsrc, kind: scalar", "- {name: nsrc, kind: table, entries: [{dtype: f32, shape: [4]}]}\n#", 1)
    s = _load(tmp_path, bad)
    with pytest.raises(SpecError, match="a table \\(an 8-byte pointer\\), but the PTX parameter is 4 bytes"):
        check(s, PTX.read_text(), str(PTX))


# ---------------------------------------------------------------------------- the spec: globals

LUT = """name: t
ptx: PTX
entry: lut_count
launch: {grid: [1], block: [64]}
params:
- {name: idx, kind: buffer, dtype: s32, shape: [64], fill: {rule: integers, seed: 1, range: [0, 99]}}
- {name: out, kind: buffer, dtype: f32, shape: [64], role: output}
- {name: n, kind: scalar, dtype: s32, value: 64}
globals:
"""


def test_globals_parse_with_defaults(tmp_path):
    s = _load(tmp_path, LUT + """- {name: lut, dtype: f32, shape: [16], role: input,
   fill: {rule: uniform, seed: 3, range: [-1, 1]}}
- {name: gains, dtype: f32, shape: [4], role: input, fill: module}
- {name: counter, dtype: u32, shape: [1]}
""")
    lut, gains, counter = s.globals
    assert lut.kind == "global" and lut.bytes == 64 and lut.fill.rule == "uniform" and not lut.is_output
    assert gains.fill.rule == "module" and gains.role == "input"
    assert counter.role == "inout" and counter.fill.rule == "module" and counter.is_output
    assert s.frames == ("out", "counter")


@pytest.mark.parametrize("body, needles, line", [
    ("  []\n", ("globals", "expected a list"), 10),
    ("- {dtype: f32, shape: [4]}\n", ("globals[0].name", "missing"), 10),
    ("- {name: lut, dtype: f32, shape: [16], fill: modul}\n", ("globals[0].fill", "'modul'"), 10),
    ("- {name: lut, dtype: f32, shape: [16], role: output, fill: module}\n", ("fill: module on an output",), 10),
    ("- {name: lut, dtype: f32, shape: [16], offset: 8}\n", ("globals[0].offset", "unknown key"), 10),
    ("- {name: lut, dtype: f32}\n", ("globals[0].bytes", "missing"), 10),
    ("- {name: lut, dtype: f32, shape: [16], role: sideways}\n", ("globals[0].role",), 10),
    ("- {name: out, dtype: f32, shape: [16]}\n", ("'out' repeats",), None),
    ("- {name: lut, dtype: f32, shape: [16]}\n- {name: lut, dtype: f32, shape: [16]}\n", ("'lut' repeats",), None),
    ("- 7\n", ("globals[0]", "expected a mapping"), 10),
])
def test_bad_globals_refused_at_their_line(tmp_path, body, needles, line):
    _refused(tmp_path, LUT + body, *needles, line=line)


@pytest.mark.parametrize("body, needles", [
    ("- {name: lutt, dtype: f32, shape: [16]}\n", ("declares no module variable 'lutt'", "lut, gains, counter")),
    ("- {name: lut, dtype: f32, shape: [8]}\n", ("32 bytes in the spec, but the module declares 64",)),
    ("- {name: lut, dtype: f32, shape: [16], role: output}\n", ("a .const variable cannot be written",)),
    ("- {name: counter, dtype: u32, shape: [1], role: input}\n", ("role input, but lut_count writes it",)),
])
def test_globals_checked_against_the_module(tmp_path, body, needles):
    from splice.probe.language.entry import check
    from splice.probe.language.context import SpecError

    s = _load(tmp_path, LUT + body)
    with pytest.raises(SpecError) as e:
        check(s, PTX.read_text(), str(PTX))
    for n in needles:
        assert n in str(e.value), str(e.value)
    assert e.value.line == 10
    if "lutt" not in body:
        assert "tables.ptx:" in e.value.detail and ("lut[64]" in e.value.detail or "counter" in e.value.detail)


def test_global_in_shared_space_refused(tmp_path):
    from splice.probe.language.entry import check
    from splice.probe.language.context import SpecError

    text = PTX.read_text().replace(".global .align 4 .u32 counter;", ".shared .align 4 .u32 counter;")
    s = _load(tmp_path, LUT + "- {name: counter, dtype: u32, shape: [1]}\n")
    with pytest.raises(SpecError, match="a .shared variable: the host can set only .global and .const"):
        check(s, text, "m.ptx")


def test_global_uses_follow_the_symbol():
    from splice.analysis import Kernel
    from splice.analysis.global_uses import global_uses

    k = Kernel.load(str(PTX), "lut_count")
    uses, escapes = global_uses(k, ["lut", "gains", "counter"])
    assert (uses["lut"].reads, uses["lut"].writes) == (1, 0) and uses["lut"].element() == ("f32", False)
    assert (uses["gains"].reads, uses["gains"].writes) == (1, 0)
    assert uses["counter"].reads == 1 and uses["counter"].writes == 1 and uses["counter"].element()[0] == "u32"
    assert not escapes


# ---------------------------------------------------------------------------- the CLI: exit 2, a caret

def test_cli_refusals_exit_2_with_a_caret(tmp_path, capsys):
    from splice.cli import main

    spec = tmp_path / "bad.yaml"
    spec.write_text(_sum_spec("- {name: srcs, kind: table, entries: []}\n").replace("PTX", str(PTX)))
    assert main(["probe", str(spec), str(PTX)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:6:" in err and "zero entries" in err and "^" in err and "Traceback" not in err
    spec.write_text((LUT + "- {name: countr, dtype: u32, shape: [1]}\n").replace("PTX", str(PTX)))
    assert main(["probe", str(spec), str(PTX)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:10:" in err and "no module variable 'countr'" in err and "^" in err and "Traceback" not in err


# ---------------------------------------------------------------------------- the device path, faked

def _args(kp: int, sizes: list) -> list:
    ptrs = (ctypes.c_uint64 * len(sizes)).from_address(kp)
    return [ctypes.string_at(int(p), n) for p, n in zip(ptrs, sizes)]


def _f32(addr: int, n: int) -> np.ndarray:
    if addr == 0:                # the GPU's illegal address; here not a segfault of the test run
        raise RuntimeError("the fake kernel followed a null pointer")
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(addr))


def table_sum(wrong: bool = False):
    """tables.cu's table_sum in numpy: the pointers come from the table's device memory."""
    def run(kp, _vars):
        raw = _args(kp, [8, 4, 8, 8, 4])
        srcs, out, dsts = (int.from_bytes(raw[i], "little") for i in (0, 2, 3))
        nsrc, n = (int.from_bytes(raw[i], "little", signed=True) for i in (1, 4))
        sp = np.ctypeslib.as_array((ctypes.c_uint64 * nsrc).from_address(srcs))
        dp = np.ctypeslib.as_array((ctypes.c_uint64 * nsrc).from_address(dsts))
        s = sum(_f32(int(sp[k]), n) * np.float32(k + 1) for k in range(nsrc))
        _f32(out, n)[:] = s
        for k in range(nsrc):
            _f32(int(dp[k]), n)[:] = _f32(int(sp[k]), n) + s + np.float32(wrong and k == 1)
    return run


def lut_count(wrong: bool = False):
    """tables.cu's lut_count in numpy, on the module's own variables."""
    def run(kp, var):
        raw = _args(kp, [8, 8, 4])
        idx, out = (int.from_bytes(r, "little") for r in raw[:2])
        n = int.from_bytes(raw[2], "little", signed=True)
        k = np.ctypeslib.as_array((ctypes.c_int32 * n).from_address(idx)) & 15
        v = var["lut"].view(np.float32)[k] * var["gains"].view(np.float32)[k & 3]
        _f32(out, n)[:] = v
        var["counter"].view(np.uint32)[0] += np.uint32((2 if wrong else 1) * int((v > 0).sum()))
    return run


def globals_only(wrong: bool = False):
    """tables.cu's globals_only in numpy: no parameter, the module's variables only."""
    def run(_kp, var):
        i = np.arange(256)
        scale = var["c_scale"].view(np.float32)[((i + 1) if wrong else i) & 3]
        var["g_out"].view(np.float32)[:] = var["g_in"].view(np.float32) * scale
    return run


def _fake(behaviours):
    """FakeCupy whose modules hold tables.ptx's variables (each module its own copy, gains as
    the module initialises it) behind get_global."""
    from tests.test_probe_device import FakeArray, FakeCupy

    cp = FakeCupy([None] * len(behaviours))
    plain = cp.RawModule
    cp.variables = []

    def raw_module(path):
        mod = plain(path)
        var = {"lut": np.zeros(64, np.uint8), "counter": np.zeros(4, np.uint8), "g_in": np.zeros(1024, np.uint8),
               "g_out": np.zeros(1024, np.uint8), "c_scale": np.zeros(16, np.uint8),
               "gains": np.array([1, 2, 0.5, 4], np.float32).view(np.uint8).copy()}
        cp.variables.append(var)
        k = mod.get_function("")
        behave = behaviours[len(cp.variables) - 1]
        k.run = lambda kp: behave(kp, var)
        mod.get_global = lambda name: SimpleNamespace(ptr=var[name].ctypes.data, host=var[name],
                                                      mem=SimpleNamespace(size=var[name].size))
        return mod

    cp.RawModule = raw_module
    cp.ndarray = lambda shape, dtype, memptr: FakeArray(memptr.host)
    return cp


def _outputs(spec, behaviours, repeat=2):
    from splice.probe.run.device import Device
    from splice.probe.run.session import _NullUI, outputs_stage

    cp = _fake(behaviours)
    dev = Device(spec, cp)
    dev.load("original", "o.cubin")
    dev.load("spliced", "s.cubin")
    return dev, cp, outputs_stage(spec, dev, repeat, _NullUI())


def test_table_sum_through_the_device_path():
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_sum.yaml")
    dev, _cp, out = _outputs(spec, [table_sum(), table_sum()])
    table = dev.views["srcs"].a.view(np.uint64)
    assert [int(a) for a in table] == [dev.handles[f"src_{i}"] for i in range(3)]    # the addresses
    src = [dev.views[f"src_{i}"].a.view(np.float32)[:256] for i in range(3)]
    want = src[0] + 2 * src[1] + 3 * src[2]
    assert np.array_equal(out.renders["original"]["out"].view(np.float32), want)
    assert np.array_equal(out.renders["original"]["dsts_2"].view(np.float32), src[2] + want)
    assert out.identical and out.covered and out.deterministic
    assert set(out.compare) == {"out", "dsts_0", "dsts_1", "dsts_2"}


def test_table_sum_wrong_splice_names_the_entry():
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_sum.yaml")
    _dev, _cp, out = _outputs(spec, [table_sum(), table_sum(wrong=True)])
    assert not out.identical
    differ = [k for k, c in out.compare.items() if not c["identical"]]
    assert differ == ["dsts_1"]
    c = out.compare["dsts_1"]
    assert c["elements_differ"] == 256 and c["max_abs_err"] == pytest.approx(1.0, abs=1e-4)


def test_lut_count_globals_set_per_module_and_compared():
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_lut.yaml")
    dev, cp, out = _outputs(spec, [lut_count(), lut_count()])
    lut = dev.bound["original"]["lut"][1].view(np.float32)
    assert lut.min() < 0 < lut.max() and np.array_equal(dev.bound["spliced"]["lut"][1].view(np.float32), lut)
    assert [float(x) for x in dev.bound["original"]["gains"][1].view(np.float32)] == [1, 2, 0.5, 4]
    for var in cp.variables:      # each module's own copy was set (not only the first one's)
        assert np.array_equal(var["lut"].view(np.float32), lut)
    idx = dev.views["idx"].a.view(np.int32)[:256] & 15
    v = lut[idx] * np.array([1, 2, 0.5, 4], np.float32)[idx & 3]
    assert np.array_equal(out.renders["original"]["out"].view(np.float32), v)
    # the counter starts at its fill (5) before every render: not the last render's count
    assert int(out.renders["original"]["counter"].view(np.uint32)[0]) == 5 + int((v > 0).sum())
    assert out.identical and set(out.compare) == {"out", "counter"}


def test_lut_count_wrong_counter_is_named():
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_lut.yaml")
    _dev, _cp, out = _outputs(spec, [lut_count(), lut_count(wrong=True)])
    assert [k for k, c in out.compare.items() if not c["identical"]] == ["counter"]
    assert out.compare["counter"]["dtype"] == "u32" and out.compare["counter"]["first_index"] == [0]


def test_global_size_from_the_loaded_module_checked():
    from splice.probe.run.device import Device
    from splice.probe.language.context import SpecError
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_lut.yaml")
    cp = _fake([lut_count()])
    plain = cp.RawModule

    def shrunk(path):
        mod = plain(path)
        get = mod.get_global
        mod.get_global = lambda name: SimpleNamespace(**{**vars(get(name)), "mem": SimpleNamespace(size=3)})
        return mod

    cp.RawModule = shrunk
    with pytest.raises(SpecError, match="the loaded module's variable is 3 bytes"):
        Device(spec, cp).load("original", "o.cubin")


def test_global_of_size_0_from_cupy_is_accepted():
    """cupy 14's get_global wraps the symbol as UnownedMemory of size 0 (seen on an H200): 0 is
    "unknown", not a mismatch (the declared size was checked against the PTX)."""
    from splice.probe.run.device import Device
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_lut.yaml")
    cp = _fake([lut_count()])
    plain = cp.RawModule

    def unsized(path):
        mod = plain(path)
        get = mod.get_global
        mod.get_global = lambda name: SimpleNamespace(**{**vars(get(name)), "mem": SimpleNamespace(size=0)})
        return mod

    cp.RawModule = unsized
    dev = Device(spec, cp)
    dev.load("original", "o.cubin")
    assert int(dev.render("original")["counter"].view(np.uint32)[0]) >= 5


def test_global_missing_from_the_loaded_module_is_a_user_error():
    from splice.probe.run.device import Device
    from splice.probe.language.context import SpecError
    from splice.probe.language.document import load_spec

    class CUDADriverError(Exception):
        pass

    spec = load_spec(DATA / "tables_lut.yaml")
    cp = _fake([lut_count()])
    plain = cp.RawModule

    def missing(path):
        mod = plain(path)

        def get(name):
            raise CUDADriverError("CUDA_ERROR_NOT_FOUND: named symbol not found")
        mod.get_global = get
        return mod

    cp.RawModule = missing
    with pytest.raises(SpecError, match="lut: not found in the loaded module .CUDA_ERROR_NOT_FOUND"):
        Device(spec, cp).load("original", "o.cubin")


# ---------------------------------------------------------------------------- probe init

def _filled(text: str, fills: dict) -> str:
    """The skeleton with its nulls given, in order of appearance per key."""
    out = []
    for ln in text.splitlines():
        for key, vals in fills.items():
            if f"{key}: null" in ln and vals:
                ln = ln.replace(f"{key}: null", f"{key}: {vals.pop(0)}")
        out.append(ln)
    return "\n".join(out) + "\n"


def test_init_writes_tables_from_def_use(tmp_path, capsys):
    from splice.cli import main
    from splice.probe.language.entry import check
    from splice.probe.language.context import SpecError
    from splice.probe.language.document import load_spec

    out = tmp_path / "t.yaml"
    assert main(["probe", "init", str(PTX), "--entry", "table_sum", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "2 pointer tables" in said and "TODO(s): what def-use could not decide" in said
    text = out.read_text()
    blocks = text.split("\n- name: ")
    assert "kind: table" in blocks[1] and "role: input" in blocks[1] and "dtype: f32" in blocks[1]
    dsts = blocks[3].split("\n- {")[0]
    assert "kind: table" in dsts and "role: output" in dsts and "fill:" not in dsts
    assert text.count("count: null") == 2 and "TODO: how many pointers" in text
    with pytest.raises(SpecError, match=r"params\[0\].count: expected an integer") as e:
        load_spec(out)                                   # refuses until the counts are given
    assert e.value.line == text.splitlines().index("  count: null                # TODO: how many pointers it "
                                                   "reads (a run-time bound: not decided here) (e.g. 2)") + 1
    out.write_text(_filled(text, {"grid": ["[4]"], "block": ["[64]"], "count": [3, 3], "shape": ["[256]"] * 3,
                                  "value": [3, 256]}))
    spec = load_spec(out)
    check(spec, PTX.read_text(), str(PTX))
    assert [e.name for e in spec.field("param_3").entries] == ["param_3_0", "param_3_1", "param_3_2"]
    _dev, _cp, res = _outputs(spec, [table_sum(), table_sum(wrong=True)], repeat=1)
    assert [k for k, c in res.compare.items() if not c["identical"]] == ["param_3_1"]


def test_init_writes_globals_from_def_use(tmp_path, capsys):
    from splice.cli import main
    from splice.probe.language.entry import check
    from splice.probe.language.document import load_spec

    out = tmp_path / "g.yaml"
    assert main(["probe", "init", str(PTX), "--entry", "lut_count", "-o", str(out)]) == 0
    assert "3 module globals" in capsys.readouterr().out
    text = out.read_text()
    g = text.split("globals:")[1]
    blocks = {b.split("\n")[0]: b for b in g.split("\n- name: ")[1:]}
    assert "role: input" in blocks["lut"] and "seed:" in blocks["lut"] and ".const" in blocks["lut"]
    assert "fill: module" in blocks["gains"] and "= {...}" in blocks["gains"]
    counter = blocks["counter"]
    assert "role: inout" in counter and "dtype: u32" in counter and "shape: [1]" in counter
    out.write_text(_filled(text, {"grid": ["[4]"], "block": ["[64]"], "shape": ["[256]"] * 2, "value": [256]}))
    spec = load_spec(out)
    check(spec, PTX.read_text(), str(PTX))
    assert spec.frames == ("param_1", "counter")
    _dev, _cp, res = _outputs(spec, [lut_count(), lut_count(wrong=True)], repeat=1)
    assert [k for k, c in res.compare.items() if not c["identical"]] == ["counter"]
    assert main(["probe", "init", str(PTX), "--entry", "lut_count", "--json"]) == 0
    import json

    r = json.loads(capsys.readouterr().out)
    assert [(v["name"], v["role"], v["fill"]) for v in r["globals"]] == [
        ("lut", "input", "seeded"), ("gains", "input", "module"), ("counter", "inout", "module")]


def test_init_global_whose_address_escapes_is_compared(tmp_path):
    """A variable whose address is stored (or passed on) is not followed there: the skeleton says
    so and makes it inout (compared) rather than an input whose writes would go unseen."""
    from splice.probe.language.init import skeleton

    src = """.version 8.0
.target sm_80
.address_size 64
.global .align 8 .u64 slot;
.global .align 4 .b8 data[64];
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b64 %rd<4>;
  .reg .f32 %f<2>;
  mov.u64 %rd1, data;
  st.global.u64 [slot], %rd1;
  ld.global.f32 %f1, [data];
  ret;
}
"""
    variables: list = []
    text, _rows = skeleton(src, "e.ptx", None, variables)
    roles = {v["name"]: v["role"] for v in variables}
    assert roles == {"slot": "output", "data": "inout"}
    assert "its address also reaches st.global.u64" in text


def test_globals_only_entry_without_parameters():
    """params: [] with globals: the output is a __device__ array, poisoned then compared."""
    from splice.probe.language.entry import check
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_globals_only.yaml")
    check(spec, PTX.read_text(), str(PTX))
    assert spec.params == () and spec.frames == ("g_out",)
    dev, cp, out = _outputs(spec, [globals_only(), globals_only()])
    g_in = dev.bound["original"]["g_in"][1].view(np.float32)
    want = g_in * np.arange(1, 5, dtype=np.float32)[np.arange(256) & 3]
    assert np.array_equal(out.renders["original"]["g_out"].view(np.float32), want)
    assert out.identical and out.covered
    _dev, _cp, out = _outputs(spec, [globals_only(), globals_only(wrong=True)])
    assert [k for k, c in out.compare.items() if not c["identical"]] == ["g_out"]


def test_globals_only_uncovered_output_is_reported():
    """A global output the kernel does not write holds the poison: uncovered, not "identical"."""
    from splice.probe.language.document import load_spec

    spec = load_spec(DATA / "tables_globals_only.yaml")
    lazy = lambda kp, var: None      # noqa: E731 - writes nothing
    _dev, _cp, out = _outputs(spec, [lazy, lazy])
    assert not out.covered and out.modules["original"]["g_out"]["uncovered"] == 256


def test_params_empty_without_globals_refused(tmp_path):
    _refused(tmp_path, "name: t\nptx: PTX\nentry: globals_only\nlaunch: {grid: [1], block: [1]}\nparams: []\n",
             "params", "expected a list", line=5)


def test_init_global_holding_a_pointer_is_said_and_refused(tmp_path):
    """``__device__ float* g_ptr``: the kernel loads a device address from the variable and
    follows it; a seeded fill would be a wild address, so the skeleton says so and leaves
    ``fill: null`` (the spec refuses to load there)."""
    from splice.probe.language.init import skeleton
    from splice.probe.language.context import SpecError
    from splice.probe.language.document import load_spec

    src = """.version 8.0
.target sm_80
.address_size 64
.global .align 8 .u64 g_ptr;
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b64 %rd<6>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [k_param_0];
  ld.global.u64 %rd2, [g_ptr];
  cvta.to.global.u64 %rd3, %rd2;
  ld.global.f32 %f1, [%rd3];
  cvta.to.global.u64 %rd4, %rd1;
  st.global.f32 [%rd4], %f1;
  ret;
}
"""
    variables: list = []
    text, _rows = skeleton(src, str(tmp_path / "p.ptx"), None, variables)
    assert variables[0]["fill"] == "pointer" and "loads pointers from it and dereferences them" in text
    assert "ld.global.f32" in text.split("globals:")[1]
    (tmp_path / "p.ptx").write_text(src)
    spec = tmp_path / "p.yaml"
    spec.write_text(text.replace("grid: null", "grid: [1]").replace("block: null", "block: [1]")
                    .replace("shape: null", "shape: [1]"))
    with pytest.raises(SpecError, match=r"globals\[0\].fill: expected a mapping") as e:
        load_spec(spec)
    assert e.value.line is not None


@pytest.mark.parametrize("poison, where", [("999", "params[1].poison"), ("{byte: 300}", "params[1].poison.byte")])
def test_poison_byte_out_of_range_refused(tmp_path, poison, where):
    """A byte poison above 255 was accepted, then numpy's OverflowError (a traceback) on the GPU
    run; buffers, table entries and globals share the check."""
    spec = LUT.replace("role: output}", f"role: output, poison: {poison}}}").replace("globals:\n", "")
    _refused(tmp_path, spec, where, "is not a byte", line=7)


def test_global_role_null_is_the_default(tmp_path):
    s = _load(tmp_path, LUT + "- {name: counter, dtype: u32, shape: [1], role: null}\n")
    assert s.globals[0].role == "inout" and s.frames == ("out", "counter")


def test_a_table_the_kernel_overwrites_is_restored_before_each_render():
    """A (wrong) kernel that stores into its own pointer table: the next render still sends the
    kernel to the entries' buffers, not to whatever the last launch left there."""
    from splice.probe.language.document import load_spec

    def clobber(kp, var):
        table_sum()(kp, var)
        srcs = int.from_bytes(_args(kp, [8])[0], "little")
        np.ctypeslib.as_array((ctypes.c_uint64 * 3).from_address(srcs))[:] = 0

    spec = load_spec(DATA / "tables_sum.yaml")
    dev, _cp, out = _outputs(spec, [table_sum(), clobber], repeat=2)
    assert out.identical and out.deterministic          # a null table would have crashed the second render
    assert [int(a) for a in dev.views["srcs"].a.view(np.uint64)] == [0, 0, 0]     # it did write
