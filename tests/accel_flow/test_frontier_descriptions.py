"""Accelerators beyond the shipped examples and the researcher set (tests/accel_flow/frontier/, its
README lists them): each run end to end against numpy; the dataflows they needed (a preloaded
output tile received inside the reduction loop, a depthwise named kernel, a host without caches)
and the refusals they exposed (a generic-model flow that does not compute its kernel, a bare id
running into '-', a strided window's subscript) each have a test here."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, f32, i32

from loom.accel import load_description
from loom.driver import compile_driver
from loom.errors import LoomError
from loom.frontends.kernel import linalg as L
from tests.accel_flow.accel_flow_helpers import D, func_module, matmul_module

pytestmark = pytest.mark.sanitize

HERE = Path(__file__).resolve().parent / "frontier"


def desc(name: str) -> str:
    return str(HERE / name)


def _arrays(rng, shapes, dtype):
    if dtype == np.float32:
        return [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return [rng.integers(-9, 9, s).astype(np.int32) for s in shapes]


def run_matmul(path, M, N, K, *, elem=i32, shape=(D, D, D), seed=0, **options):
    dtype = np.int32 if elem == i32 else np.float32
    drv = compile_driver(matmul_module(elem, shape), path, **options)
    A, B, C0 = _arrays(np.random.default_rng(seed), ((M, K), (K, N), (M, N)), dtype)
    C = C0.copy()
    stats = drv(A, B, C)
    want = C0.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)
    if dtype == np.int32:
        assert np.array_equal(C, want.astype(np.int32))
    else:
        assert np.allclose(C, want, atol=1e-4)
    expected = drv.expected_transfers([A, B, C])
    if options.get("coalesce"):  # fewer transactions, the same words
        from loom.passes.accel_coalesce import expected_coalesced_sends
        capacity = drv.accelerator.dma.input_words // (2 if options.get("double_buffer") else 1)
        expected = replace(expected, sends=expected_coalesced_sends(drv.summary, {"m": M, "n": N, "k": K}, capacity))
    assert stats.transfers == expected
    return drv, stats


# ------------------------------------------------------------------------------ engines that run
def test_output_stationary_8x8_in_the_wrapped_grammar_with_quoted_ids():
    """Quoted ids with '-', send_literal(-1), hex, init_opcodes as a list, flows in opcode_flow<...>."""
    drv, stats = run_matmul(desc("os8_grammar.json"), 19, 26, 33, elem=f32)
    assert stats.transfers.sends == 1 + 3 * 4 * 5 + 3 * 4  # reset, one MAC per box, one drain per C tile
    assert drv.summary.loop_order == ("n", "m", "k")
    other = compile_driver(matmul_module(f32), desc("os8_grammar.json"), flow="CsT", build=False)
    assert [p.id for p in other.summary.placement.opcodes] == ["mac-a-b", "drain.c"]


def test_a_bare_id_running_into_a_dash_names_the_quoted_spelling(tmp_path):
    data = json.loads((HERE / "os8_grammar.json").read_text())
    data["accelerators"][0]["opcode_flows"]["CsT"] = "opcode_flow<((mac-a-b) drain.c)>"
    (tmp_path / "a53.json").write_text((HERE / "a53.json").read_text())
    path = tmp_path / "os8.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LoomError) as info:
        load_description(str(path))
    assert info.value.where == "accelerators[0].opcode_flows.CsT" and info.value.column == 18
    assert "opcode id 'mac' runs on into '-'" in info.value.message
    assert "write 'mac-a-b' in double quotes (\"mac-a-b\")" in info.value.message


@pytest.mark.parametrize("name,options", [("ws_bias.json", {}), ("ws_bias.json", {"coalesce": True, "double_buffer": True}),
                                          ("ws_bias_c.json", {"coalesce": True})])
def test_weight_stationary_engine_with_an_output_preload_receives_inside_the_reduction_loop(name, options):
    """Loop order n, k, m: W stays, C's tile is sent, multiplied into and received back for every k.
    The receive inside k was refused ('the C tile is not complete'): the tile sent just before is the
    running sum, so what comes back is the running sum and replaces C."""
    drv, stats = run_matmul(desc(name), 10, 9, 11, **options)
    assert stats.transfers.operand_words_sent["C"] == stats.transfers.operand_words_received["C"] == 3 * 3 * 3 * 16
    assert [(p.id, p.level) for p in drv.summary.placement.opcodes] == [("ldW", 2), ("bias", 3), ("mac", 3), ("out", 3)]


def _ws_bias(tmp_path, opcode_map=None, flow=None):
    data = json.loads((HERE / "ws_bias.json").read_text())
    acc = data["accelerators"][0]
    acc["opcode_map"] = opcode_map or acc["opcode_map"]
    acc["opcode_flows"]["Ws"] = flow or acc["opcode_flows"]["Ws"]
    (tmp_path / "a53.json").write_text((HERE / "a53.json").read_text())
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("change,fragment", [
    ({"opcode_map": "opcode_map<ldW=[send_literal(0x31), send(1)], bias=[send_literal(0x32), send(2)], "
                    "mac=[send_literal(0x33), send(0)], out=[send_literal(0x34), recv(2)]>"},
     "after the flow sent C's running tile: the accelerator returns the running sum, which recv(2) would add to C "
     "a second time; write recv(2, replace)"),
    ({"flow": "(ldW (mac out bias))"}, "send C's running tile (send(2)) before it in the same iteration"),
    ({"flow": "(ldW bias (mac out))"}, "but the inner loop m changes it"),
    ({"flow": {"flow": "(ldW (bias mac out))", "accumulate_on_cpu": True}},
     "the flow sends C's running tile before it, so the accelerator returns the running sum: drop accumulate_on_cpu"),
])
def test_a_receive_inside_the_reduction_loop_needs_the_preload_first_and_replace(tmp_path, change, fragment):
    with pytest.raises(LoomError) as info:
        load_description(_ws_bias(tmp_path, **change))
    where = "accelerators[0].opcode_flows.Ws" + (".flow" if isinstance(change.get("flow"), dict) else "")
    assert info.value.where == where and fragment in info.value.message


@pytest.mark.parametrize("flow", ["Cs", "Bs"])
def test_non_square_4x16x8_tiles_on_the_generic_model(flow):
    drv, _ = run_matmul(desc("mm_4x16x8.json"), 37, 50, 29, flow=flow)
    assert drv.summary.tile_sizes == {"m": 4, "n": 16, "k": 8}


def _conv_s2d2_case(H):
    rng = np.random.default_rng(1)
    FH, FW = 3, 2
    OH, OW = (H - 2 * (FH - 1) - 1) // 2 + 1, (20 - 2 * (FW - 1) - 1) // 2 + 1
    shapes = [(2, 3, H, 20), (5, 3, FH, FW), (2, 5, OH, OW)]
    I, W, O0 = _arrays(rng, shapes, np.int32)  # noqa: E741
    want = O0.astype(np.int64)
    for y in range(FH):
        for x in range(FW):
            want += np.einsum("bchw,fc->bfhw", I[:, :, 2 * y:2 * y + 2 * OH - 1:2, 2 * x:2 * x + 2 * OW - 1:2], W[:, :, y, x])
    return shapes, I, W, O0, want


def _conv_s2d2_module(shapes):
    return func_module("conv", [MemRefType(i32, list(s)) for s in shapes],
                       lambda i, w, o: L.conv_2d_nchw_fchw(i, w, o, strides=(2, 2), dilations=(2, 2)))


def test_conv_with_stride_2_and_dilation_2_pads_its_edge_windows():
    """17 rows give 7 output rows in tiles of 2: the last window is padded to what the engine reads."""
    shapes, I, W, O0, want = _conv_s2d2_case(17)
    drv = compile_driver(_conv_s2d2_module(shapes), desc("conv_s2d2.json"))
    O = O0.copy()  # noqa: E741
    assert drv(I, W, O).transfers == drv.expected_transfers([I, W, O])
    assert np.array_equal(O, want)


def test_strided_window_refusal_prints_the_subscript_as_described():
    """Dynamic shapes cannot pad an edge window; the message showed 'oh + fh' for 2 * oh + 2 * fh."""
    shapes, I, W, O0, want = _conv_s2d2_case(17)
    drv = compile_driver(_conv_s2d2_module([[D] * 4] * 3), desc("conv_s2d2.json"))
    O = O0.copy()  # noqa: E741
    with pytest.raises(LoomError, match=r"operand I \(subscript 2: 2 \* oh \+ 2 \* fh\) is a window over tiled oh=7"):
        drv(I, W, O)
    assert np.array_equal(O, O0)
    shapes, I, W, O0, want = _conv_s2d2_case(19)  # 8 output rows: no edge window
    O = O0.copy()  # noqa: E741
    drv(I, W, O)
    assert np.array_equal(O, want)


@pytest.mark.parametrize("options", [{"coalesce": True, "double_buffer": True}])
def test_depthwise_conv_engine_by_its_named_kernel(options):
    """kernel "depthwise_conv_2d_nhwc_hwc" was unknown; oh, ow and c all have edge tiles."""
    shapes = [(2, 12, 11, 20), (3, 3, 20), (2, 10, 9, 20)]
    module = func_module("dw", [MemRefType(f32, list(s)) for s in shapes], L.depthwise_conv_2d_nhwc_hwc)
    drv = compile_driver(module, desc("dw_conv.json"), **options)
    I, W, O0 = _arrays(np.random.default_rng(2), shapes, np.float32)  # noqa: E741
    want = O0.astype(np.float64)
    for y in range(3):
        for x in range(3):
            want += I[:, y:y + 10, x:x + 9, :].astype(np.float64) * W[y, x]
    O = O0.copy()  # noqa: E741
    stats = drv(I, W, O)
    assert np.allclose(O, want, atol=1e-4)
    assert stats.transfers.operand_words_sent == drv.expected_transfers([I, W, O]).operand_words_sent


@pytest.mark.parametrize("options", [{"coalesce": True}])
def test_matmul_then_relu_on_two_engines_in_one_driver(options):
    from loom.examples.targets import resolve_kernel

    kernel, _ = resolve_kernel(f"{HERE / 'kernels.py'}:mm_relu")
    drv = compile_driver(kernel, desc("mm_relu_system.json"), **options)
    A, B, C0 = _arrays(np.random.default_rng(3), ((21, 17), (17, 35), (21, 35)), np.float32)
    C, Y = C0.copy(), np.full((21, 35), 7, np.float32)
    stats = drv(A, B, C, Y)
    assert drv.devices == ("mm8", "act")
    assert np.allclose(C, C0.astype(np.float64) + A.astype(np.float64) @ B, atol=1e-4)
    assert np.array_equal(Y, np.maximum(C, 0))
    assert stats.devices["act"].transfers.recvs == 6 * 2  # 21 x 35 in 4 x 32 tiles


def test_tiles_that_do_not_divide_the_problem():
    """Smaller than one tile, never a multiple, exactly one tile, empty: the expected transfers
    listed operands that moved no word (A=0, B=0), the runtime's tally does not."""
    drv = compile_driver(matmul_module(), desc("edge6x10x4.json"))
    rng = np.random.default_rng(4)
    for M, N, K in [(1, 1, 1), (5, 9, 3), (13, 31, 9), (6, 10, 4), (0, 5, 3), (5, 7, 0)]:
        A, B, C0 = _arrays(rng, ((M, K), (K, N), (M, N)), np.int32)
        C = C0.copy()
        assert drv(A, B, C).transfers == drv.expected_transfers([A, B, C]), (M, N, K)
        assert np.array_equal(C, C0 + A @ B), (M, N, K)


