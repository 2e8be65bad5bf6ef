"""``loom build PROJECT.json``: several builds with their own options in one JSON file (loom.build.project);
every malformed project is refused naming the file and the JSON path, before anything is built."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from loom.build import build, read_index
from loom.build.deploy import load_unit
from loom.build.project import build_project, load_project
from loom.cli import main
from loom.errors import LoomError

from tests.ekl.test_ekl_user_kernels import VAPOUR  # the saturation-table kernel: T within [273.15, 303.15)

GRAPH = """
from loom.dataflow import Graph, Process

def graph():
    g = Graph("sensors")
    a, b = g.channel("f64", name="a"), g.channel("f64", name="b")
    def source(port):
        for v in range(5):
            port.push(float(v))
    g.node(Process(source), outputs=[a], name="source")
    g.node(lambda x: x * 0.5, inputs=[a], outputs=[b], name="half")
    g.output(b, "half")
    return g
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "vapour.ekl").write_text(VAPOUR)
    (tmp_path / "graph.py").write_text(GRAPH)

    def write(content) -> str:
        path = tmp_path / "loom-project.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return str(path)

    return tmp_path, write


def test_a_project_builds_each_entry_with_its_options(project):
    root, write = project
    write({"format": "loom-project/1", "output": "out", "threads": 1, "defaults": {"target": "c"},
           "builds": [{"input": "kernels/vapour.ekl", "ranges": {"T": [273.15, 303.0]}, "target": "all"},
                      {"input": "graph.py", "name": "sensors"}]})
    results = build_project(root)  # the folder holding loom-project.json
    assert [r.folder for r in results] == [root / "out" / "vapour", root / "out" / "sensors"]
    assert read_index(root / "out" / "sensors")["input_kind"] == "dataflow"
    vapour = load_unit(root / "out" / "vapour", "vapour")  # the built object, against numpy
    rng = np.random.default_rng(0)
    T, q, rh = 273.15 + 29.8 * rng.random(10), rng.random(10), np.zeros(10)
    vapour(T, q, rh, np.array([6.11, 8.72, 12.27, 17.04, 23.37, 31.67, 42.43]))
    es = np.array([6.11, 8.72, 12.27, 17.04, 23.37, 31.67, 42.43])
    x = (T - 273.15) / 5
    j, f = x.astype(int), np.fmod(x, 1.0)
    np.testing.assert_allclose(rh, q / (es[j] * (1 - f) + es[j + 1] * f), rtol=1e-14)


def test_ranges_reach_the_ekl_check_and_a_failed_build_can_be_redone_in_place(tmp_path):
    """A build that failed half-way left a folder without index.json, which the next build refused to
    replace ('not the output of an earlier loom build'); EKL inputs had no way to stay inside a table."""
    source = tmp_path / "vapour.ekl"
    source.write_text(VAPOUR)
    with pytest.raises(LoomError, match="index -?\\d+ out of range for dimension 0 of size 7"):
        build(source, tmp_path / "out", target="c", threads=1)  # T drawn from [0, 1): outside ES
    with pytest.raises(LoomError, match="did not finish"):
        read_index(tmp_path / "out")
    result = build(source, tmp_path / "out", target="c", threads=1, ranges={"T": (273.15, 303.0)})
    assert "max relative error vs numpy" in result.units[0]["checks"][0]


BASE = {"format": "loom-project/1", "builds": [{"input": "kernels/vapour.ekl"}]}


def _with(**changes) -> dict:
    entry = {**BASE["builds"][0], **changes}
    return {**BASE, "builds": [entry]}


@pytest.mark.parametrize("content, where, message", [
    ("{\"format\": \"loom-project/1\",\n \"builds\": [,]}", None, r"loom-project.json:2:13: invalid JSON"),
    ([], "(top level)", "expected an object, got a list"),
    ({"builds": []}, "(top level)", "missing key 'format'"),
    ({**BASE, "format": "loom-project/9"}, "format", "expected 'loom-project/1'"),
    ({**BASE, "builds": []}, "builds", "expected a non-empty list of builds, got none"),
    ({**BASE, "threads": 0}, "threads", "expected a positive integer, got an integer 0"),
    ({**BASE, "outputs": "x"}, "outputs", "unknown key 'outputs'"),
    ({**BASE, "defaults": {"target": "fpga"}}, "defaults.target", "expected one of all, mlir, c, driver, hls"),
    ({**BASE, "defaults": {"input": "x.ekl"}}, "defaults.input", "unknown key 'input'"),
    (_with(input="kernels/missing.ekl"), "builds[0].input", "no such file or built-in example: kernels/missing.ekl"),
    (_with(input=3), "builds[0].input", "expected a non-empty string, got an integer 3"),
    (_with(fromat="e4m3fn"), "builds[0].fromat", "unknown key 'fromat'"),
    (_with(format="e4m3x"), "builds[0].format", "unknown number format 'e4m3x'"),
    (_with(format="e4m3fn", overflow="wrap"), "builds[0].overflow", "must be one of inf, saturate, got 'wrap'"),
    (_with(format="fixed<8, 8>", rounding="up"), "builds[0].rounding", "rounding must be one of"),
    (_with(overflow="saturate"), "builds[0].overflow", "modes of a number format: give the format too"),
    (_with(dims={"N": "8"}), "builds[0].dims.N", "expected a positive integer, got a string '8'"),
    (_with(size=[32]), "builds[0].size", r"expected \[width, height\]"),
    (_with(ranges={"T": [3, 1]}), "builds[0].ranges.T", "expected LO < HI"),
    (_with(ranges={"T": "0:1"}), "builds[0].ranges.T", r"expected \[LO, HI\] \(numbers\)"),
    (_with(check="yes"), "builds[0].check", "expected true or false"),
    (_with(name="../up"), "builds[0].name", "expected a folder name"),
    (_with(accel="acc.json"), "builds[0].accel", "no such file: acc.json"),
    (_with(target="driver"), "builds[0].target", "needs an accelerator description"),
    ({**BASE, "builds": [{"input": "kernels/vapour.ekl"}, {"input": "kernels/vapour.ekl"}]}, "builds[1].input",
     "two builds write into 'vapour' \\(also builds\\[0\\]\\)"),
])
def test_a_malformed_project_names_the_file_and_the_json_path(project, content, where, message):
    root, write = project
    path = write(content)
    with pytest.raises(LoomError, match=message) as info:
        load_project(path)
    assert info.value.filename == path
    assert info.value.where == where


