"""Upstream MLIR (mlir-opt / mlir-runner) as an independent oracle."""

from loom.oracle.mlir import LOWERING, RunResult, available, opt, run, to_generic_text, verify

__all__ = ["LOWERING", "RunResult", "available", "opt", "run", "to_generic_text", "verify"]
