"""``@loom.kernel``: the decorator and the ``Kernel`` object it returns.

Tracing is lazy: the source is read and the IR built on first use of
``.signature``/``.module``/``.ir()``/call, so defining a kernel never fails at
import time; errors surface as ``LoomError`` with the kernel's file and line.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from loom.errors import LoomError, user_boundary
from loom.frontends.kernel.signature import KernelSignature, read_signature, read_source

_TRACING: list = []  # kernels being traced (recursion detection); only touched under _BUILDING
# Held while a kernel's IR is first built: a kernel (a module global) is shared by the threads of a build or a
# user's threads, and two first uses at once would trace it twice and put one func.func into two modules.
# One lock for all kernels: a caller traces its callees while holding it (per-kernel locks could deadlock).
_BUILDING = threading.RLock()


class Kernel:
    def __init__(self, fn, loops: str = "scf", name: str | None = None, checked: bool | None = None,
                 scope: dict | None = None):
        if loops not in ("scf", "affine"):
            raise LoomError(f"loops must be 'scf' or 'affine', got {loops!r}")
        self.py_function = fn
        self.loops = loops
        self.name = name or fn.__name__
        self.checked = checked  # bounds/division checks in the C (None: env LOOM_CHECK_BOUNDS)
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._scope = scope or {}  # the defining function's locals (annotations may name them: see kernel())
        self._src = None
        self._sig = None
        self._func = None
        self._callees: dict | None = None
        self._tables: dict = {}
        self._module = None
        self._compiled = None

    def __repr__(self) -> str:
        return f"<loom.Kernel {self.name}>"

    @property
    def source(self):
        if self._src is None:
            self._src = read_source(self.py_function, self._scope)
        return self._src

    @property
    @user_boundary
    def signature(self) -> KernelSignature:
        if self._sig is None:
            self._sig = read_signature(self.source, self.name)
        return self._sig

    def _trace(self):
        """The kernel's func.func (cached) and its direct + transitive callees."""
        if self._func is None:
            with _BUILDING:
                if self._func is None:
                    self._trace_now()
        return self._func, self._callees

    def _trace_now(self) -> None:
        if self in _TRACING:
            chain = " -> ".join(k.name for k in [*_TRACING, self])
            raise LoomError(f"recursive kernel calls are not supported ({chain})",
                            filename=self.source.filename, line=self.source.line(self.source.func),
                            construct="recursion")
        from loom.frontends.kernel.tracer import Tracer

        _TRACING.append(self)
        try:
            tracer = Tracer(self.source, self.signature, self.loops, Kernel, _resolve_callee)
            fop = tracer.trace()
        finally:
            _TRACING.pop()
        tables = dict(tracer.tables)  # numpy arrays it reads: memref.globals of its module (and its callers')
        callees = {}
        for k in tracer.callees.values():
            callees[k.name] = k
            k._trace()
            for n, kk in k._callees.items():
                callees.setdefault(n, kk)
        for n, k in callees.items():
            if k.name == self.name:
                raise LoomError(f"kernel '{self.name}' calls a different kernel with the same name")
        for k in callees.values():
            tables.update(k._tables)
        self._tables = tables
        self.result_scalars = list(tracer.result_types)  # loom ScalarTypes (U8 and I8 share an xDSL type)
        self._callees = callees
        self._func = fop  # last: _trace reads both without the lock once _func is set

    @property
    @user_boundary
    def result_types(self):
        self._trace()
        return [t for t in self._func.function_type.outputs.data]

    @property
    @user_boundary
    def module(self) -> ModuleOp:
        if self._module is None:
            with _BUILDING:
                if self._module is None:
                    self._module = self._build_module()
        return self._module

    def _build_module(self) -> ModuleOp:
        fop, callees = self._trace()
        # the traced func moves into the module (no clone: that would double the build
        # time of large kernels); callers of this kernel clone it from there.
        funcs = [fop if fop.parent is None else fop.clone()]
        for k in callees.values():
            c = k._func.clone()
            c.sym_visibility = StringAttr("private")
            funcs.append(c)
        funcs += [t.clone() for t in self._tables.values()]
        module = ModuleOp(funcs)
        module.verify()
        return module

    @user_boundary
    def ir(self) -> str:
        return str(self.module)

    # ------------------------------------------------------------ execution

    def check_args(self, args, views: bool = False) -> list:
        """Check numpy/scalar arguments against the signature; returns them ready to pass.

        ``views``: accept non-C-contiguous arrays (transposed, strided, Fortran order) as they are; ``__call__``
        then runs the kernel on contiguous copies (``_run_on_copies``)."""
        params = self.signature.params
        if len(args) != len(params):
            raise LoomError(f"kernel '{self.name}' takes {len(params)} argument(s), got {len(args)}",
                            where=self.name, filename=self.source.filename, line=self.source.line(self.source.func))
        sizes: dict[str, tuple[str, int, int]] = {}
        out = []
        for i, (p, a) in enumerate(zip(params, args)):
            try:
                out.append(self._check_arg(p, a, sizes, views))
            except LoomError as e:  # located at the parameter's declaration: what it expects is written there
                if e.filename is None:
                    e.filename = self.source.filename
                    e.line = self.source.line(self.source.func.args.args[i])
                    e.args = (str(e),)
                raise
        return out

    def _check_arg(self, p, a, sizes: dict, views: bool):
        if p.kind == "scalar":
            return _scalar_arg(p, a, self.name)
        if not isinstance(a, np.ndarray):
            raise LoomError(f"parameter '{p.name}' expects a numpy array, got {type(a).__name__}",
                            where=self.name)
        if a.dtype != p.element.dtype:
            hint = ""
            if a.dtype.kind == "u" and p.element.kind == "int":  # a signed parameter for unsigned data
                hint = f" (declare the parameter U{a.dtype.itemsize * 8} for unsigned elements)"
            raise LoomError(f"parameter '{p.name}' expects dtype {p.element.dtype}, got {a.dtype}{hint}",
                            where=self.name)
        if a.ndim != len(p.dims):
            raise LoomError(f"parameter '{p.name}' expects rank {len(p.dims)}, got an array of rank {a.ndim}",
                            where=self.name)
        for axis, (d, n) in enumerate(zip(p.dims, a.shape)):
            if isinstance(d, int) and d != n:
                raise LoomError(f"parameter '{p.name}' dim {axis} must be {d}, got {n}", where=self.name)
            if isinstance(d, str):
                if d in sizes and sizes[d][2] != n:
                    q, qa, qn = sizes[d]
                    raise LoomError(f"parameter '{p.name}' dim {axis} ({d}) is {n} but '{q}' dim {qa} "
                                    f"({d}) is {qn}; they must be equal", where=self.name)
                sizes.setdefault(d, (p.name, axis, n))
        if not a.flags.c_contiguous and not views:
            raise LoomError(f"parameter '{p.name}' must be a C-contiguous array (use np.ascontiguousarray)",
                            where=self.name)
        return a

    def _refuse_read_only(self, fn, args: list) -> None:
        """A read-only array for a parameter the kernel writes, located at the parameter (C would write it)."""
        for spec in fn.signature.params:
            a = args[spec.index]
            if spec.may_write and isinstance(a, np.ndarray) and not a.flags.writeable:
                name = self.signature.params[spec.index].name
                raise LoomError(f"parameter '{name}' is written by the kernel but the array is read-only "
                                "(pass a writable copy)", where=self.name, filename=self.source.filename,
                                line=self.source.line(self.source.func.args.args[spec.index]))

    def _bind_keywords(self, args: tuple, kwargs: dict) -> tuple:
        """Positional and keyword arguments, as Python binds them, in the parameters' order."""
        names = [p.name for p in self.signature.params]
        if len(args) > len(names):
            raise LoomError(f"kernel '{self.name}' takes {len(names)} argument(s), got {len(args) + len(kwargs)}",
                            where=self.name)
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise LoomError(f"kernel '{self.name}' has no parameter '{k}' (its parameters: {', '.join(names)})",
                                where=self.name)
            if k in bound:
                raise LoomError(f"kernel '{self.name}' got parameter '{k}' twice", where=self.name)
            bound[k] = v
        missing = [n for n in names if n not in bound]
        if missing:
            raise LoomError(f"kernel '{self.name}' is missing argument(s): {', '.join(missing)}", where=self.name)
        return tuple(bound[n] for n in names)

    @user_boundary
    def compile(self):
        """Lower, emit C, compile (or fetch from the cache); returns the callable C function."""
        if self._compiled is None:
            from loom.backends.c import compile_module
            from loom.passes.recipes import lower_to_c

            self._compiled = compile_module(lower_to_c(self.module), checked=self.checked,
                                            check_gathers=True).function(self.name)
        return self._compiled

    @user_boundary
    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind_keywords(args, kwargs)
        args = self.check_args(args, views=True)
        fn = self.compile()
        self._refuse_read_only(fn, args)
        # U8... are signless iN in the IR: the C function takes (and returns) their bits as signed
        args = [a.view(_signed(a.dtype)) if isinstance(a, np.ndarray) and a.dtype.kind == "u" else a for a in args]
        if any(isinstance(a, np.ndarray) and not a.flags.c_contiguous for a in args):
            result = _run_on_copies(self, fn, args)
        else:
            result = fn(*args)
        return _unsigned_results(self.result_scalars, result)


