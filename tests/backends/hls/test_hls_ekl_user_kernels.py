"""EKL kernels written as a new user would, through ``loom hls``: what failed and is fixed, what is refused."""

from __future__ import annotations

import numpy as np

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.cli import main


def test_a_let_nothing_reads_compiles(tmp_path, capsys):
    """An unused let is a local buffer that is only written: g++ -Wall called it set but unused and the HLS C++
    (messner's RRTMG file has two) did not compile with -Werror."""
    src = """kernel dead(a : f32[8], y : out& f32[8]) {
        let t[i] = a[i] * 2.0;
        out y[i] = a[i] + 1.0;
    }"""
    program = emit_hls(loom.ekl.load(src).kernel().ir("loops"))
    assert "[[maybe_unused]] float buf" in program.source
    x = csim_inputs(program)
    np.testing.assert_array_equal(simulate(program).arrays["y"], x["a"] + np.float32(1.0))
    f = tmp_path / "dead.ekl"
    f.write_text(src)
    assert main(["hls", str(f), "--format", "e4m3fn", "--csim"]) == 0
    assert "bit-exact" in capsys.readouterr().out
