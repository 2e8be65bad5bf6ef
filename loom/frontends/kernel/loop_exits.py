"""``break`` and ``continue`` in kernel loops, rewritten on the AST into flags before the loop is traced.

scf.for has no early exit. A loop whose body (outside nested loops) breaks or continues is traced as::

    brk = False                          # only if it breaks
    for i in range(...):                 # a while loop: while not brk and (cond):
        cont = False                     # only if it continues
        <body: break -> brk = True, continue -> cont = True,
         the statements after one that may exit run under `if not brk and not cont:`>

so Python's semantics hold: nothing after a ``break`` runs. A ``while`` loop tests the flag in its condition. A
``for`` loop that breaks carries the flag's name in ``BREAK_FLAG`` on the rewritten node and is traced as an
``scf.while`` over its counter (``ControlFlowMixin._range_while``) whose condition is ``i < ub and not brk``:
it stops at the break, it does not count out the remaining iterations. A loop that only continues stays an
scf.for. The flags are ordinary i1 kernel variables (loop-carried, scf.if results) under names no kernel can spell
by accident.
"""

from __future__ import annotations

import ast

BREAK_FLAG = "loom_break_flag"  # attribute of a rewritten ast.For: the name of its break flag

_NESTED = (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def exits_of(body: list[ast.stmt]) -> tuple[bool, bool]:
    """(breaks, continues): does ``body`` leave its loop, not counting nested loops' own exits."""
    brk = cont = False
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break):
            brk = True
        elif isinstance(node, ast.Continue):
            cont = True
        elif not isinstance(node, _NESTED):
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return brk, cont


def break_flag(loop: ast.For | ast.While) -> str:
    """The name of the flag a break of ``loop`` sets (true after the loop if it broke)."""
    return f"loom__break_{loop.lineno}_{loop.col_offset}"


def rewrite_loop(loop: ast.For | ast.While) -> tuple[list[ast.stmt], ast.For | ast.While]:
    """(statements to run before the loop, the loop without break/continue)."""
    breaks, continues = exits_of(loop.body)
    tag = f"{loop.lineno}_{loop.col_offset}"
    brk = break_flag(loop) if breaks else None
    cont = f"loom__continue_{tag}" if continues else None
    body = _rewrite(loop.body, brk, cont)
    if cont:
        body = [_assign(cont, False, loop), *body]
    new = ast.For(target=loop.target, iter=loop.iter, body=body, orelse=loop.orelse, type_comment=None) \
        if isinstance(loop, ast.For) else ast.While(test=loop.test, body=body, orelse=loop.orelse)
    if isinstance(loop, ast.While) and brk:
        new.test = _at(ast.BoolOp(op=ast.And(), values=[_not_any([brk], loop), loop.test]), loop.test)
    if isinstance(loop, ast.For) and brk:
        setattr(new, BREAK_FLAG, brk)
    return ([_assign(brk, False, loop)] if brk else []), _at(new, loop)


def _rewrite(stmts: list[ast.stmt], brk: str | None, cont: str | None) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for k, s in enumerate(stmts):
        if isinstance(s, ast.Break):
            out.append(_assign(brk, True, s))
            return out  # the rest of the block is unreachable
        if isinstance(s, ast.Continue):
            out.append(_assign(cont, True, s))
            return out
        if isinstance(s, ast.If) and any(exits_of([s])):
            out.append(_at(ast.If(test=s.test, body=_rewrite(s.body, brk, cont) or [_at(ast.Pass(), s)],
                                  orelse=_rewrite(s.orelse, brk, cont)), s))
            rest = stmts[k + 1:]
            if rest:
                flags = [f for f in (brk, cont) if f]
                out.append(_at(ast.If(test=_not_any(flags, rest[0]), body=_rewrite(rest, brk, cont), orelse=[]),
                               rest[0]))
            return out
        out.append(s)
    return out


def _not_any(flags: list[str], where: ast.AST) -> ast.expr:
    tests = [_at(ast.UnaryOp(op=ast.Not(), operand=_at(ast.Name(id=f, ctx=ast.Load()), where)), where)
             for f in flags]
    return tests[0] if len(tests) == 1 else _at(ast.BoolOp(op=ast.And(), values=tests), where)


def _assign(name: str, value: bool, where: ast.AST) -> ast.stmt:
    target = _at(ast.Name(id=name, ctx=ast.Store()), where)
    return _at(ast.Assign(targets=[target], value=_at(ast.Constant(value=value), where), lineno=where.lineno), where)


def _at(node, where: ast.AST):
    return ast.fix_missing_locations(ast.copy_location(node, where))
