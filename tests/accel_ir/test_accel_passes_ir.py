"""Each accel pass, textual ``.mlir`` in -> IR out, run through ``Pipeline.parse``: what it reads and what it
writes are the declared attributes of the accel dialect; an attribute that does not fit its op is a
LoomError naming the op. The expected values are derived by hand from matmul_v3.json's v3_4 (4x4x4
tiles, flow Cs = ((sABcC) sendC): literal 7 with A and B per k-step, literal 8 and C after the k loop)
on a 12x8x20 problem (C[12x8] += A[12x20] . B[20x8])."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from xdsl.dialects import scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.parser import Parser

from loom.dialects import accel, context
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from loom.passes import Pipeline

HERE = Path(__file__).parent
V3 = ACCELERATORS_DIR / "matmul_v3.json"


def fixture(name: str) -> str:
    return (HERE / name).read_text()


def run(pipeline: str, text: str):
    module = Parser(context(), text).parse_module()
    Pipeline.parse(pipeline).run(module)
    return module


def the_generic(module) -> GenericOp:
    (g,) = [o for o in module.walk() if isinstance(o, GenericOp)]
    return g


def loops(module) -> list[tuple[str, str]]:
    return [(o.attributes["accel.loop"].role.data, o.attributes["accel.loop"].dim.data)
            for o in module.walk() if isinstance(o, scf.ForOp) and "accel.loop" in o.attributes]


def loops_of(op) -> tuple[str, str] | None:
    attr = op.attributes.get("accel.loop")
    return None if attr is None else (attr.role.data, attr.dim.data)


def enclosing(op) -> list[str]:
    out, p = [], op.parent_op()
    while p is not None:
        if isinstance(p, scf.ForOp) and "accel.loop" in p.attributes:
            out.insert(0, p.attributes["accel.loop"].dim.data)
        p = p.parent_op()
    return out


# ------------------------------------------------------------------ convert-linalg-to-accel
def test_convert_linalg_to_accel_embeds_the_description_and_the_plan():
    m = run(f'linalg-generalize-named-ops,convert-linalg-to-accel{{accel-file="{V3}" accelerator="v3_4" flow="Cs"}}',
            fixture("matmul_12x8x20.mlir"))
    g = the_generic(m)
    desc, plan = g.attributes["accel.accelerator"], g.attributes["accel.plan"]
    assert isinstance(desc, accel.AcceleratorAttr) and isinstance(plan, accel.PlanAttr)
    content = desc.content
    source = json.loads(V3.read_text())
    assert content["accelerators"] == [source["accelerators"][0]]  # v3_4, as written
    host = json.loads((ACCELERATORS_DIR / "pynq-z2.json").read_text())["cpu"]
    assert content["cpu"] == host  # the "cpu": "pynq-z2.json" reference is inlined
    assert (plan.flow.data, plan.dim_names, plan.tile_sizes, plan.order) == ("Cs", ("m", "n", "k"), (4, 4, 4),
                                                                             (0, 1, 2))
    assert plan.cache_tiles[2] == 0  # k is not free in Cs (sendC sits inside the n loop)
    # the printed stage parses back to the same attributes
    again = the_generic(Parser(context(), str(m)).parse_module())
    assert again.attributes["accel.plan"] == plan and again.attributes["accel.accelerator"] == desc


def test_convert_linalg_to_accel_plans_from_the_description_already_in_the_ir():
    text = re.sub(r", accel.plan = #accel.plan<[^>]*>", "", fixture("matmul_v3_4_Cs_annotated.mlir"))
    assert "accel.plan" not in text
    g = the_generic(run("convert-linalg-to-accel", text))
    plan = g.attributes["accel.plan"]
    assert plan.flow.data == "Cs" and plan.tile_sizes == (4, 4, 4)  # v3_4's selected flow and its tiles


def test_convert_linalg_to_accel_without_file_or_description_says_what_it_needs():
    with pytest.raises(LoomError, match="give accel-file"):
        run("linalg-generalize-named-ops,convert-linalg-to-accel", fixture("matmul_12x8x20.mlir"))


# ------------------------------------------------------------------ accel-tile
def test_accel_tile_builds_the_loops_the_plan_names():
    m = run("accel-tile", fixture("matmul_v3_4_Cs_annotated.mlir"))
    # plan: cache [252, 252, 0], permutation [0, 1, 2], tiles 4 everywhere
    assert loops(m) == [("cache", "m"), ("cache", "n"), ("tile", "m"), ("tile", "n"), ("tile", "k")]
    g = the_generic(m)
    assert "accel.tiled" in g.attributes and "accel.plan" in g.attributes and enclosing(g) == ["m", "n", "m", "n", "k"]
    steps = [o.step.owner.value.value.data for o in m.walk() if isinstance(o, scf.ForOp)]
    assert steps == [252, 252, 4, 4, 4]


@pytest.mark.parametrize("old,new,message", [
    ("dims [m, n, k]", "dims [m, n, q]", "names dims (m, n, q); accelerator v3_4 has (m, n, k)"),
    ("tiles [4, 4, 4]", "tiles [8, 4, 4]", "tile 8 for dim 'm' must be 4 (fixed)"),
    ('flow "Cs"', 'flow "Zs"', "no opcode flow named 'Zs'"),
])
def test_accel_tile_rejects_a_plan_that_does_not_fit_the_op(old, new, message):
    text = fixture("matmul_v3_4_Cs_annotated.mlir")
    assert old in text
    with pytest.raises(LoomError, match=re.escape(message)) as err:
        run("accel-tile", text.replace(old, new))
    assert "linalg.generic" in str(err.value) or "Zs" in str(err.value)


# ------------------------------------------------------------------ accel-place-flow
def test_accel_place_flow_places_the_opcodes_at_their_levels():
    m = run("accel-place-flow,dce", fixture("matmul_v3_4_Cs_tiled.mlir"))
    assert not [o for o in m.walk() if isinstance(o, GenericOp)]
    sends = [o for o in m.walk() if isinstance(o, accel.SendOp)]
    assert [enclosing(s) for s in sends] == [["m", "n", "m", "n", "k"]] * 2  # A and B per k-step
    assert all(list(s.padded_shape.get_values()) == [4, 4] for s in sends)
    (recv,) = [o for o in m.walk() if isinstance(o, accel.RecvOp)]
    assert enclosing(recv) == ["m", "n", "m", "n"] and recv.mode.data == "accumulate"  # sendC after the k loop
    assert list(recv.padded_shape.get_values()) == [4, 4]
    literals = sorted(o.value.owner.value.value.data for o in m.walk() if isinstance(o, accel.SendLiteralOp))
    assert literals == [7, 8]
    (init,) = [o for o in m.walk() if isinstance(o, accel.InitDmaOp)]
    assert init.input_size.owner.value.value.data == 262144  # v3_4's dma.input_size, from the IR


def test_accel_place_flow_rejects_a_loop_over_an_unknown_dim():
    text = fixture("matmul_v3_4_Cs_tiled.mlir").replace('#accel.loop<tile "k">', '#accel.loop<tile "q">')
    with pytest.raises(LoomError, match=re.escape("a tile loop over dim 'q' encloses the tiled op")):
        run("accel-place-flow", text)


def test_accel_place_flow_opens_one_dma_session_around_a_batch_loop():
    """The batch loop's problems share one init_dma / free_dma (one timeline); each problem's
    opcodes stay inside the batch loop, at their levels of its tile nest."""
    m = run(f'linalg-generalize-named-ops,convert-linalg-to-accel{{accel-file="{V3}" accelerator="v3_4" '
            'flow="Cs"},accel-tile,accel-place-flow,dce', fixture("batch_matmul_3x12x8x20.mlir"))
    (batch,) = [o for o in m.walk() if isinstance(o, scf.ForOp) and loops_of(o) == ("batch", "b")]
    (init,) = [o for o in m.walk() if isinstance(o, accel.InitDmaOp)]
    (free,) = [o for o in m.walk() if isinstance(o, accel.FreeDmaOp)]
    body = batch.parent_block()
    assert init.parent_block() is body and free.parent_block() is body
    ops = list(body.ops)
    assert ops.index(init) < ops.index(batch) < ops.index(free)
    sends = [o for o in m.walk() if isinstance(o, accel.SendOp)]
    assert [enclosing(s) for s in sends] == [["b", "m", "n", "m", "n", "k"]] * 2  # A and B per k-step
    (recv,) = [o for o in m.walk() if isinstance(o, accel.RecvOp)]
    assert enclosing(recv) == ["b", "m", "n", "m", "n"]


def test_a_batch_loop_role_parses_and_an_unknown_role_is_refused():
    text = fixture("batch_matmul_3x12x8x20.mlir")
    assert '#accel.loop<batch "b">' in str(Parser(context(), text).parse_module())
    with pytest.raises(Exception, match="tile, cache or batch"):
        Parser(context(), text.replace("<batch", "<batches")).parse_module()


# ------------------------------------------------------------------ accel-coalesce
def test_accel_coalesce_turns_flushes_into_guarded_batches():
    m = run("accel-coalesce", fixture("matmul_v3_4_Cs_placed.mlir"))
    names = [o.name for o in m.walk()]
    assert "accel.flush_send" not in names
    # one guarded flush per statically sized run (one per opcode here) + one before the receive + one at the end
    assert names.count("accel.start_send") == 2 + 1 + 1 and names.count("accel.wait_send") == 4


def test_accel_coalesce_makes_room_for_an_opcode_and_its_dynamic_window_at_once():
    """conv: opcode 70 (1 word) and its 2x3x3 window (a subview of dynamic type, at most 18 words): the
    first room check asks for all 19 words, so a flush never leaves the opcode behind its window."""
    from xdsl.dialects import arith

    from loom.dialects import accel
    m = run("accel-coalesce", fixture("conv_1x2x7x7_placed.mlir"))
    sends = [o for o in m.walk() if isinstance(o, accel.SendOp)]
    assert len(sends) == 2  # the filter slice (opcode 1 + 2x3x3 words), the window (opcode 70 + 2x3x3)

    def need(op) -> int | None:
        """Words the room check before ``op`` asks for: its offset is select((pending + need) > capacity
        and pending > 0, 0, pending)."""
        check = op.operands[1].owner
        assert isinstance(check, arith.SelectOp)
        words = check.cond.owner.lhs.owner.lhs.owner.rhs.owner
        return words.value.value.data if isinstance(words, arith.ConstantOp) else None

    for send in sends:
        opcode = [o for o in send.parent_block().ops if isinstance(o, accel.SendLiteralOp)][0]
        assert need(opcode) == 1 + 2 * 3 * 3
        assert need(send) is None  # the tile's own check (its actual words) stays


# ------------------------------------------------------------------ convert-accel-to-runtime
def test_convert_accel_to_runtime_leaves_plain_mlir():
    m = run("convert-accel-to-runtime,dce", fixture("matmul_v3_4_Cs_placed.mlir"))
    assert not [o for o in m.walk() if o.name.startswith("accel.")]
    assert not [k for o in m.walk() for k in o.attributes if k.startswith("accel.")]
    calls = [o.callee.root_reference.data for o in m.walk() if o.name == "func.call"]
    assert calls.count("copy_to_inbuffer_padded_i32") == 2 and calls.count("copy_from_outbuffer_padded_acc_i32") == 1


def test_double_buffered_sends_wait_for_the_previous_send_only_once_one_started():
    from xdsl.dialects import func, memref
    m = run("convert-accel-to-runtime{double-buffer=true}", fixture("matmul_v3_4_Cs_placed.mlir"))
    (switch,) = [o for o in m.walk() if o.name == "func.call" and o.callee.root_reference.data ==
                 "loom_dma_set_double_buffering"]
    sends = [o for o in m.walk() if o.name == "func.call" and o.callee.root_reference.data == "dma_start_send"]
    waits = [o for o in m.walk() if o.name == "func.call" and o.callee.root_reference.data == "dma_wait_send"]
    assert sends and len(waits) == len(sends) + 1  # one before each send, one at dma_free
    # the cell: 0 right after the switch, 1 after every send; each wait before a send runs only when it is 1
    (cell,) = [o for o in m.walk() if isinstance(o, memref.AllocaOp)]
    assert cell.parent_block() is switch.parent_block()
    stores = [o for o in m.walk() if isinstance(o, memref.StoreOp) and o.memref is cell.results[0]]
    assert [s.value.owner.value.value.data for s in stores] == [0] + [1] * len(sends)
    for send in sends:
        ops = list(send.parent_block().ops)
        at = ops.index(send)
        after = [o for o in ops[at + 1:] if isinstance(o, (memref.StoreOp, func.CallOp, scf.IfOp))]
        assert after[0] in stores
        guard = [o for o in ops[:at] if isinstance(o, (func.CallOp, scf.IfOp))][-1]
        assert isinstance(guard, scf.IfOp) and isinstance(guard.true_region.block.first_op, func.CallOp)
        assert guard.true_region.block.first_op.callee.root_reference.data == "dma_wait_send"
        test = guard.cond.owner
        assert test.predicate.value.data == 1 and test.lhs.owner.memref is cell.results[0]  # ne
    (free,) = [o for o in m.walk() if o.name == "func.call" and o.callee.root_reference.data == "dma_free"]
    assert not isinstance(waits[-1].parent_op(), scf.IfOp) and waits[-1].parent_block() is free.parent_block()
