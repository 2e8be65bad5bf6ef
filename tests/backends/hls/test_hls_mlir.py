"""HLS C++ of hand-written .mlir: ap_int arithmetic, total division, partitioning, calls, globals, scalars."""

from __future__ import annotations

import numpy as np
import pytest

from loom.backends.hls import csim_inputs, emit_hls, emit_testbench, simulate
from tests.backends.hls.hls_helpers import function_pragmas, loop_pragmas, parse

INT12 = """
builtin.module {
  func.func @mix(%a: memref<32xi12>, %b: memref<32xi12>, %sum: memref<32xi12>, %quo: memref<32xi12>,
                 %rem: memref<32xi12>, %shr: memref<32xi12>, %wide: memref<32xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 32 : index
    %three = arith.constant 3 : i12
    %big = arith.constant 2000 : i12
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%i] : memref<32xi12>
      %y = memref.load %b[%i] : memref<32xi12>
      %s = arith.addi %x, %big : i12
      %p = arith.muli %s, %y : i12
      memref.store %p, %sum[%i] : memref<32xi12>
      %q = arith.divsi %x, %y : i12
      memref.store %q, %quo[%i] : memref<32xi12>
      %r = arith.remsi %x, %y : i12
      memref.store %r, %rem[%i] : memref<32xi12>
      %h = arith.shrsi %p, %three : i12
      memref.store %h, %shr[%i] : memref<32xi12>
      %w = arith.extsi %p : i12 to i32
      memref.store %w, %wide[%i] : memref<32xi32>
    }
    func.return
  }
}
"""


def wrap(v: int, bits: int = 12) -> int:
    v %= 1 << bits
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


