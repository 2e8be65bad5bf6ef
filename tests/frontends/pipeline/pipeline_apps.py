"""The example pipelines, loaded as ``loom pipeline`` loads them, and their numpy references.

The streaming and CPU-path tests import this module too (``streaming_apps``, ``cpu_apps``).
"""

from loom.examples.pipelines import load_app as example  # noqa: F401
from tests.frontends.pipeline import pipeline_app_references as references  # noqa: F401
