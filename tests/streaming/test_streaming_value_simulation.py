"""The simulator computes its own values: each stage's ``ubuf.kernel`` (the IR the path prints) is
evaluated on what its read ports take out of the buffers at the IR's access maps.

Checked: output equals real Halide bit for bit on every existing app (and on the apps with a reduction
iterated in time, gemm and the conv layer, against numpy); a deliberately wrong access map, a wrong kernel
constant, a wrong kernel op and a swapped port give a wrong pixel (caught by the comparison), whether the
mistake is in the Design or in the printed IR edited by hand; the kernel evaluator's arith semantics agree
with the reference evaluator on random values of every type; bad IR is a LoomError naming the port or op.
"""

import os
import re

import numpy as np
import pytest
from tests.fuzz.accel_mutator import FUZZ_SCALE
from tests.pipelines_cpu.cpu_apps import example, numpy_reference, output_size, random_inputs

from loom.dialects.ubuf import KernelOp
from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, Int16, Int32, UInt8, UInt16, UInt32, Var, evaluate
from loom.frontends.pipeline import Float32, cast, maximum, minimum, select
from loom.streaming import build_design, simulate
from loom.streaming.ir_reader import parse_access
from loom.streaming.to_ubuf import design_to_ir

if "libasan" in os.environ.get("LD_PRELOAD", ""):
    hl = None
elif os.environ.get("CI"):
    import halide as hl
else:
    try:
        import halide as hl
    except ImportError:
        hl = None
if hl is not None:
    from tests.pipelines_cpu import test_cpu_halide as H

SIZE = (15, 9)


def _halide(name, mod, inputs, osize):
    if name == "gemm":
        f = H.halide_gemm(hl.Buffer(inputs["A"]), hl.Buffer(inputs["B"]), mod.K)
    elif name == "conv_layer":
        f = H.halide_conv_layer(hl.Buffer(inputs["input"]), mod.weights())
    else:
        f = getattr(H, f"halide_{name}")(hl.Buffer(inputs["input"]))
    return np.asarray(f.realize(list(osize)))


@pytest.mark.parametrize("name", ["pointwise", "gaussian", "cascade", "harris", "unsharp", "camera_pipeline",
                                  "conv_layer", "gemm"])
def test_value_simulation_equals_halide(name):
    mod = example(name)
    accel, _ = mod.build("accel", tile=SIZE)
    inputs = random_inputs(name, mod, SIZE, salt="values")
    osize = output_size(name, SIZE)
    sim = simulate(accel, inputs, osize)
    np.testing.assert_array_equal(sim, numpy_reference(name, mod, inputs, SIZE))
    if hl is not None:
        want = _halide(name, mod, inputs, osize)
        assert want.dtype == sim.dtype
        np.testing.assert_array_equal(sim, want)


@pytest.mark.parametrize("name,args", [("gemm", {"k_unroll": 2}), ("gemm", {"k_unroll": 1}),
                                       ("conv_layer", {"ci_unroll": 1})])
def test_reductions_iterated_in_time_run_the_update_region(name, args):
    mod = example(name)
    accel, _ = mod.build("accel", tile=(8, 8), **args)
    d = build_design(accel, output_size(name, (8, 8)))
    kernel = next(op for op in design_to_ir(d).ops.first.body.ops
                  if isinstance(op, KernelOp) and op.update.blocks)
    assert kernel.update.block.ops  # one iteration of the reduction, evaluated once per cycle
    inputs = random_inputs(name, mod, (8, 8), salt="time")
    sim = simulate(accel, inputs, output_size(name, (8, 8)), design=d)
    np.testing.assert_array_equal(sim, numpy_reference(name, mod, inputs, (8, 8)))


def _cascade():
    mod = example("cascade")
    out, _ = mod.build("accel", tile=(16, 12))
    d = build_design(out, (16, 12))
    img = mod.make_inputs((16, 12), np.random.default_rng(11))["input"]
    want = numpy_reference("cascade", mod, {"input": img}, (16, 12))
    return out, d, img, want


