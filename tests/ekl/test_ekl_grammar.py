"""Messner-grammar constructs beyond the basic esn subset, each run on numpy-checked inputs.

Every reference here is written independently with numpy in the test (never from loom's
elaborated form or earlier output).
"""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.errors


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.sanitize
def test_right_associative_subtraction_and_division_run_as_messner_parses_them():
    with pytest.warns(loom.errors.LoomWarning, match="groups as"):
        kernel = loom.ekl.load("""
            kernel k(a : f64[5], b : f64[5], c : f64[5], y : out& f64[5], z : out& f64[5]) {
                out y = a - b - c;
                out z = a / b * c;
            }""").k
    a, b, c = (_rng(k).random(5) + 0.5 for k in range(3))
    y, z = np.zeros(5), np.zeros(5)
    kernel(a, b, c, y, z)
    np.testing.assert_allclose(y, a - (b - c), rtol=1e-15)
    np.testing.assert_allclose(z, a / (b * c), rtol=1e-15)


@pytest.mark.sanitize
def test_index_converts_to_number_in_float_arithmetic():
    kernel = loom.ekl.load("""
        const N = _9;
        kernel k(eta : f32[6], j : index[6], y : out& f32[6]) {
            let scaled = eta * (N - 1);
            out y = scaled + j;
        }""").k
    eta = _rng().random(6).astype(np.float32)
    j = np.arange(6, dtype=np.int64)
    y = np.zeros(6, np.float32)
    kernel(eta, j, y)
    np.testing.assert_allclose(y, eta * np.float32(8) + j.astype(np.float32), rtol=1e-6)


@pytest.mark.sanitize
def test_trailing_header_indices_index_the_bodys_remaining_axes():
    kernel = loom.ekl.load("""
        kernel k(table : f64[3, 4, 5], j : index[6], w : f64[6], y : out& f64[6, 5]) {
            let t[x, G] = table[_1, j[x]] * w[x];
            out y = t;
        }""").k
    rng = _rng(1)
    table, j, w = rng.random((3, 4, 5)), rng.integers(0, 4, 6), rng.random(6)
    y = np.zeros((6, 5))
    kernel(table, j, w, y)
    np.testing.assert_allclose(y, table[1, j, :] * w[:, None], rtol=1e-15)


def test_trailing_header_index_used_in_the_body_is_refused():
    with pytest.raises(loom.errors.LoomError) as info:
        loom.ekl.load("kernel k(a : f64[4, 5], y : out& f64[4, 5]) {\n  let t[x, G] = a[x] * a[_0, G];\n"
                      "  out y = t;\n}\n")
    assert info.value.line == 2 and "trailing header indices" in info.value.message


@pytest.mark.sanitize
def test_untyped_let_takes_the_type_of_each_use():
    kernel = loom.ekl.load("""
        kernel k(i_layer : index[6], lay : index[4], rho : f32[6], y : out& f32[4, 6], z : out& f64[4, 6]) {
            let u_layer[u, x] = i_layer[x] == lay[u] ? 1 : 0.5;
            out y = u_layer * rho[*, :];
            out z = u_layer;
        }""").k
    rng = _rng(2)
    i_layer, lay = rng.integers(0, 2, 6), rng.integers(0, 2, 4)
    rho = rng.random(6).astype(np.float32)
    y, z = np.zeros((4, 6), np.float32), np.zeros((4, 6))
    kernel(i_layer, lay, rho, y, z)
    mask = np.where(i_layer[None, :] == lay[:, None], 1.0, 0.5)
    np.testing.assert_allclose(y, mask.astype(np.float32) * rho[None, :], rtol=1e-6)
    np.testing.assert_array_equal(z, mask)
    # one instance per scalar type the uses need, f32 arithmetic kept in f32
    assert sorted(let.target.dtype for let in kernel.form.lets if let.target.name == "u_layer") == ["f32", "f64"]


@pytest.mark.sanitize
def test_nested_reduction_is_bound_by_its_own_let():
    kernel = loom.ekl.load("""
        kernel k(A : f64[4, 3], B : f64[3, 5], C : out& f64[4, 5]) {
            out C[i, j] = 1.0 + (<+ k< A[i, k] * B[k, j]) * (<max m< A[i, m]);
        }""").k
    rng = _rng(3)
    A, B = rng.random((4, 3)), rng.random((3, 5))
    C = np.zeros((4, 5))
    kernel(A, B, C)
    np.testing.assert_allclose(C, 1.0 + (A @ B) * A.max(axis=1)[:, None], rtol=1e-14)
    assert len(kernel.form.lets) == 3


