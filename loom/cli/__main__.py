"""``python -m loom.cli``: the same as the ``loom`` command."""

import sys

from loom.cli import main

sys.exit(main())
