"""The package's layering (``.importlinter``, docs/architecture.md) holds: no module imports a layer above it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports is not installed (pip install -e '.[test]')")
    proc = subprocess.run([exe, "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_contract_lists_every_top_level_package():
    """A new top-level package must be placed in a layer (else the contract says nothing about it)."""
    text = (ROOT / ".importlinter").read_text()
    packages = {p.name for p in (ROOT / "loom").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    missing = sorted(p for p in packages if f"loom.{p}" not in text)
    assert not missing, f"packages outside every layer of .importlinter: {missing}"
