"""Each layer kind's lowering to loom IR, one module per family (``loom.models.lower`` builds the module and
holds the kind -> emitter table); ``ir`` holds the helpers they share."""