def test_a_tiny_host_cache_forces_cache_blocks():
    drv = compile_driver(matmul_module(i32, (512, 512, 512)), desc("small_cache.json"), build=False)
    assert drv.summary.cache_tiles == {"m": 40, "k": 40}  # 40 x 40 blocks: 7.5 KiB, half the 16 KiB L2
    run_matmul(desc("small_cache.json"), 90, 50, 70, flow="AsK")


def test_a_host_without_caches_gets_no_cache_blocks():
    """"caches": [] was refused ('expected at least one cache levels'): a soft core has none."""
    for name, why in [("no_cpu.json", "no host described"), ("no_caches.json", "the host lists no caches")]:
        drv = compile_driver(matmul_module(i32, (512, 512, 512)), desc(name), build=False)
        assert drv.summary.cache_tiles == {} and f"not fitted: {why}" in drv.summary.cache_note
    run_matmul(desc("no_caches.json"), 37, 29, 21)


# ------------------------------------------------------------------------------ generic-model flows
def _generic(tmp_path, flows=None, **steps):
    data = json.loads((HERE / "mm_4x16x8.json").read_text())
    acc = data["accelerators"][0]
    acc["opcode_semantics"].update(steps)
    acc["opcode_flows"].update(flows or {})
    (tmp_path / "a53.json").write_text((HERE / "a53.json").read_text())
    path = tmp_path / "generic.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("change,where,fragment", [
    ({"flows": {"Cs": "((ab ab) st)"}}, "Cs", "box (m=0, n=0, k=0) is counted 2 times"),
    ({"ab": "load 0, load 1"}, "Cs", "box (m=0, n=0, k=0) never reaches it"),
    ({"st": "store 2"}, "Cs", "C's tile (m=0, n=1), with two tiles per loop (m, n, k): box (m=0, n=0, k=0) of "
                              "another tile lands in it"),
    ({"ldB": "load 1, compute", "macA": "load 0"}, "Bs.flow", "box (n=0, k=1, m=1) of another tile lands in it"),
])
def test_a_generic_model_flow_that_does_not_compute_the_kernel_is_refused(tmp_path, change, where, fragment):
    """Each ran to a wrong C (twice the product, no product, the previous tile's sums carried over)."""
    from loom.runtime.generic_model import GenericModel

    path = _generic(tmp_path, **change)
    acc = load_description(path).accelerators[0]  # the flows are legal; their steps are not the kernel
    with pytest.raises(LoomError) as info:
        GenericModel.check(acc)
    assert info.value.where == f"accelerators[0].opcode_flows.{where}"
    assert "does not compute matmul on the generic model" in info.value.message and fragment in info.value.message


