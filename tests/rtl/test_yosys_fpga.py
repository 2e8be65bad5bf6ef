"""Mapping RTL to FPGA primitives with Yosys (``synthesize(..., family=F)``): the resource counts of small modules
whose needs follow from the primitives' datasheet capacities, and a loom streaming design mapped with every
primitive classified."""

from __future__ import annotations

import pytest

from loom.errors import LoomError
from loom.runtime.yosys import FAMILIES, synthesize
from tests.rtl.rtl_helpers import require_yosys

# a reset keeps xilinx from folding the stages into shift-register LUTs (SRL16E)
PIPE = """module t(input logic clk, input logic rst, input logic [15:0] d, output logic [15:0] q);
  logic [15:0] a, b;
  always_ff @(posedge clk) if (rst) begin a <= 0; b <= 0; q <= 0; end else begin a <= d; b <= a; q <= b; end
endmodule
"""

# 1024 x 16 bits with a registered read: one 18 Kbit RAMB18 (xilinx), one 18 Kbit DP16KD (ecp5), and 16 Kbit
# over the 4 Kbit SB_RAM40_4K of ice40 (256 x 16 each): 4
RAM = """module t(input logic clk, input logic we, input logic [9:0] wa, input logic [9:0] ra,
         input logic [15:0] d, output logic [15:0] q);
  logic [15:0] mem [0:1023];
  always_ff @(posedge clk) begin if (we) mem[wa] <= d; q <= mem[ra]; end
endmodule
"""


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_registers_and_a_block_ram_take_the_primitives_their_sizes_need(family):
    require_yosys()
    pipe = synthesize(PIPE, "t", family)
    assert pipe.resources["FF"] == 48  # three 16-bit registers
    assert pipe.longest_path is not None
    ram = synthesize(RAM, "t", family)
    assert ram.resources["BRAM"] == {"xilinx": 1, "ecp5": 1, "ice40": 4}[family]
    assert ram.resources["other"] == 0 and ram.latches == []
    assert f"synth_{family}" in ram.table() and "BRAM" in ram.table()


def test_a_longer_combinational_chain_has_a_longer_path():
    """``longest_path``: the cells between registers grow with the logic between them."""
    require_yosys()

    def chain(n):
        terms = " + ".join(f"a[{8 * i + 7}:{8 * i}]" for i in range(n))
        return (f"module t(input logic clk, input logic [{8 * n - 1}:0] a, output logic [15:0] q);\n"
                f"  always_ff @(posedge clk) q <= {terms};\nendmodule\n")

    short, long = (synthesize(chain(n), "t", "ice40").longest_path for n in (2, 16))
    assert long > short > 0


def test_a_streaming_design_maps_with_every_primitive_classified():
    """A loom design (the gaussian app's RTL) on xilinx: each primitive has a resource class, and the
    flip-flops are the coarse synthesis's flip-flop bits (one FDRE per bit)."""
    from loom.examples.pipelines import load_app
    from loom.streaming import build_design
    from loom.streaming.simulate import _design_ir
    from loom.streaming.verilog import TOP, design_verilog
    require_yosys()
    out, _ = load_app("gaussian").build(tile=(8, 6))
    design = build_design(out, (8, 6))
    verilog = design_verilog(design, _design_ir(design)).verilog
    mapped, coarse = synthesize(verilog, TOP, "xilinx"), synthesize(verilog, TOP)
    assert mapped.resources["other"] == 0 and mapped.latches == []
    assert mapped.resources["FF"] == coarse.flip_flop_bits > 0
    assert mapped.resources["DSP"] + mapped.resources["LUT"] > 0


def test_an_unknown_family_is_refused_by_name():
    with pytest.raises(LoomError, match="unknown FPGA family 'stratix': expected one of xilinx, ice40, ecp5"):
        synthesize(PIPE, "t", "stratix")


def test_the_pipeline_command_prints_the_fpga_resources(capsys):
    from loom.cli import main
    require_yosys()
    assert main(["pipeline", "gaussian", "--size", "16x16", "--fpga", "ecp5"]) == 0
    out = capsys.readouterr().out
    assert "(Yosys synth_ecp5)" in out and "longest combinational path" in out
    assert {"LUT", "FF", "BRAM", "DSP"} <= {line.split()[0] for line in out.splitlines() if line.startswith("  ")}


def test_a_yosys_killed_for_memory_is_named_so(monkeypatch):
    """The OOM killer's SIGKILL left no message: the error said only 'Yosys failed on t:'."""
    import subprocess

    from loom.runtime import yosys
    require_yosys()
    monkeypatch.setattr(yosys.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, -9, stdout="", stderr=""))
    with pytest.raises(LoomError, match=r"Yosys was killed by signal 9 while synthesising t \(signal 9: most likely "
                                        r"out of memory"):
        synthesize(PIPE, "t")
