"""PyTorch import: ``torch.export`` -> core ATen (``run_decompositions``) -> a ``Graph``.

Every ``call_function`` node is checked against ``ATEN_OPS`` before anything is built, so an unsupported
op is refused at import time with its name and the node's place (the user's source line from the
node's stack trace and the ``nn_module_stack`` path, e.g. ``model.py:42 (layer1.0.conv1: Conv2d)``).
Parameters, buffers and lifted constants become graph constants; user inputs keep the example shapes.
torch is imported lazily: loom works without it.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence

import numpy as np

from loom.errors import LoomError
from loom.models import resize, torch_quant
from loom.models.composite import roll, vector_norm
from loom.models.graph import (COMPARE_OPS, DIVISION_OPS, LOGICAL_OPS, TRIG_OPS, Condition, Graph, GraphBuilder,
                               Tensor)
from loom.models.volumetric import conv3d, conv_transpose3d, pool3d


class _Unavailable:
    """An output of a multi-result op that loom does not compute (batch-norm statistics, pool indices)."""

    def __init__(self, op: str, what: str):
        self.op, self.what = op, what


def _export(module, example_inputs: Sequence):
    import torch

    if not isinstance(module, torch.nn.Module):
        raise LoomError(f"expected a torch.nn.Module, got {type(module).__name__}")
    args = tuple(torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in example_inputs)
    _check_input_count(module, len(args))
    module = module.eval()
    try:
        with torch.no_grad():
            program = torch.export.export(module, args)
            return program.run_decompositions()
    except Exception as error:  # torch's export errors are long; keep the first lines
        lines = str(error).strip().splitlines()
        raise LoomError(f"torch.export failed for {type(module).__name__}: {type(error).__name__}: "
                        + "\n".join(lines[:6])) from None


def _check_input_count(module, given: int) -> None:
    """One example input per argument of ``forward`` (torch.export's own message names only the
    first missing argument, without saying where inputs come from)."""
    import inspect

    try:
        parameters = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):  # a forward inspect cannot read: torch.export will tell
        return
    if any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if not len(required) <= given <= len(positional):
        names = ", ".join(p.name for p in positional)
        raise LoomError(f"{type(module).__name__}.forward({names}) takes {len(required)} input(s), {given} example "
                        "input(s) given (loom model run: one --input-shape per input)")


def node_location(node) -> str:
    """The user's source line and the module path of an FX node, as precise as the export kept."""
    place = ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace") or "")
    user = [f for f in frames if "/torch/" not in f[0]]
    if user or frames:
        path, line = (user or frames)[-1]
        place = f"{_short(path)}:{line}"
    stack = node.meta.get("nn_module_stack") or {}
    module = ""
    if stack:
        path, cls = list(stack.values())[-1]
        cls_name = cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls))
        module = f"{path or '<model>'}: {cls_name.rsplit('.', 1)[-1]}"
    op = _op_name(node)
    inside = ", ".join(p for p in (module, op) if p)
    return f"{place or '<model>'} ({inside})"


def _short(path: str) -> str:
    """A path relative to the working directory when it lies below it."""
    import os

    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _op_name(node) -> str:
    if node.target is operator.getitem:
        return "getitem"
    name = str(node.target)
    return name[len("aten."):] if name.startswith("aten.") else name


def import_torch(module, example_inputs: Sequence) -> Graph:
    """The graph of ``module`` called on ``example_inputs`` (tensors or numpy arrays)."""
    for kind, named in (("parameter", module.named_parameters()), ("buffer", module.named_buffers())):
        for name, value in named:  # (refused before torch.export, which takes seconds)
            _np_dtype(value.dtype, f"{kind} {name!r}")
    program = _export(module, example_inputs)
    return graph_from_exported(program, type(module).__name__)


def specialize(program, example_inputs: Sequence):
    """``program`` exported again for the shapes of ``example_inputs``: a program with dynamic dims
    (``torch.export.Dim``) becomes one loom can compile; a shape outside the dims' ranges is refused."""
    import torch

    args = tuple(torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in example_inputs)
    try:
        with torch.no_grad():
            return torch.export.export(program.module(), args).run_decompositions()
    except Exception as error:  # a guard of the program failed (a dim out of its range), a wrong count...
        lines = [line for line in str(error).strip().splitlines() if line.strip()]
        raise LoomError("cannot specialise the exported program to the inputs' shapes "
                        f"{[list(np.shape(a)) for a in args]}: {type(error).__name__}: " + "\n".join(lines[:2])) from None


def dynamic_inputs(program) -> dict[str, list]:
    """User input name -> its shape, for the inputs with a symbolic (dynamic) dim."""
    from torch.export.graph_signature import InputKind

    users = {s.arg.name for s in program.graph_signature.input_specs if s.kind == InputKind.USER_INPUT}
    found = {}
    for node in program.graph.nodes:
        val = node.meta.get("val")
        if node.op == "placeholder" and node.name in users and hasattr(val, "shape"):
            if not all(isinstance(d, int) for d in val.shape):
                found[node.name] = list(val.shape)
    return found


def _refuse_dynamic_inputs(program) -> None:
    dynamic = dynamic_inputs(program)
    if not dynamic:
        return
    ranges = {str(s): r for s, r in program.range_constraints.items()}
    symbols = sorted({str(d) for shape in dynamic.values() for d in shape if not isinstance(d, int)})
    bounds = ", ".join(f"{s} in [{ranges[s].lower}, {ranges[s].upper}]" if s in ranges else s for s in symbols)
    name, shape = next(iter(dynamic.items()))
    raise LoomError(f"input {name} has dynamic dims [{', '.join(map(str, shape))}] ({bounds}): loom compiles "
                    "static shapes; give example inputs of the shapes to compile for (loom.models.compile(program, "
                    "inputs), loom build --input-shape)")


