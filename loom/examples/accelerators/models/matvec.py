"""Matrix-vector accelerator (matvec.json): y[m] += A[m, k] x[k] on 8x8 tiles.

Opcode bits: 1 read the A tile (8 x 8 words), 2 read the x tile (8 words), 4 compute
(y += A x inside the accelerator), 8 send y (8 words) and clear it."""

import numpy as np

from loom.examples.accelerators.models.opcode_bits import OpcodeBitsModel


class MatVec(OpcodeBitsModel):
    kernel = "matvec"
    COMPUTE, SEND = 4, 8

    def __init__(self, accelerator):
        super().__init__(accelerator)
        tm, tk = accelerator.tiles["m"].size, accelerator.tiles["k"].size
        self.tiles = {"A": (tm, tk), "x": (tk,)}
        self.out = np.zeros(tm, self.dtype)

    def compute(self):
        self.out += self.loaded["A"] @ self.loaded["x"]
        self.macs += self.loaded["A"].size
