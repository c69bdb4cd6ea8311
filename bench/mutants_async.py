"""Mutants of the asynchronous proxy and the cluster, launched on one CTA of an sm_90 GPU.

A tensor map (``cp.async.bulk.tensor``, the tensor prefetch) is encoded by the host for each
launch (``cuTensorMapEncodeTiled``: a 1-D tensor of ``TENSOR_ELEMS`` u32 in the scratch buffer
at ``TENSOR_OFFSET``, boxes of ``BOX`` elements) and written into the input buffer at
``TMAP_OFFSET``; the kernel reads it there through its generic address, after the proxy fence
that makes the host's bytes visible to the tensor-map proxy (ISA 9.7.13.4.7 ``fence.proxy``).

Every lane copies its own box: 16 bytes at smem+128T (a tensor copy's shared address must be
128-byte aligned) from or to the tensor's elements 32T..32T+3 (g+8192+128T), so no lane's copy
touches another lane's bytes.  A copy into shared memory completes on the mbarrier at
smem+3136 (outside every box), which every lane arrives on with its 16 expected bytes and waits
for in a ``try_wait`` loop: the phase completes once all 32 lanes arrived and every copy landed.

A kernel launched without a cluster runs in a cluster of one CTA, so ``.shared::cluster``
addresses of the executing CTA (``mapa`` to rank 0) are valid: ``st.async``, ``red.async`` and
``ld/st.shared::cluster`` run on the CTA's own shared memory.

``multimem`` needs a multicast object (``cuMulticastCreate``, bound across the devices of an
NVLink domain) that the bench does not set up: those mutants get a CPU verdict and ptxas only.
"""
from __future__ import annotations

TMAP_OFFSET = 12288                    # bytes into the input buffer: the tensor map (128 bytes)
TENSOR_OFFSET, TENSOR_ELEMS, BOX = 8192, 1024, 4
MBAR = "[%rd10+3136]"

# %rd22 smem+128T (this lane's box)  %rd23 g+8192+128T (its tensor elements)
# %rd24 the tensor map's generic address  %r42 the box's first coordinate (32T)
PROLOGUE = ("setp.eq.u32 %p2, %r1, 0;", f"@%p2 mbarrier.init.shared.b64 {MBAR}, 32;",
            "mul.wide.u32 %rd21, %r1, 128;", "add.s64 %rd22, %rd10, %rd21;", "add.s64 %rd23, %rd3, %rd21;",
            f"add.s64 %rd23, %rd23, {TENSOR_OFFSET};", f"add.s64 %rd25, %rd1, {TMAP_OFFSET};",
            "cvta.global.u64 %rd24, %rd25;", "shl.b32 %r42, %r1, 5;",
            "fence.proxy.tensormap::generic.acquire.gpu [%rd24], 128;")

_WAIT = ("$L_async_wait:", f"mbarrier.try_wait.parity.shared.b64 %p3, {MBAR}, 0;", "@!%p3 bra $L_async_wait;")


def _tensor_store() -> list:
    """shared::cta -> global through the tensor map, completed by a bulk group."""
    name = "cp.async.bulk.tensor.global"
    body = ("st.shared.u32 [%rd22+4], %r10;", "fence.proxy.async.shared::cta;",
            "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd24, {%r42}], [%rd22];",
            "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;", "ld.global.u32 %r20, [%rd23+4];")
    return [
        (name, "source store moved after the wait", "different", body, (("move", 0, 4),)),
        (name, "source store moved after the copy", "racy", body, (("move", 0, 2),)),
        (name, "proxy fence dropped", "racy", body, (("drop", 1),)),
        (name, "destination load moved before the copy", "different", body, (("move", 5, 2),)),
        (name, "destination load moved before the wait", "racy", body, (("move", 5, 4),)),
    ]