@pytest.mark.parametrize("change, key, message", [
    ({"ranges": {"X": [0, 1]}}, "ranges", "no kernel built from .* has a parameter 'X'"),
    ({"dims": {"Q": 4}, "target": "hls"}, "dims", "kernel vapour has no dim Q"),
])
def test_an_error_while_building_names_the_entry_and_its_key(project, change, key, message):
    root, write = project
    write(_with(**change))
    with pytest.raises(LoomError, match=message) as info:
        build_project(root, root / "out")
    assert info.value.where == f"builds[0].{key} (vapour)"


def test_cli_builds_a_project_and_refuses_options_the_project_holds(project, capsys):
    root, write = project
    path = write({"format": "loom-project/1", "defaults": {"target": "mlir"},
                  "builds": [{"input": "graph.py"}, {"input": "kernels/vapour.ekl", "name": "rh"}]})
    assert main(["build", path, "-o", str(root / "o")]) == 0
    out = capsys.readouterr().out
    assert f"files in {root / 'o' / 'graph'}/" in out and f"files in {root / 'o' / 'rh'}/" in out
    assert main(["build", path, "--target", "c"]) == 1
    assert re.search(r"--target: a project file holds each build's options", capsys.readouterr().err)
    # --threads is how this machine builds, not a build's option: it overrides the project's (it was ignored)
    path = write({"format": "loom-project/1", "threads": 3, "builds": [{"input": "graph.py", "target": "mlir"}]})
    assert main(["build", path, "-o", str(root / "t")]) == 0
    assert read_index(root / "t" / "graph")["threads"] == 3
    assert main(["build", path, "-o", str(root / "t"), "--threads", "1"]) == 0
    assert read_index(root / "t" / "graph")["threads"] == 1


def test_a_selection_in_a_dataflow_file_is_refused(project):
    root, _ = project
    with pytest.raises(LoomError, match="a dataflow file is built whole: drop ':half'"):
        build(f"{root / 'graph.py'}:half", root / "out", threads=1)


FMA_GRAPH = """
import numpy as np
import loom.ekl
from loom.dataflow import Graph, Process

FMA = loom.ekl.load("kernel fma(a : f32[8], b : f32, y : out& f32[8]) { out y[i] = a[i] * b + a[i]; }").fma

def graph():
    g = Graph("g")
    a, b, y = g.channel("memref<8xf32>", name="a"), g.channel("f32", name="b"), g.channel("memref<8xf32>", name="y")
    def source(pa, pb):
        pa.push(np.linspace(-2, 2, 8, dtype=np.float32))
        pb.push(1.5)
    g.node(Process(source), outputs=[a, b], name="source")
    g.node(FMA, inputs=[a, b], outputs=[y], name="fma")
    g.output(y, "y")
    return g
"""


def test_hls_of_a_graph_node_in_a_number_format_is_checked_bit_for_bit(tmp_path):
    """loom build had no number format option (only loom hls --format); and --target hls wrote a dataflow
    node's HLS C++ without running its C simulation (the node was built with check=False)."""
    source = tmp_path / "graph.py"
    source.write_text(FMA_GRAPH)
    result = build(source, tmp_path / "out", target="hls", threads=1, number_format="e4m3fn", overflow="saturate")
    paths = {a["path"] for a in result.artifacts}
    assert {"graph.fma/hls/fma.cpp", "graph.fma/hls/loom_float.h"} <= paths
    assert "loom_float<4, 3, 7, LOOM_FN, LOOM_RND_NEAREST_EVEN, LOOM_OVF_SATURATE>" in \
        (result.folder / "graph.fma" / "hls" / "fma.cpp").read_text()
    node = next(u for u in result.units if u["name"] == "graph.fma")
    assert node["checks"] == ["HLS C simulation (g++, loom_hls.h) vs the kernel compiled in e4m3fn: bit-exact"]
    assert result.index["number_format"] == "e4m3fn"


def test_cli_refuses_a_bad_format_before_writing(tmp_path, capsys):
    source = tmp_path / "k.ekl"
    source.write_text("kernel k(a : f32[4], y : out& f32[4]) { out y = a * a; }")
    assert main(["build", str(source), "-o", str(tmp_path / "out"), "--format", "e9m9"]) == 1
    assert "--format: unknown number format 'e9m9'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
