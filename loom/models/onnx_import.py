"""ONNX import: an ``.onnx`` file (or ``ModelProto``) -> a ``Graph`` through the same ``GraphBuilder``.

Every node's op type is checked against ``ONNX_OPS`` before anything is built, so an unsupported op
(or an unsupported form of a supported one: an attribute value, a dtype, a dynamic shape) is refused
at import time as ``file.onnx: node 3 'name' (OpType): ...``. Shape arithmetic on constants (Shape,
Gather, Concat, Unsqueeze, ... of initializers, Constant, ConstantOfShape) is folded here with numpy,
so only tensor computations become layers. onnx is imported lazily.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from loom.errors import LoomError
from loom.models import resize
from loom.models.composite import einsum, lp_normalize, pad_by_positions
from loom.models.graph import COMPUTE_DTYPE, F32, I64, ROUNDING_OPS, U64, Condition, GraphBuilder, Tensor, divide

Value = Tensor | np.ndarray | Condition  # a layer's output, a constant known at import time, a comparison


class _Node:
    """One ONNX node being translated: its inputs (None for omitted optional ones), attributes, opset."""

    def __init__(self, b: GraphBuilder, proto, values: list[Value | None], attrs: dict, opset: int,
                 wide: dict | None = None):
        self.b, self.proto, self.inputs, self.attrs, self.opset = b, proto, values, attrs, opset
        self.widened: np.dtype | None = None  # a storage dtype (float16, int8...) an input was widened from
        self.biased = False  # uint64 inputs computed as int64 less 2^63 (ordered ops)
        self.wide = {} if wide is None else wide  # tensor name -> its widened tensor, shared by the nodes

    @property
    def op(self) -> str:
        return self.proto.op_type

    def error(self, message: str) -> LoomError:
        return self.b.error(self.op, message)

    def tensor(self, k: int) -> Tensor:
        """Input k as a graph tensor (constants become graph constants)."""
        v = self.inputs[k] if k < len(self.inputs) else None
        if v is None:
            raise self.error(f"input {k} is required")
        t = self.b.constant(f"{self.proto.name or self.op}_in{k}", v) if isinstance(v, np.ndarray) else v
        if t.dtype in COMPUTE_DTYPE and self.op not in _STORAGE_OPS:  # computed wider, narrowed after the op
            if t.dtype == U64 and self.op not in _UINT64_OPS and self.op not in _UINT64_ORDERED_OPS:
                known = sorted(_UINT64_OPS | set(_UINT64_ORDERED_OPS))
                raise self.error(f"uint64 input {k} is computed in int64 (the same bits), where only "
                                 f"{', '.join(known)} and layout ops give uint64's values; values from 2^63 on would "
                                 "compute as negative numbers in the others")
            self.widened = self.widened or t.dtype
            if t.dtype == U64 and self.op in _UINT64_ORDERED_OPS[:6]:
                # comparisons, max / min: int64 of the bits less 2^63 orders as the uint64 values do
                self.biased = True
                key = (t.name, "biased")
                if key not in self.wide:
                    self.wide[key] = self.b.binary("add", self.b.cast(t, I64, self.op), -2.0 ** 63)
                return self.wide[key]
            if t.name not in self.wide:
                self.wide[t.name] = self.b.cast(t, COMPUTE_DTYPE[t.dtype], self.op)
            t = self.wide[t.name]
        return t

    def narrowed(self, out):
        """An output computed in a widened input's compute dtype, rounded (float16) or wrapped (int8, uint8, int16)
        back to that input's dtype: one rounding per op, as onnx's reference (numpy) computes float16. (Positions
        are int64 whatever the input's dtype: an ArgMax of uint32 is not narrowed.)"""
        if self.widened is not None and isinstance(out, Tensor) and out.dtype == COMPUTE_DTYPE[self.widened] and \
                self.op not in ("ArgMax", "ArgMin"):
            if self.biased:  # (max / min of biased uint64: the bias added back, wrapping)
                out = self.b.binary("add", out, -2.0 ** 63)
            return self.b.cast(out, self.widened, self.op)
        return out

    def optional(self, k: int) -> Tensor | None:
        return self.tensor(k) if k < len(self.inputs) and self.inputs[k] is not None else None

    def const(self, k: int, what: str) -> np.ndarray | None:
        """Input k's value, which must be known at import time (shapes, axes, pads)."""
        if k >= len(self.inputs) or self.inputs[k] is None:
            return None
        v = self.inputs[k]
        if isinstance(v, Tensor):
            if self.b.is_constant(v):
                return self.b.value(v)
            raise self.error(f"the {what} (input {k}) must be known at import (constants, or computed from shapes "
                             f"and constants), but {self._origin(v)}; loom compiles static shapes")
        return v

    def _origin(self, v: Tensor) -> str:
        """Where a run-time value comes from: a model input, or the node whose layer computes it."""
        if any(v is t for t in self.b.inputs):
            return f"it is the model input {v.name!r}"
        where = next((layer.where for layer in reversed(self.b.layers) if layer.output is v), "")
        where = where.split(": ", 1)[-1] if where else "an earlier node"
        return f"it depends on the model's input values (computed at run time by {where})"

    def ints(self, name: str, default=None) -> list[int] | None:
        v = self.attrs.get(name, default)
        return None if v is None else [int(x) for x in v]


def import_onnx(model, example_inputs: Sequence | None = None):
    import onnx

    source = "<onnx model>"
    if isinstance(model, (str, Path)):
        source = str(model)
        try:
            model = onnx.load(str(model))
        except Exception as error:  # protobuf's DecodeError, OSError, ...
            raise LoomError(f"cannot read ONNX model {source}: {type(error).__name__}: {error}",
                            filename=source) from None
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    for k, node in enumerate(graph.node):  # refuse unsupported ops before building anything
        if node.domain not in ("", "ai.onnx") or node.op_type not in ONNX_OPS:
            why = _DATA_DEPENDENT.get(node.op_type, "") if node.domain in ("", "ai.onnx") else ""
            raise LoomError(f"unsupported ONNX op {node.op_type}{' of domain ' + node.domain if node.domain else ''}"
                            f"{why} (loom imports: {', '.join(sorted(ONNX_OPS))})",
                            filename=source, where=f"node {k} {node.name!r} ({node.op_type})")
    b = GraphBuilder(source)
    values: dict[str, Value] = {}
    wide: dict[str, Tensor] = {}
    for init in graph.initializer:
        values[init.name] = _array(b, init)
    examples = list(example_inputs) if example_inputs is not None else None
    real_inputs = [i for i in graph.input if i.name not in values]
    if examples is not None and len(examples) != len(real_inputs):
        raise LoomError(f"{source}: the model has {len(real_inputs)} input(s), {len(examples)} example(s) given")
    for k, inp in enumerate(real_inputs):
        b.at(f"{source}: input {inp.name!r}")
        try:
            shape, dtype = _input_type(b, inp, examples[k] if examples else None)
        except (KeyError, ValueError, TypeError) as error:  # e.g. an element type code onnx does not know
            raise b.error("input", f"malformed input type ({type(error).__name__}: {error})") from None
        values[inp.name] = b.input(inp.name, shape, dtype)
    for k, node in enumerate(graph.node):
        b.at(f"{source}: node {k} {node.name!r} ({node.op_type})")
        missing = [n for n in node.input if n and n not in values]
        if missing:
            raise b.error(node.op_type, f"input {missing[0]!r} is not defined before this node")
        ins = [_as_input(b, node.op_type, k, values[n]) if n else None for k, n in enumerate(node.input)]
        node_ = None
        try:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            node_ = _Node(b, node, ins, attrs, opset, wide)
            outs = ONNX_OPS[node.op_type](node_)
        except LoomError as error:
            if node_ is None or node_.widened is None:
                raise
            # name the model's dtype, not the widened tensor the op refused
            raise LoomError(f"{error.message} (this node's {node_.widened} inputs compute in "
                            f"{COMPUTE_DTYPE[node_.widened]})", filename=error.filename, where=error.where) from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError) as error:
            # a node whose attributes or inputs do not have the form the op's specification gives
            raise b.error(node.op_type, f"malformed node ({type(error).__name__}: {error})") from None
        outs = outs if isinstance(outs, tuple) else (outs,)
        outs = tuple(node_.narrowed(o) for o in outs)
        # numpy's ops of 0-d arrays give scalars (np.take of Shape's dim, np.add): constants stay arrays
        outs = tuple(np.asarray(o) if isinstance(o, np.generic) else o for o in outs)
        for k_out, name in enumerate(node.output):
            if not name:
                continue
            if k_out >= len(outs) or outs[k_out] is None:
                used = any(name in n.input for n in graph.node) or any(o.name == name for o in graph.output)
                if used:
                    raise b.error(node.op_type, f"output {k_out} ({name!r}) is not computed by loom")
                continue
            values[name] = outs[k_out]
    outputs = []
    for out in graph.output:
        b.at(f"{source}: output {out.name!r}")
        v = values.get(out.name)
        if v is None:
            raise b.error("output", f"{out.name!r} is not produced by any node")
        if isinstance(v, Condition):
            v = b.as_bool(v)
        outputs.append(b.constant(out.name, v) if isinstance(v, np.ndarray) else v)
    return b.finish(outputs)


