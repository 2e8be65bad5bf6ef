"""The ``loom`` command.

    loom demo [PART...]             showcase on the built-in examples (accel, kernels)
    loom accel compile|run ...      host drivers for AXI-Stream accelerators from a JSON description
    loom dataflow run|opt ...       dataflow graphs (dfg) and olympus system passes
    loom list                       the built-in example kernels
    loom ir TARGET [--stage S]      a kernel's IR at a stage (frontend, loops, c)
    loom run TARGET [--scale N]     run on random inputs, check against numpy and upstream MLIR
    loom ekl run|ir FILE.ekl        EKL kernels: run against the numpy reference, IR at a stage
    loom build INPUT [-o DIR]       every artifact of a kernel / EKL file / pipeline / dataflow graph
    loom climb create|add-file|add-module|emit|check   bundles of built variants
    loom tune cpu|accel TARGET      black-box schedule search (Optuna, nevergrad, random, grid)
    loom sweep matmul --accel ...   design-space sweep on a process pool or a Dask cluster
    loom model run FILE [--input-shape 1,3,224,224] [--check] [--profile]
                                    a PyTorch (.py) or ONNX model on loom's CPU backend
    loom --version

TARGET is a built-in example name (``loom list``), ``path/to/file.py:kernel`` or
``path/to/file.mlir[:func]``. User errors (LoomError) are printed as
``file:line: message`` without a traceback; a closed output pipe (``| head``) ends
the command quietly with status 141.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from loom.errors import LoomError


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `loom ... | head`: the reader left; end quietly like other tools
        _silence_stdout()
        return 141


def _main(argv: list[str] | None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    try:
        with _loom_warnings_as_lines():
            return args.handler(args) or 0
    except LoomError as error:
        print(f"loom: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


@contextlib.contextmanager
def _loom_warnings_as_lines():
    """Print a LoomWarning as ``loom: warning: PLACE: message`` (no Python file and line of loom's own source);
    other warnings keep Python's format."""
    import warnings

    from loom.errors import LoomWarning

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, LoomWarning):
            print(f"loom: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (e.g. captured in tests)
        pass


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loom", description="A Python-native compiler for custom hardware accelerators.")
    from loom import __version__

    parser.add_argument("--version", action="version", version=f"loom {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    from loom.cli import accel_commands, demo, kernel_commands

    demo.register(sub)
    kernel_commands.register(sub)
    __import__("loom.cli.pipeline_commands", fromlist=["register"]).register(sub)
    accel_commands.register(sub)
    __import__("loom.cli.dataflow_commands", fromlist=["register"]).register(sub)
    __import__("loom.cli.ekl_commands", fromlist=["register"]).register(sub)
    __import__("loom.cli.build_commands", fromlist=["register"]).register(sub)
    __import__("loom.cli.tune_commands", fromlist=["register"]).register(sub)
    __import__("loom.cli.model_commands", fromlist=["register"]).register(sub)
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
