"""Design-space sweeps on any ``concurrent.futures`` executor: a local process pool by default,
Dask distributed for clusters.

    result = sweep(matmul_design_point, points, executor="process")      # or "dask://10.0.0.5:8786"
    result.to_csv("sweep.csv"); result.pareto("modelled_s", "buffer_words")

``fn(point) -> dict of figures`` must be importable by the workers (a module-level function).
A point that raises is recorded with its error (never fatal to the sweep). Points travel in
chunks so that the per-point overhead stays small on a local pool; results keep the points'
order. Executors: ``process`` (default), ``thread``, ``serial``, ``dask://HOST:PORT`` (a running
scheduler), ``dask-local`` (a loopback ``LocalCluster`` started and stopped here), or any
``concurrent.futures.Executor``.
"""

from __future__ import annotations

import csv
import os
import pickle
import time
import traceback
from collections.abc import Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from loom.errors import LoomError
from loom.tune.progress import Progress

EXECUTORS = ("process", "thread", "serial", "dask://HOST:PORT", "dask-local")
CONNECT_TIMEOUT_S = 10.0  # how long to try reaching a Dask scheduler


@dataclass
class SweepResult:
    rows: list[dict]
    seconds: float
    executor: str
    failures: list[dict] = field(default_factory=list)

    @property
    def per_point_s(self) -> float:
        return self.seconds / max(1, len(self.rows))

    def to_csv(self, path: str | Path) -> Path:
        columns = list(dict.fromkeys(key for row in self.rows for key in row))
        try:
            with open(path, "w", newline="") as f:
                writer = csv.DictWriter(f, columns)
                writer.writeheader()
                writer.writerows(self.rows)
        except OSError as error:
            raise LoomError(f"cannot write {path}: {error.strerror or error}") from None
        return Path(path)

    def to_parquet(self, path: str | Path) -> Path:
        try:
            import pyarrow
            import pyarrow.parquet as pq
        except ImportError:
            raise LoomError("Parquet output needs pyarrow (pip install pyarrow); CSV needs nothing") from None
        pq.write_table(pyarrow.Table.from_pylist(self.rows), str(path))
        return Path(path)

    def pareto(self, x: str, y: str) -> list[dict]:
        """The rows no other row beats on both ``x`` and ``y`` (lower is better), by increasing x."""
        ok = sorted((r for r in self.rows if r.get("error") is None and x in r and y in r),
                    key=lambda r: (r[x], r[y]))
        front, best_y = [], float("inf")
        for row in ok:
            if row[y] < best_y:
                front.append(row)
                best_y = row[y]
        return front

    def plot_pareto(self, path: str | Path, x: str, y: str, title: str = "") -> Path:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise LoomError("plots need matplotlib (pip install 'loom[plot]')") from None
        ok = [r for r in self.rows if r.get("error") is None and x in r and y in r]
        front = self.pareto(x, y)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.scatter([r[x] for r in ok], [r[y] for r in ok], s=10, alpha=0.4, label=f"{len(ok)} points")
        ax.plot([r[x] for r in front], [r[y] for r in front], "r.-", label=f"Pareto front ({len(front)})")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(title or f"{y} vs {x}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return Path(path)


def sweep(fn, points: list[dict], *, executor: str | Executor = "process", workers: int | None = None,
          progress: bool = True, chunk: int | None = None) -> SweepResult:
    points = list(points)
    _check_sweep(fn, points, executor, workers, chunk)
    workers = workers or os.cpu_count() or 1
    chunk = chunk or max(1, min(64, len(points) // (workers * 4)))
    batches = [list(range(i, min(i + chunk, len(points)))) for i in range(0, len(points), chunk)]
    rows: list[dict | None] = [None] * len(points)
    bar = Progress(len(points), f"sweep ({_name(executor)})", enabled=progress)
    started = time.perf_counter()
    with _executor(executor, workers) as pool:
        if pool is None:  # serial
            for batch in batches:
                _collect(rows, batch, _run_batch(fn, [points[i] for i in batch]), points, bar)
        else:
            futures = {pool.submit(_run_batch, fn, [points[i] for i in batch]): batch for batch in batches}
            for future in as_completed(futures):
                batch = futures[future]
                try:
                    outcome = future.result()
                except Exception as error:  # noqa: BLE001 - a lost worker fails its batch, not the sweep
                    outcome = [(None, f"{type(error).__name__}: {error}")] * len(batch)
                _collect(rows, batch, outcome, points, bar)
    done = [r for r in rows if r is not None]
    return SweepResult(done, time.perf_counter() - started, _name(executor),
                       [r for r in done if r.get("error") is not None])


def _check_sweep(fn, points: list, executor, workers, chunk) -> None:
    """Refuse a sweep that cannot run before any point does (a negative chunk ran no point at all,
    and an unpicklable function failed every point one by one in the workers)."""
    if not points:
        raise LoomError("the sweep has no points")
    bad = next((p for p in points if not isinstance(p, Mapping)), None)
    if bad is not None:
        raise LoomError(f"a sweep point is a dict of parameters, got {type(bad).__name__} {bad!r}")
    if not callable(fn):
        raise LoomError(f"the sweep function must be callable, got {type(fn).__name__} {fn!r}")
    for name, value in (("workers", workers), ("chunk", chunk)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise LoomError(f"{name} must be a whole number >= 1 (or None for the default), got {value!r}",
                            where="--workers" if name == "workers" else name)
    if _in_other_processes(executor):
        try:
            pickle.dumps(fn)
        except Exception as error:  # noqa: BLE001 - pickle raises several types for local objects
            raise LoomError(f"the sweep function {getattr(fn, '__qualname__', fn)!r} cannot be sent to worker "
                            f"processes ({type(error).__name__}: {error}): define it at the top level of an "
                            "importable module, or use executor='thread' or 'serial'", where="--executor") from None


def _in_other_processes(executor) -> bool:
    if isinstance(executor, str):
        return executor in ("process", "dask-local") or executor.startswith("dask://")
    return isinstance(executor, ProcessPoolExecutor)


def _collect(rows, batch, outcome, points, bar) -> None:
    for index, (figures, error) in zip(batch, outcome):
        rows[index] = {**points[index], **(figures or {}), "error": error}
        bar.advance(error is not None)


def _run_batch(fn, batch: list[dict]) -> list[tuple[dict | None, str | None]]:
    """Runs in the worker: every point, each failure caught and described."""
    out = []
    for point in batch:
        try:
            figures = fn(point)
            if not isinstance(figures, dict):
                raise LoomError(f"the sweep function returned {type(figures).__name__}, expected a dict of figures")
            out.append((figures, None))
        except LoomError as error:
            out.append((None, str(error)))
        except Exception as error:  # noqa: BLE001 - a point's failure is data, not the end of the sweep
            where = traceback.extract_tb(error.__traceback__)[-1]
            out.append((None, f"{type(error).__name__}: {error} ({Path(where.filename).name}:{where.lineno})"))
    return out


def _name(executor) -> str:
    return executor if isinstance(executor, str) else type(executor).__name__


@contextmanager
def _executor(spec, workers: int):
    if isinstance(spec, Executor):
        yield spec
        return
    if spec == "serial":
        yield None
    elif spec == "process":
        with ProcessPoolExecutor(max_workers=workers) as pool:
            yield pool
    elif spec == "thread":
        with ThreadPoolExecutor(max_workers=workers) as pool:
            yield pool
    elif spec == "dask-local":
        distributed = _dask()
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            yield client.get_executor()
    elif isinstance(spec, str) and spec.startswith("dask://"):
        distributed = _dask()
        address = "tcp://" + spec[len("dask://"):]
        try:
            client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S)
        except OSError as error:
            raise LoomError(f"cannot reach the Dask scheduler at {address}: {error}", where="--executor") from None
        with client:
            yield client.get_executor()
    else:
        raise LoomError(f"unknown executor {spec!r}; expected one of {', '.join(EXECUTORS)}", where="--executor")


def _dask():
    try:
        import distributed
    except ImportError:
        raise LoomError("the Dask executors need dask[distributed]: pip install 'loom[tune]'",
                        where="--executor") from None
    return distributed
