"""loom as a real package: the wheel built from this checkout, installed into a fresh venv (no system
site-packages, dependencies from the package index), runs its CLI from a folder outside the checkout.

Slow (a build, a venv, an install, the demo: about a minute), so it runs only when ``$LOOM_TEST_WHEEL`` is 1:
``scripts/dev test`` (hence CI) sets it for a session of its own after the other tests; a developer's
plain ``pytest`` skips it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENABLED = os.environ.get("LOOM_TEST_WHEEL") == "1"

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(not ENABLED, reason="builds and installs the wheel: set LOOM_TEST_WHEEL=1 (scripts/dev test does)"),
]

# what the installed package must carry besides its modules (checked inside the venv)
DATA_FILES = ["accel/FORMAT.md", "accel/schema.json", "examples/accelerators/matmul_v3.json",
              "examples/accelerators/conv2d.json", "examples/pipelines/gaussian.py",
              "examples/pipelines/__init__.py", "runtime/dma_runtime.c", "runtime/dma_runtime.h",
              "runtime/models/matmul.c", "runtime/loom_model_json.h", "examples/accelerators/matvec.json",
              "examples/accelerators/models/matvec.py", "examples/accelerators/models/elementwise.c",
              "cli/templates/accel_model.py.txt",
              "examples/accelerators/matmul_rtl.json", "examples/accelerators/rtl/matmul_os.sv",
              "runtime/loom_rtl_harness.cpp", "runtime/loom_model.h"]
# every app module in the source tree must be listed by the installed wheel
APPS = sorted(p.stem for p in (REPO / "loom" / "examples" / "pipelines").glob("*.py") if not p.stem.startswith("_"))


def _run(cmd, cwd, env, timeout=600) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}: exit {proc.returncode}\n" \
                                 f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, run folder, environment) of a fresh venv with the wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy of what the wheel is made of: a stale build/ of the checkout cannot leak in
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "loom", src / "loom", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore", LOOM_CACHE_DIR=str(tmp / "cache"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist", src], tmp, env)
    wheels = list((tmp / "dist").glob("loom-*.whl"))
    assert len(wheels) == 1, wheels
    venv.create(tmp / "venv", with_pip=True, system_site_packages=False)
    bin_dir = tmp / "venv" / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "-q", wheels[0]], tmp, env)  # deps from the index
    run = tmp / "run"  # outside the checkout: only the installed package can be imported
    run.mkdir()
    return bin_dir, run, env


def test_the_installed_package_is_the_wheel_with_its_data(installed):
    bin_dir, run, env = installed
    out = _run([bin_dir / "python", "-c", "import loom, pathlib; print(pathlib.Path(loom.__file__).parent)"],
               run, env).stdout.strip()
    package = Path(out)
    assert package.is_relative_to(bin_dir.parent) and not package.is_relative_to(REPO), package
    missing = [f for f in DATA_FILES if not (package / f).is_file()]
    assert not missing, f"not in the wheel: {missing}"


def test_pipeline_list(installed):
    bin_dir, run, env = installed
    out = _run([bin_dir / "loom", "pipeline", "--list"], run, env).stdout
    listed = [line.split()[0] for line in out.splitlines()[2:] if line.strip()]
    assert listed == APPS, out


def test_accel_run_resolves_a_shipped_description(installed):
    bin_dir, run, env = installed
    assert not (run / "matmul_v3.json").exists()  # the bare name can only come from the package
    out = _run([bin_dir / "loom", "accel", "run", "matmul", "--accel", "matmul_v3.json", "--name", "v3_16",
                "--flow", "As", "--dims", "M=32,N=32,K=32"], run, env).stdout
    row = next(line.split() for line in out.splitlines() if line.startswith("v3_16"))
    assert row[1] == "As" and row[-1] == "ok", out  # ok: equal to the numpy reference, analytic transfer count


def test_demo(installed):
    bin_dir, run, env = installed
    out = _run([bin_dir / "loom", "demo", "--no-mlir"], run, env, timeout=900).stdout
    assert "loom demo: 3 of 3 parts correct" in out, out[-3000:]
