"""Halide-like algorithm and schedule language for image pipelines.

Algorithm: ``Func``, ``Var``, ``RDom`` (``where``), ``ImageParam``, ``Param``, expressions with
the types u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, bfloat16 (rules in ``types.py``), casts,
``select``, ``clamp``, ``min``, ``max``, ``abs``, float math (``mathfn.py``), ``lerp`` and the saturating
arithmetic (``intrinsics.py``), inline reductions
(``inline_reductions.py``), boundary conditions (``mirror.py``), ``rfactor`` (``rfactor.py``),
``Buffer`` (``buffer.py``). The Halide features supported: docs/pipelines.md.
Schedule: primitives on Funcs (``schedule.py``); the declarative layer (``IterLevel``,
``iteration_order``, ``create_memories``, ``output_rate``: ``declarative.py``) calls them. ``evaluate`` realises a
pipeline with numpy as the CPU reference; ``loom.jit.run_cpu`` (same signature) lowers the
scheduled pipeline to loop nests in loom's IR (``lower_pipeline``, ``cpu_*.py``)
and runs them through the C backend. ``recipes.py`` holds schedules shared by
many pipelines (``stream_through_accelerator``: the streaming-accelerator recipe).
"""

from .cpu_lower import lower_pipeline
from .evaluate import evaluate, realize_all
from .expr import (Expr, RDom, RVar, Var, absd, absolute, bf16, bfloat16, cast, clamp, f32, f64, i8, i16, i32, i64,
                   mux, saturating_cast, select, u8, u16, u32, u64)
from .intrinsics import lerp, saturating_add, saturating_sub
from .inline_reductions import argmax, argmin, maximum, minimum, product, sum  # noqa: A004
from .func import BoundaryFunc, Func, ImageParam, Stage, constant_exterior, repeat_edge
from .graph import FuncGraph, validate_schedules
from .param import Param
from .buffer import Buffer
from .tuples import Tuple
from .mirror import BoundaryConditions, mirror_image, mirror_interior, repeat_image
from .mathfn import (atan2, ceil, cos, exp, floor, is_finite, is_inf, is_nan, log, pow, round, sin,  # noqa: A004
                     sqrt, tan, tanh, trunc)
from .declarative import IterLevel
from .recipes import TileLoops, compute_in_tiles, schedule_app, stream_through_accelerator
from .schedule import LoopLevel, MemoryType, TailStrategy
from .types import BFloat16, Bool, Float32, Float64, Int8, Int16, Int32, Int64, Type, UInt8, UInt16, UInt32, UInt64

min = minimum  # noqa: A001  (Halide spelling; shadows the builtin only inside this namespace)
max = maximum  # noqa: A001
abs = absolute  # noqa: A001

__all__ = [
    "evaluate", "realize_all", "lower_pipeline", "Expr", "RDom", "RVar", "Var", "bf16", "bfloat16", "cast", "clamp", "f32",
    "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "select", "saturating_cast", "lerp", "saturating_add",
    "saturating_sub", "min", "max", "abs", "minimum", "maximum", "absolute",
    "Func", "ImageParam", "Stage", "BoundaryFunc", "repeat_edge", "constant_exterior", "FuncGraph",
    "validate_schedules", "MemoryType", "Type", "UInt8", "UInt16", "UInt32", "UInt64", "Int8", "Int16", "Int32",
    "Int64", "Float32", "Float64",
    "BFloat16", "Bool", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "pow", "atan2", "floor", "ceil",
    "round", "trunc", "sum", "product", "argmax", "argmin", "absd", "mux", "is_nan", "is_inf", "is_finite",
    "Param", "Buffer", "Tuple", "BoundaryConditions", "mirror_image", "mirror_interior", "repeat_image", "IterLevel", "LoopLevel", "TailStrategy", "TileLoops", "compute_in_tiles", "schedule_app", "stream_through_accelerator",
]