def test_unmodified_ir_round_trips_through_text_and_simulates_bit_exact():
    out, d, img, want = _cascade()
    text = str(design_to_ir(d))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 12), design=d, ir=text), want)


def _edit(text, pattern, repl):
    new, n = re.subn(pattern, repl, text, count=1)
    assert n == 1, pattern
    return new


def test_a_wrong_access_map_in_the_ir_gives_wrong_pixels():
    out, d, img, want = _cascade()
    text = str(design_to_ir(d))
    # conv1's port 8 reads hw_input(2 + x, 2 + y); make it read (1 + x, 2 + y): an earlier, already written value
    bad = _edit(text, r"(conv1#8\" stage \"conv1\" domain \"[^\"]*\" access \"\{ conv1_out\[x, y\] -> "
                      r"hw_input\[)2 \+ x", r"\g<1>1 + x")
    sim = simulate(out, {"input": img}, (16, 12), design=d, ir=bad)
    assert (sim != want).mean() > 0.3  # most pixels change: the value simulation used the edited map


def test_a_wrong_access_map_in_the_design_gives_wrong_pixels():
    out, d, img, want = _cascade()
    port = d.buffers["hw_input"].read_ports[8]
    rows, offs = port.access
    port.access = (rows, (offs[0] - 1, offs[1]))  # the scheduler's port now reads one column to the left
    sim = simulate(out, {"input": img}, (16, 12), design=d)
    assert (sim != want).mean() > 0.3


def test_a_wrong_kernel_constant_gives_wrong_pixels():
    out, d, img, want = _cascade()
    text = str(design_to_ir(d))
    # the centre tap's weight 4 of conv1 (a tap register folded into the kernel) becomes 5
    kernel = text[text.index('ubuf.kernel "conv1"'):]
    bad = text.replace(kernel, _edit(kernel, r"arith.constant 4 : i32", "arith.constant 5 : i32"))
    sim = simulate(out, {"input": img}, (16, 12), design=d, ir=bad)
    assert (sim != want).any()
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 12), design=d, ir=text), want)


def test_a_wrong_kernel_op_gives_wrong_pixels():
    out, d, img, want = _cascade()
    text = str(design_to_ir(d))
    kernel = text[text.index('ubuf.kernel "output"'):]
    bad = text.replace(kernel, _edit(kernel, r"arith.addi", "arith.subi"))
    assert (simulate(out, {"input": img}, (16, 12), design=d, ir=bad) != want).any()


def test_swapped_read_ports_give_wrong_pixels():
    out, d, img, want = _cascade()
    text = str(design_to_ir(d))
    bad = _edit(text, r'"hw_input/conv1#0", "hw_input/conv1#1"', '"hw_input/conv1#1", "hw_input/conv1#0"')
    assert (simulate(out, {"input": img}, (16, 12), design=d, ir=bad) != want).any()


def test_bad_ir_is_a_loom_error_naming_the_place():
    out, d, img, _ = _cascade()
    text = str(design_to_ir(d))
    bad = _edit(text, r"(conv1#8\" stage \"conv1\" domain \"[^\"]*\" access \"\{ conv1_out\[x, y\] -> "
                      r"hw_input\[)2 \+ x", r"\g<1>40 + x")
    with pytest.raises(LoomError, match="buffer 'hw_input'.*port 'conv1#8' of 'conv1' reads indices 40..57 in "
                                        "dimension 0, outside the buffer's domain 0..19"):
        simulate(out, {"input": img}, (16, 12), design=d, ir=bad)
    bad = _edit(text, r"arith.addi", "arith.ceildivui")
    with pytest.raises(LoomError, match="ubuf.kernel .*cannot evaluate 'arith.ceildivui'"):
        simulate(out, {"input": img}, (16, 12), design=d, ir=bad)
    bad = _edit(text, r'"hw_input/conv1#0"', '"hw_input/conv9#0"')
    with pytest.raises(LoomError, match="read 'hw_input/conv9#0' is not a read port of stage 'conv1'"):
        simulate(out, {"input": img}, (16, 12), design=d, ir=bad)
    with pytest.raises(LoomError, match=r"<ubuf IR>:\d+:\d+: Operation ubuf.yeld is not registered \(in `ubuf.yeld"):
        simulate(out, {"input": img}, (16, 12), design=d, ir=text.replace("ubuf.yield", "ubuf.yeld", 1))
    with pytest.raises(LoomError, match="port 'p'.*piecewise"):
        parse_access("{ S[x] -> b[x] : x < 3; S[x] -> b[2x] : x >= 3 }", "port 'p'")
    with pytest.raises(LoomError, match="port 'p'.*not valid isl"):
        parse_access("{ S[x] -> b[x", "port 'p'")


