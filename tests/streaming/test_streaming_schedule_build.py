"""Schedule construction: closed form in the image size, fast, capacities exact."""

import time

import pytest

from tests.streaming.streaming_apps import example

from loom.streaming import build_design


@pytest.mark.parametrize("name, size", [("gaussian", (200, 150)), ("cascade", (97, 61)), ("harris", (70, 90)),
                                        ("unsharp", (50, 40, 3))])
def test_proxy_capacity_equals_full_sweep(name, size):
    out, _ = example(name).build("accel", tile=size[:2])
    fast = build_design(out, size)
    exact = build_design(out, size, exact_capacity=True)
    assert fast.capacities == exact.capacities
    assert fast.offsets == exact.offsets and fast.latency == exact.latency


def test_build_time_does_not_grow_with_image():
    mod = example("gaussian")
    times = {}
    for size in [(64, 64), (640, 480), (1920, 1080)]:
        out, _ = mod.build("accel", tile=size)
        t = time.perf_counter()
        d = build_design(out, size)
        times[size] = time.perf_counter() - t
        assert d.capacities["hw_input"] == 2 * (size[0] + 2) + 2
        assert d.latency == d.offsets["output"] + (size[0] + 2) * (size[1] - 1) + size[0]
    assert times[(1920, 1080)] < 2.0
