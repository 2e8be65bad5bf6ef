"""Scalar-type exploration: f64 / f32 compiled, bf16 / fixed point emulated; numbers checked independently."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.cli import main
from loom.errors import LoomError
from loom.examples.ekl_paths import EKL_EXAMPLES
from loom.frontends.ekl.elaborate import elaborate
from loom.frontends.ekl.emulate import evaluate_in, parse_format
from loom.frontends.ekl.parser import parse

ml_dtypes = pytest.importorskip("ml_dtypes")

HELMHOLTZ = """
type REAL = f64;
kernel inverse_helmholtz(S : REAL[{n}, {n}], D : REAL[{n}, {n}, {n}], u : REAL[{n}, {n}, {n}],
                         v : out& REAL[{n}, {n}, {n}])
{{
    let t[i, j, k] = <+ a, b, c< S[i, a] * S[j, b] * S[k, c] * u[a, b, c];
    let r = D * t;
    out v[i, j, k] = <+ a, b, c< S[a, i] * S[b, j] * S[c, k] * r[a, b, c];
}}
"""


def helmholtz(S, D, u):
    t = np.einsum("ia,jb,kc,abc->ijk", S, S, S, u)
    return np.einsum("ai,bj,ck,abc->ijk", S, S, S, D * t)


def rel(got, want):
    r = np.abs(np.asarray(got, np.float64) - want) / np.abs(want)
    return r.max(), r.mean()


def test_bf16_rounding_is_bfloat16s():
    x = np.random.default_rng(0).normal(scale=100.0, size=10000).astype(np.float32)
    x[:4] = [1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8), 0.0]  # ties: to even
    ours = parse_format("bf16").quantize(x)
    theirs = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    assert np.array_equal(ours, theirs)


def test_fixed_point_grid_and_saturation():
    fmt = parse_format("fixed<8,4>")  # range [-8, 8 - 1/16], quantum 1/16
    got = fmt.quantize(np.array([0.03, 0.04, -0.09, 7.99, 100.0, -100.0]))
    assert got.tolist() == [0.0, 0.0625, -0.0625, 7.9375, 7.9375, -8.0]
    assert fmt.saturations == 3  # 7.99 rounds to 8.0, outside the range, as do +-100
    assert parse_format("fixed16.8").name == "fixed16.8"


def test_bf16_emulation_rounds_every_operation_and_accumulates_sequentially():
    """Against ml_dtypes' own bfloat16 arithmetic, written out by hand."""
    [kernel] = elaborate(parse("kernel mv(A : f64[6, 40], x : f64[40], y : out& f64[6]) "
                               "{ out y[i] = <+ k< A[i, k] * x[k]; }", "<t>"))
    rng = np.random.default_rng(1)
    A, x = rng.random((6, 40)), rng.random(40)
    got = evaluate_in(kernel, {"A": A, "x": x, "y": np.zeros(6)}, parse_format("bf16"))["y"]
    bf = ml_dtypes.bfloat16
    Ab, xb = A.astype(np.float32).astype(bf), x.astype(np.float32).astype(bf)
    acc = Ab[:, 0] * xb[0]
    for k in range(1, 40):
        acc = acc + Ab[:, k] * xb[k]
    assert np.array_equal(got, acc.astype(np.float64))


