"""The probe's device path without a GPU: argument packing (one kernelParams pointer per
.param, each at its alignment), the fills per element type, and the named stages driven end to
end through a fake cupy whose "device memory" is host memory -- the fake kernels read their
arguments back from the kernelParams array exactly as the driver would, so a wrong packing
gives a wrong GEMM."""
from __future__ import annotations

import ctypes
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _spec(name):
    from splice.probe.spec import load_spec

    return load_spec(ROOT / "probes" / name)


# ---------------------------------------------------------------------------- argument packing

def _args(kernel_params: int, sizes: list) -> list:
    """What the driver reads: kernelParams[i] points at .param i's bytes."""
    ptrs = (ctypes.c_uint64 * len(sizes)).from_address(kernel_params)
    return [ctypes.string_at(int(p), n) for p, n in zip(ptrs, sizes)]


def test_triton_14_params_get_14_pointers():
    from splice.probe.inputs import ArgPack

    spec = _spec("matmul_sm80.yaml")
    handles = {"a": 0x7000_0000_0000, "b": 0x7000_0010_0000, "c": 0x7000_0020_0000}
    pack = ArgPack(spec, handles)
    assert len(pack.pointers) == 14 == len(spec.params)
    raw = _args(pack.kernel_params, [p.size for p in spec.params])
    assert [int.from_bytes(r, "little") for r in raw[:3]] == list(handles.values())
    assert [int.from_bytes(r, "little", signed=True) for r in raw[3:12]] == [512] * 3 + [512, 1, 512, 1, 512, 1]
    assert raw[12] == raw[13] == bytes(8)
    for p, ptr in zip(spec.params, pack.pointers):
        assert int(ptr) % max(8, p.align) == 0


def test_legacy_struct_is_one_pointer_to_its_bytes():
    from splice.probe.inputs import ArgPack, param_bytes

    spec = _spec("enc5.yaml")
    handles = {f.name: 0x7F00_0000_0000 + 0x100 * f.offset for f in spec.fields if f.kind != "scalar"}
    pack = ArgPack(spec, handles)
    assert len(pack.pointers) == 1
    assert _args(pack.kernel_params, [144]) == [param_bytes(spec, handles)]


def test_sequence_overrides_scalars_per_launch():
    from splice.probe.inputs import ArgPack
    from splice.probe.spec import parse_spec

    d = {"name": "t", "ptx": "x.ptx", "entry": "k", "launch": {"grid": [2], "block": [32],
         "sequence": [{"kt": 0}, {"kt": 1}]},
         "params": [{"name": "out", "kind": "buffer", "dtype": "f32", "shape": [4], "role": "inout"},
                    {"name": "kt", "kind": "scalar", "dtype": "u32", "value": 7},
                    {"name": "h", "kind": "scalar", "dtype": "f16", "value": 1.5},
                    {"name": "bf", "kind": "scalar", "dtype": "bf16", "value": -2.0},
                    {"name": "d", "kind": "scalar", "dtype": "f64", "value": 0.25},
                    {"name": "c", "kind": "scalar", "dtype": "s8", "value": -3}]}
    spec = parse_spec(d, "t.yaml")
    assert spec.launch.launches == 2
    packs = [ArgPack(spec, {"out": 0x1000}, dict(step)) for step in spec.launch.sequence]
    sizes = [8, 4, 2, 2, 8, 1]
    got = [_args(p.kernel_params, sizes) for p in packs]
    assert [int.from_bytes(g[1], "little") for g in got] == [0, 1]
    assert np.frombuffer(got[0][2], "<f2")[0] == 1.5 and got[0][3] == (0xC000).to_bytes(2, "little")
    assert np.frombuffer(got[0][4], "<f8")[0] == 0.25 and got[0][5] == bytes([0xFD])


# ---------------------------------------------------------------------------- fills

