"""Frontends: everything that turns user input into loom IR (kernels, pipelines)."""
