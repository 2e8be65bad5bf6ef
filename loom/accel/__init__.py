"""Accelerator descriptions (JSON) and the AXI4MLIR opcode grammar.

* ``load_description(path_or_dict) -> SystemDescription``: parse + validate a description
* ``place_flow(accelerator, flow_name=None) -> FlowPlacement``: where each opcode runs
* ``parse_opcode_map`` / ``parse_opcode_flow`` and their printers

See ``loom/accel/FORMAT.md`` for the format.
"""

from loom.accel.description import (
    AcceleratorDescription,
    CacheLevel,
    DimTile,
    DmaConfig,
    Flow,
    HostDescription,
    OperandSpec,
    SystemDescription,
    TileSpec,
    load_description,
    parse_description,
)
from loom.accel.kernels import KernelSpec, named_kernel, parse_indexing_map, parse_permutation
from loom.accel.opcodes import (
    FlowId,
    FlowScope,
    OpcodeEntry,
    OpcodeMap,
    Recv,
    Send,
    SendDim,
    SendIdx,
    SendLiteral,
    parse_opcode_flow,
    parse_opcode_map,
    print_opcode_flow,
    print_opcode_map,
)
from loom.accel.validate import (
    FlowPlacement,
    PlacedAction,
    PlacedOpcode,
    check_tile_sizes,
    place_flow,
    tile_shape,
    validate_accelerator,
    validate_system,
)

__all__ = [
    "KernelSpec",
    "named_kernel",
    "parse_indexing_map",
    "parse_permutation",
    "AcceleratorDescription",
    "CacheLevel",
    "DimTile",
    "DmaConfig",
    "Flow",
    "HostDescription",
    "OperandSpec",
    "SystemDescription",
    "TileSpec",
    "load_description",
    "parse_description",
    "FlowId",
    "FlowScope",
    "OpcodeEntry",
    "OpcodeMap",
    "Recv",
    "Send",
    "SendDim",
    "SendIdx",
    "SendLiteral",
    "parse_opcode_flow",
    "parse_opcode_map",
    "print_opcode_flow",
    "print_opcode_map",
    "FlowPlacement",
    "PlacedAction",
    "PlacedOpcode",
    "check_tile_sizes",
    "place_flow",
    "tile_shape",
    "validate_accelerator",
    "validate_system",
]
