"""Bad EKL sources: each gives a LoomError located at file:line:col (elaboration and run time)."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.errors import LoomError

HEAD = "kernel k(A : f64[4, 3], B : f64[3, 5], x : f32[4], C : out& f64[4, 5])\n{\n"


@pytest.mark.parametrize(
    "body, line, column, fragment",
    [
        ("    out C[i, j] = <+ k< A[i, k] * B[k, j]\n", 4, 1, "expected ';'"),                       # syntax
        ("    out C[i, j] = <+ k< A[i, k] * Q[k, j];\n", 3, 35, "unknown name 'Q'"),                   # unknown name
        ("    out C[i, j] = <+ k< A[i, k] * B[j, k];\n", 3, 35, "must be congruent"),                  # non-congruent
        ("    let t = A[i, k] * B[k, j] * A[i, k];\n    out C[i, j] = t[i, j];\n", 3, 38, "used 3 times"),
        ("    out C[i, j] = <+ k< A[i, k + _1] * B[k, j];\n", 3, 32, "index arithmetic"),
        ("    out C[i, j] = <+ k< A[i, k] * x[i];\n", 3, 33, "type mismatch"),                          # f64 * f32
        ("    out C = A;\n", 3, 5, "not congruent"),                                                    # shape
        ("    out A = A;\n", 3, 5, "not an out& parameter"),
        ("    let y = <+ k< A[_0, k];\n", 1, 1, "never written"),
        ("    out C[i, j] = <+ k< A[i, k] * B[k, j];\n    out C = C;\n", 4, 5, "written twice"),
        ("    out C[i, j] = A[i, _7] * B[_0, j];\n", 3, 19, "out of range"),                         # static range
        ("    out C[i, j] = x[i] ? 1.0 : 2.0;\n", 3, 20, "condition must be a bool"),
        ("    out C[i, j] = 1.0 + (<+ k< A[k]);\n", 3, 26, "body of a nested reduction must be a scalar"),
        ("    out C[i, j] = sum(A[i, _0], _0, _2);\n", 3, 19, "sum(...) takes an array"),
        ("    out C[i, j] = foo(A[i, _0]);\n", 3, 19, "unknown function 'foo'"),
        ("    out C = A ~ [_4, _5];\n", 3, 15, "broadcast '~'"),
        ("    let z[q] = 1.0;\n    out C[i, j] = A[i, _0];\n", 3, 11, "cannot infer the domain"),
        ("    out C[i, j] = A[i, j, _0];\n", 3, 20, "too many subscripts"),
        ("    out C[i, j] = A[i, _0] * m;\n", 3, 30, "unknown name 'm'"),
        ("    out C[i, j] = A[i, _0] ^ 2.0 && 1.0;\n", 3, 34, "'&&' needs bool"),
    ],
)
def test_bad_source_is_located(body, line, column, fragment):
    text = HEAD + body + "}\n"
    with pytest.raises(LoomError) as info:
        loom.ekl.load(text)
    error = info.value
    assert fragment in error.message, error.message
    assert (error.filename, error.line) == ("<ekl>", line), str(error)
    if column is not None:
        assert error.column == column, str(error)
    assert "^" in str(error).splitlines()[-1]


def test_unsupported_scalar_type_is_named():
    with pytest.raises(LoomError) as info:
        loom.ekl.load("kernel k(a : bf16[2], b : out& bf16[2]) { out b = a; }")
    assert info.value.construct == "bf16" and info.value.column == 14


DYNAMIC = """
kernel mm(A : f64[8, ?], B : f64[3, ?], C : out& f64[8, ?])
{
    out C[i, j] = <+ k< A[i, k] * B[k, j];
}
"""


def test_dynamic_congruence_checked_at_call_time():
    kernel = loom.ekl.load(DYNAMIC).mm
    rng = np.random.default_rng(0)
    A, B = rng.random((8, 3)), rng.random((3, 5))
    C = np.zeros((8, 5))
    kernel(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-13)
    with pytest.raises(LoomError) as info:
        kernel(rng.random((8, 4)), B, C)
    assert info.value.line == 4 and "dim(A, 1) = 4 disagrees with 3" in info.value.message


GATHER = """
kernel g(j : index[4], a : f64[6], y : out& f64[4])
{
    out y[x] = a[j[x] + _2];
}
"""


@pytest.mark.sanitize
def test_out_of_range_gather_is_located_at_run_time():
    kernel = loom.ekl.load(GATHER).g
    a = np.arange(6.0)
    y = np.zeros(4)
    kernel(np.array([0, 1, 2, 3]), a, y)
    np.testing.assert_array_equal(y, a[[2, 3, 4, 5]])
    with pytest.raises(LoomError) as info:
        kernel(np.array([0, 1, 2, 4]), a, y)
    assert (info.value.filename, info.value.line) == ("<ekl>", 4) and "out of range" in info.value.message
    with pytest.raises(LoomError):
        kernel.reference(np.array([0, 1, 2, 4]), a)


CALLED = """kernel mix(a : f32[7], n : index[7],
           y : out& f32[7], T : out& f64[7, 7])
{
    out y = a * (n !> f32) + 1.0;
    out T[i, j] = (a[j] !> f64) * (a[i] !> f64);
}
"""


def _frozen(shape):
    array = np.zeros(shape)
    array.flags.writeable = False
    return array


@pytest.mark.parametrize(
    "change, line, column, fragment",
    [
        (lambda a: a.update(a=a["a"].astype(np.float64)), 1, 12, "array of float32 for f32[7], got float64"),
        (lambda a: a.update(n=a["n"].astype(np.int32)), 1, 24, "array of int64 for index[7], got int32"),
        (lambda a: a.update(y=np.zeros(7)), 2, 12, "writable C-contiguous numpy array of float32"),
        (lambda a: a.update(a=[1.0] * 7), 1, 12, "got a list (not an ndarray)"),
        (lambda a: a.update(a=np.ones(8, np.float32)), 1, 12, "axis 0 must be 7"),
        (lambda a: a.update(T=np.zeros((7, 14))[:, ::2]), 2, 29, "got a strided view"),
        (lambda a: a.update(T=_frozen((7, 7))), 2, 29, "got a read-only array"),
        (lambda a: a.pop("T"), 1, 1, "missing argument(s) T"),
        (lambda a: a.update(q=np.ones(1)), 1, 1, "has no parameter 'q'"),
        (lambda a: a.update(y=a["a"]), 2, 12, "shares memory with 'a'"),
    ],
)
def test_bad_call_is_located_at_the_parameter(change, line, column, fragment):
    # these used to be reported as "argument 0 of @mix" by the C runtime, or not at all (aliasing)
    kernel = loom.ekl.load(CALLED).mix
    rng = np.random.default_rng(0)
    a = rng.random(7).astype(np.float32)
    arrays = {"a": a, "n": np.arange(7), "y": np.zeros(7, np.float32), "T": np.zeros((7, 7))}
    kernel(**arrays)
    np.testing.assert_allclose(arrays["y"], a * np.arange(7) + 1, rtol=1e-6)
    np.testing.assert_allclose(arrays["T"], np.outer(a.astype(np.float64), a.astype(np.float64)), rtol=1e-12)
    change(arrays)
    with pytest.raises(LoomError) as info:
        kernel(**arrays)
    error = info.value
    assert fragment in error.message, error.message
    assert (error.filename, error.line, error.column) == ("<ekl>", line, column), str(error)


def test_an_output_sharing_memory_with_an_input_is_refused_not_miscomputed():
    kernel = loom.ekl.load("kernel t(a : f64[4, 4], y : out& f64[4, 4]) { out y[i, j] = a[j, i]; }").t
    x = np.arange(16.0).reshape(4, 4)
    with pytest.raises(LoomError, match="shares memory"):
        kernel(x, x)
    np.testing.assert_array_equal(x, np.arange(16.0).reshape(4, 4))  # untouched
    y = np.zeros((4, 4))
    kernel(x, y)
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("body, column", [("n / d", 15), ("n % d", 15), ("(n + _1) / (d * _2)", 22)])
def test_index_division_by_zero_is_located_at_the_operator(body, column):
    kernel = loom.ekl.load(f"kernel k(n : index[3], d : index[3], q : out& index[3])\n{{\n    out q = {body};\n}}").k
    n, q = np.array([-5, 2, 7]), np.zeros(3, np.int64)
    kernel(n, np.array([2, -3, 4]), q)
    np.testing.assert_array_equal(q, eval(body.replace("_", "").replace("/", "//"), {"n": n, "d": np.array([2, -3, 4])}))
    for run in (kernel, kernel.reference):
        with pytest.raises(LoomError) as info:
            run(n, np.array([1, 0, 1]), q) if run is kernel else run(n, np.array([1, 0, 1]))
        assert "division by zero" in info.value.message
        assert (info.value.filename, info.value.line, info.value.column) == ("<ekl>", 3, column), str(info.value)


@pytest.mark.parametrize("text, line, column, fragment", [
    ("kernel k(a : f64[2], b : out& f64[2]) { out b = a; }\n"
     "kernel k(a : f64[2], b : out& f64[2]) { out b = a * 3.0; }", 2, 1, "kernel 'k' is defined twice (first at <ekl>:1:1)"),
    ("kernel k(a : f64[2], a : out& f64[2]) { out a = a * 2.0; }", 1, 22, "parameter 'a' of kernel 'k' is declared twice"),
    ("static import a : & f64[2];\nkernel k(a : f64[2], b : out& f64[2]) { out b = a; }", 2, 10, "declared twice"),
])
def test_duplicate_kernels_and_parameters_are_refused(text, line, column, fragment):
    # both were accepted: the second kernel replaced the first, a repeated parameter failed only when called
    with pytest.raises(LoomError) as info:
        loom.ekl.load(text)
    assert fragment in info.value.message, info.value.message
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


def test_distinct_kernels_of_one_file_both_run():
    module = loom.ekl.load("kernel k(a : f64[2], b : out& f64[2]) { out b = a; }\n"
                           "kernel j(a : f64[2], b : out& f64[2]) { out b = a * 3.0; }")
    a, b = np.array([1.0, 2.0]), np.zeros(2)
    module.k(a, b)
    np.testing.assert_array_equal(b, a)
    module.j(a, b)
    np.testing.assert_array_equal(b, 3 * a)


@pytest.mark.parametrize("text, column, fragment", [
    ("kernel k(a : f64[3, 3], b : out& f64[3, 3]) { out b[i, i] = a[i, _0]; }", 56, "'b[...]' (first at <ekl>:1:53)"),
    ("kernel k(a : f64[3, 3], b : out& f64[3, 3]) { let t[i, i] = a[i, _0]; out b = t; }", 56, "'t[...]'"),
    ("kernel k(a : f64[3, 3], b : out& f64[1]) { out b[z] = <+ i, i< a[i, i]; }", 61, "the reduction '<+ ...<'"),
    ("kernel k(a : f64[3, 3], b : out& f64[1]) { out b[z] = <max i, i: _2< a[i, _0]; }", 63, "'<max ...<'"),
])
def test_an_index_declared_twice_in_one_list_is_refused(text, column, fragment):
    # messner refuses a name defined twice in one scope; 'out b[i, i]' was accepted (the first 'i' indexed an
    # axis the body never read) and '<+ i, i<' failed with "cannot infer the domain of index 'i'"
    with pytest.raises(LoomError) as info:
        loom.ekl.load(text)
    assert "index 'i' is declared twice in" in info.value.message and fragment in info.value.message, info.value.message
    assert (info.value.line, info.value.column) == (1, column), str(info.value)


def test_a_reduction_index_shadows_a_header_index_of_the_same_name():
    # messner's grammar gives a reduction's indices a scope of their own (Scopes::shadowOuter): in
    # 'out b[i] = <+ i< a[i]' the body reads the reduction's 'i', so every b[i] is the whole sum
    kernel = loom.ekl.load("kernel k(a : f64[3], b : out& f64[3]) { out b[i] = <+ i< a[i]; }").k
    a, b = np.array([1.0, 2.0, 4.0]), np.zeros(3)
    kernel(a, b)
    np.testing.assert_array_equal(b, np.full(3, a.sum()))
    np.testing.assert_array_equal(kernel.reference(a)["b"], np.full(3, a.sum()))
    # a let's header index shadowed so has no domain: the error names the reduction index that shadows it
    with pytest.raises(LoomError) as info:
        loom.ekl.load("kernel k(a : f64[3], b : out& f64[3]) { let t[i] = <+ i< a[i]; out b = t; }")
    assert "the reduction index 'i' at <ekl>:1:55 shadows it" in info.value.message, info.value.message
    assert (info.value.line, info.value.column) == (1, 47), str(info.value)


@pytest.mark.parametrize("call, fragment", [
    ("exp(a, a)", "exp(...) takes one value, got 2 argument(s)"),
    ("sqrt()", "sqrt(...) takes one value, got 0 argument(s)"),
    ("min(a)", "min(...) takes two values, got 1 argument(s)"),
    ("max(a, a, a)", "max(...) takes two values, got 3 argument(s)"),
    ("index(a, a)", "index(...) takes one value, got 2 argument(s)"),
    ("sum(a, _0)", "sum(...) takes one array (v) or an array and two bounds (v, lo, hi), got 2 argument(s)"),
    ("prod(a)", "prod(...) is not supported: write the product as a reduction"),
])
def test_a_builtin_called_with_the_wrong_arity_names_itself(call, fragment):
    # every wrong arity said "(sum takes (v) or (v, lo, hi))", whatever the function
    with pytest.raises(LoomError) as info:
        loom.ekl.load(f"kernel k(a : f64[2], b : out& f64[2]) {{ out b = {call}; }}")
    assert fragment in info.value.message, info.value.message
    assert "sum takes" not in info.value.message
    assert (info.value.line, info.value.column, info.value.construct) == (1, 49, call.split("(")[0]), str(info.value)


def test_an_extent_is_a_constant_with_a_non_negative_integral_value():
    # messner's ParseDriver::extents takes any literal that converts to an unsigned integer exactly, so
    # 'const N = 2.0' is the extent 2 (checked against numpy); 2.5 is refused at the use, naming the constant
    kernel = loom.ekl.load("const N = 2.0;\nkernel k(a : f64[N, _2], b : out& f64[N]) { out b[i] = <+ j< a[i, j]; }").k
    assert [p.shape for p in kernel.form.params] == [[2, 2], [2]]
    a, b = np.array([[1.0, 2.0], [3.0, 5.0]]), np.zeros(2)
    kernel(a, b)
    np.testing.assert_array_equal(b, a.sum(axis=1))
    for value in ("2.5", "-_2"):
        with pytest.raises(LoomError) as info:
            loom.ekl.load(f"const N = {value};\nkernel k(a : f64[N], b : out& f64[2]) {{ out b = a; }}")
        assert f"an extent must be a non-negative integer, the constant 'N' is {value.replace('_', '')}" \
            in info.value.message, info.value.message
        assert (info.value.line, info.value.column) == (2, 18), str(info.value)


def test_a_dynamic_axis_that_does_not_fit_a_broadcast_is_named_as_an_axis():
    # the message said "index 'axis 0 of broadcast '~''" and "3 = 3"; a '?' axis of size 1 is not stretched
    # at run time (the loops index every '?' axis), so the message says that an extent declared 1 is
    kernel = loom.ekl.load("kernel k(a : f64[?], s : out& f64[3]) { out s = a ~ [_3]; }").k
    a, s = np.array([2.0, 3.0, 5.0]), np.zeros(3)
    kernel(a, s)
    np.testing.assert_array_equal(s, a)
    for run in (lambda x: kernel(x, np.zeros(3)), kernel.reference):
        with pytest.raises(LoomError) as info:
            run(np.array([2.0]))
        message = info.value.message
        assert message.startswith("axis 0 of broadcast '~': the extents dim(a, 0) = 1 and 3 differ"), message
        assert "only an extent declared 1, such as f64[_1], is broadcast" in message and "index '" not in message
        assert (info.value.line, info.value.column) == (1, 51), str(info.value)
    static = loom.ekl.load("kernel k(a : f64[_1], s : out& f64[3]) { out s = a ~ [_3]; }").k
    static(np.array([2.0]), s)
    np.testing.assert_array_equal(s, np.full(3, 2.0))