# ------------------------------------------------------------------------------ hostile descriptions
def _acc(d):
    return d["accelerators"][0]


HOSTILE = [
    ("zero tile", lambda d: _acc(d)["tile_sizes"].update(m=0), "tile_sizes.m", "expected a tile size >= 1, found 0"),
    ("negative tile", lambda d: _acc(d)["tile_sizes"].update(k=-4), "tile_sizes.k", "expected a tile size >= 1, found -4"),
    ("flexible tile of step 0", lambda d: _acc(d)["tile_sizes"].update(n={"multiple_of": 0}),
     "tile_sizes.n.multiple_of", "expected an integer >= 1, found 0"),
    ("f64 data", lambda d: _acc(d).update(data_type="f64"), "data_type", "the DMA runtime moves 32-bit words"),
    ("bf16 data", lambda d: _acc(d).update(data_type="bf16"), "data_type", "expected one of i32, f32"),
    ("complex data", lambda d: _acc(d).update(data_type="complex64"), "data_type", "unknown data type 'complex64'"),
    ("missing name", lambda d: _acc(d).pop("name"), "", "missing required key 'name'"),
    ("missing kernel", lambda d: _acc(d).pop("kernel"), "", "missing required key 'kernel'"),
    ("unknown selected flow", lambda d: _acc(d).update(selected_flow="Zs"), "selected_flow",
     "unknown flow 'Zs'; expected one of Cs, Bs"),
    ("flow with an unknown token", lambda d: _acc(d)["opcode_flows"].update(Cs="((ab) st;)"), "opcode_flows.Cs",
     "expected an opcode id, '(' or ')' but found ';'"),
    ("flow naming itself", lambda d: _acc(d)["opcode_flows"].update(Cs="((Cs) st)"), "opcode_flows.Cs",
     "unknown opcode 'Cs'"),
    ("semantics of an unknown opcode", lambda d: _acc(d)["opcode_semantics"].update(zz="load 0"),
     "opcode_semantics.zz", "unknown opcode 'zz'"),
    ("unknown action", lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace("send(1)]", "send_lit(1)]")),
     "opcode_map", "unknown action 'send_lit'"),
    ("permutation repeating a dim", lambda d: _acc(d)["opcode_flows"]["Bs"].update(permutation="(m, n, k) -> (n, n, m)"),
     "opcode_flows.Bs.permutation", "dim 'n' appears twice"),
    ("data in init_opcodes", lambda d: _acc(d).update(init_opcodes="(ldB)"), "init_opcodes",
     "init_opcodes run once, outside all tile loops"),
    ("overlapping staging buffers", lambda d: _acc(d)["dma"].update(output_address="0x16000100"),
     "dma.output_address", "overlaps the input staging buffer"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_descriptions_are_refused_at_their_json_path(case, tmp_path):
    _, mutate, where, fragment = case
    data = json.loads((HERE / "mm_4x16x8.json").read_text())
    mutate(data)
    (tmp_path / "a53.json").write_text((HERE / "a53.json").read_text())
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LoomError) as info:
        load_description(str(path))
    assert info.value.where == "accelerators[0]" + (f".{where}" if where else "")
    assert info.value.filename == str(path) and fragment in info.value.message


