"""Command implementations behind ``loom`` (one module per command family)."""