def test_access_maps_read_back_from_isl():
    assert parse_access("{ S[x, y] -> b[floor((1 + x)/2), 2 + 2y] }", "p") == (((1, 0), (0, 2)), (1, 2), (2, 1))
    assert parse_access("{ S[x, y] -> b[floor((x)/2) + 3] }", "p") == (((1, 0),), (6,), (2,))
    assert parse_access("{ S[x, y, z] -> b[x + z, 3 - y] }", "p") == (((1, 0, 1), (0, -1, 0)), (0, 3), (1, 1))


# the kernel evaluator's arith semantics, one op at a time, against the reference evaluator ----------

TYPES = [UInt8, UInt16, UInt32, Int16, Int32, Float32]


def _random(t, rng, n):
    if t == Float32:
        v = rng.normal(0, 100, n).astype(np.float32)
        v[:4] = [0.0, -0.0, 1e30, -7.5]
        return v
    info = np.iinfo(t.dtype)
    v = rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(t.dtype)
    v[:4] = [0, 1, info.max, info.min]
    return v


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_kernel_arithmetic_matches_the_reference_evaluator(t):
    """Every operator on random values of the type (with the edge values 0, 1, max, min), computed by the
    simulator's evaluation of the kernel IR, equals ``evaluate`` (the numpy reference)."""
    x, y, xo, yo, xi, yi = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    a_in, b_in = ImageParam(t, 2, "a"), ImageParam(t, 2, "b")
    a, b = Func("hw_a"), Func("hw_b")
    a[x, y], b[x, y] = a_in[x, y], b_in[x, y]
    out = Func("output")
    s = cast(t, 3) if t != Float32 else cast(t, 0.5)
    terms = [a[x, y] + b[x, y], a[x, y] - b[x, y], a[x, y] * b[x, y], a[x, y] / b[x, y],
             minimum(a[x, y], b[x, y]), maximum(a[x, y], b[x, y]),
             select(a[x, y] < b[x, y], a[x, y] * s, b[x, y])]
    if t != Float32:
        terms += [a[x, y] % b[x, y], a[x, y] >> s, a[x, y] << s, (a[x, y] & b[x, y]) ^ (a[x, y] | s), cast(t, cast(UInt8, a[x, y])),
                  cast(t, cast(Int16, b[x, y]))]
    else:
        terms += [cast(t, cast(Int32, a[x, y])), cast(t, cast(UInt8, b[x, y] * s))]
    acc = None
    for k, term in enumerate(terms):  # one output per operator: output(x, y) for y rows, x = k picks
        acc = term if acc is None else select(x % len(terms) == k, term, acc)
    out[x, y] = acc
    out.tile(x, y, xo, yo, xi, yi, 26, 8).hw_accelerate(xi, xo)
    a.compute_at(out, xo)
    b.compute_at(out, xo)
    rng = np.random.default_rng(len(t.name))
    shape = (8, 26)
    inputs = {"a": _random(t, rng, 208).reshape(shape), "b": _random(t, rng, 208).reshape(shape)}
    with np.errstate(all="ignore"):
        want = evaluate(out, inputs, (26, 8))
    got = simulate(out, inputs, (26, 8))
    np.testing.assert_array_equal(got, want)


