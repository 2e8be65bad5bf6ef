"""Defect 1: no compiled route loses the call-time checks of dims shared between arguments.

The kernel frontend records the name of each dynamic dim in the IR (``loom.dims`` argument
attributes); every route that compiles that IR checks them before C runs."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc

from loom import Dim, I32, MemRef, kernel, linalg
from loom.backends.c import compile_module
from loom.dialects.dims import DIMS_ATTR, arg_dim_names
from loom.driver import compile_driver
from loom.errors import LoomError
from loom.examples.kernels import matmul_loops as mm_loops
from loom.oracle.tools import tool_path
from loom.passes import Pipeline

M, N, K = Dim("M"), Dim("N"), Dim("K")


@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)




def routes(k):
    lowered = Pipeline.parse("loom-convert-linalg-to-loops,canonicalize,cse").run(k.module.clone())
    yield "kernel(...)", k
    yield "kernel.compile()(...)", k.compile()
    yield "compile_module(Pipeline(...).run(...))", compile_module(lowered).function(k.name)
    tiled = Pipeline.parse("loom-convert-linalg-to-loops,scf-tile-and-interchange{tile-sizes=4,4},canonicalize")
    yield "compile_module(tiled pipeline)", compile_module(tiled.run(k.module.clone())).function(k.name)


def test_frontend_records_named_dims():
    fop = next(iter(mm_loops.module.body.block.ops))
    assert arg_dim_names(fop) == [("M", "K"), ("K", "N"), ("M", "N")]
    assert f'{DIMS_ATTR} = ["M", "K"]' in mm_loops.ir()


@pytest.mark.sanitize
@pytest.mark.parametrize("bad_axis", ["K", "M", "N"])
def test_every_route_refuses_mismatched_arrays(bad_axis):
    shapes = {"K": ((8, 6), (5, 4), (8, 4)), "M": ((8, 6), (6, 4), (9, 4)), "N": ((8, 6), (6, 4), (8, 3))}[bad_axis]
    rng = np.random.default_rng(0)
    for k, dtype in ((mm, np.int32), (mm_loops, np.float32)):
        arrays = [rng.integers(-3, 3, size=s).astype(dtype) for s in shapes]
        all_routes = list(routes(k))
        if k is mm:
            all_routes.append(("compile_driver(...)(...)", compile_driver(mm, desc("matmul_v3.json"), "v3_4", "Ns")))
        for name, fn in all_routes:
            before = [a.copy() for a in arrays]
            with pytest.raises(LoomError, match=rf"\b{bad_axis}\b|dim") as err:
                fn(*arrays)
            text = str(err.value)
            assert "must be equal" in text, (name, text)
            for a, b in zip(arrays, before):
                np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.sanitize
def test_every_route_still_computes_with_agreeing_arrays():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((8, 6)).astype(np.float32), rng.standard_normal((6, 4)).astype(np.float32)
    for name, fn in routes(mm_loops):
        C = np.zeros((8, 4), np.float32)
        fn(A, B, C)
        np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5, err_msg=name)


def test_message_names_both_arguments_and_axes():
    A, B, C = np.zeros((8, 6), np.float32), np.zeros((5, 4), np.float32), np.zeros((8, 4), np.float32)
    with pytest.raises(LoomError) as err:
        mm_loops.compile()(A, B, C)
    text = str(err.value)
    assert "argument 1 (B) dim 0 has size 5" in text and "argument 0 (A) dim 1 has size 6" in text
    assert "shared dimension K" in text


@pytest.mark.mlir
def test_upstream_mlir_opt_verifies_the_annotated_ir(tmp_path):
    path = tmp_path / "mm.mlir"
    path.write_text(mm_loops.ir())
    out = subprocess.run([str(tool_path("mlir-opt")), str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert 'loom.dims = ["K", "N"]' in out.stdout


@pytest.mark.parametrize("flow", ["Ns", "Cs"])
def test_driver_refuses_an_output_that_aliases_an_input(flow):
    # C = B[:8] aliases B: the driver would read B tile by tile while writing C back, a result that
    # differs from the kernel's own sequential one; it must refuse, leaving the arrays untouched
    rng = np.random.default_rng(2)
    A, B = rng.integers(-3, 3, (8, 16)).astype(np.int32), rng.integers(-3, 3, (16, 8)).astype(np.int32)
    before = B.copy()
    drv = compile_driver(mm, desc("matmul_v3.json"), "v3_4", flow)
    with pytest.raises(LoomError, match="output C shares memory with operand B"):
        drv(A, B, B[:8])
    np.testing.assert_array_equal(B, before)
    C = np.zeros((8, 8), np.int32)
    drv(A, B, C)  # distinct arrays still run
    np.testing.assert_array_equal(C, A @ B)


def test_a_driver_compiled_without_build_says_so_when_called():
    drv = compile_driver(mm, desc("matmul_v3.json"), "v3_4", "Ns", build=False)
    A = np.ones((4, 4), np.int32)
    with pytest.raises(LoomError, match="build=False"):
        drv(A, A, np.zeros((4, 4), np.int32))
