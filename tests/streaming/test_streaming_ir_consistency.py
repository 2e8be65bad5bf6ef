"""A hand-edited ubuf IR is simulated or refused by name, never half-applied or ignored.

Each edit below was once a raw Python exception from the kernel evaluator or the readers, or an edit the
simulation silently ignored (loom/streaming/ir_consistency.py lists what follows from the pipeline). The
edits that are consistent (an equal schedule in another isl form) simulate bit-exactly.
"""

import re

import numpy as np
import pytest

from loom.dialects.ubuf import KernelOp, parse_ir
from loom.errors import LoomError
from loom.examples.pipelines import cascade, gaussian, gaussian_pyramid
from loom.frontends.pipeline import Func, ImageParam, TailStrategy, UInt8, Var, u16, u8
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.frontends.pipeline.evaluate import evaluate
from loom.streaming import build_design, simulate
from loom.streaming.to_ubuf import design_to_ir

TILE = (8, 6)


@pytest.fixture(scope="module")
def cascade_ir():
    out, _ = cascade.build("accel", tile=TILE)
    d = build_design(out, TILE)
    inputs = cascade.make_inputs(TILE, np.random.default_rng(3))
    return out, d, inputs, str(design_to_ir(d))


def _kernel(text, stage):
    return re.search(rf'    ubuf\.kernel "{stage}".*?\n    \}} \{{\n    \}}\n', text, re.S).group(0)


def _swap_two_lines(text):
    lines = text.split("\n")
    i = next(k for k, line in enumerate(lines) if 'ubuf.kernel "conv1"' in line)
    lines[i + 3], lines[i + 4] = lines[i + 4], lines[i + 3]  # an op above the one defining its operand
    return "\n".join(lines)


