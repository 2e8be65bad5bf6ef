"""The AST interpreter that turns a kernel's source into a ``func.func``.

The function is never executed: its AST is walked and every construct emits
xDSL ops (through ``ImplicitBuilder``), so both arms of an ``if`` are seen.

Scoping rules:

* ``for`` loops: variables assigned in the body that exist before the loop are
  loop-carried (``iter_args`` + ``scf.yield``; all of them, whether or not they
  are read later: an unused loop result is simply dead); names first bound inside the
  loop are loop-local (using them afterwards is an error).  The induction
  variable is scoped to its loop.  A carried variable holding a Python
  constant (``acc = 0.0``) takes the type it gets in the body (found by a
  throw-away trace of the body), else int -> index, float -> f64, bool -> i1.
* ``if``: both regions are always built.  Variables assigned in both arms, or
  assigned in one arm and defined before, become ``scf.if`` results; a name
  bound in one arm only is unusable afterwards.  Conditions that are Python
  constants (``if N > 4`` with ``N = 8`` a global) are folded at trace time:
  only the taken arm is emitted.
* an if/while/conditional-expression test that is a number is Python's truth test (``x != 0``; a float nan is
  true), as are its ``and``/``or`` operands; ``not n`` is ``n == 0``.
* ``a and b`` / ``a or b`` / ``x if c else y`` are ``arith`` ops when the
  operands are pure arithmetic, and an ``scf.if`` when evaluating the second
  operand reads memory or calls (so ``i > 0 and A[i - 1] > 0`` never reads
  out of bounds).
* ``break``/``continue`` in range and while loops become i1 flags (``loop_exits.py``); a range loop
  that breaks is an ``scf.while`` testing its flag, so it stops at the break.
* ``for x in X``, ``enumerate``, ``zip`` over memrefs become range loops
  (``loop_iterables.py``); a loop over a Python tuple is unrolled at trace time.
* ``return`` inside loops or before the end: a flag and result variables
  (``early_return.py``; the kernel must annotate its result types).
* ``alloc`` buffers are freed (``memref.dealloc``) at the end of the block that
  allocated them; ``alloca`` buffers live until the function returns.
* Name lookup: kernel locals, then the closure, then globals, then builtins.
  Python ints/floats/bools become constants, numpy arrays read-only
  constant tables (``tables.py``); other kernels become
  ``func.call``; nested ``def``s and the user's own plain Python functions
  called from the kernel are inlined (``inline.py``); anything else is an error.
"""

from __future__ import annotations

import ast

from xdsl.builder import Builder, ImplicitBuilder, _current_builder
from xdsl.dialects import func, memref
from xdsl.dialects.linalg import ops as lops
from xdsl.dialects.builtin import DYNAMIC_INDEX, FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

from loom.dialects.dims import dims_arg_attrs
from loom.errors import LoomError
from loom.frontends.kernel import early_return
from loom.frontends.kernel import values as V
from loom.frontends.kernel.control_flow import ControlFlowMixin
from loom.frontends.kernel.inline import InlineMixin
from loom.frontends.kernel.tables import TableMixin
from loom.frontends.kernel.expressions import (_BINOPS, _RET_N, ExpressionsMixin, LocalFunction,
                                              _unsupported_operator)
from loom.frontends.kernel.kernel_types import ScalarType
from loom.frontends.kernel.signature import KernelSignature, KernelSource
from loom.frontends.kernel.values import PY_CONST, AffineForm, MemRefValue, Value


# statements with no kernel meaning: (construct name, advice)
_UNSUPPORTED_STMTS = {
    ast.Try: ("try", "exceptions do not exist in kernels"),
    ast.With: ("with", "context managers are not supported in kernels"),
    # reached only where no loop rewrote them (loop_exits): inside a parallel loop
    ast.Break: ("break", "a parallel loop cannot be left early"),
    ast.Continue: ("continue", "a parallel loop's body cannot be skipped with continue; wrap the rest in an if"),
    ast.Global: ("global", "kernels cannot rebind globals"),
    ast.Nonlocal: ("nonlocal", "kernels cannot rebind enclosing variables"),
    ast.Raise: ("raise", "exceptions do not exist in kernels"),
    ast.Delete: ("del", "'del' is not supported in kernels"),
    ast.Import: ("import", "import modules outside the kernel"),
    ast.ImportFrom: ("import", "import modules outside the kernel"),
    ast.ClassDef: ("class", "classes cannot be defined in kernels"),
    ast.AsyncFor: ("async for", "async code is not supported in kernels"),
    ast.AsyncWith: ("async with", "async code is not supported in kernels"),
    ast.AsyncFunctionDef: ("async def", "async code is not supported in kernels"),
    ast.Assert: ("assert", "asserts are not supported in kernels"),
}
if hasattr(ast, "Match"):
    _UNSUPPORTED_STMTS[ast.Match] = ("match", "'match' is not supported; use if/elif")
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = ("try", "exceptions do not exist in kernels")


