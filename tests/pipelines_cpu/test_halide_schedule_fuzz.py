"""Random schedules of a pyramid-like pipeline (``schedule_fuzz.py``) against Halide: each draw is bit-exact with
Halide's or refused by both. The fixed seeds drew schedules loom got wrong in memory (a RoundUp Func computed
deeper than a producer it reads: 117, 150, 173, 194, caught by UBSan in the sanitizer session's twin,
test_user_pipelines_memory.py) or refused (RoundUp stored at the root: 133, 276); a few more are drawn per run.
Seed 109 is left out: Halide computes its first rows wrong (out.tile(2, 2, RoundUp) on 13 rows with a down-sample
store_root().compute_at(out, yo), where loom equals the unscheduled reference)."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
import loom.jit  # noqa: F401  (Func.realize)
from tests.pipelines_cpu.schedule_fuzz import draw

SEEDS = [117, 133, 150, 173, 194, 276, 600, 601]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_schedule_matches_halide_or_both_refuse(seed):
    results = []
    for m in (hl, lp):
        inp, out, a, size, text = draw(m, seed)
        try:
            if m is hl:
                inp.set(hl.Buffer(a))
                results.append(np.asarray(out.realize(list(size))))
            else:
                results.append(np.asarray(out.realize(list(size), {"inp": a})))
        except Exception as e:  # noqa: BLE001 (Halide raises its own error types)
            results.append(e)
    want, got = results
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"Halide refused, loom ran: {text}: {want}"
        return
    assert not isinstance(got, Exception), f"loom refused: {text}: {got}"
    np.testing.assert_array_equal(got, want, err_msg=text)
