"""Patterns the accelerator cannot take are rejected with a message that says why."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u16
from loom.streaming import Accelerator, build_design, simulate

x, y = Var("x"), Var("y")
xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
t = Var("t")


def accelerate(out, *stages):
    out.tile(x, y, xo, yo, xi, yi, 8, 8).hw_accelerate(xi, xo)
    for s in stages:
        s.compute_at(out, xo)


def hw_input():
    """The accelerator's input stage: hw_input[x, y] = input[x, y] (u8)."""
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = inp[x, y]
    return hw


def copy_pipeline():
    """output[x, y] = hw_input[x, y], not yet scheduled."""
    hw = hw_input()
    out = Func("output")
    out[x, y] = hw[x, y]
    return hw, out


def test_non_affine_indexing():
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = hw[x * x, y]
    accelerate(out, hw)
    with pytest.raises(LoomError, match="Func 'output': unsupported pattern \\(non-affine indexing\\).*"
                                        "reads 'hw_input'.*\\(x \\* x\\)' is not affine"):
        Accelerator(out)


def test_histogram():
    hw = hw_input()
    r = RDom(0, 8, 0, 8)
    hist = Func("hist")
    hist[x, y] = u16(0)
    hist[hw[r.x, r.y], 0] += u16(1)
    out = Func("output")
    out[x, y] = hist[x, y]
    accelerate(out, hw, hist)
    with pytest.raises(LoomError, match="Func 'hist': unsupported pattern \\(histogram\\).*data-dependent index"):
        Accelerator(out)


def test_recursion():
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(1, 7)
    scan = Func("scan")
    scan[x, y] = u16(inp[x, y])
    scan[r.x, y] = scan[r.x - 1, y] + u16(inp[r.x, y])
    out = Func("output")
    out[x, y] = scan[x, y]
    accelerate(out, scan)
    with pytest.raises(LoomError, match="Func 'scan': unsupported pattern \\(recursion\\)"):
        Accelerator(out)


def test_undeclared_host_input():
    inp = ImageParam(UInt8, 2, "input")
    pre = Func("pre")
    pre[x, y] = u16(inp[x, y]) * 2
    pre.compute_root()
    out = Func("output")
    out[x, y] = pre[x, y] + pre[x + 1, y]
    accelerate(out)
    with pytest.raises(LoomError, match="Func 'pre':.*computed on the host.*without being declared an "
                                        "accelerator input.*stream_to_accelerator"):
        Accelerator(out)
    pre.stream_to_accelerator()
    d = build_design(out, (8, 8))
    assert d.stages["pre"].node.kind == "stream" and d.capacities["pre"] == 1
    img = np.random.default_rng(0).integers(0, 256, (8, 9), dtype=np.uint8)
    a = img.astype(np.uint16) * 2
    np.testing.assert_array_equal(simulate(out, {"input": img}, (8, 8)), a[:, :8] + a[:, 1:9])


def test_data_dependent_read_of_a_stream():
    hw = hw_input()
    out = Func("output")
    out[x, y] = hw[hw[x, y], y]
    accelerate(out, hw)
    with pytest.raises(LoomError, match="Func 'output': unsupported pattern \\(data-dependent read\\).*"
                                        "only constant Funcs"):
        Accelerator(out)


def test_reduction_inlined_into_a_stage_must_be_unrolled():
    # a stage's own reduction may iterate in time (test_streaming_reductions_in_time); one inlined
    # into another stage's kernel has no accumulator of its own, so it must be unrolled
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, 3)
    s = Func("rowsum")
    s[x, y] = u16(0)
    s[x, y] += u16(inp[x + r.x, y])
    out = Func("output")
    out[x, y] = s[x, y]
    accelerate(out)
    with pytest.raises(LoomError, match="Func 'rowsum': reduction variable 'r\\d+.x' .* not unrolled.*"
                                        "rowsum.update\\(0\\).unroll.*compute_at\\(output, xo\\)"):
        Accelerator(out)


