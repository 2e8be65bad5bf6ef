"""``loom.linalg``: linalg operations usable inside ``@loom.kernel`` functions.

See :mod:`loom.frontends.kernel.linalg` for what each builds.
"""

from loom.frontends.kernel.linalg import *  # noqa: F401,F403
from loom.frontends.kernel.linalg import __all__  # noqa: F401
