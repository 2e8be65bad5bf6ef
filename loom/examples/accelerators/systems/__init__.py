"""Example systems of several accelerators (one driver over all of them)."""
