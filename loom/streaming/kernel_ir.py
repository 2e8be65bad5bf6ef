"""A stage's compute kernel as IR: the regions of its ``ubuf.kernel`` (arith / math ops).

``kernel_regions(acc, node, tables)`` emits what one firing of the stage computes,
from the pipeline's definitions (the stage's Func, with the Funcs inlined into it
and its fully unrolled reductions merged: update merging, thesis §4.4):

- ``init``: block arguments are the point's global coordinates (i32, one per stage
  dim) and one value per read port (``node.reads`` order); it yields the stage's
  value, or, for a stage whose reduction is iterated in time, the value before the
  first iteration.
- ``update`` (only for such a stage): arguments are the coordinates, the reduction
  loop counters (i32, innermost first), the partial sum, then the port values; it
  yields the partial sum after one iteration (its ``unroll(r, n)`` points merged).

Every read of a buffer becomes the argument of the read port with the same producer
and affine index; constant tables read at constant indices become constants, at other
indices ``ubuf.lookup``. Scalar semantics are those of the CPU path
(``loom.frontends.pipeline.cpu_scalar``), so the value simulator that evaluates
these regions and the C backend agree with ``evaluate`` bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import Block, Region, SSAValue

from loom.dialects.ubuf import LookupOp, YieldOp
from loom.errors import LoomError
from loom.frontends.pipeline.cpu_scalar import ScalarEmitter, const_int, constant, convert, ir_type
from loom.frontends.pipeline.expr import Var, walk
from loom.frontends.pipeline.func import Func, ImageParam
from loom.frontends.pipeline.graph import resolve
from loom.frontends.pipeline.param import Param
from loom.frontends.pipeline.types import Int32

from loom.frontends.pipeline.index_forms import Affine, NotAffine, to_affine
from .extract import Accelerator, StageNode, param_constants
from .muxed_reads import mux_guard, muxed_indices


class _Context:
    """One place an expression is emitted: SSA values and affine forms of its Vars/RVars, and ``self``."""

    def __init__(self, ssa: dict, forms: dict, self_func=None, self_value=None):
        self.ssa, self.forms = ssa, forms
        self.self_func, self.self_value = self_func, self_value


class _KernelBuilder:
    def __init__(self, acc: Accelerator, node: StageNode, tables: dict, ports: list[SSAValue]):
        self.acc, self.node, self.tables = acc, node, tables
        self.ports = {(r.producer, r.index): v for r, v in zip(node.reads, ports)}
        self.inlined: dict = {}

    def value(self, g: Func, ctx: _Context, defs) -> SSAValue:
        """g's value at the point of ``ctx`` after the definitions ``defs`` (pure first)."""
        v = None
        for d in defs:
            if d.is_pure:
                v = self.emit(d.value, ctx, g, None, g.type)
                continue
            v = self.apply_update(g, d, ctx, v, self.acc.reduction_points(g, d, self.node, own=g is self.node.source))
        return v

    def apply_update(self, g, d, ctx: _Context, v, points):
        for j, a in enumerate(d.args):
            if not (isinstance(a, Var) and a.name == g.dims[j].name):
                raise LoomError(f"update {d.index - 1} writes '{g.name}' at '{a!r}', not at its pure Vars; "
                                "the kernel computes one point", where=f"Func '{g.name}'")
        for point in itertools.product(*reversed(points)):
            ssa, forms = dict(ctx.ssa), dict(ctx.forms)
            for r, pv in zip(reversed(d.rvars), point):
                forms[r.name] = pv if isinstance(pv, Affine) else Affine.constant(pv)
                ssa[r.name] = self.affine_ssa(forms[r.name], ssa)
            v = self.emit(d.value, _Context(ssa, forms), g, v, g.type)
        return v

    @staticmethod
    def affine_ssa(form: Affine, ssa: dict) -> SSAValue:
        """An i32 value of ``form`` over the loop counters in ``ssa``."""
        out = const_int(form.const, i32)
        for var, c in form.terms.items():
            term = arith.MuliOp(ssa[var], const_int(c, i32)).result if c != 1 else ssa[var]
            out = arith.AddiOp(out, term).result
        return out

    def emit(self, expr, ctx: _Context, g, self_value, want) -> SSAValue:
        ctx = _Context(ctx.ssa, ctx.forms, g, self_value)
        env = dict(ctx.ssa)
        for p in walk(expr):
            if isinstance(p, Param) and p.key not in env:  # a configuration constant: its value when built
                if p.value is None:
                    raise LoomError(f"reads Param '{p.name}', which has no value; give it one (Param(..., value=v) "
                                    "or .set(v)) before building the design: the accelerator's kernels take it as "
                                    "a constant", where=f"Func '{g.name}'", construct="Param")
                env[p.key] = constant(p.value.item(), p.type)
        emitter = ScalarEmitter(env, lambda call, idx: self.load(call, idx, ctx))
        v = emitter.emit(expr)
        return convert(v, expr.type, want) if expr.type != want else v

    def load(self, call, idx, ctx: _Context) -> SSAValue:
        g = ctx.self_func
        target = resolve(g, call.target)
        if target is g:
            if ctx.self_value is None:
                raise LoomError(f"the pure definition of '{g.name}' reads itself", where=f"Func '{g.name}'")
            return ctx.self_value
        try:
            forms = tuple(to_affine(a, {**ctx.forms, **param_constants(call.args, g)}) for a in call.args)
        except NotAffine:
            forms = None
        if self.acc.is_constant(target):
            return self.lookup(target, forms, idx, call)
        if forms is None:
            return self.multiplexed(target, call, idx, ctx)
        return self.read_at(target, forms, idx, call)

    def read_at(self, target, forms, idx, call) -> SSAValue:
        """``target`` at the affine index ``forms`` (``idx``: its values): a read port, or an inlined Func."""
        key = (target.name, forms)
        if key in self.ports:
            return self.ports[key]
        if isinstance(target, Func) and target in self.node.kernel_funcs:
            if key not in self.inlined:
                ssa = {d.name: v for d, v in zip(target.dims, idx)}
                fctx = _Context(ssa, {d.name: f for d, f in zip(target.dims, forms)})
                self.inlined[key] = self.value(target, fctx, target.definitions)
            return self.inlined[key]
        raise LoomError(f"kernel reads '{call!r}', which has no read port", where=f"Func '{self.node.name}'")

    def multiplexed(self, target, call, idx, ctx: _Context) -> SSAValue:
        """A read at an index with few values (``muxed_reads``): the read at each, the one whose value the index
        has selected (the last one otherwise: the index's interval holds every value it takes)."""
        try:
            muxed, candidates = muxed_indices(call.args, {**ctx.forms, **param_constants(call.args, ctx.self_func)})
        except NotAffine:
            raise LoomError(f"kernel reads '{call!r}', which has no read port", where=f"Func '{self.node.name}'")
        out = None
        for forms in reversed(candidates):
            if set(mux_guard(target, muxed, forms)) & self.node.unselected:
                continue  # the tile never selects it: its ports were dropped (``Accelerator.for_regions``)
            at = [const_int(forms[j].const, i32) if j in muxed else v for j, v in enumerate(idx)]
            v = self.read_at(target, forms, at, call)
            if out is None:
                out = v
                continue
            hit = None
            for j in muxed:
                eq = arith.CmpiOp(idx[j], const_int(forms[j].const, idx[j].type), "eq").result
                hit = eq if hit is None else arith.AndIOp(hit, eq).result
            out = arith.SelectOp(hit, v, out).result
        return out

    def lookup(self, table: Func, forms, idx, call) -> SSAValue:
        contents = self.tables.get(table.name)
        if contents is None:
            raise LoomError(f"constant table '{table.name}' has no contents", where=f"Func '{self.node.name}'")
        if forms is not None and all(f.is_const for f in forms):
            mins, array = contents
            pos = tuple(f.const - m for f, m in zip(forms, mins))
            if not all(0 <= p < e for p, e in zip(pos, reversed(array.shape))):
                raise LoomError(f"reads constant table '{table.name}' at {tuple(f.const for f in forms)}, outside "
                                "its contents", where=f"Func '{self.node.name}'")
            return constant(array[tuple(reversed(pos))].item(), table.type)
        index_type = table.dims[0].type if isinstance(table, Func) else Int32  # a Buffer's indices are i32
        wide = [convert(v, a.type, index_type) if a.type != index_type else v for v, a in zip(idx, call.args)]
        return LookupOp(table.name, wide, ir_type(table.type)).result


