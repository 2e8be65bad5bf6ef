"""Accelerator host drivers: compile a linalg kernel against an accelerator description and run it.

``compile_driver`` (``compile.py``) runs the AXI4MLIR pass pipeline, emits C and
links it with the DMA runtime; ``autotune.py`` chooses flow, loop order and tiles
for ``flow="auto"``. This layer sits above the description layer (``loom.accel``),
the passes and the backends.
"""

from loom.driver.compile import AccelDriver, DriverSummary, RunStats, Transfers, compile_driver

__all__ = ["AccelDriver", "DriverSummary", "RunStats", "Transfers", "compile_driver"]