def _signed(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"int{dtype.itemsize * 8}")


def _unsigned_results(types, result):
    """Results of unsigned kernel types, returned by C as signed bits, as numpy unsigned scalars."""
    if not any(t.kind == "uint" for t in types):
        return result
    values = result if isinstance(result, tuple) else (result,)
    out = tuple(t.dtype.type(np.asarray(v).astype(_signed(t.dtype)).view(t.dtype)[()]) if t.kind == "uint" else v
                for t, v in zip(types, values))
    return out if isinstance(result, tuple) else out[0]


def _run_on_copies(k: Kernel, fn, args: list):
    """Call ``fn`` with a C-contiguous copy of each strided view, writing back the ones the kernel may write, as
    numpy code would see them. A written view sharing memory with another argument is refused: the copy would
    hide the kernel's writes from that argument (or the write-back would undo them)."""
    written = {spec.index for spec in fn.signature.params if spec.may_write}
    views = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and not a.flags.c_contiguous]
    params = k.signature.params
    for i in views:
        if i not in written:
            continue  # read-only written arrays were refused before (Kernel._refuse_read_only)
        for j, other in enumerate(args):
            if j != i and isinstance(other, np.ndarray) and np.may_share_memory(args[i], other):
                raise LoomError(f"parameter '{params[i].name}' is a non-contiguous view written by the kernel and "
                                f"shares memory with '{params[j].name}'; pass C-contiguous arrays "
                                "(np.ascontiguousarray) and copy back yourself", where=k.name)
    copies = list(args)
    for i in views:
        copies[i] = np.ascontiguousarray(args[i])
    result = fn(*copies)
    for i in views:
        if i in written:
            np.copyto(args[i], copies[i])
    return result


