"""Reading a kernel's source and signature.

The source comes from ``inspect.getsourcelines`` (so decorators, methods and
nested definitions work); indented sources are parsed under an ``if 1:``
header instead of being dedented, so AST columns stay the true columns.
Annotations are read from the AST, never evaluated by Python: names are looked
up in the function's closure, the locals of the function it was decorated in,
then its globals, and an unknown name used as a MemRef dim is a dynamic dim
symbol of that name.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from dataclasses import dataclass, field

from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType

from loom.errors import LoomError
from loom.frontends.kernel.kernel_types import Dim, MemRefSpec, ScalarType, _MemRefFactory


@dataclass
class KernelSource:
    func: ast.FunctionDef
    filename: str
    line_offset: int  # add to AST line numbers to get file line numbers
    globals: dict
    closure: dict
    # the annotations Python evaluated when the def ran: read when a name in one is neither a closure variable nor
    # a global (a kernel made in a factory, ``def make(T): @kernel def k(x: MemRef[(N,), T])``: T is in neither)
    evaluated: dict = field(default_factory=dict)
    scope: dict = field(default_factory=dict)  # the defining function's locals when the decorator ran

    def line(self, node: ast.AST) -> int:
        return node.lineno + self.line_offset


def read_source(fn, scope: dict | None = None) -> KernelSource:
    fn = inspect.unwrap(fn)
    name = getattr(fn, "__name__", repr(fn))
    if not inspect.isfunction(fn):  # a builtin, a class, a callable object: no Python source to read
        raise LoomError(f"a kernel must be a Python 'def' function, got {type(fn).__name__} {name!r}",
                        construct="source")
    filename = inspect.getsourcefile(fn) or getattr(getattr(fn, "__code__", None), "co_filename", "<unknown>")
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise LoomError(
            f"cannot read the source of kernel '{name}' ({e}); kernels must be defined in a file",
            filename=filename,
            construct="source",
        ) from None
    text = "".join(lines)
    offset = start - 1
    first = lines[0] if lines else ""
    if first[: len(first) - len(first.lstrip())]:
        text = "if 1:\n" + text
        offset -= 1
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise LoomError(
            f"cannot parse the source of kernel '{name}': {e.msg}",
            filename=filename,
            line=(e.lineno or 1) + offset,
            construct="source",
        ) from None
    func = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            func = node
            break
    if func is None:
        if any(isinstance(n, ast.Lambda) for n in ast.walk(tree)):
            raise LoomError("a kernel must be a 'def' function, not a lambda", filename=filename,
                            line=start, construct="lambda")
        raise LoomError(f"cannot find 'def {name}' in its source", filename=filename, line=start)
    closure = {}
    code = getattr(fn, "__code__", None)
    if code is not None and fn.__closure__:
        for var, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[var] = cell.cell_contents
            except ValueError:
                pass  # unbound cell: treated as an unknown name
    evaluated = getattr(fn, "__annotations__", None)
    evaluated = {k: v for k, v in evaluated.items() if not isinstance(v, str)} if isinstance(evaluated, dict) else {}
    return KernelSource(func, filename, offset, fn.__globals__, closure, evaluated, dict(scope or {}))


_MISSING = object()


def lookup_python(src: KernelSource, name: str):
    """Closure, the defining function's locals, globals, then builtins; ``_MISSING`` if not found."""
    if name in src.closure:
        return src.closure[name]
    if name in src.scope:
        return src.scope[name]
    if name in src.globals:
        return src.globals[name]
    return getattr(builtins, name, _MISSING)


@dataclass
class ParamSig:
    name: str
    kind: str  # "memref" | "scalar"
    element: ScalarType
    dims: tuple | None = None  # memrefs: ints (static) and str (dynamic symbols)

    @property
    def xdsl_type(self):
        if self.kind == "scalar":
            return self.element.xdsl
        return MemRefType(self.element.xdsl, [d if isinstance(d, int) else DYNAMIC_INDEX for d in self.dims])


@dataclass
class KernelSignature:
    name: str
    params: list[ParamSig]
    results: list[ScalarType] | None  # None: not annotated, inferred from the returns
    dim_symbols: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    @property
    def equal_dims(self) -> list[list[tuple[str, int]]]:
        """Groups of (param, axis) that must be equal at call time."""
        return [v for v in self.dim_symbols.values() if len(v) > 1]


