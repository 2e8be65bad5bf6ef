"""Guard-clause returns in helpers: ``if x > 0: return x`` followed by ``return -x``.

An inlined helper has no declared result types, so it cannot use the kernel's early-return flags
(``early_return.py``); its ``return`` must end its body or both arms of a final ``if``. The guard-clause style
that Python code is full of is that shape in disguise: the statements after an ``if`` whose arm always returns
run exactly when the other arm is taken. This AST rewrite moves them there::

    if c:                    if c:
        return a                 return a
    s                 ->     else:
    return b                     s
                                 return b

applied through nested ifs, so a chain of guards becomes a chain of final ifs. When both arms may fall through
(a guard nested in each), the rest is copied into both. Returns inside loops are left as they are (and refused,
naming the line). Statements after a return never run, as in Python, and are dropped. Nodes keep their source
locations.
"""

from __future__ import annotations

import ast
import copy


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Does every path through ``stmts`` end in a ``return`` (as the last statement of a final if/else)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and always_returns(last.body) and always_returns(last.orelse)


def may_return(stmts: list[ast.stmt]) -> bool:
    """Is there a ``return`` in ``stmts`` outside loops and nested functions (through if arms)?"""
    return any(isinstance(st, ast.Return) or (isinstance(st, ast.If) and (may_return(st.body)
                                                                          or may_return(st.orelse)))
               for st in stmts)


def fold_guard_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``stmts`` with the statements after each ``if`` that may return moved into its arms that do not always
    return (copied into both when both may fall through: ``if a: (if b: return) else: (if c: return)``)."""
    out: list[ast.stmt] = []
    for k, st in enumerate(stmts):
        if isinstance(st, ast.Return):
            out.append(st)
            return out  # statements after it never run, as in Python
        if not isinstance(st, ast.If):
            out.append(st)
            continue
        rest = stmts[k + 1 :]
        body, orelse = st.body, st.orelse
        moved = bool(rest) and (may_return(body) or may_return(orelse))
        if moved:
            if not always_returns(fold_guard_returns(body)):
                body = body + rest
                rest = copy.deepcopy(rest)  # the other arm gets its own nodes (with the same locations)
            if not always_returns(fold_guard_returns(orelse)):
                orelse = orelse + rest
        out.append(ast.copy_location(ast.If(test=st.test, body=fold_guard_returns(body),
                                            orelse=fold_guard_returns(orelse)), st))
        if moved or always_returns(out[-1:]):
            return out  # the rest now lives in the arms (or never runs)
    return out
