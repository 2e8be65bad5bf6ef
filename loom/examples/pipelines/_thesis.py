"""The thesis's evaluation designs and published figures (Setter 2023, Tables 6.1 and 6.5-6.7).

``TABLE_6_1``: harris with the three buffering schedules of Code 6.1 on a 64x64 input (58x58 output).
``TABLE_6_7``: per thesis app, the configuration of Table 6.5 (tile = output tile per invocation, rate =
output pixels per cycle; the PDF extraction of Table 6.5 is garbled, the readings used are these) and
the published Table 6.6 / 6.7 figures. ``app`` names the loom app that stands for it (``None``: not
reproduced here; ``why`` says why). ``thesis_design(row)`` builds and schedules the loom design with
kernel latencies from the Amber PE table (``kernel_netlist.AMBER``).
"""

from __future__ import annotations

from loom.examples.pipelines import load_app

TABLE_6_1 = {  # schedule -> (sch of harris.build, PEs, MEMs, cycles)
    "sch1: recompute all": (1, 769, 3, 4097),
    "sch2: recompute some": (2, 145, 5, 4103),
    "sch3: no recompute": (3, 83, 5, 4146),
}
TABLE_6_1_SIZE = (58, 58)

TABLE_6_7 = {
    "gaussian": dict(app="gaussian", tile=(992, 799), build=dict(rate=16), kernels=112, memories=7, mem_bytes=252,
                     glb_kb=96.75, pe_use=0.79, mem_use=0.24, occupancy=0.982, latency=50463),
    "cascade": dict(app="cascade", tile=(600, 799), build=dict(rate=12), kernels=120, memories=9, mem_bytes=204,
                    glb_kb=78.03, pe_use=0.94, mem_use=0.36, occupancy=0.957, latency=41755),
    "upsample": dict(app="upsample", tile=(600, 400), build=dict(mode="nearest"), kernels=42, memories=6, mem_bytes=604,
                     glb_kb=117.19, pe_use=0.0, mem_use=0.05, occupancy=None, latency=6354),
    "harris": dict(app="harris", tile=(296, 319), build=dict(rate=4, sch=3), kernels=92, memories=15, mem_bytes=300,
                   glb_kb=46.11, pe_use=0.91, mem_use=0.30, occupancy=0.956, latency=24700),
    "unsharp": dict(app="unsharp", tile=(378, 319), build=dict(rate=3), kernels=54, memories=10, mem_bytes=508,
                    glb_kb=78.50, pe_use=0.78, mem_use=0.23, occupancy=0.966, latency=41601),
    "camera": dict(app="camera_pipeline", tile=(496, 368), build=dict(rate=4), kernels=84, memories=21,
                   mem_bytes=500, glb_kb=89.13, pe_use=0.78, mem_use=0.20, occupancy=0.959, latency=47564),
    "gaussian pyramid": dict(app="gaussian_pyramid", tile=(8, 8), build={}, kernels=5, memories=6, mem_bytes=260,
                             glb_kb=8.00, pe_use=0.08, mem_use=0.03, occupancy=0.25, latency=16976),
    "gemm": dict(app=None, why="loom's gemm keeps all of B on chip (a 512x512 B needs 128 chained tiles); the "
                 "thesis's streams it from the GLB",
                 kernels=40, memories=6, mem_bytes=260, glb_kb=64.00, pe_use=0.35, mem_use=0.63, occupancy=0.970,
                 latency=2162688),
    "resnet conv3_1": dict(app=None, why="a 28x28x8x8 channel tile iterated over 64 -> 128 channels; loom's "
                           "conv_layer has a fixed 3 -> 4 channels",
                           kernels=28, memories=9, mem_bytes=1800, glb_kb=24.50, pe_use=0.69, mem_use=0.19,
                           occupancy=0.934, latency=967160),
    "unet conv3_i0": dict(app=None, why="not an app here", kernels=22, memories=9, mem_bytes=1568, glb_kb=76.56,
                          pe_use=0.35, mem_use=0.13, occupancy=0.835, latency=108210328),
    "jitnet enc2_c": dict(app=None, why="not an app here", kernels=72, memories=9, mem_bytes=1280, glb_kb=50.00,
                          pe_use=0.71, mem_use=0.19, occupancy=0.575, latency=1804452),
    "mobilenets pw_1": dict(app=None, why="a pointwise layer, 28x28x4x8 channel tiles over 32 -> 64 channels; "
                            "loom's mobilenet_separable is a fixed 4 -> 4 depthwise + pointwise pair",
                            kernels=49, memories=13, mem_bytes=1568, glb_kb=98.00, pe_use=0.39, mem_use=0.88,
                            occupancy=0.404, latency=1984808),
}


def thesis_design(row: dict, op_latency=None):
    """The loom design standing for a TABLE_6_7 row, scheduled with Amber PE latencies by default."""
    from loom.streaming import build_design
    from loom.streaming.kernel_netlist import AMBER

    app = load_app(row["app"])
    out, _ = app.build("accel", tile=row["tile"], **row["build"])
    return build_design(out, tuple(app.output_shape(row["tile"])), op_latency=op_latency or AMBER)


def harris_schedule_design(sch: int, op_latency=None):
    """harris with the buffering of Code 6.1 schedule ``sch`` on a 64x64 input (Table 6.1)."""
    from loom.streaming import build_design
    from loom.streaming.kernel_netlist import AMBER

    out, _ = load_app("harris").build("accel", tile=TABLE_6_1_SIZE, sch=sch)
    return build_design(out, TABLE_6_1_SIZE, op_latency=op_latency or AMBER)


def table_6_1(rows=None):
    """(text, reports) of Table 6.1: loom's harris designs beside the thesis's PEs, MEMs and cycles."""
    from loom.streaming.report import design_report, format_rows

    lines, reports = [], []
    for label in rows or TABLE_6_1:
        sch, pes, mems, cycles = TABLE_6_1[label]
        r = design_report(harris_schedule_design(sch), label)
        reports.append(r)
        lines.append((label, str(r.pes), str(pes), str(r.mems), str(mems), str(r.latency), str(cycles),
                      f"{(r.latency - cycles) / cycles:+.2%}"))
    head = ("schedule", "PEs", "thesis", "MEMs", "thesis", "cycles", "thesis", "gap")
    return format_rows(head, lines), reports


def table_6_7(names=None):
    """(text, reports, skipped) of Tables 6.6/6.7: a loom row, then the thesis's, per reproduced app."""
    from loom.streaming.report import design_report, format_reports

    reports, thesis, skipped = [], {}, []
    for name in names or TABLE_6_7:
        row = TABLE_6_7[name]
        if row["app"] is None:
            skipped.append(f"  {name}: not reproduced ({row['why']})")
            continue
        reports.append(design_report(thesis_design(row), name))
        thesis[name] = row
    return format_reports(reports, thesis), reports, skipped


def thesis_tables() -> str:
    """Thesis Table 6.1 (harris buffering) and Tables 6.6/6.7 (the thesis apps), loom beside the thesis."""
    t61, _ = table_6_1()
    t67, _, skipped = table_6_7()
    return "\n".join(["Table 6.1 (harris, 64x64 input):", t61, "", "Tables 6.6 / 6.7 (loom row, then the thesis's):",
                      t67, *skipped])


__all__ = ["TABLE_6_1", "TABLE_6_1_SIZE", "TABLE_6_7", "harris_schedule_design", "table_6_1", "table_6_7",
           "thesis_design", "thesis_tables"]