EDITS = {  # name -> (edit of the printed cascade IR, the LoomError's message)
    "use before definition": (_swap_two_lines, r"ubuf.kernel 'conv1', init region: op \d+ \(arith\.\w+\) uses "
                                               r"operand \d before it is defined"),
    "op without a result": (lambda t: t.replace("ubuf.yield", '"test.op"() : () -> ()\n      ubuf.yield', 1),
                            r"op \d+ \(test\.op\) gives 0 values; kernel ops give one"),
    "a second block": (lambda t: t.replace("      ubuf.yield %51 : i16\n", "      ubuf.yield %51 : i16\n    ^bb1:\n"
                                           "      %q = arith.constant 0 : i16\n      ubuf.yield %q : i16\n"),
                       r"the init region has 2 blocks"),
    "a 7-bit integer": (lambda t: t.replace("ubuf.yield %51 : i16", "%w = arith.trunci %51 : i16 to i7\n"
                                            "      %v = arith.extui %w : i7 to i16\n      ubuf.yield %v : i16"),
                        r"ubuf.kernel 'conv1', op \d+ \(arith.trunci\): values of type i7 are not supported by the "
                        r"value simulator"),
    # a type the simulator does not hold is named where it is (it was always 'ubuf.kernel', even for a table)
    "an f16 argument": (lambda t: t.replace("^bb0(%4: i32, %5: i32,", "^bb0(%4: i32, %5: f16,"),
                        r"ubuf.kernel 'conv1', argument 1: values of type f16 are not supported"),
    "an f16 table": (lambda t: t.replace("ubuf.constant @kernel : si32", "ubuf.constant @kernel : f16"),
                     r"ubuf.constant @kernel: values of type f16 are not supported"),
    "an extent beyond int64": (lambda t: t.replace("extents [10, 8]", "extents [10, 18446744073709551617]", 1),
                               r"<ubuf IR>:\d+:\d+: 18446744073709551617 is out of range: ubuf.buffer's integers are "
                               r"signed 64-bit.*extents \[10, 184"),
    "a coefficient beyond int64": (lambda t: t.replace("conv1_out[x, y] -> hw_input[x, y]",
                                                       "conv1_out[x, y] -> hw_input[100000000000000000000x, y]"),
                                   r"has a coefficient of 2\*\*31 or more"),
    "another stage's port": (lambda t: t.replace('reads ["conv1/output#0"', 'reads ["hw_input/conv1#0"'),
                             r"read 'hw_input/conv1#0' is not a read port of stage 'output'"),
    "a kernel twice": (lambda t: t.replace(_kernel(t, "conv1"), _kernel(t, "conv1") * 2),
                       r"ubuf.kernel 'conv1' is defined twice"),
    "a port twice": (lambda t: re.sub(r'(      ubuf.port "out" "conv1#4".*\n)', r"\1\1", t),
                     r"port 'conv1#4' is defined twice"),
    "a write port's access": (lambda t: t.replace("conv1_in[x, y] -> conv1[x, y]", "conv1_in[x, y] -> conv1[y, x]"),
                              r"ubuf.port 'in' of @conv1: the access map .* only a kernel's read ports may change"),
    "the host's access": (lambda t: t.replace("host_out[x, y] -> output[x, y]", "host_out[x, y] -> output[1 + x, y]"),
                          r"ubuf.port 'host' of @output: the access map"),
    "a parameter": (lambda t: t.replace('"{ conv1_out[x, y] -> hw_input[x, y] }"',
                                        '"[N] -> { conv1_out[x, y] -> hw_input[x + N, y] }"'),
                    r"has parameters"),
    "a partial map": (lambda t: t.replace("conv1_out[x, y] -> hw_input[x, y] }", "conv1_out[x, y] -> hw_input[x, y] "
                                          ": x < 2 }"),
                      r"gives no index at some points of the port's domain"),
    "another buffer's name": (lambda t: t.replace("conv1_out[x, y] -> hw_input[x, y]", "conv1_out[x, y] -> "
                                                  "nosuch[x, y]"),
                              r"reads 'nosuch', not its buffer 'hw_input'"),
    "the element type": (lambda t: t.replace("@conv1 : ui16", "@conv1 : i1"),
                         r"ubuf.buffer @conv1: the element type is i1 but the design's is ui16"),
    "the extents": (lambda t: t.replace("@conv1 : ui16 extents [10, 8]", "@conv1 : ui16 extents [99, 8]"),
                    r"extents is \[99, 8\] but the design's is \[10, 8\]"),
    "the size": (lambda t: t.replace("size [8, 6]", "size [9, 5]"), r"ubuf.design: size is \[9, 5\]"),
    "the pixels per cycle": (lambda t: t.replace("pixels_per_cycle 1", "pixels_per_cycle 4"),
                             r"pixels_per_cycle is 4 but the design's is 1"),
    "a port's count": (lambda t: t.replace("count 80", "count 3", 1), r"count is 3 but the design's is 80"),
    "a kernel's inputs": (lambda t: t.replace('"conv1" inputs [@hw_input]', '"conv1" inputs [@output]'),
                          r"ubuf.kernel 'conv1': inputs is \['output'\] but the design's is \['hw_input'\]"),
    "a folded tap register": (lambda t: re.sub(r"values \[1, 2, 1, 2, 4,", "values [1, 2, 1, 2, 9,", t),
                              r"ubuf.constant @\w+: the values differ from the design's; these tap registers are "
                              r"folded into the kernels' constants"),
    "the yielded type": (lambda t: t.replace("ubuf.yield %51 : i16", "%f = arith.uitofp %51 : i16 to f32\n"
                                             "      ubuf.yield %f : f32"),
                         r"ubuf.kernel 'conv1', init region: the yielded type is f32 but the design's is i16"),
    "a read port's domain": (lambda t: t.replace('stage "output" domain "{ output_out[x, y] : 0 <= x <= 7',
                                                 'stage "output" domain "{ output_out[x, y] : 0 <= x <= 6', 1),
                             r"the domain is .* but the design's is .*domains follow from the pipeline's bounds"),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edit_the_simulation_cannot_take_is_refused_by_name(cascade_ir, name):
    out, d, inputs, text = cascade_ir
    edit, message = EDITS[name]
    edited = edit(text)
    assert edited != text
    with pytest.raises(LoomError, match=message):
        simulate(out, inputs, TILE, design=d, ir=edited)


MALFORMED = {  # name -> (old, new, the LoomError's message; it names the line holding ``new``)
    "a missing comma": ("%18 = arith.muli %17, %6 : i16", "%18 = arith.muli %17 %6 : i16",
                        r"<ubuf IR>:\d+:\d+: Expected ',' \(in `%18 = arith.muli %17 %6 : i16`\)"),
    # xDSL reports an undefined value at the end of the module; the error points at its use
    "an undefined value": ("%19 = arith.addi %15, %18 : i16", "%19 = arith.addi %15, %777 : i16",
                           r"<ubuf IR>:\d+:\d+: value %777 is used but not defined .*"
                           r"\(in `%19 = arith.addi %15, %777 : i16`\)"),
    "a bad buffer kind": ('capacity 26 kind "buffer"', 'capacity 26 kind "bogus"',
                          r"<ubuf IR>:\d+:5: ubuf.buffer @hw_input: kind must be one of stream, buffer, wire, "
                          r"accumulation, got 'bogus'"),
    "a bad isl schedule": ("schedule \"{ conv1_out[x, y] -> [26 + 12y + x] }\"",
                           "schedule \"{ conv1_out[x, y] -> [26 + 12y + ] }\"",
                           r"<ubuf IR>:\d+:7: ubuf.port: schedule '\{ conv1_out\[x, y\] -> \[26 \+ 12y \+ \] \}' is "
                           r"not valid isl syntax"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_ir_is_a_loom_error_at_its_line(cascade_ir, name):
    """IR that does not parse or verify (parse_ir, or simulate(..., ir=text)) is a LoomError at the line and
    column of the text, not xDSL's ParseError or VerifyException."""
    out, d, inputs, text = cascade_ir
    old, new, message = MALFORMED[name]
    assert old in text
    edited = text.replace(old, new, 1)
    with pytest.raises(LoomError, match=message) as err:
        parse_ir(edited)
    assert new in edited.splitlines()[err.value.line - 1]
    with pytest.raises(LoomError, match=message):
        simulate(out, inputs, TILE, design=d, ir=edited)


def test_a_schedule_in_another_isl_form_is_the_same_schedule():
    """isl prints 32y + 448 floor(y/2) back as 256y - 224 (y mod 2); the reader fits the canonical form to the
    schedule's values (and checks it against the whole map): the design simulates as printed. x mod 3 added to
    the write schedule fits too (3x - 3 floor(x/3)), so the stage's read ports, left as printed, are named."""
    out, _ = gaussian_pyramid.build("accel", tile=(8, 8), share="line")
    d = build_design(out, (8, 8))
    inputs = gaussian_pyramid.make_inputs((8, 8), np.random.default_rng(3))
    text = str(design_to_ir(d))
    printed = "blur1_in[x, y] -> [513 + 32y + 2x + 448*floor(y/2)]"
    assert printed in text
    same = text.replace(printed, "blur1_in[x, y] -> [513 + 2x + 256y - 224*(y mod 2)]")
    np.testing.assert_array_equal(simulate(out, inputs, (8, 8), design=d, ir=same), evaluate(out, inputs, (8, 8)))
    other = text.replace(printed, "blur1_in[x, y] -> [513 + 2x + 256y - 224*(y mod 2) + (x mod 3)]")
    with pytest.raises(LoomError, match=r"ubuf.port 'blur1#0' of @blur0: the port fires on .* but its stage 'blur1' "
                                        r"reads on \[513 \+ 32y \+ 3x \+ -3\*floor\(x/3\) \+ 448\*floor\(y/2\)\]"):
        simulate(out, inputs, (8, 8), design=d, ir=other)


def test_shared_kernels_must_stay_identical_and_keep_their_group():
    out, _ = cascade.build("accel", tile=(60, 60), share="line")
    d = build_design(out, (60, 60))
    inputs = cascade.make_inputs((60, 60), np.random.default_rng(5))
    text = str(design_to_ir(d))
    k = text.index('ubuf.kernel "conv2"')
    with pytest.raises(LoomError, match=r"ubuf.share @conv2_shared: the kernel of 'conv2' differs from 'conv1''s"):
        simulate(out, inputs, (60, 60), design=d, ir=text[:k] + text[k:].replace("arith.addi", "arith.subi", 1))
    with pytest.raises(LoomError, match=r"the interleaving is pixel but the design's is line"):
        simulate(out, inputs, (60, 60), design=d, ir=text.replace('interleave "line"', 'interleave "pixel"'))
    with pytest.raises(LoomError, match=r"the stages is \['conv1', 'output'\]"):
        simulate(out, inputs, (60, 60), design=d, ir=text.replace('stages ["conv1", "conv2"]',
                                                                  'stages ["conv1", "output"]'))


def test_tiles_the_given_ir_does_not_describe_are_refused():
    """GuardWithIf runs a smaller design for the tiles it cuts short; the given IR describes the full one."""
    a = gaussian.algorithm()
    out = a["output"]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out.tile(a["x"], a["y"], xo, yo, xi, yi, 16, 8, TailStrategy.GuardWithIf).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    a["blur_unnormalized"].update().unroll(a["win"].x).unroll(a["win"].y)
    d = build_design(out, (16, 8))
    img = np.random.default_rng(4).integers(0, 256, (22, 39), dtype=np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (37, 20), design=d),
                                  evaluate(out, {"input": img}, (37, 20)))
    with pytest.raises(LoomError, match=r"the tile at \(0, 16\) of size \(16, 4\) needs its own design \(GuardWithIf "
                                        r"cuts it short\), which the given ubuf IR does not describe"):
        simulate(out, {"input": img}, (37, 20), design=d, ir=str(design_to_ir(d)))


@pytest.mark.parametrize("tile, origin, read", [((8, 5), (0, 5), "y / 2"), ((5, 4), (5, 0), "x / 2")])
def test_a_tile_at_another_phase_names_the_dimension(tile, origin, read):
    """A tile whose origin is odd along y reads the half-resolution stage through y / 2 at another phase (along x:
    x / 2): the refusal of the given IR names that dimension, not always x."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    blur = Func("blur")
    blur[x, y] = hw[x, y] + hw[x + 1, y] + hw[x, y + 1]
    out = Func("output")
    out[x, y] = u8(blur[x / 2, y / 2] / 3)
    stream_through_accelerator(out, tile, buffered=[hw, blur])
    d = build_design(out, tile)
    img = np.random.default_rng(6).integers(0, 256, (7, 7), dtype=np.uint8)
    size = (10, 10)
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=d), evaluate(out, {"input": img}, size))
    with pytest.raises(LoomError, match=rf"the tile at {re.escape(str(origin))} of size {re.escape(str(tile))} needs "
                                        rf"its own design \(it reads through {read} \('output' reads 'blur'\) at "
                                        r"another phase"):
        simulate(out, {"input": img}, size, design=d, ir=str(design_to_ir(d)))


def _retime_output(text, delta):
    """The output stage moved ``delta`` cycles later, as ir_timing asks: its write port, its read ports, the
    host's read of it, its kernel offset and the design's latency together."""
    text = text.replace("[52 + 12y + x]", f"[{52 + delta} + 12y + x]").replace("offset 52", f"offset {52 + delta}")
    return text.replace("latency 120 ", f"latency {120 + delta} ")


def test_a_schedule_spanning_a_huge_number_of_cycles_is_checked_without_a_counter_per_cycle(cascade_ir):
    """The capacity check kept one counter per cycle from a buffer's first write to its last read: the output
    moved 10**12 cycles later raised numpy's MemoryError. It now counts at the cycles where a value comes or
    goes, with the same eviction as a short move, and simulates once the buffer holds the whole image."""
    out, d, inputs, text = cascade_ir
    late = _retime_output(text, 10**12)
    with pytest.raises(LoomError, match=r"buffer 'conv1': conv1\(0, 0\), written at cycle 26, is read at cycle "
                                        r"1000000000052 but was evicted at cycle 52, when 23 values had to be held "
                                        r"in a buffer of capacity 22 \(read after eviction\)"):
        simulate(out, inputs, TILE, design=d, ir=late)
    whole = late.replace("@conv1 : ui16 extents [10, 8] capacity 22", "@conv1 : ui16 extents [10, 8] capacity 80")
    np.testing.assert_array_equal(simulate(out, inputs, TILE, design=d, ir=whole), evaluate(out, inputs, TILE))


@pytest.mark.parametrize("stride", [2**64 + 12, 2**62])
def test_cycles_beyond_int64_are_refused_not_wrapped(cascade_ir, stride):
    """A stride of 2**64 + 12 was read with isl's get_num_si (wrapped); read exactly, its cycles overflowed
    numpy's int64 (OverflowError), and those of a stride of 2**62 over 8 rows wrap around silently: a stage
    whose cycles int64 cannot hold is refused at its write port."""
    out, d, inputs, text = cascade_ir
    huge = text.replace("conv1_out[x, y] -> [26 + 12y + x]", f"conv1_out[x, y] -> [26 + {stride}y + x]")
    huge = huge.replace("conv1_in[x, y] -> [26 + 12y + x]", f"conv1_in[x, y] -> [26 + {stride}y + x]")
    with pytest.raises(LoomError, match=rf"ubuf.port 'in' of @conv1: the stage's cycles run up to \d+ in magnitude "
                                        rf"\(schedule \[26 \+ {stride}y \+ x\], kernel latency 0\), beyond the "
                                        r"64-bit cycle numbers"):
        simulate(out, inputs, TILE, design=d, ir=huge)


def _hw_input_from_low_bit(text, line):
    """The cascade's hw_input kernel rewritten to compute %s (i1) by ``line`` from %b, the input's low bit
    (scaled to 0 / 256, so that the two blurs keep it in the output)."""
    body = (f"      %b = arith.trunci %2 : i8 to i1\n      {line}\n      %e = arith.extui %s : i1 to i16\n"
            "      %k = arith.constant 256 : i16\n      %3 = arith.muli %e, %k : i16\n      ubuf.yield %3 : i16")
    return text.replace("      %3 = arith.extui %2 : i8 to i16\n      ubuf.yield %3 : i16", body)


@pytest.mark.parametrize("line, same_as", [
    ("%s = arith.addi %b, %b : i1", "%s = arith.constant false"),  # numpy's bool add is an or: it gave %b
    ("%s = arith.subi %b, %b : i1", "%s = arith.constant false"),  # numpy refuses a bool subtract (TypeError)
    ("%s = math.absi %b : i1", "%s = arith.andi %b, %b : i1"),  # no signed 1-bit type (KeyError)
    ("%f = arith.uitofp %b : i1 to f32\n      %s = arith.fptosi %f : f32 to i1",  # KeyError
     "%s = arith.andi %b, %b : i1"),
])
def test_i1_arithmetic_is_modulo_2(cascade_ir, line, same_as):
    out, d, inputs, text = cascade_ir
    want = simulate(out, inputs, TILE, design=d, ir=_hw_input_from_low_bit(text, same_as))
    np.testing.assert_array_equal(simulate(out, inputs, TILE, design=d, ir=_hw_input_from_low_bit(text, line)), want)


@pytest.mark.parametrize("cast", ["arith.bitcast %3 : i16 to index", "arith.bitcast %0 : i32 to index"])
def test_a_bitcast_between_widths_is_refused(cascade_ir, cast):
    """xDSL lets index stand for any width in arith.bitcast; numpy's view then reshaped the array (an error
    deep in numpy, or values of neighbouring pixels)."""
    out, d, inputs, text = cascade_ir
    body = (f"      %3 = arith.extui %2 : i8 to i16\n      %q = {cast}\n"
            "      %r = arith.index_cast %q : index to i16\n      ubuf.yield %r : i16")
    edited = text.replace("      %3 = arith.extui %2 : i8 to i16\n      ubuf.yield %3 : i16", body)
    with pytest.raises(LoomError, match=r"ubuf.kernel 'hw_input': arith.bitcast from i\d+ to index changes the width "
                                        r"\(\d+ to 64 bits\)"):
        simulate(out, inputs, TILE, design=d, ir=edited)


def test_a_module_given_as_ir_is_verified_like_a_text(cascade_ir):
    """simulate(ir=module) read the module unverified: an op moved above the one defining its operand reached
    the evaluator as a KeyError. The module is read back from its printed text, so it is refused at a line
    of str(module), as the same edit in text is."""
    out, d, inputs, text = cascade_ir
    module = parse_ir(text)
    conv1 = next(op for op in module.walk() if isinstance(op, KernelOp) and op.stage.data == "conv1")
    ops = list(conv1.init.block.ops)
    ops[3].detach()
    conv1.init.block.insert_op_before(ops[3], ops[0])
    with pytest.raises(LoomError, match=r"<ubuf IR>:\d+:\d+: ubuf.kernel 'conv1', init region: op 0 \(arith.muli\) "
                                        r"uses operand 0 before it is defined"):
        simulate(out, inputs, TILE, design=d, ir=module)
