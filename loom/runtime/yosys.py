"""Synthesis of generated SystemVerilog with Yosys (Debian's ``yosys``): does the RTL synthesise, and what
does it hold.

``synthesize(verilog, top)`` reads the text as SystemVerilog, elaborates and flattens ``top``, runs Yosys's
coarse-grained synthesis (``synth -run begin:fine``: processes to flip-flops and multiplexers, arithmetic
merged into ``$alu``/``$macc`` cells, memories inferred and kept as ``$mem_v2``: no technology library), and
reports the cells by type, the flip-flop bits, each inferred memory (words x width) and any latch (a design
that infers one has a combinational loop or an incomplete assignment: a bug in the generator). An error in
Yosys is a LoomError carrying its message.

``synthesize(verilog, top, family=F)`` maps to an FPGA family's primitives instead (``synth_xilinx``,
``synth_ice40``, ``synth_ecp5``: Yosys's own technology libraries, no vendor tools) and adds the resources an FPGA
user budgets: LUTs, flip-flops, carry cells, block RAMs, LUT RAMs, DSPs, wide multiplexers, I/O buffers, and the
longest combinational path in cells (Yosys ``ltp -noff``: a count of primitives between registers, not a timing
figure: no placement, routing or cell delays).
"""

from __future__ import annotations

import functools
import json
import re
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
    family: str | None = None  # the FPGA family mapped to; None for coarse cells
    resources: Counter = field(default_factory=Counter)  # FPGA resource class -> primitives (family only)
    longest_path: int | None = None  # cells on the longest combinational path (family only)

    @property
    def memory_bits(self) -> int:
        return sum(words * width for words, width in self.memories.values())

    def table(self) -> str:
        if self.family:
            rows = [f"synthesis of {self.top} (Yosys synth_{self.family}): {sum(self.cells.values())} primitives, "
                    f"longest combinational path {self.longest_path} cells"
                    + (f", {len(self.latches)} LATCHES" if self.latches else "")]
            rows += [f"  {kind:<8} {self.resources.get(kind, 0)}" for kind in (*FAMILIES[self.family], "other")]
            return "\n".join(rows)
        rows = [f"synthesis of {self.top} (Yosys, coarse cells): {sum(self.cells.values())} cells, "
                f"{self.flip_flop_bits} flip-flop bits, {len(self.memories)} memories of {self.memory_bits} bits"
                + (f", {len(self.latches)} LATCHES" if self.latches else "")]
        rows += [f"  {kind:<12} {n}" for kind, n in sorted(self.cells.items())]
        rows += [f"  memory {name}: {words} x {width} bits" for name, (words, width) in sorted(self.memories.items())]
        return "\n".join(rows)


# FPGA families Yosys maps to, and each family's primitive cell types by the resource they use
FAMILIES = {
    "xilinx": {"LUT": ("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "INV"), "FF": ("FD",),
               "carry": ("CARRY4", "CARRY8"), "BRAM": ("RAMB18", "RAMB36"),
               "LUTRAM": ("RAM32", "RAM64", "RAM128", "RAM256", "SRL"), "DSP": ("DSP48",),
               "mux": ("MUXF7", "MUXF8"), "IO": ("IBUF", "OBUF", "BUFG")},
    "ice40": {"LUT": ("SB_LUT4",), "FF": ("SB_DFF",), "carry": ("SB_CARRY",), "BRAM": ("SB_RAM40_4K",),
              "LUTRAM": (), "DSP": ("SB_MAC16",), "mux": (), "IO": ("SB_IO", "SB_GB")},
    "ecp5": {"LUT": ("LUT4",), "FF": ("TRELLIS_FF",), "carry": ("CCU2C",), "BRAM": ("DP16KD", "PDPW16KD"),
             "LUTRAM": ("TRELLIS_DPR16X4",), "DSP": ("MULT18X18D", "ALU54B"), "mux": ("PFUMX", "L6MUX21"),
             "IO": ("TRELLIS_IO",)},
}


def resource_of(family: str, cell_type: str) -> str:
    """The resource class of a mapped primitive (``FDRE`` -> FF on xilinx); "other" for a cell not listed."""
    for resource, prefixes in FAMILIES[family].items():
        if cell_type.startswith(prefixes):
            return resource
    return "other"


@functools.lru_cache(maxsize=1)
def find_yosys() -> str | None:
    return shutil.which("yosys")


def require_yosys() -> str:
    tool = find_yosys()
    if tool is None:
        raise LoomError("Yosys is not installed (Debian: apt-get install yosys); synthesis needs it", where="yosys")
    return tool


def synthesize(verilog: str, top: str, family: str | None = None) -> SynthesisReport:
    """Yosys's coarse-grained synthesis of ``top`` in the SystemVerilog text ``verilog``, or its mapping to the
    primitives of the FPGA ``family`` (a key of ``FAMILIES``)."""
    if family is not None and family not in FAMILIES:
        raise LoomError(f"unknown FPGA family '{family}': expected one of {', '.join(FAMILIES)}", where="synthesis")
    tool = require_yosys()
    with tempfile.TemporaryDirectory(prefix="loom-yosys-") as work:
        source, netlist, path = Path(work) / f"{top}.sv", Path(work) / "netlist.json", Path(work) / "ltp.txt"
        source.write_text(verilog)
        if family:
            script = (f"read_verilog -sv {source}; synth_{family} -top {top} -flatten; write_json {netlist}; "
                      f"tee -q -o {path} ltp -noff")
        else:
            script = (f"read_verilog -sv {source}; synth -top {top} -flatten -run begin:fine; memory -nomap; "
                      f"opt_clean; write_json {netlist}")
        try:
            run = subprocess.run([tool, "-q", "-p", script], capture_output=True, text=True, timeout=1200)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise LoomError(f"Yosys cannot be run: {err}", where=f"yosys ({top})") from None
        if run.returncode < 0 or run.returncode == 137:  # killed: by the kernel's OOM killer, as a rule
            signal = -run.returncode if run.returncode < 0 else 9
            raise LoomError(f"Yosys was killed by signal {signal} while synthesising {top}" +
                            (" (signal 9: most likely out of memory; the design's logic is too large to "
                             "synthesise flat on this machine)" if signal == 9 else ""), where=f"yosys ({top})")
        if run.returncode != 0:
            raise LoomError(f"Yosys failed on {top} (exit {run.returncode}):\n"
                            f"{(run.stderr or run.stdout).strip()[-3000:]}", where=f"yosys ({top})")
        module = json.loads(netlist.read_text())["modules"][top]
        longest = re.search(r"length=(\d+)", path.read_text()) if family else None
    report = SynthesisReport(top, family=family, longest_path=int(longest.group(1)) if longest else None)
    for name, cell in module["cells"].items():
        kind, params = cell["type"], cell["parameters"]
        report.cells[kind] += 1
        if family:
            report.resources[resource_of(family, kind)] += 1
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


__all__ = ["FAMILIES", "SynthesisReport", "find_yosys", "require_yosys", "resource_of", "synthesize"]
