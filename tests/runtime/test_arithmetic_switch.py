"""``loom_sim_set_arithmetic`` / ``without_arithmetic``: host-timing runs move the same words and
transactions and report the same MACs, skip the values; the setting is restored afterwards."""

import numpy as np
import pytest
from tests.runtime.runtime_helpers import I32, V3, random_i32, wrap_matmul
from tests.runtime.test_conv import conv_reference, run_conv
from tests.runtime.test_matmul_flows import run_flow

from loom.runtime import trace_counters
from loom.runtime.host import without_arithmetic

pytestmark = pytest.mark.sanitize


def traced(lib, run):
    lib.loom_dma_set_tracing(1)
    lib.loom_trace_reset()
    try:
        out = run()
        return out, trace_counters(lib)
    finally:
        lib.loom_dma_set_tracing(0)


@pytest.mark.parametrize("flow", ["Ns", "As", "Cs"])
def test_matmul_without_arithmetic_moves_the_same_words(lib, flow):
    rng = np.random.default_rng(3)
    a, b = random_i32(rng, (16, 24)), random_i32(rng, (24, 8))
    want = wrap_matmul(a, b)
    out, counts = traced(lib, lambda: run_flow(lib, V3, 8, flow, a, b))
    assert np.array_equal(out, want)
    with without_arithmetic(lib):
        skipped, skipped_counts = traced(lib, lambda: run_flow(lib, V3, 8, flow, a, b))
    assert skipped_counts == counts and counts["sends"] > 0
    assert not np.array_equal(skipped, want)  # the values were not computed: the switch took effect
    again = run_flow(lib, V3, 8, flow, a, b)  # restored: the next dma_init computes again
    assert np.array_equal(again, want)


def test_conv_without_arithmetic_and_restore_on_error(lib):
    rng = np.random.default_rng(4)
    inp = rng.integers(-50, 50, size=(1, 3, 7, 7)).astype(np.int32)
    w = rng.integers(-5, 5, size=(2, 3, 3, 3)).astype(np.int32)
    with pytest.raises(RuntimeError):
        with without_arithmetic(lib):
            skipped = run_conv(lib, inp, w, 1, I32)
            assert not np.array_equal(skipped, conv_reference(inp, w, 1))
            raise RuntimeError("leave the block by an error")
    assert lib.loom_sim_set_arithmetic(1) == 1  # restored to the default, computing
    assert np.array_equal(run_conv(lib, inp, w, 1, I32), conv_reference(inp, w, 1))