@pytest.mark.sanitize
def test_sum_over_a_half_open_range_per_element():
    # messner's tau_min: sum(u_tau[:, x, G], lim[b, _0], lim[b, _1]), bounds looked up per b
    kernel = loom.ekl.load("""
        const LIM = [[_0, _3], [_3, _4], [_4, _4], [_1, _6]];
        kernel k(u_tau : f32[6, 5, 2], total : f32[5], t : out& f32[4, 5, 2], s : out& f32[5]) {
            out t[b, x, G] = sum(u_tau[:, x, G], LIM[b, _0], LIM[b, _1]);
            out s[x] = sum(total[*, x]) + 1;
        }""").k
    rng = _rng(4)
    u_tau = rng.random((6, 5, 2)).astype(np.float32)
    total = rng.random(5).astype(np.float32)
    t, s = np.zeros((4, 5, 2), np.float32), np.zeros(5, np.float32)
    kernel(u_tau, total, t, s)
    lim = [(0, 3), (3, 4), (4, 4), (1, 6)]
    want = np.stack([u_tau[lo:hi].sum(axis=0) for lo, hi in lim])
    np.testing.assert_allclose(t, want, rtol=1e-6)
    np.testing.assert_allclose(s, total + 1, rtol=1e-6)


GUARDED = """
kernel k(i_maj : index[5, 3], r_gas : f64[4, 5], r : out& f64[5, 3]) {
    let r_maj[x, b] = {
        let g : index = i_maj[x, b];
        if g > 0 then r_gas[g - _1, x] else 1
    };
    out r = r_maj;
}
"""


@pytest.mark.sanitize
def test_conditional_with_a_gather_arm_reads_only_the_taken_arm():
    kernel = loom.ekl.load(GUARDED).k
    assert "scf.if" in str(kernel.ir("esn")) and "scf.if" in str(kernel.ir("linalg"))
    rng = _rng(5)
    i_maj = rng.integers(0, 5, (5, 3))  # 0 selects the constant arm: r_gas[-1, x] must not be read
    i_maj[0, 0] = 0
    r_gas = rng.random((4, 5))
    r = np.zeros((5, 3))
    kernel(i_maj, r_gas, r)
    x = np.arange(5)[:, None]
    want = np.where(i_maj > 0, r_gas[np.maximum(i_maj - 1, 0), x], 1.0)
    np.testing.assert_array_equal(r, want)
    np.testing.assert_array_equal(kernel.reference(i_maj, r_gas)["r"], want)
    # the taken arm is still range-checked, in C and in the reference
    i_maj[1, 2] = 5
    with pytest.raises(loom.errors.LoomError) as info:
        kernel(i_maj, r_gas, r)
    assert info.value.line == 5 and "out of range" in info.value.message
    with pytest.raises(loom.errors.LoomError):
        kernel.reference(i_maj, r_gas)


@pytest.mark.mlir
def test_conditional_with_a_gather_arm_verifies_in_mlir_opt():
    from loom.oracle import verify

    kernel = loom.ekl.load(GUARDED).k
    verify(kernel.ir("linalg"))
    verify(kernel.ir("c"))


@pytest.mark.sanitize
def test_outer_product_and_broadcast():
    kernel = loom.ekl.load("""
        kernel k(a : f64[3], b : f64[4, 2], c : f64[1, 2], y : out& f64[3, 4, 2], z : out& f64[5, 2]) {
            out y = a # b;
            out z = c ~ [_5, _2];
        }""").k
    rng = _rng(6)
    a, b, c = rng.random(3), rng.random((4, 2)), rng.random((1, 2))
    y, z = np.zeros((3, 4, 2)), np.zeros((5, 2))
    kernel(a, b, c, y, z)
    np.testing.assert_allclose(y, np.multiply.outer(a, b), rtol=1e-15)
    np.testing.assert_array_equal(z, np.broadcast_to(c, (5, 2)))


def test_broadcast_to_an_incompatible_shape_is_refused():
    with pytest.raises(loom.errors.LoomError) as info:
        loom.ekl.load("kernel k(c : f64[3, 2], z : out& f64[5, 2]) {\n  out z = c ~ [_5, _2];\n}\n")
    assert (info.value.line, info.value.column) == (2, 13) and "broadcast" in info.value.message


