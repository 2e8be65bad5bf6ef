"""Compile a lowered pipeline with loom's C backend and run it on numpy images.

``run_cpu(output, inputs, size)`` has ``evaluate``'s signature and returns the
same array (dims reversed, the language's dtype); ``compile_cpu`` keeps the
compiled program to run it on many inputs of the same shapes.
Arrays cross the C boundary as their storage type (u8 as int8, u16 as int16,
u32 as int32, u64 as int64, bool as int8): MLIR integers are signless, numpy's are not.
"""

from __future__ import annotations

import numpy as np

from loom.backends.c import compile_module
from loom.errors import LoomError
from loom.passes.recipes import lower_to_c

from loom.frontends.pipeline.cpu_lower import CpuLowering
from loom.frontends.pipeline.func import Func, with_bound_inputs
from loom.frontends.pipeline.graph import FuncGraph
from loom.frontends.pipeline.param import param_values, refuse_unknown_inputs
from loom.frontends.pipeline.types import Bool, Type

_STORAGE = {"u8": np.int8, "u16": np.int16, "u32": np.int32, "u64": np.int64, "i8": np.int8, "i16": np.int16,
            "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64, "bf16": np.float32, "bool": np.int8}


def storage_dtype(t: Type) -> np.dtype:
    return np.dtype(_STORAGE[t.name])


class CpuProgram:
    """A pipeline compiled for fixed input shapes and output size."""

    def __init__(self, output: Func, input_shapes: dict, size, origin=None, sanitize: bool | None = None,
                 name: str = "pipeline"):
        lowering = CpuLowering(output, input_shapes, size, origin, name)
        self.output = output
        self.params = lowering.pipe.params
        self.scalar_params = lowering.scalar_params
        self.input_shapes = lowering.input_shapes
        self.requested = lowering.requested
        self.module = lowering.build()
        self.out_region = [tuple(map(int, r)) for r in lowering.global_regions[id(output)]]  # after build
        self.lowered = lower_to_c(self.module)
        self.function = compile_module(self.lowered, sanitize=sanitize).function(name)
        # what every call needs, worked out once (a call on a small image is mostly this bookkeeping)
        self._bound = any(getattr(p, "bound", None) is not None for p in self.params)
        self._known = {p.name for p in self.params} | {p.name for p in self.scalar_params}
        self._images = [(p, p.type.dtype, self.input_shapes[p.name], storage_dtype(p.type)) for p in self.params]
        self._scalars = [(p, storage_dtype(p.type), p.type == Bool) for p in self.scalar_params]
        t = self.output.type
        self._out = (tuple(hi - lo + 1 for lo, hi in reversed(self.out_region)), storage_dtype(t),
                     np.bool_ if t == Bool else t.dtype)
        crop_to = [(lo - m, hi - m + 1) for (lo, hi), (m, _) in zip(self.requested, self.out_region)]
        whole = all(a == 0 and b == n for (a, b), n in zip(crop_to, reversed(self._out[0])))
        self._crop = None if whole else tuple(slice(a, b) for a, b in reversed(crop_to))

    def __call__(self, inputs: dict) -> np.ndarray:
        if self._bound:
            inputs = with_bound_inputs(self.params, inputs)
        if any(k not in self._known for k in inputs):
            refuse_unknown_inputs(inputs, self.params, self.scalar_params)
        args = []
        for p, dtype, shape, storage in self._images:
            if p.name not in inputs:
                raise LoomError("no input array given", where=f"ImageParam '{p.name}'")
            arr = inputs[p.name]
            if not isinstance(arr, np.ndarray):
                arr = np.asarray(arr)
            if arr.dtype != dtype or arr.shape != shape:
                raise LoomError(f"expected {p.type.name} array of shape {shape}, got {arr.dtype} {arr.shape}",
                                where=f"ImageParam '{p.name}'")
            if not (arr.flags.c_contiguous and arr.flags.aligned):  # C loads an element at its own alignment
                arr = np.require(arr, requirements="CA")  # ascontiguousarray makes 0-d 1-d
            args.append(arr.view(storage))
        for p, storage, is_bool in self._scalars:
            if p.name in inputs:
                v = p.check(inputs[p.name])
            elif p.value is not None:
                v = p.value
            else:
                param_values([p], inputs)  # its error
            args.append(bool(v) if is_bool else v.view(storage).item())
        shape, storage, dtype = self._out
        # not zeroed: the output's pure definition writes every point of its region (zeroing it was a serial
        # 0.2 ms of a 1 ms parallel blur; test_cpu_output_buffer.py checks the premise)
        out = np.empty(shape, dtype=storage)
        self.function(*args, out)
        out = out.view(dtype)
        if self._crop is None:
            return out
        return np.ascontiguousarray(out[self._crop])


def compile_cpu(output: Func, input_shapes: dict, size, origin=None, sanitize: bool | None = None) -> CpuProgram:
    """Lower ``output``'s pipeline through loom's IR and compile it with the C backend."""
    return CpuProgram(output, {k: tuple(v) for k, v in input_shapes.items()}, size, origin, sanitize)


def run_cpu(output: Func, inputs: dict, size, origin=None, sanitize: bool | None = None) -> np.ndarray:
    """Like ``evaluate``, but through loom's IR and generated C."""
    images = FuncGraph(output).params
    inputs = with_bound_inputs(images, inputs)
    # shapes by ImageParam name, not by rank: a 0-d image's array is shaped () like a Param's scalar
    names = {p.name for p in images}
    shapes = {k: np.asarray(v).shape for k, v in inputs.items() if k in names}
    return compile_cpu(output, shapes, size, origin, sanitize)(inputs)
