"""OpenMP and SIMD annotations of the emitted C: which loops may run in parallel, and how.

``scf.parallel`` (threads). The outermost ``scf.parallel`` of a function gets
``#pragma omp parallel for``. Its dims are emitted as perfectly nested loops
whose bounds are operands defined outside the op (a rectangular nest), so all
could be collapsed; the innermost dim is left out (``collapse(n - 1)`` for
``n > 2`` dims, no clause for 1 or 2) because a collapsed loop recomputes its
indices from one counter and gcc then does not vectorize it: a 512x512 3x3
stencil ran 6x slower with ``collapse(2)`` than with the j loop left plain. ``scf.parallel`` ops nested in
another one run serially inside their thread. Results of ``scf.reduce`` become
``reduction(op:var)`` clauses when every reduce region is one plain combiner
of its two arguments on a scalar: ``addf``/``mulf`` on f32/f64, ``addi``/``muli``
on i8..i64/index (``+``/``*``), ``minsi``/``maxsi`` (``min``/``max``). Any other
combiner (float min/max, whose NaN rules OpenMP does not follow; unsigned
min/max on signed C variables; i1; anything longer) keeps that loop serial
(as a call in a guarded function does: its failure unwinding with longjmp may not leave an
OpenMP region; the loop's own checks are deferred, ``deferred``). The module is then compiled with ``-fopenmp``; the thread count
is OpenMP's own (``OMP_NUM_THREADS``).

``scf.for`` / ``affine.for`` (SIMD, only in native mode, see ``restrict``). An
innermost loop gets ``#pragma omp simd`` when its iterations are provably
independent:
  - it carries no values (no ``iter_args``) and contains no region op, call,
    allocation, view or copy;
  - every memref it loads or stores (``memref.load``/``store``) is a parameter of a
    function whose data pointers are ``restrict`` (no two of them overlap), or the result of a
    ``memref.alloca``/``alloc`` outside the loop (fresh storage, which no other memref overlaps:
    the accumulator tile of ``scf-register-accumulate``, the panels of ``scf-pack-reads``);
  - every memref it stores to is accessed (loaded and stored) with one and the
    same index list, which contains the loop's induction variable itself, so
    iteration ``i`` touches only its own elements of what is written.
"""

from __future__ import annotations

import os

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from loom.backends.c.c_types import scalar_type

_INT_BITS = (8, 16, 32, 64)
_FLOAT_COMBINERS = {"arith.addf": "+", "arith.mulf": "*"}
_INT_COMBINERS = {"arith.addi": "+", "arith.muli": "*", "arith.minsi": "min", "arith.maxsi": "max"}


def reduction_operator(region_block: Block) -> str | None:
    """The OpenMP reduction operator of one scf.reduce region, or None if it is not a plain one."""
    ops = list(region_block.ops)
    if len(ops) != 2 or ops[1].name != "scf.reduce.return" or len(region_block.args) != 2:
        return None
    combine, ret = ops
    lhs, rhs = region_block.args
    if ret.operands[0] is not combine.results[0] or set(combine.operands) != {lhs, rhs} or len(combine.operands) != 2:
        return None
    st = scalar_type(lhs.type)
    if st.is_float:
        return _FLOAT_COMBINERS.get(combine.name) if st.ctype in ("float", "double") else None
    if st.bits in _INT_BITS:
        return _INT_COMBINERS.get(combine.name)
    return None


def parallel_pragma(op: Operation, result_vars: list[str], nested: bool, checked: bool) -> str | None:
    """``#pragma omp parallel for ...`` for an scf.parallel op, or None when it stays serial."""
    dims = len(op.lowerBound)  # type: ignore[attr-defined]
    if nested or checked or dims == 0:
        return None
    clauses = []
    if dims > 2:
        clauses.append(f"collapse({dims - 1})")
    if result_vars:
        reduce = list(op.regions[0].blocks[0].ops)[-1]
        for var, region in zip(result_vars, reduce.regions):
            operator = reduction_operator(region.blocks[0])
            if operator is None:
                return None
            clauses.append(f"reduction({operator}:{var})")
    return " ".join(["#pragma omp parallel for", *clauses])


def uses_openmp(source: str) -> bool:
    """Does emitted C need ``-fopenmp`` (it has a parallel-for pragma)?"""
    return "#pragma omp parallel" in source


# ---- SIMD --------------------------------------------------------------------------------------

_ACCESS = {"memref.load": 0, "memref.store": 1}  # operand index of the memref
_FORBIDDEN = ("func.call", "memref.alloc", "memref.alloca", "memref.dealloc", "memref.copy", "memref.subview",
              "memref.cast", "memref.reinterpret_cast", "memref.expand_shape", "memref.collapse_shape",
              "affine.load", "affine.store", "memref.global", "memref.get_global")


def simd_safe(loop: Operation, restrict_args: set[SSAValue]) -> bool:
    """May this scf.for / affine.for run its iterations in SIMD lanes (rule in the module docstring)?"""
    body = loop.regions[0].blocks[0]
    if len(body.args) != 1 or loop.results:
        return False
    iv = body.args[0]
    indices: dict[SSAValue, set[tuple[SSAValue, ...]]] = {}
    stored: set[SSAValue] = set()
    for op in body.ops:
        if op.regions or op.name in _FORBIDDEN:
            return False
        if op.name in _ACCESS:
            k = _ACCESS[op.name]
            memref = op.operands[k]
            local = isinstance(memref.owner, Operation) and memref.owner.name in ("memref.alloc", "memref.alloca") \
                and not loop.is_ancestor(memref.owner)
            if not local and (not isinstance(memref, BlockArgument) or memref not in restrict_args):
                return False
            indices.setdefault(memref, set()).add(tuple(op.operands[k + 1 :]))
            if op.name == "memref.store":
                stored.add(memref)
    for memref in stored:
        forms = indices[memref]
        if len(forms) != 1 or iv not in next(iter(forms)):
            return False
    return True


def prefer_passive_wait() -> None:
    """``OMP_WAIT_POLICY=passive`` unless the user set a policy: threads that finished a parallel loop sleep
    instead of spinning. Spinning threads compete with everything else on the machine (Halide's thread pool in
    the same process, other jobs): a 2048x1536 blur with its rows of tiles parallel took 8.0 ms on 2 busy cores
    with the default, 1.2 ms passive (1.2 ms serial). The policy is read when the OpenMP runtime loads."""
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
