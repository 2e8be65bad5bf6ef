"""Float ops on values that a loom custom float format computes (``types={"f32": HlsFloat(...)}``, ``loom hls
--format e4m3fn``): the ``loom_float<...>`` type of ``include/loom_float.h``.

The HLS C++ computes what loom's CPU kernel in that format computes (``convert-float-to-base2``), op for op:

- ``addf``/``subf``/``mulf``/``divf`` and ``math.fma`` are the format's arithmetic, rounded once
  (``a + b``, ``loom_fma(a, b, c)`` of ``loom_float`` values: integer arithmetic in the header);
- constants, loads, stores, ``select``, loop-carried values and calls move ``loom_float`` values as they are;
- ``negf``, ``absf``, ``maximumf``, ``minimumf`` and ``cmpf`` work on the patterns with integer operations
  (``loom_neg``, ``loom_cmp<P>``, ...), giving what the float op on the exact values gives, rounded back;
- every other float op (``maxnumf``, ``exp``, ``floor``, conversions to and from integers,
  ``extf``/``truncf``) reads its operands as values of the IR's float type (``(float)x``: exact), computes as the
  C backend does in that type, and a float result is rounded into the format (``((T)expf((float)x))``) -- as the
  CPU kernel rounds into the format every float value that format arithmetic did not produce before another op
  reads it. So ``sitofp`` rounds an i32 to f32 first, then into the format, as the CPU kernel does.
"""

from __future__ import annotations

from contextlib import contextmanager

from xdsl.ir import Operation

from loom.backends.c.c_types import scalar_type
from loom.backends.c.emitter import HANDLERS, op_error
from loom.backends.hls.types import loom_float_of

# ops whose loom_float operands and results stay loom_float values (structure, memory, the format's arithmetic)
NATIVE = {"arith.constant", "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "math.fma", "arith.select"}


def touches_loom_float(em, op: Operation) -> bool:
    for value in (*op.operands, *op.results):
        try:
            st = em.scalar(value.type)
        except Exception:  # memrefs, vectors: not scalars of a format
            continue
        if loom_float_of(st) is not None:
            return True
    return False


def needs_float_view(em, op: Operation) -> bool:
    """An arith/math op on loom_float values that the format has no arithmetic for."""
    dialect = op.name.split(".")[0]
    return dialect in ("arith", "math") and op.name not in NATIVE and touches_loom_float(em, op)


class _FloatView:
    """A type resolver that reads the custom float formats' types as the IR's own float types."""

    def __init__(self, types):
        self.types = types

    def __call__(self, ty, where: str = ""):
        st = self.types(ty, where)
        return scalar_type(ty, where) if loom_float_of(st) is not None else st

    def __getattr__(self, name):
        return getattr(self.types, name)


@contextmanager
def _as_ir_floats(em, op: Operation):
    types = em.ctx.types
    saved = {}
    for value in set(op.operands):
        try:
            st = types(value.type, "")
        except Exception:
            continue
        if loom_float_of(st) is not None and value in em.names:
            saved[value] = em.names[value]
            em.names[value] = f"(({scalar_type(value.type).ctype})({saved[value]}))"
    em.ctx.types = _FloatView(types)
    try:
        yield
    finally:
        em.ctx.types = types
        for value, name in saved.items():
            em.names[value] = name


def emit_through_ir_float(em, op: Operation) -> None:
    """The C backend's code for ``op`` in the IR's float types; float results rounded into the format."""
    if op.name == "arith.bitcast":
        raise op_error(op, "arith.bitcast of a value computed in a custom float format has no meaning in HLS C++")
    handler = HANDLERS.get(op.name)
    if handler is None:
        raise op_error(op, f"unsupported operation '{op.name}' in HLS C++")
    with _as_ir_floats(em, op):
        handler(em, op)
    for result in op.results:
        st = em.scalar(result.type)
        if loom_float_of(st) is not None:
            em.define(result, f"(({st.ctype})({em.names[result]}))")


def pattern_literal(st, value: float) -> str:
    """A constant of a loom_float type: its pattern, rounded here by the type's modes (loom.core.numformats, the
    definition the CPU kernel's cast implements), so the C++ holds no conversion from double to fold."""
    return f"{st.ctype}::from_bits({loom_float_of(st).encode(value)}u)"


def emit_constant(em, op: Operation) -> None:
    from xdsl.dialects.builtin import FloatAttr

    from loom.core.numformats import constant_in

    attr = op.properties.get("value") or op.attributes.get("value")
    st = em.scalar(op.results[0].type)
    if not isinstance(attr, FloatAttr):
        raise op_error(op, f"unsupported constant '{attr}' of a custom float format")
    # an infinite constant of a format without infinities is its extreme finite value, as in the CPU kernel
    em.names[op.results[0]] = pattern_literal(st, constant_in(loom_float_of(st).format, attr.value.data))


def is_float_constant(em, op: Operation) -> bool:
    return op.name == "arith.constant" and loom_float_of(em.scalar(op.results[0].type)) is not None


def emit_global(ctx, op: Operation) -> bool:
    """A memref.global of a loom_float element type (an EKL const array: a ROM) with pattern initialisers;
    False for other element types."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    from loom.backends.c.c_types import memref_info
    from loom.backends.c.emitter import c_identifier

    name = op.properties["sym_name"].data  # type: ignore[attr-defined]
    info = memref_info(op.properties["type"], f"memref.global @{name}", ctx.types)
    init = op.properties.get("initial_value")
    if loom_float_of(info.elem) is None or not isinstance(init, DenseIntOrFPElementsAttr):
        return False
    if any(d is None for d in info.shape) or not info.identity:
        raise op_error(op, "memref.global needs a static identity-layout type in HLS C++")
    count = 1
    for d in info.shape:
        count *= d  # type: ignore[operator]
    values = list(init.get_values())
    if len(values) == 1 and count > 1:
        values = values * count  # splat
    cname = c_identifier("g_" + name)
    const = "const " if "constant" in op.properties else ""
    body = ", ".join(pattern_literal(info.elem, v) for v in values)
    ctx.global_defs.append(f"static {const}{info.elem.ctype} {cname}[{max(count, 1)}] = {{{body}}};")
    ctx.globals[name] = cname
    return True


def emit_fma(em, op: Operation) -> None:
    a, b, c = (em.val(v) for v in op.operands)
    em.define(op.results[0], f"loom_fma({a}, {b}, {c})")


_INTEGER_OPS = {"arith.negf": "loom_neg", "math.absf": "loom_abs", "arith.maximumf": "loom_maximum",
                "arith.minimumf": "loom_minimum"}


def emit_integer_op(em, op: Operation) -> None:
    """Sign, min / max and comparisons without a float unit (loom_float.h), equal to the IR float's op on the
    values rounded back into the format (tests)."""
    args = ", ".join(em.val(v) for v in op.operands)
    if op.name == "arith.cmpf":
        predicate = op.properties["predicate"].value.data  # type: ignore[attr-defined]
        em.define(op.results[0], f"loom_cmp<{predicate}>({args})")
        return
    em.define(op.results[0], f"{_INTEGER_OPS[op.name]}({args})")


def integer_op(em, op: Operation) -> bool:
    """Is ``op`` one that loom_float.h computes on the patterns (all operands of one loom_float type)?"""
    if op.name not in _INTEGER_OPS and op.name != "arith.cmpf":
        return False
    types = {em.scalar(v.type).ctype for v in op.operands}
    return len(types) == 1 and loom_float_of(em.scalar(op.operands[0].type)) is not None
