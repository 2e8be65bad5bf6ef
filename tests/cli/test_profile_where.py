"""``loom model run --profile``: the "where" column shortens a long place at a path separator."""

from __future__ import annotations

import loom.models.report as report
from loom.cli.model_commands import _print_profile
from loom.cli.table import shorten_path
from loom.models.report import LayerRow

LONG = "/home/someone/projects/vision/experiments/2026/models/resnet_variant.py:123 (layer1.0.conv1: Conv2d, aten.conv2d)"


def test_a_long_place_loses_leading_directories_not_the_middle_of_a_name():
    short = shorten_path(LONG, 60)
    assert short.startswith(".../") and short.endswith(LONG.split("/")[-1])
    assert "resnet_variant.py:123" in short


def test_a_short_place_and_a_place_without_directories_stay_whole():
    assert shorten_path("net.py:4 (fc: Linear)", 60) == "net.py:4 (fc: Linear)"
    assert shorten_path("x" * 70, 60) == "x" * 70


def test_the_profile_table_keeps_the_file_and_line_readable(monkeypatch, capsys):
    row = LayerRow(0, "conv2d", (1, 8, 4, 4), "cpu", 1.5, 1.0, LONG)
    monkeypatch.setattr(report, "layer_report", lambda profile: [row])
    _print_profile([])
    out = capsys.readouterr().out
    assert ".../resnet_variant.py:123 (layer1.0.conv1: Conv2d, aten.conv2d)" in out
