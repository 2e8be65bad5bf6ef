"""One entry point over every flow: ``loom build`` and its Python API, and variant bundles (climbs).

    from loom.build import build
    result = build("kernels.py", "generated", target="all", threads=4)
    result.index["artifacts"]        # every file written, with its stage and checksum

See ``docs/build.md`` for the output folder's layout.
"""

from loom.build.api import BuildResult, build
from loom.build.folder import read_index
from loom.build.inputs import KINDS, classify
from loom.build.options import TARGETS, BuildOptions

__all__ = ["build", "BuildResult", "BuildOptions", "TARGETS", "KINDS", "classify", "read_index"]
