"""Each example's evaluate() equals an independent numpy implementation, bit for bit."""

import zlib

import numpy as np
import pytest

from tests.frontends.pipeline.pipeline_apps import example, references

from loom.frontends.pipeline import evaluate

SIZES = [(8, 8), (17, 9), (31, 23), (64, 64)]


@pytest.mark.parametrize("name", ["cascade", "gaussian", "harris", "pointwise", "tone_map"])
@pytest.mark.parametrize("schedule", ["cpu", "accel", "none"])
@pytest.mark.parametrize("size", SIZES)
def test_gray_apps_match_numpy(name, schedule, size):
    mod = example(name)
    out, _ = mod.build(schedule, tile=size)
    rng = np.random.default_rng(zlib.crc32(f"{name}{size}".encode()))
    img = rng.integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    got = evaluate(out, {"input": img}, size)
    want = getattr(references, name)(img, *size)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("size", [(5, 7), (20, 11), (40, 40)])
def test_unsharp_matches_numpy(size):
    mod = example("unsharp")
    out, _ = mod.build("accel", tile=size)
    rng = np.random.default_rng(size[0])
    img = rng.integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    got = evaluate(out, {"input": img}, size + (3,))
    np.testing.assert_array_equal(got, references.unsharp(img, *size))


def test_harris_finds_corners_and_flat_regions():
    # the reference comparison above would also pass for an all-zero output; make sure both values occur
    mod = example("harris")
    out, _ = mod.build("cpu")
    img = np.zeros(mod.input_shape((40, 40)), np.uint8)
    img[10:30, 10:30] = 200  # a bright square: four corners
    got = evaluate(out, {"input": img}, (40, 40))
    assert got.max() == 255 and (got == 0).mean() > 0.9
    np.testing.assert_array_equal(got, references.harris(img, 40, 40))