def graph_from_exported(program, source: str = "torch") -> Graph:
    from torch.export.graph_signature import InputKind, OutputKind

    _refuse_dynamic_inputs(program)  # before the op check: a dynamic program also holds sym_size ops
    graph = program.graph
    nodes = list(graph.nodes)
    for node in nodes:  # refuse unsupported ops before building anything
        _refuse_data_dependent(node)
        if node.op == "call_function" and _op_name(node) not in ATEN_OPS:
            raise LoomError(f"unsupported PyTorch op {_op_name(node)} (loom imports: "
                            f"{', '.join(sorted(ATEN_OPS))})", where=node_location(node))
    b = GraphBuilder(source)
    specs = {s.arg.name: s for s in program.graph_signature.input_specs}
    constants = {**program.state_dict, **program.constants}
    env: dict[str, object] = {}
    outputs: list[Tensor] = []
    for node in nodes:
        b.at(node_location(node))
        if node.op == "placeholder":
            spec = specs.get(node.name)
            if spec is None or spec.kind == InputKind.USER_INPUT:
                val = node.meta.get("val")
                if val is None or not hasattr(val, "shape"):
                    raise LoomError(f"input {node.name}: only tensor inputs are supported", where=node.name)
                env[node.name] = b.input(node.name, tuple(val.shape), _np_dtype(val.dtype, f"input {node.name!r}"))
            else:
                if spec.target not in constants:
                    raise LoomError(f"{spec.kind.name.lower()} {spec.target!r} has no value in the export")
                value = constants[spec.target]
                if hasattr(value, "dtype"):  # (a bfloat16 weight has no numpy array: named here, not a TypeError)
                    _np_dtype(value.dtype, f"{spec.kind.name.lower()} {spec.target!r}")
                env[node.name] = b.constant(spec.target, value.detach().cpu().numpy())
        elif node.op == "call_function":
            args = _resolve(b, node.args, env, node)
            kwargs = _resolve(b, dict(node.kwargs), env, node)
            try:
                result = ATEN_OPS[_op_name(node)](b, *args, **kwargs)
            except (TypeError, IndexError, ValueError) as error:  # an overload with arguments loom does not read
                raise b.error(_op_name(node), f"unsupported arguments ({type(error).__name__}: {error})") from None
            _check_shape(b, node, result)
            env[node.name] = result
        elif node.op == "output":
            for spec in program.graph_signature.output_specs:
                if spec.kind != OutputKind.USER_OUTPUT:
                    raise LoomError(f"the model {spec.kind.name.lower().replace('_', ' ')}s "
                                    f"{spec.target!r}: only pure inference models are supported")
            for value in _resolve(b, node.args[0], env, node):
                if not isinstance(value, Tensor):
                    raise LoomError(f"output {value!r} is not a tensor")
                outputs.append(value)
        else:
            raise LoomError(f"unsupported FX node kind {node.op}", where=node_location(node))
    return b.finish(outputs)


def _refuse_data_dependent(node) -> None:
    """x[mask] and nonzero have as many elements as the mask has true ones: a shape known only at run time (the
    export's unbacked symbols, whose sym_size / _assert_scalar nodes would otherwise be named as the refused ops)."""
    import torch

    name = _op_name(node) if node.op == "call_function" else ""
    masks = name == "index.Tensor" and any(
        getattr(i, "meta", {}).get("val") is not None and i.meta["val"].dtype == torch.bool for i in node.args[1] or ())
    if masks or name in ("nonzero.default", "masked_select.default"):
        what = "x[mask] (boolean indexing)" if masks else name.split(".")[0]
        raise LoomError(f"{what} gives a data-dependent shape (one element per true mask element), which a loom "
                        "model cannot have: its shapes are static. Keep the shape with torch.where(mask, x, 0) "
                        "or reduce the masked values (a sum of x * mask)", where=node_location(node))


def _np_dtype(torch_dtype, what: str = "a tensor") -> np.dtype:
    import torch

    table = {torch.float32: np.float32, torch.int64: np.int64, torch.float64: np.float64,
             torch.int32: np.int32, torch.bool: np.bool_}
    if torch_dtype not in table:
        hint = ("; convert the model with .float() (ONNX models compute bfloat16, float16 and float8 in float32: "
                "export with torch.onnx)" if torch_dtype.is_floating_point else "")
        raise LoomError(f"{what}: dtype {torch_dtype} is not supported in torch models (float32, float64, int32, "
                        f"int64, bool){hint}")
    return np.dtype(table[torch_dtype])


# ops that take a comparison as it is (computed inside their own loop); any other use builds its bool tensor
_TAKE_CONDITIONS = ("where.self", "_to_copy.default", "_assert_tensor_metadata.default", "sum.dim_IntList",
                    "sum.default")


def _resolve(b, value, env, node):
    from torch import fx

    if isinstance(value, fx.Node):
        got = env[value.name]
        if isinstance(got, Condition) and _op_name(node) not in _TAKE_CONDITIONS:
            return b.as_bool(got)
        if isinstance(got, _Unavailable):
            raise LoomError(f"uses the {got.what} of {got.op}, which loom does not compute",
                            where=node_location(node))
        return got
    if isinstance(value, (list, tuple)):
        return type(value)(_resolve(b, v, env, node) for v in value)
    if isinstance(value, dict):
        return {k: _resolve(b, v, env, node) for k, v in value.items()}
    return value


def _check_shape(b: GraphBuilder, node, result) -> None:
    val = node.meta.get("val")
    if isinstance(result, Tensor) and val is not None and hasattr(val, "shape"):
        if tuple(val.shape) != result.shape:
            raise b.error(_op_name(node), f"loom computed shape {list(result.shape)} but PyTorch has "
                                          f"{list(val.shape)}")
        # a type promotion loom does not make (an op of two masks, a where of int64 and 0.5)
        if _known_dtype(val.dtype) not in (None, result.dtype):
            raise b.error(_op_name(node), f"loom computes {result.dtype} but PyTorch has {val.dtype} "
                                          "(loom promotes binary arithmetic only)")


# ---------------------------------------------------------------- the ops


