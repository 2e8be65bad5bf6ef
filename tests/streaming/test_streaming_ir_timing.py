"""Edited ubuf IR is simulated with its own timing: capacities, write schedules, kernel latencies and access
maps come from the IR (``ir_timing.timed_design``), so an edit that breaks timing is a read-before-write or
read-after-eviction error, not a silent change; an edit that contradicts the rest of the IR is refused naming
the port. Pipeline: blur = hw(x, y) + hw(x + 1, y) + hw(x, y + 1); out = 2 blur(x, y) + blur(x + 1, y), on
8 x 6 tiles: hw's rows are 10 values, blur fires 10 cycles after hw, out 1 after blur (IR printed below by
``design_to_ir``; the expected figures follow from it)."""

import re

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.streaming import build_design, simulate
from loom.streaming.to_ubuf import design_to_ir

x, y = Var("x"), Var("y")
TILE, SIZE = (8, 6), (16, 12)


def _pipeline():
    inp = ImageParam(UInt8, 2, "input")
    hw, blur, out = Func("hw_input"), Func("blur"), Func("output")
    hw[x, y] = u16(inp[x, y])
    blur[x, y] = hw[x, y] + hw[x + 1, y] + hw[x, y + 1]
    out[x, y] = blur[x, y] * 2 + blur[x + 1, y]
    stream_through_accelerator(out, TILE, buffered=[hw, blur])
    return out


def _setup():
    out = _pipeline()
    d = build_design(out, TILE)
    img = np.random.default_rng(4).integers(0, 256, (SIZE[1] + 2, SIZE[0] + 2), dtype=np.uint8)
    p = img.astype(np.uint16)
    blur = p[:-1, :-1] + p[:-1, 1:] + p[1:, :-1]
    want = blur[:SIZE[1], :SIZE[0]] * 2 + blur[:SIZE[1], 1:SIZE[0] + 1]
    return out, d, img, want.astype(np.uint16), str(design_to_ir(d))


def _sub(text, pattern, repl, count=1):
    """The first ``count`` matches of ``pattern`` replaced (there must be that many)."""
    new, n = re.subn(pattern, repl, text, count=count)
    assert n == count, (pattern, n)
    return new


def _run(out, d, img, text):
    return simulate(out, {"input": img}, SIZE, design=d, ir=text)


def test_the_printed_ir_states_the_designs_timing():
    out, d, img, want, text = _setup()
    assert (d.buffers["hw_input"].capacity, d.buffers["blur"].capacity, d.latency) == (10, 1, 69)
    assert 'schedule "{ blur_in[x, y] -> [10 + 10y + x] }"' in text
    assert 'schedule "{ output_out[x, y] -> [11 + 10y + x] }"' in text
    np.testing.assert_array_equal(_run(out, d, img, text), want)


def test_a_capacity_edited_in_the_ir_is_the_simulated_one():
    out, d, img, want, text = _setup()
    small = _sub(text, r"(@hw_input : ui16 extents \[10, 7\] capacity )10", r"\g<1>9")
    with pytest.raises(LoomError, match=r"buffer 'hw_input'.*capacity 9 \(read after eviction\)"):
        _run(out, d, img, small)
    np.testing.assert_array_equal(_run(out, d, img, _sub(text, r"(@hw_input : ui16 extents \[10, 7\] capacity )10",
                                                         r"\g<1>12")), want)


def test_an_access_edited_to_read_a_later_value_is_a_read_before_write():
    out, d, img, want, text = _setup()
    # blur#0 reads hw(x, y); hw(x + 1, y + 1) is written a cycle after the last value blur reads
    bad = _sub(text, r"(blur_out\[x, y\] -> hw_input\[)x, y\]", r"\g<1>1 + x, 1 + y]")
    with pytest.raises(LoomError, match=r"buffer 'hw_input': 'blur' at \(0, 0\) reads hw_input\(1, 1\) at cycle 10 "
                                        r"but it is written at cycle 11 \(read before write\)"):
        _run(out, d, img, bad)


def _move_output(text, by):
    """out's write, reads and the host's read ``by`` cycles later, with its kernel offset and the latency."""
    t = _sub(text, r"\{ (output_in|output_out|host_out)(\[x, y\] -> \[)11 \+", rf"{{ \g<1>\g<2>{11 + by} +", 4)
    t = _sub(t, r'(ubuf.kernel "output" [^\n]* offset )11', rf"\g<1>{11 + by}")
    return _sub(t, r"(ubuf.design @output latency )69", rf"\g<1>{69 + by}")


