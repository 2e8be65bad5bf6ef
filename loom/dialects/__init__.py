"""loom's own xDSL dialects (``accel``: host-side accelerator transactions).

Import the dialect modules directly (``from loom.dialects.accel import Accel``);
nothing is imported here so that ``import loom.dialects`` stays cheap.
"""
