"""The onnx wheel's backend test models through loom: how many run and equal the stored outputs, how
many are refused at import (op named), and any mismatch or crash (there should be none).

    .venv/bin/python benchmarks/bench_onnx_conformance.py [--quick] [--verbose] [--modules a,b,...]

Two sets: the model files shipped in the wheel (pytorch-converted, pytorch-operator, simple), and onnx's
per-op node cases generated in memory for the op families loom imports (``NODE_MODULES``).
``--quick``: every fifth model file, and the node cases of gemm and slice. ``--modules a,b,...``: those node case
modules only.
"""

from __future__ import annotations

import argparse
import collections
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--modules", help="comma-separated node case modules instead of NODE_MODULES (e.g. an earlier "
                                          "list, for a figure comparable with it)")
    args = parser.parse_args()
    from loom.models.onnx_conformance import NODE_MODULES, backend_cases, node_cases, run_case, run_node_case

    files = backend_cases()
    modules = tuple(args.modules.split(",")) if args.modules else NODE_MODULES
    nodes = node_cases(("gemm", "slice") if args.quick else modules)
    if args.quick:
        files = files[::5]
    bad = _report("model files", files, run_case, args.verbose)
    bad += _report("node cases", nodes, run_node_case, args.verbose)
    if bad:
        raise SystemExit(1)


def _report(what: str, cases, run, verbose: bool) -> int:
    counts: collections.Counter = collections.Counter()
    refused_ops: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for case in cases:
        result = run(case)
        counts[result.status] += 1
        if result.status == "refused":
            op = result.message.split("(", 1)[-1].split(")", 1)[0] if "(" in result.message else "input dtype"
            refused_ops[op] += 1
        if verbose or result.status in ("mismatch", "error"):
            print(f"  {result.status:8s} {result.name}: {result.message[-160:]}")
    print(f"{len(cases)} ONNX backend {what} in {time.perf_counter() - start:.1f} s: "
          f"{counts['pass']} pass, {counts['refused']} refused at import, {counts['mismatch']} mismatch, "
          f"{counts['error']} error")
    print("  refused by op: " + ", ".join(f"{op} {n}" for op, n in refused_ops.most_common()))
    return counts["mismatch"] + counts["error"]


if __name__ == "__main__":
    main()
