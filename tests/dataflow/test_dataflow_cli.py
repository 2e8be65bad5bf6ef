"""``loom dataflow run FILE.mlir|FILE.py`` and ``loom dataflow opt``: results, the model beside the measured
rate, the utilisation table, and one-line errors (never a traceback) for bad inputs."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from loom.cli import main

HERE = Path(__file__).parent
OLYMPUS = HERE / "olympus"
LISTING1_PY = Path(__file__).parents[2] / "loom" / "examples" / "dataflow" / "listing1.py"

# a looping body in the IR: every item times 3, then 1 added by a second node
CHAIN = """
dfg.operator @triple inputs(%a: i32) outputs(%b: i32) {
  dfg.loop inputs(%a: i32) outputs(%b: i32) {
    %x = dfg.pull %a : i32
    %k = arith.constant 3 : i32
    %y = arith.muli %x, %k : i32
    dfg.push(%y) %b : i32
  }
}
dfg.operator @inc inputs(%a: i32) outputs(%b: i32) {
  dfg.loop inputs(%a: i32) outputs(%b: i32) {
    %x = dfg.pull %a : i32
    %k = arith.constant 1 : i32
    %y = arith.addi %x, %k : i32
    dfg.push(%y) %b : i32
  }
}
func.func @chain(%v: i32, %w: i32) -> (i32, i32) {
  %x_in, %x_out = dfg.channel(2) : i32
  %y_in, %y_out = dfg.channel(2) : i32
  %z_in, %z_out = dfg.channel(2) : i32
  dfg.instantiate @triple inputs(%x_in) outputs(%y_out)
  dfg.instantiate @inc inputs(%y_in) outputs(%z_out)
  dfg.push(%v) %x_out : i32
  dfg.push(%w) %x_out : i32
  %r = dfg.pull %z_in : i32
  %s = dfg.pull %z_in : i32
  return %r, %s : i32, i32
}
"""

GRAPH_PY = """
import numpy as np
from loom.dataflow import Graph, Process

N = 500

def graph():
    g = Graph("squares")
    a = g.channel(np.int64, depth=8, name="a")
    b = g.channel(np.int64, depth=8, name="b")
    g.node(Process(lambda out: out.push_many(np.arange(N, dtype=np.int64))), outputs=[a], name="source")
    g.node(lambda x: x * x, inputs=[a], outputs=[b], name="square")
    g.output(b, "sq")
    return g
