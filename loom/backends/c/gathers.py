"""Which memref indices need a run-time check outside checked mode, and where it runs.

``x[idx[k]]``, ``h[bin]`` with ``bin`` computed from a loaded value, ``a[j]`` with ``j`` a while loop's carried
value, ``data[k]`` with ``k`` running between two loaded bounds (CSR), ``a[k]`` with ``k`` a scalar parameter:
an index like these is only as good as the caller's data, and is checked at the access. So is any index that is
not linear in its loop (``x[i * i]``). An index linear in its loop's induction variable (``x[i]``,
``y[2 * i + 1]``, ``y[i]`` over another array's dim) on an access run on every iteration is checked once at the
loop's entry, at the first and last iteration (``entry_checks``: a check per element cost +262% on a
dynamic-shape stencil and 7.5x on ``x[i + off]``); one under an ``if`` in an innermost loop is checked in a
second copy of the loop, taken only when the ifs do not keep it in range (``conditional_checks``,
``guard_bounds``). Indices of static shapes that are in range cost nothing (the emitter drops their checks).

``compile_module(..., check_gathers=True)`` (what ``@loom.kernel`` asks for) turns these checks on, with the
slice of each view placed by data or over a dynamic shape, through the guarded entry of ``checks``. A check in a
parallel loop is deferred to the end of its OpenMP region (``deferred``): the loop keeps its threads.
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
        self._entry: dict[tuple[Operation, int], list[tuple[Operation, int, SSAValue]]] = {}

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

    def entry_checks(self, loop: Operation, dim: int = 0) -> list[tuple[Operation, int, SSAValue]]:
        """Accesses run on every iteration of ``loop`` (an ``scf.for``, or dimension ``dim`` of an
        ``scf.parallel``, of constant positive step: directly in its body) whose index is linear in its induction
        variable with loop-invariant coefficients (``x[i]``, ``x[i + off]``, ``x[2 * i + 1]``, ``x[k]`` with ``k``
        invariant): such an index is monotonic over the loop, so it is checked once at the loop's entry, at the
        first and last iteration, and the loop keeps its vectorization (a parallel loop its threads: the checks
        are outside its region). Indices computed from data are checked at the access instead.
        (access, index position, index value)."""
        key = (loop, dim)
        known = self._entry.get(key)
        if known is not None:
            return known
        out: list[tuple[Operation, int, SSAValue]] = []
        self._entry[key] = out
        if loop.name == "scf.for":
            step = loop.operands[2]
        elif loop.name == "scf.parallel":
            step = loop.step[dim]  # type: ignore[attr-defined]
        else:
            return out
        if not _positive_constant(step):
            return out
        body = loop.regions[0].block
        iv = body.args[dim]
        for op in body.ops:
            if op.name not in ("memref.load", "memref.store") or _inside(op.operands[0 if op.name == "memref.load"
                                                                                  else 1], loop):
                continue
            out += self._linear_indices(op, iv, loop)
        return out

    def _linear_indices(self, op: Operation, iv: SSAValue, loop: Operation) -> list:
        """(op, position, index) of a load/store's indices not placed by data and linear in ``iv``."""
        first = 1 if op.name == "memref.load" else 2
        return [(op, k, v) for k, v in enumerate(op.operands[first:])
                if not self.dependent(v) and _degree(v, iv, loop) is not None]

    def conditional_checks(self, loop: Operation) -> list[tuple[Operation, int, SSAValue]]:
        """Accesses under an ``if`` in the body of an innermost ``scf.for`` of constant positive step, whose
        index is linear in its induction variable (``if i > 0: y[i - 1]``): they may not run on every iteration,
        so an entry check could refuse a correct program; they are checked at the access, in a second copy of
        the loop taken only when one of them is out of range at the first or last iteration (``emit_control``):
        the copy that runs otherwise has no check and keeps its vectorization. (access, position, index)."""
        if loop.name != "scf.for" or not _positive_constant(loop.operands[2]):
            return []
        iv = loop.regions[0].block.args[0]
        out = []
        for op in loop.walk():
            if op is not loop and op.name in ("scf.for", "scf.while", "scf.parallel", "affine.for"):
                return []  # innermost loops only: a copy per nested level would multiply the code
            if op.name not in ("memref.load", "memref.store") or op.parent_op() is loop:
                continue
            memref = op.operands[0 if op.name == "memref.load" else 1]
            parent = op.parent_op()
            while parent is not loop and parent is not None and parent.name == "scf.if":
                parent = parent.parent_op()
            if parent is not loop or _inside(memref, loop):
                continue
            out += self._linear_indices(op, iv, loop)
        return out

    def _entry_covered(self, op: Operation) -> set[int]:
        """Index positions of a load/store checked at the entry of the loop whose body holds it directly."""
        loop = op.parent_op()
        if loop is None or loop.name not in ("scf.for", "scf.parallel"):
            return set()
        dims = len(loop.regions[0].block.args) if loop.name == "scf.parallel" else 1
        return {k for d in range(dims) for access, k, _ in self.entry_checks(loop, d) if access is op}

    def view_dependent(self, op: Operation) -> bool:
        """Is a subview's slice checked where it is made? Every one whose offset, size or stride is not a
        constant, or whose source has a dynamic size (``row = a[i]`` with ``i`` over another array's dim;
        ``x[1:3]`` of a shorter ``x``); slices of static shapes in range are skipped by the emitter."""
        source = op.operands[0].type
        return len(op.operands) > 1 or (isinstance(source, MemRefType) and any(d < 0 for d in source.get_shape()))

    def access_mask(self, op: Operation) -> list[bool]:
        """Per index operand of a load/store (its operands after the memref): checked at the access? Every
        index of a memref load/store is checked, here or at its loop's entry (``entry_checks``); an index in
        range of a static dimension is skipped by the emitter. Affine accesses (other frontends' loop nests):
        only indices computed from data."""
        first = 1 if op.name in _LOADS else 2
        if op.name.startswith("affine."):
            return [self.dependent(v) for v in op.operands[first:]]
        covered = self._entry_covered(op)
        return [self.dependent(v) or k not in covered for k, v in enumerate(op.operands[first:])]


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


