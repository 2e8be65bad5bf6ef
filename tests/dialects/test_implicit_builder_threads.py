"""xDSL's implicit builder used on several threads at once (parsing linalg named ops builds their bodies with it).

xDSL 0.74 hooks op creation process-wide while its builder is per thread; without
``loom.dialects.implicit_builder`` most of these failed (ParseError at a linalg op, "Can't add to a block an
operation already attached to a block", an empty matmul body).
"""

from __future__ import annotations

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Block
from xdsl.parser import Parser

from loom.dialects import context
from tests.threads import run_together

TEXT = """
func.func @mm(%a: memref<4x3xi32>, %b: memref<3x5xi32>, %c: memref<4x5xi32>) {
  linalg.matmul ins(%a, %b : memref<4x3xi32>, memref<3x5xi32>) outs(%c : memref<4x5xi32>)
  linalg.matmul ins(%a, %b : memref<4x3xi32>, memref<3x5xi32>) outs(%c : memref<4x5xi32>)
  func.return
}
"""


def test_threads_parse_linalg_ops_as_one_thread_does():
    expected = str(Parser(context(), TEXT).parse_module())

    def parse(t: int, r: int) -> None:
        module = Parser(context(), TEXT).parse_module()
        module.verify()
        assert str(module) == expected, "differs from the one-thread parse"

    failures = run_together(parse)
    assert not failures, f"{len(failures)} parses failed; first: {failures[0][:300]}"


def test_each_thread_builds_into_its_own_block():
    def build(t: int, r: int) -> None:
        block = Block()
        with ImplicitBuilder(block):
            ops = [arith.ConstantOp(IntegerAttr(k, i32)) for k in range(20)]
        assert list(block.ops) == ops  # each op once, in this thread's block

    failures = run_together(build)
    assert not failures, f"{len(failures)} blocks wrong; first: {failures[0][:300]}"


def test_the_hook_is_pinned_to_the_xdsl_it_replaces():
    # the hook replaces xDSL internals: the installed xDSL must be the one it was written for (pyproject's pin)
    import re
    from pathlib import Path

    from xdsl.ir import Operation

    from loom.dialects import implicit_builder as ib

    pin = re.search(r'"xdsl==([^"]+)"', (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert pin and pin.group(1) == ib.WRITTEN_FOR
    assert ib.xdsl_version() == ib.WRITTEN_FOR, f"xDSL {ib.xdsl_version()} installed, the hook is {ib.WRITTEN_FOR}'s"
    ib.check_xdsl()
    with ImplicitBuilder(Block()):  # xDSL's entry and exit keep the hook installed
        assert getattr(Operation.__post_init__, "_loom_thread_safe", False)
    assert getattr(Operation.__post_init__, "_loom_thread_safe", False)


def test_changed_xdsl_internals_are_refused_naming_the_version(monkeypatch):
    import types

    import pytest
    import xdsl.builder as real

    from loom.dialects import implicit_builder as ib
    from loom.errors import LoomError

    def fake(**changes):
        names = ("_current_builder", "_op_init_callback", "_override_operation_post_init", "ImplicitBuilder")
        return types.SimpleNamespace(**{**{n: getattr(real, n) for n in names}, **changes})

    def new_post_init_elsewhere():
        def wrapper(op):
            return op
        return wrapper

    def implicit_builder_without_the_hook(arg):
        yield arg
    plain = types.SimpleNamespace(__wrapped__=implicit_builder_without_the_hook)
    monkeypatch.setattr(ib, "xdsl_version", lambda: "9.9.9")
    ib.check_xdsl(fake())  # the real internals, seen through the fake, pass
    for changes, what in [({"_current_builder": object()}, "not a threading.local"),
                          ({"_current_builder": None}, "not a threading.local"),
                          ({"_op_init_callback": lambda op: None}, "_op_init_callback no longer only inserts"),
                          ({"_override_operation_post_init": new_post_init_elsewhere},
                           "_override_operation_post_init no longer wraps"),
                          ({"ImplicitBuilder": plain}, "ImplicitBuilder no longer hooks op creation")]:
        with pytest.raises(LoomError, match=rf"replaces xDSL 0\.74\.0's implicit-builder hook, but the installed "
                                            rf"xDSL 9\.9\.9 differs: .*{what}.*install xdsl==0\.74\.0") as info:
            ib.check_xdsl(fake(**changes))
        assert info.value.where == "loom.dialects.implicit_builder"
