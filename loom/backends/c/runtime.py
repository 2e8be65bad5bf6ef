"""Loading compiled modules and calling their functions on numpy arrays via ctypes.

Arguments are checked against the MLIR signature before the call (count,
ndarray-ness, dtype, rank, static dims, dims shared between arguments through
their ``loom.dims`` names, layout, writability, scalar kind) so a bad call is a
LoomError, never a crash. Memref arguments are passed as MLIR
descriptors built from the array's data pointer, shape and strides.

A module compiled in checked mode has a site table; its functions take a
trailing status pointer, and a failed check becomes a ``LoomError`` at the
op's source location (see ``checks``).
"""

from __future__ import annotations

import ctypes
import pathlib

import numpy as np

from loom.backends.c.c_types import MemRefInfo, ScalarType, descriptor_ctypes
from loom.backends.c.checks import Site, Status, failure_error
from loom.backends.c.restrict import NoAliasFunction
from loom.backends.c.signature import FuncSignature, ParamSpec
from loom.errors import LoomError


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"ndarray of {value.dtype} with shape {value.shape}"
    return f"{type(value).__name__} {value!r}"[:80]


class _MemRefArg:
    """Converts one ndarray to a descriptor after checking it fits the memref type."""

    def __init__(self, fn: str, spec: ParamSpec):
        self.fn = fn
        self.index = spec.index
        self.info: MemRefInfo = spec.memref  # type: ignore[assignment]
        self.may_write = spec.may_write
        self.struct = descriptor_ctypes(self.info.elem, self.info.rank)
        self.itemsize = self.info.elem.np_dtype.itemsize
        # a static row-major memref: an array of this dtype and shape that is C-contiguous (and writeable, if
        # written) passes every check below, with these sizes and strides (the per-call fast path)
        static = self.info.identity and None not in self.info.shape and not self.info.offset
        self.fast = (self.info.elem.np_dtype, self.info.shape, _row_major(self.info.shape)) if static else None

    def error(self, message: str) -> LoomError:
        return LoomError(message, where=f"argument {self.index} of @{self.fn}")

    def convert(self, arr: object):
        fast = self.fast
        if fast is not None and type(arr) is np.ndarray and arr.dtype == fast[0] and arr.shape == fast[1] and \
                arr.flags.c_contiguous and (arr.flags.writeable or not self.may_write):
            desc = self.struct()
            desc.allocated = desc.aligned = arr.ctypes.data
            desc.offset = 0
            if fast[1]:
                desc.sizes[:] = fast[1]
                desc.strides[:] = fast[2]
            return ctypes.byref(desc), desc
        info = self.info
        if not isinstance(arr, np.ndarray):
            raise self.error(f"expected a numpy array for memref<{self._type_text()}>, got {_describe(arr)}")
        if arr.dtype != info.elem.np_dtype:
            raise self.error(f"dtype mismatch: expected {info.elem.np_dtype} ({info.elem.mlir}), got {arr.dtype}")
        if arr.ndim != info.rank:
            raise self.error(f"rank mismatch: expected {info.rank} dims, got {arr.ndim} (shape {arr.shape})")
        for k, (want, got) in enumerate(zip(info.shape, arr.shape)):
            if want is not None and want != got:
                raise self.error(f"dim {k} mismatch: expected {want}, got {got} (shape {arr.shape})")
        if self.may_write and not arr.flags.writeable:
            raise self.error("the function may write to this memref but the array is read-only")
        strides = []
        for k, s in enumerate(arr.strides):
            if s % self.itemsize:
                raise self.error(f"stride {s} bytes of dim {k} is not a multiple of the element size")
            strides.append(s // self.itemsize)
        if info.identity:
            if not arr.flags.c_contiguous and arr.size > 1:
                raise self.error("expected a C-contiguous array (identity layout); use np.ascontiguousarray")
            strides = list(_row_major(arr.shape))
        else:
            for k, (want, got) in enumerate(zip(info.strides, strides)):
                if want is not None and want != got and arr.shape[k] > 1:
                    raise self.error(f"stride of dim {k} mismatch: expected {want} elements, got {got}")
        desc = self.struct()
        offset = info.offset or 0
        data = arr.ctypes.data - offset * self.itemsize  # static offset: aligned + offset == data
        desc.allocated = data
        desc.aligned = data
        desc.offset = offset
        if info.rank:
            desc.sizes[:] = arr.shape
            desc.strides[:] = strides
        return ctypes.byref(desc), desc

    def _type_text(self) -> str:
        dims = "x".join("?" if d is None else str(d) for d in self.info.shape)
        return f"{dims}x{self.info.elem.mlir}" if dims else self.info.elem.mlir


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    running = 1
    for d in reversed(shape):
        out.append(running)
        running *= d
    return tuple(reversed(out))


class _ScalarArg:
    def __init__(self, fn: str, spec: ParamSpec):
        self.fn = fn
        self.index = spec.index
        self.st: ScalarType = spec.scalar  # type: ignore[assignment]

    def convert(self, value: object):
        st = self.st
        where = f"argument {self.index} of @{self.fn}"
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if st.is_float:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise LoomError(f"expected a float scalar ({st.mlir}), got {_describe(value)}", where=where)
            return st.ct(float(value)), None
        if st.is_bool:
            if not isinstance(value, (bool, np.bool_, int, np.integer)) or int(value) not in (0, 1):
                raise LoomError(f"expected a bool (i1), got {_describe(value)}", where=where)
            return st.ct(bool(value)), None
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise LoomError(f"expected an integer scalar ({st.mlir}), got {_describe(value)}", where=where)
        v = int(value)
        lo, hi = -(1 << (st.bits - 1)), (1 << st.bits) - 1  # accept signed or unsigned spelling
        if not lo <= v <= hi:
            raise LoomError(f"integer {v} does not fit in {st.mlir}", where=where)
        if v >= 1 << (st.bits - 1):
            v -= 1 << st.bits
        return st.ct(v), None


class CFunction:
    """A compiled function, callable with numpy arrays and scalars."""

    def __init__(self, lib: ctypes.CDLL, sig: FuncSignature, sites: tuple[Site, ...] | None = None):
        self.signature = sig
        self.sites = sites  # checked mode when not None
        self.name = sig.mlir_name
        self._cfunc = getattr(lib, sig.c_name)
        argtypes: list = []
        self._converters: list = []
        for spec in sig.params:
            if spec.memref is not None:
                conv = _MemRefArg(sig.mlir_name, spec)
                argtypes.append(ctypes.c_void_p)
            else:
                conv = _ScalarArg(sig.mlir_name, spec)
                argtypes.append(spec.scalar.ct)  # type: ignore[union-attr]
            self._converters.append(conv.convert)
        if len(sig.results) == 1:
            self._cfunc.restype = sig.results[0].ct
        else:
            self._cfunc.restype = None
            argtypes += [ctypes.c_void_p] * len(sig.results)
        if sites is not None:
            argtypes.append(ctypes.POINTER(Status))
        self._cfunc.argtypes = argtypes
        self._named_dims = {d: p for d, p in sig.named_dims.items() if len(p) > 1}

    def __call__(self, *args):
        sig = self.signature
        if len(args) != len(sig.params):
            raise LoomError(
                f"@{sig.mlir_name} takes {len(sig.params)} arguments, got {len(args)}", where=f"@{sig.mlir_name}"
            )
        c_args = []
        keep = [args]  # arrays and descriptors stay alive until the call returns
        for convert, value in zip(self._converters, args):
            c_arg, holder = convert(value)
            c_args.append(c_arg)
            keep.append(holder)
        self._check_named_dims(args)
        status = None
        trailing = []
        if self.sites is not None:
            status = Status()  # one per call: concurrent calls do not share it
            trailing = [ctypes.byref(status)]
        if len(sig.results) == 1:
            raw = self._cfunc(*c_args, *trailing)
            self._raise_on_failure(status)
            return sig.results[0].np_dtype.type(raw)
        outs = [r.ct() for r in sig.results]
        self._cfunc(*c_args, *[ctypes.byref(o) for o in outs], *trailing)
        del keep
        self._raise_on_failure(status)
        if not outs:
            return None
        return tuple(r.np_dtype.type(o.value) for r, o in zip(sig.results, outs))


    def _check_named_dims(self, args: tuple) -> None:
        """Axes with the same ``loom.dims`` name must have one size (else the C would overrun a buffer)."""
        sig = self.signature
        for dim, places in self._named_dims.items():
            (k0, a0), *rest = places
            n0 = args[k0].shape[a0]
            for k, a in rest:
                if args[k].shape[a] != n0:
                    p0, p = sig.params[k0], sig.params[k]
                    raise LoomError(
                        f"shared dimension {dim} disagrees: {p.label} dim {a} has size {args[k].shape[a]} but "
                        f"{p0.label} dim {a0} has size {n0}; they must be equal", where=f"@{sig.mlir_name}")

    def _raise_on_failure(self, status: Status | None) -> None:
        if status is not None and status.failed:
            raise failure_error(status, self.sites)  # type: ignore[arg-type]


class CompiledModule:
    """A loaded shared object and the signatures of its public functions."""

    def __init__(self, c_source: str, so_path: pathlib.Path, signatures: dict[str, FuncSignature],
                 sites: tuple[Site, ...] | None = None, restrict: dict[str, frozenset[int]] | None = None):
        self.c_source = c_source
        self.restrict = restrict or {}  # native mode: function -> its restrict parameters
        self.sites = sites  # checked mode when not None
        self.so_path = so_path
        self.signatures = signatures
        try:
            self._lib = ctypes.CDLL(str(so_path))
        except OSError as err:
            hint = ""
            if "ASan runtime" in str(err) or "asan" in str(err).lower():
                hint = " (sanitized objects need LD_PRELOAD=$(gcc -print-file-name=libasan.so))"
            raise LoomError(f"cannot load compiled module: {err}{hint}", filename=str(so_path)) from None
        self._functions: dict[str, CFunction | NoAliasFunction] = {}

    @property
    def library(self) -> ctypes.CDLL:
        """The loaded shared object (e.g. to call a runtime linked into it)."""
        return self._lib

    def function(self, name: str) -> CFunction | NoAliasFunction:
        """The callable for ``name``, built once (with its aliasing check when it has restrict parameters)."""
        fn = self._functions.get(name)
        if fn is not None:
            return fn
        sig = self.signatures.get(name)
        if sig is None or not sig.public:
            public = sorted(n for n, s in self.signatures.items() if s.public)
            raise LoomError(f"no public function @{name} in the compiled module (has: {', '.join(public) or 'none'})")
        fn = CFunction(self._lib, sig, self.sites)
        if self.restrict.get(name):
            fn = NoAliasFunction(fn, self.restrict[name])
        self._functions[name] = fn
        return fn
