"""Structured control flow and calls: func, scf and affine loops/branches.

Loop-carried values (iter_args) and region results become C variables declared
before the loop/branch; the region's block arguments are bound to the same
variables and the terminator (scf.yield / affine.yield) assigns them. Memref
values cannot be loop-carried or yielded (LoomError). The outermost scf.parallel
becomes an OpenMP parallel loop and, in native mode, provably independent
innermost loops get ``#pragma omp simd`` (rules in ``openmp``), shaped by a ``loom.simd`` width
hint on the loop (``scf-vector-hint``: 0 leaves vectorizing to the C compiler, N asks for simdlen(N)).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from loom.backends.c.affine_c import affine_expr_c, affine_map_c, fold_min_max
from loom.backends.c.c_types import is_memref
from loom.backends.c.checks import CTX
from loom.backends.c.deferred import OmpRegion
from loom.backends.c.emitter import FunctionEmitter, View, checked_body_name, guarded_inside, handles, op_error
from loom.backends.c.emit_memory import fast_path_test, loop_entry_checks
from loom.backends.c.index_expr import Ix
from loom.dialects.hints import SIMD_ATTR
from loom.backends.c.openmp import parallel_pragma, simd_safe


def _result_vars(em: FunctionEmitter, op: Operation, inits: list[str] | None) -> list[str]:
    names = []
    for k, result in enumerate(op.results):
        if is_memref(result.type):
            raise op_error(op, f"'{op.name}' with memref results is not supported by the C backend")
        st = em.scalar(result.type)
        names.append(em.declare(st, inits[k] if inits is not None else "0"))
        em.names[result] = names[-1]
    return names


# ---- func -----------------------------------------------------------------------------------


@handles("func.return")
def func_return(em: FunctionEmitter, op: Operation) -> None:
    values = [em.val(v) for v in op.operands]
    pending = [p for scope in em.free_scopes for p in scope]
    if pending and values:  # read results before freeing what they may come from
        temps = []
        for v, value in zip(op.operands, values):
            temps.append(em.declare(em.scalar(v.type), value, prefix="ret"))
        values = temps
    for scope in reversed(em.free_scopes):
        em.emit_frees(scope)
    if len(values) == 1:
        em.line(f"return {values[0]};")
    else:
        for k, value in enumerate(values):
            em.line(f"*out{k} = {value};")
        em.line("return;")


@handles("func.call")
def func_call(em: FunctionEmitter, op: Operation) -> None:
    callee = op.properties["callee"].root_reference.data  # type: ignore[attr-defined]
    sig = em.ctx.signatures.get(callee)
    if sig is None:
        raise op_error(op, f"func.call of unknown function @{callee}")
    args = []
    for spec, value in zip(sig.params, op.operands):
        if spec.memref is None:
            args.append(em.val(value))
            continue
        view = em.view(value, op)
        desc = em.fresh("d")
        info = view.info if spec.memref.unranked else spec.memref  # unranked: the view's own rank
        struct = em.ctx.descriptor(info)
        fields = [view.ptr, view.ptr, str(view.offset)]
        if info.rank:
            fields.append("{" + ", ".join(str(s) for s in view.sizes) + "}")
            fields.append("{" + ", ".join(str(s) for s in view.strides) + "}")
        em.line(f"{struct} {desc} = {{{', '.join(fields)}}};")
        args.append(f"{info.rank}, &{desc}" if spec.memref.unranked else f"&{desc}")
    name = sig.c_name
    if sig.memref_result is not None:  # external, one memref result: a descriptor the callee fills
        _memref_result_call(em, op, sig, name, args)
        return
    if em.checked and callee in em.ctx.defined:  # not external: call its checked body
        name = checked_body_name(sig)
        args.insert(0, CTX)
    if len(op.results) == 1:
        em.define(op.results[0], f"{name}({', '.join(args)})")
        return
    outs = _result_vars(em, op, None)
    args += [f"&{o}" for o in outs]
    em.line(f"{name}({', '.join(args)});")


def _memref_result_call(em: FunctionEmitter, op: Operation, sig, name: str, args: list[str]) -> None:
    """``%m = func.call @ext(..) : (..) -> memref<..>``: the callee writes a descriptor; the view reads
    its pointer, offset, sizes and strides once (static ones come from the type)."""
    info = sig.memref_result
    desc = em.fresh("r")
    em.line(f"{em.ctx.descriptor(info)} {desc};")
    em.line(f"{name}({', '.join([f'&{desc}', *args])});")
    ptr = em.fresh("rp")
    em.line(f"{info.elem.ctype} *{ptr} = {desc}.aligned;")

    def field(static: int | None, expr: str, prefix: str) -> Ix:
        if static is not None:
            return static
        name = em.fresh(prefix)
        em.line(f"intptr_t {name} = {expr};")
        return name

    offset = field(info.offset, f"{desc}.offset", "ro")
    sizes = [field(d, f"{desc}.sizes[{k}]", "rs") for k, d in enumerate(info.shape)]
    strides = [field(d, f"{desc}.strides[{k}]", "rt") for k, d in enumerate(info.strides)]
    em.views[op.results[0]] = View(ptr, offset, sizes, strides, info, allocated=None)


# ---- scf ------------------------------------------------------------------------------------


@handles("scf.yield", "affine.yield")
def region_yield(em: FunctionEmitter, op: Operation) -> None:
    targets = em.yield_targets[-1]
    if targets:
        em.assign_all(targets, list(op.operands))


def simd_pragma(op: Operation) -> str:
    """The pragma of a provably independent innermost loop in native mode."""
    hint = op.attributes.get(SIMD_ATTR)
    width = hint.value.data if hint is not None else None
    if width == 0:
        return ""
    return "#pragma omp simd" + (f" simdlen({width})" if width else "")


def _loop(em: FunctionEmitter, op: Operation, lb: str, ub: str, step: str, inits: list[str],
          results: list[str] | None = None) -> None:
    """Shared by scf.for and affine.for: C for loop, iter_args as variables (``results``: declared already)."""
    results = _result_vars(em, op, inits) if results is None else results
    block = op.regions[0].blocks[0]
    iv_type = em.scalar(block.args[0].type).ctype
    iv = em.fresh("i")
    if em.ctx.native and simd_safe(op, em.restrict_args) and not em.checks_inside(op):
        pragma = simd_pragma(op)
        if pragma:
            em.line(pragma)
    em.open(f"for ({iv_type} {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{")
    for text in em.loop_pragmas(op):
        em.line(text)
    em.names[block.args[0]] = iv
    for arg, var in zip(block.args[1:], results):
        em.names[arg] = var
    em.yield_targets.append(results)
    em.emit_block(block)
    em.yield_targets.pop()
    em.close()


@handles("scf.for")
def scf_for(em: FunctionEmitter, op: Operation) -> None:
    lb, ub, step, *inits = [em.val(v) for v in op.operands]
    loop_entry_checks(em, op, lb, ub, step)  # indices linear in the loop's induction variable (gathers)
    fast = fast_path_test(em, op, lb, ub, step)
    if fast is None:
        _loop(em, op, lb, ub, step, inits)
        return
    # accesses under an if: a copy without their checks when they are in range at both ends, one with them
    flag, in_range = fast
    results = _result_vars(em, op, inits)
    em.open(f"if ({flag}) {{")
    outer, em.unchecked = em.unchecked, em.unchecked | in_range
    _loop(em, op, lb, ub, step, inits, results)
    em.unchecked = outer
    em.close("} else {")
    em.depth += 1
    for inner in op.walk():  # the copy checks afresh what the first one checked (``_checked_before``)
        for region in inner.regions:
            for block in region.blocks:
                em.checked_in.pop(block, None)
    _loop(em, op, lb, ub, step, inits, results)
    em.close()


@handles("scf.if")
def scf_if(em: FunctionEmitter, op: Operation) -> None:
    _emit_if(em, op, em.val(op.operands[0]))


def _emit_if(em: FunctionEmitter, op: Operation, cond: str) -> None:
    """``if (cond) {then} else {else}`` for scf.if / affine.if; yields assign the result variables."""
    results = _result_vars(em, op, None)
    em.yield_targets.append(results)
    em.open(f"if ({cond}) {{")
    em.emit_block(op.regions[0].blocks[0])
    if op.regions[1].blocks:
        em.close("} else {")
        em.depth += 1
        em.emit_block(op.regions[1].blocks[0])
    em.close()
    em.yield_targets.pop()


@dataclass
class _WhileState:
    op: Operation
    results: list[str]


@handles("scf.while")
def scf_while(em: FunctionEmitter, op: Operation) -> None:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    carried = []
    for arg, init in zip(before.args, op.operands):
        if is_memref(arg.type):
            raise op_error(op, "scf.while carrying memrefs is not supported by the C backend")
        var = em.declare(em.scalar(arg.type), em.val(init), prefix="w")
        em.names[arg] = var
        carried.append(var)
    results = _result_vars(em, op, None)
    em.open("for (;;) {")
    for text in em.loop_pragmas(op):
        em.line(text)
    em.region_stack.append(_WhileState(op, results))
    em.emit_block(before)
    em.region_stack.pop()
    em.yield_targets.append(carried)
    em.emit_block(after)
    em.yield_targets.pop()
    em.close()


@handles("scf.condition")
def scf_condition(em: FunctionEmitter, op: Operation) -> None:
    state = em.region_stack[-1]
    assert isinstance(state, _WhileState)
    cond = em.val(op.operands[0])
    values = [em.val(v) for v in op.operands[1:]]
    em.open(f"if (!{cond}) {{")
    if state.results:
        em.assign_all(state.results, list(op.operands[1:]))
    em.line("break;")
    em.close()
    after = state.op.regions[1].blocks[0]
    for arg, value in zip(after.args, values):
        em.names[arg] = em.declare(em.scalar(arg.type), value, prefix="a")


@dataclass
class _ParallelState:
    results: list[str]


@handles("scf.parallel")
def scf_parallel(em: FunctionEmitter, op: Operation) -> None:
    n = len(op.lowerBound)  # type: ignore[attr-defined]
    lbs = [em.val(v) for v in op.lowerBound]  # type: ignore[attr-defined]
    ubs = [em.val(v) for v in op.upperBound]  # type: ignore[attr-defined]
    steps = [em.val(v) for v in op.step]  # type: ignore[attr-defined]
    inits = [em.val(v) for v in op.initVals]  # type: ignore[attr-defined]
    results = _result_vars(em, op, inits)
    block = op.regions[0].blocks[0]
    nested = any(isinstance(state, _ParallelState) for state in em.region_stack)
    runs = " && ".join(f"{lb} < {ub}" for lb, ub in zip(lbs, ubs))  # the body runs when every dimension does
    for k in range(n):  # indices linear in a dimension: checked before the region
        loop_entry_checks(em, op, lbs[k], ubs[k], steps[k], k, runs)
    # a guarded function's loop runs serially only when it calls a function or frees a buffer made outside it;
    # its own checks and buffers are deferred to after the region (``deferred``)
    serial = em.checked and guarded_inside(op)
    pragma = parallel_pragma(op, results, nested, serial) if em.ctx.openmp else None
    region = OmpRegion(em.fresh("pend"), em.fresh("skip"), [], em.fresh("blocks")) \
        if pragma is not None and em.checked and em.omp is None else None
    before = len(em.lines)
    if pragma is not None:
        em.line(pragma)
    for k in range(n):
        iv = em.fresh("i")
        em.open(f"for (intptr_t {iv} = {lbs[k]}; {iv} < {ubs[k]}; {iv} += {steps[k]}) {{")
        for text in em.loop_pragmas(op, k):
            em.line(text)
        em.names[block.args[k]] = iv
        if region is not None:
            region.ivs.append(iv)
    body = len(em.lines)
    em.omp = region or em.omp
    em.region_stack.append(_ParallelState(results))
    em.emit_block(block)
    em.region_stack.pop()
    if region is not None:
        em.omp = None
        if region.used:  # the slot before the region, the iteration's buffer list, its end, the report after
            if region.buffers:
                em.line(f"{region.label}: loomh_block_free_all(&{region.local});")
                em.lines.insert(body, "  " * em.depth + f"void *{region.local} = NULL;")
            else:
                em.line(f"{region.label}: ;")
            em.lines.insert(before, "  " * (em.depth - n) + f"loomh_pending {region.pending};")
            em.lines.insert(before + 1, "  " * (em.depth - n) + f"memset(&{region.pending}, 0, sizeof {region.pending});")
    for _ in range(n):
        em.close()
    if region is not None and region.used:
        em.line(f"loomh_report({CTX}, &{region.pending});")


@handles("scf.reduce")
def scf_reduce(em: FunctionEmitter, op: Operation) -> None:
    state = em.region_stack[-1]
    assert isinstance(state, _ParallelState)
    for var, value, region in zip(state.results, op.operands, op.regions):
        block = region.blocks[0]
        em.names[block.args[0]] = var
        em.names[block.args[1]] = em.val(value)
        em.open("{")
        em.yield_targets.append([var])
        em.emit_block(block)
        em.yield_targets.pop()
        em.close()


@handles("scf.reduce.return")
def scf_reduce_return(em: FunctionEmitter, op: Operation) -> None:
    em.assign_all(em.yield_targets[-1], [op.operands[0]])


# ---- affine ---------------------------------------------------------------------------------


@handles("affine.for")
def affine_for(em: FunctionEmitter, op: Operation) -> None:
    n_lb = len(op.lowerBoundOperands)  # type: ignore[attr-defined]
    n_ub = len(op.upperBoundOperands)  # type: ignore[attr-defined]
    operands = [em.index_ix(v) for v in op.operands[: n_lb + n_ub]]
    inits = [em.val(v) for v in op.operands[n_lb + n_ub :]]
    lbs = affine_map_c(op.properties["lowerBoundMap"].data, operands[:n_lb])  # type: ignore[attr-defined]
    ubs = affine_map_c(op.properties["upperBoundMap"].data, operands[n_lb:])  # type: ignore[attr-defined]
    lb = fold_min_max(lbs, "loomh_max_idx")
    ub = fold_min_max(ubs, "loomh_min_idx")
    if not isinstance(ub, int) and not str(ub).isidentifier():
        name = em.fresh("ub")
        em.line(f"intptr_t {name} = {ub};")
        ub = name
    step = op.properties["step"].value.data  # type: ignore[attr-defined]
    _loop(em, op, str(lb), str(ub), str(step), inits)


@handles("affine.apply", "affine.min", "affine.max")
def affine_apply(em: FunctionEmitter, op: Operation) -> None:
    operands = [em.index_ix(v) for v in op.operands]
    values = affine_map_c(op.properties["map"].data, operands)  # type: ignore[attr-defined]
    if op.name == "affine.apply":
        expr = values[0]
    else:
        expr = fold_min_max(values, "loomh_min_idx" if op.name == "affine.min" else "loomh_max_idx")
    if isinstance(expr, int):
        em.names[op.results[0]] = str(expr)
    else:
        em.define(op.results[0], str(expr))


@handles("affine.if")
def affine_if(em: FunctionEmitter, op: Operation) -> None:
    condition = op.properties.get("condition")
    if condition is None:
        condition = op.attributes.get("condition")
    iset = condition.data  # type: ignore[union-attr]
    operands = [em.index_ix(v) for v in op.operands]
    dims, syms = operands[: iset.num_dims], operands[iset.num_dims :]
    tests = []
    for constraint in iset.constraints:
        lhs = affine_expr_c(constraint.lhs, dims, syms)
        rhs = affine_expr_c(constraint.rhs, dims, syms)
        sym = constraint.kind.value
        tests.append(f"({lhs} {sym} {rhs})")
    _emit_if(em, op, " && ".join(tests) or "1")