@pytest.mark.parametrize("dtype, fill, check", [
    ("bf16", {"rule": "uniform", "range": [-1, 1]}, lambda v: (np.abs(v) <= 1).all()),
    ("tf32", {"rule": "normal", "std": 2.0}, lambda v: (v.view(np.uint32) & 0x1FFF == 0).all()),
    ("s8", {"rule": "integers", "range": [-3, 3]}, lambda v: v.min() >= -3 and v.max() <= 3),
    ("u16", {"rule": "arange", "start": 65530}, lambda v: v[6] == 0 and v[5] == 65535),
    ("e5m2", {"rule": "e5m2", "max_code": 0x40}, lambda v: (v & 0x7F).max() <= 0x40),
    ("e4m3", {"rule": "uniform", "range": [-0.5, 0.5]}, lambda v: ~np.isin(v, [0x7F, 0xFF]).any()),
    ("f64", {"rule": "constant", "value": 3.5}, lambda v: (v == 3.5).all()),
])
def test_fills_per_element_type(dtype, fill, check):
    from splice.probe import dtypes as dt
    from splice.probe.inputs import buffer_bytes
    from splice.probe.spec import parse_spec

    d = {"name": "t", "ptx": "x.ptx", "entry": "k", "launch": {"grid": [1], "block": [1]},
         "params": [{"name": "x", "kind": "buffer", "dtype": dtype, "shape": [300], "role": "inout",
                     "fill": {"seed": 4, **fill}}]}
    f = parse_spec(d, "t.yaml").field("x")
    raw = buffer_bytes(f, 9)
    t = dt.TYPES[f.dtype]
    v = raw.view(t.storage)
    assert v.size == 300 and check(dt.as_float64(v, t) if dtype == "bf16" else v)
    assert np.array_equal(raw, buffer_bytes(f, 9))             # deterministic from the seeds


def test_fill_from_npy(tmp_path):
    from splice.probe.inputs import buffer_bytes
    from splice.probe.spec import parse_spec

    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "x.npy", arr)
    d = {"name": "t", "ptx": "x.ptx", "entry": "k", "launch": {"grid": [1], "block": [1]},
         "params": [{"name": "x", "kind": "buffer", "dtype": "f32", "shape": [3, 4], "role": "inout",
                     "fill": {"rule": "from", "path": "x.npy"}}]}
    f = parse_spec(d, str(tmp_path / "t.yaml")).field("x")
    assert np.array_equal(buffer_bytes(f, 0).view(np.float32).reshape(3, 4), arr)


# ---------------------------------------------------------------------------- a fake cupy

class FakeArray:
    """A 'device' array whose pointer is its host memory, so fake kernels can use it."""

    def __init__(self, host):
        self.a = host
        self.data = SimpleNamespace(ptr=host.ctypes.data)
        self.size = host.size

    def __getitem__(self, sl):
        return FakeArray(self.a[sl])

    def set(self, data, stream=None):
        self.a[...] = np.asarray(data).reshape(self.a.shape)

    def get(self, stream=None):
        return self.a.copy()

    def fill(self, v):
        self.a[...] = v

    def copy(self):
        return FakeArray(self.a.copy())


class FakeKernel:
    def __init__(self, run):
        self.run = run
        self.kernel = SimpleNamespace(ptr=id(self))
        self.max_dynamic_shared_size_bytes = 0


class FakeCupy:
    """Just what Device and the stages use.  ``behaviours`` is the kernel of each module loaded,
    in load order (original, spliced)."""

    uint8 = np.uint8

    def __init__(self, behaviours):
        self.behaviours = list(behaviours)
        self.loaded = []
        self.launches = []
        fns = {}
        self._fns = fns
        clock = {"t": 0.0}

        class Event:
            done = False          # the fake runs every launch at once: never ahead of the host

            def record(self, stream=None):
                self.t = clock["t"]

            def synchronize(self):
                pass

        def launch(fn, gx, gy, gz, bx, by, bz, smem, stream, kp, extra):
            self.launches.append(((gx, gy, gz), (bx, by, bz), smem))
            clock["t"] += 1.0
            fns[fn].run(kp)

        class _Stream:
            ptr = 0

            def synchronize(self):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *a):
                return False

        stream = _Stream()
        self.cuda = SimpleNamespace(
            runtime=SimpleNamespace(getDeviceCount=lambda: 1),
            Device=lambda *a: SimpleNamespace(synchronize=lambda: None, compute_capability="90"),
            Stream=SimpleNamespace(null=stream),
            driver=SimpleNamespace(launchKernel=launch), Event=Event,
            get_elapsed_time=lambda a, b: b.t - a.t)
        self.cuda.Stream = lambda non_blocking=False: stream
        self.cuda.Stream.null = stream

    uint64 = np.uint64

    def zeros(self, n, dtype=np.uint8):
        return FakeArray(np.zeros(n, dtype=dtype))

    def full(self, shape, value, dtype=np.uint8):
        return FakeArray(np.full(shape, value, dtype=dtype))

    def asnumpy(self, a):
        return a.a.copy()

    def RawModule(self, path):
        if Path(path).is_file() and b"splice_timing_spacer" in Path(path).read_bytes():   # the timing's spacer
            k = FakeKernel(lambda kp: None)
            self._fns[k.kernel.ptr] = k
            return SimpleNamespace(get_function=lambda entry: k)
        k = FakeKernel(self.behaviours[len(self.loaded)])
        self.loaded.append(path)
        self._fns[k.kernel.ptr] = k
        return SimpleNamespace(get_function=lambda entry: k)