def test_compute_at_inside_the_accelerator_loops():
    hw, out = copy_pipeline()
    out.tile(x, y, xo, yo, xi, yi, 8, 8).hw_accelerate(xi, xo)
    hw.compute_at(out, yi)
    with pytest.raises(LoomError, match="Func 'hw_input': compute_at\\(output, yi\\) is inside the accelerator"):
        Accelerator(out)


def test_no_accelerator_and_rate_mismatch():
    hw, out = copy_pipeline()
    with pytest.raises(LoomError, match="output.*no Func in the pipeline is scheduled with hw_accelerate"):
        Accelerator(out)
    accelerate(out, hw)
    out.unroll(xi, 2)
    with pytest.raises(LoomError, match="different rates.*hw_input=1.*output=2"):
        Accelerator(out)


def test_boundary_condition_inside_the_accelerator():
    from loom.frontends.pipeline import repeat_edge
    inp = ImageParam(UInt8, 2, "input")
    padded = repeat_edge(inp)
    out = Func("output")
    out[x, y] = u16(padded[x - 1, y]) + u16(padded[x + 1, y])
    accelerate(out)
    with pytest.raises(LoomError, match="Func 'output': unsupported pattern \\(non-affine indexing\\).*boundary "
                                        "condition 'input_repeat_edge'.*stream_to_accelerator"):
        Accelerator(out)
    padded.stream_to_accelerator()
    img = np.random.default_rng(1).integers(0, 256, (8, 8), dtype=np.uint8)
    p = np.pad(img, ((0, 0), (1, 1)), mode="edge").astype(np.uint16)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (8, 8)), p[:, :8] + p[:, 2:10])


@pytest.mark.parametrize("unroll, shown", [(lambda f: f.unroll(x, 2), "pre.unroll\\(x, 2\\)"),
                                           (lambda f: f.unroll(y), "pre.unroll\\(y\\)")])
def test_unroll_on_a_host_stream_is_refused(unroll, shown):
    # the host computes 'pre' (no loops of it exist in the streaming flow) and the stream's rate is its
    # reader's: the unroll used to be dropped without a word
    inp = ImageParam(UInt8, 2, "input")
    pre = Func("pre")
    pre[x, y] = u16(inp[x, y]) * 2
    out = Func("output")
    out[x, y] = pre[x, y] + pre[x + 1, y]
    accelerate(out)
    pre.stream_to_accelerator()
    unroll(pre)
    with pytest.raises(LoomError, match=f"Func 'pre': {shown} has no effect: 'pre' is computed on the host and "
                                        "streamed into the accelerator.*unroll that stage instead"):
        Accelerator(out)


def _host_stream_pipeline():
    """pre2 (host) -> pre (host, streamed in) -> output (the accelerator)."""
    inp = ImageParam(UInt8, 2, "input")
    pre2, pre, out = Func("pre2"), Func("pre"), Func("output")
    pre2[x, y] = u16(inp[x, y]) + 1
    pre[x, y] = pre2[x, y] * 2
    out[x, y] = pre[x, y] + pre[x + 1, y]
    accelerate(out)
    pre.stream_to_accelerator()
    pre2.compute_root()
    return pre2, pre, out


