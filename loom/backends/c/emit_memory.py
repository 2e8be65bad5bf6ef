"""memref.* and affine load/store ops: views, element access, buffers, globals.

A memref value is a ``View`` (see ``emitter``). Subviews and casts only build new
views (no C code unless an offset/size/stride is dynamic). Allocations use the
heap (``loomh_alloc``) except small static allocas, which become C arrays; heap
allocas are freed at the end of the block that made them.

In checked mode (see ``checks``) every access checks its indices, subviews
check their slices and copies their shapes, and heap buffers are tracked so a
failed check can free them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, UnitAttr
from xdsl.ir import Block, Operation, SSAValue

from loom.backends.c.affine_c import affine_map_c
from loom.backends.c.c_types import MemRefInfo, memref_info
from loom.backends.c.checks import CTX
from loom.backends.c.deferred import deferred_alloc
from loom.backends.c.gathers import guard_bounds, invariant_guards, linear_at, wrapped
from loom.backends.c.emitter import FunctionEmitter, ModuleContext, View, c_identifier, handles, op_error
from loom.backends.c.emit_scalar import float_literal, int_literal, parse_int_literal
from loom.backends.c.index_expr import Ix, ix_add, ix_mul, linear_index
from loom.backends.c.prelude import INLINE_COPY_BYTES, SMALL_COPY_BYTES, WIDE_ROW_BYTES

STACK_LIMIT_BYTES = 16 * 1024  # larger allocas go to the heap
NARROW_GATHER_BITS = 16  # gathers of elements this narrow stay scalar without native mode (see _opaque_index)


def element_ref(view: View, indices: list[Ix]) -> str:
    return f"{view.ptr}[{linear_index(view.offset, indices, view.strides)}]"


def materialise(em: FunctionEmitter, value: Ix, prefix: str) -> Ix:
    """Name a compound index expression once instead of repeating it at every access."""
    if isinstance(value, int) or value.isidentifier() or "->" in value:
        return value
    name = em.fresh(prefix)
    em.line(f"intptr_t {name} = {value};")
    return name


def checked_indices(em: FunctionEmitter, op: Operation, view: View, indices: list[Ix],
                    data: list[bool] | None = None, values: list[SSAValue] | None = None) -> list[Ix]:
    """Checked mode: check each index against its dimension (indices statically in range need none).
    ``data``: which indices are computed from data (``gathers``); outside checked mode only those are checked,
    when the module asked for it. ``values``: the index operands, when each is an index itself (not affine):
    a value already checked against the same size earlier in this block or an enclosing one is not checked
    again (a failed check never returns, so the first one stands for both)."""
    if not em.check_bounds and not (data and any(data)):
        return indices
    site = None
    out: list[Ix] = []
    for k, (index, size) in enumerate(zip(indices, view.sizes)):
        if not em.check_bounds and not data[k]:  # type: ignore[index]
            out.append(index)
            continue
        index = materialise(em, index, "ix")  # evaluated once for the check and the access
        out.append(index)
        if isinstance(index, int) and isinstance(size, int) and 0 <= index < size:
            continue
        if values is not None and _python_mod_of(em, values[k], size):
            continue  # g[(i + di) % h] with h = g.shape[0]: in [0, h) (h = 0 failed at the division)
        if values is not None and _checked_before(em, op, (values[k], str(size))):
            continue
        site = em.site(op) if site is None else site
        em.check("loomh_check_index", site, k, index, size)
    return out


def loop_entry_checks(em: FunctionEmitter, loop: Operation, lb: str, ub: str, step: str, dim: int = 0,
                      nonempty: str | None = None) -> None:
    """Before an scf.for (or an scf.parallel, per dimension ``dim``; ``nonempty``: that all its dimensions run):
    the accesses ``gathers.DataIndices.entry_checks`` picks, checked at the loop's first and last iteration
    (their index is linear in the induction variable: every one between is in range too)."""
    if em.ctx.gathers is None or em.check_bounds:
        return
    checks = em.ctx.gathers.entry_checks(loop, dim)
    if not checks:
        return
    iv = loop.regions[0].block.args[dim]
    last = em.fresh("last")
    lines_before = len(em.lines)
    em.open(f"if ({nonempty or f'{lb} < {ub}'}) {{")
    em.line(f"intptr_t {last} = {lb} + (({ub} - {lb} - 1) / {step}) * {step};")
    seen = set()
    for access, k, value in checks:
        view = em.view(access.operands[0 if access.name == "memref.load" else 1], access)
        size = view.sizes[k]
        if (value, str(size)) in seen:
            continue  # y[i] read and written: one index, one size
        if _bounded_by_own_loop(em, value, size):
            continue  # x[i] for i in range(lb >= 0, x.shape[k]): in range by the loop's own bounds
        seen.add((value, str(size)))
        ends = {linear_at(value, iv, loop, end, em.val) for end in (lb, last)}
        ends = {e for e in ends if not (parse_int_literal(e) is not None and isinstance(size, int) and 0 <= parse_int_literal(e) < size)}
        site = em.site(access) if ends else None
        for index in sorted(ends):
            em.check("loomh_check_index", site, k, index, size)
    if len(em.lines) == lines_before + 2:  # every index statically in range: no check
        del em.lines[lines_before:]
        em.depth -= 1
        return
    em.close()


def fast_path_test(em: FunctionEmitter, loop: Operation, lb: str, ub: str, step: str) -> tuple[str, set] | None:
    """Before an innermost scf.for with accesses under an if (``gathers.DataIndices.conditional_checks``): a
    flag, true when each of their indices is in range at the loop's first and last iteration (so at every one),
    and the (access, position) pairs the loop's copy under that flag leaves unchecked; None if there are none."""
    if em.ctx.gathers is None or em.check_bounds:
        return None
    checks = em.ctx.gathers.conditional_checks(loop)
    if not checks:
        return None
    iv = loop.regions[0].block.args[0]
    flag, last = em.fresh("fast"), em.fresh("last")
    em.line(f"int {flag} = 1;")
    em.open(f"if ({lb} < {ub}) {{")
    em.line(f"intptr_t {last} = {lb} + (({ub} - {lb} - 1) / {step}) * {step};")
    seen = set()
    for access, k, value in checks:
        size = em.view(access.operands[0 if access.name == "memref.load" else 1], access).sizes[k]
        lo, hi = _guarded_range(em, access, iv, loop, lb, last)
        ends = dict.fromkeys(linear_at(value, iv, loop, end, em.val) for end in (lo, hi))
        test = " && ".join(f"!loomh_bad_index({index}, {size})" for index in ends)
        skip = [f"!{guard}" for guard in invariant_guards(access, iv, loop, em.val)]  # never runs in this loop
        if (lo, hi) != (lb, last):
            skip.append(f"{lo} > {hi}")
        line = f"{flag} &= {' || '.join(skip)} || ({test});" if skip else f"{flag} &= {test};"
        if line not in seen:
            seen.add(line)
            em.line(line)
    em.close()
    return flag, {(access, k) for access, k, _ in checks}


