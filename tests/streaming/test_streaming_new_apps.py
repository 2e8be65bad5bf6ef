"""The thesis apps added here (laplacian pyramid, MobileNet separable convolution): the accelerator's
simulation and the CPU schedule equal independent numpy code bit for bit, and the laplacian pyramid's
buffers hold the hand-counted live values."""

import numpy as np
import pytest

from tests.pipelines_cpu.cpu_apps import numpy_reference, random_inputs
from tests.streaming.streaming_apps import example

from loom.frontends.pipeline import evaluate
from loom.streaming import build_design, simulate
from loom.streaming.report import design_report
from loom.streaming.resources import count_resources


@pytest.mark.parametrize("name, size", [("laplacian_pyramid", (32, 16)), ("laplacian_pyramid", (15, 9)),
                                        ("mobilenet_separable", (12, 8)), ("mobilenet_separable", (7, 5))])
def test_new_apps_bit_exact(name, size):
    mod = example(name)
    osize = tuple(mod.output_shape(size))
    inputs = random_inputs(name, mod, size, salt="new")
    want = numpy_reference(name, mod, inputs, size)
    out, _ = mod.build("accel", tile=size)
    np.testing.assert_array_equal(simulate(out, inputs, osize), want)
    np.testing.assert_array_equal(evaluate(mod.build("cpu")[0], inputs, osize), want)
    assert 0 < (want > 0).mean() and (want < 255).mean() > 0  # not a constant image


def test_laplacian_pyramid_buffers_hold_live_values_only():
    out, _ = example("laplacian_pyramid").build("accel", tile=(32, 16))
    d = build_design(out, (32, 16))
    # the output reads in(x, y) when down has its 2x2 block: one input row + 1 held; down's row of 16 values
    # is read by two output rows
    assert d.capacities["hw_input"] == 32 + 1 and d.capacities["down"] == 16
    assert d.offsets["down"] == d.offsets["output"] == 32 + 1  # (2x+1, 2y+1) arrives one row and one pixel late


def test_mobilenet_separable_pes_by_hand():
    mod = example("mobilenet_separable")
    out, _ = mod.build("accel", tile=(12, 8))
    r = count_resources(build_design(out, (12, 8, mod.CO)))
    per = {n: (s.pes_per_copy, s.copies) for n, s in r.stages.items()}
    # depthwise per channel: 9 multiplies (weights read from a tap memory), 8 adds, >> 4, max with 0
    assert per["dw"] == (9 + 8 + 2, mod.C)
    # pointwise per output channel: C multiplies, C - 1 adds, >> 6, clamp (max, min)
    assert per["output"] == (mod.C + mod.C - 1 + 1 + 2, mod.CO)


def test_nearest_upsample_needs_no_pe():
    mod = example("upsample")
    out, _ = mod.build("accel", tile=(16, 12), mode="nearest")
    d = build_design(out, (16, 12))
    # thesis §6.5: "no PEs are necessary for the nearest neighbor strategy"
    assert count_resources(d).pes == 0 and design_report(d).occupancy is None
    img = np.random.default_rng(3).integers(0, 256, size=mod.input_shape((16, 12)), dtype=np.uint8)
    want = np.repeat(np.repeat(img, 2, axis=0), 2, axis=1)[:12, :16]
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 12)), want)
