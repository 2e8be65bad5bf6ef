"""Expression evaluation for the kernel tracer: operators, names, memref indexing and calls.

Mixed into ``Tracer``; see ``tracer.py`` for the scoping rules and ``values.py`` for typing.
"""

from __future__ import annotations

import ast
import builtins
import math as pymath

import numpy as np

from xdsl.builder import Builder, ImplicitBuilder, _current_builder
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, StridedLayoutAttr, UnknownLoc
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from loom.errors import LoomError
from loom.frontends.kernel import intrinsics
from loom.frontends.kernel import values as V
from loom.frontends.kernel.kernel_types import Dim, Index, ScalarType, scalar_of, scalar_of_numpy
from loom.frontends.kernel.signature import _MISSING, lookup_python
from loom.frontends.kernel.user_functions import is_user_function
from loom.frontends.kernel.values import PY_CONST, AffineForm, MemRefValue, Value

_BUILTIN_ADVICE = {
    builtins.sum: "accumulate in a loop ('s = F32(0.0)' then 'for v in X: s += v')",
    builtins.any: "test in a loop and break",
    builtins.all: "test in a loop and break",
    builtins.round: "use math.floor(x + 0.5) or math.trunc (round() would give an int, half to even)",
    builtins.sorted: "sort in place in a loop (kernels have no lists)",
    builtins.divmod: "use x // y and x % y",
    builtins.pow: "use x ** y or math.pow",
    builtins.isinstance: "kernel values are typed by the annotations: no run-time type tests",
}


def _unsupported_operator(op: ast.operator) -> str:
    if isinstance(op, ast.MatMult):
        return ("operator '@' (matrix product) is not supported on kernel values: loop over the elements, or call "
                "loom.linalg.matmul(A, B, C) on memrefs")
    return f"operator {type(op).__name__} is not supported in kernels"


_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_PY_MATH = {getattr(pymath, n): n for n in [*V.MATH_UNARY, *V.MATH_BINARY, *V.MATH_PREDICATES] if hasattr(pymath, n)}

_UNSUPPORTED_EXPRS = {
    ast.Yield: "yield", ast.YieldFrom: "yield", ast.Await: "await", ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension", ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator",
    ast.Dict: "dict", ast.Set: "set", ast.JoinedStr: "f-string", ast.NamedExpr: "walrus",
    ast.Starred: "star-args", ast.Slice: "slice",
}

_RET_N = "$ret_n"
_NO_OPS = (ast.Constant, ast.Name)


class LocalFunction:
    """A nested ``def`` in a kernel: an intrinsic's body argument, or inlined where called (``inline``)."""

    def __init__(self, node: ast.FunctionDef):
        self.node = node


class OpaqueValue:
    """An intrinsic's result that is neither scalar nor memref (e.g. a tensor)."""

    def __init__(self, ssa: SSAValue):
        self.ssa = ssa


