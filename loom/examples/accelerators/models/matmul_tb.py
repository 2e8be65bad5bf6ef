"""Transposed-B MatMul accelerator (matmul_tb.json): C[m, n] += A[m, k] B[n, k] on 4x4x4 tiles,
output stationary. Opcode bits: 1 read A (M x K), 2 read B (N x K, rows of B are columns of the
product), 4 compute (C += A B^T), 8 send C then clear it."""

import numpy as np

from loom.examples.accelerators.models.opcode_bits import OpcodeBitsModel


class MatmulTB(OpcodeBitsModel):
    kernel = {"indexing_maps": ["(m, n, k) -> (m, k)", "(m, n, k) -> (n, k)", "(m, n, k) -> (m, n)"],
              "iterator_types": ["parallel", "parallel", "reduction"], "body": "mul-add"}
    COMPUTE, SEND = 4, 8

    def __init__(self, accelerator):
        super().__init__(accelerator)
        tm, tn, tk = (accelerator.tiles[d].size for d in ("m", "n", "k"))
        self.tiles = {"A": (tm, tk), "B": (tn, tk)}
        self.out = np.zeros((tm, tn), self.dtype)

    def compute(self):
        a, b = self.loaded["A"], self.loaded["B"]
        self.out += a @ b.T
        self.macs += a.shape[0] * a.shape[1] * b.shape[0]
