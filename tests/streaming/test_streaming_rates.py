"""n pixels per cycle (unroll of every stage's innermost dimension inside hw_accelerate): the
schedule packs n pixels into each cycle, the latency drops to about 1/n, simulation stays bit-exact."""

import numpy as np
import pytest
from tests.streaming.streaming_apps import example, references

from loom.errors import LoomError
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate

SIZE = (40, 24)


def _image(mod, seed):
    return np.random.default_rng(seed).integers(0, 256, mod.input_shape(SIZE), dtype=np.uint8)


@pytest.mark.parametrize("name,stages", [("gaussian", 1), ("cascade", 2), ("harris", 3)])
@pytest.mark.parametrize("rate", [1, 2, 4])
def test_latency_scales_with_pixels_per_cycle(name, stages, rate):
    mod = example(name)
    out, _ = mod.build("accel", tile=SIZE, rate=rate)
    d = build_design(out, SIZE)
    w, h = SIZE
    row = -(-(w + mod.HALO) // rate)  # cycles per input row at `rate` pixels per cycle
    # a 3x3 stage computing columns n*c .. n*c+n-1 at cycle c needs input column n*c+n+1 of two rows
    # later, which arrives floor((n*c+n+1)/n) = c + (n+1)//n cycles into that row
    stage_delay = 2 * row + (rate + 1) // rate
    assert d.offsets["output"] == stages * stage_delay
    last_x_cycle = (w - 1) // rate
    assert d.latency == d.offsets["output"] + row * (h - 1) + last_x_cycle + 1
    img = _image(mod, rate)
    sim = simulate(out, {"input": img}, SIZE, design=d)
    np.testing.assert_array_equal(sim, getattr(references, name)(img, *SIZE))


@pytest.mark.sanitize
@pytest.mark.parametrize("name", ["gaussian", "cascade", "harris"])
def test_two_pixels_per_cycle_halves_latency_and_matches_the_cpu_path(name):
    mod = example(name)
    one, _ = mod.build("accel", tile=SIZE, rate=1)
    two, _ = mod.build("accel", tile=SIZE, rate=2)
    d1, d2 = build_design(one, SIZE), build_design(two, SIZE)
    assert abs(d2.latency - d1.latency / 2) <= 2
    img = _image(mod, 7)
    sim = simulate(two, {"input": img}, SIZE, design=d2)
    cpu_out, _ = mod.build("cpu")
    np.testing.assert_array_equal(sim, run_cpu(cpu_out, {"input": img}, SIZE))
    np.testing.assert_array_equal(sim, getattr(references, name)(img, *SIZE))
    for buf, cap in d2.capacities.items():
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(two, {"input": img}, SIZE, design=d2, capacities={buf: cap - 1})
