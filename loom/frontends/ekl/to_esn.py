"""Build the esn-dialect module of an elaborated EKL kernel.

``func.func @NAME(params..., consts...)``: one memref argument per kernel
parameter in order (inputs, ``out&`` outputs, static imports; each named after its
parameter), then one per constant array the kernel reads (the caller passes them;
see ``loom.jit.ekl``). With ``consts_as_globals`` the constant arrays are
``memref.global constant``s read with ``memref.get_global`` instead: what hardware
(HLS) needs, where a constant must be a ROM, not a port the host has to fill.
Each ``Let`` becomes one ``esn.let``: outputs write their parameter (``dest``),
other lets return a fresh buffer. A conditional with a gather in an arm becomes
an ``scf.if`` (only the taken arm reads); other conditionals ``arith.select``. Ops carry the EKL source location
(``FileLineColLoc``): their expression's when the elaborator kept it, else their statement's, so run-time
checks of gathers and backend refusals (an HLS fixed-point type too wide for a product) point at the EKL text.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from loom.dialects.dims import dims_arg_attrs
from loom.dialects.esn import LetOp, ReductionOp, SubscriptOp, YieldOp
from loom.frontends.ekl import form as F
from loom.frontends.ekl.source import Loc

_TYPES: dict[str, Attribute] = {"f64": f64, "f32": f32, "index": IndexType(), "i1": i1}
_FLOAT_BIN = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp,
              "min": arith.MinimumfOp, "max": arith.MaximumfOp, "^": math.PowFOp}
_INT_BIN = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.FloorDivSIOp, "%": arith.RemSIOp,
            "min": arith.MinSIOp, "max": arith.MaxSIOp, "&&": arith.AndIOp, "||": arith.OrIOp}
_FCMP = {"==": "oeq", "~=": "une", "<": "olt", "<=": "ole", ">": "ogt", ">=": "oge"}
_ICMP = {"==": "eq", "~=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}
_FN = {"log": math.LogOp, "exp": math.ExpOp, "sqrt": math.SqrtOp, "abs": math.AbsFOp, "sin": math.SinOp,
       "cos": math.CosOp, "tanh": math.TanhOp, "floor": math.FloorOp, "ceil": math.CeilOp}


def scalar_type(dtype: str) -> Attribute:
    return _TYPES[dtype]


def memref_type(tensor: F.Tensor) -> MemRefType:
    shape = [e if isinstance(e, int) else DYNAMIC_INDEX for e in tensor.shape]
    return MemRefType(scalar_type(tensor.dtype), shape)


def location(loc: Loc | None) -> FileLineColLoc | None:
    if loc is None:
        return None
    return FileLineColLoc(StringAttr(loc.source.name), IntAttr(loc.line), IntAttr(loc.column))


def constant(b: Builder, value, dtype: str) -> SSAValue:
    t = scalar_type(dtype)
    if isinstance(t, Float32Type | Float64Type):
        op = arith.ConstantOp(FloatAttr(float(value), t))
    elif isinstance(t, IndexType):
        op = arith.ConstantOp(IntegerAttr(int(value), IndexType()))
    else:
        op = arith.ConstantOp(IntegerAttr(-1 if value else 0, IntegerType(1)))
    return b.insert(op).result


def combine(b: Builder, op: str, x: SSAValue, y: SSAValue, dtype: str, loc: Loc | None = None) -> SSAValue:
    """``x op y`` for arithmetic, comparison and logic operators on ``dtype`` operands. ``loc`` goes on the op
    (checked C reports an index division or remainder by 0 there; a backend refusing the op names it)."""
    where = location(loc)
    is_float = dtype in F.FLOATS
    if op == "%" and is_float:
        # xDSL has no arith.remf: x - trunc(x / y) * y (C's fmod, the sign of x)
        q = b.insert(math.TruncOp(b.insert(arith.DivfOp(x, y)).result)).result
        return b.insert(arith.SubfOp(x, b.insert(arith.MulfOp(q, y)).result)).result
    if op == "%" and dtype == "index":
        # floored, like '/' (arith.floordivsi): x == (x / y) * y + x % y, the sign of y. remsi truncates;
        # a nonzero remainder whose sign differs from y's is moved into [0, y) (or (y, 0]) by adding y
        rem = arith.RemSIOp(x, y)
        if where is not None:
            rem.location = where
        r = b.insert(rem).result
        zero = constant(b, 0, "index")
        nonzero = b.insert(arith.CmpiOp(r, zero, "ne")).result
        signs = b.insert(arith.XOrIOp(b.insert(arith.CmpiOp(r, zero, "slt")).result,
                                      b.insert(arith.CmpiOp(y, zero, "slt")).result)).result
        fix = b.insert(arith.AndIOp(nonzero, signs)).result
        return b.insert(arith.SelectOp(fix, b.insert(arith.AddiOp(r, y)).result, r)).result
    if op in _FCMP:
        new = arith.CmpfOp(x, y, _FCMP[op]) if is_float else arith.CmpiOp(x, y, _ICMP[op])
    else:
        new = (_FLOAT_BIN if is_float else _INT_BIN)[op](x, y)
        if where is not None:
            new.location = where
    return b.insert(new).results[0]


def const_global(kernel: F.Kernel, k: int, const: F.Tensor) -> memref.GlobalOp:
    """The constant array ``const`` (the kernel's ``k``-th) as a private ``memref.global constant``."""
    t = memref_type(const)
    values = [bool(v) if const.dtype == "i1" else v for v in const.value.ravel().tolist()]
    data = [-1 if v is True else 0 if v is False else v for v in values]  # i1 true is all ones
    dense = DenseIntOrFPElementsAttr.from_list(TensorType(t.element_type, t.get_shape()), data)
    return memref.GlobalOp.get(StringAttr(f"{kernel.name}_const{k}"), t, dense, constant=UnitAttr())


class _FunctionBuilder:
    def __init__(self, kernel: F.Kernel, consts_as_globals: bool = False):
        self.kernel = kernel
        args = kernel.params if consts_as_globals else kernel.params + kernel.consts
        self.block = Block(arg_types=[memref_type(t) for t in args])
        for t, a in zip(kernel.params, self.block.args):  # ports of the HLS top function keep the EKL names
            a.name_hint = t.name
        self.values: dict[int, SSAValue] = {id(t): a for t, a in zip(args, self.block.args)}
        self.b = Builder(InsertPoint.at_end(self.block))
        self.globals: list[memref.GlobalOp] = []
        if consts_as_globals:
            for k, c in enumerate(kernel.consts):
                g = const_global(kernel, k, c)
                self.globals.append(g)
                self.values[id(c)] = self.b.insert(memref.GetGlobalOp(g.sym_name.data, memref_type(c))).memref

    def extent(self, extent: F.Extent) -> SSAValue:
        if isinstance(extent, int):
            return constant(self.b, extent, "index")
        source = next(p for p in self.kernel.params if p.name == extent.param)
        axis = constant(self.b, extent.axis, "index")
        return self.b.insert(memref.DimOp(self.values[id(source)], axis)).result

    def let(self, let: F.Let) -> None:
        extents = [self.extent(i.extent) for i in let.bound + let.reductions]
        dtype = let.target.dtype
        body = Block(arg_types=[IndexType()] * len(let.bound))
        indices = {id(i): a for i, a in zip(let.bound, body.args)}
        inner = Builder(InsertPoint.at_end(body))
        for k, index in enumerate(let.reductions):
            indices[id(index)] = inner.insert(ReductionOp(k)).index
        value = _ScalarEmitter(inner, indices, self.values).emit(let.body)
        inner.insert(YieldOp(value))
        reducer = Region()
        if let.reductions:
            t = scalar_type(dtype)
            rblock = Block(arg_types=[t, t])
            rb = Builder(InsertPoint.at_end(rblock))
            rb.insert(YieldOp(combine(rb, let.op, rblock.args[0], rblock.args[1], dtype)))
            reducer = Region(rblock)
        dest = self.values.get(id(let.target)) if let.target.is_output else None
        op = LetOp(extents, dest, None if dest is not None else memref_type(let.target), let.op or "",
                   Region(body), reducer)
        if (loc := location(let.loc)) is not None:
            op.location = loc
            locate_unlocated(op, loc)
        self.b.insert(op)
        if dest is None:
            self.values[id(let.target)] = op.result[0]


def locate_unlocated(let: Operation, loc: FileLineColLoc) -> None:
    """Give the let's location to the ops of its body that have none (those of an expression the elaborator
    built, such as a contraction's products), so a backend refusing one names the EKL statement."""
    for op in let.walk():
        if not isinstance(op.location, FileLineColLoc):
            op.location = loc


class _ScalarEmitter:
    def __init__(self, b: Builder, indices: dict[int, SSAValue], tensors: dict[int, SSAValue]):
        self.b, self.indices, self.tensors = b, indices, tensors

    def emit(self, e: F.SExpr) -> SSAValue:
        b = self.b
        if isinstance(e, F.Const):
            return constant(b, e.value, e.dtype)
        if isinstance(e, F.Idx):
            return self.indices[id(e.index)]
        if isinstance(e, F.Read):
            subs = [self.emit(s) for s in e.subscripts]
            op = SubscriptOp(self.tensors[id(e.tensor)], subs, scalar_type(e.tensor.dtype))
            if (loc := location(e.loc)) is not None:
                op.location = loc
            return b.insert(op).result
        if isinstance(e, F.Bin):
            return combine(b, e.op, self.emit(e.lhs), self.emit(e.rhs), e.lhs.dtype, e.loc)
        if isinstance(e, F.Un):
            x = self.emit(e.operand)
            if e.op == "~":
                return b.insert(arith.XOrIOp(x, constant(b, True, "i1"))).result
            if e.dtype in F.FLOATS:
                return b.insert(arith.NegfOp(x)).result
            return b.insert(arith.SubiOp(constant(b, 0, e.dtype), x)).result
        if isinstance(e, F.Fn):
            return b.insert(_FN[e.name](self.emit(e.args[0]))).result
        if isinstance(e, F.Select):
            c = self.emit(e.cond)
            if F.gathers(e.if_true) or F.gathers(e.if_false):
                return self.guarded(c, e)
            t, f = self.emit(e.if_true), self.emit(e.if_false)
            return b.insert(arith.SelectOp(c, t, f)).result
        if isinstance(e, F.Cast):
            return self.cast(self.emit(e.operand), e.operand.dtype, e.dtype)
        raise TypeError(e)

    def guarded(self, cond: SSAValue, e: F.Select) -> SSAValue:
        """``c ? a : b`` with a gather in an arm: an ``scf.if``, so only the taken arm's subscripts are
        evaluated (``if g > 0 then r_gas[g - _1, x] else 1`` never reads ``r_gas[-1, x]``)."""
        regions = []
        for arm in (e.if_true, e.if_false):
            block = Block()
            inner = _ScalarEmitter(Builder(InsertPoint.at_end(block)), self.indices, self.tensors)
            inner.b.insert(scf.YieldOp(inner.emit(arm)))
            regions.append(Region(block))
        return self.b.insert(scf.IfOp(cond, [scalar_type(e.dtype)], regions[0], regions[1])).results[0]

    def cast(self, x: SSAValue, src: str, dst: str) -> SSAValue:
        b = self.b
        if src == dst:
            return x
        if src in F.FLOATS and dst in F.FLOATS:
            op = arith.ExtFOp(x, f64) if dst == "f64" else arith.TruncFOp(x, f32)
            return b.insert(op).result
        i64 = IntegerType(64)
        if src in F.FLOATS and dst == "index":
            wide = b.insert(arith.FPToSIOp(x, i64)).result
            return b.insert(arith.IndexCastOp(wide, IndexType())).result
        if src == "index" and dst in F.FLOATS:
            wide = b.insert(arith.IndexCastOp(x, i64)).result
            return b.insert(arith.SIToFPOp(wide, scalar_type(dst))).result
        raise TypeError((src, dst))


def dim_classes(kernel: F.Kernel) -> dict[F.Dim, tuple[str, int | None]]:
    """A name for every '?' extent of the parameters (``loom.dims``), shared by the congruent ones (esn's index
    domains that must agree): ``A_1`` for dim(A, 1) and dim(B, 0) in ``A[i, k] * B[k, j]``; with the extent
    when it is congruent with a known one (``a : f64[?]`` beside ``c : f64[4]``), else None."""
    parent: dict[F.Extent, F.Extent] = {}

    def root(e: F.Extent) -> F.Extent:
        while parent.get(e, e) != e:
            e = parent[e]
        return e

    order = [e for p in kernel.params for e in p.shape if isinstance(e, F.Dim)]
    rank = {e: k for k, e in enumerate(order)}
    for check in kernel.checks:
        a, b = root(check.first), root(check.second)
        if a == b:
            continue
        if isinstance(a, int) or (not isinstance(b, int) and rank.get(a, 1 << 30) <= rank.get(b, 1 << 30)):
            parent[b] = a  # the known extent, else the first parameter axis, roots the class
        else:
            parent[a] = b
    first = {}  # class root -> the first parameter axis in it, which names it
    for e in order:
        first.setdefault(root(e), e)
    return {e: (f"{first[root(e)].param}_{first[root(e)].axis}", r if isinstance(r := root(e), int) else None)
            for e in order}


def _dims_attrs(kernel: F.Kernel, n_args: int):
    classes = dim_classes(kernel)
    per_arg: list[list[str] | None] = [[classes[e][0] if isinstance(e, F.Dim) else "" for e in p.shape]
                                       for p in kernel.params]
    per_arg += [None] * (n_args - len(per_arg))
    return dims_arg_attrs(per_arg)


def build_module(kernels: list[F.Kernel], consts_as_globals: bool = False) -> ModuleOp:
    """One ``func.func`` per kernel, bodies in the esn dialect (see the module docstring for the constants)."""
    funcs: list[Operation] = []
    for kernel in kernels:
        fb = _FunctionBuilder(kernel, consts_as_globals)
        funcs.extend(fb.globals)
        for let in kernel.lets:
            fb.let(let)
        fb.b.insert(func.ReturnOp())
        arg_types = [a.type for a in fb.block.args]
        fn = func.FuncOp(kernel.name, (arg_types, []), Region(fb.block))
        attrs = _dims_attrs(kernel, len(arg_types))  # named '?' extents: --dims sizes them (HLS, specialisation)
        if attrs is not None:
            fn.arg_attrs = attrs
        if (loc := location(kernel.loc)) is not None:
            fn.location = loc
        funcs.append(fn)
    return ModuleOp(funcs)
