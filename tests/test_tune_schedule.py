"""splice.tune.schedule: mma tiles, orders, load placement and fences on model nodes; whatever
order is asked, every dependency is kept and no accumulator's mma change order."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from splice.cut.native import parse_native
from splice.ptx import model as m
from splice.tune import schedule as sch
from splice.tune.natives import hold_templates

ROOT = Path(__file__).resolve().parents[1]
NATIVES = {
    "triton": ROOT / "recipes/native/triton_matmul_p1.ptx",         # in-place accumulators, 2 k-steps
    "enc5_k5": ROOT / "recipes/tune/native/enc5_16x32x160_c.ptx",    # D->C chains of 5 k-steps
    "enc5_zero": ROOT / "recipes/tune/native/enc5_96x32x32_zero.ptx",  # 24 chains of one mma
    "qkv": ROOT / "recipes/native/qkv_wave.ptx",                     # B loads and address arithmetic
}
ORDERS = list(sch.ORDERS) + ["interleave-2", "interleave-3"]


def body(name: str) -> list:
    held, _ = hold_templates(NATIVES[name].read_text())
    lines = held.split("\n")
    lines = ["//" if "splice-native" in ln else ln for ln in lines]
    return list(parse_native("\n".join(lines), str(NATIVES[name])).body)


@pytest.fixture(scope="module")
def bodies() -> dict:
    return {n: body(n) for n in NATIVES}


def test_tiles_of_a_chained_phase(bodies):
    tiles = sch.mma_tiles(bodies["enc5_k5"])
    assert len(tiles) == 20
    assert {t.k for t in tiles.values()} == set(range(5))           # 160 = 5 k-steps of 32
    assert {t.n for t in tiles.values()} == set(range(4))           # 32 = 4 n-tiles of 8
    assert {t.m for t in tiles.values()} == {0}
    assert len({t.chain for t in tiles.values()}) == 4


def test_tiles_of_in_place_accumulators(bodies):
    tiles = sch.mma_tiles(bodies["triton"])
    assert sorted((t.n, t.k) for t in tiles.values()) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_k_major_interleaves_the_chains(bodies):
    b = bodies["enc5_k5"]
    tiles = sch.mma_tiles(b)
    issued = [p for p in sch.schedule(b, "k-major") if p in tiles]
    assert [tiles[p].k for p in issued] == sorted(tiles[p].k for p in issued)
    issued = [p for p in sch.schedule(b, "chain-major") if p in tiles]
    assert [tiles[p].chain for p in issued] == sorted(tiles[p].chain for p in issued)


def _respects(b: list, issued: list) -> bool:
    at = {p: i for i, p in enumerate(issued)}
    return all(at[i] < at[j] for j, pj in enumerate(sch.dependencies(b)) for i in pj)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(NATIVES)), order=st.sampled_from(ORDERS), loads=st.sampled_from(sch.LOADS))
def test_every_order_keeps_dependencies_and_accumulator_order(bodies, name, order, loads):
    b = bodies[name]
    issued = sch.schedule(b, order, loads)
    assert sorted(issued) == list(range(len(b)))
    assert _respects(b, issued)
    assert sch.chain_orders(b, issued) == sch.chain_orders(b)


def test_loads_hoisted_sunk_split(bodies):
    b = bodies["qkv"]
    loads = [i for i, n in enumerate(b) if n.opcode == "ld" and ".global" in n.modifiers]
    first_mma = min(sch.mma_tiles(b))
    hoisted = sch.schedule(b, "n-major", "hoisted")
    assert all(hoisted.index(i) < hoisted.index(first_mma) for i in loads)
    sunk = sch.schedule(b, "n-major", "sunk")
    users = {i: min(j for j, pj in enumerate(sch.dependencies(b)) if i in pj) for i in loads}
    assert all(sunk.index(users[i]) == sunk.index(i) + 1 for i in loads)     # right before its first use
    assert sch.schedule(b, "n-major", "split") != hoisted


def test_fence_points(bodies):
    b = bodies["enc5_k5"]
    tiles = sch.mma_tiles(b)
    issued = sch.schedule(b, "k-major")
    assert sch.fence_points(issued, tiles, "none") == (False, set())
    assert sch.fence_points(issued, tiles, "start") == (True, set())
    assert sch.fence_points(issued, tiles, "both") == (True, {len(issued) - 1})
    start, after = sch.fence_points(issued, tiles, "every-k")
    assert not start and len(after) == 5 and len(issued) - 1 in after
    assert [tiles[issued[a]].k for a in sorted(after)] == list(range(5))


def test_control_flow_is_not_reordered():
    nat = parse_native("$top:\nadd.u32 %out0, %in0, 1;\nbra $top;\n", "<n>")
    with pytest.raises(sch.Unschedulable, match="control flow"):
        sch.schedule(list(nat.body), "k-major")


def test_ordered_statements_stay_put():
    nat = parse_native("mov.u64 %t, %clock64;\nadd.u32 %out0, %in0, 1;\nst.global.u32 [%in1], %in0;\n"
                       "mov.u64 %u, %clock64;\n", "<n>", context={})
    b = list(nat.body)
    assert sch.schedule(b, "k-major", "hoisted") == [0, 1, 2, 3]
    assert isinstance(b[0], m.Instruction)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown mma order"):
        sch.order_key("z-major")
    with pytest.raises(ValueError, match="unknown load placement"):
        sch.schedule([], "original", "early")
    with pytest.raises(ValueError, match="unknown fence"):
        sch.fence_points([], {}, "middle")