class ExpressionsMixin:
    # ------------------------------------------------------------ expressions

    def ev(self, node: ast.expr):
        handler = _EX_DISPATCH.get(type(node))
        if handler is None:
            what = _UNSUPPORTED_EXPRS.get(type(node), type(node).__name__)
            if isinstance(node, ast.Lambda):
                raise self.err("lambda is only allowed as an argument of a loom intrinsic (e.g. linalg.generic)",
                               node, "lambda")
            raise self.err(f"'{what}' is not supported in kernels", node, what)
        if type(node) in _NO_OPS:  # leaves emit nothing: skip the location bookkeeping
            try:
                return handler(self, node)
            except LoomError as e:
                self._fill(e, node, type(node).__name__)
                raise
        saved = self.ctx.loc
        self.ctx.loc = self.loc(node)
        try:
            return handler(self, node)
        except LoomError as e:
            self._fill(e, node, type(node).__name__)
            raise
        finally:
            self.ctx.loc = saved

    def ex_Constant(self, node: ast.Constant):
        return node.value

    def ex_Name(self, node: ast.Name):
        n = node.id
        if n in self.env:
            return self.env[n]
        if n in self.dead:
            raise self.err(self.dead[n], node, "scope")
        obj = lookup_python(self.src, n)
        if obj is _MISSING:
            if n in self.sig.dim_symbols:
                return self.symbol_dim(n)
            raise self.err(f"unknown name '{n}'", node, "name")
        return self.classify(obj, n, node)

    def classify(self, obj, name, node):
        """What a Python object from the closure/globals means inside the kernel."""
        if isinstance(obj, PY_CONST) or obj is None or isinstance(obj, str):
            return obj
        np_t = scalar_of_numpy(obj)
        if np_t is not None:
            return V.const_value(obj.item(), np_t)
        if isinstance(obj, Dim):
            if obj.name in self.sig.dim_symbols:
                return self.symbol_dim(obj.name)
            raise self.err(f"dim '{obj.name}' is not a dimension of any parameter of this kernel", node, "name")
        if isinstance(obj, tuple) and all(isinstance(x, PY_CONST) for x in obj):
            return obj
        import types as pytypes

        if isinstance(obj, (pytypes.ModuleType, ScalarType, type)) or callable(obj):
            return obj
        if isinstance(obj, np.ndarray):
            return self.constant_table(obj, name)
        raise self.err(f"closure over non-constant value '{name}' ({type(obj).__name__}); kernels can only "
                       "capture Python ints, floats, bools, numpy arrays (constant tables), other kernels and "
                       "loom intrinsics", node, "closure")

    def symbol_dim(self, sym: str) -> Value:
        pname, axis = self.sig.dim_symbols[sym][0]
        return self.memref_dim(self.env[pname], axis) if pname in self.env else self._missing_param(pname)

    def _missing_param(self, pname):
        raise LoomError(f"parameter '{pname}' was rebound, its dims are no longer available")

    def memref_dim(self, mv: MemRefValue, axis: int):
        size = mv.type.get_shape()[axis]
        if size != DYNAMIC_INDEX:
            return size
        if mv.dim_cache is not None and self.ctx.hoist:
            hit = mv.dim_cache.get(axis)
            if hit is None:
                c = self.ctx.constant(axis, Index)
                with ImplicitBuilder(Builder(InsertPoint.after(c.owner))):
                    op = memref.DimOp(mv.ssa, c)
                op.location = self.ctx.loc
                hit = mv.dim_cache[axis] = Value(op.result, Index, AffineForm({op.result: 1}))
            return hit
        c = self.ctx.constant(axis, Index)
        return Value(V.emit(memref.DimOp(mv.ssa, c)).result, Index)

    def ex_Attribute(self, node: ast.Attribute):
        base = self.ev(node.value)
        if isinstance(base, MemRefValue):
            if node.attr == "shape":
                return tuple(self.memref_dim(base, a) for a in range(base.rank))
            if node.attr in ("rank", "ndim"):
                return base.rank
            if node.attr in ("dtype", "element_type"):
                return base.element
            raise self.err(f"memrefs have no attribute '{node.attr}' in kernels (use .shape, .rank)", node,
                           "attribute")
        if isinstance(base, (Value, OpaqueValue)) or isinstance(base, PY_CONST):
            raise self.err(f"{V.type_name(base)} has no attribute '{node.attr}' in kernels", node, "attribute")
        obj = getattr(base, node.attr, _MISSING)
        if obj is _MISSING:
            raise self.err(f"'{ast.unparse(node.value)}' has no attribute '{node.attr}'", node, "attribute")
        return self.classify(obj, ast.unparse(node), node)

    def ex_Tuple(self, node):
        return tuple(self.ev(e) for e in node.elts)

    def ex_List(self, node):
        return [self.ev(e) for e in node.elts]

    def ex_BinOp(self, node: ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise self.err(_unsupported_operator(node.op), node, "operator")
        a, b = self.ev(node.left), self.ev(node.right)
        for x in (a, b):
            if not isinstance(x, (Value,) + PY_CONST):
                raise self.err(f"operator '{_BINOPS[type(node.op)]}' is not defined on {V.type_name(x)}", node,
                               "operator")
        return V.binary(_BINOPS[type(node.op)], a, b)

    def ex_UnaryOp(self, node: ast.UnaryOp):
        v = self.ev(node.operand)
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}[type(node.op)]
        return V.unary(op, v)

    def ex_Compare(self, node: ast.Compare):
        # chains a < b < c mean (a < b) and (b < c), each operand evaluated once
        left = self.ev(node.left)
        result = None
        for op, rnode in zip(node.ops, node.comparators):
            if type(op) not in _CMPOPS:
                raise self.err(f"comparison '{type(op).__name__}' is not supported in kernels (use < <= > >= == !=)",
                               node, "comparison")
            right = self.ev(rnode)
            c = V.compare(_CMPOPS[type(op)], left, right)
            if result is None:
                result = c
            elif isinstance(result, bool):
                result = c if result else False
            elif isinstance(c, bool):
                result = result if c else False
            else:
                result = V.logical("and", result, c)
            left = right
        return result

    def _pure_eval(self, node):
        """Evaluate ``node`` into a scratch block; return (value, block, is_pure)."""
        blk = Block()
        with ImplicitBuilder(blk):
            v = self.ev(node)
        pure = all(op.name.startswith(("arith.", "math.")) for op in blk.walk())
        return v, blk, pure

    def _splice(self, blk: Block):
        b = _current_builder.builder
        for op in list(blk.ops):
            op.detach()
            b.insert(op)

    def ex_BoolOp(self, node: ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        truth = node in self.truth_tests  # a test: numbers are truth-tested; a value: i1 operands only
        acc = self.ev(node.values[0])
        for vnode in node.values[1:]:
            if isinstance(acc, PY_CONST):
                if bool(acc) != is_and:  # short-circuit at trace time
                    return acc
                acc = self.ev(vnode)
                continue
            acc = self.condition(acc, node, truth)
            v, blk, pure = self._pure_eval(vnode)
            if isinstance(v, PY_CONST):
                self._splice(blk)
                acc = acc if bool(v) == is_and else v
                continue
            with ImplicitBuilder(blk):  # (a truth test of v goes with v: in blk, unless it is spliced)
                v = self.condition(v, vnode, truth)
            if pure:
                self._splice(blk)
                acc = V.logical("and" if is_and else "or", acc, v)
            else:
                acc = self._if_value(acc, blk, v, not is_and, is_and, node)
        return acc

    def _if_value(self, cond: Value, blk: Block, v: Value, other, then_is_blk: bool, node) -> Value:
        """scf.if cond -> (blk yielding v) / (yield other), or the reverse."""
        with ImplicitBuilder(blk):
            scf.YieldOp(v.ssa).location = self.loc(node)
        oblk = Block()
        with ImplicitBuilder(oblk):
            o = V.as_value(other, v.stype)
            scf.YieldOp(o.ssa).location = self.loc(node)
        t, e = (blk, oblk) if then_is_blk else (oblk, blk)
        op = scf.IfOp(cond.ssa, [v.type], Region(t), Region(e))
        op.location = self.loc(node)
        return Value(op.results[0], v.stype)

    def ex_IfExp(self, node: ast.IfExp):
        self.mark_truth_test(node.test)
        c = self.ev(node.test)
        if isinstance(c, PY_CONST):
            return self.ev(node.body if c else node.orelse)
        c = self.condition(c, node.test)
        a, ba, pa = self._pure_eval(node.body)
        b, bb, pb = self._pure_eval(node.orelse)
        if pa and pb:
            self._splice(ba)
            self._splice(bb)
            return V.select(c, a, b)
        x, y = V.unify(a, b, "conditional expression") if not (isinstance(a, Value) and isinstance(b, Value)) \
            else (a, b)
        if x.stype is not y.stype:
            raise self.err(f"type mismatch in conditional expression: {x.stype.xdsl} and {y.stype.xdsl}", node,
                           "type")
        # constants materialized by unify live in the entry block (hoisted) or in the current block
        for blk, v in ((ba, x), (bb, y)):
            with ImplicitBuilder(blk):
                scf.YieldOp(v.ssa).location = self.loc(node)
        op = scf.IfOp(c.ssa, [x.type], Region(ba), Region(bb))
        op.location = self.loc(node)
        return Value(op.results[0], x.stype)

    # ------------------------------------------------------------ memref indexing

    def ex_Subscript(self, node: ast.Subscript):
        base = self.ev(node.value)
        if isinstance(base, MemRefValue):
            idx = self.memref_indices(base, node)
            if idx is None:
                return self.subview(base, node)
            return Value(V.emit(memref.LoadOp.get(base.ssa, idx)).results[0], base.element)
        if isinstance(base, (tuple, list)):
            i = self.ev(node.slice)
            if not isinstance(i, int):
                raise self.err("tuples can only be indexed by Python ints in kernels: loop over the tuple itself "
                               "('for c in COEFS' is unrolled) or make it a numpy array (a constant table)", node,
                               "subscript")
            try:
                return base[i]
            except IndexError:
                raise self.err(f"index {i} out of range for a tuple of {len(base)}", node, "subscript") from None
        raise self.err(f"'{ast.unparse(node.value)}' ({V.type_name(base)}) cannot be indexed", node, "subscript")

    def _index_items(self, node: ast.Subscript):
        sl = node.slice
        return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]

    def memref_indices(self, mv: MemRefValue, node: ast.Subscript):
        """SSA indices for an element access, or None if the subscript contains slices."""
        items = self._index_items(node)
        if any(isinstance(i, ast.Slice) for i in items) or len(items) < mv.rank:
            return None  # a view: A[1:3] or, as numpy, A[i] of a matrix (its row i)
        if len(items) != mv.rank:
            raise self.err(f"memref '{ast.unparse(node.value)}' has rank {mv.rank} but is indexed with "
                           f"{len(items)} indices", node, "subscript")
        out = []
        shape = mv.type.get_shape()
        for axis, i in enumerate(items):
            v = self.ev(i)
            self.check_index(v, i, "memref index")
            self.check_constant_index(v, shape[axis], axis, i)
            out.append(V.as_value(v, Index).ssa)
        return out

    def check_constant_index(self, v, size: int, axis: int, node) -> None:
        """A compile-time index must lie in [0, size) of a static dim (and never be negative)."""
        k = _constant_of(v)
        if k is None:
            return
        if k < 0:
            raise self.err(f"negative index {k}: kernels do not wrap indices", node, "subscript")
        if size != DYNAMIC_INDEX and k >= size:
            raise self.err(f"index {k} is out of range for dim {axis} of size {size}", node, "subscript")

    def subview(self, mv: MemRefValue, node: ast.Subscript) -> MemRefValue:
        items = self._index_items(node)
        if len(items) > mv.rank:
            raise self.err(f"memref '{ast.unparse(node.value)}' has rank {mv.rank} but is indexed with "
                           f"{len(items)} indices", node, "subscript")
        items += [ast.Slice(None, None, None)] * (mv.rank - len(items))
        offsets, sizes, strides, dropped = [], [], [], []
        shape = mv.type.get_shape()
        for axis, it in enumerate(items):
            if not isinstance(it, ast.Slice):
                v = self.ev(it)
                self.check_index(v, it, "memref index")
                self.check_constant_index(v, shape[axis], axis, it)
                offsets.append(v), sizes.append(1), strides.append(1), dropped.append(axis)
                continue
            lo = self.ev(it.lower) if it.lower is not None else 0
            hi = self.ev(it.upper) if it.upper is not None else self.memref_dim(mv, axis)
            st = self.ev(it.step) if it.step is not None else 1
            for v, n in ((lo, it.lower), (hi, it.upper)):
                self.check_index(v, n or it, "slice bound")
                k = _constant_of(v)
                if k is not None and k < 0:
                    raise self.err("negative slice bounds are not supported in kernels", n or it, "slice")
                if k is not None and shape[axis] != DYNAMIC_INDEX and k > shape[axis]:
                    which = "start" if n is it.lower else "end"
                    raise self.err(f"slice {which} {k} is beyond dim {axis} of size {shape[axis]}", n or it, "slice")
            if isinstance(st, bool) or not isinstance(st, int) or st <= 0:
                raise self.err("slice steps must be positive Python ints", it, "slice")
            if isinstance(hi, int) and shape[axis] != DYNAMIC_INDEX and hi > shape[axis]:
                raise self.err(f"slice end {hi} is beyond dim {axis} of size {shape[axis]}", it, "slice")
            size = _static_diff(hi, lo)
            if size is None:
                size = V.binary("-", hi, lo)
            if st != 1:
                size = V.binary("//", V.binary("+", size, st - 1), st)
            if isinstance(size, int) and size < 0:
                raise self.err("empty slice with end before start", it, "slice")
            if isinstance(size, int) and shape[axis] != DYNAMIC_INDEX and size > shape[axis]:
                raise self.err(f"slice of {size} elements is longer than dim {axis} of size {shape[axis]}", it,
                               "slice")
            offsets.append(lo), sizes.append(size), strides.append(st)

        def ssa_or_int(xs):
            return [x if isinstance(x, int) else x.ssa for x in xs]

        o, s, t = ssa_or_int(offsets), ssa_or_int(sizes), ssa_or_int(strides)
        full = memref.SubviewOp.infer_result_type(mv.type, o, s, t)
        rtype = full
        if dropped:
            lay = full.layout
            keep = [a for a in range(mv.rank) if a not in dropped]
            fshape = full.get_shape()
            fstrides = lay.get_strides() if isinstance(lay, StridedLayoutAttr) else full.get_strides()
            foffset = lay.get_offset() if isinstance(lay, StridedLayoutAttr) else full.get_offset()
            layout = StridedLayoutAttr([fstrides[a] for a in keep], foffset)
            rtype = MemRefType(full.element_type, [fshape[a] for a in keep], layout)
        op = memref.SubviewOp.get(mv.ssa, o, s, t, rtype)
        V.emit(op)
        return MemRefValue(op.result, read_only=mv.read_only, element=mv.element)

    # ------------------------------------------------------------ calls

    def ex_Call(self, node: ast.Call):
        fobj = self.ev(node.func)
        fname = ast.unparse(node.func)
        if isinstance(fobj, (Value, MemRefValue, str, bytes) + PY_CONST):
            raise self.err(f"'{fname}' ({V.type_name(fobj)}) is not callable", node, "call")
        if getattr(fobj, "__loom_intrinsic__", False) is True:
            return self.call_intrinsic(fobj, node, fname)
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.err("star-args (*args) are not supported in kernel calls", a, "star-args")
        if any(k.arg is None for k in node.keywords):
            raise self.err("**kwargs are not supported in kernel calls", node, "star-args")
        if isinstance(fobj, self.kernel_cls):
            return self.call_kernel(fobj, self._kernel_call_args(fobj, node), node)
        if isinstance(fobj, LocalFunction) or is_user_function(fobj):
            return self.inline_call(fobj, node)
        if fobj is builtins.range or fobj is intrinsics.parallel:
            raise self.err(f"{fname}() is only allowed as the iterable of a for loop", node, "call")
        if node.keywords:
            raise self.err(f"keyword arguments are not supported in calls to {fname}()", node, "call")
        args = [self.ev(a) for a in node.args]
        if isinstance(fobj, ScalarType):
            if len(args) != 1:
                raise self.err(f"{fobj}(x) takes one argument", node, "cast")
            return V.cast(args[0], fobj)
        if fobj is intrinsics.cast:
            if len(args) != 2 or not isinstance(args[1], ScalarType):
                raise self.err("cast(x, T) takes a value and a loom scalar type", node, "cast")
            return V.cast(args[0], args[1])
        if fobj is intrinsics.alloc or fobj is intrinsics.alloca:
            return self.alloc(fobj is intrinsics.alloc, args, node)
        if fobj is builtins.min or fobj is builtins.max:
            return V.builtin_minmax(fobj.__name__, args)
        if fobj is builtins.abs:
            if len(args) != 1:
                raise self.err("abs() takes one argument", node, "call")
            return V.builtin_abs(args[0])
        if fobj is builtins.len:
            if len(args) == 1 and isinstance(args[0], MemRefValue):
                return self.memref_dim(args[0], 0)
            if len(args) == 1 and isinstance(args[0], (tuple, list)):
                return len(args[0])
            raise self.err("len() takes a memref or a tuple in kernels", node, "call")
        if fobj is builtins.print:
            raise self.err("print() is not supported in kernels (there is no I/O in generated code)", node,
                           "print")
        if fobj in (builtins.float, builtins.int, builtins.bool):
            raise self.err(f"{fobj.__name__}() is not supported in kernels; use a loom cast such as F64(x), "
                           "I64(x), Index(x) or I1(x)", node, "call")
        mname = getattr(fobj, "__loom_math__", None) or (_PY_MATH.get(fobj) if _hashable(fobj) else None)
        if mname is not None:
            return V.math_call(mname, args)
        advice = _BUILTIN_ADVICE.get(fobj) if _hashable(fobj) else None
        if advice is not None:
            raise self.err(f"{fname}() is not supported in kernels: {advice}", node, "call")
        raise self.err(f"calling unsupported Python function '{fname}' inside a kernel (kernels may call other "
                       "@loom.kernel functions, loom intrinsics, math functions, min/max/abs and casts)", node,
                       "call")

    def alloc(self, heap: bool, args, node):
        if len(args) != 2 or not isinstance(args[1], ScalarType):
            raise self.err("alloc(shape, T) / alloca(shape, T): a tuple of sizes and a loom scalar type", node,
                           "alloc")
        shape = args[0] if isinstance(args[0], (tuple, list)) else (args[0],)
        static, dyn = [], []
        for d in shape:
            self.check_index(d, node, "alloc size")
            if isinstance(d, int):
                if d < 0:
                    raise self.err(f"negative alloc size {d}", node, "alloc")
                static.append(d)
            else:
                static.append(DYNAMIC_INDEX)
                dyn.append(d.ssa)
        if heap:
            op = memref.AllocOp(dyn, [], MemRefType(args[1].xdsl, static))
        else:
            op = memref.AllocaOp.get(args[1].xdsl, shape=static, dynamic_sizes=dyn)
        V.emit(op)
        if heap:
            self.dealloc_scopes[-1].append(op.results[0])
        return MemRefValue(op.results[0], element=args[1])

    def _kernel_call_args(self, k, node: ast.Call) -> list:
        """The arguments of a call to kernel ``k``, keywords bound to its parameters as Python binds them
        (evaluated in the order written)."""
        if not node.keywords:
            return [self.ev(a) for a in node.args]
        names = [p.name for p in k.signature.params]
        if len(node.args) > len(names):
            raise self.err(f"kernel '{k.name}' takes {len(names)} argument(s), got "
                           f"{len(node.args) + len(node.keywords)}", node, "call")
        bound = {n: self.ev(a) for n, a in zip(names, node.args)}
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.err(f"kernel '{k.name}' has no parameter '{kw.arg}' (its parameters: {', '.join(names)})",
                               kw.value, "call")
            if kw.arg in bound:
                raise self.err(f"kernel '{k.name}' got parameter '{kw.arg}' twice", kw.value, "call")
            bound[kw.arg] = self.ev(kw.value)
        missing = [n for n in names if n not in bound]
        if missing:
            raise self.err(f"kernel '{k.name}' is missing argument(s): {', '.join(missing)}", node, "call")
        return [bound[n] for n in names]

    def call_kernel(self, k, args, node):
        callee_type = self.resolve_callee(k, node)
        self.callees[k.name] = k
        ins, outs = callee_type
        if len(args) != len(ins):
            raise self.err(f"kernel '{k.name}' takes {len(ins)} argument(s), got {len(args)}", node, "call")
        ssa = []
        copies = []  # (strided view, its contiguous copy): written back after the call
        for i, (a, t, p) in enumerate(zip(args, ins, k.signature.params)):
            what = f"argument {i + 1} ('{p.name}') of the call to '{k.name}'"
            if p.kind == "memref":
                if not isinstance(a, MemRefValue):
                    raise self.err(f"{what} must be a memref, got {V.type_name(a)}", node, "call")
                self.check_writable(a, f"passed to kernel '{k.name}'", node)
                if a.element is not p.element:  # same xDSL type for I8 and U8: the kernel types must agree
                    raise self.err(f"{what} has elements {a.element}, expected {p.element}", node, "call")
                fits = (a.type.element_type == t.element_type and a.rank == len(p.dims)
                        and all(d == DYNAMIC_INDEX or d == e for d, e in zip(t.get_shape(), a.type.get_shape())))
                if a.type == t:
                    ssa.append(a.ssa)
                elif fits:
                    if not _identity(a.type):
                        # a slice (A[i, :], A[::2]): callees take contiguous memrefs, so pass a copy
                        copies.append((a, self._contiguous_copy(a)))
                        a = copies[-1][1]
                    ssa.append(a.ssa if a.type == t else V.emit(memref.CastOp.get(a.ssa, t)).results[0])
                else:
                    raise self.err(f"{what} has type {a.type}, expected {t}", node, "call")
            else:
                ssa.append(self.coerce(a, p.element, what, node).ssa)
        op = V.emit(func.CallOp(k.name, ssa, outs))
        for view, tmp in copies:
            V.emit(memref.CopyOp(tmp.ssa, view.ssa))
            V.emit(memref.DeallocOp.get(tmp.ssa))
        res = [Value(r, t) for r, t in zip(op.results, k.result_scalars)]
        return None if not res else res[0] if len(res) == 1 else tuple(res)

    def _contiguous_copy(self, view: MemRefValue) -> MemRefValue:
        """A fresh identity-layout buffer holding ``view``'s elements (``memref.alloc`` + ``memref.copy``)."""
        shape = view.type.get_shape()
        sizes = [self.memref_dim(view, axis) for axis, d in enumerate(shape) if d == DYNAMIC_INDEX]
        tmp = V.emit(memref.AllocOp([v.ssa for v in sizes], [], MemRefType(view.type.element_type, shape))).results[0]
        V.emit(memref.CopyOp(view.ssa, tmp))
        return MemRefValue(tmp, element=view.element)

    def call_intrinsic(self, fobj, node: ast.Call, fname: str):
        def arg(a):
            if isinstance(a, ast.Starred):
                raise self.err("star-args (*args) are not supported in intrinsic calls", a, "star-args")
            if isinstance(a, ast.Lambda):
                return BodyCallable(self, a)
            v = self.ev(a)
            if isinstance(v, LocalFunction):
                return BodyCallable(self, v.node)
            self.check_writable(v, f"passed to {fname}()", a)
            if isinstance(v, (MemRefValue, Value)) and getattr(v, "element", getattr(v, "stype", None)).kind == "uint":
                raise self.err(f"{fname}() does not take unsigned (U8...) values yet; loop over them, or cast", a,
                               "unsigned")
            return _unwrap(v)

        args = [arg(a) for a in node.args]
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise self.err("**kwargs are not supported in intrinsic calls", node, "star-args")
            kwargs[k.arg] = arg(k.value)
        self.ctx.loc = self.loc(node)
        blk = _current_builder.builder.insertion_point.block
        last = blk.last_op
        try:
            out = fobj(*args, **kwargs)
        except LoomError as e:
            self._fill(e, node, fname)
            raise
        except Exception as e:
            raise self.err(f"{fname}(...) failed: {type(e).__name__}: {e}", node, fname) from e
        op = last.next_op if last is not None else blk.first_op
        while op is not None:
            for inner in op.walk():
                if isinstance(inner.location, UnknownLoc):
                    inner.location = self.ctx.loc
            op = op.next_op
        return _wrap(out)


