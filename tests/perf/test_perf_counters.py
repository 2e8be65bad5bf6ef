"""loom.perf.measure on tiny C programs: the counts must grow with the work by
the amounts the programs imply (checked against hand-derived per-iteration
costs), excluded files must drop out, and failures must be LoomErrors."""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from loom.errors import LoomError
from loom.perf import Counters, measure, parse_cachegrind, task_clock
from loom.perf.counters import counters_from_events

LOOP_C = """
#include <stdlib.h>
volatile unsigned sink;
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  for (long i = 0; i < n; i++) sink += (unsigned)i; /* 1 load, 1 store, 1 branch */
  return 0;
}
"""

WALK_C = """
#include <stdlib.h>
/* argv: bytes of the array, number of 64-byte-strided reads */
int main(int argc, char **argv) {
  long bytes = atol(argv[1]), reads = atol(argv[2]), words = bytes / 4;
  volatile int *a = calloc((size_t)words, 4);
  int s = 0;
  for (long r = 0, i = 0; r < reads; r++, i = (i + 16) % words) s += a[i];
  return s == 12345;
}
"""

SPLIT_MAIN_C = """
#include <stdlib.h>
void work(long n);
int main(int argc, char **argv) { work(atol(argv[1])); return 0; }
"""
SPLIT_WORK_C = """
volatile unsigned sink2;
void work(long n) { for (long i = 0; i < n; i++) sink2 += (unsigned)i; }
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    root = tmp_path_factory.mktemp("perf_programs")
    sources = {"loop.c": LOOP_C, "walk.c": WALK_C, "split_main.c": SPLIT_MAIN_C, "split_work.c": SPLIT_WORK_C}
    for name, text in sources.items():
        (root / name).write_text(textwrap.dedent(text))
    def cc(out, *srcs):
        subprocess.run(["cc", "-O1", "-g", "-o", str(root / out), *[str(root / s) for s in srcs]], check=True)
        return str(root / out)
    return {"loop": cc("loop", "loop.c"), "walk": cc("walk", "walk.c"),
            "split": cc("split", "split_main.c", "split_work.c")}


def test_counts_grow_linearly_with_iterations(programs):
    N = 100_000
    c1, c2, c4 = (measure([programs["loop"], str(n)], repeats=1) for n in (N, 2 * N, 4 * N))
    per_iter = (c2.instructions - c1.instructions) / N
    assert 3 <= per_iter <= 20
    # linear: doubling N again adds twice the instructions (exact up to start-up noise)
    assert abs((c4.instructions - c2.instructions) - 2 * (c2.instructions - c1.instructions)) < 0.001 * N
    # the volatile add is exactly one load and one store; the loop one conditional branch
    assert abs((c2.d_refs - c1.d_refs) / N - 2) < 0.01
    assert abs((c2.branches - c1.branches) / N - 1) < 0.01
    assert c1.task_clock_s >= 0 and c1.wall_s > 0


def test_cache_misses_follow_the_working_set(programs):
    reads = 200_000
    small = measure([programs["walk"], str(8 * 1024), str(reads)], repeats=1)
    large = measure([programs["walk"], str(64 * 1024 * 1024), str(reads)], repeats=1)
    # same number of reads: 8 KiB stays in D1, a 64 MiB stride walk misses on every read
    assert large.d1_misses - small.d1_misses > 0.9 * reads
    assert abs(large.instructions - small.instructions) < 0.05 * small.instructions


def test_excluded_files_drop_out(programs):
    N = 100_000
    full1, full2 = (measure([programs["split"], str(n)], repeats=1) for n in (N, 2 * N))
    ex1, ex2 = (measure([programs["split"], str(n)], repeats=1, exclude_files=("split_work.c",))
                for n in (N, 2 * N))
    assert full2.instructions - full1.instructions > 3 * N
    assert abs(ex2.instructions - ex1.instructions) < 0.001 * N  # the loop lives in split_work.c
    assert full1.instructions - ex1.instructions > 3 * N


def test_task_clock_grows_with_work(programs):
    small_cpu, _ = task_clock([programs["loop"], "5000000"], repeats=3)
    large_cpu, large_wall = task_clock([programs["loop"], "40000000"], repeats=3)
    assert large_cpu > 2 * small_cpu
    assert large_wall > 0.5 * large_cpu


def test_parse_cachegrind_sums_and_excludes(tmp_path):
    out = tmp_path / "cachegrind.out.1"
    out.write_text(textwrap.dedent("""\
        desc: I1 cache: 32768 B, 64 B, 8-way associative
        cmd: ./prog
        events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim
        fl=/src/keep.c
        fn=main
        3 100 1 1 40 2 1 20 1 1 10 1 0 0
        fl=/src/model_matmul.c
        fn=run
        7 50 0 0 30 3 2
        8 5
        summary: 155 1 1 70 5 3 20 1 1 10 1 0 0
        """))
    totals = parse_cachegrind(out)
    assert totals["Ir"] == 155 and totals["Dr"] == 70
    kept = parse_cachegrind(out, exclude_files=("model_matmul.c",))
    assert kept == {"Ir": 100, "I1mr": 1, "ILmr": 1, "Dr": 40, "D1mr": 2, "DLmr": 1, "Dw": 20, "D1mw": 1,
                    "DLmw": 1, "Bc": 10, "Bcm": 1, "Bi": 0, "Bim": 0}
    c = counters_from_events(kept)
    assert (c.instructions, c.d_refs, c.branches, c.d1_misses, c.ll_misses) == (100, 60, 10, 3, 3)
    assert (c - c) == Counters(0, 0, 0, 0, 0, 0.0, 0.0)


def test_not_a_cachegrind_file(tmp_path):
    bad = tmp_path / "x.out"
    bad.write_text("hello\n")
    with pytest.raises(LoomError, match="not a cachegrind output"):
        parse_cachegrind(bad)


def test_missing_valgrind_is_a_clear_error(programs, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no valgrind on PATH
    with pytest.raises(LoomError, match="apt-get install valgrind"):
        measure([programs["loop"], "10"], repeats=1)


def test_failing_command_is_a_loom_error(programs, tmp_path):
    with pytest.raises(LoomError, match="exited with status"):
        measure(["/bin/false"], repeats=1)
    with pytest.raises(LoomError, match="cannot run"):
        task_clock([str(tmp_path / "no_such_program")], repeats=1)
    with pytest.raises(LoomError, match="repeats"):
        measure([programs["loop"], "1"], repeats=0)


@pytest.mark.sanitize
def test_manual_driver_counts_exclude_the_simulator():
    """Counting a hand-written driver run: the simulated accelerator's work (its
    MACs and copies) must drop out, and the driver's own cost must scale with
    the number of tiles it packs."""
    from tests.perf.manual_drivers import manual
    from loom.runtime.build import sanitizing

    if sanitizing():
        pytest.skip("valgrind cannot run ASan-instrumented executables")
    M = N = K = 64
    base = measure(manual.matmul_command(3, M, N, K, 8, "--baseline"), repeats=1,
                   exclude_files=manual.SIMULATOR_FILES)
    full = measure(manual.matmul_command(3, M, N, K, 8, "--no-check"), repeats=1)
    host = measure(manual.matmul_command(3, M, N, K, 8, "--no-check"), repeats=1,
                   exclude_files=manual.SIMULATOR_FILES)
    host2 = measure(manual.matmul_command(3, 2 * M, N, K, 8, "--no-check"), repeats=1,
                    exclude_files=manual.SIMULATOR_FILES)
    base2 = measure(manual.matmul_command(3, 2 * M, N, K, 8, "--baseline"), repeats=1,
                    exclude_files=manual.SIMULATOR_FILES)
    # the model does M*N*K multiply-adds: even 8-wide SIMD needs >= M*N*K/8 instructions
    assert full.instructions - host.instructions > M * N * K / 8
    tiles = (M // 8) * (N // 8) * (K // 8)
    driver, driver2 = (host - base), (host2 - base2)
    # per tile the driver stages 2*64 words and adds back 64: well over 64 data refs
    assert driver.d_refs > 64 * tiles
    assert 1.8 < driver2.instructions / driver.instructions < 2.2