def gemm_kernel(wrong: bool = False):
    """splice_gemm_f16f32 in numpy, arguments read through kernelParams."""
    def run(kp):
        raw = _args(kp, [8, 8, 8, 4, 4, 4, 4, 4, 4])
        pa, pb, pc = (int.from_bytes(r, "little") for r in raw[:3])
        m, n, k, lda, ldb, ldc = (int.from_bytes(r, "little", signed=True) for r in raw[3:])
        A = np.ctypeslib.as_array((ctypes.c_uint16 * (m * lda)).from_address(pa)).view(np.float16).reshape(m, lda)
        B = np.ctypeslib.as_array((ctypes.c_uint16 * (n * ldb)).from_address(pb)).view(np.float16).reshape(n, ldb)
        C = np.ctypeslib.as_array((ctypes.c_float * (m * ldc)).from_address(pc)).reshape(m, ldc)
        C[:, :n] = A[:, :k].astype(np.float32) @ B[:, :k].astype(np.float32).T
        if wrong:
            C[5, 9] += 1.0
    return run


def _small_gemm(tmp_path) -> Path:
    text = (ROOT / "probes/gemm_sm80.yaml").read_text().replace("1024", "64")
    text = text.replace("grid: [32, 32]", "grid: [2, 2]").replace("ptx: corpus/", f"ptx: {ROOT}/corpus/")
    p = tmp_path / "gemm_sm80.yaml"
    p.write_text(text)
    return p


def test_outputs_stage_with_a_fake_device(tmp_path):
    from splice.probe.device import Device
    from splice.probe.session import outputs_stage, _NullUI
    from splice.probe.spec import load_spec

    spec = load_spec(_small_gemm(tmp_path))
    cp = FakeCupy([gemm_kernel(), gemm_kernel(wrong=True)])
    dev = Device(spec, cp)
    dev.load("original", "o.cubin")
    dev.load("spliced", "s.cubin")
    out = outputs_stage(spec, dev, 2, _NullUI())
    assert cp.launches[0] == ((2, 2, 1), (128, 1, 1), 0) and len(cp.launches) == 6   # 2 x 2 + 2 coverage
    A = dev.views["A"].a.view(np.float16).reshape(64, 64).astype(np.float32)
    B = dev.views["B"].a.view(np.float16).reshape(64, 64).astype(np.float32)
    got = out.renders["original"]["C"].view(np.float32).reshape(64, 64)
    assert np.array_equal(got, A @ B.T)                      # the packing reached the kernel
    assert out.covered and out.deterministic and not out.identical
    c = out.compare["C"]
    assert c["elements_differ"] == 1 and c["first_index"] == [5, 9] and c["dtype"] == "f32"
    assert c["max_abs_err"] == pytest.approx(1.0) and c["max_ulp"] > 1
    assert out.maps["C"].shape == (64, 64) and out.maps["C"][5, 9] > 0


def test_uncovered_output_is_reported(tmp_path):
    from splice.probe.device import Device
    from splice.probe.session import outputs_stage, _NullUI
    from splice.probe.spec import load_spec

    spec = load_spec(_small_gemm(tmp_path))
    lazy = lambda kp: None      # noqa: E731 - writes nothing
    dev = Device(spec, FakeCupy([lazy, lazy]))
    dev.load("original", "o")
    dev.load("spliced", "s")
    out = outputs_stage(spec, dev, 1, _NullUI())
    assert out.identical and not out.covered
    assert out.modules["original"]["C"]["uncovered"] == 64 * 64
    assert out.modules["original"]["C"]["first_uncovered"] == [0, 0]