def _scalar_arg(p, a, kernel_name: str):
    """A scalar argument as the parameter's numpy type; an integer out of the type's range is refused (numpy
    raised a bare OverflowError for a Python int, and silently wrapped a numpy one: np.int64(2**40) became 0)."""
    if isinstance(a, np.ndarray) or not isinstance(a, (int, float, bool, np.generic)):
        raise LoomError(f"parameter '{p.name}' expects a {p.element} scalar, got {type(a).__name__}",
                        where=kernel_name)
    if p.element.is_int_like and isinstance(a, (float, np.floating)):
        raise LoomError(f"parameter '{p.name}' expects an integer ({p.element}), got a float", where=kernel_name)
    if p.element.is_int_like and p.element.kind != "bool":
        lo, hi = p.element.core.min_value, p.element.core.max_value
        if not lo <= int(a) <= hi:
            raise LoomError(f"parameter '{p.name}' expects {p.element} in [{lo}, {hi}], got {int(a)}",
                            where=kernel_name)
    if p.element.is_float:  # a finite number the type cannot hold is refused, not passed on as inf
        with np.errstate(over="ignore"):
            try:
                v = p.element.dtype.type(a)
            except OverflowError:  # a Python int beyond any float
                v = None
        if v is None or (np.isinf(v) and not (isinstance(a, (float, np.floating)) and np.isinf(a))):
            raise LoomError(f"parameter '{p.name}' expects {p.element}, whose largest magnitude is "
                            f"{np.finfo(p.element.dtype).max}; {_short(a)} would become inf", where=kernel_name)
        return v
    return p.element.dtype.type(a)


def _short(a) -> str:
    text = repr(a)
    return text if len(text) <= 40 else f"{text[:12]}...({len(str(a))} digits)" if isinstance(a, int) else text[:40]


def _resolve_callee(k: Kernel, node):
    """The (input types, output types) of a called kernel, tracing it if needed."""
    fop, _ = k._trace()
    ft = fop.function_type
    return list(ft.inputs.data), list(ft.outputs.data)


def kernel(fn=None, *, loops: str = "scf", name: str | None = None, checked: bool | None = None):
    """Decorator: ``@kernel``, ``@kernel(loops="affine")``, ``@kernel(name="k")``, ``@kernel(checked=True)``."""
    if fn is None:
        return lambda f: _decorate(f, loops, name, checked, _defining_scope())
    return _decorate(fn, loops, name, checked, _defining_scope())


def _decorate(fn, loops, name, checked, scope) -> Kernel:
    if isinstance(fn, Kernel):
        return fn
    if not callable(fn):
        raise LoomError(f"@loom.kernel decorates a function, got {type(fn).__name__}")
    return Kernel(fn, loops=loops, name=name, checked=checked, scope=scope)


def _defining_scope() -> dict:
    """The locals of the function a kernel is decorated in (two frames up: past ``kernel`` or its decorator
    lambda). Under ``from __future__ import annotations`` an annotation naming a local import (``MemRef``,
    ``I32`` imported inside a test) is a string that makes no closure cell, so neither the closure nor the
    globals hold it; a module-level definition has no such locals."""
    frame = sys._getframe(2)
    return {} if frame.f_locals is frame.f_globals else dict(frame.f_locals)
