"""Building dataflow graphs in Python; they become dfg IR (``loom.dialects.dfg``).

    g = Graph("pipeline")
    frames = g.channel("memref<16x16xi32>", depth=2)
    scaled = g.channel("memref<16x16xi32>", depth=2)
    g.node(Process(read_frames), outputs=[frames])      # implementations: see loom.dataflow.bindings
    g.node(scale_kernel, inputs=[frames], outputs=[scaled])
    g.output(scaled, "result")
    print(g.ir())                                        # the dfg module
    loom.dataflow.run(g)                                 # {"result": [items...]}
"""

from loom.frontends.dataflow.graph import ChannelRef, Graph, element_type

__all__ = ["Graph", "ChannelRef", "element_type"]
