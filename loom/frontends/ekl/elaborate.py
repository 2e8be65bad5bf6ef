"""Elaboration: EKL syntax -> the esn form (``form.Kernel``), with esn's rules checked.

- Indexed lets ``let t[i, j] = ...`` declare bound indices; ``<op a, b< body``
  declares reduction indices (a reduction is the whole body of a let).
- Implicit Einstein notation: a name that is not defined, used as a subscript, is
  an esn index of its let: once = bound (result axes in order of appearance, only
  when the let declares no indices), twice = a ``+`` reduction, three times or more
  is refused.
- Element-wise operations on arrays (implicit loops) broadcast as numpy does;
  ``:`` keeps an axis, ``*`` inserts a unit axis, ``...`` keeps the remaining axes,
  missing trailing subscripts keep their axes; an index-valued array as a subscript
  gathers.
- Every index's extent is implied by all its direct subscript uses, which must
  agree: statically when both sizes are known, else as a run-time check
  (``Congruence``). Index arithmetic inside a subscript is refused unless it
  involves a looked-up index (a gather).
- ``static import`` arrays become trailing input parameters of every kernel.
- Reductions inside an expression and ``sum(v[, lo, hi])`` are hoisted into lets of
  their own; untyped lets are instantiated per scalar type their uses need; header
  indices a body does not use index its trailing axes; ``#``, ``~ [extents]`` and
  array literals (stacks) are views; ``inout&`` outputs are also read. The language
  as accepted is described in docs/ekl.md.

Constructs that parse but are not supported downstream are refused with a
located message naming them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from loom.errors import LoomError
from loom.frontends.ekl import form as F
from loom.frontends.ekl import syntax as S
from loom.frontends.ekl.source import Loc
from loom.frontends.ekl.types import COMPARE, FLOATS, SCALAR_NAMES, UNSUPPORTED_SCALARS, join, result_type

_FUNCTIONS = {"log", "exp", "sqrt", "abs", "sin", "cos", "tanh", "floor", "ceil"}
# what each builtin takes, for the message when it is called with another number of arguments
_ARITIES = {name: "one value" for name in _FUNCTIONS} | {
    "index": "one value", "min": "two values", "max": "two values",
    "sum": "one array (v) or an array and two bounds (v, lo, hi)"}


def _refuse_repeated(decl, declared: list[F.Index], where: str) -> None:
    """An index declared twice in one list (``out b[i, i]``, ``<+ k, k<``) is refused, as messner does: the
    second silently replaced the first, which then indexed nothing the body reads."""
    first = next((index for index in declared if index.name == decl.name), None)
    if first is not None:
        raise decl.loc.error(f"index '{decl.name}' is declared twice in {where} (first at {first.loc}); "
                             "an index names one axis: use another name")


@dataclass
class View:
    """An array-valued (or scalar, shape []) expression: its element at given index values."""

    shape: list[F.Extent]
    dtype: str
    at: Callable[[list[F.SExpr]], F.SExpr]

    @staticmethod
    def scalar(e: F.SExpr) -> View:
        return View([], e.dtype, lambda idx: e)


@dataclass
class _ArrayType:
    dtype: str
    shape: list[F.Extent | None]  # None: `?`
    ref: str | None = None


@dataclass
class _LetContext:
    """Implicit esn indices of the let being elaborated."""

    declared: bool  # the let lists its indices
    implicit: dict[str, F.Index] = field(default_factory=dict)
    uses: dict[str, list[Loc]] = field(default_factory=dict)
    hoisted: list[tuple] = field(default_factory=list)  # (shape to fill, bound indices, loc) of nested reductions


class Elaborator:
    def __init__(self, overrides: dict[str, str] | None = None):
        self.scopes: list[dict[str, object]] = [{}]
        self.overrides = overrides or {}  # type alias -> scalar type (scalar-type exploration)
        self.statics: list[F.Tensor] = []
        self.checks: list[F.Congruence] = []
        self.lets: list[F.Let] = []
        self.ctx: _LetContext | None = None
        self.retyped: dict[tuple[int, str], F.Tensor] = {}
        self.untyped: dict[int, F.Let] = {}  # untyped lets by id(tensor), typed where they are used
        self.counter = 0

    # ---- scopes
    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def define(self, name: str, value) -> None:
        self.scopes[-1][name] = value

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    # ---- program
    def program(self, program: S.Program) -> list[F.Kernel]:
        kernels = []
        for item in program.items:
            if isinstance(item, S.TypeDef):
                self.type_def(item)
            elif isinstance(item, S.ConstDef):
                self.const_def(item)
            elif isinstance(item, S.StaticDef):
                self.static_def(item)
            else:
                # kernels are called by name: a second definition would silently replace the first
                first = next((k for k in kernels if k.name == item.name), None)
                if first is not None:
                    raise item.loc.error(f"kernel '{item.name}' is defined twice (first at {first.loc})")
                kernels.append(self.kernel(item))
        return kernels

    def type_def(self, item: S.TypeDef) -> None:
        if item.name in self.overrides:
            self.define(item.name, _ArrayType(self.overrides[item.name], []))
            return
        self.define(item.name, item)  # resolved where it is used: an unused alias is never refused

    def const_def(self, item: S.ConstDef) -> None:
        if isinstance(item.value, S.ArrayLiteral):
            values = self.const_array(item.value)
            array = np.array(values, dtype=np.float64)
            # all-bool arrays are bool (a condition), as a scalar `const T = true` is; they read as numbers before
            dtype = "index" if _all_kind(item.value, "index") else "i1" if _all_kind(item.value, "bool") else "number"
            if dtype != "number":
                array = array.astype(F.NP_DTYPES[dtype])
            tensor = F.Tensor(item.name, dtype, list(array.shape), "const", item.loc, value=array)
            self.define(item.name, tensor)
        else:
            self.define(item.name, self.const_scalar(item.value))  # `const N = N` reads an outer N, or none

    def const_array(self, node: S.Expr):
        if isinstance(node, S.ArrayLiteral):
            items = [self.const_array(x) for x in node.items]
            lengths = {len(x) if isinstance(x, list) else -1 for x in items}
            if len(lengths) != 1:
                raise node.loc.error("nested array constant is not rectangular: rows have different lengths")
            return items
        c = self.const_scalar(node)
        return c.value

    def const_scalar(self, node: S.Expr) -> F.Const:
        e = self.scalar_of(self.view(node), node.loc)
        if isinstance(e, F.Const):
            return e
        if any(isinstance(x, (F.Idx, F.Read)) for x in F.walk(e)):
            raise node.loc.error("expected a constant expression (literals and other constants)")
        return _fold(e, node.loc)

    def static_def(self, item: S.StaticDef) -> None:
        if item.access != "import" or item.init is not None:
            raise item.loc.error(
                f"'static {item.access}' definitions are not supported (only 'static import NAME : & T[...]')",
                construct="static",
            )
        t = self.resolve_type(item.type) if item.type else None
        if t is None or t.ref not in ("in", None) or any(e is None for e in t.shape):
            raise item.loc.error("a static import needs a static input type '& T[extents]'")
        tensor = F.Tensor(item.name, t.dtype, list(t.shape), "param", item.loc)
        self.statics.append(tensor)
        self.define(item.name, tensor)

    # ---- types
    def scalar(self, name: str) -> str:
        """The scalar type a built-in name denotes: a float name may be rebound too (``{"f64": "f32"}``), so a
        source without a ``type REAL`` alias can still be instantiated in another float type."""
        dtype = SCALAR_NAMES[name]
        return self.overrides.get(name, dtype) if dtype in FLOATS else dtype

    def resolve_type(self, node: S.TypeExpr) -> _ArrayType:
        if isinstance(node, S.RefType):
            inner = self.resolve_type(node.pointee)
            return _ArrayType(inner.dtype, inner.shape, node.kind)
        if isinstance(node, S.ArrayType):
            base = self.resolve_type(node.scalar)
            if base.shape:
                raise node.loc.error("an array type's element type must be a scalar type")
            return _ArrayType(base.dtype, [self.extent(e) for e in node.extents])
        if isinstance(node, S.BoundedIndexType):
            return _ArrayType("index", [], None)
        if isinstance(node, S.ErrorType):
            raise node.loc.error("'?' is not a type (it is allowed as an extent: f64[?])", construct="?")
        if node.name in SCALAR_NAMES:
            return _ArrayType(self.scalar(node.name), [])
        if node.name in UNSUPPORTED_SCALARS:
            raise node.loc.error(
                f"scalar type {node.name} is not supported by the compiled kernels (use f64, f32, index or bool; "
                "or compute an f64 kernel in a number format: loom.jit.ekl_formats.in_format(kernel, 'bf16'), "
                "'loom ekl explore --format bf16')", construct=node.name)
        found = self.lookup(node.name)
        if isinstance(found, S.TypeDef):
            return self.resolve_type(found.type)
        if isinstance(found, _ArrayType):
            return found
        raise node.loc.error(f"unknown type '{node.name}'")

    def extent(self, node: S.Expr) -> int | None:
        """An extent: a constant whose value is a non-negative integer, whatever its type (``_2``, ``2``,
        ``2.0``, a ``const``), as messner's ``ParseDriver::extents`` takes any literal that converts to an
        unsigned integer exactly; ``2.5``, ``-_2`` and ``true`` are refused where they are used."""
        if isinstance(node, S.Literal) and node.kind == "error":
            return None
        c = self.const_scalar(node)
        value = c.value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            named = f"the constant '{node.name}' is {c.value!r}" if isinstance(node, S.Name) else f"got {c.value!r}"
            raise node.loc.error(f"an extent must be a non-negative integer, {named}")
        return value

    # ---- kernels
    def kernel(self, node: S.KernelDef) -> F.Kernel:
        self.scopes.append({})
        self.lets, self.checks = [], []
        params = []
        for decl in node.params:
            # arguments are passed by name too, and a static import is a trailing parameter
            first = next((p for p in params + list(self.statics) if p.name == decl.name), None)
            if first is not None:
                raise decl.loc.error(f"parameter '{decl.name}' of kernel '{node.name}' is declared twice "
                                     f"(first at {first.loc})")
            if decl.type is None:
                raise decl.loc.error(f"parameter '{decl.name}' needs a type ('{decl.name} : f64[n]')")
            t = self.resolve_type(decl.type)
            shape = [F.Dim(decl.name, k) if e is None else e for k, e in enumerate(t.shape)]
            tensor = F.Tensor(decl.name, t.dtype, shape, "param", decl.loc, is_output=t.ref in ("out", "inout"),
                              is_inout=t.ref == "inout")
            params.append(tensor)
            self.define(decl.name, tensor)
        written: set[str] = set()
        for stmt in node.body:
            self.stmt(stmt, written)
        for p in params:
            if p.is_output and not p.is_inout and p.name not in written:
                raise node.loc.error(f"output '{p.name}' of kernel '{node.name}' is never written "
                                     f"('out {p.name} = ...')")
        self.scopes.pop()
        consts = sorted({id(r.tensor): r.tensor for let in self.lets for r in F.reads(let.body)
                         if r.tensor.kind == "const"}.values(), key=lambda t: t.name)
        return F.Kernel(node.name, params + list(self.statics), consts, self.lets, self.checks, node.loc)

    def stmt(self, stmt, written: set[str]) -> None:
        if isinstance(stmt, S.TypeDef):
            self.type_def(stmt)
        elif isinstance(stmt, S.ConstDef):
            self.const_def(stmt)
        elif isinstance(stmt, S.Let):
            self.let(stmt)
        else:
            self.out(stmt, written)

    def let(self, stmt: S.Let) -> None:
        declared = self.resolve_type(stmt.type) if stmt.type else None
        result = self.esn_expression(stmt.name, stmt.indices, stmt.value, stmt.loc, declared)
        self.define(stmt.name, result)

    def out(self, stmt: S.Out, written: set[str]) -> None:
        target = self.lookup(stmt.name)
        if not (isinstance(target, F.Tensor) and target.is_output):
            raise stmt.loc.error(f"'out {stmt.name}': '{stmt.name}' is not an out& parameter of this kernel")
        if stmt.name in written:
            raise stmt.loc.error(f"output '{stmt.name}' is written twice")
        written.add(stmt.name)
        self.esn_expression(stmt.name, stmt.indices, stmt.value, stmt.loc, None, target=target)

    # ---- one esn expression (a let or an out)
    def esn_expression(self, name, index_decls, value: S.Expr, loc: Loc, declared: _ArrayType | None,
                       target: F.Tensor | None = None):
        outer_ctx = self.ctx
        self.ctx = _LetContext(declared=index_decls is not None)
        self.scopes.append({})
        try:
            bound: list[F.Index] = []
            for decl in index_decls or []:
                _refuse_repeated(decl, bound, f"'{name}[...]'")
                index = F.Index(decl.name, decl.loc)
                if decl.type is not None:
                    if not isinstance(decl.type, S.BoundedIndexType):
                        raise decl.loc.error(f"an index declaration takes a bound ('{decl.name}: _n'), not a type")
                    index.extent = decl.type.bound + 1
                bound.append(index)
                self.define(decl.name, index)
            reduction: list[F.Index] = []
            op = None
            body_node = value
            shadowed: dict[int, F.Index] = {}  # header index -> the reduction index that shadows it
            if isinstance(value, S.Reduce):
                op = value.op
                reduction = self.reduction_indices(value)
                body_node = value.body
                # the reduction's indices live in a scope of their own (messner's grammar): one named like a
                # header index shadows it, so the body reads the reduction index
                by_name = {index.name: index for index in bound}
                shadowed = {id(by_name[r.name]): r for r in reduction if r.name in by_name}
            view = self.view(body_node)
            ctx = self.ctx
            implicit_bound, implicit_red = [], []
            for iname, index in ctx.implicit.items():
                uses = ctx.uses[iname]
                if len(uses) >= 3:
                    raise uses[2].error(
                        f"esn index '{iname}' is used {len(uses)} times; an index appears once (bound) "
                        "or twice (reduction)")
                if len(uses) == 2:
                    index.role = "reduction"
                    implicit_red.append(index)
                elif ctx.declared:
                    raise uses[0].error(f"unknown name '{iname}' (an index used once must be declared "
                                        f"in '{name}[...]')")
                else:
                    implicit_bound.append(index)
            if implicit_red:
                if op not in (None, "+"):
                    raise loc.error(f"implicit esn reductions are sums; this let reduces with '{op}'")
                op = "+"
                reduction = reduction + implicit_red
            if (implicit_bound or implicit_red) and view.shape:
                raise loc.error("esn indices and whole-array operands cannot be mixed in one expression; "
                                "subscript every array")
            bound = bound + implicit_bound
            if index_decls is None and not implicit_bound and not reduction and view.shape == [] and target is None:
                # a scalar let: inlined where it is used
                e = view.at([])
                if declared is not None:
                    e = self.coerce(e, declared, loc)
                return View.scalar(e)
            whole = index_decls is None and not implicit_bound and not reduction
            if view.shape and index_decls is not None:
                body = self.trailing_header(name, bound, view, loc)
            elif view.shape or (target is not None and whole):
                if not whole:
                    raise loc.error(f"the body of '{name}[...]' must be a scalar expression, got an array of "
                                    f"shape {_shape_text(view.shape)}; subscript it")
                want = target.shape if target is not None else view.shape
                if target is not None:
                    shape = _broadcast(view.shape, want, loc, f"'out {name}'")
                    if [str(x) for x in shape] != [str(x) for x in want]:
                        raise loc.error(f"'out {name}' has shape {_shape_text(want)}, the value has "
                                        f"{_shape_text(view.shape)}")
                bound = [F.Index(self.fresh("_i"), loc, extent=e) for e in want]
                offset = len(want) - len(view.shape)
                body = view.at([F.Const("index", 0) if _is_one(view.shape[k - offset]) and not _is_one(e)
                                else F.Idx("index", index=bound[k])
                                for k, e in enumerate(want) if k >= offset])
            else:
                body = view.at([])
            if target is not None:
                if len(bound) != len(target.shape):
                    raise loc.error(f"'out {name}' has rank {len(target.shape)}, the expression binds "
                                    f"{len(bound)} indices")
                for index, extent in zip(bound, target.shape):
                    self.unify(index, extent, loc, f"axis of output '{name}'")
            if declared is not None:
                body = self.coerce(body, _ArrayType(declared.dtype, []), loc)
            elif target is not None and body.dtype == "number":
                body = self.retype(body, target.dtype, loc)
            elif target is not None and body.dtype != target.dtype:
                raise loc.error(f"type mismatch: '{name}' is {target.dtype}, the value is {body.dtype} "
                                f"(cast with '!> {target.dtype}')")
            untyped = body.dtype == "number"  # an untyped let: typed by each use (see materialize)
            if not untyped:
                body = self.default_number(body)
            for index in bound + reduction:
                if index.extent is None and id(index) in shadowed:
                    r = shadowed[id(index)]
                    raise index.loc.error(
                        f"cannot infer the domain of index '{index.name}': the reduction index '{r.name}' at "
                        f"{r.loc} shadows it, so the body does not use it (rename one of them, or declare "
                        f"its bound ('{index.name}: _n'))")
                if index.extent is None:
                    raise index.loc.error(f"cannot infer the domain of index '{index.name}': use it as a direct "
                                          "subscript of an array or declare its bound ('i: _n')")
            for hoisted_shape, hoisted_bound, hoisted_loc in self.ctx.hoisted:
                if any(i.extent is None for i in hoisted_bound):
                    raise hoisted_loc.error("cannot infer the domain of an index of this nested reduction")
                hoisted_shape[:] = [i.extent for i in hoisted_bound]
            shape = [index.extent for index in bound]
            if declared is not None and declared.shape:
                if len(declared.shape) != len(shape):
                    raise loc.error(f"'{name}' is declared with rank {len(declared.shape)}, its value has rank "
                                    f"{len(shape)}")
                for index, extent in zip(bound, declared.shape):
                    if extent is not None:
                        self.unify(index, extent, loc, f"declared type of '{name}'")
            if target is not None and any(r.tensor is target for r in F.reads(body)):
                # an inout& written from its own value: computed into a temporary, then copied, so no element
                # is overwritten before every element that reads it has been computed
                temp = F.Tensor(self.fresh(f"{name}_new"), body.dtype, shape, "let", loc)
                self.lets.append(F.Let(temp, bound, reduction, op, body, loc))
                bound = [F.Index(self.fresh("_i"), loc, extent=e) for e in shape]
                reduction, op = [], None
                body = F.Read(temp.dtype, tensor=temp, subscripts=[F.Idx("index", index=i) for i in bound], loc=loc)
            tensor = target or F.Tensor(name, body.dtype, shape, "let", loc)
            if untyped:
                self.untyped[id(tensor)] = F.Let(tensor, bound, reduction, op, body, loc)
            else:
                self.lets.append(F.Let(tensor, bound, reduction, op, body, loc))
            return tensor
        finally:
            self.scopes.pop()
            self.ctx = outer_ctx

    def materialize(self, tensor: F.Tensor, dtype: str) -> F.Tensor:
        """The ``dtype`` instance of an untyped let (``let u = c ? 1 : 0``): computed once per scalar type
        its uses need, placed before the first use (every value it reads is defined by then)."""
        let = self.untyped[id(tensor)]
        typed = F.Tensor(tensor.name, dtype, tensor.shape, "let", tensor.loc)
        body = self.default_number(_retype(let.body, dtype, self))
        self.lets.append(F.Let(typed, let.bound, let.reductions, let.op, body, let.loc))
        return typed

    def reduction_indices(self, node: S.Reduce) -> list[F.Index]:
        """The indices of ``<op i, j: _n< ...``, defined in the current scope."""
        reduction: list[F.Index] = []
        for decl in node.indices:
            _refuse_repeated(decl, reduction, f"the reduction '<{node.op} ...<'")
            index = F.Index(decl.name, decl.loc, role="reduction")
            if isinstance(decl.type, S.BoundedIndexType):
                index.extent = decl.type.bound + 1
            elif decl.type is not None:
                raise decl.loc.error("a reduction index takes a bound ('i: _n'), not a type")
            reduction.append(index)
            self.define(decl.name, index)
        return reduction

    def hoist(self, op: str, reductions: list[F.Index], rest: list[F.Index], body: F.SExpr, loc: Loc,
              what: str) -> View:
        """A reduction inside an expression, bound by its own let: its bound indices are the enclosing
        expression's indices the body uses (in order of appearance), then ``rest`` (the result's axes);
        the enclosing expression reads it at those indices."""
        if self.ctx is None:
            raise loc.error(f"a {what} needs an enclosing let or out statement", construct=what)
        own = {id(i) for i in reductions + rest}
        free: dict[int, F.Index] = {}
        for x in F.walk(body):
            if isinstance(x, F.Idx) and id(x.index) not in own:
                free.setdefault(id(x.index), x.index)
        for index in reductions:
            if index.extent is None:
                raise index.loc.error(f"cannot infer the domain of index '{index.name}': use it as a direct "
                                      "subscript of an array or declare its bound ('i: _n')")
        bound = list(free.values()) + rest
        shape: list[F.Extent] = []  # filled when the enclosing let has inferred every index's extent
        tensor = F.Tensor(self.fresh("_red"), body.dtype, shape, "let", loc)
        let = F.Let(tensor, bound, reductions, op, body, loc)
        if body.dtype == "number":
            self.untyped[id(tensor)] = let
        else:
            self.lets.append(let)
        self.ctx.hoisted.append((shape, bound, loc))
        outer = [F.Idx("index", index=i) for i in free.values()]
        return View([i.extent for i in rest], body.dtype,
                    lambda idx: F.Read(tensor.dtype, tensor=tensor, subscripts=outer + list(idx), loc=loc))

    def trailing_header(self, name: str, bound: list[F.Index], view: View, loc: Loc) -> F.SExpr:
        """``let t[b, x, G] = <array of shape [16]>``: header indices the body never uses, at the end of
        the header, index the body's remaining axes (messner's trailing header indices)."""
        k = len(view.shape)
        tail = bound[len(bound) - k:] if k <= len(bound) else []
        probe = view.at([F.Const("index", 0)] * k) if tail else None
        used = {id(x.index) for x in F.walk(probe) if isinstance(x, F.Idx)} if probe is not None else set()
        if not tail or any(id(index) in used for index in tail):
            raise loc.error(f"the body of '{name}[...]' is an array of shape {_shape_text(view.shape)}: its axes "
                            f"need as many trailing header indices that the body does not use; subscript it")
        for index, extent in zip(tail, view.shape):
            self.unify(index, extent, loc, f"trailing header index '{index.name}' of '{name}'")
        return view.at([F.Idx("index", index=index) for index in tail])

    def retype(self, e: F.SExpr, dtype: str, loc: Loc) -> F.SExpr:
        if e.dtype == "index" and dtype in FLOATS:
            return F.Cast(dtype, operand=e)  # index -> number conversion
        try:
            return _retype(e, dtype, self)
        except ValueError as bad:
            raise loc.error(f"type mismatch: the number {bad} is not an index") from None

    def default_number(self, e: F.SExpr) -> F.SExpr:
        """Untyped numbers that nothing typed become f64 (also under comparisons of two numbers)."""
        if e.dtype == "number":
            return _retype(e, "f64", self)
        return F.map_children(e, self.default_number)

    # ---- congruence of index domains
    def unify(self, index: F.Index, extent: F.Extent, loc: Loc, what: str) -> None:
        if index.extent is None:
            index.extent = extent
        elif index.extent == extent:
            return
        elif isinstance(index.extent, int) and isinstance(extent, int):
            raise loc.error(f"index '{index.name}' ranges over {index.extent} elsewhere but over {extent} in {what} "
                            "(index domains must be congruent)")
        else:
            self.checks.append(F.Congruence(index.name, index.extent, extent, loc))
            if isinstance(extent, int):
                index.extent = extent

    # ---- expressions
    def view(self, node: S.Expr, in_subscript: bool = False) -> View:
        method = getattr(self, "v_" + type(node).__name__)
        return method(node, in_subscript) if type(node) is S.Name else method(node)

    def scalar_of(self, view: View, loc: Loc) -> F.SExpr:
        if view.shape:
            raise loc.error(f"expected a scalar here, got an array of shape {_shape_text(view.shape)}")
        return view.at([])

    def v_Literal(self, node: S.Literal) -> View:
        if node.kind == "number":
            v = node.value
            return View.scalar(F.Const("number", int(v) if float(v).is_integer() else v))
        if node.kind == "index":
            return View.scalar(F.Const("index", node.value))
        if node.kind == "bool":
            return View.scalar(F.Const("i1", node.value))
        names = {"identity": "':'", "extent": "'*'", "ellipsis": "'...'", "error": "'?'", "string": "a string"}
        raise node.loc.error(f"{names[node.kind]} is only allowed as a subscript" if node.kind in
                             ("identity", "extent", "ellipsis") else f"{names[node.kind]} is not supported here",
                             construct=node.kind)

    def v_Name(self, node: S.Name, in_subscript: bool = False) -> View:
        found = self.lookup(node.name)
        if found is None and self.ctx is not None and in_subscript:
            ctx = self.ctx
            index = ctx.implicit.setdefault(node.name, F.Index(node.name, node.loc))
            ctx.uses.setdefault(node.name, []).append(node.loc)
            return View.scalar(F.Idx("index", index=index))
        if found is None:
            raise node.loc.error(f"unknown name '{node.name}'")
        if isinstance(found, F.Index):
            return View.scalar(F.Idx("index", index=found))
        if isinstance(found, F.Tensor):
            return self.tensor_view(found, node.loc)
        if isinstance(found, View):
            return found
        if isinstance(found, F.Const):
            return View.scalar(found)
        raise node.loc.error(f"'{node.name}' is a type, not a value")

    def tensor_view(self, tensor: F.Tensor, loc: Loc) -> View:
        def at(idx: list[F.SExpr]) -> F.SExpr:
            for axis, (sub, extent) in enumerate(zip(idx, tensor.shape)):
                if isinstance(sub, F.Idx):
                    self.unify(sub.index, extent, loc, f"axis {axis} of '{tensor.name}'")
                elif isinstance(sub, F.Const) and isinstance(extent, int) and not 0 <= sub.value < extent:
                    raise loc.error(f"index {sub.value} is out of range for axis {axis} of '{tensor.name}' "
                                    f"(extent {extent})")
            return F.Read(tensor.dtype, tensor=tensor, subscripts=list(idx), loc=loc)

        return View(list(tensor.shape), tensor.dtype, at)

    def v_InRef(self, node: S.InRef) -> View:
        return self.view(node.value)

    def v_Subscript(self, node: S.Subscript) -> View:
        base = self.view(node.array)
        rank = len(base.shape)
        items = node.subscripts
        ellipses = [k for k, it in enumerate(items) if isinstance(it, S.Literal) and it.kind == "ellipsis"]
        if len(ellipses) > 1:
            raise items[ellipses[1]].loc.error("at most one '...' per subscript")
        consuming = sum(1 for it in items if not (isinstance(it, S.Literal) and it.kind in ("extent", "ellipsis")))
        if consuming > rank:
            raise node.loc.error(f"too many subscripts: '{_expr_name(node.array)}' has rank {rank}, "
                                 f"got {consuming}")
        # plan: per result axis where its index goes; per source axis what it reads
        source: list[tuple] = []  # ("axis", result_pos) | ("value", view, result_positions)
        shape: list[F.Extent] = []
        expanded: list = []
        for it in items:
            if isinstance(it, S.Literal) and it.kind == "ellipsis":
                expanded.extend(["keep"] * (rank - consuming))
            else:
                expanded.append(it)
        if not ellipses:
            expanded.extend(["keep"] * (rank - consuming))
        axis = 0
        for it in expanded:
            if it == "keep" or (isinstance(it, S.Literal) and it.kind == "identity"):
                source.append(("axis", len(shape)))
                shape.append(base.shape[axis])
                axis += 1
            elif isinstance(it, S.Literal) and it.kind == "extent":
                shape.append(1)
            else:
                sub = self.view(it, in_subscript=True)
                if sub.dtype not in ("index", "number"):
                    raise it.loc.error(f"a subscript must be an index, got {sub.dtype} (convert with index(...))")
                if not sub.shape:
                    self.check_subscript(sub.at([]), it.loc)
                positions = list(range(len(shape), len(shape) + len(sub.shape)))
                source.append(("value", sub, positions))
                shape.extend(sub.shape)
                axis += 1

        def at(idx: list[F.SExpr]) -> F.SExpr:
            subs = []
            for entry in source:
                if entry[0] == "axis":
                    subs.append(idx[entry[1]])
                else:
                    value = entry[1].at([idx[p] for p in entry[2]])
                    if value.dtype == "number":
                        value = self.retype(value, "index", node.loc)
                    subs.append(value)
            return base.at(subs)

        return View(shape, base.dtype, at)

    def check_subscript(self, e: F.SExpr, loc: Loc) -> None:
        if isinstance(e, F.Idx | F.Const):
            return
        nodes = list(F.walk(e))
        if any(isinstance(x, F.Read) for x in nodes):
            return  # a gather: arithmetic on looked-up indices is allowed
        if any(isinstance(x, F.Idx) for x in nodes):
            raise loc.error("index arithmetic in an esn subscript is not allowed (subscripts are index variables; "
                            "only looked-up indices, i.e. gathers, may be computed)", construct="index arithmetic")

    def v_Call(self, node: S.Call) -> View:
        args = [self.view(a) for a in node.args]
        name = node.callee
        if name == "index" and len(args) == 1:
            a = args[0]
            if a.dtype == "index":
                return a
            if a.dtype not in FLOATS + ("number",):
                raise node.loc.error(f"index(...) converts a floating-point value, got {a.dtype}")
            return View(a.shape, "index", lambda idx: F.Cast("index", operand=_retype(a.at(idx), "f64", self)
                                                                  if a.dtype == "number" else a.at(idx)))
        cast = self.cast_type(name)
        if cast is not None:  # function-style cast: REAL(x), f32(x)
            if len(args) != 1:
                raise node.loc.error(f"the cast {name}(...) takes one value, got {len(args)}")
            a = args[0]
            return View(a.shape, cast.dtype, lambda idx: self.coerce(a.at(idx), cast, node.loc))
        if name in _FUNCTIONS and len(args) == 1:
            a = args[0]
            if a.dtype not in FLOATS + ("number",):
                raise node.loc.error(f"{name}(...) takes a floating-point value, got {a.dtype}")
            return View(a.shape, a.dtype, lambda idx: F.Fn(a.dtype, name=name, args=[a.at(idx)]))
        if name in ("min", "max") and len(args) == 2:
            return self.combine(name, args[0], args[1], node.loc)
        if name == "sum" and len(args) in (1, 3):
            return self.range_sum(node, args)
        if name == "prod":
            raise node.loc.error("prod(...) is not supported: write the product as a reduction, "
                                 "'<* i< v[i]'", construct=name)
        if name in _ARITIES:
            raise node.loc.error(f"{name}(...) takes {_ARITIES[name]}, got {len(args)} argument(s)",
                                 construct=name)
        raise node.loc.error(f"unknown function '{name}'")

    def cast_type(self, name: str) -> _ArrayType | None:
        """The scalar type ``name`` denotes when it is called like a function, else None."""
        found = self.lookup(name)
        if found is None and name in SCALAR_NAMES and name != "index":
            return _ArrayType(self.scalar(name), [])
        if isinstance(found, S.TypeDef | _ArrayType):
            t = self.resolve_type(found.type) if isinstance(found, S.TypeDef) else found
            return t if not t.shape and t.ref is None else None
        return None

    def v_Unary(self, node: S.Unary) -> View:
        a = self.view(node.operand)
        if node.op == "~":
            if a.dtype != "i1":
                raise node.loc.error(f"'~' negates a bool, got {a.dtype}")
            return View(a.shape, "i1", lambda idx: F.Un("i1", op="~", operand=a.at(idx)))
        if a.dtype == "i1":
            raise node.loc.error("unary '-' is not defined on bool values")
        return View(a.shape, a.dtype, lambda idx: _negate(a.at(idx)))

    def v_Binary(self, node: S.Binary) -> View:
        if node.op == "#":
            return self.outer_product(self.view(node.lhs), self.view(node.rhs), node.loc)
        return self.combine(node.op, self.view(node.lhs), self.view(node.rhs), node.loc)

    def outer_product(self, a: View, b: View, loc: Loc) -> View:
        """``a # b``: the tensor product, shape ``a.shape + b.shape``, element ``a[i...] * b[j...]``."""
        dtype = join(a.dtype, b.dtype, loc, "'#'")
        rtype = result_type("*", dtype, loc)
        na = len(a.shape)

        def at(idx):
            x, y = a.at(idx[:na]), b.at(idx[na:])
            if dtype != "number":
                x, y = self.retype(x, dtype, loc), self.retype(y, dtype, loc)
            return F.Bin(rtype, op="*", lhs=x, rhs=y)

        return View(list(a.shape) + list(b.shape), rtype, at)

    def combine(self, op: str, a: View, b: View, loc: Loc) -> View:
        dtype = join(a.dtype, b.dtype, loc, f"'{op}'")
        rtype = result_type(op, dtype, loc)
        shape = _broadcast(a.shape, b.shape, loc, f"'{op}'", self)

        def at(idx):
            x, y = a.at(_pick_idx(a, idx, shape)), b.at(_pick_idx(b, idx, shape))
            if dtype != "number":
                x, y = self.retype(x, dtype, loc), self.retype(y, dtype, loc)
            return F.Bin(rtype, op=op, lhs=x, rhs=y, loc=loc)

        return View(shape, rtype, at)

    def v_Ternary(self, node) -> View:
        c, t, f = self.view(node.cond), self.view(node.if_true), self.view(node.if_false)
        if c.dtype != "i1":
            raise node.cond.loc.error(f"a condition must be a bool, got {c.dtype}")
        dtype = join(t.dtype, f.dtype, node.loc, "the branches of a conditional")
        shape = _broadcast(_broadcast(c.shape, t.shape, node.loc, "a conditional", self), f.shape, node.loc,
                           "a conditional", self)

        def at(idx):
            parts = [v.at(_pick_idx(v, idx, shape)) for v in (c, t, f)]
            x, y = parts[1], parts[2]
            if dtype != "number":
                x, y = self.retype(x, dtype, node.loc), self.retype(y, dtype, node.loc)
            return F.Select(dtype, cond=parts[0], if_true=x, if_false=y)

        return View(shape, dtype, at)

    v_IfExpr = v_Ternary

    def v_TypeOp(self, node: S.TypeOp) -> View:
        a = self.view(node.value)
        t = self.resolve_type(node.type)
        if t.shape:
            raise node.type.loc.error("casts and type assertions take a scalar type")
        if node.op == "<:":
            if a.dtype not in (t.dtype, "number"):
                raise node.loc.error(f"type mismatch: the value is {a.dtype}, '<:' asserts {t.dtype}")
            return View(a.shape, t.dtype, lambda idx: _retype(a.at(idx), t.dtype, self))
        return View(a.shape, t.dtype, lambda idx: self.coerce(a.at(idx), t, node.loc))

    def coerce(self, e: F.SExpr, t: _ArrayType, loc: Loc) -> F.SExpr:
        if e.dtype == t.dtype:
            return e
        if e.dtype == "number":
            return _retype(e, t.dtype, self)
        if e.dtype == "i1" or t.dtype == "i1":
            raise loc.error(f"cannot convert {e.dtype} to {t.dtype}")
        return F.Cast(t.dtype, operand=e)

    def v_Block(self, node: S.Block) -> View:
        self.scopes.append({})
        try:
            for stmt in node.stmts:
                if not isinstance(stmt, S.Let | S.TypeDef | S.ConstDef) or (isinstance(stmt, S.Let) and stmt.indices):
                    what = "out in a block" if isinstance(stmt, S.Out) else "indexed let in a block"
                    raise stmt.loc.error("only scalar 'let', 'type' and 'const' are allowed inside a block expression",
                                         construct=what)
                if isinstance(stmt, S.Let):
                    v = self.view(stmt.value)
                    if v.shape:
                        raise stmt.loc.error("a 'let' inside a block expression must be a scalar",
                                             construct="array let in a block")
                    e = v.at([])
                    if stmt.type is not None:
                        e = self.coerce(e, self.resolve_type(stmt.type), stmt.loc)
                    self.define(stmt.name, View.scalar(e))
                else:
                    self.stmt(stmt, set())
            return self.view(node.value)
        finally:
            self.scopes.pop()

    def v_Reduce(self, node: S.Reduce) -> View:
        """A reduction inside an expression (``1 + <+ k< A[i, k]``): hoisted into its own let."""
        self.scopes.append({})
        try:
            reductions = self.reduction_indices(node)
            view = self.view(node.body)
        finally:
            self.scopes.pop()
        if view.shape:
            raise node.loc.error(f"the body of a nested reduction must be a scalar, got an array of shape "
                                 f"{_shape_text(view.shape)}; subscript it", construct="nested reduction")
        return self.hoist(node.op, reductions, [], view.at([]), node.loc, "nested reduction")

    def check_range_bound(self, bound: F.SExpr, extent: F.Extent, which: str, loc: Loc) -> None:
        """A bound of ``sum(v, lo, hi)`` known at compile time (a literal, or looked up in a constant
        array) must lie in [0, extent]; bounds computed from kernel inputs are clipped to the axis at run
        time, as numpy slicing does."""
        if isinstance(bound, F.Const):
            values = np.array([bound.value])
        elif isinstance(bound, F.Read) and bound.tensor.kind == "const" and all(
                isinstance(sub, F.Idx | F.Const) for sub in bound.subscripts):
            picks = tuple(int(sub.value) if isinstance(sub, F.Const) else slice(None) for sub in bound.subscripts)
            values = np.asarray(bound.tensor.value[picks])
        else:
            return
        if isinstance(extent, int) and values.size and (values.min() < 0 or values.max() > extent):
            bad = int(values.min() if values.min() < 0 else values.max())
            raise loc.error(f"the {which} bound {bad} of sum(v, lo, hi) is outside [0, {extent}] for v's first "
                            "axis", construct="sum")

    def range_sum(self, node: S.Call, args: list[View]) -> View:
        """``sum(v)``: the sum over ``v``'s first axis; ``sum(v, lo, hi)`` over the half-open range
        [lo, hi) of it (bounds are scalar index expressions, e.g. looked up per element)."""
        v = args[0]
        if not v.shape:
            raise node.loc.error("sum(...) takes an array (it sums over the first axis), got a scalar",
                                 construct="sum")
        r = F.Index(self.fresh("_r"), node.loc, extent=v.shape[0], role="reduction")
        rest = [F.Index(self.fresh("_s"), node.loc, extent=e) for e in v.shape[1:]]
        element = v.at([F.Idx("index", index=i) for i in [r] + rest])
        if len(args) == 3:
            bounds = []
            for arg, which in zip(args[1:], ("lower", "upper")):
                if arg.shape or arg.dtype not in ("index", "number"):
                    raise node.loc.error(f"the {which} bound of sum(v, lo, hi) must be a scalar index, got "
                                         f"{arg.dtype}{_shape_text(arg.shape) if arg.shape else ''}",
                                         construct="sum")
                bound = self.retype(arg.at([]), "index", node.loc)
                self.check_range_bound(bound, v.shape[0], which, node.loc)
                bounds.append(bound)
            at_r = F.Idx("index", index=r)
            inside = F.Bin("i1", op="&&", lhs=F.Bin("i1", op="<=", lhs=bounds[0], rhs=at_r),
                           rhs=F.Bin("i1", op="<", lhs=at_r, rhs=bounds[1]))
            element = F.Select(element.dtype, cond=inside, if_true=element,
                               if_false=F.Const(element.dtype, 0))
        return self.hoist("+", [r], rest, element, node.loc, "sum")

    def v_Reshape(self, node: S.Reshape) -> View:
        """``value ~ [extents]``: messner's broadcast, numpy's rules (right-aligned; an axis of the value is
        1 or equal to the extent)."""
        a = self.view(node.value)
        extents = [self.extent(e) for e in node.extents]
        if any(e is None for e in extents):
            raise node.loc.error("broadcast extents must be known ('~ [4, 4]'), not '?'", construct="broadcast")
        shape = _broadcast(a.shape, extents, node.loc, "broadcast '~'", self)
        if len(a.shape) > len(extents) or [str(x) for x in shape] != [str(x) for x in extents]:
            raise node.loc.error(f"cannot broadcast shape {_shape_text(a.shape)} to {_shape_text(extents)}",
                                 construct="broadcast")
        return View(list(extents), a.dtype, lambda idx: a.at(_pick_idx(a, idx, extents)))

    def v_ArrayLiteral(self, node: S.ArrayLiteral) -> View:
        """``[a, b, ...]`` in an expression: messner's stack, the items broadcast together and stacked along
        a new leading axis (``[1 - f, f]`` of two ``[N]`` arrays is ``[2, N]``)."""
        items = [self.view(x) for x in node.items]
        dtype = items[0].dtype
        shape: list[F.Extent] = list(items[0].shape)
        for item, x in zip(items[1:], node.items[1:]):
            dtype = join(dtype, item.dtype, x.loc, "the items of an array literal")
            shape = _broadcast(shape, item.shape, x.loc, "the items of an array literal", self)

        def element(k: int, idx) -> F.SExpr:
            e = items[k].at(_pick_idx(items[k], idx, shape))
            return self.retype(e, dtype, node.loc) if dtype != "number" else e

        def at(idx):
            position, rest = idx[0], idx[1:]
            if isinstance(position, F.Const):
                return element(int(position.value), rest)
            if not isinstance(position, F.Idx):
                raise node.loc.error("an array literal cannot be gathered from (its position would be computed); "
                                     "bind it with a let first", construct="array literal")
            chosen = element(len(items) - 1, rest)
            for k in range(len(items) - 2, -1, -1):
                cond = F.Bin("i1", op="==", lhs=position, rhs=F.Const("index", k))
                chosen = F.Select(dtype, cond=cond, if_true=element(k, rest), if_false=chosen)
            return chosen

        return View([len(items)] + shape, dtype, at)


