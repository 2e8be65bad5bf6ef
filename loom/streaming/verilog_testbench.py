"""A self-checking SystemVerilog testbench of a streaming design's RTL, for any simulator (Verilator
``--binary``, Icarus ``-g2012``, commercial ones): it replays invocations of the design from hex files, the
streams' words on the cycles the design asks for them and the tile's origin on the coordinate ports, and checks
each output word and each invocation's cycles against what loom's own value simulation computed.

Files (``verilog_testbench(rtl, invocations)``): ``loom_stream_tb.sv`` and per stream ``s_NAME.hex`` (each
invocation's words, lanes within a step), ``mins.hex``, ``expected.hex`` and ``live.hex`` (1 for the output words
of the domain, 0 for an idle lane's). It ends with ``$finish`` after printing ``loom_stream_tb: PASS ...``, or
with ``$fatal`` after the first mismatches.
"""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError

from .verilog import TOP, RtlDesign
from .verilog_io import InvocationWords

TB = "loom_stream_tb"
SHOWN = 10  # mismatches printed before giving up
RUN_COMMAND = (f"verilator --binary --top-module {TB} {TOP}.sv {TB}.sv && obj_dir/V{TB}  "
               f"(or: iverilog -g2012 -o tb {TOP}.sv {TB}.sv && vvp tb)")


def verilog_testbench(rtl: RtlDesign, invocations: list[InvocationWords]) -> dict[str, str]:
    """File name -> text of the testbench replaying ``invocations`` (each with its expected output words)."""
    if not invocations or any(io.output is None for io in invocations):
        raise LoomError("a testbench needs at least one invocation with its expected output words", where=TB)
    out = rtl.stages[rtl.output]
    lanes, steps = len(out.lanes), out.n_steps
    mins_per = len(invocations[0].mins)
    files = {f"s_{name}.hex": _hex([io.streams[i] for io in invocations], rtl.stages[name].width)
             for i, name in enumerate(rtl.streams)}
    files["mins.hex"] = _hex([np.asarray(io.mins, np.int64) & 0xFFFFFFFF for io in invocations], 32)
    files["expected.hex"] = _hex([io.output for io in invocations], out.width)
    files["live.hex"] = _hex([io.live.astype(np.uint64) for io in invocations], 1)
    files[f"{TB}.sv"] = _testbench(rtl, len(invocations), mins_per, lanes, steps)
    return files


def _hex(arrays, width: int) -> str:
    digits = max(1, (width + 3) // 4)
    words = np.concatenate([np.asarray(a, np.uint64).ravel() for a in arrays]) if arrays else np.zeros(0, np.uint64)
    return "".join(f"{int(w):0{digits}x}\n" for w in words) or "0\n"


def _testbench(rtl: RtlDesign, n: int, mins_per: int, lanes: int, steps: int) -> str:
    out = rtl.stages[rtl.output]
    decl, load, drive, take, advance, reset = [], [], [], [], [], []
    for name in rtl.streams:
        rs = rtl.stages[name]
        L, words = len(rs.lanes), rs.n_steps * len(rs.lanes)
        decl.append(f"  logic [{rs.width - 1}:0] s_{name}_words [0:{max(n * words, 1) - 1}];")
        decl += [f"  logic [{rs.width - 1}:0] s_{name}_{l};" for l in range(L)]
        decl.append(f"  logic s_{name}_ready, s_{name}_take;")
        decl.append(f"  int s_{name}_pos;")
        load.append(f'    $readmemh("s_{name}.hex", s_{name}_words);')
        reset.append(f"      s_{name}_pos = 0;")
        for l in range(L):
            drive.append(f"        s_{name}_{l} = s_{name}_pos < {rs.n_steps} ? "
                         f"s_{name}_words[inv * {words} + s_{name}_pos * {L} + {l}] : '0;")
        take.append(f"        s_{name}_take = s_{name}_ready;")
        advance.append(f"        if (s_{name}_take) s_{name}_pos++;")
    mins = []
    k = 0
    for name, rs in rtl.stages.items():
        for d in rs.mins_used:
            decl.append(f"  logic signed [31:0] min_{name}_{d};")
            mins.append(f"      min_{name}_{d} = mins[inv * {mins_per} + {k}];")
            k += 1
    decl += [f"  logic [{out.width - 1}:0] out_{l};" for l in range(lanes)]
    compare = "\n".join(
        f"          if (live[w + {l}] && out_{l} !== expected[w + {l}]) begin\n"
        f"            errors++;\n"
        f"            if (errors <= {SHOWN}) $display(\"invocation %0d step %0d lane {l}: got %h, expected %h\", "
        f"inv, got, out_{l}, expected[w + {l}]);\n"
        f"          end" for l in range(lanes))
    total = n * steps * lanes
    return f"""// loom: self-checking testbench of {TOP}: {n} invocation(s) of {rtl.cycles} cycles, expected words from
// loom's value simulation. Run: {RUN_COMMAND}
module {TB};
  logic clk = 1'b0, rst = 1'b1;
  logic out_valid;
  logic [31:0] mins [0:{max(n * mins_per, 1) - 1}];
  logic [{out.width - 1}:0] expected [0:{total - 1}];
  logic live [0:{total - 1}];
{chr(10).join(decl)}
  int inv, cycle, got, last, errors, w;

  {TOP} dut (.*);

  initial begin
{chr(10).join(load)}
    $readmemh("mins.hex", mins);
    $readmemh("expected.hex", expected);
    $readmemh("live.hex", live);
    errors = 0;
    for (inv = 0; inv < {n}; inv++) begin
{chr(10).join(mins)}
{chr(10).join(reset)}
      got = 0;
      last = -1;
      rst = 1'b1;
      repeat (4) begin #5 clk = 1'b1; #5 clk = 1'b0; end
      rst = 1'b0;
      for (cycle = 0; cycle < {rtl.cycles + 64} && got < {steps}; cycle++) begin
{chr(10).join(drive)}
        #1;
{chr(10).join(take)}
        if (out_valid) begin
          w = (inv * {steps} + got) * {lanes};
{compare}
          got++;
          last = cycle;
        end
        #4 clk = 1'b1;
        #5 clk = 1'b0;
{chr(10).join(advance)}
      end
      if (got != {steps} || last + 1 != {rtl.cycles}) begin
        errors++;
        $display("invocation %0d: %0d of {steps} output steps, the last in cycle %0d (the design's last: {rtl.cycles - 1})",
                 inv, got, last);
      end
      if (errors > 0) $fatal(1, "{TB}: FAIL, %0d mismatch(es)", errors);
    end
    $display("{TB}: PASS, {n} invocation(s), {total} words, {rtl.cycles} cycles each");
    $finish;
  end
endmodule
"""


__all__ = ["verilog_testbench", "TB", "RUN_COMMAND"]
