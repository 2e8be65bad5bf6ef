"""Each accelerator pass, IR in / IR out, checked by structure and by upstream mlir-opt."""

import json
from pathlib import Path

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import (conv_module, desc, generic_matmul_module, matmul_arrays, matmul_module,
                                matmul_reference)
from xdsl.dialects import func, memref, scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.builtin import ModuleOp, f32

import loom.driver.compile  # noqa: F401  (registers the passes)
from loom.errors import LoomError
from loom.oracle import mlir
from loom.passes import Pipeline

V3 = desc("matmul_v3.json")


def annotate(module, acc="v3_16", flow="As", path=V3):
    Pipeline.parse(f'linalg-generalize-named-ops,convert-linalg-to-accel{{accel-file="{path}" '
                   f'accelerator="{acc}" flow="{flow}"}}').run(module)
    return module


def the_generic(module) -> GenericOp:
    (g,) = [o for o in module.walk() if isinstance(o, GenericOp)]
    return g


def loop_dims(op):
    """accel.loop names of the scf.for ops enclosing ``op``, outer first."""
    names = []
    p = op.parent_op()
    while p is not None:
        if isinstance(p, scf.ForOp) and "accel.loop" in p.attributes and p.attributes["accel.loop"].role.data == "tile":
            names.insert(0, p.attributes["accel.loop"].dim.data)
        p = p.parent_op()
    return names


# ------------------------------------------------------------------ convert-linalg-to-accel
def test_annotates_matmul_with_accelerator_flow_tiles_and_permutation():
    m = annotate(matmul_module())
    g = the_generic(m)
    a = g.attributes
    plan = a["accel.plan"]
    assert a["accel.accelerator"].accelerator.data == "v3_16" and plan.flow.data == "As"
    assert plan.tile_sizes == (16, 16, 16) and plan.dim_names == ("m", "n", "k")
    assert plan.order == (0, 2, 1)  # (m, k, n)
    cache = list(plan.cache_tiles)
    # As places sA inside (m, k): only m and k may get cache loops; n never
    assert cache[1] == 0 and cache[0] % 16 == 0 and cache[2] % 16 == 0 and cache[0] >= 16
    mlir.verify(m, allow_unregistered=True)


def test_transposed_matmul_is_not_a_matmul():
    with pytest.raises(LoomError) as err:
        annotate(generic_matmul_module("km"))
    text = str(err.value)
    assert "no operation matches accelerator v3_16" in text and "subscript 0" in text


def test_generic_matmul_written_by_hand_matches():
    g = the_generic(annotate(generic_matmul_module("mk")))
    assert g.attributes["accel.accelerator"].accelerator.data == "v3_16"


def test_body_must_match():
    with pytest.raises(LoomError, match="body computes unknown"):
        annotate(generic_matmul_module("mk", body_kind="add-only"))


def test_only_the_matching_op_is_annotated():
    m = generic_matmul_module("km")
    other = matmul_module()
    f = [o for o in other.body.block.ops][0]
    f.detach()
    f.sym_name = type(f.sym_name)("mm2")
    m.body.block.add_op(f)
    annotate(m)
    gens = [o for o in m.walk() if isinstance(o, GenericOp)]
    assert ["accel.accelerator" in g.attributes for g in gens] == [False, True]


def test_data_type_mismatch_names_accelerator_flow_and_op():
    with pytest.raises(LoomError) as err:
        annotate(matmul_module(elem=f32), acc="v3_8", flow="Cs")
    text = str(err.value)
    assert "data type mismatch" in text and "v3_8" in text and "Cs" in text and "f32" in text and "linalg.generic" in text


def test_unknown_flow_and_accelerator():
    with pytest.raises(LoomError, match="accelerator v3_16: no opcode flow named 'Zs'"):
        annotate(matmul_module(), flow="Zs")
    with pytest.raises(LoomError, match="no accelerator named 'v3_5'"):
        annotate(matmul_module(), acc="v3_5")


