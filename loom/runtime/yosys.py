"""Synthesis of generated SystemVerilog with Yosys (Debian's ``yosys``): does the RTL synthesise, and what
does it hold.

``synthesize(verilog, top)`` reads the text as SystemVerilog, elaborates and flattens ``top``, runs Yosys's
coarse-grained synthesis (``synth -run begin:fine``: processes to flip-flops and multiplexers, arithmetic
merged into ``$alu``/``$macc`` cells, memories inferred and kept as ``$mem_v2``: no technology library), and
reports the cells by type, the flip-flop bits, each inferred memory (words x width) and any latch (a design
that infers one has a combinational loop or an incomplete assignment: a bug in the generator). An error in
Yosys is a LoomError carrying its message.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from loom.errors import LoomError

_FLIP_FLOPS = ("$dff", "$dffe", "$sdff", "$sdffe", "$sdffce", "$adff", "$adffe", "$aldff", "$aldffe", "$dffsr",
               "$dffsre")
_LATCHES = ("$dlatch", "$adlatch", "$dlatchsr")


@dataclass
class SynthesisReport:
    top: str
    cells: Counter = field(default_factory=Counter)  # cell type -> count
    flip_flop_bits: int = 0
    memories: dict = field(default_factory=dict)  # memory name -> (words, width)
    latches: list = field(default_factory=list)  # cell names of inferred latches

    @property
    def memory_bits(self) -> int:
        return sum(words * width for words, width in self.memories.values())

    def table(self) -> str:
        rows = [f"synthesis of {self.top} (Yosys, coarse cells): {sum(self.cells.values())} cells, "
                f"{self.flip_flop_bits} flip-flop bits, {len(self.memories)} memories of {self.memory_bits} bits"
                + (f", {len(self.latches)} LATCHES" if self.latches else "")]
        rows += [f"  {kind:<12} {n}" for kind, n in sorted(self.cells.items())]
        rows += [f"  memory {name}: {words} x {width} bits" for name, (words, width) in sorted(self.memories.items())]
        return "\n".join(rows)


@functools.lru_cache(maxsize=1)
def find_yosys() -> str | None:
    return shutil.which("yosys")


def require_yosys() -> str:
    tool = find_yosys()
    if tool is None:
        raise LoomError("Yosys is not installed (Debian: apt-get install yosys); synthesis needs it", where="yosys")
    return tool


def synthesize(verilog: str, top: str) -> SynthesisReport:
    """Yosys's coarse-grained synthesis of ``top`` in the SystemVerilog text ``verilog``."""
    tool = require_yosys()
    with tempfile.TemporaryDirectory(prefix="loom-yosys-") as work:
        source, netlist = Path(work) / f"{top}.sv", Path(work) / "netlist.json"
        source.write_text(verilog)
        script = (f"read_verilog -sv {source}; synth -top {top} -flatten -run begin:fine; memory -nomap; "
                  f"opt_clean; write_json {netlist}")
        try:
            run = subprocess.run([tool, "-q", "-p", script], capture_output=True, text=True, timeout=1200)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise LoomError(f"Yosys cannot be run: {err}", where=f"yosys ({top})") from None
        if run.returncode != 0:
            raise LoomError(f"Yosys failed on {top}:\n{(run.stderr or run.stdout).strip()[-3000:]}",
                            where=f"yosys ({top})")
        module = json.loads(netlist.read_text())["modules"][top]
    report = SynthesisReport(top)
    for name, cell in module["cells"].items():
        kind, params = cell["type"], cell["parameters"]
        report.cells[kind] += 1
        if kind in _FLIP_FLOPS:
            report.flip_flop_bits += _number(params["WIDTH"])
        elif kind == "$mem_v2":
            report.memories[params["MEMID"].lstrip("\\")] = (_number(params["SIZE"]), _number(params["WIDTH"]))
        elif kind in _LATCHES:
            report.latches.append(name)
    return report


def _number(bits) -> int:
    """A Yosys JSON parameter: an int, or a string of binary digits."""
    return bits if isinstance(bits, int) else int(bits, 2)


__all__ = ["SynthesisReport", "find_yosys", "require_yosys", "synthesize"]
