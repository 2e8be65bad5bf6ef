"""``loom.ekl``: the EVEREST kernel language (EKL) front door.

    module = loom.ekl.load("kernel.ekl")   # or EKL source text
    module.NAME(*arrays)                   # compiled C on numpy arrays; out& arrays are written

See ``loom.jit.ekl`` (compilation) and ``loom.frontends.ekl`` (language).
"""

from loom.jit.ekl import STAGES, EklKernel, EklModule, load

__all__ = ["load", "EklModule", "EklKernel", "STAGES"]
