"""Where the HLS pragmas go: loop pipelining and unrolling, and array partitioning from the accesses.

Loops (``scf.for``, ``affine.for``, each dimension of ``scf.parallel``, and ``scf.while``, whose trip
count is never known) get roles, outermost first: a loop whose nested loops all have constant trip counts and at most ``full_unroll``
iterations in all (none at all, for an innermost loop) is *pipelined* (``PIPELINE II=n``, plus
``UNROLL factor=u`` when ``unroll`` > 1), and every loop nested in it is unrolled completely
(``UNROLL``) -- a 3x3 window becomes nine parallel operations of one pipelined iteration. Other
loops are left to the tool and their nested loops are looked at in turn.

Arrays: a local buffer (``memref.alloc``/``alloca``) accessed in a pipelined loop is partitioned so
that the accesses of one pipelined iteration hit different banks. Each access's flattened index is
read as an affine form over SSA values (``index_cast``, ``addi``, ``subi``, ``muli`` by a constant,
``affine.apply``, affine maps); the unrolled loops' induction variables take every value of one
iteration, everything else is the iteration's common base. When the accesses of a loop share one
base, their offsets are known, and more than two of them are distinct (a block RAM has two ports),
the smallest cyclic factor ``f`` under which the offsets fall into different banks is chosen
(``cyclic factor=f``), or ``complete`` when ``f`` reaches the array's size. Data-dependent indices
or different bases leave the array alone (the tool then schedules the port conflicts).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from loom.core.affine import Affine
from loom.passes.loop_nests import constant_int

LOOP_OPS = ("scf.for", "affine.for", "scf.parallel", "scf.while")  # a while loop: an unknown trip count
MAX_COMBINATIONS = 4096  # offsets enumerated per pipelined iteration, beyond that no partitioning


@dataclass(frozen=True)
class PragmaOptions:
    ii: int | None = 1  # initiation interval of pipelined loops (None: the tool's choice)
    unroll: int = 1  # extra unroll factor of pipelined loops
    full_unroll: int = 16  # largest iteration count of a nest unrolled inside a pipelined loop
    partition: bool = True
    local_arguments: bool = False  # the function's array arguments are local copies (streamed interface)


@dataclass
class PragmaPlan:
    loops: dict[tuple[int, int], list[str]] = field(default_factory=dict)  # (id(op), dim) -> pragma bodies
    partitions: dict[SSAValue, str] = field(default_factory=dict)  # buffer -> "cyclic factor=4" / "complete"
    pipelined: list[tuple[Operation, int]] = field(default_factory=list)

    def for_loop(self, op: Operation, dim: int = 0) -> list[str]:
        return self.loops.get((id(op), dim), [])


@dataclass(frozen=True)
class _Level:
    """One loop dimension: an scf.for / affine.for, or dimension ``dim`` of an scf.parallel."""

    op: Operation
    dim: int = 0

    @property
    def iv(self) -> SSAValue | None:
        if self.op.name == "scf.while":
            return None
        return self.op.regions[0].blocks[0].args[self.dim]

    def bounds(self) -> tuple[int | None, int | None, int | None]:
        op = self.op
        if op.name == "scf.while":
            return None, None, None
        if op.name == "scf.for":
            return constant_int(op.operands[0]), constant_int(op.operands[1]), constant_int(op.operands[2])
        if op.name == "scf.parallel":
            return (constant_int(op.lowerBound[self.dim]), constant_int(op.upperBound[self.dim]),  # type: ignore
                    constant_int(op.step[self.dim]))  # type: ignore[attr-defined]
        step = op.properties["step"].value.data  # type: ignore[attr-defined]
        return (_constant_map(op.properties["lowerBoundMap"].data), _constant_map(op.properties["upperBoundMap"].data),
                step)

    def trips(self) -> int | None:
        lb, ub, step = self.bounds()
        if None in (lb, ub, step) or step <= 0:  # type: ignore[operator]
            return None
        return max(0, -(-(ub - lb) // step))  # type: ignore[operator]

    def children(self) -> list[_Level]:
        if self.op.name == "scf.parallel" and self.dim + 1 < len(self.op.lowerBound):  # type: ignore
            return [_Level(self.op, self.dim + 1)]
        return [level for region in self.op.regions for block in region.blocks for level in _levels_in(block.ops)]


def _constant_map(amap) -> int | None:
    if amap.num_dims or amap.num_symbols or len(amap.results) != 1:
        return None
    form = Affine.from_xdsl(amap.results[0])
    return form.const if form is not None and form.is_const else None


def _levels_in(ops) -> list[_Level]:
    """Outermost loop levels among ``ops``, looking through non-loop region ops (scf.if)."""
    out: list[_Level] = []
    for op in ops:
        if op.name in LOOP_OPS:
            out.append(_Level(op, 0))
        else:
            for region in op.regions:
                for block in region.blocks:
                    out.extend(_levels_in(block.ops))
    return out


def _work(level: _Level) -> int | None:
    """Iterations of the nest rooted at ``level`` (None: not constant)."""
    trips = level.trips()
    if trips is None:
        return None
    inner = _inner_work(level)
    return None if inner is None else trips * max(1, inner)


def _inner_work(level: _Level) -> int | None:
    total = 0
    for child in level.children():
        work = _work(child)
        if work is None:
            return None
        total += work
    return total


def plan_function(func: Operation, options: PragmaOptions) -> PragmaPlan:
    plan = PragmaPlan()
    _plan_levels(_levels_in(func.regions[0].blocks[0].ops), options, plan)
    if options.partition:
        _plan_partitions(func, plan, options)
    return plan


def _plan_levels(levels: list[_Level], options: PragmaOptions, plan: PragmaPlan) -> None:
    for level in levels:
        inner = _inner_work(level)
        if inner is not None and inner <= options.full_unroll:
            pragmas = ["PIPELINE" if options.ii is None else f"PIPELINE II={options.ii}"]
            if options.unroll > 1:
                pragmas.append(f"UNROLL factor={options.unroll}")
            plan.loops[(id(level.op), level.dim)] = pragmas
            plan.pipelined.append((level.op, level.dim))
            _unroll_all(level.children(), plan)
        else:
            _plan_levels(level.children(), options, plan)


def _unroll_all(levels: list[_Level], plan: PragmaPlan) -> None:
    for level in levels:
        plan.loops[(id(level.op), level.dim)] = ["UNROLL"]
        _unroll_all(level.children(), plan)


# ---- array partitioning ----------------------------------------------------------------------------

_ACCESSES = {"memref.load": 0, "memref.store": 1, "affine.load": 0, "affine.store": 1}


def _plan_partitions(func: Operation, plan: PragmaPlan, options: PragmaOptions) -> None:
    offsets: dict[SSAValue, list[set[int]]] = {}
    refused: set[SSAValue] = set()
    for op, dim in plan.pipelined:
        level = _Level(op, dim)
        varying = _unrolled_values(level, options.unroll)
        per_buffer: dict[SSAValue, tuple[set[Affine], set[int]]] = {}
        for access in _accesses_in(level):
            k = _ACCESSES[access.name]
            buffer = access.operands[k]
            if not _local(buffer, func, options):
                continue
            flat = _flat_index(access, k, buffer)
            if flat is None:
                refused.add(buffer)
                continue
            base = Affine({v: c for v, c in flat.terms.items() if v not in varying})
            own_ivs = set(level.op.regions[0].blocks[0].args)
            if any(_defined_inside(v, level.op) and v not in own_ivs for v in base.vars):
                refused.add(buffer)  # data-dependent index
                continue
            vs = [v for v in flat.terms if v in varying]
            combos = 1
            for v in vs:
                combos *= len(varying[v])
            if combos > MAX_COMBINATIONS:
                refused.add(buffer)
                continue
            bases, offs = per_buffer.setdefault(buffer, (set(), set()))
            bases.add(base)
            for values in itertools.product(*(varying[v] for v in vs)):
                offs.add(flat.const + sum(flat.coef(v) * x for v, x in zip(vs, values)))
        for buffer, (bases, offs) in per_buffer.items():
            if len(bases) > 1:
                refused.add(buffer)
            elif len(offs) > 2:
                offsets.setdefault(buffer, []).append(offs)
    for buffer, sets in offsets.items():
        if buffer in refused:
            continue
        size = _size(buffer)
        if size is None:
            continue
        factor = next((f for f in range(2, size) if all(len({o % f for o in s}) == len(s) for s in sets)), size)
        plan.partitions[buffer] = "complete" if factor >= size else f"cyclic factor={factor}"


def _local(buffer: SSAValue, func: Operation, options: PragmaOptions) -> bool:
    """Is ``buffer`` on-chip memory of this function: an allocation, or (streamed interface) an argument?"""
    owner = buffer.owner
    if isinstance(owner, Operation):
        return owner.name in ("memref.alloc", "memref.alloca")
    return options.local_arguments and isinstance(buffer, BlockArgument) and buffer.block is func.regions[0].blocks[0]


def _size(buffer: SSAValue) -> int | None:
    shape = buffer.type.get_shape()  # type: ignore[attr-defined]
    if any(d < 0 for d in shape):
        return None
    size = 1
    for d in shape:
        size *= d
    return size


def _unrolled_values(level: _Level, unroll: int) -> dict[SSAValue, list[int]]:
    """Induction variables that take several values in one pipelined iteration, and those values
    (the pipelined loop's own iv: offsets from its base, one per unrolled copy)."""
    lb, ub, step = level.bounds()
    out: dict[SSAValue, list[int]] = {}
    if unroll > 1 and level.iv is not None:
        out[level.iv] = [k * (step or 1) for k in range(unroll)]
    for child in level.children():
        _collect_unrolled(child, out)
    return out


def _collect_unrolled(level: _Level, out: dict[SSAValue, list[int]]) -> None:
    lb, ub, step = level.bounds()
    out[level.iv] = list(range(lb, ub, step))  # type: ignore[arg-type]  (constant: it is unrolled)
    for child in level.children():
        _collect_unrolled(child, out)


def _accesses_in(level: _Level):
    for op in level.op.walk():
        if op.name in _ACCESSES:
            yield op


def _defined_inside(value, root: Operation) -> bool:
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
    elif isinstance(value, SSAValue):
        owner = value.owner
    else:
        return False
    return owner is not None and (owner is root or root.is_ancestor(owner))  # type: ignore[arg-type]


def _flat_index(access: Operation, k: int, buffer: SSAValue) -> Affine | None:
    """The row-major flat index of a load/store into ``buffer``, as an affine form (None: not affine)."""
    shape = buffer.type.get_shape()  # type: ignore[attr-defined]
    indices: list[Affine | None] = [affine_of(v) for v in access.operands[k + 1:]]
    if access.name.startswith("affine."):
        amap = access.properties["map"].data  # type: ignore[attr-defined]
        results = []
        for expr in amap.results:
            form = Affine.from_xdsl(expr, symbol=lambda p: ("sym", p))
            if form is None or any(x is None for x in indices):
                return None
            env = {d: indices[d] for d in range(amap.num_dims)}
            env.update({("sym", p): indices[amap.num_dims + p] for p in range(amap.num_symbols)})
            results.append(form.substitute(env))
        indices = results
    if any(x is None for x in indices) or len(indices) != len(shape):
        return None
    flat = Affine.constant(0)
    stride = 1
    for index, size in zip(reversed(indices), reversed(shape)):
        flat = flat + index.scale(stride)  # type: ignore[union-attr]
        stride *= size
    return flat


def affine_of(value: SSAValue, depth: int = 0) -> Affine | None:
    """``value`` as a linear form over SSA values (opaque values are their own variable)."""
    if depth > 64:
        return Affine.var(value)
    owner = value.owner
    if not isinstance(owner, Operation):
        return Affine.var(value)
    name = owner.name
    if name == "arith.constant":
        attr = owner.properties.get("value") or owner.attributes.get("value")
        return Affine.constant(attr.value.data) if isinstance(attr, IntegerAttr) else None
    if name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui"):
        return affine_of(owner.operands[0], depth + 1)
    if name in ("arith.addi", "arith.subi", "arith.muli"):
        a, b = (affine_of(v, depth + 1) for v in owner.operands)
        if a is None or b is None:
            return None
        if name == "arith.addi":
            return a + b
        if name == "arith.subi":
            return a - b
        if b.is_const:
            return a.scale(b.const)
        if a.is_const:
            return b.scale(a.const)
        return Affine.var(value)
    if name == "affine.apply":
        amap = owner.properties["map"].data  # type: ignore[attr-defined]
        form = Affine.from_xdsl(amap.results[0], symbol=lambda p: ("sym", p))
        args = [affine_of(v, depth + 1) for v in owner.operands]
        if form is None or any(a is None for a in args):
            return Affine.var(value)
        env = {d: args[d] for d in range(amap.num_dims)}
        env.update({("sym", p): args[amap.num_dims + p] for p in range(amap.num_symbols)})
        return form.substitute(env)
    return Affine.var(value)
