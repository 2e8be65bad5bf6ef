"""Static facts about kernel ASTs that the tracer needs before emitting a region."""

from __future__ import annotations

import ast


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names (re)bound by assignments in ``stmts``, nested blocks included, in first-seen order.

    For-loop targets are excluded: the tracer scopes induction variables to
    their loop.  Nested ``def`` names count (they bind a name).
    """
    seen: dict[str, None] = {}

    def targets(t: ast.expr):
        if isinstance(t, ast.Name):
            seen.setdefault(t.id, None)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
        elif isinstance(t, ast.Starred):
            targets(t.value)

    def walk(body: list[ast.stmt]):
        for s in body:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    targets(t)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                targets(s.target)
            elif isinstance(s, ast.FunctionDef):
                seen.setdefault(s.name, None)
            elif isinstance(s, (ast.For, ast.While)):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.If):
                walk(s.body)
                walk(s.orelse)

    walk(stmts)
    return list(seen)
