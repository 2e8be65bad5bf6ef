"""loom's own xDSL dialects.

- ``accel`` (``loom.dialects.accel``): host-side accelerator transactions (AXI4MLIR).
- ``ubuf`` (``loom.dialects.ubuf``): unified buffers of streaming designs (ports with
  iteration domain, access map and cycle schedule; kernels; constants).

Import the dialect modules directly (``from loom.dialects.accel import Accel``);
nothing is imported here so that ``import loom.dialects`` stays cheap.
"""
