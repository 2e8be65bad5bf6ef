"""``loom.math``: math functions usable inside ``@loom.kernel`` functions (``loom.math.exp(x)``).

Python's own ``math`` module works inside kernels too; see :mod:`loom.frontends.kernel.math`.
"""

from loom.frontends.kernel.math import *  # noqa: F401,F403
