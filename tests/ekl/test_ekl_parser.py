"""EKL parser: the messner acceptance files parse; syntax errors are located with a caret."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.errors import LoomError, LoomWarning
from loom.frontends.ekl import syntax as S
from loom.frontends.ekl.lexer import tokenize
from loom.frontends.ekl.parser import parse, parse_file
from loom.frontends.ekl.source import Source

MESSNER = Path(__file__).parent / "messner"


def test_inverse_helmholtz_parses_to_the_expected_tree():
    program = parse_file(MESSNER / "inverse_helmholtz.ekl")
    (kernel,) = program.kernels()
    assert kernel.name == "inverse_helmholtz"
    assert [p.name for p in kernel.params] == ["S", "D", "u", "v"]
    v_type = kernel.params[3].type
    assert isinstance(v_type, S.RefType) and v_type.kind == "out"
    assert [e.value for e in v_type.pointee.extents] == [11, 11, 11]
    let_t, let_r, out_v = kernel.body
    assert [i.name for i in let_t.indices] == ["i", "j", "k"]
    assert isinstance(let_t.value, S.Reduce) and let_t.value.op == "+"
    assert [i.name for i in let_t.value.indices] == ["a", "b", "c"]
    # right-associative product of four subscripts (messner's grammar)
    body = let_t.value.body
    assert isinstance(body, S.Binary) and body.op == "*" and isinstance(body.lhs, S.Subscript)
    assert isinstance(body.rhs, S.Binary) and isinstance(body.rhs.rhs.rhs, S.Subscript)
    assert let_r.indices is None and isinstance(let_r.value, S.Binary)
    assert isinstance(out_v, S.Out) and out_v.name == "v"


def test_rrtmg_file_parses_every_construct():
    program = parse_file(MESSNER / "plugin_rrtmg_taumol_sw.ekl")
    kinds = {type(item).__name__ for item in program.items}
    assert kinds == {"TypeDef", "ConstDef", "StaticDef", "KernelDef"}
    statics = [item for item in program.items if isinstance(item, S.StaticDef)]
    assert [s.access for s in statics] == ["import"] * 4
    consts = {item.name: item.value for item in program.items if isinstance(item, S.ConstDef)}
    assert consts["N_x"].kind == "index" and consts["N_x"].value == 60
    assert consts["C_TINY"].value == 2.0**-51
    assert consts["p_surf"].value == 109663.32
    assert isinstance(consts["C_BND_TO_FLAV"], S.ArrayLiteral) and len(consts["C_BND_TO_FLAV"].items) == 2
    body = program.kernels()[0].body
    nodes = set()

    def walk(node):
        nodes.add(type(node).__name__)
        for value in vars(node).values():
            for child in value if isinstance(value, list) else [value]:
                if hasattr(child, "loc"):
                    walk(child)

    for stmt in body:
        walk(stmt)
    assert {"Reduce", "Ternary", "IfExpr", "Block", "InRef", "TypeOp", "Call", "Subscript"} <= nodes
    assert sum(isinstance(s, S.Out) for s in body) == 2


def test_number_literal_forms():
    kinds = [(t.kind, t.value) for t in tokenize(Source("_60 1.5 .25 1e3 1p-2 3P4 0x1.8p1 true"))][:-1]
    assert kinds == [("index", 60), ("number", 1.5), ("number", 0.25), ("number", 1000.0), ("number", 0.25),
                     ("number", 48.0), ("number", 3.0), ("kw", None)]


def test_comments_are_skipped():
    program = parse("// line\n/* block\n comment */ const N = _3; // tail\n")
    assert program.items[0].name == "N"


def test_precedence_and_associativity_follow_messner():
    # messner's Parser.yxx: binary operators are right-recursive (right-associative), '^' left-recursive
    with pytest.warns(LoomWarning, match="'a - b - c' groups as 'a - \\(b - c\\)'"):
        (kernel,) = parse("kernel k(a : f64) { out a = a - a - a * a ^ a ^ a; }").kernels()
    e = kernel.body[0].value
    assert e.op == "-" and isinstance(e.lhs, S.Name) and e.rhs.op == "-"
    product = e.rhs.rhs
    assert product.op == "*" and product.rhs.op == "^" and product.rhs.lhs.op == "^"
    with pytest.warns(LoomWarning, match="'a / b \\* c' groups as"):
        (kernel,) = parse("kernel k(a : f64) { out a = -a ^ a / a * a; }").kernels()
    e = kernel.body[0].value
    assert e.op == "/" and e.lhs.op == "-" and e.lhs.operand.op == "^" and e.rhs.op == "*"


@pytest.mark.parametrize(
    "text, line, column, expected",
    [
        ("kernel k(a : f64) { let x = a +; }", 1, 32, "expected an expression, found ';'"),
        ("kernel k(a : f64) {\n  let x = a\n  out a = x;\n}", 3, 3, "expected ';' after the statement"),
        ("kernel k(a : f64 { }", 1, 18, "expected ')' to close the kernel's parameter list"),
        ("const N = _3", 1, 13, "expected ';' after a constant definition, found end of file"),
        ("kernel k() { let x = <^ i< x; }", 1, 23, "expected a reduction operator"),
        ("kernel k() { let x = if a then b; }", 1, 33, "'if' needs an 'else'"),
        ("kernel k() { let x = 1 @ 2; }", 1, 24, "unknown character '@'"),
        ("kernel k() { /* never closed }", 1, 14, "unterminated comment"),
        ("foo", 1, 1, "at the top level"),
    ],
)
def test_syntax_errors_are_located(text, line, column, expected):
    with pytest.raises(LoomError) as info:
        parse(text, "bad.ekl")
    error = info.value
    assert (error.filename, error.line, error.column) == ("bad.ekl", line, column)
    assert expected in error.message
    caret_line = str(error).splitlines()[-1]
    assert caret_line.index("^") - 4 == column - 1
