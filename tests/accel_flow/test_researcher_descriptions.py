"""Accelerators loom never shipped, described as a researcher bringing their own hardware would
(tests/accel_flow/researcher/: twelve descriptions, their Python models written from each engine's own
protocol, kernels for the CLI), run end to end against numpy through the Python API and the CLI; and
hostile descriptions, each refused with an error at its JSON path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, f32, i32

from loom.driver import compile_driver
from loom.errors import LoomError
from loom.frontends.kernel import linalg as L
from tests.accel_flow.accel_flow_helpers import D, func_module, matmul_module

pytestmark = pytest.mark.sanitize

HERE = Path(__file__).resolve().parent / "researcher"


def desc(name: str) -> str:
    return str(HERE / name)


def ints(rng, *shape, dtype=np.int32):
    return rng.integers(-9, 9, shape).astype(dtype)


def run_matmul(path, M, N, K, *, elem=i32, dtype=np.int32, shape=(D, D, D), seed=0, **options):
    drv = compile_driver(matmul_module(elem, shape), path, **options)
    rng = np.random.default_rng(seed)
    A, B, C0 = ints(rng, M, K, dtype=dtype), ints(rng, K, N, dtype=dtype), ints(rng, M, N, dtype=dtype)
    C = C0.copy()
    stats = drv(A, B, C)
    assert np.array_equal(C, (C0.astype(np.float64) + A.astype(np.float64) @ B).astype(dtype))
    expected = drv.expected_transfers([A, B, C])
    if options.get("coalesce"):  # fewer sends, the same words
        from dataclasses import replace

        from loom.passes.accel_coalesce import expected_coalesced_sends
        capacity = drv.accelerator.dma.input_words // (2 if options.get("double_buffer") else 1)
        expected = replace(expected, sends=expected_coalesced_sends(drv.summary, {"m": M, "n": N, "k": K}, capacity))
        assert expected.sends < drv.expected_transfers([A, B, C]).sends
    assert stats.transfers == expected
    return drv, stats


# ------------------------------------------------------------------------------ engines that run
@pytest.mark.parametrize("flow,options", [("Cs", {}), ("CsSplit", {"coalesce": True}),
                                          ("As", {"double_buffer": True}), ("Ns", {})])
def test_non_square_non_power_of_two_tiles_on_sizes_that_are_not_multiples(flow, options):
    """3x5x7 tiles on a 10x11x13 problem: every dim has an edge tile, in four flows."""
    drv, _ = run_matmul(desc("tiled357.json"), 10, 11, 13, flow=flow, **options)
    assert drv.summary.tile_sizes == {"m": 3, "n": 5, "k": 7}


def test_one_opcode_sends_b_before_a_and_receives_the_tile():
    """f32, operands in the opcode in another order than the kernel's, accumulated on the CPU."""
    drv, stats = run_matmul(desc("b_then_a.json"), 13, 9, 21, elem=f32, dtype=np.float32, double_buffer=True)
    assert stats.transfers.sends == stats.transfers.recvs == 3 * 3 * 3


def test_output_stationary_only_f32_engine_on_the_generic_model():
    run_matmul(desc("os_only_f32.json"), 17, 9, 25, elem=f32, dtype=np.float32)


def test_send_idx_words_are_the_tile_starts():
    from tests.accel_flow.researcher.models import IdxCheck
    from loom.accel import load_description

    model = IdxCheck(load_description(desc("idx_engine.json")).accelerators[0])
    run_matmul(desc("idx_engine.json"), 9, 10, 7, model=model)
    assert model.seen == [(m, n) for m in (0, 4, 8) for n in (0, 4, 8)]


def test_flexible_tiles_in_multiples_of_three():
    run_matmul(desc("flex3.json"), 20, 17, 23, tile_sizes={"m": 9, "n": 12, "k": 3})
    drv, _ = run_matmul(desc("flex3.json"), 20, 17, 23, shape=(20, 17, 23), flow="auto")
    assert all(t % 3 == 0 for t in drv.summary.tile_sizes.values())


