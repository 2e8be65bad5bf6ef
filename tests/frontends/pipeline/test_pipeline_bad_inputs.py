"""Input arrays that do not fit the pipeline: every entry point (the reference evaluator, the CPU path, the
accelerator's simulation) names the ImageParam and says what it expected, before any bounds are inferred
(an array of fewer dimensions used to be an IndexError from bounds inference)."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, evaluate, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import simulate

x, y, c = Var("x"), Var("y"), Var("c")


def _pipeline(accelerated):
    inp = ImageParam(UInt8, 3, "input")
    hw, out = Func("hw_input"), Func("output")
    hw[x, y, c] = u16(inp[x, y, c])
    out[x, y] = hw[x, y, 0] + hw[x + 1, y, 1] + hw[x, y, 2]
    if accelerated:
        stream_through_accelerator(out, (4, 3), buffered=[hw])
    return out


RUNS = {"evaluate": lambda out, inputs: evaluate(out, inputs, (4, 3)),
        "run_cpu": lambda out, inputs: run_cpu(out, inputs, (4, 3)),
        "simulate": lambda out, inputs: simulate(out, inputs, (4, 3))}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("array,message", [
    (np.zeros((3, 5), np.uint8), r"ImageParam 'input': expected a 3-d array, got shape \(3, 5\)"),
    (np.zeros((5, 3), np.uint8), r"ImageParam 'input': expected a 3-d array, got shape \(5, 3\)"),
    (np.zeros((1, 3, 5, 3), np.uint8), r"ImageParam 'input': expected a 3-d array, got shape \(1, 3, 5, 3\)"),
    (np.zeros((3, 3, 5), np.uint16), r"ImageParam 'input': expected (dtype uint8 \(u8\)|u8 array of shape "
                                     r"\(3, 3, 5\)), got uint16"),
    (np.zeros((2, 3, 5), np.uint8), r"ImageParam 'input': the pipeline reads dimension 2 over \[0, 2\] but the "
                                    r"input has extent 2"),
])
def test_an_input_that_does_not_fit_names_the_image_param(run, array, message):
    with pytest.raises(LoomError, match=message):
        RUNS[run](_pipeline(run == "simulate"), {"input": array})


@pytest.mark.parametrize("run", RUNS)
def test_a_missing_input_names_the_image_param(run):
    with pytest.raises(LoomError, match=r"(ImageParam 'input': no input array given|no input shape given for "
                                        r"ImageParam\(s\) input)"):
        RUNS[run](_pipeline(run == "simulate"), {"image": np.zeros((3, 3, 5), np.uint8)})


@pytest.mark.parametrize("run", RUNS)
def test_a_misspelt_param_that_would_take_its_default_is_refused(run):
    """An unknown name is ignored (one dict may serve several outputs) unless a Param then takes its default."""
    from loom.frontends.pipeline import Param

    inp = ImageParam(UInt8, 3, "input")
    gain = Param(UInt8, "gain", value=2)
    hw, out = Func("hw_input"), Func("output")
    hw[x, y, c] = u16(inp[x, y, c]) * u16(gain)
    out[x, y] = hw[x, y, 0] + hw[x, y, 2]
    if run == "simulate":
        stream_through_accelerator(out, (4, 3), buffered=[hw])
    a = np.random.default_rng(3).integers(0, 256, (3, 3, 5), dtype=np.uint8)
    with pytest.raises(LoomError, match=r"inputs: no ImageParam or Param named 'gian' in the pipeline, and "
                                        r"Param\(s\) gain would take their defaults: a misspelt name\?"):
        RUNS[run](out, {"input": a, "gian": 3})
    p = a.astype(np.uint16)
    want = (p[0, :, :4] + p[2, :, :4]) * 3
    if run == "simulate":  # the accelerator's kernels take the Param's value when the design is built
        with pytest.raises(LoomError, match=r"Param 'gain': the accelerator takes it as a configuration constant, "
                                            r"its value when the design is built \(2\), but the inputs give 3: "
                                            r"gain.set\(3\) before building the design"):
            RUNS[run](out, {"input": a, "gain": 3})
        gain.set(3)
    np.testing.assert_array_equal(RUNS[run](out, {"input": a, "gain": 3, "other": 1}), want)


@pytest.mark.parametrize("run", RUNS)
def test_a_fitting_input_gives_the_numpy_values(run):
    a = np.random.default_rng(2).integers(0, 256, (3, 3, 5), dtype=np.uint8)  # c, y, x
    p = a.astype(np.uint16)
    want = p[0, :, :4] + p[1, :, 1:5] + p[2, :, :4]
    np.testing.assert_array_equal(RUNS[run](_pipeline(run == "simulate"), {"input": a}), want)


def test_random_input_shapes_and_dtypes_give_the_values_or_a_loom_error():
    """60 seeded random arrays (rank 1-4, extents 0-6, five dtypes) through the three entry points: a
    LoomError naming the ImageParam, or (a 3-d uint8 array large enough) the numpy values; nothing else."""
    rng = np.random.default_rng(11)
    outcomes = {"error": 0, "value": 0}
    for _ in range(60):
        shape = tuple(int(n) for n in rng.integers(0, 7, int(rng.integers(1, 5))))
        dtype = [np.uint8, np.uint8, np.int16, np.float32, np.uint16][int(rng.integers(5))]
        a = rng.integers(0, 256, shape).astype(dtype)
        run = list(RUNS)[int(rng.integers(3))]
        try:
            got = RUNS[run](_pipeline(run == "simulate"), {"input": a})
        except LoomError as e:
            assert "input" in str(e), (shape, dtype, run, str(e))
            outcomes["error"] += 1
            continue
        p = a.astype(np.uint16)
        np.testing.assert_array_equal(got, p[0, :3, :4] + p[1, :3, 1:5] + p[2, :3, :4])
        outcomes["value"] += 1
    assert outcomes["error"] >= 30, outcomes


@pytest.mark.parametrize("run", ["evaluate", "run_cpu"])
def test_a_tuple_valued_output_says_to_realise_an_element(run):
    from loom.frontends.pipeline import RDom, argmax

    a = ImageParam(UInt8, 1, "a")
    r = RDom(0, 3)
    f = Func("f")
    f[x] = argmax(a[x + r.x])
    with pytest.raises(LoomError, match=r"Func 'f': is Tuple-valued \(2 elements\).*f\.realize\(size, inputs\)"):
        (evaluate if run == "evaluate" else run_cpu)(f, {"a": np.arange(8, dtype=np.uint8)}, (5,))
