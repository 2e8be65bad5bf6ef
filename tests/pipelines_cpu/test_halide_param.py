"""Scalar ``Param``: a run-time argument of the compiled pipeline, checked, bit-exact against Halide."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import compile_cpu, run_cpu

H, W = 6, 11


def _loom_pipeline():
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    gain = lp.Param(lp.UInt8, "gain")
    scale = lp.Param(lp.Float32, "scale", value=0.5)
    shift = lp.Param(lp.Int32, "shift", min=0, max=3)  # a bounded Param may move an index
    x, y = lp.Var("x"), lp.Var("y")
    out = lp.Func("out")
    boosted = lp.u8(lp.min(lp.u16(inp[x + shift, y]) * lp.u16(gain), 255))
    out[x, y] = lp.u8(lp.f32(boosted) * scale + lp.f32(gain))
    return out


def _halide(a, gain, scale, shift):
    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    hgain, hscale, hshift = hl.Param(hl.UInt(8), "gain"), hl.Param(hl.Float(32), "scale"), hl.Param(hl.Int(32), "shift")
    hx, hy = hl.Var("x"), hl.Var("y")
    hout = hl.Func("out")
    boosted = hl.u8(hl.min(hl.u16(hin[hx + hshift, hy]) * hl.u16(hgain), 255))
    hout[hx, hy] = hl.u8(hl.f32(boosted) * hscale + hl.f32(hgain))
    hin.set(hl.Buffer(a))
    hgain.set(gain)
    hscale.set(float(scale))  # a numpy scalar would pick the wrong overload in Halide's bindings
    hshift.set(shift)
    return np.asarray(hout.realize([W - 3, H]))


def test_one_compiled_pipeline_serves_every_param_value_like_halide():
    a = np.random.default_rng(8).integers(0, 256, size=(H, W), dtype=np.uint8)
    out = _loom_pipeline()
    program = compile_cpu(out, {"inp": a.shape}, (W - 3, H))
    for gain, scale, shift in [(1, 0.5, 0), (3, 0.25, 2), (200, 1.5, 3)]:
        want = _halide(a, gain, np.float32(scale), shift)
        np.testing.assert_array_equal(program({"inp": a, "gain": gain, "scale": scale, "shift": shift}), want)
        np.testing.assert_array_equal(lp.evaluate(out, {"inp": a, "gain": gain, "scale": scale, "shift": shift},
                                                  (W - 3, H)), want)
    # the default value of scale (0.5) is used when it is not given
    np.testing.assert_array_equal(run_cpu(out, {"inp": a, "gain": 2, "shift": 1}, (W - 3, H)),
                                  _halide(a, 2, np.float32(0.5), 1))


@pytest.mark.parametrize("bad, message", [
    ({"gain": 256}, r"Param 'gain'.*does not fit in u8"),
    ({"gain": 2.5}, r"Param 'gain'.*expected a u8 scalar"),
    ({"gain": np.int16(3)}, r"Param 'gain'.*dtype uint8"),
    ({"gain": 1, "shift": 4}, r"Param 'shift'.*outside the Param's range \[0, 3\]"),
    ({"shift": 1}, r"Param 'gain'.*no value given"),
    ({"gain": 1, "shift": 1, "scale": "big"}, r"Param 'scale'.*expected a f32 scalar"),
])
def test_bad_param_values_are_refused_before_c_runs(bad, message):
    a = np.zeros((H, W), dtype=np.uint8)
    program = compile_cpu(_loom_pipeline(), {"inp": a.shape}, (W - 3, H))
    inputs = {"inp": a, "shift": 0, **bad}
    with pytest.raises(LoomError, match=message):
        program(inputs)
    with pytest.raises(LoomError, match=message):
        lp.evaluate(_loom_pipeline(), inputs, (W - 3, H))


def test_an_index_moved_by_a_param_without_a_range_names_the_param():
    inp = lp.ImageParam(lp.UInt8, 1, "inp")
    off = lp.Param(lp.Int32, "off")
    x = lp.Var("x")
    out = lp.Func("out")
    out[x] = inp[x + off]
    a = np.arange(10, dtype=np.uint8)
    for run in (lp.evaluate, run_cpu):
        with pytest.raises(LoomError, match=r"ImageParam 'inp': .*indexed by Param\(s\) off, which have no "
                                            r"range: give each one"):
            run(out, {"inp": a, "off": 1}, (8,))
    off.set_range(0, 2)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a, "off": 2}, (8,)), a[2:10])


def _moved_through_boundary(m, kind):
    """A Param without a range moves the index of a boundary condition's read inside a Func with an update."""
    inp = m.ImageParam(lp.UInt8 if m is lp else hl.UInt(8), 2, "inp")
    off = m.Param(lp.Int32 if m is lp else hl.Int(32), "off")
    x, y = m.Var("x"), m.Var("y")
    padded = getattr(m.BoundaryConditions, kind)(inp)
    r = m.RDom(0, 2) if m is lp else hl.RDom([(0, 2)])
    acc = m.Func("acc")
    acc[x, y] = m.u16(padded[x - off, y + off])
    acc[x, y] = acc[x, y] + m.u16(padded[x + r.x, y * off])
    out = m.Func("out")
    out[x, y] = acc[x, y + 1] + acc[x, y]
    return inp, off, out


@pytest.mark.parametrize("kind", ["repeat_edge", "mirror_image", "mirror_interior", "repeat_image"])
def test_a_param_without_a_range_moves_a_boundary_read_like_halide(kind):
    """Any index is valid through a boundary condition, so Halide needs no range for the Param: the CPU path
    clamps each read and ran into 'cannot bound dimension' on the condition's own (unused) region. The reference
    evaluator realises the condition, so it still asks for a range, naming the Param."""
    a = np.random.default_rng(4).integers(0, 256, size=(3, 5), dtype=np.uint8)
    hinp, hoff, hout = _moved_through_boundary(hl, kind)
    hinp.set(hl.Buffer(a))
    _, _, out = _moved_through_boundary(lp, kind)
    for value in (-7, 0, 9):
        hoff.set(value)
        want = np.asarray(hout.realize([6, 4]))
        np.testing.assert_array_equal(run_cpu(out, {"inp": a, "off": value}, (6, 4)), want)
    with pytest.raises(LoomError, match="cannot bound dimension 0 .*Param\\(s\\) off, which have no range"):
        lp.evaluate(out, {"inp": a, "off": 1}, (6, 4))
