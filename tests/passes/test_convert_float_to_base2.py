"""convert-float-to-base2: IR in / IR out (conversions only at the boundaries), its errors, and kernels
run in fixed<16, 8>, bf16 and fp8 from f32 numpy arrays, bit for bit equal to the Python reference
applied op by op, with their error against f64 reported."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from loom.core import numformats as nf
from loom.dialects import context
from loom.errors import LoomError
from loom.passes import Pipeline
from loom.passes.convert_float_to_base2 import ConvertFloatToBase2Pass, exact_in

AXPY = """
func.func @axpy(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %n: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant 0.5 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %A[%i] : memref<?xf32>
    %b = memref.load %B[%i] : memref<?xf32>
    %m = arith.mulf %a, %s : f32
    %t = arith.mulf %m, %k : f32
    %r = arith.addf %t, %b : f32
    %x = arith.maximumf %r, %b : f32
    memref.store %x, %C[%i] : memref<?xf32>
  }
  func.return
}
"""

DOT = """
func.func @dot(%A: memref<?xf32>, %B: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %a = memref.load %A[%i] : memref<?xf32>
    %b = memref.load %B[%i] : memref<?xf32>
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %acc, %p : f32
    scf.yield %q : f32
  }
  func.return %s : f32
}
"""


def parse(text: str):
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def converted(text: str, options: str):
    module = Pipeline.parse(f"convert-float-to-base2{{{options}}}").run(parse(text))
    module.verify()
    return module


def text_of_store(module) -> str:
    [store] = [op for op in module.walk() if op.name == "memref.store"]
    return str(store)


def names(module) -> list[str]:
    return [op.name for op in module.walk()]


def test_chain_stays_in_the_format_with_casts_only_at_the_boundaries():
    out = converted(AXPY, 'format="fixed<8, 8>" overflow=saturate')
    ops = names(out)
    assert ops.count("base2.mul") == 2 and ops.count("base2.add") == 1
    assert "arith.mulf" not in ops and "arith.addf" not in ops
    casts = [op for op in out.walk() if op.name == "base2.cast"]
    into = [str(c.input.type) for c in casts if str(c.result.type).startswith("!base2")]
    back = [str(c.result.type) for c in casts if not str(c.result.type).startswith("!base2")]
    assert len(into) == 4  # %s, %k, %a, %b: one each
    # %b, rounded into the format before the maximumf reads it, and %r for the maximumf; max of two format values
    # is one, so the store needs no further cast
    assert back == ["f32", "f32"]
    assert text_of_store(out) == "memref.store %x, %C[%i] : memref<?xf32>"
    text = str(out)
    assert 'base2.mul %2, %0 {rounding = "nearest_even", overflow = "saturate"} : !base2.fixed<8, 8>' in text
    assert "func.func @axpy(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %n: index, %s: f32)" in text


def test_loop_carried_value_is_cast_at_the_loop_body_boundaries():
    out = converted(DOT, 'format=bf16 rounding=truncate')
    text = str(out)
    assert 'base2.cast %acc {rounding = "truncate"} : f32 to !base2.float<8, 7>' in text
    assert 'base2.cast %4 {rounding = "truncate"} : !base2.float<8, 7> to f32' in text
    assert "scf.yield %q : f32" in text


def test_functions_option_limits_the_conversion():
    out = converted(AXPY + DOT, 'format=bf16 functions=dot')
    axpy, dot = list(out.ops)
    assert not any(op.name.startswith("base2") for op in axpy.walk())
    assert any(op.name == "base2.add" for op in dot.walk())


@pytest.mark.parametrize("options, message", [
    ('format="fixed<8>"', "cannot read number format"),
    ("format=bf61", "did you mean 'bf16'"),
    ("format=bf16 rounding=up", "rounding must be one of"),
    ("format=bf16 overflow=wrap", "overflow for !base2.float<8, 7> must be one of inf, saturate"),
    ("format=bf16 functions=nope", "no function @nope"),
    ('format="fixed<16, 16>"', "values are not all exact in f32"),
])
def test_bad_options_are_loom_errors(options, message):
    with pytest.raises(LoomError, match=message):
        converted(AXPY, options)


def test_exact_in():
    from xdsl.dialects.builtin import Float32Type, Float64Type

    f32, f64 = Float32Type(), Float64Type()
    assert exact_in(nf.FixedFormat(16, 8), f32) and not exact_in(nf.FixedFormat(16, 16), f32)
    assert exact_in(nf.FixedFormat(16, 16), f64)
    assert exact_in(nf.BF16, f32) and exact_in(nf.FP8_E4M3FN, f32) and exact_in(nf.F32, f32)
    assert not exact_in(nf.FloatFormat(8, 7, special="fn"), f32)  # its top binade is beyond f32's
    assert exact_in(nf.FloatFormat(8, 7, bias=140), f32)  # subnormals on f32's subnormal grid
    assert not exact_in(nf.FloatFormat(8, 7, bias=150), f32)  # subnormals below f32's


# ---- kernels in a format, end to end ------------------------------------------------------------


def _simulate_matmul(A, B, fmt):
    """The kernel's loop, op by op, with the reference: acc = C[i, j]; acc = acc + A[i, k] * B[k, j]."""
    if isinstance(fmt, nf.FixedFormat):
        enc, val = fmt.quantize, lambda r: float(fmt.value(r))
        add, mul = fmt.add, fmt.mul
    else:
        enc, val = fmt.encode, fmt.decode
        add = lambda x, y: nf.float_op(fmt, "add", [x, y])  # noqa: E731
        mul = lambda x, y: nf.float_op(fmt, "mul", [x, y])  # noqa: E731
    M, K = A.shape
    N = B.shape[1]
    out = np.zeros((M, N))
    for i in range(M):
        for j in range(N):
            acc = enc(0.0)
            for k in range(K):
                acc = add(acc, mul(enc(float(A[i, k])), enc(float(B[k, j]))))
            out[i, j] = val(acc)
    return out


