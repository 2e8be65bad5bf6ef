"""Execution backends: turn standard-dialect IR into something that runs."""
