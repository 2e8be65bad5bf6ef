"""Streaming accelerators for image pipelines: extraction, unified buffers, scheduling, simulation.

``Accelerator(output)`` extracts the hw_accelerate region; ``build_design``
schedules it and builds its unified buffers; ``simulate`` runs the pipeline
with the accelerator simulated cycle by cycle against buffer capacities;
``map_memories`` maps the buffers to wires, shift registers and memory tiles;
``simulate_mapped`` replays the delay-line buffers of that mapping through their taps.
Stages run on their own time grids (down-sampling ``f(2x)``, up-sampling ``f(x / 2)``,
pyramids). The simulator computes its own values from the design's ``ubuf`` IR
(``to_ubuf.design_to_ir``: kernels as arith regions, evaluated by ``kernel_eval`` on what
the read ports deliver at the IR's access maps), so edited IR can be simulated again.
A stage's reduction that is not fully unrolled is iterated in time, with its partial
sums in an accumulation buffer (``Design.accumulators``, named ``accumulator_name(stage)``).
"""

from .extract import Accelerator, ConstantTable, MemoryClass, ReadAccess, StageNode, accumulator_name
from .memory_map import MappedBuffer, MemoryMap, map_memories
from .scheduler import Design, StagePlan, build_design, live_capacity, tile_extents
from .simulate import SimulationStats, simulate
from .simulate_mapped import MappedSimulation, simulate_mapped
from .unified_buffer import CycleSchedule, Port, UnifiedBuffer, format_table

__all__ = ["Accelerator", "accumulator_name", "ConstantTable", "MemoryClass", "ReadAccess", "StageNode", "Design", "StagePlan",
           "build_design", "live_capacity", "tile_extents", "SimulationStats", "simulate", "MappedSimulation",
           "simulate_mapped", "CycleSchedule",
           "Port", "UnifiedBuffer", "format_table", "MappedBuffer", "MemoryMap", "map_memories"]