@pytest.mark.sanitize
def test_array_literal_in_a_body_stacks_along_a_new_leading_axis():
    # messner's commented-out form `[1 - f_T, f_T]`, and a stack of an array with a scalar
    kernel = loom.ekl.load("""
        kernel k(f : f32[6], w : out& f32[2, 6], v : out& f32[3, 6]) {
            out w = [1 - f, f];
            out v = [f, 0.5, f * f];
        }""").k
    f = _rng(7).random(6).astype(np.float32)
    w, v = np.zeros((2, 6), np.float32), np.zeros((3, 6), np.float32)
    kernel(f, w, v)
    np.testing.assert_allclose(w, np.stack([1 - f, f]), rtol=1e-6)
    np.testing.assert_allclose(v, np.stack([f, np.full(6, 0.5, np.float32), f * f]), rtol=1e-6)


def test_gathering_from_an_array_literal_is_refused():
    with pytest.raises(loom.errors.LoomError) as info:
        loom.ekl.load("kernel k(j : index[4], f : f64[4], y : out& f64[4]) {\n"
                      "  out y[x] = ([f, f * 2])[j[x], x];\n}\n")
    assert info.value.line == 2 and info.value.construct == "array literal"


@pytest.mark.sanitize
def test_inout_parameter_is_read_then_written():
    kernel = loom.ekl.load("""
        kernel k(A : f64[4, 4], v : inout& f64[4], n : inout& f64[4]) {
            out v[i] = <+ k< A[i, k] * v[k];
        }""").k
    rng = _rng(8)
    A, v, n = rng.random((4, 4)), rng.random(4), rng.random(4)
    v0, n0 = v.copy(), n.copy()
    reference = kernel.reference(A, v0.copy(), n0.copy())
    kernel(A, v, n)
    np.testing.assert_allclose(v, A @ v0, rtol=1e-14)  # every element from the old v: no in-place clobbering
    np.testing.assert_array_equal(n, n0)  # an inout& never written keeps its value
    np.testing.assert_allclose(reference["v"], A @ v0, rtol=1e-14)


@pytest.mark.sanitize
def test_function_style_casts():
    kernel = loom.ekl.load("""
        type REAL = f32;
        kernel k(a : f64[4], b : f32[4], y : out& f32[4]) {
            out y = REAL(a) * b + f32(a);
        }""").k
    rng = _rng(9)
    a, b = rng.random(4), rng.random(4).astype(np.float32)
    y = np.zeros(4, np.float32)
    kernel(a, b, y)
    np.testing.assert_allclose(y, a.astype(np.float32) * b + a.astype(np.float32), rtol=1e-6)


HEAD = "kernel k(a : f64[4], y : out& f64[4]) {\n"


@pytest.mark.parametrize(
    "text, line, column, construct",
    [
        ("static local S : & f64[2];\n" + HEAD + "  out y = a;\n}\n", 1, 1, "static"),
        ("static export S : & f64[2];\n" + HEAD + "  out y = a;\n}\n", 1, 1, "static"),
        (HEAD + "  out y = a + \"text\";\n}\n", 2, 15, "string"),
        (HEAD + "  out y = a + ?;\n}\n", 2, 15, "error"),
        ("type T = ?;\n" + HEAD + "  let z : T = a;\n  out y = z;\n}\n", 1, 10, "?"),
        ("kernel k(a : bf16[4], y : out& f64[4]) {\n  out y = a;\n}\n", 1, 14, "bf16"),
        (HEAD + "  out y = { out y = a; a };\n}\n", 2, 13, "out in a block"),
        (HEAD + "  out y = { let t[i] = a[i]; a };\n}\n", 2, 13, "indexed let in a block"),
        (HEAD + "  out y[i] = a[i + _1];\n}\n", 2, 18, "index arithmetic"),
        (HEAD + "  out y = prod(a);\n}\n", 2, 11, "prod"),
        ("const C = <+ i< i;\n" + HEAD + "  out y = a;\n}\n", 1, 11, "nested reduction"),
    ],
)
def test_unsupported_construct_is_refused_by_name_and_place(text, line, column, construct):
    with pytest.raises(loom.errors.LoomError) as info:
        loom.ekl.load(text)
    error = info.value
    assert (error.line, error.column, error.construct) == (line, column, construct), str(error)
    assert str(error).splitlines()[-1].index("^") - 4 == column - 1


RUNNER_KERNELS = {
    "nested": ("kernel k(A : f64[4, 3], B : f64[3, 5], C : out& f64[4, 5]) {\n"
               "  out C[i, j] = 1.0 + (<+ k< A[i, k] * B[k, j]) * (<max m< A[i, m]);\n}\n",
               lambda A, B: 1.0 + (A @ B) * A.max(axis=1)[:, None]),
    "stack_sum": ("kernel k(f : f64[6], w : out& f64[2, 6], s : out& f64[2]) {\n"
                  "  out w = [1 - f, f];\n  out s[q] = sum(w[q, :], _1, _4);\n}\n",
                  lambda f: (np.stack([1 - f, f]), np.stack([1 - f, f])[:, 1:4].sum(axis=1))),
}


