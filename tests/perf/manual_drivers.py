"""The hand-written baseline drivers of ``benchmarks/manual``, for the tests.

The one way tests reach them: ``from tests.perf.manual_drivers import manual``.
``benchmarks/`` is not a package we can import by name (xDSL installs a top-level
``benchmarks`` package that would shadow it), so the folder is loaded from its
file location under a private module name, without touching ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

MANUAL_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "manual"
MODULE_NAME = "loom_benchmarks_manual"


def _load():
    if MODULE_NAME in sys.modules:
        return sys.modules[MODULE_NAME]
    spec = importlib.util.spec_from_file_location(MODULE_NAME, MANUAL_DIR / "__init__.py",
                                                  submodule_search_locations=[str(MANUAL_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module  # its `from .manual import ...` needs the parent registered
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[MODULE_NAME]
        raise
    return module


manual = _load()
