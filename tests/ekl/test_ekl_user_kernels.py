"""A weather/energy researcher's own EKL kernels (stencil by neighbour tables, multi-index contractions and
reductions, scalar parameters, a lookup-table physics kernel), each against numpy written here; plus the
things such a user trips over: scalars passed as Python numbers, and right-grouping chains (a warning)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import loom.ekl
from loom.cli import main
from loom.errors import LoomError, LoomWarning

STENCIL = """
const LEFT = [_0, _0, _1, _2, _3, _4];
const RIGHT = [_1, _2, _3, _4, _5, _5];
kernel diffuse(u : f64[6], nu : f64, v : out& f64[6]) {
    out v[i] = u[i] + nu * ((u[LEFT[i]] - 2.0 * u[i]) + u[RIGHT[i]]);
}"""

STATS = """
kernel stats(T : f64[3, 7, 5], hi : out& f64[5], lo : out& f64[7], mean : out& f64[3], y : out& f64[3]) {
    out hi[s] = <max e, t< T[e, t, s];
    out lo[t] = <min e, s< T[e, t, s];
    out mean[e] = (<+ t, s< T[e, t, s]) / 35.0;
    out y[b] = <+ i, j< T[b, i, _0] * T[_2, i, j] * T[b, _1, j];
}"""

VAPOUR = """
const ES = [6.11, 8.72, 12.27, 17.04, 23.37, 31.67, 42.43];
kernel vapour(T : f64[10], q : f64[10], rh : out& f64[10]) {
    let x = (T - 273.15) / 5.0;
    let j : index[10] = index(x);
    let f = x % 1.0;
    let es[c] = ES[j[c]] * (1.0 - f[c]) + ES[j[c] + _1] * f[c];
    out rh[c] = q[c] / es[c];
}"""

SCALARS = """
kernel relax(a : f32, n : index, on : bool, x : f32[8], r : out& f32[8]) {
    out r[i] = on ? a * x[i] + (n !> f32) : x[i];
}"""


def test_stencil_with_a_python_float_parameter():
    """A scalar parameter took only a 0-d array: m.diffuse(u, 0.25, v) was refused ('got a float (not an
    ndarray)')."""
    u, v = np.random.default_rng(1).random(6), np.zeros(6)
    loom.ekl.load(STENCIL).diffuse(u, 0.25, v)
    left, right = [0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 5, 5]
    np.testing.assert_allclose(v, u + 0.25 * (u[left] - 2 * u + u[right]), rtol=1e-15)
    reference = loom.ekl.load(STENCIL).diffuse.reference(u, 0.25, v)["v"]  # was "'float' is not subscriptable"
    np.testing.assert_allclose(reference, v, rtol=1e-15)


def test_reductions_over_several_indices():
    T = np.random.default_rng(2).standard_normal((3, 7, 5))
    hi, lo, mean, y = np.zeros(5), np.zeros(7), np.zeros(3), np.zeros(3)
    loom.ekl.load(STATS).stats(T, hi, lo, mean, y)
    np.testing.assert_array_equal(hi, T.max(axis=(0, 1)))
    np.testing.assert_array_equal(lo, T.min(axis=(0, 2)))
    np.testing.assert_allclose(mean, T.mean(axis=(1, 2)), rtol=1e-14)
    np.testing.assert_allclose(y, np.einsum("bi,ij,bj->b", T[:, :, 0], T[2], T[:, 1, :]), rtol=1e-13)


def test_lookup_table_interpolation():
    es = np.array([6.11, 8.72, 12.27, 17.04, 23.37, 31.67, 42.43])
    rng = np.random.default_rng(3)
    T, q, rh = 273.15 + 29.9 * rng.random(10), rng.random(10), np.zeros(10)
    loom.ekl.load(VAPOUR).vapour(T, q, rh)
    x = (T - 273.15) / 5.0
    j, f = x.astype(int), np.fmod(x, 1.0)
    np.testing.assert_allclose(rh, q / (es[j] * (1 - f) + es[j + 1] * f), rtol=1e-14)


