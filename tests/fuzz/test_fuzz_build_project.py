"""Fuzz the ``loom build`` project loader (``loom.build.project.load_project``): structural mutants of a valid
project (keys dropped, renamed or added; values replaced by values of other types, numbers at their edges,
deep and odd JSON) and byte-level mutants of its text. The only allowed outcomes are a loaded project or a
LoomError naming the project file; never another exception. Seeded and bounded (LOOM_FUZZ_SCALE scales it)."""

from __future__ import annotations

import copy
import json
import random

import pytest

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from loom.build.project import load_project
from loom.errors import LoomError
from tests.fuzz.accel_mutator import FUZZ_SCALE

VALID = {"format": "loom-project/1", "output": "out", "threads": 2,
         "defaults": {"target": "all", "dims": {"N": 8}, "seed": 1},
         "builds": [{"input": "k.ekl", "ranges": {"T": [0, 1]}, "format": "bf16", "overflow": "saturate"},
                    {"input": "k.ekl:k", "name": "second", "size": [4, 4], "input_shapes": [[1, 2]],
                     "check": False, "target": "c"}]}
ODD = [None, True, False, 0, -1, 1, 2 ** 64, 1.5, -0.0, 1e308, "", "x", "k.ekl", "../k.ekl", "e4m3fn", "fixed<8, 8>",
       "hls", [], [1], [1, 2, 3], [[1, 2]], {}, {"N": 0}, {"T": [1, 0]}, "\u0000", "a" * 300]
KEYS = ["format", "output", "threads", "defaults", "builds", "input", "name", "target", "accel", "accel_name", "flow",
        "dims", "size", "check", "seed", "input_shapes", "ranges", "rounding", "overflow", "N", "T", "zzz"]


def _containers(value, out):
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            _containers(v, out)
    elif isinstance(value, list):
        out.append(value)
        for v in value:
            _containers(v, out)
    return out


def _mutate(project, rng: random.Random):
    for _ in range(rng.randint(1, 3)):
        target = rng.choice(_containers(project, []))
        if isinstance(target, dict):
            action = rng.random()
            if target and action < 0.3:
                del target[rng.choice(list(target))]
            elif target and action < 0.8:
                target[rng.choice(list(target))] = copy.deepcopy(rng.choice(ODD))
            else:
                target[rng.choice(KEYS)] = copy.deepcopy(rng.choice(ODD))
        elif target:
            target[rng.randrange(len(target))] = copy.deepcopy(rng.choice(ODD))
        else:
            target.append(copy.deepcopy(rng.choice(ODD)))
    return project


def _load(tmp_path, text: str) -> None:
    path = tmp_path / "loom-project.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_project(path)
    except LoomError as error:
        assert error.filename == str(path), error
        assert error.where or error.line, error


def _project_folder(tmp_path):
    (tmp_path / "k.ekl").write_text("kernel k(a : f32[4], y : out& f32[4]) { out y = a * a; }")
    return tmp_path


def test_structural_mutants_load_or_are_located_loom_errors(tmp_path):
    folder = _project_folder(tmp_path)
    rng = random.Random(20261129)
    for _ in range(300 * FUZZ_SCALE):
        _load(folder, json.dumps(_mutate(copy.deepcopy(VALID), rng)))


@seed(7)
@settings(max_examples=150 * FUZZ_SCALE, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_text_mutants_load_or_are_located_loom_errors(tmp_path, data):
    folder = _project_folder(tmp_path)
    text = json.dumps(VALID)
    position = data.draw(st.integers(0, len(text)))
    cut = data.draw(st.integers(0, 8))
    insert = data.draw(st.text(alphabet='{}[]",:0123456789.-eE tfnul\\x', max_size=6))
    _load(folder, text[:position] + insert + text[position + cut:])


def test_names_the_system_cannot_look_up_are_missing_files(tmp_path, capsys):
    """A name longer than NAME_MAX made Path.is_file raise OSError (ENAMETOOLONG): loom build, loom ekl run,
    loom hls, loom dataflow run and loom run printed a traceback; a project input the same."""
    from loom.cli import main

    long = "a" * 300
    for argv in (["build", long], ["build", f"{long}.ekl"], ["ekl", "run", f"{long}.ekl"], ["hls", f"{long}.ekl"],
                 ["dataflow", "run", f"{long}.py"], ["run", f"{long}.py:k"]):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("loom: error: ") and "Traceback" not in err, (argv, err)
    project = _project_folder(tmp_path) / "p.json"
    project.write_text(json.dumps({"format": "loom-project/1", "builds": [{"input": long}]}))
    with pytest.raises(LoomError, match="no such file or built-in example") as info:
        load_project(project)
    assert info.value.where == "builds[0].input"


PLATFORM = {"name": "u55c", "clock_mhz": 300,
            "resources": {"ff": 2607360, "lut": 1303680, "bram": 4032, "uram": 960, "dsp": 9024},
            "memory": {"channels": 32, "width_bits": 256, "clock_mhz": 450}, "utilization_limit": 0.8}


def test_platform_description_mutants_load_or_are_located_loom_errors(tmp_path):
    """The olympus platform loader (loom dataflow opt --platform) under the same structural mutants."""
    from loom.platform import load_platform

    rng = random.Random(5)
    path = tmp_path / "platform.json"
    for _ in range(300 * FUZZ_SCALE):
        path.write_text(json.dumps(_mutate(copy.deepcopy(PLATFORM), rng)))
        try:
            platform = load_platform(str(path))
        except LoomError as error:
            assert error.filename == str(path) and (error.where or error.line), error
            continue
        assert platform.clock_mhz > 0 and platform.memory_width_bits > 0 and 0 < platform.utilization_limit <= 1
        assert all(isinstance(v, int) and v >= 0 for v in platform.resources.values())
