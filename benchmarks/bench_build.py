"""``loom build`` of every example input: seconds per input (target: under 5 s each), cold C cache.

    python benchmarks/bench_build.py [--quick]

Inputs: every built-in kernel, every pipeline app, the EKL examples, the dataflow examples (.py and
.mlir), a small ONNX CNN written here (conv-relu-conv-relu-maxpool-flatten-gemm, 3x16x16 input), and kernels with host drivers for an example accelerator (``--accel``), each built in a separate process (``python -m loom.cli build``, as a user runs it) with an empty C
compile cache, so the time includes parsing, every IR stage, compiling and the check run.
The DMA runtime library that drivers link is built first, as its own row (once per machine, cached).
--quick builds one input of each kind.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 5.0
RUNTIME_ROW = "(DMA runtime library, once)"


ACCELERATORS = ROOT / "loom/examples/accelerators"
# kernels built with host drivers for an example accelerator (the description's kernel kind must match)
ACCELERATED = [("matmul_linalg", "matmul_v4.json"), ("conv2d_nchw_linalg", "conv2d.json")]


def write_small_cnn(path: Path) -> str:
    """A seeded ONNX CNN: the model input (the examples ship torch models, not .onnx files)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array((rng.normal(size=shape) * 0.3).astype(np.float32), name)

    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "small_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                              [weight("w1", (8, 3, 3, 3)), weight("b1", (8,)), weight("w2", (8, 8, 3, 3)),
                               weight("b2", (8,)), weight("wf", (10, 512)), weight("bf", (10,))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def inputs(quick: bool, scratch: Path) -> list[list[str]]:
    """The command-line arguments of each build: every example of every kind loom build takes."""
    from loom.examples.kernels import EXAMPLES
    from loom.examples.pipelines import app_names

    ekl = sorted(str(p) for p in (ROOT / "loom/examples/ekl").glob("*.ekl"))
    dataflow = sorted(str(p) for p in (ROOT / "loom/examples/dataflow").glob("*") if p.suffix in (".py", ".mlir")
                      and p.name != "__init__.py")
    accelerated = [[kernel, "--accel", str(ACCELERATORS / desc)] for kernel, desc in ACCELERATED]
    model = [write_small_cnn(scratch / "small_cnn.onnx")]
    if quick:
        return [["matmul_linalg"], ["gaussian"], [ekl[0]], [dataflow[0]], model, accelerated[0]]
    return [[s] for s in sorted(EXAMPLES) + app_names() + ekl + dataflow] + [model] + accelerated


def _label(args: list[str]) -> str:
    name = Path(args[0]).name
    return name if len(args) == 1 else f"{name} --accel {Path(args[2]).name}"


def _children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far, their children included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows, slow = [], []
    with tempfile.TemporaryDirectory() as scratch:
        todo = inputs(args.quick, Path(scratch))
        env = {**os.environ, "LOOM_CACHE_DIR": str(Path(scratch) / "cache"), "PYTHONPATH": str(ROOT)}
        # the DMA runtime library (every driver links it) is built once per machine and cached: its own
        # row, so that the first input with a driver does not carry it
        started, cpu_started = time.perf_counter(), _children_cpu()
        subprocess.run([sys.executable, "-c", "from loom.runtime.build import build_library; build_library()"],
                       env=env, cwd=scratch, check=True)
        wall, seconds = time.perf_counter() - started, _children_cpu() - cpu_started
        rows.append((RUNTIME_ROW, 1, wall, seconds))
        slow += [RUNTIME_ROW] if seconds > TARGET_SECONDS else []
        print(f"[0/{len(todo)}] {RUNTIME_ROW}: {wall:.2f} s wall, {seconds:.2f} s CPU", flush=True)
        for n, args in enumerate(todo, 1):
            out = Path(scratch) / f"out{n}"
            started, cpu_started = time.perf_counter(), _children_cpu()
            proc = subprocess.run([sys.executable, "-m", "loom.cli", "build", *args, "-o", str(out), "--threads", "2"],
                                  capture_output=True, text=True, env=env, cwd=scratch)
            wall, seconds = time.perf_counter() - started, _children_cpu() - cpu_started
            if proc.returncode != 0:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit(f"loom build {' '.join(args)} failed")
            files = sum(1 for p in out.rglob("*") if p.is_file())
            label = _label(args)
            rows.append((label, files, wall, seconds))
            slow += [label] if seconds > TARGET_SECONDS else []
            print(f"[{n}/{len(todo)}] {label}: {files} files, {wall:.2f} s wall, {seconds:.2f} s CPU", flush=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'input':<{width}}  files  wall s   CPU s")
    for name, files, wall, seconds in rows:
        print(f"{name:<{width}}  {files:>5}  {wall:6.2f}  {seconds:6.2f}")
    worst = max(rows, key=lambda r: r[3])
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; the verdict is on CPU time (the build "
          "process and its compilers, every thread), which other processes' load does not inflate")
    print(f"loom build: {len(rows)} inputs, slowest {worst[0]} {worst[3]:.2f} s CPU "
          f"(target < {TARGET_SECONDS:.0f} s each): {'MET' if not slow else 'MISSED by ' + ', '.join(slow)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