"""


def cli(capsys, *argv):
    code = main(["dataflow", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_run_mlir_prints_results_channels_nodes_and_the_model(tmp_path, capsys):
    code, out, err = cli(capsys, "run", write(tmp_path, "chain.mlir", CHAIN), "--args", "5,-7")
    assert code == 0, err
    assert "result: 16, -20" in out  # 3*5+1, 3*(-7)+1
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert rows["x"][1:4] == ["2", "2", "2"]  # depth, pushes, pulls
    assert rows["triple"][1] == "2" and rows["inc"][1] == "2"  # two firings each
    assert re.search(r"throughput on %\w+ \(2 items\): measured [\d.e+]+ items/s, model [\d.e+]+ items/s "
                     r"\(bottleneck: ", out)


def test_run_py_graph_reports_outputs_and_predicted_beside_measured(tmp_path, capsys):
    code, out, err = cli(capsys, "run", write(tmp_path, "squares.py", GRAPH_PY))
    assert code == 0, err
    assert "output sq: 500 items" in out
    m = re.search(r"throughput on %(\w+) \(500 items\): measured ([\d.e+]+) items/s, model ([\d.e+]+) items/s", out)
    assert m, out
    measured, predicted = float(m.group(2)), float(m.group(3))
    assert measured > 0 and predicted > 0
    # every node here is Python: the model's GIL bound (sum of CPU per item) must not undercut the real rate
    # by more than the run's own start/stop overhead allows
    assert predicted > 0.5 * measured


def test_run_py_module_and_bindings_listing1(capsys):
    code, out, err = cli(capsys, "run", LISTING1_PY)
    assert code == 0, err
    assert "result: 64" in out  # (5 + 3) ** 2 computed on the simulated matmul accelerator


def test_opt_prints_the_utilisation_table_before_and_after(capsys):
    code, out, err = cli(capsys, "opt", OLYMPUS / "iris_pair.mlir", "--platform", OLYMPUS / "platform_64.json",
                         "-p", "olympus-sanitize,olympus-bus-packing")
    assert code == 0, err
    header = next(line for line in out.splitlines() if "input" in line)
    assert header.split() == ["input", "sanitize", "bus-packing"]
    eff = next(line for line in out.splitlines() if line.startswith("bus efficiency"))
    values = [float(v.rstrip("%")) for v in eff.split()[-3:]]
    # the seed's example: 4000 bytes of i32 and 3250 bytes of i26 (1000 elements each) on a 64-bit bus,
    # one element per beat naively
    naive = 100 * (32 * 1000 + 26 * 1000) / (64 * 2000)
    assert values[1] == pytest.approx(naive, abs=0.1) and values[2] >= 95
    assert "warning" not in out


def test_opt_warns_when_the_system_does_not_fit_the_platform(capsys, tmp_path):
    """A platform far too small for the system: the table shows it and a warning names every resource over the
    utilisation limit (it was printed without one)."""
    tiny = tmp_path / "tiny.json"
    tiny.write_text('{"name": "tiny", "clock_mhz": 250, "resources": {"ff": 10, "lut": 10, "bram": 1000, '
                    '"uram": 1, "dsp": 1000}, "memory": {"channels": 2, "width_bits": 64, "clock_mhz": 300}}')
    code, out, err = cli(capsys, "opt", OLYMPUS / "iris_pair.mlir", "--platform", tiny, "-p", "olympus-sanitize")
    assert code == 0, err
    (warning,) = [line for line in out.splitlines() if line.startswith("warning")]
    assert "does not fit platform tiny: ff" in warning and "lut" in warning and "bram" not in warning


BAD_PY = {
    "raises.py": ("def graph():\n    return 1 / 0\n", r"raises\.py:2: ZeroDivisionError while building the graph"),
    "syntax.py": ("def graph(:\n    pass\n", r"syntax\.py:1: syntax error"),
    "import_fails.py": ("import numpy\nraise RuntimeError('boom')\n", r"import_fails\.py:2: RuntimeError while importing"),
    "empty.py": ("X = 1\n", r"empty\.py: expected graph\(\) or module\(\) \+ bindings\(\)"),
    "notgraph.py": ("def graph():\n    return 42\n", r"graph\(\) returned a int, expected a loom.dataflow.Graph"),
}


@pytest.mark.parametrize("name", sorted(BAD_PY))
def test_bad_python_graph_files_are_one_line_errors(tmp_path, capsys, name):
    text, message = BAD_PY[name]
    code, out, err = cli(capsys, "run", write(tmp_path, name, text))
    assert code == 1
    assert re.search(message, err), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_run_inputs_are_one_line_errors(tmp_path, capsys):
    chain = write(tmp_path, "chain.mlir", CHAIN)
    cases = [
        (["run", tmp_path / "missing.mlir"], "cannot read"),
        (["run", tmp_path / "missing.py"], "no such file"),
        (["run", chain, "--args", "5,x"], r"--args: item 2 \('x'\) for i32 argument 1 of @chain: expected an integer"),
        (["run", chain, "--args", "5"], r"@chain takes 2 arguments \(i32, i32\), got 1"),
        (["run", chain, "--args", "5,4294967296"], r"item 2 .*out of range \[-2147483648, 4294967295\]"),
        (["run", chain, "--args", "1,2", "--timeout", "0"], "--timeout must be > 0"),
        (["run", write(tmp_path, "broken.mlir", "dfg.operator @x inputs(%a: i32")], "cannot parse"),
        (["run", write(tmp_path, "twice.mlir", CHAIN.replace("outputs(%z_out)", "outputs(%y_out)"))],
         "invalid dfg module"),
    ]
    for argv, message in cases:
        code, _, err = cli(capsys, *argv)
        assert code == 1, argv
        assert re.search(message, err), (argv, err)
        assert "Traceback" not in err


def test_bad_opt_inputs_are_errors(tmp_path, capsys):
    src = OLYMPUS / "iris_pair.mlir"
    plat = OLYMPUS / "platform_64.json"
    cases = [
        (["opt", src, "--platform", tmp_path / "none.json", "-p", "olympus-sanitize"], "cannot read the platform"),
        (["opt", src, "--platform", write(tmp_path, "p.json", "{\"name\": 3}"), "-p", "olympus-sanitize"], "p.json"),
        (["opt", src, "--platform", plat, "-p", "canonicalize"], "-p expects olympus passes"),
        (["opt", src, "--platform", plat, "-p", " , "], "-p expects olympus passes"),
        (["opt", src, "--platform", plat, "-p", "olympus-nope"], "unknown pass 'olympus-nope'"),
        (["opt", tmp_path / "none.mlir", "--platform", plat, "-p", "olympus-sanitize"], "cannot read"),
    ]
    for argv, message in cases:
        code, _, err = cli(capsys, *argv)
        assert code == 1, argv
        assert message in err, (argv, err)
        assert "Traceback" not in err


def test_the_installed_command_prints_no_traceback(tmp_path):
    """Through ``python -m loom.cli`` as a user runs it: exit status 1 and one stderr line."""
    bad = write(tmp_path, "raises.py", "def graph():\n    raise KeyError('k')\n")
    done = subprocess.run([sys.executable, "-m", "loom.cli", "dataflow", "run", str(bad)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"loom: error: {bad}:2: KeyError while building the graph "
                                                "(graph()): 'k'"]


AVERAGE = """
dfg.operator @avg inputs(%a: f64, %b: f64) outputs(%o: f64) {
  dfg.loop inputs(%a: f64, %b: f64) outputs(%o: f64) {
    %x = dfg.pull %a : f64
    %y = dfg.pull %b : f64
    %s = arith.addf %x, %y : f64
    %h = arith.constant 0.5 : f64
    %m = arith.mulf %s, %h : f64
    dfg.push(%m) %o : f64
  }
}
func.func @main(%x: f64, %y: f64) -> f64 {
  %a_in, %a_out = dfg.channel(2) : f64
  %b_in, %b_out = dfg.channel(2) : f64
  %o_in, %o_out = dfg.channel() : f64
  dfg.push(%x) %a_out
  dfg.push(%y) %b_out
  dfg.instantiate @avg inputs(%a_in, %b_in) outputs(%o_out)
  %r = dfg.pull %o_in
  return %r : f64
}
"""


def test_float_entry_arguments_are_read_as_floats(tmp_path, capsys):
    """--args was read as integers only, so an entry taking f64 could not get 1.5 (refused as 'not an
    integer') and got 1 and 2 for '1,2'."""
    code, out, err = cli(capsys, "run", write(tmp_path, "avg.mlir", AVERAGE), "--args", "1.5,2.25")
    assert code == 0, err
    assert out.splitlines()[0] == f"result: {(1.5 + 2.25) * 0.5}"


def test_an_interpreted_division_by_zero_is_a_located_error(tmp_path, capsys):
    """xDSL's interpreter asserts on a zero divisor: the run ended with 'node failed: AssertionError: '."""
    text = CHAIN.replace("%y = arith.muli %x, %k : i32", "%z = arith.subi %k, %k : i32\n    %y = arith.divsi %x, %z : i32")
    code, _, err = cli(capsys, "run", write(tmp_path, "div.mlir", text), "--args", "5,-7")
    assert code == 1
    assert "node @triple: node failed: integer division by zero in arith.divsi (5, 0)" in err, err
