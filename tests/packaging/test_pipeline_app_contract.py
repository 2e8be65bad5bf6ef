"""The pipeline-app catalog: every app module carries its own inputs and output shape, one loader
serves the CLI and the tests, and a user's folder (``$LOOM_PIPELINE_APPS``) follows the same contract."""

import numpy as np
import pytest

from loom.cli import main
from loom.errors import LoomError
from loom.examples.pipelines import REQUIRED, app_names, load_app
from loom.frontends.pipeline import evaluate

BUILTIN = ["camera_pipeline", "cascade", "conv_layer", "dnn_conv", "gaussian", "gaussian_pyramid", "gemm", "harris",
           "laplacian_pyramid", "max_pool", "mobilenet_separable", "pointwise", "tone_map", "unsharp", "upsample"]


def test_builtin_apps_are_listed():
    assert app_names() == BUILTIN


@pytest.mark.parametrize("name", BUILTIN)
def test_an_apps_inputs_and_output_shape_fit_its_algorithm(name):
    """The reference evaluation of the CPU schedule on the app's own inputs has the app's own output shape
    (numpy dims reversed), so the metadata agrees with the algorithm."""
    app = load_app(name)
    size = (7, 5)
    inputs = app.make_inputs(size, np.random.default_rng(1))
    assert inputs and all(a.dtype == np.uint8 for a in inputs.values())
    shape = tuple(app.output_shape(size))
    assert shape[:2] == size
    out = evaluate(app.build("cpu")[0], inputs, shape)
    assert out.shape == shape[::-1]


def test_multichannel_apps_say_so_themselves():
    assert load_app("unsharp").output_shape((4, 3)) == (4, 3, 3)
    conv = load_app("conv_layer")
    assert conv.output_shape((4, 3)) == (4, 3, conv.CO)
    assert load_app("gaussian").output_shape((4, 3)) == (4, 3)


USER_APP = '''"""doubled: out = 2 * in, a user's app outside the loom package."""
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, minimum, u8, u16
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    output = Func("output")
    output[x, y] = u8(minimum(hw_input[x, y] * 2, 255))
    return dict(x=x, y=y, input=inp, hw_input=hw_input, output=output)


def build(schedule="accel", tile=(8, 8)):
    return schedule_app(algorithm(), schedule, lambda a: None,
                        lambda a, tile: stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"]]),
                        tile=tile)


def make_inputs(size, rng):
    print("doubled: make_inputs", size)
    w, h = size
    return {"input": rng.integers(0, 128, (h, w), dtype="uint8")}


def output_shape(size):
    print("doubled: output_shape", size)
    return tuple(size)
'''


def test_a_user_folder_app_runs_through_the_cli(tmp_path, monkeypatch, capsys):
    (tmp_path / "doubled.py").write_text(USER_APP)
    monkeypatch.setenv("LOOM_PIPELINE_APPS", str(tmp_path))
    assert app_names() == ["doubled"]
    assert main(["pipeline", "doubled", "--size", "8x6"]) == 0
    out = capsys.readouterr().out
    assert "doubled: make_inputs (8, 6)" in out and "doubled: output_shape (8, 6)" in out
    assert out.count("yes (bit-exact)") == 3  # cycle simulation, mapped simulation, CPU


def test_a_user_app_file_runs_by_its_path_without_a_folder_setting(tmp_path, monkeypatch, capsys):
    """``loom pipeline ./doubled.py``: the file is the app (named by its stem), the shipped apps stay listed."""
    (tmp_path / "doubled.py").write_text(USER_APP)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOOM_PIPELINE_APPS", raising=False)
    assert main(["pipeline", "./doubled.py", "--size", "8x6"]) == 0
    out = capsys.readouterr().out
    assert "doubled: output 8x6" in out and out.count("yes (bit-exact)") == 3
    assert app_names() == BUILTIN
    assert main(["pipeline", "missing.py"]) == 1
    assert "the pipeline app file missing.py does not exist" in capsys.readouterr().err
    (tmp_path / "folder.py").mkdir()
    assert main(["pipeline", "folder.py"]) == 1
    assert "the pipeline app file folder.py is a folder, not a file" in capsys.readouterr().err


