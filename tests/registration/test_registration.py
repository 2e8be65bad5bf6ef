"""Every loom pass and dialect is registered by declaration (the ``xdsl.universe`` entry point and
loom's own tables), never as a side effect of importing some other module first: each check runs
in a fresh interpreter that imports nothing but what it names."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loom.dialects import LOOM_DIALECTS
from loom.passes import ALIASES, BUILTIN_PASSES

BIN = Path(sys.executable).parent
XDSL_OPT = BIN / "xdsl-opt"


def fresh_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                          env={**os.environ}, timeout=120)


def test_pipeline_parse_sees_every_loom_pass_in_a_fresh_process():
    names = sorted([*BUILTIN_PASSES, *ALIASES])
    code = ("import json; from loom.passes.pipeline import make_pass\n"
            f"names = {names!r}\nok = []\n"
            "for n in names:\n"
            "    try:\n"
            "        make_pass(n, {})\n"
            "        ok.append(n)\n"
            "    except Exception as e:\n"
            "        # a pass with a required option is still found: its error is about the option\n"
            "        if 'unknown pass' not in str(e):\n"
            "            ok.append(n)\n"
            "print(json.dumps(ok))\n")
    proc = fresh_python(code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == names


def test_accel_coalesce_parses_without_importing_the_driver_first():
    proc = fresh_python("from loom.passes import Pipeline; print(Pipeline.parse('accel-coalesce{max-words=64}'))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "accel-coalesce{max-words=64}"


def test_loom_context_knows_loom_dialects_and_refuses_unknown_ops():
    code = ("from loom.dialects import context\n"
            "from xdsl.parser import Parser\n"
            "m = Parser(context(), 'func.func @f() {\\n \"accel.wait_recv\"() : () -> ()\\n func.return\\n}').parse_module()\n"
            "print(type(list(m.walk())[2]).__name__)\n"
            "try:\n"
            "    Parser(context(), '\"accel.no_such_op\"() : () -> ()').parse_module()\n"
            "    print('parsed')\n"
            "except Exception as e:\n"
            "    print('refused')\n")
    proc = fresh_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["WaitRecvOp", "refused"]


@pytest.mark.skipif(not XDSL_OPT.exists(), reason="xdsl-opt not installed in this environment")
@pytest.mark.parametrize("name", sorted(BUILTIN_PASSES))
def test_xdsl_opt_finds_every_loom_pass(name, tmp_path):
    """Through the entry point (needs loom installed, as scripts/dev does)."""
    source = tmp_path / "empty.mlir"
    source.write_text("builtin.module {}\n")
    proc = subprocess.run([str(XDSL_OPT), str(source), "-p", name], capture_output=True, text=True, cwd="/",
                          timeout=120)
    assert "Unrecognized pass" not in proc.stderr, proc.stderr[-2000:]
    # passes run on an empty module unless an option is required or invalid (then a LoomError says which)
    assert proc.returncode == 0 or "LoomError" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.skipif(not XDSL_OPT.exists(), reason="xdsl-opt not installed in this environment")
@pytest.mark.parametrize("dialect", sorted(LOOM_DIALECTS))
def test_xdsl_opt_parses_loom_dialects(dialect, tmp_path):
    if dialect == "accel":
        op, text = "accel.wait_recv", 'func.func @f() {\n  "accel.wait_recv"() : () -> ()\n  func.return\n}\n'
    else:
        from xdsl.dialects.builtin import ModuleOp

        from loom.dialects.ubuf import DesignOp
        op, text = "ubuf.design", str(ModuleOp([DesignOp("d", 3, 1, [4, 4], [])]))
    source = tmp_path / "x.mlir"
    source.write_text(text)
    proc = subprocess.run([str(XDSL_OPT), str(source)], capture_output=True, text=True, cwd="/", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert op in proc.stdout
