"""Seeded inputs for a model run and the references a run is checked against, shared by
``loom model run`` and ``loom build`` of a model file.

Floats are drawn from [-1, 1), integers (token ids, indices) from [0, ``high``), bools from {False, True}.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

INTEGER_HIGH = 100  # the default upper bound (exclusive) of integer inputs
TOLERANCE = 1e-4  # relative error of a checked run: float32 layers
# float16 outputs: loom rounds a composite node (softmax, layer norm) once, onnx's reference after each numpy step
FLOAT16_TOLERANCE = 1e-3


def check_tolerance(outputs: Iterable[np.ndarray]) -> float:
    """The relative error a run's ``outputs`` may have against the reference."""
    return FLOAT16_TOLERANCE if any(np.asarray(y).dtype == np.float16 for y in outputs) else TOLERANCE


def seeded_inputs(specs: Iterable[tuple[tuple[int, ...], np.dtype]], rng: np.random.Generator,
                  high: int = INTEGER_HIGH) -> list[np.ndarray]:
    """One array per ``(shape, dtype)`` of ``specs``, drawn from ``rng`` in order."""
    out = []
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            out.append(rng.uniform(-1, 1, shape).astype(dtype))
        elif dtype.kind == "b":  # masks: about half set
            out.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            out.append(rng.integers(0, high, shape).astype(dtype))
    return out


def onnx_reference(path: Path) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """inputs -> the outputs of onnx.reference's evaluator on the model file."""
    def run(inputs):
        from onnx.reference import ReferenceEvaluator

        evaluator = ReferenceEvaluator(str(path))
        return [np.asarray(v) for v in evaluator.run(None, dict(zip(evaluator.input_names, inputs)))]
    return run


def torch_reference(module) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """inputs -> the outputs of a torch module (or an exported program's ``.module()``), no grad."""
    def run(inputs):
        import torch

        with torch.no_grad():  # copies: torch refuses arrays numpy marked read-only
            out = module(*[torch.from_numpy(np.array(a)) for a in inputs])
        return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]
    return run
