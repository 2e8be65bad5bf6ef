"""Built-in example programs used by ``loom demo``, the CLI and the tests."""
