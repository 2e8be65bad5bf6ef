"""Compile and run: the objects users call on numpy arrays.

``@kernel`` (``Kernel``) traces a Python kernel with ``loom.frontends.kernel``,
lowers it with ``loom.passes`` and runs it through ``loom.backends.c``;
``compile_cpu`` / ``run_cpu`` do the same for an image pipeline written with
``loom.frontends.pipeline``. This layer sits above frontends, passes and backends.
"""

from loom.jit.kernel import Kernel, kernel
from loom.jit.pipeline import CpuProgram, compile_cpu, run_cpu
from loom.jit.realize import realize

__all__ = ["Kernel", "kernel", "CpuProgram", "compile_cpu", "run_cpu", "realize"]
