"""Batch MatMul accelerator (batch_matmul.json): C[b, m, n] += A[b, m, k] B[b, k, n] on
2x4x4x4 tiles (two matrices per tile), output stationary. Opcode bits: 1 read A, 2 read B,
4 compute (C += A B per batch entry), 8 send C then clear it."""

import numpy as np

from loom.examples.accelerators.models.opcode_bits import OpcodeBitsModel


class BatchMatmul(OpcodeBitsModel):
    kernel = "batch_matmul"
    COMPUTE, SEND = 4, 8

    def __init__(self, accelerator):
        super().__init__(accelerator)
        tb, tm, tn, tk = (accelerator.tiles[d].size for d in ("b", "m", "n", "k"))
        self.tiles = {"A": (tb, tm, tk), "B": (tb, tk, tn)}
        self.out = np.zeros((tb, tm, tn), self.dtype)

    def compute(self):
        a, b = self.loaded["A"], self.loaded["B"]
        self.out += a @ b
        self.macs += a.size * b.shape[2]
