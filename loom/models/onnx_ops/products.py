"""Matrix products: MatMul, Gemm (transposes, alpha, beta) and Einsum (a composition)."""

from __future__ import annotations

from loom.models.composite import einsum
from loom.models.onnx_ops.node import Node, text


def _gemm(n: Node):
    a, bm, c = n.tensor(0), n.tensor(1), n.optional(2)
    if n.attrs.get("transA", 0):
        a = n.b.transpose(a, (1, 0))
    if n.attrs.get("transB", 0):
        bm = n.b.transpose(bm, (1, 0))
    return n.b.matmul(a, bm, c, alpha=float(n.attrs.get("alpha", 1.0)), beta=float(n.attrs.get("beta", 1.0)))


OPS = {
    "Gemm": _gemm, "MatMul": lambda n: n.b.matmul(n.tensor(0), n.tensor(1)),
    "Einsum": lambda n: einsum(n.b, text(n.attrs["equation"]), [n.tensor(k) for k in range(len(n.inputs))], "Einsum"),
}
