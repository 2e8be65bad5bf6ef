"""A shipped pipeline app lowered by lower_pipeline, as text: realistic input for IR-in/IR-out pass tests."""

from __future__ import annotations

import numpy as np


def lowered_app_text(name: str, size=(16, 16), schedule: str = "accel") -> str:
    from loom.examples.pipelines import load_app
    from loom.frontends.pipeline import lower_pipeline

    app = load_app(name)
    out, _ = app.build(schedule)
    shapes = {k: v.shape for k, v in app.make_inputs(size, np.random.default_rng(0)).items()}
    return str(lower_pipeline(out, shapes, app.output_shape(size)))
