"""conv layer and gemm examples against numpy."""

import numpy as np
import pytest

from tests.frontends.pipeline.pipeline_apps import example, references

from loom.frontends.pipeline import evaluate


@pytest.mark.parametrize("size", [(4, 4), (9, 5), (16, 16)])
def test_conv_layer_matches_numpy(size):
    mod = example("conv_layer")
    out, _ = mod.build("accel", tile=size)
    img = np.random.default_rng(size[0]).integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    got = evaluate(out, {"input": img}, size + (mod.CO,))
    want = references.conv_layer(img, *size, mod.weights())
    np.testing.assert_array_equal(got, want)
    assert 0 < (want > 0).mean() < 1  # the clamp is exercised on both sides


@pytest.mark.parametrize("size", [(8, 8), (5, 11)])
def test_gemm_matches_numpy(size):
    mod = example("gemm")
    out, _ = mod.build("cpu")
    ins = mod.make_inputs(size, np.random.default_rng(0))
    np.testing.assert_array_equal(evaluate(out, ins, size), references.gemm(ins["A"], ins["B"]))


@pytest.mark.parametrize("size", [(4, 6), (13, 9), (32, 32)])
@pytest.mark.parametrize("schedule", ["accel", "cpu"])
def test_camera_pipeline_matches_numpy(size, schedule):
    mod = example("camera_pipeline")
    out, _ = mod.build(schedule, tile=size)
    raw = np.random.default_rng(size[1]).integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    np.testing.assert_array_equal(evaluate(out, {"input": raw}, size + (3,)),
                                  references.camera_pipeline(raw, *size))