# ---- helpers -------------------------------------------------------------------------


def _all_kind(node, kind: str) -> bool:
    """Whether every item of a constant array literal is a literal of ``kind`` (index, bool)."""
    if isinstance(node, S.ArrayLiteral):
        return all(_all_kind(x, kind) for x in node.items)
    return isinstance(node, S.Literal) and node.kind == kind


def _is_one(extent) -> bool:
    return isinstance(extent, int) and extent == 1


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(e) for e in shape) + "]"


def _expr_name(node) -> str:
    return node.name if isinstance(node, S.Name) else "the array"


def _broadcast(a: list, b: list, loc: Loc, what: str, elab: Elaborator | None = None) -> list:
    """numpy broadcasting of two shapes (right-aligned); unequal dynamic extents become run-time checks."""
    n = max(len(a), len(b))
    a2 = [1] * (n - len(a)) + list(a)
    b2 = [1] * (n - len(b)) + list(b)
    out = []
    for k, (x, y) in enumerate(zip(a2, b2)):
        if x == y or _is_one(y):
            out.append(x)
        elif _is_one(x):
            out.append(y)
        elif isinstance(x, int) and isinstance(y, int):
            raise loc.error(f"shapes {_shape_text(a)} and {_shape_text(b)} are not congruent in {what} "
                            f"(axis {k}: {x} vs {y})")
        else:
            if elab is not None:
                elab.checks.append(F.Congruence(f"axis {k} of {what}", x, y, loc, broadcast=True))
            out.append(x if isinstance(x, int) else y)
    return out


