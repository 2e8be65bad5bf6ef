"""Flow placement against the paper's hand-written drivers (Fig. 6b, Fig. 15b) and legality rules."""

from __future__ import annotations

import os

import pytest

from loom.accel.description import load_description
from loom.accel.opcodes import Recv, located_error
from loom.accel.validate import place_flow, tile_shape
from loom.errors import LoomError

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "loom", "examples", "accelerators")


def accel(file, name):
    return load_description(os.path.join(EXAMPLES, file)).accelerator(name)


def summary(placement):
    return [(p.id, p.level, p.position) for p in placement.opcodes]


def test_a_stationary_matches_fig_6b():
    # Fig. 6b: loops m, k, n; sA sent in the second loop's body before the n loop,
    # sBcCrC (send B, compute, receive C with accumulate) in the innermost body.
    p = place_flow(accel("matmul_v3.json", "v3_4"), "As")
    assert p.loop_order == ("m", "k", "n") and p.tile_loops == ("m", "k", "n")
    assert summary(p) == [("sA", 2, "before"), ("sBcCrC", 3, "body")]
    recv = [a for a in p.opcodes[1].actions if isinstance(a.action, Recv)][0]
    assert recv.mode == "accumulate" and recv.operand.name == "C" and recv.words == 16
    assert p.opcodes[0].words_sent == 1 + 16  # opcode word + a 4x4 tile of A


def test_c_stationary_receives_after_the_reduction_loop():
    p = place_flow(accel("matmul_v3.json", "v3_16"), "Cs")
    # ((s) r): s in the k loop body, r in the n loop body after the k loop
    assert summary(p) == [("sABcC", 3, "body"), ("sendC", 2, "after")]
    assert not p.accumulate_on_cpu
    assert p.at(2, "after")[0].words_received == 256


def test_b_stationary_and_nothing_stationary():
    v2 = accel("matmul_v2.json", "v2_8")
    assert summary(place_flow(v2, "Bs")) == [("sB", 2, "before"), ("sAcC", 3, "body"), ("rC", 3, "body")]
    assert place_flow(v2, "Bs").tile_loops == ("n", "k", "m")
    assert summary(place_flow(v2, "Ns")) == [("sAB", 3, "body"), ("rC", 3, "body")]
    assert place_flow(v2).flow == "As"  # the selected flow by default


def test_conv_output_stationary_matches_fig_15b():
    conv = accel("conv2d.json", "conv_os")
    p = place_flow(conv)
    # ic, fh, fw are taken whole: the tile loops are b, oc, oh, ow
    assert p.tile_loops == ("b", "oc", "oh", "ow")
    assert [(i.id, i.level) for i in p.init] == [("setF", 0), ("setC", 0)]
    assert summary(p) == [("sF", 2, "before"), ("sIcS", 4, "body"), ("rO", 2, "after")]
    # init sends: literal 32 then dim 3 of operand 1 (filter fw); literal 16 then dim 1 of operand 0 (ic)
    set_f = p.init[0].actions
    assert set_f[0].action.value == 32 and (set_f[1].operand.name, set_f[1].action.dim) == ("W", 3)
    assert str(set_f[1].operand.subscripts[3]) == "fw"
    rO = p.opcodes[2].actions[1]
    assert rO.region_dims == ("oh", "ow") and rO.mode == "accumulate" and rO.words is None
    # 64 + 4 + 2: save output, compute, read inputs
    assert p.opcodes[1].actions[0].action.value == 70


def test_conv_input_window_shape():
    conv = accel("conv2d.json", "conv_os")
    sizes = {"b": 1, "oc": 1, "oh": 1, "ow": 1, "ic": 256, "fh": 3, "fw": 3}
    assert tile_shape(conv.operand("I"), sizes) == (1, 256, 3, 3)  # oh + fh over a 1x3 range: 1 + 0 + 2
    assert tile_shape(conv.operand("W"), sizes) == (1, 256, 3, 3)


def test_conv_without_region_operand_is_rejected():
    from loom.accel.description import parse_description
    import json

    with open(os.path.join(EXAMPLES, "conv2d.json")) as fh:
        data = json.load(fh)
    data["cpu"] = {"caches": [{"name": "L1", "size": 32768}]}
    data["accelerators"][0]["opcode_flows"]["Os"].pop("region_operands")
    system = parse_description(data)
    with pytest.raises(LoomError) as info:
        place_flow(system.accelerators[0])
    assert "receives O(b, oc, oh, ow)" in info.value.message and "inner loops oh, ow change it" in info.value.message
    assert info.value.column == 15  # the rO id in "((sF ((sIcS)) rO))"


def test_every_v1_to_v4_flow_keeps_stationary_operand_outside_inner_loop():
    # independent restatement of the rule: the operand sent at level 2 must not use the innermost dim
    for file, names in [("matmul_v2.json", ["v2_4"]), ("matmul_v3.json", ["v3_8"]), ("matmul_v4.json", ["v4_16"])]:
        for name in names:
            acc = accel(file, name)
            for flow in acc.flows:
                p = place_flow(acc, flow.name)
                innermost = p.tile_loops[-1]
                for op in p.at(2, "before"):
                    for a in op.actions:
                        if a.operand is not None:
                            assert innermost not in a.operand.used_dims


def test_long_text_error_window_keeps_caret_under_the_character():
    text = "x" * 200 + "!" + "y" * 200
    err = located_error(text, 200, "bad char")
    shown, caret = err.message.split("\n")[1:3]
    assert shown[caret.index("^")] == "!" and err.column == 201


def test_chosen_flexible_tiles_drive_word_counts():
    v4 = accel("matmul_v4.json", "v4_16")
    p = place_flow(v4, "As", {"m": 32, "n": 16, "k": 64})
    # opcode + extension word + A tile 32x64; B tile 64x16 in, C tile 32x16 out
    assert p.opcodes[0].words_sent == 2 + 32 * 64
    assert (p.opcodes[1].words_sent, p.opcodes[1].words_received) == (2 + 64 * 16, 32 * 16)
    with pytest.raises(LoomError) as info:
        place_flow(v4, "As", {"n": 40})
    assert info.value.where == "accelerators[0].tile_sizes.n"