def _guarded_range(em: FunctionEmitter, access: Operation, iv, loop: Operation, lb: str, last: str) -> tuple[str, str]:
    """The iterations of ``loop`` (from ``lb`` to ``last``) where the ifs around ``access`` may let it run:
    ``if i > 0`` raises the first to 1, ``if i + 1 < n`` lowers the last to n - 2 (``gathers.guard_bounds``).
    Wrapping arithmetic: a bound that wraps only widens the range (more checking, never less)."""
    lo, hi = lb, last
    for kind, bound, shift, sign in guard_bounds(access, iv, loop):
        e = em.val(bound) if shift is None else wrapped(em.val(bound), "-" if sign == "+" else "+", em.val(shift))
        if kind in ("gt", "ge", "eq"):
            lo = f"loomh_max_idx({lo}, {wrapped(e, '+', '1') if kind == 'gt' else e})"
        if kind in ("lt", "le", "eq"):
            hi = f"loomh_min_idx({hi}, {wrapped(e, '-', '1') if kind == 'lt' else e})"
    if lo != lb:
        lo = materialise(em, lo, "lo")
    if hi != last:
        hi = materialise(em, hi, "hi")
    return lo, hi


def _python_mod_of(em: FunctionEmitter, value, size) -> bool:
    """Is ``value`` Python's ``x % d`` (the kernel frontend's remsi and sign fix-up: ``select(fix, r + d, r)``
    with ``r = x rem d``) of a divisor ``d`` that is ``size`` itself? It lies in [0, d) then."""
    select = value.owner
    if not isinstance(select, Operation) or select.name != "arith.select":
        return False
    _, adjusted, r = select.operands
    add, rem = adjusted.owner, r.owner
    if not (isinstance(add, Operation) and add.name == "arith.addi" and isinstance(rem, Operation)
            and rem.name == "arith.remsi" and add.operands[0] is r):
        return False
    divisor = rem.operands[1]
    return add.operands[1] is divisor and em.val(divisor) == str(size)


