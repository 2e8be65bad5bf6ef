"""Core of the C emitter: module and function structure, value naming, dispatch.

Op handlers live in ``emit_scalar``, ``emit_memory`` and ``emit_control`` and
register themselves by op name with ``@handles``. Scalar SSA values become C
locals (constants are inlined as literals); memref SSA values become ``View``s:
a C element pointer plus offset, sizes and strides that are ints when known
statically and C expressions otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue

from loom.backends.c.c_types import (
    MemRefInfo,
    ScalarType,
    descriptor_struct_c,
    descriptor_struct_name,
    is_memref,
    memref_info,
    scalar_type,
)
from loom.backends.c.checks import CHECK_PRELUDE, CTX, Site, site_of
from loom.backends.c.deferred import OmpRegion, deferred_check
from loom.backends.c.gathers import ACCESSES as GATHER_ACCESSES, VIEWS as GATHER_VIEWS, DataIndices, has_gathers
from loom.backends.c.index_expr import Ix
from loom.backends.c.prelude import PRELUDE
from loom.backends.c.restrict import called_functions, restrict_params
from loom.backends.c.signature import FuncSignature, ParamSpec
from loom.dialects.dims import arg_dim_names
from loom.errors import LoomError

Handler = Callable[["FunctionEmitter", Operation], None]
HANDLERS: dict[str, Handler] = {}
TERMINATORS = {"func.return", "scf.yield", "affine.yield", "scf.condition", "scf.reduce", "scf.reduce.return"}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = fn
        return fn

    return register


def op_error(op: Operation, message: str) -> LoomError:
    """A LoomError located at the op's FileLineColLoc when it has one, else at its nearest located enclosing
    op (ops made by lowering have no location; their kernel's func still names the source file and line)."""
    loc = getattr(op, "location", None)
    if isinstance(loc, FileLineColLoc):
        return LoomError(message, filename=loc.filename.data, line=loc.line.data, column=loc.column.data)
    enclosing = enclosing_location(op)
    if enclosing is not None:
        return LoomError(message, filename=enclosing.filename.data, line=enclosing.line.data,
                         column=enclosing.column.data, where=f"'{op.name}'")
    return LoomError(message, where=f"'{op.name}'")


def enclosing_location(op: Operation) -> FileLineColLoc | None:
    """The FileLineColLoc of the nearest op around ``op`` that has one."""
    parent = op.parent_op()
    while parent is not None:
        loc = getattr(parent, "location", None)
        if isinstance(loc, FileLineColLoc):
            return loc
        parent = parent.parent_op()
    return None


def op_display_name(op: Operation) -> str:
    if op.name == "builtin.unregistered" and "op_name__" in op.attributes:
        return op.attributes["op_name__"].data  # type: ignore[attr-defined]
    return op.name


@dataclass
class View:
    """A memref value in C: ``ptr[offset + sum(i_k * strides[k])]``."""

    ptr: str
    offset: Ix
    sizes: list[Ix]
    strides: list[Ix]
    info: MemRefInfo
    allocated: str | None = None  # pointer to free() for memref.dealloc

    @property
    def elem(self) -> ScalarType:
        return self.info.elem


def c_identifier(name: str) -> str:
    return "loom_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


@dataclass
class ModuleContext:
    """Module-wide state shared by the function emitters."""

    signatures: dict[str, FuncSignature]
    structs: set[tuple[ScalarType, int]] = field(default_factory=set)
    globals: dict[str, str] = field(default_factory=dict)  # mlir global name -> C array name
    global_defs: list[str] = field(default_factory=list)
    wide_rows: set[str] = field(default_factory=set)  # loomh_rows_<bytes> helpers defined (emit_memory)
    checked: bool = False  # guarded entry (see ``checks``): status, setjmp wrapper, division checks
    check_bounds: bool = False  # checked mode proper: index, slice and copy-shape checks too
    gathers: DataIndices | None = None  # check data-dependent indices (see ``gathers``); None: not asked
    sites: list[Site] = field(default_factory=list)  # checked mode: site number -> op location
    defined: set[str] = field(default_factory=set)  # functions with a body (checked mode calls their body)
    native: bool = False  # host-ISA code: simd pragmas and restrict pointers (see ``openmp``, ``restrict``)
    restrict: dict[str, frozenset[int]] = field(default_factory=dict)  # function -> restrict memref params
    types: Callable[..., ScalarType] = scalar_type  # MLIR scalar type -> backend type (the HLS backend's own)
    openmp: bool = True  # outermost scf.parallel loops become OpenMP loops (the HLS backend says no)
    scalar_gathers: bool = True  # narrow gathers' indices hidden from gcc's vectorizer (emit_memory; not HLS)

    def descriptor(self, info: MemRefInfo) -> str:
        self.structs.add((info.elem, info.rank))
        return descriptor_struct_name(info.elem, info.rank)


class FunctionEmitter:
    """Emits one func.func as C text.

    A backend that reuses the handlers (the HLS backend) subclasses this: ``OVERRIDES`` replaces
    handlers by op name, ``loop_pragmas`` adds lines at the top of each loop body."""

    OVERRIDES: dict[str, Handler] = {}
    LONG_COPY: str | None = "loomh_memcpy_long"  # long constant memref.copy runs (prelude.LONG_COPY); None: memcpy
    COPY_UNROLL: int | None = 8  # unroll factor of small-run memref.copy loops (emit_memory); None: not unrolled
    WIDE_ROWS = True  # row loops of memref.copy with AVX moves where the CPU has them (prelude.WIDE_ROWS)

    def __init__(self, ctx: ModuleContext, func: FuncOp):
        self.ctx = ctx
        self.func = func
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict[SSAValue, str] = {}
        self.views: dict[SSAValue, View] = {}
        self.counter = 0
        self.free_scopes: list[list[str]] = []
        self.yield_targets: list[list[str]] = []  # result variables of the enclosing region op
        self.region_stack: list[object] = []  # handler-specific state (scf.while, scf.parallel)
        self.restrict_args: set[SSAValue] = set()  # memref parameters with restrict data pointers
        self.checked_in: dict[object, set] = {}  # block -> (index value, size) pairs checked there (emit_memory)
        self.omp: OmpRegion | None = None  # the OpenMP loop of a guarded function being emitted (``deferred``)
        self.unchecked: set[tuple[Operation, int]] = set()  # (access, index position) known in range here

    # -- output helpers ---------------------------------------------------------------------
    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def open(self, text: str) -> None:
        self.line(text)
        self.depth += 1

    def close(self, text: str = "}") -> None:
        self.depth -= 1
        self.line(text)

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def loop_pragmas(self, op: Operation, dim: int = 0) -> list[str]:
        """Lines placed first in the body of loop ``op`` (dimension ``dim`` of an scf.parallel)."""
        return []

    # -- checked mode -----------------------------------------------------------------------
    @property
    def checked(self) -> bool:
        """The function body reports failures through the guarded entry (division checks are on)."""
        return self.ctx.checked

    @property
    def check_bounds(self) -> bool:
        """Index, slice and copy-shape checks (opt-in checked mode)."""
        return self.ctx.check_bounds

    def site(self, op: Operation) -> int:
        """Number of a new check site for ``op`` (reported back on failure)."""
        self.ctx.sites.append(site_of(op, self.func.sym_name.data))
        return len(self.ctx.sites) - 1

    def check(self, helper: str, site: int, *args: object) -> None:
        if self.omp is not None:  # a longjmp may not leave the OpenMP region: recorded, reported after it
            self.line(deferred_check(self.omp, helper, site, args))
            return
        self.line(f"{helper}({CTX}, {site}, {', '.join(str(a) for a in args)});")

    def checks_inside(self, loop: Operation) -> bool:
        """Does ``loop`` hold a check (a division that may fail, an index checked at its access, a view checked
        where it is made)? Such a loop gets no ``omp simd`` pragma: a failing check leaves it with a longjmp."""
        g = self.ctx.gathers
        for op in loop.walk():
            if _unsafe_division(op):
                return True
            if g is not None and op.name in GATHER_ACCESSES and any(
                    d and (op, k) not in self.unchecked for k, d in enumerate(g.access_mask(op))):
                return True
            if g is not None and op.name in GATHER_VIEWS and g.view_dependent(op):
                return True
        return False

    def free_call(self, ptr: str) -> str:
        if self.omp is not None and ptr in self.omp.buffers:
            return f"loomh_block_free(&{self.omp.local}, {ptr});"
        return f"loomh_free_tracked({CTX}, {ptr});" if self.checked else f"free({ptr});"

    # -- values -----------------------------------------------------------------------------
    def scalar(self, ty) -> ScalarType:
        """The backend's type for an MLIR scalar type (the module's resolver: C's, or the HLS backend's)."""
        return self.ctx.types(ty, "")

    def memref(self, ty) -> MemRefInfo:
        return memref_info(ty, "", self.ctx.types)

    def val(self, value: SSAValue) -> str:
        try:
            return self.names[value]
        except KeyError:
            if value in self.views:
                raise LoomError("memref value used where a scalar is expected") from None
            raise LoomError(f"C backend: value {value} used before definition") from None

    def view(self, value: SSAValue, op: Operation) -> View:
        try:
            return self.views[value]
        except KeyError:
            raise op_error(op, f"operand of '{op.name}' is not a memref known to the C backend") from None

    def stype(self, value: SSAValue, op: Operation) -> ScalarType:
        try:
            return self.scalar(value.type)
        except LoomError as err:
            raise op_error(op, f"{err.message} (in '{op.name}')") from None

    def define(self, result: SSAValue, expr: str, prefix: str = "v") -> str:
        """Bind a scalar result to a new C local initialised with ``expr``."""
        st = self.scalar(result.type)
        name = self.fresh(prefix)
        self.line(f"{st.ctype} {name} = {expr};")
        self.names[result] = name
        return name

    def declare(self, st: ScalarType, init: str = "0", prefix: str = "r") -> str:
        name = self.fresh(prefix)
        self.line(f"{st.ctype} {name} = {init};")
        return name

    def index_ix(self, value: SSAValue) -> Ix:
        """An index operand as an Ix: an int when it is an inlined integer literal."""
        text = self.val(value)
        try:
            return int(text)
        except ValueError:
            return text

    # -- structure --------------------------------------------------------------------------
    def emit_block(self, block: Block) -> None:
        self.free_scopes.append([])
        ops = list(block.ops)
        for op in ops:
            if op.name in TERMINATORS and op is ops[-1] and op.name != "func.return":
                self.emit_frees(self.free_scopes[-1])
            self.dispatch(op)
        if not ops or ops[-1].name not in TERMINATORS:
            self.emit_frees(self.free_scopes[-1])
        self.free_scopes.pop()

    def emit_frees(self, pointers: list[str]) -> None:
        for ptr in reversed(pointers):
            self.line(self.free_call(ptr))

    def dispatch(self, op: Operation) -> None:
        handler = self.OVERRIDES.get(op.name) or HANDLERS.get(op.name)
        if handler is None:
            raise op_error(op, f"unsupported operation '{op_display_name(op)}' in C backend")
        self.run_handler(handler, op)

    def run_handler(self, handler, op: Operation) -> None:
        """``handler(self, op)``; an error it raises without a place is located at ``op``."""
        try:
            handler(self, op)
        except LoomError as err:
            if err.filename is None and err.where is None:
                raise op_error(op, err.message) from None
            raise

    def assign_all(self, targets: list[str], values: list[SSAValue]) -> None:
        """Parallel assignment of SSA values to C variables (a yield may swap loop-carried values)."""
        texts = [self.val(v) for v in values]
        ctypes_ = [self.scalar(v.type).ctype for v in values]
        if len(targets) == 1:
            if targets[0] != texts[0]:
                self.line(f"{targets[0]} = {texts[0]};")
            return
        temps = []
        for ctype, value in zip(ctypes_, texts):
            temp = self.fresh("t")
            self.line(f"{ctype} {temp} = {value};")
            temps.append(temp)
        for target, temp in zip(targets, temps):
            self.line(f"{target} = {temp};")

    # -- function ---------------------------------------------------------------------------
    def emit(self) -> str:
        sig = self.ctx.signatures[self.func.sym_name.data]
        header = function_prototype(self.ctx, sig, checked_body=self.checked)
        block = self.func.body.blocks[0]
        restrict = self.ctx.restrict.get(sig.mlir_name, frozenset())
        for arg, spec in zip(block.args, sig.params):
            pname = f"p{spec.index}"
            if spec.memref is not None:
                self.views[arg] = self.argument_view(pname, spec.memref, spec.index in restrict)
                if spec.index in restrict:
                    self.restrict_args.add(arg)
            else:
                self.names[arg] = pname
        self.emit_block(block)
        text = header + " {\n" + "\n".join(self.lines) + "\n}\n"
        if self.checked and sig.public:
            text += "\n" + checked_wrapper(self.ctx, sig)
        return text

    def argument_view(self, pname: str, info: MemRefInfo, restrict: bool = False) -> View:
        """Locals for a descriptor argument: static facts of the type become literals."""
        ptr = self.fresh("m")
        qualifier = "restrict " if restrict else ""
        self.line(f"{info.elem.ctype} *{qualifier}{ptr} = {pname}->aligned;")
        offset: Ix = info.offset if info.offset is not None else f"{pname}->offset"
        if isinstance(offset, str):
            name = f"{ptr}_off"
            self.line(f"intptr_t {name} = {offset};")
            offset = name
        sizes: list[Ix] = []
        strides: list[Ix] = []
        for k in range(info.rank):
            if info.shape[k] is not None:
                sizes.append(info.shape[k])  # type: ignore[arg-type]
            else:
                self.line(f"intptr_t {ptr}_n{k} = {pname}->sizes[{k}];")
                sizes.append(f"{ptr}_n{k}")
            if info.strides[k] is not None:
                strides.append(info.strides[k])  # type: ignore[arg-type]
            else:
                self.line(f"intptr_t {ptr}_s{k} = {pname}->strides[{k}];")
                strides.append(f"{ptr}_s{k}")
        return View(ptr, offset, sizes, strides, info, allocated=f"{pname}->allocated")


def checked_body_name(sig: FuncSignature) -> str:
    """C name of a defined function's body in checked mode (``loom_f`` is then the exported wrapper)."""
    return "loomc_" + sig.c_name[len("loom_"):]


def function_prototype(ctx: ModuleContext, sig: FuncSignature, checked_body: bool = False) -> str:
    """The C prototype; ``checked_body``: the static body of checked mode, taking the check context first."""
    params = [f"loomh_ctx *{CTX}"] if checked_body else []
    if sig.memref_result is not None:  # external only: the callee fills the caller's descriptor
        params.append(f"{ctx.descriptor(sig.memref_result)} *result")
    for spec in sig.params:
        if spec.memref is not None and spec.memref.unranked:
            # MLIR's unranked memref ABI: (rank, pointer to a ranked descriptor)
            params.append(f"int64_t p{spec.index}_rank, void *p{spec.index}")
        elif spec.memref is not None:
            params.append(f"{ctx.descriptor(spec.memref)} *p{spec.index}")
        else:
            params.append(f"{spec.scalar.ctype} p{spec.index}")  # type: ignore[union-attr]
    if len(sig.results) == 1:
        ret = sig.results[0].ctype
    else:
        ret = "void"
        params += [f"{r.ctype} *out{k}" for k, r in enumerate(sig.results)]
    storage = "" if sig.public and not checked_body else "static "
    name = checked_body_name(sig) if checked_body else sig.c_name
    return f"{storage}{ret} {name}({', '.join(params) or 'void'})"


def checked_wrapper(ctx: ModuleContext, sig: FuncSignature) -> str:
    """Exported entry of checked mode: setjmp target of failed checks, frees tracked buffers."""
    header = function_prototype(ctx, sig)
    params = header[header.index("(") + 1 : -1]
    params = "loomh_status *loomh_status_out" if params == "void" else params + ", loomh_status *loomh_status_out"
    header = header[: header.index("(") + 1] + params + ")"
    args = [f"&{CTX}"]
    for spec in sig.params:
        if spec.memref is not None and spec.memref.unranked:
            args += [f"p{spec.index}_rank", f"p{spec.index}"]
        else:
            args.append(f"p{spec.index}")
    if len(sig.results) != 1:
        args += [f"out{k}" for k in range(len(sig.results))]
    call = f"{checked_body_name(sig)}({', '.join(args)})"
    lines = [
        f"  loomh_ctx {CTX};",
        f"  {CTX}.status = loomh_status_out;",
        f"  if (setjmp({CTX}.env)) {{",
        "    loomh_free_all(loomh_status_out);",
        "    return 0;" if len(sig.results) == 1 else "    return;",
        "  }",
    ]
    if len(sig.results) == 1:
        lines += [f"  {sig.results[0].ctype} result = {call};", "  loomh_free_all(loomh_status_out);",
                  "  return result;"]
    else:
        lines += [f"  {call};", "  loomh_free_all(loomh_status_out);"]
    return header + " {\n" + "\n".join(lines) + "\n}\n"


def function_signature(func: FuncOp, types: Callable[..., ScalarType] = scalar_type) -> FuncSignature:
    name = func.sym_name.data
    where = f"func @{name}"
    params = []
    names = arg_dim_names(func)
    for k, ty in enumerate(func.function_type.inputs.data):
        if is_memref(ty):
            info = memref_info(ty, where, types)
            dims = names[k] if names[k] is not None and len(names[k]) == info.rank else None
            params.append(ParamSpec(k, info, None, dim_names=dims, name=_arg_name(func, k)))
        else:
            params.append(ParamSpec(k, None, types(ty, where)))
    results = []
    memref_result = None
    outputs = func.function_type.outputs.data
    for ty in outputs:
        if is_memref(ty):
            if func.body.blocks or len(outputs) != 1:
                raise LoomError("memref results are not supported by the C backend, except on external "
                                "(body-less) functions with one result (a descriptor pointer passed first)",
                                where=where)
            memref_result = memref_info(ty, where, types)
            if memref_result.unranked:
                raise LoomError("an unranked memref result is not supported by the C backend", where=where)
            continue
        results.append(types(ty, where))
    visibility = func.sym_visibility.data if func.sym_visibility is not None else "public"
    params = mark_written_params(func, params)
    external = not func.body.blocks
    if visibility == "public" or external:
        for spec in params:
            if spec.scalar is not None and spec.scalar.mlir == "f16":
                raise LoomError("f16 scalars cannot cross the C boundary; pass them in a memref", where=where)
        if any(r.mlir == "f16" for r in results):
            raise LoomError("f16 results cannot cross the C boundary; return them in a memref", where=where)
    if not external and any(spec.memref is not None and spec.memref.unranked for spec in params):
        raise LoomError("unranked memref parameters (memref<*xT>) are only supported on external "
                        "(body-less) functions, passed as (rank, descriptor pointer)", where=where)
    # External declarations keep their name: they are provided by a C runtime linked in.
    c_name = name if external else c_identifier(name)
    if external and not name.isidentifier():
        raise LoomError(f"external function name '{name}' is not a C identifier", where=where)
    return FuncSignature(name, c_name, tuple(params), tuple(results), visibility == "public" and not external,
                         memref_result)


def _arg_name(func: FuncOp, k: int) -> str | None:
    return func.body.blocks[0].args[k].name_hint if func.body.blocks else None


_VIEW_OPS = {"memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.expand_shape", "memref.collapse_shape"}
_WRITE_OPERAND = {"memref.store": 1, "affine.store": 1, "memref.copy": 1}
_READ_ONLY_USES = {"memref.load", "affine.load", "memref.dim", "memref.copy"}


def mark_written_params(func: FuncOp, params: list[ParamSpec]) -> list[ParamSpec]:
    """Find memref parameters the function may write through (conservative: unknown uses count as writes)."""
    if not func.body.blocks:
        return params
    args = func.body.blocks[0].args
    result = []
    for spec in params:
        may_write = False
        pending = [args[spec.index]] if spec.memref is not None else []
        seen: set[SSAValue] = set()
        while pending and not may_write:
            value = pending.pop()
            if value in seen:
                continue
            seen.add(value)
            for use in value.uses:
                user = use.operation
                if user.name in _VIEW_OPS:
                    pending.extend(user.results)
                elif _WRITE_OPERAND.get(user.name) == use.index:
                    may_write = True
                elif user.name not in _READ_ONLY_USES:
                    may_write = True  # escapes into a callee, a yield, ...
        result.append(ParamSpec(spec.index, spec.memref, spec.scalar, may_write, spec.dim_names, spec.name))
    return result


@dataclass
class CProgram:
    source: str
    signatures: dict[str, FuncSignature]
    sites: tuple[Site, ...] | None = None  # checked mode: site number -> op location
    restrict: dict[str, frozenset[int]] = field(default_factory=dict)  # native mode: restrict memref params


def lower_module(module: ModuleOp, checked: bool = False, native: bool = False,
                 check_gathers: bool = False) -> CProgram:
    """Emit C for every func.func (and memref.global) of the module (``checked``: see ``checks``;
    ``native``: simd pragmas and restrict pointers, see ``openmp`` and ``restrict``; ``check_gathers``: check
    the indices computed from data, see ``gathers``)."""
    # Importing registers the op handlers.
    from loom.backends.c import emit_control, emit_memory, emit_scalar  # noqa: F401

    funcs: list[FuncOp] = []
    check_bounds = checked
    gathers = check_gathers and not check_bounds and has_gathers(module)
    # division is always checked (see ``checks``); a heap buffer's failed malloc is a check failure too
    checked = checked or gathers or has_unsafe_division(module) or emit_memory.has_heap_buffers(module)
    # native mode stays on with the guarded entry: a loop holding a check gets no simd pragma (checks_inside)
    ctx = ModuleContext(signatures={}, checked=checked, check_bounds=check_bounds, native=native and not check_bounds,
                        scalar_gathers=not native, gathers=DataIndices() if gathers else None)
    for op in module.body.block.ops:
        if isinstance(op, FuncOp):
            funcs.append(op)
            ctx.signatures[op.sym_name.data] = function_signature(op)
            if op.body.blocks:
                ctx.defined.add(op.sym_name.data)
        elif op.name == "memref.global":
            emit_memory.emit_global(ctx, op)
        else:
            raise op_error(op, f"unsupported operation '{op_display_name(op)}' at module level in C backend")
    if ctx.native:
        called = called_functions(funcs)
        for func in funcs:
            sig = ctx.signatures[func.sym_name.data]
            ctx.restrict[sig.mlir_name] = restrict_params(func, sig.public, called)
    bodies = []
    prototypes = []
    for func in funcs:
        sig = ctx.signatures[func.sym_name.data]
        if not func.body.blocks:  # external declaration: provided by a library linked in
            prototypes.append("extern " + function_prototype(ctx, sig).replace("static ", "") + ";")
            continue
        prototypes.append(function_prototype(ctx, sig, checked_body=checked) + ";")
        bodies.append(FunctionEmitter(ctx, func).emit())
    structs = sorted(ctx.structs, key=lambda s: (s[0].mlir, s[1]))
    parts = [PRELUDE + CHECK_PRELUDE] if checked else [PRELUDE]
    parts += [descriptor_struct_c(elem, rank) for elem, rank in structs]
    parts += [""] + ctx.global_defs + [""] + prototypes + [""] + bodies
    return CProgram("\n".join(parts), ctx.signatures, tuple(ctx.sites) if checked else None,
                    {name: params for name, params in ctx.restrict.items() if params})


_INT_DIVISIONS = {"arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi",
                  "arith.ceildivsi", "arith.ceildivui"}


def has_unsafe_division(root: Operation) -> bool:
    """Does an integer division in ``root`` have a divisor that may be 0?"""
    return any(_unsafe_division(op) for op in root.walk())


def _unsafe_division(op: Operation) -> bool:
    if op.name not in _INT_DIVISIONS:
        return False
    divisor = op.operands[1].owner
    value = getattr(divisor, "value", None) if getattr(divisor, "name", "") == "arith.constant" else None
    literal = getattr(value, "value", None)
    if literal is None or not isinstance(literal.data, int):
        return True
    return literal.data == 0  # -1 wraps MIN / -1 (numpy's answer): no check (emit_scalar)


def guarded_inside(root: Operation) -> bool:
    """Must ``root`` (a parallel loop of a guarded function) stay serial? When it calls a function (a guarded
    callee fails with a longjmp, which may not leave an OpenMP region) or frees a buffer made outside it (on
    the function's list, not shared between threads). Its own checks and buffers are deferred (``deferred``)."""
    for op in root.walk():
        if op.name == "func.call":
            return True
        if op.name == "memref.dealloc" and not root.is_ancestor(op.operands[0].owner if isinstance(
                op.operands[0].owner, Operation) else op.operands[0].owner.parent_op()):
            return True
    return False


def emit_c(module: ModuleOp, checked: bool = False, native: bool = False, check_gathers: bool = False) -> str:
    """C99 source for a module of func/scf/affine/memref/arith/math ops."""
    return lower_module(module, checked, native, check_gathers).source
