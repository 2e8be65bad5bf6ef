"""The model graph both importers build: tensors, constants and layers with static shapes.

A ``GraphBuilder`` has one method per layer kind; each checks its operands (rank, shared dims, dtype)
and computes the output shape, so an importer (PyTorch or ONNX) only translates its op's arguments.
Errors are ``LoomError``s that start with the importer's location of the op being translated
(``builder.at(...)``). Layout ops on constants (view, transpose, expand, slice) are folded at import
time: ``linear`` weights arrive transposed, position ids sliced, and no code runs for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from loom.errors import LoomError
from loom.models.bit_floats import FORMATS, encode_now

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)  # computed in double throughout, as float32 is in float
FLOATS = (F32, F64)
I64 = np.dtype(np.int64)
I32 = np.dtype(np.int32)  # integer (quantised-style) arithmetic: matmul, conv2d, add/sub/mul/max/min, relu, pad
BOOL = np.dtype(np.bool_)  # masks: comparisons' results, logical ops, where's condition, casts to numbers
# storage-only dtypes: layout ops and conversions take them as they are; an importer computes with them in a wider
# dtype (COMPUTE_DTYPE) and rounds or wraps each op's result back (onnx_import: float16 as numpy computes it)
F16, I8, U8, I16 = (np.dtype(t) for t in (np.float16, np.int8, np.uint8, np.int16))
U16, U32, U64 = (np.dtype(t) for t in (np.uint16, np.uint32, np.uint64))
# uint32 computes in int64 (every value, signed comparisons and divisions stay right); uint64 in int64 too, the same
# bits, which only add / sub / mul (wrapping) compute alike: the ONNX importer refuses uint64 in other nodes
# bfloat16 and float8 (bit_floats.FORMATS) are held as their bits and compute in float32 as float16 does
BIT_FLOATS = tuple(FORMATS)
COMPUTE_DTYPE = {F16: F32, I8: I32, U8: I32, I16: I32, U16: I32, U32: I64, U64: I64, **{d: F32 for d in BIT_FLOATS}}
UNSIGNED = (U8, U16, U32, U64)  # run as the signed type of their width in C (the same bytes), converted as unsigned
SUPPORTED_DTYPES = (F32, F64, I64, I32, BOOL, F16, I8, U8, I16, U16, U32, U64, *BIT_FLOATS)
DTYPE_NAMES = ("float32, float64, int32, int64 or bool; float16, bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, "
               "float8_e5m2fnuz, int8, uint8, int16, uint16, uint32 and uint64 as ONNX inputs and outputs")
# integer divisions: truncdiv / fmod round towards zero (C's, ONNX Div / Mod fmod=1, torch's 'trunc' / fmod),
# floordiv / mod towards -inf (Python's // and %, ONNX Mod fmod=0, torch's 'floor' / remainder); they take floats too
DIVISION_OPS = ("truncdiv", "floordiv", "mod", "fmod")
# bit operations of integers: shifts by the width or more (or by a negative amount) give 0 (-1 for a negative value
# shifted right), as numpy's; ``shr`` of uint64 bits (unsigned) is the logical shift
BIT_OPS = ("bitand", "bitor", "bitxor", "shl", "shr")
INT_BINARY_OPS = ("add", "sub", "mul", "max", "min", *DIVISION_OPS, *BIT_OPS)
INT_UNARY_OPS = ("relu", "neg", "abs", "bitnot")  # (wrapping: -MIN and |MIN| are MIN, as numpy and PyTorch)

BINARY_OPS = ("add", "sub", "mul", "div", "max", "min", "pow", *DIVISION_OPS, *BIT_OPS)
LOGICAL_OPS = ("and", "or", "xor")


def divide(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's values of a division op (``DIVISION_OPS``), as the layer computes them: of integers, a zero divisor
    gives 0 (numpy's and onnx's reference's) and MIN / -1 wraps to MIN; of floats, numpy's (= PyTorch's) floor
    division and remainder, C's fmod and trunc(a / b)."""
    with np.errstate(all="ignore"):
        if a.dtype.kind == "f":
            return {"truncdiv": lambda: np.trunc(a / b), "floordiv": lambda: np.floor_divide(a, b),
                    "mod": lambda: np.mod(a, b), "fmod": lambda: np.fmod(a, b)}[op]()
        if op == "truncdiv":  # numpy has no truncating integer division: the floor one, moved up when inexact
            q, r = np.floor_divide(a, b), np.remainder(a, b)
            return q + ((r != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)
        return {"floordiv": np.floor_divide, "mod": np.remainder, "fmod": np.fmod}[op](a, b)


# binary ops of constants computed at import: numpy's float32 ops round as C's do (pow is left to libm)
_FOLDED_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
               "min": np.minimum, **{op: (lambda op: lambda a, b: divide(op, a, b))(op) for op in DIVISION_OPS},
               "bitand": np.bitwise_and, "bitor": np.bitwise_or, "bitxor": np.bitwise_xor}
# to whole numbers (round: half to even, as ONNX's Round, torch.round and numpy's rint); integers stay as they are
ROUNDING_OPS = {"floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc}
# unary ops numpy computes exactly as the C does: folded for constants
_EXACT_UNARY = {**ROUNDING_OPS, "abs": np.abs, "neg": np.negative, "relu": lambda v: np.maximum(v, 0)}
# libm's trigonometric and hyperbolic functions beyond sin / cos / tanh (ONNX Tan ... Atanh, torch.tan ...)
TRIG_OPS = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
UNARY_OPS = ("relu", "gelu", "gelu_tanh", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "neg", "abs",
             "erf", "reciprocal", "log1p", "expm1", "identity", "sin", "cos", *ROUNDING_OPS, *TRIG_OPS, "bitnot")
REDUCE_OPS = ("sum", "mean", "max", "min", "prod")
BOOL_REDUCE_OPS = ("any", "all")
COMPARE_OPS = ("gt", "lt", "ge", "le", "eq", "ne")
_NUMPY_COMPARE = {"gt": np.greater, "lt": np.less, "ge": np.greater_equal, "le": np.less_equal, "eq": np.equal,
                  "ne": np.not_equal}
_SWAPPED_COMPARE = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}


@dataclass(eq=False)
class Tensor:
    """A value of the graph: a model input, a constant (weights) or a layer's output."""
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    def __repr__(self) -> str:
        return f"{self.name}: {self.dtype}[{'x'.join(map(str, self.shape))}]"

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(eq=False)
class Layer:
    """One op over whole tensors: ``kind`` with hashable ``attrs``; ``where`` is the importer's place."""
    kind: str
    inputs: list[Tensor]
    output: Tensor
    attrs: dict = field(default_factory=dict)
    where: str = ""
    # (a bool 0-d tensor, the value it must have): the layer runs only then, else its output is zeros (an ONNX If's
    # branch, a Loop's iteration after its condition turned false: no work, and no check of values never used)
    guard: tuple[Tensor, bool] | None = None

    @property
    def is_view(self) -> bool:
        """A reshape of a contiguous buffer: no code, the output shares the input's memory."""
        return self.kind == "view"


@dataclass(eq=False)
class Condition:
    """A comparison's boolean result, kept unbuilt so that a ``where`` selecting with it (or a cast of it to
    numbers) computes it in its own loop; any other use builds it as a bool tensor (``GraphBuilder.as_bool``,
    once). ``where`` is the comparison's place."""
    op: str
    lhs: Tensor
    rhs: Tensor | float
    shape: tuple[int, ...]
    where: str = ""
    tensor: Tensor | None = None  # the bool tensor built for it, if any


@dataclass
class Graph:
    inputs: list[Tensor]
    outputs: list[Tensor]
    layers: list[Layer]
    constants: dict[str, np.ndarray]  # tensor name -> value (C-contiguous)
    source: str = ""
    # input name -> the example value the model was compiled for (it gives a shape, axes...): checked at each run
    pinned: dict[str, np.ndarray] = field(default_factory=dict)

    def users(self) -> dict[str, list[Layer]]:
        found: dict[str, list[Layer]] = {}
        for layer in self.layers:
            for t in layer.inputs:
                found.setdefault(t.name, []).append(layer)
        return found


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """numpy's broadcast of two shapes, or None if they do not broadcast."""
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + tuple(a)), reversed((1,) * (len(a) - len(b)) + tuple(b))):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 1 not in (x, y) else x * y)
    return tuple(reversed(out))