def _loads_into_shared() -> list:
    """global -> shared::cluster (this CTA) completing the mbarrier's transactions: the tensor
    copy and the plain bulk copy; ``st.async`` / ``red.async`` of one word."""
    out = []
    into = "shared::cluster.global.mbarrier::complete_tx::bytes"
    for name, cp in (("cp.async.bulk.tensor.shared::cluster",
                      f"cp.async.bulk.tensor.1d.{into} [%rd22], [%rd24, {{%r42}}], {MBAR};"),
                     ("cp.async.bulk.shared::cluster", f"cp.async.bulk.{into} [%rd22], [%rd23], 16, {MBAR};")):
        # 0 store, 1 proxy fence, 2 arrive.expect_tx, 3 copy, 4-6 the wait loop, 7 load
        body = ("st.shared.u32 [%rd22+4], %r10;", "fence.proxy.async.shared::cta;",
                f"mbarrier.arrive.expect_tx.shared.b64 %rd30, {MBAR}, 16;", cp, *_WAIT,
                "ld.shared.u32 %r20, [%rd22+4];")
        far = ("st.shared.u32 [%rd10+3104], %r18;",) + body[1:]
        out += [
            (name, "load of the box moved before the copy", "different", body, (("move", 7, 2),)),
            (name, "load of the box moved before the wait", "racy", body, (("move", 7, 4),)),
            (name, "store into the box moved after the wait", "different", body, (("move", 0, 6),)),
            (name, "store into the box moved after the copy", "racy", body, (("move", 0, 3),)),
            (name, "proxy fence before the copy dropped", "racy", body, (("drop", 1),)),
            (name, "store outside every box (uniform) moved after the copy", "equal", far, (("move", 0, 3),)),
        ]
    for name, op in (("st.async", "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32"),
                     ("red.async", "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32")):
        # 0 mapa, 1 arrive.expect_tx, 2 the asynchronous store, 3-5 the wait loop, 6 load
        body = ("mapa.shared::cluster.u64 %rd36, %rd11, 0;", f"mbarrier.arrive.expect_tx.shared.b64 %rd30, {MBAR}, 4;",
                f"{op} [%rd36], %r10, {MBAR};", *_WAIT, "ld.shared.u32 %r20, [%rd11];")
        out += [
            (name, "load of its word moved before the store", "different", body, (("move", 6, 1),)),
            (name, "load of its word moved before the wait", "racy", body, (("move", 6, 3),)),
        ]
    return out


def _others() -> list:
    return [
        ("cp.async.bulk.prefetch.tensor", "tensor prefetch moved across a store", "equal",
         ("st.global.u32 [%rd14], %r10;", "cp.async.bulk.prefetch.tensor.1d.L2.global [%rd24, {%r42}];"),
         (("swap", 0, 1),)),
        ("ld.shared::cluster", "cluster-shared load and store of its word, swapped", "different",
         ("st.shared::cluster.u32 [%rd11], %r10;", "ld.shared::cluster.u32 %r20, [%rd11];"), (("swap", 0, 1),)),
    ]


def launched() -> list:
    """(form, scenario, truth, cut, edits) of the mutants the GPU runs, with ``PROLOGUE``."""
    return _tensor_store() + _loads_into_shared() + _others()


def multicast() -> list:
    """The multimem mutants: no multicast object on the bench, CPU verdict and ptxas only."""
    return [
        ("multimem.st", "multicast store and load of its word, swapped", "racy",
         ("multimem.st.relaxed.gpu.global.u32 [%rd14], %r10;", "ld.global.u32 %r20, [%rd14];"), (("swap", 0, 1),)),
        ("multimem.ld_reduce", "multicast load-reduce and store, swapped", "racy",
         ("st.global.u32 [%rd14], %r10;", "multimem.ld_reduce.relaxed.gpu.global.add.u32 %r20, [%rd14];"),
         (("swap", 0, 1),)),
    ]


def encode_tensor_map(g_address: int) -> bytes:
    """The 128 bytes of the tensor map over the scratch buffer at ``g_address`` (host side,
    cuda-bindings' ``cuTensorMapEncodeTiled``); raises RuntimeError with the CUDA result."""
    try:
        from cuda.bindings import driver
    except ImportError:                      # cuda-python before 12.6 names the module cuda.cuda
        from cuda import cuda as driver      # type: ignore[no-redef]
    u32, u64 = driver.cuuint32_t, driver.cuuint64_t
    err, tmap = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT32, 1, g_address + TENSOR_OFFSET,
        [u64(TENSOR_ELEMS)], [], [u32(BOX)], [u32(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if int(err) != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled: {err}")
    words = [int(w) for w in tmap.opaque]
    return b"".join(w.to_bytes(8, "little") for w in words)
