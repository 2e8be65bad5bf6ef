"""Data-dependent indices: which memref indices come from the data rather than from the loop structure.

``x[idx[k]]``, ``h[bin]`` with ``bin`` computed from a loaded value, ``a[j]`` with ``j`` a while loop's carried
value, ``data[k]`` with ``k`` running between two loaded bounds (CSR), ``a[k]`` with ``k`` a scalar parameter:
an index like these is only as good as the caller's data, and a bad one writes outside the array (heap
corruption, not an exception). Indices that move with a loop over ``range(n)`` of dims and scalar parameters
are not checked at each access (a check there costs +262% on a dynamic-shape stencil, see ``loom.backends.c``,
and 7.5x on ``x[i + off]``); where the loop's bounds come from a parameter and the access runs on every
iteration at the induction variable plus an invariant, it is checked once at the loop's entry (``entry_checks``).

``compile_module(..., check_gathers=True)`` (what ``@loom.kernel`` asks for) checks each data-dependent index of a
load or store against its dimension, and the slice of each subview placed by data (``row = a[idx[i]]``,
``x[s:s + 4]``) against its source, through the guarded entry of ``checks``. A parallel loop holding such a check
runs serially (a failed check's longjmp cannot leave an OpenMP region: ``emitter.guarded_inside``); one without
stays an OpenMP loop.
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

ACCESSES = ("memref.load", "memref.store", "affine.load", "affine.store")
VIEWS = ("memref.subview",)  # a view placed by data (``a[idx[i]]``, ``x[s:s + 4]``): its slice is checked
_LOADS = ("memref.load", "affine.load")
# loops whose first block arguments are induction variables fixed by their bound operands
_COUNTED = ("scf.for", "affine.for", "scf.parallel")


class DataIndices:
    """Memoised answers to "is this index value computed from data?" within one module.

    Data: loaded values, values carried by loops or yielded out of regions, call results, and induction
    variables of loops whose bounds are data. An integer parameter of the function (what Python passed, or a
    caller's value for a callee: ``put(a, k, v)`` with ``k = 9`` on 4 elements) counts too where the index does
    not move with a loop: ``a[k]`` is checked at the access; ``x[i + off]`` in ``for i in range(n)`` is not (a
    check in the loop would cost it its vectorization: 7.5x on a 4M-element shifted add) but at the loop's entry
    (``entry_checks``)."""

    def __init__(self) -> None:
        self._memo: dict[SSAValue, tuple[bool, bool, bool]] = {}

    def dependent(self, value: SSAValue) -> bool:
        data, param, moves = self._facts(value)
        return data or (param and not moves)

    def _facts(self, value: SSAValue) -> tuple[bool, bool, bool]:
        """(computed from data, from a scalar parameter, from a loop's induction variable)."""
        known = self._memo.get(value)
        if known is not None:
            return known
        self._memo[value] = (False, False, False)  # cycles through carried values: closed by the block-argument rule
        answer = self._compute(value)
        self._memo[value] = answer
        return answer

    def _compute(self, value: SSAValue) -> tuple[bool, bool, bool]:
        if isinstance(value.type, MemRefType):
            return False, False, False  # a view: its shape is checked where it is made
        if isinstance(value, BlockArgument):
            return self._block_argument(value)
        op = value.owner
        if not isinstance(op, Operation) or op.name in _LOADS or op.regions or op.name == "func.call":
            return True, False, False  # loaded, yielded out of a region, or returned by a call: data
        facts = [self._facts(o) for o in op.operands]
        return any(f[0] for f in facts), any(f[1] for f in facts), any(f[2] for f in facts)

    def _block_argument(self, arg: BlockArgument) -> tuple[bool, bool, bool]:
        block = arg.owner
        parent = block.parent_op() if isinstance(block, Block) else None
        if parent is None or parent.name == "func.func":
            return False, True, False  # a scalar parameter (memref ones were answered above)
        if parent.name == "scf.parallel" or (parent.name in _COUNTED and arg.index == 0):
            # an induction variable: data when its loop's bounds are (scf.for: lb, ub, step; otherwise every
            # operand, the carried values' initial ones included, which only errs towards checking)
            bounds = parent.operands[:3] if parent.name == "scf.for" else parent.operands
            facts = [self._facts(o) for o in bounds]
            return any(f[0] for f in facts), any(f[1] for f in facts), True
        return True, False, False  # loop-carried values (iter_args, while arguments)

    def entry_checks(self, loop: Operation, dim: int = 0) -> list[tuple[Operation, int, SSAValue | None]]:
        """Accesses run on every iteration of ``loop`` (an ``scf.for``, or dimension ``dim`` of an
        ``scf.parallel``, of constant positive step: directly in its body) whose index ``k`` is its induction
        variable, or that plus a loop-invariant value, and whose bounds come from a parameter (``for i in
        range(n): x[i]``): checked once at the loop's entry, at its first and last iteration, so the loop keeps
        its vectorization (and a parallel loop its threads: the checks are outside its region).
        (access, index position, added value)."""
        if loop.name == "scf.for":
            step = loop.operands[2]
        elif loop.name == "scf.parallel":
            step = loop.step[dim]  # type: ignore[attr-defined]
        else:
            return []
        if not _positive_constant(step):
            return []
        body = loop.regions[0].block
        iv = body.args[dim]
        out = []
        for op in body.ops:
            if op.name not in ("memref.load", "memref.store") or _inside(op.operands[0 if op.name == "memref.load"
                                                                                  else 1], loop):
                continue
            first = 1 if op.name == "memref.load" else 2
            for k, v in enumerate(op.operands[first:]):
                if self.dependent(v) or not self._facts(v)[1]:
                    continue  # checked at the access, or placed by dims and constants only
                added = _iv_plus(v, iv, loop)
                if added is not False:
                    out.append((op, k, added))
        return out

    def view_dependent(self, op: Operation) -> bool:
        """Does a subview's offset, size or stride come from data?"""
        return any(self.dependent(v) for v in op.operands[1:])

    def access_mask(self, op: Operation) -> list[bool]:
        """Per index operand of a load/store (its operands after the memref): computed from data?"""
        first = 1 if op.name in _LOADS else 2
        return [self.dependent(v) for v in op.operands[first:]]


def _positive_constant(value: SSAValue) -> bool:
    owner = value.owner
    attr = getattr(owner, "value", None) if getattr(owner, "name", "") == "arith.constant" else None
    data = getattr(attr, "value", None)
    return data is not None and isinstance(data.data, int) and data.data > 0


def _inside(value: SSAValue, loop: Operation) -> bool:
    """Is ``value`` defined inside ``loop`` (not invariant in it)?"""
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def _iv_plus(v: SSAValue, iv: SSAValue, loop: Operation):
    """``None`` if ``v`` is ``iv``; ``("+", w)`` / ``("-", w)`` if it is ``iv + w`` / ``iv - w`` with ``w``
    invariant in ``loop``; else False."""
    if v is iv:
        return None
    op = v.owner
    if isinstance(op, Operation) and op.name in ("arith.addi", "arith.subi"):
        a, b = op.operands
        if a is iv and not _inside(b, loop):
            return ("+" if op.name == "arith.addi" else "-", b)
        if b is iv and op.name == "arith.addi" and not _inside(a, loop):
            return ("+", a)
    return False


def has_gathers(module: ModuleOp) -> bool:
    """Does a load or store index with data (or a view place with it, or a loop check its accesses at entry)?"""
    accesses, views = [], []
    for op in module.walk():
        if op.name in ACCESSES:
            accesses.append(op)
        elif op.name in VIEWS:
            views.append(op)
    data = DataIndices()
    return (any(any(data.access_mask(op)) for op in accesses) or any(data.view_dependent(op) for op in views)
            or any(data.entry_checks(op, k) for op in module.walk() if op.name in ("scf.for", "scf.parallel")
                   for k in range(len(op.regions[0].block.args) if op.name == "scf.parallel" else 1)))
