"""The accel dialect's custom syntax and attributes: textual IR in, the same IR out; malformed attributes and
properties are errors that name the op or attribute; the generic form parses in upstream mlir-opt."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from loom.dialects import accel, context
from loom.oracle import mlir

HERE = Path(__file__).parent
OPS = (HERE / "accel_ops.mlir").read_text()


def parse(text: str):
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def body(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("//"))


def test_every_op_round_trips_in_custom_syntax():
    module = parse(OPS)
    names = {o.name for o in module.walk() if o.name.startswith("accel.")}
    assert names == {op.name for op in accel.Accel.operations}  # the fixture uses every op
    assert str(module) == body(OPS)
    again = parse(str(module))
    assert str(again) == str(module)
    sends = [o for o in module.walk() if isinstance(o, accel.SendOp)]
    assert sends[0].padded_shape is None and list(sends[1].padded_shape.get_values()) == [8, -1]
    recvs = [o for o in module.walk() if isinstance(o, accel.RecvOp)]
    assert [r.mode.data for r in recvs] == ["accumulate", "replace"]


def test_generic_form_reparses_equal():
    module = parse(OPS)
    again = parse(mlir.to_generic_text(module))
    assert str(again) == str(module)


PLAN = '#accel.plan<flow "As", dims [m, n, k], tiles [16, 16, 16], cache [64, 0, 64], permutation [0, 2, 1]>'
ACC = '#accel.accelerator<"x", "{\\"accelerators\\":[{\\"name\\":\\"x\\"}]}">'


def attr(text: str):
    return Parser(context(), text).parse_attribute()


def test_attributes_round_trip():
    for text in (PLAN, ACC, '#accel.loop<tile "m">', '#accel.loop<cache "k">'):
        assert str(attr(text)) == text
    plan = attr(PLAN)
    assert isinstance(plan, accel.PlanAttr)
    assert (plan.flow.data, plan.dim_names, plan.tile_sizes, plan.cache_tiles, plan.order) == \
        ("As", ("m", "n", "k"), (16, 16, 16), (64, 0, 64), (0, 2, 1))
    assert attr(ACC).content == {"accelerators": [{"name": "x"}]}


@pytest.mark.parametrize("text,message", [
    (PLAN.replace("tiles [16, 16, 16]", "tiles [16, 16]"), "tiles has 2 entries, dims has 3 (m, n, k)"),
    (PLAN.replace("permutation [0, 2, 1]", "permutation [0, 2, 2]"), "permutation [0, 2, 2] is not a permutation of 0..2"),
    (PLAN.replace("dims [m, n, k]", "dims [m, m, k]"), "name a dim twice"),
    (PLAN.replace("cache [64, 0, 64]", "cache [64, -1, 64]"), "cache must be >= 0"),
    ('#accel.loop<inner "m">', "tile, cache or batch"),
    ('#accel.accelerator<"x", "{not json">', "is not valid JSON"),
    ('#accel.accelerator<"y", "{\\"accelerators\\":[{\\"name\\":\\"x\\"}]}">', "describes accelerator 'x'"),
    ('#accel.accelerator<"x", "{\\"cpu\\":\\"host.json\\",\\"accelerators\\":[{\\"name\\":\\"x\\"}]}">',
     "not a file reference"),
])
def test_malformed_attributes_are_rejected(text, message):
    with pytest.raises((VerifyException, ParseError), match=re.escape(message)):
        attr(text)


@pytest.mark.parametrize("old,new,message", [
    ("padded [8, -1]", "padded [8, -1, 2]", "accel.send: padded shape [8, -1, 2] has 3 entries, the tile has rank 2"),
    ("padded [4, 4]", "padded [4, 0]", "accel.recv: padded shape [4, 0]: each entry must be -1 (as is) or positive"),
    ('"replace"', '"overwrite"', "accel.recv: mode must be one of accumulate, replace"),
    ("%1[0]", "%1[2]", "accel.send_dim: dim 2 is out of range for a rank-2 tile"),
])
def test_op_verifiers_name_the_op(old, new, message):
    assert old in OPS
    with pytest.raises(VerifyException, match=re.escape(message)):
        parse(OPS.replace(old, new))


@pytest.mark.mlir
def test_generic_form_with_accel_attributes_parses_in_upstream_mlir_opt():
    text = OPS.replace("accel.free_dma", f"accel.free_dma {{accel.plan = {PLAN}, accel.accelerator = {ACC}, "
                                         'accel.loop = #accel.loop<tile "m">}')
    module = parse(text)
    assert "accel.plan" in mlir.to_generic_text(module)
    mlir.verify(module, allow_unregistered=True)