class AnnotationReader:
    def __init__(self, src: KernelSource):
        self.src = src

    def err(self, msg, node, construct="annotation"):
        return LoomError(msg, filename=self.src.filename, line=self.src.line(node), construct=construct)

    def resolve(self, node: ast.expr):
        if isinstance(node, ast.Name):
            return lookup_python(self.src, node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is _MISSING:
                return _MISSING
            return getattr(base, node.attr, _MISSING)
        if isinstance(node, ast.Constant):
            return node.value
        return _MISSING

    def scalar_or_memref(self, node: ast.expr, what: str):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                raise self.err(f"cannot parse the string annotation of {what}: {node.value!r}", node) from None
            ast.copy_location(inner, node)
            for n in ast.walk(inner):
                n.lineno = node.lineno
            return self.scalar_or_memref(inner, what)
        if isinstance(node, ast.Subscript):
            base = self.resolve(node.value)
            if isinstance(base, _MemRefFactory):
                return self.memref(node, what)
            raise self.err(f"unsupported annotation for {what}: {ast.unparse(node)} (expected MemRef[(dims), T] "
                           "or a scalar type such as F32, I32, Index)", node)
        obj = self.resolve(node)
        if isinstance(obj, ScalarType):
            return obj
        raise self.err(
            f"annotation '{ast.unparse(node)}' of {what} is not a kernel type "
            "(expected F32, F64, I1, I8, I16, I32, I64, Index or MemRef[(dims), T])",
            node,
        )

    def memref(self, node: ast.Subscript, what: str) -> MemRefSpec:
        sl = node.slice
        if not (isinstance(sl, ast.Tuple) and len(sl.elts) == 2):
            raise self.err(f"MemRef annotation of {what} must be MemRef[(dims...), T]", node)
        dims_node, elt_node = sl.elts
        elt = self.resolve(elt_node)
        if not isinstance(elt, ScalarType):
            raise self.err(
                f"MemRef element type of {what} must be one of F32, F64, I1, I8, I16, I32, I64, Index, "
                f"got '{ast.unparse(elt_node)}'",
                elt_node,
            )
        dnodes = dims_node.elts if isinstance(dims_node, ast.Tuple) else [dims_node]
        dims = []
        for d in dnodes:
            if isinstance(d, ast.Constant) and isinstance(d.value, (int, str)) and not isinstance(d.value, bool):
                v = d.value
            elif isinstance(d, ast.Name):
                v = self.resolve(d)
                if v is _MISSING:
                    v = d.id
            else:
                v = self.resolve(d)
            if isinstance(v, Dim):
                v = v.name
            if isinstance(v, bool) or not isinstance(v, (int, str)) or (isinstance(v, int) and v < 0):
                raise self.err(f"MemRef dim '{ast.unparse(d)}' of {what} must be a non-negative int, "
                               "a string or a Dim", d)
            dims.append(v)
        return MemRefSpec(tuple(dims), elt)

    def results(self, node: ast.expr | None) -> list[ScalarType] | None:
        if node is None:
            return None
        if isinstance(node, ast.Constant) and node.value is None:
            return []
        elts = None
        if isinstance(node, ast.Tuple):
            elts = node.elts
        elif isinstance(node, ast.Subscript) and self.resolve(node.value) is tuple:
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = []
        for e in elts if elts is not None else [node]:
            t = self.scalar_or_memref(e, "the result")
            if not isinstance(t, ScalarType):
                raise self.err("kernels return scalars only (write array results into a MemRef parameter)", e)
            out.append(t)
        return out


def read_signature(src: KernelSource, name: str) -> KernelSignature:
    f = src.func
    reader = AnnotationReader(src)
    a = f.args
    if a.vararg or a.kwarg:
        star = a.vararg or a.kwarg
        raise reader.err("*args/**kwargs parameters are not supported in kernels", star, "star-args")
    if a.kwonlyargs or a.posonlyargs:
        raise reader.err("keyword-only/positional-only parameters are not supported in kernels", f, "parameters")
    if a.defaults:
        raise reader.err("default parameter values are not supported in kernels", a.defaults[0], "default")
    params = []
    symbols: dict[str, list[tuple[str, int]]] = {}
    for arg in a.args:
        if arg.annotation is None:
            raise reader.err(
                f"parameter '{arg.arg}' needs a type annotation (e.g. MemRef[(N,), F32] or F32)", arg,
                "missing annotation")
        try:
            t = reader.scalar_or_memref(arg.annotation, f"parameter '{arg.arg}'")
        except LoomError:
            t = _evaluated_type(src.evaluated.get(arg.arg, _MISSING))
            if t is None:
                raise
        if isinstance(t, ScalarType):
            params.append(ParamSig(arg.arg, "scalar", t))
        else:
            params.append(ParamSig(arg.arg, "memref", t.element, t.dims))
            for axis, d in enumerate(t.dims):
                if isinstance(d, str):
                    symbols.setdefault(d, []).append((arg.arg, axis))
    try:
        results = reader.results(f.returns)
    except LoomError:
        results = _evaluated_results(src.evaluated.get("return", _MISSING))
        if results is None:
            raise
    return KernelSignature(name, params, results, symbols)


def _evaluated_type(v) -> ScalarType | MemRefSpec | None:
    """A kernel type from an annotation Python evaluated (None if it is not one)."""
    if isinstance(v, ScalarType):
        return v
    if isinstance(v, MemRefSpec) and isinstance(v.element, ScalarType) and all(
            isinstance(d, str) or (isinstance(d, int) and not isinstance(d, bool) and d >= 0) for d in v.dims):
        return v
    return None


def _evaluated_results(v) -> list[ScalarType] | None:
    import typing

    if v is None:
        return []
    elts = typing.get_args(v) if typing.get_origin(v) is tuple else v if isinstance(v, tuple) else (v,)
    out = [t for t in elts if isinstance(t, ScalarType)]
    return out if len(out) == len(elts) else None


__all__ = ["KernelSource", "KernelSignature", "ParamSig", "read_source", "read_signature", "lookup_python"]
