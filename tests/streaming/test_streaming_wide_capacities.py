"""Capacities of wide designs extrapolated from narrow proxies equal the full sweep (``exact_capacity``),
for every stencil, multi-rate and multi-channel example, and the build time does not grow with the width."""

import time

import numpy as np

import pytest

from loom.streaming import build_design
from loom.streaming import scheduler

from tests.streaming.streaming_apps import example

APPS = [  # app, build arguments, extra dims of the design size
    ("gaussian", {}, ()), ("gaussian", dict(rate=2), ()), ("harris", {}, ()), ("harris", dict(rate=4), ()),
    ("cascade", {}, ()), ("unsharp", {}, (3,)), ("camera_pipeline", {}, (3,)), ("gaussian_pyramid", {}, ()),
    ("upsample", {}, ()), ("max_pool", {}, ()), ("pointwise", dict(rate=2), ()), ("conv_layer", {}, (4,)),
    ("mobilenet_separable", {}, (4,)), ("laplacian_pyramid", {}, ()),
    ("dnn_conv", {}, (2,)),  # a reduction in time: its taps' offsets are bounded, rows still repeat
]


@pytest.mark.parametrize("name,args,extra", APPS, ids=[f"{a[0]}-{a[1]}" for a in APPS])
@pytest.mark.parametrize("width", [301])
def test_extrapolated_capacities_equal_the_full_sweep(name, args, extra, width, monkeypatch):
    monkeypatch.setattr(scheduler, "EXTRAPOLATE_FROM_WIDTH", 0)
    size = (width, 24) + extra
    out, _ = example(name).build("accel", tile=size[:2], **args)
    design = build_design(out, size)
    calls = []
    real = scheduler._width_extrapolated
    monkeypatch.setattr(scheduler, "_width_extrapolated", lambda d: calls.append(r := real(d)) or r)
    assert build_design(out, size).capacities == design.capacities
    # channels computed in space (conv_layer's constant input-channel indices, camera_pipeline's mosaic
    # offsets per colour copy) do not stop the proxies
    assert calls and calls[0] is not None, "proxies not applied"
    exact = build_design(out, size, exact_capacity=True)
    assert design.capacities == exact.capacities


def test_gaussian_capacity_is_two_rows_plus_two_at_any_width():
    for width in (1024, 1920, 7680):
        out, _ = example("gaussian").build("accel", tile=(width, 64))
        assert build_design(out, (width, 64)).capacities["hw_input"] == 2 * (width + 2) + 2


def test_build_time_is_flat_in_width_and_height():
    def build_seconds(size):
        out, _ = example("harris").build("accel", tile=size)
        best = float("inf")
        for _ in range(2):
            t = time.perf_counter()
            build_design(out, size)
            best = min(best, time.perf_counter() - t)
        return best

    small = build_seconds((1024, 64))
    assert build_seconds((8192, 64)) < 3 * small + 0.2  # 8x the width
    assert build_seconds((1024, 4096)) < 3 * small + 0.2  # 64x the height


def _swept_points(monkeypatch, name, size):
    """Write points of every buffer the capacity sweep visits for one build (a count, not a time)."""
    swept = []
    real = scheduler.live_capacity
    monkeypatch.setattr(scheduler, "live_capacity",
                        lambda b: swept.append(int(np.prod(b.write_ports[0].extents))) or real(b))
    app = example(name)
    out, _ = app.build("accel", tile=size)
    build_design(out, app.output_shape(size))
    return sum(swept)


@pytest.mark.parametrize("name", ["camera_pipeline", "conv_layer", "mobilenet_separable", "unsharp", "harris",
                                  "gaussian_pyramid", "upsample", "max_pool", "laplacian_pyramid", "cascade",
                                  "dnn_conv"])
def test_capacity_sweep_does_not_grow_with_the_image(monkeypatch, name):
    """The points swept for capacities are the same at 2048x64 and 8192x4096: nothing is O(width) or O(height)."""
    assert _swept_points(monkeypatch, name, (2048, 64)) == _swept_points(monkeypatch, name, (8192, 4096))


def test_extrapolation_keeps_kernel_latencies(monkeypatch):
    from loom.streaming.kernel_latency import PIPELINED
    monkeypatch.setattr(scheduler, "EXTRAPOLATE_FROM_WIDTH", 0)
    out, _ = example("harris").build("accel", tile=(301, 24))
    design = build_design(out, (301, 24), op_latency=PIPELINED)
    exact = build_design(out, (301, 24), op_latency=PIPELINED, exact_capacity=True)
    assert design.offsets == exact.offsets and design.capacities == exact.capacities
    assert design.offsets != build_design(out, (301, 24)).offsets  # the latencies did move the stages
