"""xDSL's parser for MLIR text a user wrote or edited, without the exponential string pattern.

xDSL's string literal pattern ``"(?:[^"\\]+|...)*"`` backtracks exponentially over a string that does not
close on its line: deleting a closing quote in a file hung the parser. ``LinearLexer`` makes it possessive
(the same matches, in linear time); ``text_parser`` is a ``Parser`` that lexes with it.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer


class LinearLexer(MLIRLexer):
    """xDSL's MLIR lexer with its string literal pattern made possessive."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


def use_linear_lexer(parser: Parser, text: str, name: str) -> Parser:
    """``parser`` (made over empty text) reading ``text`` with ``LinearLexer``."""
    parser._parser_state = ParserState(LinearLexer(Input(text, name)))
    return parser


def text_parser(ctx: Context, text: str, name: str = "<unknown>") -> Parser:
    """An xDSL ``Parser`` of ``text`` that cannot hang on an unclosed string."""
    return use_linear_lexer(Parser(ctx, "", name), text, name)