def _bounded_by_own_loop(em: FunctionEmitter, value, size) -> bool:
    """Is ``value`` the induction variable of an scf.for from a constant >= 0 to ``size`` itself?"""
    owner = value.owner
    loop = owner.parent_op() if isinstance(owner, Block) else None
    if loop is None or loop.name != "scf.for" or value.index != 0:
        return False
    lb = parse_int_literal(em.val(loop.operands[0]))
    return lb is not None and lb >= 0 and em.val(loop.operands[1]) == str(size)


def _checked_before(em: FunctionEmitter, op: Operation, key: tuple) -> bool:
    """Was ``key`` (an index value, a size) checked in ``op``'s block or an enclosing one? Records it if not.
    Only enclosing blocks: a check in one arm of an if says nothing about the other."""
    block = op.parent
    while block is not None:
        if key in em.checked_in.get(block, ()):
            return True
        owner = block.parent_op()
        block = owner.parent if owner is not None else None
    em.checked_in.setdefault(op.parent, set()).add(key)
    return False


def _access(em: FunctionEmitter, op: Operation, memref_operand: int, scalar_gathers: bool = False) -> str:
    """The C lvalue of a memref/affine load or store (indices checked in checked mode); ``scalar_gathers``:
    indices computed from loaded data go through ``_opaque_index``."""
    view = em.view(op.operands[memref_operand], op)
    narrow = scalar_gathers and view.elem.bits <= NARROW_GATHER_BITS
    indices = [_opaque_index(em, em.index_ix(v)) if narrow and _loaded(v, op.parent, set()) else em.index_ix(v)
               for v in op.operands[memref_operand + 1 :]]
    data = em.ctx.gathers.access_mask(op) if em.ctx.gathers is not None else None
    if data is not None and em.unchecked:  # the fast copy of a loop whose accesses are in range (fast_path_test)
        data = [d and (op, k) not in em.unchecked for k, d in enumerate(data)]
    values: list[SSAValue] | None = list(op.operands[memref_operand + 1 :])
    if op.name.startswith("affine."):
        indices = affine_map_c(op.properties["map"].data, indices)  # type: ignore[attr-defined]
        data = [any(data)] * len(indices) if data is not None else None  # each result may use any operand
        values = None
    return element_ref(view, checked_indices(em, op, view, indices, data, values))


@handles("memref.load", "affine.load")
def load(em: FunctionEmitter, op: Operation) -> None:
    em.define(op.results[0], _access(em, op, 0, scalar_gathers=em.ctx.scalar_gathers))


def _opaque_index(em: FunctionEmitter, index: Ix) -> Ix:
    """An index computed from loaded data, gathering elements of at most ``NARROW_GATHER_BITS`` (a u8 LUT
    ``lut[in[x]]``), through an empty asm. Without hardware gathers gcc 12 vectorizes such a loop with emulated
    ones, an extract and an insert per lane (16 of u8 in SSE2): 2.2x slower than the scalar loop on a u8 LUT.
    The asm hides the index from the vectorizer and costs nothing scalar. Wider elements are left alone (an f64
    gather takes 2 lanes, and the rest of its loop gains from vectorizing: the RRTMG-style kernel, 65,536
    columns, ran 1.4x slower scalar); so is native mode (-march=native: hardware gathers)."""
    name = em.fresh("gx")
    em.line(f"intptr_t {name} = {index};")
    em.line(f'__asm__("" : "+r"({name}));')
    return name


def _loaded(v: SSAValue, block, seen: set[int]) -> bool:
    """Whether ``v`` is computed in ``block`` from a value loaded there (a gather's index; one loaded before the
    loop is a fixed offset, which vectorizes)."""
    op = v.owner
    if not isinstance(op, Operation) or op.parent is not block or id(op) in seen:
        return False
    seen.add(id(op))
    if op.name in ("memref.load", "affine.load"):
        return True
    return not op.regions and any(_loaded(o, block, seen) for o in op.operands)


@handles("memref.store", "affine.store")
def store(em: FunctionEmitter, op: Operation) -> None:
    value = em.val(op.operands[0])
    em.line(f"{_access(em, op, 1)} = {value};")


