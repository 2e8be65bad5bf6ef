"""A Param read inside an accelerator stage: the kernel takes its value as a constant (docs/pipelines.md).

design_to_ir used to crash with KeyError '$param:gain' deep in the scalar emitter (build_design passed)."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, Param, UInt8, UInt16, Var, select, u8, u16
from loom.frontends.pipeline.recipes import stream_through_accelerator
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.to_ubuf import design_to_ir


def gained(value):
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    gain = Param(UInt16, "gain", value)
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = u8(select(hw[x, y] * gain > 400, 255, (hw[x, y] + hw[x + 1, y]) * gain >> 2))
    stream_through_accelerator(out, (7, 3), buffered=[hw])
    return out


def test_param_value_reaches_the_accelerator_kernel():
    out = gained(3)
    img = np.random.default_rng(0).integers(0, 256, (6, 15), dtype=np.uint8)
    p = img.astype(np.int64)
    want = np.where(p[:, :14] * 3 > 400, 255, ((p[:, :14] + p[:, 1:]) * 3) >> 2).astype(np.uint8)
    d = build_design(out, (7, 3))
    np.testing.assert_array_equal(simulate(out, {"input": img}, (14, 6), design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, (14, 6)), want)


def test_param_without_value_is_refused_by_name():
    out = gained(None)
    with pytest.raises(LoomError, match="Param 'gain'.*no value") as e:
        design_to_ir(build_design(out, (7, 3)))
    assert e.value.where == "Func 'output'" and e.value.construct == "Param"