def _pair(v) -> tuple[int, int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return (int(v[0]), int(v[-1])) if v else (1, 1)


def _triple(v) -> tuple[int, int, int]:
    v = [int(d) for d in (v if isinstance(v, (list, tuple)) else [v])]
    return tuple(v * 3 if len(v) == 1 else v)


def _max_pool3d(b, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    pad = _triple(padding)
    y = pool3d(b, "max", x, _triple(kernel), _triple(stride or kernel), pad, pad, _triple(dilation), bool(ceil_mode))
    return y, _Unavailable("max_pool3d_with_indices", "indices")


def _avg_pool3d(b, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise b.error("avg_pool3d", "divisor_override is not supported")
    pad = _triple(padding)
    return pool3d(b, "avg", x, _triple(kernel), _triple(stride or kernel), pad, pad, (1, 1, 1), bool(ceil_mode),
                  bool(count_include_pad))


def _convolution(b, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    if transposed and len(x.shape) == 5:  # ConvTranspose3d
        pad, extra = _triple(padding), _triple(output_padding)
        return conv_transpose3d(b, x, w, bias, _triple(stride), pad, [p - e for p, e in zip(pad, extra)],
                                _triple(dilation), int(groups))
    if transposed:  # ConvTranspose1d / 2d
        if len(x.shape) not in (3, 4):
            raise b.error("convolution", f"only 1-d and 2-d transposed convolution are supported, got an input of "
                                         f"rank {len(x.shape)}")
        one = len(x.shape) == 3
        if one:  # (N, C, L) as (N, C, 1, L)
            x, w = (b.view(t, (*t.shape[:2], 1, t.shape[2])) for t in (x, w))

        def lift(v, fill: int) -> tuple[int, int]:
            return (fill, int(list(v)[0])) if one else _pair(v)

        pad, extra = lift(padding, 0), lift(output_padding, 0)
        y = b.conv_transpose2d(x, w, bias, lift(stride, 1), pad, [p - e for p, e in zip(pad, extra)],
                               lift(dilation, 1), int(groups))
        return b.view(y, (y.shape[0], y.shape[1], y.shape[3])) if one else y
    if len(x.shape) == 3:
        return b.conv1d(x, w, bias, int(stride[0]), int(padding[0]), int(dilation[0]), int(groups))
    if len(x.shape) == 5:
        return conv3d(b, x, w, bias, _triple(stride), _triple(padding), _triple(padding), _triple(dilation),
                      int(groups))
    if len(x.shape) != 4:
        raise b.error("convolution", f"only 1-d, 2-d and 3-d convolution are supported, got an input of rank "
                                     f"{len(x.shape)}")
    return b.conv2d(x, w, bias, _pair(stride), _pair(padding), _pair(dilation), int(groups))


def _batch_norm_inference(b, x, weight, bias, mean, var, momentum, eps):
    op = "_native_batch_norm_legit_no_training"
    return (b.batch_norm(x, weight, bias, mean, var, eps), _Unavailable(op, "saved mean"),
            _Unavailable(op, "saved inverse std"))


def _layer_norm(b, x, shape, weight, bias, eps):
    op = "native_layer_norm"
    return (b.layer_norm(x, len(shape), weight, bias, eps), _Unavailable(op, "mean"), _Unavailable(op, "rstd"))


def _binary(op: str):
    def build(b, a, c, alpha=1, rounding_mode=None):
        kind = op
        if rounding_mode is not None:  # torch.div(rounding_mode=...), // (floor)
            if op != "div" or rounding_mode not in ("trunc", "floor"):
                raise b.error(op, f"rounding_mode={rounding_mode!r} is not supported (PyTorch's: 'trunc', 'floor')")
            kind = f"{rounding_mode}div"
        if alpha != 1:
            c = b.binary("mul", c, float(alpha)) if isinstance(c, Tensor) else float(c) * float(alpha)
        a, c = _promote(b, kind, a, c)
        if op in _MASK_ARITHMETIC and all(isinstance(t, Tensor) and t.dtype == np.dtype(np.bool_) for t in (a, c)):
            return b.logical(_MASK_ARITHMETIC[op], a, c)  # PyTorch's bool * bool, bool + bool (isfinite's)
        if kind in DIVISION_OPS and any(isinstance(t, Tensor) and t.dtype == np.dtype(np.bool_) for t in (a, c)):
            raise b.error(kind, "a division of bools is not supported (PyTorch refuses it too)")
        # an integer division by zero is an error in PyTorch ("ZeroDivisionError"): at import or when the model runs
        return b.binary(kind, a, c, zero_divisor="raise")
    return build


_MASK_ARITHMETIC = {"mul": "and", "add": "or"}


_KIND_ORDER = {"b": 0, "i": 1, "f": 2}  # PyTorch's promotion categories: bool < integers < floats


def _category(value) -> int:
    if isinstance(value, Tensor):
        return _KIND_ORDER[value.dtype.kind]
    return 0 if isinstance(value, bool) else 1 if isinstance(value, int) else 2


def _promote(b, op: str, a, c) -> tuple:
    """PyTorch's type promotion of a binary op's operands: to the highest category's widest tensor (``x * mask``,
    ``positions * 0.5``: a Python float makes integers float32, an int makes masks int64); true division
    computes in float32. Two masks stay bool (arithmetic on them is refused)."""
    tensors = [t for t in (a, c) if isinstance(t, Tensor)]
    top = max(tensors, key=lambda t: (_category(t), t.dtype.itemsize))
    dtype = top.dtype
    scalar = max((_category(v) for v in (a, c) if not isinstance(v, Tensor)), default=-1)
    if scalar > _category(top):
        dtype = np.dtype(np.float32) if scalar == 2 else np.dtype(np.int64)
    if op == "div" and dtype.kind != "f":
        dtype = np.dtype(np.float32)
    return tuple(b.cast(v, dtype, op) if isinstance(v, Tensor) and v.dtype != dtype else v for v in (a, c))


def _reverse_sub(b, a, c, alpha=1):
    return b.binary("sub", c, b.binary("mul", a, float(alpha)) if alpha != 1 else a)


def _unary(op: str):
    return lambda b, x: b.unary(op, x)


def _gelu(b, x, approximate="none"):
    return b.unary("gelu_tanh" if approximate == "tanh" else "gelu", x)


def _addmm(b, bias, m1, m2, beta=1, alpha=1):
    return b.matmul(m1, m2, bias, alpha=float(alpha), beta=float(beta))


def _softmax(log: bool):
    return lambda b, x, dim, half_to_float=False: b.softmax(x, int(dim), log)


def _max_pool(b, x, kernel, stride=(), padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    y = b.pool2d("max", x, _pair(kernel), _pair(stride) if stride else _pair(kernel), _pair(padding),
                 _pair(dilation), bool(ceil_mode))
    return y, _Unavailable("max_pool2d_with_indices", "indices")


def _avg_pool(b, x, kernel, stride=(), padding=(0, 0), ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    if divisor_override is not None:
        raise b.error("avg_pool2d", "divisor_override is not supported")
    return b.pool2d("avg", x, _pair(kernel), _pair(stride) if stride else _pair(kernel), _pair(padding),
                    (1, 1), bool(ceil_mode), bool(count_include_pad))


def _reduce(op: str):
    def build(b, x, dims=None, keepdim=False, dtype=None):
        if op in ("sum", "prod") and (isinstance(x, Condition) or x.dtype.kind in "bi"):
            x = b.cast(x, np.int64, op)  # PyTorch sums (and multiplies) bools and integers in int64
        dims = [dims] if isinstance(dims, int) else dims
        return b.reduce(op, x, list(dims) if dims is not None else None, bool(keepdim))
    return build


def _view(b, x, shape):
    return b.view(x, shape)


def _squeeze(b, x, dims=None):
    dims = range(len(x.shape)) if dims is None else [b.axis("squeeze", d, len(x.shape)) for d in
                                                      ([dims] if isinstance(dims, int) else dims)]
    return b.view(x, [d for k, d in enumerate(x.shape) if not (k in dims and d == 1)])


def _unsqueeze(b, x, dim):
    dim = b.axis("unsqueeze", dim, len(x.shape) + 1)
    return b.view(x, [*x.shape[:dim], 1, *x.shape[dim:]])


def _to_copy(b, x, dtype=None, **_ignored):
    """``.to(dtype)``, ``.float()``, ``mask.long()``: GraphBuilder.cast's conversions."""
    if dtype is None:
        return b.as_bool(x) if isinstance(x, Condition) else x
    target = _known_dtype(dtype)
    if target is None:
        raise b.error("_to_copy", f"tensors of dtype {dtype} are not supported (float32, float64, int32, int64, bool)")
    return b.cast(x, target, "_to_copy")


def _full(b, size, fill_value, dtype=None, **_placement):
    """torch.zeros / ones / full / new_zeros in ``forward``: a constant of the model (its shape is static)."""
    target = _scalar_dtype(fill_value) if dtype is None else _known_dtype(dtype)
    if target is None:
        raise b.error("full", f"tensors of dtype {dtype} are not supported (float32, float64, int32, int64, bool)")
    return b.constant("full", np.full([int(d) for d in size], fill_value, target))


def _scalar_dtype(value) -> np.dtype:
    """PyTorch's dtype of a tensor filled with a Python scalar (torch.full((4,), True) is bool)."""
    return np.dtype(np.bool_ if isinstance(value, bool) else np.int64 if isinstance(value, int) else np.float32)


def _full_like(b, x, fill_value, dtype=None, **_placement):
    """torch.zeros_like / ones_like / full_like: a constant of x's shape (and dtype unless given)."""
    if dtype is None:
        return b.constant("full", np.full(x.shape, fill_value, x.dtype))
    return _full(b, x.shape, fill_value, dtype)


def _known_dtype(torch_dtype) -> np.dtype | None:
    try:
        return _np_dtype(torch_dtype)
    except LoomError:
        return None


def _assert_metadata(b, *_args, **_kwargs):
    """torch.export's check of a tensor's dtype / device before ``.to()``: nothing to compute."""
    return None


def _slice(b, x, dim=0, start=None, end=None, step=1):
    return b.slice(x, dim, 0 if start is None else start, x.shape[dim] if end is None else end, step)


def _cat(b, tensors, dim=0):
    return b.concat(list(tensors), int(dim))


def _constant_pad(b, x, pad, value=0):
    """torch's pad list runs from the last axis backwards, (before, after) per axis."""
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > len(x.shape):
        raise b.error("constant_pad_nd", f"pad {pad} must give (before, after) for at most {len(x.shape)} axes")
    before, after = [0] * len(x.shape), [0] * len(x.shape)
    for k in range(len(pad) // 2):
        before[-1 - k], after[-1 - k] = pad[2 * k], pad[2 * k + 1]
    return b.pad(x, before, after, float(value))


def _select(b, x, dim, index):
    """``x[..., index, ...]``: a one-element slice along ``dim``, then that axis dropped."""
    dim = b.axis("select", int(dim), len(x.shape))
    size = x.shape[dim]
    if not -size <= int(index) < size:
        raise b.error("select", f"index {index} is out of range for axis {dim} of size {size}")
    index = int(index) % size
    one = b.slice(x, dim, index, index + 1)
    return b.view(one, [d for k, d in enumerate(x.shape) if k != dim])


def _split_with_sizes(b, x, sizes, dim=0):
    dim = b.axis("split_with_sizes", int(dim), len(x.shape))
    sizes = [int(s) for s in sizes]
    if sum(sizes) != x.shape[dim] or min(sizes, default=0) < 1:
        raise b.error("split_with_sizes", f"sizes {sizes} must be positive and add up to {x.shape[dim]}")
    starts = np.cumsum([0, *sizes[:-1]])
    return [b.slice(x, dim, int(start), int(start) + size) for start, size in zip(starts, sizes)]


def _gather(b, x, dim, index, sparse_grad=False):
    return b.gather_elements(x, index, int(dim), False, "gather")


def _scatter(reduction: str):
    def build(b, x, dim, index, src, reduce=None, include_self=True):
        kind = reduction
        if reduce is not None:  # scatter_reduce.two
            kind = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}.get(reduce)
            if kind is None or not include_self:
                raise b.error("scatter_reduce", f"reduce={reduce!r}, include_self={include_self} is not supported "
                                                "(sum, prod, amax, amin including self)")
        if not isinstance(src, Tensor):  # scatter.value: one value everywhere
            src = b.constant("scatter_value", np.full(index.shape, src, x.dtype))
        return b.scatter_elements(x, index, src, int(dim), kind, False, "scatter")
    return build


def _topk(b, x, k, dim=-1, largest=True, sorted=True):
    return b.topk(x, int(k), int(dim), bool(largest))


def _sort(b, x, dim=-1, descending=False, stable=None):
    """torch.sort / argsort as a top-k of the whole axis: equal values keep their order (a stable sort), NaN last
    ascending and first descending (torch's)."""
    dim = b.axis("sort", int(dim), len(x.shape))
    return b.topk(x, x.shape[dim], dim, bool(descending))


def _kthvalue(b, x, k, dim=-1, keepdim=False):
    """The k-th smallest along ``dim`` and its position: the last of the k smallest."""
    dim = b.axis("kthvalue", int(dim), len(x.shape))
    values, positions = b.topk(x, int(k), dim, False)
    picked = [b.slice(t, dim, int(k) - 1, int(k)) for t in (values, positions)]
    return tuple(t if keepdim else b.view(t, [d for a, d in enumerate(t.shape) if a != dim]) for t in picked)


def _median(b, x, dim=None, keepdim=False):
    """torch.median: the lower of the two middle values (the ((n + 1) // 2)-th smallest), or NaN (at the first NaN's
    position) where the values have one; of the whole tensor (no dim) the value alone."""
    if dim is None:
        return _median(b, b.view(x, (x.size,)), 0)[0]
    dim = b.axis("median", int(dim), len(x.shape))
    value, position = _kthvalue(b, x, (x.shape[dim] + 1) // 2, dim, keepdim)
    if x.dtype.kind != "f":
        return value, position
    nan = b.cast(b.compare("ne", x, x), np.dtype(np.int32), "median")
    has_nan = b.compare("gt", b.reduce("max", nan, [dim], bool(keepdim)), 0.0)
    first = b.arg_reduce("argmax", nan, dim, bool(keepdim))
    return b.select(has_nan, float("nan"), value), b.select(has_nan, first, position)


def _cdist(b, x1, x2, p=2.0, compute_mode=None):
    """torch.cdist: the p-norm of every row difference, (..., P, M) and (..., R, M) -> (..., P, R), computed from the
    differences (torch takes a matrix product for p = 2 from 25 rows on: equal within rounding)."""
    if len(x1.shape) < 2 or len(x2.shape) < 2 or x1.shape[-1] != x2.shape[-1]:
        raise b.error("cdist", f"needs (..., P, M) and (..., R, M), got {list(x1.shape)} and {list(x2.shape)}")
    a = b.view(x1, (*x1.shape[:-1], 1, x1.shape[-1]))
    c = b.view(x2, (*x2.shape[:-2], 1, *x2.shape[-2:]))
    return vector_norm(b, b.binary("sub", a, c), float(p), [-1], False, "cdist")


def _bucketize(b, x, boundaries, out_int32=False, right=False):
    """torch.bucketize: the number of boundaries below x (at or below with right=True), counted as a sum of
    comparisons with the sorted boundaries."""
    if len(boundaries.shape) != 1:
        raise b.error("bucketize", f"needs 1-d boundaries, got {list(boundaries.shape)}")
    spread = b.view(x, (*x.shape, 1))
    below = b.compare("ge" if right else "gt", spread, boundaries)
    dtype = np.dtype(np.int32 if out_int32 else np.int64)
    return b.reduce("sum", b.cast(below, dtype, "bucketize"), [len(x.shape)], False)


def _var(b, x, dim=None, correction=None, keepdim=False):
    """torch.var / std's variance: the mean of squared deviations over n - correction (1 unless given)."""
    axes = list(range(len(x.shape))) if dim is None or len(dim) == 0 else [b.axis("var", int(a), len(x.shape))
                                                                           for a in dim]
    n = math.prod(x.shape[a] for a in axes)
    deviation = b.binary("sub", x, b.reduce("mean", x, axes, True))
    total = b.reduce("sum", b.binary("mul", deviation, deviation), axes, bool(keepdim))
    divisor = n - (1.0 if correction is None else float(correction))
    return b.binary("div", total, divisor) if divisor > 0 else b.binary("mul", total, float("inf"))


def _embedding(b, weight, ids, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return b.embedding(weight, ids)


def _clamp(b, x, lo=None, hi=None):
    return b.clamp(x, lo, hi)


def _scalar_tensor(b, value, dtype=None, **_placement):
    """torch.where(c, x, 0.0)'s scalar: a one-element constant (a scalar operand of its user)."""
    target = np.dtype(np.float32) if dtype is None else _known_dtype(dtype)
    if target is None:
        raise b.error("scalar_tensor", f"tensors of dtype {dtype} are not supported (float32, float64, int32, int64)")
    return b.constant("scalar", np.array(value, target))


def _compare(op: str):
    return lambda b, x, y: b.compare(op, x, y)


def _nearest(b, x, sizes=None, factors=None):
    """F.interpolate(mode="nearest") of the axes after N, C: whole-number factors as one broadcast copy, other
    sizes (1.5x, downsampling) as a gather of PyTorch's source positions along each axis."""
    spatial = x.shape[2:]
    factors = None if factors is None else list(factors) if isinstance(factors, (list, tuple)) else \
        [factors] * len(spatial)
    if sizes:
        sizes = [int(o) for o in sizes]
    elif factors is not None and len(factors) == len(spatial):
        sizes = [int(math.floor(i * float(f))) for i, f in zip(spatial, factors)]
    if not sizes or len(sizes) != len(spatial) or min(sizes) < 1:
        raise b.error("upsample_nearest", f"cannot read the output size of input {list(spatial)} from size {sizes} "
                                          f"and scale factors {factors}")
    if all(o % i == 0 for o, i in zip(sizes, spatial)):
        return b.upsample_nearest(x, [o // i for o, i in zip(sizes, spatial)])
    for k, (size, out) in enumerate(zip(spatial, sizes)):
        scale = None if factors is None else float(factors[k])
        x = b.take(x, _nearest_positions(size, out, scale), 2 + k, "upsample_nearest")
    return x


def _nearest_positions(size: int, out: int, scale: float | None) -> np.ndarray:
    """PyTorch's source index of each output index (nearest_idx of ATen's UpSample.h): floor(i * s) in float32,
    s = 1 / scale factor when one is given, else size / out; at most size - 1."""
    if out == size:
        return np.arange(out)
    if out == 2 * size:
        return np.arange(out) >> 1
    s = np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)
    return np.minimum(np.floor(np.arange(out, dtype=np.float32) * s).astype(np.int64), size - 1)


def _upsample_nearest_vec(b, x, output_size=None, scale_factors=None):
    return _nearest(b, x, output_size, scale_factors)


def _upsample_nearest(b, x, output_size, *scales):
    return _nearest(b, x, output_size, [s for s in scales if s is not None] or None)


def _upsample_linear(b, x, output_size=None, align_corners=False, scale_factors=None):
    """F.interpolate(mode="bilinear" / "linear") of the axes after N, C (.vec: an output size or scale factors)."""
    spatial = x.shape[2:]
    factors = list(scale_factors) if scale_factors and not output_size else [None] * len(spatial)
    sizes = [int(o) for o in output_size] if output_size else \
        [int(math.floor(i * float(f))) for i, f in zip(spatial, factors)]
    return _linear_axes(b, x, sizes, factors, bool(align_corners))


def _upsample_linear_sizes(b, x, output_size, align_corners, *scales):
    """The .default overloads: the output size, and per-axis scales that, when given, set the coordinates."""
    spatial = x.shape[2:]
    factors = list(scales) if len(scales) == len(spatial) else [None] * len(spatial)
    return _linear_axes(b, x, [int(o) for o in output_size], factors, bool(align_corners))


def _linear_axes(b, x, sizes, factors, align_corners: bool):
    """Per resized axis a sum of two gathers of torch's neighbours, weighted by its float32 interpolation weights
    (loom.models.resize)."""
    op = f"upsample_{'bilinear2d' if len(x.shape) == 4 else 'linear1d'}"
    spatial = x.shape[2:]
    if len(sizes) != len(spatial) or len(factors) != len(spatial) or min(sizes) < 1:
        raise b.error(op, f"cannot read the output size of input {list(spatial)} from sizes {sizes} and scale "
                          f"factors {factors}")
    for k, (size, out, factor) in enumerate(zip(spatial, sizes, factors)):
        if out == size and factor in (None, 1.0):
            continue
        coords = resize.torch_linear_coordinates(size, out, align_corners, factor)
        positions, weights = resize.taps("linear", coords, size)
        x = resize.interpolate(b, x, 2 + k, positions, weights, op)
    return x


def _group_norm(b, x, weight, bias, n, c, spatial, groups, eps):
    op = "native_group_norm"
    return (b.group_norm(x, int(groups), weight, bias, eps), _Unavailable(op, "mean"), _Unavailable(op, "rstd"))


def _batch_norm_batch_statistics(b, x, weight, bias, training, momentum, eps):
    """Batch norm with the batch's own statistics: how torch.export writes InstanceNorm (the (N, C, ...)
    input viewed as one sample of N * C channels). Only one sample is supported: the statistics of a
    channel then come from that sample alone, a group norm with one channel per group."""
    op = "_native_batch_norm_legit.no_stats"
    if x.shape[0] != 1:
        raise b.error(op, f"batch norm with batch statistics over {x.shape[0]} samples is not supported "
                          "(inference batch norm and instance norm are)")
    y = b.group_norm(x, x.shape[1], weight, bias, eps)
    return y, _Unavailable(op, "saved mean"), _Unavailable(op, "saved inverse std")


def _cumsum(b, x, dim, dtype=None, product=False):
    """Running sums (products: cumprod) in ``dtype``, else PyTorch's: bools (counts) and integers in int64."""
    op = "cumprod" if product else "cumsum"
    if dtype is not None:
        target = _known_dtype(dtype)
        if target is None:
            raise b.error(op, f"{op} in {dtype} is not supported (float32, float64, int32, int64)")
    else:
        target = np.dtype(np.int64) if x.dtype.kind in "bi" else x.dtype
    return b.cumsum(b.cast(x, target, op), int(dim), product)


def _elu(b, x, alpha=1.0, scale=1.0, input_scale=1.0):
    return b.elu(x, alpha, scale, input_scale)


def _bitwise(op: str):
    """``~m``, ``m & n``, ``m | n``, ``m ^ n``: logical ops of bool masks, bit operations of integers."""
    def build(b, x, y=None):
        if isinstance(x, Tensor) and x.dtype.kind == "i":
            return b.unary("bitnot", x) if op == "not" else b.binary(f"bit{op}", x, y)
        for t in (x, y):
            if isinstance(t, Tensor) and t.dtype != np.dtype(np.bool_):
                raise b.error(f"bitwise_{op}", f"{t.name} has dtype {t.dtype}; loom takes bitwise ops of bool masks "
                                               "and of integers alike")
        if op == "not":
            return b.logical_not(x)
        if not isinstance(y, Tensor):
            raise b.error(f"bitwise_{op}", f"a bool mask with the scalar {y!r} is not supported")
        return b.logical(op, x, y)
    return build


def _arange(b, start, end=None, step=1, dtype=None, **_placement):
    """torch.arange in forward (static bounds): a constant of the model."""
    if end is None:
        start, end = 0, start
    target = _known_dtype(dtype) if dtype is not None else None
    values = np.arange(start, end, step)
    if target is None:  # torch's default: int64 for integer bounds, else float32
        target = np.dtype(np.int64) if values.dtype.kind in "iu" else np.dtype(np.float32)
    return b.constant("arange", values.astype(target))


def _index(b, x, indices):
    """``x[..., idx, ...]`` with one constant index tensor (torch.export's form of 1-d nearest upsampling,
    ``x[:, :, (arange(2L) * 0.5).long()]``, and of ``x[:, [0, 2]]``); a computed index is an embedding."""
    axes = [k for k, t in enumerate(indices) if t is not None]
    if len(axes) > 1:
        return _index_axes(b, x, indices, axes)
    (axis,), positions = axes, indices[axes[0]]
    if b.is_constant(positions):
        return b.take(x, b.value(positions), axis, "index")
    if axis == 0 and b.is_constant(x) and len(x.shape) == 2 and x.dtype.kind == "f":
        return b.embedding(x, positions)
    return b.take_positions(x, positions, axis, True, "index")  # (torch's negative indices count from the end)


def _index_axes(b, x, indices, axes):
    """``x[:, rows, cols]`` with constant index tensors on adjacent axes (torch.export's bicubic interpolation): the
    indices broadcast together, become positions in the view that merges those axes, and one take gathers them."""
    if axes != list(range(axes[0], axes[-1] + 1)) or not all(b.is_constant(indices[a]) for a in axes):
        raise b.error("index", "several indexed axes must be adjacent and their indices constants")
    sizes = [x.shape[a] for a in axes]
    values = np.broadcast_arrays(*(b.value(indices[a]) for a in axes))
    for v, size in zip(values, sizes):
        if v.min() < -size or v.max() >= size:
            raise b.error("index", f"indices {int(v.min())}..{int(v.max())} are out of range for an axis of {size}")
    flat = np.ravel_multi_index([v % size for v, size in zip(values, sizes)], sizes)
    lead, tail = x.shape[:axes[0]], x.shape[axes[-1] + 1:]
    merged = b.view(x, (*lead, math.prod(sizes), *tail))
    return b.view(b.take(merged, flat.reshape(-1), len(lead), "index"), (*lead, *flat.shape, *tail))


def _isinf(b, x):
    return b.compare("eq", b.unary("abs", x), float("inf"))


def _isfinite(b, x):
    return b.compare("lt", b.unary("abs", x), float("inf"))  # false for NaN and +-inf


def _leaky_relu(b, x, negative_slope=0.01):
    return b.leaky_relu(x, float(negative_slope))


def _tensor_scalar_pow(b, x, exponent):
    return b.binary("pow", x, float(exponent))


def _vector_norm(b, x, ord=2, dim=None, keepdim=False, dtype=None):
    """torch.linalg.vector_norm, and F.normalize's norm (it divides by clamp_min(norm, eps))."""
    if dtype is not None and _known_dtype(dtype) != x.dtype:
        raise b.error("linalg_vector_norm", f"norms in {dtype} of {x.dtype} tensors are not supported")
    return vector_norm(b, x, float(ord), None if dim is None else list(dim), bool(keepdim), "linalg_vector_norm")


def _arg_reduce(op: str):
    return lambda b, x, dim=None, keepdim=False: b.arg_reduce(op, x, None if dim is None else int(dim), bool(keepdim))


def _index_select(b, x, dim, index):
    """x's positions ``index`` along ``dim`` (torch.roll arrives as an index_select of (arange + n) mod size)."""
    if not b.is_constant(index):
        return b.take_positions(x, index, int(dim), False, "index_select")
    return b.take(x, b.value(index).reshape(-1), int(dim), "index_select")




ATEN_OPS: dict[str, Callable] = {
    "convolution.default": _convolution,
    "_native_batch_norm_legit_no_training.default": _batch_norm_inference,
    "native_layer_norm.default": _layer_norm, "native_group_norm.default": _group_norm,
    "_native_batch_norm_legit.no_stats": _batch_norm_batch_statistics,
    "addmm.default": _addmm,
    "mm.default": lambda b, x, y: b.matmul(x, y),
    "bmm.default": lambda b, x, y: b.batch_matmul(x, y),
    "add.Tensor": _binary("add"), "sub.Tensor": _binary("sub"), "mul.Tensor": _binary("mul"),
    "div.Tensor": _binary("div"), "div.Tensor_mode": _binary("div"),
    "add.Scalar": _binary("add"), "sub.Scalar": _binary("sub"), "mul.Scalar": _binary("mul"),
    "div.Scalar": _binary("div"), "rsub.Scalar": _reverse_sub, "rsub.Tensor": _reverse_sub,
    "maximum.default": lambda b, x, y: b.binary("max", x, y),
    "minimum.default": lambda b, x, y: b.binary("min", x, y),
    "pow.Tensor_Scalar": _tensor_scalar_pow,
    "pow.Scalar": lambda b, base, x: b.binary("pow", float(base), x),
    **{f"{op}.{form}": _compare(op) for op in COMPARE_OPS for form in ("Scalar", "Tensor")},
    "where.self": lambda b, cond, x, y: b.select(cond, x, y), "scalar_tensor.default": _scalar_tensor,
    "logical_not.default": lambda b, x: b.logical_not(x),
    "isnan.default": lambda b, x: b.compare("ne", x, x), "isinf.default": _isinf, "isfinite.default": _isfinite,
    **{f"logical_{op}.default": (lambda op: lambda b, x, y: b.logical(op, x, y))(op) for op in LOGICAL_OPS},
    "bitwise_not.default": _bitwise("not"),
    **{f"bitwise_{op}.{form}": _bitwise(op) for op in LOGICAL_OPS for form in ("Tensor", "Scalar")},
    **{f"{name}.{form}": (lambda op: lambda b, x, y: b.binary(op, x, y))(op) for form in ("Tensor", "Scalar")
       for name, op in (("__lshift__", "shl"), ("__rshift__", "shr"), ("bitwise_left_shift", "shl"),
                        ("bitwise_right_shift", "shr"))},
    "pow.Tensor_Tensor": lambda b, x, y: b.binary("pow", x, y),
    "clamp.default": _clamp, "clamp.Tensor": _clamp, "hardtanh.default": _clamp,
    "sign.default": lambda b, x: b.sign(x), "flip.default": lambda b, x, dims: b.flip(x, dims), "leaky_relu.default": _leaky_relu,
    "elu.default": _elu, "log1p.default": _unary("log1p"), "expm1.default": _unary("expm1"),
    "sin.default": _unary("sin"), "cos.default": _unary("cos"), **{f"{op}.default": _unary(op) for op in TRIG_OPS},
    "hardswish.default": lambda b, x: b.hardswish(x), "hardsigmoid.default": lambda b, x: b.hard_sigmoid(x),
    "relu.default": _unary("relu"), "gelu.default": _gelu, "tanh.default": _unary("tanh"),
    "sigmoid.default": _unary("sigmoid"), "exp.default": _unary("exp"), "log.default": _unary("log"),
    "sqrt.default": _unary("sqrt"), "rsqrt.default": _unary("rsqrt"), "neg.default": _unary("neg"),
    "abs.default": _unary("abs"), "erf.default": _unary("erf"), "reciprocal.default": _unary("reciprocal"),
    "_softmax.default": _softmax(False), "_log_softmax.default": _softmax(True),
    "cumsum.default": _cumsum, "cumprod.default": lambda b, x, dim, dtype=None: _cumsum(b, x, dim, dtype, True),
    "linalg_vector_norm.default": _vector_norm, "argmax.default": _arg_reduce("argmax"),
    "argmin.default": _arg_reduce("argmin"), "index_select.default": _index_select,
    **{f"{op}.{form}": _binary(kind) for op, kind in (("fmod", "fmod"), ("remainder", "mod"))
       for form in ("Scalar", "Tensor")},
    **{f"{op}.default": _unary(op) for op in ("floor", "ceil", "round", "trunc")},
    "roll.default": lambda b, x, shifts, dims=(): roll(b, x, shifts, dims),
    "mean.dim": _reduce("mean"), "mean.default": _reduce("mean"), "sum.default": _reduce("sum"), "sum.dim_IntList": _reduce("sum"), "amax.default": _reduce("max"),
    "amin.default": _reduce("min"), "prod.dim_int": _reduce("prod"), "prod.default": _reduce("prod"),
    **{f"{op}.{form}": _reduce(op) for op in ("any", "all") for form in ("default", "dim", "dims")},
    "max_pool2d_with_indices.default": _max_pool, "avg_pool2d.default": _avg_pool,
    "max_pool3d_with_indices.default": _max_pool3d, "avg_pool3d.default": _avg_pool3d,
    "_adaptive_avg_pool2d.default": lambda b, x, size: b.adaptive_avg_pool2d(x, _pair(size)),
    "adaptive_max_pool2d.default": lambda b, x, size: (b.adaptive_pool("max", x, _pair(size)),
                                                       _Unavailable("adaptive_max_pool2d", "indices")),
    "adaptive_max_pool1d.default": lambda b, x, size: (b.adaptive_pool("max", x, [int(list(size)[0])]),
                                                       _Unavailable("adaptive_max_pool1d", "indices")),
    "view.default": _view, "_unsafe_view.default": _view, "reshape.default": _view,
    "squeeze.dims": _squeeze, "squeeze.dim": _squeeze, "squeeze.default": _squeeze,
    "unsqueeze.default": _unsqueeze,
    "permute.default": lambda b, x, perm: b.transpose(x, perm),
    "expand.default": lambda b, x, shape, implicit=False: b.expand(x, shape),
    "repeat.default": lambda b, x, repeats: b.repeat(x, repeats),
    "clone.default": lambda b, x, memory_format=None: b.copy(x),
    "alias.default": lambda b, x: b.copy(x),
    "full.default": _full, "full_like.default": _full_like, "_to_copy.default": _to_copy, "_assert_tensor_metadata.default": _assert_metadata,
    "slice.Tensor": _slice, "select.int": _select, "split_with_sizes.default": _split_with_sizes,
    "upsample_nearest2d.vec": _upsample_nearest_vec, "upsample_nearest2d.default": _upsample_nearest,
    "upsample_nearest1d.vec": _upsample_nearest_vec, "upsample_nearest1d.default": _upsample_nearest,
    **{f"upsample_{kind}.vec": _upsample_linear for kind in ("bilinear2d", "linear1d")},
    **{f"upsample_{kind}.default": _upsample_linear_sizes for kind in ("bilinear2d", "linear1d")},
    "arange.default": _arange, "arange.start": _arange, "arange.start_step": _arange, "index.Tensor": _index,
    "cat.default": _cat, "constant_pad_nd.default": _constant_pad,
    "embedding.default": _embedding, "gather.default": _gather, "topk.default": _topk, "sort.default": _sort,
    "sort.stable": lambda b, x, stable=None, dim=-1, descending=False: _sort(b, x, dim, descending),
    "_cdist_forward.default": _cdist, "bucketize.Tensor": _bucketize,
    "kthvalue.default": _kthvalue, "median.dim": _median, "median.default": _median, "var.correction": _var,
    "scatter.src": _scatter("none"), "scatter.value": _scatter("none"), "scatter_add.default": _scatter("add"),
    "scatter_reduce.two": _scatter("none"),
    "getitem": lambda b, values, index: values[index],
    **{f"quantized_decomposed.{name}.default": getattr(torch_quant, name) for name in (
        "quantize_per_tensor", "dequantize_per_tensor", "quantize_per_channel", "dequantize_per_channel")},
    "fake_quantize_per_tensor_affine_cachemask.default": lambda b, *args: (
        torch_quant.fake_quantize_per_tensor(b, *args), _Unavailable("fake_quantize_per_tensor_affine", "mask")),
    "fake_quantize_per_channel_affine_cachemask.default": lambda b, *args: (
        torch_quant.fake_quantize_per_channel(b, *args), _Unavailable("fake_quantize_per_channel_affine", "mask")),
}
