"""``loom build`` of every example input: seconds per input (target: under 5 s each), cold C cache.

    python benchmarks/bench_build.py [--quick]

Inputs: every built-in kernel, every pipeline app, the EKL examples, the dataflow examples, each
built in a separate process (``python -m loom.cli build``, as a user runs it) with an empty C
compile cache, so the time includes parsing, every IR stage, compiling and the check run.
--quick builds one input of each kind.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 5.0


def inputs(quick: bool) -> list[str]:
    from loom.examples.kernels import EXAMPLES
    from loom.examples.pipelines import app_names

    ekl = sorted(str(p) for p in (ROOT / "loom/examples/ekl").glob("*.ekl"))
    dataflow = [str(ROOT / "loom/examples/dataflow/listing1.py"), str(ROOT / "loom/examples/dataflow/listing1.mlir")]
    if quick:
        return ["matmul_linalg", "gaussian", ekl[0], dataflow[0]]
    return sorted(EXAMPLES) + app_names() + ekl + dataflow


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    todo = inputs(args.quick)
    rows, slow = [], []
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "LOOM_CACHE_DIR": str(Path(scratch) / "cache"), "PYTHONPATH": str(ROOT)}
        for n, source in enumerate(todo, 1):
            out = Path(scratch) / f"out{n}"
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "loom.cli", "build", source, "-o", str(out), "--threads", "2"],
                                  capture_output=True, text=True, env=env, cwd=scratch)
            seconds = time.perf_counter() - started
            if proc.returncode != 0:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit(f"loom build {source} failed")
            files = sum(1 for p in out.rglob("*") if p.is_file())
            rows.append((Path(source).name, files, seconds))
            slow += [source] if seconds > TARGET_SECONDS else []
            print(f"[{n}/{len(todo)}] {Path(source).name}: {files} files, {seconds:.2f} s", flush=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'input':<{width}}  files  seconds")
    for name, files, seconds in rows:
        print(f"{name:<{width}}  {files:>5}  {seconds:7.2f}")
    worst = max(rows, key=lambda r: r[2])
    print(f"\nloom build: {len(rows)} inputs, slowest {worst[0]} {worst[2]:.2f} s "
          f"(target < {TARGET_SECONDS:.0f} s each): {'MET' if not slow else 'MISSED by ' + ', '.join(slow)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
