"""The pipeline graph behind an output Func: producers, consumers, order, schedule checks.

Calls to a Func that has a copy stage (``in_()``) are redirected to the copy for
every consumer except the copy itself, as Halide's ``Func::in()`` does; ``in_(g)`` makes a copy
only ``g`` reads (``Func::in(g)``).
"""

from __future__ import annotations

from loom.errors import LoomError

from .expr import RVar, Var
from .func import BoundaryFunc, Func, ImageParam
from .index_forms import Affine, NotAffine, to_affine
from .schedule import loop_roots, refuse_loops_of_inlined


def resolve(consumer, target):
    """The producer a call from ``consumer`` to ``target`` actually reads (an update's read of its own Func
    stays on that Func: the copy reads the finished values)."""
    if target is consumer or getattr(consumer, "wrapped", None) is target:  # a copy reads the Func it copies
        return target
    own = target.consumer_wrappers.get(id(consumer)) if isinstance(target, Func) else None
    if own is not None:  # in_(consumer): this consumer's own copy
        return own
    while isinstance(target, Func) and target.wrapper is not None and target.wrapper is not consumer:
        target = target.wrapper
    return target


class FuncGraph:
    """All Funcs and ImageParams reachable from ``output``, producers first."""

    def __init__(self, output: Func):
        if isinstance(output, Func) and getattr(output, "components", None):
            raise LoomError(f"is Tuple-valued ({len(output.components)} elements); this entry point realises one "
                            f"array: realise an element (a Func defined as {output.name}[...][k]) or call "
                            f"{output.name}.realize(size, inputs), which returns one array per element",
                            where=f"Func '{output.name}'")
        if not isinstance(output, Func) or not output.defined:
            raise LoomError(f"pipeline output must be a defined Func, got {output!r}")
        self.output = output
        self.funcs: list[Func] = []
        self.params: list[ImageParam] = []
        self.producers: dict[int, list] = {}
        self.consumers: dict[int, list] = {}
        self._visit(output, [])
        for f in self.funcs:
            for p in self.producers[id(f)]:
                self.consumers.setdefault(id(p), []).append(f)

    def _visit(self, f, stack):
        if isinstance(f, ImageParam):
            if f not in self.params:
                self.params.append(f)
            return
        if f in self.funcs:
            return
        if f in stack:
            raise LoomError(f"pipeline has a cycle through {[g.name for g in stack]}",
                            where=f"Func '{f.name}'")
        prods = []
        if isinstance(f, BoundaryFunc):
            prods.append(f.source)
        else:
            for d in f.definitions:
                for call in d.calls():
                    t = resolve(f, call.target)
                    if t is not f and t not in prods:
                        prods.append(t)
        self.producers[id(f)] = prods
        for p in prods:
            self._visit(p, stack + [f])
        self.funcs.append(f)

    def calls_in(self, f: Func, d):
        """(resolved target, Call) pairs in definition ``d`` of ``f``."""
        for call in d.calls():
            yield resolve(f, call.target), call

    def consumers_of(self, f):
        return self.consumers.get(id(f), [])

    def uses(self, consumer, producer) -> bool:
        """Whether ``consumer`` reads ``producer`` directly or through other Funcs."""
        seen, todo = set(), [consumer]
        while todo:
            g = todo.pop()
            for p in self.producers.get(id(g), []):
                if p is producer:
                    return True
                if id(p) not in seen:
                    seen.add(id(p))
                    todo.append(p)
        return False


def _loc(f, primitive):
    filename, line = f.schedule.locations.get(primitive, (None, None))
    return dict(filename=filename, line=line)


def loop_stage(g, v: str):
    """The definition of ``g`` (0: the pure one, k: update k - 1) that a ``compute_at(g, v)`` level is in: the
    pure definition when it has the loop ``v``, else the last update that has it (an RVar or a split of one, or
    any loop an update names; Halide resolves a LoopLevel to the last stage with that loop), None when none has."""
    if v in g.pure.schedule.loops:
        return 0
    for k in range(len(g.definitions) - 1, 0, -1):
        if v in g.definitions[k].schedule.loops:
            return k
    return None


