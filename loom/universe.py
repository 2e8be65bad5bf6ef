"""loom's plugin for xDSL tools (``xdsl-opt``, ``xdsl-run``): its dialects and passes.

Declared in pyproject.toml as the ``xdsl.universe`` entry point ``loom``; both
tables are the ones loom itself uses, loaded lazily.
"""

from xdsl.universe import Universe

from loom.dialects import LOOM_DIALECTS
from loom.passes import BUILTIN_PASSES, LOOM_PASSES

LOOM_UNIVERSE = Universe(all_dialects=dict(LOOM_DIALECTS), all_passes={name: LOOM_PASSES[name] for name in BUILTIN_PASSES})