_EX_DISPATCH = {getattr(ast, n[3:]): f for n, f in vars(ExpressionsMixin).items() if n.startswith("ex_")}


class BodyCallable:
    """A kernel lambda/nested def handed to an intrinsic as ``body(*ssa_values)``."""

    def __init__(self, tracer: ExpressionsMixin, node):
        self.tracer = tracer
        self.node = node
        self.env = dict(tracer.env)

    def __call__(self, *ssa_values):
        t, node = self.tracer, self.node
        params = [a.arg for a in node.args.args]
        if len(params) != len(ssa_values):
            raise t.err(f"body takes {len(params)} argument(s) but the intrinsic passes {len(ssa_values)}", node,
                        "lambda")
        saved = (t.env, t.dead, t.ctx.hoist, t.ctx.loc, t.result_types, t.loop_depth)
        t.env, t.dead, t.ctx.hoist, t.loop_depth = dict(self.env), {}, False, 0
        try:
            for p, v in zip(params, ssa_values):
                t.bind(p, _wrap(v))
            if isinstance(node, ast.Lambda):
                out = t.ev(node.body)
            else:
                t.result_types = None
                t.exec_block(node.body, tail=True)
                if _RET_N not in t.env:
                    raise t.err(f"nested function '{node.name}' must end with a return", node, "def")
                out = tuple(t.env[f"$ret{i}"] for i in range(t.env[_RET_N]))
                out = out[0] if len(out) == 1 else out
            like = _wrap(ssa_values[-1]) if ssa_values else None
            if isinstance(out, tuple):
                return [_to_ssa(o, like, t, node) for o in out]
            return _to_ssa(out, like, t, node)
        finally:
            t.env, t.dead, t.ctx.hoist, t.ctx.loc, t.result_types, t.loop_depth = saved