def test_a_stage_moved_later_needs_its_producer_to_hold_more():
    out, d, img, want, text = _setup()
    later = _move_output(text, 4)  # blur's values now wait 4 cycles longer for out: 1 slot is too few
    with pytest.raises(LoomError, match=r"buffer 'blur'.*capacity 1 \(read after eviction\)"):
        _run(out, d, img, later)
    roomy = _sub(later, r"(@blur : ui16 extents \[9, 6\] capacity )1 ", r"\g<1>5 ")
    np.testing.assert_array_equal(_run(out, d, img, roomy), want)
    with pytest.raises(LoomError, match=r"buffer 'blur'.*capacity 4 \(read after eviction\)"):
        _run(out, d, img, _sub(later, r"(@blur : ui16 extents \[9, 6\] capacity )1 ", r"\g<1>4 "))


def test_a_kernel_latency_moves_its_reads_earlier():
    out, d, img, want, text = _setup()
    # blur with a 2-cycle pipeline reads at 8 + 10y + x: hw's row y + 1 is not written yet
    t = _sub(text, r'(ubuf.kernel "blur" [^\n]* latency )0', r"\g<1>2")
    with pytest.raises(LoomError, match=r"ubuf.port 'blur#0' of @hw_input: the port fires on '\{ blur_out\[x, y\] "
                                        r"-> \[10 \+ 10y \+ x\] \}' but its stage 'blur' reads on \[8 \+ 10y \+ x\]"):
        _run(out, d, img, t)
    t = _sub(t, r"(blur_out\[x, y\] -> \[)10 \+", r"\g<1>8 +", 3)
    with pytest.raises(LoomError, match=r"buffer 'hw_input': 'blur' at \(0, 0\) reads hw_input\(0, 1\) at cycle 8 "
                                        r"but it is written at cycle 10 \(read before write\)"):
        _run(out, d, img, t)


@pytest.mark.parametrize("pattern,repl,message", [
    (r"(output_out\[x, y\] -> \[)11 \+", r"\g<1>12 +",
     r"ubuf.port 'output#0' of @blur: the port fires on .* but its stage 'output' reads on \[11 \+ 10y \+ x\].*"
     r"edit a stage's write port, read ports and kernel offset together"),
    (r'(ubuf.kernel "output" [^\n]* offset )11', r"\g<1>12",
     r"ubuf.kernel 'output': the kernel's offset 12 differs from the cycle its write port 'in' of @output starts at "
     r"\(11\)"),
    (r"(ubuf.design @output latency )69", r"\g<1>70",
     r"ubuf.design: latency 70 differs from the cycle after the output's last write \(69"),
    (r"(blur_in\[x, y\] : 0 <= x <= )8", r"\g<1>7",
     r"ubuf.port 'in' of @blur: the domain is .* but the design's is .*follow from the pipeline's bounds"),
    (r"(blur_in\[x, y\] -> \[)10 \+ 10y \+ x", r"\g<1>10 + 10y + x*x",
     r"<ubuf IR>:\d+:\d+: ubuf.port: schedule .* is not valid isl syntax"),
    (r"(blur_in\[x, y\] -> \[)10 \+ 10y \+ x", r"\g<1>10 + 10y + floor((x + y)/2)",
     r"ubuf.port 'in' of @blur: schedule .* is not a cycle t = offset"),
    (r"\{ blur_in(\[x, y\] -> \[10)", r"{ blur_X\g<1>", r"<ubuf IR>:\d+:\d+: ubuf.port 'in': the schedule map's loops "
                                                         r"are 'blur_X' but the domain's 'blur_in'"),
])
def test_an_edit_the_rest_of_the_ir_contradicts_is_refused_by_name(pattern, repl, message):
    out, d, img, want, text = _setup()
    with pytest.raises(LoomError, match=message):
        _run(out, d, img, _sub(text, pattern, repl))


def test_fuzzed_timing_numbers_give_a_value_or_a_loom_error():
    """40 seeded edits of one number in a schedule, capacity, offset or latency: a LoomError or the right image
    shape, never another exception; some edits must be caught and some (a larger capacity) must pass."""
    out, d, img, want, text = _setup()
    spots = [m.span(1) for m in re.finditer(r"(?:schedule \"[^\"]*?|capacity |offset |latency )(\d+)", text)]
    rng = np.random.default_rng(21)
    seen = {"error": 0, "value": 0}
    for _ in range(40):
        a, b = spots[int(rng.integers(len(spots)))]
        n = max(0, int(text[a:b]) + int(rng.integers(-3, 4)))
        try:
            got = _run(out, d, img, text[:a] + str(n) + text[b:])
        except LoomError:
            seen["error"] += 1
            continue
        assert got.shape == want.shape
        seen["value"] += 1
    assert seen["error"] >= 5 and seen["value"] >= 5, seen
