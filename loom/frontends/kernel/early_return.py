"""``return`` inside a loop or before the end of a kernel, rewritten on the AST before tracing.

scf regions cannot leave the function. A kernel whose returns are not all in tail position is traced as::

    rv0 = <zero of the declared result type>; done = False
    ... return e  ->  rv0 = e; done = True; break      (break only inside a loop)
    ... after a loop that may return: `if done: break` (in an enclosing loop), and the statements after a
        statement that may return run under `if not done:`
    return rv0

``break`` is then rewritten by ``loop_exits``. The result types must be known before the body is traced: the
kernel declares them (``-> Index``); a kernel without the annotation that returns from a loop is refused.
"""

from __future__ import annotations

import ast

DONE = "loom__returned"


def result_name(i: int) -> str:
    return f"loom__result{i}"


def needs_rewrite(body: list[ast.stmt]) -> bool:
    """Is some return not in tail position (inside a loop, or followed by more statements)?"""
    def tail_ok(stmts: list[ast.stmt]) -> bool:
        for k, s in enumerate(stmts):
            last = k == len(stmts) - 1
            if isinstance(s, ast.Return) and not last:
                return False
            if isinstance(s, (ast.For, ast.While)) and _returns(s.body + s.orelse):
                return False
            if isinstance(s, ast.If):
                if not last and _returns([s]):
                    return False
                if not (tail_ok(s.body) and tail_ok(s.orelse)):
                    return False
        return True

    return not tail_ok(body)


def return_in_parallel(stmts: list[ast.stmt]) -> ast.Return | None:
    """A return inside a ``for ... in parallel(...)`` loop (spelled ``parallel`` or ``loom.parallel``), if any."""
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            f = node.iter.func
            if (isinstance(f, ast.Name) and f.id == "parallel") or (isinstance(f, ast.Attribute)
                                                                    and f.attr == "parallel"):
                found = first_return(node.body)
                if found is not None:
                    return found
    return None


def ends_with_return(stmts: list[ast.stmt]) -> bool:
    """Does every path through ``stmts`` end with a return (its last statement, or both arms of a final if)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and ends_with_return(last.body) and ends_with_return(last.orelse)


def rewrite(body: list[ast.stmt], n_results: int, where: ast.AST) -> list[ast.stmt]:
    """The body with every return turned into assignments and a final ``return`` of the results."""
    out = _block(body, n_results, in_loop=False)
    results = [_name(result_name(i), where) for i in range(n_results)]
    value = None if not results else results[0] if len(results) == 1 else _at(ast.Tuple(elts=results,
                                                                                      ctx=ast.Load()), where)
    return [*out, _at(ast.Return(value=value), out[-1] if out else where)]


def _block(stmts: list[ast.stmt], n: int, in_loop: bool) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for k, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            out += _assign_results(s, n)
            out.append(_assign(DONE, True, s))
            if in_loop:
                out.append(_at(ast.Break(), s))
            return out  # the rest is unreachable
        if not _returns([s]):
            out.append(s)
            continue
        if isinstance(s, ast.If):
            out.append(_at(ast.If(test=s.test, body=_block(s.body, n, in_loop) or [_at(ast.Pass(), s)],
                                  orelse=_block(s.orelse, n, in_loop)), s))
        else:  # a loop that may return: leave it, and every loop around it
            loop = s.__class__(**{f: getattr(s, f) for f in s._fields})
            loop.body = _block(s.body, n, in_loop=True)
            out.append(_at(loop, s))
            if in_loop:
                out.append(_at(ast.If(test=_name(DONE, s), body=[_at(ast.Break(), s)], orelse=[]), s))
        rest = stmts[k + 1:]
        if rest:
            test = _at(ast.UnaryOp(op=ast.Not(), operand=_name(DONE, rest[0])), rest[0])
            out.append(_at(ast.If(test=test, body=_block(rest, n, in_loop), orelse=[]), rest[0]))
        return out
    return out


def _assign_results(ret: ast.Return, n: int) -> list[ast.stmt]:
    if ret.value is None or n == 0:
        return []
    targets = [_at(ast.Name(id=result_name(i), ctx=ast.Store()), ret) for i in range(n)]
    target = targets[0] if n == 1 else _at(ast.Tuple(elts=targets, ctx=ast.Store()), ret)
    return [_at(ast.Assign(targets=[target], value=ret.value, lineno=ret.lineno), ret)]


def _returns(stmts: list[ast.stmt]) -> bool:
    return first_return(stmts) is not None


def first_return(stmts: list[ast.stmt]) -> ast.Return | None:
    """The first return of these statements, not counting nested defs' (they return from themselves)."""
    found = returns_of(stmts)
    return found[0] if found else None


def returns_of(stmts: list[ast.stmt]) -> list[ast.Return]:
    out = []
    stack = list(reversed(stmts))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            out.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(reversed([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]))
    return out


def _assign(name: str, value: bool, where: ast.AST) -> ast.stmt:
    return _at(ast.Assign(targets=[_at(ast.Name(id=name, ctx=ast.Store()), where)],
                          value=_at(ast.Constant(value=value), where), lineno=where.lineno), where)


def _name(name: str, where: ast.AST) -> ast.Name:
    return _at(ast.Name(id=name, ctx=ast.Load()), where)


def _at(node, where: ast.AST):
    return ast.fix_missing_locations(ast.copy_location(node, where))
