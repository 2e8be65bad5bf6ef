"""The example pipelines and numpy references for the streaming tests (shared with the pipeline tests)."""

import pathlib
import sys

_PIPELINE_TESTS = pathlib.Path(__file__).resolve().parents[1] / "frontends" / "pipeline"
if str(_PIPELINE_TESTS) not in sys.path:
    sys.path.insert(0, str(_PIPELINE_TESTS))

from pipeline_apps import example, references  # noqa: E402,F401