def test_conv_accelerator_takes_strided_conv_but_not_matmul():
    m = conv_module(2)
    annotate(m, acc="conv_os", flow="Os", path=desc("conv2d.json"))
    assert the_generic(m).attributes["accel.accelerator"].accelerator.data == "conv_os"
    with pytest.raises(LoomError, match="it has 3 loops, the kernel 7"):
        annotate(matmul_module(), acc="conv_os", flow="Os", path=desc("conv2d.json"))


# ------------------------------------------------------------------ accel-tile
def tiled(flow="As", acc="v3_16"):
    m = annotate(matmul_module(), acc=acc, flow=flow)
    Pipeline.parse("accel-tile").run(m)
    return m


def test_tile_builds_cache_and_accelerator_loops_in_flow_order():
    m = tiled("As")
    g = the_generic(m)
    assert "accel.tiled" in g.attributes
    assert loop_dims(g) == ["m", "k", "n"]
    cache = [o.attributes["accel.loop"].dim.data for o in m.walk()
             if isinstance(o, scf.ForOp) and "accel.loop" in o.attributes and o.attributes["accel.loop"].role.data == "cache"]
    assert cache == ["m", "k"]
    assert all(isinstance(v.owner, memref.SubviewOp) for v in g.operands)
    mlir.verify(m, allow_unregistered=True)


@pytest.mark.parametrize("flow", ["As", "Cs"])
def test_tiled_stage_still_computes_the_matmul_on_the_cpu(flow):
    """The tiled op is plain linalg on subviews: lower it to loops, run it, compare with numpy."""
    from loom.backends.c import compile_module
    from loom.passes.recipes import lower_to_c

    m = tiled(flow)
    for g in [o for o in m.walk() if isinstance(o, GenericOp)]:
        for key in list(g.attributes):
            if key.startswith("accel."):
                del g.attributes[key]
    fn = compile_module(lower_to_c(m)).function("matmul")
    A, B, C = matmul_arrays(37, 53, 21)  # partial tiles everywhere
    ref = matmul_reference(A, B, C)
    fn(A, B, C)
    assert np.array_equal(C, ref)


# ------------------------------------------------------------------ accel-place-flow
def placed(flow, acc="v3_16"):
    m = tiled(flow, acc)
    Pipeline.parse("accel-place-flow,dce").run(m)
    return m


def sends_of(module, arg_index):
    """accel.send ops whose tile is a subview of function argument ``arg_index``."""
    (f,) = [o for o in module.body.block.ops if isinstance(o, func.FuncOp)]
    arg = f.body.blocks[0].args[arg_index]
    return [o for o in module.walk() if o.name in ("accel.send", "accel.recv")
            and isinstance(o.operands[0].owner, memref.SubviewOp) and o.operands[0].owner.source is arg]


def test_place_flow_hoists_the_stationary_operand():
    m = placed("As")
    assert not [o for o in m.walk() if isinstance(o, GenericOp)]
    (send_a,) = sends_of(m, 0)
    assert loop_dims(send_a) == ["m", "k"]  # A(m, k) sent outside the n loop
    (send_b,) = [o for o in sends_of(m, 1)]
    assert loop_dims(send_b) == ["m", "k", "n"]
    (recv_c,) = sends_of(m, 2)
    assert recv_c.name == "accel.recv" and loop_dims(recv_c) == ["m", "k", "n"]
    assert list(send_a.padded_shape.get_values()) == [16, 16]
    names = [o.name for o in m.walk() if o.name.startswith("accel.")]
    assert names[0] == "accel.init_dma" and names[-1] == "accel.free_dma"
    mlir.verify(m, allow_unregistered=True)


def test_place_flow_output_stationary_receives_outside_k():
    m = placed("Cs")
    (recv_c,) = sends_of(m, 2)
    assert loop_dims(recv_c) == ["m", "n"]
    literals = [o for o in m.walk() if o.name == "accel.send_literal"]
    values = sorted(o.operands[0].owner.value.value.data for o in literals)
    assert values == [7, 8]