# ops whose output shape depends on the values (x[mask] exports as NonZero + GatherND, or Compress): refused, saying
# why, since a loom model's shapes are static
_DATA_DEPENDENT = {op: f": its output shape depends on the input's values ({what}), and a loom model's shapes are "
                       "static; keep the shape with Where(mask, x, 0) or reduce the masked values"
                   for op, what in (("NonZero", "one index per non-zero element"),
                                    ("Compress", "one slice per true condition element"),
                                    ("Unique", "one element per distinct value"))}

# ops that move or convert values without computing with them: they take float16 / int8 / uint8 / int16 as they are
_STORAGE_OPS = {"Identity", "Dropout", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Expand", "Slice",
                "Concat", "Split", "Gather", "Cast", "Shape", "CastLike", "Size", "DepthToSpace", "SpaceToDepth",
                "Tile", "GatherElements"}

# ops whose int64 results are uint64's for the same bits (wrapping arithmetic)
_UINT64_OPS = {"Add", "Sub", "Mul", "Sum", "Neg", "ReduceSum", "CumSum", "Equal", "Where", "Pad"}
# ops whose uint64 inputs compute otherwise: the first six as int64 less 2^63 (ordered as the uint64 values), Div and
# Mod as unsigned divisions
_UINT64_ORDERED_OPS = ("Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Max", "Min", "Div", "Mod")

# inputs that take a comparison as it is (computed inside the op's own loop); any other builds its bool tensor
_TAKE_CONDITIONS = {("Where", 0), ("Cast", 0)}


def _as_input(b: GraphBuilder, op: str, k: int, v: Value) -> Value:
    return b.as_bool(v) if isinstance(v, Condition) and (op, k) not in _TAKE_CONDITIONS else v


def _array(b: GraphBuilder, proto) -> np.ndarray:
    from onnx import numpy_helper

    try:
        return np.asarray(numpy_helper.to_array(proto))
    except Exception as error:
        raise LoomError(f"{b.source}: cannot read tensor {proto.name!r}: {error}") from None


def _input_type(b: GraphBuilder, inp, example) -> tuple[tuple[int, ...], np.dtype]:
    from onnx import helper

    t = inp.type.tensor_type
    if not inp.type.HasField("tensor_type"):
        raise b.error("input", f"{inp.name!r} is not a tensor (sequence and map inputs are not supported)")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    if example is not None:
        example = np.asarray(example)
        if example.dtype != dtype or len(example.shape) != len(dims) or any(
                d is not None and d != e for d, e in zip(dims, example.shape)):
            raise b.error("input", f"{inp.name!r} is {dtype}{dims} but the example is {example.dtype}"
                                   f"{list(example.shape)}")
        return tuple(example.shape), dtype
    if any(d is None for d in dims):
        raise b.error("input", f"{inp.name!r} has dynamic dims {dims}: give example inputs of the shapes to "
                               "compile for (loom model run / loom build: --input-shape)")
    return tuple(dims), dtype


# ---------------------------------------------------------------- constant folding (import time)


def _all_const(n: _Node) -> bool:
    return all(v is None or isinstance(v, np.ndarray) or n.b.is_constant(v) for v in n.inputs)


def _const_values(n: _Node) -> list[np.ndarray | None]:
    return [None if v is None else v if isinstance(v, np.ndarray) else n.b.value(v) for v in n.inputs]


def _shape(n: _Node):
    v = n.inputs[0]
    shape = np.array(v.shape, dtype=np.int64)
    start, end = n.attrs.get("start", 0), n.attrs.get("end", None)
    return shape[start:end]


def _constant(n: _Node):
    for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
        if key in n.attrs:
            v = n.attrs[key]
            if key == "value":
                return _array(n.b, v)
            return np.asarray(v, dtype=np.float32 if "float" in key else np.int64)
    raise n.error(f"only tensor/float/int values are supported, got {sorted(n.attrs)}")


def _constant_of_shape(n: _Node):
    shape = n.const(0, "shape")
    value = _array(n.b, n.attrs["value"]) if "value" in n.attrs else np.zeros(1, np.float32)
    return np.full([int(d) for d in shape], value.reshape(-1)[0], dtype=value.dtype)


# ---------------------------------------------------------------- layers


def _elementwise(op: str):
    def build(n: _Node):
        return n.b.binary(op, n.tensor(0), n.tensor(1))
    return build


def _variadic(op: str, mean: bool = False):
    def build(n: _Node):
        acc = n.tensor(0)
        for k in range(1, len(n.inputs)):
            acc = n.b.binary(op, acc, n.tensor(k))
        return n.b.binary("mul", acc, 1.0 / len(n.inputs)) if mean and len(n.inputs) > 1 else acc
    return build


def _unary(op: str):
    return lambda n: n.b.unary(op, n.tensor(0))


def _rounding(op: str):
    """Floor / Ceil / Round (half to even): of constants folded (shape arithmetic: an output size floor(h * 1.5)),
    of tensors a layer."""
    def build(n: _Node):
        if _all_const(n):
            return ROUNDING_OPS[op](_const_values(n)[0])
        return n.b.unary(op, n.tensor(0))
    return build


def _leaky_relu(n: _Node):
    return n.b.leaky_relu(n.tensor(0), float(n.attrs.get("alpha", 0.01)))


def _prelu(n: _Node):
    x, slope = n.tensor(0), n.tensor(1)
    if len(slope.shape) == 1 and len(x.shape) > 2 and slope.shape[0] == x.shape[1] != x.shape[-1]:
        slope = n.b.view(slope, (slope.shape[0],) + (1,) * (len(x.shape) - 2))  # per channel (PyTorch's)
    return n.b.leaky_relu(x, slope)


def _elu(n: _Node):
    return n.b.elu(n.tensor(0), float(n.attrs.get("alpha", 1.0)))