def _row_major(em: FunctionEmitter, sizes: list[Ix], ptr: str) -> tuple[list[Ix], Ix]:
    strides: list[Ix] = []
    running: Ix = 1
    for size in reversed(sizes):
        strides.append(running)
        running = materialise(em, ix_mul(running, size), f"{ptr}_st")
    return list(reversed(strides)), running


def _alloc_sizes(em: FunctionEmitter, op: Operation, info: MemRefInfo) -> list[Ix]:
    if not info.identity:
        raise op_error(op, f"'{op.name}' with a layout map is not supported by the C backend")
    dynamic = [em.index_ix(v) for v in op.operands]
    sizes: list[Ix] = []
    for dim in info.shape:
        sizes.append(dim if dim is not None else dynamic.pop(0))
    return sizes


def _on_stack(op: Operation, info, count: Ix) -> bool:
    """A small static alloca is a C array; every other buffer is on the heap."""
    return op.name == "memref.alloca" and isinstance(count, int) and count * max(1, info.elem.bits // 8) <= \
        STACK_LIMIT_BYTES


def has_heap_buffers(module: Operation) -> bool:
    """Does ``module`` allocate on the heap (a failed malloc is then a check failure: the guarded entry)?"""
    for op in module.walk():
        if op.name == "memref.alloc":
            return True
        if op.name == "memref.alloca":
            ty = op.results[0].type
            count = 1
            for dim in ty.get_shape():
                count = None if count is None or dim < 0 else count * dim
            bits = getattr(ty.element_type, "bitwidth", 64) or 64
            if count is None or count * max(1, bits // 8) > STACK_LIMIT_BYTES:
                return True
    return False


@handles("memref.alloc", "memref.alloca")
def alloc(em: FunctionEmitter, op: Operation) -> None:
    result = op.results[0]
    info = em.memref(result.type)
    ptr = em.fresh("buf")
    sizes = _alloc_sizes(em, op, info)
    strides, count = _row_major(em, sizes, ptr)
    t = info.elem.ctype
    if _on_stack(op, info, count):
        em.line(f"{t} {ptr}[{max(int(count), 1)}];")
        allocated = None
    else:  # tracked: a failed check frees them; a failed malloc is a LoomError naming the op and the size
        if not em.checked:
            raise op_error(op, "C backend: a heap buffer outside a guarded module (has_heap_buffers missed it)")
        site = em.site(op)
        if not isinstance(count, int):  # a negative dim or an overflowing product is refused, not wrapped
            dims = ", ".join(str(size) for size in sizes)
            count = materialise(em, f"loomh_elements({len(sizes)}, (const intptr_t[]){{{dims}}})", f"{ptr}_count")
        if em.omp is not None:
            for text in deferred_alloc(em.omp, t, ptr, count, site):
                em.line(text)
        else:
            em.line(f"{t} *{ptr} = ({t} *)loomh_alloc_tracked({CTX}, {site}, {count}, sizeof({t}));")
        allocated = ptr
        if op.name == "memref.alloca":
            em.free_scopes[-1].append(ptr)
    em.views[result] = View(ptr, 0, sizes, strides, info, allocated=allocated)


@handles("memref.dealloc")
def dealloc(em: FunctionEmitter, op: Operation) -> None:
    view = em.view(op.operands[0], op)
    if view.allocated is None:
        raise op_error(op, "memref.dealloc of a buffer that was not heap-allocated")
    em.line(em.free_call(view.allocated))


def _drop_mask(src_sizes: list[int | None], result_shape: tuple[int | None, ...]) -> list[bool]:
    """Which source dims a rank-reducing subview drops.

    Only unit dims can be dropped, and the index into a unit dim is always 0, so
    when several choices fit the result shape any of them addresses the same
    elements: match left to right, dropping a unit dim when it cannot match or
    when enough source dims remain for the rest of the result.
    """
    to_drop = len(src_sizes) - len(result_shape)
    mask = []
    r = 0
    for k, size in enumerate(src_sizes):
        remaining_src = len(src_sizes) - k
        remaining_res = len(result_shape) - r
        matches = r < len(result_shape) and (result_shape[r] is None or size is None or result_shape[r] == size)
        if to_drop > 0 and size == 1 and (not matches or (remaining_src - 1 >= remaining_res and result_shape[r] != 1)):
            mask.append(True)
            to_drop -= 1
        else:
            mask.append(False)
            r += 1
    return mask


@handles("memref.subview")
def subview(em: FunctionEmitter, op: Operation) -> None:
    src = em.view(op.operands[0], op)
    result = op.results[0]
    info = em.memref(result.type)
    dyn_off = [em.index_ix(v) for v in op.offsets]  # type: ignore[attr-defined]
    dyn_size = [em.index_ix(v) for v in op.sizes]  # type: ignore[attr-defined]
    dyn_stride = [em.index_ix(v) for v in op.strides]  # type: ignore[attr-defined]

    def resolve(static, dynamic: list[Ix]) -> list[Ix]:
        out: list[Ix] = []
        for s in static.get_values():
            out.append(dynamic.pop(0) if s < -(2**62) else int(s))
        return out

    offsets = resolve(op.static_offsets, dyn_off)  # type: ignore[attr-defined]
    sizes = resolve(op.static_sizes, dyn_size)  # type: ignore[attr-defined]
    steps = resolve(op.static_strides, dyn_stride)  # type: ignore[attr-defined]
    if em.check_bounds or (em.ctx.gathers is not None and em.ctx.gathers.view_dependent(op)):
        offsets = [materialise(em, o, "so") for o in offsets]
        sizes = [materialise(em, s, "ss") for s in sizes]
        site = em.site(op)
        for k, (off, count, step, size) in enumerate(zip(offsets, sizes, steps, src.sizes)):
            if all(isinstance(x, int) for x in (off, count, step, size)) and (count == 0 or count > 0 and (
                    0 <= off < size and 0 <= off + (count - 1) * step < size)):
                continue  # a static slice in range
            em.check("loomh_check_slice", site, k, off, count, step, size)
    base = em.fresh("sv")
    offset = materialise(em, linear_index(src.offset, offsets, src.strides), f"{base}_off")
    static_sizes = [s if isinstance(s, int) else None for s in sizes]
    mask = _drop_mask(static_sizes, info.shape) if len(sizes) != info.rank else [False] * len(sizes)
    new_sizes: list[Ix] = []
    new_strides: list[Ix] = []
    for k in range(len(sizes)):
        if mask[k]:
            continue
        new_sizes.append(sizes[k])
        new_strides.append(materialise(em, ix_mul(src.strides[k], steps[k]), f"{base}_st"))
    em.views[result] = View(src.ptr, offset, new_sizes, new_strides, info, allocated=None)


@handles("memref.reinterpret_cast")
def reinterpret_cast(em: FunctionEmitter, op: Operation) -> None:
    """A new view of the source's data: offset, sizes and strides as given (in elements of the
    source's base pointer). Checked mode: the view's span must lie inside a rank-1 source."""
    src = em.view(op.operands[0], op)
    info = em.memref(op.results[0].type)

    def resolve(static, dynamic) -> list[Ix]:
        values = [em.index_ix(v) for v in dynamic]
        return [values.pop(0) if s < -(2**62) else int(s) for s in static.get_values()]

    offsets = resolve(op.static_offsets, op.offsets)  # type: ignore[attr-defined]
    sizes = resolve(op.static_sizes, op.sizes)  # type: ignore[attr-defined]
    strides = resolve(op.static_strides, op.strides)  # type: ignore[attr-defined]
    offset = materialise(em, offsets[0], "ro")
    if em.check_bounds and len(src.sizes) == 1:
        span: Ix = 1  # elements from the view's first to one past its last (non-negative strides)
        for size, stride in zip(sizes, strides):
            span = ix_add(span, ix_mul(f"({size} - 1)" if not isinstance(size, int) else size - 1, stride))
        em.check("loomh_check_slice", em.site(op), 0, ix_add(offset, ix_mul(-1, src.offset)) if src.offset != 0
                 else offset, span, 1, src.sizes[0])
    em.views[op.results[0]] = View(src.ptr, offset, sizes, strides, info, allocated=None)


@handles("memref.cast")
def cast(em: FunctionEmitter, op: Operation) -> None:
    src = em.view(op.operands[0], op)
    info = em.memref(op.results[0].type)
    if info.unranked:  # ranked -> unranked: the value keeps its ranked view (passed as rank + descriptor)
        if src.info.unranked:
            raise op_error(op, "memref.cast from an unranked memref is not supported by the C backend")
        info = src.info
    elif src.info.unranked:
        raise op_error(op, "memref.cast from an unranked memref is not supported by the C backend")
    else:  # a cast asserts the static sizes / strides of its result type: index with them as constants
        static = lambda known, dynamic: [d if k is None else k for k, d in zip(known, dynamic)]  # noqa: E731
        em.views[op.results[0]] = View(src.ptr, src.offset if info.offset is None else info.offset,
                                       static(info.shape, src.sizes), static(info.strides, src.strides), info,
                                       src.allocated)
        return
    em.views[op.results[0]] = View(src.ptr, src.offset, src.sizes, src.strides, info, src.allocated)


@handles("memref.dim")
def dim(em: FunctionEmitter, op: Operation) -> None:
    src = em.view(op.operands[0], op)
    index = em.index_ix(op.operands[1])
    if not isinstance(index, int):
        raise op_error(op, "memref.dim needs a constant dimension index in the C backend")
    if not 0 <= index < len(src.sizes):
        raise op_error(op, f"memref.dim index {index} out of range for rank {len(src.sizes)}")
    em.names[op.results[0]] = str(src.sizes[index])


@handles("memref.copy")
def copy(em: FunctionEmitter, op: Operation) -> None:
    src = em.view(op.operands[0], op)
    dst = em.view(op.operands[1], op)
    if em.check_bounds:
        site = em.site(op)
        for k, (a, b) in enumerate(zip(src.sizes, dst.sizes)):
            if not (isinstance(a, int) and a == b):
                em.check("loomh_check_same_size", site, k, a, b)
    rows = _contiguous_rows(src, dst)
    loops = src.sizes[:-rows] if rows else src.sizes
    run: Ix = 1
    for size in src.sizes[len(loops):]:
        run = ix_mul(run, size)
    unrolled = _unrolled_loop(loops, run, src.elem.bits, em.COPY_UNROLL) if em.COPY_UNROLL else None
    call = "memcpy"
    if rows and em.LONG_COPY and isinstance(run, int) and run * max(1, src.elem.bits // 8) > INLINE_COPY_BYTES:
        call = em.LONG_COPY
        if loops:  # read the volatile pointer once per copy, not once per row
            call = em.fresh("mc")
            em.line(f"void *(*const {call})(void *, const void *, size_t) = {em.LONG_COPY};")
    wide = _wide_rows(em, src, loops, run) if rows else None
    ivs: list[Ix] = []
    for k, size in enumerate(loops):
        iv = em.fresh("c")
        if wide and k == len(loops) - 1:  # the row loop: one call moving every row with 32-byte moves
            start = ivs + [0] * (len(src.sizes) - len(ivs))
            stride = lambda view: f"(intptr_t)({view.strides[k]}) * (intptr_t)sizeof({view.elem.ctype})"  # noqa: E731
            em.line("#if LOOMH_WIDE_ROWS")
            em.line('if (__builtin_cpu_supports("avx")) {')
            em.line(f"  {wide}((char *)&{element_ref(dst, start)}, (const char *)&{element_ref(src, start)}, "
                    f"{size}, {stride(dst)}, {stride(src)});")
            em.line("} else")
            em.line("#endif")
        if k == unrolled:
            em.line(f"#pragma GCC unroll {em.COPY_UNROLL}")
        em.open(f"for (intptr_t {iv} = 0; {iv} < {size}; {iv}++) {{")
        ivs.append(iv)
    if rows:  # the trailing dims are one contiguous run on both sides: one memcpy per run
        start = ivs + [0] * rows
        em.line(f"{call}(&{element_ref(dst, start)}, &{element_ref(src, start)}, "
                f"(size_t)({run}) * sizeof({src.elem.ctype}));")
    else:
        em.line(f"{element_ref(dst, ivs)} = {element_ref(src, ivs)};")
    for _ in loops:
        em.close()


def _wide_rows(em: FunctionEmitter, src: View, loops: list[Ix], run: Ix) -> str | None:
    """The helper moving the rows of this copy with 32-byte moves (defined once per module), when its
    innermost loop copies rows of a constant WIDE_ROW_BYTES size; None otherwise."""
    bits = src.elem.bits
    if not (em.WIDE_ROWS and loops and isinstance(run, int) and bits in (8, 16, 32, 64)):
        return None
    size = run * bits // 8
    if not WIDE_ROW_BYTES[0] <= size <= WIDE_ROW_BYTES[1]:
        return None
    name = f"loomh_rows_{size}"
    if name not in em.ctx.wide_rows:
        em.ctx.wide_rows.add(name)
        # full 32-byte moves, the last one overlapping the one before when size is not a multiple of 32
        moves = "".join(f"    *(loomh_v32 *)(d + {b}) = *(const loomh_v32 *)(s + {b});\n"
                        for b in [*range(0, size - 31, 32), *([size - 32] if size % 32 else [])])
        em.ctx.global_defs.append(
            f"#if LOOMH_WIDE_ROWS\nstatic __attribute__((target(\"avx\"))) void {name}(char *restrict d, "
            f"const char *restrict s, intptr_t rows, intptr_t ds, intptr_t ss) {{\n"
            f"  for (; rows > 0; rows--, d += ds, s += ss) {{\n{moves}  }}\n}}\n#endif")
    return name


def _unrolled_loop(loops: list[Ix], run: Ix, elem_bits: int, factor: int) -> int | None:
    """The loop of a copy nest to unroll: the innermost one of constant size > 1 (only size-1 loops inside)
    when its body moves at most SMALL_COPY_BYTES (a gather, e.g. one word per channel of a 1x1 conv
    window): there the loop's own increment, compare and branch cost more than the move."""
    if not isinstance(run, int) or run * max(1, elem_bits // 8) > SMALL_COPY_BYTES:
        return None
    for k in range(len(loops) - 1, -1, -1):
        if loops[k] != 1:
            return k if isinstance(loops[k], int) and loops[k] >= factor // 2 else None
    return None


def _contiguous_rows(src: View, dst: View) -> int:
    """How many trailing dims both views lay out densely (row-major, unit inner stride), as
    literal constants: those dims move as one memcpy (the copy specialisation, paper Fig. 12)."""
    if not src.sizes or src.elem.ctype != dst.elem.ctype:
        return 0
    count, expected = 0, 1
    for k in range(len(src.sizes) - 1, -1, -1):
        if src.strides[k] != expected or dst.strides[k] != expected:
            break
        count += 1
        size = src.sizes[k]
        if not isinstance(size, int):
            break  # a dynamic size ends the run (the next dim's stride cannot be checked)
        expected *= size
    return count


# ---- globals ---------------------------------------------------------------------------------


def emit_global(ctx: ModuleContext, op: Operation) -> None:
    """memref.global with a dense initial value (or none) as a static C array."""
    name = op.properties["sym_name"].data  # type: ignore[attr-defined]
    info = memref_info(op.properties["type"], f"memref.global @{name}", ctx.types)
    if any(d is None for d in info.shape) or not info.identity:
        raise op_error(op, "memref.global needs a static identity-layout type in the C backend")
    count = 1
    for d in info.shape:
        count *= d  # type: ignore[operator]
    cname = c_identifier("g_" + name)
    init = op.properties.get("initial_value")
    const = "const " if "constant" in op.properties else ""
    if isinstance(init, DenseIntOrFPElementsAttr):
        values = list(init.get_values())
        if len(values) == 1 and count > 1:
            values = values * count  # splat
        lit = float_literal if info.elem.is_float else int_literal
        body = ", ".join(lit(v, info.elem) for v in values)
        ctx.global_defs.append(f"static {const}{info.elem.ctype} {cname}[{max(count, 1)}] = {{{body}}};")
    elif init is None or isinstance(init, UnitAttr):
        ctx.global_defs.append(f"static {info.elem.ctype} {cname}[{max(count, 1)}];")
    else:
        raise op_error(op, f"unsupported initial value '{init}' for memref.global")
    ctx.globals[name] = cname


@handles("memref.get_global")
def get_global(em: FunctionEmitter, op: Operation) -> None:
    name = op.properties["name"].root_reference.data  # type: ignore[attr-defined]
    if name not in em.ctx.globals:
        raise op_error(op, f"unknown memref.global @{name}")
    info = em.memref(op.results[0].type)
    sizes: list[Ix] = list(info.shape)  # type: ignore[arg-type]
    strides: list[Ix] = list(info.strides)  # type: ignore[arg-type]
    ptr = em.fresh("gl")
    em.line(f"{info.elem.ctype} *{ptr} = ({info.elem.ctype} *){em.ctx.globals[name]};")
    em.views[op.results[0]] = View(ptr, 0, sizes, strides, info, allocated=None)