def test_elementwise_add_and_batched_matmul_with_a_full_reduction():
    rng = np.random.default_rng(3)
    drv = compile_driver(func_module("ew", [MemRefType(i32, [D, D])] * 3, L.add), desc("ew_add.json"))
    A, B, C = ints(rng, 19, 10), ints(rng, 19, 10), ints(rng, 19, 10)
    drv(A, B, C)
    assert np.array_equal(C, A + B)
    drv = compile_driver(func_module("bmm", [MemRefType(i32, [D] * 3)] * 3, L.batch_matmul), desc("bmm_fullk.json"))
    A, B, C0 = ints(rng, 3, 9, 17), ints(rng, 3, 17, 13), ints(rng, 3, 9, 13)
    C = C0.copy()
    assert drv(A, B, C).transfers == drv.expected_transfers([A, B, C])
    assert np.array_equal(C, C0 + A @ B)


def test_conv_nchw_output_stationary_with_every_dim_tiled():
    rng = np.random.default_rng(4)
    drv = compile_driver(func_module("conv", [MemRefType(f32, [D] * 4)] * 3, L.conv_2d_nchw_fchw),
                         desc("conv_nchw_os_f32.json"))
    I = rng.standard_normal((2, 5, 10, 13)).astype(np.float32)  # noqa: E741
    W = rng.standard_normal((7, 5, 3, 3)).astype(np.float32)
    O0 = rng.standard_normal((2, 7, 8, 11)).astype(np.float32)
    O = O0.copy()  # noqa: E741
    assert drv(I, W, O).transfers == drv.expected_transfers([I, W, O])
    want = O0.astype(np.float64)
    for y in range(3):
        for x in range(3):
            want += np.einsum("bchw,fc->bfhw", I[:, :, y:y + 8, x:x + 11].astype(np.float64), W[:, :, y, x])
    assert np.allclose(O, want, atol=1e-4)


def _relu_module(elem, zero_inside: bool):
    """y = max(x, 0) as a linalg.generic, its zero a constant of the region or of the function."""
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import AffineMapAttr, FloatAttr
    from xdsl.dialects.linalg.attrs import IteratorTypeAttr as It
    from xdsl.dialects.linalg.ops import GenericOp, YieldOp
    from xdsl.ir import Block, Region
    from xdsl.ir.affine import AffineDimExpr, AffineMap

    def zero():
        return (arith.ConstantOp.from_int_and_width(0, 32) if elem == i32 else arith.ConstantOp(FloatAttr(0.0, f32))).result

    def body(X, Y):
        outside = None if zero_inside else zero()
        block = Block(arg_types=[elem, elem])
        with ImplicitBuilder(block):
            z = zero() if zero_inside else outside
            YieldOp((arith.MaxSIOp(block.args[0], z) if elem == i32 else arith.MaximumfOp(z, block.args[0])).result)
        GenericOp([X], [Y], Region(block), [AffineMapAttr(AffineMap(1, 0, (AffineDimExpr(0),)))] * 2, [It.parallel()])

    return func_module("relu", [MemRefType(elem, [D])] * 2, body)


@pytest.mark.parametrize("elem,name", [(i32, "relu16"), (f32, "relu16_f32")])
@pytest.mark.parametrize("zero_inside", [True, False])
def test_relu_engine(elem, name, zero_inside):
    """A one-input body: max(x, 0) matches "relu" (it matched nothing: 'body unknown')."""
    drv = compile_driver(_relu_module(elem, zero_inside), desc("relu.json"), name)
    dtype = np.int32 if elem == i32 else np.float32
    x = np.arange(-20, 21).astype(dtype)
    y = np.full_like(x, 77)
    assert drv(x, y).transfers.sends == 3  # 41 elements in tiles of 16
    assert np.array_equal(y, np.maximum(x, 0))


def test_a_relu_engine_propagates_nan_and_a_nan_dropping_body_is_not_matched(monkeypatch):
    """The engine's relu is max(x, 0) with NaN kept (maximumf, numpy's maximum, torch's relu); a body of maxnumf
    (NaN -> 0) is another function, so it is not offloaded: it gave NaN through the engine where the CPU gives 0."""
    from xdsl.dialects import arith
    drv = compile_driver(_relu_module(f32, True), desc("relu.json"), "relu16_f32")
    x = np.array([np.nan, -1.5, 2.5] * 7, np.float32)
    y = np.zeros_like(x)
    drv(x, y)
    assert np.array_equal(y, np.maximum(x, 0), equal_nan=True) and np.isnan(y[0])
    monkeypatch.setattr(arith, "MaximumfOp", arith.MaxnumfOp)  # the same module with maxnumf
    with pytest.raises(LoomError, match="no operation matches .* NaN-dropping maxnumf/minnumf"):
        compile_driver(_relu_module(f32, True), desc("relu.json"), "relu16_f32")


