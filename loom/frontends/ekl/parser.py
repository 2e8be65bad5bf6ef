"""Recursive-descent parser for EKL: text -> ``syntax.Program``.

Operator precedence, loosest first: ``c ? a : b`` and reductions ``<op i, j< body``;
``<:`` ``!>`` ``~``; ``||``; ``&&``; ``==`` ``~=``; ``<`` ``<=`` ``>=`` ``>``; ``+`` ``-``;
``#``; ``*`` ``/`` ``%``; unary ``-`` ``~``; ``^``; subscripts and calls.
Associativity is messner's grammar's (``lib/Target/EKL/Parser.yxx``): every binary
operator from ``||`` down to ``*`` ``/`` ``%`` is right-recursive there, so it
associates to the right (``a - b - c`` is ``a - (b - c)``, ``a / b * c`` is
``a / (b * c)``); ``^`` is left-recursive (``a ^ b ^ c`` is ``(a ^ b) ^ c``) and
binds tighter than unary minus (``-a ^ 2`` is ``-(a ^ 2)``). Parenthesise when
the other reading is meant: an unparenthesised chain whose grouping changes its value
(``a - b + c``, ``a / b * c``, ``a * b % c``) parses as messner does but gives a LoomWarning
at its second operator. In an operand position ``:``,
``*``, ``...`` and ``?`` are the identity, new-axis, ellipsis and unknown literals.
A syntax error is a LoomError at file:line:col with the source line and a caret.
"""

from __future__ import annotations

from pathlib import Path

from loom.frontends.ekl import syntax as S
from loom.frontends.ekl.lexer import Token, tokenize
from loom.frontends.ekl.source import Loc, Source

_BINARY_LEVELS = (("||",), ("&&",), ("==", "~="), ("<", "<=", ">=", ">"), ("+", "-"), ("#",), ("*", "/", "%"))
# (first, next) operator pairs of one level whose right grouping differs in value from the left-to-right one;
# a * b / c is left out: both groupings are the same real number (messner's RRTMG file writes 0.01 * p / T)
_REGROUPED = {("-", "+"), ("-", "-"), ("/", "*"), ("/", "/"), ("/", "%"), ("%", "*"), ("%", "/"), ("%", "%"),
              ("*", "%")}
_STMT_START = ("let", "out", "type", "const")


def _describe(tok: Token) -> str:
    return "end of file" if tok.kind == "end" else f"'{tok.text}'"


