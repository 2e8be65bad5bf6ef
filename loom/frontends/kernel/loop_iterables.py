"""``for x in X``, ``for i, x in enumerate(X)`` and ``for x, y in zip(X, Y)`` over memrefs, rewritten on the AST
into a ``range`` loop before tracing::

    for i, (x, y) in enumerate(zip(X, Y)):   ->   for i in range(min(len(X), len(Y))):
        ...                                           x = X[i]; y = Y[i]; ...

``X[i]`` of a matrix is its row (a view), so ``for row in A`` works as in numpy. Each iterable is evaluated once
per iteration (a memref expression is pure). ``zip`` stops at the shortest, as in Python.
"""

from __future__ import annotations

import ast


def rewrite_iteration(loop: ast.For) -> ast.For | None:
    """The equivalent range loop, or None if ``loop.iter`` is not a memref iteration form."""
    it, target = loop.iter, loop.target
    index_name = f"loom__index_{loop.lineno}_{loop.col_offset}"
    if _call_of(it, "enumerate", 1):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
            return None
        index_name, target, it = target.elts[0].id, target.elts[1], it.args[0]
    if _call_of(it, "zip", None):
        sources = list(it.args)
        if not (isinstance(target, ast.Tuple) and len(target.elts) == len(sources)) or not sources:
            return None
        targets = list(target.elts)
    elif isinstance(it, (ast.Name, ast.Attribute, ast.Subscript)):
        sources, targets = [it], [target]
    else:
        return None
    idx = _at(ast.Name(id=index_name, ctx=ast.Load()), loop)
    lengths = [_at(ast.Call(func=_name("len", loop), args=[s], keywords=[]), loop) for s in sources]
    length = lengths[0] if len(lengths) == 1 else _at(ast.Call(func=_name("min", loop), args=lengths, keywords=[]),
                                                      loop)
    binds = [_at(ast.Assign(targets=[t], value=_at(ast.Subscript(value=s, slice=idx, ctx=ast.Load()), s),
                            lineno=loop.lineno), t) for s, t in zip(sources, targets)]
    rng = _at(ast.Call(func=_name("range", loop), args=[length], keywords=[]), loop.iter)
    new = ast.For(target=_at(ast.Name(id=index_name, ctx=ast.Store()), loop), iter=rng, body=[*binds, *loop.body],
                  orelse=loop.orelse, type_comment=None)
    return _at(new, loop)


def _call_of(node, name: str, nargs: int | None) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
            and not node.keywords and (nargs is None or len(node.args) == nargs))


def _name(name: str, where: ast.AST) -> ast.Name:
    return _at(ast.Name(id=name, ctx=ast.Load()), where)


def _at(node, where: ast.AST):
    return ast.fix_missing_locations(ast.copy_location(node, where))
