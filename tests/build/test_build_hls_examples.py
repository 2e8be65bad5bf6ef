"""loom build --target hls of a built-in example draws its testbench inputs as loom hls does."""

from __future__ import annotations

import re

from loom.build import build


def test_collatz_steps_simulates_on_its_own_input_range(tmp_path):
    """loom hls drew collatz_steps' starts from the example's own range (1..2999), loom build --target hls from
    any int32: the C simulation looped on negative starts until its 120 s timeout, and the build failed."""
    result = build("collatz_steps", tmp_path / "out", target="hls", threads=1)
    [unit] = result.units
    assert unit["checks"] == ["HLS C simulation (g++ -Wall -Wextra -Werror, loom_hls.h) vs the C backend: "
                              "max relative error 0"]
    testbench = (result.folder / "collatz_steps" / "hls" / "collatz_steps_tb.cpp").read_text()
    draw = re.search(r"loomtb_ports::x\[k\] = .*% (\d+)u\) \+ \((\d+)LL\)", testbench)
    assert draw and int(draw.group(2)) >= 1, testbench  # positive starts only: every sequence ends