def _conv_nhwc_case(oh=7, ow=7):
    rng = np.random.default_rng(5)
    I = ints(rng, 2, oh + 2, ow + 1, 5)  # noqa: E741
    W = ints(rng, 3, 2, 5, 7)
    O0 = ints(rng, 2, oh, ow, 7)
    want = O0.astype(np.int64)
    for y in range(3):
        for x in range(2):
            want += np.einsum("bhwc,cf->bhwf", I[:, y:y + oh, x:x + ow, :], W[y, x])
    return I, W, O0, want


def _conv_nhwc(shapes):
    return func_module("conv", [MemRefType(i32, list(s)) for s in shapes], L.conv_2d_nhwc_hwcf)


@pytest.mark.parametrize("options", [{}, {"double_buffer": True}, {"coalesce": True, "double_buffer": True},
                                     {"inline_copies": False}])
def test_weight_stationary_conv_pads_edge_windows_over_full_filter_dims(options):
    """The input window of a partial (oh, ow) tile is padded to toh + FH - 1 rows, tow + FW - 1 columns,
    as the engine reads it (it was sent at its real size, so the engine read past the transaction)."""
    I, W, O0, want = _conv_nhwc_case()
    drv = compile_driver(_conv_nhwc([I.shape, W.shape, O0.shape]), desc("conv_nhwc_ws.json"), **options)
    O = O0.copy()  # noqa: E741
    stats = drv(I, W, O)
    assert np.array_equal(O, want)
    expected = drv.expected_transfers([I, W, O])
    assert (stats.transfers.words_sent, stats.transfers.operand_words_sent) == \
        (expected.words_sent, expected.operand_words_sent)
    assert stats.transfers.sends == expected.sends or options.get("coalesce")


def test_weight_stationary_conv_with_dynamic_sizes_refuses_edge_windows_it_cannot_pad():
    drv = compile_driver(_conv_nhwc([[D] * 4] * 3), desc("conv_nhwc_ws.json"))
    I, W, O0, _ = _conv_nhwc_case()
    O = O0.copy()  # noqa: E741
    with pytest.raises(LoomError) as info:
        drv(I, W, O)
    assert "operand I (subscript 1: oh + fh) is a window over tiled oh=7 (tile 2)" in info.value.message
    assert "compile the kernel with static shapes" in info.value.message
    assert np.array_equal(O, O0)  # refused before anything ran
    I, W, O0, want = _conv_nhwc_case(oh=6, ow=6)  # multiples of the tiles: no edge windows
    O = O0.copy()  # noqa: E741
    drv(I, W, O)
    assert np.array_equal(O, want)


@pytest.mark.parametrize("name,cache_tiles", [("tiny_cache.json", {}), ("huge_cache.json", {"m": 256, "n": 256})])
def test_tiny_and_huge_host_caches(name, cache_tiles):
    """A 256-byte L1 leaves no room for cache blocks; a 256 TiB L3 caps them at 64 accelerator tiles."""
    drv, _ = run_matmul(desc(name), 37, 29, 21, shape=(37, 29, 21))
    drv64 = compile_driver(matmul_module(i32, (512, 512, 512)), desc(name), build=False)
    assert drv64.summary.cache_tiles == cache_tiles


@pytest.mark.parametrize("assign", [None, "cost", ["t357", "-"]])
def test_two_engines_in_one_driver(assign):
    from loom.examples.targets import resolve_kernel

    kernel, _ = resolve_kernel(f"{HERE / 'kernels.py'}:mm_then_add")
    drv = compile_driver(kernel, desc("two_engines.json"), assign=assign, host_ops=True)
    rng = np.random.default_rng(6)
    A, B, C0, Dm = ints(rng, 10, 13), ints(rng, 13, 11), ints(rng, 10, 11), ints(rng, 10, 11)
    C, E = C0.copy(), np.zeros_like(C0)
    stats = drv(A, B, C, Dm, E)
    assert np.array_equal(C, C0 + A @ B) and np.array_equal(E, C + Dm)
    assert drv.devices == (("t357",) if assign == ["t357", "-"] else ("t357", "ewadd"))
    if assign != ["t357", "-"]:
        assert stats.devices["ewadd"].transfers.sends == 2 * 4  # 10 x 11 in 8 x 3 tiles