def _pick_idx(v: View, idx: list, shape: list) -> list:
    """The indices of ``v``'s own axes for the broadcast result indices ``idx``."""
    offset = len(shape) - len(v.shape)
    picked = []
    for k, extent in enumerate(v.shape):
        picked.append(F.Const("index", 0) if _is_one(extent) and not _is_one(shape[k + offset]) else idx[k + offset])
    return picked


def _negate(e: F.SExpr) -> F.SExpr:
    if isinstance(e, F.Const) and not isinstance(e.value, bool):
        return F.Const(e.dtype, -e.value)
    return F.Un(e.dtype, op="-", operand=e)


def _retype(e: F.SExpr, dtype: str, elab: Elaborator) -> F.SExpr:
    """Give an untyped (``number``) expression a concrete scalar type."""
    if e.dtype != "number":
        return e
    if isinstance(e, F.Const):
        value = e.value
        if dtype == "index":
            if not float(value).is_integer():
                raise ValueError(value)
            value = int(value)
        elif dtype in FLOATS:
            value = float(value)
        return F.Const(dtype, value)
    if isinstance(e, F.Read):
        key = (id(e.tensor), dtype)
        typed = elab.retyped.get(key)
        if typed is None and e.tensor.kind == "let":
            typed = elab.retyped[key] = elab.materialize(e.tensor, dtype)
        elif typed is None:
            t = e.tensor
            typed = F.Tensor(f"{t.name}", dtype, t.shape, "const", t.loc,
                             value=t.value.astype(F.NP_DTYPES[dtype]))
            elab.retyped[key] = typed
        return F.Read(dtype, tensor=typed, subscripts=e.subscripts, loc=e.loc)
    if isinstance(e, F.Bin):
        out = "i1" if e.op in COMPARE else dtype
        return F.Bin(out, op=e.op, lhs=_retype(e.lhs, dtype, elab), rhs=_retype(e.rhs, dtype, elab), loc=e.loc)
    if isinstance(e, F.Un):
        return F.Un(dtype, op=e.op, operand=_retype(e.operand, dtype, elab))
    if isinstance(e, F.Fn):
        return F.Fn(dtype, name=e.name, args=[_retype(a, dtype, elab) for a in e.args])
    if isinstance(e, F.Select):
        return F.Select(dtype, cond=e.cond, if_true=_retype(e.if_true, dtype, elab),
                        if_false=_retype(e.if_false, dtype, elab))
    return e


