"""Host performance measurement: cachegrind counts and task clock of a command."""

from loom.perf.counters import Counters, cachegrind_events, measure, parse_cachegrind, task_clock

__all__ = ["Counters", "measure", "cachegrind_events", "parse_cachegrind", "task_clock"]