class _Parser:
    def __init__(self, source: Source):
        self.tokens = tokenize(source)
        self.pos = 0
        self.chained: set[int] = set()  # ids of Binary nodes continuing an unparenthesised chain

    # ---- token helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def at(self, *texts: str) -> bool:
        t = self.tok
        return t.kind in ("op", "kw") and t.text in texts

    def advance(self) -> Token:
        t = self.tok
        if t.kind != "end":
            self.pos += 1
        return t

    def accept(self, text: str) -> Token | None:
        return self.advance() if self.at(text) else None

    def expect(self, text: str, context: str) -> Token:
        if not self.at(text):
            raise self.tok.loc.error(f"expected '{text}' {context}, found {_describe(self.tok)}")
        return self.advance()

    def ident(self, context: str) -> Token:
        if self.tok.kind != "id":
            raise self.tok.loc.error(f"expected a name {context}, found {_describe(self.tok)}")
        return self.advance()

    # ---- top level
    def program(self) -> S.Program:
        items = []
        while self.tok.kind != "end":
            loc = self.tok.loc
            if self.accept("type"):
                items.append(self.type_def(loc))
                self.expect(";", "after a type definition")
            elif self.accept("const"):
                items.append(self.const_def(loc))
                self.expect(";", "after a constant definition")
            elif self.accept("static"):
                items.append(self.static_def(loc))
                self.expect(";", "after a static definition")
            elif self.accept("kernel"):
                items.append(self.kernel_def(loc))
            elif self.accept(";"):
                continue
            else:
                raise loc.error(
                    f"expected 'type', 'const', 'static' or 'kernel' at the top level, found {_describe(self.tok)}"
                )
        return S.Program(items)

    def type_def(self, loc: Loc) -> S.TypeDef:
        name = self.ident("after 'type'")
        self.expect("=", f"after 'type {name.text}'")
        return S.TypeDef(loc, name.text, self.type_expr())

    def const_def(self, loc: Loc) -> S.ConstDef:
        name = self.ident("after 'const'")
        self.expect("=", f"after 'const {name.text}'")
        return S.ConstDef(loc, name.text, self.expr())

    def static_def(self, loc: Loc) -> S.StaticDef:
        access = "local"
        for word in ("local", "import", "export"):
            if self.accept(word):
                access = word
        name = self.ident("in a static definition")
        type_ = self.type_expr() if self.accept(":") else None
        init = self.expr() if self.accept("=") else None
        return S.StaticDef(loc, access, name.text, type_, init)

    def kernel_def(self, loc: Loc) -> S.KernelDef:
        name = self.ident("after 'kernel'")
        self.expect("(", f"after 'kernel {name.text}'")
        params = self.arg_decls(")")
        self.expect(")", "to close the kernel's parameter list")
        self.expect("{", "to open the kernel body")
        body = []
        while not self.at("}"):
            if self.tok.kind == "end":
                raise self.tok.loc.error(f"expected '}}' to close kernel '{name.text}', found end of file")
            stmt = self.stmt()
            if stmt is not None:
                body.append(stmt)
        self.advance()
        return S.KernelDef(loc, name.text, params, body)

    def arg_decls(self, closer: str) -> list[S.ArgDecl]:
        decls: list[S.ArgDecl] = []
        if self.at(closer):
            return decls
        while True:
            name = self.ident("in a declaration list")
            type_ = self.type_expr() if self.accept(":") else None
            decls.append(S.ArgDecl(name.loc, name.text, type_))
            if not self.accept(","):
                return decls

    # ---- statements
    def stmt(self):
        loc = self.tok.loc
        if self.accept(";"):
            return None
        if self.accept("let"):
            node = self.let_or_out(loc, is_let=True)
        elif self.accept("out"):
            node = self.let_or_out(loc, is_let=False)
        elif self.accept("type"):
            node = self.type_def(loc)
        elif self.accept("const"):
            node = self.const_def(loc)
        else:
            raise loc.error(f"expected a statement ('let', 'out', 'type' or 'const'), found {_describe(self.tok)}")
        self.expect(";", "after the statement")
        return node

    def let_or_out(self, loc: Loc, is_let: bool):
        name = self.ident("after 'let'" if is_let else "after 'out'")
        indices = None
        if self.accept("["):
            indices = self.arg_decls("]")
            self.expect("]", "to close the index list")
        type_ = None
        if is_let and self.accept(":"):
            type_ = self.type_expr()
        self.expect("=", f"after '{'let' if is_let else 'out'} {name.text}'")
        value = self.expr()
        if is_let:
            return S.Let(loc, name.text, indices, type_, value)
        return S.Out(loc, name.text, indices, value)

    # ---- types
    def type_expr(self) -> S.TypeExpr:
        loc = self.tok.loc
        kind = None
        if self.accept("&"):
            kind = "in"
        elif self.at("in", "out", "inout") and self.peek().kind == "op" and self.peek().text == "&":
            kind = self.advance().text
            self.advance()
        inner = self.type_expr0()
        return S.RefType(loc, kind, inner) if kind else inner

    def type_expr0(self):
        loc = self.tok.loc
        if self.tok.kind == "id":
            scalar = S.NamedType(loc, self.advance().text)
        elif self.tok.kind == "index":
            scalar = S.BoundedIndexType(loc, self.advance().value)
        elif self.accept("?"):
            scalar = S.ErrorType(loc)
        else:
            raise loc.error(f"expected a type, found {_describe(self.tok)}")
        if self.accept("["):
            extents = self.expr_list("]")
            self.expect("]", "to close the extents of an array type")
            return S.ArrayType(loc, scalar, extents)
        return scalar

    # ---- expressions
    def expr_list(self, closer: str) -> list[S.Expr]:
        items = [self.expr()]
        while self.accept(","):
            items.append(self.expr())
        if not self.at(closer):
            raise self.tok.loc.error(f"expected ',' or '{closer}' in a list, found {_describe(self.tok)}")
        return items

    def expr(self) -> S.Expr:
        loc = self.tok.loc
        if self.accept("if"):
            cond = self.expr0()
            self.expect("then", "after the condition of 'if'")
            if_true = self.expr0()
            self.expect("else", "after the 'then' branch ('if' needs an 'else')")
            return S.IfExpr(loc, cond, if_true, self.expr0())
        if self.accept("in"):
            return S.InRef(loc, self.expr0())
        return self.expr0()

    def expr0(self) -> S.Expr:
        loc = self.tok.loc
        if self.accept("["):
            items = self.expr_list("]")
            self.advance()
            return S.ArrayLiteral(loc, items)
        return self.expr1()

    def expr1(self) -> S.Expr:
        loc = self.tok.loc
        if self.accept("<"):
            return self.reduce(loc)
        value = self.expr2()
        if self.accept("?"):
            if_true = self.expr2()
            self.expect(":", "between the branches of '?'")
            return S.Ternary(loc, value, if_true, self.expr2())
        return value

    def reduce(self, loc: Loc) -> S.Reduce:
        if self.at("+", "*"):
            op = self.advance().text
        elif self.tok.kind == "id" and self.tok.text in ("min", "max"):
            op = self.advance().text
        else:
            raise self.tok.loc.error(
                f"expected a reduction operator ('+', '*', 'min' or 'max') after '<', found {_describe(self.tok)}"
            )
        indices = self.arg_decls("<")
        if not indices:
            raise self.tok.loc.error("a reduction needs at least one index: '<+ i, j< expr'")
        self.expect("<", "to close the reduction's index list")
        return S.Reduce(loc, op, indices, self.expr2())

    def expr2(self) -> S.Expr:
        value = self.binary(0)
        loc = self.tok.loc
        if self.at("<:", "!>"):
            op = self.advance().text
            return S.TypeOp(loc, op, value, self.type_expr())
        if self.accept("~"):
            self.expect("[", "after '~' (reshape takes '[extents]')")
            extents = self.expr_list("]")
            self.advance()
            return S.Reshape(loc, value, extents)
        return value

    def binary(self, level: int) -> S.Expr:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        lhs = self.binary(level + 1)
        if self.at(*_BINARY_LEVELS[level]):
            op = self.advance()
            rhs = self.binary(level)  # right-recursive, as in messner
            if id(rhs) in self.chained and (op.text, rhs.op) in _REGROUPED:
                rhs.loc.warn(f"'a {op.text} b {rhs.op} c' groups as 'a {op.text} (b {rhs.op} c)' in EKL (its "
                             f"binary operators associate to the right, as messner's grammar does); write "
                             f"'(a {op.text} b) {rhs.op} c' for the left-to-right reading, or parenthesise "
                             "'(b ... c)' to keep this one")
            node = S.Binary(op.loc, op.text, lhs, rhs)
            self.chained.add(id(node))
            return node
        return lhs

    def unary(self) -> S.Expr:
        loc = self.tok.loc
        if self.at("-", "~"):
            op = self.advance().text
            return S.Unary(loc, op, self.power())
        return self.power()

    def power(self) -> S.Expr:
        lhs = self.postfix()
        while self.at("^"):
            op = self.advance()
            lhs = S.Binary(op.loc, "^", lhs, self.postfix())
        return lhs

    def postfix(self) -> S.Expr:
        tok = self.tok
        if tok.kind == "id" and self.peek().kind == "op" and self.peek().text == "(":
            self.advance()
            self.advance()
            args = [] if self.at(")") else self.expr_list(")")
            self.advance()
            return S.Call(tok.loc, tok.text, args)
        value = self.primary()
        while self.at("["):
            loc = self.advance().loc
            subs = self.expr_list("]")
            self.advance()
            value = S.Subscript(loc, value, subs)
        return value

    def primary(self) -> S.Expr:
        tok = self.tok
        loc = tok.loc
        if tok.kind in ("index", "number", "string"):
            self.advance()
            return S.Literal(loc, tok.kind, tok.value)
        if tok.kind == "kw" and tok.text in ("true", "false"):
            self.advance()
            return S.Literal(loc, "bool", tok.text == "true")
        if tok.kind == "id":
            self.advance()
            return S.Name(loc, tok.text)
        for text, kind in ((":", "identity"), ("*", "extent"), ("...", "ellipsis"), ("?", "error")):
            if self.accept(text):
                return S.Literal(loc, kind)
        if self.accept("("):
            value = self.expr()
            self.expect(")", "to close '('")
            self.chained.discard(id(value))  # a parenthesised chain is grouped as written
            return value
        if self.accept("{"):
            stmts = []
            while self.at(*_STMT_START) or self.at(";"):
                stmt = self.stmt()
                if stmt is not None:
                    stmts.append(stmt)
            value = self.expr()
            self.expect("}", "to close the block expression")
            return S.Block(loc, stmts, value)
        raise loc.error(f"expected an expression, found {_describe(tok)}")


def parse(text: str, filename: str = "<ekl>") -> S.Program:
    """Parse EKL source text; ``filename`` is used in error locations."""
    return _Parser(Source(text, filename)).program()


def parse_file(path: str | Path) -> S.Program:
    path = Path(path)
    return parse(path.read_text(), str(path))