@pytest.mark.needs("ptxas")
def test_run_probe_end_to_end_with_a_fake_device(tmp_path):
    """Recipe -> check -> build (real ptxas, sm_90 from the 'device') -> inputs -> outputs ->
    timing, and the command layer's PNG for the 2-D output that differs."""
    from splice.commands.probe import write_maps
    from splice.probe.modules import resolve
    from splice.probe.session import ProbeOptions, run_probe

    spec = _small_gemm(tmp_path)
    pair = resolve(str(ROOT / "tests/data/recipes/gemm_f16f32_p1_wrong.yaml"))
    pair.spec_path = spec
    cp = FakeCupy([gemm_kernel(), gemm_kernel(wrong=True), gemm_kernel()])    # original, spliced, control
    run = run_probe(pair, ProbeOptions(runs=3, warmup=1, roofline=False), cp=cp)
    r = run.result
    assert r["build_arch"] == "sm_90" and not r["ok"] and not r["identical"]
    assert r["compare"]["frame"] == ["C"] and r["compare"]["first_index"] == [5, 9]
    assert r["timing"]["original"]["events"]["runs"] == 3 and r["timing"]["launches_per_frame"] == 1
    assert r["timing"]["control"]["events"]["runs"] == 3 and r["timing"]["control_frame_equal"] is True
    assert r["timing"]["verdict"] in ("faster", "slower", "indistinguishable")
    assert r["timing"]["device"]["state"] == "unknown" and r["timing"]["method"]["cache"] == "warm"
    paths = write_maps(run.maps, tmp_path, "gemm")
    assert Path(paths["C"]).read_bytes()[:4] == b"\x89PNG"
    import io

    from rich.console import Console

    from splice.report.probe import print_report

    buf = io.StringIO()
    print_report({**r, "report_dir": str(tmp_path)}, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "differences (original vs spliced)" in text and "[5, 9]" in text and "DIFFERENCE FOUND" in text
    assert "frame time" in text


def test_probe_arch_builds_for_the_device():
    from splice.errors import SpliceError
    from splice.probe.session import probe_arch

    spec = _spec("matmul_sm80.yaml")
    assert probe_arch(spec, "sm_90", "sm_80") == "sm_90"          # an sm_80 recipe on Hopper
    assert probe_arch(spec, "sm_90", "sm_90a") == "sm_90a"
    with pytest.raises(SpliceError):
        probe_arch(spec, "sm_80", "sm_90a")


def test_cluster_launch_config_layout():
    from splice.probe.device import _Attr, _Config, launch_config

    assert ctypes.sizeof(_Attr) == 72                       # CUlaunchAttribute
    cfg, attr = launch_config((4, 2, 1), (128, 1, 1), 65536, 0, (2, 1, 1))
    assert (cfg.gridDimX, cfg.blockDimX, cfg.sharedMemBytes, cfg.numAttrs) == (4, 128, 65536, 1)
    assert attr[0].id == 4 and list(attr[0].value.clusterDim) == [2, 1, 1]
    assert ctypes.sizeof(_Config) == 56


def test_probe_init_writes_a_spec_that_loads_after_sizes(tmp_path, capsys):
    """The skeleton for the Triton kernel: roles and element types from the analysis; after
    filling in only the nulls it loads and passes the .param check."""
    from splice.cli import main
    from splice.probe.check import check
    from splice.probe.spec import load_spec

    out = tmp_path / "t.yaml"
    ptx = ROOT / "corpus/triton/matmul_sm80.ptx"
    assert main(["probe", "init", str(ptx), "-o", str(out)]) == 0
    text = out.read_text()
    assert "role: input" in text and "role: output" in text and "dtype: f16" in text
    assert "block: [128, 1, 1]" in text
    vals = iter([512, 512, 512, 512, 1, 512, 1, 512, 1])
    lines = []
    for ln in text.splitlines():
        if "grid: null" in ln:
            ln = "  grid: [256]"
        elif "dynamic: null" in ln:
            ln = "    dynamic: 4096"
        elif "shape: null" in ln:
            ln = "  shape: [512, 512]"
        elif "value: null" in ln:
            ln = ln.replace("value: null", f"value: {next(vals)}")
        lines.append(ln)
    out.write_text("\n".join(lines) + "\n")
    spec = load_spec(out)
    check(spec, ptx.read_text(), str(ptx))
    assert [f.role for f in spec.fields if f.kind == "buffer"] == ["input", "input", "output"]


def test_written_poison_value_is_not_uncovered(tmp_path):
    """A kernel that writes the poison's own bit pattern has still written it: the coverage
    render with the complement poison tells the two apart."""
    from splice.probe.device import Device
    from splice.probe.session import outputs_stage, _NullUI
    from splice.probe.spec import load_spec

    spec = load_spec(_small_gemm(tmp_path))

    def writes_ff_half(kp):
        pc = int.from_bytes(_args(kp, [8, 8, 8])[2], "little")
        C = np.ctypeslib.as_array((ctypes.c_uint8 * (64 * 64 * 4)).from_address(pc))
        C[: C.size // 2] = 0xFF                       # NaN bits, written on purpose

    dev = Device(spec, FakeCupy([writes_ff_half, writes_ff_half]))
    dev.load("original", "o")
    dev.load("spliced", "s")
    out = outputs_stage(spec, dev, 1, _NullUI())
    assert out.modules["original"]["C"]["uncovered"] == 64 * 64 // 2
    assert out.modules["original"]["C"]["first_uncovered"] == [32, 0]


def test_a_kernel_that_faults_on_the_gpu_is_a_message_not_a_traceback(tmp_path):
    """An illegal address in the spliced module (a native that writes out of bounds) raises
    cupy's CUDADriverError: the probe stops with the module named (exit 2 through the CLI)."""
    from splice.errors import SpliceError
    from splice.probe.device import Device
    from splice.probe.spec import load_spec

    class CUDADriverError(Exception):
        pass

    def faults(kp):
        raise CUDADriverError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")

    spec = load_spec(_small_gemm(tmp_path))
    dev = Device(spec, FakeCupy([gemm_kernel(), faults]))
    dev.load("original", "o.cubin")
    dev.load("spliced", "s.cubin")
    dev.render("original")
    with pytest.raises(SpliceError) as e:
        dev.render("spliced")
    assert "the spliced module failed on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS" in str(e.value)
    assert "gemm_sm80.yaml" in str(e.value)

    def other(kp):
        raise ValueError("not a CUDA error")

    dev2 = Device(spec, FakeCupy([other]))
    dev2.load("original", "o.cubin")
    with pytest.raises(ValueError):
        dev2.render("original")


def test_an_inout_buffer_that_starts_all_zeros_is_restored_each_render(tmp_path):
    """A zeros fill keeps no host copy (the buffer is allocated zeroed), and the render's
    restore of every inout looked for that copy: a KeyError traceback on the GPU for any spec
    with an inout buffer and no fill (found by a probe of nvcc's 128-bit atomics)."""
    from splice.probe.device import Device
    from splice.probe.session import outputs_stage, _NullUI
    from splice.probe.spec import load_spec

    (tmp_path / "m.ptx").write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                                    ".visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n")
    (tmp_path / "s.yaml").write_text(
        "name: k\nptx: m.ptx\nentry: k\nlaunch: {grid: [1, 1, 1], block: [32, 1, 1]}\n"
        "params:\n- {name: param_0, kind: buffer, dtype: u8, shape: [64], role: inout}\nframe: all\n")

    def bump(kp):   # every byte + 1: a render that did not start from zeros would differ
        (raw,) = _args(kp, [8])
        a = np.ctypeslib.as_array((ctypes.c_uint8 * 64).from_address(int.from_bytes(raw, "little")))
        a += 1

    spec = load_spec(tmp_path / "s.yaml")
    dev = Device(spec, FakeCupy([bump, bump]))
    dev.load("original", "o")
    dev.load("spliced", "s")
    out = outputs_stage(spec, dev, 2, _NullUI())
    assert out.identical and out.deterministic
    assert np.array_equal(out.renders["original"]["param_0"], np.ones(64, dtype=np.uint8))
