"""A 4-stage image pipeline with an offloaded matmul node equals numpy."""

import numpy as np
import pytest

from loom.dataflow import run
from loom.examples.dataflow import image_pipeline as P


@pytest.mark.sanitize
@pytest.mark.parametrize("offloaded", [True, False])
def test_image_pipeline_equals_numpy(offloaded):
    items, w = P.frames(6), P.weights()
    g = P.build(items, w, offloaded=offloaded)
    text = g.ir()
    assert ("dfg.instantiate offloaded @project" in text) == offloaded
    outputs, result = run(g, timeout=120)
    want = P.reference(items, w)
    assert len(outputs["result"]) == len(want)
    for got, ref in zip(outputs["result"], want):
        np.testing.assert_array_equal(got, ref)
    assert [(c.name, c.pushes, c.pulls) for c in result.channels] == [
        (n, 6, 6) for n in ("raw", "bright", "projected", "out")]
