"""Climbs: the seed's Listing 2 sequence through the Python API and the CLI, and the deployability check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.build import build, climbs
from loom.build.deploy import load_unit
from loom.errors import LoomError

ROOT = Path(__file__).resolve().parents[2]
V3 = ROOT / "loom" / "examples" / "accelerators" / "matmul_v3.json"

KERNEL = '''
from loom import kernel, linalg, MemRef, I32, Dim
M, N, K = Dim("M"), Dim("N"), Dim("K")

@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)
'''

APP = '''import numpy as np
# @loom climbs init
weights = np.ones((4, 4), np.int32)
# @loom climbs accelerate begin
result = weights @ weights
# @loom climbs accelerate end
print(result.sum())
'''


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """A CPU-only build, an accelerated build, and one for an accelerator loom has no model of."""
    root = tmp_path_factory.mktemp("variants")
    (root / "mm.py").write_text(KERNEL)
    desc = json.loads(V3.read_text())
    desc["cpu"] = str(V3.parent / desc["cpu"])
    del desc["accelerators"][0]["model"]  # an accelerator whose description names no behaviour model
    (root / "unknown.json").write_text(json.dumps(desc))
    dims = {"M": 5, "N": 4, "K": 3}
    build(root / "mm.py", root / "cpu", dims=dims)
    build(root / "mm.py", root / "acc", accel=str(V3), accel_name="v3_4", flow="As", dims=dims)
    build(root / "mm.py", root / "unknown", accel=str(root / "unknown.json"), accel_name="v3_4", flow="As",
          check=False)
    return root


def make_app(root: Path) -> Path:
    app = root / "tpred_app"
    (app / "data" / "nested").mkdir(parents=True)
    (app / "app.py").write_text(APP)
    (app / "Dockerfile").write_text("FROM python:3.11\n")
    (app / "client.py").write_text("print('client')\n")
    (app / "data" / "nested" / "x.csv").write_text("1,2\n")
    (app / "Readme.md").write_text("# app\n")
    (app / "requirements.txt").write_text("numpy\n")
    return app


def test_listing_2_sequence(variants, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path)
    climbs.create("accelerated_tpred_simple", "tpred_integrated_v1/")
    assert capsys.readouterr().out == ("Climb tpred_integrated_v1/accelerated_tpred_simple.climb "
                                       "created successfully.\n")
    climb = "tpred_integrated_v1/accelerated_tpred_simple.climb"
    climbs.add_file(app / "app.py", "python", climb)
    climbs.add_file(app / "Dockerfile", "docker", climb)
    for name in ("client.py", "data/", "Readme.md", "requirements.txt"):
        climbs.add_file(str(app) + "/" + name, "copy", climb)
    climbs.add_module(variants / "cpu" / "variant.section", climb)
    climbs.add_module(variants / "acc", climb)
    climbs.add_module(variants / "unknown", climb, name="mm_unknown_accelerator")
    out = climbs.emit(climb)
    printed = capsys.readouterr().out
    assert "3 variants: mm_cpu, mm_accelerated, mm_unknown_accelerator" in printed

    assert (out / "app" / "data" / "nested" / "x.csv").read_text() == "1,2\n"  # folders copied recursively
    manifest = json.loads((out / "climb.json").read_text())
    app_entry = next(f for f in manifest["files"] if f["name"] == "app.py")
    assert [(a["line"], a["annotation"]) for a in app_entry["annotations"]] == [
        (2, "init"), (4, "accelerate begin"), (6, "accelerate end")]

    verdicts = {r.name: r for r in climbs.check(out)}
    assert verdicts["mm_cpu"].deployable and verdicts["mm_accelerated"].deployable
    unknown = verdicts["mm_unknown_accelerator"]
    assert not unknown.deployable and "no simulator model" in unknown.line()

    # the invocation snippets work: both runnable variants compute A.B
    rng = np.random.default_rng(0)
    a, b = rng.integers(-9, 9, (6, 5)).astype(np.int32), rng.integers(-9, 9, (5, 7)).astype(np.int32)
    for variant in ("mm_cpu", "mm_accelerated"):
        snippet = (out / f"invoke_{variant}.py").read_text()
        scope: dict = {"__file__": str(out / f"invoke_{variant}.py")}
        exec(compile(snippet, variant, "exec"), scope)
        c = np.zeros((6, 7), np.int32)
        scope["mm"](a, b, c)
        np.testing.assert_array_equal(c, a @ b)

    # the bundle's own check script, as a runtime would run it
    proc = subprocess.run([sys.executable, str(out / "deploy_check.py")], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "mm_cpu (cpu): deployable yes" in proc.stdout
    assert "mm_unknown_accelerator (accelerated): deployable no:" in proc.stdout


def test_a_damaged_variant_is_not_deployable(variants, tmp_path):
    climb = climbs.create("c", tmp_path, quiet=True)
    climbs.add_module(variants / "acc", climb, quiet=True)
    out = climbs.emit(climb, tmp_path / "bundle", quiet=True)
    variant = out / "variants" / "mm_accelerated"
    (variant / "mm" / "driver" / "accelerator.json").unlink()
    with open(variant / "mm" / "c" / "mm.c", "a") as f:
        f.write("// edited\n")
    (result,) = climbs.check(out)
    assert not result.deployable
    assert any("accelerator description" in r and "missing" in r for r in result.reasons)
    assert "mm/c/mm.c changed since the build" in result.reasons


def test_bad_climb_operations(variants, tmp_path):
    climb = climbs.create("c", tmp_path, quiet=True)
    with pytest.raises(LoomError, match="already exists"):
        climbs.create("c", tmp_path, quiet=True)
    (tmp_path / "f.rs").write_text("fn main() {}")
    with pytest.raises(LoomError, match="unknown language 'rust'; expected one of python, docker, copy"):
        climbs.add_file(tmp_path / "f.rs", "rust", climb)
    with pytest.raises(LoomError, match="no such file"):
        climbs.add_file(tmp_path / "nope.py", "python", climb)
    (tmp_path / "d").mkdir()
    with pytest.raises(LoomError, match="only 'copy' takes folders"):
        climbs.add_file(tmp_path / "d", "python", climb)
    (tmp_path / "bad.py").write_text("# @loom climbs accelerate begin\nx = 1\n")
    with pytest.raises(LoomError, match=r"bad.py:1: 'accelerate begin' is never ended"):
        climbs.add_file(tmp_path / "bad.py", "python", climb)
    with pytest.raises(LoomError, match="no variant"):
        climbs.emit(climb)
    with pytest.raises(LoomError, match="no such section file"):
        climbs.add_module(tmp_path / "d", climb)
    climbs.add_module(variants / "cpu", climb, quiet=True)
    with pytest.raises(LoomError, match="already has a variant named mm_cpu"):
        climbs.add_module(variants / "cpu", climb, quiet=True)


@pytest.mark.parametrize("content", [
    {"format": "loom-climb/1"}, {"format": "loom-climb/1", "name": "x", "files": [1], "modules": []},
    {"format": "loom-section/1"}, {"format": "loom-section/1", "name": "x", "variant": "cpu", "units": [{}]},
    {"format": "loom-section/1", "name": "x", "variant": "cpu", "units": [
        {"name": "u", "kind": "kernel", "function": "u", "library": None, "lowered_ir": None, "frontend_ir": None,
         "checked": False, "native": False, "accelerator": {"name": 3}}]},
])
def test_structurally_damaged_files_are_located_errors(tmp_path, content):
    path = tmp_path / ("x.climb" if content["format"] == "loom-climb/1" else "variant.section")
    path.write_text(json.dumps(content))
    with pytest.raises(LoomError, match="expected"):
        if path.suffix == ".climb":
            climbs.add_file(path, "copy", path, quiet=True)
        else:
            load_unit(tmp_path, "u")


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=60), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12).map(lambda v: json.dumps(v).encode()),
    st.sampled_from(["loom-climb/1", "loom-section/1"]).flatmap(lambda fmt: st.dictionaries(
        st.sampled_from(["name", "variant", "units", "files", "modules"]),
        st.none() | st.text(max_size=4) | st.lists(st.dictionaries(st.text(max_size=5), st.none() | st.text(max_size=3),
                                                                   max_size=3), max_size=2),
        max_size=5).map(lambda d: json.dumps({"format": fmt, **d}).encode()))))
def test_fuzzed_climb_and_section_files_give_loom_errors(tmp_path, content):
    """Whatever a climb or section file holds, reading it is a LoomError or works (never another error)."""
    for name in ("x.climb", "variant.section"):
        path = tmp_path / name
        path.write_bytes(content)
        try:
            if name.endswith(".climb"):
                climbs.add_file(path, "copy", path, quiet=True)
            else:
                load_unit(tmp_path, "u")
        except LoomError:
            pass
