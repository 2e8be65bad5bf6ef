"""MLIR text a user wrote is parsed without xDSL's exponential string pattern: a string that does not close on
its line is a parse error at once (xDSL's own lexer backtracks exponentially over it; 28 characters took
minutes), in every place loom reads a user's .mlir file."""

import time

import pytest
from xdsl.utils.exceptions import ParseError

from loom.dialects import context
from loom.dialects.parsing import text_parser
from loom.errors import LoomError

UNCLOSED = 'builtin.module attributes {a = "' + "ab" * 14 + ' and more text here } {\n}\n'


def test_an_unclosed_string_is_a_parse_error_at_once():
    start = time.monotonic()
    with pytest.raises(ParseError, match="f.mlir:1:32"):
        text_parser(context(), UNCLOSED, "f.mlir").parse_module()
    assert time.monotonic() - start < 2


def test_a_closed_string_parses_as_before():
    module = text_parser(context(), 'builtin.module attributes {a = "x\\"y\\n"} {\n}\n').parse_module()
    assert module.attributes["a"].data == 'x"y\n'


@pytest.mark.parametrize("reader", ["dataflow", "dataflow_unit", "deploy"])
def test_user_mlir_files_with_an_unclosed_string_are_refused_at_once(tmp_path, reader):
    from pathlib import Path

    path = tmp_path / "graph.mlir"
    path.write_text(UNCLOSED)
    start = time.monotonic()
    with pytest.raises(LoomError, match="graph.mlir"):
        if reader == "dataflow":
            from loom.cli.dataflow_commands import _parse
            _parse(str(path))
        elif reader == "dataflow_unit":
            from loom.build.dataflow_unit import _parse
            _parse(Path(path))
        else:
            from loom.build.deploy import _parse
            _parse(Path(path))
    assert time.monotonic() - start < 2
