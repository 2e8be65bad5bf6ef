"""Every benchmark script runs in its ``--quick`` mode and prints its figure, so none can rot.

Scripts are found, not listed: every ``benchmarks/**/*.py`` with a ``__main__`` block.
The figure scripts that ``run_all.py`` orchestrates run once, inside ``run_all.py --quick``
(which also runs ``figures/targets.py`` for its run); every other script runs on its own.
Figures go to a temporary folder (``$LOOM_FIGURES_OUT``): committed files are never written.
One test item per script, so pytest-xdist spreads them over the cores.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks.bench_scripts import BENCH, RUN_ALL, TARGETS, run_script, runnable_scripts, script_env

pytestmark = pytest.mark.bench

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:\.\d+)?(?:e[-+]?\d+)?")
FIGURE_CSVS = {"coalesce_gain", "fig10", "fig12", "fig13", "fig13_conv", "fig14", "fig16", "flow_auto", "flow_auto_bound", "tinybert"}


def run_all_steps() -> list[str]:
    """The scripts ``run_all.py --quick`` runs (as paths relative to benchmarks/)."""
    out = subprocess.run([sys.executable, str(RUN_ALL), "--quick", "--list"], capture_output=True, text=True,
                         env=script_env(BENCH / "never-written"), timeout=60, check=True).stdout
    steps = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert steps and all(" --quick" in line for line in out.splitlines() if line.strip()), out
    return [str(Path(s).relative_to(BENCH)) for s in steps]


ORCHESTRATED = set(run_all_steps())
STANDALONE = [str(p.relative_to(BENCH)) for p in runnable_scripts()
              if str(p.relative_to(BENCH)) not in ORCHESTRATED and p not in (RUN_ALL, TARGETS)]


def test_every_script_is_exercised():
    """Discovery found the known scripts, and each one runs here: alone, or inside run_all.py."""
    found = {str(p.relative_to(BENCH)) for p in runnable_scripts()}
    assert {"bench_frontend.py", "figures/fig10.py", "figures/targets.py", "run_all.py"} <= found
    assert not {"figures/common.py", "figures/run_stamp.py", "quality_kernels.py"} & found  # helpers
    assert ORCHESTRATED <= found
    assert found == set(STANDALONE) | ORCHESTRATED | {"run_all.py", "figures/targets.py"}


def test_every_figure_script_is_a_run_all_step():
    """Each script of benchmarks/figures writes its CSV inside run_all.py's run (so targets.py can tell
    a fresh figure from a stale one), in --quick mode in CI."""
    figures = {str(p.relative_to(BENCH)) for p in runnable_scripts() if p.parent == BENCH / "figures"}
    assert figures - {"figures/targets.py"} <= ORCHESTRATED, sorted(figures - ORCHESTRATED)
    assert "figures/tinybert.py" in ORCHESTRATED


@pytest.mark.parametrize("script", STANDALONE)
def test_script_quick_mode_prints_its_figure(script, tmp_path):
    out = tmp_path / "out"
    proc = run_script(BENCH / script, "--quick", out_dir=out, cwd=tmp_path)
    assert proc.returncode == 0, f"{script} --quick exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert NUMBER.search(proc.stdout), f"{script} printed no figure:\n{proc.stdout}"


def test_run_all_quick_runs_every_figure_and_reports_only_this_run(tmp_path):
    out = tmp_path / "out"
    proc = run_script(RUN_ALL, "--quick", out_dir=out, cwd=tmp_path, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:]
    run_id = re.search(r"benchmark run (\S+);", proc.stdout).group(1)
    assert {p.stem for p in out.glob("*.csv")} >= FIGURE_CSVS, sorted(out.iterdir())
    for csv in out.glob("*.csv"):
        assert f'"run": "{run_id}"' in csv.read_text().splitlines()[0], csv
    final = proc.stdout.rsplit("\nall benchmarks:", 1)[1]  # targets.py, after every step
    assert f"issue-4 targets of run {run_id}" in final
    assert "STALE" not in final and "NOT RUN" not in final, final
    assert "MISSED" in final  # quick sizes cannot meet the grid targets
    assert len(re.findall(r"^=== ", proc.stdout, re.M)) == len(ORCHESTRATED)
    assert NUMBER.search(proc.stdout)