def test_scalars_of_every_kind_from_python_numbers():
    k = loom.ekl.load(SCALARS).relax
    x, r = np.linspace(-1, 1, 8, dtype=np.float32), np.zeros(8, np.float32)
    k(1.5, 3, True, x, r)
    np.testing.assert_array_equal(r, np.float32(1.5) * x + np.float32(3))
    k(a=np.float32(2), n=np.int64(-1), on=np.bool_(False), x=x, r=r)
    np.testing.assert_array_equal(r, x)


@pytest.mark.parametrize("args, message", [
    ((1e300, 3, True), "1e+300 is outside the range of f32"),
    ((1.5, 3.0, True), "'n' of kernel relax: expected an integer for index, got 3.0"),
    ((1.5, 2 ** 63, True), "does not fit in index"),
    ((True, 3, True), "expected a number for f32, got the bool True"),
    ((1.5, 3, 1), "'on' of kernel relax: expected a bool for bool, got 1"),
    ((1.5, "3", True), "'n' of kernel relax: expected an integer for index, got '3'"),
    ((1.5, 3, True, [1.0]), "'x' of kernel relax: expected a C-contiguous numpy array"),
])
def test_bad_scalars_are_refused_at_the_parameter(args, message):
    k = loom.ekl.load(SCALARS).relax
    with pytest.raises(LoomError, match=re.escape(message)) as info:
        k(*args, *[np.zeros(8, np.float32)][:4 - len(args)], np.zeros(8, np.float32))
    assert info.value.line == 2


@pytest.mark.parametrize("expr, grouped", [
    ("a - b + c", "'a - b \\+ c' groups as 'a - \\(b \\+ c\\)'"),
    ("a / b * c", "'a / b \\* c' groups as 'a / \\(b \\* c\\)'"),
    ("a * b % c", "'a \\* b % c' groups as"),
    ("a % b / c", "'a % b / c' groups as"),
])
def test_a_chain_that_groups_to_the_right_warns_at_its_place(expr, grouped):
    """The u[L] - 2u + u[R] stencil ran as u[L] - (2u + u[R]) with no word: messner's grammar groups
    every binary operator to the right. loom keeps that reading and now warns where it differs."""
    src = f"kernel k(a : f64, b : f64, c : f64, y : out& f64) {{\n    out y = {expr};\n}}"
    with pytest.warns(LoomWarning, match=grouped) as record:
        loom.ekl.load(src)
    assert "<ekl>:2:19" in str(record[0].message)


@pytest.mark.parametrize("expr", ["(a - b) + c", "a - (b + c)", "a + b - c", "a * b * c", "a + b + c - a", "(a * b) / c",
                                  "a - b * c", "a ^ b ^ c", "a * b / c"])
def test_unambiguous_expressions_do_not_warn(expr):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loom.ekl.load(f"kernel k(a : f64, b : f64, c : f64, y : out& f64) {{ out y = {expr}; }}")


def test_messners_files_give_no_warning():
    from pathlib import Path

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (Path(__file__).parent / "messner").glob("*.ekl"):
            loom.ekl.load(f)


def test_cli_prints_the_warning_as_one_loom_line(tmp_path, capsys):
    f = tmp_path / "chain.ekl"
    f.write_text("kernel k(a : f64[3], b : f64[3], y : out& f64[3]) {\n  out y = a - b - a;\n}\n")
    assert main(["ekl", "run", str(f)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"loom: warning: {f}:2:17: 'a - b - c' groups as 'a - (b - c)'"), err
    assert "parser.py" not in err


def test_a_file_of_several_kernels_says_how_to_choose_one_in_each_front_door(tmp_path, capsys):
    """loom hls FILE.ekl on a file of several kernels said 'name one with --kernel', an option loom hls does
    not have (it takes FILE.ekl:NAME)."""
    f = tmp_path / "two.ekl"
    f.write_text("kernel a(x : f64[2], y : out& f64[2]) { out y = x; }\n"
                 "kernel b(x : f64[2], y : out& f64[2]) { out y = x; }\n")
    assert main(["hls", str(f)]) == 1
    assert "loom hls: FILE.ekl:NAME" in capsys.readouterr().err
    with pytest.raises(LoomError, match=r"module.kernel\(NAME\)"):
        loom.ekl.load(f).kernel()
