"""The example pipelines, loaded as ``loom pipeline`` loads them, and their numpy references.

The streaming and CPU-path tests import this module too (``streaming_apps``, ``cpu_apps``).
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
for folder in (ROOT, HERE):  # loom itself; pipeline_app_references next to this file
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import pipeline_app_references as references  # noqa: E402,F401
from loom.cli.pipeline_commands import load_app as example  # noqa: E402,F401
