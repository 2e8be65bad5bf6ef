"""Every stage file ``loom accel compile -o`` writes parses back with ``loom.dialects.context()`` and the
remaining passes, run from it, give the in-memory result: the same final IR text and the same C.

All shipped accelerators and flows, plain and with ``coalesce`` / ``double_buffer``; small static
problems (``*.mlir`` fixtures next to this file), the parsed pipelines and the context shared."""

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
    return Parser(CTX, text).parse_module()


def _configs():
    for path in sorted(ACCELERATORS_DIR.glob("*.json")):
        system = load_description(path)
        for acc in system.accelerators:
            for flow in acc.flows:
                # every variant on the selected flow, the plain driver on the others
                variants = VARIANTS if flow.name == acc.selected_flow else {"plain": {}}
                for variant in variants:
                    yield pytest.param(path.name, acc.name, flow.name, variant,
                                       id=f"{acc.name}-{flow.name}-{variant}")


@pytest.mark.parametrize("file,accelerator,flow,variant", list(_configs()))
def test_every_stage_file_parses_back_and_continues(file, accelerator, flow, variant):
    kernel = _parse((HERE / ("conv_1x2x7x7.mlir" if file.startswith("conv") else "matmul_12x8x20.mlir")).read_text())
    description = ACCELERATORS_DIR / file
    options = VARIANTS[variant]
    drv = compile_driver(kernel, description, accelerator, flow, build=False, **options)
    plan = stage_pipelines(description, accelerator, flow, **options)
    files = list(stage_files(drv).values())
    names = [n for n, _ in plan]
    assert len(files) == len(plan) + 1 and [s for s, _, _ in drv.stages][1:] == names
    final_text, final_c = drv.stages[-1][2], drv.c_source
    for k, text in enumerate(files):
        module = _parse(text)
        assert str(module) == drv.stages[k][2], f"stage {drv.stages[k][0]} does not print back as written"
        for _, pipeline in plan[k:]:
            _pipeline(pipeline).run(module, ctx=CTX)
        assert str(module) == final_text, f"continuing from stage {drv.stages[k][0]} changes the final IR"
        assert emit_c(module) == final_c, f"continuing from stage {drv.stages[k][0]} changes the C driver"
