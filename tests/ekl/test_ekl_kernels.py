"""EKL kernels end to end: numbers against independent numpy, esn round trip, upstream MLIR oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import loom
from loom.examples.ekl_paths import EKL_EXAMPLES
from loom.errors import LoomError

HELMHOLTZ = """
kernel inverse_helmholtz(S : f64[{n}, {n}], D : f64[{n}, {n}, {n}], u : f64[{n}, {n}, {n}],
                         v : out& f64[{n}, {n}, {n}])
{{
    let t[i, j, k] = <+ a, b, c< S[i, a] * S[j, b] * S[k, c] * u[a, b, c];
    let r = D * t;
    out v[i, j, k] = <+ a, b, c< S[a, i] * S[b, j] * S[c, k] * r[a, b, c];
}}
"""


def helmholtz_numpy(S, D, u):
    t = np.einsum("ia,jb,kc,abc->ijk", S, S, S, u)
    return np.einsum("ai,bj,ck,abc->ijk", S, S, S, D * t)


def relative(got, want):
    return np.max(np.abs(got - want)) / np.max(np.abs(want))


@pytest.mark.sanitize
@pytest.mark.parametrize("n", [11, 7, "?"])
def test_inverse_helmholtz_matches_einsum(n):
    kernel = loom.ekl.load(HELMHOLTZ.format(n=n)).inverse_helmholtz
    size = 9 if n == "?" else n
    rng = np.random.default_rng(size)
    S, D, u = rng.random((size, size)), rng.random((size,) * 3), rng.random((size,) * 3)
    v = np.zeros((size,) * 3)
    kernel(S, D, u, v)
    assert relative(v, helmholtz_numpy(S, D, u)) < 1e-12
    # the split into pairwise contractions is what runs: 3 lets per contraction plus r;
    # at 11^3: 6 contractions of 11^4 points (mul + add) and 11^3 products for r
    assert len(kernel.lowered_form.lets) == 7
    if n == 11:
        assert kernel.flops == 6 * 2 * 11**4 + 11**3


def test_example_file_is_the_messner_kernel():
    messner = (Path(__file__).parent / "messner" / "inverse_helmholtz.ekl").read_text()
    ours = EKL_EXAMPLES["inverse_helmholtz"].read_text()
    strip = lambda text: "".join(text.replace("REAL", "f64").split())  # noqa: E731
    assert strip(messner) in strip(ours)


def rrtmg_numpy(T, p, eta, n_d, k):
    """Hand-written major-absorber optical depth (interpolation in T, p, eta; table gathers)."""
    def cell(x, scale):
        scaled = x * scale
        j = np.trunc(scaled).astype(np.int64)
        f = scaled - j
        return j, np.stack([1 - f, f], axis=1)

    j_T, w_T = cell(T, 12.0)
    j_p, w_p = cell(p, 7.0)
    j_p = j_p + (p < 0.5)
    j_eta, w_eta = cell(eta, 7.0)
    tau = np.zeros((T.size, k.shape[-1]))
    for dT in (0, 1):
        for dp in (0, 1):
            for de in (0, 1):
                weight = w_T[:, dT] * w_p[:, dp] * w_eta[:, de] * n_d
                tau += k[j_T + dT, j_p + dp, j_eta + de, :] * weight[:, None]
    return tau


@pytest.mark.sanitize
def test_rrtmg_style_kernel_matches_hand_written_numpy():
    kernel = loom.ekl.load(EKL_EXAMPLES["rrtmg_major"]).rrtmg_major
    rng = np.random.default_rng(3)
    T, p, eta, n_d = (rng.random(64) for _ in range(4))
    k = rng.random((14, 9, 9, 16))
    tau = np.zeros((64, 16))
    kernel(T, p, eta, n_d, k, tau)
    np.testing.assert_allclose(tau, rrtmg_numpy(T, p, eta, n_d, k), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel.reference(T, p, eta, n_d, k)["tau"], tau, rtol=1e-12, atol=1e-14)


def test_implicit_esn_form_and_matmul_recognition():
    kernel = loom.ekl.load("""
        kernel mm(A : f64[4, 3], B : f64[3, 5], C : out& f64[4, 5]) {
            let P = A[i, k] * B[k, j];
            out C = P;
        }""").mm
    (let_p, _) = kernel.form.lets
    assert [i.name for i in let_p.bound] == ["i", "j"] and [i.name for i in let_p.reductions] == ["k"]
    assert "linalg.matmul" in str(kernel.ir("linalg"))
    rng = np.random.default_rng(0)
    A, B, C = rng.random((4, 3)), rng.random((3, 5)), np.zeros((4, 5))
    kernel(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-13)


def test_esn_module_round_trips_through_print_and_parse():
    from xdsl.parser import Parser

    from loom.dialects import context

    for path in EKL_EXAMPLES.values():
        module = loom.ekl.load(path).kernel().ir("esn")
        text = str(module)
        again = Parser(context(), text).parse_module()
        again.verify()
        assert str(again) == text and "esn.let" in text and "esn.subscript" in text


@pytest.mark.mlir
@pytest.mark.parametrize("name", ["inverse_helmholtz", "rrtmg_major"])
def test_lowered_module_verifies_and_runs_in_mlir_runner(name):
    from loom.oracle import run, verify

    kernel = loom.ekl.load(EKL_EXAMPLES[name]).kernel()
    linalg_module = kernel.ir("linalg")
    verify(linalg_module)
    verify(kernel.ir("c"))
    rng = np.random.default_rng(5)
    from loom.cli.ekl_commands import random_arrays

    arrays = random_arrays(kernel, 8, 5)
    args = [arrays[p.name] for p in kernel.form.params] + [c.value for c in kernel.lowered_form.consts]
    result = run(linalg_module, name, [a.copy() for a in args])
    kernel(**arrays)
    for k, p in enumerate(kernel.form.params):
        if p.is_output:
            np.testing.assert_allclose(result.memrefs[k], arrays[p.name], rtol=1e-12, atol=1e-14)
    del rng


@pytest.mark.parametrize("out, body", [
    ("C[i, j]", "A[i, k] * B[k, j]"), ("C[i, j]", "B[k, j] * A[i, k]"),
    ("C[j, i]", "A[i, k] * B[k, j]"), ("C[j, i]", "B[k, j] * A[i, k]"),
])
@pytest.mark.parametrize("n, m", [(4, 4), (5, 2)])
def test_two_factor_contractions_in_every_subscript_order(out, body, n, m):
    # a transposed result (C[j, i]) is no matmul: it used to be lowered as one, silently wrong when square
    shape = "[{}, {}]".format(*((m, n) if out == "C[j, i]" else (n, m)))
    kernel = loom.ekl.load(f"kernel t(A : f64[{n}, 3], B : f64[3, {m}], C : out& f64{shape})\n"
                           f"{{ out {out} = <+ k< {body}; }}").t
    rng = np.random.default_rng(n)
    A, B = rng.random((n, 3)), rng.random((3, m))
    C = np.zeros((m, n) if out == "C[j, i]" else (n, m))
    kernel(A, B, C)
    want = A @ B if out == "C[i, j]" else (A @ B).T
    np.testing.assert_allclose(C, want, rtol=1e-13)


def test_matrix_chain_with_odd_sizes_matches_numpy():
    # the chosen order contracts C D first, whose result's bound indices come out transposed
    kernel = loom.ekl.load("kernel chain(A : f64[5, 7], B : f64[7, 3], C : f64[3, 11], D : f64[11, 2],\n"
                           "             E : out& f64[5, 2])\n"
                           "{ out E[i, l] = <+ j, k, m< A[i, j] * B[j, k] * C[k, m] * D[m, l]; }").chain
    rng = np.random.default_rng(3)
    A, B, C, D = rng.random((5, 7)), rng.random((7, 3)), rng.random((3, 11)), rng.random((11, 2))
    E = np.zeros((5, 2))
    kernel(A, B, C, D, E)
    np.testing.assert_allclose(E, A @ B @ C @ D, rtol=1e-13)


BATCHED = """
kernel bmm(A : f64[?, 4, 6], B : f64[?, 6, 5], C : out& f64[?, 4, 5])
{
    out C[b, i, j] = <+ k< A[b, i, k] * B[b, k, j];
}
"""


def test_reference_of_a_kernel_with_dynamic_output_extents(tmp_path, capsys):
    # the congruence check dim(A, 0) = dim(C, 0) named the output, which reference() is not given
    kernel = loom.ekl.load(BATCHED).bmm
    rng = np.random.default_rng(2)
    A, B = rng.random((3, 4, 6)), rng.random((3, 6, 5))
    want = np.einsum("bik,bkj->bij", A, B)
    np.testing.assert_allclose(kernel.reference(A, B)["C"], want, rtol=1e-13)
    C = np.zeros((3, 4, 5))
    kernel(A, B, C)
    np.testing.assert_allclose(C, want, rtol=1e-13)
    path = tmp_path / "bmm.ekl"
    path.write_text(BATCHED)
    from loom.cli import main

    assert main(["ekl", "run", str(path), "--size", "3"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("ok")


def test_reference_needs_an_output_whose_shape_is_the_only_extent():
    kernel = loom.ekl.load("kernel k(a : f64[?], y : out& f64[?]) { out y = a * 2.0; }").k
    a = np.arange(5.0)
    with pytest.raises(LoomError, match="pass the out& array 'y'"):
        kernel.reference(a)
    np.testing.assert_array_equal(kernel.reference(a, y=np.zeros(5))["y"], 2 * a)


@pytest.mark.parametrize("op, numpy_reduce", [("+", np.sum), ("*", np.prod), ("min", np.min), ("max", np.max)])
def test_reductions_into_index_outputs(op, numpy_reduce):
    # an index target's identity fill was a linalg.fill, whose region takes only floats and integers
    kernel = loom.ekl.load("kernel r(N : index[3, 5], d : index[5], q : out& index[3], s : out& index[2])\n"
                           f"{{ out q[i] = <{op} k< N[i, k]; out s[z] = <{op} k< N[_1, k] * d[k] + z; }}").r
    rng = np.random.default_rng(4)
    N, d = rng.integers(-9, 9, (3, 5)), rng.integers(-3, 4, 5)
    q, s = np.zeros(3, np.int64), np.zeros(2, np.int64)
    kernel(N, d, q, s)
    np.testing.assert_array_equal(q, numpy_reduce(N, axis=1))
    np.testing.assert_array_equal(s, [numpy_reduce(N[1] * d + z) for z in range(2)])


def test_index_remainder_is_floored_like_index_division():
    # '/' on indices was floored (arith.floordivsi) but '%' truncated (arith.remsi): n != (n / d) * d + n % d
    kernel = loom.ekl.load("kernel m(n : index[9], d : index[9], q : out& index[9], r : out& index[9])\n"
                           "{ out q = n / d; out r = n % d; }").m
    n, d = np.array([-7, -6, -1, 0, 1, 5, 7, 9, -9]), np.array([2, 4, 3, 5, -2, -3, 3, 4, 2])
    q, r = np.zeros(9, np.int64), np.zeros(9, np.int64)
    kernel(n, d, q, r)
    np.testing.assert_array_equal(q, n // d)
    np.testing.assert_array_equal(r, n % d)
    np.testing.assert_array_equal(kernel.reference(n, d)["r"], n % d)


def test_reference_of_a_contraction_with_a_bound_index_no_factor_reads():
    # the reference's einsum was given an output letter that no operand has (a ValueError)
    kernel = loom.ekl.load("kernel r(A : f64[4, 5], v : f64[5], q : out& f64[3, 4])\n"
                           "{ out q[z, i] = <+ k< A[i, k] * v[k]; }").r
    rng = np.random.default_rng(5)
    A, v = rng.random((4, 5)), rng.random(5)
    q = np.zeros((3, 4))
    kernel(A, v, q)
    want = np.broadcast_to(A @ v, (3, 4))
    np.testing.assert_allclose(q, want, rtol=1e-13)
    np.testing.assert_allclose(kernel.reference(A, v)["q"], want, rtol=1e-13)


@pytest.mark.parametrize("text", ["", "// nothing\n", "type REAL = f32;\nconst N = _4;\n"])
def test_a_source_without_kernels_loads_but_asking_it_for_one_says_it_has_none(text, tmp_path, capsys):
    # messner accepts a file of types and constants only, so loading it is no error; module.k was a bare
    # AttributeError('k') and 'loom ekl run' said "defines kernels (none); name one with --kernel"
    from loom.cli import main

    module = loom.ekl.load(text)
    assert module.kernels == {}
    for ask in (lambda: module.k, lambda: module.kernel(), lambda: module.kernel("k")):
        with pytest.raises(LoomError, match="the source defines no kernel"):
            ask()
    with pytest.raises(AttributeError):  # module.NAME stays an attribute lookup
        module.k
    assert not hasattr(module, "k") and getattr(module, "k", None) is None
    path = tmp_path / "none.ekl"
    path.write_text(text)
    assert main(["ekl", "run", str(path)]) == 1
    assert "the source defines no kernel" in capsys.readouterr().err


def test_cli_default_tolerance_scales_with_the_dtype_and_the_reduction_length(tmp_path, capsys, monkeypatch):
    # the C kernel sums an f32 reduction in order in f32 (numpy's reference sums pairwise): the former default
    # --tolerance 1e-12 flagged most f32 kernels that reduce. The default is now 2 * eps * (n + 8) per output
    from loom.cli import main
    from loom.jit.ekl import EklKernel

    path = tmp_path / "sum.ekl"
    path.write_text("kernel k(a : f32[100000], b : f32[64], s : out& f32[1], t : out& f32[1], y : out& f32[64])\n"
                    "{ out s[z] = <+ i< a[i]; out t[z] = <+ j< b[j]; out y = b * 2.0; }\n")
    kernel = loom.ekl.load(path).k
    arrays = {"a": np.full(100000, 0.1, np.float32), "b": np.ones(64, np.float32)}
    eps = float(np.finfo(np.float32).eps)
    assert kernel.tolerances(arrays | {n: np.zeros(s, np.float32) for n, s in (("s", 1), ("t", 1), ("y", 64))}) \
        == {"s": 2 * eps * (100000 + 8), "t": 2 * eps * (64 + 8), "y": 2 * eps * 8}
    s = np.zeros(1, np.float32)
    kernel(arrays["a"], arrays["b"], s, np.zeros(1, np.float32), np.zeros(64, np.float32))
    assert 1e-5 < abs(s[0] - 10000.0) / 10000.0 < 2 * eps * 100008  # the sequential f32 sum: 9998.56
    assert main(["ekl", "run", str(path)]) == 0
    assert "ok" in capsys.readouterr().out
    assert main(["ekl", "run", str(path), "--tolerance", "1e-12"]) == 1  # an explicit tolerance still applies
    assert "differs from the numpy reference: output s" in capsys.readouterr().err

    real_call = EklKernel.__call__

    def drops_the_last_term(self, *args, **kwargs):  # a wrong kernel: t misses one of its 64 terms
        named = self.arrays(args, kwargs)
        real_call(self, **named)
        named["t"] -= named["b"][-1]

    monkeypatch.setattr(EklKernel, "__call__", drops_the_last_term)
    assert main(["ekl", "run", str(path)]) == 1
    err = capsys.readouterr().err
    assert "differs from the numpy reference: output t by 0.0" in err and "output s" not in err, err