def test_value_simulation_of_a_4k_frame_stays_fast():
    """The whole frame is evaluated per tile with numpy (no per-pixel Python): a 512x256 gaussian in tiles."""
    import time
    mod = example("gaussian")
    out, _ = mod.build("accel", tile=(128, 64))
    inputs = random_inputs("gaussian", mod, (512, 256), salt="fast")
    t0 = time.perf_counter()
    sim = simulate(out, inputs, (512, 256))
    assert time.perf_counter() - t0 < 30
    np.testing.assert_array_equal(sim, numpy_reference("gaussian", mod, inputs, (512, 256)))


OPS = ["arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori", "arith.maxui",
       "arith.minui", "arith.divui", "arith.remui", "arith.shrui", "arith.shli"]


def _mutate(text, rng):
    """One random edit of printed IR: a digit, an arith op, a line dropped, a character changed."""
    kind = rng.integers(4)
    if kind == 0:
        pos = [m.start() for m in re.finditer(r"\d", text)]
        p = pos[rng.integers(len(pos))]
        return text[:p] + str(rng.integers(10)) + text[p + 1:]
    if kind == 1:
        pos = [m for m in re.finditer("|".join(re.escape(o) for o in OPS), text)]
        m = pos[rng.integers(len(pos))]
        return text[:m.start()] + OPS[rng.integers(len(OPS))] + text[m.end():]
    lines = text.splitlines()
    i = int(rng.integers(len(lines)))
    if kind == 2:
        return "\n".join(lines[:i] + lines[i + 1:])
    line = lines[i]
    if not line:
        return text
    j = int(rng.integers(len(line)))
    chars = "()[]{}%:,x\"#@ 0"
    lines[i] = line[:j] + chars[rng.integers(len(chars))] + line[j + 1:]
    return "\n".join(lines)


TOKEN = re.compile(r'"[^"\n]*"|%\w+|@\w+|\^bb\d+|-?\d+|[A-Za-z_][\w.]*|\S')
TYPES = ["i1", "i7", "i8", "i16", "i32", "i64", "ui16", "si16", "f32", "f16", "index"]
NUMBERS = [0, 1, -1, 2, 7, 255, 65536, 2 ** 31, 2 ** 63 - 1, 2 ** 64 + 1, -2 ** 40]


def _mutate_tokens(text, rng):
    """One random edit at the token or line level: a number (small step or an extreme), an arith op, an SSA
    name, a type, a token dropped, doubled or swapped with the next, an edit inside a quoted string (isl text,
    names), a line dropped, doubled or swapped with a nearby one."""
    toks = [(m.start(), m.end(), m.group(0)) for m in TOKEN.finditer(text)]

    def pick(pred):
        found = [i for i, t in enumerate(toks) if pred(t[2])]
        return found[int(rng.integers(len(found)))] if found else int(rng.integers(len(toks)))

    def put(i, new):
        a, b, _ = toks[i]
        return text[:a] + new + text[b:]

    kind, lines = int(rng.integers(10)), text.split("\n")
    if kind == 0:
        i = pick(lambda t: re.fullmatch(r"-?\d+", t))
        v = int(toks[i][2]) if re.fullmatch(r"-?\d+", toks[i][2]) else 0
        return put(i, str(v + int(rng.integers(-3, 4)) if rng.random() < .6 else NUMBERS[rng.integers(len(NUMBERS))]))
    if kind == 1:
        return put(pick(lambda t: t in OPS), OPS[rng.integers(len(OPS))])
    if kind == 2:
        return put(pick(lambda t: t.startswith("%")), toks[pick(lambda t: t.startswith("%"))][2])
    if kind == 3:
        return put(pick(lambda t: t in TYPES), TYPES[rng.integers(len(TYPES))])
    if kind == 4:
        i = int(rng.integers(len(toks)))
        return put(i, ["", toks[i][2] + " " + toks[i][2]][int(rng.integers(2))])
    if kind == 5:
        i = int(rng.integers(len(toks) - 1))
        (a0, b0, t0), (a1, b1, t1) = toks[i], toks[i + 1]
        return text[:a0] + t1 + text[b0:a1] + t0 + text[b1:]
    if kind == 6:
        i = pick(lambda t: t.startswith('"') and len(t) > 2)
        inner = toks[i][2][1:-1]
        parts = [(m.start(), m.end()) for m in re.finditer(r"-?\d+|\w+|\S", inner)]
        a, b = parts[int(rng.integers(len(parts)))]
        new = ["x", "y", "", "+", "2x", "floor", "7", "-1", "z"][int(rng.integers(9))]
        return put(i, '"' + inner[:a] + new + inner[b:] + '"')
    i = int(rng.integers(len(lines) - 1))
    if kind == 7:
        return "\n".join(lines[:i] + lines[i + 1:])
    if kind == 8:
        return "\n".join(lines[:i + 1] + lines[i:])
    j = min(len(lines) - 1, i + 1 + int(rng.integers(3)))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