def _selu(n: _Node):
    alpha = float(n.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(n.attrs.get("gamma", 1.05070102214813232421875))
    return n.b.binary("mul", n.b.elu(n.tensor(0), alpha), gamma)  # onnx's order: (alpha * expm1(x)) * gamma


def _softplus(n: _Node):
    return n.b.softplus(n.tensor(0))


def _softsign(n: _Node):
    x = n.tensor(0)
    return n.b.binary("div", x, n.b.binary("add", n.b.unary("abs", x), 1.0))


def _hard_sigmoid(n: _Node):
    alpha, beta = float(n.attrs.get("alpha", 0.2)), float(n.attrs.get("beta", 0.5))
    return n.b.hard_sigmoid(n.tensor(0), alpha, beta)


def _clip(n: _Node):
    if n.opset < 11:
        lo, hi = n.attrs.get("min"), n.attrs.get("max")
    else:
        lo_v, hi_v = n.const(1, "min"), n.const(2, "max")
        lo = None if lo_v is None else float(lo_v.reshape(-1)[0])
        hi = None if hi_v is None else float(hi_v.reshape(-1)[0])
    return n.b.clamp(n.tensor(0), lo, hi)


def _gelu(n: _Node):
    return n.b.unary("gelu_tanh" if n.attrs.get("approximate", b"none") in (b"tanh", "tanh") else "gelu",
                     n.tensor(0))


def _compare(op: str):
    return lambda n: n.b.compare(op, n.tensor(0), n.tensor(1))


def _logical(op: str):
    def build(n: _Node):
        if _all_const(n):  # masks of constants (shape arithmetic)
            return getattr(np, f"logical_{op}")(*_const_values(n))
        return n.b.logical(op, n.tensor(0), n.tensor(1))
    return build


def _not(n: _Node):
    if _all_const(n):
        return np.logical_not(_const_values(n)[0])
    return n.b.logical_not(n.tensor(0))


def _mod(n: _Node):
    """Mod: fmod=1 the remainder with the dividend's sign (C's fmod), fmod=0 the divisor's (numpy's mod; the
    specification allows it of integers only, onnx's reference computes it of floats too). A zero integer divisor
    gives 0, as the reference (numpy). Of constants (torch.onnx's shape arithmetic: an axis modulo the rank) folded."""
    op = "fmod" if int(n.attrs.get("fmod", 0)) else "mod"
    if _all_const(n):
        a, c = _const_values(n)
        return divide(op, *np.broadcast_arrays(a, c)) if a.dtype == c.dtype else (
            np.fmod if op == "fmod" else np.mod)(a, c)
    a, c = n.tensor(0), n.tensor(1)
    return n.b.binary(op, a, c, unsigned=n.widened == U64)


def _div(n: _Node):
    """Div: of integers truncated towards zero (onnx's reference; a zero divisor gives 0 as there), of floats IEEE's."""
    a, c = n.tensor(0), n.tensor(1)
    return n.b.binary("truncdiv" if a.dtype.kind in "iu" else "div", a, c, unsigned=n.widened == U64)


def _where(n: _Node):
    cond = n.inputs[0]  # a comparison, or a bool constant (a mask)
    return n.b.select(cond if isinstance(cond, Condition) else n.tensor(0), n.tensor(1), n.tensor(2))


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _choice(n: _Node, name: str, default: str, known: tuple[str, ...]) -> str:
    value = _text(n.attrs.get(name, default))
    if value not in known:
        raise n.error(f"{name}={value!r} is not supported (supported: {', '.join(known)})")
    return value


def _resize(n: _Node):
    """Nearest, linear or cubic resizing of any axes by constant scales or sizes (loom.models.resize)."""
    if n.opset < 11:
        raise n.error(f"Resize of opset {n.opset} is not supported (opset 11 and later)")
    mode = _choice(n, "mode", "nearest", resize.MODES)
    coordinates = _choice(n, "coordinate_transformation_mode", "half_pixel", resize.COORDINATE_MODES)
    nearest = _choice(n, "nearest_mode", "round_prefer_floor", resize.NEAREST_MODES)
    policy = _choice(n, "keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller"))
    x = n.tensor(0)
    rank = len(x.shape)
    axes = [n.b.axis(n.op, a, rank) for a in n.ints("axes", list(range(rank)))]
    scales, sizes = n.const(2, "scales"), n.const(3, "sizes")
    for what, given in (("scales", scales), ("sizes", sizes)):
        if given is not None and given.size and given.size != len(axes):
            raise n.error(f"{what} has {given.size} values for {len(axes)} axes")
    full_scales, full_sizes = [1.0] * rank, list(x.shape)
    if sizes is not None and sizes.size:
        for a, size in zip(axes, sizes.reshape(-1), strict=True):
            full_sizes[a], full_scales[a] = int(size), int(size) / x.shape[a]
        if policy != "stretch":  # one scale for every axis, the output rounded half up (the reference's)
            scale = (min if policy == "not_larger" else max)(full_scales[a] for a in axes)
            for a in axes:
                full_scales[a], full_sizes[a] = scale, int(scale * x.shape[a] + 0.5)
    elif scales is not None and scales.size:
        for a, scale in zip(axes, scales.reshape(-1), strict=True):
            full_scales[a] = float(scale)
        # the reference's output size: the (float32) scales times the shape in float64, truncated
        full_sizes = [int(v) for v in (np.array(full_scales) * np.array(x.shape)).astype(int)]
    else:
        raise n.error("needs constant scales or sizes")
    roi = None
    if coordinates == "tf_crop_and_resize":
        given = n.const(1, "roi")
        if given is None or given.size != 2 * len(axes):
            raise n.error("tf_crop_and_resize needs a constant roi of (starts, ends) for the resized axes")
        roi = [(0.0, 1.0)] * rank
        for k, a in enumerate(axes):
            roi[a] = (float(given.reshape(-1)[k]), float(given.reshape(-1)[len(axes) + k]))
    if min(full_sizes) < 1:
        raise n.error(f"scales {full_scales} give the empty output shape {full_sizes}")
    return resize.resize(n.b, x, full_sizes, full_scales, mode, coordinates, nearest,
                         float(n.attrs.get("cubic_coeff_a", -0.75)), bool(n.attrs.get("exclude_outside", 0)),
                         bool(n.attrs.get("antialias", 0)) and mode != "nearest", roi,
                         float(n.attrs.get("extrapolation_value", 0.0)), "Resize")


def _upsample(n: _Node):
    """Upsample (opsets 7-9, as torch.onnx.export writes F.interpolate there): Resize's asymmetric / floor."""
    mode = _text(n.attrs.get("mode", "nearest"))
    if mode != "nearest":
        raise n.error(f"mode {mode!r} is not supported (nearest only)")
    scales = n.attrs.get("scales") if n.opset < 9 else n.const(1, "scales")
    return _upsample_by(n, n.tensor(0), None if scales is None else np.asarray(scales, np.float32), None)


def _upsample_by(n: _Node, x: Tensor, scales: np.ndarray | None, sizes: np.ndarray | None) -> Tensor:
    """Nearest upsampling by the whole-number factors that ``sizes`` or ``scales`` give each axis."""
    if sizes is not None and sizes.size:
        ratios = [int(o) / i for o, i in zip(sizes.reshape(-1), x.shape)]
    elif scales is not None and scales.size:
        ratios = [float(s) for s in scales.reshape(-1)]
    else:
        raise n.error("needs constant scales or sizes")
    if len(ratios) != len(x.shape) or ratios[:2] != [1.0, 1.0] or \
            any(r < 1 or not r.is_integer() for r in ratios[2:]):
        raise n.error(f"scales {ratios} of input {list(x.shape)}: only whole-number upscaling of the axes after "
                      "N and C is supported (scales [1, 1, 2, 2], ...)")
    return n.b.upsample_nearest(x, [int(r) for r in ratios[2:]])


