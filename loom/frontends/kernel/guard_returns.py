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


# the rewrite may copy statements into both arms of an if: past this many AST nodes (per node of the helper,
# plus a floor) it stops copying, and the returns it leaves in place are refused at their line
_GROWTH, _FLOOR = 8, 2000


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Does every path through ``stmts`` reach a ``return`` (directly, or in both arms of an if)?"""
    return any(isinstance(st, ast.Return) or (isinstance(st, ast.If) and always_returns(st.body)
                                                and always_returns(st.orelse)) for st in stmts)


def may_return(stmts: list[ast.stmt]) -> bool:
    """Is there a ``return`` in ``stmts`` outside loops and nested functions (through if arms)?"""
    return any(isinstance(st, ast.Return) or (isinstance(st, ast.If) and (may_return(st.body)
                                                                          or may_return(st.orelse)))
               for st in stmts)


def _size(stmts: list[ast.stmt]) -> int:
    return sum(1 for st in stmts for _ in ast.walk(st))


def fold_guard_returns(stmts: list[ast.stmt], budget: list[int] | None = None) -> list[ast.stmt]:
    """``stmts`` with the statements after each ``if`` that may return moved into its arms that do not always
    return (copied into both when both may fall through: ``if a: (if b: return) else: (if c: return)``)."""
    if budget is None:
        budget = [_GROWTH * _size(stmts) + _FLOOR]
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
        into_body, into_else = not always_returns(body), not always_returns(orelse)
        moved = bool(rest) and (may_return(body) or may_return(orelse))
        if moved and into_body and into_else:  # both arms fall through: the rest is copied
            budget[0] -= _size(rest)
            moved = budget[0] >= 0
        if moved:
            if into_body:
                body = body + rest
                rest = copy.deepcopy(rest) if into_else else rest  # the other arm's own nodes, same locations
            if into_else:
                orelse = orelse + rest
        out.append(ast.copy_location(ast.If(test=st.test, body=fold_guard_returns(body, budget),
                                            orelse=fold_guard_returns(orelse, budget)), st))
        if moved or always_returns(out[-1:]):
            return out  # the rest now lives in the arms (or never runs)
    return out
