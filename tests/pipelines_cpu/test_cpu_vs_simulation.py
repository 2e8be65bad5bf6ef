"""For every app, the cycle simulation of the accelerator schedule equals loom's CPU (C backend) output,
with one tile covering the image and with 8x8 tiles that do not divide it (last tiles shifted inward);
both equal the independent numpy reference."""

import numpy as np
import pytest
from tests.pipelines_cpu.cpu_apps import APPS, example, numpy_reference, output_size, random_inputs

from loom.jit.pipeline import run_cpu
from loom.streaming import simulate


@pytest.mark.sanitize
@pytest.mark.parametrize("tile", ["whole", "8x8"])
@pytest.mark.parametrize("name", APPS)
def test_simulation_equals_cpu_output(name, tile):
    mod = example(name)
    size = (15, 9)
    osize = output_size(name, size)
    accel, _ = mod.build("accel", tile=size if tile == "whole" else (8, 8))
    cpu, _ = mod.build("cpu")
    inputs = random_inputs(name, mod, size, salt="sim")
    want = numpy_reference(name, mod, inputs, size)
    sim = simulate(accel, inputs, osize)
    np.testing.assert_array_equal(sim, run_cpu(cpu, inputs, osize))
    np.testing.assert_array_equal(sim, want)
