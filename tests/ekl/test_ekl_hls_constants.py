"""EKL kernels with constant arrays in HLS C++: a constant is a ROM (``memref.global constant``) inside the
top function, not a port. Before, each constant array became an extra trailing port that the C-simulation
testbench filled with its pseudo-random data (a 2-D stencil with clamped neighbour tables read index -71),
and the ports were p0, p1, ... instead of the EKL parameter names. Values against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate

STENCIL = """
const UP = [_0, _0, _1, _2, _3, _4];
const DN = [_1, _2, _3, _4, _5, _5];
kernel st(X : f64[6, 6], Y : out& f64[6, 6]) {
    let up = UP;
    let dn = DN;
    out Y[i, j] = (X[i, j] + X[up[i], j] + X[dn[i], j] + X[i, up[j]] + X[i, dn[j]]) / 5.0;
}
"""

SMOOTH = """
const W = [0.25, 0.5, 0.25];
const T = [true, false, true, false];
kernel sm(X : f32[4, 3], Y : out& f32[4]) {
    let w = W;
    let t = T;
    out Y[i] = t[i] ? (<+ k< X[i, k] * w[k]) : -1.0;
}
"""


def edge_stencil(x: np.ndarray) -> np.ndarray:
    p = np.pad(x, 1, mode="edge")
    return (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) / 5


@pytest.mark.parametrize("interface", ["m_axi", "axis"])
def test_a_stencil_with_constant_neighbour_tables_simulates_like_numpy(interface):
    kernel = loom.ekl.load(STENCIL).kernel()
    program = emit_hls(kernel.ir("loops", consts_as_globals=True), interface=interface)
    assert "void st(const double X[36], double Y[36])" in program.source.replace("\n", " ") or interface == "axis"
    inputs = csim_inputs(program)
    assert sorted(inputs) == ["X", "Y"]  # no port for UP / DN
    run = simulate(program)
    np.testing.assert_allclose(run.arrays["Y"], edge_stencil(inputs["X"]), rtol=1e-15, atol=0)


def test_float_and_bool_constants_are_roms():
    kernel = loom.ekl.load(SMOOTH).kernel()
    program = emit_hls(kernel.ir("loops", consts_as_globals=True))
    inputs = csim_inputs(program)
    assert sorted(inputs) == ["X", "Y"]
    want = np.where(np.array([True, False, True, False]),
                    inputs["X"].astype(np.float64) @ np.array([0.25, 0.5, 0.25]), -1.0)
    np.testing.assert_allclose(run_y := simulate(program).arrays["Y"], want, rtol=1e-6)
    assert run_y.dtype == np.float32


def test_the_cpu_kernel_still_takes_constants_as_arguments_and_agrees():
    kernel = loom.ekl.load(STENCIL).kernel()
    x = np.random.default_rng(3).random((6, 6))
    y = np.zeros((6, 6))
    kernel(x, y)
    np.testing.assert_allclose(y, edge_stencil(x), rtol=1e-15)
    # the global form compiles on the CPU too (same C backend)
    from loom.backends.c import compile_module

    fn = compile_module(kernel.ir("c", consts_as_globals=True)).function("st")
    y2 = np.zeros((6, 6))
    fn(x, y2)
    np.testing.assert_array_equal(y2, y)


def test_loom_hls_cli_writes_no_port_for_a_constant(tmp_path, capsys):
    from loom.cli import main

    src = tmp_path / "st.ekl"
    src.write_text(STENCIL)
    assert main(["hls", str(src), "--csim"]) == 0
    out = capsys.readouterr().out
    assert "const double X[36], double Y[36]" in " ".join(out.split())
    assert "st_const0" in out
