"""Tuning a kernel's schedule on the CPU: the objective is the measured time of the compiled kernel.

    objective = CpuObjective(kernel, [A, B, C])      # a @loom.kernel, a .mlir function or a module
    result = tune(objective, budget=100)
    result.best.params, result.best.value             # seconds per call (median of `repeats`)

A single-threaded schedule is timed in CPU time of the calling thread (``kernel_clock``: on a
shared machine the wall clock also counts other processes' turns), a multi-threaded one in wall
time. The search starts from the register-blocked micro-kernel schedules of the nest
(``suggestions``, ``micro_kernel_points``) and goes on with the searcher's own points.

Every schedule's outputs are compared with the unscheduled kernel's on the same inputs (a
schedule that changes the result is a failed point, never a fast wrong answer). Threads are set
through OpenMP's own runtime before each timed call.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from collections.abc import Sequence

import numpy as np

from loom.errors import LoomError
from loom.tune.cpu_schedule import CpuSchedule, cpu_space, micro_kernel_points


class CpuObjective:
    def __init__(self, kernel, args: Sequence, *, function: str | None = None, repeats: int = 5,
                 max_threads: int | None = None, rtol: float = 1e-4):
        from loom.passes.recipes import lower_to_loops

        module = getattr(kernel, "module", kernel)
        self.function = function or getattr(kernel, "name", None) or _only_function(module)
        self.loops = lower_to_loops(module)
        self.args = list(args)
        self.repeats = repeats
        self.rtol = rtol
        self.space = cpu_space(self.loops, self.function, max_threads=max_threads)
        self.ir = str(self.loops)
        self.options = {"shapes": [list(np.shape(a)) for a in self.args],
                        "dtypes": [str(np.asarray(a).dtype) for a in self.args], "repeats": repeats}
        self.reference = self._outputs(CpuSchedule())

    def suggestions(self) -> list[dict]:
        """Micro-kernel schedules the tuner tries first (``micro_kernel_points``)."""
        return micro_kernel_points(self.loops, self.function, self.space)

    def schedule(self, params: dict) -> CpuSchedule:
        return CpuSchedule.from_params(params)

    def compiled(self, schedule: CpuSchedule):
        from loom.backends.c import compile_module
        from loom.passes.recipes import lower_to_c

        return compile_module(lower_to_c(schedule.apply(self.loops)), native=schedule.native).function(self.function)

    def _outputs(self, schedule: CpuSchedule) -> list:
        fn = self.compiled(schedule)
        args = _copies(self.args)
        _set_threads(schedule.threads)
        fn(*args)
        return args

    def evaluate(self, params: dict) -> tuple[float, str]:
        schedule = self.schedule(params)
        fn = self.compiled(schedule)
        _set_threads(schedule.threads)
        args = _copies(self.args)
        fn(*args)  # warm-up, and the result to check
        for k, (got, want) in enumerate(zip(args, self.reference)):
            if isinstance(want, np.ndarray) and not np.allclose(got, want, rtol=self.rtol, atol=self.rtol):
                raise LoomError(f"schedule {schedule} changes argument {k} of @{self.function}")
        clock = kernel_clock(schedule.threads)
        times = []
        for _ in range(self.repeats):
            fresh = _copies(self.args)
            start = clock()
            fn(*fresh)
            times.append(clock() - start)
        return statistics.median(times), str(schedule)


def kernel_clock(threads: int):
    """The clock a kernel on ``threads`` threads is timed with: one thread runs in the calling
    thread, whose CPU time does not count what other processes of a shared machine take; more
    threads need the wall clock."""
    return time.thread_time if threads == 1 else time.perf_counter


def _copies(args: Sequence) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _only_function(module) -> str:
    from xdsl.dialects.func import FuncOp

    names = [f.sym_name.data for f in module.body.block.ops if isinstance(f, FuncOp) and f.body.blocks]
    if len(names) != 1:
        raise LoomError(f"the module has {len(names)} functions ({', '.join(names)}): name one with function=")
    return names[0]


_GOMP = None


def _set_threads(n: int) -> None:
    """OpenMP's thread count for the next parallel loops (libgomp is shared by every loaded kernel)."""
    global _GOMP
    if _GOMP is None:
        try:
            _GOMP = ctypes.CDLL("libgomp.so.1")
        except OSError:
            _GOMP = False
    if _GOMP:
        _GOMP.omp_set_num_threads(ctypes.c_int(n))


def cpu_schedule_space(kernel, function: str | None = None):
    """The space of ``kernel`` without measuring anything (for sweeps)."""
    from loom.passes.recipes import lower_to_loops

    module = getattr(kernel, "module", kernel)
    return cpu_space(lower_to_loops(module), function or getattr(kernel, "name", None) or _only_function(module))
