"""Generated-code safety of the researcher pipelines and of hostile inputs, without Halide (so these also run in the
sanitizer session, ``LOOM_SANITIZE=1`` with ASan/UBSan preloaded, where the Halide tests skip): every pipeline and
schedule of ``researcher_pipelines.py`` against loom's numpy reference (only in that session: elsewhere the Halide
tests cover the values), a NaN clamped into an index, and input arrays that are strided, reversed, Fortran-ordered
or unaligned."""

import os

import numpy as np
import pytest

import loom.frontends.pipeline as lp
import loom.jit  # noqa: F401  (Func.realize)
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu
from tests.pipelines_cpu.researcher_pipelines import PIPELINES
from tests.pipelines_cpu.user_pipelines import image

SANITIZING = bool(os.environ.get("LOOM_SANITIZE"))
ALL = [(name, sched) for name, (_, scheds) in PIPELINES.items() for sched in scheds]


@pytest.mark.sanitize
@pytest.mark.skipif(not SANITIZING, reason="the sanitizer session's check")
@pytest.mark.parametrize("name, sched", ALL, ids=[f"{n}-{s}" for n, s in ALL])
def test_a_researchers_pipeline_is_memory_safe(name, sched):
    out, inputs, params, size = PIPELINES[name][0](lp, 7, 5, 0, sched)
    given = {k: a for k, (_, a) in inputs.items()} | {k: v for k, (_, v) in params.items()}
    for element in out.components or [out]:
        got, want = run_cpu(element, given, size), lp.evaluate(element, given, size)
        np.testing.assert_array_equal(got, want)


@pytest.mark.sanitize
def test_a_nan_clamped_into_an_index_reads_inside_the_producer():
    """``hz[i32(clamp(w, 2.0, 4.0)) - 2]``: loom's clamp keeps NaN and the cast gives 0, index -2. The region of
    hz was [0, 2] from the clamp alone, so a NaN read 8 bytes before hz's storage (ASan: heap-buffer-overflow);
    now the cast's interval includes 0 unless its float is provably finite."""
    x = lp.Var("x")
    w = lp.ImageParam(lp.Float32, 1, "w")
    hz, out = lp.Func("hz"), lp.Func("out")
    hz[x] = x * 10
    hz.compute_root()
    out[x] = hz[lp.i32(lp.clamp(w[x], 2.0, 4.0)) - 2]
    vals = np.array([np.nan, 3.5, -np.inf, np.inf, 10.0, 2.0], np.float32)
    want = np.array([-20, 10, 0, 20, 20, 0], np.int32)  # NaN: 0 - 2; +-inf clamp to 4 and 2
    np.testing.assert_array_equal(np.asarray(out.realize([6], {"w": vals})), want)



@pytest.mark.sanitize
def test_strided_reversed_fortran_and_unaligned_inputs_give_the_same_image():
    """An unaligned view (a u16 array at an odd byte offset) reached C as is: UBSan, misaligned load of int16_t."""
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt16, 2, "inp")
    out = lp.Func("out")
    out[x, y] = inp[x, y] * 2 + inp[5 - x, y]
    base = image((5, 6), "u16", 0)
    want = (base * 2 + base[:, ::-1]).astype(np.uint16)
    unaligned = np.ndarray((5, 6), np.uint16, buffer=bytearray(b"\0" + base.tobytes()), offset=1)
    for arr in (np.repeat(base, 2, axis=1)[:, ::2], base[::-1][::-1], np.asfortranarray(base), unaligned,
                lp.Buffer(base)):
        np.testing.assert_array_equal(np.asarray(out.realize([6, 5], {"inp": arr})), want)
    for bad, message in ((base.astype(">u2"), r"expected u16 array of shape \(5, 6\), got >u2"),
                         (base.tolist(), r"expected u16 array of shape \(5, 6\), got int64"),
                         (base[None], r"expected a 2-d array, got shape \(1, 5, 6\)")):
        with pytest.raises(LoomError, match=r"ImageParam 'inp': " + message):
            out.realize([6, 5], {"inp": bad})
