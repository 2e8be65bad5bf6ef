"""Accelerator descriptions shipped with loom (JSON) and, under ``models/``, the Python and C
behaviour models of the examples that are not built in."""
