"""Element-wise multiply accelerator (elementwise.json): C[i, j] += A[i, j] * B[i, j] on 4x16 tiles.

Opcode bits: 1 read the A tile, 2 read the B tile, 4 compute (C = A * B inside the accelerator),
8 send C (the host adds it to its output) and clear it. The same accelerator in C:
models/elementwise.c."""

import numpy as np

from loom.examples.accelerators.models.opcode_bits import OpcodeBitsModel


class ElementWise(OpcodeBitsModel):
    kernel = {"indexing_maps": ["(i, j) -> (i, j)", "(i, j) -> (i, j)", "(i, j) -> (i, j)"],
              "iterator_types": ["parallel", "parallel"], "body": "mul-add"}
    COMPUTE, SEND = 4, 8

    def __init__(self, accelerator):
        super().__init__(accelerator)
        shape = (accelerator.tiles["i"].size, accelerator.tiles["j"].size)
        self.tiles = {"A": shape, "B": shape}
        self.out = np.zeros(shape, self.dtype)

    def compute(self):
        self.out[...] = self.loaded["A"] * self.loaded["B"]
        self.macs += self.out.size
