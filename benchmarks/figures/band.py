"""The sensitivity band of a modelled figure: the timing model's guessed constants varied.

Every headline figure is modelled (``loom.accel.timing``): its DMA set-up cost and the
host's speed are guesses, so each figure is reported at the description's constants
and at every point of the band (set-up 0 / 100 / 400 cycles x host 1x / 10x slower,
10x standing for the paper's Cortex-A9 at 650 MHz). ``--deterministic-host`` replaces
the measured host time by a fixed cost per runtime call and per word (exact, repeatable
comparisons; ``loom.runtime.timing.deterministic_host``).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Callable, Mapping, Sequence

SETUP_CYCLES = (0, 100, 400)
HOST_SLOWDOWN = (1, 10)
POINTS = [(c, h) for c in SETUP_CYCLES for h in HOST_SLOWDOWN]
# deterministic host: per runtime call and per word copied (this machine's order of magnitude)
CALL_S, WORD_S = 100e-9, 1e-9


def label(point: tuple[int, float]) -> str:
    return f"setup {point[0]}, host {point[1]:g}x"


def configs(base) -> dict[tuple[int, float], object]:
    """The band's timing configurations, derived from ``base`` (the description's)."""
    return {p: replace(base, dma_latency_cycles=p[0], host_slowdown=float(p[1])) for p in POINTS}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--deterministic-host", action="store_true",
                    help=f"host time = {CALL_S * 1e9:g} ns per runtime call + {WORD_S * 1e9:g} ns per word "
                         "(exact comparisons) instead of measured")


def apply_host_mode(args: argparse.Namespace) -> str:
    """Set the runtime's host model for the whole run (kept across runs); returns its description."""
    from loom.runtime import runtime_library
    from loom.runtime.timing import set_host_model
    if getattr(args, "deterministic_host", False):
        set_host_model(runtime_library(), deterministic=True, call_s=CALL_S, word_s=WORD_S)
        return f"host time deterministic: {CALL_S * 1e9:g} ns per call, {WORD_S * 1e9:g} ns per word"
    set_host_model(runtime_library(), deterministic=False)
    return "host time measured on this machine (best of repeats)"


def sweep(base, run: Callable[[object], float]) -> dict[tuple[int, float], float]:
    """``run(config)`` at every point of the band."""
    return {p: run(cfg) for p, cfg in configs(base).items()}


def spread(values: Mapping[tuple[int, float], float]) -> tuple[float, float]:
    return min(values.values()), max(values.values())


def describe_band() -> str:
    return ("band: DMA set-up " + "/".join(map(str, SETUP_CYCLES)) + " cycles x host "
            + "/".join(f"{h}x" for h in HOST_SLOWDOWN) + " slower (10x ~ Cortex-A9 at 650 MHz)")


def headers(name: str) -> list[str]:
    """CSV columns of one figure at every band point."""
    return [f"{name}@{p[0]}/{p[1]}" for p in POINTS]


def row(values: Mapping[tuple[int, float], float]) -> list[float]:
    return [values[p] for p in POINTS]


def geomeans(per_cell: Sequence[Mapping[tuple[int, float], float]]) -> dict[tuple[int, float], float]:
    from math import exp, log
    return {p: exp(sum(log(c[p]) for c in per_cell) / len(per_cell)) for p in POINTS} if per_cell else {}