@pytest.mark.sanitize
@pytest.mark.parametrize("spelling", ["fixed<16, 8>", "bf16", "e4m3fn", "f32"])
def test_matmul_kernel_in_a_format(spelling):
    from loom.examples.kernels import matmul_loops
    from loom.jit.formats import compile_in_format

    rng = np.random.default_rng(7)
    A = rng.standard_normal((6, 11)).astype(np.float32)
    B = rng.standard_normal((11, 5)).astype(np.float32)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    C = np.zeros((6, 5), np.float32)
    if spelling == "f32":
        matmul_loops(A, B, C)
        want = _simulate_matmul(A, B, nf.F32)
    else:
        fmt = nf.parse_format(spelling)
        compile_in_format(matmul_loops, fmt)(A, B, C)
        want = _simulate_matmul(A, B, fmt)
    np.testing.assert_array_equal(C.astype(np.float64), want)
    error = float(np.abs(C - exact).max())
    print(f"matmul 6x11x5 in {spelling}: max |error| vs f64 = {error:.3g}")
    bound = {"fixed<16, 8>": 0.05, "bf16": 0.1, "e4m3fn": 2.0, "f32": 1e-5}[spelling]
    assert error < bound


def test_kernel_in_a_format_checks_its_arguments():
    from loom.examples.kernels import matmul_loops
    from loom.jit.formats import compile_in_format

    fn = compile_in_format(matmul_loops, "bf16")
    with pytest.raises(LoomError, match="expects dtype float32"):
        fn(np.zeros((2, 3)), np.zeros((3, 2), np.float32), np.zeros((2, 2), np.float32))
    with pytest.raises(LoomError, match="must be equal"):
        fn(np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32), np.zeros((2, 2), np.float32))


def test_module_function_in_a_format_saturates_and_rounds():
    from loom.jit.formats import compile_in_format

    fn = compile_in_format(parse(AXPY), "fixed<8, 8>", overflow="saturate", rounding="nearest_away", name="axpy")
    a = np.array([1.0, 300.0, -300.0, 2 ** -9, -(2 ** -9), 3.0], np.float32)
    b = np.array([0.5, 0.0, 0.0, 0.0, 0.0, 2 ** -9], np.float32)
    c = np.zeros(6, np.float32)
    fn(a, b, c, 6, np.float32(2.0))
    q = nf.FixedFormat(8, 8)
    rows = []
    for x, y in zip(a.tolist(), b.tolist()):
        ra, rb = q.quantize(x, "nearest_away", "saturate"), q.quantize(y, "nearest_away", "saturate")
        m = q.mul(ra, q.quantize(2.0, "nearest_away", "saturate"), "nearest_away", "saturate")
        t = q.mul(m, q.quantize(0.5), "nearest_away", "saturate")
        r = q.add(t, rb, "nearest_away", "saturate")
        rows.append(max(float(q.value(r)), y))
    assert c.tolist() == rows
    assert c[1] == 64.0  # 300 saturates to 128 - 2^-8, times 2 saturates again, times 0.5 ties away to 64
    with pytest.raises(LoomError, match="name the function"):
        compile_in_format(parse(AXPY), "bf16")


def test_pass_is_registered():
    from loom.passes import available_passes

    assert available_passes()["convert-float-to-base2"]() is ConvertFloatToBase2Pass
    assert "lower-base2-to-arith" in available_passes()
