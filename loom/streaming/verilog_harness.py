"""The C++ driver of a streaming design's Verilated RTL (``loom_stream_run``): one invocation, the streams' words
in on the cycles the design asks for them, the output's words out with the cycle of the last one."""

from __future__ import annotations

from .verilog import TOP, RtlDesign


def verilog_harness(rtl: RtlDesign) -> str:
    """The C++ driver of one invocation: streams in, output words out (``loom_stream_run``)."""
    feeds, steps_, mins = [], [], []
    for i, name in enumerate(rtl.streams):
        rs = rtl.stages[name]
        for l in range(len(rs.lanes)):
            feeds.append(f"    top->s_{name}_{l} = pos[{i}] < words[{i}] ? streams[{i}][pos[{i}] * {len(rs.lanes)} + {l}]"
                         f" : 0;")
        steps_.append(f"    if (top->s_{name}_ready) ready[{i}] = 1;")
    k = 0
    for name, rs in rtl.stages.items():
        for d in rs.mins_used:
            mins.append(f"  top->min_{name}_{d} = mins[{k}];")
            k += 1
    out = rtl.stages[rtl.output]
    collect = "".join(f" out[got * {len(out.lanes)} + {l}] = (uint64_t)top->out_{l};" for l in range(len(out.lanes)))
    n = max(len(rtl.streams), 1)
    return f"""// loom: C++ driver of {TOP} (one invocation)
#include <cstdint>
#include <memory>
#include "verilated.h"
#include "Vloom_rtl_top.h"

extern "C" __attribute__((visibility("default")))
int64_t loom_stream_run(const uint64_t* const* streams, const int64_t* words, const int32_t* mins,
                        uint64_t* out, int64_t out_steps, int64_t max_cycles, int64_t* last_cycle) {{
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vloom_rtl_top>(ctx.get());
  int64_t pos[{n}] = {{0}};
  int ready[{n}] = {{0}};
{chr(10).join(mins)}
  top->rst = 1;
  for (int i = 0; i < 4; ++i) {{ top->clk = 0; top->eval(); top->clk = 1; top->eval(); }}
  top->rst = 0;
  int64_t got = 0;
  *last_cycle = -1;
  for (int64_t c = 0; c < max_cycles && got < out_steps; ++c) {{
    top->clk = 0;
{chr(10).join(feeds)}
    top->eval();
    for (int i = 0; i < {n}; ++i) ready[i] = 0;
{chr(10).join(steps_)}
    if (top->out_valid) {{{collect} ++got; *last_cycle = c; }}
    top->clk = 1;
    top->eval();
    for (int i = 0; i < {n}; ++i) pos[i] += ready[i];
  }}
  top->final();
  return got;
}}
"""


__all__ = ["verilog_harness"]
