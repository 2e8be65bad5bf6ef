"""RoundUp splits of Funcs computed inside loops read nothing past their buffers or the input (run again under
ASan/UBSan in the sanitizer session, where Halide cannot run): each pipeline on the smallest input Halide
accepts (its bounds query, recorded here; test_halide_round_up_inside checks it), values against numpy."""

import numpy as np
import pytest
from tests.pipelines_cpu.round_up_pipelines import numpy_reference, round_up_inside

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu

pytestmark = pytest.mark.sanitize
G, S, R = "GuardWithIf", "ShiftInwards", "RoundUp"
CASES = [  # (case, out's tail, fx, fy, W, H, rows and columns of Halide's smallest input)
    ("xo", S, 3, 1, 10, 8, 10, 15), ("xo", G, 2, 1, 13, 9, 11, 19), ("xo", G, 5, 1, 10, 8, 10, 16),
    ("xo", R, 4, 1, 13, 9, 14, 19), ("yo", S, 2, 1, 10, 8, 10, 13), ("yo", G, 3, 1, 13, 9, 11, 16),
    ("yo", R, 5, 1, 10, 8, 10, 16), ("xi", G, 5, 1, 10, 8, 10, 15), ("xi", S, 3, 1, 13, 9, 11, 16),
    ("tile_xo", S, 2, 3, 10, 8, 10, 13), ("tile_xo", G, 3, 2, 13, 9, 11, 16), ("tile_xo", R, 5, 5, 13, 9, 14, 18),
    ("q_inside_p", G, 2, 3, 13, 9, 15, 18), ("q_inside_p", R, 3, 2, 10, 8, 11, 14),
    ("q_inside_p", S, 4, 4, 13, 9, 14, 16), ("q_root", S, 1, 3, 10, 8, 10, 13), ("q_root", G, 1, 5, 13, 9, 11, 16),
    ("parallel", G, 3, 1, 13, 9, 11, 20), ("parallel", S, 4, 1, 10, 8, 10, 14),
]


@pytest.mark.parametrize("case, tail, fx, fy, w, h, rows, cols", CASES)
def test_round_up_inside_stays_in_bounds(case, tail, fx, fy, w, h, rows, cols):
    image = np.random.default_rng(rows * 31 + cols).integers(0, 256, (rows, cols), dtype=np.uint8)
    _, out = round_up_inside(lp, case, tail, fx, fy)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (w, h)), numpy_reference(image, w, h))