def test_explore_table_numbers_against_numpy():
    n = 7
    rows = {r.type: r for r in loom.ekl.explore(HELMHOLTZ.format(n=n), size=n, seed=3, repeats=1)}
    assert list(rows) == ["f64", "f32", "bf16", "fixed32.16"]
    assert [r.how for r in rows.values()] == ["compiled"] * 2 + ["reference-evaluated"] * 2
    rng = np.random.default_rng(3)
    S, D, u = rng.random((n, n)), rng.random((n, n, n)), rng.random((n, n, n))  # random_arrays' draws
    want = helmholtz(S, D, u)
    # f32: the compiled kernel's error is float32 arithmetic's: within a small factor of numpy's float32 einsum
    np_max, np_mean = rel(helmholtz(*(a.astype(np.float32) for a in (S, D, u))), want)
    assert np_max / 10 < rows["f32"].max_rel_error < np_max * 10
    assert np_mean / 10 < rows["f32"].mean_rel_error < np_mean * 10
    # bf16: 8 significant bits, unit roundoff 2^-9: mean error of that order, max a few times it
    assert 2.0**-12 < rows["bf16"].mean_rel_error < 2.0**-6
    assert rows["bf16"].max_rel_error < 2.0**-3
    # fixed<32,16>: the absolute quantum 2^-16 over |v| of order 10..1000: relative 1e-8..1e-4
    assert 1e-9 < rows["fixed32.16"].mean_rel_error < 1e-4
    assert all(r.seconds > 0 for r in rows.values())


def test_explore_counts_saturations_of_a_narrow_fixed_format():
    rows = loom.ekl.explore(HELMHOLTZ.format(n=5), fixed="fixed8.4", repeats=1)
    assert rows[-1].saturations > 0 and rows[-1].max_rel_error > 0.5