@pytest.mark.mlir
@pytest.mark.parametrize("name", ["nested", "stack_sum"])
def test_new_constructs_run_in_mlir_runner_like_numpy(name):
    from loom.oracle import run

    text, numpy_version = RUNNER_KERNELS[name]
    kernel = loom.ekl.load(text).k
    rng = _rng(10)
    inputs = [rng.random(tuple(p.shape)) for p in kernel.form.params if not p.is_output]
    outputs = [np.zeros(tuple(p.shape)) for p in kernel.form.params if p.is_output]
    args = inputs + outputs + [c.value for c in kernel.lowered_form.consts]
    result = run(kernel.ir("linalg"), "k", [a.copy() for a in args])
    want = numpy_version(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    for k, expected in enumerate(want):
        np.testing.assert_allclose(result.memrefs[len(inputs) + k], expected, rtol=1e-13)


@pytest.mark.mlir
def test_guarded_gather_runs_in_mlir_runner_like_numpy():
    from loom.oracle import run

    kernel = loom.ekl.load(GUARDED).k
    rng = _rng(12)
    i_maj, r_gas = rng.integers(0, 5, (5, 3)), rng.random((4, 5))
    i_maj[0, 0] = 0
    result = run(kernel.ir("linalg"), "k", [i_maj, r_gas, np.zeros((5, 3))])
    x = np.arange(5)[:, None]
    np.testing.assert_array_equal(result.memrefs[2], np.where(i_maj > 0, r_gas[np.maximum(i_maj - 1, 0), x], 1.0))


def test_sum_bound_outside_the_axis_is_refused():
    for bounds, bad in (("_0, _7", 7), ("L[b, _0], L[b, _1]", 9)):
        text = ("const L = [[_0, _2], [_1, _9]];\nkernel k(a : f64[6, 2], y : out& f64[2, 2]) {\n"
                f"  out y[b, j] = sum(a[:, j], {bounds});\n}}\n")
        with pytest.raises(loom.errors.LoomError) as info:
            loom.ekl.load(text)
        assert info.value.line == 3 and f"bound {bad} of sum" in info.value.message


@pytest.mark.parametrize("expr, value", [
    ("4.0 / 2.0", 2.0), ("7 / 2", 3.5), ("_8 / _3", 2), ("_8 % _3", 2), ("N_A - _1", 4), ("-(N_A !> f64) * 0.5", -2.5),
    ("(1 < 2) ? 3.0 : 4.0", 3.0), ("sqrt(16.0)", 4.0),
])
def test_a_constant_may_be_an_expression_of_constants(expr, value):
    kernel = loom.ekl.load(f"""
        const N_A = _5;
        const N = {expr};
        kernel k(a : f64[4], b : out& f64[4]) {{
            out b[i] = a[i] * N;
        }}""").k
    a = _rng().random(4)
    b = np.zeros(4)
    kernel(a, b)
    np.testing.assert_array_equal(b, a * value)


def test_a_folded_constant_is_an_extent():
    kernel = loom.ekl.load("""
        const N = _2 * _3 - _1;
        kernel k(a : f64[N], b : out& f64[N]) {
            out b[i] = a[i] + 1.0;
        }""").k
    a = _rng().random(5)
    b = np.zeros(5)
    kernel(a, b)
    np.testing.assert_array_equal(b, a + 1.0)


@pytest.mark.parametrize("expr, message", [
    ("1 / 0", "evaluates to inf, not a finite number"), ("sqrt(-1.0)", "evaluates to nan, not a finite number"),
    ("1e308 * 10.0", "evaluates to inf"), ("_1 / _0", "integer division by zero"),
    ("N", "unknown name 'N'"),  # it read a placeholder 0 and computed b = a * 0
    ("a_glob[0] + 1.0", "expected a constant expression"),
])
def test_a_constant_expression_that_cannot_fold_is_refused_at_its_place(expr, message):
    with pytest.raises(loom.LoomError, match=message) as info:
        loom.ekl.load(f"""
            kernel k(a_glob : f64[4], b : out& f64[4]) {{
                const N = {expr};
                out b[i] = a_glob[i] * N;
            }}""")
    assert ":3:" in str(info.value)