def test_a_user_app_missing_part_of_the_contract_is_named(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken.py").write_text(USER_APP.replace("def output_shape", "def _output_shape"))
    monkeypatch.setenv("LOOM_PIPELINE_APPS", str(tmp_path))
    with pytest.raises(LoomError, match="pipeline app 'broken' does not define output_shape") as err:
        load_app("broken")
    assert str(tmp_path / "broken.py") in str(err.value)
    assert main(["pipeline", "broken"]) == 1
    captured = capsys.readouterr()
    assert "does not define output_shape" in captured.err and "Traceback" not in captured.err
    assert "output_shape" in REQUIRED


def test_an_unknown_app_lists_the_known_ones():
    with pytest.raises(LoomError, match="unknown pipeline app 'nope': expected one of camera_pipeline, cascade"):
        load_app("nope")


def test_a_user_app_imports_its_helpers_and_a_broken_one_is_named(tmp_path, monkeypatch, capsys):
    """Helper modules beside the apps (names starting with _ are not apps) import; an app that does not import
    is a LoomError naming its file and line, and --list lists it with why beside the others."""
    (tmp_path / "_common.py").write_text("SCALE = 2\n")
    (tmp_path / "doubled.py").write_text("from _common import SCALE\n" + USER_APP)
    (tmp_path / "typo.py").write_text("import numpy as np\n\nx = undefined_name + 1\n")
    monkeypatch.setenv("LOOM_PIPELINE_APPS", str(tmp_path))
    assert app_names() == ["doubled", "typo"]
    assert load_app("doubled").SCALE == 2
    with pytest.raises(LoomError, match="pipeline app 'typo' does not import: NameError") as err:
        load_app("typo")
    assert err.value.filename == str(tmp_path / "typo.py") and err.value.line == 3
    assert main(["pipeline", "--list"]) == 0
    out = capsys.readouterr().out
    assert "doubled" in out and "typo" in out and "does not load" in out


def test_an_error_in_a_user_apps_build_names_its_file_and_line(tmp_path, monkeypatch, capsys):
    """An exception raised in a user's build() is a LoomError at the app's failing line (as one at import), not
    a traceback; build returning a bare Func says what build must return."""
    (tmp_path / "typo.py").write_text(USER_APP.replace('    return schedule_app(',
                                                       '    scale = undefined_name\n    return schedule_app('))
    (tmp_path / "bare.py").write_text(USER_APP.replace("                        tile=tile)", "                        tile=tile)[0]"))
    monkeypatch.setenv("LOOM_PIPELINE_APPS", str(tmp_path))
    line = USER_APP.splitlines().index("def build(schedule=\"accel\", tile=(8, 8)):") + 2
    assert main(["pipeline", "typo", "--size", "8x6"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'typo.py'}:{line} pipeline app 'typo': build raised NameError: name 'undefined_name'" in err
    assert "Traceback" not in err
    assert main(["pipeline", "bare", "--size", "8x6"]) == 1
    err = capsys.readouterr().err
    assert (f"{tmp_path / 'bare.py'}:{line - 1} pipeline app 'bare': build must return (output Func, {{name: Func}})"
            in err and "got a Func" in err)


def test_share_and_unroll_say_which_apps_take_them(tmp_path, monkeypatch, capsys):
    assert main(["pipeline", "gaussian", "--share", "line"]) == 1
    assert "--share works with cascade, gaussian_pyramid" in capsys.readouterr().err
    (tmp_path / "doubled.py").write_text(USER_APP)
    monkeypatch.setenv("LOOM_PIPELINE_APPS", str(tmp_path))
    for flag, value, arg in (("--share", "line", "share"), ("--unroll", "2", "rate")):
        assert main(["pipeline", "doubled", "--size", "8x6", flag, value]) == 1
        err = capsys.readouterr().err
        assert (f"no app in {tmp_path} has one: {flag} needs an app whose build takes a {arg} argument" in err), err


def test_pipeline_help_names_the_apps_folder_variable(capsys):
    with pytest.raises(SystemExit):
        main(["pipeline", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "$LOOM_PIPELINE_APPS names a folder, only from that folder" in out
