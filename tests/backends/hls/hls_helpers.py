"""Reading generated HLS C++ in tests: which pragmas sit in which loop."""

from __future__ import annotations

import re

from xdsl.parser import Parser

from loom.dialects import context


def parse(text: str):
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def loop_pragmas(source: str) -> list[tuple[str, list[str]]]:
    """Every generated ``for`` header of the source, in order, with the HLS pragmas at the top of its body."""
    lines = source.splitlines()
    out = []
    for k, line in enumerate(lines):
        # generated loops (the helpers' loops of the prelude have other counters)
        if re.match(r"\s*for \((intptr_t|int\d*_t|int) [a-z]+\d+ = ", line):
            pragmas = []
            for nxt in lines[k + 1:]:
                m = re.match(r"\s*LOOM_PRAGMA\(HLS (.*)\)\s*$", nxt)
                if m is None:
                    break
                pragmas.append(m.group(1))
            out.append((line.strip(), pragmas))
    return out


def function_pragmas(source: str, top: str) -> list[str]:
    """The pragmas at the top of the body of function ``top``."""
    lines = source.splitlines()
    start = next(k for k, line in enumerate(lines) if re.match(rf"\w.* {top}\(.*\) {{$", line))
    out = []
    for line in lines[start + 1:]:
        m = re.match(r"\s*LOOM_PRAGMA\(HLS (.*)\)\s*$", line)
        if m is None:
            if line.strip().startswith("(void)"):
                continue
            break
        out.append(m.group(1))
    return out