def _to_ssa(v, like, t: ExpressionsMixin, node):
    if isinstance(v, (Value, MemRefValue, OpaqueValue)):
        return v.ssa
    if isinstance(v, PY_CONST):
        st = like.stype if isinstance(like, Value) else V.default_type(v)
        return V.as_value(v, st).ssa
    raise t.err(f"body must return scalar values, got {V.type_name(v)}", node, "lambda")


def _static_diff(hi, lo):
    """hi - lo as a Python int when it does not depend on runtime values (i+4 - i)."""
    fh = AffineForm({}, hi) if isinstance(hi, int) else hi.affine
    fl = AffineForm({}, lo) if isinstance(lo, int) else lo.affine
    if fh is None or fl is None:
        return None
    d = fh.add(fl, -1)
    return None if d.terms else d.const


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _identity(t: MemRefType) -> bool:
    return isinstance(t.layout, NoneAttr)


def _unwrap(v):
    if isinstance(v, (Value, MemRefValue, OpaqueValue)):
        return v.ssa
    if isinstance(v, tuple):
        return tuple(_unwrap(x) for x in v)
    if isinstance(v, list):
        return [_unwrap(x) for x in v]
    return v


def _wrap(out):
    if out is None:
        return None
    if isinstance(out, Operation):
        out = out.results[0] if len(out.results) == 1 else tuple(out.results) if out.results else None
        return _wrap(out)
    if isinstance(out, SSAValue):
        if isinstance(out.type, MemRefType):
            return MemRefValue(out)
        try:
            return Value(out, scalar_of(out.type))
        except LoomError:
            return OpaqueValue(out)
    if isinstance(out, (tuple, list)):
        return tuple(_wrap(x) for x in out)
    return out


def _constant_of(v) -> int | None:
    """The value of a compile-time index: a Python int, or an index value with a constant affine form."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    aff = getattr(v, "affine", None)
    if aff is not None and not aff.terms:
        return aff.const
    return None