@pytest.mark.parametrize("app, tile, share, seed", [("cascade", (8, 6), None, 21), ("upsample", (8, 8), None, 22),
                                                    ("gaussian_pyramid", (8, 8), "pixel", 23),
                                                    ("gaussian_pyramid", (8, 8), "line", 24)])
def test_token_fuzzed_ir_gives_a_value_or_a_loom_error(app, tile, share, seed):
    """Seeded token- and line-level edits of the printed IR (40 per app, times LOOM_FUZZ_SCALE): each simulates or
    is a LoomError, never another exception (use before definition, odd integer widths, numbers beyond int64,
    several blocks, duplicated ops were tracebacks once), and most are refused by name."""
    mod = example(app)
    out, _ = mod.build("accel", tile=tile, **({"share": share} if share else {}))
    d = build_design(out, tile)
    inputs = mod.make_inputs(tile, np.random.default_rng(seed))
    text = str(design_to_ir(d))
    want = simulate(out, inputs, tile, design=d)
    rng = np.random.default_rng(seed)
    outcomes = {"error": 0, "same": 0, "changed": 0}
    for _ in range(40 * FUZZ_SCALE):
        edited = _mutate_tokens(text, rng)
        try:
            got = simulate(out, inputs, tile, design=d, ir=edited)
        except LoomError:
            outcomes["error"] += 1
            continue
        assert got.shape == want.shape
        outcomes["changed" if (got != want).any() else "same"] += 1
    assert outcomes["error"] >= 0.6 * sum(outcomes.values()), outcomes


def test_fuzzed_ir_gives_a_value_or_a_loom_error():
    """30 seeded random edits of the printed IR: the simulation returns an image of the right shape or
    raises a LoomError (what does not parse names its line:column); never another exception."""
    mod = example("cascade")
    out, _ = mod.build("accel", tile=(8, 6))
    d = build_design(out, (8, 6))
    img = mod.make_inputs((8, 6), np.random.default_rng(2))["input"]
    text = str(design_to_ir(d))
    rng = np.random.default_rng(15)
    outcomes = {"error": 0, "same": 0, "changed": 0}
    want = simulate(out, {"input": img}, (8, 6), design=d)
    for _ in range(30):
        try:
            got = simulate(out, {"input": img}, (8, 6), design=d, ir=_mutate(text, rng))
        except LoomError:
            outcomes["error"] += 1
            continue
        assert got.shape == (6, 8)
        outcomes["changed" if (got != want).any() else "same"] += 1
    assert outcomes["error"] >= 5 and outcomes["same"] + outcomes["changed"] >= 5, outcomes