def stage_label(k: int) -> str:
    return "the pure definition" if k == 0 else f"update {k - 1}"


def _loop_index(pipe, f, primitive, level):
    """(definition of the consumer the level is in, the loop's position in it, innermost first)."""
    g, v = level
    if g not in pipe.funcs:
        out = pipe.output
        levels = out.schedule.memory_levels
        hint = (f"; '{out.name}' is the fabric level of its iteration_order: realise or build its outermost level, "
                f"{out.name}.get_memory_level('{list(levels)[-1]}')" if len(levels) > 1 and out is next(iter(
                    levels.values())) else f"; realise or build a Func that consumes '{g.name}'")
        raise LoomError(f"{primitive}({g.name}, {v}): '{g.name}' is not part of the pipeline of '{out.name}'{hint}",
                        where=f"Func '{f.name}'", construct=primitive, **_loc(f, primitive))
    if not pipe.uses(g, f):
        raise LoomError(f"{primitive}({g.name}, {v}): '{g.name}' does not consume "
                        f"'{f.name}', so its loops are outside the consumer's loop nest",
                        where=f"Func '{f.name}'", construct=primitive, **_loc(f, primitive))
    k = loop_stage(g, v)
    if k is None:
        shown = "; ".join(f"{stage_label(j)}: {', '.join(d.schedule.loops)}" for j, d in enumerate(g.definitions))
        raise LoomError(f"{primitive}({g.name}, {v}): '{v}' is not a loop of consumer "
                        f"'{g.name}' (loops, innermost first: {shown})",
                        where=f"Func '{f.name}'", construct=primitive, **_loc(f, primitive))
    return k, g.definitions[k].schedule.loops.index(v)


def validate_schedules(pipe: FuncGraph):
    """Check the schedule choices that need the whole pipeline."""
    for f in pipe.funcs:
        fs = f.schedule
        c, s = fs.compute_level, fs.store_level
        if isinstance(c, tuple):
            ci = _loop_index(pipe, f, "compute_at", c)
        if isinstance(s, tuple):
            si = _loop_index(pipe, f, "store_at", s)
            if c is None:
                raise LoomError(f"store_at without compute_at; the Func is inlined",
                                where=f"Func '{f.name}'", construct="store_at", **_loc(f, "store_at"))
            if c == "root":
                raise LoomError(f"store_at({s[0].name}, {s[1]}) is inside its compute "
                                "level (compute_root)", where=f"Func '{f.name}'", construct="store_at",
                                **_loc(f, "store_at"))
            if c[0] is s[0] and si[0] != ci[0]:
                raise LoomError(f"store_at({s[0].name}, {s[1]}) is a loop of {stage_label(si[0])} of '{s[0].name}' "
                                f"and compute_at({c[0].name}, {c[1]}) one of {stage_label(ci[0])}: neither loop "
                                "nest encloses the other; store at a loop of the same definition, outside the "
                                "compute level, or at the root", where=f"Func '{f.name}'", construct="store_at",
                                **_loc(f, "store_at"))
            if c[0] is s[0] and si[1] < ci[1]:
                raise LoomError(f"store_at({s[0].name}, {s[1]}) is inside compute_at("
                                f"{c[0].name}, {c[1]}); storage must be at or outside the compute level",
                                where=f"Func '{f.name}'", construct="store_at", **_loc(f, "store_at"))
        for d in f.definitions:
            for name in d.schedule.unrolled:
                if name not in d.schedule.loops:
                    raise LoomError(f"unroll: unknown variable '{name}'",
                                    where=f"Func '{f.name}'", construct="unroll")
        _check_self_reads(f)
        _check_parallel_rvars(f)
    refuse_loops_of_inlined(pipe.funcs, pipe.output)