class Tracer(ControlFlowMixin, ExpressionsMixin, InlineMixin, TableMixin):
    def __init__(self, src: KernelSource, sig: KernelSignature, loops: str, kernel_cls, resolve_callee):
        self.src = src
        self.sig = sig
        self.loops = loops
        self.kernel_cls = kernel_cls
        self.resolve_callee = resolve_callee  # Kernel -> FuncOp type (and registers it)
        self.fname = StringAttr(src.filename)
        self._locs: dict = {}
        self.env: dict = {}
        self.dead: dict = {}
        self.loop_depth = 0
        self.truth_tests: set = set()  # the and/or nodes that are if/while tests (``condition``)
        self.dealloc_scopes: list[list] = []
        self.callees: dict = {}
        self._inlining: list = []  # helper defs being inlined (recursion detection)
        self._helper_sources: dict = {}  # helper function -> its KernelSource
        self.tables: dict = {}  # symbol -> memref.global of a captured numpy array (``tables``)
        self._table_refs: dict = {}  # symbol -> its memref.get_global at the function entry
        self.result_types = list(sig.results) if sig.results is not None else None

    # ------------------------------------------------------------ locations / errors

    def loc(self, node) -> FileLineColLoc:
        key = (node.lineno, node.col_offset)
        hit = self._locs.get(key)
        if hit is None:
            # .new skips re-verifying the parameters (they are well-formed by construction)
            hit = FileLineColLoc.new((self.fname, IntAttr(node.lineno + self.src.line_offset),
                                      IntAttr(node.col_offset + 1)))
            self._locs[key] = hit
        return hit

    def err(self, msg: str, node, construct: str | None = None) -> LoomError:
        return LoomError(msg, filename=self.src.filename, line=node.lineno + self.src.line_offset,
                         column=node.col_offset + 1, construct=construct)

    def _fill(self, e: LoomError, node, construct=None):
        if e.filename is None:
            e.filename = self.src.filename
            e.line = node.lineno + self.src.line_offset
            e.column = node.col_offset + 1
            if e.construct is None:
                e.construct = construct
            e.args = (str(e),)

    # ------------------------------------------------------------ function

    def trace(self) -> func.FuncOp:
        f = self.src.func
        entry = Block(arg_types=[p.xdsl_type for p in self.sig.params])
        self.ctx = V.EmitContext(entry)
        old_ctx = V.set_context(self.ctx)
        # a callee is traced while its caller is being built: detach from the caller's builder
        # (a builder on a scratch block, not None: None would make xDSL hook op creation twice)
        outer_builder = _current_builder.builder
        if outer_builder is not None:
            _current_builder.builder = Builder(InsertPoint.at_end(Block()))
        try:
            for p, arg in zip(self.sig.params, entry.args):
                arg.name_hint = p.name
                if p.kind == "memref":
                    self.env[p.name] = MemRefValue(arg, dim_cache={}, element=p.element)
                else:
                    aff = AffineForm({arg: 1}) if p.element.kind == "index" else None
                    self.env[p.name] = Value(arg, p.element, aff)
            with ImplicitBuilder(entry):
                self.exec_block(self._body_with_early_returns(f), tail=True)
                self.ctx.loc = self.loc(f.body[-1])
                self._emit_return(f)
            ftype = ([p.xdsl_type for p in self.sig.params], [t.xdsl for t in self.result_types])
            # named dynamic dims travel with the IR, so every compiled route can check them at call time
            named = [[d if isinstance(d, str) else "" for d in p.dims] if p.kind == "memref" else None
                     for p in self.sig.params]
            fop = func.FuncOp(self.sig.name, ftype, Region(entry), arg_attrs=dims_arg_attrs(named))
            fop.location = self.loc(f)
            if fop.parent is not None:
                fop.detach()
        finally:
            V.set_context(old_ctx)
            _current_builder.builder = outer_builder
        return fop

    def _body_with_early_returns(self, f: ast.FunctionDef) -> list[ast.stmt]:
        """The body, with returns from loops (or before the end) turned into flags (``early_return``)."""
        if not early_return.needs_rewrite(f.body):
            return f.body
        inside = early_return.return_in_parallel(f.body)
        if inside is not None:
            raise self.err("return inside a parallel loop: its iterations run in any order; write the result to a "
                           "memref instead", inside, "return")
        if self.result_types is None and all(r.value is None for r in early_return.returns_of(f.body)):
            self.result_types = []  # a procedure: bare returns only
        if self.result_types is None:
            where = early_return.first_return([s for s in f.body if isinstance(s, (ast.For, ast.While))]) or f
            raise self.err("returning from inside a loop (or before the end of the kernel) needs the kernel's "
                           "result types up front: annotate them, e.g. 'def k(...) -> Index:'", where, "return")
        if self.result_types and not early_return.ends_with_return(f.body):
            # Python would return None after the loop: no made-up value instead
            raise self.err(f"kernel '{f.name}' returns {[str(t) for t in self.result_types]} but can reach its end "
                           "without a return; end it with one", f.body[-1], "return")
        for i, t in enumerate(self.result_types):
            self.bind(early_return.result_name(i), V.const_value(0, t))
        self.bind(early_return.DONE, False)
        return early_return.rewrite(f.body, len(self.result_types), f.body[-1])

    def _emit_return(self, f: ast.FunctionDef):
        if _RET_N in self.env:
            n = self.env[_RET_N]
            vals = [self.env[f"$ret{i}"] for i in range(n)]
            func.ReturnOp(*[v.ssa for v in vals]).location = self.ctx.loc
            return
        if _RET_N in self.dead:
            raise self.err(self.dead[_RET_N], f, "return")
        if self.result_types:
            raise self.err(f"kernel '{f.name}' is annotated to return {self.result_types} but does not end with "
                           "a return", f, "return")
        self.result_types = []
        func.ReturnOp().location = self.ctx.loc

    # ------------------------------------------------------------ statements

    def exec_block(self, stmts: list[ast.stmt], tail: bool = False):
        self.dealloc_scopes.append([])
        for i, st in enumerate(stmts):
            self.exec_stmt(st, tail and i == len(stmts) - 1)
        for buf in reversed(self.dealloc_scopes.pop()):
            memref.DeallocOp.get(buf).location = self.ctx.loc

    def exec_stmt(self, st: ast.stmt, tail: bool):
        bad = _UNSUPPORTED_STMTS.get(type(st))
        if bad is not None:
            raise self.err(f"'{bad[0]}' is not supported in kernels: {bad[1]}", st, bad[0])
        handler = getattr(self, "st_" + type(st).__name__, None)
        if handler is None:
            raise self.err(f"unsupported statement '{type(st).__name__}'", st, type(st).__name__)
        self.ctx.loc = self.loc(st)
        try:
            if isinstance(st, (ast.If, ast.Return)):
                handler(st, tail)
            else:
                handler(st)
        except LoomError as e:
            self._fill(e, st, type(st).__name__)
            raise
        except RecursionError:
            raise self.err("statement nests too deeply", st) from None
        except Exception as e:  # internal failure: report it at the user's line, not as a traceback
            raise self.err(f"internal error while compiling this statement: {type(e).__name__}: {e}", st,
                           type(st).__name__) from e

    def st_Pass(self, st):
        pass

    def st_Expr(self, st: ast.Expr):
        if isinstance(st.value, ast.Constant):  # docstrings, '...'
            return
        self.ev(st.value)

    def st_FunctionDef(self, st: ast.FunctionDef):
        if st.decorator_list:
            raise self.err("nested functions cannot be decorated", st, "def")
        self.bind(st.name, LocalFunction(st))

    def st_Assign(self, st: ast.Assign):
        value = self.ev(st.value)
        for t in st.targets:
            self.assign(t, value, st)

    def st_AnnAssign(self, st: ast.AnnAssign):
        if st.value is None:
            raise self.err("a declaration without a value is not supported; assign a value", st, "annotation")
        from loom.frontends.kernel.signature import AnnotationReader

        t = AnnotationReader(self.src).scalar_or_memref(st.annotation, "the variable")
        value = self.ev(st.value)
        if isinstance(t, ScalarType):
            value = self.coerce(value, t, f"assignment to '{ast.unparse(st.target)}'", st)
        self.assign(st.target, value, st)

    def st_AugAssign(self, st: ast.AugAssign):
        if type(st.op) not in _BINOPS:
            raise self.err(_unsupported_operator(st.op), st, "operator")
        op = _BINOPS[type(st.op)]
        t = st.target
        if isinstance(t, ast.Name):
            if t.id not in self.env:
                if t.id in self.dead:
                    raise self.err(self.dead[t.id], st, "augmented assignment")
                raise self.err(f"augmented assignment to undefined variable '{t.id}'", st, "augmented assignment")
            rhs = self.ev(st.value)
            self.bind(t.id, V.binary(op, self.env[t.id], rhs))
            return
        if isinstance(t, ast.Subscript):
            base = self.ev(t.value)
            if isinstance(base, MemRefValue):
                self.check_writable(base, "written", st)
                idx = self.memref_indices(base, t)
                if idx is None:
                    raise self.err("augmented assignment to a slice is not supported", st, "augmented assignment")
                old = Value(V.emit(memref.LoadOp.get(base.ssa, idx)).results[0], base.element)
                rhs = self.ev(st.value)
                self.ctx.loc = self.loc(st)
                self.store(base, idx, V.binary(op, old, rhs), st)
                return
        raise self.err(f"unsupported augmented assignment target '{ast.unparse(t)}'", st, "augmented assignment")

    def assign(self, t: ast.expr, value, st):
        if isinstance(t, ast.Name):
            if value is None:
                raise self.err(f"cannot assign a call without result to '{t.id}'", st, "assignment")
            self.bind(t.id, value)
        elif isinstance(t, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in t.elts):
                raise self.err("starred assignment is not supported in kernels", t, "star-args")
            if not isinstance(value, (tuple, list)) or len(value) != len(t.elts):
                n = len(value) if isinstance(value, (tuple, list)) else 1
                raise self.err(f"cannot unpack {n} value(s) into {len(t.elts)} targets", t, "assignment")
            for e, v in zip(t.elts, value):
                self.assign(e, v, st)
        elif isinstance(t, ast.Subscript):
            base = self.ev(t.value)
            if not isinstance(base, MemRefValue):
                raise self.err(f"cannot assign into '{ast.unparse(t.value)}' ({V.type_name(base)}); "
                               "only memrefs support item assignment", t, "assignment")
            self.check_writable(base, "written", t)
            idx = self.memref_indices(base, t)
            self.ctx.loc = self.loc(st)
            if idx is None:
                self.assign_slice(self.subview(base, t), value, t)
                return
            self.store(base, idx, value, st)
        else:
            raise self.err(f"unsupported assignment target '{ast.unparse(t)}'", t, "assignment")

    def assign_slice(self, view: MemRefValue, value, node):
        """``Y[i, :] = 0.0`` fills the view (linalg.fill); ``Y[:, j] = X[j]`` copies a same-shaped memref into it
        (memref.copy: checked mode checks run-time sizes; static ones are checked here)."""
        if isinstance(value, MemRefValue):
            a, b = value.type.get_shape(), view.type.get_shape()
            if len(a) != len(b) or any(x != y and DYNAMIC_INDEX not in (x, y) for x, y in zip(a, b)):
                raise self.err(f"cannot assign a memref of shape {list(a)} to a slice of shape {list(b)} "
                               "(no broadcasting in kernels)", node, "assignment")
            if value.type.element_type != view.type.element_type:
                raise self.err(f"cannot assign {value.type.element_type} elements to a slice of "
                               f"{view.type.element_type}", node, "assignment")
            V.emit(memref.CopyOp(value.ssa, view.ssa))
            return
        v = self.coerce(value, view.element, f"assignment to a slice of {view.element.xdsl}", node)
        V.emit(lops.FillOp([v.ssa], [view.ssa], res=()))

    def bind(self, name: str, value):
        self.env[name] = value
        self.dead.pop(name, None)

    def coerce(self, value, stype: ScalarType, what: str, node) -> Value:
        if isinstance(value, PY_CONST):
            if isinstance(value, float) and not stype.is_float:
                raise self.err(f"float value {value!r} in {what}, which expects {stype.xdsl}", node, "type")
            return V.const_value(value, stype)
        if isinstance(value, Value):
            value = V.adopt_literal_choice(value, stype, what)
            if value.stype is not stype:
                raise self.err(f"{what} expects {stype.xdsl} but got {value.stype.xdsl} (cast explicitly)",
                               node, "type")
            return value
        raise self.err(f"{what} expects a {stype.xdsl} scalar, got {V.type_name(value)}", node, "type")

    def store(self, base: MemRefValue, idx, value, node):
        v = self.coerce(value, base.element, f"store into a memref of {base.element.xdsl}", node)
        V.emit(memref.StoreOp.get(v.ssa, base.ssa, idx))

