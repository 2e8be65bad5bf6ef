"""The HLS testbench draws named arrays from [lo, hi) (``ranges``): index arrays of gathers stay inside the
arrays they index. Its fixed draw ([-100, 100] for integers, [-2, 2] for floats) sent every EKL gather, and
messner-style indices computed from floats, outside their tables: ``loom build --target hls`` failed on the
shipped rrtmg_major example and on any user kernel that gathers. EKL units now use the C check's draw
(indices {0, 1}, floats [0, 1)). Values against numpy on the testbench's own inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, emit_testbench, simulate
from loom.build import build
from loom.errors import LoomError

GATHER = "kernel g(X : f64[8], I : index[5], F : f32[6], Y : out& f64[5], Z : out& f32[6]) " \
         "{ out Y[i] = X[I[i]] * 2.0; out Z = F; }"
EXAMPLES = Path(__file__).resolve().parents[2] / "loom" / "examples" / "ekl"


def program():
    return emit_hls(loom.ekl.load(GATHER).kernel().ir("loops", consts_as_globals=True))


@pytest.mark.sanitize
def test_ranged_inputs_reach_the_kernel_and_match_csim_inputs():
    prog = program()
    ranges = {"I": (0, 8), "F": (-0.5, 0.25)}
    inputs = csim_inputs(prog, ranges=ranges)
    assert inputs["I"].min() >= 0 and inputs["I"].max() < 8 and len(set(inputs["I"].tolist())) > 1
    assert (inputs["F"] >= -0.5).all() and (inputs["F"] < 0.25).all()
    run = simulate(prog, ranges=ranges)
    np.testing.assert_array_equal(run.arrays["Y"], inputs["X"][inputs["I"]] * 2)
    np.testing.assert_array_equal(run.arrays["Z"], inputs["F"])  # the C++ saw exactly these floats


def test_without_ranges_the_gather_stops_at_its_check():
    with pytest.raises(LoomError, match="out of range for dimension 0 of size 8"):
        simulate(program())


@pytest.mark.parametrize("ranges,match", [
    ({"nope": (0, 2)}, "no integer or float array argument 'nope'"),
    ({"I": (3, 3)}, "lo < hi"),
    ({"I": (0.0, 2.0)}, "integers"),
    ({"I": (True, 2)}, "integers"),
    ({"I": (0, 2**70)}, "lo < hi"),
    ({"F": (1.0, float("inf"))}, "finite"),
    ({"F": (2.0, 1.0)}, "lo < hi"),
])
def test_bad_ranges_are_refused(ranges, match):
    with pytest.raises(LoomError, match=match):
        emit_testbench(program(), ranges=ranges)
    with pytest.raises(LoomError, match=match):
        csim_inputs(program(), ranges=ranges)


def test_build_target_hls_of_gathering_ekl_kernels(tmp_path):
    (tmp_path / "g.ekl").write_text(GATHER)
    for source, unit in ((tmp_path / "g.ekl", "g"), (EXAMPLES / "rrtmg_major.ekl", "rrtmg_major")):
        index = build(source, tmp_path / unit, target="hls").index
        [record] = [u for u in index["units"] if u["name"] == unit]
        assert record["checks"][-1].endswith("vs the C backend: max relative error 0")
