"""The ONNX backend test models shipped inside the onnx wheel as an import conformance set.

``onnx/backend/test/data/{pytorch-converted,pytorch-operator,simple}/*/model.onnx`` with
``test_data_set_0/input_*.pb`` / ``output_*.pb``. The per-op ``node/`` cases are not shipped as files in
onnx 1.23: ``node_cases(modules)`` generates those of the named case modules in memory (one module per op,
e.g. ``"conv"``; ``maxpool`` and ``averagepool`` take ~15 s each to compute their expected outputs).
``run_case`` / ``run_model`` import and compile a model with loom and compare it with the expected
outputs; an import refusal must be a ``LoomError`` naming the op (or the unsupported input) and counts
as refused, never as a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loom.core.compare import relative_difference
from loom.errors import LoomError

SUITES = ("pytorch-converted", "pytorch-operator", "simple")


def data_dir() -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data"


def backend_cases(suites=SUITES) -> list[Path]:
    root = data_dir()
    return sorted(p for s in suites for p in (root / s).glob("*") if (p / "model.onnx").is_file())


@dataclass
class CaseResult:
    name: str
    status: str  # "pass", "refused" (LoomError at import), "mismatch", "error" (anything else)
    message: str = ""
    max_error: float = 0.0


def _read_pb(path: Path):
    import onnx
    from onnx import numpy_helper

    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| over the finite values; infinite when the shapes, the NaN positions or
    the infinities differ (a NaN difference would pass any ``>`` tolerance test)."""
    return relative_difference(got, want)


NODE_MODULES = ("abs", "add", "and_", "argmax", "argmin", "averagepool", "cast", "castlike", "ceil", "celu", "concat",
                "conv", "convtranspose", "cos", "depthtospace", "div", "einsum", "elu", "equal", "erf", "exp", "expand",
                "flatten", "floor", "gather", "gatherelements", "gelu", "gemm", "globalaveragepool", "greater", "gru",
                "isinf", "isnan", "layernormalization", "leakyrelu", "less", "log", "logsoftmax", "lpnormalization",
                "lstm", "matmul", "max", "maxpool", "mean", "min", "mish", "mod", "mul", "neg", "not_", "or_", "pad",
                "prelu", "rangeop", "reciprocal", "reduce_log_sum", "reduce_log_sum_exp", "reducel1", "reducel2",
                "reducemax", "reducemean", "reducemin", "reduceprod", "reducesum", "reducesumsquare", "relu", "reshape",
                "resize", "round", "scatter", "scatterelements", "selu", "shrink", "sigmoid", "sin", "size", "slice",
                "softmax", "softplus", "softsign", "spacetodepth", "sqrt", "squeeze", "sub", "sum", "tanh", "tile",
                "topk", "transpose", "trilu", "unsqueeze", "where", "xor",
                "quantizelinear", "dequantizelinear", "dynamicquantizelinear", "matmulinteger", "convinteger",
                "qlinearmatmul", "qlinearconv", "rnn",
                # ops imported all along whose case modules were not listed
                "batch_normalization", "clip", "constant", "constantofshape", "cumsum", "dropout", "globalmaxpool",
                "greater_or_equal", "hardsigmoid", "hardswish", "identity", "instance_normalization", "less_or_equal",
                "pow", "shape", "sign", "split", "upsample",
                "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "thresholdedrelu", "swish",
                "hardmax", "rmsnormalization", "meanvariancenormalization", "groupnormalization", "lppool", "eyelike",
                "attention", "rotaryembedding", "bitshift", "bitwiseand", "bitwiseor", "bitwisexor", "bitwisenot",
                "gathernd", "scatternd", "onehot", "if_", "loop")


def node_cases(modules=NODE_MODULES) -> list:
    """onnx's generated per-op test cases (``onnx.backend.test.case.TestCase``) of the named modules."""
    import importlib

    from onnx.backend.test.case import node

    found = []
    for name in modules:
        before = len(node._NodeTestCases)
        module = importlib.import_module(f"onnx.backend.test.case.node.{name}")
        if len(node._NodeTestCases) == before:  # imported earlier in this process: find its cases again
            # ("and_": a module named after a Python keyword)
            found += [c for c in node._NodeTestCases if c.model.graph.node[0].op_type.lower() == name.rstrip("_")]
        found += node._NodeTestCases[before:]
        del module
    return found


def run_node_case(case, tolerance: float = 1e-4) -> CaseResult:
    """Compared within ``tolerance`` or the case's own ``rtol`` if larger (some expected outputs are
    written with 4 digits, e.g. test_averagepool_2d_ceil_last_window_starts_on_pad: rtol 1e-3)."""
    inputs, expected = case.data_sets[0]
    try:
        expected = [_array(e) for e in expected]
    except ValueError:  # a sequence output (the Loop / If / Sequence* cases): no tensor loom could give
        return run_model(case.name, case.model, [_array(i) for i in inputs], None, max(tolerance, case.rtol))
    return run_model(case.name, case.model, [_array(i) for i in inputs], expected, max(tolerance, case.rtol))


def _array(value) -> np.ndarray:
    """A case's input or output: an array, or a TensorProto (CastLike's cases keep theirs as protos)."""
    from onnx import TensorProto, numpy_helper

    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)


def _unit(expected: np.ndarray, tolerance: float) -> float:
    """The relative error allowed for an output: ``tolerance``, or one unit of a bfloat16 / float8 output's format
    (loom computes a node in float32 and rounds once where the reference rounds after each of its numpy steps:
    bfloat16 attention differs by one unit)."""
    from loom.models.bit_floats import FORMATS

    fmt = FORMATS.get(expected.dtype)
    return tolerance if fmt is None else max(tolerance, 2.0 ** -fmt.man_bits)


def run_case(case: Path, tolerance: float = 1e-4) -> CaseResult:
    data = case / "test_data_set_0"
    inputs = [_read_pb(p) for p in sorted(data.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    expected = [_read_pb(p) for p in sorted(data.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    return run_model(case.name, case / "model.onnx", inputs, expected, tolerance)


def run_model(name: str, source, inputs, expected, tolerance: float = 1e-4) -> CaseResult:
    from loom.models.api import compile as compile_model

    try:  # the inputs are the examples: they fix dynamic dims and shape-like inputs' values, as a user's would
        model = compile_model(source, inputs)
    except LoomError as error:
        return CaseResult(name, "refused", str(error))
    except Exception as error:  # a crash inside loom: reported, never hidden
        return CaseResult(name, "error", f"compile: {type(error).__name__}: {error}")
    try:
        got = model(*inputs)
    except LoomError as error:
        return CaseResult(name, "error", f"run: {error.message}")
    got = list(got) if isinstance(got, tuple) else [got]
    if expected is None:
        return CaseResult(name, "error", "the expected outputs are sequences, loom gave tensors")
    if len(got) != len(expected):
        return CaseResult(name, "mismatch", f"{len(got)} outputs, expected {len(expected)}")
    worst = max((relative_error(g, e) / _unit(e, tolerance) * tolerance for g, e in zip(got, expected)), default=0.0)
    if worst > tolerance:
        return CaseResult(name, "mismatch", f"relative error {worst:.2e}", worst)
    return CaseResult(name, "pass", max_error=worst)