def pool_out(size: int, window: int, stride: int, pad: int, dilation: int, ceil_mode: bool) -> int:
    span = size + 2 * pad - dilation * (window - 1) - 1
    n = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (n - 1) * stride >= size + pad:  # the last window must start inside the input
        n -= 1
    return n


class GraphBuilder:
    def __init__(self, source: str = ""):
        self.source = source
        self.inputs: list[Tensor] = []
        self.layers: list[Layer] = []
        self.constants: dict[str, np.ndarray] = {}
        self.where = source
        self._names: set[str] = set()
        self.examples: dict[str, np.ndarray] = {}  # input name -> its example value, where one was given
        self.pinned: dict[str, np.ndarray] = {}  # the examples whose value the graph depends on (Graph.pinned)
        self.guard: tuple[Tensor, bool] | None = None  # given to the layers built next (Layer.guard)

    # ------------------------------------------------------------ bookkeeping

    def at(self, where: str) -> None:
        """Set the location reported by errors and recorded on the layers built next."""
        self.where = where

    def error(self, op: str, message: str) -> LoomError:
        return LoomError(f"{op}: {message}", where=self.where or None)

    def _name(self, base: str) -> str:
        if isinstance(base, bytes):  # a protobuf string field that is not valid UTF-8
            base = base.decode("utf-8", "replace")
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base) or "t"
        name, k = base, 1
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def input(self, name: str, shape: Sequence[int], dtype) -> Tensor:
        dtype = np.dtype(dtype)
        if dtype not in SUPPORTED_DTYPES:
            raise LoomError(f"input {name!r} has dtype {dtype}; loom models take {DTYPE_NAMES}",
                            where=self.where or None)
        t = Tensor(self._name(name), tuple(int(d) for d in shape), dtype)
        self.inputs.append(t)
        return t

    def constant(self, name: str, value) -> Tensor:
        value = np.asarray(value)
        value = np.ascontiguousarray(value).reshape(value.shape)  # (ascontiguousarray makes 0-d arrays 1-d)
        if value.dtype.kind in "iu" and value.dtype not in (I32, I8, U8, I16, U16, U32, U64):
            # indices or shapes (int32 etc.: integer weights)
            value = value.astype(np.int64)
        if not value.flags.writeable:  # (an ONNX initializer's view) compiled drivers take writable arrays
            value = value.copy()
        if value.dtype not in SUPPORTED_DTYPES:
            raise self.error("constant", f"constant {name!r} has dtype {value.dtype}; loom models hold "
                                         f"{DTYPE_NAMES}")
        t = Tensor(self._name(name), tuple(value.shape), value.dtype)
        self.constants[t.name] = value
        return t

    def is_constant(self, t: Tensor) -> bool:
        return t.name in self.constants

    def value(self, t: Tensor) -> np.ndarray:
        return self.constants[t.name]

    def _layer(self, kind: str, inputs: Sequence[Tensor], shape: Sequence[int], dtype, attrs=None,
               name: str | None = None) -> Tensor:
        out = Tensor(self._name(name or kind), tuple(int(d) for d in shape), np.dtype(dtype))
        if any(d <= 0 for d in out.shape):
            raise self.error(kind, f"output shape {_shape_text(out.shape)} has an empty dimension")
        self.layers.append(Layer(kind, list(inputs), out, dict(attrs or {}), self.where, self.guard))
        return out

    def finish(self, outputs: Sequence[Tensor]) -> Graph:
        return Graph(list(self.inputs), list(outputs), list(self.layers), dict(self.constants), self.source,
                     dict(self.pinned))

    def _float(self, op: str, *tensors: Tensor) -> np.dtype:
        """The one float dtype (float32 or float64) of an op's operands."""
        dtype = tensors[0].dtype
        for t in tensors:
            if t.dtype not in FLOATS or t.dtype != dtype:
                raise self.error(op, f"{t.name} has dtype {t.dtype}; this op computes in float32 or float64, all "
                                     f"operands alike (the first is {dtype})")
        return dtype

    def _numeric(self, op: str, *tensors: Tensor) -> np.dtype:
        """The one dtype of an op computing in float32, float64 or int32 (wrapping, as numpy and the C backend)."""
        dtype = tensors[0].dtype
        for t in tensors:
            if t.dtype not in (F32, F64, I32) or t.dtype != dtype:
                raise self.error(op, f"{t.name} has dtype {t.dtype}; this op computes in float32, float64 or int32, "
                                     f"all operands alike (the first is {dtype})")
        return dtype

    def _rank(self, op: str, t: Tensor, rank: int, what: str) -> None:
        if len(t.shape) != rank:
            raise self.error(op, f"{what} must have rank {rank}, got shape {_shape_text(t.shape)}")

    def axis(self, op: str, axis: int, rank: int) -> int:
        if not -rank <= axis < rank:
            raise self.error(op, f"axis {axis} is out of range for rank {rank}")
        return axis % rank

    # ------------------------------------------------------------ layout

    def view(self, x: Tensor, shape: Sequence[int]) -> Tensor:
        shape = [int(d) for d in shape]
        if shape.count(-1) > 1:
            raise self.error("view", f"at most one -1 in the new shape, got {shape}")
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            if known == 0 or x.size % known:
                raise self.error("view", f"cannot infer -1 in {shape} for {x.size} elements")
            shape[shape.index(-1)] = x.size // known
        if math.prod(shape) != x.size or any(d < 0 for d in shape):
            raise self.error("view", f"cannot view {_shape_text(x.shape)} ({x.size} elements) "
                                     f"as {_shape_text(shape)}")
        if tuple(shape) == x.shape:
            return x
        if self.is_constant(x):
            return self.constant(x.name, self.value(x).reshape(shape))
        return self._layer("view", [x], shape, x.dtype, {"shape": tuple(shape)})

    def transpose(self, x: Tensor, perm: Sequence[int]) -> Tensor:
        perm = tuple(self.axis("transpose", int(p), len(x.shape)) for p in perm)
        if sorted(perm) != list(range(len(x.shape))):
            raise self.error("transpose", f"{list(perm)} is not a permutation of {len(x.shape)} axes")
        if perm == tuple(range(len(x.shape))):
            return x
        if self.is_constant(x):
            return self.constant(x.name, np.transpose(self.value(x), perm))
        return self._layer("transpose", [x], [x.shape[p] for p in perm], x.dtype, {"perm": perm})

    def expand(self, x: Tensor, shape: Sequence[int]) -> Tensor:
        shape = [int(d) for d in shape]
        if len(shape) < len(x.shape):
            raise self.error("expand", f"cannot expand {_shape_text(x.shape)} to fewer dims {shape}")
        pad = (1,) * (len(shape) - len(x.shape)) + x.shape
        shape = [p if d == -1 else d for d, p in zip(shape, pad)]
        if broadcast_shapes(x.shape, shape) != tuple(shape):
            raise self.error("expand", f"cannot broadcast {_shape_text(x.shape)} to {_shape_text(shape)}")
        if tuple(shape) == x.shape:
            return x
        if self.is_constant(x):
            return self.constant(x.name, np.broadcast_to(self.value(x), shape))
        return self._layer("expand", [x], shape, x.dtype)

    def slice(self, x: Tensor, axis: int, start: int, end: int, step: int = 1) -> Tensor:
        axis = self.axis("slice", axis, len(x.shape))
        if step < 1:
            raise self.error("slice", f"step must be positive, got {step}")
        start, end, _ = slice(start, end, step).indices(x.shape[axis])
        n = len(range(start, end, step))
        if n == x.shape[axis]:
            return x
        shape = list(x.shape)
        shape[axis] = n
        if self.is_constant(x):
            index = [slice(None)] * len(x.shape)
            index[axis] = slice(start, end, step)
            return self.constant(x.name, self.value(x)[tuple(index)])
        return self._layer("slice", [x], shape, x.dtype, {"axis": axis, "start": start, "step": step})

    def concat(self, xs: Sequence[Tensor], axis: int) -> Tensor:
        op = "concat"
        if not xs:
            raise self.error(op, "needs at least one input")
        rank = len(xs[0].shape)
        axis = self.axis(op, axis, rank)
        for t in xs:
            if t.dtype != xs[0].dtype or len(t.shape) != rank or any(
                    d != e for k, (d, e) in enumerate(zip(t.shape, xs[0].shape)) if k != axis):
                raise self.error(op, f"{t!r} does not match {xs[0]!r} outside axis {axis}")
        if len(xs) == 1:
            return xs[0]
        shape = list(xs[0].shape)
        shape[axis] = sum(t.shape[axis] for t in xs)
        return self._layer(op, list(xs), shape, xs[0].dtype, {"axis": axis})

    def pad(self, x: Tensor, before: Sequence[int], after: Sequence[int], value: float = 0.0) -> Tensor:
        """Constant padding: ``before[k]`` / ``after[k]`` elements of ``value`` around axis k."""
        op = "pad"
        dtype = I64 if x.dtype == I64 else self._numeric(op, x)
        if dtype in (I32, I64) and not float(value).is_integer():
            raise self.error(op, f"an {dtype} tensor cannot be padded with {value}")
        if len(before) != len(x.shape) or len(after) != len(x.shape) or min((*before, *after), default=0) < 0:
            raise self.error(op, f"needs one non-negative pad before and after each of the {len(x.shape)} axes, "
                                 f"got {list(before)} / {list(after)}")
        if not any((*before, *after)):
            return x
        shape = [d + p + q for d, p, q in zip(x.shape, before, after)]
        return self._layer(op, [x], shape, dtype, {"before": tuple(before), "after": tuple(after),
                                                   "value": float(value)})

    def upsample_nearest(self, x: Tensor, scales: Sequence[int]) -> Tensor:
        """Each element of the spatial axes (all after N, C) repeated ``scales`` times along its axis:
        out[..., i, j] = x[..., i // sh, j // sw]. Built as a broadcast copy between two free views."""
        op = "upsample_nearest"
        scales = [int(s) for s in scales]
        if len(x.shape) < 3 or len(scales) != len(x.shape) - 2:
            raise self.error(op, f"needs (N, C, spatial...) and one scale per spatial axis, got shape "
                                 f"{_shape_text(x.shape)} and scales {scales}")
        if min(scales) < 1:
            raise self.error(op, f"scales must be positive integers, got {scales}")
        lead, spatial = x.shape[:2], x.shape[2:]
        split = [d for size in spatial for d in (size, 1)]
        repeated = [d for size, s in zip(spatial, scales) for d in (size, s)]
        y = self.expand(self.view(x, (*lead, *split)), (*lead, *repeated))
        return self.view(y, (*lead, *(size * s for size, s in zip(spatial, scales))))

    def take(self, x: Tensor, positions, axis: int, op: str = "take") -> Tensor:
        """``x[..., positions, ...]`` along ``axis`` with constant ``positions`` (torch indexing, ONNX Gather): a
        scalar position drops the axis; positions i // s repeat each element s times (nearest upsampling, as
        torch.export writes the 1-d one) by a broadcast copy; one run of consecutive positions is a slice; other
        lists are a gather layer reading the positions from a constant."""
        axis = self.axis(op, axis, len(x.shape))
        size, positions = x.shape[axis], np.asarray(positions)
        if positions.ndim > 1 or positions.size == 0 or positions.dtype.kind not in "iu":
            raise self.error(op, f"constant positions must be a scalar or a non-empty list of integers, got "
                                 f"{positions.dtype}{list(positions.shape)}")
        if positions.min() < -size or positions.max() >= size:
            raise self.error(op, f"positions {positions.tolist()} are out of range for axis {axis} of size {size}")
        positions = positions.astype(np.int64) % size
        if self.is_constant(x):
            return self.constant(x.name, np.take(self.value(x), positions, axis))
        if positions.ndim == 0:
            one = self.slice(x, axis, int(positions), int(positions) + 1)
            return self.view(one, [d for k, d in enumerate(x.shape) if k != axis])
        times = positions.size // size
        if times > 1 and np.array_equal(positions, np.arange(positions.size) // times):
            return self._repeat_each(x, axis, times)
        if np.array_equal(positions, np.arange(positions[0], positions[0] + positions.size)):
            return self.slice(x, axis, int(positions[0]), int(positions[0]) + positions.size)
        shape = [positions.size if k == axis else d for k, d in enumerate(x.shape)]
        return self._layer("gather", [x, self.constant(f"{x.name}_positions", positions)], shape, x.dtype,
                           {"axis": axis}, name=op)

    def _repeat_each(self, x: Tensor, axis: int, times: int) -> Tensor:
        """Each element along ``axis`` repeated ``times`` times (numpy's repeat): a broadcast copy between views."""
        lead, size, tail = x.shape[:axis], x.shape[axis], x.shape[axis + 1:]
        spread = self.expand(self.view(x, (*lead, size, 1, *tail)), (*lead, size, times, *tail))
        return self.view(spread, (*lead, size * times, *tail))

    def repeat(self, x: Tensor, repeats: Sequence[int]) -> Tensor:
        """torch's repeat (numpy's tile): x copied ``repeats`` times along each axis, by a broadcast copy
        of the view that puts a unit axis before each one."""
        repeats = [int(r) for r in repeats]
        if len(repeats) < len(x.shape) or min(repeats, default=1) < 1:
            raise self.error("repeat", f"needs a positive count for each of the {len(x.shape)} axes, got {repeats}")
        shape = (1,) * (len(repeats) - len(x.shape)) + x.shape
        if self.is_constant(x):
            return self.constant(x.name, np.tile(self.value(x), repeats))
        spread = self.view(x, [d for size in shape for d in (1, size)])
        tiled = self.expand(spread, [d for size, r in zip(shape, repeats) for d in (r, size)])
        return self.view(tiled, [size * r for size, r in zip(shape, repeats)])

    def copy(self, x: Tensor) -> Tensor:
        return x  # values are never updated in place: a clone can share its source

    # ------------------------------------------------------------ contractions

    def conv2d(self, x: Tensor, w: Tensor, b: Tensor | None, stride=(1, 1), padding=(0, 0),
               dilation=(1, 1), groups: int = 1) -> Tensor:
        op = "conv2d"
        dtype = self._numeric(op, x, w, *([b] if b else []))
        self._rank(op, x, 4, "the input (N, C, H, W)")
        self._rank(op, w, 4, "the weight (F, C, KH, KW)")
        (n, c, h, wd), (f, fc, kh, kw) = x.shape, w.shape
        if groups < 1 or c % groups or f % groups:
            raise self.error(op, f"groups={groups} must divide the {c} input and {f} output channels")
        if fc * groups != c:
            raise self.error(op, f"the weight has {fc} input channels per group but the input has {c} "
                                 f"channels in {groups} group(s)")
        if b is not None and b.shape != (f,):
            raise self.error(op, f"the bias must have shape [{f}], got {_shape_text(b.shape)}")
        (sh, sw), (ph, pw), (dh, dw) = (tuple(int(v) for v in p) for p in (stride, padding, dilation))
        if min(sh, sw, dh, dw) < 1 or min(ph, pw) < 0:
            raise self.error(op, f"bad stride {stride} / padding {padding} / dilation {dilation}")
        oh, ow = pool_out(h, kh, sh, ph, dh, False), pool_out(wd, kw, sw, pw, dw, False)
        if oh < 1 or ow < 1:
            raise self.error(op, f"a {kh}x{kw} kernel does not fit the {h}x{wd} input with padding {padding}")
        attrs = {"stride": (sh, sw), "padding": (ph, pw), "dilation": (dh, dw)}
        if groups == 1:
            return self._layer(op, [x, w, *([b] if b is not None else [])], (n, f, oh, ow), dtype, attrs)
        # grouped: channels split into (groups, per group) by views, one loop nest over the groups
        g = groups
        xg, wg = self.view(x, (n, g, c // g, h, wd)), self.view(w, (g, f // g, fc, kh, kw))
        ins = [xg, wg, *([self.view(b, (g, f // g))] if b is not None else [])]
        out = self._layer("grouped_conv2d", ins, (n, g, f // g, oh, ow), dtype, attrs, name=op)
        return self.view(out, (n, f, oh, ow))

    def conv1d(self, x: Tensor, w: Tensor, b: Tensor | None, stride: int, padding: int, dilation: int,
               groups: int = 1) -> Tensor:
        """A 1-d convolution (N, C, L) as a 2-d one over (N, C, 1, L)."""
        self._rank("conv1d", x, 3, "the input (N, C, L)")
        self._rank("conv1d", w, 3, "the weight (F, C, K)")
        y = self.conv2d(self.view(x, (*x.shape[:2], 1, x.shape[2])), self.view(w, (*w.shape[:2], 1, w.shape[2])),
                        b, (1, stride), (0, padding), (1, dilation), groups)
        return self.view(y, (y.shape[0], y.shape[1], y.shape[3]))

    def conv_transpose2d(self, x: Tensor, w: Tensor, b: Tensor | None, stride=(1, 1), before=(0, 0), after=(0, 0),
                         dilation=(1, 1), groups: int = 1) -> Tensor:
        """The transposed (fractionally strided) convolution: y[n, f, i, j] gets x[n, c, p, q] * w[c, f, a, b] at
        i = p * stride - before + a * dilation. Built as the convolution it equals: zeros inserted between the input's
        elements (stride - 1 of them: a pad layer of a view), ``dilation * (k - 1) - before`` padding before (a crop
        if negative) and ``dilation * (k - 1) - after`` after (``after`` is the padding less ONNX's output_padding),
        then a stride-1 convolution by the weight with its taps reversed and its two channel axes swapped per group
        (folded at import for constant weights)."""
        op = "conv_transpose2d"
        self._numeric(op, x, w, *([b] if b else []))
        self._rank(op, x, 4, "the input (N, C, H, W)")
        self._rank(op, w, 4, "the weight (C, F / groups, KH, KW)")
        (n, c, h, wd), (wc, fg, kh, kw) = x.shape, w.shape
        if groups < 1 or c % groups or wc != c:
            raise self.error(op, f"the weight has {wc} input channels for an input of {c} channels in {groups} "
                                 f"group(s)")
        stride, before, after, dilation = (tuple(int(v) for v in p) for p in (stride, before, after, dilation))
        if min(*stride, *dilation) < 1:
            raise self.error(op, f"bad stride {list(stride)} / dilation {list(dilation)}")
        if stride != (1, 1):  # stride - 1 zeros after each element, none after the last
            spread = self.pad(self.view(x, (n, c, h, 1, wd, 1)), [0] * 6,
                              [0, 0, 0, stride[0] - 1, 0, stride[1] - 1])
            x = self.view(spread, (n, c, h * stride[0], wd * stride[1]))
            x = self.slice(self.slice(x, 2, 0, (h - 1) * stride[0] + 1), 3, 0, (wd - 1) * stride[1] + 1)
        low = [d * (k - 1) - p for d, k, p in zip(dilation, (kh, kw), before)]
        high = [d * (k - 1) - p for d, k, p in zip(dilation, (kh, kw), after)]
        x = self.pad(x, [0, 0, *(max(v, 0) for v in low)], [0, 0, *(max(v, 0) for v in high)])
        for axis, (lo, hi) in enumerate(zip(low, high), start=2):  # padding beyond the kernel's reach: a crop
            if lo < 0 or hi < 0:
                x = self.slice(x, axis, max(-lo, 0), x.shape[axis] - max(-hi, 0))
        g = groups
        flipped = self.flip(w, (2, 3))
        wt = self.view(self.transpose(self.view(flipped, (g, c // g, fg, kh, kw)), (0, 2, 1, 3, 4)),
                       (g * fg, c // g, kh, kw))
        return self.conv2d(x, wt, b, (1, 1), (0, 0), dilation, groups)

    def matmul(self, a: Tensor, b: Tensor, bias: Tensor | None = None, alpha: float = 1.0,
               beta: float = 1.0) -> Tensor:
        """(M, K) @ (K, N) [+ bias broadcast to (M, N)]; any rank: batch dims broadcast (numpy's matmul)."""
        op = "matmul"
        dtype = self._numeric(op, a, b, *([bias] if bias else []))
        if dtype == I32 and (alpha != 1.0 or (bias is not None and beta != 1.0)):
            raise self.error(op, f"int32 products take no scale factors (alpha={alpha}, beta={beta})")
        if not a.shape or not b.shape:
            raise self.error(op, "operands must have rank >= 1")
        if alpha != 1.0:
            a = self.binary("mul", a, float(alpha))
        if bias is not None and beta != 1.0:
            bias = self.binary("mul", bias, float(beta))
        if len(a.shape) == 1 or len(b.shape) == 1:  # vectors: numpy's rules, then drop the added dim
            a2 = self.view(a, (1, a.shape[0])) if len(a.shape) == 1 else a
            b2 = self.view(b, (b.shape[0], 1)) if len(b.shape) == 1 else b
            out = self.matmul(a2, b2)
            shape = out.shape[:-2] + ((out.shape[-2],) if len(a.shape) > 1 else ()) + \
                ((out.shape[-1],) if len(b.shape) > 1 else ())
            out = self.view(out, shape)
            return out if bias is None else self.binary("add", out, bias)
        k = a.shape[-1]
        if b.shape[-2] != k:
            raise self.error(op, f"inner dimensions differ: {_shape_text(a.shape)} @ {_shape_text(b.shape)}")
        m, n = a.shape[-2], b.shape[-1]
        if len(a.shape) == 2 and len(b.shape) == 2:
            ins = [a, b]
            if bias is not None:
                if broadcast_shapes(bias.shape, (m, n)) != (m, n):
                    raise self.error(op, f"bias {_shape_text(bias.shape)} does not broadcast to [{m}, {n}]")
                ins.append(bias)
            return self._layer(op, ins, (m, n), dtype)
        if len(b.shape) == 2:  # (..., M, K) @ (K, N): one big matmul over the flattened rows
            rows = self.view(a, (-1, k))
            out = self.view(self.matmul(rows, b), (*a.shape[:-1], n))
            return out if bias is None else self.binary("add", out, bias)
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        if batch is None:
            raise self.error(op, f"batch dimensions do not broadcast: {_shape_text(a.shape)} @ "
                                 f"{_shape_text(b.shape)}")
        a3 = self.view(self.expand(a, (*batch, m, k)), (-1, m, k))
        b3 = self.view(self.expand(b, (*batch, k, n)), (-1, k, n))
        out = self.view(self.batch_matmul(a3, b3), (*batch, m, n))
        return out if bias is None else self.binary("add", out, bias)

    def batch_matmul(self, a: Tensor, b: Tensor) -> Tensor:
        op = "batch_matmul"
        dtype = self._numeric(op, a, b)
        self._rank(op, a, 3, "A (B, M, K)")
        self._rank(op, b, 3, "B (B, K, N)")
        if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
            raise self.error(op, f"shapes do not match: {_shape_text(a.shape)} @ {_shape_text(b.shape)}")
        return self._layer(op, [a, b], (a.shape[0], a.shape[1], b.shape[2]), dtype)

    # ------------------------------------------------------------ element-wise

    def binary(self, op: str, a: Tensor | float, b: Tensor | float, zero_divisor: str = "zero",
               unsigned: bool = False) -> Tensor:
        """``a op b`` broadcast. An integer division op (``DIVISION_OPS``) by 0 gives 0 (``zero_divisor="zero"``:
        numpy's and onnx's reference's), or is an error (``"raise"``: PyTorch's): at import for a constant divisor,
        else when the model runs (the runtime checks the divisor before the layer's C runs). ``unsigned``: an int64
        division of uint64 bits (the ONNX importer's uint64)."""
        if op not in BINARY_OPS:
            raise self.error(op, f"unknown binary op (known: {', '.join(BINARY_OPS)})")
        tensors = [t for t in (a, b) if isinstance(t, Tensor)]
        if not tensors:
            raise self.error(op, "needs at least one tensor operand")
        # int64: index arithmetic (positions + 1); int32: quantised-style layers
        dtype = I64 if all(t.dtype == I64 for t in tensors) else self._numeric(op, *tensors)
        if dtype in (I32, I64) and (op not in INT_BINARY_OPS or any(
                not isinstance(t, Tensor) and not float(t).is_integer() for t in (a, b))):
            raise self.error(op, f"{dtype} tensors take {', '.join(INT_BINARY_OPS)} with integer scalars only")
        if op in BIT_OPS and dtype.kind != "i":
            raise self.error(op, f"a bit operation of {dtype} tensors; it takes integers")
        checked = op in DIVISION_OPS and dtype.kind == "i" and zero_divisor == "raise"
        if checked and (not isinstance(b, Tensor) and float(b) == 0 or
                        isinstance(b, Tensor) and self.is_constant(b) and not np.all(self.value(b))):
            raise self.error(op, "integer division by zero (the divisor is a constant with a zero)")
        unsigned = unsigned and op in (*DIVISION_OPS, "shr") and dtype == I64
        if unsigned and all(self.is_constant(t) for t in tensors) and len(tensors) == 2:  # uint64 bits, divided
            x, y = (self.value(t).astype(I64).view(np.uint64) for t in (a, b))
            return self.constant(a.name, divide(op, *np.broadcast_arrays(x, y)).view(I64))
        for t in (a, b):  # a one-element constant is a scalar operand (not of uint64 bits: a float scalar would round)
            if isinstance(t, Tensor) and self.is_constant(t) and t.size == 1 and len(tensors) == 2 and not unsigned:
                other = b if t is a else a
                if len(t.shape) <= len(other.shape):
                    v = float(self.value(t).reshape(()))
                    return self.binary(op, v if t is a else a, v if t is b else b, zero_divisor, unsigned)
        shape = tensors[0].shape
        if len(tensors) == 2:
            shape = broadcast_shapes(a.shape, b.shape)
            if shape is None:
                raise self.error(op, f"shapes {_shape_text(a.shape)} and {_shape_text(b.shape)} do not broadcast")
        if op in _FOLDED_OPS and all(self.is_constant(t) for t in tensors):
            return self._fold(op, a, b, dtype)
        scalars = tuple(None if isinstance(t, Tensor) else float(t) for t in (a, b))
        attrs = {"op": op, "scalars": scalars, **({"zero_divisor": "raise"} if checked and scalars[1] is None else {}),
                 **({"unsigned": True} if unsigned else {})}
        return self._layer("binary", tensors, shape, dtype, attrs, name=op)

    def _fold(self, op: str, a: Tensor | float, b: Tensor | float, dtype: np.dtype) -> Tensor:
        """``a op b`` of constants, computed now in ``dtype`` (IEEE's one rounding per op, as the C would; position
        arithmetic such as arange(n) * 0.5)."""
        x, y = (self.value(t) if isinstance(t, Tensor) else np.asarray(t, dtype) for t in (a, b))
        name = next(t.name for t in (a, b) if isinstance(t, Tensor))
        with np.errstate(all="ignore"):
            return self.constant(name, _FOLDED_OPS[op](x.astype(dtype), y.astype(dtype)).astype(dtype))

    def _as_scalar(self, t: Tensor | float, rank: int) -> Tensor | float:
        """A one-element constant of at most ``rank`` dims as a scalar operand (it adds no dims)."""
        if isinstance(t, Tensor) and self.is_constant(t) and t.size == 1 and len(t.shape) <= rank:
            return float(self.value(t).reshape(()))
        return t

    def compare(self, op: str, a: Tensor | float, b: Tensor | float, fold: bool = True) -> Condition | Tensor:
        """``a op b`` element-wise, for a ``where`` to select with (see ``Condition``); of constants, a bool
        constant (torch.onnx's shape arithmetic and masks) unless ``fold`` is False."""
        if op not in COMPARE_OPS:
            raise self.error(op, f"unknown comparison (known: {', '.join(COMPARE_OPS)})")
        if not isinstance(a, Tensor):  # a scalar on the left: the tensor goes first
            a, b, op = b, a, _SWAPPED_COMPARE[op]
        if not isinstance(a, Tensor):
            raise self.error(op, "needs at least one tensor operand")
        tensors = [a] + ([b] if isinstance(b, Tensor) else [])
        dtype = tensors[0].dtype
        if any(t.dtype not in SUPPORTED_DTYPES or t.dtype != dtype for t in tensors):
            raise self.error(op, f"operands must have one dtype ({DTYPE_NAMES}), got "
                                 f"{', '.join(str(t.dtype) for t in tensors)}")
        shape = a.shape
        if isinstance(b, Tensor):
            shape = broadcast_shapes(a.shape, b.shape)
            if shape is None:
                raise self.error(op, f"shapes {_shape_text(a.shape)} and {_shape_text(b.shape)} do not broadcast")
            b = self._as_scalar(b, len(a.shape))
        if dtype.kind != "f" and not isinstance(b, Tensor) and not float(b).is_integer():
            # PyTorch compares in float then (i >= 0.5); an integer comparison would round the scalar
            raise self.error(op, f"{dtype} tensors are compared with integer scalars only, got {b}")
        cond = Condition(op, a, b if isinstance(b, Tensor) else float(b), shape, self.where)
        if fold and all(self.is_constant(t) for t in tensors):
            return self.constant(op, self._truth(cond))
        return cond

    def _truth(self, cond: Condition) -> np.ndarray:
        """The values of a comparison of constants (numpy's comparisons are IEEE's, as the C's)."""
        rhs = self.value(cond.rhs) if isinstance(cond.rhs, Tensor) else cond.rhs
        return np.broadcast_to(_NUMPY_COMPARE[cond.op](self.value(cond.lhs), rhs), cond.shape)

    def select(self, cond: Condition | Tensor, a: Tensor | float, b: Tensor | float, dtype=F32) -> Tensor:
        """``a`` where ``cond`` holds, else ``b``; all broadcast together (torch.where, ONNX Where). ``dtype``:
        the result's when both values are scalars."""
        op = "where"
        if isinstance(cond, Tensor):  # a mask (bool, or numbers as ONNX's int64 masks): select where non-zero
            cond = self.compare("ne", cond, 0.0, fold=False)
        if not isinstance(cond, Condition):
            raise self.error(op, "the condition must be a comparison (gt, lt, ge, le, eq, ne) or a mask tensor")
        values = [t for t in (a, b) if isinstance(t, Tensor)]
        dtype = values[0].dtype if values else np.dtype(dtype)
        if any(t.dtype != dtype or t.dtype not in SUPPORTED_DTYPES for t in values):
            raise self.error(op, f"both values must have one dtype, got {', '.join(str(t.dtype) for t in values)}")
        if dtype.kind != "f" and any(not isinstance(t, Tensor) and not float(t).is_integer() for t in (a, b)):
            raise self.error(op, f"{dtype} values take integer scalars only")
        shape = cond.shape
        for t in values:
            shape = broadcast_shapes(shape, t.shape)
            if shape is None:
                raise self.error(op, f"the condition {_shape_text(cond.shape)} and values "
                                     f"{', '.join(_shape_text(v.shape) for v in values)} do not broadcast")
        a, b = (self._as_scalar(t, len(shape)) for t in (a, b))
        operands = (cond.lhs, cond.rhs, a, b)
        tensors = [t for t in operands if isinstance(t, Tensor)]
        if all(self.is_constant(t) for t in tensors):  # (torch.onnx's masks and shapes)
            a, b = (self.value(t) if isinstance(t, Tensor) else t for t in (a, b))
            return self.constant(op, np.broadcast_to(np.where(self._truth(cond), a, b), shape).astype(dtype))
        scalars = tuple(None if isinstance(t, Tensor) else float(t) for t in operands[1:])
        return self._layer("select", tensors, shape, dtype, {"compare": cond.op, "scalars": scalars}, name=op)

    # ------------------------------------------------------------ booleans

    def as_bool(self, x: Condition | Tensor) -> Tensor:
        """``x`` as a bool tensor: a comparison built (once) as a layer, numbers compared with 0 (PyTorch's
        logical ops take any dtype)."""
        if isinstance(x, Condition):
            if x.tensor is None:
                ins = [x.lhs] + ([x.rhs] if isinstance(x.rhs, Tensor) else [])
                scalar = None if isinstance(x.rhs, Tensor) else x.rhs
                where, self.where = self.where, x.where or self.where  # the layer is the comparison's
                guard, self.guard = self.guard, None  # (kept for later uses, maybe outside a guarded branch)
                x.tensor = self._layer("compare", ins, x.shape, BOOL, {"compare": x.op, "scalar": scalar}, name=x.op)
                self.where, self.guard = where, guard
            return x.tensor
        if x.dtype == BOOL:
            return x
        if x.dtype in COMPUTE_DTYPE:
            x = self.cast(x, COMPUTE_DTYPE[x.dtype], "as_bool")
        return self.as_bool(self.compare("ne", x, 0.0))

    def logical(self, op: str, a: Condition | Tensor, b: Condition | Tensor) -> Tensor:
        """Element-wise and / or / xor of two masks (broadcast together)."""
        if op not in LOGICAL_OPS:
            raise self.error(op, f"unknown logical op (known: {', '.join(LOGICAL_OPS)})")
        a, b = self.as_bool(a), self.as_bool(b)
        shape = broadcast_shapes(a.shape, b.shape)
        if shape is None:
            raise self.error(op, f"shapes {_shape_text(a.shape)} and {_shape_text(b.shape)} do not broadcast")
        return self._layer("logical", [a, b], shape, BOOL, {"op": op}, name=f"logical_{op}")

    def logical_not(self, x: Condition | Tensor) -> Tensor:
        x = self.as_bool(x)
        return self._layer("logical", [x], x.shape, BOOL, {"op": "not"}, name="logical_not")

    def cast(self, x: Condition | Tensor, dtype, op: str = "cast", saturate: bool = False) -> Tensor:
        """``x`` converted to ``dtype``: a mask as 1 / 0, numbers as ``x != 0``, integers to floats (rounded to
        nearest) or to another integer width (narrowing wraps, as PyTorch and numpy), floats to another float width
        (rounded to nearest), floats to integers truncated (NaN and values out of int32 / int64's range, undefined in
        C, give MIN as x86 and so numpy and PyTorch give them here; 8 / 16-bit integers through int32 and uint32 /
        uint64 through int64, wrapped)."""
        dtype = np.dtype(dtype)
        source = BOOL if isinstance(x, Condition) else x.dtype
        if isinstance(x, Tensor) and self.is_constant(x) and dtype in SUPPORTED_DTYPES:
            if dtype in BIT_FLOATS and source != dtype:
                return self.constant(x.name, encode_now(self.value(x), dtype, saturate))
            with np.errstate(invalid="ignore"):  # (float to int truncates, as torch's)
                return self.constant(x.name, self.value(x).astype(dtype))
        if dtype == source:
            return self.as_bool(x) if isinstance(x, Condition) else x
        if (source in BIT_FLOATS) != (dtype in BIT_FLOATS):  # bfloat16 / float8 convert from and to float32 only
            if dtype in BIT_FLOATS and source != F32:
                return self.cast(self.cast(x, F32, op), dtype, op, saturate)
            if source in BIT_FLOATS and dtype != F32:
                return self.cast(self._layer("convert", [x], x.shape, F32, name="to_float32"), dtype, op)
            return self._layer("convert", [x], x.shape, dtype, {"saturate": saturate} if saturate else None,
                               name=f"to_{dtype}")
        if source in BIT_FLOATS:  # (one format to another: through float32)
            return self.cast(self.cast(x, F32, op), dtype, op, saturate)
            return self.as_bool(x) if isinstance(x, Condition) else x
        if dtype == BOOL:
            return self.as_bool(x if source not in COMPUTE_DTYPE else self.cast(x, COMPUTE_DTYPE[source], op))
        if source == BOOL and dtype in SUPPORTED_DTYPES:
            wide = COMPUTE_DTYPE.get(dtype, dtype)  # (a select computes in a compute dtype)
            return self.cast(self.select(x, 1.0, 0.0, wide), dtype, op)
        if source == F16 and dtype in (I32, I64):
            return self.cast(self.cast(x, F32, op), dtype, op)
        if dtype in SUPPORTED_DTYPES and (source.kind in "iu" or source.kind == dtype.kind == "f" or
                                          source in FLOATS and dtype in (I32, I64)):
            return self._layer("convert", [x], x.shape, dtype, name=f"to_{dtype}")
        if source.kind == "f" and dtype in (I8, U8, I16, U16, U32, U64):  # through int32 (8 / 16 bits, as numpy and
            # PyTorch do) or int64, then wrapped
            wide = I64 if dtype in (U32, U64) else I32
            return self.cast(self.cast(x if source in FLOATS else self.cast(x, F32, op), wide, op), dtype, op)
        raise self.error(op, f"converting {source} to {dtype} is not supported (loom models hold {DTYPE_NAMES})")

    def unary(self, op: str, x: Tensor) -> Tensor:
        if op not in UNARY_OPS:
            raise self.error(op, f"unknown unary op (known: {', '.join(UNARY_OPS)})")
        dtype = I64 if x.dtype == I64 else self._numeric(op, x)
        if op == "identity" or op in ROUNDING_OPS and dtype.kind != "f":
            return x
        if op in _EXACT_UNARY and self.is_constant(x):  # (position and shape arithmetic: torch's reflection pad)
            return self.constant(x.name, _EXACT_UNARY[op](self.value(x)).astype(x.dtype))
        if op == "bitnot" and dtype.kind != "i":
            raise self.error(op, f"a bit operation of a {dtype} tensor; it takes integers")
        if dtype in (I32, I64) and op not in INT_UNARY_OPS:
            raise self.error(op, f"{dtype} tensors take {', '.join(INT_UNARY_OPS)} only of the unary ops")
        return self._layer("unary", [x], x.shape, dtype, {"op": op}, name=op)

    def clamp(self, x: Tensor, lo: Tensor | float | None, hi: Tensor | float | None) -> Tensor:
        """max(x, lo) then min(., hi): bounds are scalars or tensors broadcast against x (torch's clamp.Tensor)."""
        if lo is not None:
            x = self.binary("max", x, lo if isinstance(lo, Tensor) else float(lo))
        if hi is not None:
            x = self.binary("min", x, hi if isinstance(hi, Tensor) else float(hi))
        return x

    def sign(self, x: Tensor, keep_nan: bool = False) -> Tensor:
        """1 where x > 0, -1 where x < 0, else 0: -0 gives 0, and a NaN 0 as torch.sign does, or NaN as ONNX's Sign
        (numpy's sign) does with ``keep_nan``."""
        out = self.select(self.compare("gt", x, 0.0), 1.0,
                          self.select(self.compare("lt", x, 0.0), -1.0, 0.0, dtype=x.dtype), dtype=x.dtype)
        return self.select(self.compare("ne", x, x), x, out) if keep_nan and x.dtype in FLOATS else out

    def flip(self, x: Tensor, axes) -> Tensor:
        """``x`` reversed along each of ``axes`` (torch.flip): a take of the reversed positions per axis."""
        for axis in axes:
            axis = self.axis("flip", axis, len(x.shape))
            x = self.take(x, np.arange(x.shape[axis] - 1, -1, -1), axis, op="flip")
        return x

    def leaky_relu(self, x: Tensor, slope: Tensor | float) -> Tensor:
        """max(x, 0) + slope * min(x, 0): x where positive, slope * x elsewhere (exactly, in f32)."""
        return self.binary("add", self.binary("max", x, 0.0), self.binary("mul", self.binary("min", x, 0.0), slope))

    def elu(self, x: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
        """scale * x where x > 0, else scale * alpha * expm1(input_scale * x) (PyTorch's elu; ONNX Elu/Selu):
        expm1, not exp(x) - 1, which loses every digit of a small x; selected, not max / min, which a negative
        alpha would turn around."""
        def scaled(t, factor):
            return t if float(factor) == 1.0 else self.binary("mul", t, float(factor))

        negative = scaled(self.unary("expm1", scaled(x, input_scale)), float(alpha) * float(scale))
        return self.select(self.compare("gt", x, 0.0), scaled(x, scale), negative)

    def softplus(self, x: Tensor) -> Tensor:
        """log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)) (numpy's logaddexp): exp(x) overflows from x = 89
        on, and log(exp(x) + 1) is 0 where exp(x) < 2^-24."""
        tail = self.unary("log1p", self.unary("exp", self.unary("neg", self.unary("abs", x))))
        return self.binary("add", self.binary("max", x, 0.0), tail)

    def hard_sigmoid(self, x: Tensor, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor:
        """clamp(alpha * x + beta, 0, 1); PyTorch's defaults (ONNX's are alpha 0.2)."""
        if (alpha, beta) == (1 / 6, 0.5):  # PyTorch's own formula, clamp(x + 3, 0, 6) / 6, for equal rounding
            return self.binary("div", self.clamp(self.binary("add", x, 3.0), 0.0, 6.0), 6.0)
        return self.clamp(self.binary("add", self.binary("mul", x, alpha), beta), 0.0, 1.0)

    def hardswish(self, x: Tensor) -> Tensor:
        """x * clamp(x + 3, 0, 6) / 6, as PyTorch computes it."""
        return self.binary("div", self.binary("mul", x, self.clamp(self.binary("add", x, 3.0), 0.0, 6.0)), 6.0)

    def batch_norm(self, x: Tensor, weight, bias, mean, var, eps: float) -> Tensor:
        """Inference batch norm over axis 1 as y = x * scale[c] + shift[c] (scale, shift folded now)."""
        op = "batch_norm"
        dtype = self._float(op, x)
        if len(x.shape) < 2:
            raise self.error(op, f"the input needs a channel axis, got shape {_shape_text(x.shape)}")
        c = x.shape[1]
        arrays = []
        for what, t in (("weight", weight), ("bias", bias), ("running mean", mean), ("running var", var)):
            if t is None:
                arrays.append(None)
                continue
            if not self.is_constant(t):
                raise self.error(op, f"the {what} must be a constant (inference form)")
            if t.shape != (c,):
                raise self.error(op, f"the {what} must have shape [{c}], got {_shape_text(t.shape)}")
            arrays.append(self.value(t).astype(np.float64))
        w, b, m, v = arrays
        scale = (w if w is not None else 1.0) / np.sqrt(v + float(eps))
        shift = (b if b is not None else 0.0) - m * scale
        s = self.constant(f"{x.name}_bn_scale", scale.astype(dtype))
        h = self.constant(f"{x.name}_bn_shift", shift.astype(dtype))
        return self._layer("channel_affine", [x, s, h], x.shape, dtype, name="batch_norm")

    # ------------------------------------------------------------ normalisations / reductions

    def softmax(self, x: Tensor, axis: int, log: bool = False) -> Tensor:
        op = "log_softmax" if log else "softmax"
        dtype = self._float(op, x)
        axis = self.axis(op, axis, len(x.shape))
        return self._layer("softmax", [x], x.shape, dtype, {"axis": axis, "log": log}, name=op)

    def layer_norm(self, x: Tensor, normalized: int, weight: Tensor | None, bias: Tensor | None,
                   eps: float) -> Tensor:
        """Normalise over the last ``normalized`` axes, then scale and shift (both of those axes' shape)."""
        op = "layer_norm"
        dtype = self._float(op, x)
        if not 1 <= normalized <= len(x.shape):
            raise self.error(op, f"cannot normalise {normalized} trailing axes of {_shape_text(x.shape)}")
        tail = x.shape[len(x.shape) - normalized:]
        ins = [x]
        for what, t in (("weight", weight), ("bias", bias)):
            if t is not None:
                self._float(op, x, t)
                if broadcast_shapes(t.shape, tail) != tail:
                    raise self.error(op, f"the {what} {_shape_text(t.shape)} must broadcast to {_shape_text(tail)}")
                ins.append(self.expand(t, tail) if t.shape != tail else t)
        attrs = {"normalized": normalized, "eps": float(eps), "weight": weight is not None,
                 "bias": bias is not None}
        return self._layer("layer_norm", ins, x.shape, dtype, attrs)

    def group_norm(self, x: Tensor, groups: int, weight: Tensor | None, bias: Tensor | None,
                   eps: float) -> Tensor:
        """Normalise each sample's channel groups over (channels of the group, spatial...), then scale
        and shift per channel: a layer norm of the (N, groups, rest) view. Instance norm: groups = C."""
        op = "group_norm"
        self._float(op, x)
        if len(x.shape) < 2:
            raise self.error(op, f"the input needs (N, C, ...), got shape {_shape_text(x.shape)}")
        n, c = x.shape[:2]
        if groups < 1 or c % groups:
            raise self.error(op, f"{groups} groups must divide the {c} channels")
        y = self.view(self.layer_norm(self.view(x, (n, groups, -1)), 1, None, None, eps), x.shape)
        per_channel = (c,) + (1,) * (len(x.shape) - 2)
        for what, t, combine in (("weight", weight, "mul"), ("bias", bias, "add")):
            if t is not None:
                if t.shape != (c,):
                    raise self.error(op, f"the {what} must have shape [{c}], got {_shape_text(t.shape)}")
                y = self.binary(combine, y, self.view(t, per_channel))
        return y

    def reduce(self, op: str, x: Tensor | Condition, axes: Sequence[int] | None, keepdim: bool) -> Tensor:
        """sum / mean / max / min / prod of float32 (sum, max, min, prod of integers too, wrapping), any / all of
        masks."""
        if op not in REDUCE_OPS + BOOL_REDUCE_OPS:
            raise self.error(op, f"unknown reduction (known: {', '.join(REDUCE_OPS + BOOL_REDUCE_OPS)})")
        if op in BOOL_REDUCE_OPS:
            x = self.as_bool(x)
        elif x.dtype not in FLOATS and (op == "mean" or x.dtype not in (I32, I64)):
            raise self.error(op, f"{x.name} has dtype {x.dtype}; reduce_{op} takes float32, float64"
                                 f"{'' if op == 'mean' else ', int32 or int64'}")
        rank = len(x.shape)
        axes = tuple(range(rank)) if axes is None or len(axes) == 0 else \
            tuple(sorted({self.axis(op, int(a), rank) for a in axes}))
        shape = [1 if k in axes else d for k, d in enumerate(x.shape)] if keepdim else \
            [d for k, d in enumerate(x.shape) if k not in axes]
        return self._layer("reduce", [x], shape, x.dtype, {"op": op, "axes": axes, "keepdim": keepdim},
                           name=f"reduce_{op}")

    def cumsum(self, x: Tensor, axis: int, product: bool = False) -> Tensor:
        """Running sums (or products: cumprod) along ``axis`` (float32, or int64 exactly; PyTorch sums int32 into
        int64). int32 (ONNX's) sums in int64 and wraps back: the same low 32 bits."""
        op = "cumprod" if product else "cumsum"
        if x.dtype == I32:
            return self.cast(self.cumsum(self.cast(x, I64, op), axis, product), I32, op)
        if x.dtype not in (F32, F64, I64):
            raise self.error(op, f"{x.name} has dtype {x.dtype}; {op} computes in float32, float64, int32 or int64")
        axis = self.axis(op, axis, len(x.shape))
        return self._layer("cumsum", [x], x.shape, x.dtype, {"axis": axis, **({"op": "mul"} if product else {})},
                           name=op)

    def arg_reduce(self, op: str, x: Tensor, axis: int | None, keepdim: bool, last: bool = False) -> Tensor:
        """The int64 position of the max / min along ``axis`` (None: of the flattened ``x``, as torch.argmax): the
        first one on ties (the last with ``last``, ONNX's select_last_index), and a NaN counts as both max and
        min, as torch and numpy take it."""
        if op not in ("argmax", "argmin"):
            raise self.error(op, "unknown arg reduction (known: argmax, argmin)")
        if x.dtype not in (F32, F64, I32, I64):
            raise self.error(op, f"{x.name} has dtype {x.dtype}; {op} takes float32, float64, int32 or int64")
        shape = x.shape
        if axis is None:
            x, axis = self.view(x, (x.size,)), 0
        axis = self.axis(op, axis, len(x.shape))
        kept = [d for k, d in enumerate(x.shape) if k != axis]
        out = self._layer("arg_reduce", [x], kept, I64, {"op": op, "axis": axis, "last": bool(last)}, name=op)
        if keepdim:
            return self.view(out, [1] * len(shape) if len(x.shape) != len(shape) or not shape else
                             [1 if k == axis else d for k, d in enumerate(shape)])
        return out

    # ------------------------------------------------------------ pooling

    def pool2d(self, kind: str, x: Tensor, kernel, stride, padding=(0, 0), dilation=(1, 1),
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
        op = f"{kind}_pool2d"
        if kind == "max" and x.dtype in (I32, I64):  # integer max pooling (uint8 images): in float64, exact for int32
            if x.dtype == I64:
                raise self.error(op, "int64 max pooling is not supported (int32 and narrower: exact in float64)")
            y = self.pool2d(kind, self.cast(x, F64, op), kernel, stride, padding, dilation, ceil_mode,
                            count_include_pad)
            return self.cast(y, I32, op)
        dtype = self._float(op, x)
        self._rank(op, x, 4, "the input (N, C, H, W)")
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = (tuple(int(v) for v in p)
                                                 for p in (kernel, stride or kernel, padding, dilation))
        if min(kh, kw, sh, sw, dh, dw) < 1 or min(ph, pw) < 0:
            raise self.error(op, f"bad kernel {kernel} / stride {stride} / padding {padding} / dilation {dilation}")
        if ph * 2 > kh or pw * 2 > kw:
            raise self.error(op, f"padding {padding} must be at most half the kernel {kernel}")
        n, c, h, w = x.shape
        oh = pool_out(h, kh, sh, ph, dh, ceil_mode)
        ow = pool_out(w, kw, sw, pw, dw, ceil_mode)
        if oh < 1 or ow < 1:
            raise self.error(op, f"a {kh}x{kw} window does not fit the {h}x{w} input")
        attrs = {"kind": kind, "kernel": (kh, kw), "stride": (sh, sw), "padding": (ph, pw),
                 "dilation": (dh, dw), "count_include_pad": bool(count_include_pad)}
        return self._layer("pool2d", [x], (n, c, oh, ow), dtype, attrs, name=op)

    def adaptive_avg_pool2d(self, x: Tensor, size: Sequence[int]) -> Tensor:
        op = "adaptive_avg_pool2d"
        self._rank(op, x, 4, "the input (N, C, H, W)")
        (h, w), (oh, ow) = x.shape[2:], (int(size[0]), int(size[1]))
        if (oh, ow) == (1, 1):
            return self.reduce("mean", x, (2, 3), True)
        if h % oh or w % ow:
            return self.adaptive_pool("avg", x, (oh, ow))
        return self.pool2d("avg", x, (h // oh, w // ow), (h // oh, w // ow))

    def adaptive_pool(self, kind: str, x: Tensor, size: Sequence[int]) -> Tensor:
        """Adaptive max / average pooling of the axes after (N, C) to ``size``: output i of an axis of n pools
        [floor(i * n / m), ceil((i + 1) * n / m)) (PyTorch's windows). Windows are rectangles, so each axis is pooled
        on its own, as taps: the window's positions (a short window repeats its last one) taken and combined by max,
        or summed with weight 1 / length (0 for the repeats)."""
        op = f"adaptive_{kind}_pool"
        self._float(op, x)
        if len(size) != len(x.shape) - 2 or min(size) < 1:
            raise self.error(op, f"needs one positive output size per axis after (N, C), got {list(size)}")
        for axis, m in enumerate(size, start=2):
            n = x.shape[axis]
            if n == m:
                continue
            starts = [i * n // m for i in range(m)]
            ends = [-(-(i + 1) * n // m) for i in range(m)]
            taps = max(e - s for s, e in zip(starts, ends))
            y = None
            for t in range(taps):
                positions = np.array([min(s + t, e - 1) for s, e in zip(starts, ends)])
                tap = self.take(x, positions, axis, op)
                if kind == "avg":
                    shape = [m if k == axis else 1 for k in range(len(x.shape))]
                    weights = np.array([1.0 / (e - s) if s + t < e else 0.0 for s, e in zip(starts, ends)])
                    tap = self.binary("mul", tap, self.constant(f"{op}_w", weights.astype(x.dtype).reshape(shape)))
                y = tap if y is None else self.binary("max" if kind == "max" else "add", y, tap)
            x = y
        return x

    # ------------------------------------------------------------ gathers

    def _positions(self, op: str, idx: Tensor) -> Tensor:
        """Run-time positions as int64 (int32 ones converted)."""
        if idx.dtype == I32:
            return self.cast(idx, I64, op)
        if idx.dtype != I64:
            raise self.error(op, f"the indices must be int64 or int32, got {idx.dtype}")
        return idx

    def _check_constant_positions(self, op: str, idx: Tensor, size: int, negative: bool) -> None:
        if self.is_constant(idx):
            v = self.value(idx)
            low = -size if negative else 0
            if v.size and (v.min() < low or v.max() >= size):
                raise self.error(op, f"constant indices must lie in [{low}, {size}), got "
                                     f"{int(v.min())}..{int(v.max())}")

    def gather_elements(self, x: Tensor, idx: Tensor, axis: int, negative: bool, op: str = "gather_elements"
                        ) -> Tensor:
        """out[i...] = x[i... with i[axis] replaced by idx[i...]] (torch.gather, ONNX GatherElements); idx has x's
        rank and at most its size on the other axes. Positions are checked when the model runs (negative ones count
        from the end where ``negative``: ONNX's; PyTorch's are an error)."""
        idx = self._positions(op, idx)
        axis = self.axis(op, axis, len(x.shape))
        if len(idx.shape) != len(x.shape) or any(i > d for k, (i, d) in enumerate(zip(idx.shape, x.shape))
                                                 if k != axis):
            raise self.error(op, f"the indices {_shape_text(idx.shape)} must have the rank of the input "
                                 f"{_shape_text(x.shape)} and at most its size on the axes but {axis}")
        self._check_constant_positions(op, idx, x.shape[axis], negative)
        return self._layer("gather_elements", [x, idx], idx.shape, x.dtype, {"axis": axis, "negative": negative},
                           name=op)

    def take_positions(self, x: Tensor, idx: Tensor, axis: int, negative: bool, op: str = "take") -> Tensor:
        """``x[..., idx, ...]`` along ``axis`` with run-time positions of any shape (ONNX Gather, index_select):
        the output's shape is x's with the axis replaced by idx's."""
        idx = self._positions(op, idx)
        axis = self.axis(op, axis, len(x.shape))
        self._check_constant_positions(op, idx, x.shape[axis], negative)
        shape = (*x.shape[:axis], *idx.shape, *x.shape[axis + 1:])
        return self._layer("take_positions", [x, idx], shape, x.dtype, {"axis": axis, "negative": negative}, name=op)

    def scatter_elements(self, x: Tensor, idx: Tensor, src: Tensor, axis: int, reduction: str, negative: bool,
                         op: str = "scatter_elements") -> Tensor:
        """x with out[i... with i[axis] = idx[i...]] set to src[i...] (``reduction`` "none"), or combined with it
        ("add", "mul", "max", "min"), in idx's order (torch.scatter / scatter_add / scatter_reduce, ONNX
        ScatterElements; a position written twice keeps the last write without a reduction)."""
        idx = self._positions(op, idx)
        axis = self.axis(op, axis, len(x.shape))
        if not x.dtype == src.dtype == I64:
            self._numeric(op, x, src)
        if reduction not in ("none", "add", "mul", "max", "min"):
            raise self.error(op, f"reduction {reduction!r} is not supported (none, add, mul, max, min)")
        if len(idx.shape) != len(x.shape) or any(i > d for k, (i, d) in enumerate(zip(idx.shape, x.shape))
                                                 if k != axis) or any(i > d for i, d in zip(idx.shape, src.shape)):
            raise self.error(op, f"the indices {_shape_text(idx.shape)} must have the rank of the input "
                                 f"{_shape_text(x.shape)}, at most its size on the axes but {axis} and at most the "
                                 f"updates' {_shape_text(src.shape)}")
        self._check_constant_positions(op, idx, x.shape[axis], negative)
        return self._layer("scatter_elements", [x, idx, src], x.shape, x.dtype,
                           {"axis": axis, "negative": negative, "reduction": reduction}, name=op)

    def topk(self, x: Tensor, k: int, axis: int, largest: bool = True) -> tuple[Tensor, Tensor]:
        """The k largest (or smallest) values along ``axis`` and their int64 positions, best first; equal values in
        position order (ONNX's rule) and NaN larger than every number (torch's). The positions are a loop layer (k scans
        of the axis, each taking the best element after the previous one in that order), the values a gather."""
        op = "topk"
        if x.dtype != I64:
            self._numeric(op, x)
        axis = self.axis(op, axis, len(x.shape))
        if not 1 <= k <= x.shape[axis]:
            raise self.error(op, f"k={k} must lie in [1, {x.shape[axis]}] (the size of axis {axis})")
        shape = [k if a == axis else d for a, d in enumerate(x.shape)]
        positions = self._layer("topk", [x], shape, I64, {"axis": axis, "largest": bool(largest)}, name=op)
        return self.gather_elements(x, positions, axis, False, op), positions

    def embedding(self, weight: Tensor, ids: Tensor) -> Tensor:
        op = "embedding"
        dtype = self._float(op, weight)
        self._rank(op, weight, 2, "the table (rows, features)")
        if ids.dtype != I64:
            raise self.error(op, f"indices must be int64, got {ids.dtype}")
        if self.is_constant(ids):
            v = self.value(ids)
            if v.size and (v.min() < 0 or v.max() >= weight.shape[0]):
                raise self.error(op, f"constant indices must lie in [0, {weight.shape[0]}), "
                                     f"got {int(v.min())}..{int(v.max())}")
        return self._layer(op, [weight, ids], (*ids.shape, weight.shape[1]), dtype)
