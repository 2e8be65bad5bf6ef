"""Finding and running the scripts under ``benchmarks/`` from the tests (never imported as a package:
xDSL installs a top-level ``benchmarks`` package, so a script or helper is loaded from its file)."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
RUN_ALL = BENCH / "run_all.py"
TARGETS = BENCH / "figures" / "targets.py"


def has_main_block(path: Path) -> bool:
    """Whether the file has a top-level ``if __name__ == "__main__":`` (a script, not a helper module)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = {getattr(n, "id", None) for n in (node.test.left, *node.test.comparators)}
            values = {getattr(n, "value", None) for n in (node.test.left, *node.test.comparators)}
            if "__name__" in names and "__main__" in values:
                return True
    return False


def runnable_scripts() -> list[Path]:
    return sorted(p for p in BENCH.rglob("*.py") if "__pycache__" not in p.parts and has_main_block(p))


def load_file(path: Path, name: str):
    """A helper module of ``benchmarks/`` loaded from ``path`` under a private ``name`` (only for helpers
    that import nothing from their siblings, such as ``figures/run_stamp.py``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def script_env(out_dir: Path, **extra: str) -> dict[str, str]:
    """Environment of a benchmark child: this checkout's loom first, figures into ``out_dir``, no run id
    inherited, no display needed."""
    env = {k: v for k, v in os.environ.items() if k != "LOOM_BENCH_RUN"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(LOOM_FIGURES_OUT=str(out_dir), MPLBACKEND="Agg", **extra)
    return env


def run_script(path: Path, *args: str, out_dir: Path, cwd: Path, timeout: float = 300,
               **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(path), *args], cwd=cwd, env=script_env(out_dir, **env),
                          capture_output=True, text=True, timeout=timeout)
