"""The onnx wheel's backend test models through loom: how many run and equal the stored outputs, how
many are refused at import (op named), and any mismatch or crash (there should be none).

    .venv/bin/python benchmarks/bench_onnx_conformance.py [--quick] [--verbose]

``--quick``: every fifth model.
"""

from __future__ import annotations

import argparse
import collections
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    from loom.models.onnx_conformance import backend_cases, run_case

    cases = backend_cases()
    if args.quick:
        cases = cases[::5]
    counts: collections.Counter = collections.Counter()
    refused_ops: collections.Counter = collections.Counter()
    start = time.perf_counter()
    for case in cases:
        result = run_case(case)
        counts[result.status] += 1
        if result.status == "refused":
            op = result.message.split("(", 1)[-1].split(")", 1)[0] if "(" in result.message else "input dtype"
            refused_ops[op] += 1
        if args.verbose or result.status in ("mismatch", "error"):
            print(f"  {result.status:8s} {result.name}: {result.message[-160:]}")
    print(f"{len(cases)} ONNX backend test models in {time.perf_counter() - start:.1f} s: "
          f"{counts['pass']} pass, {counts['refused']} refused at import, {counts['mismatch']} mismatch, "
          f"{counts['error']} error")
    print("refused by op: " + ", ".join(f"{op} {n}" for op, n in refused_ops.most_common()))
    if counts["mismatch"] or counts["error"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
