"""``loom.ekl``: the EVEREST kernel language (EKL) front door.

    module = loom.ekl.load("kernel.ekl")   # or EKL source text
    module.NAME(*arrays)                   # compiled C on numpy arrays; out& arrays are written
    loom.ekl.load(..., accelerators=["my_f32_matmul.json"])   # contractions on matching accelerators (an
                                           # f32 kernel needs an f32 description: matmul_v4.json takes i32)
    loom.ekl.explore("kernel.ekl")         # f64 / f32 / bf16 / fixed point: errors vs f64, time

See ``loom.jit.ekl`` (compilation), ``loom.offload.ekl`` (accelerators) and
``loom.frontends.ekl`` (language).
"""

from loom.jit.ekl import STAGES, EklKernel, EklModule
from loom.jit.ekl import load as _load_cpu
from loom.jit.ekl_explore import explore


def load(text_or_path, *, types: dict[str, str] | None = None, factorized: bool = True,
         accelerators=None) -> EklModule:
    """Parse and elaborate EKL source (a string or a ``.ekl`` path). ``types`` rebinds type aliases
    (``{"REAL": "f32"}``). ``accelerators``: description paths (or ``(path, accelerator[, flow])``);
    when given, every kernel runs its matching contractions through their drivers
    (``kernel.placement()`` says which step ran where)."""
    module = _load_cpu(text_or_path, types=types, factorized=factorized)
    if accelerators:
        from loom.offload.ekl import offload

        module = offload(module, accelerators)
    return module


__all__ = ["load", "explore", "EklModule", "EklKernel", "STAGES"]