@pytest.mark.parametrize("schedule, shown", [
    (lambda pre2, pre, out: pre.vectorize(x, 4), "pre.vectorize\\(x, 4\\) has no effect: 'pre' is computed on the host "
                                                 "and streamed into the accelerator.*drop the vectorize"),
    (lambda pre2, pre, out: pre2.unroll(x, 2), "pre2.unroll\\(x, 2\\) has no effect: 'pre2' is computed on the host "
                                               "\\(it feeds the stream 'pre'\\).*drop the unroll"),
    (lambda pre2, pre, out: pre2.vectorize(x), "pre2.vectorize\\(x\\) has no effect: 'pre2' is computed on the host"),
    (lambda pre2, pre, out: pre2.tile(x, y, xo, yo, xi, yi, 4, 4),
     "pre2.split\\(x, xo, xi, 4\\) \\(a split or tile\\) has no effect: 'pre2' is computed on the host"),
    (lambda pre2, pre, out: pre.split(x, xo, xi, 4), "pre.split\\(x, xo, xi, 4\\) \\(a split or tile\\) has no effect: "
                                                     "'pre' is computed on the host and streamed.*drop the split"),
    (lambda pre2, pre, out: pre.fuse(x, y, t), "pre.fuse\\(x, y, t\\) has no effect: 'pre' is computed on the host and "
                                               "streamed.*arrives in the order.*drop the fuse"),
    (lambda pre2, pre, out: pre.reorder(y, x), "pre.reorder\\(y, x\\) has no effect: 'pre' is computed on the host "
                                               "and streamed.*drop the reorder"),
    (lambda pre2, pre, out: pre.parallel(y), "pre.parallel\\(y\\) has no effect: 'pre' is computed on the host and "
                                             "streamed.*drop the parallel"),
    (lambda pre2, pre, out: pre2.parallel(y), "pre2.parallel\\(y\\) has no effect: 'pre2' is computed on the host "
                                              "\\(it feeds the stream 'pre'\\).*drop the parallel"),
    (lambda pre2, pre, out: pre2.fuse(x, y, t), "pre2.fuse\\(x, y, t\\) has no effect: 'pre2' is computed on the host"),
    (lambda pre2, pre, out: pre2.reorder(y, x), "pre2.reorder\\(y, x\\) has no effect: 'pre2' is computed on the "
                                                "host"),
    (lambda pre2, pre, out: out.vectorize(xi, 4), "output.vectorize\\(xi, 4\\) has no effect: 'output' is computed "
                                                  "by the accelerator.*unroll\\(xi, n\\) computes n pixels per cycle"),
    (lambda pre2, pre, out: out.parallel(yi), "output.parallel\\(yi\\) has no effect: 'output' is computed by the "
                                              "accelerator.*unroll duplicates the hardware"),
])
def test_directives_the_streaming_flow_would_drop_are_refused(schedule, shown):
    # none of these changed the design: they used to be dropped without a word
    pre2, pre, out = _host_stream_pipeline()
    Accelerator(out)  # the pipeline itself is fine
    pre2, pre, out = _host_stream_pipeline()
    schedule(pre2, pre, out)
    with pytest.raises(LoomError, match=shown):
        Accelerator(out)


def test_parallel_on_a_stage_and_on_the_host_tile_loop():
    hw = hw_input()
    out = Func("output")
    out[x, y] = u16(hw[x, y]) + 1
    accelerate(out, hw)
    hw.parallel(y)
    with pytest.raises(LoomError, match="hw_input.parallel\\(y\\) has no effect: 'hw_input' is computed by the "
                                        "accelerator"):
        Accelerator(out)
    hw = hw_input()
    out = Func("output")
    out[x, y] = u16(hw[x, y]) + 1
    accelerate(out, hw)
    out.parallel(yo)  # the host's loop over tiles: not the accelerator's, left as it is
    Accelerator(out)


@pytest.mark.parametrize("directive", ["vectorize", "unroll"])
def test_a_loop_directive_on_a_func_inlined_into_a_stage_is_refused(directive):
    # part of the stage's kernel, scheduled inline: real Halide refuses vectorize and unroll on it, and so does loom
    # (tests/pipelines_cpu/test_halide_inline_loops.py checks Halide's message); unroll used to be dropped
    hw = hw_input()
    scaled, out = Func("scaled"), Func("output")
    scaled[x, y] = u16(hw[x, y]) * 3
    out[x, y] = scaled[x, y] + 1
    accelerate(out, hw)
    getattr(scaled, directive)(x, 8)
    with pytest.raises(LoomError, match=f"Func 'scaled': scaled.{directive}\\(x, 8\\): cannot {directive} dimension "
                                        "x of function 'scaled' because the function is scheduled inline"):
        Accelerator(out)


