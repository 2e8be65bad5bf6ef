"""Fig. 13's host time (``figures/common.py``: generated_seconds / manual_seconds) runs the simulator
without its arithmetic; afterwards both runtimes compute again: the switch is back at its default (on)
and a normal call of each driver equals numpy. Run in a fresh process (the helpers put benchmarks/ on
sys.path), so the default seen first is the runtime's own."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.benchmarks.bench_scripts import BENCH, script_env

pytestmark = pytest.mark.bench

CHECK = textwrap.dedent("""
    import sys
    sys.path.insert(0, {figures!r})
    import numpy as np
    import common as C
    import manual

    dim, arrays = 16, C.matmul_arrays(16, 16, 16, seed=5)
    want = arrays[2] + arrays[0] @ arrays[1]
    drv = C.generated(dim, dim, dim, "matmul_v3.json", "v3_8", "As")
    man_lib = manual.load_drivers()
    drv(*[a.copy() for a in arrays])
    libs = {{"generated": drv._lib, "manual": man_lib}}
    for name, lib in libs.items():
        assert lib.loom_sim_set_arithmetic(1) == 1, name + ": not computing by default"
    C.generated_seconds(drv, arrays)
    C.manual_seconds(3, 8, arrays, "As")
    for name, lib in libs.items():
        assert lib.loom_sim_set_arithmetic(1) == 1, name + ": the timed runs left the arithmetic off"
    copies = [a.copy() for a in arrays]
    drv(*copies)
    assert np.array_equal(copies[-1], want), "generated after the timed runs"
    a, b, c = (x.copy() for x in arrays)
    manual.matmul(3, "As", a, b, c, 8, lib=man_lib)
    assert np.array_equal(c, want), "manual after the timed runs"
    print("ok")
""")


def test_timed_runs_leave_both_runtimes_computing(tmp_path):
    code = CHECK.format(figures=str(BENCH / "figures"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=script_env(tmp_path),
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr
