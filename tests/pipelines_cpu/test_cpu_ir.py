"""The lowered IR verifies in xDSL and in upstream mlir-opt, and upstream MLIR (mlir-runner) executes it
to the same results: an execution path independent of loom's C backend."""

import numpy as np
import pytest
from tests.pipelines_cpu.cpu_apps import APPS, example, numpy_reference, output_size, random_inputs
from tests.pipelines_cpu.test_cpu_semantics import INT_OPS, N, int_ops_pipeline, python_int_ops

from loom.frontends import pipeline as pl
from loom.frontends.pipeline import lower_pipeline
from loom.oracle.mlir import run, verify
from loom.passes.recipes import lower_to_c


@pytest.mark.mlir
@pytest.mark.parametrize("schedule", ["cpu", "accel"])
def test_every_app_verifies_upstream(schedule):
    for name in APPS:
        mod = example(name)
        out, _ = mod.build(schedule)
        inputs = random_inputs(name, mod, (9, 6))
        module = lower_pipeline(out, {k: v.shape for k, v in inputs.items()}, output_size(name, (9, 6)))
        module.verify()
        verify(module)
        ops = {op.name.split(".")[0] for op in module.walk()}
        assert ops <= {"builtin", "func", "scf", "memref", "arith", "math"}, (name, ops)
        if schedule == "cpu":  # (the accel schedules' fully unrolled bodies make this slow)
            verify(lower_to_c(module))


def _storage(a):
    return a.view({1: np.int8, 2: np.int16, 4: np.int32}[a.dtype.itemsize]) if a.dtype.kind == "u" else a


@pytest.mark.mlir
@pytest.mark.parametrize("name", ["harris", "camera_pipeline", "unsharp", "gemm"])
def test_apps_run_under_mlir_runner(name):
    mod = example(name)
    out, _ = mod.build("cpu")
    size = (13, 7)
    inputs = random_inputs(name, mod, size)
    osize = output_size(name, size)
    module = lower_pipeline(out, {k: v.shape for k, v in inputs.items()}, osize)
    want = numpy_reference(name, mod, inputs, size)
    args = [_storage(inputs[p]) for p in (["A", "B"] if name == "gemm" else ["input"])]
    res = run(module, "pipeline", args + [_storage(np.zeros_like(want))])
    np.testing.assert_array_equal(res.memrefs[-1].view(want.dtype), want)


@pytest.mark.mlir
@pytest.mark.parametrize("t", [pl.UInt32, pl.Int16], ids=lambda t: t.name)
def test_integer_semantics_under_mlir_runner(t):
    out, inputs = int_ops_pipeline(t)
    module = lower_pipeline(out, {k: v.shape for k, v in inputs.items()}, (N, len(INT_OPS)))
    res = run(module, "pipeline", [_storage(inputs["a"]), _storage(inputs["b"]),
                                   np.zeros((len(INT_OPS), N), _storage(inputs["a"]).dtype)])
    got = res.memrefs[-1].view(t.dtype)
    for op, row, want in zip(INT_OPS, got, python_int_ops(t, inputs)):
        assert [int(v) for v in row] == want, op
