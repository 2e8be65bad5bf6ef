"""What the example Python models share: an opcode word whose bits say which operand tiles follow
(in bit order) and whether to compute and to send the output; the operand words themselves."""

from __future__ import annotations

from math import prod

import numpy as np

DTYPES = {"i32": np.int32, "f32": np.float32}


class OpcodeBitsModel:
    """Reads ``opcode, [tile words of each operand whose bit is set]`` and calls ``compute`` / ``send``.

    A subclass sets ``tiles`` (operand name -> tile shape, in bit order), ``COMPUTE`` and ``SEND``
    (bit values) and implements ``compute()`` (into ``self.out``) and the output layout."""

    tiles: dict[str, tuple[int, ...]] = {}
    COMPUTE = 0
    SEND = 0

    def __init__(self, accelerator):
        self.dtype = DTYPES[accelerator.data_type]
        self.loaded: dict[str, np.ndarray] = {}
        self.macs = 0
        self.name = accelerator.name

    def consume(self, words: np.ndarray):
        produced = []
        values = words.view(self.dtype)
        i, n = 0, len(words)
        while i < n:
            opcode = int(words[i])
            i += 1
            known = (1 << len(self.tiles)) - 1 | self.COMPUTE | self.SEND
            if opcode == 0 or opcode & ~known:
                raise ValueError(f"{self.name}: unknown opcode {opcode} (bits: {known:#x})")
            for bit, (name, shape) in enumerate(self.tiles.items()):
                if opcode & (1 << bit):
                    size = prod(shape)
                    if i + size > n:
                        raise ValueError(f"{self.name}: opcode {opcode} needs {size} words of {name}, "
                                         f"the send has {n - i} left")
                    self.loaded[name] = values[i:i + size].reshape(shape)
                    i += size
            if opcode & self.COMPUTE:
                missing = [t for t in self.tiles if t not in self.loaded]
                if missing:
                    raise ValueError(f"{self.name}: compute before {', '.join(missing)} was loaded")
                self.compute()
            if opcode & self.SEND:
                produced.append(self.out.reshape(-1).copy())
                self.out[...] = 0
        return np.concatenate(produced) if produced else None

    def compute(self) -> None:
        raise NotImplementedError