def _spatial(n: _Node, x: Tensor, what: str) -> int:
    rank = len(x.shape)
    if rank not in (3, 4):
        raise n.error(f"only 1-d and 2-d {what} (rank 3 or 4 input) are supported, got rank {rank}")
    _choice(n, "auto_pad", "NOTSET", ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"))
    return rank - 2


def _pads(n: _Node, spatial: int, sizes=(), kernel=(), strides=(), dilations=()) -> tuple[list[int], list[int]]:
    """The explicit pads, none for VALID, or SAME_UPPER / SAME_LOWER's: the output ceil(size / stride) long, the
    padding that needs split in two halves, the odd one after (UPPER) or before (LOWER)."""
    auto_pad = _text(n.attrs.get("auto_pad", "NOTSET"))
    if auto_pad.startswith("SAME"):
        total = [max((-(-d // s) - 1) * s + (k - 1) * dl + 1 - d, 0)
                 for d, k, s, dl in zip(sizes, kernel, strides, dilations)]
        before = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
        return before, [t - b for t, b in zip(total, before)]
    pads = n.ints("pads", [0] * (2 * spatial)) if auto_pad == "NOTSET" else [0] * (2 * spatial)
    return pads[:spatial], pads[spatial:]


def _conv(n: _Node):
    x, w, bias = n.tensor(0), n.tensor(1), n.optional(2)
    s = _spatial(n, x, "convolutions")
    strides, dilations = n.ints("strides", [1] * s), n.ints("dilations", [1] * s)
    before, after = _pads(n, s, x.shape[2:], w.shape[2:], strides, dilations)
    group = int(n.attrs.get("group", 1))
    if before != after:  # asymmetric: pad first, then an unpadded convolution
        x = n.b.pad(x, [0, 0, *before], [0, 0, *after])
        before = after = [0] * s
    if s == 1:
        return n.b.conv1d(x, w, bias, strides[0], before[0], dilations[0], group)
    return n.b.conv2d(x, w, bias, strides, before, dilations, group)


def _conv_transpose(n: _Node):
    """ConvTranspose (1-d and 2-d): explicit pads (output_padding adds to the end), an output_shape, or auto_pad
    SAME_UPPER / SAME_LOWER (the padding split as onnx's reference splits it: SAME_UPPER puts the smaller half first).
    Groups are each group's channels as the specification gives them (onnx's reference evaluator gets grouped
    transposed convolutions wrong; torch is the reference there)."""
    x, w, bias = n.tensor(0), n.tensor(1), n.optional(2)
    rank = len(x.shape)
    if rank not in (3, 4):
        raise n.error(f"only 1-d and 2-d transposed convolutions (rank 3 or 4 input) are supported, got rank {rank}")
    s = rank - 2
    strides, dilations = n.ints("strides", [1] * s), n.ints("dilations", [1] * s)
    extra = n.ints("output_padding", [0] * s)
    kernel = n.ints("kernel_shape", list(w.shape[2:]))
    if kernel != list(w.shape[2:]):
        raise n.error(f"kernel_shape {kernel} differs from the weight's {list(w.shape[2:])}")
    auto_pad = _text(n.attrs.get("auto_pad", "NOTSET"))
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise n.error(f"auto_pad={auto_pad!r} is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)")
    target = n.ints("output_shape")
    full = [st * (d - 1) + (k - 1) * dl + 1 for st, d, k, dl in zip(strides, x.shape[2:], kernel, dilations)]
    if auto_pad.startswith("SAME"):  # the padding that gives output_shape (or input * stride), split as the reference
        target = [d * st for d, st in zip(x.shape[2:], strides)] if target is None else target[-s:]
        total = [f + e - t for f, e, t in zip(full, extra, target)]
        before = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
    else:
        pads = n.ints("pads", [0] * (2 * s)) if auto_pad == "NOTSET" else [0] * (2 * s)
        before = pads[:s]
        # an output_shape: the output from the pads on, extended at the end like output_padding (the reference's);
        # else the end pads, less output_padding
        target = None if target is None else target[-s:]
        if target is not None and any(f - b - p > t for f, b, p, t in zip(full, before, pads[s:], target)):
            raise n.error(f"output_shape {target} is smaller than the output {list(x.shape)} gives with pads "
                          f"{pads}: give the pads that crop it (the specification and onnx's reference differ here)")
    after = [p - e for p, e in zip(pads[s:], extra)] if target is None else \
        [f - b - t for f, b, t in zip(full, before, target)]
    group = int(n.attrs.get("group", 1))
    if s == 1:
        x, w = (n.b.view(t, (*t.shape[:2], 1, t.shape[2])) for t in (x, w))
        strides, dilations, before, after = [1, *strides], [1, *dilations], [0, *before], [0, *after]
    y = n.b.conv_transpose2d(x, w, bias, strides, before, after, dilations, group)
    return n.b.view(y, (y.shape[0], y.shape[1], y.shape[3])) if s == 1 else y


def _pool(kind: str):
    def build(n: _Node):
        x = n.tensor(0)
        s = _spatial(n, x, "pooling")
        kernel = n.ints("kernel_shape")
        strides, dilations = n.ints("strides", [1] * s), n.ints("dilations", [1] * s)
        before, after = _pads(n, s, x.shape[2:], kernel, strides, dilations)
        if n.attrs.get("storage_order", 0):
            raise n.error("storage_order=1 is not supported")
        ceil = bool(n.attrs.get("ceil_mode", 0))
        include = bool(n.attrs.get("count_include_pad", 0))
        wide = any(2 * p > k for p, k in zip(before + after, kernel + kernel))
        if (before != after or wide) and (kind == "max" or include) and not ceil:
            # padding first (-inf, or zeros counted in the average), then an unpadded pooling
            x = n.b.pad(x, [0, 0, *before], [0, 0, *after], float("-inf") if kind == "max" else 0.0)
            before = after = [0] * s
            wide = False
        if (before != after or wide) and not ceil and kind == "avg":
            # an average of the real elements: the padded sums' average over the average of ones padded alike (each
            # window's share of real elements)
            if s == 1:
                x = n.b.view(x, (*x.shape[:2], 1, x.shape[2]))
                kernel, strides, before, after, dilations = ([1, *v] for v in (kernel, strides, before, after,
                                                                               dilations))
                before[0] = after[0] = 0
            ones = n.b.constant(f"{n.proto.name or 'pool'}_ones", np.ones((1, 1, *x.shape[2:]), x.dtype))
            pools = [n.b.pool2d("avg", n.b.pad(t, [0, 0, *before], [0, 0, *after]), kernel, strides, (0, 0),
                                dilations, False, True) for t in (x, ones)]
            y = n.b.binary("div", *pools)
            return (n.b.view(y, (y.shape[0], y.shape[1], y.shape[3])) if s == 1 else y, None)
        if before != after:
            raise n.error(f"asymmetric pads {before + after} with ceil_mode are not supported (average pooling "
                          "without count_include_pad)")
        if s == 1:
            x = n.b.view(x, (*x.shape[:2], 1, x.shape[2]))
            kernel, strides, before, dilations = [1, *kernel], [1, *strides], [0, *before], [1, *dilations]
        y = n.b.pool2d(kind, x, kernel, strides, before, dilations, ceil, include)
        if s == 1:
            y = n.b.view(y, (y.shape[0], y.shape[1], y.shape[3]))
        return (y, None)  # MaxPool's optional indices are not computed
    return build


def _global_pool(op: str):
    def build(n: _Node):
        x = n.tensor(0)
        return n.b.reduce(op, x, list(range(2, len(x.shape))), True)
    return build


def _batch_norm(n: _Node):
    if n.attrs.get("training_mode", 0):
        raise n.error("training_mode=1 is not supported (inference only)")
    x = n.tensor(0)
    return n.b.batch_norm(x, n.tensor(1), n.tensor(2), n.tensor(3), n.tensor(4), float(n.attrs.get("epsilon", 1e-5)))


def _gemm(n: _Node):
    a, bm, c = n.tensor(0), n.tensor(1), n.optional(2)
    if n.attrs.get("transA", 0):
        a = n.b.transpose(a, (1, 0))
    if n.attrs.get("transB", 0):
        bm = n.b.transpose(bm, (1, 0))
    return n.b.matmul(a, bm, c, alpha=float(n.attrs.get("alpha", 1.0)), beta=float(n.attrs.get("beta", 1.0)))


def _softmax(log: bool):
    def build(n: _Node):
        x = n.tensor(0)
        if n.opset >= 13:
            return n.b.softmax(x, int(n.attrs.get("axis", -1)), log)
        axis = n.b.axis(n.op, int(n.attrs.get("axis", 1)), len(x.shape))  # coerced to 2-d before opset 13
        rows = math.prod(x.shape[:axis])
        y = n.b.softmax(n.b.view(x, (rows, x.size // rows)), 1, log)
        return n.b.view(y, x.shape)
    return build


def _reduce(op: str):
    def build(n: _Node):
        x = n.tensor(0)
        axes = n.ints("axes")
        if axes is None and len(n.inputs) > 1 and n.inputs[1] is not None:
            axes = [int(v) for v in n.const(1, "axes")]
        if not axes and n.attrs.get("noop_with_empty_axes", 0):
            return x
        keep = bool(n.attrs.get("keepdims", 1))
        if op in _COMPOSED_REDUCTIONS:  # a reduction of a function of x, then a function of the result
            b = n.b
            if op == "logsumexp":  # shifted by the max (the reference's compute_log_sum_exp): no overflow
                top = b.reduce("max", x, axes, True)
                top = b.select(b.compare("eq", b.unary("abs", top), float("inf")), 0.0, top)
                total = b.reduce("sum", b.unary("exp", b.binary("sub", x, top)), axes, keep)
                return b.binary("add", b.unary("log", total), top if keep else b.reduce("max", top, axes, False))
            before, after = _COMPOSED_REDUCTIONS[op]
            return after(b, b.reduce("sum", before(b, x), axes, keep))
        if x.dtype == np.dtype(np.bool_):  # the max of bools is any, the min all
            return n.b.reduce({"max": "any", "min": "all"}.get(op, op), x, axes, bool(n.attrs.get("keepdims", 1)))
        return n.b.reduce(op, x, axes, bool(n.attrs.get("keepdims", 1)))
    return build


# ReduceL1 / L2 / SumSquare / LogSum: (what is summed, what is done to the sum)
_COMPOSED_REDUCTIONS = {
    "l1": (lambda b, x: b.unary("abs", x), lambda b, y: y),
    "l2": (lambda b, x: b.binary("mul", x, x), lambda b, y: b.unary("sqrt", y)),
    "sumsquare": (lambda b, x: b.binary("mul", x, x), lambda b, y: y),
    "logsum": (lambda b, x: x, lambda b, y: b.unary("log", y)),
    "logsumexp": None,
}


def _is_inf(n: _Node):
    x = n.tensor(0)
    positive, negative = int(n.attrs.get("detect_positive", 1)), int(n.attrs.get("detect_negative", 1))
    if positive and negative:
        return n.b.compare("eq", n.b.unary("abs", x), float("inf"))
    if not positive and not negative:
        return n.b.constant(f"{n.proto.name or 'isinf'}_none", np.zeros(x.shape, bool))
    return n.b.compare("eq", x, float("inf") if positive else -float("inf"))


def _celu(n: _Node):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): an elu of x / alpha scaled by alpha."""
    alpha = float(n.attrs.get("alpha", 1.0))
    return n.b.elu(n.tensor(0), alpha, 1.0, 1.0 / alpha)


def _mish(n: _Node):
    x = n.tensor(0)
    return n.b.binary("mul", x, n.b.unary("tanh", n.b.softplus(x)))


def _shrink(n: _Node):
    """x + bias where x < -lambd, x - bias where x > lambd, else 0."""
    x, lambd, bias = n.tensor(0), float(n.attrs.get("lambd", 0.5)), float(n.attrs.get("bias", 0.0))
    b = n.b
    low = b.select(b.compare("lt", x, -lambd), b.binary("add", x, bias), 0.0, dtype=x.dtype)
    return b.select(b.compare("gt", x, lambd), b.binary("sub", x, bias), low)


def _trilu(n: _Node):
    """The upper (or lower) triangle of the last two axes from diagonal k: folded for constants, else a select of
    a constant mask."""
    upper, k = bool(n.attrs.get("upper", 1)), n.const(1, "k")
    k = 0 if k is None else int(k.reshape(-1)[0])
    if _all_const(n):
        x = _const_values(n)[0]
        return (np.triu if upper else np.tril)(x, k)
    x = n.tensor(0)
    if len(x.shape) < 2:
        raise n.error(f"needs a rank 2 or higher input, got {list(x.shape)}")
    keep = (np.triu if upper else np.tril)(np.ones(x.shape[-2:], bool), k)
    return n.b.select(n.b.constant(f"{n.proto.name or 'trilu'}_mask", keep), x, 0.0)


def _depth_to_space(n: _Node):
    """(N, C * r * r, H, W) -> (N, C, H * r, W * r): DCR (depth, column, row: the default) or CRD order of the
    channels' blocks, as views and one transpose."""
    x, r = n.tensor(0), int(n.attrs["blocksize"])
    if len(x.shape) != 4 or x.shape[1] % (r * r):
        raise n.error(f"needs (N, C, H, W) with C divisible by blocksize^2 = {r * r}, got {list(x.shape)}")
    b_, c, h, w = x.shape
    if _choice(n, "mode", "DCR", ("DCR", "CRD")) == "CRD":
        y = n.b.transpose(n.b.view(x, (b_, c // (r * r), r, r, h, w)), (0, 1, 4, 2, 5, 3))
    else:
        y = n.b.transpose(n.b.view(x, (b_, r, r, c // (r * r), h, w)), (0, 3, 4, 1, 5, 2))
    return n.b.view(y, (b_, c // (r * r), h * r, w * r))


def _space_to_depth(n: _Node):
    x, r = n.tensor(0), int(n.attrs["blocksize"])
    if len(x.shape) != 4 or x.shape[2] % r or x.shape[3] % r:
        raise n.error(f"needs (N, C, H, W) with H and W divisible by blocksize {r}, got {list(x.shape)}")
    b_, c, h, w = x.shape
    crd = _choice(n, "mode", "DCR", ("DCR", "CRD")) == "CRD"  # (opset 25's mode)
    perm = (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4)
    y = n.b.transpose(n.b.view(x, (b_, c, h // r, r, w // r, r)), perm)
    return n.b.view(y, (b_, c * r * r, h // r, w // r))


def _tile(n: _Node):
    repeats = [int(v) for v in n.const(1, "repeats")]
    if _all_const(n):
        return np.tile(_const_values(n)[0], repeats)
    return n.b.repeat(n.tensor(0), repeats)


def _cast_like(n: _Node):
    to = n.inputs[1].dtype
    x = n.inputs[0]
    return x.astype(to) if isinstance(x, np.ndarray) else n.b.cast(x, to, "CastLike")


def _range(n: _Node):
    if not _all_const(n):
        raise n.error("only Range of constants (start, limit, delta known at import) is supported: its length is "
                      "the output's shape")
    start, limit, delta = (v.reshape(()) for v in _const_values(n))
    return np.arange(start, limit, delta, dtype=start.dtype)


def _recurrent(kind: str):
    """LSTM / GRU (torch.onnx's nn.LSTM / nn.GRU), unrolled over the sequence (its length is the input's static
    shape): the input's projections for every step are one matrix product, then each step adds the hidden state's
    and applies the gates (ONNX's orders: LSTM i, o, f, c; GRU z, r, h; linear_before_reset as given). Directions
    forward, reverse, bidirectional; layout 0 or 1. Refused: sequence_lens, peepholes, clip, other activations,
    input_forget."""
    gates = 4 if kind == "LSTM" else 3

    def build(n: _Node):
        b = n.b
        x, w, r = n.tensor(0), n.tensor(1), n.tensor(2)
        bias = n.optional(3)
        layout = int(n.attrs.get("layout", 0))
        if len(n.inputs) > 4 and n.inputs[4] is not None:  # every sequence full length: nothing to mask
            lengths = n.const(4, "sequence_lens")
            if not np.all(lengths == x.shape[1 if layout else 0]):
                raise n.error(f"sequence_lens {lengths.tolist()} shorter than the sequence are not supported")
        if len(n.inputs) > 7 and n.inputs[7] is not None:
            raise n.error("peepholes (input P) are not supported")
        for attr in ("clip", "activations", "activation_alpha", "activation_beta"):
            if attr in n.attrs:
                raise n.error(f"the {attr} attribute is not supported (default activations, no clip)")
        if int(n.attrs.get("input_forget", 0)):
            raise n.error("input_forget=1 is not supported")
        if layout:
            x = b.transpose(x, (1, 0, 2))  # (batch, seq, in) -> (seq, batch, in)
        steps, batch, features = x.shape
        directions, hidden = w.shape[0], r.shape[2]
        direction = _choice(n, "direction", "forward", ("forward", "reverse", "bidirectional"))
        if directions != (2 if direction == "bidirectional" else 1) or w.shape[1] != gates * hidden:
            raise n.error(f"W {list(w.shape)} does not match {direction} {kind} of hidden size {hidden}")
        states = []
        for k, what in ((5, "initial_h"), (6, "initial_c")):
            t = n.optional(k) if k < len(n.inputs) else None
            if t is not None and layout:
                t = b.transpose(t, (1, 0, 2))
            states.append(t)
        before_reset = bool(n.attrs.get("linear_before_reset", 0))
        ys, last_h, last_c = [], [], []
        for d in range(directions):
            wd, rd = (b.view(b.slice(t, 0, d, d + 1), t.shape[1:]) for t in (w, r))
            projected = b.matmul(b.view(x, (steps * batch, features)), b.transpose(wd, (1, 0)))
            if bias is not None:  # Wb + Rb, except GRU's Rbh where the reset gate scales it
                bd = b.view(b.slice(bias, 0, d, d + 1), (2 * gates * hidden,))
                wb, rb = b.slice(bd, 0, 0, gates * hidden), b.slice(bd, 0, gates * hidden, 2 * gates * hidden)
                projected = b.binary("add", projected, wb)
            projected = b.view(projected, (steps, batch, gates * hidden))
            h = states[0] and b.view(b.slice(states[0], 0, d, d + 1), (batch, hidden))
            c = states[1] and b.view(b.slice(states[1], 0, d, d + 1), (batch, hidden))
            zeros = b.constant(f"{n.proto.name or kind}_zeros", np.zeros((batch, hidden), x.dtype))
            h = zeros if h is None else h
            c = zeros if c is None else c
            order = range(steps - 1, -1, -1) if direction == "reverse" or d == 1 else range(steps)
            outs = {}
            for t in order:
                xt = b.view(b.slice(projected, 0, t, t + 1), (batch, gates * hidden))
                hr = b.matmul(h, b.transpose(rd, (1, 0)))
                if bias is not None:
                    hr = b.binary("add", hr, rb)

                def gate(src, g):
                    return b.slice(src, 1, g * hidden, (g + 1) * hidden)

                if kind == "LSTM":
                    pre = b.binary("add", xt, hr)
                    i, o, f = (b.unary("sigmoid", gate(pre, g)) for g in range(3))
                    c = b.binary("add", b.binary("mul", f, c), b.binary("mul", i, b.unary("tanh", gate(pre, 3))))
                    h = b.binary("mul", o, b.unary("tanh", c))
                else:
                    z, rr = (b.unary("sigmoid", b.binary("add", gate(xt, g), gate(hr, g))) for g in range(2))
                    if before_reset:
                        candidate = b.binary("mul", rr, gate(hr, 2))
                    else:  # (r * h) @ Rh^T + Rbh
                        rh = b.slice(rd, 0, 2 * hidden, 3 * hidden)
                        candidate = b.matmul(b.binary("mul", rr, h), b.transpose(rh, (1, 0)))
                        if bias is not None:
                            candidate = b.binary("add", candidate, b.slice(rb, 0, 2 * hidden, 3 * hidden))
                    candidate = b.unary("tanh", b.binary("add", gate(xt, 2), candidate))
                    h = b.binary("add", b.binary("mul", b.binary("sub", 1.0, z), candidate), b.binary("mul", z, h))
                outs[t] = b.view(h, (1, 1, batch, hidden))
            ys.append(b.concat([outs[t] for t in range(steps)], 0))
            last_h.append(b.view(h, (1, batch, hidden)))
            last_c.append(b.view(c, (1, batch, hidden)))
        y, yh, yc = b.concat(ys, 1), b.concat(last_h, 0), b.concat(last_c, 0)
        if layout:
            y, yh, yc = b.transpose(y, (2, 0, 1, 3)), b.transpose(yh, (1, 0, 2)), b.transpose(yc, (1, 0, 2))
        return (y, yh, yc) if kind == "LSTM" else (y, yh)
    return build


def _layer_norm(n: _Node):
    x = n.tensor(0)
    axis = n.b.axis(n.op, int(n.attrs.get("axis", -1)), len(x.shape))
    eps = float(n.attrs.get("epsilon", 1e-5))
    y = n.b.layer_norm(x, len(x.shape) - axis, n.optional(1), n.optional(2), eps)
    wanted = [k < len(n.proto.output) and bool(n.proto.output[k]) for k in (1, 2)]
    if not any(wanted):
        return (y, None, None)
    # the statistics too (Mean, InvStdDev: the normalised axes kept as 1s), as the reference computes them
    b, axes = n.b, list(range(axis, len(x.shape)))
    mean = b.reduce("mean", x, axes, True)
    deviation = b.binary("sub", x, mean)
    variance = b.reduce("mean", b.binary("mul", deviation, deviation), axes, True)
    inverse = b.unary("reciprocal", b.unary("sqrt", b.binary("add", variance, eps))) if wanted[1] else None
    return (y, mean, inverse)


def _instance_norm(n: _Node):
    x = n.tensor(0)
    return n.b.group_norm(x, x.shape[1] if len(x.shape) > 1 else 1, n.tensor(1), n.tensor(2),
                          float(n.attrs.get("epsilon", 1e-5)))


def _cumsum(n: _Node):
    """CumSum: reverse sums from the end (a flip before and after), exclusive ones leave out the element itself (the
    input moved one along the axis, a zero first: the same sums the reference adds)."""
    axis = n.const(1, "axis")
    if axis is None or axis.size != 1:
        raise n.error("needs a constant one-element axis")
    x = n.tensor(0)
    axis = n.b.axis(n.op, int(axis.reshape(-1)[0]), len(x.shape))
    reverse, exclusive = int(n.attrs.get("reverse", 0)), int(n.attrs.get("exclusive", 0))
    if reverse:
        x = n.b.flip(x, [axis])
    if exclusive:
        before = [1 if k == axis else 0 for k in range(len(x.shape))]
        x = n.b.slice(n.b.pad(x, before, [0] * len(x.shape)), axis, 0, x.shape[axis])
    y = n.b.cumsum(x, axis)
    return n.b.flip(y, [axis]) if reverse else y


def _arg_reduce(op: str):
    def build(n: _Node):
        return n.b.arg_reduce(op, n.tensor(0), int(n.attrs.get("axis", 0)), bool(n.attrs.get("keepdims", 1)),
                              bool(n.attrs.get("select_last_index", 0)))
    return build


def _lp_normalization(n: _Node):
    p = int(n.attrs.get("p", 2))
    if p not in (1, 2):
        raise n.error(f"p={p} is not an ONNX LpNormalization order (1 or 2)")
    return lp_normalize(n.b, n.tensor(0), p, int(n.attrs.get("axis", -1)))


def _flatten(n: _Node):
    x = n.tensor(0) if not isinstance(n.inputs[0], np.ndarray) else n.inputs[0]
    axis = int(n.attrs.get("axis", 1))
    axis = axis + len(x.shape) if axis < 0 else axis
    shape = (math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
    return x.reshape(shape) if isinstance(x, np.ndarray) else n.b.view(x, shape)


def _reshape(n: _Node):
    x = n.inputs[0]
    shape = [int(d) for d in n.const(1, "shape")]
    if not n.attrs.get("allowzero", 0):
        shape = [x.shape[k] if d == 0 else d for k, d in enumerate(shape)]
    if isinstance(x, np.ndarray):
        return x.reshape(shape)
    return n.b.view(x, shape)


def _transpose(n: _Node):
    x = n.inputs[0]
    perm = n.ints("perm", list(reversed(range(len(x.shape)))))
    return np.transpose(x, perm) if isinstance(x, np.ndarray) else n.b.transpose(x, perm)


def _axes(n: _Node) -> list[int] | None:
    axes = n.ints("axes")
    if axes is None and len(n.inputs) > 1 and n.inputs[1] is not None:
        axes = [int(v) for v in n.const(1, "axes")]
    return axes


def _squeeze(n: _Node):
    x, axes = n.inputs[0], _axes(n)
    rank = len(x.shape)
    axes = [k for k, d in enumerate(x.shape) if d == 1] if axes is None else [a % rank for a in axes]
    shape = [d for k, d in enumerate(x.shape) if k not in axes]
    return x.reshape(shape) if isinstance(x, np.ndarray) else n.b.view(x, shape)


def _unsqueeze(n: _Node):
    x, axes = n.inputs[0], _axes(n)
    rank = len(x.shape) + len(axes)
    axes = sorted(a % rank for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return x.reshape(shape) if isinstance(x, np.ndarray) else n.b.view(x, shape)


def _expand(n: _Node):
    x, shape = n.tensor(0), [int(d) for d in n.const(1, "shape")]
    from loom.models.graph import broadcast_shapes

    target = broadcast_shapes(x.shape, shape)  # ONNX Expand broadcasts both ways
    if target is None:
        raise n.error(f"cannot broadcast {list(x.shape)} with {shape}")
    return n.b.expand(x, target)


def _slice(n: _Node):
    x = n.tensor(0)
    if n.opset < 10:
        starts, ends, axes, steps = n.ints("starts"), n.ints("ends"), n.ints("axes"), None
    else:
        starts, ends = [int(v) for v in n.const(1, "starts")], [int(v) for v in n.const(2, "ends")]
        a, st = n.const(3, "axes"), n.const(4, "steps")
        axes, steps = (None if a is None else [int(v) for v in a]), (None if st is None else [int(v) for v in st])
    axes = axes or list(range(len(starts)))
    steps = steps or [1] * len(starts)
    if _all_const(n):  # shape arithmetic (torch.onnx reverses F.pad's pads with step -1): numpy's slicing
        return _slice_constant(n, _const_values(n)[0], axes, starts, ends, steps)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        if step < 1:
            raise n.error(f"step {step} is not supported (positive steps only)")
        x = n.b.slice(x, axis, max(min(start, 2**62), -2**62), max(min(end, 2**62), -2**62), step)
    return x


def _slice_constant(n: _Node, data: np.ndarray, axes, starts, ends, steps) -> np.ndarray:
    """ONNX's Slice clamps starts and ends as Python's slices do, negative steps included."""
    index = [slice(None)] * data.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        if step == 0:
            raise n.error("step 0 is not a slice")
        index[n.b.axis("Slice", axis, data.ndim)] = slice(start, end, step)
    return np.ascontiguousarray(data[tuple(index)])


def _split(n: _Node):
    """Slices along ``axis``: sizes from the ``split`` attribute (opset < 13) or input, else equal
    parts (the last one smaller, as opset 18's ``num_outputs`` gives)."""
    x = n.tensor(0)
    axis = n.b.axis("Split", int(n.attrs.get("axis", 0)), len(x.shape))
    sizes = n.ints("split") if n.opset < 13 else n.const(1, "split")
    length = x.shape[axis]
    if sizes is None:
        parts = int(n.attrs.get("num_outputs", len(n.proto.output)))
        step = -(-length // parts)
        sizes = [min(step, length - k * step) for k in range(parts)]
    sizes = [int(v) for v in sizes]
    if sum(sizes) != length or min(sizes, default=0) < 1:
        raise n.error(f"split sizes {sizes} must be positive and add up to {length}, the size of axis {axis}")
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(n.b.slice(x, axis, int(start), int(start) + size) for start, size in zip(starts, sizes))


def _concat(n: _Node):
    if _all_const(n):
        return np.concatenate(_const_values(n), axis=int(n.attrs["axis"]))
    return n.b.concat([n.tensor(k) for k in range(len(n.inputs))], int(n.attrs["axis"]))


def _gather(n: _Node):
    data, ids = n.inputs[0], n.inputs[1]
    axis = int(n.attrs.get("axis", 0))
    if _all_const(n):
        return np.take(*_const_values(n), axis=axis)
    if isinstance(data, Tensor) and not n.b.is_constant(data) and (
            isinstance(ids, np.ndarray) or n.b.is_constant(ids)):
        return n.b.take(n.tensor(0), n.const(1, "indices"), axis, "Gather")
    table, idx = n.tensor(0), n.tensor(1)
    if axis == 0 and n.b.is_constant(table) and len(table.shape) == 2 and table.dtype.kind == "f" and \
            idx.dtype == I64:
        return n.b.embedding(table, idx)  # (a constant table's rows: an embedding)
    return n.b.take_positions(table, idx, axis, True, "Gather")  # positions known when the model runs


def _gather_elements(n: _Node):
    return n.b.gather_elements(n.tensor(0), n.tensor(1), int(n.attrs.get("axis", 0)), True, "GatherElements")


def _scatter_elements(n: _Node):
    reduction = _choice(n, "reduction", "none", ("none", "add", "mul", "max", "min"))
    return n.b.scatter_elements(n.tensor(0), n.tensor(1), n.tensor(2), int(n.attrs.get("axis", 0)), reduction, True,
                                n.op)


def _topk(n: _Node):
    """TopK: the k largest (or smallest) along the axis, equal values in position order (the specification's);
    the output is sorted whatever ``sorted`` says."""
    k = n.const(1, "k") if n.opset >= 10 else np.array(n.attrs["k"])
    if k is None or k.size != 1:
        raise n.error("needs a constant one-element k")
    return n.b.topk(n.tensor(0), int(k.reshape(-1)[0]), int(n.attrs.get("axis", -1)), bool(n.attrs.get("largest", 1)))


def _cast(n: _Node):
    from onnx import helper

    to = np.dtype(helper.tensor_dtype_to_np_dtype(int(n.attrs["to"])))
    x = n.inputs[0]
    if isinstance(x, np.ndarray):
        return x.astype(to)
    return n.b.cast(x, to, "Cast")


def _pad(n: _Node):
    mode = _choice(n, "mode", "constant", ("constant", "reflect", "edge", "wrap"))
    x = n.tensor(0)
    pads = n.ints("pads") if n.opset < 11 else [int(v) for v in n.const(1, "pads")]
    if mode != "constant":  # a take of the positions numpy's pad gives each axis (onnx's reference is np.pad)
        if n.opset >= 18 and len(n.inputs) > 3 and n.inputs[3] is not None:
            raise n.error("the axes input is not supported")
        return pad_by_positions(n.b, x, pads[:len(x.shape)], pads[len(x.shape):], mode, "Pad")
    value = float(n.attrs.get("value", 0.0)) if n.opset < 11 else float(
        (n.const(2, "value") if len(n.inputs) > 2 and n.inputs[2] is not None else np.zeros(1)).reshape(-1)[0])
    rank = len(x.shape)
    if n.opset >= 18 and len(n.inputs) > 3 and n.inputs[3] is not None:
        raise n.error("the axes input is not supported")
    return n.b.pad(x, pads[:rank], pads[rank:], value)


def _identity(n: _Node):
    return n.inputs[0]


def _dropout(n: _Node):
    return (n.inputs[0], None)


def _foldable(build: Callable[[_Node], object]):
    """Ops that may be shape arithmetic on constants: folded with numpy when every input is constant."""
    def run(n: _Node):
        if _all_const(n) and all(v is not None for v in n.inputs):
            vals = _const_values(n)
            if n.op in ("Add", "Sub", "Mul", "Div") and all(v.dtype == I64 for v in vals):
                a, c = vals  # (shape arithmetic: a Div of integers truncates, as onnx's reference)
                return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}.get(
                    n.op, lambda p, q: divide("truncdiv", *np.broadcast_arrays(p, q)))(a, c)
        return build(n)
    return run


ONNX_OPS: dict[str, Callable[[_Node], object]] = {
    "Constant": _constant, "ConstantOfShape": _constant_of_shape, "Shape": _shape, "Cast": _cast,
    "Identity": _identity, "Dropout": _dropout,
    "Conv": _conv, "ConvTranspose": _conv_transpose, "Gemm": _gemm,
    "MatMul": lambda n: n.b.matmul(n.tensor(0), n.tensor(1)),
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm,
    "InstanceNormalization": _instance_norm, "CumSum": _cumsum, "LpNormalization": _lp_normalization,
    "ArgMax": _arg_reduce("argmax"), "ArgMin": _arg_reduce("argmin"),
    "Add": _foldable(_elementwise("add")), "Sub": _foldable(_elementwise("sub")),
    "Mul": _foldable(_elementwise("mul")), "Div": _foldable(_div),
    "Pow": _elementwise("pow"), "Max": _variadic("max"), "Min": _variadic("min"), "Sum": _variadic("add"),
    "Mean": _variadic("add", mean=True),
    "Relu": _unary("relu"), "Sigmoid": _unary("sigmoid"), "Tanh": _unary("tanh"), "Exp": _unary("exp"),
    "Floor": _rounding("floor"), "Ceil": _rounding("ceil"), "Round": _rounding("round"),
    "Log": _unary("log"), "Sqrt": _unary("sqrt"), "Neg": _unary("neg"), "Abs": _unary("abs"),
    "Sign": lambda n: n.b.sign(n.tensor(0), keep_nan=True), "Erf": _unary("erf"), "Reciprocal": _unary("reciprocal"),
    "Gelu": _gelu,
    "LeakyRelu": _leaky_relu, "PRelu": _prelu, "Elu": _elu, "Selu": _selu, "Softplus": _softplus,
    "Softsign": _softsign, "HardSigmoid": _hard_sigmoid,
    "HardSwish": lambda n: n.b.hardswish(n.tensor(0)),
    "Greater": _compare("gt"), "Less": _compare("lt"), "GreaterOrEqual": _compare("ge"),
    "LessOrEqual": _compare("le"), "Equal": _compare("eq"), "Where": _where,
    "Not": _not, "And": _logical("and"), "Or": _logical("or"), "Xor": _logical("xor"), "Mod": _mod,
    "Resize": _resize, "Upsample": _upsample, "Clip": _clip,
    "Softmax": _softmax(False), "LogSoftmax": _softmax(True),
    "MaxPool": _pool("max"), "AveragePool": _pool("avg"),
    "GlobalAveragePool": _global_pool("mean"), "GlobalMaxPool": _global_pool("max"),
    "ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"), "ReduceMax": _reduce("max"),
    "ReduceMin": _reduce("min"), "ReduceProd": _reduce("prod"),
    "Flatten": _flatten, "Reshape": _reshape, "Transpose": _transpose, "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze, "Expand": _expand, "Slice": _slice, "Concat": _concat, "Split": _split, "Gather": _gather,
    "GatherElements": _gather_elements, "ScatterElements": _scatter_elements, "Scatter": _scatter_elements,
    "TopK": _topk, "LSTM": _recurrent("LSTM"), "GRU": _recurrent("GRU"),
    "Einsum": lambda n: einsum(n.b, _text(n.attrs["equation"]), [n.tensor(k) for k in range(len(n.inputs))], "Einsum"),
    "Sin": _unary("sin"), "Cos": _unary("cos"), "IsNaN": lambda n: n.b.compare("ne", n.tensor(0), n.tensor(0)),
    "IsInf": _is_inf,
    "Pad": _pad, "Celu": _celu, "Mish": _mish, "Shrink": _shrink, "Trilu": _trilu, "DepthToSpace": _depth_to_space,
    "SpaceToDepth": _space_to_depth, "Tile": _tile, "CastLike": _cast_like, "Range": _range,
    "Size": lambda n: np.array(math.prod(n.inputs[0].shape), np.int64),
    "ReduceL1": _reduce("l1"), "ReduceL2": _reduce("l2"), "ReduceSumSquare": _reduce("sumsquare"),
    "ReduceLogSum": _reduce("logsum"), "ReduceLogSumExp": _reduce("logsumexp"),
}

__all__ = ["import_onnx", "ONNX_OPS", "F32"]
