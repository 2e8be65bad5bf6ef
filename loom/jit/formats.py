"""Running code in custom number formats (the ``base2`` dialect) on numpy arrays.

- ``compile_in_format(target, "fixed<8, 8>")``: a ``@loom.kernel``, an ``MlirFunction`` or a module
  function that computes in f32/f64, compiled so that its arithmetic runs in the format
  (``convert-float-to-base2``, then ``lower-base2-to-arith``). It is called with the same f32 arrays;
  values are converted on entry and exit.
- ``compile_base2(module, name)`` (``Base2Module(module).function(name)`` for several): a function whose arguments are ``memref<..x!base2.T>``: it takes
  arrays of the ml_dtypes type of ``T`` where ml_dtypes has it (``ml_dtypes.bfloat16``,
  ``float8_e4m3fn``, ...) or arrays of the raw patterns (the storage integer: int8/int16/int32);
  a ``!base2.T`` scalar argument takes an ml_dtypes value or a numpy storage-integer pattern (not a
  Python number), and a ``!base2.T`` result comes back as its pattern.
- ``encode(values, fmt)`` / ``decode(patterns, fmt)``: whole arrays between f64 and a format's patterns,
  through the same compiled conversions; ``ml_dtype(fmt)`` gives the ml_dtypes type, if any.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp

from loom.core.numformats import ML_DTYPES_NAMES, NumberFormat, default_overflow, parse_format
from loom.errors import LoomError


def _format(fmt: NumberFormat | str) -> NumberFormat:
    return parse_format(fmt) if isinstance(fmt, str) else fmt


def ml_dtype(fmt: NumberFormat | str):
    """The ml_dtypes scalar type of a format (None when ml_dtypes lacks it or is not installed)."""
    name = ML_DTYPES_NAMES.get(_format(fmt))  # type: ignore[arg-type]
    if name is None:
        return None
    try:
        import ml_dtypes
    except ImportError:
        return None
    return getattr(ml_dtypes, name, None)


def storage_dtype(fmt: NumberFormat | str) -> np.dtype:
    return np.dtype(f"int{_format(fmt).storage_bits}")


def lower_in_format(module: ModuleOp, *passes) -> ModuleOp:
    """``module`` lowered to loops, ``passes`` applied (a ``convert-float-to-base2``), base2 lowered, ready for C."""
    from loom.passes.lower_base2_to_arith import LowerBase2ToArithPass
    from loom.passes.pipeline import default_context
    from loom.passes.recipes import lower_to_c, lower_to_loops

    try:  # the caller's module: else its errors read as a failure of the first pass run on it
        module.verify()
    except Exception as error:  # xDSL's verifier raises VerifyException (and others)
        raise LoomError(f"the module does not verify: {str(error).strip()[:500]}") from None
    lowered = lower_to_loops(module)
    ctx = default_context()
    for p in (*passes, LowerBase2ToArithPass()):
        p.apply(ctx, lowered)
    return lower_to_c(lowered)


class FormatFunction:
    """A compiled function computing in a number format; called like the original."""

    def __init__(self, compiled, check_args=None, name: str = ""):
        self.compiled = compiled
        self.check_args = check_args
        self.name = name

    def __call__(self, *args):
        if self.check_args is not None:
            args = tuple(self.check_args(args))
        return self.compiled(*args)


def compile_in_format(target, fmt: NumberFormat | str, *, rounding: str = "nearest_even",
                      overflow: str | None = None, name: str | None = None,
                      native: bool | None = None) -> FormatFunction:
    """``target`` (a ``@loom.kernel``, an ``MlirFunction``, or a ``ModuleOp`` with ``name``) with its
    f32/f64 arithmetic computed in ``fmt``."""
    from loom.backends.c import compile_module
    from loom.passes.convert_float_to_base2 import ConvertFloatToBase2Pass

    fmt = _format(fmt)
    check = None
    if isinstance(target, ModuleOp):
        if name is None:
            raise LoomError("compile_in_format: name the function to call in the module (name=...)")
        module = target
    else:
        module, name = target.module, name or target.name
        check = getattr(target, "check_args", None)
    spelled = fmt.mlir.removeprefix("!base2.")
    convert = ConvertFloatToBase2Pass(format=spelled, rounding=rounding, overflow=overflow or "")
    compiled = compile_module(lower_in_format(module, convert), native=native).function(name)
    return FormatFunction(compiled, check, name)


class Base2Function:
    """A compiled function with ``!base2`` memref arguments; see ``compile_base2``."""

    def __init__(self, compiled, formats: list[NumberFormat | None], name: str, scalar: list[bool] | None = None):
        self.compiled = compiled
        self.formats = formats
        self.scalar = scalar or [False] * len(formats)  # a !base2 scalar argument (not a memref)
        self.name = name

    def __call__(self, *args):
        if len(args) != len(self.formats):
            raise LoomError(f"@{self.name} takes {len(self.formats)} argument(s), got {len(args)}", where=self.name)
        return self.compiled(*(self._argument(k, a) for k, a in enumerate(args)))

    def _argument(self, k: int, value):
        fmt = self.formats[k]
        if fmt is None:
            return value  # the compiled function checks it
        storage = storage_dtype(fmt)
        typed = ml_dtype(fmt)
        if self.scalar[k]:
            # a Python int would pass as a raw pattern: 1 would be a tiny subnormal, not 1.0
            if typed is not None and isinstance(value, np.generic) and value.dtype == np.dtype(typed):
                return np.asarray(value).view(storage)[()]
            if isinstance(value, np.generic) and value.dtype == storage:
                return value
            expected = f"an ml_dtypes {np.dtype(typed).name} value or" if typed is not None else "its"
            raise LoomError(f"argument {k} of @{self.name} is a {fmt} scalar: expected {expected} pattern as "
                            f"numpy {storage}, got {type(value).__name__} {value!r}", where=self.name)
        if not isinstance(value, np.ndarray):
            return value  # the compiled function checks it
        if (typed is not None and value.dtype == np.dtype(typed)) or value.dtype == storage or (
                value.dtype.kind == "u" and value.dtype.itemsize == storage.itemsize):
            return value.view(storage)
        expected = f"{np.dtype(typed).name} or {storage}" if typed is not None else str(storage)
        raise LoomError(f"argument {k} of @{self.name} holds {fmt}: expected an array of {expected} "
                        f"(raw patterns), got {value.dtype}", where=self.name)


class Base2Module:
    """A module using ``!base2`` types, lowered and compiled once; ``.function(name)`` for each function."""

    def __init__(self, module: ModuleOp, *, native: bool | None = None):
        from loom.backends.c import compile_module
        from loom.jit.mlir_function import has_unnamed_dynamic_dims

        self.funcs = {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)}
        # as for any .mlir function: extents loom cannot relate (no loom.dims names) get bounds checks
        checked = True if any(has_unnamed_dynamic_dims(f) for f in self.funcs.values()) else None
        self.compiled = compile_module(lower_in_format(module), native=native, checked=checked)

    def function(self, name: str) -> Base2Function:
        from loom.dialects.base2 import format_of

        fn = self.funcs.get(name)
        if fn is None:
            raise LoomError(f"no function @{name} in the module (has: {', '.join(sorted(self.funcs))})")
        inputs = fn.function_type.inputs.data
        formats = [format_of(t.element_type if isinstance(t, MemRefType) else t) for t in inputs]
        scalar = [not isinstance(t, MemRefType) for t in inputs]
        return Base2Function(self.compiled.function(name), formats, name, scalar)


def compile_base2(module: ModuleOp, name: str, *, native: bool | None = None) -> Base2Function:
    """Function ``name`` of a module using ``!base2`` types, lowered and compiled."""
    return Base2Module(module, native=native).function(name)


@cache
def _converters(fmt: NumberFormat, rounding: str, overflow: str):
    from xdsl.parser import Parser

    from loom.dialects import context

    ty = fmt.mlir
    # both arrays share the extent N (loom.dims), so the callable checks them and the loop needs no checks
    text = f"""
    func.func @encode(%x: memref<?xf64> {{loom.dims = ["N"]}}, %y: memref<?x{ty}> {{loom.dims = ["N"]}}) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.dim %x, %c0 : memref<?xf64>
      scf.for %i = %c0 to %n step %c1 {{
        %v = memref.load %x[%i] : memref<?xf64>
        %w = base2.cast %v {{rounding = "{rounding}", overflow = "{overflow}"}} : f64 to {ty}
        memref.store %w, %y[%i] : memref<?x{ty}>
      }}
      func.return
    }}
    func.func @decode(%x: memref<?x{ty}> {{loom.dims = ["N"]}}, %y: memref<?xf64> {{loom.dims = ["N"]}}) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.dim %x, %c0 : memref<?x{ty}>
      scf.for %i = %c0 to %n step %c1 {{
        %v = memref.load %x[%i] : memref<?x{ty}>
        %w = base2.cast %v : {ty} to f64
        memref.store %w, %y[%i] : memref<?xf64>
      }}
      func.return
    }}
    """
    compiled = Base2Module(Parser(context(), text, "<loom.jit.formats>").parse_module())
    return compiled.function("encode"), compiled.function("decode")


def encode(values, fmt: NumberFormat | str, rounding: str = "nearest_even", overflow: str | None = None) -> np.ndarray:
    """The patterns (storage integers, same shape) of ``values`` rounded into ``fmt``."""
    from loom.core.numformats import check_modes

    fmt = _format(fmt)
    overflow = overflow or default_overflow(fmt)
    check_modes(fmt, rounding, overflow, "encode")  # before the conversion module is built and verified
    x = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty(x.shape, storage_dtype(fmt))
    _converters(fmt, rounding, overflow)[0](x.reshape(-1), out.reshape(-1))
    return out


def decode(patterns, fmt: NumberFormat | str) -> np.ndarray:
    """The exact f64 values of ``fmt`` patterns (storage integers, or an ml_dtypes array)."""
    fmt = _format(fmt)
    bits = np.ascontiguousarray(patterns)
    out = np.empty(bits.shape, np.float64)
    _converters(fmt, "nearest_even", default_overflow(fmt))[1](bits.reshape(-1), out.reshape(-1))
    return out


__all__ = ["compile_in_format", "compile_base2", "Base2Module", "encode", "decode", "ml_dtype", "storage_dtype",
           "FormatFunction", "Base2Function"]
