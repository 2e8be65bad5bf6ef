"""Every stage file ``loom accel compile -o`` writes parses back with ``loom.dialects.context()`` and the
remaining passes, run from it, give the in-memory result: the same IR text and the same C.

All shipped accelerators and flows (plain), and the selected flow of the first accelerator of each
description file with ``coalesce`` and ``double_buffer``: each stage file, parsed, prints back as written and its next
pipeline gives exactly the next stage's text; the last stage gives the same C. For one accelerator
per description file (double-buffered, the longest pipeline) every stage is also run through all the
remaining pipelines to the end. Small static problems (``*.mlir`` fixtures next to this file); the
parsed pipelines and the context are shared, so the whole file runs in seconds."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
from xdsl.parser import Parser

from loom.accel.description import load_description
from loom.backends.c import emit_c
from loom.dialects import context
from loom.driver.compile import compile_driver, stage_files, stage_pipelines
from loom.examples import ACCELERATORS_DIR
from loom.passes import Pipeline

HERE = Path(__file__).parent
CTX = context()
VARIANTS = {"plain": {}, "coalesce": {"coalesce": True}, "double-buffer": {"coalesce": True, "double_buffer": True}}


@lru_cache(maxsize=None)
def _pipeline(text: str) -> Pipeline:
    return Pipeline.parse(text)


def _parse(text: str):
    module = Parser(CTX, text).parse_module()
    module.verify()
    return module


def _run(module, pipeline: str) -> None:
    _pipeline(pipeline).run(module, ctx=CTX, verify=False)


def _configs():
    for path in sorted(ACCELERATORS_DIR.glob("*.json")):
        system = load_description(path)
        for a, acc in enumerate(system.accelerators):
            for flow in acc.flows:
                first = a == 0 and flow.name == acc.selected_flow  # of each file: every variant
                variants = VARIANTS if first else {"plain": {}}
                for variant in variants:
                    to_the_end = first and variant == "double-buffer"
                    yield pytest.param(path.name, acc.name, flow.name, variant, to_the_end,
                                       id=f"{acc.name}-{flow.name}-{variant}")


def _kernel(file: str, accelerator: str):
    if file.startswith(("conv", "matmul_v")):
        return _parse((HERE / ("conv_1x2x7x7.mlir" if file.startswith("conv") else "matmul_12x8x20.mlir")).read_text())
    from tests.models.kernels import kernel_text  # the example accelerators with kernels of their own
    return _parse(kernel_text(load_description(ACCELERATORS_DIR / file).accelerator(accelerator)))


@pytest.mark.parametrize("file,accelerator,flow,variant,to_the_end", list(_configs()))
def test_every_stage_file_parses_back_and_continues(file, accelerator, flow, variant, to_the_end):
    description = ACCELERATORS_DIR / file
    options = VARIANTS[variant]
    drv = compile_driver(_kernel(file, accelerator), description, accelerator, flow, build=False, **options)
    plan = stage_pipelines(description, accelerator, flow, **options)
    files = list(stage_files(drv).values())  # what `loom accel compile -o` writes
    texts = [text for _, _, text in drv.stages]
    assert [s for s, _, _ in drv.stages] == ["input", *(n for n, _ in plan)]
    for k, text in enumerate(files):
        module = _parse(text)
        stage = drv.stages[k][0]
        assert str(module) == texts[k], f"stage {stage} does not print back as written"
        if k == len(plan):
            assert emit_c(module) == drv.c_source, "the last stage file gives another C driver"
            continue
        _run(module, plan[k][1])
        assert str(module) == texts[k + 1], f"{plan[k][0]} run on the {stage} file differs from the in-memory run"
        if to_the_end:
            for _, pipeline in plan[k + 1:]:
                _run(module, pipeline)
            assert str(module) == texts[-1] and emit_c(module) == drv.c_source, \
                f"continuing from the {stage} file changes the final IR or C"
