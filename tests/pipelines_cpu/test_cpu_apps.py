"""Every example pipeline through loom's IR and the C backend equals evaluate() and numpy, bit for bit."""

import numpy as np
import pytest
from tests.pipelines_cpu.cpu_apps import APPS, example, numpy_reference, output_size, random_inputs

from loom.frontends.pipeline import evaluate
from loom.jit.pipeline import compile_cpu

SIZES = [(7, 5), (33, 19), (64, 48)]  # smaller than a tile, odd tails, several tiles


@pytest.mark.sanitize
@pytest.mark.parametrize("name", APPS)
def test_cpu_schedule_matches_numpy_and_evaluate(name):
    mod = example(name)
    out, _ = mod.build("cpu")
    for size in SIZES:
        inputs = random_inputs(name, mod, size)
        osize = output_size(name, size)
        prog = compile_cpu(out, {k: v.shape for k, v in inputs.items()}, osize)
        got = prog(inputs)
        want = numpy_reference(name, mod, inputs, size)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, evaluate(out, inputs, osize))
        other = random_inputs(name, mod, size, salt="second")  # the same program on a second image
        np.testing.assert_array_equal(prog(other), numpy_reference(name, mod, other, size))


@pytest.mark.sanitize
@pytest.mark.parametrize("name", ["pointwise", "gaussian", "cascade", "harris", "gemm"])
def test_accelerator_schedule_runs_on_the_cpu(name):
    # hw_accelerate / compute_at(out, xo) / unrolled reductions lowered as CPU loops; tile 16 leaves tails
    mod = example(name)
    out, _ = mod.build("accel", tile=(16, 16)) if name != "gemm" else mod.build("accel", tile=(8, 8))
    size = (37, 21)
    inputs = random_inputs(name, mod, size)
    got = compile_cpu(out, {k: v.shape for k, v in inputs.items()}, size)(inputs)
    np.testing.assert_array_equal(got, numpy_reference(name, mod, inputs, size))


def test_harris_output_is_not_trivial():
    # equality above would also hold for an all-zero output; a bright square has four corners
    mod = example("harris")
    out, _ = mod.build("cpu")
    img = np.zeros(mod.input_shape((40, 40)), np.uint8)
    img[10:30, 10:30] = 200
    got = compile_cpu(out, {"input": img.shape}, (40, 40))({"input": img})
    assert got.max() == 255 and (got == 0).mean() > 0.9