def test_the_driver_refuses_a_generic_flow_that_does_not_compute_the_kernel(tmp_path):
    with pytest.raises(LoomError, match="flow 'Cs' does not compute matmul on the generic model") as info:
        compile_driver(matmul_module(), _generic(tmp_path, st="store 2"))
    assert info.value.where == "accelerators[0].opcode_flows.Cs"


def test_every_frontier_description_loads_and_names_a_model():
    names = sorted(p.name for p in HERE.glob("*.json") if p.name != "a53.json")
    assert len(names) >= 10
    for name in names:
        accelerators = load_description(desc(name)).accelerators
        assert accelerators and all(a.model is not None for a in accelerators), name


def test_the_generic_model_preloads_an_output_it_is_sent():
    """'load 2' (the accumulator starts from the C tile sent) was refused ('needs an input operand'),
    so a preloading engine could not be described for the generic model."""
    drv, _ = run_matmul(desc("ws_bias_generic.json"), 10, 9, 11, coalesce=True, double_buffer=True)
    assert drv.accelerator.model.kind == "generic"


def test_a_preload_received_by_accumulating_counts_the_initial_values_twice(tmp_path):
    from loom.runtime.generic_model import GenericModel

    data = json.loads((HERE / "ws_bias_generic.json").read_text())
    acc = data["accelerators"][0]
    acc.pop("permutation")
    acc["opcode_map"] = acc["opcode_map"].replace("recv(2, replace)", "recv(2)")
    acc["opcode_flows"] = {"Cs": "(bias (ldW mac) out)"}  # preload per (m, n), receive after the k loop
    (tmp_path / "a53.json").write_text((HERE / "a53.json").read_text())
    path = tmp_path / "pre.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LoomError, match="C's tile \\(m=0, n=0\\), with two tiles per loop \\(m, n, k\\): the tile's "
                                        "initial values are counted 2 times"):
        GenericModel.check(load_description(str(path)).accelerators[0])
    acc["opcode_map"] = acc["opcode_map"].replace("recv(2)", "recv(2, replace)")
    path.write_text(json.dumps(data))
    GenericModel.check(load_description(str(path)).accelerators[0])


