"""Tuning schedules and sweeping design spaces.

    from loom.tune import CpuObjective, AccelObjective, tune, sweep
    result = tune(CpuObjective(kernel, args), searcher="optuna", budget=100,
                  storage="sqlite:///study.db", study="mm512")     # resumable
    result.best.params, result.best.value

Searchers: Optuna (default, ask/tell, SQLite-resumable), nevergrad (NGOpt, as nelli), random,
grid. Measured points are cached by a content hash of (IR, schedule, options, machine)
(``loom.tune.results``). Sweeps (``loom.tune.sweeps``) run any point function on a process pool
or a Dask cluster, record failures, and write CSV/Parquet and Pareto plots.
"""

from loom.tune.accel import AccelObjective, matmul_design_point
from loom.tune.cpu import CpuObjective
from loom.tune.cpu_schedule import CpuSchedule, cpu_space
from loom.tune.searchers import SEARCHERS
from loom.tune.space import Choice, Space
from loom.tune.sweeps import EXECUTORS, SweepResult, sweep
from loom.tune.tuner import TuneResult, tune

__all__ = ["tune", "TuneResult", "CpuObjective", "AccelObjective", "CpuSchedule", "cpu_space", "Space", "Choice",
           "SEARCHERS", "sweep", "SweepResult", "EXECUTORS", "matmul_design_point"]
