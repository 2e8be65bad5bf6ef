"""The example pipelines and numpy references for the streaming tests (shared with the pipeline tests)."""

from tests.frontends.pipeline.pipeline_apps import example, references  # noqa: F401