@pytest.mark.parametrize("shape", [(D, D, D), (5, 7, 3)])
def test_an_engine_taking_the_whole_problem_has_no_tile_loops(shape):
    """Every dim "full": the flow's one scope was refused ('nests 1 scopes but ... 0 tile loops'), and
    once allowed its opcode was placed after free_dma (the runtime: 'called before dma_init')."""
    drv = compile_driver(matmul_module(i32, shape), desc("whole.json"), coalesce=True)
    A, B, C0 = _arrays(np.random.default_rng(5), ((5, 3), (3, 7), (5, 7)), np.int32)
    C = C0.copy()
    assert drv(A, B, C).transfers == drv.expected_transfers([A, B, C])
    assert np.array_equal(C, C0 + A @ B)
    assert "go         level 0 (body; outside all loops)" in str(drv.summary)


def test_flow_auto_calibrates_a_small_tile_engine_on_a_small_problem(monkeypatch):
    """The host-cost calibration ran a 128^3 matmul three times whatever the tiles: with 4x4x4 tiles
    and a Python model, flow="auto" on a 10x9x11 problem took 4.6 s (0.2 s without it)."""
    import loom.driver.compile as compile_module
    from loom.driver import autotune

    seen = []
    real = compile_module.compile_driver
    monkeypatch.setattr(compile_module, "compile_driver", lambda module, *a, **k: seen.append(str(module))
                        or real(module, *a, **k))
    monkeypatch.setattr(autotune, "_CALIBRATED", {})
    autotune.calibrate(load_description(desc("ws_bias_c.json")).accelerators[0], desc("ws_bias_c.json"))
    assert len(seen) == 1 and "memref<32x32xi32>" in seen[0] and "128" not in seen[0]