def kernel_regions(acc: Accelerator, node: StageNode, tables: dict) -> tuple[Region, Region]:
    """The ``init`` and ``update`` regions of stage ``node`` (``update`` empty unless iterated in time).

    ``tables``: constant Func name -> (mins, numpy array) of its contents."""
    f = node.source
    port_types = [ir_type(_producer_type(acc, r.producer)) for r in node.reads]
    coords = [i32] * len(node.dims)
    timed = _time_update(acc, node)
    init_defs = f.definitions if timed is None else f.definitions[:timed.index]
    init = Block(arg_types=coords + port_types)
    with ImplicitBuilder(init):
        b = _KernelBuilder(acc, node, tables, list(init.args[len(coords):]))
        ctx = _Context({d: a for d, a in zip(node.dims, init.args)}, {d: Affine.var(d) for d in node.dims})
        YieldOp(b.value(f, ctx, init_defs))
    _drop_unused(init)
    if timed is None:
        return Region(init), Region()
    loops = [name for name, _ in node.time_reduction]
    upd = Block(arg_types=coords + [i32] * len(loops) + [ir_type(f.type)] + port_types)
    n = len(coords)
    with ImplicitBuilder(upd):
        b = _KernelBuilder(acc, node, tables, list(upd.args[n + len(loops) + 1:]))
        ssa = {d: a for d, a in zip(node.dims, upd.args)}
        ssa.update({loop: a for loop, a in zip(loops, upd.args[n:])})
        forms = {d: Affine.var(d) for d in node.dims}
        ctx = _Context(ssa, forms)
        points = acc.reduction_points(f, timed, node, own=True)
        YieldOp(b.apply_update(f, timed, ctx, upd.args[n + len(loops)], points))
    _drop_unused(upd)
    return Region(init), Region(upd)