def refuse_racing_storage(pipe: FuncGraph):
    """Halide refuses a Func stored outside a parallel (or vectorized) loop but computed within it, at the
    loop or deeper inside a Func computed there: the loop's iterations would share one buffer ("a potential race
    condition"; loom runs parallel loops on threads). The loops around a Func's computation are those of its
    compute level's Func from that loop outwards, then of that Func's own compute level, up to its store level."""
    for f in pipe.funcs:
        store, level, direct = f.schedule.store_level, f.schedule.compute_level, True
        while isinstance(level, tuple):
            g, loop = level
            k = loop_stage(g, loop)
            if k is None:
                break
            sched = g.definitions[k].schedule
            loops = sched.loops  # innermost first
            stored_here = isinstance(store, tuple) and store[0] is g and store[1] in loops
            outer = loops.index(store[1]) if stored_here else len(loops)
            racing = set(sched.parallel) | set(sched.vectorized)
            for name in loops[loops.index(loop):outer]:
                if name in racing:
                    deeper = "" if direct else " (inside a Func computed there)"
                    raise LoomError(f"'{f.name}' is stored outside the parallel/vectorized loop over {g.name}.{name} "
                                    f"but computed within it{deeper}: a potential race condition (Halide refuses "
                                    f"it); store it at that loop or inside it (store_at({g.name}, {name}))",
                                    where=f"Func '{f.name}'", construct="store_at", **_loc(f, "store_at"))
            if stored_here:
                break
            level, direct = g.schedule.compute_level, False


def _check_self_reads(f: Func):
    """An update may read its own Func only at the pure Vars' own positions (no recursion across pure points)."""
    for d in f.updates:
        for call in d.calls():
            if call.target is not f:
                continue
            for i, (lhs, arg) in enumerate(zip(d.args, call.args)):
                if isinstance(lhs, Var) and not isinstance(lhs, RVar) and arg is not lhs and \
                        not (isinstance(arg, Var) and arg.name == lhs.name):
                    raise LoomError(f"update reads '{call!r}' but pure Var '{lhs.name}' "
                                    "must appear unchanged at the same position in self-references",
                                    where=f"Func '{f.name}'", filename=d.location[0], line=d.location[1])


def _check_parallel_rvars(f: Func):
    """``parallel`` over a loop of an RVar, as Halide allows it: only when two iterations cannot touch one point,
    i.e. an argument of the update's left-hand side is ``c * r + k`` (c != 0, no other variable) and every
    self-reference reads that argument unchanged (``f[r] = f[r] + g[r]``). A histogram (``f[h[r]] += 1``) or a
    scan (``f[r] = f[r - 1] + ...``) would race; Halide refuses both and so does loom."""
    for d in f.updates:
        for loop in d.schedule.parallel:
            for name in loop_roots(d.schedule, loop) & {r.name for r in d.rvars}:
                if not _rvar_writes_apart(f, d, name):
                    at = d.schedule.locations.get("parallel", d.location)
                    raise LoomError(
                        f"parallel({loop}): marking the RVar '{name}' parallel may race: two of its iterations "
                        "may write, or one write what another reads, the same point (Halide refuses this too; "
                        "an argument of the left-hand side must be c * r + k and self-references must read it "
                        "unchanged). Run it serially, or rfactor the reduction and parallelise the pure loop",
                        where=f"Func '{f.name}'", construct="parallel", filename=at[0], line=at[1])


def _rvar_writes_apart(f: Func, d, rvar: str) -> bool:
    """Whether distinct values of ``rvar`` write distinct points of ``f`` that no other iteration reads."""
    self_reads = [c for c in d.calls() if c.target is f]
    for i, lhs in enumerate(d.args):
        form = _affine_in(lhs, d)
        if form is None or set(form.terms) != {rvar} or not form.terms[rvar]:
            continue
        if all(_affine_in(c.args[i], d) == form for c in self_reads):
            return True
    return False


def _affine_in(e, d):
    """``e``'s affine form over the definition's Vars and RVars (None when it has none)."""
    env = {v.name: Affine.var(v.name) for v in (*d.args, *d.rvars) if isinstance(v, Var | RVar)}
    try:
        form = to_affine(e, env)
    except NotAffine:
        return None
    return form if isinstance(form, Affine) else None  # a floor division maps several points to one
