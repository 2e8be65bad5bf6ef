"""The core affine form and map parser, checked against evaluation at random points and xDSL's own AffineMap."""

import random
import re

import pytest
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr, AffineMap

from loom.accel.kernels import NAMED_KERNELS, named_kernel
from loom.core.affine import Affine, LinearMap, parse_affine_map
from loom.errors import LoomError

VARS = ("a", "b", "c")


def random_form(rng: random.Random) -> Affine:
    return Affine({v: rng.randint(-4, 4) for v in rng.sample(VARS, rng.randint(0, 3))}, rng.randint(-9, 9))


def test_algebra_matches_evaluation_at_random_points():
    rng = random.Random(7)
    for _ in range(300):
        f, g = random_form(rng), random_form(rng)
        k = rng.randint(-5, 5)
        p = {v: rng.randint(-50, 50) for v in VARS}
        assert (f + g).evaluate(p) == f.evaluate(p) + g.evaluate(p)
        assert (f - g).evaluate(p) == f.evaluate(p) - g.evaluate(p)
        assert (-f).evaluate(p) == -f.evaluate(p)
        assert f.scale(k).evaluate(p) == k * f.evaluate(p)
        assert (f + 3).evaluate(p) == f.evaluate(p) + 3 and (3 - f).evaluate(p) == 3 - f.evaluate(p)
        # substitute a by g: evaluating the result = evaluating f where a takes g's value
        assert f.substitute({"a": g}).evaluate(p) == f.evaluate({**p, "a": g.evaluate(p)})
        assert all(c != 0 for c in (f + g).terms.values())


def test_equality_ignores_term_order_and_zero_terms():
    assert Affine({"a": 1, "b": 2}, 3) == Affine({"b": 2, "a": 1}, 3)
    assert hash(Affine({"a": 1, "b": 2})) == hash(Affine([("b", 2), ("a", 1)]))
    assert Affine({"a": 1}) - Affine.var("a") == Affine.constant(0)
    assert (Affine.var("a") - Affine.var("a")).is_const
    assert Affine.var("m").single_var == "m" and Affine({"m": 2}).single_var is None
    assert str(Affine([("oh", 2), ("fh", 1)], -1)) == "2 * oh + fh - 1"
    assert str(Affine({"k": -1})) == "-k" and str(Affine()) == "0"
    with pytest.raises(KeyError):
        Affine.var("a").evaluate({"b": 1})


def test_from_xdsl_to_xdsl_round_trip_against_xdsl_eval():
    rng = random.Random(11)
    n = 4
    for _ in range(200):
        f = Affine({d: rng.randint(-3, 3) for d in rng.sample(range(n), rng.randint(0, n))}, rng.randint(-5, 5))
        expr = f.to_xdsl()
        point = [rng.randint(-20, 20) for _ in range(n)]
        (value,) = AffineMap(n, 0, (expr,)).eval(point, [])
        assert value == f.evaluate(dict(enumerate(point)))
        assert Affine.from_xdsl(expr) == f


def test_from_xdsl_of_parsed_expressions():
    d0, d1, d2 = (AffineExpr.dimension(i) for i in range(3))
    assert Affine.from_xdsl(d0 * 2 + d1 + 3) == Affine({0: 2, 1: 1}, 3)
    assert Affine.from_xdsl(3 * (d0 + d2) - d1) == Affine({0: 3, 2: 3, 1: -1})
    assert Affine.from_xdsl(d0 % 4) is None
    assert Affine.from_xdsl(d0 // 2) is None
    assert Affine.from_xdsl(AffineBinaryOpExpr(AffineBinaryOpKind.Mul, d0, d1)) is None  # semi-affine
    assert Affine.from_xdsl(AffineExpr.symbol(0) + d0) is None
    assert Affine.from_xdsl(AffineExpr.symbol(0) + d0, symbol=lambda i: f"s{i}") == Affine({"s0": 1, 0: 1})


MAPS = [
    "(i, j) -> (i, j)", "(i, j) -> (i)", "(i, j) -> (j, i)", "(i, j) -> ()",
    "affine_map<(m, n, k) -> (m, k)>", "(b, oh, fh) -> (2 * oh + fh - 1, b)", "(x, y) -> (-x + 3*y, 4)",
    *(f"({', '.join(spec.dims)}) -> ({r})" for spec in NAMED_KERNELS.values() for r in spec.maps),
]


@pytest.mark.parametrize("text", MAPS)
def test_every_map_parses_and_matches_xdsl(text):
    from xdsl.context import Context
    from xdsl.parser import Parser

    m = parse_affine_map(text)
    assert isinstance(m, LinearMap)
    theirs = Parser(Context(), text).parse_affine_map() if not text.startswith("affine_map") else \
        Parser(Context(), text[len("affine_map<"):-1]).parse_affine_map()
    rng = random.Random(3)
    for _ in range(20):
        point = [rng.randint(-9, 9) for _ in m.dims]
        assert m.to_xdsl().eval(point, []) == theirs.eval(point, [])
        assert [r.evaluate(dict(zip(m.dims, point))) for r in m.results] == list(theirs.eval(point, []))
    assert parse_affine_map(str(m)) == m


def test_named_kernels_use_the_core_map():
    kernel, _ = named_kernel("conv_2d_nchw_fchw")
    assert str(kernel.indexing_maps[0].results[2]) == "oh + fh"
    assert all(isinstance(m, LinearMap) for m in kernel.indexing_maps)


@pytest.mark.parametrize("text, column, message", [
    ("(i, j) -> (i, k)", 15, "unknown dim 'k'"),
    ("(i, i) -> (i)", 5, "dim 'i' is listed twice"),
    ("(i, j) -> (i, j", 16, "expected ',' or ')'"),
    ("(i, j) -> (i, j) x", 18, "expected the end of the map but found 'x'"),
    ("(i, j) (i)", 8, "expected '->'"),
    ("(i) -> (i * )", 13, "expected an integer after '*'"),
    ("(i) -> (i floordiv 2)", 11, "expected ',' or ')'"),
])
def test_bad_text_names_the_column(text, column, message):
    with pytest.raises(LoomError, match=re.escape(message)) as e:
        parse_affine_map(text, where="maps[0]")
    assert e.value.column == column and e.value.where == "maps[0]"


def test_kernel_generic_builder_reports_the_column():
    from loom.frontends.kernel.linalg import parse_affine_map as kernel_parse

    assert kernel_parse("(i, j) -> (j, i + 1)") == AffineMap(2, 0, (AffineExpr.dimension(1),
                                                                    AffineExpr.dimension(0) + 1))
    with pytest.raises(LoomError, match="bad indexing map") as e:
        kernel_parse("(i, j) -> (i, q)")
    assert e.value.column == 15
