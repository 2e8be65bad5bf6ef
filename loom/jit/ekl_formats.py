"""An EKL kernel compiled to compute in a custom number format (fixed point, custom floats).

    k = loom.ekl.load(src).kernel()                      # an f64 (or f32) kernel
    k12 = in_format(k, "float<5, 6>")                     # every + - * / of it in a 12-bit float
    k12(A, x, y)                                          # same arrays as k; outputs hold format values

The kernel's loop IR goes through ``convert-float-to-base2`` (one cast where a float enters, every
arithmetic op in the format, one cast where a value leaves) and ``lower-base2-to-arith``, so each result
is bit-exact with ``loom.core.numformats`` (and ml_dtypes where it has the format). Reductions accumulate in
the format in loop order. Other float ops (exp, sqrt, max, ...) compute in the kernel's float type on
format values and are rounded into the format where their result enters arithmetic.
"""

from __future__ import annotations

from loom.core.numformats import NumberFormat, parse_format
from loom.errors import LoomError
from loom.frontends.ekl.reference import check_congruence


class EklFormatKernel:
    """``kernel`` with its float arithmetic in ``fmt``; called like the kernel (arrays checked the same way)."""

    def __init__(self, kernel, fmt: NumberFormat, rounding: str, overflow: str | None):
        from loom.backends.c import compile_module
        from loom.jit.formats import lower_in_format
        from loom.passes.convert_float_to_base2 import ConvertFloatToBase2Pass

        self.kernel, self.format, self.rounding, self.overflow = kernel, fmt, rounding, overflow
        convert = ConvertFloatToBase2Pass(format=fmt.mlir.removeprefix("!base2."), rounding=rounding,
                                          overflow=overflow or "")
        module = lower_in_format(kernel.ir("loops"), convert)
        checked = kernel.form.has_gathers or None  # an out-of-range gather is a located error, as on f64
        self.compiled = compile_module(module, checked=checked).function(kernel.name)

    @property
    def name(self) -> str:
        return self.kernel.name

    def __call__(self, *args, **kwargs) -> None:
        named = self.kernel.arrays(args, kwargs)
        check_congruence(self.kernel.form, named)
        consts = [c.value for c in self.kernel.lowered_form.consts]
        self.compiled(*[named[p.name] for p in self.kernel.form.params], *consts)


def in_format(kernel, fmt: NumberFormat | str, *, rounding: str = "nearest_even",
              overflow: str | None = None) -> EklFormatKernel:
    """The EKL ``kernel`` computing in ``fmt`` (any ``loom.core.numformats`` spelling: ``fixed<10, 4>``,
    ``ufixed<4, 12>``, ``float<5, 6>``, ``bf16``, ``e4m3fn``, ...). ``overflow`` defaults to the format's
    (wrap for fixed point, inf for floats)."""
    fmt = parse_format(fmt, where="format") if isinstance(fmt, str) else fmt
    floats = {p.dtype for p in kernel.form.params} | {let.target.dtype for let in kernel.form.lets}
    if not floats & {"f32", "f64"}:
        raise LoomError(f"kernel {kernel.name} computes in no float type: nothing to compute in {fmt}",
                        where=f"kernel {kernel.name}")
    return EklFormatKernel(kernel, fmt, rounding, overflow)