@pytest.mark.sanitize
def test_i12_arithmetic_wraps_and_division_is_total():
    program = emit_hls(parse(INT12))
    assert "void mix(const ap_int<12> a[32], const ap_int<12> b[32], ap_int<12> sum[32]" in program.source
    x = csim_inputs(program)
    b = x["b"].copy()
    b[:3] = [0, -1, 7]  # the formula's values, then the divisors hardware must survive
    source = emit_testbench(program).replace(
        "  ap_int<12> out0", "").replace(
        "  mix(", "  loomtb_ports::b[0] = 0; loomtb_ports::b[1] = -1; loomtb_ports::b[2] = 7;\n  mix(")
    from loom.backends.hls.csim import compile_and_run

    run = compile_and_run(program, source)
    for i in range(32):
        xa, yb = int(x["a"][i]), int(b[i])
        p = wrap((xa + 2000) * yb)
        assert run.arrays["sum"][i] == p
        assert run.arrays["wide"][i] == p
        assert run.arrays["shr"][i] == p >> 3
        if yb == 0:
            q, r = 0, 0
        else:
            q = wrap(int(abs(xa) // abs(yb)) * (1 if (xa < 0) == (yb < 0) else -1))
            r = xa - int(abs(xa) // abs(yb)) * (1 if (xa < 0) == (yb < 0) else -1) * yb
        assert (run.arrays["quo"][i], run.arrays["rem"][i]) == (q, r), (xa, yb)


FIR = """
builtin.module {
  func.func @fir(%x: memref<64xf32>, %y: memref<60xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c60 = arith.constant 60 : index
    %c64 = arith.constant 64 : index
    %taps = memref.alloca() : memref<4xf32>
    %w0 = arith.constant 0.5 : f32
    %w1 = arith.constant 0.25 : f32
    %w2 = arith.constant -0.125 : f32
    %w3 = arith.constant 2.0 : f32
    memref.store %w0, %taps[%c0] : memref<4xf32>
    memref.store %w1, %taps[%c1] : memref<4xf32>
    memref.store %w2, %taps[%c2] : memref<4xf32>
    memref.store %w3, %taps[%c3] : memref<4xf32>
    %buf = memref.alloc() : memref<64xf32>
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %buf[%i] : memref<64xf32>
    }
    %zero = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c60 step %c1 {
      %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (f32) {
        %at = arith.addi %i, %k : index
        %v = memref.load %buf[%at] : memref<64xf32>
        %t = memref.load %taps[%k] : memref<4xf32>
        %m = arith.mulf %v, %t : f32
        %n = arith.addf %s, %m : f32
        scf.yield %n : f32
      }
      memref.store %acc, %y[%i] : memref<60xf32>
    }
    memref.dealloc %buf : memref<64xf32>
    func.return
  }
}
"""


def partitions(source: str) -> list[str]:
    return [line.strip()[len("LOOM_PRAGMA(HLS "):-1] for line in source.splitlines() if "ARRAY_PARTITION" in line]


@pytest.mark.sanitize
def test_fir_partitions_from_the_access_pattern_and_equals_numpy():
    program = emit_hls(parse(FIR))
    # taps: all four read in one pipelined iteration -> registers; buf: x[i..i+3] -> 4 cyclic banks
    assert partitions(program.source) == ["ARRAY_PARTITION variable=buf1 complete dim=1",
                                          "ARRAY_PARTITION variable=buf2 cyclic factor=4 dim=1"]
    assert [p for _, p in loop_pragmas(program.source)] == [["PIPELINE II=1"], ["PIPELINE II=1"], ["UNROLL"]]
    x = csim_inputs(program)
    run = simulate(program)
    taps = np.array([0.5, 0.25, -0.125, 2.0], dtype=np.float32)
    want = np.zeros(60, dtype=np.float32)
    for k in range(4):
        want = want + x["x"][k:k + 60] * taps[k]
    np.testing.assert_array_equal(run.arrays["y"], want)
    assert "malloc" not in program.source.split("#endif")[-1] and "free(" not in program.source


def test_unrolling_the_pipelined_loop_widens_the_partition():
    program = emit_hls(parse(FIR), unroll=2)  # x[i..i+4] in one iteration of the unrolled loop
    assert partitions(program.source)[1] == "ARRAY_PARTITION variable=buf2 cyclic factor=5 dim=1"
    assert emit_hls(parse(FIR), partition=False).source.count("ARRAY_PARTITION") == 0


CALLS = """
builtin.module {
  "memref.global"() <{sym_name = "lut", sym_visibility = "private", type = memref<4xi32>,
                      initial_value = dense<[10, 20, 30, 40]> : tensor<4xi32>, constant}> : () -> ()
  func.func private @row_sum(%r: memref<8xi32>, %bias: i32) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %t = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %bias) -> (i32) {
      %v = memref.load %r[%i] : memref<8xi32>
      %n = arith.addi %s, %v : i32
      scf.yield %n : i32
    }
    func.return %t : i32
  }
  func.func @top(%m: memref<4x8xi32>, %out: memref<4xi32>, %k: i32, %unused: f32) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %g = memref.get_global @lut : memref<4xi32>
    %total = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %k) -> (i32) {
      %row = memref.subview %m[%i, 0] [1, 8] [1, 1] : memref<4x8xi32> to memref<8xi32, strided<[1], offset: ?>>
      %copy = memref.alloca() : memref<8xi32>
      "memref.copy"(%row, %copy) : (memref<8xi32, strided<[1], offset: ?>>, memref<8xi32>) -> ()
      %l = memref.load %g[%i] : memref<4xi32>
      %s = func.call @row_sum(%copy, %l) : (memref<8xi32>, i32) -> i32
      memref.store %s, %out[%i] : memref<4xi32>
      %n = arith.addi %acc, %s : i32
      scf.yield %n : i32
    }
    func.return %total : i32
  }
}
"""


@pytest.mark.sanitize
def test_calls_globals_scalars_and_a_result():
    program = emit_hls(parse(CALLS), top="top")
    pragmas = function_pragmas(program.source, "top")
    assert pragmas == ["INTERFACE m_axi port=m offset=slave bundle=gmem0 depth=32",
                       "INTERFACE m_axi port=out offset=slave bundle=gmem1 depth=4",
                       "INTERFACE s_axilite port=k", "INTERFACE s_axilite port=unused",
                       "INTERFACE s_axilite port=return"]
    assert "(void)unused;" in program.source
    assert "static int32_t loom_row_sum(const int32_t r[8], int32_t bias)" in program.source
    assert "static const int32_t loom_g_lut[4] = {10, 20, 30, 40};" in program.source
    assert "= loom_g_lut[i2];" in program.source  # the ROM is read directly
    x = csim_inputs(program, scalars={"k": 5})
    run = simulate(program, scalars={"k": 5})
    rows = x["m"].astype(np.int64).sum(axis=1) + np.array([10, 20, 30, 40])
    np.testing.assert_array_equal(run.arrays["out"], rows)
    assert run.results == [5 + int(rows.sum())]


@pytest.mark.sanitize
def test_axis_streams_only_what_is_read_or_written():
    program = emit_hls(parse(FIR), interface="axis")
    assert function_pragmas(program.source, "fir") == ["INTERFACE axis port=x_in", "INTERFACE axis port=y_out",
                                                       "INTERFACE s_axilite port=return"]
    assert "void fir(hls::stream<float> &x_in, hls::stream<float> &y_out)" in program.source
    x = csim_inputs(program)
    run = simulate(program)
    taps = np.array([0.5, 0.25, -0.125, 2.0], dtype=np.float32)
    want = sum((x["x"][k:k + 60] * taps[k] for k in range(4)), np.zeros(60, dtype=np.float32))
    np.testing.assert_array_equal(run.arrays["y"], want)


BITS = """
builtin.module {
  func.func @bits(%x: memref<16xi32>, %n: memref<16xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    scf.for %i = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i] : memref<16xi32>
      %r:2 = scf.while (%a = %v, %c = %zero) : (i32, i32) -> (i32, i32) {
        %ne = arith.cmpi ne, %a, %zero : i32
        scf.condition(%ne) %a, %c : i32, i32
      } do {
      ^bb0(%a2: i32, %c2: i32):
        %s = arith.shrui %a2, %one : i32
        %c3 = arith.addi %c2, %one : i32
        scf.yield %s, %c3 : i32, i32
      }
      memref.store %r#1, %n[%i] : memref<16xi32>
    }
    func.return
  }
}
"""


@pytest.mark.sanitize
def test_while_loops_are_pipelined_themselves_and_unread_results_marked():
    program = emit_hls(parse(BITS))
    assert [p for _, p in loop_pragmas(program.source)] == [[]]  # the for loop holds a while: not pipelined
    assert "for (;;) {\n      LOOM_PRAGMA(HLS PIPELINE II=1)" in program.source
    assert "[[maybe_unused]] int32_t" in program.source  # %r#0 is never read
    x = csim_inputs(program)
    run = simulate(program)
    want = [int(v) & 0xFFFFFFFF for v in x["x"]]
    np.testing.assert_array_equal(run.arrays["n"], [w.bit_length() for w in want])


@pytest.mark.sanitize
def test_a_registered_type_rule_maps_a_type_kind():
    """How a number-format dialect plugs in: a rule from an attribute to an HlsType (here: f64 -> fixed)."""
    from xdsl.dialects.builtin import Float64Type

    from loom.backends.hls import HlsType, register_type_rule
    from loom.backends.hls.types import TYPE_RULES

    rule = register_type_rule(lambda ty: HlsType("fixed", 24, 10, "AP_RND_CONV", "AP_SAT")
                              if isinstance(ty, Float64Type) else None)
    try:
        program = emit_hls(parse(FIR.replace("f32", "f64")))
    finally:
        TYPE_RULES.remove(rule)
    assert "ap_fixed<24, 10, AP_RND_CONV, AP_SAT> y[60]" in program.source
    x = csim_inputs(program)
    run = simulate(program)
    from fractions import Fraction

    from tests.backends.hls.test_hls_header import to_fixed

    fx = lambda v: to_fixed(Fraction(v), "ap_fixed", 24, 10, "AP_RND_CONV", "AP_SAT")  # noqa: E731
    taps = [fx(0.5), fx(0.25), fx(-0.125), fx(2.0)]
    for i in range(60):
        acc = fx(0)
        for k in range(4):
            acc = fx(acc + fx(fx(float(x["x"][i + k])) * taps[k]))
        assert Fraction(float(run.arrays["y"][i])) == acc


@pytest.mark.sanitize
def test_several_results_come_back_through_axilite_pointers():
    program = emit_hls(parse("""func.func @two(%a: memref<4xi32>) -> (i32, f64) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi32>
  %f = arith.sitofp %x : i32 to f64
  func.return %x, %f : i32, f64
}"""))
    assert program.prototype == "void two(const int32_t a[4], int32_t *out0, double *out1);"
    assert function_pragmas(program.source, "two")[-3:] == ["INTERFACE s_axilite port=out0",
                                                           "INTERFACE s_axilite port=out1",
                                                           "INTERFACE s_axilite port=return"]
    first = int(csim_inputs(program)["a"][0])
    assert simulate(program).results == [first, float(first)]


GATHER = """func.func @gather(%a: memref<8xf32>, %idx: memref<4xindex>, %o: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %j = memref.load %idx[%k] : memref<4xindex>
    %v = memref.load %a[%j] : memref<8xf32>
    memref.store %v, %o[%k] : memref<4xf32>
  }
  func.return
}"""


def test_a_data_dependent_index_out_of_range_stops_the_c_simulation_with_its_place():
    from loom.errors import LoomError

    program = emit_hls(parse(GATHER))
    assert 'LOOM_CSIM_CHECK(loomh_csim_index("memref.load in @gather"' in program.source
    assert "#define LOOM_CSIM_CHECK(call)\n" in program.source  # nothing of it under __SYNTHESIS__
    # the testbench's indices are (h >> 8) % 201 - 100: mostly outside 0..7
    with pytest.raises(LoomError, match=r"memref.load in @gather: index -?\d+ out of range for dimension 0 of "
                                        r"size 8"):
        simulate(program)
    assert "LOOM_CSIM_CHECK" not in emit_hls(parse(GATHER), csim_checks=False).source.split("#endif")[-1]


SHIFT = """
builtin.module {
  func.func @shift(%x: memref<16xf32>, %s: f32, %y: memref<16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 16 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %x[%i] : memref<16xf32>
      %w = arith.addf %v, %s : f32
      memref.store %w, %y[%i] : memref<16xf32>
    }
    func.return
  }
}
"""


@pytest.mark.parametrize("fmt, w, i", [("ap_fixed<63, 3>", 63, 3), ("ap_ufixed<60, 3, AP_RND, AP_SAT>", 60, 3),
                                       ("ap_fixed<24, 4>", 24, 4)])
def test_wide_fixed_point_is_compared_bit_exactly(fmt, w, i):
    # x + 1/3 in 60 fraction bits needs ~62 significant bits: printed through double (53) the testbench
    # rounded it, so a result one raw LSB off compared equal; the raw bit pattern keeps every bit
    from fractions import Fraction

    from tests.backends.hls.test_hls_header import to_fixed

    kind, modes = fmt.split("<")[0], (fmt[:-1].split(", ")[2:] or ["AP_TRN", "AP_WRAP"])
    fx = lambda v: to_fixed(Fraction(v), kind, w, i, *modes)  # noqa: E731
    program = emit_hls(parse(SHIFT), types={"f32": fmt})
    third = 1 / 3
    x = csim_inputs(program, scalars={"s": third})
    run = simulate(program, scalars={"s": third})
    want = [fx(fx(n / 64) + fx(third)) for n in ((h % 257) - 128 for h in _hashes(16, 0))]
    got = list(run.arrays["y"])
    assert [Fraction(g) for g in got] == want
    assert [Fraction(v) for v in x["x"]] == [fx(n / 64) for n in ((h % 257) - 128 for h in _hashes(16, 0))]
    if w > 53:
        assert run.arrays["y"].dtype == object and any(v.denominator > 2 ** 53 for v in want)
        assert any(Fraction(float(v)) != v for v in want)  # what the old double printout would have shown
    else:
        assert run.arrays["y"].dtype == np.float64


def _hashes(count, arg):
    """The testbench's input hash (docs/hls.md), written out again."""
    return [((k * 2654435761 + (arg + 1) * 40503) % 2 ** 32) >> 8 for k in range(count)]


PORT_NAMES = """
builtin.module {
  func.func @names(%k: memref<4xf32>, %exp: memref<4xf32>, %NAN: memref<4xf32>, %hls: memref<4xf32>,
                   %std: memref<4xf32>, %stdout: memref<4xf32>, %INT32_MAX: memref<4xf32>, %sqrtf: memref<4xf32>,
                   %intptr_t: memref<4xf32>, %AP_SAT: memref<4xf32>, %index: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 4 : index
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %k[%i] : memref<4xf32>
      %r = math.sqrt %a : f32
      memref.store %r, %exp[%i] : memref<4xf32>
      memref.store %r, %NAN[%i] : memref<4xf32>
      memref.store %r, %hls[%i] : memref<4xf32>
      memref.store %r, %std[%i] : memref<4xf32>
      memref.store %r, %stdout[%i] : memref<4xf32>
      memref.store %r, %INT32_MAX[%i] : memref<4xf32>
      memref.store %r, %sqrtf[%i] : memref<4xf32>
      memref.store %r, %intptr_t[%i] : memref<4xf32>
      memref.store %r, %AP_SAT[%i] : memref<4xf32>
      memref.store %r, %index[%i] : memref<4xf32>
    }
    func.return
  }
}
"""


@pytest.mark.parametrize("interface", ["m_axi", "axis"])
def test_arguments_named_like_library_names_compile(interface):
    """A macro, type, namespace or function the C++ uses is no port name (it becomes p<k>); the testbench's
    own loop counter k and library functions the kernel does not call (index) are fine."""
    program = emit_hls(parse(PORT_NAMES), interface=interface)
    assert [p.name for p in program.ports] == ["k", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "index"]
    x = csim_inputs(program)
    run = simulate(program)
    want = np.sqrt(x["k"])
    for name in ("p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "index"):
        np.testing.assert_array_equal(run.arrays[name], want)


def constant_operands(ty: str) -> str:
    """Ops with a constant operand: a divisor of 0 or -1, min/max/comparisons the type's range decides."""
    ops = [("divsi", "%x, %zero"), ("remsi", "%x, %minus1"), ("floordivsi", "%x, %minus1"), ("ceildivui", "%x, %zero"),
           ("minui", "%x, %zero"), ("maxui", "%zero, %x"), ("minsi", "%x, %seven"), ("maxsi", "%seven, %x")]
    compares = [("ult", "%x, %zero"), ("uge", "%x, %zero"), ("ule", "%x, %minus1"), ("ugt", "%minus1, %x"),
                ("sle", "%x, %seven"), ("sgt", "%zero, %x")]
    outs = "".join(f", %o_{op}: memref<8x{ty}>" for op, _ in ops) + "".join(f", %o_{p}: memref<8xi1>" for p, _ in compares)
    body = "".join(f"      %r_{op} = arith.{op} {args} : {ty}\n      memref.store %r_{op}, %o_{op}[%i] : memref<8x{ty}>\n"
                   for op, args in ops)
    body += "".join(f"      %q_{p} = arith.cmpi {p}, {args} : {ty}\n      memref.store %q_{p}, %o_{p}[%i] : memref<8xi1>\n"
                    for p, args in compares)
    body += f"      %r_abs = math.absi %x : {ty}\n      memref.store %r_abs, %o_abs[%i] : memref<8x{ty}>\n"
    return f"""builtin.module {{
  func.func @consts(%a: memref<8x{ty}>, %o_abs: memref<8x{ty}>{outs}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 8 : index
    %zero = arith.constant 0 : {ty}
    %minus1 = arith.constant -1 : {ty}
    %seven = arith.constant 7 : {ty}
    scf.for %i = %c0 to %n step %c1 {{
      %x = memref.load %a[%i] : memref<8x{ty}>
{body}    }}
    func.return
  }}
}}"""


@pytest.mark.parametrize("bits", [8, 12, 32])
def test_constant_operands_compile_warning_free_and_compute(bits):
    """ap_int constants beside ap_int values in ?: were ambiguous C++, and a comparison the type's range decides
    (x <u 0) failed -Werror=type-limits: both raw g++ errors before."""
    program = emit_hls(parse(constant_operands(f"i{bits}")))
    x = csim_inputs(program)
    run = simulate(program)
    mask = (1 << bits) - 1
    for i, v in enumerate(int(a) for a in x["a"]):
        u = v & mask
        want = {"divsi": 0, "remsi": 0, "floordivsi": wrap(-v, bits), "ceildivui": 0, "minui": 0, "maxui": v,
                "minsi": min(v, 7), "maxsi": max(v, 7), "abs": wrap(abs(v), bits),
                "ult": False, "uge": True, "ule": True, "ugt": u != mask, "sle": v <= 7, "sgt": v < 0}
        for name, value in want.items():
            assert int(run.arrays["o_" + name][i]) == int(value), (bits, name, v)


UNREAD_ARGUMENTS = {
    # %u is never used, %a only through memref.dim (folded away): unused parameters / local copies to g++
    "unused": """func.func @w(%a: memref<4xf32>, %u: memref<4xf32>, %o: memref<4xindex>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %a, %c0 : memref<4xf32>
    scf.for %i = %c0 to %n step %c1 {
      memref.store %i, %o[%i] : memref<4xindex>
    }
    func.return
  }""",
    # no argument: the testbench's input hash is never called
    "no_args": """func.func @w() -> f32 {
    %c = arith.constant 1.5 : f32
    func.return %c : f32
  }""",
    # empty arrays: the testbench's loops run zero times (k < 0u is always false to g++ -Wextra)
    "empty": """func.func @w(%a: memref<0xf32>, %o: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %x = arith.constant 2.0 : f32
    scf.for %i = %c0 to %c1 step %c1 {
      memref.store %x, %o[%i] : memref<4xf32>
    }
    func.return
  }""",
}


@pytest.mark.parametrize("interface", ["m_axi", "axis"])
@pytest.mark.parametrize("case", sorted(UNREAD_ARGUMENTS))
def test_arguments_the_cpp_never_reads_compile_warning_free(case, interface):
    program = emit_hls(parse("builtin.module {\n  " + UNREAD_ARGUMENTS[case] + "\n}"), interface=interface)
    x = csim_inputs(program)
    run = simulate(program)
    if case == "unused":
        np.testing.assert_array_equal(run.arrays["o"], np.arange(4))
    elif case == "no_args":
        assert run.results == [1.5]
    else:
        want = x["o"].copy()
        want[0] = 2.0
        np.testing.assert_array_equal(run.arrays["o"], want)


@pytest.mark.parametrize("value, held", [(-2 ** 63, -2 ** 63), (2 ** 63, -2 ** 63), (2 ** 64 - 1, -1)])
def test_64_bit_scalar_overrides_at_the_edges(value, held):
    """-2^63 and 2^63..2^64-1 were written as signed literals g++ calls 'so large that it is unsigned' (-Werror),
    and csim_inputs overflowed numpy's int64 with a traceback."""
    program = emit_hls(parse("builtin.module {\n  func.func @w(%a: i64) -> i64 {\n    func.return %a : i64\n  }\n}"))
    assert int(csim_inputs(program, scalars={"a": value})["a"]) == held
    assert simulate(program, scalars={"a": value}).results == [held]
