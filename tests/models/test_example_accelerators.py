"""The four example accelerators loom did not ship before (matrix-vector, element-wise, transposed-B
matmul, batch matmul), each run through its own behaviour model (Python; the element-wise one also
in C): every flow equals numpy on odd sizes and moves exactly the analytic transfer counts."""

from __future__ import annotations

import numpy as np
import pytest

from loom.accel import load_description
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from tests.models.kernels import BATCH_MATMUL, ELEMENTWISE, MATMUL_TB, MATVEC, REFERENCES, arrays, module

pytestmark = pytest.mark.sanitize

CASES = [  # description, accelerator, kernel, reference, odd shapes
    ("matvec.json", "mv_8", MATVEC, "matvec", [(13, 21), (21,), (13,)]),
    ("elementwise.json", "ew_py", ELEMENTWISE, "elementwise", [(7, 37), (7, 37), (7, 37)]),
    ("elementwise.json", "ew_c", ELEMENTWISE, "elementwise", [(7, 37), (7, 37), (7, 37)]),
    ("matmul_tb.json", "mmtb_4", MATMUL_TB, "matmul_tb", [(9, 7), (11, 7), (9, 11)]),
    ("batch_matmul.json", "bmm_2x4", BATCH_MATMUL, "batch_matmul", [(3, 5, 9), (3, 9, 7), (3, 5, 7)]),
]


def _flows(desc: str, name: str) -> list[str]:
    return [f.name for f in load_description(ACCELERATORS_DIR / desc).accelerator(name).flows]


@pytest.mark.parametrize("desc, name, kernel, ref, shapes",
                         [pytest.param(*c, id=c[1]) for c in CASES])
def test_every_flow_equals_numpy_with_analytic_transfers(desc, name, kernel, ref, shapes):
    for flow in _flows(desc, name):
        drv = compile_driver(module(kernel), ACCELERATORS_DIR / desc, name, flow)
        data = arrays(shapes, seed=len(flow))
        expected = REFERENCES[ref](*data)
        stats = drv(*data)
        np.testing.assert_array_equal(data[-1], expected, err_msg=f"{name} flow {flow}")
        assert stats.transfers == drv.summary.expected_transfers(drv.problem_dims(data)), flow
        assert stats.timing is not None and stats.timing.compute_s > 0  # the model reported its MACs


def test_the_c_and_python_element_wise_models_agree_on_the_timeline():
    runs = {}
    for name in ("ew_py", "ew_c"):
        drv = compile_driver(module(ELEMENTWISE), ACCELERATORS_DIR / "elementwise.json", name, "Split")
        data = arrays([(5, 33)] * 3)
        runs[name] = (drv(*data).timing.compute_s, data[-1])
    assert runs["ew_py"][0] == runs["ew_c"][0]
    np.testing.assert_array_equal(runs["ew_py"][1], runs["ew_c"][1])


@pytest.mark.parametrize("desc, name, kernel, ref, shapes", [pytest.param(*c, id=c[1]) for c in CASES])
def test_mismatched_shapes_are_refused_before_the_model_runs(desc, name, kernel, ref, shapes):
    drv = compile_driver(module(kernel), ACCELERATORS_DIR / desc, name)
    data = arrays([(s[0] + 1, *s[1:]) if k == 2 else s for k, s in enumerate(shapes)])
    before = data[2].copy()
    with pytest.raises(LoomError, match=r"operand \w+ dim 0 has size"):
        drv(*data)
    np.testing.assert_array_equal(data[2], before)
