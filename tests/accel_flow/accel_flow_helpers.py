"""Shared builders for the accelerator-flow tests: kernels, arrays, descriptions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.dialects.builtin import DYNAMIC_INDEX, AffineMapAttr, MemRefType, ModuleOp, i32
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineDimExpr, AffineMap

from loom.frontends.kernel import linalg as L

EXAMPLES = Path(__file__).resolve().parents[2] / "loom" / "examples" / "accelerators"
D = DYNAMIC_INDEX


def desc(name: str) -> str:
    return str(EXAMPLES / name)


def func_module(name, types, body) -> ModuleOp:
    f = func.FuncOp(name, (types, []))
    with ImplicitBuilder(f.body) as args:
        body(*args)
        func.ReturnOp()
    return ModuleOp([f])


def matmul_module(elem=i32, shape=(D, D, D)) -> ModuleOp:
    m, n, k = shape
    types = [MemRefType(elem, [m, k]), MemRefType(elem, [k, n]), MemRefType(elem, [m, n])]
    return func_module("matmul", types, L.matmul)


def conv_module(stride: int, elem=i32) -> ModuleOp:
    types = [MemRefType(elem, [D] * 4)] * 3
    return func_module("conv", types, lambda i, w, o: L.conv_2d_nchw_fchw(i, w, o, strides=(stride, stride)))


def generic_matmul_module(a_map, body_kind="mul-add", elem=i32) -> ModuleOp:
    """A hand-written linalg.generic: C[m, n] (op)= A[a_map] * B[k, n]."""
    dm, dn, dk = (AffineDimExpr(i) for i in range(3))
    a_results = {"mk": (dm, dk), "km": (dk, dm)}[a_map]
    maps = [AffineMap(3, 0, a_results), AffineMap(3, 0, (dk, dn)), AffineMap(3, 0, (dm, dn))]

    def body(A, B, C):
        block = Block(arg_types=[elem, elem, elem])
        with ImplicitBuilder(block):
            x, y, acc = block.args
            prod = arith.MuliOp(x, y).result
            out = arith.AddiOp(prod, acc).result if body_kind == "mul-add" else arith.AddiOp(x, acc).result
            YieldOp(out)
        from xdsl.dialects.linalg.attrs import IteratorTypeAttr as It
        GenericOp([A, B], [C], Region(block), [AffineMapAttr(m) for m in maps],
                         [It.parallel(), It.parallel(), It.reduction()])

    return func_module("gen", [MemRefType(elem, [D, D])] * 3, body)


def f32_description(tmp_dir: Path, source: str) -> str:
    """A copy of an example description with every accelerator switched to f32."""
    data = json.loads((EXAMPLES / source).read_text())
    data["cpu"] = json.loads((EXAMPLES / "pynq-z2.json").read_text())["cpu"]
    for acc in data["accelerators"]:
        acc["data_type"] = "f32"
    path = tmp_dir / source.replace(".json", "_f32.json")
    path.write_text(json.dumps(data))
    return str(path)


def matmul_arrays(M, N, K, dtype=np.int32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(-8, 8, size=s).astype(dtype) for s in ((M, K), (K, N), (M, N))]


def matmul_reference(A, B, C) -> np.ndarray:
    """C + A.B in float64 (exact for these small integers)."""
    return C.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)


def conv_case(stride: int, seed: int = 3):
    """Seeded int32 arrays of a 2x3x9x9 input, 2 filters 3x3 at ``stride``, and the expected output
    (the initial output plus the convolution, by numpy sums over the windows): (I, W, O, want)."""
    rng = np.random.default_rng(seed)
    I = rng.integers(-4, 4, (2, 3, 9, 9)).astype(np.int32)  # noqa: E741
    W = rng.integers(-4, 4, (2, 3, 3, 3)).astype(np.int32)
    o = (9 - 3) // stride + 1
    O = rng.integers(-4, 4, (2, 2, o, o)).astype(np.int32)  # noqa: E741
    want = O.copy()
    for n in range(2):
        for f in range(2):
            for y in range(o):
                for x in range(o):
                    want[n, f, y, x] += np.sum(I[n, :, y * stride:y * stride + 3, x * stride:x * stride + 3] * W[f])
    return I, W, O, want