def test_explore_cli_prints_the_table(capsys):
    assert main(["ekl", "explore", str(EKL_EXAMPLES["inverse_helmholtz"]), "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    for name in ("f64", "f32", "bf16", "fixed32.16", "reference-evaluated", "max rel err"):
        assert name in out


def test_explore_bad_inputs():
    with pytest.raises(LoomError, match="kernel k computes no floating-point values"):
        loom.ekl.explore("kernel k(n : index[4], m : out& index[4]) { out m[i] = n[i] * _2; }")
    with pytest.raises(LoomError, match="fixed"):
        loom.ekl.explore(HELMHOLTZ.format(n=3), fixed="fixed<8,9>")


NO_ALIAS = "kernel third(a : f64[64], n : index[64], b : out& f64[64]) { out b[i] = a[i] / (f64(n[i]) + 3.0); }"


def test_explore_without_a_type_alias_rebinds_the_float_types():
    """No `type REAL = f64;`: the source's f64 (declarations and the `f64(...)` cast) is the parameter."""
    k32 = loom.ekl.load(NO_ALIAS, types={"f64": "f32", "f32": "f32"}).kernel()
    assert [p.dtype for p in k32.form.params] == ["f32", "index", "f32"]
    rng = np.random.default_rng(5)
    a, n = rng.random(64).astype(np.float32), rng.integers(0, 9, 64)
    b = np.zeros(64, np.float32)
    k32(a, n, b)
    assert np.array_equal(b, a / (n.astype(np.float32) + np.float32(3.0)))  # one f32 rounding per op
    rows = {r.type: r for r in loom.ekl.explore(NO_ALIAS, repeats=1, formats=["bf16"])}
    assert rows["f64"].max_rel_error == 0
    assert 0 < rows["f32"].max_rel_error < 4 * 2.0**-24 and 0 < rows["bf16"].max_rel_error < 4 * 2.0**-9


def test_explore_cli_draws_index_inputs_from_range(tmp_path, capsys):
    from loom.cli import main

    path = tmp_path / "shifted.ekl"
    path.write_text("type REAL = f64;\nkernel g(j : index[4], a : REAL[3], y : out& REAL[4])\n{\n"
                    "    out y[x] = a[j[x] - _2] * 2.5;\n}\n")
    assert main(["ekl", "explore", str(path), "--repeats", "1"]) == 1  # j in {0, 1}: a[-2] is refused
    assert f"{path}:4" in capsys.readouterr().err
    assert main(["ekl", "explore", str(path), "--repeats", "1", "--range", "j=2:5"]) == 0
    assert "bf16" in capsys.readouterr().out


@pytest.mark.parametrize("argv, fragment", [
    (["run", "--size", "-1"], "--size: expected a non-negative integer"),
    (["run", "--seed", "-1"], "--seed: expected a non-negative integer"),
    (["explore", "--repeats", "0"], "--repeats: expected a positive integer"),
])
def test_bad_numeric_flags_are_usage_errors(argv, fragment, capsys):
    # --size -1 was a numpy traceback; --repeats 0 printed a table of zero errors from never-run kernels
    from loom.cli import main

    with pytest.raises(SystemExit) as info:
        main(["ekl", argv[0], str(EKL_EXAMPLES["inverse_helmholtz"]), *argv[1:]])
    assert info.value.code == 2
    assert fragment in capsys.readouterr().err


def test_explore_refuses_zero_repeats_and_random_arrays_a_negative_size():
    from loom.jit.ekl import random_arrays

    with pytest.raises(LoomError, match="repeats must be at least 1"):
        loom.ekl.explore(EKL_EXAMPLES["inverse_helmholtz"], repeats=0)
    kernel = loom.ekl.load("kernel k(a : f64[?], y : out& f64[?]) { out y = a * 2.0; }").k
    with pytest.raises(LoomError, match="cannot be negative"):
        random_arrays(kernel, -1, 0)
    arrays = random_arrays(kernel, 3, 0)
    kernel(**arrays)
    np.testing.assert_array_equal(arrays["y"], 2 * arrays["a"])


def test_the_angle_spelling_of_the_emulated_fixed_format_warns_that_format_reads_it_otherwise(recwarn):
    """`--fixed fixed<8,4>` is 8 bits in all; `--format fixed<8,4>` is 8 integer bits (12 in all): the same text,
    two formats, in one command. The emulated row's grid is checked against its own definition here."""
    with pytest.warns(loom.errors.LoomWarning, match=r"'fixed<8,4>' is emulated as fixed8.4 \(8 bits in all.*12 in all"):
        rows = loom.ekl.explore(NO_ALIAS, fixed="fixed<8,4>", repeats=1)
    assert rows[3].type == "fixed8.4"
    recwarn.clear()
    loom.ekl.explore(NO_ALIAS, fixed="fixed8.4", repeats=1)
    assert not [w for w in recwarn if issubclass(w.category, loom.errors.LoomWarning)]


@pytest.mark.parametrize("types,message", [
    ({"REEL": "f32"}, r"types\['REEL'\]: 'REEL' is neither a type alias of the source \(REAL\) nor f64 / f32"),
    ({"REAL": "bf16"}, r"types\['REAL'\]: expected a scalar type .*in_format"),
    ({"REAL": 32}, r"types\['REAL'\]: expected a scalar type .*got 32"),
])
def test_types_rebinding_is_checked(types, message):
    """A misspelt alias ran the kernel in f64 unnoticed; a value that is no scalar type failed later with a
    KeyError when compiling."""
    with pytest.raises(LoomError, match=message):
        loom.ekl.load(HELMHOLTZ.format(n=3), types=types)
    k = loom.ekl.load(HELMHOLTZ.format(n=3), types={"REAL": "f32"}).kernel()
    assert {p.dtype for p in k.form.params} == {"f32"}


def test_explore_inputs_take_numbers_and_refuse_unknown_names():
    """`inputs={"c": 0.25}` crashed with an AttributeError (a float has no .copy); a misspelt name was ignored,
    leaving the random array in place."""
    src = "kernel scale(u : f64[6], c : f64, v : out& f64[6]) { out v[i] = u[i] * c; }"
    u = np.arange(6.0) + 0.1
    rows = {r.type: r for r in loom.ekl.explore(src, inputs={"u": u, "c": 0.25}, repeats=1)}
    want = u * 0.25  # exact in f64; f32's error is that of rounding u and the product
    got32 = (u.astype(np.float32) * np.float32(0.25)).astype(np.float64)
    assert rows["f32"].max_rel_error == pytest.approx(np.max(np.abs(got32 - want) / want))
    with pytest.raises(LoomError, match=r"inputs\['cc'\]: kernel scale has no parameter 'cc' \(parameters: u, c, v\)"):
        loom.ekl.explore(src, inputs={"cc": 0.25}, repeats=1)