# ------------------------------------------------------------------------------ the command line
def _cli(capsys, *argv):
    from loom.cli import main

    code = main(["accel", "run", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_runs_every_flow_and_several_engines(capsys):
    code, out, err = _cli(capsys, f"{HERE / 'kernels.py'}:mm", "--accel", desc("tiled357.json"), "--flow", "all",
                          "--dims", "m=10,n=11,k=13")
    assert code == 0, out + err
    assert sorted(line.split()[1] for line in out.splitlines() if line.startswith("t357 ")) == \
        ["As", "Cs", "CsSplit", "Ns"]
    assert all(line.split()[-1] == "ok" for line in out.splitlines() if line.startswith("t357 "))
    code, out, err = _cli(capsys, f"{HERE / 'kernels.py'}:mm_then_add", "--accel", desc("two_engines.json"),
                          "--assign", "cost", "--dims", "m=10,n=11,k=13,i=10,j=11")
    assert code == 0, out + err
    assert out.rstrip().endswith("ok") and "device ewadd: 1 session(s), 8 sends" in out
    code, out, err = _cli(capsys, f"{HERE / 'kernels.py'}:conv_nhwc", "--accel", desc("conv_nhwc_ws.json"),
                          "--coalesce")
    assert code == 0, out + err
    assert out.rstrip().endswith("ok") and "cws " in out


def test_cli_dims_errors_name_the_accelerator_and_its_dims(capsys):
    code, _, err = _cli(capsys, f"{HERE / 'kernels.py'}:mm", "--accel", desc("tiled357.json"),
                        "--dims", "M=10,N=11,K=13")
    assert code != 0
    assert "--dims must give dim 'm'" in err and "accelerator t357's dims, m, n, k" in err
    assert "got 'M': dim names are case-sensitive" in err
    code, _, err = _cli(capsys, f"{HERE / 'kernels.py'}:mm_then_add", "--accel", desc("two_engines.json"),
                        "--dims", "m=10,n=11,k=13")
    assert code != 0
    assert "--dims must give dim 'i'" in err and "argument D of @mm_then_add is sized by accelerator ewadd's dims" in err


# ------------------------------------------------------------------------------ hostile descriptions
def _acc(d):
    return d["accelerators"][0]


def _replace_map(old, new):
    return lambda d: _acc(d).update(opcode_map=_acc(d)["opcode_map"].replace(old, new))


HOSTILE = [
    ("missing opcode_map", lambda d: _acc(d).pop("opcode_map"), "accelerators[0]", "missing required key 'opcode_map'"),
    ("missing dma size", lambda d: _acc(d)["dma"].pop("output_size"), "accelerators[0].dma",
     "missing required key 'output_size'"),
    ("tile of wrong type", lambda d: _acc(d)["tile_sizes"].update(m="four"), "accelerators[0].tile_sizes.m",
     "expected a tile size"),
    ("tile sizes as a list", lambda d: _acc(d).update(tile_sizes=[3, 5, 7]), "accelerators[0].tile_sizes",
     "expected the tile sizes (a JSON object)"),
    ("flow names an unknown opcode", lambda d: _acc(d)["opcode_flows"].update(Cs="((ab) outt)"),
     "accelerators[0].opcode_flows.Cs", "unknown opcode 'outt'"),
    ("init names an unknown opcode", lambda d: _acc(d).update(init_opcodes="(reset)"),
     "accelerators[0].init_opcodes", "did you mean 'rst'?"),
    ("tile larger than the buffer", lambda d: _acc(d)["buffers"].update(A=8), "accelerators[0].tile_sizes",
     "a tile of A (3 x 7 = 21 elements) does not fit the accelerator's A buffer (8 elements)"),
    ("send of an unknown operand", _replace_map("send(1)]", "send(5)]"), "accelerators[0].opcode_map",
     "send(5) names operand 5"),
    ("recv of an input", _replace_map("recv(2)", "recv(0)"), "accelerators[0].opcode_map",
     "recv(0) receives operand A, which is an input"),
    ("int8 data", lambda d: _acc(d).update(data_type="int8"), "accelerators[0].data_type",
     "the DMA runtime moves 32-bit words"),
    ("data type as a number", lambda d: _acc(d).update(data_type=32), "accelerators[0].data_type",
     "found an integer 32"),
    ("A stationary without its permutation", lambda d: _acc(d)["opcode_flows"]["As"].update(
        permutation="(m, n, k) -> (m, n, k)"), "accelerators[0].opcode_flows.As.flow", "the inner loop k changes it"),
    ("DMA buffer too small for an opcode", lambda d: _acc(d)["dma"].update(input_size=64),
     "accelerators[0].opcode_flows.Cs.flow", "opcode 'ab' sends 57 words but the DMA input buffer holds 16 words"),
    ("model of another kernel", lambda d: _acc(d).update(model="builtin:conv2d"), "accelerators[0].model",
     "kernel disagrees with its model builtin:conv2d"),
    ("a flow that never sends B", lambda d: _acc(d)["opcode_flows"].update(Cs="((ldA) out)"),
     "accelerators[0].opcode_flows.Cs", "never sends input B"),
    ("ReLU as a one-input max", lambda d: _acc(d).update(
        kernel={"indexing_maps": ["(m, n, k) -> (m, n)"] * 2, "iterator_types": ["parallel"] * 3, "body": "max"}),
     "accelerators[0].kernel.body", "body 'max' computes max(in0, in1): 2 input(s) and 1 output, but the kernel "
                                    "has 1 input(s) and 1 output(s)"),
    ("a cache size in an unknown unit", lambda d: d["cpu"]["caches"][0].update(size="32 KiBytes"),
     "cpu.caches[0].size", "binary suffix K, M, G or T"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_descriptions_are_refused_at_their_json_path(case, tmp_path):
    _, mutate, where, fragment = case
    data = json.loads((HERE / "tiled357.json").read_text())
    mutate(data)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    (tmp_path / "models.py").write_text((HERE / "models.py").read_text())
    with pytest.raises(LoomError) as info:
        compile_driver(matmul_module(), str(path), build=False)
    assert (info.value.where, info.value.filename) == (where, str(path))
    assert fragment in info.value.message


@pytest.mark.parametrize("size,bytes_", [("32kb", 32 << 10), ("1TiB", 1 << 40), ("256 tib", 1 << 48), ("2g", 2 << 30)])
def test_cache_sizes_take_every_binary_suffix_in_any_case(size, bytes_):
    from loom.accel import parse_description

    data = json.loads((HERE / "tiled357.json").read_text())
    data["cpu"]["caches"][1]["size"] = size
    assert parse_description(data, base_dir=str(HERE)).host.caches[1].size == bytes_


def _full_k_buffers(tmp_path, capacity: int) -> str:
    data = json.loads((HERE / "bmm_fullk.json").read_text())
    _acc(data)["buffers"] = {"A": capacity, "B": 4096, "C": 24}
    _acc(data)["model"] = {"python": str(HERE / "models.py") + ":BatchFullK"}
    path = tmp_path / "bmm_buffers.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_tiles_spanning_a_full_dim_must_fit_the_buffers(tmp_path):
    """k is "full": A's tile is 4 x K. With static K it is checked when compiling, else at the call."""
    path = _full_k_buffers(tmp_path, 40)
    static = func_module("bmm", [MemRefType(i32, s) for s in ([3, 9, 17], [3, 17, 13], [3, 9, 13])], L.batch_matmul)
    with pytest.raises(LoomError) as info:
        compile_driver(static, path, build=False)
    assert (info.value.where, info.value.filename) == ("accelerators[0].buffers.A", path)
    assert "a tile of A spans the \"full\" dims (k=17) and holds 68 elements, but the accelerator's A buffer " \
           "holds 40" in info.value.message
    drv = compile_driver(func_module("bmm", [MemRefType(i32, [D] * 3)] * 3, L.batch_matmul), path)
    rng = np.random.default_rng(7)
    A, B, C0 = ints(rng, 3, 9, 17), ints(rng, 3, 17, 13), ints(rng, 3, 9, 13)
    C = C0.copy()
    with pytest.raises(LoomError, match=r"a tile of A spans the \"full\" dims \(k=17\)") as info:
        drv(A, B, C)
    assert info.value.where == "accelerators[0].buffers.A" and np.array_equal(C, C0)
    drv(A[:, :, :10].copy(), B[:, :10].copy(), C)  # 4 x 10 = 40 fits
    assert np.array_equal(C, C0 + A[:, :, :10] @ B[:, :10])


def test_narrow_inputs_with_a_wide_accumulator_are_named_as_such():
    """int8 x int8 -> int32: the op mixes element types; the error says so (it said 'body unknown')."""
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import AffineMapAttr, i8
    from xdsl.dialects.linalg.attrs import IteratorTypeAttr as It
    from xdsl.dialects.linalg.ops import GenericOp, YieldOp
    from xdsl.ir import Block, Region
    from xdsl.ir.affine import AffineDimExpr, AffineMap

    def body(A, B, C):
        block = Block(arg_types=[i8, i8, i32])
        with ImplicitBuilder(block):
            a, b, c = block.args
            YieldOp(arith.AddiOp(c, arith.MuliOp(arith.ExtSIOp(a, i32), arith.ExtSIOp(b, i32))))
        dm, dn, dk = (AffineDimExpr(i) for i in range(3))
        maps = [AffineMap(3, 0, (dm, dk)), AffineMap(3, 0, (dk, dn)), AffineMap(3, 0, (dm, dn))]
        GenericOp([A, B], [C], Region(block), [AffineMapAttr(m) for m in maps],
                  [It.parallel(), It.parallel(), It.reduction()])

    module = func_module("mm8", [MemRefType(i8, [D, D]), MemRefType(i8, [D, D]), MemRefType(i32, [D, D])], body)
    with pytest.raises(LoomError) as info:
        compile_driver(module, desc("tiled357.json"), build=False)
    assert "its operands mix element types (i32, i8)" in info.value.message
    assert "narrow inputs with a wider accumulator (i8 x i8 -> i32) are not offloaded" in info.value.message


def test_a_negative_static_memref_size_is_refused_before_the_passes():
    """memref<-1x..> (-1 written for ?) verifies in xDSL; its tiles got stride -1 and the driver wrote
    outside the arrays (glibc: munmap_chunk(): invalid pointer)."""
    module = func_module("bmm", [MemRefType(i32, [-1, -1, -1])] * 3, L.batch_matmul)
    with pytest.raises(LoomError, match=r"type memref<-1x-1x-1xi32> has a negative size; a dynamic size is \?"):
        compile_driver(module, desc("bmm_fullk.json"), build=False)


def test_every_researcher_description_loads_and_names_a_model():
    from loom.accel import load_description

    names = sorted(p.name for p in HERE.glob("*.json"))
    assert len(names) >= 12
    for name in names:
        accelerators = load_description(str(HERE / name)).accelerators
        assert accelerators and all(a.model is not None for a in accelerators), name


def test_inconsistent_data_types_are_named(tmp_path):
    """An f32 op on an i32 engine, an i32 op on an f32 engine of a two-engine file, and a model that
    returns integers for an f32 engine: each error names the accelerator, its data_type or the opcode."""
    from loom.examples.targets import resolve_kernel

    with pytest.raises(LoomError) as info:
        compile_driver(matmul_module(f32), desc("tiled357.json"), build=False)
    assert info.value.where == "accelerators[0].data_type" and "works on f32 but accelerator t357" in info.value.message
    data = json.loads((HERE / "two_engines.json").read_text())
    data["accelerators"][1]["data_type"] = "f32"
    (tmp_path / "models.py").write_text((HERE / "models.py").read_text())
    path = tmp_path / "two.json"
    path.write_text(json.dumps(data))
    kernel, _ = resolve_kernel(f"{HERE / 'kernels.py'}:mm_then_add")
    with pytest.raises(LoomError) as info:
        compile_driver(kernel, str(path), build=False)
    assert info.value.where == "accelerators[1].data_type" and "works on i32 but accelerator ewadd" in info.value.message
    (tmp_path / "models.py").write_text((HERE / "models.py").read_text().replace(
        "return (A @ B).reshape(-1)\n\n\nclass ConvNHWC", "return (A @ B).reshape(-1).astype(np.int32)\n\n\nclass ConvNHWC"))
    data = json.loads((HERE / "b_then_a.json").read_text())
    path.write_text(json.dumps(data))
    drv = compile_driver(matmul_module(f32), str(path))
    A, B, C = (np.ones(s, np.float32) for s in ((6, 10), (10, 4), (6, 4)))
    with pytest.raises(LoomError, match=r"ba: TypeError in the Python model BthenA at send #1, opcode go .*consume "
                                        r"returned int32 \(integer\) values but the accelerator's data type is f32"):
        drv(A, B, C)
