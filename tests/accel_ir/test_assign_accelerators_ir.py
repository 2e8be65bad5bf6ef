"""``convert-linalg-to-accel{assign=..}``, textual ``.mlir`` in -> IR out: each op of a function goes to the
accelerator its entry names (``*`` first match, ``-`` the host); a wrong entry is a LoomError naming the op
or the entry. The system is ``systems/matmul_conv.json`` (v3_4, v3_16, conv_os, each on its own DMA engine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.parser import Parser

from loom.dialects import context
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from loom.passes import Pipeline

MULTI = Path(__file__).resolve().parents[1] / "accel_flow" / "multi"
SYSTEM = ACCELERATORS_DIR / "systems" / "matmul_conv.json"


def run(fixture: str, options: str):
    module = Parser(context(), (MULTI / fixture).read_text()).parse_module()
    Pipeline.parse(f'linalg-generalize-named-ops,convert-linalg-to-accel{{accel-file="{SYSTEM}" {options}}}').run(module)
    return module


def placed(module) -> list[tuple[str | None, tuple[int, ...] | None]]:
    """Per linalg.generic: (accelerator, tiles) of its plan, (None, None) when left to the host."""
    out = []
    for g in (o for o in module.walk() if isinstance(o, GenericOp)):
        acc, plan = g.attributes.get("accel.accelerator"), g.attributes.get("accel.plan")
        out.append((acc.accelerator.data if acc else None, plan.tile_sizes if plan else None))
    return out


def test_without_assign_every_op_takes_the_first_accelerator_that_matches():
    assert placed(run("two_matmuls_4_48.mlir", "")) == [("v3_4", (4, 4, 4)), ("v3_4", (4, 4, 4))]


def test_assign_puts_each_op_on_its_accelerator_and_the_ir_reads_back():
    module = run("two_matmuls_4_48.mlir", 'assign="v3_4","v3_16"')
    assert placed(module) == [("v3_4", (4, 4, 4)), ("v3_16", (16, 16, 16))]
    again = Parser(context(), str(module)).parse_module()  # the stage hands over nothing but the IR
    assert placed(again) == placed(module)


def test_star_is_the_first_match_and_dash_leaves_the_op_to_the_host():
    module = run("conv_then_matmul.mlir", 'assign="*","-"')
    assert placed(module) == [("conv_os", (1, 1, 1, 1, 0, 0, 0)), (None, None)]
    module = run("matmul_add_matmul.mlir", 'assign="v3_16","*","v3_4"')
    # the add matches no accelerator: "*" leaves it alone, as without assign
    assert placed(module) == [("v3_16", (16, 16, 16)), (None, None), ("v3_4", (4, 4, 4))]


@pytest.mark.parametrize("options,message", [
    ('assign="v3_4"', r"assign has 1 entries, the module 2 linalg.generic ops"),
    ('assign="v3_4","v9"', r"entry 1: no accelerator 'v9' in the description; expected one of v3_4, v3_16, conv_os"),
    ('assign="conv_os","v3_4"', r"linalg.generic .* is assigned to accelerator conv_os but does not match it"),
    ('accelerator="v3_4" assign="v3_4","v3_16"', r"give accelerator or assign, not both"),
])
def test_a_wrong_assignment_names_the_entry_or_the_op(options, message):
    with pytest.raises(LoomError, match=message) as err:
        run("two_matmuls_4_48.mlir", options)
    assert "assign" in str(err.value)


def test_assign_without_a_description_file_is_refused():
    module = Parser(context(), (MULTI / "two_matmuls_4_48.mlir").read_text()).parse_module()
    with pytest.raises(LoomError, match="assign needs accel-file"):
        Pipeline.parse('convert-linalg-to-accel{assign="v3_4","v3_16"}').run(module)