_LINEAR = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}


def _degree(v: SSAValue, iv: SSAValue, loop: Operation) -> int | None:
    """0 if ``v`` is invariant in ``loop``, 1 if it is linear in ``iv`` (sums, differences and products by
    invariants of ``iv``: monotonic over the loop), None otherwise (``i * i``, ``i // 2``, a loaded value)."""
    if v is iv:
        return 1
    if not _inside(v, loop):
        return 0
    op = v.owner
    if not isinstance(op, Operation) or op.name not in _LINEAR:
        return None
    a, b = (_degree(o, iv, loop) for o in op.operands)
    if a is None or b is None:
        return None
    degree = a + b if op.name == "arith.muli" else max(a, b)
    return degree if degree <= 1 else None


def linear_at(v: SSAValue, iv: SSAValue, loop: Operation, end: str, name) -> str:
    """C text of the linear index ``v`` (``_degree``) with ``iv`` replaced by ``end``; ``name(value)`` names the
    invariant values. Wrapping arithmetic, as the emitted index computation."""
    if v is iv:
        return end
    if not _inside(v, loop) or v.owner.name not in _LINEAR:  # type: ignore[union-attr]
        return name(v)  # invariant (defined outside, or an invariant constant inside)
    op = v.owner
    a, b = (linear_at(o, iv, loop, end, name) for o in op.operands)
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():  # both literals: the value (wrapped to 64 bits)
        value = {"arith.addi": int(a) + int(b), "arith.subi": int(a) - int(b), "arith.muli": int(a) * int(b)}
        return str((value[op.name] + 2**63) % 2**64 - 2**63)
    return wrapped(a, _LINEAR[op.name], b)


def wrapped(a: str, symbol: str, b: str) -> str:
    """C text of ``a symbol b`` on intptr_t with wrapping (no signed overflow, as the emitted index code)."""
    return f"(intptr_t)((uintptr_t)({a}) {symbol} (uintptr_t)({b}))"


_SIGNED_PREDICATES = {2: "lt", 3: "le", 4: "gt", 5: "ge", 0: "eq"}  # arith.cmpi slt, sle, sgt, sge, eq
_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}
_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}