def elaborate(program: S.Program, overrides: dict[str, str] | None = None) -> list[F.Kernel]:
    """Elaborate every kernel of ``program``; ``overrides`` rebinds type aliases (``{"REAL": "f32"}``) and
    the built-in float names (``{"f64": "f32"}``)."""
    return Elaborator(_checked_overrides(program, overrides or {})).program(program)


def _checked_overrides(program: S.Program, overrides: dict[str, str]) -> dict[str, str]:
    """``types=`` by scalar type: keys are the source's type aliases (or f64 / f32 themselves), values scalar
    type names; a misspelt alias would silently leave the kernel in its declared type."""
    aliases = [item.name for item in program.items if isinstance(item, S.TypeDef)]
    checked = {}
    for name, value in overrides.items():
        if name not in aliases and name not in FLOATS:
            raise LoomError(f"{name!r} is neither a type alias of the source ({', '.join(aliases) or 'none'}) nor "
                            f"f64 / f32", where=f"types[{name!r}]")
        if not isinstance(value, str) or value not in SCALAR_NAMES:
            hint = (" (a kernel computes in a number format, bf16, fp16, e4m3fn, fixed<I, F>, ..., through "
                    "loom.jit.ekl_formats.in_format(kernel, FORMAT))" if isinstance(value, str) else "")
            raise LoomError(f"expected a scalar type ({', '.join(SCALAR_NAMES)}), got {value!r}{hint}",
                            where=f"types[{name!r}]")
        checked[name] = SCALAR_NAMES[value]
    return checked


def _fold(e: F.SExpr, loc: Loc) -> F.Const:
    """A closed scalar expression (``4.0 / 2.0``, ``N_x - _1``) as the constant the kernel would compute:
    the reference evaluator's arithmetic in the expression's type (untyped numbers in f64, index division
    floored), so a folded constant and the same expression written inline agree."""
    from loom.frontends.ekl.reference import evaluate_closed

    value = evaluate_closed(_numbers_as_f64(e)).item()
    if isinstance(value, float) and not np.isfinite(value):
        raise loc.error(f"the constant expression evaluates to {value}, not a finite number")
    if e.dtype == "number" and float(value).is_integer():
        value = int(value)  # as the literal '2' would be: it stays usable as an extent
    return F.Const(e.dtype, value)


def _numbers_as_f64(e: F.SExpr) -> F.SExpr:
    """Untyped numbers evaluated in f64 (the folded value stays untyped and adapts where it is used)."""
    if e.dtype == "number":
        e = dataclasses.replace(e, dtype="f64")
    return F.map_children(e, _numbers_as_f64)