def test_place_flow_conv_region_operand_and_init_opcodes():
    m = conv_module(1)
    annotate(m, acc="conv_os", flow="Os", path=desc("conv2d.json"))
    Pipeline.parse("accel-tile,accel-place-flow,dce").run(m)
    (recv_o,) = sends_of(m, 2)
    assert loop_dims(recv_o) == ["b", "oc"]  # the whole output plane per output channel
    dims_sent = [o for o in m.walk() if o.name == "accel.send_dim"]
    assert len(dims_sent) == 2 and all(loop_dims(o) == [] for o in dims_sent)  # init: fHW and iC
    mlir.verify(m, allow_unregistered=True)


# ------------------------------------------------------------------ convert-accel-to-runtime
def test_runtime_stage_is_standard_mlir_with_unranked_memref_calls():
    m = placed("Bs")
    Pipeline.parse("convert-accel-to-runtime,dce").run(m)
    assert not [o for o in m.walk() if o.name.startswith("accel.")]
    decls = {o.sym_name.data: o for o in m.body.block.ops if isinstance(o, func.FuncOp) and not o.body.blocks}
    assert {"dma_init", "dma_free", "write_literal", "dma_start_send", "dma_wait_send", "dma_start_recv",
            "dma_wait_recv", "copy_to_inbuffer_padded_i32", "copy_from_outbuffer_padded_acc_i32"} <= set(decls)
    assert str(decls["copy_to_inbuffer_padded_i32"].function_type.inputs.data[0]) == "memref<*xi32>"
    casts = [o for o in m.walk() if isinstance(o, memref.CastOp)]
    assert casts and all(str(c.results[0].type) == "memref<*xi32>" for c in casts)
    mlir.verify(m)  # no accel ops left: upstream MLIR verifies it without unregistered ops


def test_c_backend_passes_unranked_memrefs_as_rank_and_descriptor():
    from loom.backends.c import emit_c

    m = placed("Ns", acc="v3_8")
    Pipeline.parse("convert-accel-to-runtime").run(m)
    c = emit_c(m)
    assert "extern int32_t copy_to_inbuffer_padded_i32(int64_t p0_rank, void *p0, int32_t p1," in c
    assert "copy_to_inbuffer_padded_i32(2, &d" in c


def test_c_backend_rejects_unranked_parameters_of_defined_functions():
    from xdsl.dialects.builtin import UnrankedMemRefType, i32

    from loom.backends.c import emit_c

    f = func.FuncOp("f", ([UnrankedMemRefType.from_type(i32)], []))
    with __import__("xdsl.builder", fromlist=["ImplicitBuilder"]).ImplicitBuilder(f.body):
        func.ReturnOp()
    with pytest.raises(LoomError, match="only supported on external"):
        emit_c(ModuleOp([f]))


def test_first_match_skips_an_accelerator_of_another_data_type(tmp_path):
    """With no accelerator named, an f32 matmul goes to the description's f32 accelerator though an i32 one listed
    first matches its shape (it was refused as a data type mismatch of the first); named, the i32 one refuses it."""
    data = json.loads(Path(V3).read_text())
    data["cpu"] = json.loads((Path(V3).parent / "pynq-z2.json").read_text())["cpu"]
    data["accelerators"][1]["data_type"] = "f32"
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(data))
    module = matmul_module(elem=f32)
    Pipeline.parse(f'linalg-generalize-named-ops,convert-linalg-to-accel{{accel-file="{mixed}"}}').run(module)
    assert the_generic(module).attributes["accel.accelerator"].accelerator.data == data["accelerators"][1]["name"]
    with pytest.raises(LoomError, match="data type mismatch"):
        annotate(matmul_module(elem=f32), acc=data["accelerators"][0]["name"], flow="Cs", path=str(mixed))
    with pytest.raises(LoomError, match=r"data type mismatch"):  # every accelerator i32: still said
        Pipeline.parse(f'linalg-generalize-named-ops,convert-linalg-to-accel{{accel-file="{V3}"}}').run(
            matmul_module(elem=f32))