def _stage_pipeline():
    """hw_input (a stage) -> output (the accelerator, 8 x 8 tiles), not yet scheduled."""
    hw, out = copy_pipeline()
    out.tile(x, y, xo, yo, xi, yi, 8, 8)
    return hw, out


@pytest.mark.parametrize("schedule, shown", [
    (lambda hw, out: (out.fuse(xi, yi, t).hw_accelerate(t, xo), hw.compute_at(out, xo)),
     "Func 'output': output.fuse\\(xi, yi, t\\) is not supported: the accelerator streams a stage in its "
     "dimensions' order.*drop the fuse"),
    (lambda hw, out: (out.fuse(xo, yo, t).hw_accelerate(xi, t), hw.compute_at(out, t)),
     "Func 'output': output.fuse\\(xo, yo, t\\) is not supported: it fuses the host's loops over tiles, which "
     "hides the tile its splits give to hw_accelerate\\(xi, t\\).*drop the fuse"),
    (lambda hw, out: (out.hw_accelerate(xi, xo), hw.compute_at(out, xo).fuse(x, y, t)),
     "Func 'hw_input': hw_input.fuse\\(x, y, t\\) is not supported"),
    (lambda hw, out: (out.hw_accelerate(xi, xo), hw.compute_at(out, xo).reorder(y, x)),
     "Func 'hw_input': hw_input.reorder\\(y, x\\) has no effect: the accelerator computes 'hw_input' in its "
     "dimensions' order \\(x, y, innermost first\\), not in the loop order y, x; drop the reorder"),
    (lambda hw, out: (out.reorder(yi, xi).hw_accelerate(yi, xo), hw.compute_at(out, xo)),
     "Func 'output': output.reorder\\(yi, xi\\) has no effect: the accelerator computes 'output' in its "
     "dimensions' order"),
    (lambda hw, out: (out.hw_accelerate(xi, xo), hw.compute_at(out, xo).split(x, Var("a"), Var("b"), 4)),
     "Func 'hw_input': hw_input.split\\(x, a, b, 4\\) \\(a split or tile\\) has no effect: the accelerator "
     "computes 'hw_input' over its region.*drop the split"),
    (lambda hw, out: (out.split(xi, Var("a"), Var("b"), 4).hw_accelerate(Var("b"), xo), hw.compute_at(out, xo)),
     "Func 'output': output.split\\(xi, a, b, 4\\) \\(a split or tile\\) has no effect"),
    (lambda hw, out: (out.hw_accelerate(xi, xo).reorder(yo, xo), hw.compute_at(out, xo)),
     "Func 'output': output.split\\(y, yo, yi, 8\\) has no effect: its outer loop 'yo' is inside hw_accelerate's "
     "loop 'xo' \\(loops, innermost first: xi, yi, yo, xo\\)"),
    (lambda hw, out: (out.hw_accelerate(xi, xo).unroll(yo, 2), hw.compute_at(out, xo)),  # was 2 rows a step
     "Func 'output': output.unroll\\(yo, 2\\) has no effect: 'yo' is the host's loop over tiles.*drop the unroll"),
    (lambda hw, out: (out.hw_accelerate(xi, xo).unroll(xo, 2), hw.compute_at(out, xo)),  # was 2 pixels a step
     "Func 'output': output.unroll\\(xo, 2\\) has no effect: 'xo' is the host's loop over tiles"),
    (lambda hw, out: (out.hw_accelerate(xi, xo).unroll(yo), hw.compute_at(out, xo)),
     "Func 'output': output.unroll\\(yo\\) has no effect: 'yo' is the host's loop over tiles"),
    (lambda hw, out: (out.hw_accelerate(xi, xo).vectorize(yo), hw.compute_at(out, xo)),
     "Func 'output': output.vectorize\\(yo\\) has no effect: 'yo' is the host's loop over tiles"),
    (lambda hw, out: (out.hw_accelerate(xi, xo), hw.compute_at(out, xo).store_root()),
     "Func 'hw_input': store_root\\(\\) has no effect: a stage's storage is its buffer inside the accelerator"),
    (lambda hw, out: (out.hw_accelerate(xi, xo), hw.compute_at(out, xo).store_at(out, yo)),
     "test_streaming_unsupported.py:\\d+ Func 'hw_input': store_at\\(output, yo\\) has no effect"),
])
def test_loop_structure_inside_the_accelerator_is_refused(schedule, shown):
    # the scheduler streams every stage in its dimensions' order: these used to be accepted and dropped (and
    # the fused host loops made the whole image one tile)
    hw, out = _stage_pipeline()
    out.hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    Accelerator(out)  # the pipeline itself is fine
    hw, out = _stage_pipeline()
    schedule(hw, out)
    with pytest.raises(LoomError, match=shown):
        Accelerator(out)


