"""Loading is linear in the description's size (loosely: 4x the input may cost at most 8x the CPU time;
quadratic behaviour would cost 16x). ``benchmarks/bench_loader.py`` measures the 10 MB cases."""

from __future__ import annotations

import json
import time

import pytest

from loom.accel import load_description
from loom.errors import LoomError
from tests.benchmarks.bench_scripts import BENCH, load_file

bench = load_file(BENCH / "bench_loader.py", "bench_loader_for_tests")


def _cpu_seconds(path, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        load_description(path)
        best = min(best, time.process_time() - start)
    return best


def _family(tmp_path, n: int):
    v3 = json.loads((bench.EXAMPLES / "matmul_v3.json").read_text())
    accs = [bench._family_entry(i, v3["accelerators"][0]) for i in range(n)]
    path = tmp_path / f"family{n}.json"
    path.write_text(json.dumps({"accelerators": accs}))
    return path


def test_loading_time_grows_linearly_with_the_number_of_accelerators(tmp_path):
    small, large = _cpu_seconds(_family(tmp_path, 16)), _cpu_seconds(_family(tmp_path, 64))
    assert len(load_description(_family(tmp_path, 64)).accelerators) == 64
    assert large < 8 * small + 0.05, (small, large)


def test_loading_time_grows_linearly_with_the_text(tmp_path):
    paths = []
    for mb in (0.5, 2.0):
        path = tmp_path / f"notes{mb}.json"
        path.write_text(bench.description("notes", mb))
        paths.append(path)
    small, large = (_cpu_seconds(p) for p in paths)
    assert large < 8 * small + 0.05, (small, large)


def test_an_eight_times_larger_refused_file_costs_at_most_twice_linear(tmp_path):
    """Files past the limits are refused after reading, not after a quadratic walk."""
    times = []
    for mb in (0.5, 4.0):
        path = tmp_path / f"too-many{mb}.json"
        path.write_text(bench.description("too-many", mb))
        best = float("inf")
        for _ in range(3):  # the best of 3: one CPU-time sample of a 17 ms load swings with the machine
            start = time.process_time()
            with pytest.raises(LoomError, match="expected at most 256 accelerators") as err:
                load_description(path)
            assert err.value.where == "accelerators"
            best = min(best, time.process_time() - start)
        times.append(best)
    assert times[1] < 16 * times[0] + 0.1, times
