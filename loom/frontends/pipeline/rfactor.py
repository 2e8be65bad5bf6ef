"""``rfactor``: split an associative reduction into an intermediate Func (Halide's ``Stage::rfactor``).

Matches an update ``f[xs] = f[xs] op g(r)`` with ``op`` one of ``+ * min max`` (associative and
commutative; integer ``+ *`` wrap, so any order gives the same bits); a ``where`` predicate ``p`` folds into
the term as ``select(p, g, identity)``. ``rfactor([(r.y, v)])`` produces

    intm[v, xs] = identity                      # 0, 1, the type's highest / lowest value
    intm[v, xs] = intm[v, xs] op g(r)[r.y := v] # over the RVars not preserved
    f[xs]       = f[xs] op intm[r.y', xs]       # the update now reduces over the preserved RVars

A left-hand side of expressions (a histogram ``h[inp[r.x, r.y]] += 1``) factors as Halide's does: the
intermediate has ``f``'s pure dimensions ``ds`` and updates ``intm[v, es[r.y := v]]``, and ``f``'s update becomes
``f[ds] = f[ds] op intm[r.y', ds]`` over all of ``f``'s points (those no point of the RDom hit combine the
identity).

and returns ``intm`` so it can be scheduled (``compute_root``, ``parallel``...). Floats are refused
for ``+ *``: reassociating them changes the rounding, so the result would not equal the original.
Anything else (a non-associative update, a term reading ``f``) is a LoomError
naming the Func and ``rfactor``.
"""

from __future__ import annotations

from loom.errors import LoomError

from .cpu_plan import substitute
from .expr import BinOp, Call, Const, RDom, RVar, Select, Var, walk
from .func import Definition, Func

_ASSOCIATIVE = ("add", "mul", "min", "max")


def _identity(op, t):
    if op == "add":
        return Const(0 if t.is_int else 0.0, t)
    if op == "mul":
        return Const(1 if t.is_int else 1.0, t)
    if t.is_float:
        return Const(float("inf") if op == "min" else float("-inf"), t)
    return Const(t.max_value if op == "min" else t.min_value, t)


def _named_like(rdom: RDom, rvars) -> RDom:
    """``rdom`` with its RVars named as ``rvars``: as in Halide, the intermediate's update still iterates ``r.x``
    and the factored update the preserved ``r.y``, so a schedule names them as written (``unroll(r.x)``)."""
    for new, old in zip(rdom.vars, rvars):
        new.name = old.name
    return rdom


def _same(a, b) -> bool:
    return repr(a) == repr(b)


def _predicate_into_term(value, self_call, t):
    """``select(p, f op g, f)`` (an update over an RDom with a ``where`` predicate) as ``f op select(p, g, id)``:
    the points where ``p`` fails combine the identity, so the intermediate and the factored update need no
    predicate of their own (``p`` is substituted like the term)."""
    if not (isinstance(value, Select) and _same(value.f, self_call)):
        return value
    combined = _predicate_into_term(value.t, self_call, t)  # several predicated RDoms nest their selects
    if not (isinstance(combined, BinOp) and combined.op in _ASSOCIATIVE):
        return value
    if _same(combined.a, self_call):
        term = combined.b
    elif _same(combined.b, self_call):
        term = combined.a
    else:
        return value
    return BinOp(combined.op, self_call, Select(value.cond, term, _identity(combined.op, t)), t)


def is_associative_update(d: Definition) -> bool:
    """Whether update ``d`` is ``f = f op term`` (op in + * min max, a where() predicate folded in, the term not
    reading ``f``): its RDom's points may then be visited in any order (Halide's reorder of RVars)."""
    f = d.func
    self_call = Call(f, d.args)
    value = _predicate_into_term(d.value, self_call, f.type)
    if not (isinstance(value, BinOp) and value.op in _ASSOCIATIVE):
        return False
    sides = [(value.a, value.b), (value.b, value.a)]
    terms = [term for own, term in sides if isinstance(own, Call) and _same(own, self_call)]
    return bool(terms) and not any(isinstance(e, Call) and e.target is f for e in walk(terms[0]))


def rfactor(stage, pairs, location=None) -> Func:
    d: Definition = stage._definition
    f: Func = d.func

    def fail(msg):
        filename, line = location or (None, None)
        return LoomError(f"rfactor: {msg}", filename=filename, line=line,
                         where=f"Func '{stage._owner_name}'", construct="rfactor")

    if isinstance(pairs, tuple) and len(pairs) == 2 and isinstance(pairs[0], RVar):
        pairs = [pairs]
    pairs = list(pairs)
    if not pairs or not all(isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], RVar)
                            and isinstance(p[1], Var) and not isinstance(p[1], RVar) for p in pairs):
        raise fail(f"takes (RVar, Var) pairs, got {pairs!r}")
    self_call = Call(f, d.args)
    value = _predicate_into_term(d.value, self_call, f.type)
    if not (isinstance(value, BinOp) and value.op in _ASSOCIATIVE):
        raise fail(f"'{value!r}' is not f[...] combined with + * min or max")
    if isinstance(value.a, Call) and value.a.target is f and _same(value.a, self_call):
        term = value.b
    elif isinstance(value.b, Call) and value.b.target is f and _same(value.b, self_call):
        term = value.a
    else:
        raise fail(f"'{value!r}' does not combine {self_call!r} with a term")
    if any(isinstance(e, Call) and e.target is f for e in walk(term)):
        raise fail(f"the term '{term!r}' reads '{f.name}' itself")
    if value.op in ("add", "mul") and f.type.is_float:
        raise fail(f"reassociating a {f.type.name} {'sum' if value.op == 'add' else 'product'} changes its "
                   "rounding; only integer + * and any min / max can be factored exactly")
    rvars = {r.name: r for r in d.rvars}
    for r, _ in pairs:
        if r.name not in rvars:
            raise fail(f"'{r.name}' is not an RVar of this update ({', '.join(rvars) or 'none'})")
    preserved = {r.name for r, _ in pairs}
    kept = [r for r in d.rvars if r.name not in preserved]
    pure_lhs = all(isinstance(a, Var) and not isinstance(a, RVar) for a in d.args)
    lhs = list(d.args) if pure_lhs else list(f.dims)  # a histogram's intermediate spans f's own dimensions
    new_vars = [v for _, v in pairs]
    if len({v.name for v in new_vars} | {a.name for a in lhs}) != len(new_vars) + len(lhs):
        raise fail("the new Vars must differ from each other and from the update's Vars")

    intm = Func(f"{f.name}_intm")
    dims = (*new_vars, *lhs)
    intm[dims] = _identity(value.op, f.type)
    subst = {r.name: v for r, v in pairs}
    if kept:
        inner = _named_like(RDom([(r.min, r.extent) for r in kept], name=f"{f.name}_intm_r"), kept)
        subst.update({r.name: inner[i] for i, r in enumerate(kept)})
    written = dims if pure_lhs else (*new_vars, *(substitute(a, subst) for a in d.args))
    intm[written] = BinOp(value.op, intm[written], substitute(term, subst), f.type)

    outer = _named_like(RDom([(r.min, r.extent) for r, _ in pairs], name=f"{f.name}_rf"), [r for r, _ in pairs])
    read = Call(intm, (*(outer[i] for i in range(len(pairs))), *lhs))
    own = self_call if pure_lhs else Call(f, tuple(lhs))
    f.definitions[d.index] = Definition(f, d.index, tuple(lhs), BinOp(value.op, own, read, f.type), d.location)
    stage._definition = f.definitions[d.index]
    return intm
