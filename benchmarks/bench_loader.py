"""Description loading is linear: a 10 MB description loads, or is refused with a located error, in < 2 s.

Six 10 MB files, written to a temporary folder and loaded with ``loom.accel.load_description``
(read, strict JSON decode, parse, validate every flow):

  family     256 accelerators (the limit) of the MatMul v3 family, sizes 4/8/16, each at its own DMA
             addresses, with datasheet notes filling the file -> loads
  notes      one accelerator whose notes are 10 MB of lines -> loads
  too-many   ~4,500 accelerators -> refused: more than 256 accelerators (JSON path)
  big-map    one opcode map string of 10 MB -> refused: more than 256 entries (column)
  deep-json  10 MB of nested arrays -> refused: nesting deeper than 64 (line:column)
  deep-flow  one flow string of 10 MB of parentheses -> refused: more than 32 scopes (column)

Time is CPU time of this process (``time.process_time``: other work on a shared machine does not
count), the best of ``--repeats`` loads; wall time is printed too. Target: every case < 2 s.

    python benchmarks/bench_loader.py [--mb 10] [--repeats 3] [--quick]

``--quick``: 1 MB files, one load each.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 2.0
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "loom" / "examples" / "accelerators"


def _family_entry(i: int, base: dict) -> dict:
    acc = copy.deepcopy(base)
    size = (4, 8, 16)[i % 3]
    acc["name"] = f"v3_{size}_unit{i}"
    acc["tile_sizes"] = {"m": size, "n": size, "k": size}
    acc["buffers"] = {"A": size * size, "B": size * size, "C": size * size}
    # each unit at its own window: registers, then input and output staging buffers
    base_addr = 0x20000000 + i * 0x100000
    acc["dma"] = {"dma_address": hex(base_addr), "input_address": hex(base_addr + 0x10000), "input_size": 65536,
                  "output_address": hex(base_addr + 0x20000), "output_size": 65536}
    return acc


def description(kind: str, mb: float) -> str:
    """The JSON text of one case, about ``mb`` megabytes."""
    size = int(mb * 1_000_000)
    v3 = json.loads((EXAMPLES / "matmul_v3.json").read_text())
    host = json.loads((EXAMPLES / "pynq-z2.json").read_text())["cpu"]
    base = v3["accelerators"][0]
    if kind == "family":
        accs = [_family_entry(i, base) for i in range(256)]
        per = max(0, size // 256 - len(json.dumps(accs[0])))
        line = "Datasheet: the MatMul unit streams A and B tiles and returns C; "
        for acc in accs:
            acc["notes"] = [line * 2] * max(1, per // (2 * len(line) + 4))
        return json.dumps({"cpu": host, "accelerators": accs})
    if kind == "notes":
        acc = copy.deepcopy(base)
        acc["notes"] = ["a line of measurement notes, 64 characters long .........."] * (size // 64)
        return json.dumps({"cpu": host, "accelerators": [acc]})
    if kind == "too-many":
        one = len(json.dumps(_family_entry(0, base)))
        return json.dumps({"cpu": host, "accelerators": [_family_entry(i % 256, base) | {"name": f"u{i}"}
                                                         for i in range(size // one)]})
    if kind == "big-map":
        acc = copy.deepcopy(base)
        entry = "op{}=[send_literal(1), send(0), send(1)], "
        acc["opcode_map"] = "opcode_map<" + "".join(entry.format(i) for i in range(size // len(entry))) + "r=[recv(2)]>"
        return json.dumps({"cpu": host, "accelerators": [acc]})
    if kind == "deep-json":
        return '{"notes": ' + "[" * (size // 2) + "]" * (size // 2) + "}"
    if kind == "deep-flow":
        acc = copy.deepcopy(base)
        acc["opcode_flows"]["As"]["flow"] = "(" * (size // 2) + "sA" + ")" * (size // 2)
        return json.dumps({"cpu": host, "accelerators": [acc]})
    raise ValueError(kind)


CASES = ("family", "notes", "too-many", "big-map", "deep-json", "deep-flow")


def load_seconds(path: Path, repeats: int) -> tuple[float, float, str]:
    """(best CPU seconds, best wall seconds, outcome) of loading ``path``."""
    from loom.accel import load_description
    from loom.errors import LoomError

    cpu = wall = float("inf")
    outcome = ""
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            system = load_description(path)
            outcome = f"loaded {len(system.accelerators)} accelerators"
        except LoomError as err:
            where = err.where or (f"line {err.line} column {err.column}" if err.line else "")
            outcome = f"refused at {where}: {err.message.splitlines()[0][:70]}"
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return cpu, wall, outcome


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 MB files, one load each")
    args = ap.parse_args(argv)
    mb, repeats = (1.0, 1) if args.quick else (args.mb, args.repeats)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for kind in CASES:
            path = Path(tmp) / f"{kind}.json"
            path.write_text(description(kind, mb))
            size = path.stat().st_size / 1e6
            cpu, wall, outcome = load_seconds(path, repeats)
            worst = max(worst, cpu)
            print(f"{kind:<10} {size:6.2f} MB  {cpu:6.3f} s CPU ({wall:6.3f} s wall)  "
                  f"{size / max(cpu, 1e-6):7.1f} MB/s  {outcome}")
    verdict = "met" if worst < TARGET_SECONDS else "MISSED"
    print(f"slowest load: {worst:.3f} s CPU for {mb:g} MB files (target < {TARGET_SECONDS:g} s at 10 MB: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
