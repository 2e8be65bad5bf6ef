"""``loom model run``: an .onnx file and a .py torch module, with --check against the references."""

from __future__ import annotations

import pytest

from loom.cli import main

onnx = pytest.importorskip("onnx")

from loom.models.onnx_conformance import backend_cases  # noqa: E402


def test_onnx_file_runs_and_checks(capsys):
    path = next(c for c in backend_cases() if c.name == "test_Conv2d_groups") / "model.onnx"
    assert main(["model", "run", str(path), "--check", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "check: relative error" in out and "(ok" in out
    assert "grouped_conv2d" in out and "ran on" in out and "share" in out


def test_torch_file_runs_and_checks(tmp_path, capsys):
    pytest.importorskip("torch")
    (tmp_path / "net.py").write_text(
        "import torch\n\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(6, 3)\n\n"
        "    def forward(self, x):\n"
        "        return torch.softmax(self.fc(x), dim=-1)\n")
    assert main(["model", "run", str(tmp_path / "net.py"), "--input-shape", "4,6", "--check"]) == 0
    assert "(ok" in capsys.readouterr().out


def test_user_errors_are_reported_without_traceback(tmp_path, capsys):
    (tmp_path / "broken.py").write_text("import torch\n\ndef model():\n    return 1 / 0\n")
    assert main(["model", "run", str(tmp_path / "broken.py"), "--input-shape", "2"]) == 1
    err = capsys.readouterr().err
    assert "broken.py:4" in err and "ZeroDivisionError" in err
    assert main(["model", "run", str(tmp_path / "broken.py"), "--input-shape", "2,x"]) == 1
    assert "bad --input-shape '2,x'" in capsys.readouterr().err
    assert main(["model", "run", str(tmp_path / "model.txt")]) == 1
    assert "expected a .onnx file or a .py file" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--repeats", "--high"])
def test_model_run_refuses_non_positive_counts(flag, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["model", "run", "model.onnx", flag, "0"])
    assert stop.value.code == 2
    assert f"argument {flag}: expected a positive integer, got '0'" in capsys.readouterr().err