def guard_bounds(op: Operation, iv: SSAValue, loop: Operation) -> list[tuple[str, SSAValue, SSAValue | None, str]]:
    """What the ``if``s around ``op`` (up to ``loop``) say of ``iv``: ``(kind, bound, shift, sign)`` for each
    condition ``iv + shift <pred> bound`` (``shift`` None: ``iv`` alone; ``sign`` "+" or "-") with ``bound`` and
    ``shift`` invariant in ``loop``; ``kind`` is the predicate, negated in an else branch (``if i > 0: y[i - 1]``,
    ``if i + 1 < n: y[i + 1]``). Conditions of another form say nothing (a wider range: only less precise)."""
    out = []
    for branch, then in _enclosing_ifs(op, loop):
        cond = branch.operands[0]
        owner = cond.owner
        both = "arith.andi" if then else "arith.ori"  # both hold in the then branch; neither in the else
        conds = list(owner.operands) if isinstance(owner, Operation) and owner.name == both else [cond]
        for c in conds:
            fact = _iv_comparison(c, iv, loop)
            if fact is not None and then:
                out.append(fact)
            elif fact is not None and fact[0] in _NEGATED:
                out.append((_NEGATED[fact[0]], *fact[1:]))
    return out


def _enclosing_ifs(op: Operation, loop: Operation):
    """The ``scf.if``s around ``op`` up to ``loop``, innermost first, each with whether ``op`` is in its then
    branch."""
    child, parent = op, op.parent_op()
    while parent is not None and parent is not loop:
        if parent.name == "scf.if":
            yield parent, child.parent_region() is parent.regions[0]
        child, parent = parent, parent.parent_op()


_C_COMPARE = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}  # arith.cmpi eq .. sge


def invariant_guards(op: Operation, iv: SSAValue, loop: Operation, name) -> list[str]:
    """C tests, loop-invariant, of the ifs around ``op`` up to ``loop`` (``if z > 0`` in an x loop): ``op``
    runs in no iteration where one is false. Signed comparisons of invariant linear values only."""
    out = []
    for branch, then in _enclosing_ifs(op, loop):
        owner = branch.operands[0].owner
        if isinstance(owner, Operation) and owner.name == "arith.cmpi":
            symbol = _C_COMPARE.get(owner.properties["predicate"].value.data)  # type: ignore[union-attr]
            if symbol is not None and all(_degree(v, iv, loop) == 0 for v in owner.operands):
                a, b = (linear_at(v, iv, loop, "", name) for v in owner.operands)
                out.append(f"({a} {symbol} {b})" if then else f"!({a} {symbol} {b})")
    return out


def _iv_comparison(cond: SSAValue, iv: SSAValue, loop: Operation):
    owner = cond.owner
    if not isinstance(owner, Operation) or owner.name != "arith.cmpi":
        return None
    kind = _SIGNED_PREDICATES.get(owner.properties["predicate"].value.data)  # type: ignore[union-attr]
    if kind is None:
        return None
    a, b = owner.operands
    for side, other, k in ((a, b, kind), (b, a, _FLIPPED[kind])):
        if _inside(other, loop):
            continue
        if side is iv:
            return k, other, None, "+"
        op = side.owner
        if isinstance(op, Operation) and op.name in ("arith.addi", "arith.subi"):
            x, y = op.operands
            if x is iv and not _inside(y, loop):
                return k, other, y, "+" if op.name == "arith.addi" else "-"
            if y is iv and op.name == "arith.addi" and not _inside(x, loop):
                return k, other, x, "+"
    return None


def has_gathers(module: ModuleOp) -> bool:
    """Does a load or store or a view need a check, at the access or at its loop's entry?"""
    data = DataIndices()
    for op in module.walk():
        if op.name in ACCESSES and any(data.access_mask(op)):
            return True
        if op.name in VIEWS and data.view_dependent(op):
            return True
        if op.name in ("scf.for", "scf.parallel") and any(
                data.entry_checks(op, k) for k in range(len(op.regions[0].block.args) if op.name == "scf.parallel"
                                                         else 1)):
            return True
    return False