def test_unrolled_loops_may_be_reordered():
    # unrolled loops are hardware copies (a 2 x 2 block a step), not streamed: their order is left alone
    hw, out = _stage_pipeline()
    out.unroll(xi, 2).unroll(yi, 2).reorder("xi_u", "yi_u", xi, yi).hw_accelerate(xi, xo)
    hw.compute_at(out, xo).unroll(x, 2).unroll(y, 2).reorder("x_u", "y_u", x, y)
    acc = Accelerator(out)
    assert (acc.lanes, acc.rows) == (2, 2)
    assert out.pure.schedule.loops[:4] == ["xi_u", "yi_u", "xi", "yi"]


def test_a_reduction_reordered_outside_a_pixel_loop_is_refused():
    inp = ImageParam(UInt8, 2, "input")
    r = RDom(0, 3)
    s, out = Func("rowsum"), Func("output")
    s[x, y] = u16(0)
    s[x, y] += u16(inp[x + r.x, y])
    out[x, y] = s[x, y]
    accelerate(out, s)
    Accelerator(out)  # r.x innermost: iterated in time
    s.update(0).reorder(x, r.x)  # between x and y: partial sums kept for one row (all outside: outer_reductions)
    with pytest.raises(LoomError, match=r"Func 'rowsum': reduction loop 'r\d+.x' is iterated in time between the "
                                        r"update's pure loops \(outside x, inside y\): a partial sum kept "
                                        r"across part of the tile has no streaming schedule; put it inside all pure "
                                        r"loops .* or outside all of them"):
        Accelerator(out)


def _streamed_pre():
    inp = ImageParam(UInt8, 2, "input")
    pre = Func("pre")
    pre[x, y] = u16(inp[x, y]) * 2
    pre.compute_root()
    pre.stream_to_accelerator()
    out = Func("output")
    out[x, y] = pre[x, y] + pre[x + 1, y]
    accelerate(out)
    return pre, out


@pytest.mark.parametrize("directive", ["bound", "store_root", "none"])
def test_host_directives_on_a_streamed_func_keep_its_values(directive):
    pre, out = _streamed_pre()
    if directive == "bound":  # exactly the region the accelerator reads: columns 0..16, rows 0..7
        pre.bound(x, 0, 17).bound(y, 0, 8)
    elif directive == "store_root":
        pre.store_root()
    img = np.random.default_rng(1).integers(0, 256, (8, 17), dtype=np.uint8)
    a = img.astype(np.uint16) * 2
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 8)), a[:, :16] + a[:, 1:17])


def test_host_directives_that_cannot_hold_are_refused_by_name():
    pre, out = _streamed_pre()
    pre.bound(x, 0, 10)  # the run over 16 columns reads columns 0..16 of pre
    img = np.zeros((8, 17), np.uint8)
    with pytest.raises(LoomError, match=r"Func 'pre': bound\(x, 0, 10\) does not cover the required range \[0, 16\]"):
        simulate(out, {"input": img}, (16, 8))
    pre, out = _streamed_pre()
    pre.store_at(out, xo)
    with pytest.raises(LoomError, match=r"Func 'pre': store_at\(output, xo\) is inside its compute level"):
        build_design(out, (8, 8))
