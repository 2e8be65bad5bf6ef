"""Olympus passes, IR in / IR out on textual .mlir, with the utilisation and throughput model."""

from pathlib import Path

import pytest
from xdsl.parser import Parser

from loom.dialects import context
from loom.dialects.olympus import BundleOp, ChannelOp, KernelOp, PcOp
from loom.errors import LoomError
from loom.passes import Pipeline
from loom.passes.olympus_model import analyse, plm_brams
from loom.platform import load_platform

HERE = Path(__file__).parent / "olympus"
P256, P64 = str(HERE / "platform_256.json"), str(HERE / "platform_64.json")
Q256, Q64 = f'"{P256}"', f'"{P64}"'  # quoted: pipeline option strings


def load(name):
    m = Parser(context(), (HERE / name).read_text()).parse_module()
    m.verify()
    return m


def apply(m, text):
    Pipeline.parse(text).run(m)
    m.verify()
    return Parser(context(), str(m)).parse_module()  # the result prints and parses back


def ops(m, cls):
    return [o for o in m.walk() if isinstance(o, cls)]


def test_sanitize_adds_one_pc_per_memory_channel_all_id_0_and_unit_layouts():
    m = apply(load("one_kernel.mlir"), "olympus-sanitize")
    pcs = ops(m, PcOp)
    assert len(pcs) == 3 and {p.id.value.data for p in pcs} == {0}
    assert all(c.n_lanes == 1 and c.lanes is not None for c in ops(m, ChannelOp))
    assert '"olympus.pc"(%a) <{id = 0 : i64}>' in str(m)
    again = apply(m, "olympus-sanitize")  # idempotent
    assert len(ops(again, PcOp)) == 3


def test_channel_reassignment_gives_distinct_ids():
    m = apply(load("one_kernel.mlir"), f"olympus-sanitize,olympus-channel-reassignment{{platform={Q256}}}")
    assert sorted(p.id.value.data for p in ops(m, PcOp)) == [0, 1, 2]
    plat = load_platform(P256)
    before = analyse(apply(load("one_kernel.mlir"), "olympus-sanitize"), plat)
    after = analyse(m, plat)
    # complex depth is bytes: 8000 B of i64 = 1000 elements; 3 x 1000 beats on PC 0 -> 1000 per PC
    assert before.pcs[0][0] == 3000 and after.pcs[1][0] == 1000
    assert after.items_per_second == pytest.approx(3 * before.items_per_second)


def test_bus_widening_64_bit_data_on_a_256_bit_bus_gives_4_lanes():
    m = apply(load("one_kernel.mlir"), f"olympus-sanitize,olympus-bus-widening{{platform={Q256}}}")
    ks = ops(m, KernelOp)
    assert len(ks) == 4 and sorted(k.lane.value.data for k in ks) == [0, 1, 2, 3]
    chans = ops(m, ChannelOp)
    assert all(c.n_lanes == 4 and c.width == 256 for c in chans)
    assert "!olympus.channel<i256>" in str(m)
    plat = load_platform(P256)
    naive = analyse(apply(load("one_kernel.mlir"), "olympus-sanitize"), plat)
    wide = analyse(m, plat)
    assert naive.efficiency() == pytest.approx(0.25) and wide.efficiency() == pytest.approx(1.0)
    assert wide.items_per_second == pytest.approx(4 * naive.items_per_second)


def test_replication_stops_at_the_resource_limit():
    # vadd uses 15000 of 100000 LUT (and 12 of 100 DSP): 80% allows floor(80000 / 15000) = 5 copies
    m = apply(load("one_kernel.mlir"), f"olympus-sanitize,olympus-replication{{platform={Q256}}}")
    ks = ops(m, KernelOp)
    assert len(ks) == 5 and sorted(k.replica.value.data if k.replica else 0 for k in ks) == list(range(5))
    assert {p.id.value.data for p in ops(m, PcOp)} == {0}  # replicated PCs keep their ids
    report = analyse(m, load_platform(P256))
    assert report.utilization("lut") == pytest.approx(0.75) and report.utilization("dsp") == pytest.approx(0.6)
    m2 = apply(load("one_kernel.mlir"), f"olympus-sanitize,olympus-replication{{platform={Q256} limit=0.5}}")
    assert len(ops(m2, KernelOp)) == 3  # 45% LUT; a fourth copy would be 60%


def test_bus_packing_reaches_95_percent_where_the_naive_layout_gets_45():
    plat = load_platform(P64)
    naive = apply(load("iris_pair.mlir"), "olympus-sanitize")
    # complex depth is bytes: 1000 elements each; naive: one element per 64-bit beat
    assert analyse(naive, plat).efficiency() == pytest.approx((1000 * 32 + 1000 * 26) / (2000 * 64))
    assert 0.44 < analyse(naive, plat).efficiency() < 0.46
    packed = apply(load("iris_pair.mlir"), f"olympus-sanitize,olympus-bus-packing{{platform={Q64}}}")
    bundles = ops(packed, BundleOp)
    assert len(bundles) == 1 and len(ops(packed, PcOp)) == 1
    assert bundles[0].layout.data == "32 x [a:1x32b, b:1x26b] in 29 beats of 64 b"
    eff = analyse(packed, plat).efficiency()
    assert eff >= 0.95
    assert analyse(packed, plat).items_per_second > 2 * analyse(naive, plat).items_per_second


def test_buffer_sharing_merges_disjoint_lifetimes():
    before = load("plm_chain.mlir")
    assert plm_brams(before) == 3 * 8  # 4096 x 32 bits = 8 BRAM18 each
    m = apply(load("plm_chain.mlir"), "olympus-buffer-sharing")
    share = {c.result.name_hint: c.share.value.data for c in ops(m, ChannelOp) if c.share is not None}
    assert share["s01"] == share["s23"] != share["s12"]
    assert plm_brams(m) == 2 * 8
    assert analyse(m, load_platform(P256)).resources["bram"][0] == 16


def test_platform_errors_name_the_json_path(tmp_path):
    bad = tmp_path / "p.json"
    bad.write_text('{"name": "x", "clock_mhz": 300, "resources": {"ff": 1, "lut": 1, "bram": 1, "uram": 1, '
                   '"dsp": 1}, "memory": {"channels": 2, "width_bits": 60, "clock_mhz": 300}}')
    with pytest.raises(LoomError, match=r"memory.width_bits: must be a multiple of 8"):
        load_platform(bad)
    bad.write_text('{"name": "x", "clock_mhz": 300, "resources": {"ff": 1}, "memory": {}}')
    with pytest.raises(LoomError, match=r"resources: missing 'lut'"):
        load_platform(bad)
    bad.write_text("[1, 2]")  # it said "(top level): missing 'name'"
    with pytest.raises(LoomError, match=r"\(top level\): expected a JSON object with 'name', got list"):
        load_platform(bad)
    with pytest.raises(LoomError, match="olympus-replication needs a platform description"):
        apply(load("one_kernel.mlir"), "olympus-replication")