def stored_init_update(acc: Accelerator, node: StageNode, tables: dict) -> tuple[Region, Region] | None:
    """A buffered reduction's init and merged update as two kernels, or None (no update, or one iterated in time).

    Clockwork gives a buffered stage's pure definition and its merged updates separate kernels (the thesis counts
    the initialization kernels, Table 6.6): the update reads the value the init kernel stored, so its first term
    is added to that value rather than folded into a constant. ``init`` is ``kernel_regions``' init with the pure
    definition alone; ``update``'s arguments are the coordinates, the stored value, then the port values. A
    reduction inlined into its consumer has no such split (it is folded into the consumer's kernel)."""
    f = node.source
    if not f.updates or _time_update(acc, node) is not None:
        return None
    port_types = [ir_type(_producer_type(acc, r.producer)) for r in node.reads]
    coords = [i32] * len(node.dims)
    init = Block(arg_types=coords + port_types)
    with ImplicitBuilder(init):
        b = _KernelBuilder(acc, node, tables, list(init.args[len(coords):]))
        ctx = _Context({d: a for d, a in zip(node.dims, init.args)}, {d: Affine.var(d) for d in node.dims})
        YieldOp(b.value(f, ctx, f.definitions[:1]))
    _drop_unused(init)
    upd = Block(arg_types=coords + [ir_type(f.type)] + port_types)
    n = len(coords)
    with ImplicitBuilder(upd):
        b = _KernelBuilder(acc, node, tables, list(upd.args[n + 1:]))
        ctx = _Context({d: a for d, a in zip(node.dims, upd.args)}, {d: Affine.var(d) for d in node.dims})
        v = upd.args[n]
        for d in f.updates:
            v = b.apply_update(f, d, ctx, v, acc.reduction_points(f, d, node, own=True))
        YieldOp(v)
    _drop_unused(upd)
    return Region(init), Region(upd)


def _drop_unused(block: Block):
    """Erase ops whose results nothing uses (index arithmetic of reads that became ports); all are pure."""
    for op in reversed(list(block.ops)):
        if op is block.last_op:
            continue
        if all(not r.uses for r in op.results):
            block.erase_op(op)


def _time_update(acc: Accelerator, node: StageNode):
    """The update of the stage iterated in time (the last one; checked), or None."""
    if not node.time_reduction:
        return None
    f = node.source
    for d in f.updates:
        points = acc.reduction_points(f, d, node, own=True)
        if any(isinstance(p, Affine) for pts in points for p in pts):
            if d is not f.updates[-1]:
                raise LoomError(f"update {d.index - 1} iterates a reduction in time but later updates follow it; "
                                "the accelerator's kernel needs the iterated update last",
                                where=f"Func '{f.name}'", construct="unroll")
            return d
    return None


def _producer_type(acc: Accelerator, name: str):
    return acc.stages[name].source.type


def constant_contents(acc: Accelerator, regions: dict, realized: dict | None = None) -> dict:
    """Constant table contents (initialized memories): name -> (mins, numpy array), evaluated once."""
    from loom.frontends.pipeline.evaluate import realize_func

    out = {}
    done = dict(realized or {})
    for name, c in acc.constants.items():
        if isinstance(c.func, ImageParam):  # a Buffer: its array, from 0 in every dimension
            out[name] = ((0,) * c.func.dimensions, np.asarray(c.func.bound))
            continue
        region = regions.get(id(c.func))
        if region is None:
            continue
        if id(c.func) not in done:
            for g in acc.pipe.funcs:  # a table may be computed from other constant Funcs
                if acc.is_constant(g) and id(g) not in done and id(g) in regions:
                    realize_func(g, regions[id(g)], done)
        r = done[id(c.func)]
        out[name] = (tuple(r.mins), np.asarray(r.array))
    return out


__all__ = ["kernel_regions", "constant_contents", "stored_init_update"]
