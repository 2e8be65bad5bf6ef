"""convert-esn-to-linalg on textual IR: a gather sum becomes fill + linalg.generic with a load inside."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser

from loom.dialects import context
from loom.errors import LoomError
from loom.passes import Pipeline

DATA = Path(__file__).parent / "data"


def test_gather_reduction_lowers_to_fill_and_generic():
    module = Parser(context(), (DATA / "gather_sum.mlir").read_text()).parse_module()
    out = str(Pipeline.parse("convert-esn-to-linalg").run(module))
    assert "esn." not in out
    assert "linalg.fill" in out and out.count("linalg.generic") == 1
    # j[x] is a direct subscript -> input; a[j[x] + 1, c] is a gather -> memref.load from linalg.index values
    assert 'iterator_types = ["parallel", "reduction"]' in out
    assert "affine_map<(d0, d1) -> (d0)>" in out and "affine_map<(d0, d1) -> (d1)>" in out
    assert "linalg.index 1" in out
    assert "memref.load %1[" in out and "arith.addi" in out


def test_reduction_index_only_in_a_gather_gets_a_scratch_bound_carrier():
    module = Parser(context(), (DATA / "gather_only_reduction.mlir").read_text()).parse_module()
    out = str(Pipeline.parse("convert-esn-to-linalg").run(module))
    assert "esn." not in out
    # the reduction loop's bound comes from a scratch i8 buffer of the let's (dynamic) extent, freed at return
    assert "memref.alloc(%n) : memref<?xi8>" in out and "memref.dealloc" in out
    assert "ins(%0, %5 : memref<4xindex>, memref<?xi8>)" in out
    assert "affine_map<(d0, d1) -> (d1)>" in out and 'iterator_types = ["parallel", "reduction"]' in out


@pytest.mark.mlir
def test_scratch_bound_carrier_verifies_in_mlir_opt():
    from loom.oracle import verify

    module = Parser(context(), (DATA / "gather_only_reduction.mlir").read_text()).parse_module()
    verify(Pipeline.parse("convert-esn-to-linalg").run(module))


@pytest.mark.sanitize
def test_reduction_index_only_in_gathers_runs():
    import numpy as np

    import loom

    kernel = loom.ekl.load("kernel g(j : index[4], a : f64[6, 3], y : out& f64[4])\n"
                           "{\n    out y[x] = <+ c: _2< a[j[x] + _1, c] * a[_0, c];\n}\n").g
    rng = np.random.default_rng(7)
    j, a = rng.integers(0, 5, 4), rng.random((6, 3))
    y = np.zeros(4)
    kernel(j, a, y)
    np.testing.assert_allclose(y, a[j + 1] @ a[0], rtol=1e-14)


def test_cli_runs_and_prints_ir(capsys):
    from loom.cli import main
    from loom.examples.ekl_paths import EKL_EXAMPLES

    assert main(["ekl", "run", str(EKL_EXAMPLES["rrtmg_major"])]) == 0
    assert "max relative error vs numpy" in capsys.readouterr().out
    assert main(["ekl", "ir", str(EKL_EXAMPLES["inverse_helmholtz"]), "--stage", "linalg"]) == 0
    assert "linalg.generic" in capsys.readouterr().out
    assert main(["ekl", "run", "missing.ekl"]) == 1
    # a path without the .ekl suffix is still a path (before: read as EKL source, "unknown character '.'")
    for command in ("run", "explore", "ir"):
        assert main(["ekl", command, "missing.txt"]) == 1
        assert "EKL file not found: missing.txt" in capsys.readouterr().err


def test_unreadable_ekl_file_is_a_located_error(tmp_path):
    from loom.ekl import load

    bad = tmp_path / "bad.ekl"
    bad.write_bytes(b"\xff\xfe kernel")
    with pytest.raises(LoomError, match="cannot read EKL file .*bad.ekl"):
        load(bad)


def test_subscripts_inside_an_scf_if_arm_become_loads_in_that_arm():
    module = Parser(context(), (DATA / "guarded_gather.mlir").read_text()).parse_module()
    out = str(Pipeline.parse("convert-esn-to-linalg").run(module))
    assert "esn." not in out
    then_arm = out[out.index("scf.if"):out.index("} else {")]
    # the gather and its index lookup are loads inside the taken arm only, from a linalg.index defined outside
    assert then_arm.count("memref.load") == 2 and "memref.load %1[%12, %8]" in then_arm
    assert out.index("linalg.index 0") < out.index("scf.if")
    assert "ins(%0 : memref<5xindex>)" in out  # the top-level direct subscript stays an input


@pytest.mark.mlir
def test_scf_if_arm_lowering_verifies_in_mlir_opt():
    from loom.oracle import verify

    module = Parser(context(), (DATA / "guarded_gather.mlir").read_text()).parse_module()
    verify(Pipeline.parse("convert-esn-to-linalg").run(module))


def test_cli_run_sizes_dynamic_extents_congruently_and_counts_their_flops(tmp_path, capsys):
    """A '?' indexed beside a known extent takes it (before: every '?' was --size, and the run failed its
    own congruence check); the flop count is the run's (before: each '?' counted as 16)."""
    from loom.cli import main
    import loom.ekl
    from loom.jit.ekl import congruent_extents

    path = tmp_path / "k.ekl"
    path.write_text("kernel k(a : f64[?, ?], c : f64[4], b : out& f64[?]) {\n"
                    "    out b[i] = <+ j< a[i, j] * c[j];\n}\n")
    assert main(["ekl", "run", str(path), "--size", "3"]) == 0
    out = capsys.readouterr().out
    assert "output b (3,)" in out and f" {3 * 4 * 2} flops per call" in out
    kernel = loom.ekl.load(path).k
    extents = {(d.param, d.axis): n for d, n in congruent_extents(kernel.form, 3).items()}
    assert extents == {("a", 0): 3, ("a", 1): 4, ("b", 0): 3}
